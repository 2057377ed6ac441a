// Users' SSH keys: /user/keys, /users/:id/keys, /keys/:id and /keys?fingerprint= with GitLab's
// entities, validation bodies (each refusal writes no row), scopes and permissions, and the key_create /
// key_destroy system hook events (outbox and a real delivery).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import { eventsAfter, lastJobId } from '../../helpers/outbox.ts';
import { startSink } from '../../helpers/sink.ts';
import { parseSshPublicKey } from '../../../src/domain/keys/ssh-public-key.ts';
import type { UserRow } from '../../../src/db/schema.ts';

const run = promisify(execFile);
const ALL_TYPES = 'type is forbidden. Must be RSA, DSA, ECDSA, ED25519, ECDSA_SK, or ED25519_SK';
const GARBAGE = { key: [ALL_TYPES, 'is invalid'], fingerprint_sha256: ['cannot be generated'] };

interface GeneratedKey {
  /** the .pub line as ssh-keygen wrote it */
  pub: string;
  /** "<type> <base64>" */
  bare: string;
  private: string;
  sha256: string;
  md5: string;
}

const keyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-keys-'));
process.on('exit', () => fs.rmSync(keyDir, { recursive: true, force: true }));
let keyCount = 0;

/** A fresh key pair from the real ssh-keygen. */
async function sshKey(type: 'ed25519' | 'rsa' | 'ecdsa' = 'ed25519', opts: { bits?: number; comment?: string } = {}): Promise<GeneratedKey> {
  const file = path.join(keyDir, `k${++keyCount}`);
  const args = ['-q', '-t', type, '-N', '', '-C', opts.comment ?? 'me@laptop', '-f', file];
  if (opts.bits) args.push('-b', String(opts.bits));
  await run('ssh-keygen', args);
  const pub = fs.readFileSync(`${file}.pub`, 'utf8').trim();
  const [t, b64] = pub.split(' ');
  const { stdout: sha } = await run('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${file}.pub`]);
  const { stdout: md5 } = await run('ssh-keygen', ['-l', '-E', 'md5', '-f', `${file}.pub`]);
  return { pub, bare: `${t} ${b64}`, private: fs.readFileSync(file, 'utf8'), sha256: sha.split(' ')[1], md5: md5.split(' ')[1].replace(/^MD5:/, '') };
}

async function keyRows(c: TestApp['c']) {
  return c.db.kysely.selectFrom('keys').selectAll().orderBy('id').execute();
}

async function userWithToken(seed: TestApp['seed'], scopes = ['api'], attrs: Parameters<TestApp['seed']['user']>[0] = {}) {
  const user = await seed.user(attrs);
  const { headers } = await seed.token(user, { scopes });
  return { user, headers };
}

/** The SSHKey entity of a key the user added through the API. */
function sshKeyEntity(id: number, key: GeneratedKey, owner: UserRow, over: Record<string, unknown> = {}) {
  return {
    id,
    title: 'laptop',
    created_at: (over.created_at as string) ?? '',
    expires_at: null,
    key: `${key.bare} ${owner.name} (hearth.test)`,
    usage_type: 'auth_and_signing',
    last_used_at: null,
    ...over,
  };
}

test('POST /user/keys: GitLab entity (the comment becomes the owner and host), the row, list and get', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const { user, headers } = await userWithToken(seed, ['api'], { name: 'Alice Liddell' });
  const key = await sshKey('ed25519', { comment: 'alice@secret-mail.example extra words' });
  const before = await lastJobId(c);

  const res = await app.inject({
    method: 'POST',
    url: '/api/v4/user/keys',
    headers,
    payload: { title: 'laptop', key: key.pub, expires_at: '2999-01-02T03:04:05Z', usage_type: 'auth' },
  });
  assert.equal(res.statusCode, 201, res.body);
  const body = res.json();
  assert.match(body.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  assert.deepEqual(body, sshKeyEntity(body.id, key, user, { created_at: body.created_at, expires_at: '2999-01-02T03:04:05.000Z', usage_type: 'auth' }));
  assert.ok(!res.body.includes('secret-mail'), 'the comment is not published');

  const [row] = await keyRows(c);
  assert.deepEqual(row, {
    id: body.id,
    type: 'user',
    user_id: user.id,
    title: 'laptop',
    // GitLab's sanitize keeps the first word of the comment
    key: `${key.bare} alice@secret-mail.example`,
    key_type: 'ssh-ed25519',
    bits: 256,
    fingerprint: key.md5,
    fingerprint_sha256: key.sha256,
    usage_type: 'auth',
    public: 0,
    expires_at: '2999-01-02T03:04:05.000Z',
    last_used_at: null,
    created_at: body.created_at,
    updated_at: body.created_at,
  });

  const events = await eventsAfter(c, before);
  assert.deepEqual(events, [
    {
      event_name: 'key_create',
      created_at: body.created_at,
      updated_at: body.created_at,
      key: `${key.bare} alice@secret-mail.example`,
      id: body.id,
      username: user.username,
    },
  ]);

  const list = await app.inject({ method: 'GET', url: '/api/v4/user/keys', headers });
  assert.equal(list.statusCode, 200);
  assert.deepEqual(list.json(), [body]);
  assert.equal(list.headers['x-total'], '1');
  const one = await app.inject({ method: 'GET', url: `/api/v4/user/keys/${body.id}`, headers });
  assert.equal(one.statusCode, 200);
  assert.deepEqual(one.json(), body);
});

test('POST /user/keys: defaults (usage_type auth_and_signing, no expiry), form fields, a key wrapped over lines', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const { user, headers } = await userWithToken(seed);
  const key = await sshKey('rsa', { bits: 2048 });
  const [type, b64, comment] = key.pub.split(' ');
  const wrapped = `  ${type} ${b64.slice(0, 100)}\n${b64.slice(100, 250)}\r\n${b64.slice(250)} ${comment}\n`;
  const res = await app.inject({
    method: 'POST',
    url: '/api/v4/user/keys',
    headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ title: 'laptop', key: wrapped, expires_at: '' }).toString(),
  });
  assert.equal(res.statusCode, 201, res.body);
  const body = res.json();
  assert.deepEqual(body, sshKeyEntity(body.id, key, user, { created_at: body.created_at }));
  const [row] = await keyRows(c);
  assert.equal(row.key, key.pub);
  assert.equal(row.key_type, 'ssh-rsa');
  assert.equal(row.bits, 2048);
  assert.equal(row.usage_type, 'auth_and_signing');
});

test('POST /user/keys refusals: each body as GitLab renders it, and no row, no event written', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const { headers } = await userWithToken(seed);
  const other = await userWithToken(seed);
  const ed = await sshKey('ed25519');
  const rsa = await sshKey('rsa', { bits: 2048 });
  const taken = await sshKey('ed25519');
  const takenByDeploy = await sshKey('ed25519');
  const second = await sshKey('ed25519');

  // one key of another user and one deploy key already hold their fingerprints
  const ok = await app.inject({ method: 'POST', url: '/api/v4/user/keys', headers: other.headers, payload: { title: 'x', key: taken.pub } });
  assert.equal(ok.statusCode, 201, ok.body);
  const parsed = parseSshPublicKey(takenByDeploy.pub)!;
  const now = new Date().toISOString();
  await c.db.kysely
    .insertInto('keys')
    .values({
      type: 'deploy',
      user_id: null,
      title: 'deploy',
      key: parsed.normalized,
      key_type: parsed.type,
      bits: parsed.bits,
      fingerprint: parsed.md5,
      fingerprint_sha256: parsed.sha256,
      usage_type: 'auth',
      expires_at: null,
      last_used_at: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  const rowsBefore = await keyRows(c);
  const jobsBefore = await lastJobId(c);

  const cases: [string, Record<string, unknown>, number, unknown][] = [
    ['missing title', { key: ed.pub }, 400, { error: 'title is missing' }],
    ['missing key', { title: 'laptop' }, 400, { error: 'key is missing' }],
    ['blank title', { title: '  ', key: ed.pub }, 400, { message: { title: ["can't be blank"] } }],
    ['title too long', { title: 'x'.repeat(256), key: ed.pub }, 400, { message: { title: ['is too long (maximum is 255 characters)'] } }],
    [
      'blank key',
      { title: 'laptop', key: '' },
      400,
      { message: { key: ["can't be blank", ALL_TYPES, 'is invalid'], fingerprint_sha256: ['cannot be generated'] } },
    ],
    ['garbage key', { title: 'laptop', key: 'not a key at all' }, 400, { message: GARBAGE }],
    [
      'a known type with a broken blob',
      { title: 'laptop', key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBROKEN' },
      400,
      { message: { key: [ALL_TYPES], fingerprint_sha256: ['cannot be generated'] } },
    ],
    ['private key pasted', { title: 'laptop', key: ed.private }, 400, { message: GARBAGE }],
    ['two keys in one string', { title: 'laptop', key: `${ed.pub}\n${second.pub}\n` }, 400, { message: { key: ['should be a single line'] } }],
    ['key too long', { title: 'laptop', key: `${ed.bare} ${'c'.repeat(5000)}` }, 400, { message: { key: ['is too long (maximum is 5000 characters)'] } }],
    ['fingerprint of another user', { title: 'laptop', key: taken.pub }, 400, { message: { fingerprint_sha256: ['has already been taken'] } }],
    ['fingerprint of a deploy key', { title: 'laptop', key: takenByDeploy.bare }, 400, { message: { fingerprint_sha256: ['has already been taken'] } }],
    ['expires_at in the past', { title: 'laptop', key: ed.pub, expires_at: '2020-01-01' }, 400, { message: { key: ['has expired'] } }],
    ['expires_at not a time', { title: 'laptop', key: ed.pub, expires_at: 'tomorrow' }, 400, { error: 'expires_at is invalid' }],
    ['expires_at not a calendar day', { title: 'laptop', key: ed.pub, expires_at: '2999-02-31T00:00:00Z' }, 400, { error: 'expires_at is invalid' }],
    ['unknown usage_type', { title: 'laptop', key: ed.pub, usage_type: 'everything' }, 400, { error: 'usage_type does not have a valid value' }],
  ];
  for (const [name, payload, status, expected] of cases) {
    const res = await app.inject({ method: 'POST', url: '/api/v4/user/keys', headers, payload });
    assert.equal(res.statusCode, status, `${name}: ${res.body}`);
    assert.deepEqual(res.json(), expected, name);
  }

  // the settings' restrictions: ed25519 forbidden, RSA at least 3072 bits
  const put = await app.inject({
    method: 'PUT',
    url: '/api/v4/application/settings',
    headers: root,
    payload: { ed25519_key_restriction: -1, rsa_key_restriction: 3072 },
  });
  assert.equal(put.statusCode, 200, put.body);
  const forbidden = await app.inject({ method: 'POST', url: '/api/v4/user/keys', headers, payload: { title: 'laptop', key: ed.pub } });
  assert.equal(forbidden.statusCode, 400);
  assert.deepEqual(forbidden.json(), { message: { key: ['type is forbidden. Must be RSA, DSA, ECDSA, ECDSA_SK, or ED25519_SK'] } });
  const small = await app.inject({ method: 'POST', url: '/api/v4/user/keys', headers, payload: { title: 'laptop', key: rsa.pub } });
  assert.equal(small.statusCode, 400);
  assert.deepEqual(small.json(), { message: { key: ['must be at least 3072 bits'] } });

  assert.deepEqual(await keyRows(c), rowsBefore);
  assert.equal(await lastJobId(c), jobsBefore);
});

test('the current user only sees and deletes their own keys: 404 Key Not Found; DELETE is 204 with key_destroy', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const alice = await userWithToken(seed);
  const bob = await userWithToken(seed);
  const k = await sshKey();
  const created = await app.inject({ method: 'POST', url: '/api/v4/user/keys', headers: alice.headers, payload: { title: 'laptop', key: k.pub } });
  const id = created.json().id;

  for (const method of ['GET', 'DELETE'] as const) {
    const res = await app.inject({ method, url: `/api/v4/user/keys/${id}`, headers: bob.headers });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { message: '404 Key Not Found' });
  }
  const none = await app.inject({ method: 'GET', url: '/api/v4/user/keys/99999999999', headers: alice.headers });
  assert.equal(none.statusCode, 404);
  assert.deepEqual(none.json(), { message: '404 Key Not Found' });
  const bad = await app.inject({ method: 'GET', url: '/api/v4/user/keys/abc', headers: alice.headers });
  assert.equal(bad.statusCode, 400);
  assert.deepEqual(bad.json(), { error: 'key_id is invalid' });
  assert.deepEqual((await app.inject({ method: 'GET', url: '/api/v4/user/keys', headers: bob.headers })).json(), []);

  // If-Unmodified-Since older than the key: 412, nothing deleted
  const stale = await app.inject({
    method: 'DELETE',
    url: `/api/v4/user/keys/${id}`,
    headers: { ...alice.headers, 'if-unmodified-since': 'Mon, 01 Jan 2001 00:00:00 GMT' },
  });
  assert.equal(stale.statusCode, 412);
  assert.equal((await keyRows(c)).length, 1);

  const [row] = await keyRows(c);
  const before = await lastJobId(c);
  const del = await app.inject({ method: 'DELETE', url: `/api/v4/user/keys/${id}`, headers: alice.headers });
  assert.equal(del.statusCode, 204);
  assert.equal(del.body, '');
  assert.deepEqual(await keyRows(c), []);
  assert.deepEqual(await eventsAfter(c, before), [
    { event_name: 'key_destroy', created_at: row.created_at, updated_at: row.updated_at, key: row.key, id, username: alice.user.username },
  ]);
  const again = await app.inject({ method: 'DELETE', url: `/api/v4/user/keys/${id}`, headers: alice.headers });
  assert.equal(again.statusCode, 404);
});

test('scopes: reads take api, read_api or read_user; writes take api; no credential is 401', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const user = await seed.user();
  const tok = async (scopes: string[]) => (await seed.token(user, { scopes })).headers;
  const api = await tok(['api']);
  const k = await sshKey();
  const created = await app.inject({ method: 'POST', url: '/api/v4/user/keys', headers: api, payload: { title: 'laptop', key: k.pub } });
  const id = created.json().id;

  for (const scopes of [['read_user'], ['read_api']]) {
    const h = await tok(scopes);
    for (const url of ['/api/v4/user/keys', `/api/v4/user/keys/${id}`, `/api/v4/users/${user.id}/keys`, `/api/v4/users/${user.id}/keys/${id}`]) {
      const res = await app.inject({ method: 'GET', url, headers: h });
      assert.equal(res.statusCode, 200, `${scopes} ${url}: ${res.body}`);
    }
  }
  const other = await sshKey();
  for (const scopes of [['read_user'], ['read_api'], ['read_repository']]) {
    const h = await tok(scopes);
    const post = await app.inject({ method: 'POST', url: '/api/v4/user/keys', headers: h, payload: { title: 'x', key: other.pub } });
    assert.equal(post.statusCode, 403, `${scopes}: ${post.body}`);
    assert.equal(post.json().error, 'insufficient_scope');
    const del = await app.inject({ method: 'DELETE', url: `/api/v4/user/keys/${id}`, headers: h });
    assert.equal(del.statusCode, 403);
  }
  const readRepo = await tok(['read_repository']);
  assert.equal((await app.inject({ method: 'GET', url: '/api/v4/user/keys', headers: readRepo })).statusCode, 403);

  for (const [method, url] of [
    ['GET', '/api/v4/user/keys'],
    ['POST', '/api/v4/user/keys'],
    ['GET', `/api/v4/user/keys/${id}`],
    ['DELETE', `/api/v4/user/keys/${id}`],
  ] as const) {
    const res = await app.inject({ method, url, payload: method === 'POST' ? { title: 'x', key: other.pub } : undefined });
    assert.equal(res.statusCode, 401, `${method} ${url}`);
    assert.deepEqual(res.json(), { message: '401 Unauthorized' });
  }
  assert.equal((await keyRows(c)).length, 1);
});

test('GET /users/:id_or_username/keys and /users/:id/keys/:key_id: public, by id or username; restricted public level hides them from anonymous', async (t) => {
  const { app, seed, root } = await buildTestApp(t);
  const alice = await userWithToken(seed, ['api'], { username: 'alice', name: 'Alice' });
  const bob = await userWithToken(seed, ['api'], { username: 'bob' });
  const k1 = await sshKey();
  const k2 = await sshKey('ecdsa');
  const a1 = (await app.inject({ method: 'POST', url: '/api/v4/user/keys', headers: alice.headers, payload: { title: 'laptop', key: k1.pub } })).json();
  const a2 = (await app.inject({ method: 'POST', url: '/api/v4/user/keys', headers: alice.headers, payload: { title: 'laptop', key: k2.pub } })).json();
  const b1 = (
    await app.inject({ method: 'POST', url: '/api/v4/user/keys', headers: bob.headers, payload: { title: 'laptop', key: (await sshKey()).pub } })
  ).json();
  assert.equal(a2.key, `${k2.bare} Alice (hearth.test)`);

  for (const who of [String(alice.user.id), 'alice', 'ALICE']) {
    const res = await app.inject({ method: 'GET', url: `/api/v4/users/${who}/keys` });
    assert.equal(res.statusCode, 200, `${who}: ${res.body}`);
    assert.deepEqual(res.json(), [a1, a2]);
  }
  const paged = await app.inject({ method: 'GET', url: '/api/v4/users/alice/keys?per_page=1&page=2', headers: bob.headers });
  assert.deepEqual(paged.json(), [a2]);
  assert.equal(paged.headers['x-total'], '2');
  assert.equal(paged.headers['x-per-page'], '1');
  assert.equal(paged.headers['x-prev-page'], '1');
  assert.match(String(paged.headers.link), /<http:\/\/hearth\.test\/api\/v4\/users\/alice\/keys\?page=1&per_page=1>; rel="prev"/);

  const one = await app.inject({ method: 'GET', url: `/api/v4/users/${alice.user.id}/keys/${a1.id}` });
  assert.equal(one.statusCode, 200);
  assert.deepEqual(one.json(), a1);
  const notHers = await app.inject({ method: 'GET', url: `/api/v4/users/${alice.user.id}/keys/${b1.id}` });
  assert.equal(notHers.statusCode, 404);
  assert.deepEqual(notHers.json(), { message: '404 Key Not Found' });
  for (const url of ['/api/v4/users/nobody/keys', '/api/v4/users/99999/keys', `/api/v4/users/99999/keys/${a1.id}`]) {
    const res = await app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 404, url);
    assert.deepEqual(res.json(), { message: '404 User Not Found' });
  }

  await app.inject({ method: 'PUT', url: '/api/v4/application/settings', headers: root, payload: { restricted_visibility_levels: ['public'] } });
  const hidden = await app.inject({ method: 'GET', url: '/api/v4/users/alice/keys' });
  assert.equal(hidden.statusCode, 404);
  assert.deepEqual(hidden.json(), { message: '404 User Not Found' });
  const signedIn = await app.inject({ method: 'GET', url: '/api/v4/users/alice/keys', headers: bob.headers });
  assert.deepEqual(signedIn.json(), [a1, a2]);
});

test('administrators: POST and DELETE /users/:id/keys; others 403; unknown user 404; the event names the owner', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const owner = await userWithToken(seed, ['api'], { name: 'Owner' });
  const stranger = await userWithToken(seed);
  const k = await sshKey();

  const denied = await app.inject({
    method: 'POST',
    url: `/api/v4/users/${owner.user.id}/keys`,
    headers: stranger.headers,
    payload: { title: 't', key: k.pub },
  });
  assert.equal(denied.statusCode, 403);
  assert.deepEqual(denied.json(), { message: '403 Forbidden' });
  const unknown = await app.inject({ method: 'POST', url: '/api/v4/users/99999/keys', headers: root, payload: { title: 't', key: k.pub } });
  assert.equal(unknown.statusCode, 404);
  assert.deepEqual(unknown.json(), { message: '404 User Not Found' });
  const invalid = await app.inject({ method: 'POST', url: `/api/v4/users/${owner.user.id}/keys`, headers: root, payload: { title: 't', key: 'nope' } });
  assert.equal(invalid.statusCode, 400);
  assert.deepEqual(invalid.json(), { message: GARBAGE });
  assert.deepEqual(await keyRows(c), []);

  const before = await lastJobId(c);
  const res = await app.inject({
    method: 'POST',
    url: `/api/v4/users/${owner.user.id}/keys`,
    headers: root,
    payload: { title: 'laptop', key: k.pub, usage_type: 'signing' },
  });
  assert.equal(res.statusCode, 201, res.body);
  const body = res.json();
  assert.deepEqual(body, sshKeyEntity(body.id, k, owner.user, { created_at: body.created_at, usage_type: 'signing' }));
  const [row] = await keyRows(c);
  assert.equal(row.user_id, owner.user.id);
  assert.deepEqual(
    (await eventsAfter(c, before)).map((e) => [e.event_name, e.username, e.id]),
    [['key_create', owner.user.username, body.id]],
  );
  // the owner sees it as theirs
  assert.deepEqual((await app.inject({ method: 'GET', url: '/api/v4/user/keys', headers: owner.headers })).json(), [body]);

  const delDenied = await app.inject({ method: 'DELETE', url: `/api/v4/users/${owner.user.id}/keys/${body.id}`, headers: stranger.headers });
  assert.equal(delDenied.statusCode, 403);
  const wrongUser = await app.inject({ method: 'DELETE', url: `/api/v4/users/${stranger.user.id}/keys/${body.id}`, headers: root });
  assert.equal(wrongUser.statusCode, 404);
  assert.deepEqual(wrongUser.json(), { message: '404 Key Not Found' });
  const del = await app.inject({ method: 'DELETE', url: `/api/v4/users/${owner.user.id}/keys/${body.id}`, headers: root });
  assert.equal(del.statusCode, 204);
  assert.deepEqual(await keyRows(c), []);
});

test('expired keys are still listed (the SSH server refuses them at login)', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const { headers } = await userWithToken(seed);
  const k = await sshKey();
  const created = (
    await app.inject({ method: 'POST', url: '/api/v4/user/keys', headers, payload: { title: 'laptop', key: k.pub, expires_at: '2999-01-01' } })
  ).json();
  await c.db.kysely.updateTable('keys').set({ expires_at: '2021-01-01T00:00:00.000Z' }).execute();
  const list = await app.inject({ method: 'GET', url: '/api/v4/user/keys', headers });
  assert.deepEqual(list.json(), [{ ...created, expires_at: '2021-01-01T00:00:00.000Z' }]);
});

test('GET /keys/:id and /keys?fingerprint= (administrators): the key with its user; SHA256 and MD5; deploy keys with their projects', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const owner = await userWithToken(seed, ['api'], { username: 'keyowner', name: 'Key Owner' });
  const k = await sshKey('rsa', { bits: 2048 });
  const key = (await app.inject({ method: 'POST', url: '/api/v4/user/keys', headers: owner.headers, payload: { title: 'laptop', key: k.pub } })).json();

  const byId = await app.inject({ method: 'GET', url: `/api/v4/keys/${key.id}`, headers: root });
  assert.equal(byId.statusCode, 200, byId.body);
  const withUser = byId.json();
  const { user, ...keyPart } = withUser;
  assert.deepEqual(keyPart, key);
  assert.equal(user.id, owner.user.id);
  assert.equal(user.username, 'keyowner');
  assert.equal(user.email, owner.user.email); // Entities::UserPublic
  assert.equal(user.web_url, 'http://hearth.test/keyowner');
  assert.ok(!('is_admin' in user));

  for (const fp of [k.sha256, k.sha256.replace('SHA256:', 'sha256:'), k.md5]) {
    const res = await app.inject({ method: 'GET', url: `/api/v4/keys?fingerprint=${encodeURIComponent(fp)}`, headers: root });
    assert.equal(res.statusCode, 200, `${fp}: ${res.body}`);
    assert.deepEqual(res.json(), withUser);
  }
  const other = await sshKey();
  const none = await app.inject({ method: 'GET', url: `/api/v4/keys?fingerprint=${encodeURIComponent(other.sha256)}`, headers: root });
  assert.equal(none.statusCode, 404);
  assert.deepEqual(none.json(), { message: '404 Key Not Found' });
  for (const fp of ['SHA256:short', 'zz:zz', 'nothing']) {
    const res = await app.inject({ method: 'GET', url: `/api/v4/keys?fingerprint=${encodeURIComponent(fp)}`, headers: root });
    assert.equal(res.statusCode, 400, fp);
    assert.deepEqual(res.json(), { message: 'Failed to return the key' });
  }
  const missing = await app.inject({ method: 'GET', url: '/api/v4/keys', headers: root });
  assert.equal(missing.statusCode, 400);
  assert.deepEqual(missing.json(), { error: 'fingerprint is missing' });
  for (const url of ['/api/v4/keys/99999', '/api/v4/keys/abc']) {
    const res = await app.inject({ method: 'GET', url, headers: root });
    assert.equal(res.statusCode, 404, url);
    assert.deepEqual(res.json(), { message: '404 Not found' });
  }
  for (const url of [`/api/v4/keys/${key.id}`, `/api/v4/keys?fingerprint=${encodeURIComponent(k.sha256)}`]) {
    const res = await app.inject({ method: 'GET', url, headers: owner.headers });
    assert.equal(res.statusCode, 403, url);
    assert.equal((await app.inject({ method: 'GET', url })).statusCode, 401, url);
  }

  // a deploy key (no creator) enabled on a project: its deploy_keys_projects rows come with it
  const project = await seed.project();
  const d = parseSshPublicKey((await sshKey()).pub)!;
  const now = '2026-01-02T03:04:05.678Z';
  const deploy = await c.db.kysely
    .insertInto('keys')
    .values({
      type: 'deploy',
      user_id: null,
      title: 'ci',
      key: d.normalized,
      key_type: d.type,
      bits: d.bits,
      fingerprint: d.md5,
      fingerprint_sha256: d.sha256,
      usage_type: 'auth',
      expires_at: null,
      last_used_at: null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const link = await c.db.kysely
    .insertInto('deploy_keys_projects')
    .values({ deploy_key_id: deploy.id, project_id: project.id, can_push: 1, created_at: now, updated_at: now })
    .returningAll()
    .executeTakeFirstOrThrow();
  const res = await app.inject({ method: 'GET', url: `/api/v4/keys?fingerprint=${encodeURIComponent(d.md5)}`, headers: root });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json(), {
    id: deploy.id,
    title: 'ci',
    created_at: now,
    expires_at: null,
    key: `${d.type} ${d.normalized.split(' ')[1]}`,
    usage_type: 'auth',
    last_used_at: null,
    user: null,
    deploy_keys_projects: [{ id: link.id, deploy_key_id: deploy.id, project_id: project.id, created_at: now, updated_at: now, can_push: true }],
  });
});

test('a system hook receives key_create and key_destroy', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const sink = await startSink(t);
  const hook = await app.inject({ method: 'POST', url: '/api/v4/hooks', headers: root, payload: { url: sink.url, token: 'hook-secret' } });
  assert.equal(hook.statusCode, 201, hook.body);
  const { user, headers } = await userWithToken(seed);
  await c.worker.drain();
  sink.received.length = 0;

  const k = await sshKey();
  const created = (await app.inject({ method: 'POST', url: '/api/v4/user/keys', headers, payload: { title: 'laptop', key: k.pub } })).json();
  const [row] = await keyRows(c);
  await app.inject({ method: 'DELETE', url: `/api/v4/user/keys/${created.id}`, headers });
  await c.worker.drain();

  assert.deepEqual(
    // deliveries run concurrently: their arrival order is not the events' order
    sink.received.map((r) => r.json).sort((a, b) => a.event_name.localeCompare(b.event_name)),
    [
      { event_name: 'key_create', created_at: row.created_at, updated_at: row.updated_at, key: k.pub, id: created.id, username: user.username },
      { event_name: 'key_destroy', created_at: row.created_at, updated_at: row.updated_at, key: k.pub, id: created.id, username: user.username },
    ],
  );
  for (const r of sink.received) {
    assert.equal(r.headers['x-service-event'], 'System Hook');
    assert.equal(r.headers['x-service-token'], 'hook-secret');
  }
});

test('deleting a user deletes their keys with a key_destroy event each, before user_destroy', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const { user, headers } = await userWithToken(seed);
  const other = await userWithToken(seed);
  for (const title of ['one', 'two']) {
    const res = await app.inject({ method: 'POST', url: '/api/v4/user/keys', headers, payload: { title, key: (await sshKey()).pub } });
    assert.equal(res.statusCode, 201, res.body);
  }
  const kept = await app.inject({ method: 'POST', url: '/api/v4/user/keys', headers: other.headers, payload: { title: 'kept', key: (await sshKey()).pub } });
  const rows = await keyRows(c);
  const before = await lastJobId(c);
  const del = await app.inject({ method: 'DELETE', url: `/api/v4/users/${user.id}`, headers: root });
  assert.equal(del.statusCode, 204, del.body);
  assert.deepEqual(
    (await keyRows(c)).map((k) => k.id),
    [kept.json().id],
  );
  const events = await eventsAfter(c, before);
  assert.deepEqual(
    events.filter((e) => e.event_name === 'key_destroy' || e.event_name === 'user_destroy').map((e) => [e.event_name, e.id ?? e.user_id, e.username]),
    [
      ['key_destroy', rows[0].id, user.username],
      ['key_destroy', rows[1].id, user.username],
      ['user_destroy', user.id, user.username],
    ],
  );
});
