// Web sign-in with the session cookie: CSRF on the form, lockout, and the cookie on /api/v4.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { buildApp } from '../../../src/app.ts';
import type { Container } from '../../../src/container.ts';
import { buildTestApp } from '../../helpers/build-app.ts';

type App = Awaited<ReturnType<typeof buildTestApp>>['app'];
type Res = Awaited<ReturnType<App['inject']>>;

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const INVALID = 'Invalid login or password.';
const LOCKED = 'Your account is locked.';

/** The app plus a write route on /api/v4, to see how CSRF treats a POST made with the cookie. */
async function appWithProbe(t: TestContext, c: Container) {
  const app = await buildApp(c, (a) => {
    a.post('/api/v4/__probe', { config: { api: 'platform', auth: 'user' } }, async (req, reply) =>
      reply.code(201).send({ username: req.actor.user!.username }),
    );
  });
  t.after(() => app.close());
  return app;
}

function setCookies(res: Res): string[] {
  const h = res.headers['set-cookie'];
  return h === undefined ? [] : Array.isArray(h) ? h : [h];
}
function cookieValue(res: Res, name: string): string | undefined {
  return res.cookies.find((ck) => ck.name === name)?.value;
}
function formToken(html: string): string {
  return /name="authenticity_token" value="([^"]+)"/.exec(html)![1];
}

/** GET the form: the CSRF cookie and the token in the page. */
async function openForm(app: App): Promise<{ csrf: string; token: string }> {
  const res = await app.inject({ method: 'GET', url: '/users/sign_in' });
  assert.equal(res.statusCode, 200);
  return { csrf: cookieValue(res, '_service_csrf')!, token: formToken(res.body) };
}

function submit(app: App, csrfCookie: string | null, fields: Record<string, string>, extraCookies: Record<string, string> = {}) {
  const cookies: Record<string, string> = { ...extraCookies };
  if (csrfCookie !== null) cookies._service_csrf = csrfCookie;
  return app.inject({ method: 'POST', url: '/users/sign_in', headers: FORM, cookies, payload: new URLSearchParams(fields).toString() });
}

async function signIn(app: App, login: string, password: string): Promise<Res> {
  const { csrf, token } = await openForm(app);
  return submit(app, csrf, { 'user[login]': login, 'user[password]': password, authenticity_token: token });
}

function alertOf(html: string): string | undefined {
  return /<p class="alert[^"]*" role="alert">([^<]*)<\/p>/.exec(html)?.[1];
}

test('full flow: form, CSRF cookie, sign-in, session cookie, home page, API by cookie', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user({ username: 'alice', password: 'alice-password' });

  const form = await app.inject({ method: 'GET', url: '/users/sign_in' });
  assert.equal(form.statusCode, 200);
  assert.equal(form.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(form.headers['cache-control'], 'no-store');
  assert.equal(form.headers['x-frame-options'], 'SAMEORIGIN');
  assert.match(String(form.headers['content-security-policy']), /form-action 'self'/);
  assert.match(form.body, /<form method="post" action="\/users\/sign_in"/);
  assert.match(form.body, /name="user\[login\]"/);
  assert.match(form.body, /type="password" name="user\[password\]"/);
  const [csrfCookie] = setCookies(form);
  assert.match(csrfCookie, /^_service_csrf=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax$/);
  const csrf = cookieValue(form, '_service_csrf')!;
  assert.equal(formToken(form.body), csrf);
  // the same browser keeps its token
  const again = await app.inject({ method: 'GET', url: '/users/sign_in', cookies: { _service_csrf: csrf } });
  assert.equal(formToken(again.body), csrf);
  assert.deepEqual(setCookies(again), []);

  const before = Date.now();
  const res = await submit(app, csrf, { 'user[login]': 'alice', 'user[password]': 'alice-password', authenticity_token: csrf });
  assert.equal(res.statusCode, 302);
  assert.equal(res.headers.location, '/');
  const sessionHeader = setCookies(res).find((h) => h.startsWith('_service_session='))!;
  assert.match(sessionHeader, /^_service_session=[A-Za-z0-9_-]{43}; Path=\/; Expires=[^;]+; HttpOnly; SameSite=Lax$/);
  assert.ok(!/Secure/.test(sessionHeader));
  assert.ok(setCookies(res).some((h) => /^_service_csrf=; Max-Age=0; Path=\/; Expires=Thu, 01 Jan 1970/.test(h)));
  const session = cookieValue(res, '_service_session')!;

  const rows = await c.db.kysely.selectFrom('web_sessions').selectAll().execute();
  assert.equal(rows.length, 1);
  assert.equal(rows[0].user_id, u.id);
  assert.equal(rows[0].ip, '127.0.0.1');
  assert.notEqual(rows[0].session_digest, session); // only a digest is stored
  const ttl = Date.parse(rows[0].expires_at) - before;
  assert.ok(ttl >= 10080 * 60_000 - 5000 && ttl <= 10080 * 60_000 + 5000, String(ttl)); // session_expire_delay default: one week
  const expires = Date.parse(/Expires=([^;]+)/.exec(sessionHeader)![1]);
  assert.ok(Math.abs(expires - Date.parse(rows[0].expires_at)) < 1000);

  const user = (await c.users.byId(u.id))!;
  assert.equal(user.sign_in_count, 1);
  assert.equal(user.failed_attempts, 0);
  assert.ok(user.current_sign_in_at && Date.parse(user.current_sign_in_at) >= before - 5);
  assert.equal(user.last_sign_in_at, user.current_sign_in_at);
  assert.equal(user.current_sign_in_ip, '127.0.0.1');
  assert.equal(user.last_sign_in_ip, '127.0.0.1');

  const home = await app.inject({ method: 'GET', url: '/', cookies: { _service_session: session } });
  assert.equal(home.statusCode, 200);
  assert.equal(home.headers['content-type'], 'text/html; charset=utf-8');
  assert.match(home.body, /<h1 class="Subhead-heading">Projects<\/h1>/); // the dashboard
  assert.match(home.body, /<a class="Header-link mr-3" href="\/alice">alice<\/a>/);
  assert.match(home.body, new RegExp(`<meta name="csrf-token" content="${rows[0].csrf_token}">`));

  const api = await app.inject({ method: 'GET', url: '/api/v4/version', cookies: { _service_session: session } });
  assert.equal(api.statusCode, 200);
  assert.deepEqual(api.json(), { version: '17.0.0', revision: 'hearth' });
  assert.equal((await app.inject({ method: 'HEAD', url: '/api/v4/version', cookies: { _service_session: session } })).statusCode, 200);

  // a second sign-in: the count grows, "last" keeps the previous sign-in, the old session of this browser ends
  await new Promise((r) => setTimeout(r, 5));
  const { csrf: csrf2, token: token2 } = await openForm(app);
  const second = await submit(
    app,
    csrf2,
    { 'user[login]': 'ALICE', 'user[password]': 'alice-password', authenticity_token: token2 },
    { _service_session: session },
  );
  assert.equal(second.statusCode, 302);
  const after = (await c.users.byId(u.id))!;
  assert.equal(after.sign_in_count, 2);
  assert.equal(after.last_sign_in_at, user.current_sign_in_at);
  assert.notEqual(after.current_sign_in_at, user.current_sign_in_at);
  const left = await c.db.kysely.selectFrom('web_sessions').selectAll().execute();
  assert.equal(left.length, 1);
  assert.notEqual(left[0].id, rows[0].id);
  assert.equal((await app.inject({ method: 'GET', url: '/api/v4/version', cookies: { _service_session: session } })).statusCode, 401);
});

test('session cookie on the API: writes need X-CSRF-Token, sudo is refused, expiry ends it', async (t) => {
  const { c, seed } = await buildTestApp(t);
  const app = await appWithProbe(t, c);
  await seed.user({ username: 'bob', password: 'bob-password' });
  await seed.user({ username: 'boss', password: 'boss-password', is_admin: true });
  const session = cookieValue(await signIn(app, 'bob', 'bob-password'), '_service_session')!;
  const cookies = { _service_session: session };
  const csrf = (await c.db.kysely.selectFrom('web_sessions').select('csrf_token').executeTakeFirstOrThrow()).csrf_token;

  // without or with a wrong token, the cookie is ignored: anonymous, so 401
  for (const headers of [{}, { 'x-csrf-token': 'wrong' }, { 'x-csrf-token': csrf.slice(0, -1) + (csrf.endsWith('A') ? 'B' : 'A') }]) {
    const res = await app.inject({ method: 'POST', url: '/api/v4/__probe', cookies, headers });
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { message: '401 Unauthorized' });
  }
  const ok = await app.inject({ method: 'POST', url: '/api/v4/__probe', cookies, headers: { 'x-csrf-token': csrf } });
  assert.equal(ok.statusCode, 201);
  assert.deepEqual(ok.json(), { username: 'bob' });

  // Sudo needs a token, not a session, even for an administrator
  const admin = cookieValue(await signIn(app, 'boss', 'boss-password'), '_service_session')!;
  const sudo = await app.inject({ method: 'GET', url: '/api/v4/version', cookies: { _service_session: admin }, headers: { sudo: 'bob' } });
  assert.equal(sudo.statusCode, 403);
  assert.deepEqual(sudo.json(), { message: '403 Forbidden - Must be authenticated using an OAuth or personal access token to use sudo' });

  // an expired session is no session
  await c.db.kysely
    .updateTable('web_sessions')
    .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
    .execute();
  assert.equal((await app.inject({ method: 'GET', url: '/api/v4/version', cookies })).statusCode, 401);
  const home = await app.inject({ method: 'GET', url: '/', cookies });
  assert.equal(home.statusCode, 302);
  assert.equal(home.headers.location, '/users/sign_in');
});

/** The token with its first character replaced by another one: always a different token. */
function otherToken(token: string): string {
  return (token[0] === 'x' ? 'y' : 'x') + token.slice(1);
}

test('CSRF on the sign-in form: missing, wrong or cookie-less tokens are refused with 403', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user({ username: 'carol', password: 'carol-password' });
  const { csrf, token } = await openForm(app);
  // a form whose token starts with "x" (one random token in 64 does): a wrong token still differs from it
  const xToken = `x${'A'.repeat(42)}`;
  const xForm = await app.inject({ method: 'GET', url: '/users/sign_in', cookies: { _service_csrf: xToken } });
  assert.equal(formToken(xForm.body), xToken);
  const creds = { 'user[login]': 'carol', 'user[password]': 'carol-password' };
  const cases: [string | null, Record<string, string>][] = [
    [csrf, creds],
    [csrf, { ...creds, authenticity_token: otherToken(token) }],
    [xToken, { ...creds, authenticity_token: otherToken(xToken) }],
    [csrf, { ...creds, authenticity_token: '' }],
    [null, { ...creds, authenticity_token: token }],
  ];
  for (const [cookie, fields] of cases) {
    const res = await submit(app, cookie, fields);
    assert.equal(res.statusCode, 403);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(alertOf(res.body), 'Your sign-in form has expired. Please try again.');
    assert.ok(!setCookies(res).some((h) => h.startsWith('_service_session=')));
    // a fresh token comes with the re-rendered form
    assert.equal(formToken(res.body), cookieValue(res, '_service_csrf'));
    assert.match(res.body, /value="carol"/);
    assert.ok(!res.body.includes('carol-password'));
  }
  assert.equal((await c.db.kysely.selectFrom('web_sessions').selectAll().execute()).length, 0);
  const row = (await c.users.byId(u.id))!;
  assert.equal(row.failed_attempts, 0);
  assert.equal(row.sign_in_count, 0);
});

test('wrong password and unknown user get the same answer; the password is never echoed', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user({ username: 'dave', password: 'dave-password' });
  const wrong = await signIn(app, 'dave', 'not-the<password>');
  const unknown = await signIn(app, 'nobody', 'not-the<password>');
  const empty = await signIn(app, '', '');
  for (const res of [wrong, unknown, empty]) {
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(alertOf(res.body), INVALID);
    assert.ok(!res.body.includes('not-the'));
    assert.ok(!setCookies(res).some((h) => h.startsWith('_service_session=')));
    // the form can be sent again as it is
    assert.match(res.body, /name="authenticity_token" value="[A-Za-z0-9_-]{43}"/);
  }
  assert.match(wrong.body, /name="user\[login\]"[^>]*value="dave"/);
  const row = (await c.users.byId(u.id))!;
  assert.equal(row.failed_attempts, 1);
  assert.equal(row.locked_at, null);
  assert.equal(row.sign_in_count, 0);
  // HTML in the login is escaped
  const xss = await signIn(app, '"><script>x</script>', 'whatever-1');
  assert.ok(!xss.body.includes('<script>x'));
  assert.match(xss.body, /value="&quot;&gt;&lt;script&gt;x&lt;\/script&gt;"/);
});

test('lockout at max_login_attempts; locked accounts refuse the right password; unlock after the period', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user({ username: 'erin', password: 'erin-password' });
  await c.settings.save({ max_login_attempts: 3 });
  for (const expected of [INVALID, INVALID, LOCKED]) {
    const res = await signIn(app, 'erin', 'wrong-password');
    assert.equal(res.statusCode, 401);
    assert.equal(alertOf(res.body), expected);
  }
  let row = (await c.users.byId(u.id))!;
  assert.equal(row.failed_attempts, 3);
  assert.ok(row.locked_at);
  const lockedAt = row.locked_at;

  const right = await signIn(app, 'erin', 'erin-password');
  assert.equal(right.statusCode, 401);
  assert.equal(alertOf(right.body), LOCKED);
  row = (await c.users.byId(u.id))!;
  assert.equal(row.locked_at, lockedAt); // the lock is not renewed
  assert.equal(row.sign_in_count, 0);
  assert.equal((await c.db.kysely.selectFrom('web_sessions').selectAll().execute()).length, 0);

  // failed_login_attempts_unlock_period_in_minutes unset: 10 minutes
  await c.db.kysely
    .updateTable('users')
    .set({ locked_at: new Date(Date.now() - 9 * 60_000).toISOString() })
    .where('id', '=', u.id)
    .execute();
  assert.equal(alertOf((await signIn(app, 'erin', 'erin-password')).body), LOCKED);
  await c.db.kysely
    .updateTable('users')
    .set({ locked_at: new Date(Date.now() - 11 * 60_000).toISOString() })
    .where('id', '=', u.id)
    .execute();
  const ok = await signIn(app, 'erin', 'erin-password');
  assert.equal(ok.statusCode, 302);
  row = (await c.users.byId(u.id))!;
  assert.equal(row.locked_at, null);
  assert.equal(row.failed_attempts, 0);
  assert.equal(row.sign_in_count, 1);
});

test('an expired lock is cleared by the next attempt, even a failed one', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user({ username: 'fay', password: 'fay-password' });
  await c.settings.save({ max_login_attempts: 2, failed_login_attempts_unlock_period_in_minutes: 60 });
  await signIn(app, 'fay', 'bad-password');
  await signIn(app, 'fay', 'bad-password');
  assert.ok((await c.users.byId(u.id))!.locked_at);
  await c.db.kysely
    .updateTable('users')
    .set({ locked_at: new Date(Date.now() - 30 * 60_000).toISOString() })
    .where('id', '=', u.id)
    .execute();
  assert.equal(alertOf((await signIn(app, 'fay', 'fay-password')).body), LOCKED);
  await c.db.kysely
    .updateTable('users')
    .set({ locked_at: new Date(Date.now() - 61 * 60_000).toISOString() })
    .where('id', '=', u.id)
    .execute();
  const res = await signIn(app, 'fay', 'bad-password');
  assert.equal(alertOf(res.body), INVALID);
  const row = (await c.users.byId(u.id))!;
  assert.equal(row.locked_at, null);
  assert.equal(row.failed_attempts, 1);
});

test('the default limit is 10 failed attempts', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user({ username: 'gus', password: 'gus-password' });
  const { csrf, token } = await openForm(app);
  const fields = { 'user[login]': 'gus', 'user[password]': 'wrong-password', authenticity_token: token };
  for (let i = 1; i <= 9; i++) assert.equal(alertOf((await submit(app, csrf, fields)).body), INVALID);
  assert.equal((await c.users.byId(u.id))!.locked_at, null);
  assert.equal(alertOf((await submit(app, csrf, fields)).body), LOCKED);
  const row = (await c.users.byId(u.id))!;
  assert.equal(row.failed_attempts, 10);
  assert.ok(row.locked_at);
});

test('password_authentication_enabled_for_web off: no form, POST is 403', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user({ username: 'hal', password: 'hal-password' });
  const { csrf, token } = await openForm(app);
  await c.settings.save({ password_authentication_enabled_for_web: false });
  const form = await app.inject({ method: 'GET', url: '/users/sign_in' });
  assert.equal(form.statusCode, 200);
  assert.equal(alertOf(form.body), 'Password authentication is disabled. Ask your administrator.');
  // no sign-in form (the header's search form stays)
  assert.ok(!/<form[^>]*action="\/users\/sign_in"/.test(form.body));
  assert.ok(!form.body.includes('name="user[password]"'));
  const res = await submit(app, csrf, { 'user[login]': 'hal', 'user[password]': 'hal-password', authenticity_token: token });
  assert.equal(res.statusCode, 403);
  assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(alertOf(res.body), 'Password authentication is disabled. Ask your administrator.');
  assert.equal((await c.db.kysely.selectFrom('web_sessions').selectAll().execute()).length, 0);
  assert.equal((await c.users.byId(u.id))!.sign_in_count, 0);
});

test('account states: blocked refused (only told with the right password), deactivated reactivated', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const blocked = await seed.user({ username: 'ike', password: 'ike-password', state: 'blocked' });
  let res = await signIn(app, 'ike', 'wrong-password');
  assert.equal(alertOf(res.body), INVALID);
  res = await signIn(app, 'ike', 'ike-password');
  assert.equal(res.statusCode, 401);
  assert.equal(alertOf(res.body), 'Your account has been blocked. Please contact your administrator if you think this is an error.');
  const pending = await seed.user({ username: 'jo', password: 'jo-password', state: 'blocked_pending_approval' });
  res = await signIn(app, 'jo', 'jo-password');
  assert.equal(res.statusCode, 401);
  assert.equal(
    alertOf(res.body),
    'Your account is pending approval from your administrator and hence blocked. Please contact your administrator if you think this is an error.',
  );
  assert.equal((await c.db.kysely.selectFrom('web_sessions').selectAll().execute()).length, 0);
  assert.equal((await c.users.byId(blocked.id))!.sign_in_count, 0);
  assert.equal((await c.users.byId(pending.id))!.state, 'blocked_pending_approval');

  // GitLab: a deactivated user who signs in on the web is active again
  const deact = await seed.user({ username: 'kim', password: 'kim-password', state: 'deactivated' });
  res = await signIn(app, 'kim', 'kim-password');
  assert.equal(res.statusCode, 302);
  const row = (await c.users.byId(deact.id))!;
  assert.equal(row.state, 'active');
  assert.equal(row.sign_in_count, 1);
  const api = await app.inject({ method: 'GET', url: '/api/v4/version', cookies: { _service_session: cookieValue(res, '_service_session')! } });
  assert.equal(api.statusCode, 200);

  // a session of a user blocked later no longer signs anything in
  const lee = await seed.user({ username: 'lee', password: 'lee-password' });
  const session = cookieValue(await signIn(app, 'lee', 'lee-password'), '_service_session')!;
  await c.db.kysely.updateTable('users').set({ state: 'blocked' }).where('id', '=', lee.id).execute();
  const refused = await app.inject({ method: 'GET', url: '/api/v4/version', cookies: { _service_session: session } });
  assert.equal(refused.statusCode, 403);
  assert.deepEqual(refused.json(), { message: '403 Forbidden - Your account has been blocked.' });
  assert.equal((await app.inject({ method: 'GET', url: '/', cookies: { _service_session: session } })).statusCode, 302);
});

test('sign-out needs the session CSRF token, ends the session and clears the cookie', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  await seed.user({ username: 'max', password: 'max-password' });
  const session = cookieValue(await signIn(app, 'max', 'max-password'), '_service_session')!;
  const cookies = { _service_session: session };
  const csrf = (await c.db.kysely.selectFrom('web_sessions').select('csrf_token').executeTakeFirstOrThrow()).csrf_token;

  for (const payload of ['', 'authenticity_token=wrong']) {
    const res = await app.inject({ method: 'POST', url: '/users/sign_out', cookies, headers: FORM, payload });
    assert.equal(res.statusCode, 403);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
  }
  assert.equal((await c.db.kysely.selectFrom('web_sessions').selectAll().execute()).length, 1);

  const res = await app.inject({ method: 'POST', url: '/users/sign_out', cookies, headers: FORM, payload: `authenticity_token=${encodeURIComponent(csrf)}` });
  assert.equal(res.statusCode, 302);
  assert.equal(res.headers.location, '/users/sign_in');
  assert.ok(setCookies(res).some((h) => /^_service_session=; Max-Age=0; Path=\/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax$/.test(h)));
  assert.equal((await c.db.kysely.selectFrom('web_sessions').selectAll().execute()).length, 0);
  assert.equal((await app.inject({ method: 'GET', url: '/api/v4/version', cookies })).statusCode, 401);

  // the X-CSRF-Token header works too, and after_sign_out_path is honoured
  await c.settings.save({ after_sign_out_path: 'https://example.com/bye' });
  const s2 = cookieValue(await signIn(app, 'max', 'max-password'), '_service_session')!;
  const csrf2 = (await c.db.kysely.selectFrom('web_sessions').select('csrf_token').executeTakeFirstOrThrow()).csrf_token;
  const out = await app.inject({ method: 'POST', url: '/users/sign_out', cookies: { _service_session: s2 }, headers: { 'x-csrf-token': csrf2 } });
  assert.equal(out.statusCode, 302);
  assert.equal(out.headers.location, 'https://example.com/bye');

  // without a live session there is nothing to protect
  const stale = await app.inject({ method: 'POST', url: '/users/sign_out', cookies: { _service_session: 'gone' } });
  assert.equal(stale.statusCode, 302);
});

test('redirects: home needs a session, the form is skipped when signed in', async (t) => {
  const { app, seed } = await buildTestApp(t);
  await seed.user({ username: 'ned', password: 'ned-password' });
  const anon = await app.inject({ method: 'GET', url: '/' });
  assert.equal(anon.statusCode, 302);
  assert.equal(anon.headers.location, '/users/sign_in');
  const session = cookieValue(await signIn(app, 'ned', 'ned-password'), '_service_session')!;
  const form = await app.inject({ method: 'GET', url: '/users/sign_in', cookies: { _service_session: session } });
  assert.equal(form.statusCode, 302);
  assert.equal(form.headers.location, '/');
});

test('cookies are Secure when the external URL is https', async (t) => {
  const { app, seed } = await buildTestApp(t, { externalUrl: 'https://hearth.test' });
  await seed.user({ username: 'olga', password: 'olga-password' });
  const form = await app.inject({ method: 'GET', url: '/users/sign_in' });
  assert.match(setCookies(form)[0], /; Secure/);
  const res = await signIn(app, 'olga', 'olga-password');
  assert.equal(res.statusCode, 302);
  assert.match(setCookies(res).find((h) => h.startsWith('_service_session='))!, /; HttpOnly; Secure; SameSite=Lax$/);
});

test('redirect_to with characters outside Latin-1: the Location is percent-encoded UTF-8, never a 500', async (t) => {
  const { app, seed } = await buildTestApp(t);
  await seed.user({ username: 'zoe', password: 'zoe-password' });
  const cases: [string, string][] = [
    ['/translate/hello/po/cs/?q=source:Čeština#日本', '/translate/hello/po/cs/?q=source:%C4%8Ce%C5%A1tina#%E6%97%A5%E6%9C%AC'],
    ['/projects/příliš žluťoučký/', '/projects/p%C5%99%C3%ADli%C5%A1%20%C5%BElu%C5%A5ou%C4%8Dk%C3%BD/'],
    ['/already%20encoded/ü?a=b', '/already%20encoded/%C3%BC?a=b'],
    ['/-/profile', '/-/profile'],
  ];
  for (const [target, location] of cases) {
    const { csrf, token } = await openForm(app);
    const res = await submit(app, csrf, { 'user[login]': 'zoe', 'user[password]': 'zoe-password', authenticity_token: token, redirect_to: target });
    assert.equal(res.statusCode, 302, target);
    assert.equal(res.headers.location, location, target);
    // signed in, the form itself sends the browser on
    const session = cookieValue(res, '_service_session')!;
    const form = await app.inject({ method: 'GET', url: `/users/sign_in?redirect_to=${encodeURIComponent(target)}`, cookies: { _service_session: session } });
    assert.equal(form.statusCode, 302, target);
    assert.equal(form.headers.location, location, target);
  }
  // the form carries the encoded target; a target that is not on this site is still dropped
  const form = await app.inject({ method: 'GET', url: `/users/sign_in?redirect_to=${encodeURIComponent('/ü')}` });
  assert.equal(form.statusCode, 200);
  assert.match(form.body, /<input type="hidden" name="redirect_to" value="\/%C3%BC">/);
  const { csrf, token } = await openForm(app);
  const away = await submit(app, csrf, { 'user[login]': 'zoe', 'user[password]': 'zoe-password', authenticity_token: token, redirect_to: '//ü.example/' });
  assert.equal(away.statusCode, 302);
  assert.equal(away.headers.location, '/');
});
