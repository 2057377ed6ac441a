// lock/ of components and projects (reference §1.4): anyone who sees the object reads it; changing it
// checks the permission (component.lock, project.edit) before the body; a DRF BooleanField; change
// records 14/15 for each component whose state changes; a locked component refuses repository-free
// edits elsewhere (the unit routes) while its repository operations go on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import { AS_ROOT, HOST, createComponent, getJson, poComponent, repoWith } from '../../helpers/translation.ts';

const LOCK = '/api/components/hello/po/lock/';
const PLOCK = '/api/projects/hello/lock/';

async function post(ctx: TestApp, url: string, payload: unknown, headers: Record<string, string> = AS_ROOT) {
  return ctx.app.inject({ method: 'POST', url, headers, payload: payload as object });
}

async function lockChanges(ctx: TestApp) {
  return ctx.c.db.kysely
    .selectFrom('translation_changes')
    .select(['action', 'component_id', 'user_id'])
    .where('action', 'in', [14, 15])
    .orderBy('id')
    .execute();
}

async function tokenOf(ctx: TestApp, username: string) {
  const user = await ctx.seed.user({ username });
  const { headers } = await ctx.seed.token(user);
  return { user, headers: { ...HOST, authorization: `Token ${headers['private-token']}` } };
}

test('component lock: GET for anyone who sees it; POST checks component.lock before the body, accepts DRF booleans, records 14/15 on change only', async (t) => {
  const ctx = await buildTestApp(t);
  const { fixture } = await poComponent(t, ctx);
  assert.deepEqual(await getJson(ctx, LOCK, HOST), { locked: false });
  const res = await ctx.app.inject({ method: 'GET', url: LOCK, headers: HOST });
  assert.equal(res.headers.allow, 'GET, POST, HEAD, OPTIONS');

  // anonymous: 401 whatever the body; a user without the right: 403 before the body is looked at
  for (const payload of [{ lock: true }, {}, { lock: 'maybe' }]) {
    const anon = await post(ctx, LOCK, payload, HOST);
    assert.equal(anon.statusCode, 401);
    assert.equal(anon.headers['www-authenticate'], 'Token');
  }
  const stranger = await tokenOf(ctx, 'stranger');
  for (const payload of [{ lock: true }, {}]) {
    const denied = await post(ctx, LOCK, payload, stranger.headers);
    assert.equal(denied.statusCode, 403);
    assert.deepEqual(denied.json(), { detail: 'You do not have permission to perform this action.' });
  }
  // a Developer of the forge project translates but does not lock; a Maintainer does
  const component = await ctx.c.db.kysely.selectFrom('components').selectAll().where('slug', '=', 'po').executeTakeFirstOrThrow();
  const source = await ctx.c.db.kysely.selectFrom('projects').selectAll().where('id', '=', component.platform_project_id!).executeTakeFirstOrThrow();
  const dev = await tokenOf(ctx, 'dev');
  await ctx.seed.member({ project: source }, dev.user, 30);
  assert.equal((await post(ctx, LOCK, { lock: true }, dev.headers)).statusCode, 403);
  const maintainer = await tokenOf(ctx, 'maintainer');
  await ctx.seed.member({ project: source }, maintainer.user, 40);

  // validation: required, and a boolean
  const empty = await post(ctx, LOCK, {}, maintainer.headers);
  assert.equal(empty.statusCode, 400);
  assert.deepEqual(empty.json(), { lock: ['This field is required.'] });
  const bad = await post(ctx, LOCK, { lock: 'maybe' }, maintainer.headers);
  assert.equal(bad.statusCode, 400);
  assert.deepEqual(bad.json(), { lock: ['Must be a valid boolean.'] });
  assert.deepEqual(await lockChanges(ctx), []);

  for (const [value, expected] of [
    [true, true],
    ['true', true],
    [1, true],
    ['off', false],
    [false, false],
    ['yes', true],
  ] as const) {
    const r = await post(ctx, LOCK, { lock: value }, maintainer.headers);
    assert.equal(r.statusCode, 200, r.body);
    assert.deepEqual(r.json(), { locked: expected }, String(value));
    assert.deepEqual(await getJson(ctx, LOCK, HOST), { locked: expected });
  }
  assert.deepEqual(
    (await lockChanges(ctx)).map((c) => [c.action, c.user_id]),
    [
      [14, maintainer.user.id],
      [15, maintainer.user.id],
      [14, maintainer.user.id],
    ],
  );
  // the change log names them (4.x labels)
  const changes = (await getJson(ctx, '/api/components/hello/po/changes/?action=14&action=15')).results;
  assert.deepEqual(changes.map((c: any) => c.action_name).sort(), ['Component locked', 'Component locked', 'Component unlocked']);
  // form bodies too
  const form = await ctx.app.inject({
    method: 'POST',
    url: LOCK,
    headers: { ...AS_ROOT, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'lock=false',
  });
  assert.deepEqual(form.json(), { locked: false });
  // an unknown component: 404 before anything
  assert.equal((await post(ctx, '/api/components/hello/nope/lock/', { lock: true })).statusCode, 404);
  void fixture;
});

test('project lock: project.edit before the body; every component locked and unlocked with a record each; locked = every component locked', async (t) => {
  const ctx = await buildTestApp(t);
  const { fixture } = await poComponent(t, ctx);
  const other = await repoWith(t, ctx, { 'locale/cs.po': 'msgid ""\nmsgstr ""\n"Language: cs\\n"\n\nmsgid "A"\nmsgstr "B"\n' });
  await createComponent(ctx, 'hello', { name: 'Second', slug: 'second', repo: other.repo, filemask: 'locale/*.po' });
  assert.deepEqual(await getJson(ctx, PLOCK, HOST), { locked: false });
  const stranger = await tokenOf(ctx, 'stranger');
  assert.equal((await post(ctx, PLOCK, {}, stranger.headers)).statusCode, 403);
  assert.equal((await post(ctx, PLOCK, { lock: true }, HOST)).statusCode, 401);
  const empty = await post(ctx, PLOCK, {});
  assert.equal(empty.statusCode, 400);
  assert.deepEqual(empty.json(), { lock: ['This field is required.'] });

  // one component locked already: the project is not locked until all are
  assert.deepEqual((await post(ctx, LOCK, { lock: true })).json(), { locked: true });
  assert.deepEqual(await getJson(ctx, PLOCK, HOST), { locked: false });
  const locked = await post(ctx, PLOCK, { lock: true });
  assert.equal(locked.statusCode, 200, locked.body);
  assert.deepEqual(locked.json(), { locked: true });
  assert.deepEqual(await getJson(ctx, PLOCK, HOST), { locked: true });
  assert.deepEqual(await getJson(ctx, '/api/components/hello/second/lock/', HOST), { locked: true });
  const ids = await ctx.c.db.kysely.selectFrom('components').select(['id', 'slug']).orderBy('id').execute();
  assert.deepEqual(
    (await lockChanges(ctx)).map((c) => [c.action, c.component_id]),
    [
      [14, ids[0].id],
      [14, ids[1].id],
    ],
  );
  const row = await ctx.c.db.kysely.selectFrom('translation_projects').select('locked').where('slug', '=', 'hello').executeTakeFirstOrThrow();
  assert.equal(row.locked, 1);
  // unlocking unlocks them all
  assert.deepEqual((await post(ctx, PLOCK, { lock: false })).json(), { locked: false });
  assert.deepEqual(await getJson(ctx, LOCK, HOST), { locked: false });
  assert.deepEqual(
    (await lockChanges(ctx)).slice(2).map((c) => [c.action, c.component_id]),
    [
      [15, ids[0].id],
      [15, ids[1].id],
    ],
  );
  assert.equal((await post(ctx, '/api/projects/nope/lock/', { lock: true })).statusCode, 404);
  void fixture;
});

test('a locked component refuses unit edits but its repository operations go on', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  assert.deepEqual((await post(ctx, LOCK, { lock: true })).json(), { locked: true });
  const unit = (await getJson(ctx, '/api/translations/hello/po/cs/units/?q=source:Apple')).results[0];
  const patch = await ctx.app.inject({ method: 'PATCH', url: `/api/units/${unit.id}/`, headers: AS_ROOT, payload: { target: ['Jablko'], state: 20 } });
  assert.equal(patch.statusCode, 403, patch.body);
  assert.deepEqual(patch.json(), { detail: 'This translation is currently locked.' });
  assert.equal((await getJson(ctx, `/api/units/${unit.id}/`)).target, '');
  const commit = await post(ctx, '/api/components/hello/po/repository/', { operation: 'commit' });
  assert.deepEqual(commit.json(), { result: true });
});
