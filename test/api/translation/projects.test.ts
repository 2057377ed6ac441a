// Translation projects: create (201 + Location, field errors, uniqueness), list and detail with
// their links, updates (rename → change 41), delete, visibility (private → 404) and permissions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-app.ts';
import { API, AS_ROOT, CS_PO, HOST, SITE, createProject, getJson, poComponent } from '../../helpers/translation.ts';

const projectBody = (slug: string, name: string, extra: Record<string, unknown> = {}) => ({
  name,
  slug,
  id: extra.id,
  web: 'https://hello.example/',
  source_language: extra.source_language,
  web_url: `${SITE}/projects/${slug}/`,
  url: `${API}/projects/${slug}/`,
  components_list_url: `${API}/projects/${slug}/components/`,
  repository_url: `${API}/projects/${slug}/repository/`,
  statistics_url: `${API}/projects/${slug}/statistics/`,
  changes_list_url: `${API}/projects/${slug}/changes/`,
  languages_url: `${API}/projects/${slug}/languages/`,
  access_control: extra.access_control ?? 0,
});

test('POST /api/projects/: 201, Location, the whole project, the change record; GET list and detail', async (t) => {
  const ctx = await buildTestApp(t);
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/api/projects/',
    headers: AS_ROOT,
    payload: { name: 'Hello', slug: 'hello', web: 'https://hello.example/', source_language: 'cs' },
  });
  assert.equal(res.statusCode, 201);
  assert.equal(res.headers.location, `${API}/projects/hello/`);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.equal(res.headers.allow, 'GET, POST, HEAD, OPTIONS');
  const body = res.json();
  assert.equal(body.source_language.code, 'cs');
  assert.equal(body.source_language.url, `${API}/languages/cs/`);
  assert.deepEqual(body, projectBody('hello', 'Hello', { id: body.id, source_language: body.source_language }));

  const list = await ctx.app.inject({ method: 'GET', url: '/api/projects/', headers: HOST });
  assert.equal(list.statusCode, 200);
  assert.deepEqual(list.json(), { count: 1, next: null, previous: null, results: [body] });
  const one = await ctx.app.inject({ method: 'GET', url: '/api/projects/hello/', headers: HOST });
  assert.equal(one.headers.allow, 'GET, PUT, PATCH, DELETE, HEAD, OPTIONS');
  assert.deepEqual(one.json(), body);
  const api = await ctx.app.inject({ method: 'GET', url: '/api/projects/hello/?format=json', headers: HOST });
  assert.equal(api.json().url, `${API}/projects/hello/?format=json`);
  assert.equal(api.json().web_url, `${SITE}/projects/hello/`);

  const changes = await ctx.c.db.kysely.selectFrom('translation_changes').selectAll().execute();
  assert.deepEqual(
    changes.map((c) => [c.action, c.project_id, c.target, c.user_id]),
    [[50, body.id, 'Hello', 1]],
  );
});

test('POST /api/projects/: DRF field errors, uniqueness, and nothing written', async (t) => {
  const ctx = await buildTestApp(t);
  const post = (payload: unknown) => ctx.app.inject({ method: 'POST', url: '/api/projects/', headers: AS_ROOT, payload: payload as object });
  const cases: [unknown, number, unknown][] = [
    [{}, 400, { name: ['This field is required.'], slug: ['This field is required.'], web: ['This field is required.'] }],
    [
      { name: '', slug: 'a b', web: 'nope' },
      400,
      {
        name: ['This field may not be blank.'],
        slug: ['Enter a valid “slug” consisting of letters, numbers, underscores or hyphens.'],
        web: ['Enter a valid URL.'],
      },
    ],
    [{ name: 'x'.repeat(61), slug: 'ok', web: 'https://x.example/' }, 400, { name: ['Ensure this field has no more than 60 characters.'] }],
    [
      { name: 'A', slug: 'a', web: 'https://x.example/', source_language: 'zz-nope' },
      400,
      { source_language: ['Language with this language code was not found.'] },
    ],
    [{ name: 'A', slug: 'a', web: 'https://x.example/', access_control: 7 }, 400, { access_control: ['"7" is not a valid choice.'] }],
  ];
  for (const [payload, status, body] of cases) {
    const res = await post(payload);
    assert.equal(res.statusCode, status, JSON.stringify(payload));
    assert.deepEqual(res.json(), body);
  }
  assert.equal((await post({ name: 'Hello', slug: 'hello', web: 'https://x.example/' })).statusCode, 201);
  const dup = await post({ name: 'hello', slug: 'HELLO', web: 'https://x.example/' });
  assert.equal(dup.statusCode, 400);
  assert.deepEqual(dup.json(), { name: ['Project with this Project name already exists.'], slug: ['Project with this URL slug already exists.'] });
  const bad = await ctx.app.inject({ method: 'POST', url: '/api/projects/', headers: { ...AS_ROOT, 'content-type': 'application/json' }, payload: '{"name":' });
  assert.equal(bad.statusCode, 400);
  assert.equal((await ctx.c.db.kysely.selectFrom('translation_projects').select('id').execute()).length, 1);
});

test('projects: anonymous writes 401, users 403; private projects are 404 to non-administrators', async (t) => {
  const ctx = await buildTestApp(t);
  const user = await ctx.seed.user();
  const { headers } = await ctx.seed.token(user, { scopes: ['api'] });
  const anon = await ctx.app.inject({ method: 'POST', url: '/api/projects/', headers: HOST, payload: { name: 'A', slug: 'a', web: 'https://a.example/' } });
  assert.equal(anon.statusCode, 401);
  assert.equal(anon.headers['www-authenticate'], 'Token');
  assert.deepEqual(anon.json(), { detail: 'Authentication credentials were not provided.' });
  const denied = await ctx.app.inject({
    method: 'POST',
    url: '/api/projects/',
    headers: { ...HOST, authorization: `Token ${headers['private-token']}` },
    payload: { name: 'A', slug: 'a', web: 'https://a.example/' },
  });
  assert.equal(denied.statusCode, 403);
  assert.deepEqual(denied.json(), { detail: 'Can not create projects' });

  await createProject(ctx, { name: 'Secret', slug: 'secret', access_control: 100 });
  await createProject(ctx, { name: 'Open', slug: 'open' });
  const userAuth = { ...HOST, authorization: `Token ${headers['private-token']}` };
  assert.deepEqual(
    (await ctx.app.inject({ method: 'GET', url: '/api/projects/', headers: userAuth })).json().results.map((p: any) => p.slug),
    ['open'],
  );
  assert.deepEqual(
    (await ctx.app.inject({ method: 'GET', url: '/api/projects/', headers: AS_ROOT })).json().results.map((p: any) => p.slug),
    ['secret', 'open'],
  );
  for (const url of [
    '/api/projects/secret/',
    '/api/projects/secret/components/',
    '/api/projects/secret/statistics/',
    '/api/projects/secret/changes/',
    '/api/projects/nope/',
  ]) {
    const res = await ctx.app.inject({ method: 'GET', url, headers: userAuth });
    assert.equal(res.statusCode, 404, url);
    assert.deepEqual(res.json(), { detail: 'Not found.' });
  }
  const edit = await ctx.app.inject({ method: 'PATCH', url: '/api/projects/open/', headers: userAuth, payload: { name: 'X' } });
  assert.equal(edit.statusCode, 403);
  assert.deepEqual(edit.json(), { detail: 'Can not edit project' });
});

test('PUT/PATCH/DELETE /api/projects/:slug/: rename records 41, delete answers 204 and removes the rows', async (t) => {
  const ctx = await buildTestApp(t);
  const created = await createProject(ctx);
  const patch = await ctx.app.inject({ method: 'PATCH', url: '/api/projects/hello/', headers: AS_ROOT, payload: { slug: 'hi', name: 'Hi' } });
  assert.equal(patch.statusCode, 200);
  assert.deepEqual(patch.json(), projectBody('hi', 'Hi', { id: created.id, source_language: created.source_language }));
  const put = await ctx.app.inject({ method: 'PUT', url: '/api/projects/hi/', headers: AS_ROOT, payload: { name: 'Hi' } });
  assert.equal(put.statusCode, 400);
  assert.deepEqual(put.json(), { slug: ['This field is required.'], web: ['This field is required.'] });
  assert.equal((await ctx.app.inject({ method: 'GET', url: '/api/projects/hello/', headers: AS_ROOT })).statusCode, 404);
  const changes = await ctx.c.db.kysely.selectFrom('translation_changes').select(['action', 'target', 'old']).orderBy('id').execute();
  assert.deepEqual(changes, [
    { action: 50, target: 'Hello', old: '' },
    { action: 41, target: 'hi', old: 'hello' },
  ]);
  const del = await ctx.app.inject({ method: 'DELETE', url: '/api/projects/hi/', headers: AS_ROOT });
  assert.equal(del.statusCode, 204);
  assert.equal(del.body, '');
  assert.deepEqual(await ctx.c.db.kysely.selectFrom('translation_projects').select('id').execute(), []);
  assert.deepEqual(await ctx.c.db.kysely.selectFrom('translation_changes').select(['action', 'target', 'project_id']).execute(), [
    { action: 39, target: 'hi', project_id: null },
  ]);
});

test('GET /api/projects/:slug/statistics/ sums every translation, the source translation included (Weblate ProjectStats)', async (t) => {
  const ctx = await buildTestApp(t);
  // 4 source strings (read-only in the source translation), Czech: 2 translated, 1 needs editing, 1 empty
  await poComponent(t, ctx, { 'po/cs.po': CS_PO });
  const perTranslation = (await getJson(ctx, '/api/components/hello/po/statistics/')).results;
  assert.deepEqual(
    perTranslation.map((s: Record<string, unknown>) => [s.code, s.total, s.translated, s.fuzzy, s.readonly, s.translated_percent]),
    [
      ['en', 4, 4, 0, 4, 100.0],
      ['cs', 4, 2, 1, 0, 50.0],
    ],
  );
  const res = await ctx.app.inject({ method: 'GET', url: '/api/projects/hello/statistics/', headers: AS_ROOT });
  assert.equal(res.statusCode, 200);
  // 4 + 2 of 8 strings translated: 75 % (the targets alone would be 50 %); words and chars on the source text
  assert.deepEqual(res.json(), {
    total: 8,
    total_words: 16,
    total_chars: 80,
    last_change: null,
    recent_changes: 0,
    translated: 6,
    translated_words: 14,
    translated_percent: 75.0,
    translated_words_percent: 87.5,
    translated_chars: 69,
    translated_chars_percent: 86.2,
    fuzzy: 1,
    fuzzy_percent: 12.5,
    fuzzy_words: 1,
    fuzzy_words_percent: 6.2,
    fuzzy_chars: 6,
    fuzzy_chars_percent: 7.5,
    failing: 0,
    failing_percent: 0.0,
    approved: 0,
    approved_percent: 0.0,
    approved_words: 0,
    approved_words_percent: 0.0,
    approved_chars: 0,
    approved_chars_percent: 0.0,
    readonly: 4,
    readonly_percent: 50.0,
    readonly_words: 8,
    readonly_words_percent: 50.0,
    readonly_chars: 40,
    readonly_chars_percent: 50.0,
    suggestions: 0,
    comments: 0,
    name: 'Hello',
    url: 'http://hearth.test/projects/hello/',
  });
});
