// New project / new group forms: the slug follows the name as it is typed, until the user edits the
// slug themself (GitLab's forms do the same). Without JavaScript the server makes it from the name.
(() => {
  const slugify = (s) =>
    s
      .trim()
      .toLowerCase()
      .replace(/[^a-z0-9_.-]+/g, '-')
      .replace(/^[-.]+|[-.]+$/g, '');
  document.addEventListener('input', (e) => {
    const el = e.target;
    if (!(el instanceof HTMLInputElement)) return;
    if (el.matches('[data-slug-from]')) {
      el.dataset.slugTouched = el.value ? '1' : '';
      return;
    }
    for (const slug of document.querySelectorAll(`input[data-slug-from="${CSS.escape(el.id)}"]`)) {
      if (!slug.dataset.slugTouched) slug.value = slugify(el.value);
    }
  });
})();
