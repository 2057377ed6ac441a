// Issue pages: the Write / Preview tabs of a markdown field. Without JavaScript the tabs stay hidden and the
// textarea works alone; with it, Preview asks the markdown renderer (htmx, on the button) and shows its answer.
(() => {
  for (const el of document.querySelectorAll('[data-issues-needs-js]')) el.hidden = false;
  document.addEventListener('click', (ev) => {
    const tab = ev.target instanceof Element ? ev.target.closest('[data-md-write], [data-md-preview]') : null;
    if (!tab) return;
    const field = tab.closest('[data-md-field]');
    if (!field) return;
    const preview = tab.hasAttribute('data-md-preview');
    const write = field.querySelector('[data-md-write-panel]');
    const shown = field.querySelector('.md-preview');
    if (write) write.hidden = preview;
    if (shown) shown.hidden = !preview;
    for (const t of field.querySelectorAll('[role="tab"]')) t.setAttribute('aria-selected', String(t === tab));
    if (!preview) field.querySelector('textarea')?.focus();
  });
})();
