// Every credential kind and the failure bodies of reference §3 (routes: /version for reads).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-app.ts';
import { addDays, todayDate } from '../../../src/lib/time.ts';

const EXPIRED = 'Token is expired. You can either do re-authorization or token refresh.';
const REVOKED = 'Token was revoked. You have to re-authorize from the user.';

test('a personal access token works from the header, the parameter and Bearer', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const u = await seed.user();
  const { token } = await seed.token(u, { scopes: ['api'] });
  for (const req of [
    { headers: { 'private-token': token } },
    { url: `/api/v4/version?private_token=${token}` },
    { headers: { authorization: `Bearer ${token}` } },
  ]) {
    const res = await app.inject({ method: 'GET', url: '/api/v4/version', ...req });
    assert.equal(res.statusCode, 200, JSON.stringify(req));
    assert.deepEqual(res.json(), { version: '17.0.0', revision: 'hearth' });
  }
});

test('unknown token is 401 and never anonymous, even with valid other credentials missing', async (t) => {
  const { app } = await buildTestApp(t);
  const res = await app.inject({ method: 'GET', url: '/api/v4/version', headers: { 'private-token': 'glpat-nope' } });
  assert.equal(res.statusCode, 401);
  assert.deepEqual(res.json(), { message: '401 Unauthorized' });
  assert.equal(res.headers['www-authenticate'], undefined);
  const bearer = await app.inject({ method: 'GET', url: '/api/v4/version', headers: { authorization: 'Bearer nope' } });
  assert.equal(bearer.statusCode, 401);
  assert.deepEqual(bearer.json(), { message: '401 Unauthorized' });
});

test('expired and revoked tokens: 401 invalid_token with WWW-Authenticate', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user();
  const expired = await seed.token(u);
  await c.db.kysely.updateTable('personal_access_tokens').set({ expires_at: '2020-01-01' }).where('id', '=', expired.id).execute();
  let res = await app.inject({ method: 'GET', url: '/api/v4/version', headers: expired.headers });
  assert.equal(res.statusCode, 401);
  assert.deepEqual(res.json(), { error: 'invalid_token', error_description: EXPIRED });
  assert.equal(res.headers['www-authenticate'], `Bearer realm="The API", error="invalid_token", error_description="${EXPIRED}"`);

  const revoked = await seed.token(u);
  await c.db.kysely.updateTable('personal_access_tokens').set({ revoked: 1 }).where('id', '=', revoked.id).execute();
  res = await app.inject({ method: 'GET', url: '/api/v4/version', headers: revoked.headers });
  assert.equal(res.statusCode, 401);
  assert.deepEqual(res.json(), { error: 'invalid_token', error_description: REVOKED });
  assert.equal(res.headers['www-authenticate'], `Bearer realm="The API", error="invalid_token", error_description="${REVOKED}"`);

  // expired is checked before revoked
  await c.db.kysely.updateTable('personal_access_tokens').set({ revoked: 1 }).where('id', '=', expired.id).execute();
  res = await app.inject({ method: 'GET', url: '/api/v4/version', headers: expired.headers });
  assert.equal(res.json().error_description, EXPIRED);
});

test('scopes: read_api is GET only, insufficient scope is 403 with the OAuth body', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const u = await seed.user();
  const readRepo = await seed.token(u, { scopes: ['read_repository'] });
  const res = await app.inject({ method: 'GET', url: '/api/v4/version', headers: readRepo.headers });
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), {
    error: 'insufficient_scope',
    error_description: 'The request requires higher privileges than provided by the access token.',
    scope: 'api read_api read_user ai_features',
  });
  assert.equal(res.headers['www-authenticate'], undefined);
  const readApi = await seed.token(u, { scopes: ['read_api'] });
  assert.equal((await app.inject({ method: 'GET', url: '/api/v4/version', headers: readApi.headers })).statusCode, 200);
  const readUser = await seed.token(u, { scopes: ['read_user'] });
  assert.equal((await app.inject({ method: 'GET', url: '/api/v4/version', headers: readUser.headers })).statusCode, 200);
});

test('last_used_at is recorded on use, without a write on every request', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user();
  const tok = await seed.token(u);
  await app.inject({ method: 'GET', url: '/api/v4/version', headers: tok.headers });
  // the use is written after the answer: wait for it (the deadline bounds a hang only)
  const read = () => c.db.kysely.selectFrom('personal_access_tokens').select(['last_used_at', 'updated_at']).where('id', '=', tok.id).executeTakeFirstOrThrow();
  let first = await read();
  for (const deadline = Date.now() + 30_000; !first.last_used_at && Date.now() < deadline; first = await read()) await new Promise((r) => setTimeout(r, 10));
  assert.ok(first.last_used_at);
  await app.inject({ method: 'GET', url: '/api/v4/version', headers: tok.headers });
  await new Promise((r) => setTimeout(r, 50));
  const second = await c.db.kysely.selectFrom('personal_access_tokens').select('last_used_at').where('id', '=', tok.id).executeTakeFirstOrThrow();
  assert.equal(second.last_used_at, first.last_used_at);
});

test('blocked and deactivated users are refused with 403 and the reason', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const blocked = await seed.user({ state: 'blocked' });
  const tok = await seed.token(blocked);
  const res = await app.inject({ method: 'GET', url: '/api/v4/version', headers: tok.headers });
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: '403 Forbidden - Your account has been blocked.' });
  const deact = await seed.user({ state: 'deactivated' });
  const tok2 = await seed.token(deact);
  const res2 = await app.inject({ method: 'GET', url: '/api/v4/version', headers: tok2.headers });
  assert.equal(res2.statusCode, 403);
  assert.match(res2.json().message, /^403 Forbidden - Your account has been deactivated/);
});

test('sudo: the four error cases and a successful switch', async (t) => {
  const { app, seed, root } = await buildTestApp(t);
  const u = await seed.user({ username: 'Alice' });
  const plain = await seed.token(u, { scopes: ['api'] });
  // non-administrator
  let res = await app.inject({ method: 'GET', url: '/api/v4/version', headers: { ...plain.headers, sudo: 'root' } });
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: '403 Forbidden - Must be admin to use sudo' });
  // administrator token without the sudo scope
  const rootUser = (await seed.user({ is_admin: true }))!;
  const noSudo = await seed.token(rootUser, { scopes: ['api'] });
  res = await app.inject({ method: 'GET', url: '/api/v4/version', headers: { ...noSudo.headers, sudo: 'alice' } });
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), {
    error: 'insufficient_scope',
    error_description: 'The request requires higher privileges than provided by the access token.',
    scope: 'sudo',
  });
  // unknown target
  res = await app.inject({ method: 'GET', url: '/api/v4/version?sudo=nobody', headers: root });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: "404 User with ID or username 'nobody' Not Found" });
  // an id beyond the id column names nobody (PostgreSQL would refuse to compare it: never a 500)
  res = await app.inject({ method: 'GET', url: '/api/v4/version?sudo=99999999999999999999', headers: root });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: "404 User with ID or username '99999999999999999999' Not Found" });
  // anonymous with sudo
  res = await app.inject({ method: 'GET', url: '/api/v4/version', headers: { sudo: 'alice' } });
  assert.equal(res.statusCode, 401);
  assert.deepEqual(res.json(), { message: '401 Unauthorized' });
  // by case-insensitive username and by id
  for (const ident of ['ALICE', String(u.id)]) {
    res = await app.inject({ method: 'GET', url: '/api/v4/version', headers: { ...root, sudo: ident } });
    assert.equal(res.statusCode, 200);
  }
});

test('admin_mode setting: an administrator token needs the admin_mode scope to act as admin', async (t) => {
  const { c, seed } = await buildTestApp(t);
  const admin = await seed.user({ is_admin: true });
  const without = await seed.token(admin, { scopes: ['api'] });
  const withMode = await seed.token(admin, { scopes: ['api', 'admin_mode'] });
  await c.settings.save({ admin_mode: true });
  const creds = (tok: string) => ({ privateToken: tok, method: 'GET', path: '/api/v4/version' });
  assert.equal((await c.auth.authenticate(creds(without.token), ['api'])).isAdmin, false);
  assert.equal((await c.auth.authenticate(creds(withMode.token), ['api'])).isAdmin, true);
  await c.settings.save({ admin_mode: false });
  assert.equal((await c.auth.authenticate(creds(without.token), ['api'])).isAdmin, true);
});

test('a token served from the credential cache: settings apply on the next request, and it expires at midnight without any write', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const admin = await seed.user({ is_admin: true });
  const tomorrow = addDays(todayDate(), 1);
  const tok = await seed.token(admin, { scopes: ['api'], expires_at: tomorrow });
  const settings = () => app.inject({ method: 'GET', url: '/api/v4/application/settings', headers: tok.headers });
  assert.equal((await settings()).statusCode, 200);
  assert.equal((await settings()).statusCode, 200); // the cached principal
  await c.settings.save({ admin_mode: true });
  const forbidden = await settings();
  assert.equal(forbidden.statusCode, 403);
  assert.deepEqual(forbidden.json(), { message: '403 Forbidden' });
  await c.settings.save({ admin_mode: false });
  assert.equal((await settings()).statusCode, 200);
  // the clock reaches the expiry date: nothing was written, the cached principal must not outlive it
  t.mock.timers.enable({ apis: ['Date'], now: Date.parse(`${tomorrow}T00:00:01Z`) });
  const expired = await settings();
  assert.equal(expired.statusCode, 401);
  assert.deepEqual(expired.json(), { error: 'invalid_token', error_description: EXPIRED });
});

test('disable_personal_access_tokens rejects their use', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user();
  const tok = await seed.token(u);
  await c.settings.save({ disable_personal_access_tokens: true });
  const res = await app.inject({ method: 'GET', url: '/api/v4/version', headers: tok.headers });
  assert.equal(res.statusCode, 401);
  assert.deepEqual(res.json(), { message: '401 Unauthorized' });
});

test('job tokens: the actor kind is resolved through the pluggable resolver; unknown job token is 401, and so is a valid one outside the job-token routes', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const res = await app.inject({ method: 'GET', url: '/api/v4/version', headers: { 'job-token': 'nope' } });
  assert.equal(res.statusCode, 401);
  assert.deepEqual(res.json(), { message: '401 Unauthorized' });
  const u = await seed.user();
  c.auth.jobTokens = { resolve: async (tok) => (tok === 'job-secret' ? { user: u, jobId: 7 } : null) };
  const actor = await c.auth.authenticate({ jobToken: 'job-secret', method: 'GET', path: '/api/v4/version' }, ['api']);
  assert.equal(actor.kind, 'job');
  assert.equal(actor.jobId, 7);
  assert.equal(actor.user!.id, u.id);
  // GitLab accepts job tokens only on its job-token endpoints (route config jobToken)
  const elsewhere = await app.inject({ method: 'GET', url: '/api/v4/version?job_token=job-secret' });
  assert.equal(elsewhere.statusCode, 401);
  assert.deepEqual(elsewhere.json(), { message: '401 Unauthorized' });
});

test('tokens are stored only as digests', async (t) => {
  const { c, seed } = await buildTestApp(t);
  const u = await seed.user();
  const tok = await seed.token(u);
  const row = await c.db.kysely.selectFrom('personal_access_tokens').selectAll().where('id', '=', tok.id).executeTakeFirstOrThrow();
  assert.ok(!Object.values(row).some((v) => typeof v === 'string' && v.includes(tok.token)));
  assert.match(tok.token, /^glpat-[A-Za-z0-9_-]+\.[0-9a-z]{2}[0-9a-z]{7}$/);
});
