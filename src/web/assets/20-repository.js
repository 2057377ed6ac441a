// Repository pages: copy buttons of the clone URLs, confirmation of branch deletion, and
// the ref switcher that follows its <select> at once (the Switch button does it without script).
document.addEventListener('click', (ev) => {
  const btn = ev.target instanceof Element ? ev.target.closest('[data-copy-target]') : null;
  if (!btn) return;
  const input = document.getElementById(btn.getAttribute('data-copy-target') || '');
  if (!input || !('value' in input)) return;
  const done = () => {
    const old = btn.textContent;
    btn.textContent = 'Copied';
    setTimeout(() => {
      btn.textContent = old;
    }, 1500);
  };
  if (navigator.clipboard) navigator.clipboard.writeText(input.value).then(done, () => input.select());
  else input.select();
});
document.addEventListener('submit', (ev) => {
  const form = ev.target;
  if (!(form instanceof HTMLFormElement)) return;
  const btn = form.querySelector('[data-repo-confirm]');
  if (btn && !window.confirm(btn.getAttribute('data-repo-confirm') || 'Are you sure?')) ev.preventDefault();
});
document.addEventListener('change', (ev) => {
  const sel = ev.target;
  if (sel instanceof HTMLSelectElement && sel.form && sel.form.hasAttribute('data-ref-switcher')) sel.form.submit();
});
