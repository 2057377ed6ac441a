// GET /users (filters, viewers, shapes), GET /users/:id and GET /user.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container } from '../../../src/container.ts';
import type { NewUser, UserRow } from '../../../src/db/schema.ts';
import { nowIso } from '../../../src/lib/time.ts';
import { userRow } from '../../helpers/rows.ts';
import { buildTestApp, EXTERNAL_URL } from '../../helpers/build-app.ts';
import { assertSearchIndexesInSync } from '../../helpers/search-index.ts';

/** Users straight into the table (no password hashing), with GitLab's defaults. */
async function insertUser(c: Container, attrs: Partial<NewUser> & { username: string }): Promise<UserRow> {
  const _now = nowIso();
  return c.db.kysely.insertInto('users').values(userRow(attrs.username, attrs)).returningAll().executeTakeFirstOrThrow();
}

const basic = (u: UserRow, locked = false) => ({
  id: u.id,
  username: u.username,
  name: u.name,
  state: u.state,
  locked,
  avatar_url: u.avatar_url,
  web_url: `${EXTERNAL_URL}/${u.username}`,
});

const profile = (u: UserRow) => ({
  ...basic(u),
  created_at: u.created_at,
  bio: u.bio,
  location: u.location,
  public_email: u.public_email,
  messenger_a: u.messenger_a,
  network_a: u.network_a,
  network_b: u.network_b,
  chat_a: u.chat_a,
  website_url: u.website_url,
  organization: u.organization,
  job_title: u.job_title,
  pronouns: u.pronouns,
  bot: false,
  work_information: null,
  followers: 0,
  following: 0,
  is_followed: false,
  local_time: null,
});

const self = (u: UserRow, identities: unknown[] = []) => ({
  ...profile(u),
  last_sign_in_at: u.last_sign_in_at,
  confirmed_at: u.confirmed_at,
  last_activity_on: u.last_activity_on,
  email: u.email,
  theme_id: u.theme_id,
  color_scheme_id: u.color_scheme_id,
  projects_limit: u.projects_limit,
  current_sign_in_at: u.current_sign_in_at,
  identities,
  can_create_group: u.can_create_group === 1,
  can_create_project: true,
  two_factor_enabled: u.two_factor_enabled === 1,
  external: u.external === 1,
  private_profile: u.private_profile === 1,
  commit_email: u.commit_email ?? u.email,
});

const adminView = (u: UserRow, extra: Record<string, unknown> = {}) => ({
  ...self(u),
  is_admin: u.is_admin === 1,
  note: u.note,
  namespace_id: null,
  sign_in_count: u.sign_in_count,
  current_sign_in_ip: u.current_sign_in_ip,
  last_sign_in_ip: u.last_sign_in_ip,
  created_by: null,
  email_reset_offered_at: null,
  ...extra,
});

const ids = (res: { json(): unknown }) => (res.json() as { id: number }[]).map((u) => u.id);

test('anonymous callers must name a username; they get [] or [user] in the basic shape, blocked users hidden', async (t) => {
  const { app, c } = await buildTestApp(t);
  const alice = await insertUser(c, { username: 'Alice', name: 'Alice A' });
  await insertUser(c, { username: 'bob', state: 'blocked' });

  let res = await app.inject({ method: 'GET', url: '/api/v4/users' });
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: '403 Forbidden - Not authorized to access /api/v4/users' });
  res = await app.inject({ method: 'GET', url: '/api/v4/users?username=' });
  assert.equal(res.statusCode, 403);
  res = await app.inject({ method: 'GET', url: '/api/v4/users?search=alice' });
  assert.equal(res.statusCode, 403);

  res = await app.inject({ method: 'GET', url: '/api/v4/users?username=aLiCe' });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.deepEqual(res.json(), [basic(alice)]);
  assert.equal(res.headers['x-total'], '1');

  res = await app.inject({ method: 'GET', url: '/api/v4/users?username=bob' });
  assert.deepEqual(res.json(), []);
  res = await app.inject({ method: 'GET', url: '/api/v4/users?username=nobody' });
  assert.deepEqual(res.json(), []);
  res = await app.inject({ method: 'GET', url: '/api/v4/users?username=Alic' });
  assert.deepEqual(res.json(), []);
});

test('signed-in non-administrators: basic shape, id desc, blocked and banned users hidden, blocked=true finds none', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const me = await seed.user({ username: 'member' });
  const tok = await seed.token(me);
  const a = await insertUser(c, { username: 'a1' });
  await insertUser(c, { username: 'b1', state: 'blocked' });
  await insertUser(c, { username: 'b2', state: 'ldap_blocked' });
  await insertUser(c, { username: 'b3', state: 'banned' });
  const d = await insertUser(c, { username: 'd1', state: 'deactivated' });
  const root = (await c.users.byId(1))!;

  const res = await app.inject({ method: 'GET', url: '/api/v4/users', headers: tok.headers });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), [basic(d), basic(a), basic(me), basic(root)]);
  assert.equal(res.headers['x-total'], '4');

  const blocked = await app.inject({ method: 'GET', url: '/api/v4/users?blocked=true', headers: tok.headers });
  assert.deepEqual(blocked.json(), []);
});

test('administrators see every state and the administrator shape; blocked=true means blocked and ldap_blocked', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const b1 = await insertUser(c, { username: 'b1', state: 'blocked' });
  const b2 = await insertUser(c, { username: 'b2', state: 'ldap_blocked' });
  await insertUser(c, { username: 'b3', state: 'banned' });
  await insertUser(c, { username: 'p1', state: 'blocked_pending_approval' });

  const all = await app.inject({ method: 'GET', url: '/api/v4/users', headers: root });
  assert.equal(all.json().length, 5);
  const res = await app.inject({ method: 'GET', url: '/api/v4/users?blocked=true', headers: root });
  assert.deepEqual(res.json(), [adminView(b2), adminView(b1)]);
  const f = await app.inject({ method: 'GET', url: '/api/v4/users?blocked=false', headers: root });
  assert.equal(f.json().length, 5, 'false is no filter');
});

test('the administrator shape: identities, created_by reference, work_information, commit_email default, locked', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const creator = await insertUser(c, { username: 'creator', name: 'The Creator', avatar_url: 'http://img/c.png' });
  const u = await insertUser(c, {
    username: 'worker',
    name: 'Worker',
    created_by_id: creator.id,
    job_title: 'Engineer',
    organization: 'ACME',
    bio: 'Hello',
    location: 'Berlin',
    pronouns: 'they/them',
    website_url: 'https://w.example',
    messenger_a: 'm',
    network_a: 'na',
    network_b: 'nb',
    chat_a: 'c',
    note: 'VIP',
    sign_in_count: 3,
    last_sign_in_ip: '10.0.0.1',
    current_sign_in_ip: '10.0.0.2',
    last_activity_on: '2026-01-02',
    two_factor_enabled: 1,
    external: 1,
    commit_email: 'worker@example.com',
    locked_at: new Date(Date.now() - 60_000).toISOString(),
  });
  await c.db.kysely
    .insertInto('identities')
    .values([
      { user_id: u.id, provider: 'github', extern_uid: 'gh-1', saml_provider_id: null, created_at: nowIso() },
      { user_id: u.id, provider: 'group_saml', extern_uid: 's-1', saml_provider_id: 10, created_at: nowIso() },
    ])
    .execute();

  const res = await app.inject({ method: 'GET', url: `/api/v4/users/${u.id}`, headers: root });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(
    res.json(),
    adminView(u, {
      locked: true,
      work_information: 'Engineer at ACME',
      identities: [
        { provider: 'github', extern_uid: 'gh-1', saml_provider_id: null },
        { provider: 'group_saml', extern_uid: 's-1', saml_provider_id: 10 },
      ],
      created_by: basic(creator),
    }),
  );

  // The same shape in the list.
  const list = await app.inject({ method: 'GET', url: `/api/v4/users?username=worker`, headers: root });
  assert.deepEqual(list.json(), [res.json()]);

  // A lock older than the unlock period (10 minutes by default) has expired.
  await c.db.kysely
    .updateTable('users')
    .set({ locked_at: new Date(Date.now() - 11 * 60_000).toISOString() })
    .where('id', '=', u.id)
    .execute();
  assert.equal((await app.inject({ method: 'GET', url: `/api/v4/users/${u.id}`, headers: root })).json().locked, false);
  await c.settings.save({ failed_login_attempts_unlock_period_in_minutes: 30 });
  assert.equal((await app.inject({ method: 'GET', url: `/api/v4/users/${u.id}`, headers: root })).json().locked, true);
});

test('work_information: job title alone, organization alone, neither', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const a = await insertUser(c, { username: 'a', job_title: 'CTO' });
  const b = await insertUser(c, { username: 'b', organization: 'ACME' });
  const get = async (u: UserRow) => (await app.inject({ method: 'GET', url: `/api/v4/users/${u.id}`, headers: root })).json().work_information;
  assert.equal(await get(a), 'CTO');
  assert.equal(await get(b), 'ACME');
  assert.equal(await get((await c.users.byId(1))!), null);
});

test('search: name and username fuzzy, public email exact; administrators also match primary email', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const me = await seed.user({ username: 'viewer', name: 'Viewer' });
  const tok = await seed.token(me);
  const john = await insertUser(c, { username: 'jsmith', name: 'John Smith', public_email: 'John@Example.com', email: 'john.private@example.com' });
  const johanna = await insertUser(c, { username: 'johanna', name: 'Johanna Doe' });
  const jo = await insertUser(c, { username: 'jo', name: 'Jo' });

  const search = async (q: string, headers = tok.headers) =>
    ids(await app.inject({ method: 'GET', url: `/api/v4/users?search=${encodeURIComponent(q)}`, headers }));
  // Relevance for non-administrators: exact public email, exact username, exact name, then by name.
  assert.deepEqual(await search('joh'), [johanna.id, john.id]);
  assert.deepEqual(await search('JOHN SMITH'), [john.id]);
  assert.deepEqual(await search('smith john'), [john.id], 'every word must match');
  assert.deepEqual(await search('john@example.com'), [john.id], 'public email, case-insensitive');
  assert.deepEqual(await search('john@example'), [], 'email needs the full address');
  assert.deepEqual(await search('john.private@example.com'), [], 'private email only for administrators');
  assert.deepEqual(await search('john.private@example.com', root), [john.id]);
  // Short terms must match a whole name or username.
  assert.deepEqual(await search('jo'), [jo.id]);
  assert.deepEqual(await search('@jsmith'), [john.id], 'a leading @ is ignored');
  assert.deepEqual(await search('@'), []);
  assert.deepEqual(await search('100%'), [], '% is literal');
  assert.equal((await search('')).length, 5, 'blank search is no filter');
  assert.equal((await search('   ')).length, 5);
  // Administrators get order_by (id desc by default), not relevance.
  assert.deepEqual(
    await search('joh', root),
    [johanna.id, john.id].sort((x, y) => y - x),
  );
});

test('search: the same users for mixed case, quoted phrases, %, _, ", non-ASCII and short words; renames and deletions at once', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const sqlite = c.db.dialect === 'sqlite';
  const nancy = await insertUser(c, { username: 'ann_lee', name: 'Ann "Nancy" Lee' });
  const ann = await insertUser(c, { username: 'annlee', name: 'Ann Lee 100%' });
  const pat = await insertUser(c, { username: 'pat', name: 'Pat O"Brien' });
  const jurgen = await insertUser(c, { username: 'mueller', name: 'Jürgen Müller' });
  const ecole = await insertUser(c, { username: 'ecole', name: 'École Élan' });
  const smile = await insertUser(c, { username: 'smiley', name: 'Smile 😀ab' });
  // administrators: id desc
  const search = async (q: string) => ids(await app.inject({ method: 'GET', url: `/api/v4/users?search=${encodeURIComponent(q)}`, headers: root }));
  assert.deepEqual(await search('ANN lee'), [ann.id, nancy.id]);
  assert.deepEqual(await search('"ann lee"'), [ann.id], 'a quoted phrase is one word');
  assert.deepEqual(await search('lee "ann lee"'), [ann.id]);
  assert.deepEqual(await search('ann_'), [nancy.id], '_ is literal');
  assert.deepEqual(await search('nn_l'), [nancy.id]);
  assert.deepEqual(await search('100%'), [ann.id], '% is literal');
  assert.deepEqual(await search('0%'), [], 'two characters: a whole name or username');
  assert.deepEqual(await search('o"brien'), [pat.id], 'a " inside a word');
  assert.deepEqual(await search('"nancy"'), [nancy.id]);
  assert.deepEqual(await search('MÜLLER jürgen'), [jurgen.id], 'the word lowered, the name as it is');
  assert.deepEqual(await search('cole'), [ecole.id]);
  // SQLite's lower() lowers ASCII letters only (PostgreSQL's every letter): the name's É stays É
  assert.deepEqual(await search('élan'), sqlite ? [] : [ecole.id]);
  assert.deepEqual(await search('😀a'), [smile.id], 'three UTF-16 units, two characters');
  assert.deepEqual(await search('😀ab'), [smile.id]);
  // the index follows renames and deletions
  await c.db.kysely.updateTable('users').set({ name: 'Zed Quux' }).where('id', '=', nancy.id).execute();
  await c.db.kysely.updateTable('users').set({ username: 'brien' }).where('id', '=', pat.id).execute();
  await c.db.kysely.deleteFrom('users').where('id', '=', ecole.id).execute();
  assert.deepEqual(await search('nancy'), []);
  assert.deepEqual(await search('quux'), [nancy.id]);
  assert.deepEqual(await search('ann lee'), [ann.id, nancy.id], 'the username is still ann_lee');
  assert.deepEqual(await search('brien'), [pat.id]);
  assert.deepEqual(await search('cole'), []);
  await assertSearchIndexesInSync(c);
});

test('state and type filters: active, external, exclude_external, exclude_internal, without_project_bots, admins', async (t) => {
  const { app, c, root, seed } = await buildTestApp(t);
  const rootUser = (await c.users.byId(1))!;
  const ext = await insertUser(c, { username: 'ext', external: 1 });
  const deact = await insertUser(c, { username: 'deact', state: 'deactivated' });
  const alert = await insertUser(c, { username: 'alert', user_type: 'alert_bot', bot: 1 });
  const pbot = await insertUser(c, { username: 'pbot', user_type: 'project_bot', bot: 1 });
  const admin2 = await insertUser(c, { username: 'admin2', is_admin: 1 });
  const get = async (qs: string, headers = root) => ids(await app.inject({ method: 'GET', url: `/api/v4/users?${qs}`, headers }));

  assert.deepEqual(await get('active=true'), [admin2.id, pbot.id, ext.id, rootUser.id], 'active excludes internal users');
  assert.deepEqual(await get('active=false'), [admin2.id, pbot.id, alert.id, deact.id, ext.id, rootUser.id]);
  assert.deepEqual(await get('external=true'), [ext.id]);
  assert.deepEqual(await get('external=false'), await get(''));
  assert.deepEqual(await get('exclude_external=true'), [admin2.id, pbot.id, alert.id, deact.id, rootUser.id]);
  assert.deepEqual(await get('exclude_internal=true'), [admin2.id, pbot.id, deact.id, ext.id, rootUser.id]);
  assert.deepEqual(await get('without_project_bots=1'), [admin2.id, alert.id, deact.id, ext.id, rootUser.id]);
  assert.deepEqual(await get('admins=yes'), [admin2.id, rootUser.id]);
  assert.deepEqual(await get('active=true&exclude_external=true&without_project_bots=true'), [admin2.id, rootUser.id]);
  assert.deepEqual(await get('without_projects=true'), await get(''), 'no projects yet: everybody');

  // bot is shown in the single view
  const bot = await app.inject({ method: 'GET', url: `/api/v4/users/${alert.id}`, headers: root });
  assert.equal(bot.json().bot, true);

  // admins is an administrator filter: ignored for others
  const me = await seed.user();
  const tok = await seed.token(me);
  assert.equal((await get('admins=true', tok.headers)).length, 7);
});

test('administrator filters: created_after/before, two_factor, extern_uid with provider, custom attributes, order_by and sort', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const rootUser = (await c.users.byId(1))!;
  const old = await insertUser(c, { username: 'old', name: 'Zed', created_at: '2020-01-01T00:00:00.000Z', updated_at: '2024-01-01T00:00:00.000Z' });
  const mid = await insertUser(c, {
    username: 'mid',
    name: 'Amy',
    created_at: '2021-06-01T12:00:00.000Z',
    updated_at: '2021-06-01T12:00:00.000Z',
    two_factor_enabled: 1,
  });
  const get = async (qs: string) => ids(await app.inject({ method: 'GET', url: `/api/v4/users?${qs}`, headers: root }));

  assert.deepEqual(await get('created_before=2021-01-01'), [old.id]);
  assert.deepEqual(await get('created_after=2021-06-01T12:00:00Z&created_before=2022-01-01T00:00:00.000Z'), [mid.id]);
  assert.deepEqual(await get('created_after=2021-06-01T12:00:00.001Z&created_before=2022-01-01'), []);
  assert.deepEqual(await get('two_factor=enabled'), [mid.id]);
  assert.deepEqual(await get('two_factor=disabled'), [old.id, rootUser.id]);
  assert.deepEqual(await get('two_factor=whatever'), [mid.id, old.id, rootUser.id]);

  await c.db.kysely
    .insertInto('identities')
    .values({ user_id: mid.id, provider: 'ldapmain', extern_uid: 'uid=Mid,dc=example', saml_provider_id: null, created_at: nowIso() })
    .execute();
  assert.deepEqual(await get('extern_uid=uid%3Dmid%2Cdc%3Dexample&provider=ldapmain'), [mid.id], 'extern_uid is case-insensitive');
  assert.deepEqual(await get('extern_uid=uid%3Dmid%2Cdc%3Dexample&provider=github'), []);

  const now = nowIso();
  await c.db.kysely
    .insertInto('user_custom_attributes')
    .values([
      { user_id: old.id, key: 'team', value: 'blue', created_at: now, updated_at: now },
      { user_id: old.id, key: 'tier', value: 'gold', created_at: now, updated_at: now },
      { user_id: mid.id, key: 'team', value: 'blue', created_at: now, updated_at: now },
    ])
    .execute();
  assert.deepEqual(await get('custom_attributes[team]=blue'), [mid.id, old.id]);
  assert.deepEqual(await get('custom_attributes[team]=blue&custom_attributes[tier]=gold'), [old.id]);
  assert.deepEqual(await get('custom_attributes[team]=red'), []);

  const withAttrs = await app.inject({ method: 'GET', url: '/api/v4/users?with_custom_attributes=true&order_by=id&sort=asc', headers: root });
  assert.deepEqual(
    withAttrs.json().map((u: { custom_attributes: unknown }) => u.custom_attributes),
    [
      [],
      [
        { key: 'team', value: 'blue' },
        { key: 'tier', value: 'gold' },
      ],
      [{ key: 'team', value: 'blue' }],
    ],
  );
  const without = await app.inject({ method: 'GET', url: '/api/v4/users', headers: root });
  assert.equal('custom_attributes' in without.json()[0], false);

  // Names: Administrator (root), Amy, Zed.
  assert.deepEqual(await get('order_by=name&sort=asc'), [rootUser.id, mid.id, old.id]);
  assert.deepEqual(await get('order_by=name'), [old.id, mid.id, rootUser.id], 'sort defaults to desc');
  assert.deepEqual(await get('order_by=username&sort=asc'), [mid.id, old.id, rootUser.id]);
  assert.deepEqual(await get('order_by=created_at&sort=asc'), [old.id, mid.id, rootUser.id]);
  assert.deepEqual(await get('order_by=updated_at&sort=desc'), [rootUser.id, old.id, mid.id]);
  assert.deepEqual(await get('order_by=id&sort=asc'), [rootUser.id, old.id, mid.id]);
  assert.deepEqual(await get(''), [mid.id, old.id, rootUser.id]);
});

test('non-administrators: order_by, sort, two_factor, without_projects, custom_attributes are ignored (created_* filter for everyone)', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const me = await seed.user({ username: 'me' });
  const tok = await seed.token(me);
  const rootUser = (await c.users.byId(1))!;
  const old = await insertUser(c, { username: 'old', created_at: '2020-01-01T00:00:00.000Z', two_factor_enabled: 1 });
  const now = nowIso();
  await c.db.kysely.insertInto('user_custom_attributes').values({ user_id: old.id, key: 'k', value: 'v', created_at: now, updated_at: now }).execute();
  const all = [old.id, me.id, rootUser.id];
  // created_after / created_before are "Filters for everyone"
  assert.deepEqual(ids(await app.inject({ method: 'GET', url: '/api/v4/users?created_before=2021-01-01', headers: tok.headers })), [old.id]);
  assert.deepEqual(ids(await app.inject({ method: 'GET', url: '/api/v4/users?created_after=2030-01-01', headers: tok.headers })), []);
  for (const qs of ['order_by=username&sort=asc', 'two_factor=enabled', 'without_projects=true', 'custom_attributes[k]=v']) {
    const res = await app.inject({ method: 'GET', url: `/api/v4/users?${qs}`, headers: tok.headers });
    assert.equal(res.statusCode, 200, qs);
    assert.deepEqual(ids(res), all, qs);
  }
  const res = await app.inject({ method: 'GET', url: '/api/v4/users?with_custom_attributes=true', headers: tok.headers });
  assert.deepEqual(res.json()[0], basic(old));
  // …but still validated, as Grape validates before the endpoint strips them.
  const bad = await app.inject({ method: 'GET', url: '/api/v4/users?order_by=email', headers: tok.headers });
  assert.equal(bad.statusCode, 400);
  assert.deepEqual(bad.json(), { error: 'order_by does not have a valid value' });
});

test('extern_uid and provider: all or none, administrators only', async (t) => {
  const { app, seed, root } = await buildTestApp(t);
  const tok = await seed.token(await seed.user());
  for (const qs of ['extern_uid=1', 'provider=github']) {
    const res = await app.inject({ method: 'GET', url: `/api/v4/users?${qs}`, headers: root });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { error: 'extern_uid, provider provide all or none of parameters' });
  }
  let res = await app.inject({ method: 'GET', url: '/api/v4/users?extern_uid=1&provider=github', headers: tok.headers });
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: '403 Forbidden' });
  res = await app.inject({ method: 'GET', url: '/api/v4/users?extern_uid=1&provider=github&username=root' });
  assert.equal(res.statusCode, 401);
  assert.deepEqual(res.json(), { message: '401 Unauthorized' });
});

test('bad list parameters are 400 with Grape messages', async (t) => {
  const { app, root } = await buildTestApp(t);
  const cases: [string, string][] = [
    ['order_by=email', 'order_by does not have a valid value'],
    ['sort=up', 'sort does not have a valid value'],
    ['active=maybe', 'active is invalid'],
    ['blocked=2', 'blocked is invalid'],
    ['created_after=yesterday', 'created_after is invalid'],
    ['created_before=2021-13-45', 'created_before is invalid'],
    ['per_page=0', 'per_page has a value not allowed'],
    ['per_page=abc', 'per_page is invalid'],
    ['page=abc', 'page is invalid'],
    ['custom_attributes=x', 'custom_attributes is invalid'],
  ];
  for (const [qs, error] of cases) {
    const res = await app.inject({ method: 'GET', url: `/api/v4/users?${qs}`, headers: root });
    assert.equal(res.statusCode, 400, qs);
    assert.deepEqual(res.json(), { error }, qs);
  }
});

test('GET /users/:id: public profile for signed-in users, private profiles reduced, 403 anonymous, 404 missing', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const me = await seed.user({ username: 'me' });
  const tok = await seed.token(me);
  const pub = await insertUser(c, { username: 'pub', public_email: 'pub@example.com', job_title: 'Dev' });
  const priv = await insertUser(c, { username: 'priv', private_profile: 1, bio: 'secret' });

  let res = await app.inject({ method: 'GET', url: `/api/v4/users/${pub.id}`, headers: tok.headers });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { ...profile(pub), work_information: 'Dev' });

  res = await app.inject({ method: 'GET', url: `/api/v4/users/${priv.id}`, headers: tok.headers });
  assert.deepEqual(res.json(), basic(priv));

  // One's own private profile is readable.
  await c.db.kysely.updateTable('users').set({ private_profile: 1 }).where('id', '=', me.id).execute();
  res = await app.inject({ method: 'GET', url: `/api/v4/users/${me.id}`, headers: tok.headers });
  assert.deepEqual(res.json(), profile((await c.users.byId(me.id))!));

  res = await app.inject({ method: 'GET', url: `/api/v4/users/${pub.id}` });
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: '403 Forbidden - Not authorized!' });

  for (const id of ['999999', '99999999999999999999']) {
    res = await app.inject({ method: 'GET', url: `/api/v4/users/${id}`, headers: tok.headers });
    assert.equal(res.statusCode, 404, id);
    assert.deepEqual(res.json(), { message: '404 User Not Found' });
  }
  res = await app.inject({ method: 'GET', url: '/api/v4/users/1abc', headers: tok.headers });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { error: '404 Not Found' });
});

test('GET /users/:id for administrators: the administrator shape, custom attributes on request', async (t) => {
  const { app, c, root, seed } = await buildTestApp(t);
  const priv = await insertUser(c, { username: 'priv', private_profile: 1 });
  const now = nowIso();
  await c.db.kysely.insertInto('user_custom_attributes').values({ user_id: priv.id, key: 'k', value: 'v', created_at: now, updated_at: now }).execute();
  let res = await app.inject({ method: 'GET', url: `/api/v4/users/${priv.id}`, headers: root });
  assert.deepEqual(res.json(), adminView(priv));
  res = await app.inject({ method: 'GET', url: `/api/v4/users/${priv.id}?with_custom_attributes=true`, headers: root });
  assert.deepEqual(res.json(), adminView(priv, { custom_attributes: [{ key: 'k', value: 'v' }] }));
  // Non-administrators never see custom attributes.
  const tok = await seed.token(await seed.user());
  res = await app.inject({ method: 'GET', url: `/api/v4/users/${priv.id}?with_custom_attributes=true`, headers: tok.headers });
  assert.deepEqual(res.json(), basic(priv));
});

test('GET /user: UserPublic for oneself, the administrator shape for administrators, 401 anonymous', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const me = await seed.user({ username: 'me', private_profile: true });
  await c.db.kysely
    .insertInto('identities')
    .values({ user_id: me.id, provider: 'github', extern_uid: 'me-gh', saml_provider_id: null, created_at: nowIso() })
    .execute();
  const tok = await seed.token(me);
  let res = await app.inject({ method: 'GET', url: '/api/v4/user', headers: tok.headers });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), self((await c.users.byId(me.id))!, [{ provider: 'github', extern_uid: 'me-gh', saml_provider_id: null }]));

  res = await app.inject({ method: 'GET', url: '/api/v4/user', headers: root });
  const rootUser = (await c.users.byId(1))!;
  assert.deepEqual(res.json(), adminView(rootUser, { namespace_id: (await seed.namespaceOf(rootUser)).id }));

  // Sudo: the user acted as.
  res = await app.inject({ method: 'GET', url: '/api/v4/user', headers: { ...root, sudo: 'me' } });
  assert.equal(res.json().id, me.id);
  assert.equal('is_admin' in res.json(), false);

  res = await app.inject({ method: 'GET', url: '/api/v4/user' });
  assert.equal(res.statusCode, 401);
  assert.deepEqual(res.json(), { message: '401 Unauthorized' });
});

test('scopes: read_user and read_api read users; read_user cannot write; read_repository cannot read', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const admin = await seed.user({ is_admin: true });
  const readUser = await seed.token(admin, { scopes: ['read_user'] });
  const readApi = await seed.token(admin, { scopes: ['read_api'] });
  const repo = await seed.token(admin, { scopes: ['read_repository'] });
  for (const url of ['/api/v4/users', '/api/v4/user', `/api/v4/users/${admin.id}`, `/api/v4/users/${admin.id}/custom_attributes`]) {
    assert.equal((await app.inject({ method: 'GET', url, headers: readUser.headers })).statusCode, 200, url);
    assert.equal((await app.inject({ method: 'GET', url, headers: readApi.headers })).statusCode, 200, url);
    const denied = await app.inject({ method: 'GET', url, headers: repo.headers });
    assert.equal(denied.statusCode, 403, url);
    assert.equal(denied.json().scope, 'api read_api read_user');
  }
  const write = await app.inject({ method: 'POST', url: `/api/v4/users/${admin.id}/deactivate`, headers: readUser.headers });
  assert.equal(write.statusCode, 403);
  assert.deepEqual(write.json(), {
    error: 'insufficient_scope',
    error_description: 'The request requires higher privileges than provided by the access token.',
    scope: 'api',
  });
});

test('admin mode: an administrator token without admin_mode gets the non-administrator list', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const admin = await seed.user({ is_admin: true });
  const plain = await seed.token(admin, { scopes: ['api'] });
  await insertUser(c, { username: 'blocked', state: 'blocked' });
  await c.settings.save({ admin_mode: true });
  const res = await app.inject({ method: 'GET', url: '/api/v4/users', headers: plain.headers });
  assert.equal(res.json().length, 2);
  assert.equal('email' in res.json()[0], false);
});
