// Git over SSH with the real clients: keys added through python-gitlab (`user.keys.create`), then
// the real OpenSSH client and git against the embedded SSH server: clone, push of a branch and a tag, fetch;
// another user's key refused on a private project; a Developer's push to the protected default branch refused
// with the same message as over smart HTTP; the pushes reaching a system hook; the key's last_used_at and
// ssh_url_to_repo as python-gitlab reads them (skipped without python-gitlab unless CI=true).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { cloneUrl, startTestServer } from '../helpers/server.ts';
import { startSink } from '../helpers/sink.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { bareGit, runGit, WorkTree } from '../helpers/git.ts';
import { clientKey, sshGit, sshUrl, startSsh } from '../helpers/ssh.ts';

const PYTHON = '/usr/bin/python3';
const available = spawnSync(PYTHON, ['-c', 'import gitlab'], { stdio: 'ignore' }).status === 0;
const run = promisify(execFile);

const ADD_KEY = `
import sys, json, gitlab
base, token, title, key = sys.argv[1:5]
gl = gitlab.Gitlab(base, private_token=token)
gl.auth()
k = gl.user.keys.create({'title': title, 'key': key})
print(json.dumps({'id': k.id, 'title': k.title, 'keys': [x.title for x in gl.user.keys.list(get_all=True)]}))
`;

const READ_BACK = `
import sys, json, gitlab
base, token, pid, kid = sys.argv[1:5]
gl = gitlab.Gitlab(base, private_token=token)
gl.auth()
print(json.dumps({'ssh_url_to_repo': gl.projects.get(int(pid)).ssh_url_to_repo, 'last_used_at': gl.user.keys.get(int(kid)).last_used_at}))
`;

async function py(script: string, args: string[]): Promise<any> {
  const { stdout } = await run(PYTHON, ['-c', script, ...args]);
  return JSON.parse(stdout);
}

test('python-gitlab user.keys.create, then git over SSH: clone, push a branch and a tag, fetch; refusals as over HTTP; a system hook', {
  skip: skipWithout(available, 'python-gitlab'),
}, async (t) => {
  assertTool(available, 'python-gitlab');
  const startedAt = Date.now();
  const srv = await startTestServer(t, {}, { selfUrl: true });
  const { seed, c } = srv;
  const sshd = await startSsh(t, c);
  const port = sshd.port;
  const sink = await startSink(t);
  const hook = await srv.app.inject({
    method: 'POST',
    url: '/api/v4/hooks',
    headers: srv.root,
    payload: { url: sink.url, push_events: true, tag_push_events: true },
  });
  assert.equal(hook.statusCode, 201, hook.body);
  await c.settings.update({ allow_local_requests_from_system_hooks: true });

  const owner = await seed.user({ username: 'ssh-owner' });
  const developer = await seed.user({ username: 'ssh-dev' });
  const stranger = await seed.user({ username: 'ssh-stranger' });
  const ns = await seed.namespaceOf(owner);
  const { project, dir: bare } = await seed.repoProject({ owner, namespace: ns, visibility: 'private', path: 'app' });
  await seed.member({ project }, owner, 50);
  await seed.member({ project }, developer, 30);
  const full = `${ns.full_path}/app`;
  // EXTERNAL_URL's host (the test server's overrides leave the SSH host at the suite's hearth.test) and the default port
  const sshRepo = `ssh://git@${c.config.ssh.externalHost}:2222/${full}.git`;

  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-ssh-py-'));
  t.after(() => fs.rmSync(work, { recursive: true, force: true }));
  const keys = { owner: clientKey(t), developer: clientKey(t), stranger: clientKey(t, 'rsa', 3072) };
  const tokens = { owner: await seed.token(owner), developer: await seed.token(developer), stranger: await seed.token(stranger) };
  const added: Record<string, any> = {};
  for (const who of ['owner', 'developer', 'stranger'] as const) {
    added[who] = await py(ADD_KEY, [srv.base, tokens[who].token, `${who} laptop`, keys[who].publicKey]);
    assert.deepEqual(added[who].keys, [`${who} laptop`]);
  }
  const rows = await c.db.kysely.selectFrom('keys').select(['user_id', 'title', 'type']).orderBy('id').execute();
  assert.deepEqual(rows, [
    { user_id: owner.id, title: 'owner laptop', type: 'user' },
    { user_id: developer.id, title: 'developer laptop', type: 'user' },
    { user_id: stranger.id, title: 'stranger laptop', type: 'user' },
  ]);

  // the owner: clone the empty project, push main and a tag
  const cloned = await sshGit(work, port, keys.owner.file, ['clone', sshUrl(full), 'o']);
  assert.equal(cloned.code, 0, cloned.stderr);
  const w = new WorkTree(path.join(work, 'o'));
  w.git(['checkout', '-q', '-b', 'main']);
  const first = w.write('README.md', '# app\n').commit('First');
  w.git(['tag', 'v1.0.0']);
  const pushed = await sshGit(w.dir, port, keys.owner.file, ['push', '-q', 'origin', 'main', 'v1.0.0']);
  assert.equal(pushed.code, 0, pushed.stderr);
  assert.equal(bareGit(bare, ['rev-parse', 'refs/heads/main']).trim(), first);
  assert.equal(bareGit(bare, ['rev-parse', 'refs/tags/v1.0.0']).trim(), first);

  // the Developer clones, then fetches the owner's next commit
  const dev = await sshGit(work, port, keys.developer.file, ['clone', '-q', sshUrl(full), 'd']);
  assert.equal(dev.code, 0, dev.stderr);
  const second = w.write('README.md', '# app, again\n').commit('Second');
  assert.equal((await sshGit(w.dir, port, keys.owner.file, ['push', '-q', 'origin', 'main'])).code, 0);
  const dw = new WorkTree(path.join(work, 'd'));
  const fetched = await sshGit(dw.dir, port, keys.developer.file, ['fetch', '-q', 'origin']);
  assert.equal(fetched.code, 0, fetched.stderr);
  assert.equal((await runGit(dw.dir, ['rev-parse', 'origin/main'])).stdout.trim(), second);

  // the Developer may not push the protected default branch: the same message over SSH as over HTTP
  dw.git(['reset', '-q', '--hard', 'origin/main']);
  dw.write('dev.txt', 'dev\n').commit('Developer change');
  const overSsh = await sshGit(dw.dir, port, keys.developer.file, ['push', 'origin', 'HEAD:main']);
  const overHttp = await runGit(dw.dir, ['push', cloneUrl(srv.base, full, developer.username, tokens.developer.token), 'HEAD:main']).then(
    () => assert.fail('the push over HTTP was accepted'),
    (e: Error) => e.message,
  );
  assert.notEqual(overSsh.code, 0);
  const refusal = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('remote: ') && l.trim() !== 'remote:');
  assert.deepEqual(refusal(overSsh.stderr), refusal(overHttp));
  assert.match(overSsh.stderr, /remote: You are not allowed to push code to protected branches on this project\./);
  assert.equal(bareGit(bare, ['rev-parse', 'refs/heads/main']).trim(), second);
  // … and may push a branch of their own
  assert.equal((await sshGit(dw.dir, port, keys.developer.file, ['push', '-q', 'origin', 'HEAD:feature'])).code, 0);

  // another user's key: the private project does not exist for them
  const denied = await sshGit(work, port, keys.stranger.file, ['clone', '-q', sshUrl(full), 's']);
  assert.equal(denied.code, 128);
  assert.match(denied.stderr, /ERROR: The project you were looking for could not be found or you don't have permission to view it\./);
  assert.equal(fs.existsSync(path.join(work, 's')), false);

  // the system hook received the pushes: main (twice), the tag, the Developer's branch
  await c.worker.drain();
  const got = (await sink.waitFor(4)).map((r) => r.json).filter((j) => j.event_name === 'push' || j.event_name === 'tag_push');
  assert.deepEqual(got.map((j) => [j.event_name, j.ref, j.user_username, j.project.git_ssh_url]).sort(), [
    ['push', 'refs/heads/feature', 'ssh-dev', sshRepo],
    ['push', 'refs/heads/main', 'ssh-owner', sshRepo],
    ['push', 'refs/heads/main', 'ssh-owner', sshRepo],
    ['tag_push', 'refs/tags/v1.0.0', 'ssh-owner', sshRepo],
  ]);

  // what python-gitlab reads back: the SSH URL, and the key's last use
  const back = await py(READ_BACK, [srv.base, tokens.owner.token, String(project.id), String(added.owner.id)]);
  assert.equal(back.ssh_url_to_repo, sshRepo);
  // used during this test, however long the machine took over it
  assert.ok(back.last_used_at && Date.parse(back.last_used_at) >= startedAt - 1000 && Date.parse(back.last_used_at) <= Date.now(), String(back.last_used_at));
});
