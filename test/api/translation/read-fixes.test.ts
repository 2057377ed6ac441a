// Read-side fixes of the translation API: DRF's order of checks (authentication and permissions before
// the method: an anonymous unsafe method on a path that does not serve it is 401 with WWW-Authenticate,
// a signed-in one 405), Allow naming exactly the methods that are served, a unit's source_unit linking
// to the source-language unit, enforced_checks as a JSON list, and statistics' last_change and
// recent_changes following the change log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import { API, AS_ROOT, HOST, createComponent, getJson, poComponent, repoWith } from '../../helpers/translation.ts';
import { contentChangesSet, refreshTranslationStats } from '../../../src/domain/translation/stats/stats.ts';

const NOT_PROVIDED = { detail: 'Authentication credentials were not provided.' };
const notAllowed = (m: string) => ({ detail: `Method "${m}" not allowed.` });

async function signedIn(ctx: TestApp) {
  const user = await ctx.seed.user({ name: 'Sam Signed' });
  const { token } = await ctx.seed.token(user);
  return { ...HOST, authorization: `Token ${token}` };
}

test('DRF order: an unsafe method a path does not serve is 401 for anonymous callers, 405 for signed-in ones', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const user = await signedIn(ctx);
  const paths: [string, string][] = [
    ['/api/changes/', 'GET, HEAD, OPTIONS'],
    ['/api/projects/hello/statistics/', 'GET, HEAD, OPTIONS'],
    ['/api/components/hello/po/statistics/', 'GET, HEAD, OPTIONS'],
    ['/api/translations/hello/po/cs/statistics/', 'GET, HEAD, OPTIONS'],
    ['/api/translations/hello/po/cs/changes/', 'GET, HEAD, OPTIONS'],
    ['/api/languages/cs/statistics/', 'GET, HEAD, OPTIONS'],
  ];
  for (const [url, allow] of paths) {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      const anon = await ctx.app.inject({ method, url, headers: HOST, payload: method === 'DELETE' ? undefined : {} });
      assert.equal(anon.statusCode, 401, `${method} ${url}`);
      assert.deepEqual(anon.json(), NOT_PROVIDED);
      assert.equal(anon.headers['www-authenticate'], 'Token');
      assert.equal(anon.headers.allow, allow, `${method} ${url}`);
      assert.equal(anon.headers.vary, 'Accept');

      const bad = await ctx.app.inject({ method, url, headers: { ...HOST, authorization: 'Token nope' } });
      assert.equal(bad.statusCode, 401);
      assert.deepEqual(bad.json(), { detail: 'Invalid token.' });
      assert.equal(bad.headers['www-authenticate'], 'Token');

      for (const headers of [user, AS_ROOT]) {
        const res = await ctx.app.inject({ method, url, headers, payload: method === 'DELETE' ? undefined : {} });
        assert.equal(res.statusCode, 405, `${method} ${url}`);
        assert.deepEqual(res.json(), notAllowed(method));
        assert.equal(res.headers.allow, allow);
        assert.equal(res.headers['www-authenticate'], undefined);
      }
    }
  }
  // the body is never read: neither a malformed one nor an unsupported type comes first
  for (const [type, payload] of [
    ['application/json', '{"target": '],
    ['text/plain', 'hello'],
    ['multipart/form-data', '--x'],
  ]) {
    const anon = await ctx.app.inject({ method: 'PATCH', url: '/api/changes/', headers: { ...HOST, 'content-type': type }, payload });
    assert.equal(anon.statusCode, 401, type);
    assert.deepEqual(anon.json(), NOT_PROVIDED);
    const res = await ctx.app.inject({ method: 'PATCH', url: '/api/changes/', headers: { ...user, 'content-type': type }, payload });
    assert.equal(res.statusCode, 405, type);
    assert.deepEqual(res.json(), notAllowed('PATCH'));
  }
  // the browsable API renders the 405 as the view's page
  const page = await ctx.app.inject({ method: 'DELETE', url: '/api/changes/?format=api', headers: AS_ROOT });
  assert.equal(page.statusCode, 405);
  assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
  assert.ok(page.body.includes('<b>HTTP 405 Method Not Allowed</b>\n<b>Allow:</b> <span class="lit">GET, HEAD, OPTIONS</span>'));
  // an unknown format is 404 before authentication, as DRF negotiates content first
  const format = await ctx.app.inject({ method: 'PATCH', url: '/api/changes/?format=nope', headers: HOST });
  assert.equal(format.statusCode, 404);
  assert.deepEqual(format.json(), { detail: 'Not found.' });
  // a safe method a path does not serve is 405 for everyone
  const get = await ctx.app.inject({ method: 'GET', url: '/api/suggestions/1/accept/', headers: HOST });
  assert.equal(get.statusCode, 405);
  assert.deepEqual(get.json(), notAllowed('GET'));
  assert.equal(get.headers.allow, 'POST, OPTIONS');
  // nothing changed
  assert.equal((await getJson(ctx, '/api/translations/hello/po/cs/statistics/')).total, 4);
});

test('Allow names exactly the methods a path serves: an unlisted one is 405, a listed one is answered by its route', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const unit = (await getJson(ctx, '/api/translations/hello/po/cs/units/')).results[0];
  const change = (await getJson(ctx, '/api/changes/')).results[0];
  const urls = [
    '/api/',
    '/api/projects/',
    '/api/projects/hello/',
    '/api/projects/hello/components/',
    '/api/projects/hello/statistics/',
    '/api/projects/hello/languages/',
    '/api/projects/hello/changes/',
    '/api/projects/hello/repository/',
    '/api/components/',
    '/api/components/hello/po/',
    '/api/components/hello/po/translations/',
    '/api/components/hello/po/statistics/',
    '/api/components/hello/po/changes/',
    '/api/components/hello/po/repository/',
    '/api/components/hello/po/lock/',
    '/api/components/hello/po/file/',
    '/api/translations/',
    '/api/translations/hello/po/cs/',
    '/api/translations/hello/po/cs/statistics/',
    '/api/translations/hello/po/cs/changes/',
    '/api/translations/hello/po/cs/units/',
    '/api/translations/hello/po/cs/file/',
    '/api/translations/hello/po/cs/repository/',
    '/api/units/',
    `/api/units/${unit.id}/`,
    '/api/changes/',
    `/api/changes/${change.id}/`,
    '/api/languages/',
    '/api/languages/cs/',
    '/api/languages/cs/statistics/',
    '/api/users/root/',
  ];
  for (const url of urls) {
    const get = await ctx.app.inject({ method: 'GET', url, headers: AS_ROOT });
    assert.equal(get.statusCode, 200, url);
    const allow = String(get.headers.allow);
    const listed = allow.split(', ');
    assert.ok(listed.includes('GET') && listed.includes('HEAD') && listed.includes('OPTIONS'), `${url}: ${allow}`);
    const options = await ctx.app.inject({ method: 'OPTIONS', url, headers: AS_ROOT });
    assert.equal(options.headers.allow, allow, url);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      if (listed.includes(method)) {
        // anonymous: the route itself answers (authentication, permission), never 405
        const anon = await ctx.app.inject({ method, url, headers: HOST, payload: method === 'DELETE' ? undefined : {} });
        assert.notEqual(anon.statusCode, 405, `${method} ${url}`);
        assert.ok([400, 401, 403, 404].includes(anon.statusCode), `${method} ${url}: ${anon.statusCode} ${anon.body}`);
      } else {
        const res = await ctx.app.inject({ method, url, headers: AS_ROOT, payload: method === 'DELETE' ? undefined : {} });
        assert.equal(res.statusCode, 405, `${method} ${url} (Allow: ${allow})`);
        assert.equal(res.headers.allow, allow);
      }
    }
  }
  // the methods that work today, where Weblate's viewsets have them
  const allowOf = async (url: string) => (await ctx.app.inject({ method: 'GET', url, headers: AS_ROOT })).headers.allow;
  assert.equal(await allowOf(`/api/units/${unit.id}/`), 'GET, PUT, PATCH, DELETE, HEAD, OPTIONS');
  assert.equal(await allowOf('/api/translations/hello/po/cs/units/'), 'GET, POST, HEAD, OPTIONS');
  assert.equal(await allowOf('/api/changes/'), 'GET, HEAD, OPTIONS');
  // an error of a path carries its Allow too
  const missing = await ctx.app.inject({ method: 'GET', url: '/api/translations/hello/po/xx/statistics/', headers: AS_ROOT });
  assert.equal(missing.statusCode, 404);
  assert.equal(missing.headers.allow, 'GET, HEAD, OPTIONS');
});

test("a unit's source_unit links to the source-language unit with the same id_hash; a source unit links to itself", async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const source = (await getJson(ctx, '/api/translations/hello/po/en/units/')).results;
  const cs = (await getJson(ctx, '/api/translations/hello/po/cs/units/')).results;
  const de = (await getJson(ctx, '/api/translations/hello/po/de/units/')).results;
  assert.equal(source.length, 4);
  for (const u of source) assert.equal(u.source_unit, `${API}/units/${u.id}/`);
  for (const list of [cs, de]) {
    assert.equal(list.length, 4);
    for (const u of list) {
      const s = source.find((x: { id_hash: number }) => x.id_hash === u.id_hash);
      assert.ok(s, u.source);
      assert.notEqual(s.id, u.id);
      assert.equal(u.source_unit, `${API}/units/${s.id}/`);
    }
  }
  // the same in one unit, in the units list, with ?format and through the link itself
  const one = await getJson(ctx, `/api/units/${cs[1].id}/`);
  assert.equal(one.source_unit, cs[1].source_unit);
  const all = (await getJson(ctx, '/api/units/?q=source:Orange')).results;
  assert.deepEqual(all.map((u: { language_code: string; source_unit: string }) => [u.language_code, u.source_unit]).sort(), [
    ['cs', cs[1].source_unit],
    ['de', cs[1].source_unit],
    ['en', cs[1].source_unit],
  ]);
  const json = await getJson(ctx, `/api/units/${cs[1].id}/?format=json`);
  assert.equal(json.source_unit, `${cs[1].source_unit}?format=json`);
  const followed = await getJson(ctx, new URL(cs[1].source_unit).pathname);
  assert.deepEqual([followed.source, followed.language_code, followed.source_unit], ['Orange', 'en', cs[1].source_unit]);
});

test('monolingual: a translation unit links to the template unit of its key', async (t) => {
  const ctx = await buildTestApp(t);
  const fixture = await repoWith(t, ctx, {
    'strings/en.json': '{"hello": "Hello", "bye": "Bye"}\n',
    'strings/cs.json': '{"hello": "Ahoj"}\n',
  });
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/api/projects/',
    headers: AS_ROOT,
    payload: { name: 'Mono', slug: 'mono', web: 'https://mono.example/' },
  });
  assert.equal(res.statusCode, 201, res.body);
  await createComponent(ctx, 'mono', {
    name: 'Json',
    slug: 'json',
    file_format: 'json',
    filemask: 'strings/*.json',
    template: 'strings/en.json',
    repo: fixture.repo,
  });
  const en = (await getJson(ctx, '/api/translations/mono/json/en/units/')).results;
  const cs = (await getJson(ctx, '/api/translations/mono/json/cs/units/')).results;
  assert.deepEqual(
    cs.map((u: { context: string; source_unit: string }) => [u.context, u.source_unit]),
    en.map((u: { context: string; id: number }) => [u.context, `${API}/units/${u.id}/`]),
  );
});

test('enforced_checks is a JSON list, never the string "[]"', async (t) => {
  const ctx = await buildTestApp(t);
  const fixture = await repoWith(t, ctx, { 'po/cs.po': 'msgid "A"\nmsgstr "B"\n' });
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/api/projects/',
    headers: AS_ROOT,
    payload: { name: 'Hello', slug: 'hello', web: 'https://hello.example/' },
  });
  assert.equal(res.statusCode, 201, res.body);
  const plain = await createComponent(ctx, 'hello', { repo: fixture.repo });
  assert.deepEqual(plain.enforced_checks, []);
  const enforced = await createComponent(ctx, 'hello', { name: 'Enforced', slug: 'enforced', repo: fixture.repo, enforced_checks: ['same', 'c_format'] });
  assert.deepEqual(enforced.enforced_checks, ['same', 'c_format']);
  const got = await ctx.app.inject({ method: 'GET', url: '/api/components/hello/enforced/', headers: AS_ROOT });
  assert.match(got.body, /"enforced_checks":\["same","c_format"\],/);
  const list = await getJson(ctx, '/api/projects/hello/components/');
  assert.deepEqual(
    list.results.map((c: { slug: string; enforced_checks: unknown }) => [c.slug, c.enforced_checks]),
    [
      ['po', []],
      ['enforced', ['same', 'c_format']],
    ],
  );
  const translation = await getJson(ctx, '/api/translations/hello/enforced/cs/');
  assert.deepEqual(translation.component.enforced_checks, ['same', 'c_format']);
});

test('statistics: last_change, last_author and recent_changes follow the change log, at every level', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const stats = () => getJson(ctx, '/api/translations/hello/po/cs/statistics/');
  const fresh = await stats();
  assert.deepEqual([fresh.last_change, fresh.recent_changes, fresh.last_author], [null, 0, null]);
  const apple = (await getJson(ctx, '/api/translations/hello/po/cs/units/?q=source:Apple')).results[0];
  const orange = (await getJson(ctx, '/api/translations/hello/po/cs/units/?q=source:Orange')).results[0];
  let res = await ctx.app.inject({ method: 'PATCH', url: `/api/units/${apple.id}/`, headers: AS_ROOT, payload: { target: ['Jablko'], state: 20 } });
  assert.equal(res.statusCode, 200, res.body);
  res = await ctx.app.inject({ method: 'PATCH', url: `/api/units/${orange.id}/`, headers: AS_ROOT, payload: { target: ['Pomeranč'], state: 20 } });
  assert.equal(res.statusCode, 200, res.body);
  const changes = (await getJson(ctx, '/api/translations/hello/po/cs/changes/')).results;
  const newest = await ctx.c.db.kysely.selectFrom('translation_changes').select('timestamp').where('id', '=', changes[0].id).executeTakeFirstOrThrow();
  const edited = await stats();
  assert.equal(edited.last_change, newest.timestamp.replace(/\.(\d{3})\d*Z$/, '.$1Z'));
  assert.deepEqual([edited.recent_changes, edited.last_author, edited.translated], [2, 'Administrator', 4]);
  const translation = await getJson(ctx, '/api/translations/hello/po/cs/');
  assert.deepEqual([translation.last_author, translation.last_change !== null], ['Administrator', true]);
  // aggregates: the newest change of their translations, the sum of their recent changes
  const component = (await getJson(ctx, '/api/components/hello/po/statistics/')).results;
  const csRow = component.find((r: { code: string }) => r.code === 'cs');
  const deRow = component.find((r: { code: string }) => r.code === 'de');
  assert.deepEqual([csRow.last_change, csRow.recent_changes, deRow.last_change, deRow.recent_changes], [edited.last_change, 2, null, 0]);
  const project = await getJson(ctx, '/api/projects/hello/statistics/');
  assert.deepEqual([project.last_change, project.recent_changes], [edited.last_change, 2]);
  const language = await getJson(ctx, '/api/languages/cs/statistics/');
  assert.deepEqual([language.last_change, language.recent_changes], [edited.last_change, 2]);
  const languages = await getJson(ctx, '/api/projects/hello/languages/');
  assert.deepEqual(
    Object.fromEntries(languages.map((l: { code: string; last_change: string | null; recent_changes: number }) => [l.code, [l.last_change, l.recent_changes]])),
    { cs: [edited.last_change, 2], de: [null, 0], en: [null, 0] },
  );
});

test('contentChangesSet: recent_changes is exact as the 6-hour window moves, and agrees with a recount', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const k = ctx.c.db.kysely;
  const translation = await k
    .selectFrom('translations')
    .innerJoin('languages', 'languages.id', 'translations.language_id')
    .selectAll('translations')
    .where('languages.code', '=', 'cs')
    .executeTakeFirstOrThrow();
  const root = 1;
  const base = Date.parse('2026-01-01T00:00:00.000Z');
  const at = (h: number) => new Date(base + h * 3600_000).toISOString();
  // content changes at these hours, one by one (2 = Translation changed); 59 (not content) never counts
  const steps: [number, number][] = [
    [0, 2],
    [1, 2],
    [5, 59],
    [5.5, 2],
    [6.5, 2],
    [7.25, 2],
    [20, 2],
    [20, 2],
    [3, 2], // an older change arriving late: counted when inside the window, never the last change
    [25.9, 2],
  ];
  for (const [h, action] of steps) {
    const set = await k.transaction().execute(async (trx) => {
      await trx
        .insertInto('translation_changes')
        .values({
          project_id: 1,
          component_id: translation.component_id,
          translation_id: translation.id,
          user_id: root,
          author_id: root,
          action,
          timestamp: at(h),
        })
        .execute();
      if (action !== 2) return null;
      const s = await contentChangesSet(trx, translation.id, { count: 1, at: at(h), authorId: root });
      await trx.updateTable('translations').set(s).where('id', '=', translation.id).execute();
      return s;
    });
    const kept = await k
      .selectFrom('translations')
      .select(['last_change', 'recent_changes', 'last_author_id'])
      .where('id', '=', translation.id)
      .executeTakeFirstOrThrow();
    await refreshTranslationStats(k, translation.id);
    const recount = await k
      .selectFrom('translations')
      .select(['last_change', 'recent_changes', 'last_author_id'])
      .where('id', '=', translation.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(kept, recount, `after the change at ${h} h (${JSON.stringify(set)})`);
  }
  const last = await k.selectFrom('translations').select(['last_change', 'recent_changes']).where('id', '=', translation.id).executeTakeFirstOrThrow();
  // window (19.9 h, 25.9 h]: the two at 20 h and the one at 25.9 h
  assert.deepEqual(last, { last_change: at(25.9), recent_changes: 3 });
});
