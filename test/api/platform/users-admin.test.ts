// Administrators' user writes: create, update, delete, block/unblock/deactivate/activate, custom
// attributes. Each test checks the response and the rows afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container } from '../../../src/container.ts';
import type { NewUser, UserRow } from '../../../src/db/schema.ts';
import { verifyPassword } from '../../../src/lib/secrets.ts';
import { nowIso } from '../../../src/lib/time.ts';
import { userRow } from '../../helpers/rows.ts';
import { buildTestApp, EXTERNAL_URL } from '../../helpers/build-app.ts';

async function insertUser(c: Container, attrs: Partial<NewUser> & { username: string }): Promise<UserRow> {
  const _now = nowIso();
  return c.db.kysely.insertInto('users').values(userRow(attrs.username, attrs)).returningAll().executeTakeFirstOrThrow();
}

const row = (c: Container, id: number) => c.users.byId(id);
const countUsers = async (c: Container) =>
  Number(
    (
      await c.db.kysely
        .selectFrom('users')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

// ---- POST /users ---------------------------------------------------------------------------

test('POST /users: 201 with the administrator shape; every attribute stored; identity in the same write', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const res = await app.inject({
    method: 'POST',
    url: '/api/v4/users',
    headers: root,
    payload: {
      email: 'New.User@example.com',
      username: 'newuser',
      name: 'New User',
      password: 'secret-pass-1',
      admin: true,
      external: true,
      private_profile: true,
      projects_limit: 7,
      can_create_group: false,
      skip_confirmation: true,
      bio: 'Bio',
      location: 'Lyon',
      public_email: 'new.user@example.com',
      commit_email: 'New.User@example.com',
      job_title: 'QA',
      pronouns: 'she/her',
      website_url: 'https://new.example',
      organization: 'Org',
      note: 'created by API',
      theme_id: 11,
      color_scheme_id: 6,
      messenger_a: 'msg',
      network_a: 'net-a',
      network_b: 'net-b',
      chat_a: 'chat',
      extern_uid: '67890',
      provider: 'github',
    },
  });
  assert.equal(res.statusCode, 201);
  assert.equal(res.headers['content-type'], 'application/json');
  const u = (await row(c, res.json().id))!;
  assert.deepEqual(res.json(), {
    id: u.id,
    username: 'newuser',
    name: 'New User',
    state: 'active',
    locked: false,
    avatar_url: null,
    web_url: `${EXTERNAL_URL}/newuser`,
    created_at: u.created_at,
    bio: 'Bio',
    location: 'Lyon',
    public_email: 'new.user@example.com',
    messenger_a: 'msg',
    network_a: 'net-a',
    network_b: 'net-b',
    chat_a: 'chat',
    website_url: 'https://new.example',
    organization: 'Org',
    job_title: 'QA',
    pronouns: 'she/her',
    bot: false,
    work_information: 'QA at Org',
    followers: 0,
    following: 0,
    is_followed: false,
    local_time: null,
    last_sign_in_at: null,
    confirmed_at: u.confirmed_at,
    last_activity_on: null,
    email: 'New.User@example.com',
    theme_id: 11,
    color_scheme_id: 6,
    projects_limit: 7,
    current_sign_in_at: null,
    identities: [{ provider: 'github', extern_uid: '67890', saml_provider_id: null }],
    can_create_group: false,
    can_create_project: true,
    two_factor_enabled: false,
    external: true,
    private_profile: true,
    commit_email: 'New.User@example.com',
    is_admin: true,
    note: 'created by API',
    namespace_id: (await c.db.kysely.selectFrom('namespaces').select('id').where('owner_id', '=', u.id).executeTakeFirstOrThrow()).id,
    sign_in_count: 0,
    current_sign_in_ip: null,
    last_sign_in_ip: null,
    created_by: { id: 1, username: 'root', name: 'Administrator', state: 'active', locked: false, avatar_url: null, web_url: `${EXTERNAL_URL}/root` },
    email_reset_offered_at: null,
  });
  assert.ok(u.confirmed_at);
  assert.equal(u.created_by_id, 1);
  assert.equal(u.is_admin, 1);
  assert.equal(u.state, 'active');
  assert.ok(await verifyPassword('secret-pass-1', u.password_hash));
  const identities = await c.db.kysely.selectFrom('identities').selectAll().where('user_id', '=', u.id).execute();
  assert.deepEqual(
    identities.map((i) => [i.provider, i.extern_uid]),
    [['github', '67890']],
  );
});

test('POST /users: defaults, form bodies, query parameters; confirmation and random passwords', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  let res = await app.inject({
    method: 'POST',
    url: '/api/v4/users',
    headers: { ...root, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'email=form%40example.com&username=form&name=Form+User&password=password-123&external=true&skip_confirmation=false',
  });
  assert.equal(res.statusCode, 201);
  let u = (await row(c, res.json().id))!;
  assert.equal(u.external, 1);
  assert.equal(u.confirmed_at, null, 'skip_confirmation=false leaves the account unconfirmed');
  assert.equal(u.is_admin, 0);
  assert.equal(u.private_profile, 0);
  assert.equal(u.projects_limit, 100000);
  assert.equal(u.can_create_group, 1);
  assert.equal(u.bio, '');
  assert.equal(res.json().commit_email, 'form@example.com');

  res = await app.inject({ method: 'POST', url: '/api/v4/users?email=q%40example.com&username=query&name=Query&force_random_password=true', headers: root });
  assert.equal(res.statusCode, 201);
  u = (await row(c, res.json().id))!;
  assert.ok(u.password_hash, 'a random password');
  assert.ok(u.confirmed_at, 'confirmed unless skip_confirmation=false');

  res = await app.inject({
    method: 'POST',
    url: '/api/v4/users',
    headers: root,
    payload: { email: 'r@example.com', username: 'reset', name: 'R', reset_password: true },
  });
  assert.equal(res.statusCode, 201);
  assert.ok((await row(c, res.json().id))!.password_hash);
});

test('POST /users: user_defaults_to_private_profile applies unless private_profile is given; null means the default', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  await c.settings.save({ user_defaults_to_private_profile: true });
  const create = async (extra: Record<string, unknown>, n: string) =>
    (
      await app.inject({
        method: 'POST',
        url: '/api/v4/users',
        headers: root,
        payload: { email: `${n}@example.com`, username: n, name: n, password: 'password-123', ...extra },
      })
    ).json();
  assert.equal((await create({}, 'p1')).private_profile, true);
  assert.equal((await create({ private_profile: false }, 'p2')).private_profile, false);
  assert.equal((await create({ private_profile: null }, 'p3')).private_profile, true);
  const form = (body: string) =>
    app.inject({ method: 'POST', url: '/api/v4/users', headers: { ...root, 'content-type': 'application/x-www-form-urlencoded' }, payload: body });
  assert.equal((await form('email=f1%40example.com&username=f1&name=f1&password=password-123&private_profile=')).json().private_profile, true);
  assert.equal((await form('email=f2%40example.com&username=f2&name=f2&password=password-123&private_profile=no')).json().private_profile, false);
  const bad = await form('email=f3%40example.com&username=f3&name=f3&password=password-123&private_profile=perhaps');
  assert.equal(bad.statusCode, 400);
  assert.deepEqual(bad.json(), { error: 'private_profile is invalid' });
});

test('POST /users: missing and invalid parameters', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const before = await countUsers(c);
  const post = (payload: Record<string, unknown>) => app.inject({ method: 'POST', url: '/api/v4/users', headers: root, payload });

  let res = await app.inject({ method: 'POST', url: '/api/v4/users', headers: root });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'email is missing, name is missing, username is missing' });
  res = await post({ email: 'x@example.com', name: 'X' });
  assert.deepEqual(res.json(), { error: 'username is missing' });
  res = await post({ email: 'x@example.com', name: 'X', username: 'x' });
  assert.deepEqual(res.json(), { error: 'password, reset_password, force_random_password are missing, at least one parameter must be provided' });
  res = await post({ email: 'x@example.com', name: 'X', username: 'x', password: 'password-123', extern_uid: '1' });
  assert.deepEqual(res.json(), { error: 'extern_uid, provider provide all or none of parameters' });
  res = await post({ email: 'x@example.com', name: 'X', username: 'x', password: 'password-123', projects_limit: 'lots' });
  assert.deepEqual(res.json(), { error: 'projects_limit is invalid' });
  res = await post({ email: 'x@example.com', name: 'X', username: 'x', password: 'password-123', admin: 'perhaps' });
  assert.deepEqual(res.json(), { error: 'admin is invalid' });

  res = await post({ email: 'invalid email', name: 'X', username: 'x', password: 'password-123' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: { email: ['is invalid'] } });

  res = await post({
    email: 'test@example.com',
    username: 'test!',
    name: 'test',
    password: 'pass',
    bio: 'g'.repeat(256),
    projects_limit: -1,
    theme_id: 99,
    color_scheme_id: 0,
    public_email: 'other@example.com',
  });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), {
    message: {
      username: ["can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'"],
      password: ['is too short (minimum is 8 characters)'],
      bio: ['is too long (maximum is 255 characters)'],
      projects_limit: ['must be greater than or equal to 0'],
      theme_id: ['99 is not a valid theme'],
      color_scheme_id: ['0 is not a valid color scheme'],
      public_email: ['is not an email you own'],
    },
  });
  res = await post({ email: 'n@example.com', username: 'n', name: ' ', password: 'password-123' });
  assert.deepEqual(res.json(), { message: { name: ["can't be blank"] } });
  res = await post({ email: 'g@example.com', username: 'git', name: 'Git', password: 'password-123' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: { username: ['git is a reserved name'] } });
  assert.equal(await countUsers(c), before);
});

test('POST /users: duplicates are 409, case-insensitively, and nothing is written', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  await insertUser(c, { username: 'Taken', email: 'taken@example.com' });
  const before = await countUsers(c);
  let res = await app.inject({
    method: 'POST',
    url: '/api/v4/users',
    headers: root,
    payload: { email: 'other@example.com', username: 'tAKEN', name: 'x', password: 'password-123' },
  });
  assert.equal(res.statusCode, 409);
  assert.deepEqual(res.json(), { message: 'Username has already been taken' });
  res = await app.inject({
    method: 'POST',
    url: '/api/v4/users',
    headers: root,
    payload: { email: 'TAKEN@example.com', username: 'fresh', name: 'x', password: 'password-123' },
  });
  assert.equal(res.statusCode, 409);
  assert.deepEqual(res.json(), { message: 'Email has already been taken' });
  // Duplicates win over other validation errors, as in GitLab.
  res = await app.inject({
    method: 'POST',
    url: '/api/v4/users',
    headers: root,
    payload: { email: 'taken@example.com', username: 'fresh', name: 'x', password: 'short' },
  });
  assert.equal(res.statusCode, 409);
  assert.equal(await countUsers(c), before);
});

test('POST /users: a taken identity fails the whole create', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const owner = await insertUser(c, { username: 'owner' });
  await c.db.kysely
    .insertInto('identities')
    .values({ user_id: owner.id, provider: 'github', extern_uid: 'GH-1', saml_provider_id: null, created_at: nowIso() })
    .execute();
  const before = await countUsers(c);
  const res = await app.inject({
    method: 'POST',
    url: '/api/v4/users',
    headers: root,
    payload: { email: 'i@example.com', username: 'ident', name: 'I', password: 'password-123', provider: 'github', extern_uid: 'gh-1' },
  });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: { 'identities.extern_uid': ['has already been taken'] } });
  assert.equal(await countUsers(c), before);
  assert.equal(await c.users.byUsername('ident'), undefined);
});

test('POST /users: the email policy applies (deny list, allow list, restrictions)', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const post = (email: string, username: string) =>
    app.inject({ method: 'POST', url: '/api/v4/users', headers: root, payload: { email, username, name: username, password: 'password-123' } });
  await c.settings.save({ domain_denylist_enabled: true, domain_denylist: ['spam.test', '*.bad.test'] });
  let res = await post('x@spam.test', 'x1');
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: { email: ['domain is not authorized for sign-up.'] } });
  res = await post('x@mail.bad.test', 'x2');
  assert.equal(res.statusCode, 400);
  res = await post('x@good.test', 'x3');
  assert.equal(res.statusCode, 201);
  await c.settings.save({ domain_denylist_enabled: false, domain_allowlist: ['corp.test'] });
  assert.equal((await post('y@other.test', 'y1')).statusCode, 400);
  assert.equal((await post('y@corp.test', 'y2')).statusCode, 201);
  await c.settings.save({ domain_allowlist: [], email_restrictions_enabled: true, email_restrictions: '\\+' });
  res = await post('z+tag@corp.test', 'z1');
  assert.deepEqual(res.json(), { message: { email: ['is not allowed. Please use your regular email address.'] } });
});

test('POST /users: administrators only', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const tok = await seed.token(await seed.user());
  const payload = { email: 'n@example.com', username: 'n', name: 'n', password: 'password-123' };
  let res = await app.inject({ method: 'POST', url: '/api/v4/users', headers: tok.headers, payload });
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: '403 Forbidden' });
  res = await app.inject({ method: 'POST', url: '/api/v4/users', payload });
  assert.equal(res.statusCode, 401);
});

// ---- PUT /users/:id ------------------------------------------------------------------------

test('PUT /users/:id: changes only what is given, returns the administrator shape', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const u = await insertUser(c, { username: 'edit', name: 'Edit', bio: 'old', can_create_group: 1 });
  const res = await app.inject({
    method: 'PUT',
    url: `/api/v4/users/${u.id}`,
    headers: root,
    payload: {
      bio: 'new test bio',
      organization: 'GitLab',
      admin: true,
      external: true,
      can_create_group: false,
      name: 'Edited',
      note: 'n',
      public_email: 'edit@example.com',
    },
  });
  assert.equal(res.statusCode, 200);
  const after = (await row(c, u.id))!;
  assert.equal(res.json().bio, 'new test bio');
  assert.equal(res.json().is_admin, true);
  assert.equal(res.json().name, 'Edited');
  assert.equal(res.json().public_email, 'edit@example.com');
  assert.equal(after.bio, 'new test bio');
  assert.equal(after.organization, 'GitLab');
  assert.equal(after.is_admin, 1);
  assert.equal(after.external, 1);
  assert.equal(after.can_create_group, 0);
  assert.equal(after.note, 'n');
  assert.equal(after.username, 'edit');
  assert.equal(after.email, 'edit@example.com');
  assert.ok(after.updated_at >= u.updated_at);

  // Own email and username (other case) are not conflicts.
  const same = await app.inject({ method: 'PUT', url: `/api/v4/users/${u.id}`, headers: root, payload: { email: 'EDIT@example.com', username: 'Edit' } });
  assert.equal(same.statusCode, 200);
  assert.equal((await row(c, u.id))!.username, 'Edit');

  // No parameters at all is fine.
  const none = await app.inject({ method: 'PUT', url: `/api/v4/users/${u.id}`, headers: root });
  assert.equal(none.statusCode, 200);
  assert.equal(none.json().username, 'Edit');
});

test('PUT /users/:id: conflicts, validation, password and private_profile null', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const u = await insertUser(c, { username: 'victim' });
  await insertUser(c, { username: 'other', email: 'other@example.com' });
  const put = (payload: Record<string, unknown>) => app.inject({ method: 'PUT', url: `/api/v4/users/${u.id}`, headers: root, payload });

  let res = await put({ email: 'OTHER@example.com' });
  assert.equal(res.statusCode, 409);
  assert.deepEqual(res.json(), { message: 'Email has already been taken' });
  res = await put({ username: 'Other' });
  assert.equal(res.statusCode, 409);
  assert.deepEqual(res.json(), { message: 'Username has already been taken' });
  res = await put({ email: 'invalid email' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: { email: ['is invalid'] } });
  res = await put({ password: 'pass', username: 'test!', bio: 'g'.repeat(256), projects_limit: -1, pronouns: 'p'.repeat(51) });
  assert.deepEqual(res.json(), {
    message: {
      username: ["can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'"],
      password: ['is too short (minimum is 8 characters)'],
      bio: ['is too long (maximum is 255 characters)'],
      pronouns: ['is too long (maximum is 50 characters)'],
      projects_limit: ['must be greater than or equal to 0'],
    },
  });
  res = await put({ extern_uid: '654321' });
  assert.deepEqual(res.json(), { error: 'extern_uid, provider provide all or none of parameters' });
  const unchanged = (await row(c, u.id))!;
  assert.deepEqual(unchanged, u);

  res = await put({ password: 'brand-new-password' });
  assert.equal(res.statusCode, 200);
  const changed = (await row(c, u.id))!;
  assert.ok(await verifyPassword('brand-new-password', changed.password_hash));
  assert.ok(changed.password_set_at);

  await c.settings.save({ user_defaults_to_private_profile: true });
  res = await put({ private_profile: null });
  assert.equal(res.json().private_profile, true);
  res = await app.inject({
    method: 'PUT',
    url: `/api/v4/users/${u.id}`,
    headers: { ...root, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'private_profile=false',
  });
  assert.equal(res.json().private_profile, false);
});

test('PUT /users/:id: identities are added, or updated per provider; a taken one is refused', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const u = await insertUser(c, { username: 'ident' });
  const other = await insertUser(c, { username: 'other' });
  await c.db.kysely
    .insertInto('identities')
    .values({ user_id: other.id, provider: 'github', extern_uid: 'taken', saml_provider_id: null, created_at: nowIso() })
    .execute();
  const put = (payload: Record<string, unknown>) => app.inject({ method: 'PUT', url: `/api/v4/users/${u.id}`, headers: root, payload });
  let res = await put({ provider: 'ldapmain', extern_uid: '123456' });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json().identities, [{ provider: 'ldapmain', extern_uid: '123456', saml_provider_id: null }]);
  res = await put({ provider: 'ldapmain', extern_uid: '654321' });
  assert.deepEqual(res.json().identities, [{ provider: 'ldapmain', extern_uid: '654321', saml_provider_id: null }]);
  res = await put({ provider: 'github', extern_uid: 'TAKEN', bio: 'not saved' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: { 'identities.extern_uid': ['has already been taken'] } });
  const rows = await c.db.kysely.selectFrom('identities').select(['provider', 'extern_uid']).where('user_id', '=', u.id).execute();
  assert.deepEqual(rows, [{ provider: 'ldapmain', extern_uid: '654321' }]);
  assert.equal((await row(c, u.id))!.bio, '');
});

test('PUT /users/:id: 404, bad ids, administrators only', async (t) => {
  const { app, c, root, seed } = await buildTestApp(t);
  let res = await app.inject({ method: 'PUT', url: '/api/v4/users/999999', headers: root, payload: { bio: 'x' } });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 User Not Found' });
  res = await app.inject({ method: 'PUT', url: '/api/v4/users/ASDF', headers: root, payload: { bio: 'x' } });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { error: '404 Not Found' });
  const me = await seed.user();
  const tok = await seed.token(me);
  res = await app.inject({ method: 'PUT', url: `/api/v4/users/${me.id}`, headers: tok.headers, payload: { bio: 'x' } });
  assert.equal(res.statusCode, 403);
  assert.equal((await row(c, me.id))!.bio, '');
});

// ---- DELETE /users/:id ---------------------------------------------------------------------

test('DELETE /users/:id: 204; the user, tokens, identities and attributes are gone; created_by cleared', async (t) => {
  const { app, c, root, seed } = await buildTestApp(t);
  const u = await seed.user({ username: 'doomed' });
  const tok = await seed.token(u);
  const created = await insertUser(c, { username: 'child', created_by_id: u.id });
  const now = nowIso();
  await c.db.kysely.insertInto('identities').values({ user_id: u.id, provider: 'github', extern_uid: 'd', saml_provider_id: null, created_at: now }).execute();
  await c.db.kysely.insertInto('user_custom_attributes').values({ user_id: u.id, key: 'k', value: 'v', created_at: now, updated_at: now }).execute();

  const res = await app.inject({ method: 'DELETE', url: `/api/v4/users/${u.id}?hard_delete=true`, headers: root });
  assert.equal(res.statusCode, 204);
  assert.equal(res.body, '');
  assert.equal(await row(c, u.id), undefined);
  for (const table of ['identities', 'user_custom_attributes', 'personal_access_tokens'] as const) {
    const left = await c.db.kysely.selectFrom(table).select('id').where('user_id', '=', u.id).execute();
    assert.deepEqual(left, [], table);
  }
  assert.equal((await row(c, created.id))!.created_by_id, null);
  const after = await app.inject({ method: 'GET', url: '/api/v4/user', headers: tok.headers });
  assert.equal(after.statusCode, 401);

  const again = await app.inject({ method: 'DELETE', url: `/api/v4/users/${u.id}`, headers: root });
  assert.equal(again.statusCode, 404);
  assert.deepEqual(again.json(), { message: '404 User Not Found' });
});

test('DELETE /users/:id: If-Unmodified-Since older than the record → 412; administrators only', async (t) => {
  const { app, c, root, seed } = await buildTestApp(t);
  const u = await insertUser(c, { username: 'x', updated_at: '2025-06-01T12:00:00.500Z' });
  let res = await app.inject({ method: 'DELETE', url: `/api/v4/users/${u.id}`, headers: { ...root, 'if-unmodified-since': 'Sun, 01 Jun 2025 11:00:00 GMT' } });
  assert.equal(res.statusCode, 412);
  assert.deepEqual(res.json(), { message: '412 Precondition Failed' });
  assert.ok(await row(c, u.id));
  const tok = await seed.token(await seed.user());
  res = await app.inject({ method: 'DELETE', url: `/api/v4/users/${u.id}`, headers: tok.headers });
  assert.equal(res.statusCode, 403);
  assert.ok(await row(c, u.id));
  res = await app.inject({ method: 'DELETE', url: `/api/v4/users/${u.id}`, headers: { ...root, 'if-unmodified-since': 'Mon, 02 Jun 2025 00:00:00 GMT' } });
  assert.equal(res.statusCode, 204);
  assert.equal(await row(c, u.id), undefined);
});

// ---- state changes -------------------------------------------------------------------------

const post = (app: Awaited<ReturnType<typeof buildTestApp>>['app'], url: string, headers: Record<string, string>) =>
  app.inject({ method: 'POST', url, headers });

test("block: 201 true, the user's tokens stop working, hidden from lists; again → 201 null; unblock restores", async (t) => {
  const { app, c, root, seed } = await buildTestApp(t);
  const u = await seed.user({ username: 'target' });
  const tok = await seed.token(u);
  assert.equal((await app.inject({ method: 'GET', url: '/api/v4/user', headers: tok.headers })).statusCode, 200);

  let res = await post(app, `/api/v4/users/${u.id}/block`, root);
  assert.equal(res.statusCode, 201);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.equal(res.body, 'true');
  assert.equal((await row(c, u.id))!.state, 'blocked');
  const denied = await app.inject({ method: 'GET', url: '/api/v4/user', headers: tok.headers });
  assert.equal(denied.statusCode, 403);
  assert.deepEqual(denied.json(), { message: '403 Forbidden - Your account has been blocked.' });

  res = await post(app, `/api/v4/users/${u.id}/block`, root);
  assert.equal(res.statusCode, 201);
  assert.equal(res.body, 'null');

  res = await post(app, `/api/v4/users/${u.id}/unblock`, root);
  assert.equal(res.statusCode, 201);
  assert.equal(res.body, 'true');
  assert.equal((await row(c, u.id))!.state, 'active');
  assert.equal((await app.inject({ method: 'GET', url: '/api/v4/user', headers: tok.headers })).statusCode, 200);

  res = await post(app, `/api/v4/users/${u.id}/unblock`, root);
  assert.equal(res.statusCode, 201);
  assert.equal(res.body, 'false', 'not blocked: the transition fails');
});

test('block: refusals for oneself, LDAP-blocked and internal users; deactivated and pending users can be blocked', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  let res = await post(app, '/api/v4/users/1/block', root);
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: '403 Forbidden - The API initiating user cannot be blocked by the API' });
  const ldap = await insertUser(c, { username: 'ldap', state: 'ldap_blocked' });
  res = await post(app, `/api/v4/users/${ldap.id}/block`, root);
  assert.deepEqual(res.json(), { message: '403 Forbidden - LDAP blocked users cannot be modified by the API' });
  res = await post(app, `/api/v4/users/${ldap.id}/unblock`, root);
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: '403 Forbidden - LDAP blocked users cannot be unblocked by the API' });
  const bot = await insertUser(c, { username: 'support-bot', user_type: 'support_bot', bot: 1 });
  res = await post(app, `/api/v4/users/${bot.id}/block`, root);
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: 'An internal user cannot be blocked' });
  assert.equal((await row(c, bot.id))!.state, 'active');

  const deact = await insertUser(c, { username: 'deact', state: 'deactivated' });
  res = await post(app, `/api/v4/users/${deact.id}/block`, root);
  assert.equal(res.body, 'true');
  assert.equal((await row(c, deact.id))!.state, 'blocked');
  const pending = await insertUser(c, { username: 'pending', state: 'blocked_pending_approval' });
  res = await post(app, `/api/v4/users/${pending.id}/block`, root);
  assert.equal(res.body, 'null', 'pending approval already counts as blocked');
  res = await post(app, `/api/v4/users/${pending.id}/unblock`, root);
  assert.equal(res.body, 'true');
  assert.equal((await row(c, pending.id))!.state, 'active');
});

test('deactivate and activate: dormancy, blocked and internal users, repeated calls', async (t) => {
  const { app, c, root, seed } = await buildTestApp(t);
  const dormant = await seed.user({ username: 'dormant' });
  const tok = await seed.token(dormant);
  let res = await post(app, `/api/v4/users/${dormant.id}/deactivate`, root);
  assert.equal(res.statusCode, 201);
  assert.equal(res.body, 'true');
  assert.equal((await row(c, dormant.id))!.state, 'deactivated');
  const denied = await app.inject({ method: 'GET', url: '/api/v4/user', headers: tok.headers });
  assert.equal(denied.statusCode, 403);
  assert.match(denied.json().message, /^403 Forbidden - Your account has been deactivated/);
  res = await post(app, `/api/v4/users/${dormant.id}/deactivate`, root);
  assert.equal(res.statusCode, 201);
  assert.equal(res.body, 'null');
  res = await post(app, `/api/v4/users/${dormant.id}/unblock`, root);
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: '403 Forbidden - Deactivated users cannot be unblocked by the API' });

  res = await post(app, `/api/v4/users/${dormant.id}/activate`, root);
  assert.equal(res.statusCode, 201);
  assert.equal(res.body, 'true');
  assert.equal((await row(c, dormant.id))!.state, 'active');
  assert.equal((await app.inject({ method: 'GET', url: '/api/v4/user', headers: tok.headers })).statusCode, 200);
  res = await post(app, `/api/v4/users/${dormant.id}/activate`, root);
  assert.equal(res.body, 'false');

  const today = new Date().toISOString().slice(0, 10);
  const recent = await insertUser(c, { username: 'recent', last_activity_on: today });
  res = await post(app, `/api/v4/users/${recent.id}/deactivate`, root);
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: 'The user you are trying to deactivate has been active in the past 90 days and cannot be deactivated' });
  const signedIn = await insertUser(c, {
    username: 'signedin',
    last_activity_on: '2020-01-01',
    current_sign_in_at: new Date(Date.now() - 5 * 86_400_000).toISOString(),
  });
  assert.equal((await post(app, `/api/v4/users/${signedIn.id}/deactivate`, root)).statusCode, 403);
  const old = await insertUser(c, { username: 'old', last_activity_on: '2020-01-01', current_sign_in_at: '2020-01-01T00:00:00.000Z' });
  assert.equal((await post(app, `/api/v4/users/${old.id}/deactivate`, root)).body, 'true');

  const blocked = await insertUser(c, { username: 'blocked', state: 'blocked' });
  res = await post(app, `/api/v4/users/${blocked.id}/deactivate`, root);
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: 'Error occurred. A blocked user cannot be deactivated' });
  res = await post(app, `/api/v4/users/${blocked.id}/activate`, root);
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: '403 Forbidden - A blocked user must be unblocked to be activated' });
  assert.equal((await row(c, blocked.id))!.state, 'blocked');

  const bot = await insertUser(c, { username: 'alert-bot', user_type: 'alert_bot', bot: 1 });
  res = await post(app, `/api/v4/users/${bot.id}/deactivate`, root);
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: 'Internal users cannot be deactivated' });
});

test('state changes: 404, bad ids, administrators only', async (t) => {
  const { app, root, seed } = await buildTestApp(t);
  const me = await seed.user();
  const tok = await seed.token(me);
  for (const action of ['block', 'unblock', 'deactivate', 'activate']) {
    let res = await post(app, `/api/v4/users/999999/${action}`, root);
    assert.equal(res.statusCode, 404, action);
    assert.deepEqual(res.json(), { message: '404 User Not Found' });
    res = await post(app, `/api/v4/users/abc/${action}`, root);
    assert.equal(res.statusCode, 404, action);
    res = await post(app, `/api/v4/users/${me.id}/${action}`, tok.headers);
    assert.equal(res.statusCode, 403, action);
    res = await app.inject({ method: 'POST', url: `/api/v4/users/${me.id}/${action}` });
    assert.equal(res.statusCode, 401, action);
  }
});

// ---- custom attributes ---------------------------------------------------------------------

test('custom attributes: set, update, read, list, delete', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const u = await insertUser(c, { username: 'attrs' });
  const base = `/api/v4/users/${u.id}/custom_attributes`;
  let res = await app.inject({ method: 'PUT', url: `${base}/location`, headers: root, payload: { value: 'Antarctica' } });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { key: 'location', value: 'Antarctica' });
  res = await app.inject({
    method: 'PUT',
    url: `${base}/location`,
    headers: { ...root, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'value=Greenland',
  });
  assert.deepEqual(res.json(), { key: 'location', value: 'Greenland' });
  res = await app.inject({ method: 'PUT', url: `${base}/team?value=blue`, headers: root });
  assert.deepEqual(res.json(), { key: 'team', value: 'blue' });
  const rows = await c.db.kysely.selectFrom('user_custom_attributes').select(['key', 'value']).where('user_id', '=', u.id).orderBy('id').execute();
  assert.deepEqual(rows, [
    { key: 'location', value: 'Greenland' },
    { key: 'team', value: 'blue' },
  ]);

  res = await app.inject({ method: 'GET', url: base, headers: root });
  assert.deepEqual(res.json(), [
    { key: 'location', value: 'Greenland' },
    { key: 'team', value: 'blue' },
  ]);
  res = await app.inject({ method: 'GET', url: `${base}/team`, headers: root });
  assert.deepEqual(res.json(), { key: 'team', value: 'blue' });
  res = await app.inject({ method: 'GET', url: `${base}/nope`, headers: root });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Not found' });

  res = await app.inject({ method: 'DELETE', url: `${base}/team`, headers: root });
  assert.equal(res.statusCode, 204);
  res = await app.inject({ method: 'DELETE', url: `${base}/team`, headers: root });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Custom attribute Not Found' });
  assert.deepEqual((await app.inject({ method: 'GET', url: base, headers: root })).json(), [{ key: 'location', value: 'Greenland' }]);
});

test('custom attributes: bad input, unknown users, administrators only', async (t) => {
  const { app, c, root, seed } = await buildTestApp(t);
  const u = await insertUser(c, { username: 'attrs' });
  const base = `/api/v4/users/${u.id}/custom_attributes`;
  let res = await app.inject({ method: 'PUT', url: `${base}/k`, headers: root });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'value is missing' });
  res = await app.inject({ method: 'PUT', url: `${base}/k`, headers: root, payload: { value: ' ' } });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: "Value can't be blank" });
  for (const [method, url] of [
    ['GET', '/api/v4/users/999999/custom_attributes'],
    ['GET', '/api/v4/users/999999/custom_attributes/k'],
    ['DELETE', '/api/v4/users/999999/custom_attributes/k'],
  ] as const) {
    res = await app.inject({ method, url, headers: root });
    assert.equal(res.statusCode, 404, url);
    assert.deepEqual(res.json(), { message: '404 Not Found' });
  }
  res = await app.inject({ method: 'PUT', url: '/api/v4/users/999999/custom_attributes/k', headers: root, payload: { value: 'v' } });
  assert.equal(res.statusCode, 404);
  const tok = await seed.token(await seed.user());
  for (const method of ['GET', 'PUT', 'DELETE'] as const) {
    res = await app.inject({ method, url: `${base}/k`, headers: tok.headers, payload: method === 'PUT' ? { value: 'v' } : undefined });
    assert.equal(res.statusCode, 403, method);
  }
  assert.deepEqual(await c.db.kysely.selectFrom('user_custom_attributes').selectAll().execute(), []);
});
