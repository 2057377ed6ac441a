// CI pages. The job log grows in place while the job runs: the page polls its trace.json from the state the
// server rendered (the byte offset, the next line number and the colours), appends the HTML of the new whole
// lines (rendered and escaped by the server) and stops once the answer says the log is complete. The poll names
// the status the page shows; when the job's changed, the answer carries the page's new top (Retry or Cancel,
// the runner, the artifacts box), which replaces `#job-summary`. The Run pipeline form gets an "Add variable"
// button; without JavaScript it has one empty row per submit.
(() => {
  const log = document.querySelector('#job-log[data-trace-url]');
  if (!log) return;
  const code = log.querySelector('code');
  const url = log.getAttribute('data-trace-url');
  let state = log.getAttribute('data-trace-state') || '0';
  const shown = () => document.getElementById('job-summary')?.getAttribute('data-status') || '';
  const poll = async () => {
    let next = 2000;
    try {
      const res = await fetch(`${url}?state=${encodeURIComponent(state)}&status=${encodeURIComponent(shown())}`, {
        credentials: 'same-origin',
        headers: { accept: 'application/json' },
      });
      if (!res.ok) throw new Error(String(res.status));
      const t = await res.json();
      const atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
      if (!t.append) code.innerHTML = t.html;
      else if (t.html) code.insertAdjacentHTML('beforeend', t.html);
      if (t.html) {
        log.hidden = false;
        for (const el of document.querySelectorAll('[data-log-empty]')) el.hidden = true;
        if (atBottom) log.scrollTop = log.scrollHeight;
      }
      state = t.state;
      log.setAttribute('data-trace-state', state);
      const top = document.getElementById('job-summary');
      if (t.summary && top) top.outerHTML = t.summary;
      if (t.complete) {
        for (const el of document.querySelectorAll('[data-log-live]')) el.hidden = true;
        log.removeAttribute('aria-live');
        log.setAttribute('data-trace-complete', '');
        return;
      }
      // more is waiting: ask again at once
      if (t.offset + t.size < t.total && t.size > 0) next = 0;
    } catch {
      next = 5000;
    }
    setTimeout(poll, next);
  };
  setTimeout(poll, 1000);
})();

(() => {
  const button = document.querySelector('[data-add-variable-row]');
  const rows = document.querySelector('[data-variable-rows]');
  if (!button || !rows) return;
  button.hidden = false;
  button.addEventListener('click', () => {
    const all = rows.querySelectorAll('[data-variable-row]');
    const last = all[all.length - 1];
    if (!last) return;
    const n = all.length;
    const row = last.cloneNode(true);
    for (const el of row.querySelectorAll('[id]')) el.id = el.id.replace(/_\d+$/, `_${n}`);
    for (const el of row.querySelectorAll('label[for]')) el.htmlFor = el.htmlFor.replace(/_\d+$/, `_${n}`);
    for (const el of row.querySelectorAll('[name]')) el.name = el.name.replace(/^variables\[\d+\]/, `variables[${n}]`);
    for (const el of row.querySelectorAll('input')) el.value = '';
    rows.append(row);
    row.querySelector('input')?.focus();
  });
})();
