// Merge request pages: controls that need JavaScript (the description preview) are hidden in the
// markup and shown here, so a page without JavaScript offers only what works.
(() => {
  for (const el of document.querySelectorAll('[data-mr-needs-js]')) el.hidden = false;
})();
