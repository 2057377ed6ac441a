// Project stars: POST /projects/:id/star and /unstar (201 with Entities::Project, 304 when nothing
// changes), GET /projects/:id/starrers (Entities::UserStarsProject, search, private profiles),
// GET /users/:id/starred_projects, the starred filter and star_count of project lists.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../../src/db/schema.ts';
import { buildTestApp, EXTERNAL_URL } from '../../helpers/build-app.ts';

const userBasic = (u: UserRow) => ({
  id: u.id,
  username: u.username,
  name: u.name,
  state: 'active',
  locked: false,
  avatar_url: u.avatar_url,
  web_url: `${EXTERNAL_URL}/${u.username}`,
});

async function setup(t: Parameters<typeof buildTestApp>[0]) {
  const ctx = await buildTestApp(t);
  const { seed } = ctx;
  const alice = await seed.user({ name: 'Alice Owner' });
  const bob = await seed.user({ name: 'Bob Star' });
  const carol = await seed.user({ name: 'Carol Star' });
  const project = await seed.project({ owner: alice, visibility: 'public', path: 'shiny' });
  await seed.member({ project }, alice, 50);
  const hidden = await seed.project({ owner: alice, visibility: 'private', path: 'secret' });
  await seed.member({ project: hidden }, alice, 50);
  const as = { alice: (await seed.token(alice)).headers, bob: (await seed.token(bob)).headers, carol: (await seed.token(carol)).headers };
  return { ...ctx, alice, bob, carol, project, hidden, as };
}

test('star and unstar: 201 with the project and its star_count, 304 when nothing changes; starrers and star counts follow', async (t) => {
  const { app, c, alice, bob, carol, project, hidden, as, root } = await setup(t);
  const url = (a: string) => `/api/v4/projects/${project.id}/${a}`;

  let res = await app.inject({ method: 'POST', url: url('star'), headers: as.bob });
  assert.equal(res.statusCode, 201, res.body);
  const starred = res.json();
  const single = await app.inject({ method: 'GET', url: url('').slice(0, -1), headers: as.bob });
  const { permissions: _p, ...expected } = single.json();
  assert.deepEqual(starred, expected);
  assert.equal(starred.star_count, 1);

  res = await app.inject({ method: 'POST', url: url('star'), headers: as.bob });
  assert.deepEqual([res.statusCode, res.body], [304, '']);
  res = await app.inject({ method: 'POST', url: url('star'), headers: as.carol });
  assert.equal(res.json().star_count, 2);
  const rows = await c.db.kysely.selectFrom('users_star_projects').selectAll().orderBy('id').execute();
  assert.deepEqual(
    rows.map((r) => [r.project_id, r.user_id]),
    [
      [project.id, bob.id],
      [project.id, carol.id],
    ],
  );

  // star_count in lists and single projects; the starred filter; order_by=star_count
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}`, headers: as.alice });
  assert.equal(res.json().star_count, 2);
  res = await app.inject({ method: 'GET', url: '/api/v4/projects?starred=true', headers: as.bob });
  assert.deepEqual(
    res.json().map((p: any) => [p.id, p.star_count]),
    [[project.id, 2]],
  );
  res = await app.inject({ method: 'GET', url: '/api/v4/projects?starred=true', headers: as.alice });
  assert.deepEqual(res.json(), []);
  const other = await app.inject({ method: 'POST', url: '/api/v4/projects', headers: as.alice, payload: { name: 'Plain', visibility: 'public' } });
  res = await app.inject({ method: 'GET', url: '/api/v4/projects?order_by=star_count&sort=desc', headers: as.alice });
  assert.deepEqual(
    res.json().map((p: any) => p.id),
    [project.id, other.json().id, hidden.id],
  );
  res = await app.inject({ method: 'GET', url: '/api/v4/projects?order_by=star_count&sort=asc', headers: as.alice });
  assert.deepEqual(
    res.json().map((p: any) => p.id),
    [hidden.id, other.json().id, project.id],
  );

  // starrers: Entities::UserStarsProject, in the order they starred
  res = await app.inject({ method: 'GET', url: url('starrers') });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), [
    { starred_since: rows[0].created_at, user: userBasic(bob) },
    { starred_since: rows[1].created_at, user: userBasic(carol) },
  ]);
  assert.equal(res.headers['x-total'], '2');
  res = await app.inject({ method: 'GET', url: url('starrers?search=CAROL') });
  assert.deepEqual(res.json(), [{ starred_since: rows[1].created_at, user: userBasic(carol) }]);
  res = await app.inject({ method: 'GET', url: url('starrers?search=star') });
  assert.deepEqual(
    res.json().map((s: any) => s.user.id),
    [bob.id, carol.id],
  );
  res = await app.inject({ method: 'GET', url: url(`starrers?search=${carol.email}`) });
  assert.deepEqual(
    res.json().map((s: any) => s.user.id),
    [carol.id],
  );
  // a private profile: hidden but to oneself and administrators
  await c.db.kysely.updateTable('users').set({ private_profile: 1 }).where('id', '=', carol.id).execute();
  const who = async (headers?: Record<string, string>) =>
    (await app.inject({ method: 'GET', url: url('starrers'), headers })).json().map((s: any) => s.user.id);
  assert.deepEqual(await who(), [bob.id]);
  assert.deepEqual(await who(as.bob), [bob.id]);
  assert.deepEqual(await who(as.carol), [bob.id, carol.id]);
  assert.deepEqual(await who(root), [bob.id, carol.id]);

  // starred_projects of a user: hidden with a private profile
  res = await app.inject({ method: 'GET', url: `/api/v4/users/${bob.id}/starred_projects`, headers: as.alice });
  assert.deepEqual(
    res.json().map((p: any) => p.id),
    [project.id],
  );
  res = await app.inject({ method: 'GET', url: `/api/v4/users/${carol.username}/starred_projects`, headers: as.alice });
  assert.deepEqual([res.statusCode, res.json()], [200, []]);
  res = await app.inject({ method: 'GET', url: `/api/v4/users/${carol.username}/starred_projects`, headers: as.carol });
  assert.deepEqual(
    res.json().map((p: any) => p.id),
    [project.id],
  );
  res = await app.inject({ method: 'GET', url: '/api/v4/users/nobody-at-all/starred_projects' });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 User Not Found' }]);

  // unstar: 201 with one star fewer, then 304
  res = await app.inject({ method: 'POST', url: url('unstar'), headers: as.bob });
  assert.deepEqual([res.statusCode, res.json().star_count], [201, 1]);
  res = await app.inject({ method: 'POST', url: url('unstar'), headers: as.bob });
  assert.deepEqual([res.statusCode, res.body], [304, '']);
  res = await app.inject({ method: 'POST', url: url('unstar'), headers: as.alice });
  assert.deepEqual([res.statusCode, res.body], [304, '']);
  void alice;
});

test('stars: who may star, bad inputs, and rows going with their project or user', async (t) => {
  const { app, c, bob, carol, project, hidden, as, root } = await setup(t);
  let res = await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/star` });
  assert.deepEqual([res.statusCode, res.json()], [401, { message: '401 Unauthorized' }]);
  for (const action of ['star', 'unstar', 'starrers']) {
    res = await app.inject({ method: action === 'starrers' ? 'GET' : 'POST', url: `/api/v4/projects/${hidden.id}/${action}`, headers: as.bob });
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Project Not Found' }], action);
    res = await app.inject({ method: 'POST', url: `/api/v4/projects/99999999999/star`, headers: as.bob });
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Project Not Found' }]);
  }
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/starrers?per_page=0` });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'per_page has a value not allowed' }]);
  // read_api tokens may not star
  const readApi = (await ctxToken(app, c, bob)).headers;
  res = await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/star`, headers: readApi });
  assert.equal(res.statusCode, 403);
  // by path
  res = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${encodeURIComponent(`${(await c.db.kysely.selectFrom('namespaces').select('full_path').where('id', '=', project.namespace_id).executeTakeFirstOrThrow()).full_path}/shiny`)}/star`,
    headers: as.bob,
  });
  assert.equal(res.statusCode, 201);
  res = await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/star`, headers: as.carol });
  assert.equal(res.statusCode, 201);
  // a starrer deleted: their stars go; the project deleted: all of its stars go
  res = await app.inject({ method: 'DELETE', url: `/api/v4/users/${carol.id}`, headers: root });
  assert.equal(res.statusCode, 204);
  assert.deepEqual(
    (await c.db.kysely.selectFrom('users_star_projects').select('user_id').execute()).map((r) => r.user_id),
    [bob.id],
  );
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}`, headers: as.bob });
  assert.equal(res.json().star_count, 1);
  res = await app.inject({ method: 'DELETE', url: `/api/v4/projects/${project.id}`, headers: root });
  assert.equal(res.statusCode, 202);
  assert.deepEqual(await c.db.kysely.selectFrom('users_star_projects').selectAll().execute(), []);
});

async function ctxToken(_app: unknown, c: { tokens: { create: (u: UserRow, i: any) => Promise<{ token?: string }> } }, user: UserRow) {
  const t = await c.tokens.create(user, { name: 'ro', scopes: ['read_api'], expires_at: null });
  return { headers: { 'private-token': t.token! } };
}
