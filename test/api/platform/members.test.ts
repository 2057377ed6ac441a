// Reading members of projects and groups: direct lists, inherited lists (/all), single members,
// filters, pagination, and who may read them (GitLab lib/api/members.rb).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, EXTERNAL_URL, type TestApp } from '../../helpers/build-app.ts';
import type { NamespaceRow, UserRow } from '../../../src/db/schema.ts';

const ref = (u: UserRow) => ({
  id: u.id,
  username: u.username,
  name: u.name,
  state: u.state,
  locked: false,
  avatar_url: null,
  web_url: `${EXTERNAL_URL}/${u.username}`,
});

/** The member body GitLab shows for `user`, from the row in the database. */
async function expected(c: TestApp['c'], source: { group?: NamespaceRow; project?: { id: number } }, u: UserRow, extra: Record<string, unknown> = {}) {
  const row = await c.db.kysely
    .selectFrom('members')
    .selectAll()
    .where('source_type', '=', source.group ? 'Namespace' : 'Project')
    .where('source_id', '=', source.group ? source.group.id : source.project!.id)
    .where('user_id', '=', u.id)
    .executeTakeFirstOrThrow();
  return { ...ref(u), access_level: row.access_level, created_at: row.created_at, expires_at: row.expires_at, membership_state: 'active', ...extra };
}

test('project members: direct list, single member, whole bodies', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const group = await seed.group({ path: 'grp' });
  const project = await seed.project({ namespace: group, path: 'app' });
  const maintainer = await seed.user({ name: 'Maria Maintainer' });
  const developer = await seed.user({ name: 'Dev Eloper' });
  const groupOwner = await seed.user();
  await seed.member({ project }, maintainer, 40);
  await seed.member({ project }, developer, 30, { expires_at: '2999-12-31' });
  await seed.member({ group }, groupOwner, 50);
  const { headers } = await seed.token(developer);

  const res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/members`, headers });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.deepEqual(res.json(), [await expected(c, { project }, maintainer), await expected(c, { project }, developer)]);
  assert.equal(res.headers['x-total'], '2');
  assert.equal(res.headers['x-page'], '1');
  assert.equal(res.headers['x-per-page'], '20');
  assert.equal(res.headers['x-next-page'], '');
  assert.equal(
    res.headers.link,
    `<${EXTERNAL_URL}/api/v4/projects/${project.id}/members?id=${project.id}&page=1&per_page=20>; rel="first", <${EXTERNAL_URL}/api/v4/projects/${project.id}/members?id=${project.id}&page=1&per_page=20>; rel="last"`,
  );

  const one = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/members/${developer.id}`, headers });
  assert.equal(one.statusCode, 200);
  assert.deepEqual(one.json(), await expected(c, { project }, developer));
  assert.equal(one.json().expires_at, '2999-12-31');

  // the project by its full path, URL-encoded
  const byPath = await app.inject({ method: 'GET', url: `/api/v4/projects/grp%2Fapp/members/${maintainer.id}`, headers });
  assert.equal(byPath.statusCode, 200);
  assert.equal(byPath.json().id, maintainer.id);

  // an inherited member is not a direct one: find_by! → "404 Not found"
  const inherited = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/members/${groupOwner.id}`, headers });
  assert.deepEqual([inherited.statusCode, inherited.json()], [404, { message: '404 Not found' }]);
  const unknown = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/members/999999`, headers });
  assert.deepEqual([unknown.statusCode, unknown.json()], [404, { message: '404 Not found' }]);
  const badId = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/members/abc`, headers });
  assert.deepEqual([badId.statusCode, badId.json()], [400, { error: 'user_id is invalid' }]);
});

test('members/all: inherited from the group chain, the highest level per user', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const top = await seed.group({ name: 'Top' });
  const sub = await seed.group({ parent: top, name: 'Sub' });
  const project = await seed.project({ namespace: sub });
  const topOwner = await seed.user();
  const subDev = await seed.user();
  const both = await seed.user();
  const projectOnly = await seed.user();
  const expired = await seed.user();
  const outsider = await seed.user();
  await seed.member({ group: top }, topOwner, 50);
  await seed.member({ group: sub }, subDev, 30);
  await seed.member({ group: top }, both, 20);
  await seed.member({ project }, both, 40); // the project's own row wins, level = highest (40)
  await seed.member({ project }, projectOnly, 10);
  await seed.member({ group: top }, expired, 50, { expires_at: '2020-01-01' });
  const otherGroup = await seed.group();
  await seed.member({ group: otherGroup }, outsider, 50);
  const { headers } = await seed.token(subDev);

  const all = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/members/all`, headers });
  assert.equal(all.statusCode, 200);
  assert.deepEqual(all.json(), [
    await expected(c, { group: top }, topOwner),
    await expected(c, { group: sub }, subDev),
    await expected(c, { project }, both),
    await expected(c, { project }, projectOnly),
  ]);
  assert.equal(all.headers['x-total'], '4');

  // a group row that is higher than the project's own: the level shown is the highest
  await c.db.kysely.updateTable('members').set({ access_level: 50 }).where('user_id', '=', both.id).where('source_type', '=', 'Namespace').execute();
  const one = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/members/all/${both.id}`, headers });
  assert.deepEqual(one.json(), await expected(c, { project }, both, { access_level: 50 }));
  const inheritedOne = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/members/all/${topOwner.id}`, headers });
  assert.deepEqual(inheritedOne.json(), await expected(c, { group: top }, topOwner));
  const missing = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/members/all/${outsider.id}`, headers });
  assert.deepEqual([missing.statusCode, missing.json()], [404, { message: '404 Not found' }]);

  // groups: the subgroup's /all has its own and the top group's members
  const subAll = await app.inject({ method: 'GET', url: `/api/v4/groups/${sub.id}/members/all`, headers });
  assert.deepEqual(
    subAll.json().map((m: { id: number; access_level: number }) => [m.id, m.access_level]),
    [
      [topOwner.id, 50],
      [subDev.id, 30],
      [both.id, 50],
    ],
  );
  const subDirect = await app.inject({ method: 'GET', url: `/api/v4/groups/${sub.id}/members`, headers });
  assert.deepEqual(subDirect.json(), [await expected(c, { group: sub }, subDev)]);
  const topAll = await app.inject({ method: 'GET', url: `/api/v4/groups/${top.id}/members/all`, headers: (await seed.token(topOwner)).headers });
  assert.deepEqual(
    topAll.json().map((m: { id: number }) => m.id),
    [topOwner.id, both.id],
  );
});

test('member lists: query, user_ids, skip_users, pagination', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const group = await seed.group({ visibility: 'public' });
  const users: UserRow[] = [];
  for (const name of ['Alice Archer', 'Bob Baker', 'Carol Cook', 'Dave Dent']) {
    const u = await seed.user({ name, username: name.split(' ')[0].toLowerCase() + Math.random().toString(36).slice(2, 6) });
    users.push(u);
    await seed.member({ group }, u, 30);
  }
  const viewer = (await seed.token(await seed.user())).headers;
  const ids = async (url: string) => (await app.inject({ method: 'GET', url, headers: viewer })).json().map((m: { id: number }) => m.id);
  const base = `/api/v4/groups/${group.id}/members`;

  assert.deepEqual(await ids(`${base}?query=BAKER`), [users[1].id]);
  assert.deepEqual(await ids(`${base}?query=${users[2].username.slice(0, 4)}`), [users[2].id]);
  assert.deepEqual(await ids(`${base}?query=${encodeURIComponent(users[3].email)}`), [users[3].id]);
  assert.deepEqual(
    await ids(`${base}?query=`),
    users.map((u) => u.id),
  );
  assert.deepEqual(await ids(`${base}?user_ids=${users[0].id},${users[2].id},999999`), [users[0].id, users[2].id]);
  assert.deepEqual(await ids(`${base}?user_ids[]=${users[1].id}&user_ids[]=${users[3].id}`), [users[1].id, users[3].id]);
  assert.deepEqual(await ids(`${base}?skip_users=${users[0].id},${users[1].id}`), [users[2].id, users[3].id]);
  assert.deepEqual(await ids(`${base}/all?user_ids=${users[3].id}`), [users[3].id]);
  const bad = await app.inject({ method: 'GET', url: `${base}?user_ids=a,b`, headers: viewer });
  assert.deepEqual([bad.statusCode, bad.json()], [400, { error: 'user_ids is invalid' }]);

  const page = await app.inject({ method: 'GET', url: `${base}?per_page=3&page=2`, headers: viewer });
  assert.deepEqual(
    page.json().map((m: { id: number }) => m.id),
    [users[3].id],
  );
  assert.equal(page.headers['x-total'], '4');
  assert.equal(page.headers['x-total-pages'], '2');
  assert.equal(page.headers['x-prev-page'], '1');
  assert.equal(page.headers['x-next-page'], '');
  assert.match(String(page.headers.link), /rel="prev"/);
  const zero = await app.inject({ method: 'GET', url: `${base}?per_page=0`, headers: viewer });
  assert.deepEqual([zero.statusCode, zero.json()], [400, { error: 'per_page has a value not allowed' }]);
});

test('reading members: 401 anonymous, 404 invisible, 403 without read_*_member', async (t) => {
  const { app, seed, root } = await buildTestApp(t);
  const publicGroup = await seed.group({ visibility: 'public' });
  const privateGroup = await seed.group({ visibility: 'private' });
  const privateSub = await seed.group({ parent: privateGroup, visibility: 'private' });
  const privateProject = await seed.project({ namespace: privateGroup, visibility: 'private' });
  const publicProject = await seed.project({ namespace: publicGroup, visibility: 'public' });
  const subMember = await seed.user();
  await seed.member({ group: privateSub }, subMember, 30);
  const stranger = await seed.user();
  const external = await seed.user({ external: true });
  const s = (await seed.token(stranger)).headers;

  for (const url of [
    `/api/v4/projects/${publicProject.id}/members`,
    `/api/v4/groups/${publicGroup.id}/members/all`,
    `/api/v4/projects/${publicProject.id}/members/1`,
  ]) {
    const anon = await app.inject({ method: 'GET', url });
    assert.deepEqual([anon.statusCode, anon.json()], [401, { message: '401 Unauthorized' }], url);
  }
  assert.equal((await app.inject({ method: 'GET', url: `/api/v4/projects/${publicProject.id}/members`, headers: s })).statusCode, 200);
  assert.equal(
    (await app.inject({ method: 'GET', url: `/api/v4/projects/${publicProject.id}/members`, headers: (await seed.token(external)).headers })).statusCode,
    200,
  );

  const hiddenProject = await app.inject({ method: 'GET', url: `/api/v4/projects/${privateProject.id}/members`, headers: s });
  assert.deepEqual([hiddenProject.statusCode, hiddenProject.json()], [404, { message: '404 Project Not Found' }]);
  const hiddenGroup = await app.inject({ method: 'GET', url: `/api/v4/groups/${privateGroup.id}/members/all`, headers: s });
  assert.deepEqual([hiddenGroup.statusCode, hiddenGroup.json()], [404, { message: '404 Group Not Found' }]);
  const noSuch = await app.inject({ method: 'GET', url: '/api/v4/projects/999999/members', headers: s });
  assert.deepEqual([noSuch.statusCode, noSuch.json()], [404, { message: '404 Project Not Found' }]);

  // a subgroup member sees the private parent group but not its members (GitLab: 403)
  const sm = (await seed.token(subMember)).headers;
  for (const url of [
    `/api/v4/groups/${privateGroup.id}/members`,
    `/api/v4/groups/${privateGroup.id}/members/all`,
    `/api/v4/groups/${privateGroup.id}/members/all/${subMember.id}`,
  ]) {
    const res = await app.inject({ method: 'GET', url, headers: sm });
    assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }], url);
  }
  // administrators read everything, and see members' emails
  const admin = await app.inject({ method: 'GET', url: `/api/v4/groups/${privateSub.id}/members`, headers: root });
  assert.equal(admin.statusCode, 200);
  assert.equal(admin.json()[0].email, subMember.email);
  const own = await app.inject({ method: 'GET', url: `/api/v4/groups/${privateSub.id}/members`, headers: sm });
  assert.equal('email' in own.json()[0], false);
});
