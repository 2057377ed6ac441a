// The SSH keys page of the user settings (/-/profile/keys): the list with fingerprints, the add form (a refused key
// is 422 with GitLab's messages, what was typed kept, no row), delete (one's own keys only), both through c.keys
// as /user/keys, so key_create / key_destroy are recorded too.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { buildTestApp } from '../helpers/build-app.ts';
import { eventsAfter, lastJobId } from '../helpers/outbox.ts';
import { webGet, webPost, webSignIn } from '../helpers/web.ts';

const run = promisify(execFile);

async function publicKey(t: Parameters<typeof buildTestApp>[0]): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-webkeys-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'erin@laptop', '-f', path.join(dir, 'k')]);
  return fs.readFileSync(path.join(dir, 'k.pub'), 'utf8').trim();
}

test('/-/profile/keys: add (refusals are 422 with nothing saved), list with the fingerprint, delete one own key only', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const erin = await seed.user({ username: 'erin' });
  await seed.user({ username: 'frank' });
  const pub = await publicKey(t);

  const anon = await webGet(app, '/-/profile/keys');
  assert.equal(anon.statusCode, 302);
  assert.equal(anon.headers.location, '/users/sign_in?redirect_to=%2F-%2Fprofile%2Fkeys');

  const s = await webSignIn(app, 'erin');
  const empty = await webGet(app, '/-/profile/keys', s);
  assert.equal(empty.statusCode, 200);
  assert.match(empty.body, /<label class="FormControl-label" for="key_key">Key<\/label>/);
  assert.match(empty.body, /<label class="FormControl-label" for="key_title">Title<\/label>/);
  assert.match(empty.body, /<label class="FormControl-label" for="key_usage_type">Usage type<\/label>/);
  assert.match(empty.body, /<label class="FormControl-label" for="key_expires_at">Expiration date<\/label>/);
  assert.match(empty.body, /There are no SSH keys with access to your account\./);

  const jobs = await lastJobId(c);
  const bad = await webPost(app, '/-/profile/keys', s, { title: 'work laptop', key: 'not a key', usage_type: 'auth' });
  assert.equal(bad.statusCode, 422);
  assert.match(bad.body, /role="alert"/);
  assert.match(bad.body, /Key type is forbidden\. Must be RSA, DSA, ECDSA, ED25519, ECDSA_SK, or ED25519_SK/);
  assert.match(bad.body, /Fingerprint sha256 cannot be generated/);
  assert.match(bad.body, /id="key_title" name="title" type="text" value="work laptop"/);
  assert.match(bad.body, />not a key<\/textarea>/);
  assert.match(bad.body, /<option value="auth" selected>Authentication<\/option>/);
  const badDate = await webPost(app, '/-/profile/keys', s, { title: 'work laptop', key: pub, expires_at: 'soon' });
  assert.equal(badDate.statusCode, 422);
  assert.match(badDate.body, /Expires at is invalid/);
  assert.equal((await c.db.kysely.selectFrom('keys').selectAll().execute()).length, 0);

  const added = await webPost(app, '/-/profile/keys', s, { title: 'work laptop', key: pub, usage_type: 'auth', expires_at: '2999-05-06' });
  assert.equal(added.statusCode, 303, added.body);
  assert.equal(added.headers.location, '/-/profile/keys');
  const [row] = await c.db.kysely.selectFrom('keys').selectAll().execute();
  assert.equal(row.user_id, erin.id);
  assert.equal(row.title, 'work laptop');
  assert.equal(row.key, pub);
  assert.equal(row.usage_type, 'auth');
  assert.equal(row.expires_at, '2999-05-06T00:00:00.000Z');
  assert.deepEqual(
    (await eventsAfter(c, jobs)).map((e) => [e.event_name, e.id, e.username]),
    [['key_create', row.id, 'erin']],
  );

  const list = await webGet(app, '/-/profile/keys', s);
  assert.match(list.body, /Your SSH keys \(1\)/);
  assert.match(list.body, /<th scope="row">work laptop<\/th>/);
  assert.ok(list.body.includes(`<td class="text-mono">${row.fingerprint_sha256}</td>`));
  assert.match(list.body, /<td>Authentication<\/td>/);
  assert.match(list.body, /<td>2999-05-06<\/td>/);
  assert.match(list.body, new RegExp(`action="/-/profile/keys/${row.id}/delete"`));
  // the same key cannot be added twice, by anyone
  const frank = await webSignIn(app, 'frank');
  const again = await webPost(app, '/-/profile/keys', frank, { title: 'mine', key: pub });
  assert.equal(again.statusCode, 422);
  assert.match(again.body, /Fingerprint sha256 has already been taken/);

  // another user cannot delete it from their page; its owner can
  const foreign = await webPost(app, `/-/profile/keys/${row.id}/delete`, frank);
  assert.equal(foreign.statusCode, 303);
  assert.equal((await c.db.kysely.selectFrom('keys').selectAll().execute()).length, 1);
  assert.doesNotMatch((await webGet(app, '/-/profile/keys', frank)).body, /work laptop/);
  const del = await webPost(app, `/-/profile/keys/${row.id}/delete`, s);
  assert.equal(del.statusCode, 303);
  assert.equal(del.headers.location, '/-/profile/keys');
  assert.deepEqual(await c.db.kysely.selectFrom('keys').selectAll().execute(), []);
  assert.match((await webGet(app, '/-/profile/keys', s)).body, /There are no SSH keys with access to your account\./);
});
