// Deploy tokens API (GitLab lib/api/deploy_tokens.rb): a project's and a group's tokens for Maintainers, the
// administrators' list, GitLab's bodies for each refusal (and no row written), the secret shown once and kept
// as a digest; then git over smart HTTP on a real port: a project token and a group token clone (subgroups
// included), a push is refused, and revoked, expired, foreign or misnamed tokens are asked again (401).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import { cloneUrl, startTestServer } from '../../helpers/server.ts';
import { runGit as git, tmpDir, WorkTree } from '../../helpers/git.ts';
import { addDays, todayDate } from '../../../src/lib/time.ts';
import type { NamespaceRow, ProjectRow } from '../../../src/db/schema.ts';

interface World extends TestApp {
  group: NamespaceRow;
  project: ProjectRow;
  other: ProjectRow;
  as: { maintainer: Record<string, string>; developer: Record<string, string>; stranger: Record<string, string>; groupMaintainer: Record<string, string> };
}

async function setup(t: Parameters<typeof buildTestApp>[0]): Promise<World> {
  const w = await buildTestApp(t);
  const { seed } = w;
  const group = await seed.group({ path: 'dt-group' });
  const project = await seed.project({ namespace: group, path: 'app', visibility: 'private' });
  const other = await seed.project({ namespace: group, path: 'lib', visibility: 'private' });
  const maintainer = await seed.user({ username: 'maint' });
  const developer = await seed.user({ username: 'dev' });
  const stranger = await seed.user({ username: 'stranger' });
  const groupMaintainer = await seed.user({ username: 'gmaint' });
  await seed.member({ project }, maintainer, 40);
  await seed.member({ project }, developer, 30);
  await seed.member({ group }, groupMaintainer, 40);
  return {
    ...w,
    group,
    project,
    other,
    as: {
      maintainer: (await seed.token(maintainer)).headers,
      developer: (await seed.token(developer)).headers,
      stranger: (await seed.token(stranger)).headers,
      groupMaintainer: (await seed.token(groupMaintainer)).headers,
    },
  };
}

const ISO_MIDNIGHT = (d: string) => `${d}T00:00:00.000Z`;
const TOKEN = /^gldt-[A-Za-z0-9_-]{20}$/;

async function tokenRows(c: TestApp['c']) {
  return c.db.kysely.selectFrom('deploy_tokens').selectAll().orderBy('id').execute();
}

test('a Maintainer creates a project deploy token: the secret once, its digest stored; list, get, the admin list, delete', async (t) => {
  const { app, c, project, as, root } = await setup(t);
  const expires = addDays(todayDate(), 30);
  const res = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/deploy_tokens`,
    headers: as.maintainer,
    payload: { name: 'ci', scopes: ['read_registry', 'read_repository'], expires_at: expires },
  });
  assert.equal(res.statusCode, 201);
  const body = res.json();
  assert.match(body.token, TOKEN);
  assert.deepEqual(body, {
    id: body.id,
    name: 'ci',
    username: `gitlab+deploy-token-${body.id}`,
    expires_at: ISO_MIDNIGHT(expires),
    // GitLab's order of the scopes, whatever the order given
    scopes: ['read_repository', 'read_registry'],
    revoked: false,
    expired: false,
    token: body.token,
  });
  const [row] = await tokenRows(c);
  assert.equal(row.project_id, project.id);
  assert.equal(row.group_id, null);
  assert.equal(row.username, null);
  assert.equal(row.token_digest, c.tokens.digest(body.token));
  assert.ok(!JSON.stringify(row).includes(body.token), 'the secret itself is not stored');

  const { token: _secret, ...shown } = body;
  const list = await app.inject({ url: `/api/v4/projects/${project.id}/deploy_tokens`, headers: as.maintainer });
  assert.equal(list.statusCode, 200);
  assert.deepEqual(list.json(), [shown]);
  assert.equal(list.headers['x-total'], '1');
  const one = await app.inject({ url: `/api/v4/projects/${project.id}/deploy_tokens/${body.id}`, headers: as.maintainer });
  assert.deepEqual(one.json(), shown);
  const all = await app.inject({ url: '/api/v4/deploy_tokens', headers: root });
  assert.deepEqual(all.json(), [shown]);

  const del = await app.inject({ method: 'DELETE', url: `/api/v4/projects/${project.id}/deploy_tokens/${body.id}`, headers: as.maintainer });
  assert.equal(del.statusCode, 204);
  assert.deepEqual(await tokenRows(c), []);
  const again = await app.inject({ method: 'DELETE', url: `/api/v4/projects/${project.id}/deploy_tokens/${body.id}`, headers: as.maintainer });
  assert.equal(again.statusCode, 404);
  assert.deepEqual(again.json(), { message: '404 Not found' });
});

test('group deploy tokens: a group Maintainer creates, lists, reads and deletes; a custom username; comma-separated scopes', async (t) => {
  const { app, c, group, as } = await setup(t);
  const res = await app.inject({
    method: 'POST',
    url: `/api/v4/groups/${group.id}/deploy_tokens`,
    headers: as.groupMaintainer,
    payload: { name: 'registry', scopes: 'read_repository,write_package_registry', username: 'deployer+ci' },
  });
  assert.equal(res.statusCode, 201);
  const body = res.json();
  assert.deepEqual(body, {
    id: body.id,
    name: 'registry',
    username: 'deployer+ci',
    expires_at: null,
    scopes: ['read_repository', 'write_package_registry'],
    revoked: false,
    expired: false,
    token: body.token,
  });
  const [row] = await tokenRows(c);
  assert.equal(row.group_id, group.id);
  assert.equal(row.project_id, null);
  const list = await app.inject({ url: `/api/v4/groups/${encodeURIComponent(group.full_path)}/deploy_tokens`, headers: as.groupMaintainer });
  assert.deepEqual(
    list.json().map((x: any) => [x.id, x.username]),
    [[body.id, 'deployer+ci']],
  );
  // a project's list holds only the project's tokens
  const projectList = await app.inject({ url: `/api/v4/projects/${await firstProjectId(c, group)}/deploy_tokens`, headers: as.groupMaintainer });
  assert.deepEqual(projectList.json(), []);
  const get = await app.inject({ url: `/api/v4/groups/${group.id}/deploy_tokens/${body.id}`, headers: as.groupMaintainer });
  assert.equal(get.json().name, 'registry');
  const del = await app.inject({ method: 'DELETE', url: `/api/v4/groups/${group.id}/deploy_tokens/${body.id}`, headers: as.groupMaintainer });
  assert.equal(del.statusCode, 204);
  assert.deepEqual(await tokenRows(c), []);
});

async function firstProjectId(c: TestApp['c'], group: NamespaceRow): Promise<number> {
  return (await c.db.kysely.selectFrom('projects').select('id').where('namespace_id', '=', group.id).orderBy('id').executeTakeFirstOrThrow()).id;
}

test('who may: 401 anonymous, 404 unseen, 403 for a Developer, a token of another holder is 404 Not found; the admin list is for administrators', async (t) => {
  const { app, c, project, other, group, as } = await setup(t);
  const url = `/api/v4/projects/${project.id}/deploy_tokens`;
  const payload = { name: 'x', scopes: ['read_repository'] };
  const anon = await app.inject({ url });
  assert.equal(anon.statusCode, 401);
  assert.deepEqual(anon.json(), { message: '401 Unauthorized' });
  for (const method of ['GET', 'POST'] as const) {
    const unseen = await app.inject({ method, url, headers: as.stranger, payload: method === 'POST' ? payload : undefined });
    assert.equal(unseen.statusCode, 404);
    assert.deepEqual(unseen.json(), { message: '404 Project Not Found' });
    const dev = await app.inject({ method, url, headers: as.developer, payload: method === 'POST' ? payload : undefined });
    assert.equal(dev.statusCode, 403);
    assert.deepEqual(dev.json(), { message: '403 Forbidden' });
  }
  const groupUnseen = await app.inject({ url: `/api/v4/groups/${group.id}/deploy_tokens`, headers: as.stranger });
  assert.equal(groupUnseen.statusCode, 404);
  assert.deepEqual(groupUnseen.json(), { message: '404 Group Not Found' });
  const groupMember = await app.inject({ url: `/api/v4/groups/${group.id}/deploy_tokens`, headers: as.maintainer });
  // a project Maintainer sees the private group (through the project) but does not manage it
  assert.equal(groupMember.statusCode, 403);
  assert.deepEqual(await tokenRows(c), []);

  // a token of another project is not found here
  const made = await app.inject({ method: 'POST', url: `/api/v4/projects/${other.id}/deploy_tokens`, headers: as.groupMaintainer, payload });
  assert.equal(made.statusCode, 201);
  const foreign = await app.inject({ url: `${url}/${made.json().id}`, headers: as.maintainer });
  assert.equal(foreign.statusCode, 404);
  assert.deepEqual(foreign.json(), { message: '404 Not found' });
  const foreignDelete = await app.inject({ method: 'DELETE', url: `${url}/${made.json().id}`, headers: as.maintainer });
  assert.equal(foreignDelete.statusCode, 404);
  assert.equal((await tokenRows(c)).length, 1);
  const badId = await app.inject({ url: `${url}/abc`, headers: as.maintainer });
  assert.equal(badId.statusCode, 400);
  assert.deepEqual(badId.json(), { error: 'token_id is invalid' });

  const adminList = await app.inject({ url: '/api/v4/deploy_tokens', headers: as.maintainer });
  assert.equal(adminList.statusCode, 403);
  assert.deepEqual(adminList.json(), { message: '403 Forbidden' });
});

test('bad input: GitLab bodies, and no row written', async (t) => {
  const { app, c, project, as } = await setup(t);
  const url = `/api/v4/projects/${project.id}/deploy_tokens`;
  const cases: [unknown, number, unknown][] = [
    [{ scopes: ['read_repository'] }, 400, { error: 'name is missing' }],
    [{ name: 'x' }, 400, { error: 'scopes is missing' }],
    [{ name: 'x', scopes: ['api'] }, 400, { error: 'scopes does not have a valid value' }],
    [{ name: 'x', scopes: ['read_repository', 'write_repository'] }, 400, { error: 'scopes does not have a valid value' }],
    [{ name: 'x', scopes: [] }, 400, { message: "Scopes can't be blank" }],
    [{ name: 'x', scopes: ['read_repository'], expires_at: 'soon' }, 400, { error: 'expires_at is invalid' }],
    [{ name: 'x', scopes: ['read_repository'], expires_at: addDays(todayDate(), -1) }, 400, { message: 'Expires at must not be in the past' }],
    [{ name: 'x', scopes: ['read_repository'], username: 'has space' }, 400, { message: "Username can contain only letters, digits, '_', '-', '+', and '.'" }],
    [{ name: 'n'.repeat(256), scopes: [], username: 'ok' }, 400, { message: "Name is too long (maximum is 255 characters) and Scopes can't be blank" }],
  ];
  for (const [payload, status, body] of cases) {
    const res = await app.inject({ method: 'POST', url, headers: as.maintainer, payload: payload as object });
    assert.equal(res.statusCode, status, JSON.stringify(payload));
    assert.deepEqual(res.json(), body, JSON.stringify(payload));
  }
  assert.deepEqual(await tokenRows(c), []);
  // today is still a valid expiry (the token works until the day ends)
  const today = await app.inject({ method: 'POST', url, headers: as.maintainer, payload: { name: 'x', scopes: ['read_repository'], expires_at: todayDate() } });
  assert.equal(today.statusCode, 201);
  assert.equal(today.json().expired, false);
  // active=true leaves out revoked and expired tokens
  await c.db.kysely.updateTable('deploy_tokens').set({ revoked: 1 }).execute();
  const active = await app.inject({ url: `${url}?active=true`, headers: as.maintainer });
  assert.deepEqual(active.json(), []);
  const every = await app.inject({ url, headers: as.maintainer });
  assert.deepEqual(
    every.json().map((x: any) => [x.revoked, x.expired]),
    [[true, false]],
  );
});

// ---- git over smart HTTP ------------------------------------------------------------------------------

function commitTo(t: { after(fn: () => unknown): void }, bare: string): void {
  const w = tmpDir(t);
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: w });
  const wt = new WorkTree(w);
  wt.write('README.md', '# hello\n').commit('first');
  wt.git(['push', '-q', bare, 'main']);
}

test('git clone with a deploy token: the project token and the group token (subgroups too); push refused; revoked, expired, foreign and misnamed tokens get 401', async (t) => {
  const { c, seed, base, app } = await startTestServer(t);
  const root = { 'private-token': (await import('../../helpers/build-app.ts')).ROOT_TOKEN };
  const group = await seed.group({ path: 'dt-git', visibility: 'private' });
  const sub = await seed.group({ path: 'inner', parent: group, visibility: 'private' });
  const other = await seed.group({ path: 'elsewhere', visibility: 'private' });
  const app1 = await seed.repoProject({ namespace: group, path: 'app', visibility: 'private' });
  const deep = await seed.repoProject({ namespace: sub, path: 'deep', visibility: 'private' });
  const outside = await seed.repoProject({ namespace: other, path: 'outside', visibility: 'private' });
  for (const p of [app1, deep, outside]) {
    commitTo(t, p.dir);
    c.repos.repository(p.project).touchRefs();
  }
  const create = async (url: string, payload: object) => {
    const res = await app.inject({ method: 'POST', url, headers: root, payload });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  };
  const projectToken = await create(`/api/v4/projects/${app1.project.id}/deploy_tokens`, { name: 'p', scopes: ['read_repository'] });
  const groupToken = await create(`/api/v4/groups/${group.id}/deploy_tokens`, { name: 'g', scopes: ['read_repository'], username: 'group-reader' });
  const registryOnly = await create(`/api/v4/projects/${app1.project.id}/deploy_tokens`, { name: 'r', scopes: ['read_registry'] });

  const clone = async (url: string) => {
    const dir = tmpDir(t);
    await git(dir, ['clone', '-q', url, 'c']);
    return execFileSync('git', ['-C', `${dir}/c`, 'show', 'HEAD:README.md']).toString();
  };
  const path = (p: ProjectRow, ns: NamespaceRow) => `${ns.full_path}/${p.path}`;

  assert.equal(await clone(cloneUrl(base, path(app1.project, group), projectToken.username, projectToken.token)), '# hello\n');
  assert.equal(await clone(cloneUrl(base, path(app1.project, group), 'group-reader', groupToken.token)), '# hello\n');
  assert.equal(await clone(cloneUrl(base, path(deep.project, sub), 'group-reader', groupToken.token)), '# hello\n');

  const auth = (u: string, p: string) => ({ authorization: 'Basic ' + Buffer.from(`${u}:${p}`).toString('base64') });
  const refs = (p: string, service = 'git-upload-pack', headers: Record<string, string> = {}) =>
    fetch(`${base}/${p}.git/info/refs?service=${service}`, { headers });

  // the project token does not open the group's other projects; the group token nothing outside the group
  const foreign = await refs(path(deep.project, sub), 'git-upload-pack', auth(projectToken.username, projectToken.token));
  assert.equal(foreign.status, 401);
  assert.match(await foreign.text(), /^HTTP Basic: Access denied/);
  assert.equal((await refs(path(outside.project, other), 'git-upload-pack', auth('group-reader', groupToken.token))).status, 401);
  // the username must be the token's
  assert.equal((await refs(path(app1.project, group), 'git-upload-pack', auth('someone-else', projectToken.token))).status, 401);
  await assert.rejects(clone(cloneUrl(base, path(app1.project, group), 'someone-else', projectToken.token)), /Authentication failed|Access denied/);
  // no read_repository: refused
  const noScope = await refs(path(app1.project, group), 'git-upload-pack', auth(registryOnly.username, registryOnly.token));
  assert.equal(noScope.status, 403);
  assert.equal(await noScope.text(), 'You are not allowed to download code.\n');
  // a push is refused
  const push = await refs(path(app1.project, group), 'git-receive-pack', auth(projectToken.username, projectToken.token));
  assert.equal(push.status, 403);
  assert.equal(await push.text(), 'You are not allowed to upload code.\n');
  const w = tmpDir(t);
  await git(w, ['clone', '-q', cloneUrl(base, path(app1.project, group), projectToken.username, projectToken.token), 'c']);
  const wt = new WorkTree(`${w}/c`);
  wt.write('b.txt', 'b\n').commit('second');
  await assert.rejects(git(`${w}/c`, ['push', '-q', 'origin', 'main']), /You are not allowed to upload code|403/);

  // revoked, then expired: asked again
  await c.db.kysely.updateTable('deploy_tokens').set({ revoked: 1 }).where('id', '=', projectToken.id).execute();
  assert.equal((await refs(path(app1.project, group), 'git-upload-pack', auth(projectToken.username, projectToken.token))).status, 401);
  await c.db.kysely
    .updateTable('deploy_tokens')
    .set({ expires_at: `${addDays(todayDate(), -1)}T12:00:00.000Z` })
    .where('id', '=', groupToken.id)
    .execute();
  const expired = await refs(path(app1.project, group), 'git-upload-pack', auth('group-reader', groupToken.token));
  assert.equal(expired.status, 401);
  assert.equal(expired.headers.get('www-authenticate'), 'Basic realm="Hearth"');
  const groupList = await app.inject({ url: `/api/v4/groups/${group.id}/deploy_tokens`, headers: root });
  assert.deepEqual(
    groupList.json().map((x: any) => [x.id, x.expired]),
    [[groupToken.id, true]],
  );
});
