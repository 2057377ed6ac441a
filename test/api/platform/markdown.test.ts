// POST /markdown: GitLab's parameters and status, sanitised HTML, GFM extras, project context.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, EXTERNAL_URL } from '../../helpers/build-app.ts';

test('POST /markdown: 201 {"html"}; plain markdown by default, GitLab extras with gfm', async (t) => {
  const { app } = await buildTestApp(t);
  const plain = await app.inject({ method: 'POST', url: '/api/v4/markdown', payload: { text: '# Hello *world*\n\n- [ ] task' } });
  assert.equal(plain.statusCode, 201);
  assert.equal(plain.headers['content-type'], 'application/json');
  assert.deepEqual(plain.json(), { html: '<h1>Hello <em>world</em></h1>\n<ul>\n<li>[ ] task</li>\n</ul>' });

  const gfm = await app.inject({
    method: 'POST',
    url: '/api/v4/markdown',
    payload: { text: '# Hello *world*\n\n## Hello world\n\n- [ ] todo\n- [x] done\n\nsee https://example.com/a', gfm: true },
  });
  assert.equal(gfm.statusCode, 201);
  assert.equal(
    gfm.json().html,
    [
      '<h1 dir="auto"><a href="#hello-world" aria-hidden="true" class="anchor" id="user-content-hello-world"></a>Hello <em>world</em></h1>',
      '<h2 dir="auto"><a href="#hello-world-1" aria-hidden="true" class="anchor" id="user-content-hello-world-1"></a>Hello world</h2>',
      '<ul class="task-list">',
      '<li class="task-list-item"><input type="checkbox" class="task-list-item-checkbox" disabled> todo</li>',
      '<li class="task-list-item"><input type="checkbox" class="task-list-item-checkbox" disabled checked> done</li>',
      '</ul>',
      '<p>see <a href="https://example.com/a" rel="nofollow noreferrer noopener" target="_blank">https://example.com/a</a></p>',
    ].join('\n'),
  );
  // form bodies work too (Grape coerces gfm)
  const form = await app.inject({
    method: 'POST',
    url: '/api/v4/markdown',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'text=**b**&gfm=true',
  });
  assert.equal(form.statusCode, 201);
  assert.deepEqual(form.json(), { html: '<p><strong>b</strong></p>' });
});

test('sanitised: raw HTML escaped, javascript:/data:/vbscript: links dropped, attributes cannot be injected', async (t) => {
  const { app } = await buildTestApp(t);
  const cases: [string, string][] = [
    ['<script>alert(1)</script>', '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>'],
    ['<img src=x onerror=alert(1)>', '<p>&lt;img src=x onerror=alert(1)&gt;</p>'],
    ['[x](javascript:alert(1))', '<p>[x](javascript:alert(1))</p>'],
    ['[x](JaVaScRiPt:alert(1))', '<p>[x](JaVaScRiPt:alert(1))</p>'],
    ['[x](vbscript:msgbox)', '<p>[x](vbscript:msgbox)</p>'],
    ['[x](data:text/html;base64,PHNjcmlwdD4=)', '<p>[x](data:text/html;base64,PHNjcmlwdD4=)</p>'],
    ['<javascript:alert(1)>', '<p>&lt;javascript:alert(1)&gt;</p>'],
    ['[x](tel:123)', '<p>[x](tel:123)</p>'],
    ['![a" onerror="x](y.png)', '<p><img src="y.png" alt="a&quot; onerror=&quot;x" loading="lazy"></p>'],
  ];
  for (const [text, html] of cases) {
    for (const gfm of [false, true]) {
      const res = await app.inject({ method: 'POST', url: '/api/v4/markdown', payload: { text, gfm } });
      assert.equal(res.statusCode, 201);
      assert.equal(res.json().html, html, `${text} gfm=${gfm}`);
    }
  }
  // a quote in a URL never closes the attribute
  for (const gfm of [false, true]) {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v4/markdown',
      payload: { text: '[x](https://e.com/" onmouseover="alert(1)) <https://e.com/"onclick="y>', gfm },
    });
    assert.ok(!/"\s*on(mouseover|click)=/.test(res.json().html), res.json().html);
  }
});

test('project context: relative links and uploads resolved; invisible or unknown project 404; bad input 400', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const owner = await seed.user();
  const tok = await seed.token(owner);
  const project = await seed.project({ owner, visibility: 'private', path: 'docs' });
  const ns = await c.db.kysely.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
  const fullPath = `${ns.full_path}/docs`;
  const text = '[guide](guide/intro.md) [root](/README.md) ![shot](/uploads/0123456789abcdef0123456789abcdef/s.png) [a](#x) [ext](https://e.com)';
  const res = await app.inject({ method: 'POST', url: '/api/v4/markdown', headers: tok.headers, payload: { text, gfm: true, project: fullPath } });
  assert.equal(res.statusCode, 201, res.body);
  const base = `${EXTERNAL_URL}/${fullPath}`;
  assert.equal(
    res.json().html,
    `<p><a href="${base}/-/blob/main/guide/intro.md">guide</a> <a href="${base}/-/blob/main/README.md">root</a> ` +
      `<img src="${base}/uploads/0123456789abcdef0123456789abcdef/s.png" alt="shot" loading="lazy"> <a href="#x">a</a> ` +
      '<a href="https://e.com" rel="nofollow noreferrer noopener" target="_blank">ext</a></p>',
  );

  for (const headers of [{}, (await seed.token(await seed.user())).headers]) {
    const hidden = await app.inject({ method: 'POST', url: '/api/v4/markdown', headers, payload: { text: 'x', project: fullPath } });
    assert.equal(hidden.statusCode, 404);
    assert.deepEqual(hidden.json(), { message: '404 Project Not Found' });
  }
  for (const project of ['nope/nothing', String(1)]) {
    const missing = await app.inject({ method: 'POST', url: '/api/v4/markdown', headers: tok.headers, payload: { text: 'x', project } });
    assert.equal(missing.statusCode, 404, project);
    assert.deepEqual(missing.json(), { message: '404 Project Not Found' });
  }
  const bad: [unknown, unknown][] = [
    [{}, { error: 'text is missing' }],
    [{ text: 'x', gfm: 'maybe' }, { error: 'gfm is invalid' }],
    [{ text: ['a'] }, { error: 'text is invalid' }],
  ];
  for (const [payload, body] of bad) {
    const r = await app.inject({ method: 'POST', url: '/api/v4/markdown', payload: payload as object });
    assert.equal(r.statusCode, 400, JSON.stringify(payload));
    assert.deepEqual(r.json(), body);
  }
  const huge = await app.inject({ method: 'POST', url: '/api/v4/markdown', payload: { text: 'a'.repeat(1024 * 1024 + 1) } });
  assert.equal(huge.statusCode, 413);
});
