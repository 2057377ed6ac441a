// POST /groups/:id/transfer: to a new parent or the top level, paths and redirects,
// visibility lowered under a more private parent, GitLab's refusals.
import test from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-app.ts';

test('transfer a group with its subgroups and projects under a new parent, then back to the top level', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const owner = await seed.user({ username: 'owner' });
  const tok = await seed.token(owner);
  const src = await seed.group({ path: 'src', visibility: 'public' });
  const child = await seed.group({ path: 'child', parent: src, visibility: 'public' });
  const dest = await seed.group({ path: 'dest', visibility: 'internal' });
  const project = await seed.project({ namespace: child, path: 'app', visibility: 'public' });
  await seed.member({ group: src }, owner, 50);
  await seed.member({ group: dest }, owner, 40);

  let res = await app.inject({ method: 'POST', url: '/api/v4/groups/src/transfer', headers: tok.headers, payload: { group_id: dest.id } });
  assert.equal(res.statusCode, 201);
  const body = res.json();
  assert.equal(body.id, src.id);
  assert.equal(body.full_path, 'dest/src');
  assert.equal(body.parent_id, dest.id);
  assert.equal(body.visibility, 'internal');
  assert.equal(body.full_name, 'dest / src');

  const rows = await c.db.kysely
    .selectFrom('namespaces')
    .select(['id', 'full_path', 'traversal_ids', 'visibility'])
    .where('id', 'in', [src.id, child.id])
    .orderBy('id')
    .execute();
  assert.deepEqual(rows, [
    { id: src.id, full_path: 'dest/src', traversal_ids: `/${dest.id}/${src.id}/`, visibility: 'internal' },
    { id: child.id, full_path: 'dest/src/child', traversal_ids: `/${dest.id}/${src.id}/${child.id}/`, visibility: 'internal' },
  ]);
  const p = await c.db.kysely.selectFrom('projects').select(['namespace_id', 'visibility']).where('id', '=', project.id).executeTakeFirstOrThrow();
  assert.deepEqual(p, { namespace_id: child.id, visibility: 'internal' });
  // the old paths redirect
  res = await app.inject({ method: 'GET', url: '/api/v4/projects/src%2Fchild%2Fapp', headers: tok.headers });
  assert.equal(res.statusCode, 301);
  res = await app.inject({ method: 'GET', url: '/api/v4/groups/src%2Fchild', headers: tok.headers });
  assert.equal(res.statusCode, 301);
  res = await app.inject({ method: 'GET', url: '/api/v4/projects/dest%2Fsrc%2Fchild%2Fapp', headers: tok.headers });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().path_with_namespace, 'dest/src/child/app');

  // back to the top level (no group_id)
  res = await app.inject({ method: 'POST', url: `/api/v4/groups/${src.id}/transfer`, headers: tok.headers });
  assert.equal(res.statusCode, 201);
  assert.equal(res.json().full_path, 'src');
  assert.equal(res.json().parent_id, null);
  const child2 = await c.db.kysely.selectFrom('namespaces').select(['full_path', 'traversal_ids']).where('id', '=', child.id).executeTakeFirstOrThrow();
  assert.deepEqual(child2, { full_path: 'src/child', traversal_ids: `/${src.id}/${child.id}/` });
  res = await app.inject({ method: 'GET', url: '/api/v4/projects/src%2Fchild%2Fapp', headers: tok.headers });
  assert.equal(res.statusCode, 200);
});

test('transfer refusals: GitLab messages, permissions, bad input', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const owner = await seed.user({ username: 'owner' });
  const tok = await seed.token(owner);
  const a = await seed.group({ path: 'a' });
  const sub = await seed.group({ path: 'sub', parent: a });
  const b = await seed.group({ path: 'b' });
  await seed.group({ path: 'sub', parent: b });
  const guestOnly = await seed.group({ path: 'guestonly' });
  await seed.member({ group: a }, owner, 50);
  await seed.member({ group: b }, owner, 50);
  await seed.member({ group: guestOnly }, owner, 10);
  const post = (url: string, payload?: object, headers = tok.headers) => app.inject({ method: 'POST', url, headers, payload });
  const failed = (message: string) => ({ message: `Transfer failed: ${message}` });

  let res = await post('/api/v4/groups/a/transfer');
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), failed('Group is already a root group.'));
  res = await post('/api/v4/groups/a%2Fsub/transfer', { group_id: a.id });
  assert.deepEqual(res.json(), failed('Group is already associated to the parent group.'));
  res = await post('/api/v4/groups/a%2Fsub/transfer', { group_id: guestOnly.id });
  assert.deepEqual(res.json(), failed("You don't have enough permissions."));
  res = await post('/api/v4/groups/a%2Fsub/transfer', { group_id: b.id });
  assert.deepEqual(res.json(), failed('The parent group already has a subgroup or a project with the same path.'));
  res = await post('/api/v4/groups/a/transfer', { group_id: sub.id });
  assert.deepEqual(res.json(), failed('Cannot transfer group to one of its subgroup.'));
  // a project with the group's path in the new parent
  await seed.project({ namespace: b, path: 'x' });
  const x = await seed.group({ path: 'x', parent: a });
  res = await post(`/api/v4/groups/${x.id}/transfer`, { group_id: b.id });
  assert.deepEqual(res.json(), failed('The parent group already has a subgroup or a project with the same path.'));
  // to the top level without the right to create groups
  await c.db.kysely.updateTable('users').set({ can_create_group: 0 }).where('id', '=', owner.id).execute();
  res = await post('/api/v4/groups/a%2Fsub/transfer');
  assert.deepEqual(res.json(), failed("You don't have enough permissions."));

  res = await post('/api/v4/groups/a%2Fsub/transfer', { group_id: 999999 });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Group Not Found' });
  res = await post('/api/v4/groups/a%2Fsub/transfer', { group_id: 99999999999 });
  assert.equal(res.statusCode, 404);
  res = await post('/api/v4/groups/a%2Fsub/transfer', { group_id: 'x' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'group_id is invalid' });
  res = await post('/api/v4/groups/nope/transfer');
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Group Not Found' });
  // a Guest may see the group but not administer it; others do not see it
  res = await post(`/api/v4/groups/${guestOnly.id}/transfer`, { group_id: a.id });
  assert.equal(res.statusCode, 403);
  const stranger = await seed.token(await seed.user());
  res = await post('/api/v4/groups/a%2Fsub/transfer', { group_id: b.id }, stranger.headers);
  assert.equal(res.statusCode, 404);
  res = await app.inject({ method: 'POST', url: '/api/v4/groups/a%2Fsub/transfer' });
  assert.equal(res.statusCode, 401);
  // nothing moved
  const row = await c.db.kysely.selectFrom('namespaces').select(['full_path', 'parent_id']).where('id', '=', sub.id).executeTakeFirstOrThrow();
  assert.deepEqual(row, { full_path: 'a/sub', parent_id: a.id });

  // an administrator makes a subgroup top level: it gets an Owner
  res = await post('/api/v4/groups/a%2Fsub/transfer', undefined, root);
  assert.equal(res.statusCode, 201);
  const owners = await c.db.kysely
    .selectFrom('members')
    .select(['user_id', 'access_level'])
    .where('source_type', '=', 'Namespace')
    .where('source_id', '=', sub.id)
    .execute();
  assert.equal(owners.length, 1);
  assert.equal(owners[0].access_level, 50);
});
