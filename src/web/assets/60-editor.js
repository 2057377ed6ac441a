// The translation editor's keyboard shortcuts: Ctrl+Enter (or Cmd+Enter) saves — or
// suggests, for those who may only suggest — and Alt+ArrowRight / Alt+PageDown and Alt+ArrowLeft /
// Alt+PageUp follow the next / previous links; typing in a translation clears "Needs editing" (as
// Weblate's editor does). The page works without this script.
(() => {
  document.addEventListener('input', (e) => {
    const target = e.target;
    if (!(target instanceof HTMLTextAreaElement) || !target.classList.contains('editor-target') || target.dataset.edited) return;
    target.dataset.edited = '1';
    const fuzzy = target.form?.querySelector('input[name="fuzzy"]');
    if (fuzzy) fuzzy.checked = false;
  });
  document.addEventListener('keydown', (e) => {
    const form = document.getElementById('editor-form');
    const nav = document.querySelector('.editor-nav');
    if (!form && !nav) return;
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && !e.altKey && form && form.contains(e.target)) {
      const button = form.querySelector('[data-editor-save]') || form.querySelector('[data-editor-suggest]');
      if (!button) return;
      e.preventDefault();
      form.requestSubmit(button);
      return;
    }
    if (!e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
    let sel = null;
    if (e.key === 'ArrowRight' || e.key === 'PageDown') sel = '[data-editor-next]';
    else if (e.key === 'ArrowLeft' || e.key === 'PageUp') sel = '[data-editor-prev]';
    if (!sel) return;
    const link = document.querySelector(sel);
    if (!link || !link.href) return;
    e.preventDefault();
    window.location.assign(link.href);
  });
})();
