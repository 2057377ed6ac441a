// Markdown whose cost a user controls: rendered off the event loop within a time limit (the text shown
// escaped past it), cut at 1 MB as GitLab's TruncateSourceFilter cuts, cached by content, and anonymous
// POST /markdown rate-limited per address.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-app.ts';
import { workTree } from '../../helpers/git.ts';
import { webGet } from '../../helpers/web.ts';
import { MAX_MARKDOWN_BYTES } from '../../../src/domain/markdown/markdown.ts';
import { SYNC_MAX } from '../../../src/domain/markdown/renderer.ts';

const post = (app: Awaited<ReturnType<typeof buildTestApp>>['app'], payload: object, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: '/api/v4/markdown', headers, payload });

/** A normal document well over the size rendered on the main thread: headings, lists, links, code. */
function longDocument(): string {
  const parts: string[] = [];
  for (let i = 0; parts.join('').length < SYNC_MAX * 4; i++) {
    parts.push(`## Part ${i}\n\n- [ ] task *${i}* with [a link](docs/p${i}.md) and \`code ${i}\`\n- [x] done <b>${i}</b>\n\nSee https://example.com/${i}.\n\n`);
  }
  return parts.join('');
}

test('past its time limit a render is stopped: the text comes back escaped, as plain text, and that answer is cached', async (t) => {
  const { app, c } = await buildTestApp(t, { markdownTimeoutMs: 1500 });
  // markdown-it needs some 2.5 s for this megabyte (on an idle machine)
  const text = `<b>&</b>\n${'!['.repeat(500_000)}`;
  const expected = {
    html: `<p><em>This text took too long to render: it is shown as plain text.</em></p>\n<pre class="markdown-plain">&lt;b&gt;&amp;&lt;/b&gt;\n${'!['.repeat(500_000)}</pre>`,
  };
  const res = await post(app, { text, gfm: true });
  assert.equal(res.statusCode, 201);
  assert.deepEqual(res.json(), expected);
  assert.deepEqual(c.markdown.counts, { hits: 0, sync: 0, threads: 1, timeouts: 1, busy: 0 });
  // the same text again: the cached answer, no second render
  const again = await post(app, { text, gfm: true });
  assert.deepEqual(again.json(), expected);
  assert.deepEqual(c.markdown.counts, { hits: 1, sync: 0, threads: 1, timeouts: 1, busy: 0 });
  // the terminated thread is replaced: a normal long text renders as before
  const doc = longDocument();
  const rendered = await post(app, { text: doc, gfm: true });
  assert.equal(rendered.statusCode, 201);
  assert.match(
    rendered.json().html,
    /^<h2 dir="auto"><a href="#part-0" aria-hidden="true" class="anchor" id="user-content-part-0"><\/a>Part 0<\/h2>\n<ul class="task-list">/,
  );
  assert.equal(c.markdown.counts.threads, 2);
});

test('a long text renders on a worker thread byte for byte as on the main thread; the same text again is a cache hit', async (t) => {
  const { app, c } = await buildTestApp(t);
  const { renderMarkdown } = await import('../../../src/domain/markdown/markdown.ts');
  const doc = longDocument();
  assert.ok(doc.length > SYNC_MAX);
  const expected = renderMarkdown(doc, { gfm: true, externalUrl: c.config.externalUrl, project: null });
  // three at once: one render, shared
  const [a, b, d] = await Promise.all([post(app, { text: doc, gfm: true }), post(app, { text: doc, gfm: true }), post(app, { text: doc, gfm: true })]);
  for (const r of [a, b, d]) {
    assert.equal(r.statusCode, 201);
    assert.deepEqual(r.json(), { html: expected });
  }
  assert.deepEqual(c.markdown.counts, { hits: 0, sync: 0, threads: 1, timeouts: 0, busy: 0 });
  assert.deepEqual((await post(app, { text: doc, gfm: true })).json(), { html: expected });
  assert.deepEqual(c.markdown.counts, { hits: 1, sync: 0, threads: 1, timeouts: 0, busy: 0 });
  // the context is part of the key: plain markdown is another render
  const plain = await post(app, { text: doc });
  assert.deepEqual(plain.json(), { html: renderMarkdown(doc, { gfm: false, externalUrl: c.config.externalUrl, project: null }) });
  assert.equal(c.markdown.counts.threads, 2);
});

test("pages: a long README renders off the main thread as the API renders it, cached across views; over 1 MB a text is cut with GitLab's notice", async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const owner = await seed.user({ username: 'owner' });
  const { dir } = await seed.repoProject({ owner, visibility: 'public', path: 'proj' });
  const wt = workTree(t, dir);
  const doc = longDocument();
  wt.write('README.md', doc);
  wt.commit('Docs');
  wt.push();
  const api = await post(app, { text: doc, gfm: true, project: 'owner/proj' });
  const expected = (api.json().html as string).replace(/ aria-hidden="true" class="anchor"/g, ' class="anchor" aria-label="Link to this heading"');
  const threads = c.markdown.counts.threads;
  for (let view = 0; view < 2; view++) {
    const home = await webGet(app, '/owner/proj');
    assert.equal(home.statusCode, 200);
    assert.ok(home.body.includes(`<div class="markdown-body">${expected}</div>`), 'the README as the API renders it');
    assert.ok(!home.body.includes('<!--markdown:'), 'no placeholder left');
  }
  // the API's render was the page's too: no thread rendered it again
  assert.equal(c.markdown.counts.threads, threads);

  // a text over 1 MB (a note of a million characters, some of two bytes) is cut at 1 MB — the é's two bytes
  // would cross the limit: cut before it — with GitLab's notice and "..."
  const cut = await c.markdown.render(`${'a'.repeat(MAX_MARKDOWN_BYTES - 1)}é tail`, { gfm: true, externalUrl: c.config.externalUrl, project: null });
  assert.equal(
    cut,
    `<p><em>The text is longer than 1048576 characters and has been visually truncated.</em></p>\n<p>${'a'.repeat(MAX_MARKDOWN_BYTES - 1)}...</p>`,
  );
  // the API refuses such a text instead
  assert.equal((await post(app, { text: 'a'.repeat(MAX_MARKDOWN_BYTES + 1) })).statusCode, 413);
});

test('anonymous POST /markdown: HEARTH_MARKDOWN_RATE_LIMIT calls a minute per address, then 429 with Retry-After; users are not limited', async (t) => {
  const { app, seed } = await buildTestApp(t, { markdownRateLimit: 2 });
  const user = await seed.user();
  const tok = await seed.token(user);
  for (let i = 0; i < 2; i++) {
    const ok = await post(app, { text: `*${i}*` });
    assert.equal(ok.statusCode, 201);
    assert.deepEqual(ok.json(), { html: `<p><em>${i}</em></p>` });
  }
  const limited = await post(app, { text: '*2*' });
  assert.equal(limited.statusCode, 429);
  assert.deepEqual(limited.json(), { message: { error: 'This endpoint has been requested too many times. Try again later.' } });
  const retryAfter = Number(limited.headers['retry-after']);
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, String(limited.headers['retry-after']));
  // another address has its own count; a user is not counted
  const other = await app.inject({ method: 'POST', url: '/api/v4/markdown', remoteAddress: '10.0.0.9', payload: { text: 'x' } });
  assert.equal(other.statusCode, 201);
  for (let i = 0; i < 3; i++) assert.equal((await post(app, { text: 'y' }, tok.headers)).statusCode, 201);
});
