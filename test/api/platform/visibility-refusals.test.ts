// A visibility the user asks for is kept or refused with GitLab's message — never lowered behind their
// back: projects in a more private group (create, update, fork), subgroups, restricted levels.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../../helpers/build-app.ts';

test('create: a project more open than its group is refused (400, the model message) and nothing is stored; unasked, it follows the group', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user();
  const { headers } = await seed.token(u);
  const g = await seed.group({ path: 'secret', visibility: 'private' });
  await seed.member({ group: g }, u, 40);
  const count = async () => (await c.db.kysely.selectFrom('projects').select('id').where('namespace_id', '=', g.id).execute()).length;

  for (const [visibility, group] of [
    ['public', 'private'],
    ['internal', 'private'],
  ]) {
    const res = await app.inject({ method: 'POST', url: '/api/v4/projects', headers, payload: { name: 'p', namespace_id: g.id, visibility } });
    assert.equal(res.statusCode, 400, res.body);
    assert.deepEqual(res.json(), { message: { visibility_level: [`${visibility} is not allowed in a ${group} group.`] } });
  }
  assert.equal(await count(), 0, 'nothing was created');
  // an allowed level is created
  assert.equal(
    (await app.inject({ method: 'POST', url: '/api/v4/projects', headers, payload: { name: 'p', namespace_id: g.id, visibility: 'private' } })).statusCode,
    201,
  );
  // no visibility asked: the default (public here) gives way to the group's, as GitLab's CreateService does
  await c.settings.save({ default_project_visibility: 'public' });
  const res = await app.inject({ method: 'POST', url: '/api/v4/projects', headers, payload: { name: 'q', namespace_id: g.id } });
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(res.json().visibility, 'private');
});

test('update: a project cannot be made more open than its group; the project is unchanged', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user();
  const { headers } = await seed.token(u);
  const g = await seed.group({ path: 'inner', visibility: 'internal' });
  await seed.member({ group: g }, u, 50);
  const p = await seed.project({ namespace: g, path: 'p', visibility: 'internal' });
  const res = await app.inject({ method: 'PUT', url: `/api/v4/projects/${p.id}`, headers, payload: { visibility: 'public' } });
  assert.equal(res.statusCode, 400, res.body);
  assert.deepEqual(res.json(), { message: { visibility_level: ['public is not allowed in a internal group.'] } });
  const row = await c.db.kysely.selectFrom('projects').select(['visibility', 'updated_at']).where('id', '=', p.id).executeTakeFirstOrThrow();
  assert.deepEqual(row, { visibility: 'internal', updated_at: p.updated_at });
});

test("restricted_visibility_levels: GitLab's message for projects and forks; administrators may use them", async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const u = await seed.user();
  const { headers } = await seed.token(u);
  await c.settings.save({ restricted_visibility_levels: ['public'] });
  let res = await app.inject({ method: 'POST', url: '/api/v4/projects', headers, payload: { name: 'q', visibility: 'public' } });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: { visibility_level: ['public has been restricted by your GitLab administrator'] } });
  res = await app.inject({ method: 'POST', url: '/api/v4/projects', headers: root, payload: { name: 'q', visibility: 'public' } });
  assert.equal(res.statusCode, 201);
  assert.equal(res.json().visibility, 'public');
  // a fork asking for the restricted level is refused, not lowered
  res = await app.inject({ method: 'POST', url: `/api/v4/projects/${res.json().id}/fork`, headers, payload: { visibility: 'public' } });
  assert.equal(res.statusCode, 409, res.body);
  assert.deepEqual(res.json(), { message: ['Visibility level public has been restricted by your GitLab administrator'] });
});

test('fork: an asked visibility above the source or the target group is refused (409, full messages); nothing is forked', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user();
  const { headers } = await seed.token(u);
  const g = await seed.group({ path: 'closed', visibility: 'private' });
  await seed.member({ group: g }, u, 40);
  const source = await seed.project({ owner: u, path: 'src', visibility: 'internal' });
  const forks = async () => (await c.db.kysely.selectFrom('project_forks').selectAll().execute()).length;
  const projects = async () => (await c.db.kysely.selectFrom('projects').select('id').execute()).length;
  const before = [await projects(), await forks()];

  let res = await app.inject({ method: 'POST', url: `/api/v4/projects/${source.id}/fork`, headers, payload: { path: 'f1', visibility: 'public' } });
  assert.equal(res.statusCode, 409, res.body);
  assert.deepEqual(res.json(), { message: ['Visibility level public is not allowed since the fork source project has lower visibility.'] });
  res = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${source.id}/fork`,
    headers,
    payload: { path: 'f2', namespace_id: g.id, visibility: 'internal' },
  });
  assert.equal(res.statusCode, 409, res.body);
  assert.deepEqual(res.json(), { message: ['Visibility level internal is not allowed in a private group.'] });
  assert.deepEqual([await projects(), await forks()], before);
  // unasked: the least open of the source and the group
  res = await app.inject({ method: 'POST', url: `/api/v4/projects/${source.id}/fork`, headers, payload: { path: 'f3', namespace_id: g.id } });
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(res.json().visibility, 'private');
});

test('subgroups: more open than the parent is refused on create and update; the group is unchanged', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user();
  const { headers } = await seed.token(u);
  const parent = await seed.group({ path: 'top', visibility: 'private' });
  await seed.member({ group: parent }, u, 50);
  let res = await app.inject({
    method: 'POST',
    url: '/api/v4/groups',
    headers,
    payload: { name: 'sub', path: 'sub', parent_id: parent.id, visibility: 'public' },
  });
  assert.equal(res.statusCode, 400, res.body);
  assert.deepEqual(res.json(), {
    message: 'Failed to save group {:visibility_level=>["public is not allowed since the parent group has a private visibility."]}',
  });
  assert.equal((await c.db.kysely.selectFrom('namespaces').select('id').where('parent_id', '=', parent.id).execute()).length, 0);
  const sub = await seed.group({ path: 'sub', parent, visibility: 'private' });
  res = await app.inject({ method: 'PUT', url: `/api/v4/groups/${sub.id}`, headers, payload: { visibility: 'internal' } });
  assert.equal(res.statusCode, 400, res.body);
  assert.deepEqual(res.json(), { message: { visibility_level: ['internal is not allowed since the parent group has a private visibility.'] } });
  assert.equal((await c.db.kysely.selectFrom('namespaces').select('visibility').where('id', '=', sub.id).executeTakeFirstOrThrow()).visibility, 'private');
});
