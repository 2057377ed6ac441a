// OAuth 2 token endpoints (Doorkeeper's bodies), and OAuth access tokens on /api/v4.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { buildApp } from '../../../src/app.ts';
import type { Container } from '../../../src/container.ts';
import { buildTestApp } from '../../helpers/build-app.ts';

const INVALID_GRANT = {
  error: 'invalid_grant',
  error_description:
    'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.',
};
const UNSUPPORTED = { error: 'unsupported_grant_type', error_description: 'The authorization grant type is not supported by the authorization server.' };
const INVALID_SCOPE = { error: 'invalid_scope', error_description: 'The requested scope is invalid, unknown, or malformed.' };
const missing = (p: string) => ({ error: 'invalid_request', error_description: `Missing required parameter: ${p}.` });
const INVALID_TOKEN = { error: 'invalid_token', error_description: 'The access token is invalid', state: 'unauthorized' };
const EXPIRED = 'Token is expired. You can either do re-authorization or token refresh.';
const REVOKED = 'Token was revoked. You have to re-authorize from the user.';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** The app plus a write route on /api/v4, to see how scopes and CSRF treat a POST. */
async function appWithProbe(t: TestContext, c: Container) {
  const app = await buildApp(c, (a) => {
    a.post('/api/v4/__probe', { config: { api: 'platform', auth: 'user' } }, async (req, reply) =>
      reply.code(201).send({ username: req.actor.user!.username }),
    );
  });
  t.after(() => app.close());
  return app;
}

type App = Awaited<ReturnType<typeof buildTestApp>>['app'];

function tokenRequest(app: App, fields: Record<string, string>) {
  return app.inject({ method: 'POST', url: '/oauth/token', headers: FORM, payload: new URLSearchParams(fields).toString() });
}

function assertOauthError(res: Awaited<ReturnType<App['inject']>>, status: number, body: object): void {
  assert.equal(res.statusCode, status, res.body);
  assert.deepEqual(res.json(), body);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers.pragma, 'no-cache');
}

test('password grant issues a Bearer token that works on the API as header and parameter', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user({ username: 'alice', password: 'alice-password' });
  const before = Math.floor(Date.now() / 1000);
  const res = await tokenRequest(app, { grant_type: 'password', username: 'alice', password: 'alice-password' });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers.pragma, 'no-cache');
  const body = res.json();
  assert.deepEqual(Object.keys(body), ['access_token', 'token_type', 'expires_in', 'refresh_token', 'scope', 'created_at']);
  assert.equal(body.token_type, 'Bearer');
  assert.equal(body.expires_in, 7200);
  assert.equal(body.scope, 'api');
  assert.ok(body.created_at >= before && body.created_at <= Math.floor(Date.now() / 1000));
  assert.match(body.access_token, /^[A-Za-z0-9_-]{43}$/);
  assert.notEqual(body.access_token, body.refresh_token);

  for (const req of [{ headers: { authorization: `Bearer ${body.access_token}` } }, { url: `/api/v4/version?access_token=${body.access_token}` }]) {
    const v = await app.inject({ method: 'GET', url: '/api/v4/version', ...req });
    assert.equal(v.statusCode, 200, JSON.stringify(req));
    assert.deepEqual(v.json(), { version: '17.0.0', revision: 'hearth' });
  }

  const rows = await c.db.kysely.selectFrom('oauth_tokens').selectAll().where('user_id', '=', u.id).execute();
  assert.equal(rows.length, 1);
  assert.equal(rows[0].scopes, 'api');
  assert.equal(rows[0].expires_in, 7200);
  assert.equal(rows[0].revoked_at, null);
  assert.equal(rows[0].previous_refresh_token_digest, null);
  // only digests are stored
  assert.ok(!Object.values(rows[0]).some((v) => typeof v === 'string' && (v.includes(body.access_token) || v.includes(body.refresh_token))));
  // the grant does not count as a web sign-in
  const user = await c.users.byId(u.id);
  assert.equal(user!.sign_in_count, 0);
  assert.equal(user!.failed_attempts, 0);
});

test('password grant: login by email (any case) and JSON bodies', async (t) => {
  const { app, seed } = await buildTestApp(t);
  await seed.user({ username: 'bob', email: 'Bob@Example.com', password: 'bob-password' });
  const res = await app.inject({
    method: 'POST',
    url: '/oauth/token',
    payload: { grant_type: 'password', username: 'bob@example.COM', password: 'bob-password', scope: 'read_api  read_user read_api' },
  });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().scope, 'read_api read_user');
});

test('token endpoint: bad input gives Doorkeeper error bodies', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user({ username: 'carol', password: 'carol-password' });

  let res = await app.inject({ method: 'POST', url: '/oauth/token', headers: FORM, payload: '' });
  assertOauthError(res, 400, missing('grant_type'));
  assert.equal(
    res.headers['www-authenticate'],
    `Bearer realm="Doorkeeper", error="invalid_request", error_description="Missing required parameter: grant_type."`,
  );
  res = await app.inject({ method: 'POST', url: '/oauth/token', payload: {} });
  assertOauthError(res, 400, missing('grant_type'));
  assertOauthError(await tokenRequest(app, { grant_type: 'client_credentials' }), 400, UNSUPPORTED);
  assertOauthError(await tokenRequest(app, { grant_type: 'authorization_code', code: 'x' }), 400, UNSUPPORTED);
  assertOauthError(await tokenRequest(app, { grant_type: 'password', password: 'carol-password' }), 400, missing('username'));
  assertOauthError(await tokenRequest(app, { grant_type: 'password', username: 'carol' }), 400, missing('password'));
  assertOauthError(await tokenRequest(app, { grant_type: 'password', username: 'carol', password: '' }), 400, missing('password'));
  assertOauthError(await tokenRequest(app, { grant_type: 'password', username: 'nobody', password: 'carol-password' }), 400, INVALID_GRANT);
  assertOauthError(await tokenRequest(app, { grant_type: 'password', username: 'carol', password: 'wrong-password' }), 400, INVALID_GRANT);
  // a bad password wins over a bad scope (Doorkeeper checks the resource owner first)
  assertOauthError(await tokenRequest(app, { grant_type: 'password', username: 'carol', password: 'wrong', scope: 'bogus' }), 400, INVALID_GRANT);
  assertOauthError(await tokenRequest(app, { grant_type: 'refresh_token' }), 400, missing('refresh_token'));
  assertOauthError(await tokenRequest(app, { grant_type: 'refresh_token', refresh_token: 'nope' }), 400, INVALID_GRANT);

  assert.equal((await c.db.kysely.selectFrom('oauth_tokens').selectAll().execute()).length, 0);
  assert.equal((await c.users.byId(u.id))!.failed_attempts, 2);
});

test('scopes: limited to what the user may hold; a read_api token cannot write', async (t) => {
  const { c, seed } = await buildTestApp(t);
  const app = await appWithProbe(t, c);
  await seed.user({ username: 'dave', password: 'dave-password' });
  const admin = await seed.user({ username: 'boss', password: 'boss-password', is_admin: true });
  const grant = (username: string, scope: string) => tokenRequest(app, { grant_type: 'password', username, password: `${username}-password`, scope });

  assertOauthError(await grant('dave', 'sudo'), 400, INVALID_SCOPE);
  assertOauthError(await grant('dave', 'api admin_mode'), 400, INVALID_SCOPE);
  assertOauthError(await grant('dave', 'api bogus'), 400, INVALID_SCOPE);

  const read = (await grant('dave', 'read_api')).json();
  assert.equal(read.scope, 'read_api');
  const bearer = { authorization: `Bearer ${read.access_token}` };
  assert.equal((await app.inject({ method: 'GET', url: '/api/v4/version', headers: bearer })).statusCode, 200);
  const write = await app.inject({ method: 'POST', url: '/api/v4/__probe', headers: bearer });
  assert.equal(write.statusCode, 403);
  assert.deepEqual(write.json(), {
    error: 'insufficient_scope',
    error_description: 'The request requires higher privileges than provided by the access token.',
    scope: 'api',
  });
  const full = (await grant('dave', '')).json();
  assert.equal(full.scope, 'api');
  const ok = await app.inject({ method: 'POST', url: '/api/v4/__probe', headers: { authorization: `Bearer ${full.access_token}` } });
  assert.equal(ok.statusCode, 201);
  assert.deepEqual(ok.json(), { username: 'dave' });

  // an administrator may ask for sudo, and an OAuth token may then use it
  const sudo = await grant('boss', 'api sudo');
  assert.equal(sudo.statusCode, 200);
  assert.equal(sudo.json().scope, 'api sudo');
  const as = await app.inject({ method: 'POST', url: '/api/v4/__probe', headers: { authorization: `Bearer ${sudo.json().access_token}`, sudo: 'dave' } });
  assert.equal(as.statusCode, 201);
  assert.deepEqual(as.json(), { username: 'dave' });
  const rows = await c.db.kysely.selectFrom('oauth_tokens').select('scopes').where('user_id', '=', admin.id).execute();
  assert.deepEqual(rows, [{ scopes: 'api sudo' }]);
});

test('refresh: a new pair, the old pair revoked, refresh tokens work once', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user({ username: 'erin', password: 'erin-password' });
  const first = (await tokenRequest(app, { grant_type: 'password', username: 'erin', password: 'erin-password', scope: 'api read_user' })).json();

  const res = await tokenRequest(app, { grant_type: 'refresh_token', refresh_token: first.refresh_token });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers.pragma, 'no-cache');
  const second = res.json();
  assert.equal(second.token_type, 'Bearer');
  assert.equal(second.expires_in, 7200);
  assert.equal(second.scope, 'api read_user');
  assert.notEqual(second.access_token, first.access_token);
  assert.notEqual(second.refresh_token, first.refresh_token);

  const rows = await c.db.kysely.selectFrom('oauth_tokens').selectAll().where('user_id', '=', u.id).orderBy('id').execute();
  assert.equal(rows.length, 2);
  assert.ok(rows[0].revoked_at);
  assert.equal(rows[1].revoked_at, null);
  assert.equal(rows[1].previous_refresh_token_digest, rows[0].refresh_token_digest);

  // the old access token is revoked, the new one works
  const old = await app.inject({ method: 'GET', url: '/api/v4/version', headers: { authorization: `Bearer ${first.access_token}` } });
  assert.equal(old.statusCode, 401);
  assert.deepEqual(old.json(), { error: 'invalid_token', error_description: REVOKED });
  assert.equal((await app.inject({ method: 'GET', url: '/api/v4/version', headers: { authorization: `Bearer ${second.access_token}` } })).statusCode, 200);

  // reuse of the old refresh token is refused and changes nothing
  assertOauthError(await tokenRequest(app, { grant_type: 'refresh_token', refresh_token: first.refresh_token }), 400, INVALID_GRANT);
  assert.equal((await c.db.kysely.selectFrom('oauth_tokens').selectAll().execute()).length, 2);

  // a narrower scope may be asked for, a wider one not
  assertOauthError(await tokenRequest(app, { grant_type: 'refresh_token', refresh_token: second.refresh_token, scope: 'api sudo' }), 400, INVALID_SCOPE);
  const third = await tokenRequest(app, { grant_type: 'refresh_token', refresh_token: second.refresh_token, scope: 'read_user' });
  assert.equal(third.statusCode, 200);
  assert.equal(third.json().scope, 'read_user');

  // a blocked owner cannot refresh
  await c.db.kysely.updateTable('users').set({ state: 'blocked' }).where('id', '=', u.id).execute();
  assertOauthError(await tokenRequest(app, { grant_type: 'refresh_token', refresh_token: third.json().refresh_token }), 400, INVALID_GRANT);
});

test('token info: Doorkeeper shape with the legacy keys; 401 invalid_token otherwise', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user({ username: 'frank', password: 'frank-password' });
  const tok = (await tokenRequest(app, { grant_type: 'password', username: 'frank', password: 'frank-password', scope: 'read_api read_user' })).json();

  for (const req of [{ headers: { authorization: `Bearer ${tok.access_token}` } }, { url: `/oauth/token/info?access_token=${tok.access_token}` }]) {
    const res = await app.inject({ method: 'GET', url: '/oauth/token/info', ...req });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    const body = res.json();
    assert.ok(body.expires_in > 7190 && body.expires_in <= 7200);
    assert.deepEqual(body, {
      resource_owner_id: u.id,
      scope: ['read_api', 'read_user'],
      expires_in: body.expires_in,
      application: { uid: null },
      created_at: tok.created_at,
      scopes: ['read_api', 'read_user'],
      expires_in_seconds: body.expires_in,
    });
  }

  const www = 'Bearer realm="Doorkeeper", error="invalid_token", error_description="The access token is invalid"';
  for (const headers of [{}, { authorization: 'Bearer nope' }]) {
    const res = await app.inject({ method: 'GET', url: '/oauth/token/info', headers });
    assertOauthError(res, 401, INVALID_TOKEN);
    assert.equal(res.headers['www-authenticate'], www);
  }
  // a personal access token is not an OAuth token
  const pat = await seed.token(u);
  assertOauthError(await app.inject({ method: 'GET', url: '/oauth/token/info', headers: { authorization: `Bearer ${pat.token}` } }), 401, INVALID_TOKEN);

  // expired: token info and the API refuse it, but its refresh token still works
  await c.db.kysely
    .updateTable('oauth_tokens')
    .set({ created_at: new Date(Date.now() - 7201_000).toISOString() })
    .where('user_id', '=', u.id)
    .execute();
  assertOauthError(await app.inject({ method: 'GET', url: '/oauth/token/info', headers: { authorization: `Bearer ${tok.access_token}` } }), 401, INVALID_TOKEN);
  const api = await app.inject({ method: 'GET', url: '/api/v4/version', headers: { authorization: `Bearer ${tok.access_token}` } });
  assert.equal(api.statusCode, 401);
  assert.deepEqual(api.json(), { error: 'invalid_token', error_description: EXPIRED });
  assert.equal(api.headers['www-authenticate'], `Bearer realm="The API", error="invalid_token", error_description="${EXPIRED}"`);
  const viaParam = await app.inject({ method: 'GET', url: `/api/v4/version?access_token=${tok.access_token}` });
  assert.equal(viaParam.statusCode, 401);
  assert.deepEqual(viaParam.json(), { error: 'invalid_token', error_description: EXPIRED });
  const refreshed = await tokenRequest(app, { grant_type: 'refresh_token', refresh_token: tok.refresh_token });
  assert.equal(refreshed.statusCode, 200);
});

test('an OAuth token is valid for two hours', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user({ username: 'gina', password: 'gina-password' });
  const tok = (await tokenRequest(app, { grant_type: 'password', username: 'gina', password: 'gina-password' })).json();
  const at = (ms: number) =>
    c.db.kysely
      .updateTable('oauth_tokens')
      .set({ created_at: new Date(Date.now() - ms).toISOString() })
      .where('user_id', '=', u.id)
      .execute();
  const call = () => app.inject({ method: 'GET', url: '/api/v4/version', headers: { authorization: `Bearer ${tok.access_token}` } });
  await at(7200_000 - 60_000);
  assert.equal((await call()).statusCode, 200);
  await at(7200_000 + 1000);
  const res = await call();
  assert.equal(res.statusCode, 401);
  assert.deepEqual(res.json(), { error: 'invalid_token', error_description: EXPIRED });
});

test('revoke: 200 {} always; the token stops working', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user({ username: 'hank', password: 'hank-password' });
  const a = (await tokenRequest(app, { grant_type: 'password', username: 'hank', password: 'hank-password' })).json();
  const b = (await tokenRequest(app, { grant_type: 'password', username: 'hank', password: 'hank-password' })).json();

  let res = await app.inject({ method: 'POST', url: '/oauth/revoke', headers: FORM, payload: `token=${a.access_token}` });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), {});
  assert.equal(res.headers['content-type'], 'application/json');
  const rows = await c.db.kysely.selectFrom('oauth_tokens').selectAll().where('user_id', '=', u.id).orderBy('id').execute();
  assert.ok(rows[0].revoked_at);
  assert.equal(rows[1].revoked_at, null);
  const api = await app.inject({ method: 'GET', url: '/api/v4/version', headers: { authorization: `Bearer ${a.access_token}` } });
  assert.equal(api.statusCode, 401);
  assert.deepEqual(api.json(), { error: 'invalid_token', error_description: REVOKED });
  assertOauthError(await app.inject({ method: 'GET', url: '/oauth/token/info', headers: { authorization: `Bearer ${a.access_token}` } }), 401, INVALID_TOKEN);
  // its refresh token is gone too
  assertOauthError(await tokenRequest(app, { grant_type: 'refresh_token', refresh_token: a.refresh_token }), 400, INVALID_GRANT);

  // revoking by the refresh token revokes the pair
  res = await app.inject({ method: 'POST', url: '/oauth/revoke', payload: { token: b.refresh_token, token_type_hint: 'refresh_token' } });
  assert.deepEqual(res.json(), {});
  assert.equal((await app.inject({ method: 'GET', url: '/api/v4/version', headers: { authorization: `Bearer ${b.access_token}` } })).statusCode, 401);

  // unknown, repeated or missing tokens: still 200 {}
  for (const payload of ['token=unknown', `token=${a.access_token}`, '']) {
    res = await app.inject({ method: 'POST', url: '/oauth/revoke', headers: FORM, payload });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {});
  }
});

test('password grant obeys the sign-in rules: setting, account state, two-factor', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  await seed.user({ username: 'ivy', password: 'ivy-password' });
  const grant = (username: string) => tokenRequest(app, { grant_type: 'password', username, password: `${username}-password` });

  // GitLab gates the grant with password_authentication_enabled_for_git, not the web setting
  await c.settings.save({ password_authentication_enabled_for_web: false });
  assert.equal((await grant('ivy')).statusCode, 200);
  await c.settings.save({ password_authentication_enabled_for_web: true, password_authentication_enabled_for_git: false });
  assertOauthError(await grant('ivy'), 400, INVALID_GRANT);
  await c.settings.save({ password_authentication_enabled_for_git: true });

  for (const state of ['blocked', 'deactivated', 'blocked_pending_approval']) {
    const u = await seed.user({ username: `u_${state}`, password: `u_${state}-password`, state });
    assertOauthError(await grant(`u_${state}`), 400, INVALID_GRANT);
    assert.equal((await c.users.byId(u.id))!.state, state);
  }
  const tfa = await seed.user({ username: 'tfa', password: 'tfa-password' });
  await c.db.kysely.updateTable('users').set({ two_factor_enabled: 1 }).where('id', '=', tfa.id).execute();
  assertOauthError(await grant('tfa'), 400, INVALID_GRANT);
  const rows = await c.db.kysely.selectFrom('oauth_tokens').select('user_id').execute();
  assert.equal(rows.length, 1);
});

test('password grant: lockout after max_login_attempts, unlock after the period', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user({ username: 'jack', password: 'jack-password' });
  await c.settings.save({ max_login_attempts: 3 });
  const good = () => tokenRequest(app, { grant_type: 'password', username: 'jack', password: 'jack-password' });
  const bad = () => tokenRequest(app, { grant_type: 'password', username: 'jack', password: 'nope-nope' });
  for (let i = 0; i < 3; i++) assertOauthError(await bad(), 400, INVALID_GRANT);
  let row = (await c.users.byId(u.id))!;
  assert.equal(row.failed_attempts, 3);
  assert.ok(row.locked_at);
  // locked: the right password does not help
  assertOauthError(await good(), 400, INVALID_GRANT);
  assert.equal((await c.db.kysely.selectFrom('oauth_tokens').selectAll().execute()).length, 0);
  // after the default 10 minutes the lock ends
  await c.db.kysely
    .updateTable('users')
    .set({ locked_at: new Date(Date.now() - 11 * 60_000).toISOString() })
    .where('id', '=', u.id)
    .execute();
  assert.equal((await good()).statusCode, 200);
  row = (await c.users.byId(u.id))!;
  assert.equal(row.failed_attempts, 0);
  assert.equal(row.locked_at, null);
});
