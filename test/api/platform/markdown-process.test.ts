// Markdown cannot stop the server: a real process (`node bin/hearth.js serve`, as the README starts it)
// keeps answering /-/health while eight anonymous clients have a megabyte of markdown rendered through
// POST /markdown, and then while eight view a public project whose README is that megabyte; its main thread
// is never busy for a second between two answers. markdown-it needs seconds for such a text; on the event loop
// they held /-/health for tens of seconds. Measured as the main thread's own CPU (thread-cpu.ts), which a
// busy machine does not stretch as it stretches the wall-clock wait.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startHearth, tempDataDir, TOKEN } from '../../helpers/process.ts';
import { busiestStretch } from '../../helpers/thread-cpu.ts';

/** a megabyte that markdown-it needs seconds for: every `![` may open an image */
const SLOW = (seed: number) => `${seed}${'!['.repeat(512 * 1024 - 1)}`;

test('/-/health answers all along, its loop never busy for a second, while eight anonymous 1 MB renders run through the API, and while eight views of a 1 MB README run', {
  timeout: 240_000,
}, async (t) => {
  const { base, pid } = await startHearth(t, { dataDir: tempDataDir(t, 'hearth-markdown-') });
  const asRoot = { 'private-token': TOKEN, 'content-type': 'application/json' };

  // a public project whose README is such a megabyte
  const created = await fetch(`${base}/api/v4/projects`, {
    method: 'POST',
    headers: asRoot,
    body: JSON.stringify({ name: 'Big', path: 'big', visibility: 'public' }),
  });
  assert.equal(created.status, 201);
  const project = (await created.json()) as { id: number; path_with_namespace: string };
  const readme = SLOW(0);
  assert.equal(Buffer.byteLength(readme), 1024 * 1024 - 1);
  const file = await fetch(`${base}/api/v4/projects/${project.id}/repository/files/README.md`, {
    method: 'POST',
    headers: asRoot,
    body: JSON.stringify({ branch: 'main', content: readme, commit_message: 'A big README' }),
  });
  assert.equal(file.status, 201);

  /** /-/health's answer times while `renders` run (asked one after the other until they are all done) */
  const healthWhile = async <T>(renders: Promise<T>[]): Promise<{ answers: T[]; waits: number[] }> => {
    let finished = false;
    const all = Promise.all(renders).finally(() => (finished = true));
    all.catch(() => {}); // awaited below; when a health assertion fails first, the server stops under the renders
    const waits: number[] = [];
    const busy = busiestStretch(pid);
    while (!finished) {
      const started = performance.now();
      const health = await fetch(`${base}/-/health`);
      waits.push(Math.round(performance.now() - started));
      assert.equal(health.status, 200);
      assert.equal(await health.text(), 'Hearth OK');
      busy.mark();
      await new Promise((r) => setTimeout(r, 50));
    }
    const answers = await all;
    assert.ok(waits.length >= 3, `health was asked only ${waits.length} times while the renders ran`);
    assert.ok(busy.maxMs < 1000, `the main thread was busy ${busy.maxMs} ms (${busy.unit}) between two answers (waits: ${waits.join(', ')} ms)`);
    return { answers, waits };
  };

  // eight anonymous clients have eight different megabytes rendered
  const api = await healthWhile(
    Array.from({ length: 8 }, (_, i) =>
      fetch(`${base}/api/v4/markdown`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: SLOW(i + 1), gfm: true }),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { html: string } })),
    ),
  );
  for (const a of api.answers) {
    assert.equal(a.status, 201);
    assert.equal(typeof a.body.html, 'string');
  }
  // eight anonymous clients view the project: its README is that megabyte
  const pages = await healthWhile(
    Array.from({ length: 8 }, () => fetch(`${base}/${project.path_with_namespace}`).then(async (r) => ({ status: r.status, body: await r.text() }))),
  );
  for (const p of pages.answers) {
    assert.equal(p.status, 200);
    assert.match(p.body, /<div class="markdown-body"><p>/);
  }
});
