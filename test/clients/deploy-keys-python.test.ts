// The real python-gitlab on deploy keys, and the real OpenSSH client and git using the key it made:
// project.keys.create (read-only), project.keys.enable on a second project, list, get, a refused key, a
// clone over SSH and a refused push; then key.save() with can_push and the push goes through;
// gl.deploykeys.list() for an administrator; key.delete() on both projects removes the key, and SSH no
// longer lets it in (skipped without python-gitlab).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { ROOT_TOKEN } from '../helpers/build-app.ts';
import { bareGit, tmpDir, WorkTree } from '../helpers/git.ts';
import { clientKey, sshGit, sshUrl, startSsh } from '../helpers/ssh.ts';

const PYTHON = '/usr/bin/python3';
const available = spawnSync(PYTHON, ['-c', 'import gitlab'], { stdio: 'ignore' }).status === 0;

const SCRIPT = `
import sys, json, gitlab
base, token, admin_token, p1, p2, stage, arg = sys.argv[1:8]
gl = gitlab.Gitlab(base, private_token=token)
admin = gitlab.Gitlab(base, private_token=admin_token)
one, two = gl.projects.get(int(p1), lazy=True), gl.projects.get(int(p2), lazy=True)
out = {}
if stage == 'create':
    k = one.keys.create({'title': 'CI deploy', 'key': arg, 'can_push': False})
    out['created'] = [k.id, k.title, k.can_push, k.key, k.fingerprint_sha256.startswith('SHA256:'), k.expires_at]
    out['enabled'] = gl.http_post(f'/projects/{p2}/deploy_keys/{k.id}/enable') if not hasattr(two.keys, 'enable') else two.keys.enable(k.id)
    out['enabled'] = [out['enabled']['id'], 'can_push' in out['enabled']]
    out['lists'] = [[x.id for x in one.keys.list()], [(x.id, x.can_push) for x in two.keys.list()]]
    out['get'] = [one.keys.get(k.id).title]
    try:
        one.keys.create({'title': 'again', 'key': 'ssh-ed25519 AAAAnotakey'})
        out['bad'] = 'accepted'
    except gitlab.exceptions.GitlabCreateError as e:
        out['bad'] = [e.response_code, e.error_message]
    try:
        one.keys.get(999999)
        out['missing'] = 'found'
    except gitlab.exceptions.GitlabGetError as e:
        out['missing'] = [e.response_code, e.error_message]
elif stage == 'allow':
    k = one.keys.get(int(arg))
    k.can_push = True
    k.title = 'CI deploy (write)'
    k.save()
    k = one.keys.get(int(arg))
    out['saved'] = [k.can_push, k.title]
    out['all'] = [(x.id, x.title, [p['id'] for p in x.projects_with_write_access], [p['id'] for p in x.projects_with_readonly_access]) for x in admin.deploykeys.list()]
elif stage == 'remove':
    one.keys.get(int(arg)).delete()
    out['after_one'] = [[x.id for x in one.keys.list()], [x.id for x in two.keys.list()], len(admin.deploykeys.list())]
    two.keys.delete(int(arg))
    out['after_two'] = [[x.id for x in two.keys.list()], len(admin.deploykeys.list())]
print(json.dumps(out))
`;

test('python-gitlab: project.keys create / enable / list / get / save / delete, gl.deploykeys.list(); the key clones and, with can_push, pushes over SSH', {
  skip: skipWithout(available, 'python-gitlab'),
}, async (t) => {
  assertTool(available, 'python-gitlab');
  const srv = await startTestServer(t, {}, { selfUrl: true });
  const { seed, c } = srv;
  const ssh = await startSsh(t, c);
  const maintainer = await seed.user({ username: 'py-maint' });
  const group = await seed.group({ path: 'py-deploy' });
  const { project: p1, dir: bare } = await seed.repoProject({ namespace: group, path: 'site' });
  const { project: p2 } = await seed.repoProject({ namespace: group, path: 'docs' });
  await seed.member({ project: p1 }, maintainer, 40);
  await seed.member({ project: p2 }, maintainer, 40);
  const { token } = await seed.token(maintainer);
  const key = clientKey(t);

  const py = async (stage: string, arg: string) => {
    const { stdout } = await promisify(execFile)(PYTHON, ['-c', SCRIPT, srv.base, token, ROOT_TOKEN, String(p1.id), String(p2.id), stage, arg]);
    return JSON.parse(stdout);
  };

  const created = await py('create', key.publicKey);
  const id = created.created[0];
  assert.deepEqual(created, {
    created: [id, 'CI deploy', false, key.publicKey, true, null],
    enabled: [id, false],
    lists: [[id], [[id, false]]],
    get: ['CI deploy'],
    bad: [
      400,
      {
        'deploy_key.key': ['type is forbidden. Must be RSA, DSA, ECDSA, ED25519, ECDSA_SK, or ED25519_SK'],
        'deploy_key.fingerprint_sha256': ['cannot be generated'],
      },
    ],
    missing: [404, '404 Not found'],
  });

  // the key clones over SSH; a push is refused (read-only)
  const work = tmpDir(t);
  const full = `${group.full_path}/${p1.path}`;
  const cloned = await sshGit(work, ssh.port, key.file, ['clone', '-q', sshUrl(full), 'w']);
  assert.equal(cloned.code, 0, cloned.stderr);
  const w = new WorkTree(path.join(work, 'w'));
  w.git(['checkout', '-q', '-b', 'deploy']);
  w.write('deployed.txt', 'by the deploy key\n').commit('From the deploy key');
  const refused = await sshGit(w.dir, ssh.port, key.file, ['push', 'origin', 'deploy']);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /This deploy key does not have write access to this project\./);
  assert.equal(bareGit(bare, ['for-each-ref', 'refs/heads/deploy']), '');

  // can_push through python-gitlab's save(): the push goes through (the title stays: the key is on two
  // projects, and only an administrator renames a shared key)
  const allowed = await py('allow', String(id));
  assert.deepEqual(allowed, { saved: [true, 'CI deploy'], all: [[id, 'CI deploy', [p1.id], [p2.id]]] });
  const pushed = await sshGit(w.dir, ssh.port, key.file, ['push', '-q', 'origin', 'deploy']);
  assert.equal(pushed.code, 0, pushed.stderr);
  assert.equal(bareGit(bare, ['rev-parse', 'refs/heads/deploy']).trim(), w.git(['rev-parse', 'HEAD']));

  // removed from both projects: the private key is gone, and SSH no longer lets it in
  const removed = await py('remove', String(id));
  assert.deepEqual(removed, { after_one: [[], [id], 1], after_two: [[], 0] });
  assert.deepEqual(await c.db.kysely.selectFrom('keys').select('id').execute(), []);
  const denied = await sshGit(tmpDir(t), ssh.port, key.file, ['clone', '-q', sshUrl(full), 'x']);
  assert.notEqual(denied.code, 0);
  assert.match(denied.stderr, /Permission denied \(publickey\)/);
});
