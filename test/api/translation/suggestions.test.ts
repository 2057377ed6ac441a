// Suggestions and comments: POST/GET on a unit, has_suggestion/has_comment and the translation's
// counters kept by delta, change records (4 Suggestion added, 3 Comment added, 7 Suggestion accepted,
// 26 Suggestion removed), the `q` terms over them, accept and delete, permissions and bad inputs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import { API, AS_ROOT, HOST, getJson, poComponent } from '../../helpers/translation.ts';
import { ANONYMOUS, type Actor } from '../../../src/domain/access/actor.ts';

const UNITS = '/api/translations/hello/po/cs/units/';

async function signedIn(ctx: TestApp, attrs: Record<string, string> = {}) {
  const user = await ctx.seed.user(attrs);
  const { token } = await ctx.seed.token(user);
  return { user, headers: { ...HOST, authorization: `Token ${token}` } };
}

async function unitBySource(ctx: TestApp, source: string, url = UNITS) {
  const page = await getJson(ctx, url);
  const unit = page.results.find((u: { source: string }) => u.source === source);
  assert.ok(unit, `no unit ${source}`);
  return unit;
}

async function translationRow(ctx: TestApp, code: string) {
  return ctx.c.db.kysely
    .selectFrom('translations')
    .innerJoin('languages', 'languages.id', 'translations.language_id')
    .selectAll('translations')
    .where('languages.code', '=', code)
    .executeTakeFirstOrThrow();
}

async function changesOf(ctx: TestApp, unitId: number) {
  return ctx.c.db.kysely
    .selectFrom('translation_changes')
    .select(['action', 'target', 'user_id', 'author_id', 'unit_id'])
    .where('unit_id', '=', unitId)
    .where('action', 'in', [3, 4, 7, 26])
    .orderBy('id')
    .execute();
}

const post = (ctx: TestApp, url: string, headers: Record<string, string>, payload?: unknown) =>
  ctx.app.inject({ method: 'POST', url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });

test('POST /api/units/:id/suggestions/: 201 with the suggestion, has_suggestion and the counter, change 4, the list, duplicates refused', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const { user, headers } = await signedIn(ctx, { username: 'sugg' });
  const apple = await unitBySource(ctx, 'Apple');
  assert.equal(apple.has_suggestion, false);

  const res = await post(ctx, `/api/units/${apple.id}/suggestions/`, headers, { target: ['Jablko'] });
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(res.headers.allow, 'GET, POST, HEAD, OPTIONS');
  const body = res.json();
  assert.match(body.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$/);
  assert.deepEqual(body, {
    id: body.id,
    unit: `${API}/units/${apple.id}/`,
    target: 'Jablko',
    user: `${API}/users/sugg/`,
    timestamp: body.timestamp,
    url: `${API}/suggestions/${body.id}/`,
  });

  const unit = await getJson(ctx, `/api/units/${apple.id}/`);
  assert.equal(unit.has_suggestion, true);
  assert.equal(unit.target, '', 'a suggestion does not translate');
  assert.equal(unit.state, 0);
  assert.equal((await translationRow(ctx, 'cs')).suggestions, 1);
  assert.equal((await getJson(ctx, '/api/translations/hello/po/cs/')).have_suggestion, 1);
  assert.equal((await getJson(ctx, '/api/translations/hello/po/cs/statistics/')).suggestions, 1);
  assert.deepEqual(await changesOf(ctx, apple.id), [{ action: 4, target: 'Jablko', user_id: user.id, author_id: user.id, unit_id: apple.id }]);
  const changes = await getJson(ctx, '/api/translations/hello/po/cs/changes/?action=4');
  assert.equal(changes.count, 1);
  assert.equal(changes.results[0].action_name, 'Suggestion added');
  assert.equal(changes.results[0].user, `${API}/users/sugg/`);

  // the same text again: not a second suggestion; a string as the target works as the array does
  const again = await post(ctx, `/api/units/${apple.id}/suggestions/`, headers, { target: 'Jablko' });
  assert.equal(again.statusCode, 400);
  assert.deepEqual(again.json(), { target: ['This translation is already suggested or is the current translation.'] });
  // another text on the same unit: one more suggestion, the counter still counts units
  const other = await post(ctx, `/api/units/${apple.id}/suggestions/`, AS_ROOT, { target: 'Jabko' });
  assert.equal(other.statusCode, 201);
  assert.equal(other.json().user, `${API}/users/root/`);
  assert.equal((await translationRow(ctx, 'cs')).suggestions, 1);

  const list = await ctx.app.inject({ method: 'GET', url: `/api/units/${apple.id}/suggestions/`, headers: HOST });
  assert.equal(list.statusCode, 200);
  assert.deepEqual(list.json(), [body, other.json()]);

  // the current translation as a suggestion: refused too
  const hello = await unitBySource(ctx, 'Hello, world!');
  const same = await post(ctx, `/api/units/${hello.id}/suggestions/`, headers, { target: ['Ahoj, světe!'] });
  assert.equal(same.statusCode, 400);
  assert.equal(await ctx.c.db.kysely.selectFrom('suggestions').select('id').where('unit_id', '=', hello.id).executeTakeFirst(), undefined);
  // form bodies: repeated fields are the plural forms
  const plural = await unitBySource(ctx, '%d file\u001e%d files');
  const form = await ctx.app.inject({
    method: 'POST',
    url: `/api/units/${plural.id}/suggestions/`,
    headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'target=a&target=b&target=c',
  });
  assert.equal(form.statusCode, 201, form.body);
  assert.equal(form.json().target, 'a\u001eb\u001ec');
  assert.equal((await translationRow(ctx, 'cs')).suggestions, 2);

  // every suggestion the caller may see: oldest first, LargePagination
  const all = await ctx.app.inject({ method: 'GET', url: '/api/suggestions/', headers: HOST });
  assert.equal(all.statusCode, 200);
  assert.equal(all.headers.allow, 'GET, HEAD, OPTIONS');
  assert.deepEqual(all.json(), { count: 3, next: null, previous: null, results: [body, other.json(), form.json()] });
  const paged = await getJson(ctx, '/api/suggestions/?page_size=2', HOST);
  assert.equal(paged.next, `${API}/suggestions/?page=2&page_size=2`);
  assert.deepEqual(paged.results, [body, other.json()]);
  await ctx.app.inject({ method: 'PATCH', url: '/api/projects/hello/', headers: AS_ROOT, payload: { access_control: 100 } });
  assert.deepEqual(await getJson(ctx, '/api/suggestions/', headers), { count: 0, next: null, previous: null, results: [] });
  assert.equal((await getJson(ctx, '/api/suggestions/')).count, 3);
  assert.equal((await ctx.app.inject({ method: 'GET', url: `/api/suggestions/${body.id}/`, headers })).statusCode, 404);
  assert.equal((await ctx.app.inject({ method: 'GET', url: `/api/units/${apple.id}/suggestions/`, headers })).statusCode, 404);
});

test('suggestions: bad inputs and permissions (401 first, 404, 400 field errors, 403 read-only, private project)', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const { headers } = await signedIn(ctx);
  const apple = await unitBySource(ctx, 'Apple');
  const url = `/api/units/${apple.id}/suggestions/`;

  const anon = await post(ctx, url, HOST, { target: ['x'] });
  assert.equal(anon.statusCode, 401);
  assert.equal(anon.headers['www-authenticate'], 'Token');
  assert.deepEqual(anon.json(), { detail: 'Authentication credentials were not provided.' });
  // authentication comes before the lookup: an anonymous POST to no unit is a 401 too
  assert.equal((await post(ctx, '/api/units/999999/suggestions/', HOST, { target: ['x'] })).statusCode, 401);
  const bad = await post(ctx, url, { ...HOST, authorization: 'Token nope' }, { target: ['x'] });
  assert.equal(bad.statusCode, 401);
  assert.equal(bad.headers['www-authenticate'], 'Token');
  assert.deepEqual(bad.json(), { detail: 'Invalid token.' });
  const missing = await post(ctx, '/api/units/999999/suggestions/', headers, { target: ['x'] });
  assert.equal(missing.statusCode, 404);
  assert.deepEqual(missing.json(), { detail: 'Not found.' });
  assert.equal((await post(ctx, '/api/units/abc/suggestions/', headers, { target: ['x'] })).statusCode, 404);

  const cases: [unknown, Record<string, string[]>][] = [
    [{}, { target: ['This field is required.'] }],
    [{ target: null }, { target: ['This field is required.'] }],
    [{ target: 5 }, { target: ['Expected a list of items but got type "number".'] }],
    [{ target: { a: 1 } }, { target: ['Expected a list of items but got type "dict".'] }],
    [{ target: [] }, { target: ['This list may not be empty.'] }],
    [{ target: [1] }, { target: ['Not a valid string.'] }],
    [{ target: [''] }, { target: ['This field may not be blank.'] }],
    [{ target: ['a', 'b'] }, { target: ['Number of plurals does not match'] }],
  ];
  for (const [payload, expected] of cases) {
    const res = await post(ctx, url, headers, payload);
    assert.equal(res.statusCode, 400, JSON.stringify(payload));
    assert.deepEqual(res.json(), expected, JSON.stringify(payload));
  }
  const plural = await unitBySource(ctx, '%d file\u001e%d files');
  const wrong = await post(ctx, `/api/units/${plural.id}/suggestions/`, headers, { target: ['a', 'b'] });
  assert.deepEqual(wrong.json(), { target: ['Number of plurals does not match'] });

  // the source strings of a bilingual component are read-only
  const source = await unitBySource(ctx, 'Apple', '/api/translations/hello/po/en/units/');
  const ro = await post(ctx, `/api/units/${source.id}/suggestions/`, headers, { target: ['x'] });
  assert.equal(ro.statusCode, 403);
  assert.deepEqual(ro.json(), { detail: 'The string is read only.' });

  // nothing was written
  assert.equal(await ctx.c.db.kysely.selectFrom('suggestions').select('id').executeTakeFirst(), undefined);
  assert.equal((await translationRow(ctx, 'cs')).suggestions, 0);

  // a private project: its units are not found
  await ctx.app.inject({ method: 'PATCH', url: '/api/projects/hello/', headers: AS_ROOT, payload: { access_control: 100 } });
  const hidden = await post(ctx, url, headers, { target: ['x'] });
  assert.equal(hidden.statusCode, 404);
});

test('accept and delete a suggestion: change 7 authored by the suggester, change 26, flags and counters back', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const { user, headers } = await signedIn(ctx, { username: 'giver' });
  const other = await signedIn(ctx, { username: 'other' });
  const apple = await unitBySource(ctx, 'Apple');
  const a = (await post(ctx, `/api/units/${apple.id}/suggestions/`, headers, { target: ['Jablko'] })).json();
  const b = (await post(ctx, `/api/units/${apple.id}/suggestions/`, headers, { target: ['Jabko'] })).json();

  const one = await ctx.app.inject({ method: 'GET', url: `/api/suggestions/${a.id}/`, headers: HOST });
  assert.equal(one.statusCode, 200);
  assert.equal(one.headers.allow, 'GET, DELETE, HEAD, OPTIONS');
  assert.deepEqual(one.json(), a);
  assert.equal((await ctx.app.inject({ method: 'GET', url: '/api/suggestions/999999/', headers: HOST })).statusCode, 404);

  // a signed-in user who may only suggest cannot accept, nor remove someone else's suggestion
  const denied = await post(ctx, `/api/suggestions/${a.id}/accept/`, other.headers);
  assert.equal(denied.statusCode, 403);
  assert.equal(typeof denied.json().detail, 'string');
  const del = await ctx.app.inject({ method: 'DELETE', url: `/api/suggestions/${a.id}/`, headers: other.headers });
  assert.equal(del.statusCode, 403);
  assert.deepEqual(del.json(), { detail: 'Can not delete suggestion' });
  assert.equal((await ctx.app.inject({ method: 'DELETE', url: `/api/suggestions/${a.id}/`, headers: HOST })).statusCode, 401);

  // a locked component refuses it, administrators included (Weblate's check_can_edit)
  await ctx.c.db.kysely.updateTable('components').set({ locked: 1 }).where('slug', '=', 'po').execute();
  const locked = await post(ctx, `/api/suggestions/${a.id}/accept/`, AS_ROOT);
  assert.equal(locked.statusCode, 403);
  assert.deepEqual(locked.json(), { detail: 'This translation is currently locked.' });
  assert.equal((await getJson(ctx, `/api/units/${apple.id}/`)).target, '');
  await ctx.c.db.kysely.updateTable('components').set({ locked: 0 }).where('slug', '=', 'po').execute();
  const opts = await ctx.app.inject({ method: 'OPTIONS', url: `/api/units/${apple.id}/suggestions/`, headers: HOST });
  assert.equal(opts.statusCode, 200);
  assert.equal(opts.headers.allow, 'GET, POST, HEAD, OPTIONS');

  // the administrator accepts: the unit is translated, pending, credited to the suggester
  const acc = await post(ctx, `/api/suggestions/${a.id}/accept/`, AS_ROOT);
  assert.equal(acc.statusCode, 200, acc.body);
  assert.equal(acc.json().id, apple.id);
  assert.equal(acc.json().target, 'Jablko');
  assert.equal(acc.json().state, 20);
  assert.equal(acc.json().pending, true);
  assert.equal(acc.json().has_suggestion, true, 'the other suggestion is still there');
  assert.equal((await ctx.app.inject({ method: 'GET', url: `/api/suggestions/${a.id}/`, headers: HOST })).statusCode, 404);
  const accepted = (await changesOf(ctx, apple.id)).filter((c) => c.action === 7);
  assert.equal(accepted.length, 1);
  assert.equal(accepted[0].author_id, user.id);
  assert.equal(accepted[0].target, 'Jablko');
  const cs = await translationRow(ctx, 'cs');
  assert.equal(cs.suggestions, 1);
  assert.equal(cs.translated, 3);

  // the author takes back the last one: 204, change 26, the flag and the counter go back
  const mine = await ctx.app.inject({ method: 'DELETE', url: `/api/suggestions/${b.id}/`, headers });
  assert.equal(mine.statusCode, 204);
  assert.equal(mine.body, '');
  assert.equal((await getJson(ctx, `/api/units/${apple.id}/`)).has_suggestion, false);
  assert.equal((await translationRow(ctx, 'cs')).suggestions, 0);
  const removed = (await changesOf(ctx, apple.id)).filter((c) => c.action === 26);
  assert.deepEqual(removed, [{ action: 26, target: 'Jabko', user_id: user.id, author_id: user.id, unit_id: apple.id }]);
  assert.equal((await ctx.app.inject({ method: 'DELETE', url: `/api/suggestions/${b.id}/`, headers })).statusCode, 404);
});

test('comments: global ones on the source string, translation ones on the unit; list, flags, counters, change 3, bad inputs', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const { user, headers } = await signedIn(ctx, { username: 'talker' });
  const apple = await unitBySource(ctx, 'Apple');
  const source = await unitBySource(ctx, 'Apple', '/api/translations/hello/po/en/units/');

  const global = await post(ctx, `/api/units/${apple.id}/comments/`, headers, { comment: 'Which apple?' });
  assert.equal(global.statusCode, 201, global.body);
  const g = global.json();
  assert.deepEqual(g, {
    id: g.id,
    unit: `${API}/units/${source.id}/`,
    comment: 'Which apple?',
    scope: 'global',
    resolved: false,
    user: `${API}/users/talker/`,
    timestamp: g.timestamp,
  });
  assert.equal((await getJson(ctx, `/api/units/${source.id}/`)).has_comment, true);
  assert.equal((await getJson(ctx, `/api/units/${apple.id}/`)).has_comment, false);
  assert.equal((await translationRow(ctx, 'en')).comments, 1);
  assert.equal((await translationRow(ctx, 'cs')).comments, 0);

  const local = await post(ctx, `/api/units/${apple.id}/comments/`, headers, { comment: 'Ovoce', scope: 'translation' });
  assert.equal(local.statusCode, 201);
  const l = local.json();
  assert.equal(l.unit, `${API}/units/${apple.id}/`);
  assert.equal(l.scope, 'translation');
  assert.equal((await getJson(ctx, `/api/units/${apple.id}/`)).has_comment, true);
  assert.equal((await translationRow(ctx, 'cs')).comments, 1);
  assert.equal((await getJson(ctx, '/api/translations/hello/po/cs/statistics/')).comments, 1);
  assert.deepEqual(await changesOf(ctx, apple.id), [{ action: 3, target: 'Ovoce', user_id: user.id, author_id: user.id, unit_id: apple.id }]);
  assert.deepEqual(await changesOf(ctx, source.id), [{ action: 3, target: 'Which apple?', user_id: user.id, author_id: user.id, unit_id: source.id }]);

  // the unit shows its own and its source string's comments; the source string shows every language's
  const list = await ctx.app.inject({ method: 'GET', url: `/api/units/${apple.id}/comments/`, headers: HOST });
  assert.equal(list.statusCode, 200);
  assert.equal(list.headers.allow, 'GET, POST, HEAD, OPTIONS');
  assert.deepEqual(list.json(), [g, l]);
  assert.deepEqual(await getJson(ctx, `/api/units/${source.id}/comments/`, HOST), [g, l]);
  const de = await unitBySource(ctx, 'Apple', '/api/translations/hello/po/de/units/');
  assert.deepEqual(await getJson(ctx, `/api/units/${de.id}/comments/`, HOST), [g]);

  // a timestamp is for those who manage the project
  const stamped = await post(ctx, `/api/units/${apple.id}/comments/`, headers, { comment: 'old', timestamp: '2020-01-02T03:04:05Z' });
  assert.equal(stamped.statusCode, 403);
  const byRoot = await post(ctx, `/api/units/${apple.id}/comments/`, AS_ROOT, { comment: 'old', scope: 'translation', timestamp: '2020-01-02T03:04:05Z' });
  assert.equal(byRoot.statusCode, 201);
  assert.equal(byRoot.json().timestamp, '2020-01-02T03:04:05Z');

  const cases: [unknown, Record<string, string[]>][] = [
    [{}, { comment: ['This field is required.'] }],
    [{ comment: '  ' }, { comment: ['This field may not be blank.'] }],
    [{ comment: 7 }, { comment: ['Not a valid string.'] }],
    [{ comment: 'x'.repeat(1001) }, { comment: ['Ensure this field has no more than 1000 characters.'] }],
    [{ comment: 'x', scope: 'report' }, { scope: ['"report" is not a valid choice.'] }],
    [{ comment: 'x', scope: 'everywhere' }, { scope: ['"everywhere" is not a valid choice.'] }],
    [
      { comment: 'x', timestamp: 'yesterday' },
      { timestamp: ['Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].'] },
    ],
  ];
  for (const [payload, expected] of cases) {
    const res = await post(ctx, `/api/units/${apple.id}/comments/`, headers, payload);
    assert.equal(res.statusCode, 400, JSON.stringify(payload));
    assert.deepEqual(res.json(), expected, JSON.stringify(payload));
  }
  const anon = await post(ctx, `/api/units/${apple.id}/comments/`, HOST, { comment: 'x' });
  assert.equal(anon.statusCode, 401);
  assert.equal(anon.headers['www-authenticate'], 'Token');
  assert.equal(
    await ctx.c.db.kysely
      .selectFrom('comments')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
      .then((r) => Number(r.n)),
    3,
  );
});

test('q terms: has:suggestion, has:comment, has:source-comment, suggestion:, comment:, source_comment:, suggestion_author:, comment_author:, source_comment_author:', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const { headers } = await signedIn(ctx, { username: 'Searcher' });
  const apple = await unitBySource(ctx, 'Apple');
  const orange = await unitBySource(ctx, 'Orange');
  assert.equal((await post(ctx, `/api/units/${apple.id}/suggestions/`, headers, { target: ['Jablíčko'] })).statusCode, 201);
  assert.equal((await post(ctx, `/api/units/${orange.id}/comments/`, AS_ROOT, { comment: 'Citrus 100%', scope: 'translation' })).statusCode, 201);

  const ids = async (q: string) => (await getJson(ctx, `${UNITS}?q=${encodeURIComponent(q)}`)).results.map((u: { id: number }) => u.id);
  assert.deepEqual(await ids('has:suggestion'), [apple.id]);
  assert.deepEqual(await ids('has:comment'), [orange.id]);
  assert.deepEqual(await ids('suggestion:jablíč'), [apple.id]);
  assert.deepEqual(await ids('suggestion:JABL'), [apple.id]);
  assert.deepEqual(await ids('suggestion:="Jablíčko"'), [apple.id]);
  assert.deepEqual(await ids('suggestion:=jablíčko'), []);
  assert.deepEqual(await ids('suggestion:r"^Jab"'), [apple.id]);
  assert.deepEqual(await ids('suggestion:Citrus'), []);
  assert.deepEqual(await ids('comment:citrus'), [orange.id]);
  assert.deepEqual(await ids('comment:"100%"'), [orange.id]);
  assert.deepEqual(await ids('comment:"10_%"'), []);
  assert.deepEqual(await ids('suggestion_author:searcher'), [apple.id]);
  assert.deepEqual(await ids('suggestion_author:=Searcher'), [apple.id]);
  assert.deepEqual(await ids('suggestion_author:root'), []);
  assert.deepEqual(await ids('comment_author:root'), [orange.id]);
  assert.deepEqual(await ids('comment_author:searcher'), []);
  assert.deepEqual(await ids('NOT has:suggestion AND NOT has:comment').then((r: number[]) => r.includes(apple.id) || r.includes(orange.id)), false);
  // a global comment lives on the source string: the translations find it with the source_ terms
  assert.equal((await post(ctx, `/api/units/${apple.id}/comments/`, headers, { comment: 'Red or green?' })).statusCode, 201);
  assert.deepEqual(await ids('has:comment'), [orange.id]);
  assert.deepEqual(await ids('has:source-comment'), [apple.id]);
  assert.deepEqual(await ids('source_comment:green'), [apple.id]);
  assert.deepEqual(await ids('source_comment:citrus'), []);
  assert.deepEqual(await ids('source_comment_author:searcher'), [apple.id]);
  assert.deepEqual(await ids('source_comment_author:root'), []);
  const de = (await getJson(ctx, `/api/translations/hello/po/de/units/?q=${encodeURIComponent('has:source-comment')}`)).results;
  assert.deepEqual(
    de.map((u: { source: string }) => u.source),
    ['Apple'],
  );
  const bad = await ctx.app.inject({ method: 'GET', url: `${UNITS}?q=${encodeURIComponent('suggestion_author:[a to b]')}`, headers: HOST });
  assert.equal(bad.statusCode, 400);
  assert.deepEqual(bad.json(), { q: 'Could not parse query string: Unsupported range for field: suggestion_author' });
  // a unit whose strings vanish takes its suggestions and comments with it
  await ctx.c.db.kysely.deleteFrom('units').where('id', '=', apple.id).execute();
  assert.equal(await ctx.c.db.kysely.selectFrom('suggestions').select('id').executeTakeFirst(), undefined);
});

test('addMany (the upload with method=suggest): batched, duplicates and current translations skipped, one change each, counters by delta', async (t) => {
  const ctx = await buildTestApp(t);
  const n = 600;
  let po =
    'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n"Language: cs\\n"\n"Plural-Forms: nplurals=3; plural=(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2;\\n"\n';
  for (let i = 0; i < n; i++) po += `\nmsgid "s${i}"\nmsgstr "${i === 0 ? 'hotovo' : ''}"\n`;
  await poComponent(t, ctx, { 'po/cs.po': po });
  const cs = await translationRow(ctx, 'cs');
  const units = await ctx.c.db.kysely.selectFrom('units').selectAll().where('translation_id', '=', cs.id).orderBy('position').execute();
  assert.equal(units.length, n);
  const root = await ctx.c.db.kysely.selectFrom('users').selectAll().where('username', '=', 'root').executeTakeFirstOrThrow();
  const actor: Actor = { ...ANONYMOUS, kind: 'user', user: root, isAdmin: true, credential: 'session' };
  const items = units.map((u, i) => ({ unit: u, target: [i === 0 ? 'hotovo' : `návrh ${i}`] }));
  items.push({ unit: units[1], target: ['návrh 1'] }); // the same again in the batch
  const author = { userId: null, name: 'Uploader', email: 'up@example.com' };
  const added = await ctx.c.translation.writes.suggestions.addMany(actor, items, { author });
  assert.equal(added.length, n - 1);
  assert.deepEqual(
    added.slice(0, 2).map((s) => [s.unit_id, s.target, s.user_id, s.author_name, s.author_email]),
    [
      [units[1].id, 'návrh 1', null, 'Uploader', 'up@example.com'],
      [units[2].id, 'návrh 2', null, 'Uploader', 'up@example.com'],
    ],
  );
  const after = await translationRow(ctx, 'cs');
  assert.equal(after.suggestions, n - 1);
  const changes = await ctx.c.db.kysely
    .selectFrom('translation_changes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('translation_id', '=', cs.id)
    .where('action', '=', 4)
    .where('user_id', '=', root.id)
    .where('author_id', 'is', null)
    .executeTakeFirstOrThrow();
  assert.equal(Number(changes.n), n - 1);
  // again: nothing new, nothing counted twice
  assert.deepEqual(await ctx.c.translation.writes.suggestions.addMany(actor, items, { author }), []);
  assert.equal((await translationRow(ctx, 'cs')).suggestions, n - 1);
  assert.equal((await getJson(ctx, `${UNITS}?q=has:suggestion&page_size=1`)).count, n - 1);
});
