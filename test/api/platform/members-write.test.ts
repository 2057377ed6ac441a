// Adding, changing and removing members: GitLab's rules, whole bodies, the rows afterwards and the
// system events written with each change.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, EXTERNAL_URL, type TestApp } from '../../helpers/build-app.ts';
import type { UserRow } from '../../../src/db/schema.ts';
import { addDays, todayDate } from '../../../src/lib/time.ts';

const ref = (u: UserRow) => ({
  id: u.id,
  username: u.username,
  name: u.name,
  state: u.state,
  locked: false,
  avatar_url: null,
  web_url: `${EXTERNAL_URL}/${u.username}`,
});

async function events(c: TestApp['c']) {
  const rows = await c.db.kysely.selectFrom('jobs').select('payload').where('kind', '=', 'system_event').orderBy('id').execute();
  // membership events only (user_create and friends come from the seeds)
  return rows.map((r) => JSON.parse(r.payload)).filter((e) => /_(team|group)$/.test(e.event_name));
}

async function memberRow(c: TestApp['c'], sourceType: 'Project' | 'Namespace', sourceId: number, userId: number) {
  return c.db.kysely
    .selectFrom('members')
    .selectAll()
    .where('source_type', '=', sourceType)
    .where('source_id', '=', sourceId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

test('project: a Maintainer adds a member; the row and the user_add_to_team event', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const group = await seed.group({ path: 'acme' });
  const project = await seed.project({ namespace: group, path: 'web', name: 'Web' });
  const maintainer = await seed.user();
  await seed.member({ project }, maintainer, 40);
  const newcomer = await seed.user();
  const { headers } = await seed.token(maintainer);
  const expiry = addDays(todayDate(), 30);

  const res = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/members`,
    headers,
    payload: { user_id: newcomer.id, access_level: 30, expires_at: expiry },
  });
  assert.equal(res.statusCode, 201);
  assert.equal(res.headers['content-type'], 'application/json');
  const row = (await memberRow(c, 'Project', project.id, newcomer.id))!;
  assert.deepEqual(res.json(), {
    ...ref(newcomer),
    access_level: 30,
    created_at: row.created_at,
    created_by: ref(maintainer),
    expires_at: expiry,
    membership_state: 'active',
  });
  assert.equal(row.access_level, 30);
  assert.equal(row.expires_at, expiry);
  assert.equal(row.created_by_id, maintainer.id);
  assert.equal(row.member_role_id, null);
  assert.deepEqual(await events(c), [
    {
      created_at: row.created_at,
      updated_at: row.updated_at,
      event_name: 'user_add_to_team',
      access_level: 'Developer',
      expires_at: expiry,
      project_id: project.id,
      project_name: 'Web',
      project_path: 'web',
      project_path_with_namespace: 'acme/web',
      project_visibility: 'private',
      user_email: newcomer.email,
      user_name: newcomer.name,
      user_username: newcomer.username,
      user_id: newcomer.id,
    },
  ]);

  // already a member
  const again = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/members`,
    headers,
    payload: { user_id: newcomer.id, access_level: 20 },
  });
  assert.deepEqual([again.statusCode, again.json()], [409, { message: 'Member already exists' }]);
  // by username, a datetime expiry keeps its date
  const other = await seed.user();
  const byName = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/acme%2Fweb/members`,
    headers,
    payload: { username: other.username.toUpperCase(), access_level: '10', expires_at: `${expiry}T10:00:00Z` },
  });
  assert.equal(byName.statusCode, 201);
  assert.equal(byName.json().id, other.id);
  assert.equal(byName.json().expires_at, expiry);
  assert.equal((await events(c)).length, 2);
});

test('project: bad input for POST', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const project = await seed.project();
  const maintainer = await seed.user();
  await seed.member({ project }, maintainer, 40);
  const u = await seed.user();
  const { headers } = await seed.token(maintainer);
  const url = `/api/v4/projects/${project.id}/members`;
  const cases: [Record<string, unknown>, number, unknown][] = [
    [{ user_id: u.id }, 400, { error: 'access_level is missing' }],
    [{ user_id: u.id, access_level: 'high' }, 400, { error: 'access_level is invalid' }],
    [{ access_level: 30 }, 400, { error: 'user_id, username are missing, at least one parameter must be provided' }],
    [{ user_id: u.id, username: u.username, access_level: 30 }, 400, { error: 'user_id, username are mutually exclusive' }],
    [{ user_id: u.id, access_level: 25 }, 400, { message: { access_level: ['is not included in the list'] } }],
    [{ user_id: u.id, access_level: 30, expires_at: '2020-01-01' }, 400, { message: { expires_at: ['cannot be a date in the past'] } }],
    [{ user_id: u.id, access_level: 30, expires_at: 'soon' }, 400, { error: 'expires_at is invalid' }],
    [{ user_id: 999999, access_level: 30 }, 404, { message: '404 User Not Found' }],
    [{ user_id: 'nobody', access_level: 30 }, 404, { message: '404 User Not Found' }],
    [{ username: 'nobody-at-all', access_level: 30 }, 404, { message: '404 User Not Found' }],
    [{ user_id: u.id, access_level: 30, member_role_id: 999999 }, 404, { message: '404 Member Role Not Found' }],
  ];
  for (const [payload, status, body] of cases) {
    const res = await app.inject({ method: 'POST', url, headers, payload });
    assert.deepEqual([res.statusCode, res.json()], [status, body], JSON.stringify(payload));
  }
  assert.equal(await memberRow(c, 'Project', project.id, u.id), undefined);
  assert.deepEqual(await events(c), []);
});

test('project: who may add, change and remove whom', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const group = await seed.group({ visibility: 'public' });
  const project = await seed.project({ namespace: group, visibility: 'public' });
  const privateProject = await seed.project({ visibility: 'private' });
  const owner = await seed.user();
  const maintainer = await seed.user();
  const developer = await seed.user();
  const stranger = await seed.user();
  const target = await seed.user();
  await seed.member({ group }, owner, 50);
  await seed.member({ project }, maintainer, 40);
  await seed.member({ project }, developer, 30);
  const h = async (u: UserRow) => (await seed.token(u)).headers;
  const url = `/api/v4/projects/${project.id}/members`;
  const post = async (u: UserRow | null, payload: Record<string, unknown>, to = url) =>
    app.inject({ method: 'POST', url: to, headers: u ? await h(u) : root, payload });

  const anon = await app.inject({ method: 'POST', url, payload: { user_id: target.id, access_level: 30 } });
  assert.deepEqual([anon.statusCode, anon.json()], [401, { message: '401 Unauthorized' }]);
  for (const who of [developer, stranger]) {
    const res = await post(who, { user_id: target.id, access_level: 10 });
    assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  }
  const hidden = await post(stranger, { user_id: target.id, access_level: 10 }, `/api/v4/projects/${privateProject.id}/members`);
  assert.deepEqual([hidden.statusCode, hidden.json()], [404, { message: '404 Project Not Found' }]);
  // a Maintainer cannot make Owners; an Owner (here through the group) can
  const asOwner = await post(maintainer, { user_id: target.id, access_level: 50 });
  assert.deepEqual([asOwner.statusCode, asOwner.json()], [403, { message: '403 Forbidden' }]);
  assert.equal(await memberRow(c, 'Project', project.id, target.id), undefined);
  assert.equal((await post(owner, { user_id: target.id, access_level: 50 })).statusCode, 201);

  // the Maintainer cannot change or remove that Owner, nor promote someone to Owner
  const mh = await h(maintainer);
  const upOwner = await app.inject({ method: 'PUT', url: `${url}/${target.id}`, headers: mh, payload: { access_level: 40 } });
  assert.deepEqual([upOwner.statusCode, upOwner.json()], [403, { message: '403 Forbidden' }]);
  const delOwner = await app.inject({ method: 'DELETE', url: `${url}/${target.id}`, headers: mh });
  assert.equal(delOwner.statusCode, 403);
  const promote = await app.inject({ method: 'PUT', url: `${url}/${developer.id}`, headers: mh, payload: { access_level: 50 } });
  assert.equal(promote.statusCode, 403);
  // a Developer changes nobody, not even themselves
  const selfUp = await app.inject({ method: 'PUT', url: `${url}/${developer.id}`, headers: await h(developer), payload: { access_level: 40 } });
  assert.equal(selfUp.statusCode, 403);
  const devDel = await app.inject({ method: 'DELETE', url: `${url}/${maintainer.id}`, headers: await h(developer) });
  assert.equal(devDel.statusCode, 403);
  assert.equal((await memberRow(c, 'Project', project.id, developer.id))!.access_level, 30);
  assert.equal((await memberRow(c, 'Project', project.id, target.id))!.access_level, 50);
  // administrators may do anything
  assert.equal((await app.inject({ method: 'PUT', url: `${url}/${target.id}`, headers: root, payload: { access_level: 20 } })).statusCode, 200);
});

test('project: PUT and DELETE with their events', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const project = await seed.project({ name: 'Api', path: 'api' });
  const ns = (await c.resolve.namespaceById(project.namespace_id))!;
  const maintainer = await seed.user();
  const dev = await seed.user();
  await seed.member({ project }, maintainer, 40);
  await seed.member({ project }, dev, 30);
  const { headers } = await seed.token(maintainer);
  const url = `/api/v4/projects/${project.id}/members/${dev.id}`;
  const expiry = addDays(todayDate(), 7);

  const res = await app.inject({ method: 'PUT', url, headers, payload: { access_level: 20, expires_at: expiry } });
  assert.equal(res.statusCode, 200);
  const row = (await memberRow(c, 'Project', project.id, dev.id))!;
  assert.deepEqual(res.json(), { ...ref(dev), access_level: 20, created_at: row.created_at, expires_at: expiry, membership_state: 'active' });
  assert.equal(row.access_level, 20);
  assert.equal(row.expires_at, expiry);
  // expiry kept when not given; taken away with null
  assert.equal((await app.inject({ method: 'PUT', url, headers, payload: { access_level: 30 } })).json().expires_at, expiry);
  assert.equal((await app.inject({ method: 'PUT', url, headers, payload: { access_level: 30, expires_at: null } })).json().expires_at, null);

  const bad: [Record<string, unknown>, number, unknown][] = [
    [{}, 400, { error: 'access_level is missing' }],
    [{ access_level: 25 }, 400, { message: { access_level: ['is not included in the list'] } }],
    [{ access_level: 30, expires_at: '2000-01-01' }, 400, { message: { expires_at: ['cannot be a date in the past'] } }],
  ];
  for (const [payload, status, body] of bad) {
    const r = await app.inject({ method: 'PUT', url, headers, payload });
    assert.deepEqual([r.statusCode, r.json()], [status, body], JSON.stringify(payload));
  }
  const nf = await app.inject({ method: 'PUT', url: `/api/v4/projects/${project.id}/members/999999`, headers, payload: { access_level: 30 } });
  assert.deepEqual([nf.statusCode, nf.json()], [404, { message: '404 Not found' }]);

  // DELETE: If-Unmodified-Since older than the membership → 412
  const stale = await app.inject({ method: 'DELETE', url, headers: { ...headers, 'if-unmodified-since': 'Thu, 01 Jan 2015 00:00:00 GMT' } });
  assert.deepEqual([stale.statusCode, stale.json()], [412, { message: '412 Precondition Failed' }]);
  const del = await app.inject({ method: 'DELETE', url: `${url}?unassign_issuables=true`, headers });
  assert.equal(del.statusCode, 204);
  assert.equal(del.body, '');
  assert.equal(await memberRow(c, 'Project', project.id, dev.id), undefined);
  const again = await app.inject({ method: 'DELETE', url, headers });
  assert.deepEqual([again.statusCode, again.json()], [404, { message: '404 Not found' }]);

  const names = (await events(c)).map((e) => [e.event_name, e.access_level, e.expires_at, e.user_id, e.project_path_with_namespace]);
  assert.deepEqual(names, [
    ['user_update_for_team', 'Reporter', expiry, dev.id, `${ns.full_path}/api`],
    ['user_update_for_team', 'Developer', expiry, dev.id, `${ns.full_path}/api`],
    ['user_update_for_team', 'Developer', null, dev.id, `${ns.full_path}/api`],
    ['user_remove_from_team', 'Developer', null, dev.id, `${ns.full_path}/api`],
  ]);

  // members may leave
  const leave = await app.inject({ method: 'DELETE', url: `/api/v4/projects/${project.id}/members/${maintainer.id}`, headers });
  assert.equal(leave.statusCode, 204);
});

test('project in a personal namespace: its holder is not changed through members', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const holder = await seed.user();
  const project = await seed.project({ owner: holder });
  await seed.member({ project }, holder, 50);
  const dev = await seed.user();
  const { headers } = await seed.token(holder);
  assert.equal(
    (await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/members`, headers, payload: { user_id: dev.id, access_level: 30 } })).statusCode,
    201,
  );
  const demote = await app.inject({ method: 'PUT', url: `/api/v4/projects/${project.id}/members/${holder.id}`, headers, payload: { access_level: 40 } });
  assert.equal(demote.statusCode, 403);
  const leave = await app.inject({ method: 'DELETE', url: `/api/v4/projects/${project.id}/members/${holder.id}`, headers });
  assert.equal(leave.statusCode, 403);
  assert.ok(await memberRow(c, 'Project', project.id, holder.id));
});

test('group: Owners manage members; a Maintainer cannot; the last Owner stays', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const group = await seed.group({ path: 'team', name: 'Team' });
  const owner = await seed.user();
  const maintainer = await seed.user();
  await seed.member({ group }, owner, 50);
  await seed.member({ group }, maintainer, 40);
  const newcomer = await seed.user();
  const oh = (await seed.token(owner)).headers;
  const mh = (await seed.token(maintainer)).headers;
  const url = `/api/v4/groups/${group.id}/members`;

  const denied = await app.inject({ method: 'POST', url, headers: mh, payload: { user_id: newcomer.id, access_level: 10 } });
  assert.deepEqual([denied.statusCode, denied.json()], [403, { message: '403 Forbidden' }]);
  const res = await app.inject({ method: 'POST', url, headers: oh, payload: { user_id: newcomer.id, access_level: 30 } });
  assert.equal(res.statusCode, 201);
  const row = (await memberRow(c, 'Namespace', group.id, newcomer.id))!;
  assert.deepEqual(res.json(), {
    ...ref(newcomer),
    access_level: 30,
    created_at: row.created_at,
    created_by: ref(owner),
    expires_at: null,
    membership_state: 'active',
  });
  assert.deepEqual(await events(c), [
    {
      created_at: row.created_at,
      updated_at: row.updated_at,
      event_name: 'user_add_to_group',
      group_access: 'Developer',
      expires_at: null,
      group_id: group.id,
      group_name: 'Team',
      group_path: 'team',
      full_path: 'team',
      user_email: newcomer.email,
      user_name: newcomer.name,
      user_username: newcomer.username,
      user_id: newcomer.id,
    },
  ]);

  // the only Owner can be neither demoted nor removed, not even by themselves or an administrator
  const demote = await app.inject({ method: 'PUT', url: `${url}/${owner.id}`, headers: oh, payload: { access_level: 40 } });
  assert.deepEqual([demote.statusCode, demote.json()], [403, { message: '403 Forbidden' }]);
  const leave = await app.inject({ method: 'DELETE', url: `${url}/${owner.id}`, headers: oh });
  assert.deepEqual([leave.statusCode, leave.json()], [403, { message: '403 Forbidden' }]);
  assert.equal(
    (await app.inject({ method: 'DELETE', url: `${url}/${owner.id}`, headers: { 'private-token': 'glpat-test-root-token-0000000000' } })).statusCode,
    403,
  );
  assert.equal((await memberRow(c, 'Namespace', group.id, owner.id))!.access_level, 50);

  // with a second Owner the first may go
  assert.equal((await app.inject({ method: 'PUT', url: `${url}/${maintainer.id}`, headers: oh, payload: { access_level: 50 } })).statusCode, 200);
  assert.equal((await app.inject({ method: 'PUT', url: `${url}/${owner.id}`, headers: oh, payload: { access_level: 40 } })).statusCode, 200);
  assert.equal((await app.inject({ method: 'DELETE', url: `${url}/${owner.id}`, headers: oh })).statusCode, 204);
  assert.deepEqual(
    (await events(c)).map((e) => [e.event_name, e.group_access, e.user_id]),
    [
      ['user_add_to_group', 'Developer', newcomer.id],
      ['user_update_for_group', 'Owner', maintainer.id],
      ['user_update_for_group', 'Maintainer', owner.id],
      ['user_remove_from_group', 'Maintainer', owner.id],
    ],
  );
  // the remaining Owner is the last one again
  assert.equal((await app.inject({ method: 'DELETE', url: `${url}/${maintainer.id}`, headers: mh })).statusCode, 403);
});

test('group: an Owner inherited from above keeps a subgroup Owner removable', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const top = await seed.group();
  const sub = await seed.group({ parent: top });
  const topOwner = await seed.user();
  const subOwner = await seed.user();
  await seed.member({ group: top }, topOwner, 50);
  await seed.member({ group: sub }, subOwner, 50);
  const res = await app.inject({ method: 'DELETE', url: `/api/v4/groups/${sub.id}/members/${subOwner.id}`, headers: (await seed.token(subOwner)).headers });
  assert.equal(res.statusCode, 204);
});

test('group: removing a member removes their memberships below unless skip_subresources', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const top = await seed.group();
  const sub = await seed.group({ parent: top });
  const topProject = await seed.project({ namespace: top });
  const subProject = await seed.project({ namespace: sub });
  const elsewhere = await seed.project();
  const owner = await seed.user();
  await seed.member({ group: top }, owner, 50);
  const headers = (await seed.token(owner)).headers;
  const user = await seed.user();
  const other = await seed.user();
  const give = async (u: UserRow) => {
    await seed.member({ group: top }, u, 30);
    await seed.member({ group: sub }, u, 30);
    await seed.member({ project: topProject }, u, 40);
    await seed.member({ project: subProject }, u, 40);
    await seed.member({ project: elsewhere }, u, 40);
  };
  await give(user);
  await give(other);
  const count = async (u: UserRow) => (await c.db.kysely.selectFrom('members').select('id').where('user_id', '=', u.id).execute()).length;

  assert.equal((await app.inject({ method: 'DELETE', url: `/api/v4/groups/${top.id}/members/${user.id}`, headers })).statusCode, 204);
  assert.equal(await count(user), 1); // only the project outside the group remains
  assert.deepEqual(
    (await events(c)).map((e) => [e.event_name, e.group_id ?? e.project_id]).sort(),
    [
      ['user_remove_from_group', top.id],
      ['user_remove_from_group', sub.id],
      ['user_remove_from_team', subProject.id],
      ['user_remove_from_team', topProject.id],
    ].sort(),
  );

  assert.equal((await app.inject({ method: 'DELETE', url: `/api/v4/groups/${top.id}/members/${other.id}?skip_subresources=true`, headers })).statusCode, 204);
  assert.equal(await count(other), 4);
});

test('a membership is never below an inherited one', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const parent = await seed.group({ name: 'Parent Group' });
  const child = await seed.group({ parent });
  const project = await seed.project({ namespace: child });
  const owner = await seed.user();
  await seed.member({ group: parent }, owner, 50);
  const headers = (await seed.token(owner)).headers;
  const dev = await seed.user();
  await seed.member({ group: parent }, dev, 30);
  const message = { message: { access_level: ['should be greater than or equal to Developer inherited membership from group Parent Group'] } };
  for (const url of [`/api/v4/projects/${project.id}/members`, `/api/v4/groups/${child.id}/members`]) {
    const low = await app.inject({ method: 'POST', url, headers, payload: { user_id: dev.id, access_level: 20 } });
    assert.deepEqual([low.statusCode, low.json()], [400, message], url);
    const high = await app.inject({ method: 'POST', url, headers, payload: { user_id: dev.id, access_level: 40 } });
    assert.equal(high.statusCode, 201, url);
    const down = await app.inject({ method: 'PUT', url: `${url}/${dev.id}`, headers, payload: { access_level: 10 } });
    assert.deepEqual([down.statusCode, down.json()], [400, message], url);
  }
});

test('several users at once: GitLab service results', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const group = await seed.group();
  const owner = await seed.user();
  await seed.member({ group }, owner, 50);
  const headers = (await seed.token(owner)).headers;
  const [a, b, d] = [await seed.user(), await seed.user(), await seed.user()];
  await seed.member({ group }, d, 10);
  const url = `/api/v4/groups/${group.id}/members`;

  const ok = await app.inject({ method: 'POST', url, headers, payload: { user_id: `${a.id},${b.id},${d.id},999999`, access_level: 20 } });
  assert.deepEqual([ok.statusCode, ok.json()], [201, { status: 'success' }]);
  assert.equal(ok.headers['content-type'], 'application/json');
  for (const u of [a, b, d]) assert.equal((await memberRow(c, 'Namespace', group.id, u.id))!.access_level, 20);
  assert.deepEqual(
    (await events(c)).map((e) => [e.event_name, e.user_id]),
    [
      ['user_add_to_group', a.id],
      ['user_add_to_group', b.id],
      ['user_update_for_group', d.id],
    ],
  );

  const names = await app.inject({ method: 'POST', url, headers, payload: { username: `${a.username},${b.username}`, access_level: 25 } });
  assert.deepEqual(
    [names.statusCode, names.json()],
    [201, { message: `${a.username}: Access level is not included in the list and ${b.username}: Access level is not included in the list`, status: 'error' }],
  );
  const nobody = await app.inject({ method: 'POST', url, headers, payload: { username: 'ghost1,ghost2', access_level: 20 } });
  assert.deepEqual(nobody.json(), { message: 'No users specified.', status: 'error' });
  const denied = await app.inject({ method: 'POST', url, headers: (await seed.token(a)).headers, payload: { user_id: `${b.id},${d.id}`, access_level: 10 } });
  assert.equal(denied.statusCode, 403);

  // in a subgroup: inherited levels are checked per user, the last Owner is not touched, the rest is added
  const sub = await seed.group({ parent: group, name: 'Sub' });
  const e = await seed.user();
  const mixed = await app.inject({
    method: 'POST',
    url: `/api/v4/groups/${sub.id}/members`,
    headers,
    payload: { user_id: `${a.id},${e.id},${owner.id}`, access_level: 10 },
  });
  assert.deepEqual(
    [mixed.statusCode, mixed.json()],
    [
      201,
      {
        message:
          `${owner.username}: Access level should be greater than or equal to Owner inherited membership from group ${group.name}` +
          ` and ${a.username}: Access level should be greater than or equal to Reporter inherited membership from group ${group.name}`,
        status: 'error',
      },
    ],
  );
  assert.equal((await memberRow(c, 'Namespace', sub.id, e.id))!.access_level, 10);
  assert.equal(await memberRow(c, 'Namespace', sub.id, a.id), undefined);
  const lastOwner = await app.inject({ method: 'POST', url, headers, payload: { user_id: `${owner.id},${e.id}`, access_level: 30 } });
  assert.deepEqual(lastOwner.json(), { message: `${owner.username}: Not authorized to update member`, status: 'error' });
  assert.equal((await memberRow(c, 'Namespace', group.id, owner.id))!.access_level, 50);
  assert.equal((await memberRow(c, 'Namespace', group.id, e.id))!.access_level, 30);
});

test('members with custom roles: assignment, checks and the EE fields', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const group = await seed.group();
  const sub = await seed.group({ parent: group });
  const project = await seed.project({ namespace: sub });
  const foreign = await seed.group();
  const owner = await seed.user();
  await seed.member({ group }, owner, 50);
  const headers = (await seed.token(owner)).headers;
  const instanceRole = await seed.memberRole(10, ['read_code'], { name: 'Reader' });
  const groupRole = await seed.memberRole(20, ['read_runners'], { group, name: 'Runner watcher' });
  const foreignRole = await seed.memberRole(10, ['read_code'], { group: foreign, name: 'Foreign' });
  const u = await seed.user();
  const url = `/api/v4/projects/${project.id}/members`;

  const res = await app.inject({ method: 'POST', url, headers, payload: { user_id: u.id, access_level: 10, member_role_id: instanceRole.id } });
  assert.equal(res.statusCode, 201);
  assert.deepEqual(res.json().member_role, {
    id: instanceRole.id,
    name: 'Reader',
    description: null,
    group_id: null,
    base_access_level: 10,
    admin_cicd_variables: false,
    admin_compliance_framework: false,
    admin_group_member: false,
    admin_merge_request: false,
    admin_push_rules: false,
    admin_infra_state: false,
    admin_vulnerability: false,
    admin_web_hook: false,
    archive_project: false,
    manage_deploy_tokens: false,
    manage_group_access_tokens: false,
    manage_merge_request_settings: false,
    manage_project_access_tokens: false,
    manage_security_policy_link: false,
    read_code: true,
    read_runners: false,
    read_dependency: false,
    read_vulnerability: false,
    remove_group: false,
    remove_project: false,
  });
  assert.equal((await memberRow(c, 'Project', project.id, u.id))!.member_role_id, instanceRole.id);
  const listed = await app.inject({ method: 'GET', url, headers });
  assert.equal(listed.json()[0].member_role.id, instanceRole.id);

  // the level must stay the role's unless the role changes with it
  const locked = await app.inject({ method: 'PUT', url: `${url}/${u.id}`, headers, payload: { access_level: 20 } });
  assert.deepEqual(
    [locked.statusCode, locked.json()],
    [
      400,
      {
        message: {
          access_level: ['cannot be changed because of an existing association with a custom role'],
          member_role_id: ["the custom role's base access level does not match the current access level"],
        },
      },
    ],
  );
  const swap = await app.inject({ method: 'PUT', url: `${url}/${u.id}`, headers, payload: { access_level: 20, member_role_id: groupRole.id } });
  assert.equal(swap.statusCode, 200);
  assert.equal(swap.json().member_role.id, groupRole.id);
  const drop = await app.inject({ method: 'PUT', url: `${url}/${u.id}`, headers, payload: { access_level: 30, member_role_id: null } });
  assert.equal(drop.statusCode, 200);
  assert.equal('member_role' in drop.json(), false);
  assert.equal((await memberRow(c, 'Project', project.id, u.id))!.member_role_id, null);

  const v = await seed.user();
  const mismatch = await app.inject({ method: 'POST', url, headers, payload: { user_id: v.id, access_level: 30, member_role_id: instanceRole.id } });
  assert.deepEqual(
    [mismatch.statusCode, mismatch.json()],
    [400, { message: { member_role_id: ["the custom role's base access level does not match the current access level"] } }],
  );
  const outside = await app.inject({ method: 'POST', url, headers, payload: { user_id: v.id, access_level: 10, member_role_id: foreignRole.id } });
  assert.deepEqual([outside.statusCode, outside.json()], [400, { message: { member_namespace: ["must be in same hierarchy as custom role's namespace"] } }]);
  assert.equal(await memberRow(c, 'Project', project.id, v.id), undefined);
});
