// Deploy keys API (GitLab lib/api/deploy_keys.rb): a project's keys for Maintainers (create, enable an
// existing key instead of creating it again, enable by id, update, disable), the administrators' list and
// public keys, GitLab's bodies for each refusal (and no row written), the key events, and the links that go
// with a deleted project.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import { eventsAfter, lastJobId } from '../../helpers/outbox.ts';
import { nowIso } from '../../../src/lib/time.ts';
import type { ProjectRow, UserRow } from '../../../src/db/schema.ts';

// ---- keys -------------------------------------------------------------------------------------

function sshString(b: Buffer | string): Buffer {
  const buf = typeof b === 'string' ? Buffer.from(b) : b;
  const len = Buffer.alloc(4);
  len.writeUInt32BE(buf.length);
  return Buffer.concat([len, buf]);
}
function mpint(b: Buffer): Buffer {
  let v = b;
  while (v.length > 1 && v[0] === 0) v = v.subarray(1);
  return sshString(v[0] & 0x80 ? Buffer.concat([Buffer.from([0]), v]) : v);
}

interface TestKey {
  /** "ssh-ed25519 AAAA… comment" */
  text: string;
  /** without the comment */
  bare: string;
  md5: string;
  sha256: string;
}

function describeBlob(type: string, blob: Buffer, comment: string): TestKey {
  const bare = `${type} ${blob.toString('base64')}`;
  return {
    text: `${bare} ${comment}`,
    bare,
    md5: crypto
      .createHash('md5')
      .update(blob)
      .digest('hex')
      .replace(/(..)(?!$)/g, '$1:'),
    sha256: 'SHA256:' + crypto.createHash('sha256').update(blob).digest('base64').replace(/=+$/, ''),
  };
}

function ed25519(comment = 'deploy@ci'): TestKey {
  const { publicKey } = crypto.generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return describeBlob('ssh-ed25519', Buffer.concat([sshString('ssh-ed25519'), sshString(raw)]), comment);
}

function rsa(bits: number, comment = 'rsa@ci'): TestKey {
  const { publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: bits });
  const jwk = publicKey.export({ format: 'jwk' });
  const blob = Buffer.concat([sshString('ssh-rsa'), mpint(Buffer.from(jwk.e!, 'base64url')), mpint(Buffer.from(jwk.n!, 'base64url'))]);
  return describeBlob('ssh-rsa', blob, comment);
}

// ---- setup ------------------------------------------------------------------------------------

interface World extends TestApp {
  maintainer: UserRow;
  as: { maintainer: Record<string, string>; developer: Record<string, string>; stranger: Record<string, string>; readApi: Record<string, string> };
  project: ProjectRow;
  other: ProjectRow;
}

async function setup(t: Parameters<typeof buildTestApp>[0]): Promise<World> {
  const w = await buildTestApp(t);
  const { seed } = w;
  const group = await seed.group();
  const project = await seed.project({ namespace: group, path: 'app', name: 'App' });
  const other = await seed.project({ namespace: group, path: 'lib', name: 'Lib' });
  const maintainer = await seed.user({ username: 'maint' });
  const developer = await seed.user();
  const stranger = await seed.user();
  await seed.member({ project }, maintainer, 40);
  await seed.member({ project: other }, maintainer, 40);
  await seed.member({ project }, developer, 30);
  return {
    ...w,
    maintainer,
    project,
    other,
    as: {
      maintainer: (await seed.token(maintainer)).headers,
      developer: (await seed.token(developer)).headers,
      stranger: (await seed.token(stranger)).headers,
      readApi: (await seed.token(maintainer, { scopes: ['read_api'] })).headers,
    },
  };
}

const keysUrl = (p: { id: number }) => `/api/v4/projects/${p.id}/deploy_keys`;

async function keyRows(c: TestApp['c']) {
  return c.db.kysely.selectFrom('keys').selectAll().orderBy('id').execute();
}
async function linkRows(c: TestApp['c']) {
  return c.db.kysely.selectFrom('deploy_keys_projects').select(['deploy_key_id', 'project_id', 'can_push']).orderBy('id').execute();
}

function entity(k: TestKey, over: Record<string, unknown>): Record<string, unknown> {
  return {
    expires_at: null,
    last_used_at: null,
    key: k.text,
    usage_type: 'auth_and_signing',
    fingerprint: k.md5,
    fingerprint_sha256: k.sha256,
    ...over,
  };
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

// ---- tests ------------------------------------------------------------------------------------

test('a Maintainer adds a deploy key with write access: the key, its link, the key_create event; list and get', async (t) => {
  const { app, c, project, maintainer, as } = await setup(t);
  const k = ed25519();
  const jobId = await lastJobId(c);
  const res = await app.inject({
    method: 'POST',
    url: keysUrl(project),
    headers: as.maintainer,
    payload: { title: 'CI', key: `  ${k.text}\n`, can_push: true },
  });
  assert.equal(res.statusCode, 201);
  const body = res.json();
  assert.match(body.created_at, ISO);
  assert.deepEqual(body, entity(k, { id: body.id, title: 'CI', created_at: body.created_at, can_push: true }));

  const [row] = await keyRows(c);
  assert.deepEqual(
    { ...row, created_at: undefined, updated_at: undefined },
    {
      id: body.id,
      type: 'deploy',
      user_id: maintainer.id,
      title: 'CI',
      key: k.text,
      key_type: 'ssh-ed25519',
      bits: 256,
      fingerprint: k.md5,
      fingerprint_sha256: k.sha256,
      usage_type: 'auth_and_signing',
      public: 0,
      expires_at: null,
      last_used_at: null,
      created_at: undefined,
      updated_at: undefined,
    },
  );
  assert.deepEqual(await linkRows(c), [{ deploy_key_id: body.id, project_id: project.id, can_push: 1 }]);
  assert.deepEqual(await eventsAfter(c, jobId), [
    { event_name: 'key_create', created_at: row.created_at, updated_at: row.updated_at, key: k.text, id: body.id, username: 'maint' },
  ]);

  const list = await app.inject({ method: 'GET', url: keysUrl(project), headers: as.maintainer });
  assert.equal(list.statusCode, 200);
  assert.deepEqual(list.json(), [body]);
  assert.equal(list.headers['x-total'], '1');
  assert.equal(list.headers['x-page'], '1');
  const one = await app.inject({ method: 'GET', url: `${keysUrl(project)}/${body.id}`, headers: as.maintainer });
  assert.equal(one.statusCode, 200);
  assert.deepEqual(one.json(), body);
  // by path too, and with a read_api token for reading
  const byPath = await app.inject({
    method: 'GET',
    url: `/api/v4/projects/${encodeURIComponent(`${(await c.resolve.namespaceById(project.namespace_id))!.full_path}/app`)}/deploy_keys`,
    headers: as.readApi,
  });
  assert.deepEqual([byPath.statusCode, byPath.json()], [200, [body]]);
});

test('the same public key again: answered as it is on this project, enabled on another the caller maintains', async (t) => {
  const { app, c, project, other, as } = await setup(t);
  const k = rsa(2048);
  const first = (await app.inject({ method: 'POST', url: keysUrl(project), headers: as.maintainer, payload: { title: 'one', key: k.text } })).json();
  assert.equal(first.can_push, false);
  const jobId = await lastJobId(c);

  // the same key on the same project: the existing link, unchanged (title and can_push as they were)
  let res = await app.inject({ method: 'POST', url: keysUrl(project), headers: as.maintainer, payload: { title: 'two', key: k.text, can_push: true } });
  assert.deepEqual([res.statusCode, res.json()], [201, first]);
  // another project of the caller, pasted without the comment: that key, enabled there with can_push
  res = await app.inject({ method: 'POST', url: keysUrl(other), headers: as.maintainer, payload: { title: 'three', key: k.bare, can_push: true } });
  assert.deepEqual([res.statusCode, res.json()], [201, { ...first, can_push: true }]);

  assert.equal((await keyRows(c)).length, 1);
  assert.deepEqual(await linkRows(c), [
    { deploy_key_id: first.id, project_id: project.id, can_push: 0 },
    { deploy_key_id: first.id, project_id: other.id, can_push: 1 },
  ]);
  assert.deepEqual(await eventsAfter(c, jobId), []);
});

test('a key somebody already uses (a user key, or a deploy key of projects the caller has no part in) is refused', async (t) => {
  const { app, c, seed, project, as } = await setup(t);
  const owner = await seed.user();
  const userKey = ed25519('me@laptop');
  const now = nowIso();
  await c.db.kysely
    .insertInto('keys')
    .values({
      type: 'user',
      user_id: owner.id,
      title: 'laptop',
      key: userKey.text,
      key_type: 'ssh-ed25519',
      bits: 256,
      fingerprint: userKey.md5,
      fingerprint_sha256: userKey.sha256,
      usage_type: 'auth_and_signing',
      expires_at: null,
      last_used_at: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  const elsewhere = await seed.project();
  const theirs = ed25519();
  const admin = await seed.user({ is_admin: true });
  const adminHeaders = (await seed.token(admin)).headers;
  const made = await app.inject({ method: 'POST', url: keysUrl(elsewhere), headers: adminHeaders, payload: { title: 'theirs', key: theirs.text } });
  assert.equal(made.statusCode, 201);
  const before = { keys: await keyRows(c), links: await linkRows(c) };
  const jobId = await lastJobId(c);

  for (const k of [userKey, theirs]) {
    const res = await app.inject({ method: 'POST', url: keysUrl(project), headers: as.maintainer, payload: { title: 'x', key: k.text } });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: { 'deploy_key.fingerprint_sha256': ['has already been taken'] } }]);
  }
  assert.deepEqual({ keys: await keyRows(c), links: await linkRows(c) }, before);
  assert.deepEqual(await eventsAfter(c, jobId), []);
});

test('bad inputs: GitLab bodies, nothing written', async (t) => {
  const { app, c, project, as } = await setup(t);
  const k = ed25519();
  const url = keysUrl(project);
  const cases: [unknown, number, unknown][] = [
    [undefined, 400, { error: 'key is missing, title is missing' }],
    [{ title: 'x' }, 400, { error: 'key is missing' }],
    [{ key: k.text }, 400, { error: 'title is missing' }],
    [{ title: 'x', key: k.text, can_push: 'maybe' }, 400, { error: 'can_push is invalid' }],
    [{ title: 'x', key: k.text, expires_at: 'soon' }, 400, { error: 'expires_at is invalid' }],
    [{ title: '', key: k.text }, 400, { message: { 'deploy_key.title': ["can't be blank"] } }],
    [{ title: 'x'.repeat(256), key: k.text }, 400, { message: { 'deploy_key.title': ['is too long (maximum is 255 characters)'] } }],
    [{ title: 'x', key: k.text, expires_at: '2001-01-01T00:00:00Z' }, 400, { message: { 'deploy_key.key': ['has expired'] } }],
    [
      { title: 'x', key: 'ssh-ed25519 AAAAnotakey' },
      400,
      {
        message: {
          'deploy_key.key': ['type is forbidden. Must be RSA, DSA, ECDSA, ED25519, ECDSA_SK, or ED25519_SK'],
          'deploy_key.fingerprint_sha256': ['cannot be generated'],
        },
      },
    ],
    [
      { title: 'x', key: '-----BEGIN OPENSSH PRIVATE KEY-----' },
      400,
      {
        message: {
          'deploy_key.key': ['type is forbidden. Must be RSA, DSA, ECDSA, ED25519, ECDSA_SK, or ED25519_SK', 'is invalid'],
          'deploy_key.fingerprint_sha256': ['cannot be generated'],
        },
      },
    ],
  ];
  for (const [payload, status, body] of cases) {
    const res = await app.inject({ method: 'POST', url, headers: as.maintainer, ...(payload === undefined ? {} : { payload: payload as object }) });
    assert.deepEqual([res.statusCode, res.json()], [status, body], JSON.stringify(payload));
  }
  // the settings' key restrictions
  await c.settings.save({ rsa_key_restriction: 3072 });
  const small = await app.inject({ method: 'POST', url, headers: as.maintainer, payload: { title: 'x', key: rsa(2048).text } });
  assert.deepEqual([small.statusCode, small.json()], [400, { message: { 'deploy_key.key': ['must be at least 3072 bits'] } }]);
  assert.deepEqual(await keyRows(c), []);
  assert.deepEqual(await linkRows(c), []);

  // a later expiry is kept
  const later = await app.inject({ method: 'POST', url, headers: as.maintainer, payload: { title: 'x', key: k.text, expires_at: '2999-01-02T03:04:05Z' } });
  assert.equal(later.statusCode, 201);
  assert.equal(later.json().expires_at, '2999-01-02T03:04:05.000Z');
});

test('who may: Maintainers; a Developer 403, a stranger 404, anonymous 401, read_api only reads', async (t) => {
  const { app, c, project, as } = await setup(t);
  const k = ed25519();
  const key = (await app.inject({ method: 'POST', url: keysUrl(project), headers: as.maintainer, payload: { title: 'CI', key: k.text } })).json();
  const routes: [string, string, object?][] = [
    ['GET', keysUrl(project)],
    ['GET', `${keysUrl(project)}/${key.id}`],
    ['POST', keysUrl(project), { title: 'x', key: ed25519().text }],
    ['PUT', `${keysUrl(project)}/${key.id}`, { can_push: true }],
    ['POST', `${keysUrl(project)}/${key.id}/enable`],
    ['DELETE', `${keysUrl(project)}/${key.id}`],
  ];
  for (const [method, url, payload] of routes) {
    const dev = await app.inject({ method: method as 'GET', url, headers: as.developer, ...(payload ? { payload } : {}) });
    assert.deepEqual([dev.statusCode, dev.json()], [403, { message: '403 Forbidden' }], `${method} ${url}`);
    const stranger = await app.inject({ method: method as 'GET', url, headers: as.stranger, ...(payload ? { payload } : {}) });
    assert.deepEqual([stranger.statusCode, stranger.json()], [404, { message: '404 Project Not Found' }], `${method} ${url}`);
    const anon = await app.inject({ method: method as 'GET', url, ...(payload ? { payload } : {}) });
    assert.deepEqual([anon.statusCode, anon.json()], [401, { message: '401 Unauthorized' }], `${method} ${url}`);
    if (method !== 'GET') {
      const ro = await app.inject({ method: method as 'GET', url, headers: as.readApi, ...(payload ? { payload } : {}) });
      assert.equal(ro.statusCode, 403, `${method} ${url}`);
      assert.equal(ro.json().error, 'insufficient_scope');
    }
  }
  assert.equal((await keyRows(c)).length, 1);
  assert.deepEqual(await linkRows(c), [{ deploy_key_id: key.id, project_id: project.id, can_push: 0 }]);
});

test('unknown keys: 404 Not found (GET, PUT), 404 Deploy key Not Found (DELETE, enable); a key id that is no integer', async (t) => {
  const { app, seed, project, as } = await setup(t);
  const elsewhere = await seed.project();
  const admin = (await seed.token(await seed.user({ is_admin: true }))).headers;
  const notHere = (await app.inject({ method: 'POST', url: keysUrl(elsewhere), headers: admin, payload: { title: 'x', key: ed25519().text } })).json();
  for (const id of [notHere.id, 999999, 99999999999]) {
    const url = `${keysUrl(project)}/${id}`;
    let res = await app.inject({ method: 'GET', url, headers: as.maintainer });
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Not found' }]);
    res = await app.inject({ method: 'PUT', url, headers: as.maintainer, payload: { can_push: true } });
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Not found' }]);
    res = await app.inject({ method: 'DELETE', url, headers: as.maintainer });
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Deploy key Not Found' }]);
    res = await app.inject({ method: 'POST', url: `${url}/enable`, headers: as.maintainer });
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Deploy key Not Found' }]);
  }
  const res = await app.inject({ method: 'GET', url: `${keysUrl(project)}/abc`, headers: as.maintainer });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'key_id is invalid' }]);
});

test('update: can_push of the link; the title of a private key on this one project, kept otherwise (administrators always)', async (t) => {
  const { app, c, seed, project, other, as } = await setup(t);
  const k = ed25519();
  const key = (await app.inject({ method: 'POST', url: keysUrl(project), headers: as.maintainer, payload: { title: 'CI', key: k.text } })).json();
  const url = `${keysUrl(project)}/${key.id}`;

  let res = await app.inject({ method: 'PUT', url, headers: as.maintainer, payload: { title: 'Deploy', can_push: true } });
  assert.deepEqual([res.statusCode, res.json()], [200, { ...key, title: 'Deploy', can_push: true }]);
  assert.deepEqual(await linkRows(c), [{ deploy_key_id: key.id, project_id: project.id, can_push: 1 }]);

  res = await app.inject({ method: 'PUT', url, headers: as.maintainer });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'title, can_push are missing, at least one parameter must be provided' }]);
  res = await app.inject({ method: 'PUT', url, headers: as.maintainer, payload: { title: ' ' } });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: { 'deploy_key.title': ["can't be blank"] } }]);
  res = await app.inject({ method: 'PUT', url, headers: as.maintainer, payload: { can_push: 'nope' } });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'can_push is invalid' }]);

  // enabled on a second project: the title stays for a Maintainer, can_push still changes
  await app.inject({ method: 'POST', url: `${keysUrl(other)}/${key.id}/enable`, headers: as.maintainer });
  res = await app.inject({ method: 'PUT', url, headers: as.maintainer, payload: { title: 'Renamed', can_push: false } });
  assert.deepEqual([res.statusCode, res.json()], [200, { ...key, title: 'Deploy', can_push: false }]);
  // an administrator renames it
  const admin = (await seed.token(await seed.user({ is_admin: true }))).headers;
  res = await app.inject({ method: 'PUT', url, headers: admin, payload: { title: 'Renamed' } });
  assert.deepEqual([res.statusCode, res.json()], [200, { ...key, title: 'Renamed', can_push: false }]);
  const [row] = await keyRows(c);
  assert.equal(row.title, 'Renamed');
  assert.deepEqual(await linkRows(c), [
    { deploy_key_id: key.id, project_id: project.id, can_push: 0 },
    { deploy_key_id: key.id, project_id: other.id, can_push: 0 },
  ]);

  // a public key: the title is the administrators'
  const pub = (await app.inject({ method: 'POST', url: '/api/v4/deploy_keys', headers: admin, payload: { title: 'Public', key: ed25519().text } })).json();
  await app.inject({ method: 'POST', url: `${keysUrl(project)}/${pub.id}/enable`, headers: as.maintainer });
  res = await app.inject({ method: 'PUT', url: `${keysUrl(project)}/${pub.id}`, headers: as.maintainer, payload: { title: 'Mine', can_push: true } });
  assert.deepEqual([res.statusCode, res.json()], [200, { ...pub, can_push: true }]);
});

test('enable: a key of a project the caller belongs to, or a public key; idempotent; others 404', async (t) => {
  const { app, c, seed, project, other, maintainer, as } = await setup(t);
  const admin = (await seed.token(await seed.user({ is_admin: true }))).headers;
  // a project where the caller is only a Guest (GitLab's authorized_projects: any membership)
  const guestOf = await seed.project();
  await seed.member({ project: guestOf }, maintainer, 10);
  const k1 = (await app.inject({ method: 'POST', url: keysUrl(guestOf), headers: admin, payload: { title: 'guest', key: ed25519().text } })).json();
  const k2 = (
    await app.inject({ method: 'POST', url: keysUrl(await seed.project()), headers: admin, payload: { title: 'hidden', key: ed25519().text } })
  ).json();
  const pub = (await app.inject({ method: 'POST', url: '/api/v4/deploy_keys', headers: admin, payload: { title: 'public', key: ed25519().text } })).json();
  const mine = (
    await app.inject({ method: 'POST', url: keysUrl(project), headers: as.maintainer, payload: { title: 'mine', key: ed25519().text, can_push: true } })
  ).json();
  const { can_push: _, ...mineKey } = mine;

  for (const [id, body] of [
    [k1.id, k1],
    [pub.id, pub],
    [mine.id, mineKey],
  ]) {
    const { can_push: _c, ...expected } = body;
    let res = await app.inject({ method: 'POST', url: `${keysUrl(other)}/${id}/enable`, headers: as.maintainer });
    assert.deepEqual([res.statusCode, res.json()], [201, expected]);
    res = await app.inject({ method: 'POST', url: `${keysUrl(other)}/${id}/enable`, headers: as.maintainer });
    assert.deepEqual([res.statusCode, res.json()], [201, expected]);
  }
  const res = await app.inject({ method: 'POST', url: `${keysUrl(other)}/${k2.id}/enable`, headers: as.maintainer });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Deploy key Not Found' }]);
  // an administrator may enable any deploy key
  const byAdmin = await app.inject({ method: 'POST', url: `${keysUrl(other)}/${k2.id}/enable`, headers: admin });
  assert.equal(byAdmin.statusCode, 201);

  const onOther = (await linkRows(c)).filter((l) => l.project_id === other.id);
  assert.deepEqual(onOther, [
    { deploy_key_id: k1.id, project_id: other.id, can_push: 0 },
    { deploy_key_id: pub.id, project_id: other.id, can_push: 0 },
    { deploy_key_id: mine.id, project_id: other.id, can_push: 0 },
    { deploy_key_id: k2.id, project_id: other.id, can_push: 0 },
  ]);
  const list = await app.inject({ method: 'GET', url: keysUrl(other), headers: as.maintainer });
  assert.deepEqual(
    list.json().map((k: any) => [k.id, k.can_push]),
    [
      [k1.id, false],
      [pub.id, false],
      [mine.id, false],
      [k2.id, false],
    ],
  );
});

test('disable: the key leaves the project; a private key on no project any more is deleted (key_destroy), a public one stays', async (t) => {
  const { app, c, seed, project, other, as } = await setup(t);
  const k = ed25519();
  const key = (await app.inject({ method: 'POST', url: keysUrl(project), headers: as.maintainer, payload: { title: 'CI', key: k.text } })).json();
  await app.inject({ method: 'POST', url: `${keysUrl(other)}/${key.id}/enable`, headers: as.maintainer });
  const [row] = await keyRows(c);
  const jobId = await lastJobId(c);

  // If-Unmodified-Since before the link's last change: 412, nothing removed
  let res = await app.inject({
    method: 'DELETE',
    url: `${keysUrl(project)}/${key.id}`,
    headers: { ...as.maintainer, 'if-unmodified-since': 'Thu, 01 Jan 2015 00:00:00 GMT' },
  });
  assert.equal(res.statusCode, 412);
  assert.equal((await linkRows(c)).length, 2);

  res = await app.inject({ method: 'DELETE', url: `${keysUrl(project)}/${key.id}`, headers: as.maintainer });
  assert.deepEqual([res.statusCode, res.body], [204, '']);
  assert.deepEqual(await linkRows(c), [{ deploy_key_id: key.id, project_id: other.id, can_push: 0 }]);
  assert.equal((await keyRows(c)).length, 1);
  assert.deepEqual(await eventsAfter(c, jobId), []);

  res = await app.inject({ method: 'DELETE', url: `${keysUrl(other)}/${key.id}`, headers: as.maintainer });
  assert.equal(res.statusCode, 204);
  assert.deepEqual(await linkRows(c), []);
  assert.deepEqual(await keyRows(c), []);
  assert.deepEqual(await eventsAfter(c, jobId), [
    { event_name: 'key_destroy', created_at: row.created_at, updated_at: row.updated_at, key: k.text, id: key.id, username: 'maint' },
  ]);

  // a public key stays when its last project lets it go
  const admin = (await seed.token(await seed.user({ is_admin: true }))).headers;
  const pub = (await app.inject({ method: 'POST', url: '/api/v4/deploy_keys', headers: admin, payload: { title: 'public', key: ed25519().text } })).json();
  await app.inject({ method: 'POST', url: `${keysUrl(project)}/${pub.id}/enable`, headers: as.maintainer });
  res = await app.inject({ method: 'DELETE', url: `${keysUrl(project)}/${pub.id}`, headers: as.maintainer });
  assert.equal(res.statusCode, 204);
  assert.deepEqual(
    (await keyRows(c)).map((r) => r.id),
    [pub.id],
  );
});

test('administrators: GET /deploy_keys with the projects of each access, ?public=true; POST /deploy_keys makes a public key', async (t) => {
  const { app, c, seed, project, other, as } = await setup(t);
  const adminUser = await seed.user({ is_admin: true, username: 'admin1' });
  const admin = (await seed.token(adminUser)).headers;

  let res = await app.inject({ method: 'GET', url: '/api/v4/deploy_keys', headers: as.maintainer });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  res = await app.inject({ method: 'POST', url: '/api/v4/deploy_keys', headers: as.maintainer, payload: { title: 'x', key: ed25519().text } });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  res = await app.inject({ method: 'GET', url: '/api/v4/deploy_keys' });
  assert.equal(res.statusCode, 401);

  const pk = ed25519('public@instance');
  const jobId = await lastJobId(c);
  res = await app.inject({
    method: 'POST',
    url: '/api/v4/deploy_keys',
    headers: admin,
    payload: { title: 'Instance', key: pk.text, expires_at: '2999-12-31' },
  });
  assert.equal(res.statusCode, 201);
  const pub = res.json();
  assert.deepEqual(pub, entity(pk, { id: pub.id, title: 'Instance', created_at: pub.created_at, expires_at: '2999-12-31T00:00:00.000Z' }));
  const pubRow = (await keyRows(c)).find((r) => r.id === pub.id)!;
  assert.deepEqual([pubRow.type, pubRow.public, pubRow.user_id], ['deploy', 1, adminUser.id]);
  assert.deepEqual(await eventsAfter(c, jobId), [
    { event_name: 'key_create', created_at: pubRow.created_at, updated_at: pubRow.updated_at, key: pk.text, id: pub.id, username: 'admin1' },
  ]);
  // again: the fingerprint is taken (no nesting here: the key itself is validated)
  res = await app.inject({ method: 'POST', url: '/api/v4/deploy_keys', headers: admin, payload: { title: 'Again', key: pk.text } });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: { fingerprint_sha256: ['has already been taken'] } }]);
  res = await app.inject({ method: 'POST', url: '/api/v4/deploy_keys', headers: admin, payload: { key: pk.text } });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'title is missing' }]);

  const k = ed25519();
  const priv = (
    await app.inject({ method: 'POST', url: keysUrl(project), headers: as.maintainer, payload: { title: 'CI', key: k.text, can_push: true } })
  ).json();
  await app.inject({ method: 'POST', url: `${keysUrl(other)}/${priv.id}/enable`, headers: as.maintainer });
  await app.inject({ method: 'POST', url: `${keysUrl(other)}/${pub.id}/enable`, headers: as.maintainer });

  const ns = (await c.resolve.namespaceById(project.namespace_id))!;
  const identity = (p: ProjectRow) => ({
    id: p.id,
    description: p.description,
    name: p.name,
    name_with_namespace: `${ns.name} / ${p.name}`,
    path: p.path,
    path_with_namespace: `${ns.full_path}/${p.path}`,
    created_at: p.created_at,
  });
  res = await app.inject({ method: 'GET', url: '/api/v4/deploy_keys', headers: admin });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['x-total'], '2');
  const { can_push: _, ...privKey } = priv;
  assert.deepEqual(res.json(), [
    { ...pub, projects_with_write_access: [], projects_with_readonly_access: [identity(other)] },
    { ...privKey, projects_with_write_access: [identity(project)], projects_with_readonly_access: [identity(other)] },
  ]);
  res = await app.inject({ method: 'GET', url: '/api/v4/deploy_keys?public=true', headers: admin });
  assert.deepEqual(
    res.json().map((x: any) => x.id),
    [pub.id],
  );
  res = await app.inject({ method: 'GET', url: '/api/v4/deploy_keys?public=perhaps', headers: admin });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'public is invalid' }]);
});

test('a deleted project takes its links along; what the git transports read', async (t) => {
  const { app, c, seed, project, other, as } = await setup(t);
  const key = (
    await app.inject({ method: 'POST', url: keysUrl(project), headers: as.maintainer, payload: { title: 'CI', key: ed25519().text, can_push: true } })
  ).json();
  await app.inject({ method: 'POST', url: `${keysUrl(other)}/${key.id}/enable`, headers: as.maintainer });

  const onProject = await c.deployKeys.accessOn(key.id, project.id);
  assert.deepEqual([onProject?.key.id, onProject?.canPush], [key.id, true]);
  const onOther = await c.deployKeys.accessOn(key.id, other.id);
  assert.deepEqual([onOther?.key.id, onOther?.canPush], [key.id, false]);
  assert.equal(await c.deployKeys.accessOn(key.id, (await seed.project()).id), null);

  const admin = (await seed.token(await seed.user({ is_admin: true }))).headers;
  const res = await app.inject({ method: 'DELETE', url: `/api/v4/projects/${project.id}`, headers: admin });
  assert.equal(res.statusCode, 202);
  assert.deepEqual(await linkRows(c), [{ deploy_key_id: key.id, project_id: other.id, can_push: 0 }]);
  assert.equal(await c.deployKeys.accessOn(key.id, project.id), null);
});

test('a deleted user leaves the deploy keys they created in place, with no creator', async (t) => {
  const { app, c, seed, project, maintainer, as } = await setup(t);
  const key = (
    await app.inject({ method: 'POST', url: keysUrl(project), headers: as.maintainer, payload: { title: 'CI', key: ed25519().text, can_push: true } })
  ).json();
  const admin = (await seed.token(await seed.user({ is_admin: true }))).headers;
  const res = await app.inject({ method: 'DELETE', url: `/api/v4/users/${maintainer.id}`, headers: admin });
  assert.equal(res.statusCode, 204);
  const rows = await keyRows(c);
  assert.deepEqual(
    rows.map((r) => [r.id, r.type, r.user_id]),
    [[key.id, 'deploy', null]],
  );
  assert.deepEqual(await linkRows(c), [{ deploy_key_id: key.id, project_id: project.id, can_push: 1 }]);
  const list = await app.inject({ method: 'GET', url: keysUrl(project), headers: admin });
  assert.deepEqual(list.json(), [key]);
});

test('GET /users/:id/project_deploy_keys: the keys of the projects both maintain; none in common is 403', async (t) => {
  const { app, seed, project, other, maintainer, as } = await setup(t);
  const colleague = await seed.user({ username: 'colleague' });
  await seed.member({ project: other }, colleague, 40);
  await seed.member({ project }, colleague, 30);
  const a = (await app.inject({ method: 'POST', url: keysUrl(project), headers: as.maintainer, payload: { title: 'A', key: ed25519().text } })).json();
  const b = (
    await app.inject({ method: 'POST', url: keysUrl(other), headers: as.maintainer, payload: { title: 'B', key: ed25519().text, can_push: true } })
  ).json();
  await app.inject({ method: 'POST', url: `${keysUrl(other)}/${a.id}/enable`, headers: as.maintainer });
  const { can_push: _a, ...aKey } = a;
  const { can_push: _b, ...bKey } = b;

  // their own: every project they maintain
  let res = await app.inject({ method: 'GET', url: `/api/v4/users/${maintainer.id}/project_deploy_keys`, headers: as.maintainer });
  assert.deepEqual([res.statusCode, res.json()], [200, [aKey, bKey]]);
  assert.equal(res.headers['x-total'], '2');
  // with the colleague (a Maintainer of `other` only): the keys of `other`, each once
  res = await app.inject({ method: 'GET', url: '/api/v4/users/colleague/project_deploy_keys', headers: as.maintainer });
  assert.deepEqual([res.statusCode, res.json()], [200, [aKey, bKey]]);
  res = await app.inject({ method: 'GET', url: `/api/v4/users/${maintainer.id}/project_deploy_keys`, headers: (await seed.token(colleague)).headers });
  assert.deepEqual([res.statusCode, res.json()], [200, [aKey, bKey]]);
  // nothing in common
  res = await app.inject({ method: 'GET', url: `/api/v4/users/${maintainer.id}/project_deploy_keys`, headers: as.stranger });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden - No common authorized projects found' }]);
  res = await app.inject({ method: 'GET', url: '/api/v4/users/nobody-here/project_deploy_keys', headers: as.maintainer });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 User Not Found' }]);
  res = await app.inject({ method: 'GET', url: `/api/v4/users/${maintainer.id}/project_deploy_keys` });
  assert.equal(res.statusCode, 401);
  // a read_user token reads it too (lib/api/users.rb)
  const readUser = (await seed.token(maintainer, { scopes: ['read_user'] })).headers;
  res = await app.inject({ method: 'GET', url: `/api/v4/users/${maintainer.id}/project_deploy_keys`, headers: readUser });
  assert.deepEqual([res.statusCode, res.json()], [200, [aKey, bKey]]);
});
