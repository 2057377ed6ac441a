// Unit writes through the translation API: PATCH/PUT /api/units/:id/ (Weblate's order of checks, every
// rule and its message, change records, pending with the author, statistics by delta equal to a
// recount), POST …/units/ (bilingual PO, monolingual JSON) and DELETE /api/units/:id/ (the entry gone
// from the files by a commit, rows gone), with the state afterwards checked in the database and in git.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApp } from '../../helpers/build-app.ts';
import { buildTestApp } from '../../helpers/build-app.ts';
import { API, AS_ROOT, CS_PO, DE_PO, HOST, getJson, jsonComponent, poComponent } from '../../helpers/translation.ts';
import { COUNTERS, refreshTranslationStats } from '../../../src/domain/translation/stats/stats.ts';

const RS = '\x1e';

async function unitsOf(ctx: TestApp, path: string) {
  return (await getJson(ctx, `/api/translations/${path}/units/?page_size=1000`)).results as any[];
}
async function unitBySource(ctx: TestApp, path: string, source: string) {
  const u = (await unitsOf(ctx, path)).find((x) => x.source === source || (Array.isArray(x.source) && x.source[0] === source));
  assert.ok(u, `no unit ${source} in ${path}`);
  return u;
}
const row = (ctx: TestApp, id: number) => ctx.c.db.kysely.selectFrom('units').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const changesOf = (ctx: TestApp, unitId: number) =>
  ctx.c.db.kysely.selectFrom('translation_changes').selectAll().where('unit_id', '=', unitId).orderBy('id').execute();
const patch = (ctx: TestApp, id: number, payload: unknown, headers: Record<string, string> = AS_ROOT, method: 'PATCH' | 'PUT' = 'PATCH') =>
  ctx.app.inject({ method, url: `/api/units/${id}/`, headers, payload: payload as any });

/** The translation's counters as kept by the edits, then as a full recount gives them: they must agree. */
async function assertStatsExact(ctx: TestApp, translationId: number) {
  const k = ctx.c.db.kysely;
  const kept = await k.selectFrom('translations').selectAll().where('id', '=', translationId).executeTakeFirstOrThrow();
  await refreshTranslationStats(k, translationId);
  const fresh = await k.selectFrom('translations').selectAll().where('id', '=', translationId).executeTakeFirstOrThrow();
  for (const c of COUNTERS) if (c !== 'recent_changes') assert.equal(Number(kept[c]), Number(fresh[c]), `counter ${c}`);
  assert.equal(kept.last_change, fresh.last_change);
  assert.equal(kept.last_author_id, fresh.last_author_id);
}

async function fileAtHead(ctx: TestApp, componentId: number, path: string): Promise<string | null> {
  const comp = await ctx.c.db.kysely.selectFrom('components').selectAll().where('id', '=', componentId).executeTakeFirstOrThrow();
  const o = await ctx.c.translation.vcs.mirror(comp.id).read(`${comp.head}:${path}`);
  return o?.type === 'blob' && o.content ? o.content.toString('utf8') : null;
}

test('PATCH a unit: new translation, change, fuzzy, approve with reviews; pending with its author; statistics by delta', async (t) => {
  const ctx = await buildTestApp(t);
  const { component } = await poComponent(t, ctx);
  const apple = await unitBySource(ctx, 'hello/po/cs', 'Apple');
  const before = await row(ctx, apple.id);
  assert.equal(before.pending, 0);
  const tr0 = await ctx.c.db.kysely.selectFrom('translations').selectAll().where('id', '=', before.translation_id).executeTakeFirstOrThrow();

  // the Allow header of the unit instance lists what works now
  const got = await ctx.app.inject({ method: 'GET', url: `/api/units/${apple.id}/`, headers: AS_ROOT });
  assert.equal(got.headers.allow, 'GET, PUT, PATCH, DELETE, HEAD, OPTIONS');

  let res = await patch(ctx, apple.id, { target: ['Jablko'], state: 20 });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers.allow, 'GET, PUT, PATCH, DELETE, HEAD, OPTIONS');
  assert.deepEqual(res.json(), { target: ['Jablko'], state: 20, explanation: '', extra_flags: '', labels: [] });
  const r = await row(ctx, apple.id);
  assert.equal(r.target, 'Jablko');
  assert.equal(r.state, 20);
  assert.equal(r.pending, 1);
  const root = await ctx.c.db.kysely.selectFrom('users').selectAll().where('username', '=', 'root').executeTakeFirstOrThrow();
  assert.equal(r.pending_author, `${root.name} <${root.commit_email || root.email}>`);
  assert.equal(r.pending_author_id, root.id);
  let ch = await changesOf(ctx, apple.id);
  assert.deepEqual(
    ch.map((c) => [c.action, c.target, c.old, c.user_id, c.author_id, JSON.parse(c.details)]),
    [
      [45, '', '', root.id, root.id, {}],
      [5, 'Jablko', '', root.id, root.id, { state: 20, old_state: 0, source: 'Apple' }],
    ],
  );
  const tr1 = await ctx.c.db.kysely.selectFrom('translations').selectAll().where('id', '=', before.translation_id).executeTakeFirstOrThrow();
  assert.equal(tr1.translated, tr0.translated + 1);
  assert.equal(tr1.translated_words, tr0.translated_words + 1);
  assert.equal(tr1.translated_chars, tr0.translated_chars + 5);
  assert.equal(tr1.last_author_id, root.id);
  assert.equal(tr1.last_change, ch[1].timestamp);
  assert.equal(tr1.recent_changes, 1);
  await assertStatsExact(ctx, before.translation_id);

  // the unit reads as it is now, pending
  const unit = await getJson(ctx, `/api/units/${apple.id}/`);
  assert.equal(unit.pending, true);
  assert.equal(unit.translated, true);

  // the same again: nothing changes, no change record
  res = await patch(ctx, apple.id, { target: 'Jablko', state: '20' });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal((await changesOf(ctx, apple.id)).length, 2);

  // a changed translation (2), then needs editing (37)
  res = await patch(ctx, apple.id, { target: ['Jablíčko'], state: 20 });
  assert.equal(res.statusCode, 200, res.body);
  res = await patch(ctx, apple.id, { target: ['Jablíčko'], state: 10 });
  assert.equal(res.statusCode, 200, res.body);
  ch = await changesOf(ctx, apple.id);
  assert.deepEqual(
    ch.slice(2).map((c) => [c.action, c.target, c.old]),
    [
      [2, 'Jablíčko', 'Jablko'],
      [37, 'Jablíčko', 'Jablíčko'],
    ],
  );
  await assertStatsExact(ctx, before.translation_id);

  // approving: refused while reviews are off, then allowed to an administrator once they are on
  res = await patch(ctx, apple.id, { target: ['Jablíčko'], state: 30 });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { state: ['Translation reviews are not enabled.'] });
  assert.equal((await row(ctx, apple.id)).state, 10);
  res = await ctx.app.inject({ method: 'PATCH', url: '/api/projects/hello/', headers: AS_ROOT, payload: { translation_review: true } });
  assert.equal(res.statusCode, 200, res.body);
  const p = await ctx.c.db.kysely.selectFrom('translation_projects').selectAll().where('slug', '=', 'hello').executeTakeFirstOrThrow();
  assert.equal(p.translation_review, 1);
  res = await patch(ctx, apple.id, { target: ['Jablíčko'], state: 30 });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json(), { target: ['Jablíčko'], state: 30, explanation: '', extra_flags: '', labels: [] });
  ch = await changesOf(ctx, apple.id);
  assert.deepEqual([ch.at(-1)!.action, ch.at(-1)!.target], [36, 'Jablíčko']);
  await assertStatsExact(ctx, before.translation_id);

  // a plural string: a U+001E-joined target with the language's three forms
  const plural = await unitBySource(ctx, 'hello/po/cs', `%d file${RS}%d files`);
  res = await patch(ctx, plural.id, { target: `%d s${RS}%d sy${RS}%d sů`, state: 20 }, AS_ROOT, 'PUT');
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json().target, ['%d s', '%d sy', '%d sů']);
  assert.equal((await row(ctx, plural.id)).target, `%d s${RS}%d sy${RS}%d sů`);
  // clearing a translation (state 0 with blank forms)
  res = await patch(ctx, plural.id, { target: ['', '', ''], state: 0 });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal((await row(ctx, plural.id)).state, 0);
  await assertStatsExact(ctx, before.translation_id);
  assert.equal(component.slug, 'po');
});

test("PATCH a unit: bad inputs answer Weblate's errors and leave the unit as it was", async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const apple = await unitBySource(ctx, 'hello/po/cs', 'Apple');
  const plural = await unitBySource(ctx, 'hello/po/cs', `%d file${RS}%d files`);
  const source = await unitBySource(ctx, 'hello/po/en', 'Apple');
  const original = await row(ctx, apple.id);
  const cases: [number, unknown, number, unknown, ('PATCH' | 'PUT')?][] = [
    [
      apple.id,
      { target: ['x'] },
      400,
      { state: ['Please provide both state and target for a partial update'], target: ['Please provide both state and target for a partial update'] },
    ],
    [
      apple.id,
      { state: 20 },
      400,
      { state: ['Please provide both state and target for a partial update'], target: ['Please provide both state and target for a partial update'] },
    ],
    [apple.id, { target: ['x'], state: 100 }, 400, { state: ['Invalid state'] }],
    [apple.id, { target: ['x'], state: 5 }, 400, { state: ['"5" is not a valid choice.'] }],
    [apple.id, { target: ['x'], state: 'abc' }, 400, { state: ['"abc" is not a valid choice.'] }],
    [apple.id, { target: ['x'], state: 12 }, 400, { state: ['This state cannot be set manually.'] }],
    [apple.id, { target: ['x'], state: 0 }, 400, { state: ['Can not use empty state with non empty target'] }],
    [apple.id, { target: [''], state: 20 }, 400, { target: { 0: ['This field may not be blank.'] } }],
    [apple.id, { target: 5, state: 20 }, 400, { target: ['Expected a list of items but got type "int".'] }],
    [apple.id, { target: ['a', 'b'], state: 20 }, 400, { target: ['Number of plurals does not match'] }],
    [plural.id, { target: ['a', 'b'], state: 20 }, 400, { target: ['Number of plurals does not match'] }],
    [apple.id, { state: 20 }, 400, { target: ['This field is required.'] }, 'PUT'],
    [apple.id, { target: ['x'], state: 20, explanation: 'why' }, 403, { detail: 'Source strings properties can be set only on source strings' }],
    [source.id, { target: ['x'], state: 20 }, 403, { detail: 'The string is read-only.' }],
    [999999, { target: ['x'], state: 20 }, 404, { detail: 'Not found.' }],
    [apple.id, { target: ['x'], state: 20, labels: [3] }, 400, { labels: ['Invalid pk "3" - object does not exist.'] }],
  ];
  for (const [id, payload, status, body, method] of cases) {
    const res = await patch(ctx, id, payload, AS_ROOT, method ?? 'PATCH');
    assert.equal(res.statusCode, status, `${JSON.stringify(payload)}: ${res.body}`);
    assert.deepEqual(res.json(), body, JSON.stringify(payload));
  }
  // anonymous: 401 before anything else, even for a unit that does not exist; a bad token: Invalid token.
  for (const id of [apple.id, 999999]) {
    const res = await patch(ctx, id, { target: ['x'], state: 20 }, HOST);
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers['www-authenticate'], 'Token');
    assert.deepEqual(res.json(), { detail: 'Authentication credentials were not provided.' });
    const del = await ctx.app.inject({ method: 'DELETE', url: `/api/units/${id}/`, headers: HOST });
    assert.equal(del.statusCode, 401);
  }
  let res = await patch(ctx, apple.id, { target: ['x'], state: 20 }, { ...HOST, authorization: 'Token nope-nope' });
  assert.equal(res.statusCode, 401);
  assert.deepEqual(res.json(), { detail: 'Invalid token.' });
  // malformed JSON
  res = await ctx.app.inject({
    method: 'PATCH',
    url: `/api/units/${apple.id}/`,
    headers: { ...AS_ROOT, 'content-type': 'application/json' },
    payload: '{"target":',
  });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(await row(ctx, apple.id), original);
  assert.equal((await changesOf(ctx, apple.id)).length, 0);
});

test('editing a locked component is refused, unit unchanged', async (t) => {
  const ctx = await buildTestApp(t);
  const { component } = await poComponent(t, ctx);
  const apple = await unitBySource(ctx, 'hello/po/cs', 'Apple');
  await ctx.c.db.kysely.updateTable('components').set({ locked: 1 }).where('id', '=', component.id).execute();
  const res = await patch(ctx, apple.id, { target: ['x'], state: 20 });
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { detail: 'This translation is currently locked.' });
  assert.equal((await row(ctx, apple.id)).target, '');
});

test('POST …/units/ on a bilingual PO component: the entry is committed into the file, the unit answered', async (t) => {
  const ctx = await buildTestApp(t);
  const { component } = await poComponent(t, ctx);
  const headBefore = (await ctx.c.db.kysely.selectFrom('components').select('head').where('id', '=', component.id).executeTakeFirstOrThrow()).head;
  let res = await ctx.app.inject({
    method: 'POST',
    url: '/api/translations/hello/po/cs/units/',
    headers: AS_ROOT,
    payload: { context: 'fruit', source: ['Pear'], target: ['Hruška'], state: 20 },
  });
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json();
  assert.equal(body.source, 'Pear');
  assert.equal(body.target, 'Hruška');
  assert.equal(body.context, 'fruit');
  assert.equal(body.state, 20);
  assert.equal(body.translation, `${API}/translations/hello/po/cs/`);
  const cs = await fileAtHead(ctx, component.id, 'po/cs.po');
  assert.equal(cs, `${CS_PO}\nmsgctxt "fruit"\nmsgid "Pear"\nmsgstr "Hruška"\n`);
  assert.equal(await fileAtHead(ctx, component.id, 'po/de.po'), DE_PO);
  const headAfter = (await ctx.c.db.kysely.selectFrom('components').select('head').where('id', '=', component.id).executeTakeFirstOrThrow()).head;
  assert.notEqual(headAfter, headBefore);
  const stored = await row(ctx, body.id);
  assert.equal(stored.pending, 0);
  const tr = await getJson(ctx, '/api/translations/hello/po/cs/');
  assert.equal(tr.total, 5);
  const ch = await changesOf(ctx, body.id);
  assert.deepEqual(ch.at(-1)!.action, 31);

  // bad inputs, nothing written
  const cases: [unknown, unknown][] = [
    [{ context: 'fruit', source: ['Pear'], target: ['Hruška'], state: 20 }, { non_field_errors: ['This string seems to already exist.'] }],
    [{ target: ['x'], state: 20 }, { source: ['This field is required.'] }],
    [{ source: ['Plum'], target: ['Švestka'], state: 0 }, { non_field_errors: ['Empty state is supported for blank strings only.'] }],
    [{ source: ['Plum'], target: [''], state: 20 }, { target: { 0: ['This field may not be blank.'] } }],
    [{ source: ['Plum'], state: 20 }, { target: ['This field is required.'] }],
    [{ source: ['Pl\x07um'], target: ['x'], state: 20 }, { non_field_errors: ['String contains control character: \\u0007'] }],
    [{ source: ['Plum'], target: ['x'], state: 100 }, { state: ['"100" is not a valid choice.'] }],
    [{ source: ['Plum'], target: ['x'], state: 30 }, { non_field_errors: ['Approved state is not available as reviews are not enabled.'] }],
  ];
  for (const [payload, expected] of cases) {
    res = await ctx.app.inject({ method: 'POST', url: '/api/translations/hello/po/cs/units/', headers: AS_ROOT, payload: payload as any });
    assert.equal(res.statusCode, 400, `${JSON.stringify(payload)}: ${res.body}`);
    assert.deepEqual(res.json(), expected, JSON.stringify(payload));
  }
  assert.equal(await fileAtHead(ctx, component.id, 'po/cs.po'), cs);
  res = await ctx.app.inject({ method: 'POST', url: '/api/translations/hello/po/cs/units/', headers: HOST, payload: { source: ['x'] } });
  assert.equal(res.statusCode, 401);
  res = await ctx.app.inject({ method: 'POST', url: '/api/translations/hello/po/xx/units/', headers: AS_ROOT, payload: { source: ['x'] } });
  assert.equal(res.statusCode, 404);
});

test('DELETE a unit of a bilingual component: pending edits committed first, the entry removed from every file', async (t) => {
  const ctx = await buildTestApp(t);
  const { component } = await poComponent(t, ctx);
  const apple = await unitBySource(ctx, 'hello/po/cs', 'Apple');
  let res = await patch(ctx, apple.id, { target: ['Jablko'], state: 20 });
  assert.equal(res.statusCode, 200, res.body);
  const orange = await unitBySource(ctx, 'hello/po/cs', 'Orange');
  res = await ctx.app.inject({ method: 'DELETE', url: `/api/units/${orange.id}/`, headers: AS_ROOT });
  assert.equal(res.statusCode, 204, res.body);
  assert.equal(res.body, '');
  const cs = (await fileAtHead(ctx, component.id, 'po/cs.po'))!;
  const de = (await fileAtHead(ctx, component.id, 'po/de.po'))!;
  assert.ok(!cs.includes('Orange') && !de.includes('Orange'));
  assert.ok(cs.includes('msgid "Apple"\nmsgstr "Jablko"'), cs);
  assert.equal(de, DE_PO.replace('#. The fruit\nmsgid "Orange"\nmsgstr "Orange"\n\n', ''));
  const left = await ctx.c.db.kysely.selectFrom('units').select(['id', 'source', 'pending']).where('component_id', '=', component.id).execute();
  assert.ok(!left.some((u) => u.source === 'Orange'));
  assert.ok(left.every((u) => u.pending === 0));
  res = await ctx.app.inject({ method: 'DELETE', url: `/api/units/${orange.id}/`, headers: AS_ROOT });
  assert.equal(res.statusCode, 404);
});

test('a monolingual JSON component: strings added to and removed from the template', async (t) => {
  const ctx = await buildTestApp(t);
  const { component } = await jsonComponent(
    t,
    ctx,
    {
      'locales/en.json': '{\n  "hello": "Hello",\n  "bye": "Goodbye"\n}\n',
      'locales/cs.json': '{\n  "hello": "Ahoj",\n  "bye": "Nashledanou"\n}\n',
    },
    { edit_template: true },
  );
  let res = await ctx.app.inject({ method: 'POST', url: '/api/translations/hello/app/cs/units/', headers: AS_ROOT, payload: { key: 'k', value: ['v'] } });
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { detail: 'Add the string to the source language instead.' });
  res = await ctx.app.inject({
    method: 'POST',
    url: '/api/translations/hello/app/en/units/',
    headers: AS_ROOT,
    payload: { key: 'welcome', value: ['Welcome'] },
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.json().context, 'welcome');
  assert.equal(await fileAtHead(ctx, component.id, 'locales/en.json'), '{\n  "hello": "Hello",\n  "bye": "Goodbye",\n  "welcome": "Welcome"\n}\n');
  const csUnits = await unitsOf(ctx, 'hello/app/cs');
  assert.deepEqual(csUnits.map((u) => u.context).sort(), ['bye', 'hello', 'welcome']);
  res = await ctx.app.inject({ method: 'POST', url: '/api/translations/hello/app/en/units/', headers: AS_ROOT, payload: { value: ['x'] } });
  assert.deepEqual([res.statusCode, res.json()], [400, { key: ['This field is required.'] }]);

  // editing the template changes the source of every translation: translated strings need editing (30 Source string changed)
  const enHello = (await unitsOf(ctx, 'hello/app/en')).find((u) => u.context === 'hello');
  const csHelloBefore = csUnits.find((u) => u.context === 'hello');
  res = await ctx.app.inject({ method: 'PATCH', url: `/api/units/${enHello.id}/`, headers: AS_ROOT, payload: { target: ['Hello there'], state: 20 } });
  assert.equal(res.statusCode, 200, res.body);
  const enRow = await row(ctx, enHello.id);
  assert.deepEqual([enRow.source, enRow.target, enRow.pending, enRow.num_words], ['Hello there', 'Hello there', 1, 2]);
  const csHello = await row(ctx, csHelloBefore.id);
  assert.deepEqual(
    [csHello.source, csHello.target, csHello.state, csHello.previous_source, csHello.pending, csHello.num_words],
    ['Hello there', 'Ahoj', 10, 'Hello', 0, 2],
  );
  const csCh = await changesOf(ctx, csHello.id);
  assert.deepEqual(
    csCh.map((c) => [c.action, c.target, c.old]),
    [[30, 'Hello there', 'Hello']],
  );
  await assertStatsExact(ctx, csHello.translation_id);
  await assertStatsExact(ctx, enRow.translation_id);
  // a translator's edit of a translation of it is no template edit
  const csHelloPatch = await ctx.app.inject({
    method: 'PATCH',
    url: `/api/units/${csHello.id}/`,
    headers: AS_ROOT,
    payload: { target: ['Ahoj tam'], state: 20 },
  });
  assert.equal(csHelloPatch.statusCode, 200, csHelloPatch.body);
  assert.equal((await row(ctx, enHello.id)).source, 'Hello there');
  // the template must be committed before strings are removed (the delete commits pending edits first)

  const csBye = csUnits.find((u) => u.context === 'bye');
  res = await ctx.app.inject({ method: 'DELETE', url: `/api/units/${csBye.id}/`, headers: AS_ROOT });
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { detail: 'Add the string to the source language instead.' });
  const enBye = (await unitsOf(ctx, 'hello/app/en')).find((u) => u.context === 'bye');
  res = await ctx.app.inject({ method: 'DELETE', url: `/api/units/${enBye.id}/`, headers: AS_ROOT });
  assert.equal(res.statusCode, 204, res.body);
  assert.equal(await fileAtHead(ctx, component.id, 'locales/en.json'), '{\n  "hello": "Hello there",\n  "welcome": "Welcome"\n}\n');
  assert.equal(await fileAtHead(ctx, component.id, 'locales/cs.json'), '{\n  "hello": "Ahoj tam"\n}\n');
  assert.deepEqual(
    (await ctx.c.db.kysely.selectFrom('units').select(['pending']).where('component_id', '=', component.id).execute()).map((u) => u.pending),
    [0, 0, 0, 0],
  );
  assert.deepEqual((await unitsOf(ctx, 'hello/app/cs')).map((u) => u.context).sort(), ['hello', 'welcome']);
});

test('apply over many units at once (an upload): every row written, one change each, statistics by delta', async (t) => {
  const ctx = await buildTestApp(t);
  let po =
    'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n"Language: cs\\n"\n"Plural-Forms: nplurals=3; plural=(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2;\\n"\n\n';
  for (let i = 0; i < 1200; i++) po += `msgid "String number ${i} here"\nmsgstr "${i % 3 === 0 ? `Řetězec ${i}` : ''}"\n\n`;
  await poComponent(t, ctx, { 'po/cs.po': po });
  const k = ctx.c.db.kysely;
  const tr = await k.selectFrom('translations').selectAll().where('language_code', '=', 'cs').executeTakeFirstOrThrow();
  const units = await k.selectFrom('units').selectAll().where('translation_id', '=', tr.id).orderBy('position').execute();
  assert.equal(units.length, 1200);
  const { userActor } = await import('../../../src/domain/access/actor.ts');
  const actor = userActor((await ctx.c.users.byId(1))!);
  const edits = units.map((u, i) => ({ unit: u, target: [i % 2 ? `Nový ${i}` : u.target], state: (i % 2 ? 10 : u.state) as 0 | 10 | 20 }));
  const author = { userId: null, name: 'Uploader', email: 'up@example.com' };
  const out = await ctx.c.translation.writes.edits.apply(actor, tr, edits, { action: 9, author });
  assert.equal(out.length, 1200);
  const after = await k.selectFrom('units').selectAll().where('translation_id', '=', tr.id).orderBy('position').execute();
  for (let i = 0; i < 1200; i++) {
    if (i % 2)
      assert.deepEqual([after[i].target, after[i].state, after[i].pending, after[i].pending_author], [`Nový ${i}`, 10, 1, 'Uploader <up@example.com>']);
    else assert.deepEqual(after[i], units[i]);
  }
  const changes = await k
    .selectFrom('translation_changes')
    .select(['action', 'author_id'])
    .where('translation_id', '=', tr.id)
    .where('action', '=', 9)
    .execute();
  assert.equal(changes.length, 600);
  await assertStatsExact(ctx, tr.id);
});

test('a unit pending by another author is committed under their name before the next edit', async (t) => {
  const ctx = await buildTestApp(t);
  const { component } = await poComponent(t, ctx);
  const other = await ctx.seed.user({ username: 'translator2', name: 'Second Translator', is_admin: true });
  const tok = await ctx.seed.token(other);
  const apple = await unitBySource(ctx, 'hello/po/cs', 'Apple');
  const head0 = (await ctx.c.db.kysely.selectFrom('components').select('head').where('id', '=', component.id).executeTakeFirstOrThrow()).head;
  let res = await patch(ctx, apple.id, { target: ['Jablko'], state: 20 });
  assert.equal(res.statusCode, 200, res.body);
  // the same author again: still pending, no commit
  res = await patch(ctx, apple.id, { target: ['Jablko!'], state: 20 });
  assert.equal(res.statusCode, 200, res.body);
  const head1 = (await ctx.c.db.kysely.selectFrom('components').select('head').where('id', '=', component.id).executeTakeFirstOrThrow()).head;
  assert.equal(head1, head0);
  res = await patch(ctx, apple.id, { target: ['Jablíčko'], state: 20 }, { ...HOST, authorization: `Token ${tok.token}` });
  assert.equal(res.statusCode, 200, res.body);
  const head2 = (await ctx.c.db.kysely.selectFrom('components').select('head').where('id', '=', component.id).executeTakeFirstOrThrow()).head;
  assert.notEqual(head2, head0);
  const commit = await ctx.c.translation.vcs.mirror(component.id).read(head2);
  const root = await ctx.c.db.kysely.selectFrom('users').selectAll().where('username', '=', 'root').executeTakeFirstOrThrow();
  assert.match(commit!.content!.toString('utf8'), new RegExp(`\nauthor ${root.name} <${root.commit_email || root.email}> `));
  assert.ok((await fileAtHead(ctx, component.id, 'po/cs.po'))!.includes('msgid "Apple"\nmsgstr "Jablko!"'));
  const r = await row(ctx, apple.id);
  assert.deepEqual([r.target, r.pending, r.pending_author_id], ['Jablíčko', 1, other.id]);
});
