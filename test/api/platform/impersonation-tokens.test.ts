// Impersonation tokens (administrators): create, list, get, revoke; used like a personal token of the
// user; refused when impersonation is disabled by configuration.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import type { PatRow } from '../../../src/db/schema.ts';
import { addDays, todayDate } from '../../../src/lib/time.ts';

const REVOKED = 'Token was revoked. You have to re-authorize from the user.';
const DISABLED = 'Token is an impersonation token but impersonation was disabled.';

async function rowOf(c: TestApp['c'], id: number): Promise<PatRow> {
  return c.db.kysely.selectFrom('personal_access_tokens').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

function entity(row: PatRow): Record<string, unknown> {
  return {
    id: row.id,
    name: row.name,
    revoked: row.revoked === 1,
    created_at: row.created_at,
    description: row.description,
    scopes: JSON.parse(row.scopes),
    user_id: row.user_id,
    last_used_at: row.last_used_at,
    active: row.revoked === 0 && (row.expires_at === null || row.expires_at > todayDate()),
    expires_at: row.expires_at,
    last_used_ips: [],
    impersonation: row.impersonation === 1,
  };
}

test('create: 201 with the secret and impersonation=true; the token acts as the user', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const u = await seed.user();
  const expires = addDays(todayDate(), 30);
  const res = await app.inject({
    method: 'POST',
    url: `/api/v4/users/${u.id}/impersonation_tokens`,
    headers: root,
    payload: { name: 'support', scopes: ['api', 'read_user'], expires_at: expires, description: 'ticket 42' },
  });
  assert.equal(res.statusCode, 201);
  assert.equal(res.headers['content-type'], 'application/json');
  const body = res.json();
  const row = await rowOf(c, body.id);
  assert.deepEqual(body, {
    id: row.id,
    name: 'support',
    revoked: false,
    created_at: row.created_at,
    description: 'ticket 42',
    scopes: ['api', 'read_user'],
    user_id: u.id,
    last_used_at: null,
    active: true,
    expires_at: expires,
    token: body.token,
    impersonation: true,
  });
  assert.equal(row.impersonation, 1);
  assert.ok(body.token.startsWith('glpat-'));
  assert.notEqual(row.token_digest, body.token);
  for (const [k, v] of Object.entries(row)) assert.ok(!String(v).includes(body.token), `column ${k} holds the secret`);

  const self = await app.inject({ method: 'GET', url: '/api/v4/personal_access_tokens/self', headers: { 'private-token': body.token } });
  assert.equal(self.statusCode, 200);
  assert.equal(self.json().user_id, u.id);
  assert.equal(self.json().id, row.id);
  const bearer = await app.inject({ method: 'GET', url: '/api/v4/version', headers: { authorization: `Bearer ${body.token}` } });
  assert.equal(bearer.statusCode, 200);
  // the impersonated user does not see it among their own tokens; an administrator does
  const own = await app.inject({ method: 'GET', url: '/api/v4/personal_access_tokens', headers: { 'private-token': body.token } });
  assert.deepEqual(own.json(), []);
  const all = await app.inject({ method: 'GET', url: `/api/v4/personal_access_tokens?user_id=${u.id}`, headers: root });
  assert.deepEqual(
    all.json().map((e: any) => e.id),
    [row.id],
  );

  // comma-separated scopes in a form
  const form = await app.inject({
    method: 'POST',
    url: `/api/v4/users/${u.id}/impersonation_tokens`,
    headers: { ...root, 'content-type': 'application/x-www-form-urlencoded' },
    payload: `name=f&scopes=read_api,read_repository&expires_at=${expires}`,
  });
  assert.equal(form.statusCode, 201);
  assert.deepEqual(form.json().scopes, ['read_api', 'read_repository']);
});

test('create: model validation is 400 {"message":{field:[…]}}; dates not in the future refused', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const u = await seed.user();
  const url = `/api/v4/users/${u.id}/impersonation_tokens`;
  const max = addDays(todayDate(), 365);
  const ok = addDays(todayDate(), 10);
  const cases: [unknown, unknown][] = [
    [{}, { error: 'name is missing' }],
    [{ name: 'x', scopes: ['api'], expires_at: '2030-02-30' }, { error: 'expires_at is invalid' }],
    [{ name: 'x', expires_at: ok }, { message: { scopes: ["can't be blank"] } }],
    [{ name: 'x', scopes: ['api', 'bogus'], expires_at: ok }, { message: { scopes: ['can only contain available scopes'] } }],
    [{ name: 'x', scopes: ['sudo'], expires_at: ok }, { message: { scopes: ['can only contain available scopes'] } }],
    [{ name: 'x', scopes: ['api'], expires_at: addDays(max, 1) }, { message: { expires_at: [`must be before ${max}`] } }],
    [{ name: 'x', scopes: ['api'], expires_at: todayDate() }, { message: { expires_at: ['must be in the future'] } }],
    [{ name: 'x', scopes: ['api'], expires_at: '2020-01-01' }, { message: { expires_at: ['must be in the future'] } }],
    [{ name: '', scopes: [] }, { message: { name: ["can't be blank"], scopes: ["can't be blank"] } }],
  ];
  for (const [payload, body] of cases) {
    const res = await app.inject({ method: 'POST', url, headers: root, payload: payload as object });
    assert.equal(res.statusCode, 400, JSON.stringify(payload));
    assert.deepEqual(res.json(), body, JSON.stringify(payload));
  }
  const count = await c.db.kysely.selectFrom('personal_access_tokens').select('id').where('user_id', '=', u.id).execute();
  assert.equal(count.length, 0);

  await c.settings.save({ require_personal_access_token_expiry: false });
  const open = await app.inject({ method: 'POST', url, headers: root, payload: { name: 'x', scopes: ['api'] } });
  assert.equal(open.statusCode, 201);
  assert.equal(open.json().expires_at, null);
});

test('administrators only; unknown users are 404', async (t) => {
  const { app, seed, root } = await buildTestApp(t);
  const u = await seed.user();
  const tok = await seed.token(u);
  const routes: [string, string][] = [
    ['GET', `/api/v4/users/${u.id}/impersonation_tokens`],
    ['POST', `/api/v4/users/${u.id}/impersonation_tokens`],
    ['GET', `/api/v4/users/${u.id}/impersonation_tokens/1`],
    ['DELETE', `/api/v4/users/${u.id}/impersonation_tokens/1`],
  ];
  for (const [method, url] of routes) {
    const anon = await app.inject({ method: method as any, url, payload: method === 'POST' ? { name: 'x' } : undefined });
    assert.equal(anon.statusCode, 401, `${method} ${url}`);
    assert.deepEqual(anon.json(), { message: '401 Unauthorized' });
    const user = await app.inject({ method: method as any, url, headers: tok.headers, payload: method === 'POST' ? { name: 'x' } : undefined });
    assert.equal(user.statusCode, 403, `${method} ${url}`);
    assert.deepEqual(user.json(), { message: '403 Forbidden' });
    const missing = await app.inject({
      method: method as any,
      url: url.replace(`/users/${u.id}/`, '/users/999999/'),
      headers: root,
      payload: method === 'POST' ? { name: 'x' } : undefined,
    });
    assert.equal(missing.statusCode, 404, `${method} ${url}`);
    assert.deepEqual(missing.json(), { message: '404 User Not Found' });
  }
  const notInt = await app.inject({ method: 'GET', url: '/api/v4/users/abc/impersonation_tokens', headers: root });
  assert.equal(notInt.statusCode, 400);
  assert.deepEqual(notInt.json(), { error: 'user_id is invalid' });
  const badId = await app.inject({ method: 'GET', url: `/api/v4/users/${u.id}/impersonation_tokens/abc`, headers: root });
  assert.equal(badId.statusCode, 400);
  assert.deepEqual(badId.json(), { error: 'impersonation_token_id is invalid' });
});

test("list: the user's impersonation tokens only, by state, paginated", async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const u = await seed.user();
  const other = await seed.user();
  const active = await seed.token(u, { name: 'active', impersonation: true });
  const revoked = await seed.token(u, { name: 'revoked', impersonation: true });
  const expired = await seed.token(u, { name: 'expired', impersonation: true, expires_at: '2020-01-01' });
  await seed.token(u, { name: 'personal' });
  await seed.token(other, { name: 'other', impersonation: true });
  await c.db.kysely.updateTable('personal_access_tokens').set({ revoked: 1 }).where('id', '=', revoked.id).execute();
  const url = `/api/v4/users/${u.id}/impersonation_tokens`;

  const all = await app.inject({ method: 'GET', url, headers: root });
  assert.equal(all.statusCode, 200);
  assert.deepEqual(all.json(), [entity(await rowOf(c, active.id)), entity(await rowOf(c, revoked.id)), entity(await rowOf(c, expired.id))]);
  assert.equal(all.headers['x-total'], '3');
  assert.equal(all.headers['x-total-pages'], '1');
  assert.equal(
    all.headers.link,
    `<http://hearth.test${url}?page=1&per_page=20&state=all&user_id=${u.id}>; rel="first", <http://hearth.test${url}?page=1&per_page=20&state=all&user_id=${u.id}>; rel="last"`,
  );
  const ids = async (q: string) => (await app.inject({ method: 'GET', url: `${url}?${q}`, headers: root })).json().map((e: any) => e.id);
  assert.deepEqual(await ids('state=active'), [active.id]);
  assert.deepEqual(await ids('state=inactive'), [revoked.id, expired.id]);
  assert.deepEqual(await ids('state=all'), [active.id, revoked.id, expired.id]);

  const page = await app.inject({ method: 'GET', url: `${url}?per_page=2&page=2`, headers: root });
  assert.deepEqual(
    page.json().map((e: any) => e.id),
    [expired.id],
  );
  assert.equal(page.headers['x-page'], '2');
  assert.equal(page.headers['x-prev-page'], '1');
  assert.equal(page.headers['x-next-page'], '');
  assert.equal(page.headers['x-total-pages'], '2');

  for (const [q, error] of [
    ['state=bogus', 'state does not have a valid value'],
    ['per_page=0', 'per_page has a value not allowed'],
  ]) {
    const bad = await app.inject({ method: 'GET', url: `${url}?${q}`, headers: root });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), { error });
  }
});

test("get by id: the ImpersonationToken entity; other users' and personal tokens are 404", async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const u = await seed.user();
  const other = await seed.user();
  const imp = await seed.token(u, { name: 'imp', impersonation: true, description: 'why', expires_at: '2099-01-01' });
  const personal = await seed.token(u);
  const others = await seed.token(other, { impersonation: true });

  const res = await app.inject({ method: 'GET', url: `/api/v4/users/${u.id}/impersonation_tokens/${imp.id}`, headers: root });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), {
    id: imp.id,
    name: 'imp',
    revoked: false,
    created_at: (await rowOf(c, imp.id)).created_at,
    description: 'why',
    scopes: ['api'],
    user_id: u.id,
    last_used_at: null,
    active: true,
    expires_at: '2099-01-01',
    last_used_ips: [],
    impersonation: true,
  });
  assert.ok(!res.body.includes(imp.token));
  for (const id of [personal.id, others.id, 999999, 99999999999]) {
    const r = await app.inject({ method: 'GET', url: `/api/v4/users/${u.id}/impersonation_tokens/${id}`, headers: root });
    assert.equal(r.statusCode, 404, String(id));
    assert.deepEqual(r.json(), { message: '404 Impersonation Token Not Found' });
  }
});

test('delete: 204 revokes (the row stays); If-Unmodified-Since is honoured', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const u = await seed.user();
  const imp = await seed.token(u, { impersonation: true });
  const personal = await seed.token(u);
  const url = `/api/v4/users/${u.id}/impersonation_tokens/${imp.id}`;

  const stale = await app.inject({ method: 'DELETE', url, headers: { ...root, 'if-unmodified-since': 'Thu, 01 Jan 2015 00:00:00 GMT' } });
  assert.equal(stale.statusCode, 412);
  assert.deepEqual(stale.json(), { message: '412 Precondition Failed' });
  assert.equal((await rowOf(c, imp.id)).revoked, 0);

  const res = await app.inject({ method: 'DELETE', url, headers: { ...root, 'if-unmodified-since': new Date(Date.now() + 60_000).toUTCString() } });
  assert.equal(res.statusCode, 204);
  assert.equal(res.body, '');
  const row = await rowOf(c, imp.id);
  assert.equal(row.revoked, 1);
  const used = await app.inject({ method: 'GET', url: '/api/v4/version', headers: imp.headers });
  assert.equal(used.statusCode, 401);
  assert.deepEqual(used.json(), { error: 'invalid_token', error_description: REVOKED });
  const shown = await app.inject({ method: 'GET', url, headers: root });
  assert.equal(shown.json().revoked, true);
  assert.equal(shown.json().active, false);
  assert.equal((await app.inject({ method: 'DELETE', url, headers: root })).statusCode, 204);

  const notImp = await app.inject({ method: 'DELETE', url: `/api/v4/users/${u.id}/impersonation_tokens/${personal.id}`, headers: root });
  assert.equal(notImp.statusCode, 404);
  assert.deepEqual(notImp.json(), { message: '404 Impersonation Token Not Found' });
  assert.equal((await rowOf(c, personal.id)).revoked, 0);
});

test('impersonation disabled by configuration: such tokens are refused with invalid_token', async (t) => {
  const { app, seed, root } = await buildTestApp(t, { impersonationEnabled: false });
  const u = await seed.user();
  const created = await app.inject({
    method: 'POST',
    url: `/api/v4/users/${u.id}/impersonation_tokens`,
    headers: root,
    payload: { name: 'x', scopes: ['api'], expires_at: addDays(todayDate(), 5) },
  });
  assert.equal(created.statusCode, 201);
  const res = await app.inject({ method: 'GET', url: '/api/v4/personal_access_tokens/self', headers: { 'private-token': created.json().token } });
  assert.equal(res.statusCode, 401);
  assert.deepEqual(res.json(), { error: 'invalid_token', error_description: DISABLED });
  assert.equal(res.headers['www-authenticate'], `Bearer realm="The API", error="invalid_token", error_description="${DISABLED}"`);
  // ordinary personal tokens are unaffected
  const personal = await seed.token(u);
  assert.equal((await app.inject({ method: 'GET', url: '/api/v4/personal_access_tokens/self', headers: personal.headers })).statusCode, 200);
});
