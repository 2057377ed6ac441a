// A password change signs the user out everywhere: an administrator's reset (API PUT /users/:id, the
// CLI's `admin reset-password`) ends the user's web sessions; other users' sessions and the user's
// access tokens stay.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/build-app.ts';
import { runHearth } from '../helpers/process.ts';
import { type WebSession, webGet, webSignIn } from '../helpers/web.ts';

/** Whether the session still opens a signed-in page (a dead one is sent to sign in). */
async function signedIn(app: Parameters<typeof webGet>[0], s: WebSession): Promise<boolean> {
  const res = await webGet(app, '/dashboard/projects', s);
  if (res.statusCode === 200) return true;
  assert.equal(res.statusCode, 302);
  assert.equal(res.headers.location, '/users/sign_in?redirect_to=%2Fdashboard%2Fprojects');
  return false;
}

test('PUT /users/:id with a password ends every web session of that user; other changes and other users keep theirs', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const alice = await seed.user({ username: 'alice' });
  await seed.user({ username: 'bob' });
  const token = await seed.token(alice);
  const [a1, a2, b] = [await webSignIn(app, 'alice'), await webSignIn(app, 'alice'), await webSignIn(app, 'bob')];

  let res = await app.inject({ method: 'PUT', url: `/api/v4/users/${alice.id}`, headers: root, payload: { bio: 'changed' } });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual([await signedIn(app, a1), await signedIn(app, a2)], [true, true], 'a change of something else keeps the sessions');

  res = await app.inject({ method: 'PUT', url: `/api/v4/users/${alice.id}`, headers: root, payload: { password: 'brand-new-pass-1' } });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual([await signedIn(app, a1), await signedIn(app, a2), await signedIn(app, b)], [false, false, true]);
  assert.equal((await c.db.kysely.selectFrom('web_sessions').select('id').where('user_id', '=', alice.id).execute()).length, 0);
  // her token is a credential of its own
  assert.equal((await app.inject({ method: 'GET', url: '/api/v4/user', headers: token.headers })).statusCode, 200);
  // the new password signs in
  assert.equal(await signedIn(app, await webSignIn(app, 'alice', 'brand-new-pass-1')), true);

  // a refused change (too short) ends nothing
  const a3 = await webSignIn(app, 'alice', 'brand-new-pass-1');
  res = await app.inject({ method: 'PUT', url: `/api/v4/users/${alice.id}`, headers: root, payload: { password: 'short' } });
  assert.equal(res.statusCode, 400);
  assert.equal(await signedIn(app, a3), true);
});

test("hearth admin reset-password (a real process on the same data directory) ends the user's web sessions", {
  skip: Boolean(process.env.DATABASE_URL_TEST) && "the CLI process reads DATA_DIR's SQLite file",
}, async (t) => {
  const { app, seed, dataDir } = await buildTestApp(t);
  await seed.user({ username: 'alice' });
  await seed.user({ username: 'bob' });
  const [a, b] = [await webSignIn(app, 'alice'), await webSignIn(app, 'bob')];
  assert.deepEqual([await signedIn(app, a), await signedIn(app, b)], [true, true]);

  const out = await runHearth(dataDir, ['admin', 'reset-password', '--username', 'alice', '--password', 'reset-by-cli-1']);
  assert.equal(out.code, 0, out.stderr);
  assert.equal(out.stdout, 'password of alice changed\n');
  assert.deepEqual([await signedIn(app, a), await signedIn(app, b)], [false, true]);
  assert.equal(await signedIn(app, await webSignIn(app, 'alice', 'reset-by-cli-1')), true);
});
