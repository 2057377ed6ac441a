// The real python-gitlab on users' SSH keys: gl.user.keys.create/list/get/delete, an administrator's
// gl.users.get(id).keys.create/list/delete, gl.keys.get(id) and gl.keys.get(fingerprint=...) in both forms,
// and the refusal of a garbage key as GitlabCreateError with GitLab's body (skipped without python-gitlab).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startTestServer } from '../helpers/server.ts';
import { ROOT_TOKEN } from '../helpers/build-app.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';

const PYTHON = '/usr/bin/python3';
const available = spawnSync(PYTHON, ['-c', 'import gitlab'], { stdio: 'ignore' }).status === 0;
const run = promisify(execFile);

const SCRIPT = `
import sys, json, gitlab
base, admin_token, user_token, user_id, pub1, pub2, sha256, md5 = sys.argv[1:9]
user_id = int(user_id)
gl = gitlab.Gitlab(base, private_token=user_token)
admin = gitlab.Gitlab(base, private_token=admin_token)
gl.auth()
out = {}

k = gl.user.keys.create({'title': 'laptop', 'key': pub1})
out['created'] = [k.title, k.key.split(' ')[0], k.usage_type, k.expires_at]
out['mine'] = [x.id for x in gl.user.keys.list(get_all=True)]
out['get'] = gl.user.keys.get(k.id).title

try:
    gl.user.keys.create({'title': 'bad', 'key': 'not a key'})
    out['garbage'] = 'accepted'
except gitlab.exceptions.GitlabCreateError as e:
    out['garbage'] = [e.response_code, e.error_message]

a = admin.users.get(user_id).keys.create({'title': 'by admin', 'key': pub2, 'expires_at': '2999-01-01'})
out['admin_created'] = [a.title, a.expires_at]
out['user_list'] = sorted(x.id for x in admin.users.get(user_id).keys.list(get_all=True))
out['public_list'] = sorted(x.title for x in gl.users.get(user_id).keys.list(get_all=True))

by_id = admin.keys.get(k.id)
out['by_id'] = [by_id.id, by_id.user['id']]
out['by_sha256'] = admin.keys.get(fingerprint=sha256).id
out['by_md5'] = admin.keys.get(fingerprint=md5).id
try:
    gl.keys.get(fingerprint=sha256)
    out['non_admin'] = 'allowed'
except gitlab.exceptions.GitlabError as e:
    out['non_admin'] = e.response_code

gl.user.keys.delete(k.id)
admin.users.get(user_id).keys.delete(a.id)
out['after_delete'] = [x.id for x in gl.user.keys.list(get_all=True)]
try:
    admin.keys.get(fingerprint=sha256)
    out['gone'] = 'found'
except gitlab.exceptions.GitlabError as e:
    out['gone'] = e.response_code
out['ids'] = [k.id, a.id]
print(json.dumps(out))
`;

async function keygen(dir: string, name: string): Promise<{ pub: string; sha256: string; md5: string }> {
  const file = path.join(dir, name);
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `${name}@host`, '-f', file]);
  const sha = (await run('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${file}.pub`])).stdout.split(' ')[1];
  const md5 = (await run('ssh-keygen', ['-l', '-E', 'md5', '-f', `${file}.pub`])).stdout.split(' ')[1].replace(/^MD5:/, '');
  return { pub: fs.readFileSync(`${file}.pub`, 'utf8').trim(), sha256: sha, md5 };
}

test('python-gitlab: user keys create, list, get, delete; administrators for a user; keys by id and fingerprint', {
  skip: skipWithout(available, 'python-gitlab'),
}, async (t) => {
  assertTool(available, 'python-gitlab');
  const { seed, base, c } = await startTestServer(t, {}, { selfUrl: true });
  const user = await seed.user({ username: 'py-keys', name: 'Py Keys' });
  const { token } = await seed.token(user, { scopes: ['api'] });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-pykeys-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const k1 = await keygen(dir, 'one');
  const k2 = await keygen(dir, 'two');

  const out = await run(PYTHON, ['-c', SCRIPT, base, ROOT_TOKEN, token, String(user.id), k1.pub, k2.pub, k1.sha256, k1.md5]).catch((e) => e);
  assert.equal(out.stderr ?? '', '', out.stdout);
  const r = JSON.parse(out.stdout);
  const [id1, id2] = r.ids;
  assert.deepEqual(r, {
    created: ['laptop', 'ssh-ed25519', 'auth_and_signing', null],
    mine: [id1],
    get: 'laptop',
    garbage: [
      400,
      {
        key: ['type is forbidden. Must be RSA, DSA, ECDSA, ED25519, ECDSA_SK, or ED25519_SK', 'is invalid'],
        fingerprint_sha256: ['cannot be generated'],
      },
    ],
    admin_created: ['by admin', '2999-01-01T00:00:00.000Z'],
    user_list: [id1, id2],
    public_list: ['by admin', 'laptop'],
    by_id: [id1, user.id],
    by_sha256: id1,
    by_md5: id1,
    non_admin: 403,
    after_delete: [],
    gone: 404,
    ids: [id1, id2],
  });
  assert.deepEqual(await c.db.kysely.selectFrom('keys').selectAll().execute(), []);
});
