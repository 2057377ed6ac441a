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

// New project form: the visibility levels above the chosen group's are greyed out (as the server
// renders them for the first namespace); a checked level that becomes unavailable gives way to the
// most open one still allowed.
(() => {
  const LEVEL = { private: 0, internal: 10, public: 20 };
  document.addEventListener('change', (e) => {
    const select = e.target;
    if (!(select instanceof HTMLSelectElement) || select.id !== 'project_namespace_id') return;
    const max = select.selectedOptions[0]?.dataset.maxVisibility ?? 'public';
    const fieldset = select.form?.querySelector('fieldset[data-visibility-levels]');
    if (!fieldset) return;
    const restricted = (fieldset.dataset.restricted ?? '').split(' ').filter(Boolean);
    const radios = [...fieldset.querySelectorAll('input[type=radio]')];
    let checkedLost = false;
    for (const radio of radios) {
      const off = LEVEL[radio.value] > LEVEL[max] || restricted.includes(radio.value);
      if (off && radio.checked) checkedLost = true;
      radio.disabled = off;
      const note = document.getElementById(`${radio.id}_note`);
      if (note) note.textContent = off ? `${note.dataset.hint} Not available here.` : note.dataset.hint;
    }
    if (checkedLost) {
      const open = radios.filter((r) => !r.disabled);
      if (open.length) open[open.length - 1].checked = true;
    }
  });
})();
