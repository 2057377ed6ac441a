// The SSH server's own parts: command lines read as gitlab-shell reads them, the advertised clone URL,
// the SSH settings, host keys kept across restarts, session limits, idle and login timeouts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { buildTestApp } from '../helpers/build-app.ts';
import { fixtureEnv } from '../helpers/git.ts';
import { clientKey, insertKey, ssh, sshArgs, startSsh } from '../helpers/ssh.ts';
import { parseCommand, shellWords } from '../../src/ssh/command.ts';
import { loadHostKeys } from '../../src/ssh/host-keys.ts';
import { GitSshServer } from '../../src/ssh/server.ts';
import { sshPathPrefix } from '../../src/domain/core/ssh-url.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';

test('command lines: the three git services with one path, "git upload-pack", the greeting, everything else refused', () => {
  assert.deepEqual(parseCommand(''), { kind: 'discover' });
  assert.deepEqual(parseCommand("git-upload-pack 'group/project.git'"), { kind: 'git', command: 'git-upload-pack', path: 'group/project' });
  assert.deepEqual(parseCommand("git-receive-pack '/group/sub/project.git'"), { kind: 'git', command: 'git-receive-pack', path: 'group/sub/project' });
  assert.deepEqual(parseCommand('git-upload-archive "group/project"'), { kind: 'git', command: 'git-upload-archive', path: 'group/project' });
  assert.deepEqual(parseCommand("git upload-pack 'group/project.git'"), { kind: 'git', command: 'git-upload-pack', path: 'group/project' });
  assert.deepEqual(parseCommand('git-upload-pack group/project.git/'), { kind: 'git', command: 'git-upload-pack', path: 'group/project' });
  // the path is checked by git access (not found), not here
  assert.deepEqual(parseCommand("git-upload-pack '../x'"), { kind: 'git', command: 'git-upload-pack', path: '../x' });
  assert.deepEqual(parseCommand("git-upload-pack '--upload-pack=touch x'"), { kind: 'git', command: 'git-upload-pack', path: '--upload-pack=touch x' });
  assert.deepEqual(parseCommand('ls -la'), { kind: 'unknown', name: 'ls -la' });
  assert.deepEqual(parseCommand('git-lfs-authenticate group/project download'), { kind: 'unknown', name: 'git-lfs-authenticate group/project download' });
  assert.deepEqual(parseCommand('git-upload-pack'), { kind: 'disallowed' });
  assert.deepEqual(parseCommand("git-upload-pack 'a' 'b'"), { kind: 'disallowed' });
  assert.deepEqual(parseCommand("git-upload-pack 'a"), { kind: 'invalid', error: 'invalid command line string' });
  assert.deepEqual(parseCommand(`git-upload-pack '${'a'.repeat(5000)}'`), { kind: 'invalid', error: 'command too long' });
  assert.deepEqual(shellWords(`a 'b c' "d \\" e" f\\ g ''`), ['a', 'b c', 'd " e', 'f g', '']);
});

test('ssh_url_to_repo: git@host: on port 22, ssh://git@host:port/ elsewhere; the settings', async (t) => {
  assert.equal(sshPathPrefix({ host: 'example.com', port: 22 }), 'git@example.com:');
  assert.equal(sshPathPrefix({ host: 'example.com', port: 2222 }), 'ssh://git@example.com:2222/');
  assert.equal(sshPathPrefix({ host: '::1', port: 2222 }), 'ssh://git@[::1]:2222/');

  const defaults = loadConfig({ DATA_DIR: '/tmp/x', EXTERNAL_URL: 'https://forge.example.com:8443', HOST: '127.0.0.1' }).ssh;
  assert.deepEqual(defaults, {
    port: 2222,
    listen: '127.0.0.1',
    externalHost: 'forge.example.com',
    externalPort: 2222,
    maxSessions: 128,
    maxSessionsPerUser: 32,
    idleTimeoutMs: 300_000,
    authTimeoutMs: 60_000,
  });
  assert.equal(loadConfig({ HEARTH_SSH_PORT: '0' }).ssh.externalPort, 22);
  assert.deepEqual(loadConfig({ HEARTH_SSH_PORT: '2200', HEARTH_SSH_EXTERNAL_PORT: '22', HEARTH_SSH_HOST: 'git.example.com', HEARTH_SSH_LISTEN: '::' }).ssh, {
    ...loadConfig({}).ssh,
    port: 2200,
    externalPort: 22,
    externalHost: 'git.example.com',
    listen: '::',
  });
  for (const [name, value] of [
    ['HEARTH_SSH_PORT', 'ssh'],
    ['HEARTH_SSH_PORT', '70000'],
    ['HEARTH_SSH_EXTERNAL_PORT', '0'],
    ['HEARTH_SSH_HOST', 'bad host'],
    ['HEARTH_SSH_MAX_SESSIONS', '0'],
    ['HEARTH_SSH_IDLE_TIMEOUT', '-1'],
  ]) {
    assert.throws(() => loadConfig({ [name]: value }), ConfigError, `${name}=${value}`);
  }

  // the project entity and hook payloads advertise the configured host and port
  const externalUrl = 'http://ssh22.test';
  const { app, seed, root } = await buildTestApp(t, {
    externalUrl,
    ssh: loadConfig({ EXTERNAL_URL: externalUrl, HEARTH_SSH_EXTERNAL_PORT: '22', HEARTH_SSH_HOST: 'git.ssh22.test' }).ssh,
  });
  const group = await seed.group();
  const project = await seed.project({ namespace: group });
  const res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}`, headers: root });
  assert.equal(res.json().ssh_url_to_repo, `git@git.ssh22.test:${group.full_path}/${project.path}.git`);
  assert.equal(res.json().http_url_to_repo, `${externalUrl}/${group.full_path}/${project.path}.git`);
});

test('host keys: ed25519 and RSA made once (0600) and kept; a restarted server is the same host to a client', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-hostkeys-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const first = loadHostKeys(path.join(dir, 'ssh'));
  assert.deepEqual(
    first.map((k) => [k.type, path.basename(k.file), fs.statSync(k.file).mode & 0o777]),
    [
      ['ssh-ed25519', 'ssh_host_ed25519_key', 0o600],
      ['ssh-rsa', 'ssh_host_rsa_key', 0o600],
    ],
  );
  const again = loadHostKeys(path.join(dir, 'ssh'));
  assert.deepEqual(
    again.map((k) => k.private.toString()),
    first.map((k) => k.private.toString()),
  );

  const { c, seed } = await buildTestApp(t);
  const user = await seed.user();
  const key = clientKey(t);
  await insertKey(c, key, { user });
  const knownHosts = path.join(dir, 'known_hosts');
  const connect = (port: number, strict: string) =>
    new Promise<{ code: number; stderr: string }>((resolve) => {
      const args = ['-F', '/dev/null', '-i', key.file, '-p', String(port), '-o', `StrictHostKeyChecking=${strict}`, '-o', `UserKnownHostsFile=${knownHosts}`];
      args.push('-o', 'HostKeyAlias=hearth', '-o', 'IdentitiesOnly=yes', '-o', 'BatchMode=yes', '-o', 'LogLevel=ERROR', 'git@127.0.0.1');
      execFile('ssh', args, { env: fixtureEnv() }, (err, _out, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stderr }));
    });
  const start = async (keys: ReturnType<typeof loadHostKeys>) => {
    const server = new GitSshServer(c, { ...c.config.ssh, hostKeys: keys, log: c.log });
    await server.listen(0, '127.0.0.1');
    return server;
  };
  const a = await start(first);
  assert.deepEqual(await connect(a.port, 'accept-new'), { code: 0, stderr: '' });
  await a.close();
  const b = await start(loadHostKeys(path.join(dir, 'ssh')));
  t.after(() => b.close());
  assert.deepEqual(await connect(b.port, 'yes'), { code: 0, stderr: '' });
  // another set of keys is another host: ssh refuses it
  const other = await start(loadHostKeys(path.join(dir, 'other')));
  t.after(() => other.close());
  const refused = await connect(other.port, 'yes');
  assert.equal(refused.code, 255);
  assert.match(refused.stderr, /Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED/);
});

test('limits: sessions per user and in total, the idle timeout, the login grace time', async (t) => {
  const { c, seed } = await buildTestApp(t);
  const group = await seed.group();
  const { project } = await seed.repoProject({ namespace: group });
  const full = `${group.full_path}/${project.path}`;
  const alice = await seed.user();
  const bob = await seed.user();
  await seed.member({ project }, alice, 30);
  await seed.member({ project }, bob, 30);
  const aliceKey = clientKey(t);
  const bobKey = clientKey(t);
  await insertKey(c, aliceKey, { user: alice });
  await insertKey(c, bobKey, { user: bob });

  /** An upload-pack session that waits for the client (after its advertisement) until ended. */
  const hold = async (port: number, keyFile: string) => {
    const child = spawn('ssh', [...sshArgs(port, keyFile), 'git@127.0.0.1', `git-upload-pack '${full}'`], {
      env: fixtureEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const closed = new Promise<number>((resolve) => child.once('close', (code) => resolve(code ?? -1)));
    // the advertisement, or the end (a short idle limit may close a slow handshake before it: that is idle too)
    await Promise.race([new Promise((resolve) => child.stdout.once('data', resolve)), closed]);
    return { child, closed, end: () => child.stdin.end('0000') };
  };
  /** `p`'s value, or 'too late' after `ms` (a bound far above the limit under test, far below the default) */
  const within = <T>(p: Promise<T>, ms: number): Promise<T | 'too late'> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'too late'>((r) => (timer = setTimeout(r, ms, 'too late')));
    return Promise.race([p, late]).finally(() => clearTimeout(timer));
  };
  /** the server's count of running sessions reaches `n` once the closes are handled (the deadline bounds a hang) */
  const sessionsReach = async (server: { activeSessions: number }, n: number) => {
    for (const deadline = Date.now() + 30_000; server.activeSessions !== n && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 10));
    assert.equal(server.activeSessions, n);
  };

  const limited = await startSsh(t, c, { maxSessionsPerUser: 1, maxSessions: 2 });
  const a1 = await hold(limited.port, aliceKey.file);
  assert.equal(limited.activeSessions, 1);
  // the session channel is refused: ssh gives up (255) without a greeting
  assert.deepEqual(await ssh(limited.port, aliceKey.file), { code: 255, stdout: '', stderr: '' });
  const b1 = await hold(limited.port, bobKey.file);
  // two in total: a third user would be refused too (alice again here, over the total as well)
  assert.equal(limited.activeSessions, 2);
  assert.deepEqual(await ssh(limited.port, bobKey.file), { code: 255, stdout: '', stderr: '' });
  a1.end();
  b1.end();
  assert.equal(await a1.closed, 0);
  assert.equal(await b1.closed, 0);
  await sessionsReach(limited, 0);
  assert.equal((await ssh(limited.port, aliceKey.file)).code, 0);

  // a connection with nothing going on is closed (well before 30 s: without the 400 ms limit it would wait 300 s)
  const idle = await startSsh(t, c, { idleTimeoutMs: 400 });
  const started = Date.now();
  const waiting = await hold(idle.port, aliceKey.file);
  const code = await within(waiting.closed, 30_000);
  assert.ok(code !== 0 && code !== 'too late', `${code} after ${Date.now() - started} ms`);
  await sessionsReach(idle, 0);

  // a client that never authenticates is dropped after the login grace time
  const grace = await startSsh(t, c, { authTimeoutMs: 300 });
  const socket = net.connect(grace.port, '127.0.0.1');
  let banner = '';
  socket.on('data', (b) => {
    banner += b.toString('latin1');
  });
  // dropped well before 30 s (without the 300 ms grace time it would be 60 s)
  assert.equal(await within(new Promise((resolve) => socket.once('close', () => resolve('closed'))), 30_000), 'closed');
  assert.match(banner, /^SSH-2\.0-Hearth\r\n/);
});
