// Every endpoint of the translation API: its Allow header (Weblate's, reference §1.2), Content-Type
// exactly application/json, Vary: Accept; every link form carries format=api when asked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-app.ts';
import { AS_ROOT, poComponent } from '../../helpers/translation.ts';

const LIST_RO = 'GET, HEAD, OPTIONS';
const LIST_RW = 'GET, POST, HEAD, OPTIONS';
const DETAIL = 'GET, PUT, PATCH, DELETE, HEAD, OPTIONS';

test('Allow, Content-Type and Vary on every endpoint; links keep format', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const unit = (await ctx.c.db.kysely.selectFrom('units').select('id').orderBy('id').executeTakeFirstOrThrow()).id;
  const change = (await ctx.c.db.kysely.selectFrom('translation_changes').select('id').orderBy('id').executeTakeFirstOrThrow()).id;
  const endpoints: [string, string][] = [
    ['/api/', LIST_RO],
    ['/api/projects/', LIST_RW],
    ['/api/projects/hello/', DETAIL],
    ['/api/projects/hello/components/', LIST_RW],
    ['/api/projects/hello/statistics/', LIST_RO],
    ['/api/projects/hello/changes/', LIST_RO],
    ['/api/projects/hello/languages/', LIST_RO],
    ['/api/projects/hello/repository/', LIST_RW],
    ['/api/components/', LIST_RO],
    ['/api/components/hello/po/', DETAIL],
    ['/api/components/hello/po/translations/', LIST_RW],
    ['/api/components/hello/po/statistics/', LIST_RO],
    ['/api/components/hello/po/changes/', LIST_RO],
    ['/api/components/hello/po/lock/', LIST_RW],
    ['/api/components/hello/po/repository/', LIST_RW],
    ['/api/translations/', LIST_RO],
    ['/api/translations/hello/po/cs/', 'GET, DELETE, HEAD, OPTIONS'],
    ['/api/translations/hello/po/cs/statistics/', LIST_RO],
    ['/api/translations/hello/po/cs/changes/', LIST_RO],
    ['/api/translations/hello/po/cs/units/', LIST_RW],
    ['/api/translations/hello/po/cs/repository/', LIST_RW],
    ['/api/units/', LIST_RO],
    [`/api/units/${unit}/`, DETAIL],
    ['/api/changes/', LIST_RO],
    [`/api/changes/${change}/`, LIST_RO],
    ['/api/languages/', LIST_RW],
    ['/api/languages/cs/', DETAIL],
    ['/api/languages/cs/statistics/', LIST_RO],
    // Hearth serves users read-only: Allow names the methods that work
    ['/api/users/root/', LIST_RO],
  ];
  for (const [url, allow] of endpoints) {
    const res = await ctx.app.inject({ method: 'GET', url, headers: AS_ROOT });
    assert.equal(res.statusCode, 200, url);
    assert.equal(res.headers.allow, allow, url);
    assert.equal(res.headers['content-type'], 'application/json', url);
    assert.equal(res.headers.vary, 'Accept', url);
    const json = await ctx.app.inject({ method: 'GET', url: `${url}?format=json`, headers: AS_ROOT });
    const links = json.body.match(/"https?:\/\/[^"]+"/g) ?? [];
    for (const l of links) {
      const u = new URL(JSON.parse(l));
      if (u.pathname.startsWith('/api/') && !u.pathname.startsWith('/api/v4')) assert.equal(u.searchParams.get('format'), 'json', `${url}: ${l}`);
      else assert.equal(u.searchParams.get('format'), null, `${url}: ${l}`);
    }
    const html = await ctx.app.inject({ method: 'GET', url: `${url}?format=api`, headers: AS_ROOT });
    assert.equal(html.statusCode, 200, url);
    assert.equal(html.headers['content-type'], 'text/html; charset=utf-8', url);
    const head = await ctx.app.inject({ method: 'HEAD', url, headers: AS_ROOT });
    assert.equal(head.statusCode, 200, url);
    assert.equal(head.body, '');
    const options = await ctx.app.inject({ method: 'OPTIONS', url, headers: AS_ROOT });
    assert.equal(options.statusCode, 200, url);
    assert.equal(options.headers.allow, allow, url);
  }
  const file = await ctx.app.inject({ method: 'GET', url: '/api/translations/hello/po/cs/file/', headers: AS_ROOT });
  assert.equal(file.headers.allow, 'GET, POST, PUT, HEAD, OPTIONS');
});

test('OPTIONS: DRF metadata; actions for POST only for authenticated callers', async (t) => {
  const ctx = await buildTestApp(t);
  const anon = await ctx.app.inject({ method: 'OPTIONS', url: '/api/projects/', headers: { host: 'weblate.test' } });
  assert.equal(anon.statusCode, 200);
  assert.deepEqual(anon.json(), {
    name: 'Project List',
    description: 'Translation projects API.',
    renders: ['application/json', 'text/html'],
    parses: ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'],
  });
  const root = (await ctx.app.inject({ method: 'OPTIONS', url: '/api/projects/', headers: AS_ROOT })).json();
  assert.deepEqual(Object.keys(root.actions.POST), ['name', 'slug', 'web', 'source_language', 'access_control']);
  assert.deepEqual(root.actions.POST.name, {
    type: 'string',
    required: true,
    read_only: false,
    label: 'Project name',
    help_text: 'Display name',
    max_length: 60,
  });
});
