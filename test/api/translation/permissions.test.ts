// Who may do what on the translation API: a component on a project of this server follows the forge
// (Developer translates, Maintainer manages, archived or invisible gives nothing), other components
// the translation project's members (translate / review / manage, kept through /api/projects/:slug/members/),
// signed-in users may suggest on a public project, locks and reviews gate edits as Weblate does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApp } from '../../helpers/build-app.ts';
import { buildTestApp } from '../../helpers/build-app.ts';
import { API, AS_ROOT, HOST, getJson, poComponent } from '../../helpers/translation.ts';
import type { TranslationPerm } from '../../../src/domain/translation/permissions.ts';
import { userActor } from '../../../src/domain/access/actor.ts';

const ALL: TranslationPerm[] = [
  'unit.edit',
  'unit.review',
  'unit.add',
  'unit.delete',
  'suggestion.add',
  'comment.add',
  'upload.perform',
  'upload.overwrite',
  'translation.add',
  'translation.delete',
  'component.edit',
  'component.lock',
  'project.edit',
  'vcs.view',
  'vcs.commit',
  'vcs.push',
  'vcs.update',
  'vcs.reset',
];
const TRANSLATE = ['unit.edit', 'unit.add', 'suggestion.add', 'comment.add', 'upload.perform', 'translation.add', 'vcs.view', 'vcs.commit'];

async function user(ctx: TestApp, username: string) {
  const u = await ctx.seed.user({ username });
  const tok = await ctx.seed.token(u);
  return { user: u, headers: { ...HOST, authorization: `Token ${tok.token}` } };
}
async function scope(ctx: TestApp) {
  const k = ctx.c.db.kysely;
  const project = await k.selectFrom('translation_projects').selectAll().where('slug', '=', 'hello').executeTakeFirstOrThrow();
  const component = await k.selectFrom('components').selectAll().where('project_id', '=', project.id).executeTakeFirstOrThrow();
  return { project, component };
}
async function allowed(ctx: TestApp, u: Awaited<ReturnType<typeof user>>['user'] | null) {
  const actor = u ? userActor((await ctx.c.users.byId(u.id))!) : userActor((await ctx.c.users.byId(1))!, { user: null, kind: 'anonymous', isAdmin: false });
  const out: string[] = [];
  for (const p of ALL) if (await ctx.c.translation.writes.permissions.can(actor, p, await scope(ctx))) out.push(p);
  return out;
}
async function unitId(ctx: TestApp, source: string) {
  const units = (await getJson(ctx, '/api/translations/hello/po/cs/units/')).results as any[];
  return units.find((u) => u.source === source).id as number;
}
const patch = (ctx: TestApp, id: number, headers: Record<string, string>, payload: unknown) =>
  ctx.app.inject({ method: 'PATCH', url: `/api/units/${id}/`, headers, payload: payload as any });

test('a component on a project of this server follows the forge: Developer translates, Maintainer manages', async (t) => {
  const ctx = await buildTestApp(t);
  const { fixture } = await poComponent(t, ctx);
  const { component } = await scope(ctx);
  assert.ok(component.platform_project_id);
  const forge = await ctx.c.db.kysely.selectFrom('projects').selectAll().where('id', '=', component.platform_project_id!).executeTakeFirstOrThrow();
  const reporter = await user(ctx, 'reporter');
  const dev = await user(ctx, 'dev');
  const maint = await user(ctx, 'maint');
  await ctx.seed.member({ project: forge }, reporter.user, 20);
  await ctx.seed.member({ project: forge }, dev.user, 30);
  await ctx.seed.member({ project: forge }, maint.user, 40);

  assert.deepEqual(await allowed(ctx, reporter.user), ['suggestion.add', 'comment.add']);
  assert.deepEqual(await allowed(ctx, dev.user), TRANSLATE);
  // reviews are off: nobody approves; everything else for a Maintainer
  assert.deepEqual(
    await allowed(ctx, maint.user),
    ALL.filter((p) => p !== 'unit.review'),
  );
  assert.deepEqual(await allowed(ctx, null), []);

  const apple = await unitId(ctx, 'Apple');
  let res = await patch(ctx, apple, reporter.headers, { target: ['Jablko'], state: 20 });
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { detail: 'Insufficient privileges for saving translations.' });
  res = await patch(ctx, apple, dev.headers, { target: ['Jablko'], state: 20 });
  assert.equal(res.statusCode, 200, res.body);
  const row = await ctx.c.db.kysely.selectFrom('units').selectAll().where('id', '=', apple).executeTakeFirstOrThrow();
  assert.equal(row.pending_author_id, dev.user.id);
  assert.equal(row.pending_author, `${dev.user.name} <${dev.user.email}>`);

  // reviews on: a Developer may not approve, a Maintainer may; an approved string is the reviewers'
  await ctx.c.db.kysely.updateTable('translation_projects').set({ translation_review: 1 }).execute();
  res = await patch(ctx, apple, dev.headers, { target: ['Jablko'], state: 30 });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { state: ['Insufficient privileges for saving translations.'] });
  res = await patch(ctx, apple, maint.headers, { target: ['Jablko'], state: 30 });
  assert.equal(res.statusCode, 200, res.body);
  res = await patch(ctx, apple, dev.headers, { target: ['Jablíčko'], state: 20 });
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), {
    detail: 'Only reviewers can change approved strings, please add a suggestion if you think the string should be changed.',
  });
  assert.ok((await allowed(ctx, maint.user)).includes('unit.review'));
  // removing strings is the Maintainer's
  res = await ctx.app.inject({ method: 'DELETE', url: `/api/units/${await unitId(ctx, 'Orange')}/`, headers: dev.headers });
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { detail: 'Insufficient privileges for saving translations.' });

  // a locked component refuses edits to everyone, administrators included; suggestions stay open
  await ctx.c.db.kysely.updateTable('components').set({ locked: 1 }).execute();
  res = await patch(ctx, apple, AS_ROOT, { target: ['Jablko'], state: 20 });
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { detail: 'This translation is currently locked.' });
  const { project, component: locked } = await scope(ctx);
  const rootActor = userActor((await ctx.c.users.byId(1))!);
  assert.equal(
    await ctx.c.translation.writes.permissions.check(rootActor, 'unit.edit', { project, component: locked }),
    'This translation is currently locked.',
  );
  assert.equal(await ctx.c.translation.writes.permissions.can(rootActor, 'suggestion.add', { project, component: locked }), true);
  assert.equal(await ctx.c.translation.writes.permissions.can(rootActor, 'vcs.push', { project, component: locked }), true);
  await ctx.c.db.kysely.updateTable('components').set({ locked: 0 }).execute();

  // an archived forge project: read-only for its members
  await ctx.c.db.kysely.updateTable('projects').set({ archived: 1 }).where('id', '=', forge.id).execute();
  assert.deepEqual(await allowed(ctx, maint.user), ['suggestion.add', 'comment.add']);
  await ctx.c.db.kysely.updateTable('projects').set({ archived: 0 }).where('id', '=', forge.id).execute();

  // a private forge project: its Developer still translates; an outsider gets what any signed-in user gets
  await ctx.c.db.kysely.updateTable('projects').set({ visibility: 'private' }).where('id', '=', forge.id).execute();
  const outsider = await user(ctx, 'outsider');
  assert.deepEqual(await allowed(ctx, dev.user), TRANSLATE);
  assert.deepEqual(await allowed(ctx, outsider.user), ['suggestion.add', 'comment.add']);
  // a protected translation project: no suggestions from outsiders
  await ctx.c.db.kysely.updateTable('translation_projects').set({ access_control: 1 }).execute();
  assert.deepEqual(await allowed(ctx, outsider.user), []);
  assert.ok(fixture.repo);
});

test('other components: the translation project members, kept by administrators through /api/projects/:slug/members/', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  await ctx.c.db.kysely.updateTable('components').set({ platform_project_id: null }).execute();
  const alice = await user(ctx, 'alice');
  const bob = await user(ctx, 'bob');
  const carol = await user(ctx, 'carol');
  const url = '/api/projects/hello/members/';

  // nobody but administrators (and managers) sees or changes members
  let res = await ctx.app.inject({ method: 'GET', url, headers: HOST });
  assert.equal(res.statusCode, 401);
  assert.equal(res.headers['www-authenticate'], 'Token');
  res = await ctx.app.inject({ method: 'GET', url, headers: alice.headers });
  assert.deepEqual([res.statusCode, res.json()], [403, { detail: 'Can not manage project members' }]);
  res = await ctx.app.inject({ method: 'POST', url, headers: alice.headers, payload: { username: 'alice', role: 'manage' } });
  assert.deepEqual([res.statusCode, res.json()], [403, { detail: 'Can not manage project members' }]);
  res = await ctx.app.inject({ method: 'GET', url: '/api/projects/nope/members/', headers: AS_ROOT });
  assert.equal(res.statusCode, 404);

  // bad inputs
  for (const [payload, body] of [
    [{}, { username: ['This field is required.'], role: ['This field is required.'] }],
    [{ username: 'nobody', role: 'translate' }, { username: ['Object with username=nobody does not exist.'] }],
    [{ username: 'alice', role: 'owner' }, { role: ['"owner" is not a valid choice.'] }],
  ] as const) {
    res = await ctx.app.inject({ method: 'POST', url, headers: AS_ROOT, payload: payload as any });
    assert.deepEqual([res.statusCode, res.json()], [400, body]);
  }
  assert.deepEqual(await ctx.c.db.kysely.selectFrom('translation_project_members').selectAll().execute(), []);

  // without membership: suggestions only (public project)
  assert.deepEqual(await allowed(ctx, alice.user), ['suggestion.add', 'comment.add']);

  res = await ctx.app.inject({ method: 'POST', url, headers: AS_ROOT, payload: { username: 'alice', role: 'translate' } });
  assert.equal(res.statusCode, 201, res.body);
  const created = res.json();
  assert.deepEqual(created, { username: 'alice', role: 'translate', user: `${API}/users/alice/`, created_at: created.created_at });
  res = await ctx.app.inject({ method: 'POST', url, headers: AS_ROOT, payload: { username: 'bob', role: 'review' } });
  assert.equal(res.statusCode, 201, res.body);
  res = await ctx.app.inject({ method: 'POST', url, headers: AS_ROOT, payload: { username: 'carol', role: 'translate' } });
  assert.equal(res.statusCode, 201);
  // posting again changes the role
  res = await ctx.app.inject({ method: 'POST', url, headers: AS_ROOT, payload: { username: 'carol', role: 'manage' } });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.json().role, 'manage');

  assert.deepEqual(await allowed(ctx, alice.user), TRANSLATE);
  assert.deepEqual(await allowed(ctx, bob.user), [
    ...TRANSLATE.slice(0, 1),
    'unit.add',
    'suggestion.add',
    'comment.add',
    'upload.perform',
    'upload.overwrite',
    'translation.add',
    'vcs.view',
    'vcs.commit',
  ]);
  assert.deepEqual(
    await allowed(ctx, carol.user),
    ALL.filter((p) => p !== 'unit.review'),
  );

  // a manager lists the members
  res = await ctx.app.inject({ method: 'GET', url, headers: carol.headers });
  assert.equal(res.statusCode, 200, res.body);
  const list = res.json();
  assert.deepEqual(
    { ...list, results: list.results.map((m: any) => [m.username, m.role]) },
    {
      count: 3,
      next: null,
      previous: null,
      results: [
        ['alice', 'translate'],
        ['bob', 'review'],
        ['carol', 'manage'],
      ],
    },
  );

  // translating and reviewing as members
  await ctx.c.db.kysely.updateTable('translation_projects').set({ translation_review: 1 }).execute();
  const apple = await unitId(ctx, 'Apple');
  res = await patch(ctx, apple, alice.headers, { target: ['Jablko'], state: 20 });
  assert.equal(res.statusCode, 200, res.body);
  res = await patch(ctx, apple, alice.headers, { target: ['Jablko'], state: 30 });
  assert.deepEqual([res.statusCode, res.json()], [400, { state: ['Insufficient privileges for saving translations.'] }]);
  res = await patch(ctx, apple, bob.headers, { target: ['Jablko'], state: 30 });
  assert.equal(res.statusCode, 200, res.body);
  const changes = await ctx.c.db.kysely.selectFrom('translation_changes').select(['action', 'user_id']).where('unit_id', '=', apple).orderBy('id').execute();
  assert.deepEqual(
    changes.map((c) => [c.action, c.user_id]),
    [
      [45, alice.user.id],
      [5, alice.user.id],
      [45, bob.user.id],
      [36, bob.user.id],
    ],
  );

  // removing a member
  res = await ctx.app.inject({ method: 'DELETE', url: `${url}alice/`, headers: AS_ROOT });
  assert.equal(res.statusCode, 204);
  res = await ctx.app.inject({ method: 'DELETE', url: `${url}alice/`, headers: AS_ROOT });
  assert.deepEqual([res.statusCode, res.json()], [404, { detail: 'Not found.' }]);
  res = await ctx.app.inject({ method: 'DELETE', url: `${url}bob/`, headers: alice.headers });
  assert.equal(res.statusCode, 403);
  res = await patch(ctx, apple, alice.headers, { target: ['Jablíčko'], state: 20 });
  assert.deepEqual([res.statusCode, res.json()], [403, { detail: 'Insufficient privileges for saving translations.' }]);
  assert.deepEqual(await allowed(ctx, alice.user), ['suggestion.add', 'comment.add']);

  // the project's members go with the project
  res = await ctx.app.inject({ method: 'DELETE', url: '/api/projects/hello/', headers: AS_ROOT });
  assert.equal(res.statusCode, 204, res.body);
  assert.deepEqual(await ctx.c.db.kysely.selectFrom('translation_project_members').selectAll().execute(), []);
});
