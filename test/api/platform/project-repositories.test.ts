// Projects and their repositories: created with the project (README, default branch, weighted
// storages), moved with repository_storage, removed with the project, its group or its owner.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildTestApp } from '../../helpers/build-app.ts';
import { bareGit, workTree } from '../../helpers/git.ts';
import { RepositoryStore } from '../../../src/git/storage.ts';

const post = (app: any, url: string, headers: Record<string, string>, payload?: unknown) => app.inject({ method: 'POST', url, headers, payload });

test('a new project has a bare repository: README commit by its creator, HEAD on the default branch, empty_repo', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const user = await seed.user({ name: 'Repo Maker', email: 'maker@example.com' });
  const { headers } = await seed.token(user);

  let res = await post(app, '/api/v4/projects', headers, { name: 'With Readme', initialize_with_readme: true, default_branch: 'develop' });
  assert.equal(res.statusCode, 201);
  const withReadme = res.json();
  assert.equal(withReadme.empty_repo, false);
  assert.equal(withReadme.default_branch, 'develop');
  const dir = c.repos.pathOf({ id: withReadme.id, repository_storage: 'default' });
  assert.ok(dir.endsWith(RepositoryStore.diskPath(withReadme.id)));
  assert.equal(bareGit(dir, ['symbolic-ref', 'HEAD']), 'refs/heads/develop\n');
  assert.equal(bareGit(dir, ['show', 'develop:README.md']), '# With Readme\n');
  assert.equal(bareGit(dir, ['log', '--format=%an <%ae>|%s', 'develop']), 'Repo Maker <maker@example.com>|Initial commit\n');

  res = await post(app, '/api/v4/projects', headers, { name: 'Empty' });
  const empty = res.json();
  assert.equal(empty.empty_repo, true);
  const emptyDir = c.repos.pathOf({ id: empty.id, repository_storage: 'default' });
  assert.equal(bareGit(emptyDir, ['symbolic-ref', 'HEAD']), 'refs/heads/main\n');
  assert.equal(bareGit(emptyDir, ['for-each-ref']), '');

  // a push makes it non-empty (the list is not served stale from the response cache)
  const wt = workTree(t, emptyDir);
  wt.write('a', 'a').commit('one');
  wt.push();
  await c.db.kysely.updateTable('projects').set({ last_activity_at: new Date().toISOString() }).where('id', '=', empty.id).execute();
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${empty.id}`, headers });
  assert.equal(res.json().empty_repo, false);

  // invalid branch names are refused and nothing is left behind
  const before = await c.db.kysely.selectFrom('projects').select('id').execute();
  for (const bad of ['-x', 'a..b', 'with space', 'HEAD', 'x.lock']) {
    res = await post(app, '/api/v4/projects', headers, { name: `Bad ${bad.length}${Math.random()}`.replace('.', ''), default_branch: bad });
    assert.equal(res.statusCode, 400, bad);
    assert.deepEqual(res.json(), { message: { default_branch: ['is invalid'] } });
  }
  assert.equal((await c.db.kysely.selectFrom('projects').select('id').execute()).length, before.length);
});

test('default_branch changes move HEAD and must name an existing branch', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const user = await seed.user();
  const { headers } = await seed.token(user);
  const p = (await post(app, '/api/v4/projects', headers, { name: 'Branchy', initialize_with_readme: true })).json();
  let res = await app.inject({ method: 'PUT', url: `/api/v4/projects/${p.id}`, headers, payload: { default_branch: 'nope' } });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: "Could not set the default branch. Do you have a branch named 'nope'?" });
  res = await post(app, `/api/v4/projects/${p.id}/repository/branches`, headers, { branch: 'next', ref: 'main' });
  assert.equal(res.statusCode, 201);
  res = await app.inject({ method: 'PUT', url: `/api/v4/projects/${p.id}`, headers, payload: { default_branch: 'next' } });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().default_branch, 'next');
  assert.equal(bareGit(c.repos.pathOf({ id: p.id, repository_storage: 'default' }), ['symbolic-ref', 'HEAD']), 'refs/heads/next\n');
});

test('repositories live on the storages of repository_storages_weighted and move with repository_storage', async (t) => {
  const fast = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-storage-'));
  t.after(() => fs.rmSync(fast, { recursive: true, force: true }));
  const { app, c, root } = await buildTestApp(t, { repositoryStorages: { fast } });

  let res = await app.inject({ method: 'GET', url: '/api/v4/application/settings', headers: root });
  assert.deepEqual(res.json().repository_storages_weighted, { default: 100, fast: 0 });
  res = await app.inject({
    method: 'PUT',
    url: '/api/v4/application/settings',
    headers: root,
    payload: { repository_storages_weighted: { default: 0, fast: 100 } },
  });
  assert.equal(res.statusCode, 200);
  res = await app.inject({ method: 'PUT', url: '/api/v4/application/settings', headers: root, payload: { repository_storages_weighted: { elsewhere: 1 } } });
  assert.equal(res.statusCode, 400);

  res = await post(app, '/api/v4/projects', root, { name: 'On Fast', initialize_with_readme: true });
  const p = res.json();
  assert.equal(p.repository_storage, 'fast');
  const onFast = path.join(fast, RepositoryStore.diskPath(p.id));
  assert.equal(bareGit(onFast, ['show', 'main:README.md']), '# On Fast\n');

  res = await app.inject({ method: 'PUT', url: `/api/v4/projects/${p.id}`, headers: root, payload: { repository_storage: 'default' } });
  assert.equal(res.json().repository_storage, 'default');
  assert.equal(fs.existsSync(onFast), false);
  assert.equal(bareGit(c.repos.pathOf({ id: p.id, repository_storage: 'default' }), ['show', 'main:README.md']), '# On Fast\n');
});

test('repositories go with their project, their group and their owner', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const user = await seed.user();
  const { headers } = await seed.token(user);
  const dirOf = (id: number) => c.repos.pathOf({ id, repository_storage: 'default' });

  const single = (await post(app, '/api/v4/projects', headers, { name: 'Single' })).json();
  assert.ok(fs.existsSync(dirOf(single.id)));
  assert.equal((await app.inject({ method: 'DELETE', url: `/api/v4/projects/${single.id}`, headers })).statusCode, 202);
  assert.equal(fs.existsSync(dirOf(single.id)), false);

  const group = (await post(app, '/api/v4/groups', root, { name: 'Repos', path: 'repos' })).json();
  const inGroup = (await post(app, '/api/v4/projects', root, { name: 'In Group', namespace_id: group.id })).json();
  assert.ok(fs.existsSync(dirOf(inGroup.id)));
  assert.equal((await app.inject({ method: 'DELETE', url: `/api/v4/groups/${group.id}`, headers: root })).statusCode, 202);
  assert.equal(fs.existsSync(dirOf(inGroup.id)), false);

  const personal = (await post(app, '/api/v4/projects', headers, { name: 'Personal' })).json();
  assert.ok(fs.existsSync(dirOf(personal.id)));
  const before = await c.db.kysely.selectFrom('jobs').select('id').execute();
  assert.equal((await app.inject({ method: 'DELETE', url: `/api/v4/users/${user.id}`, headers: root })).statusCode, 204);
  assert.equal(fs.existsSync(dirOf(personal.id)), false);
  const events = (
    await c.db.kysely
      .selectFrom('jobs')
      .select('payload')
      .where(
        'id',
        'not in',
        before.map((r) => r.id),
      )
      .orderBy('id')
      .execute()
  ).map((r) => JSON.parse(r.payload));
  assert.deepEqual(
    events.map((e) => [e.event_name, e.project_id ?? e.user_id]),
    [
      ['project_destroy', personal.id],
      ['user_destroy', user.id],
    ],
  );
});
