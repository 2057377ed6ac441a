// Project and group access tokens (GitLab lib/api/resource_access_tokens.rb): each token is a personal access
// token of a new bot user who is a member at the token's level; create, list, get, rotate and revoke with whole
// bodies and the rows afterwards (the bot, its membership, its tokens); the token authenticates as a personal
// access token does (API and git); who may (Maintainer of a project, Owner of a group, never above their own
// level); bad input with GitLab's bodies and nothing half-written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import type { NamespaceRow, PatRow, ProjectRow } from '../../../src/db/schema.ts';
import { addDays, todayDate } from '../../../src/lib/time.ts';

interface World extends TestApp {
  group: NamespaceRow;
  project: ProjectRow;
  as: {
    maintainer: Record<string, string>;
    developer: Record<string, string>;
    stranger: Record<string, string>;
    groupOwner: Record<string, string>;
    groupMaintainer: Record<string, string>;
  };
}

async function setup(t: Parameters<typeof buildTestApp>[0]): Promise<World> {
  const w = await buildTestApp(t);
  const { seed } = w;
  const group = await seed.group({ path: 'at-group', visibility: 'private' });
  const project = await seed.repoProject({ namespace: group, path: 'app', name: 'App', visibility: 'private' });
  const maintainer = await seed.user({ username: 'maint', name: 'Mae Maintainer' });
  const developer = await seed.user({ username: 'dev', name: 'Dev Eloper' });
  const stranger = await seed.user({ username: 'stranger' });
  const groupOwner = await seed.user({ username: 'gowner' });
  const groupMaintainer = await seed.user({ username: 'gmaint' });
  await seed.member({ project: project.project }, maintainer, 40);
  await seed.member({ project: project.project }, developer, 30);
  await seed.member({ group }, groupOwner, 50);
  await seed.member({ group }, groupMaintainer, 40);
  return {
    ...w,
    group,
    project: project.project,
    as: {
      maintainer: (await seed.token(maintainer)).headers,
      developer: (await seed.token(developer)).headers,
      stranger: (await seed.token(stranger)).headers,
      groupOwner: (await seed.token(groupOwner)).headers,
      groupMaintainer: (await seed.token(groupMaintainer)).headers,
    },
  };
}

async function bots(c: TestApp['c']) {
  return c.db.kysely.selectFrom('users').selectAll().where('user_type', '=', 'project_bot').orderBy('id').execute();
}
async function botMembers(c: TestApp['c']) {
  return c.db.kysely
    .selectFrom('members')
    .innerJoin('users', 'users.id', 'members.user_id')
    .select(['members.source_type', 'members.source_id', 'members.user_id', 'members.access_level', 'members.expires_at'])
    .where('users.user_type', '=', 'project_bot')
    .orderBy('members.id')
    .execute();
}
async function patOf(c: TestApp['c'], id: number): Promise<PatRow | undefined> {
  return c.db.kysely.selectFrom('personal_access_tokens').selectAll().where('id', '=', id).executeTakeFirst();
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

test('a Maintainer creates a project access token: a bot user, its membership and its token; list, get; the token works as a PAT', async (t) => {
  const { app, c, project, as } = await setup(t);
  const expires = addDays(todayDate(), 30);
  const res = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/access_tokens`,
    headers: as.maintainer,
    payload: { name: 'ci bot', scopes: ['api', 'read_repository'], expires_at: expires },
  });
  assert.equal(res.statusCode, 201);
  const body = res.json();
  const [bot] = await bots(c);
  assert.match(body.token, /^glpat-/);
  assert.match(body.created_at, ISO);
  assert.deepEqual(body, {
    id: body.id,
    name: 'ci bot',
    revoked: false,
    created_at: body.created_at,
    description: null,
    scopes: ['api', 'read_repository'],
    user_id: bot.id,
    last_used_at: null,
    active: true,
    expires_at: expires,
    access_level: 40,
    token: body.token,
  });
  // the bot: GitLab's username and address, a project bot, confirmed, no password
  assert.match(bot.username, new RegExp(`^project_${project.id}_bot_[0-9a-f]{32}$`));
  assert.equal(bot.email, `${bot.username}@noreply.hearth.test`);
  assert.equal(bot.name, 'ci bot');
  assert.equal(bot.bot, 1);
  assert.equal(bot.password_hash, null);
  assert.ok(bot.confirmed_at);
  assert.deepEqual(await botMembers(c), [{ source_type: 'Project', source_id: project.id, user_id: bot.id, access_level: 40, expires_at: null }]);
  const pat = (await patOf(c, body.id))!;
  assert.equal(pat.user_id, bot.id);
  assert.equal(pat.token_digest, c.tokens.digest(body.token));

  const { token: secret, ...shown } = body;
  const list = await app.inject({ url: `/api/v4/projects/${project.id}/access_tokens`, headers: as.maintainer });
  assert.equal(list.statusCode, 200);
  assert.deepEqual(list.json(), [shown]);
  const one = await app.inject({ url: `/api/v4/projects/${encodeURIComponent('at-group/app')}/access_tokens/${body.id}`, headers: as.maintainer });
  assert.deepEqual(one.json(), shown);

  // the token is a personal access token of the bot: the API and git as the bot, who is a Maintainer here
  const me = await app.inject({ url: '/api/v4/user', headers: { 'private-token': secret } });
  assert.equal(me.statusCode, 200);
  assert.equal(me.json().username, bot.username);
  assert.equal(me.json().bot, true);
  const proj = await app.inject({ url: `/api/v4/projects/${project.id}`, headers: { authorization: `Bearer ${secret}` } });
  assert.equal(proj.statusCode, 200);
  const info = await app.inject({
    url: `/at-group/app.git/info/refs?service=git-upload-pack`,
    headers: { authorization: 'Basic ' + Buffer.from(`anything:${secret}`).toString('base64') },
  });
  assert.equal(info.statusCode, 200);
  // the users list hides project bots on request
  const users = await app.inject({ url: '/api/v4/users?without_project_bots=true&per_page=100', headers: as.maintainer });
  assert.ok(!users.json().some((u: any) => u.id === bot.id));
  // a bot reads the project's tokens but makes none (GitLab's project_bot_access)
  const botList = await app.inject({ url: `/api/v4/projects/${project.id}/access_tokens`, headers: { 'private-token': secret } });
  assert.equal(botList.statusCode, 200);
  assert.equal(botList.json().length, 1);
  const botCreate = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/access_tokens`,
    headers: { 'private-token': secret },
    payload: { name: 'nested', scopes: ['api'] },
  });
  assert.equal(botCreate.statusCode, 400);
  assert.deepEqual(botCreate.json(), { message: '400 Bad request - User does not have permission to create project access token' });
  assert.equal((await bots(c)).length, 1);
  // a human's own tokens are not the project's
  const humans = await app.inject({ url: `/api/v4/projects/${project.id}/access_tokens?state=inactive`, headers: as.maintainer });
  assert.deepEqual(humans.json(), []);
});

test('rotate: the old token revoked, a new one with the same name, scopes, bot and level; revoke deletes the bot, its membership and tokens', async (t) => {
  const { app, c, project, as, root } = await setup(t);
  const made = (
    await app.inject({
      method: 'POST',
      url: `/api/v4/projects/${project.id}/access_tokens`,
      headers: as.maintainer,
      payload: { name: 'reader', scopes: ['read_api'], access_level: 20, expires_at: addDays(todayDate(), 10) },
    })
  ).json();
  assert.equal(made.access_level, 20);
  const rotated = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/access_tokens/${made.id}/rotate`,
    headers: as.maintainer,
    payload: { expires_at: addDays(todayDate(), 20) },
  });
  assert.equal(rotated.statusCode, 200);
  const r = rotated.json();
  assert.deepEqual(r, {
    id: r.id,
    name: 'reader',
    revoked: false,
    created_at: r.created_at,
    description: null,
    scopes: ['read_api'],
    user_id: made.user_id,
    last_used_at: null,
    active: true,
    expires_at: addDays(todayDate(), 20),
    access_level: 20,
    token: r.token,
  });
  assert.notEqual(r.id, made.id);
  assert.equal((await patOf(c, made.id))!.revoked, 1);
  assert.equal((await patOf(c, r.id))!.previous_personal_access_token_id, made.id);
  const old = await app.inject({ url: '/api/v4/user', headers: { 'private-token': made.token } });
  assert.equal(old.statusCode, 401);
  const fresh = await app.inject({ url: `/api/v4/projects/${project.id}`, headers: { 'private-token': r.token } });
  assert.equal(fresh.statusCode, 200);
  const list = await app.inject({ url: `/api/v4/projects/${project.id}/access_tokens`, headers: as.maintainer });
  assert.deepEqual(
    list.json().map((x: any) => [x.id, x.revoked, x.active]),
    [
      [made.id, true, false],
      [r.id, false, true],
    ],
  );
  // rotation refusals: 401 for someone who may not, 404 for an administrator on a missing token
  const devRotate = await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/access_tokens/${r.id}/rotate`, headers: as.developer });
  assert.equal(devRotate.statusCode, 401);
  assert.deepEqual(devRotate.json(), { message: '401 Unauthorized' });
  const adminMissing = await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/access_tokens/999999/rotate`, headers: root });
  assert.equal(adminMissing.statusCode, 404);
  assert.deepEqual(adminMissing.json(), { message: '404 Not Found' });
  const again = await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/access_tokens/${made.id}/rotate`, headers: as.maintainer });
  assert.equal(again.statusCode, 400);
  assert.deepEqual(again.json(), { message: '400 Bad request - Token already revoked' });

  // a Developer may not revoke (GitLab's service message), and nothing changes
  const devDelete = await app.inject({ method: 'DELETE', url: `/api/v4/projects/${project.id}/access_tokens/${r.id}`, headers: as.developer });
  assert.equal(devDelete.statusCode, 400);
  assert.deepEqual(devDelete.json(), { message: '400 Bad request - Dev Eloper cannot delete reader' });
  assert.equal((await bots(c)).length, 1);

  const del = await app.inject({ method: 'DELETE', url: `/api/v4/projects/${project.id}/access_tokens/${r.id}`, headers: as.maintainer });
  assert.equal(del.statusCode, 204);
  assert.deepEqual(await bots(c), []);
  assert.deepEqual(await botMembers(c), []);
  assert.equal(await patOf(c, r.id), undefined);
  assert.equal((await app.inject({ url: '/api/v4/user', headers: { 'private-token': r.token } })).statusCode, 401);
  const gone = await app.inject({ url: `/api/v4/projects/${project.id}/access_tokens/${r.id}`, headers: as.maintainer });
  assert.equal(gone.statusCode, 404);
  assert.deepEqual(gone.json(), { message: '404 project Access Token Not Found' });
  const goneDelete = await app.inject({ method: 'DELETE', url: `/api/v4/projects/${project.id}/access_tokens/${r.id}`, headers: as.maintainer });
  assert.equal(goneDelete.statusCode, 404);
  assert.deepEqual(goneDelete.json(), { message: '404 project Access Token Not Found' });
});

test('group access tokens: an Owner creates one (the bot is a member of the group and reaches its projects); a Maintainer may not', async (t) => {
  const { app, c, group, project, as } = await setup(t);
  const url = `/api/v4/groups/${group.id}/access_tokens`;
  const denied = await app.inject({ method: 'POST', url, headers: as.groupMaintainer, payload: { name: 'g', scopes: ['api'] } });
  assert.equal(denied.statusCode, 400);
  assert.deepEqual(denied.json(), { message: '400 Bad request - User does not have permission to create group access token' });
  const listDenied = await app.inject({ url, headers: as.groupMaintainer });
  assert.equal(listDenied.statusCode, 401);
  assert.deepEqual(await bots(c), []);

  const res = await app.inject({ method: 'POST', url, headers: as.groupOwner, payload: { name: 'group bot', scopes: ['read_api'], access_level: 50 } });
  assert.equal(res.statusCode, 201);
  const body = res.json();
  assert.equal(body.access_level, 50);
  // without expires_at: the longest lifetime allowed (expiry is required by default)
  assert.equal(body.expires_at, addDays(todayDate(), 365));
  const [bot] = await bots(c);
  assert.match(bot.username, new RegExp(`^group_${group.id}_bot_[0-9a-f]{32}$`));
  assert.deepEqual(await botMembers(c), [{ source_type: 'Namespace', source_id: group.id, user_id: bot.id, access_level: 50, expires_at: null }]);
  const viaGroup = await app.inject({ url: `/api/v4/projects/${project.id}`, headers: { 'private-token': body.token } });
  assert.equal(viaGroup.statusCode, 200);
  const list = await app.inject({ url, headers: as.groupOwner });
  assert.deepEqual(
    list.json().map((x: any) => [x.id, x.access_level]),
    [[body.id, 50]],
  );
  // the group's bots are not the project's
  const projectList = await app.inject({ url: `/api/v4/projects/${project.id}/access_tokens`, headers: { 'private-token': body.token } });
  assert.deepEqual(projectList.json(), []);
});

test('who may: 401 anonymous, 404 unseen, 401 to read and 400 to create for a Developer, no level above the creator’s', async (t) => {
  const { app, c, project, as } = await setup(t);
  const url = `/api/v4/projects/${project.id}/access_tokens`;
  const anon = await app.inject({ url });
  assert.equal(anon.statusCode, 401);
  const unseen = await app.inject({ url, headers: as.stranger });
  assert.equal(unseen.statusCode, 404);
  assert.deepEqual(unseen.json(), { message: '404 Project Not Found' });
  const unseenCreate = await app.inject({ method: 'POST', url, headers: as.stranger, payload: { name: 'x', scopes: ['api'] } });
  assert.equal(unseenCreate.statusCode, 404);
  const devList = await app.inject({ url, headers: as.developer });
  assert.equal(devList.statusCode, 401);
  assert.deepEqual(devList.json(), { message: '401 Unauthorized' });
  const devGet = await app.inject({ url: `${url}/1`, headers: as.developer });
  assert.equal(devGet.statusCode, 401);
  const devCreate = await app.inject({ method: 'POST', url, headers: as.developer, payload: { name: 'x', scopes: ['api'] } });
  assert.equal(devCreate.statusCode, 400);
  assert.deepEqual(devCreate.json(), { message: '400 Bad request - User does not have permission to create project access token' });
  const owner = await app.inject({ method: 'POST', url, headers: as.maintainer, payload: { name: 'x', scopes: ['api'], access_level: 50 } });
  assert.equal(owner.statusCode, 400);
  assert.deepEqual(owner.json(), { message: '400 Bad request - Access level of the token contains permissions not held by the creating user' });
  assert.deepEqual(await bots(c), []);
  assert.deepEqual(await botMembers(c), []);
  // the group's Owner may give a project token the Owner level
  const ok = await app.inject({ method: 'POST', url, headers: as.groupOwner, payload: { name: 'x', scopes: ['api'], access_level: 50 } });
  assert.equal(ok.statusCode, 201);
  // and a Maintainer may not rotate a token above their level
  const rotate = await app.inject({ method: 'POST', url: `${url}/${ok.json().id}/rotate`, headers: as.maintainer });
  assert.equal(rotate.statusCode, 400);
  assert.deepEqual(rotate.json(), { message: '400 Bad request - Not eligible to rotate token with access level higher than the user' });
});

test('bad input: Grape and service bodies, and no bot, member or token written', async (t) => {
  const { app, c, project, as } = await setup(t);
  const url = `/api/v4/projects/${project.id}/access_tokens`;
  const before = await c.db.kysely.selectFrom('personal_access_tokens').select('id').orderBy('id').execute();
  const usersBefore = await c.db.kysely.selectFrom('users').select('id').orderBy('id').execute();
  const max = addDays(todayDate(), 365);
  const cases: [unknown, unknown][] = [
    [{ scopes: ['api'] }, { error: 'name is missing' }],
    [{ name: 'x' }, { error: 'scopes is missing' }],
    [{ name: 'x', scopes: ['read_user'] }, { error: 'scopes does not have a valid value' }],
    [{ name: 'x', scopes: ['sudo'] }, { error: 'scopes does not have a valid value' }],
    [{ name: 'x', scopes: ['api'], access_level: 35 }, { error: 'access_level does not have a valid value' }],
    [{ name: 'x', scopes: ['api'], expires_at: 'tomorrow' }, { error: 'expires_at is invalid' }],
    [{ name: 'x', scopes: ['api'], expires_at: addDays(todayDate(), -1) }, { message: '400 Bad request - Expires at must be in the future' }],
    [{ name: 'x', scopes: ['api'], expires_at: addDays(todayDate(), 400) }, { message: `400 Bad request - Expires at must be before ${max}` }],
    [{ name: '', scopes: ['api'] }, { message: "400 Bad request - Name can't be blank" }],
    [{ name: 'x', scopes: [] }, { message: "400 Bad request - Scopes can't be blank" }],
  ];
  for (const [payload, body] of cases) {
    const res = await app.inject({ method: 'POST', url, headers: as.maintainer, payload: payload as object });
    assert.equal(res.statusCode, 400, JSON.stringify(payload));
    assert.deepEqual(res.json(), body, JSON.stringify(payload));
  }
  const badId = await app.inject({ url: `${url}/abc`, headers: as.maintainer });
  assert.equal(badId.statusCode, 404);
  assert.deepEqual(badId.json(), { message: '404 project Access Token Not Found' });
  assert.deepEqual(await c.db.kysely.selectFrom('personal_access_tokens').select('id').orderBy('id').execute(), before);
  assert.deepEqual(await c.db.kysely.selectFrom('users').select('id').orderBy('id').execute(), usersBefore);
  assert.deepEqual(await botMembers(c), []);
});

test('a failure inside the creating transaction leaves no bot user and no membership', async (t) => {
  const { app, c, project, as } = await setup(t);
  const original = c.tokens.create.bind(c.tokens);
  c.tokens.create = async () => {
    throw new Error('disk full');
  };
  t.after(() => {
    c.tokens.create = original;
  });
  const usersBefore = await c.db.kysely.selectFrom('users').select('id').orderBy('id').execute();
  const res = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/access_tokens`,
    headers: as.maintainer,
    payload: { name: 'x', scopes: ['api'] },
  });
  assert.equal(res.statusCode, 500);
  assert.deepEqual(await c.db.kysely.selectFrom('users').select('id').orderBy('id').execute(), usersBefore);
  assert.deepEqual(await botMembers(c), []);
});

test('the bots go with their project or group: deleting either deletes its bots, their memberships and tokens', async (t) => {
  const { app, c, project, group, as, root } = await setup(t);
  const made = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/access_tokens`,
    headers: as.maintainer,
    payload: { name: 'p', scopes: ['api'] },
  });
  assert.equal(made.statusCode, 201);
  const groupMade = await app.inject({
    method: 'POST',
    url: `/api/v4/groups/${group.id}/access_tokens`,
    headers: as.groupOwner,
    payload: { name: 'g', scopes: ['api'] },
  });
  assert.equal(groupMade.statusCode, 201);
  assert.equal((await bots(c)).length, 2);
  const delProject = await app.inject({ method: 'DELETE', url: `/api/v4/projects/${project.id}`, headers: root });
  assert.equal(delProject.statusCode, 202);
  assert.deepEqual(
    (await bots(c)).map((b) => b.id),
    [groupMade.json().user_id],
  );
  assert.equal(await patOf(c, made.json().id), undefined);
  const delGroup = await app.inject({ method: 'DELETE', url: `/api/v4/groups/${group.id}`, headers: root });
  assert.equal(delGroup.statusCode, 202);
  assert.deepEqual(await bots(c), []);
  assert.deepEqual(await botMembers(c), []);
  assert.equal((await app.inject({ url: '/api/v4/user', headers: { 'private-token': groupMade.json().token } })).statusCode, 401);
});
