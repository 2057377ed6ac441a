// GET /users filters: created_after / created_before for every caller; without_projects
// excludes every user with access to a project (personal owner, direct member, member through a group).
import test from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-app.ts';

test('created_after and created_before filter for every caller', async (t) => {
  const { app, c, root, seed } = await buildTestApp(t);
  const old = await seed.user({ username: 'old' });
  const mid = await seed.user({ username: 'mid' });
  const recent = await seed.user({ username: 'recent' });
  const set = (id: number, at: string) => c.db.kysely.updateTable('users').set({ created_at: at }).where('id', '=', id).execute();
  await set(old.id, '2020-01-01T00:00:00.000Z');
  await set(mid.id, '2022-06-01T00:00:00.000Z');
  await set(recent.id, '2024-01-01T00:00:00.000Z');
  const tok = await seed.token(mid);
  const names = (res: { json(): unknown }) => (res.json() as { username: string }[]).map((u) => u.username);

  for (const headers of [tok.headers, root]) {
    let res = await app.inject({ method: 'GET', url: '/api/v4/users?created_after=2021-01-01&created_before=2023-01-01', headers });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(names(res), ['mid']);
    res = await app.inject({ method: 'GET', url: '/api/v4/users?created_before=2021-01-01T00:00:00Z', headers });
    assert.deepEqual(names(res), ['old']);
    res = await app.inject({ method: 'GET', url: '/api/v4/users?created_after=soon', headers });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { error: 'created_after is invalid' });
  }
  // the filter is kept in the Link header of a non-administrator's page
  const res = await app.inject({ method: 'GET', url: '/api/v4/users?created_after=2021-01-01&per_page=1', headers: tok.headers });
  assert.match(String(res.headers.link), /created_after=2021-01-01/);
});

test('without_projects excludes personal owners, project members and group members of groups with projects', async (t) => {
  const { app, root, seed } = await buildTestApp(t);
  const personal = await seed.user({ username: 'personal' });
  const direct = await seed.user({ username: 'direct' });
  const viaGroup = await seed.user({ username: 'viagroup' });
  const viaParent = await seed.user({ username: 'viaparent' });
  const emptyGroup = await seed.user({ username: 'emptygroup' });
  const expired = await seed.user({ username: 'expired' });
  await seed.user({ username: 'nothing' });
  await seed.project({ owner: personal });
  const top = await seed.group({ path: 'top' });
  const sub = await seed.group({ path: 'sub', parent: top });
  const empty = await seed.group({ path: 'empty' });
  const project = await seed.project({ namespace: sub });
  const other = await seed.project({ namespace: empty === top ? top : await seed.group({ path: 'x' }) });
  await seed.member({ project: other }, direct, 30);
  await seed.member({ group: sub }, viaGroup, 10);
  await seed.member({ group: top }, viaParent, 40);
  await seed.member({ group: empty }, emptyGroup, 50);
  await seed.member({ project }, expired, 30, { expires_at: '2001-01-01' });

  const res = await app.inject({ method: 'GET', url: '/api/v4/users?without_projects=true&per_page=100&sort=asc', headers: root });
  assert.equal(res.statusCode, 200);
  const names = (res.json() as { username: string }[]).map((u) => u.username);
  assert.deepEqual(names, ['root', 'emptygroup', 'expired', 'nothing']);

  // administrators only: ignored for others
  const tok = await seed.token(personal);
  const mine = await app.inject({ method: 'GET', url: '/api/v4/users?without_projects=true&per_page=100', headers: tok.headers });
  assert.ok((mine.json() as { username: string }[]).some((u) => u.username === 'personal'));
});
