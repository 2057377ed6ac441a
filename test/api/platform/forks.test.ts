// Forks: POST /projects/:id/fork (a project whose repository borrows its source's objects through git
// alternates), GET /projects/:id/forks, DELETE /projects/:id/fork, POST /projects/:id/fork/:forked_from_id,
// forked_from_project in project entities, and a source deleted under its forks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { TestContext } from 'node:test';
import type { ProjectRow, UserRow } from '../../../src/db/schema.ts';
import { bareGit, runGit, tmpDir, workTree } from '../../helpers/git.ts';
import { cloneUrl, startTestServer } from '../../helpers/server.ts';
import { buildTestApp, EXTERNAL_URL, type TestApp } from '../../helpers/build-app.ts';
import { expectedProject, groupNs, userNs } from '../../helpers/projects-expect.ts';

const json = (r: { body: string }) => JSON.parse(r.body);

/** alice's public project alice/src with main (2 commits), feature and a tag v1; bob, a stranger. */
async function setup(ctx: TestApp, visibility = 'public') {
  const { seed, c } = ctx;
  const alice = await seed.user({ username: 'alice', name: 'Alice' });
  const bob = await seed.user({ username: 'bob', name: 'Bob' });
  const { project: source, dir } = await seed.repoProject({ owner: alice, path: 'src', name: 'Src', visibility });
  await seed.member({ project: source }, alice, 50);
  await c.db.kysely.updateTable('projects').set({ description: 'the source' }).where('id', '=', source.id).execute();
  const t = { after: (_fn: () => unknown) => {} };
  const wt = workTree(t, dir);
  wt.write('README.md', '# src\n').commit('first');
  const main = wt.write('a.txt', 'a\n').commit('second');
  wt.tag('v1');
  wt.checkout('feature', true);
  const feature = wt.write('b.txt', 'b\n').commit('feature work');
  wt.push();
  fs.rmSync(wt.dir, { recursive: true, force: true });
  return {
    alice,
    bob,
    source: (await c.db.kysely.selectFrom('projects').selectAll().where('id', '=', source.id).executeTakeFirstOrThrow()) as ProjectRow,
    dir,
    main,
    feature,
    as: { alice: (await seed.token(alice)).headers, bob: (await seed.token(bob)).headers },
  };
}

async function row(ctx: TestApp, id: number): Promise<ProjectRow> {
  return ctx.c.db.kysely.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** BasicProjectDetails of the source as `viewer` sees it. */
function basicSource(source: ProjectRow, owner: UserRow, ns: Parameters<typeof userNs>[0], forks: number) {
  return { ...expectedProject(source, { namespace: userNs(ns, owner), namespaceFullName: owner.name, shape: 'basic' }), forks_count: forks };
}

function refsOf(dir: string): string {
  return bareGit(dir, ['for-each-ref', '--format=%(refname) %(objectname)']);
}

test('POST /projects/:id/fork: a project in the caller namespace whose repository borrows the source objects, with its refs', async (t) => {
  const ctx = await buildTestApp(t);
  const { app, c, seed } = ctx;
  const s = await setup(ctx);
  const res = await app.inject({ method: 'POST', url: `/api/v4/projects/${s.source.id}/fork`, headers: s.as.bob, payload: {} });
  assert.equal(res.statusCode, 201, res.body);
  const body = json(res);
  const fork = await row(ctx, body.id);
  const bobNs = await seed.namespaceOf(s.bob);
  const aliceNs = await seed.namespaceOf(s.alice);
  const forkedFrom = basicSource(s.source, s.alice, aliceNs, 1);
  const expected = expectedProject(fork, {
    namespace: userNs(bobNs, s.bob),
    namespaceFullName: 'Bob',
    shape: 'full',
    owner: s.bob,
    level: 50,
    adminProject: true,
    overrides: {},
  });
  // ProjectDetails: forked_from_project right after the basic fields; mr_default_target_self after creator_id
  const ordered: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(expected)) {
    if (k === '_links') ordered.forked_from_project = forkedFrom;
    ordered[k] = v;
    if (k === 'creator_id') ordered.mr_default_target_self = false;
  }
  Object.assign(ordered, { empty_repo: false, description: 'the source', ci_default_git_depth: 20, description_html: '<p dir="auto">the source</p>' });
  assert.deepEqual(body, ordered);
  assert.deepEqual(Object.keys(body), Object.keys(ordered));
  assert.equal(fork.name, 'Src');
  assert.equal(fork.path, 'src');
  assert.equal(fork.visibility, 'public');
  assert.equal(fork.namespace_id, bobNs.id);

  // the link, and the repository: alternates to the source, the source's refs, no object of its own
  const link = await c.db.kysely.selectFrom('project_forks').selectAll().where('project_id', '=', fork.id).executeTakeFirstOrThrow();
  assert.deepEqual(
    { ...link, created_at: undefined },
    { project_id: fork.id, forked_from_project_id: s.source.id, root_project_id: s.source.id, created_at: undefined },
  );
  const forkDir = c.repos.pathOf(fork);
  assert.equal(fs.readFileSync(path.join(forkDir, 'objects/info/alternates'), 'utf8'), `${path.join(s.dir, 'objects')}\n`);
  assert.equal(refsOf(forkDir), refsOf(s.dir));
  assert.match(refsOf(forkDir), new RegExp(`refs/heads/feature ${s.feature}\nrefs/heads/main ${s.main}\nrefs/tags/v1 `));
  assert.equal(bareGit(forkDir, ['count-objects', '-v']).match(/^count: (\d+)/m)![1], '0');
  assert.equal(bareGit(forkDir, ['count-objects', '-v']).match(/^in-pack: (\d+)/m)![1], '0');
  assert.equal(bareGit(forkDir, ['symbolic-ref', 'HEAD']).trim(), 'refs/heads/main');
  bareGit(forkDir, ['fsck', '--connectivity-only']);

  // project_create event like any creation
  const events = (await c.db.kysely.selectFrom('jobs').select('payload').where('kind', '=', 'system_event').execute()).map((r) => JSON.parse(r.payload));
  assert.deepEqual(
    events.filter((e) => e.event_name === 'project_create').map((e) => e.path_with_namespace),
    ['bob/src'],
  );

  // the source counts its fork; the fork shows its source everywhere the project entity is shown
  const src = json(await app.inject({ url: `/api/v4/projects/${s.source.id}`, headers: s.as.bob }));
  assert.equal(src.forks_count, 1);
  assert.equal(src.forked_from_project, undefined);
  assert.equal(src.mr_default_target_self, undefined);
  const single = json(await app.inject({ url: `/api/v4/projects/${fork.id}`, headers: s.as.bob }));
  assert.deepEqual(single.forked_from_project, forkedFrom);
  assert.equal(single.mr_default_target_self, false);
  const anonymous = json(await app.inject({ url: `/api/v4/projects/${fork.id}` }));
  assert.deepEqual(anonymous.forked_from_project, forkedFrom);
  const list = json(await app.inject({ url: '/api/v4/projects?order_by=id&sort=asc', headers: s.as.bob }));
  assert.deepEqual(
    list.map((p: any) => [p.id, p.forks_count, p.forked_from_project?.id ?? null]),
    [
      [s.source.id, 1, null],
      [fork.id, 0, s.source.id],
    ],
  );
  // simple lists are BasicProjectDetails: no forked_from_project
  const simple = json(await app.inject({ url: '/api/v4/projects?simple=true&order_by=id&sort=asc', headers: s.as.bob }));
  assert.equal(simple[1].forked_from_project, undefined);
  assert.equal((await c.forks.forkedFrom(fork.id))?.forked_from_project_id, s.source.id);
  assert.equal(await c.forks.forkedFrom(s.source.id), null);

  // a source the viewer may no longer see: no forked_from_project (the fork is still a fork)
  await c.db.kysely.updateTable('projects').set({ visibility: 'private' }).where('id', '=', s.source.id).execute();
  const hidden = json(await app.inject({ url: `/api/v4/projects/${fork.id}`, headers: s.as.bob }));
  assert.equal(hidden.forked_from_project, undefined);
  assert.equal(hidden.mr_default_target_self, false);
  const asOwner = json(await app.inject({ url: `/api/v4/projects/${fork.id}`, headers: s.as.alice }));
  assert.equal(asOwner.forked_from_project.id, s.source.id);
});

test('POST /projects/:id/fork: namespace, path, name, description, visibility, branches and mr_default_target_self', async (t) => {
  const ctx = await buildTestApp(t);
  const { app, c, seed } = ctx;
  const s = await setup(ctx);
  const g = await seed.group({ path: 'team', name: 'Team', visibility: 'internal' });
  await seed.member({ group: g }, s.bob, 30);
  const res = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${encodeURIComponent('alice/src')}/fork`,
    headers: s.as.bob,
    payload: { namespace_path: 'team', path: 'my-src', name: 'My Src', description: 'mine', branches: 'feature', mr_default_target_self: true },
  });
  assert.equal(res.statusCode, 201, res.body);
  const body = json(res);
  assert.deepEqual(
    [body.path_with_namespace, body.name, body.description, body.visibility, body.default_branch, body.mr_default_target_self, body.namespace],
    ['team/my-src', 'My Src', 'mine', 'internal', 'feature', true, groupNs(g)],
  );
  const fork = await row(ctx, body.id);
  // only the branch asked for: no other branch, no tag
  assert.equal(refsOf(c.repos.pathOf(fork)), `refs/heads/feature ${s.feature}\n`);
  assert.equal(bareGit(c.repos.pathOf(fork), ['symbolic-ref', 'HEAD']).trim(), 'refs/heads/feature');

  // asked visibility lowers (never raises), by namespace_id and the deprecated namespace (an id or a path)
  const bobNs = await seed.namespaceOf(s.bob);
  const priv = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${s.source.id}/fork`,
    headers: s.as.bob,
    payload: { namespace_id: bobNs.id, visibility: 'private' },
  });
  assert.equal(priv.statusCode, 201, priv.body);
  assert.equal(json(priv).visibility, 'private');
  const byName = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${s.source.id}/fork`,
    headers: s.as.bob,
    payload: { namespace: 'team', path: 'third' },
  });
  assert.equal(byName.statusCode, 201, byName.body);
  assert.equal(json(byName).path_with_namespace, 'team/third');
  assert.equal(json(byName).visibility, 'internal');
  const byId = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${s.source.id}/fork`,
    headers: s.as.bob,
    payload: { namespace: g.id, path: 'fourth', name: 'Fourth' },
  });
  assert.equal(byId.statusCode, 201, byId.body);

  // a fork of a fork: the root stays the first project; its repository borrows from its own source
  const second = await app.inject({ method: 'POST', url: `/api/v4/projects/${body.id}/fork`, headers: s.as.alice, payload: { path: 'fork-of-fork' } });
  assert.equal(second.statusCode, 201, second.body);
  const link = await c.db.kysely.selectFrom('project_forks').selectAll().where('project_id', '=', json(second).id).executeTakeFirstOrThrow();
  assert.deepEqual([link.forked_from_project_id, link.root_project_id], [body.id, s.source.id]);
  assert.equal(json(second).forked_from_project.id, body.id);
  assert.equal(json(second).visibility, 'internal');
});

test('POST /projects/:id/fork: GitLab errors for bad requests, missing rights and taken names', async (t) => {
  const ctx = await buildTestApp(t);
  const { app, c, seed } = ctx;
  const s = await setup(ctx);
  const post = (id: number | string, headers: Record<string, string>, payload: unknown = {}) =>
    app.inject({ method: 'POST', url: `/api/v4/projects/${id}/fork`, headers, payload: payload as object });
  const expectBody = async (p: Promise<any>, status: number, body: unknown) => {
    const r = await p;
    assert.equal(r.statusCode, status, r.body);
    assert.deepEqual(json(r), body);
  };
  const count = async () =>
    Number(
      (
        await c.db.kysely
          .selectFrom('projects')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  await expectBody(post(s.source.id, {}), 401, { message: '401 Unauthorized' });
  const secret = await seed.repoProject({ owner: s.alice, path: 'secret', visibility: 'private' });
  await expectBody(post(secret.project.id, s.as.bob), 404, { message: '404 Project Not Found' });
  await expectBody(post(999999, s.as.bob), 404, { message: '404 Project Not Found' });
  // forking disabled: not_found! like GitLab
  const closed = await seed.repoProject({ owner: s.alice, path: 'closed', visibility: 'public' });
  await c.db.kysely
    .updateTable('projects')
    .set({ settings: JSON.stringify({ forking_access_level: 'disabled' }) })
    .where('id', '=', closed.project.id)
    .execute();
  await expectBody(post(closed.project.id, s.as.bob), 404, { message: '404 Not Found' });
  const before = await count();
  // namespaces: unknown, not visible, visible without create_projects, another user's
  await expectBody(post(s.source.id, s.as.bob, { namespace_id: 999999 }), 404, { message: '404 Namespace Not Found' });
  await expectBody(post(s.source.id, s.as.bob, { namespace_path: 'nope' }), 404, { message: '404 Namespace Not Found' });
  const hidden = await seed.group({ path: 'hidden', visibility: 'private' });
  await expectBody(post(s.source.id, s.as.bob, { namespace_id: hidden.id }), 404, { message: '404 Namespace Not Found' });
  const open = await seed.group({ path: 'open', visibility: 'public' });
  await expectBody(post(s.source.id, s.as.bob, { namespace_id: open.id }), 404, { message: '404 Target Namespace Not Found' });
  await seed.member({ group: open }, s.bob, 10);
  await expectBody(post(s.source.id, s.as.bob, { namespace_path: 'open' }), 404, { message: '404 Target Namespace Not Found' });
  await expectBody(post(s.source.id, s.as.bob, { namespace: 'alice' }), 404, { message: '404 Namespace Not Found' });
  // unknown branch
  await expectBody(post(s.source.id, s.as.bob, { branches: 'nope' }), 404, { message: '404 Source Branch Not Found' });
  // parameters
  await expectBody(post(s.source.id, s.as.bob, { visibility: 'secret' }), 400, { error: 'visibility does not have a valid value' });
  await expectBody(post(s.source.id, s.as.bob, { namespace_id: 'abc' }), 400, { error: 'namespace_id is invalid' });
  await expectBody(post(s.source.id, s.as.bob, { path: 'bad path!' }), 409, {
    message: ["Path can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'"],
  });
  assert.equal(await count(), before);
  // the same name and path twice in one namespace: 409 with the model's errors
  assert.equal((await post(s.source.id, s.as.bob)).statusCode, 201);
  await expectBody(post(s.source.id, s.as.bob), 409, {
    message: ['Project namespace name has already been taken', 'Name has already been taken', 'Path has already been taken'],
  });
  // the owner cannot fork into the namespace the source lives in under the same path either
  await expectBody(post(s.source.id, s.as.alice), 409, {
    message: ['Project namespace name has already been taken', 'Name has already been taken', 'Path has already been taken'],
  });
  assert.equal(await count(), before + 1);
});

test('GET /projects/:id/forks: the forks the caller may see, with project list filters and pages', async (t) => {
  const ctx = await buildTestApp(t);
  const { app, seed } = ctx;
  const s = await setup(ctx);
  const carol = await seed.user({ username: 'carol', name: 'Carol' });
  const carolH = (await seed.token(carol)).headers;
  const fork = async (h: Record<string, string>, payload: Record<string, unknown>) => {
    const r = await app.inject({ method: 'POST', url: `/api/v4/projects/${s.source.id}/fork`, headers: h, payload });
    assert.equal(r.statusCode, 201, r.body);
    return json(r);
  };
  const bobFork = await fork(s.as.bob, {});
  const bobPrivate = await fork(s.as.bob, { path: 'hidden-fork', name: 'Hidden fork', visibility: 'private' });
  const carolFork = await fork(carolH, { name: 'Carol fork', path: 'carol-fork' });
  // a fork of a fork is not a fork of the source
  const r = await app.inject({ method: 'POST', url: `/api/v4/projects/${carolFork.id}/fork`, headers: s.as.bob, payload: { path: 'deeper' } });
  assert.equal(r.statusCode, 201);

  const ids = async (query: string, h: Record<string, string> = s.as.alice) => {
    const res = await app.inject({ url: `/api/v4/projects/${s.source.id}/forks${query}`, headers: h });
    assert.equal(res.statusCode, 200, res.body);
    return json(res).map((p: any) => p.id);
  };
  assert.deepEqual(await ids(''), [carolFork.id, bobFork.id]);
  assert.deepEqual(await ids('', s.as.bob), [carolFork.id, bobPrivate.id, bobFork.id]);
  assert.deepEqual(await ids('?order_by=id&sort=asc', ctx.root), [bobFork.id, bobPrivate.id, carolFork.id]);
  assert.deepEqual(await ids('?owned=true', s.as.bob), [bobPrivate.id, bobFork.id]);
  assert.deepEqual(await ids('?membership=true', carolH), [carolFork.id]);
  assert.deepEqual(await ids('?search=carol'), [carolFork.id]);
  assert.deepEqual(await ids('?visibility=private', s.as.bob), [bobPrivate.id]);
  assert.deepEqual(await ids('?order_by=name&sort=asc', s.as.bob), [carolFork.id, bobPrivate.id, bobFork.id]);
  // anonymous: public forks, BasicProjectDetails
  const anon = await app.inject({ url: `/api/v4/projects/${s.source.id}/forks?order_by=id&sort=asc` });
  assert.equal(anon.statusCode, 200);
  const carolNs = await seed.namespaceOf(carol);
  const bobNs = await seed.namespaceOf(s.bob);
  assert.deepEqual(json(anon), [
    expectedProject(await row(ctx, bobFork.id), { namespace: userNs(bobNs, s.bob), namespaceFullName: 'Bob', shape: 'basic' }),
    expectedProject(await row(ctx, carolFork.id), {
      namespace: userNs(carolNs, carol),
      namespaceFullName: 'Carol',
      shape: 'basic',
      overrides: { forks_count: 1 },
    }),
  ]);
  // signed in: ProjectWithAccess with forked_from_project
  const page = await app.inject({ url: `/api/v4/projects/${s.source.id}/forks?per_page=1&page=2&order_by=id&sort=asc`, headers: s.as.bob });
  assert.equal(page.headers['x-total'], '3');
  assert.equal(page.headers['x-page'], '2');
  assert.match(String(page.headers.link), new RegExp(`${EXTERNAL_URL}/api/v4/projects/${s.source.id}/forks\\?.*page=3`));
  const [item] = json(page);
  assert.equal(item.id, bobPrivate.id);
  assert.equal(item.forked_from_project.id, s.source.id);
  assert.deepEqual(item.permissions, { project_access: { access_level: 50, notification_level: 3 }, group_access: null });
  // errors
  const missing = await app.inject({ url: '/api/v4/projects/999999/forks' });
  assert.deepEqual([missing.statusCode, json(missing)], [404, { message: '404 Project Not Found' }]);
  const bad = await app.inject({ url: `/api/v4/projects/${s.source.id}/forks?order_by=nope` });
  assert.deepEqual([bad.statusCode, json(bad)], [400, { error: 'order_by does not have a valid value' }]);
  const unpaired = await app.inject({ url: `/api/v4/projects/${s.source.id}/forks?updated_after=2020-01-01` });
  assert.deepEqual([unpaired.statusCode, json(unpaired)], [400, { message: '400 Bad request - `updated_at` filter and `updated_at` sorting must be paired' }]);
});

test('DELETE /projects/:id/fork: the link goes (204, then 304), the fork keeps its own objects', async (t) => {
  const ctx = await buildTestApp(t);
  const { app, c, seed } = ctx;
  const s = await setup(ctx);
  const created = json(await app.inject({ method: 'POST', url: `/api/v4/projects/${s.source.id}/fork`, headers: s.as.bob, payload: {} }));
  const fork = await row(ctx, created.id);
  const dev = await seed.user();
  await seed.member({ project: fork }, dev, 40);
  const del = (h: Record<string, string>, extra: Record<string, string> = {}) =>
    app.inject({ method: 'DELETE', url: `/api/v4/projects/${fork.id}/fork`, headers: { ...h, ...extra } });

  const denied = await del((await seed.token(dev)).headers);
  assert.deepEqual([denied.statusCode, json(denied)], [403, { message: '403 Forbidden' }]);
  const stale = await del(s.as.bob, { 'if-unmodified-since': new Date(Date.parse(fork.updated_at) - 60_000).toUTCString() });
  assert.deepEqual([stale.statusCode, json(stale)], [412, { message: '412 Precondition Failed' }]);
  const other = await app.inject({ method: 'DELETE', url: `/api/v4/projects/${fork.id}/fork`, headers: s.as.alice });
  assert.deepEqual([other.statusCode, json(other)], [403, { message: '403 Forbidden' }]);

  const ok = await del(s.as.bob);
  assert.equal(ok.statusCode, 204);
  assert.equal(ok.body, '');
  assert.equal(await c.forks.forkedFrom(fork.id), null);
  const forkDir = c.repos.pathOf(fork);
  assert.equal(fs.existsSync(path.join(forkDir, 'objects/info/alternates')), false);
  assert.equal(refsOf(forkDir), refsOf(s.dir));
  bareGit(forkDir, ['fsck', '--connectivity-only']);
  assert.equal(fs.existsSync(path.join(s.dir, 'hearth-borrowers')), false);
  const again = await del(s.as.bob);
  assert.equal(again.statusCode, 304);
  assert.equal(again.body, '');
  const shown = json(await app.inject({ url: `/api/v4/projects/${fork.id}`, headers: s.as.bob }));
  assert.equal(shown.forked_from_project, undefined);
  assert.equal(shown.mr_default_target_self, undefined);
  assert.equal(json(await app.inject({ url: `/api/v4/projects/${s.source.id}`, headers: s.as.bob })).forks_count, 0);
  assert.deepEqual(json(await app.inject({ url: `/api/v4/projects/${s.source.id}/forks`, headers: s.as.bob })), []);

  // POST /projects/:id/fork/:forked_from_id puts a link back (owners and administrators)
  const stranger = (await seed.token(await seed.user())).headers;
  const link = (h: Record<string, string>, from: number | string = s.source.id) =>
    app.inject({ method: 'POST', url: `/api/v4/projects/${fork.id}/fork/${from}`, headers: h });
  assert.equal((await link(stranger)).statusCode, 403);
  const self = await link(s.as.bob, fork.id);
  assert.deepEqual([self.statusCode, json(self)], [400, { message: 'Target project cannot be equal to source project' }]);
  const missing = await link(s.as.bob, 999999);
  assert.deepEqual([missing.statusCode, json(missing)], [404, { message: '404 Project Not Found' }]);
  const linked = await link(ctx.root);
  assert.equal(linked.statusCode, 201, linked.body);
  assert.equal(json(linked).forked_from_project.id, s.source.id);
  assert.equal((await c.forks.forkedFrom(fork.id))?.forked_from_project_id, s.source.id);
  const twice = await link(s.as.bob);
  assert.deepEqual([twice.statusCode, json(twice)], [409, { message: 'Project already forked' }]);
});

test('deleting a source: its forks get their own objects first and keep working (clone over smart HTTP)', async (t: TestContext) => {
  const ctx = await startTestServer(t);
  const { app, c } = ctx;
  const s = await setup(ctx);
  const created = json(await app.inject({ method: 'POST', url: `/api/v4/projects/${s.source.id}/fork`, headers: s.as.bob, payload: {} }));
  const fork = await row(ctx, created.id);
  const forkDir = c.repos.pathOf(fork);
  // a fork of the fork reads the source's objects through two alternates
  const deeper = json(
    await app.inject({ method: 'POST', url: `/api/v4/projects/${fork.id}/fork`, headers: s.as.alice, payload: { path: 'deeper', name: 'Deeper' } }),
  );
  const deeperRow = await row(ctx, deeper.id);
  const deeperDir = c.repos.pathOf(deeperRow);
  // a clone of the fork before: objects come from the source
  const bobToken = s.as.bob['private-token'];
  const before = tmpDir(t);
  await runGit(before, ['clone', '-q', cloneUrl(ctx.base, 'bob/src', 'bob', bobToken), 'w']);
  assert.equal((await runGit(path.join(before, 'w'), ['rev-parse', 'HEAD'])).stdout.trim(), s.main);

  const del = await app.inject({ method: 'DELETE', url: `/api/v4/projects/${s.source.id}`, headers: s.as.alice });
  assert.equal(del.statusCode, 202);
  await c.repos.idle();
  assert.equal(fs.existsSync(s.dir), false);
  assert.equal(fs.existsSync(path.join(forkDir, 'objects/info/alternates')), false);
  bareGit(forkDir, ['fsck', '--connectivity-only']);
  bareGit(deeperDir, ['fsck', '--connectivity-only']);
  assert.equal(bareGit(deeperDir, ['cat-file', '-t', s.feature]).trim(), 'commit');

  const after = tmpDir(t);
  await runGit(after, ['clone', '-q', '--mirror', cloneUrl(ctx.base, 'bob/src', 'bob', bobToken), 'w.git']);
  const refs = (await runGit(path.join(after, 'w.git'), ['for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads'])).stdout;
  assert.equal(refs, `refs/heads/feature ${s.feature}\nrefs/heads/main ${s.main}\n`);
  await runGit(path.join(after, 'w.git'), ['fsck']);

  // the fork is still a fork (of nothing visible): GitLab shows no forked_from_project
  const link = await c.forks.forkedFrom(fork.id);
  assert.deepEqual([link?.forked_from_project_id, link?.root_project_id], [null, s.source.id]);
  const shown = json(await app.inject({ url: `/api/v4/projects/${fork.id}`, headers: s.as.bob }));
  assert.equal(shown.forked_from_project, undefined);
  assert.equal(shown.mr_default_target_self, false);
  assert.equal(json(await app.inject({ url: `/api/v4/projects/${deeper.id}`, headers: s.as.bob })).forked_from_project.id, fork.id);

  // deleting the middle fork: the deeper one copies what it borrowed and stops borrowing
  assert.equal((await app.inject({ method: 'DELETE', url: `/api/v4/projects/${fork.id}`, headers: s.as.bob })).statusCode, 202);
  await c.repos.idle();
  assert.equal(fs.existsSync(forkDir), false);
  assert.equal(fs.existsSync(path.join(deeperDir, 'objects/info/alternates')), false);
  bareGit(deeperDir, ['fsck', '--connectivity-only']);
});

test('a source moved to another storage: its forks follow; a source without a repository gives an empty fork', async (t) => {
  const ctx = await buildTestApp(t);
  const { app, c, seed } = ctx;
  const s = await setup(ctx);
  const created = json(await app.inject({ method: 'POST', url: `/api/v4/projects/${s.source.id}/fork`, headers: s.as.bob, payload: {} }));
  const fork = await row(ctx, created.id);
  const forkDir = c.repos.pathOf(fork);
  await c.settings.save({ repository_storages_weighted: { default: 100, fast: 0 } });
  // the source moves: the fork's alternates follow it
  let res = await app.inject({ method: 'PUT', url: `/api/v4/projects/${s.source.id}`, headers: ctx.root, payload: { repository_storage: 'fast' } });
  assert.equal(res.statusCode, 200, res.body);
  const moved = c.repos.pathOf(await row(ctx, s.source.id));
  assert.notEqual(moved, s.dir);
  assert.equal(fs.readFileSync(path.join(forkDir, 'objects/info/alternates'), 'utf8'), `${path.join(moved, 'objects')}\n`);
  bareGit(forkDir, ['fsck', '--connectivity-only']);
  // the fork moves: the source's list of borrowers follows it
  res = await app.inject({ method: 'PUT', url: `/api/v4/projects/${fork.id}`, headers: ctx.root, payload: { repository_storage: 'fast' } });
  assert.equal(res.statusCode, 200, res.body);
  const forkMoved = c.repos.pathOf(await row(ctx, fork.id));
  assert.equal(fs.readFileSync(path.join(moved, 'hearth-borrowers'), 'utf8'), `${forkMoved}\n`);
  bareGit(forkMoved, ['fsck', '--connectivity-only']);
  // and deleting the moved source still leaves the moved fork whole
  assert.equal((await app.inject({ method: 'DELETE', url: `/api/v4/projects/${s.source.id}`, headers: s.as.alice })).statusCode, 202);
  await c.repos.idle();
  assert.equal(fs.existsSync(moved), false);
  assert.equal(fs.existsSync(path.join(forkMoved, 'objects/info/alternates')), false);
  assert.equal(bareGit(forkMoved, ['rev-parse', 'refs/heads/main']).trim(), s.main);
  bareGit(forkMoved, ['fsck', '--connectivity-only']);

  // a project without a repository on disk
  const bare = await seed.project({ owner: s.alice, path: 'norepo', name: 'Norepo', visibility: 'public' });
  res = await app.inject({ method: 'POST', url: `/api/v4/projects/${bare.id}/fork`, headers: s.as.bob, payload: {} });
  assert.equal(res.statusCode, 201, res.body);
  const empty = await row(ctx, json(res).id);
  assert.equal(json(res).empty_repo, true);
  assert.equal(fs.existsSync(path.join(c.repos.pathOf(empty), 'objects/info/alternates')), false);
});

test('a group deleted with a project and its fork: both repositories go', async (t) => {
  const ctx = await buildTestApp(t);
  const { app, c, seed } = ctx;
  const s = await setup(ctx);
  const g = await seed.group({ path: 'team', name: 'Team', visibility: 'public' });
  await seed.member({ group: g }, s.bob, 50);
  const inGroup = json(await app.inject({ method: 'POST', url: `/api/v4/projects/${s.source.id}/fork`, headers: s.as.bob, payload: { namespace_id: g.id } }));
  const again = json(
    await app.inject({
      method: 'POST',
      url: `/api/v4/projects/${inGroup.id}/fork`,
      headers: s.as.bob,
      payload: { namespace_id: g.id, path: 'again', name: 'Again' },
    }),
  );
  const dirs = [c.repos.pathOf(await row(ctx, inGroup.id)), c.repos.pathOf(await row(ctx, again.id))];
  const res = await app.inject({ method: 'DELETE', url: `/api/v4/groups/${g.id}`, headers: ctx.root });
  assert.equal(res.statusCode, 202, res.body);
  await c.repos.idle();
  assert.deepEqual(
    dirs.map((d) => fs.existsSync(d)),
    [false, false],
  );
  // the source keeps no borrower that is gone
  bareGit(s.dir, ['fsck', '--connectivity-only']);
});
