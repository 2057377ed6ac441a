// Member roles: every row of the spec's table with its bad inputs (spec "Member roles", reference §11).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-app.ts';
import { CUSTOM_PERMISSIONS } from '../../../src/domain/core/roles.ts';

/** Every permission false, except those given. */
const perms = (...on: string[]) => Object.fromEntries(CUSTOM_PERMISSIONS.map((p) => [p, on.includes(p)]));

test('instance roles: create with defaults and every permission, list, delete', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const res = await app.inject({
    method: 'POST',
    url: '/api/v4/member_roles',
    headers: root,
    payload: { name: 'Code reader', base_access_level: 10, read_code: true, unknown_permission: true },
  });
  assert.equal(res.statusCode, 201);
  assert.equal(res.headers['content-type'], 'application/json');
  const role = res.json();
  assert.deepEqual(role, { id: role.id, name: 'Code reader', description: null, group_id: null, base_access_level: 10, ...perms('read_code') });
  assert.deepEqual(Object.keys(role), ['id', 'name', 'description', 'group_id', 'base_access_level', ...CUSTOM_PERMISSIONS]);

  const row = await c.db.kysely.selectFrom('member_roles').selectAll().where('id', '=', role.id).executeTakeFirstOrThrow();
  assert.equal(row.namespace_id, null);
  assert.equal(row.description, null);
  assert.deepEqual(JSON.parse(row.permissions), { read_code: true });

  // every permission on, form-encoded booleans, description given
  const all = Object.fromEntries(CUSTOM_PERMISSIONS.map((p) => [p, 'true']));
  const full = await app.inject({
    method: 'POST',
    url: '/api/v4/member_roles',
    headers: { ...root, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ name: 'Everything', description: 'All of it', base_access_level: '30', ...all }).toString(),
  });
  assert.equal(full.statusCode, 201);
  const fullRole = full.json();
  assert.deepEqual(fullRole, {
    id: fullRole.id,
    name: 'Everything',
    description: 'All of it',
    group_id: null,
    base_access_level: 30,
    ...perms(...CUSTOM_PERMISSIONS),
  });

  const list = await app.inject({ method: 'GET', url: '/api/v4/member_roles', headers: root });
  assert.equal(list.statusCode, 200);
  assert.deepEqual(list.json(), [role, fullRole]);

  const del = await app.inject({ method: 'DELETE', url: `/api/v4/member_roles/${role.id}`, headers: root });
  assert.equal(del.statusCode, 204);
  assert.equal(del.body, '');
  assert.equal(await c.db.kysely.selectFrom('member_roles').select('id').where('id', '=', role.id).executeTakeFirst(), undefined);
  assert.deepEqual((await app.inject({ method: 'GET', url: '/api/v4/member_roles', headers: root })).json(), [fullRole]);
});

test('instance roles: bad input', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const post = (payload: Record<string, unknown>) => app.inject({ method: 'POST', url: '/api/v4/member_roles', headers: root, payload });
  const cases: [Record<string, unknown>, number, unknown][] = [
    [{ name: 'x' }, 400, { error: 'base_access_level is missing' }],
    [{ name: 'x', base_access_level: 1 }, 400, { error: 'base_access_level does not have a valid value' }],
    [{ name: 'x', base_access_level: 15 }, 400, { error: 'base_access_level does not have a valid value' }],
    [{ name: 'x', base_access_level: 60 }, 400, { error: 'base_access_level does not have a valid value' }],
    [{ name: 'x', base_access_level: 'abc' }, 400, { error: 'base_access_level is invalid, base_access_level does not have a valid value' }],
    [{ base_access_level: 10 }, 400, { error: 'name is missing' }],
    [{}, 400, { error: 'name is missing, base_access_level is missing' }],
    [{ name: '', base_access_level: 10 }, 400, { message: "Name can't be blank" }],
    [{ name: '   ', base_access_level: 10 }, 400, { message: "Name can't be blank" }],
    [{ name: 'x', base_access_level: 10, read_code: 'maybe' }, 400, { error: 'read_code is invalid' }],
  ];
  for (const [payload, status, body] of cases) {
    const res = await post(payload);
    assert.equal(res.statusCode, status, JSON.stringify(payload));
    assert.deepEqual(res.json(), body, JSON.stringify(payload));
  }
  // the name is unique among instance roles
  assert.equal((await post({ name: 'Dup', base_access_level: 20 })).statusCode, 201);
  const dup = await post({ name: 'Dup', base_access_level: 20 });
  assert.equal(dup.statusCode, 400);
  assert.deepEqual(dup.json(), { message: 'Name has already been taken' });
  const rows = await c.db.kysely.selectFrom('member_roles').select('name').execute();
  assert.deepEqual(
    rows.map((r) => r.name),
    ['Dup'],
  );

  // unknown ids
  for (const method of ['DELETE', 'PUT'] as const) {
    const nf = await app.inject({ method, url: '/api/v4/member_roles/999999', headers: root, payload: { name: 'n' } });
    assert.equal(nf.statusCode, 404);
    assert.deepEqual(nf.json(), { message: '404 Member Role Not Found' });
    const bad = await app.inject({ method, url: '/api/v4/member_roles/abc', headers: root, payload: { name: 'n' } });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), { error: 'member_role_id is invalid' });
  }
});

test('instance roles: administrators only (401 anonymous, 403 others)', async (t) => {
  const { app, seed, root } = await buildTestApp(t);
  const user = await seed.user();
  const { headers } = await seed.token(user);
  const role = await seed.memberRole(10, ['read_code']);
  const calls = [
    { method: 'GET' as const, url: '/api/v4/member_roles' },
    { method: 'POST' as const, url: '/api/v4/member_roles', payload: { name: 'x', base_access_level: 10 } },
    { method: 'PUT' as const, url: `/api/v4/member_roles/${role.id}`, payload: { name: 'y' } },
    { method: 'DELETE' as const, url: `/api/v4/member_roles/${role.id}` },
  ];
  for (const call of calls) {
    const anon = await app.inject(call);
    assert.equal(anon.statusCode, 401, call.method);
    assert.deepEqual(anon.json(), { message: '401 Unauthorized' });
    const other = await app.inject({ ...call, headers });
    assert.equal(other.statusCode, 403, call.method);
    assert.deepEqual(other.json(), { message: '403 Forbidden' });
  }
  // read_api cannot write
  const reader = await seed.token(await seed.user({ is_admin: true }), { scopes: ['read_api', 'admin_mode'] });
  assert.equal((await app.inject({ method: 'GET', url: '/api/v4/member_roles', headers: reader.headers })).statusCode, 200);
  assert.equal(
    (await app.inject({ method: 'POST', url: '/api/v4/member_roles', headers: reader.headers, payload: { name: 'x', base_access_level: 10 } })).statusCode,
    403,
  );
  // the role is still there
  assert.equal((await app.inject({ method: 'GET', url: '/api/v4/member_roles', headers: root })).json().length, 1);
});

test('roles are updated by name and description', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const role = (
    await app.inject({ method: 'POST', url: '/api/v4/member_roles', headers: root, payload: { name: 'Old', base_access_level: 20, read_runners: true } })
  ).json();
  const res = await app.inject({
    method: 'PUT',
    url: `/api/v4/member_roles/${role.id}`,
    headers: root,
    payload: { name: 'New', description: 'Reads runners' },
  });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { ...role, name: 'New', description: 'Reads runners' });
  const desc = await app.inject({ method: 'PUT', url: `/api/v4/member_roles/${role.id}`, headers: root, payload: { description: 'Only this' } });
  assert.deepEqual(desc.json(), { ...role, name: 'New', description: 'Only this' });
  const row = await c.db.kysely.selectFrom('member_roles').selectAll().where('id', '=', role.id).executeTakeFirstOrThrow();
  assert.equal(row.name, 'New');
  assert.equal(row.description, 'Only this');
  assert.equal(row.base_access_level, 20);

  const none = await app.inject({ method: 'PUT', url: `/api/v4/member_roles/${role.id}`, headers: root, payload: { base_access_level: 30 } });
  assert.equal(none.statusCode, 400);
  assert.deepEqual(none.json(), { error: 'name, description are missing, at least one parameter must be provided' });
  const blank = await app.inject({ method: 'PUT', url: `/api/v4/member_roles/${role.id}`, headers: root, payload: { name: '' } });
  assert.deepEqual([blank.statusCode, blank.json()], [400, { message: "Name can't be blank" }]);
  await seed.memberRole(10, [], { name: 'Taken' });
  const taken = await app.inject({ method: 'PUT', url: `/api/v4/member_roles/${role.id}`, headers: root, payload: { name: 'Taken' } });
  assert.deepEqual([taken.statusCode, taken.json()], [400, { message: 'Name has already been taken' }]);

  // group roles through the group's route, by its Owner
  const group = await seed.group();
  const owner = await seed.user();
  await seed.member({ group }, owner, 50);
  const { headers } = await seed.token(owner);
  const gRole = await seed.memberRole(30, ['admin_web_hook'], { group, name: 'Hooks' });
  const g = await app.inject({ method: 'PUT', url: `/api/v4/groups/${group.id}/member_roles/${gRole.id}`, headers, payload: { description: 'Web hooks' } });
  assert.equal(g.statusCode, 200);
  assert.equal(g.json().description, 'Web hooks');
  assert.equal(g.json().group_id, group.id);
  // an instance role is not the group's
  const other = await app.inject({ method: 'PUT', url: `/api/v4/groups/${group.id}/member_roles/${role.id}`, headers, payload: { name: 'x' } });
  assert.deepEqual([other.statusCode, other.json()], [404, { message: '404 Member Role Not Found' }]);
  // the group role is not an instance role
  const viaInstance = await app.inject({ method: 'PUT', url: `/api/v4/member_roles/${gRole.id}`, headers: root, payload: { name: 'x' } });
  assert.equal(viaInstance.statusCode, 404);
});

test('a role still assigned to members is not deleted', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const role = await seed.memberRole(10, ['read_code']);
  const group = await seed.group();
  const user = await seed.user();
  await seed.member({ group }, user, 10, { member_role: role });
  const res = await app.inject({ method: 'DELETE', url: `/api/v4/member_roles/${role.id}`, headers: root });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: 'Role is assigned to one or more group members. Remove role from all group members, then delete role.' });
  assert.ok(await c.db.kysely.selectFrom('member_roles').select('id').where('id', '=', role.id).executeTakeFirst());
  await c.db.kysely.updateTable('members').set({ member_role_id: null }).execute();
  assert.equal((await app.inject({ method: 'DELETE', url: `/api/v4/member_roles/${role.id}`, headers: root })).statusCode, 204);
});

test('group roles: the Owner of a top-level group lists, creates and deletes them', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const group = await seed.group({ path: 'acme' });
  const owner = await seed.user();
  await seed.member({ group }, owner, 50);
  const { headers } = await seed.token(owner);
  await seed.memberRole(10, [], { name: 'Instance role' });

  const empty = await app.inject({ method: 'GET', url: `/api/v4/groups/${group.id}/member_roles`, headers });
  assert.equal(empty.statusCode, 200);
  assert.deepEqual(empty.json(), []);

  const res = await app.inject({
    method: 'POST',
    url: `/api/v4/groups/${group.id}/member_roles`,
    headers,
    payload: { name: 'Guest+', base_access_level: 10, admin_group_member: true, description: 'Manages members' },
  });
  assert.equal(res.statusCode, 201);
  const role = res.json();
  assert.deepEqual(role, {
    id: role.id,
    name: 'Guest+',
    description: 'Manages members',
    group_id: group.id,
    base_access_level: 10,
    ...perms('admin_group_member'),
  });
  // by full path too
  const byPath = await app.inject({ method: 'GET', url: '/api/v4/groups/acme/member_roles', headers });
  assert.deepEqual(byPath.json(), [role]);
  // the same name in another scope is fine, in the same group it is not
  const dup = await app.inject({ method: 'POST', url: `/api/v4/groups/${group.id}/member_roles`, headers, payload: { name: 'Guest+', base_access_level: 20 } });
  assert.deepEqual([dup.statusCode, dup.json()], [400, { message: 'Name has already been taken' }]);
  const instanceSame = await app.inject({ method: 'POST', url: '/api/v4/member_roles', headers: root, payload: { name: 'Guest+', base_access_level: 20 } });
  assert.equal(instanceSame.statusCode, 201);

  // administrators manage group roles too
  const adminList = await app.inject({ method: 'GET', url: `/api/v4/groups/${group.id}/member_roles`, headers: root });
  assert.deepEqual(adminList.json(), [role]);

  const del = await app.inject({ method: 'DELETE', url: `/api/v4/groups/${group.id}/member_roles/${role.id}`, headers });
  assert.equal(del.statusCode, 204);
  assert.equal(await c.db.kysely.selectFrom('member_roles').select('id').where('id', '=', role.id).executeTakeFirst(), undefined);
  const gone = await app.inject({ method: 'DELETE', url: `/api/v4/groups/${group.id}/member_roles/${role.id}`, headers });
  assert.deepEqual([gone.statusCode, gone.json()], [404, { message: '404 Member Role Not Found' }]);
  // an instance role cannot be deleted through a group
  const instanceRole = instanceSame.json();
  const viaGroup = await app.inject({ method: 'DELETE', url: `/api/v4/groups/${group.id}/member_roles/${instanceRole.id}`, headers: root });
  assert.equal(viaGroup.statusCode, 404);
});

test('group roles: bad input, who may, subgroups refused', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const group = await seed.group({ visibility: 'public' });
  const sub = await seed.group({ parent: group, visibility: 'public' });
  const secret = await seed.group({ visibility: 'private' });
  const owner = await seed.user();
  await seed.member({ group }, owner, 50);
  const maintainer = await seed.user();
  await seed.member({ group }, maintainer, 40);
  const stranger = await seed.user();
  const own = (await seed.token(owner)).headers;
  const url = `/api/v4/groups/${group.id}/member_roles`;

  const missing = await app.inject({ method: 'POST', url, headers: own, payload: { name: 'x' } });
  assert.deepEqual([missing.statusCode, missing.json()], [400, { error: 'base_access_level is missing' }]);
  const invalid = await app.inject({ method: 'POST', url, headers: own, payload: { name: 'x', base_access_level: 1 } });
  assert.deepEqual([invalid.statusCode, invalid.json()], [400, { error: 'base_access_level does not have a valid value' }]);

  const anon = await app.inject({ method: 'GET', url });
  assert.deepEqual([anon.statusCode, anon.json()], [401, { message: '401 Unauthorized' }]);
  for (const who of [maintainer, stranger]) {
    const h = (await seed.token(who)).headers;
    for (const call of [
      { method: 'GET' as const, url },
      { method: 'POST' as const, url, payload: { name: 'x', base_access_level: 10 } },
      { method: 'DELETE' as const, url: `${url}/1` },
    ]) {
      const res = await app.inject({ ...call, headers: h });
      assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }], `${who.username} ${call.method}`);
    }
  }
  // an invisible group is a 404 of the group
  const hidden = await app.inject({ method: 'GET', url: `/api/v4/groups/${secret.id}/member_roles`, headers: (await seed.token(stranger)).headers });
  assert.deepEqual([hidden.statusCode, hidden.json()], [404, { message: '404 Group Not Found' }]);
  const unknown = await app.inject({ method: 'GET', url: '/api/v4/groups/999999/member_roles', headers: own });
  assert.deepEqual([unknown.statusCode, unknown.json()], [404, { message: '404 Group Not Found' }]);

  // a subgroup: its Owner (inherited) gets the reference's 400, and sees the top-level group's roles
  const subCreate = await app.inject({
    method: 'POST',
    url: `/api/v4/groups/${sub.id}/member_roles`,
    headers: own,
    payload: { name: 'x', base_access_level: 10 },
  });
  assert.deepEqual([subCreate.statusCode, subCreate.json()], [400, { message: 'Creation of member role is allowed only for root groups' }]);
  const rootRole = await seed.memberRole(20, ['read_code'], { group, name: 'Root role' });
  const subList = await app.inject({ method: 'GET', url: `/api/v4/groups/${sub.id}/member_roles`, headers: own });
  assert.deepEqual(
    subList.json().map((r: { id: number }) => r.id),
    [rootRole.id],
  );
  const subDelete = await app.inject({ method: 'DELETE', url: `/api/v4/groups/${sub.id}/member_roles/${rootRole.id}`, headers: own });
  assert.equal(subDelete.statusCode, 404);
  assert.equal((await c.db.kysely.selectFrom('member_roles').select('id').execute()).length, 1);
});
