// Personal access tokens API (spec "Personal access tokens", reference §4): list, get, self, rotate,
// revoke, creation for a user and for oneself; exact bodies, headers and the rows afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import type { PatRow } from '../../../src/db/schema.ts';
import { addDays, todayDate } from '../../../src/lib/time.ts';

const REVOKED = 'Token was revoked. You have to re-authorize from the user.';
const WWW_REVOKED = `Bearer realm="The API", error="invalid_token", error_description="${REVOKED}"`;
const URL = '/api/v4/personal_access_tokens';

async function rowOf(c: TestApp['c'], id: number): Promise<PatRow> {
  return c.db.kysely.selectFrom('personal_access_tokens').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

async function setRow(c: TestApp['c'], id: number, values: Partial<PatRow>): Promise<void> {
  await c.db.kysely.updateTable('personal_access_tokens').set(values).where('id', '=', id).execute();
}

/** The list entity of a row, as the API must show it. */
function entity(row: PatRow): Record<string, unknown> {
  const today = todayDate();
  return {
    id: row.id,
    name: row.name,
    revoked: row.revoked === 1,
    created_at: row.created_at,
    description: row.description,
    scopes: JSON.parse(row.scopes),
    user_id: row.user_id,
    last_used_at: row.last_used_at,
    active: row.revoked === 0 && (row.expires_at === null || row.expires_at > today),
    expires_at: row.expires_at,
  };
}

/** The secret is nowhere in the row: only its digest. */
async function assertOnlyDigestStored(c: TestApp['c'], id: number, secret: string): Promise<void> {
  const row = await rowOf(c, id);
  assert.notEqual(row.token_digest, secret);
  for (const [k, v] of Object.entries(row)) assert.ok(!String(v).includes(secret), `column ${k} holds the secret`);
}

test('list: non-administrators see only their own non-impersonation tokens; whole entities, never the secret', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const alice = await seed.user();
  const bob = await seed.user();
  const auth = await seed.token(alice, { name: 'cli', scopes: ['read_api'] });
  const ci = await seed.token(alice, { name: 'ci', scopes: ['api', 'read_repository'], description: 'for CI', expires_at: addDays(todayDate(), 30) });
  await seed.token(alice, { name: 'impersonation', impersonation: true });
  await seed.token(bob, { name: 'bob' });

  const res = await app.inject({ method: 'GET', url: URL, headers: auth.headers });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.deepEqual(res.json(), [entity(await rowOf(c, auth.id)), entity(await rowOf(c, ci.id))]);
  assert.deepEqual(res.json()[1], {
    id: ci.id,
    name: 'ci',
    revoked: false,
    created_at: (await rowOf(c, ci.id)).created_at,
    description: 'for CI',
    scopes: ['api', 'read_repository'],
    user_id: alice.id,
    last_used_at: null,
    active: true,
    expires_at: addDays(todayDate(), 30),
  });
  assert.ok(!res.body.includes(ci.token) && !res.body.includes(auth.token));
  // the token used for the request is recorded as used
  assert.match(String(res.json()[0].last_used_at), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

  // one's own user_id (or a blank one) is allowed, another user's is 401
  const own = await app.inject({ method: 'GET', url: `${URL}?user_id=${alice.id}`, headers: auth.headers });
  assert.deepEqual(
    own.json().map((e: any) => e.id),
    [auth.id, ci.id],
  );
  const blank = await app.inject({ method: 'GET', url: `${URL}?user_id=`, headers: auth.headers });
  assert.deepEqual(
    blank.json().map((e: any) => e.id),
    [auth.id, ci.id],
  );
  for (const id of [bob.id, 999999]) {
    const other = await app.inject({ method: 'GET', url: `${URL}?user_id=${id}`, headers: auth.headers });
    assert.equal(other.statusCode, 401);
    assert.deepEqual(other.json(), { message: '401 Unauthorized' });
  }

  const anon = await app.inject({ method: 'GET', url: URL });
  assert.equal(anon.statusCode, 401);
  assert.deepEqual(anon.json(), { message: '401 Unauthorized' });
});

test('list: administrators see every token, also of one user; unknown or blank user_id is 404', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const alice = await seed.user();
  const bob = await seed.user();
  const a = await seed.token(alice, { name: 'a' });
  const imp = await seed.token(alice, { name: 'imp', impersonation: true });
  const b = await seed.token(bob, { name: 'b' });

  const all = await app.inject({ method: 'GET', url: URL, headers: root });
  assert.equal(all.statusCode, 200);
  assert.deepEqual(
    all.json().map((e: any) => e.id),
    [1, a.id, imp.id, b.id],
  );
  assert.equal(all.headers['x-total'], '4');

  const ofAlice = await app.inject({ method: 'GET', url: `${URL}?user_id=${alice.id}`, headers: root });
  assert.deepEqual(ofAlice.json(), [entity(await rowOf(c, a.id)), entity(await rowOf(c, imp.id))]);

  for (const q of ['user_id=999999', 'user_id=', 'user_id=99999999999999']) {
    const res = await app.inject({ method: 'GET', url: `${URL}?${q}`, headers: root });
    assert.equal(res.statusCode, 404, q);
    assert.deepEqual(res.json(), { message: '404 Not Found' });
  }
});

test('list filters: revoked, state, created/last used/expiry bounds, search, sort', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user();
  const today = todayDate();
  const auth = await seed.token(u, { name: 'Auth token' });
  const old = await seed.token(u, { name: 'Old deploy' });
  const revoked = await seed.token(u, { name: 'revoked one' });
  const expired = await seed.token(u, { name: 'Expired DEPLOY' });
  const fresh = await seed.token(u, { name: 'fresh 100%' });
  await setRow(c, auth.id, { created_at: '2024-01-01T00:00:00.000Z', expires_at: addDays(today, 300) });
  await setRow(c, old.id, { created_at: '2020-06-01T12:00:00.000Z', last_used_at: '2021-01-01T00:00:00.000Z', expires_at: addDays(today, 10) });
  await setRow(c, revoked.id, { created_at: '2022-01-01T00:00:00.000Z', revoked: 1, last_used_at: '2022-02-01T00:00:00.000Z' });
  await setRow(c, expired.id, { created_at: '2023-01-01T00:00:00.000Z', expires_at: today });
  await setRow(c, fresh.id, { created_at: '2025-01-01T00:00:00.000Z', expires_at: addDays(today, 100) });

  const ids = async (query: string) => {
    const res = await app.inject({ method: 'GET', url: `${URL}?${query}`, headers: auth.headers });
    assert.equal(res.statusCode, 200, `${query}: ${res.body}`);
    return res.json().map((e: any) => e.id);
  };
  // the auth token's own last_used_at is "now"
  assert.deepEqual(await ids('revoked=true'), [revoked.id]);
  assert.deepEqual(await ids('revoked=no'), [auth.id, old.id, expired.id, fresh.id]);
  assert.deepEqual(await ids('state=active'), [auth.id, old.id, fresh.id]);
  // a token expiring today is no longer active, so it is inactive
  assert.deepEqual(await ids('state=inactive'), [revoked.id, expired.id]);
  assert.deepEqual(await ids('created_before=2022-01-01'), [old.id, revoked.id]);
  assert.deepEqual(await ids('created_after=2023-01-01T00:00:00Z'), [auth.id, expired.id, fresh.id]);
  assert.deepEqual(await ids('created_after=2020-06-01T13:00:00%2B01:00&created_before=2020-06-02'), [old.id]);
  assert.deepEqual(await ids('last_used_before=2022-01-15'), [old.id]);
  assert.deepEqual(await ids('last_used_after=2021-06-01'), [auth.id, revoked.id]);
  assert.deepEqual(await ids(`expires_before=${addDays(today, 100)}`), [old.id, expired.id]);
  assert.deepEqual(await ids(`expires_after=${addDays(today, 100)}`), [auth.id, fresh.id]);
  assert.deepEqual(await ids('search=DePlOy'), [old.id, expired.id]);
  assert.deepEqual(await ids('search=100%25'), [fresh.id]);
  assert.deepEqual(await ids('search=0%25'), [fresh.id]);
  assert.deepEqual(await ids('search=_'), []);

  assert.deepEqual(await ids('sort=created_asc'), [old.id, revoked.id, expired.id, auth.id, fresh.id]);
  assert.deepEqual(await ids('sort=created_desc'), [fresh.id, auth.id, expired.id, revoked.id, old.id]);
  assert.deepEqual(await ids('sort=name_asc'), [auth.id, expired.id, fresh.id, old.id, revoked.id]);
  assert.deepEqual(await ids('sort=name_desc'), [revoked.id, old.id, fresh.id, expired.id, auth.id]);
  // NULLs last ascending, first descending; ties by id descending
  assert.deepEqual(await ids('sort=expires_asc'), [expired.id, old.id, fresh.id, auth.id, revoked.id]);
  assert.deepEqual(await ids('sort=expires_desc'), [revoked.id, auth.id, fresh.id, old.id, expired.id]);
  assert.deepEqual(await ids('sort=last_used_asc'), [old.id, revoked.id, auth.id, fresh.id, expired.id]);
  assert.deepEqual(await ids('sort=last_used_desc'), [fresh.id, expired.id, auth.id, revoked.id, old.id]);
  // an unknown sort is ignored (GitLab's finder), leaving the id order
  assert.deepEqual(await ids('sort=bogus'), [auth.id, old.id, revoked.id, expired.id, fresh.id]);
  assert.deepEqual(await ids('state=active&sort=name_desc&search=e'), [old.id, fresh.id, auth.id]);
});

test('list: bad filter values are Grape errors', async (t) => {
  const { app, root } = await buildTestApp(t);
  const cases: [string, string][] = [
    ['state=bogus', 'state does not have a valid value'],
    ['revoked=maybe', 'revoked is invalid'],
    ['created_after=yesterday', 'created_after is invalid'],
    ['created_before=2020-13-45', 'created_before is invalid'],
    ['last_used_after=2020-01-01Tnoon', 'last_used_after is invalid'],
    ['expires_before=2020-02-30', 'expires_before is invalid'],
    ['expires_after=01/02/2020', 'expires_after is invalid'],
    ['user_id=abc', 'user_id is invalid'],
    ['per_page=0', 'per_page has a value not allowed'],
    ['page=abc', 'page is invalid'],
    ['state=bogus&revoked=maybe', 'revoked is invalid, state does not have a valid value'],
  ];
  for (const [q, error] of cases) {
    const res = await app.inject({ method: 'GET', url: `${URL}?${q}`, headers: root });
    assert.equal(res.statusCode, 400, q);
    assert.deepEqual(res.json(), { error }, q);
  }
});

test('list: offset pagination headers; credentials never reach the Link header', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const u = await seed.user();
  const auth = await seed.token(u);
  for (let i = 0; i < 4; i++) await seed.token(u, { name: `t${i}` });
  const res = await app.inject({ method: 'GET', url: `${URL}?private_token=${auth.token}&per_page=2&page=2&revoked=false` });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().length, 2);
  assert.equal(res.headers['x-per-page'], '2');
  assert.equal(res.headers['x-page'], '2');
  assert.equal(res.headers['x-next-page'], '3');
  assert.equal(res.headers['x-prev-page'], '1');
  assert.equal(res.headers['x-total'], '5');
  assert.equal(res.headers['x-total-pages'], '3');
  const base = 'http://hearth.test/api/v4/personal_access_tokens';
  assert.equal(
    res.headers.link,
    [
      `<${base}?page=1&per_page=2&revoked=false>; rel="prev"`,
      `<${base}?page=3&per_page=2&revoked=false>; rel="next"`,
      `<${base}?page=1&per_page=2&revoked=false>; rel="first"`,
      `<${base}?page=3&per_page=2&revoked=false>; rel="last"`,
    ].join(', '),
  );
  assert.ok(!String(res.headers.link).includes(auth.token));
});

test('get by id: owners and administrators; 401 for others and missing tokens, 404 for administrators', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const alice = await seed.user();
  const bob = await seed.user();
  const auth = await seed.token(alice, { scopes: ['read_api'] });
  const mine = await seed.token(alice, { name: 'mine', description: 'd', expires_at: '2099-01-01' });
  const imp = await seed.token(alice, { name: 'imp', impersonation: true });
  const bobs = await seed.token(bob);

  const res = await app.inject({ method: 'GET', url: `${URL}/${mine.id}`, headers: auth.headers });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.deepEqual(res.json(), {
    id: mine.id,
    name: 'mine',
    revoked: false,
    created_at: (await rowOf(c, mine.id)).created_at,
    description: 'd',
    scopes: ['api'],
    user_id: alice.id,
    last_used_at: null,
    active: true,
    expires_at: '2099-01-01',
    last_used_ips: [],
  });
  // one's own impersonation token can be read (GitLab's read_user_personal_access_tokens is about the owner)
  assert.equal((await app.inject({ method: 'GET', url: `${URL}/${imp.id}`, headers: auth.headers })).statusCode, 200);

  for (const id of [String(bobs.id), '999999', 'abc', '99999999999']) {
    const r = await app.inject({ method: 'GET', url: `${URL}/${id}`, headers: auth.headers });
    assert.equal(r.statusCode, 401, id);
    assert.deepEqual(r.json(), { message: '401 Unauthorized' });
  }
  const adminRead = await app.inject({ method: 'GET', url: `${URL}/${bobs.id}`, headers: root });
  assert.equal(adminRead.statusCode, 200);
  assert.equal(adminRead.json().user_id, bob.id);
  for (const id of ['999999', 'abc']) {
    const r = await app.inject({ method: 'GET', url: `${URL}/${id}`, headers: root });
    assert.equal(r.statusCode, 404, id);
    assert.deepEqual(r.json(), { message: '404 Not Found' });
  }
});

test('self: any scope reads itself with last_used_at set; other credentials are 400', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user();
  const tok = await seed.token(u, { name: 'repo only', scopes: ['read_repository'] });
  assert.equal((await rowOf(c, tok.id)).last_used_at, null);

  const res = await app.inject({ method: 'GET', url: `${URL}/self`, headers: tok.headers });
  assert.equal(res.statusCode, 200);
  const row = await rowOf(c, tok.id);
  assert.match(String(row.last_used_at), /^\d{4}-\d{2}-\d{2}T/);
  assert.deepEqual(res.json(), { ...entity(row), scopes: ['read_repository'], last_used_ips: [] });
  assert.equal(res.json().last_used_at, row.last_used_at);

  // the same scope is refused elsewhere
  const elsewhere = await app.inject({ method: 'GET', url: URL, headers: tok.headers });
  assert.equal(elsewhere.statusCode, 403);
  assert.equal(elsewhere.json().error, 'insufficient_scope');

  const oauth = await c.oauth.issue(u, ['api']);
  const viaOauth = await app.inject({ method: 'GET', url: `${URL}/self`, headers: { authorization: `Bearer ${oauth.access_token}` } });
  assert.equal(viaOauth.statusCode, 400);
  assert.deepEqual(viaOauth.json(), { message: '400 Bad request - This endpoint requires token type to be a personal access token' });
  const session = await c.sessions.create(u, 60, null);
  const viaSession = await app.inject({ method: 'GET', url: `${URL}/self`, cookies: { _service_session: session.id } });
  assert.equal(viaSession.statusCode, 400);
  assert.deepEqual(viaSession.json(), { message: '400 Bad request - This endpoint requires token type to be a personal access token' });
  assert.equal((await app.inject({ method: 'GET', url: `${URL}/self` })).statusCode, 401);
});

test('revoke self: 204 with any scope, then the token is refused as revoked', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user();
  const tok = await seed.token(u, { scopes: ['read_user'] });
  const res = await app.inject({ method: 'DELETE', url: `${URL}/self`, headers: tok.headers });
  assert.equal(res.statusCode, 204);
  assert.equal(res.body, '');
  assert.equal((await rowOf(c, tok.id)).revoked, 1);

  const after = await app.inject({ method: 'GET', url: `${URL}/self`, headers: tok.headers });
  assert.equal(after.statusCode, 401);
  assert.deepEqual(after.json(), { error: 'invalid_token', error_description: REVOKED });
  assert.equal(after.headers['www-authenticate'], WWW_REVOKED);

  const oauth = await c.oauth.issue(u, ['api']);
  const viaOauth = await app.inject({ method: 'DELETE', url: `${URL}/self`, headers: { authorization: `Bearer ${oauth.access_token}` } });
  assert.equal(viaOauth.statusCode, 400);
  assert.deepEqual(viaOauth.json(), { message: '400 Bad request - This endpoint requires token type to be a personal access token' });

  // the owner of an impersonation token may not revoke it (GitLab's PersonalAccessTokenPolicy)
  const imp = await seed.token(u, { impersonation: true });
  const own = await app.inject({ method: 'DELETE', url: `${URL}/self`, headers: imp.headers });
  assert.equal(own.statusCode, 400);
  assert.deepEqual(own.json(), { message: '400 Bad request - Not permitted to revoke' });
  assert.equal((await rowOf(c, imp.id)).revoked, 0);
});

test('revoke by id: owners and administrators; 400 when not permitted, "404 Not found" when missing', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const alice = await seed.user();
  const bob = await seed.user();
  const auth = await seed.token(alice);
  const mine = await seed.token(alice);
  const imp = await seed.token(alice, { impersonation: true });
  const bobs = await seed.token(bob);

  const res = await app.inject({ method: 'DELETE', url: `${URL}/${mine.id}`, headers: auth.headers });
  assert.equal(res.statusCode, 204);
  assert.equal(res.body, '');
  const row = await rowOf(c, mine.id);
  assert.equal(row.revoked, 1);
  assert.ok(row.updated_at >= row.created_at);
  const used = await app.inject({ method: 'GET', url: '/api/v4/version', headers: mine.headers });
  assert.equal(used.statusCode, 401);
  assert.equal(used.headers['www-authenticate'], WWW_REVOKED);
  // revoking again is harmless, as GitLab's revoke! is
  assert.equal((await app.inject({ method: 'DELETE', url: `${URL}/${mine.id}`, headers: auth.headers })).statusCode, 204);

  for (const id of [bobs.id, imp.id]) {
    const r = await app.inject({ method: 'DELETE', url: `${URL}/${id}`, headers: auth.headers });
    assert.equal(r.statusCode, 400);
    assert.deepEqual(r.json(), { message: '400 Bad request - Not permitted to revoke' });
    assert.equal((await rowOf(c, id)).revoked, 0);
  }
  for (const [id, headers] of [
    ['999999', auth.headers],
    ['abc', auth.headers],
    ['999999', root],
  ] as const) {
    const r = await app.inject({ method: 'DELETE', url: `${URL}/${id}`, headers });
    assert.equal(r.statusCode, 404);
    assert.deepEqual(r.json(), { message: '404 Not found' });
  }
  for (const id of [bobs.id, imp.id]) {
    assert.equal((await app.inject({ method: 'DELETE', url: `${URL}/${id}`, headers: root })).statusCode, 204);
    assert.equal((await rowOf(c, id)).revoked, 1);
  }
  // read_api cannot delete
  const ro = await seed.token(alice, { scopes: ['read_api'] });
  const denied = await app.inject({ method: 'DELETE', url: `${URL}/${auth.id}`, headers: ro.headers });
  assert.equal(denied.statusCode, 403);
  assert.deepEqual(denied.json(), {
    error: 'insufficient_scope',
    error_description: 'The request requires higher privileges than provided by the access token.',
    scope: 'api',
  });
});

test('rotate by id: 200 with the new secret; the old token is revoked and linked; expiry a week ahead', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user();
  const auth = await seed.token(u);
  const old = await seed.token(u, { name: 'deploy', description: 'rotate me', scopes: ['read_api', 'read_repository'], expires_at: '2099-01-01' });

  const res = await app.inject({ method: 'POST', url: `${URL}/${old.id}/rotate`, headers: auth.headers });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/json');
  const body = res.json();
  const fresh = await rowOf(c, body.id);
  assert.deepEqual(body, {
    id: fresh.id,
    name: 'deploy',
    revoked: false,
    created_at: fresh.created_at,
    description: 'rotate me',
    scopes: ['read_api', 'read_repository'],
    user_id: u.id,
    last_used_at: null,
    active: true,
    expires_at: addDays(todayDate(), 7),
    token: body.token,
  });
  assert.ok(body.token.startsWith('glpat-'));
  assert.notEqual(fresh.id, old.id);
  assert.equal(fresh.previous_personal_access_token_id, old.id);
  assert.equal(fresh.impersonation, 0);
  assert.equal((await rowOf(c, old.id)).revoked, 1);
  await assertOnlyDigestStored(c, fresh.id, body.token);

  const works = await app.inject({ method: 'GET', url: `${URL}/self`, headers: { 'private-token': body.token } });
  assert.equal(works.statusCode, 200);
  assert.equal(works.json().id, fresh.id);
  const stale = await app.inject({ method: 'GET', url: '/api/v4/version', headers: old.headers });
  assert.equal(stale.statusCode, 401);
  assert.deepEqual(stale.json(), { error: 'invalid_token', error_description: REVOKED });
  assert.equal(stale.headers['www-authenticate'], WWW_REVOKED);

  // rotating the revoked one again fails and creates nothing
  const count = async () =>
    Number(
      (
        await c.db.kysely
          .selectFrom('personal_access_tokens')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const before = await count();
  const again = await app.inject({ method: 'POST', url: `${URL}/${old.id}/rotate`, headers: auth.headers });
  assert.equal(again.statusCode, 400);
  assert.deepEqual(again.json(), { message: '400 Bad request - Token already revoked' });
  assert.equal(await count(), before);
});

test('rotate by id: expires_at given, too far, not a date; no expiry when not required; impersonation kept', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const u = await seed.user();
  const auth = await seed.token(u);
  const max = addDays(todayDate(), 365);

  const a = await seed.token(u);
  const given = await app.inject({ method: 'POST', url: `${URL}/${a.id}/rotate`, headers: auth.headers, payload: { expires_at: max } });
  assert.equal(given.statusCode, 200);
  assert.equal(given.json().expires_at, max);

  const b = await seed.token(u);
  const far = await app.inject({ method: 'POST', url: `${URL}/${b.id}/rotate`, headers: auth.headers, payload: { expires_at: addDays(max, 1) } });
  assert.equal(far.statusCode, 400);
  assert.deepEqual(far.json(), { message: `400 Bad request - Expires at must be before ${max}` });
  assert.equal((await rowOf(c, b.id)).revoked, 0);

  for (const bad of ['tomorrow', '2030-02-30', '2030-1-1']) {
    const r = await app.inject({ method: 'POST', url: `${URL}/${b.id}/rotate`, headers: auth.headers, payload: { expires_at: bad } });
    assert.equal(r.statusCode, 400, bad);
    assert.deepEqual(r.json(), { error: 'expires_at is invalid' });
  }
  // form-encoded, with a blank expires_at meaning "not given"
  const form = await app.inject({
    method: 'POST',
    url: `${URL}/${b.id}/rotate`,
    headers: { ...auth.headers, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'expires_at=',
  });
  assert.equal(form.statusCode, 200);
  assert.equal(form.json().expires_at, addDays(todayDate(), 7));

  await c.settings.save({ require_personal_access_token_expiry: false });
  const d = await seed.token(u);
  const open = await app.inject({ method: 'POST', url: `${URL}/${d.id}/rotate`, headers: auth.headers });
  assert.equal(open.statusCode, 200);
  assert.equal(open.json().expires_at, null);

  const imp = await seed.token(u, { impersonation: true });
  const rotatedImp = await app.inject({ method: 'POST', url: `${URL}/${imp.id}/rotate`, headers: root });
  assert.equal(rotatedImp.statusCode, 200);
  assert.equal((await rowOf(c, rotatedImp.json().id)).impersonation, 1);
});

test('rotate by id: 401 for others and missing tokens, 404 for administrators, administrators rotate any', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const alice = await seed.user();
  const bob = await seed.user();
  const auth = await seed.token(alice);
  const bobs = await seed.token(bob);
  for (const id of [String(bobs.id), '999999', 'abc']) {
    const r = await app.inject({ method: 'POST', url: `${URL}/${id}/rotate`, headers: auth.headers });
    assert.equal(r.statusCode, 401, id);
    assert.deepEqual(r.json(), { message: '401 Unauthorized' });
  }
  assert.equal((await rowOf(c, bobs.id)).revoked, 0);
  const missing = await app.inject({ method: 'POST', url: `${URL}/999999/rotate`, headers: root });
  assert.equal(missing.statusCode, 404);
  assert.deepEqual(missing.json(), { message: '404 Not Found' });
  const byAdmin = await app.inject({ method: 'POST', url: `${URL}/${bobs.id}/rotate`, headers: root });
  assert.equal(byAdmin.statusCode, 200);
  assert.equal(byAdmin.json().user_id, bob.id);
  const ok = await app.inject({ method: 'GET', url: `${URL}/self`, headers: { 'private-token': byAdmin.json().token } });
  assert.equal(ok.json().user_id, bob.id);
});

test('rotate self: api or self_rotate scope; 405 for non-token credentials', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user();
  for (const scopes of [['api'], ['self_rotate']]) {
    const tok = await seed.token(u, { scopes, name: scopes[0] });
    const res = await app.inject({ method: 'POST', url: `${URL}/self/rotate`, headers: tok.headers, payload: { expires_at: addDays(todayDate(), 3) } });
    assert.equal(res.statusCode, 200, scopes[0]);
    assert.equal(res.json().expires_at, addDays(todayDate(), 3));
    assert.deepEqual(res.json().scopes, scopes);
    assert.equal((await rowOf(c, res.json().id)).previous_personal_access_token_id, tok.id);
    assert.equal((await rowOf(c, tok.id)).revoked, 1);
  }
  const ro = await seed.token(u, { scopes: ['read_api'] });
  const denied = await app.inject({ method: 'POST', url: `${URL}/self/rotate`, headers: ro.headers });
  assert.equal(denied.statusCode, 403);
  assert.deepEqual(denied.json(), {
    error: 'insufficient_scope',
    error_description: 'The request requires higher privileges than provided by the access token.',
    scope: 'api self_rotate',
  });
  assert.equal((await rowOf(c, ro.id)).revoked, 0);

  const oauth = await c.oauth.issue(u, ['api']);
  const viaOauth = await app.inject({ method: 'POST', url: `${URL}/self/rotate`, headers: { authorization: `Bearer ${oauth.access_token}` } });
  assert.equal(viaOauth.statusCode, 405);
  assert.deepEqual(viaOauth.json(), { message: '405 Method Not Allowed' });

  const tok = await seed.token(u);
  const far = await app.inject({ method: 'POST', url: `${URL}/self/rotate`, headers: tok.headers, payload: { expires_at: addDays(todayDate(), 366) } });
  assert.equal(far.statusCode, 400);
  assert.deepEqual(far.json(), { message: `400 Bad request - Expires at must be before ${addDays(todayDate(), 365)}` });
});

test('reuse detection: a revoked token used on a rotate path revokes its whole family and fails', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user();
  const first = await seed.token(u);
  const r1 = await app.inject({ method: 'POST', url: `${URL}/self/rotate`, headers: first.headers });
  const second = r1.json();
  const r2 = await app.inject({ method: 'POST', url: `${URL}/self/rotate`, headers: { 'private-token': second.token } });
  const third = r2.json();
  assert.equal((await rowOf(c, third.id)).revoked, 0);

  // a revoked token elsewhere is only refused
  const elsewhere = await app.inject({ method: 'GET', url: `${URL}/self`, headers: first.headers });
  assert.equal(elsewhere.statusCode, 401);
  assert.equal((await rowOf(c, third.id)).revoked, 0);

  // the stolen first token replayed on a rotate path
  const reuse = await app.inject({ method: 'POST', url: `${URL}/self/rotate`, headers: first.headers });
  assert.equal(reuse.statusCode, 401);
  assert.deepEqual(reuse.json(), { error: 'invalid_token', error_description: REVOKED });
  assert.equal(reuse.headers['www-authenticate'], WWW_REVOKED);
  assert.equal((await rowOf(c, third.id)).revoked, 1);
  const latest = await app.inject({ method: 'GET', url: '/api/v4/version', headers: { 'private-token': third.token } });
  assert.equal(latest.statusCode, 401);

  // also through the by-id path, and an unrelated token of the user is untouched
  const other = await seed.token(u);
  const a = await seed.token(u);
  const b = (await app.inject({ method: 'POST', url: `${URL}/${a.id}/rotate`, headers: other.headers })).json();
  const byId = await app.inject({ method: 'POST', url: `${URL}/${b.id}/rotate`, headers: a.headers });
  assert.equal(byId.statusCode, 401);
  assert.equal((await rowOf(c, b.id)).revoked, 1);
  assert.equal((await rowOf(c, other.id)).revoked, 0);
});

test('create for a user (administrators): 201 with the secret once, defaults and validation as GitLab', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const u = await seed.user();
  const url = `/api/v4/users/${u.id}/personal_access_tokens`;
  const max = addDays(todayDate(), 365);

  const res = await app.inject({ method: 'POST', url, headers: root, payload: { name: 'ci', scopes: ['api', 'read_user'], description: 'pipeline' } });
  assert.equal(res.statusCode, 201);
  assert.equal(res.headers['content-type'], 'application/json');
  const body = res.json();
  const row = await rowOf(c, body.id);
  assert.deepEqual(body, {
    id: row.id,
    name: 'ci',
    revoked: false,
    created_at: row.created_at,
    description: 'pipeline',
    scopes: ['api', 'read_user'],
    user_id: u.id,
    last_used_at: null,
    active: true,
    // require_personal_access_token_expiry (default true): the longest lifetime
    expires_at: max,
    token: body.token,
  });
  assert.equal(row.impersonation, 0);
  await assertOnlyDigestStored(c, row.id, body.token);
  const me = await app.inject({ method: 'GET', url: `${URL}/self`, headers: { 'private-token': body.token } });
  assert.equal(me.json().user_id, u.id);
  // shown only once
  const listed = await app.inject({ method: 'GET', url: `${URL}/${row.id}`, headers: root });
  assert.ok(!('token' in listed.json()) && !listed.body.includes(body.token));

  // form encoding with comma-separated scopes and an explicit date
  const form = await app.inject({
    method: 'POST',
    url,
    headers: { ...root, 'content-type': 'application/x-www-form-urlencoded' },
    payload: `name=form&scopes=read_api,read_repository&expires_at=${addDays(todayDate(), 200)}`,
  });
  assert.equal(form.statusCode, 201);
  assert.deepEqual([form.json().scopes, form.json().expires_at], [['read_api', 'read_repository'], addDays(todayDate(), 200)]);
  const brackets = await app.inject({
    method: 'POST',
    url,
    headers: { ...root, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'name=b&scopes[]=api&scopes[]=write_repository',
  });
  assert.deepEqual(brackets.json().scopes, ['api', 'write_repository']);

  await c.settings.save({ require_personal_access_token_expiry: false });
  const open = await app.inject({ method: 'POST', url, headers: root, payload: { name: 'open', scopes: ['api'] } });
  assert.equal(open.statusCode, 201);
  assert.equal(open.json().expires_at, null);
});

test('create for a user: bad input, unknown user, non-administrators', async (t) => {
  const { app, seed, root } = await buildTestApp(t);
  const u = await seed.user();
  const admin = await seed.user({ is_admin: true });
  const url = `/api/v4/users/${u.id}/personal_access_tokens`;
  const max = addDays(todayDate(), 365);
  const cases: [unknown, number, unknown][] = [
    [{}, 400, { error: 'name is missing, scopes is missing' }],
    [{ scopes: ['api'] }, 400, { error: 'name is missing' }],
    [{ name: 'x' }, 400, { error: 'scopes is missing' }],
    [{ name: 'x', scopes: ['api', 'bogus'] }, 400, { error: 'scopes does not have a valid value' }],
    [{ name: 'x', scopes: ['api'], expires_at: 'soon' }, 400, { error: 'expires_at is invalid' }],
    [{ name: 'x', scopes: [] }, 422, { message: "Scopes can't be blank" }],
    [{ name: ' ', scopes: ['api'] }, 422, { message: "Name can't be blank" }],
    [{ name: 'x', scopes: ['api'], expires_at: addDays(max, 1) }, 422, { message: `Expires at must be before ${max}` }],
    // admin-only scopes are available only for administrators' tokens
    [{ name: 'x', scopes: ['sudo'] }, 422, { message: 'Scopes can only contain available scopes' }],
    [
      { name: '', scopes: [], expires_at: addDays(max, 9) },
      422,
      { message: `Name can't be blank, Scopes can't be blank, and Expires at must be before ${max}` },
    ],
    [{ name: '', scopes: [] }, 422, { message: "Name can't be blank and Scopes can't be blank" }],
  ];
  for (const [payload, status, body] of cases) {
    const res = await app.inject({ method: 'POST', url, headers: root, payload: payload as object });
    assert.equal(res.statusCode, status, JSON.stringify(payload));
    assert.deepEqual(res.json(), body, JSON.stringify(payload));
  }
  const sudo = await app.inject({
    method: 'POST',
    url: `/api/v4/users/${admin.id}/personal_access_tokens`,
    headers: root,
    payload: { name: 'x', scopes: ['sudo', 'admin_mode'] },
  });
  assert.equal(sudo.statusCode, 201);

  const missing = await app.inject({
    method: 'POST',
    url: '/api/v4/users/999999/personal_access_tokens',
    headers: root,
    payload: { name: 'x', scopes: ['api'] },
  });
  assert.equal(missing.statusCode, 404);
  assert.deepEqual(missing.json(), { message: '404 User Not Found' });
  const notInt = await app.inject({ method: 'POST', url: '/api/v4/users/abc/personal_access_tokens', headers: root, payload: { name: 'x', scopes: ['api'] } });
  assert.equal(notInt.statusCode, 400);
  assert.deepEqual(notInt.json(), { error: 'user_id is invalid' });

  const self = await seed.token(u);
  const forbidden = await app.inject({ method: 'POST', url, headers: self.headers, payload: { name: 'x', scopes: ['api'] } });
  assert.equal(forbidden.statusCode, 403);
  assert.deepEqual(forbidden.json(), { message: '403 Forbidden' });
  const anon = await app.inject({ method: 'POST', url, payload: { name: 'x', scopes: ['api'] } });
  assert.equal(anon.statusCode, 401);
});

test('create for oneself: non-admin scopes, expires tomorrow by default', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const u = await seed.user();
  const tok = await seed.token(u);
  const url = '/api/v4/user/personal_access_tokens';
  const res = await app.inject({ method: 'POST', url, headers: tok.headers, payload: { name: 'mine', scopes: ['read_api', 'k8s_proxy'], description: 'd' } });
  assert.equal(res.statusCode, 201);
  const row = await rowOf(c, res.json().id);
  assert.deepEqual(res.json(), {
    id: row.id,
    name: 'mine',
    revoked: false,
    created_at: row.created_at,
    description: 'd',
    scopes: ['read_api', 'k8s_proxy'],
    user_id: u.id,
    last_used_at: null,
    active: true,
    expires_at: addDays(todayDate(), 1),
    token: res.json().token,
  });
  await assertOnlyDigestStored(c, row.id, res.json().token);

  const dated = await app.inject({ method: 'POST', url, headers: tok.headers, payload: { name: 'x', scopes: ['api'], expires_at: addDays(todayDate(), 30) } });
  assert.equal(dated.json().expires_at, addDays(todayDate(), 30));
  const sudo = await app.inject({ method: 'POST', url, headers: tok.headers, payload: { name: 'x', scopes: ['api', 'sudo'] } });
  assert.equal(sudo.statusCode, 400);
  assert.deepEqual(sudo.json(), { error: 'scopes does not have a valid value' });
  const byAdmin = await app.inject({ method: 'POST', url, headers: root, payload: { name: 'x', scopes: ['sudo'] } });
  assert.equal(byAdmin.statusCode, 201);
  assert.equal(byAdmin.json().user_id, 1);
  const empty = await app.inject({ method: 'POST', url, headers: tok.headers, payload: { name: 'x', scopes: [] } });
  assert.equal(empty.statusCode, 422);
  assert.deepEqual(empty.json(), { message: "Scopes can't be blank" });
  const ro = await seed.token(u, { scopes: ['read_api'] });
  assert.equal((await app.inject({ method: 'POST', url, headers: ro.headers, payload: { name: 'x', scopes: ['read_api'] } })).statusCode, 403);
  assert.equal((await app.inject({ method: 'POST', url, payload: { name: 'x', scopes: ['api'] } })).statusCode, 401);
});

test('the personal_access_token_prefix setting applies to new tokens; old ones keep working', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const u = await seed.user();
  const old = await seed.token(u);
  const toRotate = await seed.token(u);
  assert.ok(old.token.startsWith('glpat-'));
  await c.settings.save({ personal_access_token_prefix: 'xyz-' });

  const created = await app.inject({
    method: 'POST',
    url: `/api/v4/users/${u.id}/personal_access_tokens`,
    headers: root,
    payload: { name: 'p', scopes: ['api'] },
  });
  assert.match(created.json().token, /^xyz-[A-Za-z0-9_-]+\.[0-9a-z]{9}$/);
  const rotated = await app.inject({ method: 'POST', url: `${URL}/self/rotate`, headers: toRotate.headers });
  assert.equal(rotated.statusCode, 200);
  assert.ok(rotated.json().token.startsWith('xyz-'));
  assert.equal((await app.inject({ method: 'GET', url: `${URL}/self`, headers: { 'private-token': rotated.json().token } })).statusCode, 200);
  // tokens are found by digest, whatever prefix they were minted with
  assert.equal((await app.inject({ method: 'GET', url: `${URL}/self`, headers: old.headers })).statusCode, 200);
  await c.settings.save({ personal_access_token_prefix: 'glpat-' });
  assert.equal((await app.inject({ method: 'GET', url: `${URL}/self`, headers: { 'private-token': created.json().token } })).statusCode, 200);
});

test('disable_personal_access_tokens: creation and rotation are refused', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user();
  const admin = (await c.users.byId(1))!;
  const existing = await seed.token(u);
  await c.settings.save({ disable_personal_access_tokens: true });
  // personal tokens no longer authenticate, so the administrator uses OAuth
  const oauth = { authorization: `Bearer ${(await c.oauth.issue(admin, ['api'])).access_token}` };
  const created = await app.inject({
    method: 'POST',
    url: `/api/v4/users/${u.id}/personal_access_tokens`,
    headers: oauth,
    payload: { name: 'x', scopes: ['api'] },
  });
  assert.equal(created.statusCode, 422);
  assert.deepEqual(created.json(), { message: 'Not permitted to create' });
  const mine = await app.inject({ method: 'POST', url: '/api/v4/user/personal_access_tokens', headers: oauth, payload: { name: 'x', scopes: ['api'] } });
  assert.equal(mine.statusCode, 422);
  const rotated = await app.inject({ method: 'POST', url: `${URL}/${existing.id}/rotate`, headers: oauth });
  assert.equal(rotated.statusCode, 400);
  assert.deepEqual(rotated.json(), { message: '400 Bad request - Not permitted to create' });
  assert.equal((await rowOf(c, existing.id)).revoked, 0);
  const used = await app.inject({ method: 'GET', url: `${URL}/self`, headers: existing.headers });
  assert.equal(used.statusCode, 401);
  // listing still works for the administrator
  assert.equal((await app.inject({ method: 'GET', url: URL, headers: oauth })).statusCode, 200);
});
