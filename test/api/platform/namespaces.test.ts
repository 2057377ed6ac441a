// GET /namespaces, /namespaces/:id, /namespaces/:id/exists and GET /projects/:id/groups.
import test from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, EXTERNAL_URL } from '../../helpers/build-app.ts';

test('GET /namespaces: own namespace and direct groups for users, everything for administrators', async (t) => {
  const { app, root, seed } = await buildTestApp(t);
  const alice = await seed.user({ username: 'alice', name: 'Alice' });
  const bob = await seed.user({ username: 'bob' });
  const top = await seed.group({ path: 'top', name: 'Top' });
  const sub = await seed.group({ path: 'sub', name: 'Sub', parent: top });
  const other = await seed.group({ path: 'other' });
  await seed.member({ group: top }, alice, 50);
  await seed.member({ group: other }, alice, 30);
  await seed.member({ group: sub }, bob, 40);
  await seed.project({ namespace: sub });
  const aliceNs = await seed.namespaceOf(alice);
  const tok = await seed.token(alice);

  let res = await app.inject({ method: 'GET', url: '/api/v4/namespaces', headers: tok.headers });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['x-total'], '3');
  assert.deepEqual(res.json(), [
    { id: aliceNs.id, name: 'Alice', path: 'alice', kind: 'user', full_path: 'alice', parent_id: null, avatar_url: null, web_url: `${EXTERNAL_URL}/alice` },
    {
      id: top.id,
      name: 'Top',
      path: 'top',
      kind: 'group',
      full_path: 'top',
      parent_id: null,
      avatar_url: null,
      web_url: `${EXTERNAL_URL}/groups/top`,
      // Owner of top: administers it; members of top and sub, projects below it
      members_count_with_descendants: 2,
      root_repository_size: null,
      projects_count: 1,
    },
    {
      id: other.id,
      name: 'other',
      path: 'other',
      kind: 'group',
      full_path: 'other',
      parent_id: null,
      avatar_url: null,
      web_url: `${EXTERNAL_URL}/groups/other`,
    },
  ]);

  res = await app.inject({ method: 'GET', url: '/api/v4/namespaces?owned_only=true', headers: tok.headers });
  assert.deepEqual(
    res.json().map((n: { full_path: string }) => n.full_path),
    ['alice', 'top'],
  );
  res = await app.inject({ method: 'GET', url: '/api/v4/namespaces?search=oth', headers: tok.headers });
  assert.deepEqual(
    res.json().map((n: { full_path: string }) => n.full_path),
    ['other'],
  );
  // short queries match whole names or paths only
  res = await app.inject({ method: 'GET', url: '/api/v4/namespaces?search=to', headers: tok.headers });
  assert.deepEqual(res.json(), []);

  // administrators: every namespace; top_level_only drops the subgroup; full_path_search matches "top/sub"
  res = await app.inject({ method: 'GET', url: '/api/v4/namespaces?per_page=100', headers: root });
  const all = res.json().map((n: { full_path: string }) => n.full_path);
  for (const p of ['root', 'alice', 'bob', 'top', 'top/sub', 'other']) assert.ok(all.includes(p), p);
  res = await app.inject({ method: 'GET', url: '/api/v4/namespaces?top_level_only=true&per_page=100', headers: root });
  assert.ok(!res.json().some((n: { full_path: string }) => n.full_path === 'top/sub'));
  res = await app.inject({ method: 'GET', url: '/api/v4/namespaces?search=top/sub&full_path_search=true', headers: root });
  assert.deepEqual(
    res.json().map((n: { full_path: string }) => n.full_path),
    ['top/sub'],
  );

  res = await app.inject({ method: 'GET', url: '/api/v4/namespaces' });
  assert.equal(res.statusCode, 401);
  assert.deepEqual(res.json(), { message: '401 Unauthorized' });
  res = await app.inject({ method: 'GET', url: '/api/v4/namespaces?owned_only=maybe', headers: tok.headers });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'owned_only is invalid' });
});

test('GET /namespaces/:id by id or path; 404 for what membership does not reach', async (t) => {
  const { app, root, seed } = await buildTestApp(t);
  const alice = await seed.user({ username: 'alice', name: 'Alice' });
  const bob = await seed.user({ username: 'bob' });
  const top = await seed.group({ path: 'top', visibility: 'public' });
  const sub = await seed.group({ path: 'sub', parent: top });
  await seed.member({ group: top }, alice, 10);
  const tok = await seed.token(alice);
  const bobTok = await seed.token(bob);

  let res = await app.inject({ method: 'GET', url: '/api/v4/namespaces/top%2Fsub', headers: tok.headers });
  assert.equal(res.statusCode, 200);
  // a Guest (inherited) sees it, without the administrators' counts
  assert.deepEqual(res.json(), {
    id: sub.id,
    name: 'sub',
    path: 'sub',
    kind: 'group',
    full_path: 'top/sub',
    parent_id: top.id,
    avatar_url: null,
    web_url: `${EXTERNAL_URL}/groups/top/sub`,
  });
  res = await app.inject({ method: 'GET', url: `/api/v4/namespaces/${sub.id}`, headers: tok.headers });
  assert.equal(res.json().full_path, 'top/sub');
  res = await app.inject({ method: 'GET', url: '/api/v4/namespaces/alice', headers: tok.headers });
  assert.equal(res.json().kind, 'user');

  // a public group is not reachable without membership; nor another user's namespace
  for (const id of ['top', 'alice', '999999', '99999999999', 'nope']) {
    res = await app.inject({ method: 'GET', url: `/api/v4/namespaces/${id}`, headers: bobTok.headers });
    assert.equal(res.statusCode, 404, id);
    assert.deepEqual(res.json(), { message: '404 Namespace Not Found' });
  }
  res = await app.inject({ method: 'GET', url: '/api/v4/namespaces/top', headers: root });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().members_count_with_descendants, 1);
  res = await app.inject({ method: 'GET', url: '/api/v4/namespaces/top' });
  assert.equal(res.statusCode, 401);
});

test('GET /namespaces/:id/exists with suggestions', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const alice = await seed.user({ username: 'alice' });
  const tok = await seed.token(alice);
  const top = await seed.group({ path: 'top' });
  await seed.group({ path: 'top1', name: 'top1' });
  await seed.group({ path: 'sub', parent: top });

  let res = await app.inject({ method: 'GET', url: '/api/v4/namespaces/Top/exists', headers: tok.headers });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { exists: true, suggests: ['Top2'] });
  res = await app.inject({ method: 'GET', url: '/api/v4/namespaces/alice/exists', headers: tok.headers });
  assert.deepEqual(res.json(), { exists: true, suggests: ['alice1'] });
  res = await app.inject({ method: 'GET', url: '/api/v4/namespaces/free/exists', headers: tok.headers });
  assert.deepEqual(res.json(), { exists: false, suggests: [] });
  // within a parent
  res = await app.inject({ method: 'GET', url: `/api/v4/namespaces/sub/exists?parent_id=${top.id}`, headers: tok.headers });
  assert.deepEqual(res.json(), { exists: true, suggests: ['sub1'] });
  res = await app.inject({ method: 'GET', url: '/api/v4/namespaces/sub/exists', headers: tok.headers });
  assert.deepEqual(res.json(), { exists: false, suggests: [] });
  res = await app.inject({ method: 'GET', url: '/api/v4/namespaces/sub/exists?parent_id=99999999999', headers: tok.headers });
  assert.deepEqual(res.json(), { exists: false, suggests: [] });
  res = await app.inject({ method: 'GET', url: '/api/v4/namespaces/sub/exists?parent_id=x', headers: tok.headers });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'parent_id is invalid' });
  res = await app.inject({ method: 'GET', url: '/api/v4/namespaces/top/exists' });
  assert.equal(res.statusCode, 401);
});

test('GET /projects/:id/groups: the group and its ancestors, newest first', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const alice = await seed.user({ username: 'alice' });
  const tok = await seed.token(alice);
  const top = await seed.group({ path: 'top', name: 'Top', visibility: 'public' });
  const mid = await seed.group({ path: 'mid', name: 'Mid', parent: top, visibility: 'public' });
  const leaf = await seed.group({ path: 'leaf', name: 'Leaf', parent: mid, visibility: 'public' });
  const project = await seed.project({ namespace: leaf, visibility: 'public' });
  const secret = await seed.project({ namespace: leaf });
  const personal = await seed.project({ owner: alice, visibility: 'public' });

  let res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/groups` });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['x-total'], '3');
  assert.deepEqual(res.json(), [
    { id: leaf.id, web_url: `${EXTERNAL_URL}/groups/top/mid/leaf`, name: 'Leaf', avatar_url: null, full_name: 'Top / Mid / Leaf', full_path: 'top/mid/leaf' },
    { id: mid.id, web_url: `${EXTERNAL_URL}/groups/top/mid`, name: 'Mid', avatar_url: null, full_name: 'Top / Mid', full_path: 'top/mid' },
    { id: top.id, web_url: `${EXTERNAL_URL}/groups/top`, name: 'Top', avatar_url: null, full_name: 'Top', full_path: 'top' },
  ]);
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/top%2Fmid%2Fleaf%2F${project.path}/groups?skip_groups=${mid.id},${top.id}` });
  assert.deepEqual(
    res.json().map((g: { id: number }) => g.id),
    [leaf.id],
  );
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/groups?search=mid&with_shared=true` });
  assert.deepEqual(
    res.json().map((g: { id: number }) => g.id),
    [mid.id],
  );
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/groups?per_page=1&page=2` });
  assert.deepEqual(
    res.json().map((g: { id: number }) => g.id),
    [mid.id],
  );
  assert.match(String(res.headers.link), /rel="next"/);
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${personal.id}/groups`, headers: tok.headers });
  assert.deepEqual(res.json(), []);

  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${secret.id}/groups`, headers: tok.headers });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Project Not Found' });
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/groups?skip_groups=a` });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'skip_groups is invalid' });
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/groups?shared_min_access_level=11` });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'shared_min_access_level does not have a valid value' });
});
