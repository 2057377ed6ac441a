// Translation API: the root, languages (list envelope, pagination links, one language, headers,
// visibility) and the bundled language data with plural types.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, ROOT_TOKEN } from '../../helpers/build-app.ts';
import { compilePlural, pluralFormulaError, pluralType } from '../../../src/domain/translation/languages/plural.ts';

const TOKEN = { authorization: `Token ${ROOT_TOKEN}` };
const HOST = { host: 'weblate.test' };

test('GET /api/: the lists, absolute from the request, format kept', async (t) => {
  const { app } = await buildTestApp(t);
  const res = await app.inject({ method: 'GET', url: '/api/', headers: HOST });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.equal(res.headers.allow, 'GET, HEAD, OPTIONS');
  assert.equal(res.headers.vary, 'Accept');
  assert.deepEqual(Object.keys(res.json()), ['projects', 'components', 'translations', 'languages', 'changes', 'units', 'suggestions']);
  assert.equal(res.json().languages, 'http://weblate.test/api/languages/');
  const api = await app.inject({ method: 'GET', url: '/api/?format=json', headers: HOST });
  assert.equal(api.json().projects, 'http://weblate.test/api/projects/?format=json');
});

test('languages: the bundled data, the envelope and its links, one language; Token and Bearer auth', async (t) => {
  const { app } = await buildTestApp(t);
  const first = await app.inject({ method: 'GET', url: '/api/languages/?page_size=2', headers: { ...HOST, ...TOKEN } });
  assert.equal(first.statusCode, 200);
  assert.equal(first.headers.allow, 'GET, POST, HEAD, OPTIONS');
  const body = first.json();
  assert.equal(body.count, 799);
  assert.equal(body.previous, null);
  assert.equal(body.next, 'http://weblate.test/api/languages/?page=2&page_size=2');
  assert.deepEqual(
    body.results.map((l: any) => l.code),
    ['aa', 'ab'],
  );
  const second = (await app.inject({ method: 'GET', url: body.next.replace('http://weblate.test', ''), headers: { ...HOST, ...TOKEN } })).json();
  assert.equal(second.previous, 'http://weblate.test/api/languages/?page_size=2');
  assert.equal(second.next, 'http://weblate.test/api/languages/?page=3&page_size=2');
  const last = (await app.inject({ method: 'GET', url: '/api/languages/?page=last&page_size=500&format=json', headers: { ...HOST, ...TOKEN } })).json();
  assert.equal(last.next, null);
  assert.equal(last.previous, 'http://weblate.test/api/languages/?format=json&page_size=500');
  assert.equal(last.results.length, 299);
  for (const bad of ['0', '-1', 'x', '400']) {
    const res = await app.inject({ method: 'GET', url: `/api/languages/?page=${bad}`, headers: TOKEN });
    assert.equal(res.statusCode, 404, bad);
    assert.deepEqual(res.json(), { detail: 'Invalid page.' });
  }
  const defaults = (await app.inject({ method: 'GET', url: '/api/languages/?page_size=abc', headers: TOKEN })).json();
  assert.equal(defaults.results.length, 50);
  const capped = (await app.inject({ method: 'GET', url: '/api/languages/?page_size=5000', headers: TOKEN })).json();
  assert.equal(capped.results.length, 799);

  const cs = await app.inject({ method: 'GET', url: '/api/languages/cs/', headers: { ...HOST, authorization: `Bearer ${ROOT_TOKEN}` } });
  assert.equal(cs.statusCode, 200);
  assert.equal(cs.headers.allow, 'GET, PUT, PATCH, DELETE, HEAD, OPTIONS');
  const l = cs.json();
  assert.deepEqual(l, {
    id: l.id,
    code: 'cs',
    name: 'Czech',
    plural: { id: l.plural.id, source: 0, number: 3, formula: '(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2', type: 22 },
    aliases: l.aliases,
    direction: 'ltr',
    population: l.population,
    web_url: 'http://hearth.test/languages/cs/',
    url: 'http://weblate.test/api/languages/cs/',
    statistics_url: 'http://weblate.test/api/languages/cs/statistics/',
  });
  assert.ok(l.aliases.includes('cs_cz') || l.aliases.length >= 0);
  assert.ok(l.population > 1_000_000);
  const he = (await app.inject({ method: 'GET', url: '/api/languages/he/', headers: TOKEN })).json();
  assert.equal(he.direction, 'rtl');
  const missing = await app.inject({ method: 'GET', url: '/api/languages/xx-nope/', headers: TOKEN });
  assert.equal(missing.statusCode, 404);
  assert.deepEqual(missing.json(), { detail: 'Not found.' });
  assert.equal(missing.headers.allow, 'GET, PUT, PATCH, DELETE, HEAD, OPTIONS');
});

test('languages without a translation are seen by administrators only (have_translation)', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const anon = await app.inject({ method: 'GET', url: '/api/languages/' });
  assert.equal(anon.statusCode, 200);
  assert.deepEqual(anon.json(), { count: 0, next: null, previous: null, results: [] });
  const { token } = await seed.token(await seed.user());
  const user = await app.inject({ method: 'GET', url: '/api/languages/cs/', headers: { authorization: `Token ${token}` } });
  assert.equal(user.statusCode, 404);
  const bad = await app.inject({ method: 'GET', url: '/api/languages/', headers: { authorization: 'Token nope' } });
  assert.equal(bad.statusCode, 401);
});

test('plural formulas: evaluation, Weblate validation messages, types', () => {
  const ru = compilePlural('(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2)');
  assert.deepEqual([1, 2, 5, 11, 21, 22, 25].map(ru), [0, 1, 2, 2, 0, 1, 2]);
  assert.equal(compilePlural('n != 1;')(1), 0);
  assert.equal(pluralFormulaError('n != 1', 2), null);
  assert.equal(pluralFormulaError('2', 2), 'Plural formula result 2 for count 0 is outside the allowed range 0..1.');
  assert.equal(pluralFormulaError('n/0', 2), 'Could not evaluate plural formula for count 0: integer division by zero');
  assert.match(String(pluralFormulaError('n +', 2)), /^Could not evaluate plural formula: /);
  assert.match(String(pluralFormulaError('process.exit()', 2)), /^Could not evaluate plural formula: /);
  const types: [string, number, string, number][] = [
    ['0', 1, 'ja', 0],
    ['n != 1', 2, 'de', 1],
    ['n > 1', 2, 'fr', 1],
    ['(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2', 3, 'cs', 22],
    ['n==0 ? 0 : n==1 ? 1 : n==2 ? 2 : n%100>=3 && n%100<=10 ? 3 : n%100>=11 ? 4 : 5', 6, 'ar', 3],
    ['n==1 ? 0 : n==2 ? 1 : 2', 3, 'x', 4],
    ['(n==2) ? 1 : 0', 2, 'x', 9],
    ['n==0 ? 0 : n==1 ? 1 : 2', 3, 'x', 11],
    ['n==1 ? 0 : n==2 ? 1 : (n>2 && n<7) ? 2 :(n>6 && n<11) ? 3 : 4', 5, 'ga', 10],
    ['n%2', 3, 'x', 666],
  ];
  for (const [f, n, code, type] of types) assert.equal(pluralType(f, n, code), type, f);
});

test('language writes: create, update, delete by an administrator, with DRF field errors; 401 and 403 otherwise', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const json = { ...HOST, ...TOKEN, 'content-type': 'application/json' };
  const created = await app.inject({
    method: 'POST',
    url: '/api/languages/',
    headers: json,
    payload: { code: 'new_lang', name: 'New Language', direction: 'rtl', population: 100, plural: { number: 2, formula: 'n != 1' } },
  });
  assert.equal(created.statusCode, 201, created.body);
  assert.equal(created.headers.location, 'http://weblate.test/api/languages/new_lang/');
  const l = created.json();
  assert.deepEqual(l, {
    id: l.id,
    code: 'new_lang',
    name: 'New Language',
    plural: { id: l.plural.id, source: 0, number: 2, formula: 'n != 1', type: 1 },
    aliases: [],
    direction: 'rtl',
    population: 100,
    web_url: 'http://hearth.test/languages/new_lang/',
    url: 'http://weblate.test/api/languages/new_lang/',
    statistics_url: 'http://weblate.test/api/languages/new_lang/statistics/',
  });
  const count = async () =>
    Number(
      (
        await c.db.kysely
          .selectFrom('languages')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const before = await count();

  const bad: [Record<string, unknown>, unknown][] = [
    [{ code: 'new lang', name: 'X', plural: { number: 2, formula: 'n != 1' } }, { code: ['Enter a valid language code.'] }],
    [{ code: 'new/lang', name: 'X', plural: { number: 2, formula: 'n != 1' } }, { code: ['Enter a valid language code.'] }],
    [{ code: '@variant', name: 'X', plural: { number: 2, formula: 'n != 1' } }, { code: ['Enter a valid language code.'] }],
    [{ code: 'new@', name: 'X', plural: { number: 2, formula: 'n != 1' } }, { code: ['Enter a valid language code.'] }],
    [{ code: 'okcode' }, { name: ['This field is required.'] }],
    [{ code: 'okcode', name: 'X' }, ['No valid plural data was provided.']],
    [{ code: 'new_lang', name: 'X', plural: { number: 2, formula: 'n != 1' } }, ['Language with this Language code already exists.']],
    [{ code: 'okcode', name: 'X', direction: 'up', plural: { number: 2, formula: 'n != 1' } }, { direction: ['"up" is not a valid choice.'] }],
    [
      { code: 'okcode', name: 'X', plural: { number: 2, formula: '2' } },
      { plural: { formula: ['Plural formula result 2 for count 0 is outside the allowed range 0..1.'] } },
    ],
    [
      { code: 'okcode', name: 'X', plural: { number: 2, formula: 'n/0' } },
      { plural: { formula: ['Could not evaluate plural formula for count 0: integer division by zero'] } },
    ],
    [{ code: 'okcode', name: 'X', plural: { number: 11, formula: 'n != 1' } }, { plural: { number: ['Ensure this value is less than or equal to 10.'] } }],
    [{ code: 'okcode', name: 'X', plural: { number: 0, formula: '0' } }, { plural: { number: ['Ensure this value is greater than or equal to 1.'] } }],
  ];
  for (const [payload, expected] of bad) {
    const res = await app.inject({ method: 'POST', url: '/api/languages/', headers: json, payload });
    assert.equal(res.statusCode, 400, JSON.stringify(payload));
    assert.deepEqual(res.json(), expected, JSON.stringify(payload));
  }
  assert.equal(await count(), before);

  const patched = await app.inject({
    method: 'PATCH',
    url: '/api/languages/new_lang/',
    headers: { ...TOKEN, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'name=Renamed',
  });
  assert.equal(patched.statusCode, 200);
  assert.equal(patched.json().name, 'Renamed');
  const put = await app.inject({
    method: 'PUT',
    url: '/api/languages/new_lang/',
    headers: json,
    payload: { code: 'new_lang', name: 'Put', plural: { number: 3, formula: '(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2' } },
  });
  assert.equal(put.statusCode, 200);
  assert.deepEqual([put.json().name, put.json().plural.number, put.json().plural.type], ['Put', 3, 22]);
  const putMissing = await app.inject({ method: 'PUT', url: '/api/languages/new_lang/', headers: json, payload: { name: 'Only' } });
  assert.equal(putMissing.statusCode, 400);
  assert.deepEqual(putMissing.json(), { code: ['This field is required.'] });

  const anon = await app.inject({ method: 'POST', url: '/api/languages/', headers: { 'content-type': 'application/json' }, payload: { code: 'zz' } });
  assert.equal(anon.statusCode, 401);
  assert.equal(anon.headers['www-authenticate'], 'Token');
  assert.deepEqual(anon.json(), { detail: 'Authentication credentials were not provided.' });
  const anonDelete = await app.inject({ method: 'DELETE', url: '/api/languages/new_lang/' });
  assert.equal(anonDelete.statusCode, 401);
  const { token } = await seed.token(await seed.user());
  const user = await app.inject({
    method: 'POST',
    url: '/api/languages/',
    headers: { authorization: `Token ${token}`, 'content-type': 'application/json' },
    payload: { code: 'zz', name: 'Z', plural: { number: 1, formula: '0' } },
  });
  assert.equal(user.statusCode, 403);
  assert.deepEqual(user.json(), { detail: 'Can not manage languages' });

  const del = await app.inject({ method: 'DELETE', url: '/api/languages/new_lang/', headers: TOKEN });
  assert.equal(del.statusCode, 204);
  assert.equal((await app.inject({ method: 'GET', url: '/api/languages/new_lang/', headers: TOKEN })).statusCode, 404);
  assert.equal(await count(), before - 1);
  const method = await app.inject({ method: 'POST', url: '/api/languages/cs/', headers: TOKEN });
  assert.equal(method.statusCode, 405);
  assert.deepEqual(method.json(), { detail: 'Method "POST" not allowed.' });
});
