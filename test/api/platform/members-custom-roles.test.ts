// A member with a custom role has its base level plus the role's permissions, wherever the policy is
// asked: read_code lets a Guest read code, admin_group_member lets a Guest manage group members, …
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-app.ts';
import { userActor } from '../../../src/domain/access/actor.ts';

test('custom roles take effect through the policy', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const group = await seed.group({ visibility: 'private' });
  const project = await seed.project({ namespace: group, visibility: 'private' });
  const ns = (await c.resolve.namespaceById(group.id))!;
  let n = 0;
  const roleVia = async (permissions: string[]) => {
    // created through the API, as an administrator would
    const res = await app.inject({
      method: 'POST',
      url: '/api/v4/member_roles',
      headers: { 'private-token': 'glpat-test-root-token-0000000000' },
      payload: { name: `${permissions.join('+')} ${++n}`, base_access_level: 10, ...Object.fromEntries(permissions.map((p) => [p, true])) },
    });
    assert.equal(res.statusCode, 201);
    return await c.db.kysely.selectFrom('member_roles').selectAll().where('id', '=', res.json().id).executeTakeFirstOrThrow();
  };
  const guestWith = async (permissions: string[], where: 'project' | 'group' = 'project') => {
    const u = await seed.user();
    const role = permissions.length ? await roleVia(permissions) : undefined;
    await seed.member(where === 'project' ? { project } : { group }, u, 10, role ? { member_role: role } : {});
    return u;
  };
  const projectAbilities = async (u: Awaited<ReturnType<typeof seed.user>>) => (await c.policy.project(userActor(u), project, ns)).abilities;
  const groupAbilities = async (u: Awaited<ReturnType<typeof seed.user>>) => (await c.policy.group(userActor(u), group)).abilities;

  const plain = await guestWith([]);
  const plainAbilities = await projectAbilities(plain);
  for (const a of ['read_code', 'read_runners', 'remove_project', 'archive_project', 'approve_merge_request'] as const)
    assert.equal(plainAbilities.has(a), false, a);
  assert.ok(plainAbilities.has('read_project'));

  const reader = await guestWith(['read_code']);
  assert.ok((await projectAbilities(reader)).has('read_code'));
  assert.ok(!(await projectAbilities(reader)).has('push_code'));

  const runners = await guestWith(['read_runners']);
  assert.ok((await projectAbilities(runners)).has('read_runners'));
  const groupRunners = await guestWith(['read_runners'], 'group');
  assert.ok((await groupAbilities(groupRunners)).has('read_runners'));
  assert.ok((await projectAbilities(groupRunners)).has('read_runners'), 'a group role reaches the group’s projects');

  const remover = await guestWith(['remove_project', 'archive_project']);
  const ra = await projectAbilities(remover);
  assert.ok(ra.has('remove_project'));
  assert.ok(ra.has('archive_project'));
  assert.ok(!ra.has('admin_project'));

  const approver = await guestWith(['admin_merge_request']);
  assert.ok((await projectAbilities(approver)).has('approve_merge_request'));

  const hooks = await guestWith(['admin_web_hook', 'admin_cicd_variables', 'manage_project_access_tokens']);
  const ha = await projectAbilities(hooks);
  for (const a of ['admin_web_hook', 'admin_cicd_variables', 'manage_project_access_tokens'] as const) assert.ok(ha.has(a), a);

  // the role's permissions go when the role is taken away
  await c.db.kysely.updateTable('members').set({ member_role_id: null }).where('user_id', '=', reader.id).execute();
  assert.ok(!(await projectAbilities(reader)).has('read_code'));
});

test('a Guest with admin_group_member manages the group’s members, up to Guest', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const group = await seed.group({ visibility: 'private' });
  const owner = await seed.user();
  await seed.member({ group }, owner, 50);
  const role = await seed.memberRole(10, ['admin_group_member'], { group });
  const manager = await seed.user();
  await seed.member({ group }, manager, 10, { member_role: role });
  const plainGuest = await seed.user();
  await seed.member({ group }, plainGuest, 10);
  const headers = (await seed.token(manager)).headers;
  const url = `/api/v4/groups/${group.id}/members`;
  const newcomer = await seed.user();

  // a plain Guest may not
  const denied = await app.inject({
    method: 'POST',
    url,
    headers: (await seed.token(plainGuest)).headers,
    payload: { user_id: newcomer.id, access_level: 10 },
  });
  assert.equal(denied.statusCode, 403);

  const added = await app.inject({ method: 'POST', url, headers, payload: { user_id: newcomer.id, access_level: 10 } });
  assert.equal(added.statusCode, 201);
  assert.equal(added.json().created_by.id, manager.id);
  // not above its own base level, and not over members above it
  const higher = await app.inject({ method: 'PUT', url: `${url}/${newcomer.id}`, headers, payload: { access_level: 30 } });
  assert.equal(higher.statusCode, 403);
  const ownerChange = await app.inject({ method: 'DELETE', url: `${url}/${owner.id}`, headers });
  assert.equal(ownerChange.statusCode, 403);
  const removed = await app.inject({ method: 'DELETE', url: `${url}/${plainGuest.id}`, headers });
  assert.equal(removed.statusCode, 204);
  const rows = await c.db.kysely.selectFrom('members').select(['user_id', 'access_level']).where('source_id', '=', group.id).orderBy('id').execute();
  assert.deepEqual(rows, [
    { user_id: owner.id, access_level: 50 },
    { user_id: manager.id, access_level: 10 },
    { user_id: newcomer.id, access_level: 10 },
  ]);
  // and read the member list, which a Guest reads anyway
  assert.equal((await app.inject({ method: 'GET', url, headers })).json().length, 3);
});
