// git clone / fetch / push over SSH with the real OpenSSH client against the embedded server: the same
// access rules, protected branches, events and hooks as smart HTTP, user keys and deploy keys, and
// gitlab-shell's answers to everything else. One app, one HTTP port and one SSH server for the file.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, cloneUrl, type TestServer } from '../helpers/server.ts';
import { startSink, type Sink } from '../helpers/sink.ts';
import { AUTHOR, bareGit, fixtureEnv, pushEvents, runGit, WorkTree } from '../helpers/git.ts';
import { clientKey, enableDeployKey, insertKey, ssh, sshArgs, sshGit, sshUrl, startSsh, type ClientKey } from '../helpers/ssh.ts';
import type { GitSshServer } from '../../src/ssh/server.ts';
import type { KeyRow, NamespaceRow, ProjectRow, UserRow } from '../../src/db/schema.ts';
import { ZERO_SHA } from '../../src/git/refs.ts';

// one suite: the shared fixture of `before` lives from this file's first test to its last, also in a shard
describe('git-ssh', () => {
  const cleanups: (() => unknown)[] = [];
  const scope = { after: (fn: () => unknown) => cleanups.push(fn) };
  after(async () => {
    for (const fn of cleanups.reverse()) await fn();
  });

  /** no git session is counted any more, once the server has handled the closes (the deadline bounds a hang only) */
  async function sessionsEnded(): Promise<void> {
    for (const deadline = Date.now() + 30_000; server.activeSessions && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 10));
    assert.equal(server.activeSessions, 0);
  }

  const NOT_FOUND = "ERROR: The project you were looking for could not be found or you don't have permission to view it.";
  /** gitlab-shell's warning box around a message, as git shows the remote's stderr */
  const box = (message: string) => {
    const rule = `remote: ${'='.repeat(72)}\n`;
    return `remote: \n${rule}remote: \nremote: ${message}\nremote: \n${rule}remote: \n`;
  };

  let s: TestServer;
  let server: GitSshServer;
  let port: number;
  let sink: Sink;
  let owner: UserRow;
  let ownerKey: ClientKey;
  let ownerKeyRow: KeyRow;
  let ns: NamespaceRow;
  let project: ProjectRow;
  let bare: string;
  let full: string;

  function tmp(): string {
    const dir = fs.mkdtempSync(path.join(fs.realpathSync(process.env.TMPDIR || '/tmp'), 'hearth-ssh-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    return dir;
  }

  before(async () => {
    s = await startTestServer(scope as never);
    server = await startSsh(scope, s.c);
    port = server.port;
    sink = await startSink(null);
    cleanups.push(() => sink.close());
    const res = await s.app.inject({
      method: 'POST',
      url: '/api/v4/hooks',
      headers: s.root,
      payload: { url: sink.url, push_events: true, tag_push_events: true },
    });
    assert.equal(res.statusCode, 201, res.body);
    owner = await s.seed.user();
    ns = await s.seed.namespaceOf(owner);
    ({ project, dir: bare } = await s.seed.repoProject({ owner, namespace: ns }));
    await s.seed.member({ project }, owner, 50);
    full = `${ns.full_path}/${project.path}`;
    ownerKey = clientKey(scope);
    ownerKeyRow = await insertKey(s.c, ownerKey, { user: owner });
  });

  test('clone, push a branch and a tag, fetch with protocol v2: the same events as over HTTP, a system hook delivery, last_used_at', async () => {
    const startedAt = Date.now();
    const work = tmp();
    const cloned = await sshGit(work, port, ownerKey.file, ['clone', sshUrl(full), 'w']);
    assert.equal(cloned.code, 0, cloned.stderr);
    assert.match(cloned.stderr, /You appear to have cloned an empty repository/);
    const w = new WorkTree(path.join(work, 'w'));
    w.git(['checkout', '-q', '-b', 'main']);
    const first = w.write('README.md', '# hello\n').commit('First');
    w.git(['tag', 'v1.0.0']);
    const pushed = await sshGit(w.dir, port, ownerKey.file, ['push', '-q', 'origin', 'main', 'v1.0.0']);
    assert.equal(pushed.code, 0, pushed.stderr);
    assert.equal(bareGit(bare, ['rev-parse', 'refs/heads/main']).trim(), first);
    assert.equal(bareGit(bare, ['rev-parse', 'refs/tags/v1.0.0']).trim(), first);

    const evs = await pushEvents(s.c);
    const push = evs.find((e: any) => e.event_name === 'push');
    const sshRepo = `ssh://git@hearth.test:2222/${full}.git`;
    assert.deepEqual(
      evs.map((e: any) => [e.event_name, e.ref ?? null, e.user_id ?? null]).sort(),
      [
        ['push', 'refs/heads/main', owner.id],
        ['repository_update', null, owner.id],
        ['tag_push', 'refs/tags/v1.0.0', owner.id],
      ].sort(),
    );
    assert.equal(push.before, ZERO_SHA);
    assert.equal(push.after, first);
    assert.equal(push.project.git_ssh_url, sshRepo);
    assert.equal(push.repository.git_ssh_url, sshRepo);
    assert.deepEqual(push.commits[0].author, { name: AUTHOR.name, email: AUTHOR.email });

    // the system hook receives the push and the tag push
    await s.c.worker.drain();
    const received = (await sink.waitFor(2)).filter((r) => r.json.event_name === 'push' || r.json.event_name === 'tag_push');
    assert.deepEqual(received.map((r) => [r.json.event_name, r.json.ref, r.json.user_id, r.json.project.git_ssh_url]).sort(), [
      ['push', 'refs/heads/main', owner.id, sshRepo],
      ['tag_push', 'refs/tags/v1.0.0', owner.id, sshRepo],
    ]);

    // a second clone with protocol v2 fetches what another pushed
    const other = tmp();
    const v2 = await sshGit(other, port, ownerKey.file, ['-c', 'protocol.version=2', 'clone', '-q', sshUrl(full), 'o'], { GIT_TRACE_PACKET: '1' });
    assert.equal(v2.code, 0, v2.stderr);
    assert.match(v2.stderr, /< version 2/);
    const second = w.write('README.md', '# hello again\n').commit('Second');
    assert.equal((await sshGit(w.dir, port, ownerKey.file, ['push', '-q', 'origin', 'main'])).code, 0);
    const fetched = await sshGit(path.join(other, 'o'), port, ownerKey.file, ['-c', 'protocol.version=2', 'fetch', '-q', 'origin']);
    assert.equal(fetched.code, 0, fetched.stderr);
    assert.equal((await runGit(path.join(other, 'o'), ['rev-parse', 'origin/main'])).stdout.trim(), second);
    // `ssh://` URLs with the port, and the `git upload-pack` spelling of Git for Windows
    const third = tmp();
    const byUrl = await sshGit(third, port, ownerKey.file, ['clone', '-q', '--upload-pack', 'git upload-pack', `ssh://git@127.0.0.1:${port}/${full}.git`, 't']);
    assert.equal(byUrl.code, 0, byUrl.stderr);
    assert.equal(fs.readFileSync(path.join(third, 't', 'README.md'), 'utf8'), '# hello again\n');

    // Keys::LastUsedService: set by the first login, not rewritten within a day
    const used = await s.c.db.kysely.selectFrom('keys').select('last_used_at').where('id', '=', ownerKeyRow.id).executeTakeFirstOrThrow();
    // set during this test (however long the machine took over it)
    assert.ok(used.last_used_at && Date.parse(used.last_used_at) >= startedAt - 1000 && Date.parse(used.last_used_at) <= Date.now(), String(used.last_used_at));
    const old = '2026-01-01T00:00:00.000Z';
    const recent = new Date(Date.now() - 3600_000).toISOString();
    await s.c.db.kysely.updateTable('keys').set({ last_used_at: recent }).where('id', '=', ownerKeyRow.id).execute();
    await ssh(port, ownerKey.file);
    assert.equal(
      (await s.c.db.kysely.selectFrom('keys').select('last_used_at').where('id', '=', ownerKeyRow.id).executeTakeFirstOrThrow()).last_used_at,
      recent,
    );
    await s.c.db.kysely.updateTable('keys').set({ last_used_at: old }).where('id', '=', ownerKeyRow.id).execute();
    await ssh(port, ownerKey.file);
    // rewritten after the login (the deadline bounds a hang only)
    const lastUsed = async () =>
      (await s.c.db.kysely.selectFrom('keys').select('last_used_at').where('id', '=', ownerKeyRow.id).executeTakeFirstOrThrow()).last_used_at;
    for (const deadline = Date.now() + 30_000; (await lastUsed()) === old && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 20));
    assert.notEqual(await lastUsed(), old);

    // git archive --remote (git-upload-archive)
    const archived = await sshGit(w.dir, port, ownerKey.file, ['archive', `--remote=${sshUrl(full)}`, '--format=tar', 'main', 'README.md']);
    assert.equal(archived.code, 0, archived.stderr);
    assert.match(archived.stdout, /hello again/);
  });

  test('the greeting without a command; commands, paths, users and channels gitlab-shell refuses', async () => {
    assert.deepEqual(await ssh(port, ownerKey.file), { code: 0, stdout: `Welcome to Hearth, @${owner.username}!\n`, stderr: '' });
    // a pty is refused (ssh gives up when one is forced; from a terminal it goes on to the greeting)
    const tty = await ssh(port, ownerKey.file, [], ['-tt', '-o', 'LogLevel=INFO']);
    assert.deepEqual(tty, { code: 255, stdout: '', stderr: 'PTY allocation request failed on channel 0\r\n' });

    const refused = async (command: string[], code: number, message: string) => {
      const r = await ssh(port, ownerKey.file, command);
      assert.deepEqual(r, { code, stdout: '', stderr: box(message) }, command.join(' '));
    };
    await refused(['ls', '-la'], 128, 'ERROR: Unknown command: ls -la');
    await refused(['bash'], 128, 'ERROR: Unknown command: bash');
    await refused(['git-upload-pack'], 1, 'ERROR: Disallowed command');
    await refused(['git-upload-pack', `'${full}'`, 'extra'], 1, 'ERROR: Disallowed command');
    await refused(['git-upload-pack', "'unterminated"], 128, 'ERROR: Failed to parse command: invalid command line string');
    for (const p of ['../../etc/passwd', `${full}/../../x`, '--help', '-c', `${ns.full_path}/..`, '/etc/passwd/', `${full}\tx`, 'nope/nothing']) {
      await refused(['git-upload-pack', `'${p}'`], 1, NOT_FOUND);
    }
    await refused(['git-receive-pack', `'--exec=touch /tmp/x'`], 1, NOT_FOUND);

    // only user git, only public keys
    const asRoot = await ssh(port, ownerKey.file, [], [], 'root');
    assert.equal(asRoot.code, 255);
    assert.match(asRoot.stderr, /Permission denied \(publickey\)/);
    // no port forwarding, either way; no subsystems (sftp)
    const direct = await ssh(port, ownerKey.file, [], ['-W', '127.0.0.1:9']);
    assert.equal(direct.code, 255);
    assert.match(direct.stderr, /stdio forwarding failed/);
    const remote = await ssh(port, ownerKey.file, [], ['-N', '-R', '0:127.0.0.1:9', '-o', 'ExitOnForwardFailure=yes']);
    assert.equal(remote.code, 255);
    assert.match(remote.stderr, /remote port forwarding failed/);
    const sftp = await ssh(port, ownerKey.file, ['sftp'], ['-s']);
    assert.equal(sftp.code, 255);
    assert.match(sftp.stderr, /subsystem request failed/);
    // environment other than GIT_PROTOCOL never reaches git: GIT_TRACE would print to stderr
    const traced = await ssh(port, ownerKey.file, ['git-upload-pack', `'${full}'`], ['-o', 'SetEnv=GIT_TRACE=1 GIT_PROTOCOL=version=2']);
    assert.equal(traced.code, 0);
    assert.equal(traced.stderr, '');
    assert.match(traced.stdout, /^000eversion 2\n/);
    // no session is left counted
    await sessionsEnded();
  });

  test('unknown, expired, signing-only keys are refused at login; a blocked user is told', async () => {
    const unknown = clientKey(scope);
    const denied = await ssh(port, unknown.file);
    assert.equal(denied.code, 255);
    assert.match(denied.stderr, /Permission denied \(publickey\)/);

    const expiredKey = clientKey(scope);
    await insertKey(s.c, expiredKey, { user: owner, expires_at: '2020-01-01T00:00:00.000Z' });
    assert.match((await ssh(port, expiredKey.file)).stderr, /Permission denied \(publickey\)/);
    const clone = await sshGit(tmp(), port, expiredKey.file, ['clone', sshUrl(full), 'x']);
    assert.notEqual(clone.code, 0);
    assert.match(clone.stderr, /Permission denied \(publickey\)/);

    const signing = clientKey(scope);
    await insertKey(s.c, signing, { user: owner, usage_type: 'signing' });
    assert.match((await ssh(port, signing.file)).stderr, /Permission denied \(publickey\)/);

    // ECDSA and RSA keys log in too (RSA with rsa-sha2 signatures)
    const ecdsa = clientKey(scope, 'ecdsa', 256);
    await insertKey(s.c, ecdsa, { user: owner });
    assert.deepEqual(await ssh(port, ecdsa.file), { code: 0, stdout: `Welcome to Hearth, @${owner.username}!\n`, stderr: '' });
    // key restrictions of today apply to keys added before: RSA forbidden
    const rsa = clientKey(scope, 'rsa', 2048);
    await insertKey(s.c, rsa, { user: owner });
    assert.equal((await ssh(port, rsa.file)).code, 0);
    await s.c.settings.save({ rsa_key_restriction: -1 });
    assert.match((await ssh(port, rsa.file)).stderr, /Permission denied \(publickey\)/);
    await s.c.settings.save({ rsa_key_restriction: 0 });

    const blocked = await s.seed.user({ state: 'blocked' });
    const blockedKey = clientKey(scope);
    await insertKey(s.c, blockedKey, { user: blocked });
    assert.deepEqual(await ssh(port, blockedKey.file), { code: 1, stdout: '', stderr: box('ERROR: Your account has been blocked.') });
    const deactivated = await s.seed.user({ state: 'deactivated' });
    const deactivatedKey = clientKey(scope);
    await insertKey(s.c, deactivatedKey, { user: deactivated });
    const r = await ssh(port, deactivatedKey.file, ['git-upload-pack', `'${full}'`]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /ERROR: Your account has been deactivated by your administrator/);
  });

  test("a private project is invisible to another user's key; a Developer's push to a protected branch gets HTTP's message", async () => {
    const stranger = await s.seed.user();
    const strangerKey = clientKey(scope);
    await insertKey(s.c, strangerKey, { user: stranger });
    const work = tmp();
    const r = await sshGit(work, port, strangerKey.file, ['clone', sshUrl(full), 'x']);
    assert.notEqual(r.code, 0);
    assert.ok(r.stderr.includes(box(NOT_FOUND)), r.stderr);
    assert.match(r.stderr, /fatal: Could not read from remote repository/);

    // a Developer: fetches, may not push the protected default branch, over SSH as over HTTP
    const developer = await s.seed.user({ password: 'dev-pass-123' });
    await s.seed.member({ project }, developer, 30);
    const devKey = clientKey(scope);
    await insertKey(s.c, devKey, { user: developer });
    const d = tmp();
    assert.equal((await sshGit(d, port, devKey.file, ['clone', '-q', sshUrl(full), 'd'])).code, 0);
    const dw = new WorkTree(path.join(d, 'd'));
    dw.write('dev.txt', 'dev\n').commit('Developer change');
    const before = bareGit(bare, ['rev-parse', 'main']).trim();
    const overSsh = await sshGit(dw.dir, port, devKey.file, ['push', 'origin', 'main']);
    assert.notEqual(overSsh.code, 0);
    const overHttp = await sshGit(dw.dir, port, devKey.file, ['push', cloneUrl(s.base, full, developer.username, 'dev-pass-123'), 'main']);
    assert.notEqual(overHttp.code, 0);
    const remoteLines = (out: string) => out.split('\n').filter((l) => /^(remote: |error: | ! )/.test(l) && !/failed to push/.test(l));
    assert.deepEqual(remoteLines(overSsh.stderr), remoteLines(overHttp.stderr));
    assert.match(overSsh.stderr, /You are not allowed to push code to protected branches on this project\./);
    assert.equal(bareGit(bare, ['rev-parse', 'main']).trim(), before);
    // other branches are the Developer's to push
    const topic = await sshGit(dw.dir, port, devKey.file, ['push', '-q', 'origin', 'main:dev-topic']);
    assert.equal(topic.code, 0, topic.stderr);
    const evs = await pushEvents(s.c);
    assert.equal(evs.filter((e: any) => e.ref === 'refs/heads/dev-topic')[0].user_id, developer.id);
  });

  test('deploy keys: read-only keys clone and fetch, can_push keys push (not to protected branches), only on their projects', async () => {
    const reader = clientKey(scope);
    const writer = clientKey(scope);
    const creator = await s.seed.user();
    await s.seed.member({ project }, creator, 40);
    const readRow = await insertKey(s.c, reader, { type: 'deploy', user: creator, title: 'reader' });
    const writeRow = await insertKey(s.c, writer, { type: 'deploy', user: creator, title: 'writer' });
    // not enabled on the project yet: not found
    const none = await sshGit(tmp(), port, reader.file, ['clone', sshUrl(full), 'x']);
    assert.ok(none.stderr.includes(box(NOT_FOUND)), none.stderr);
    await enableDeployKey(s.c, readRow, project.id, false);
    await enableDeployKey(s.c, writeRow, project.id, true);
    assert.deepEqual(await ssh(port, reader.file), { code: 0, stdout: 'Welcome to Hearth, Anonymous!\n', stderr: '' });

    const work = tmp();
    const cloned = await sshGit(work, port, reader.file, ['clone', '-q', sshUrl(full), 'r']);
    assert.equal(cloned.code, 0, cloned.stderr);
    const rw = new WorkTree(path.join(work, 'r'));
    rw.write('deploy.txt', 'x\n').commit('from a deploy key');
    const ro = await sshGit(rw.dir, port, reader.file, ['push', 'origin', 'HEAD:refs/heads/deploy-ro']);
    assert.notEqual(ro.code, 0);
    assert.ok(ro.stderr.includes(box('ERROR: This deploy key does not have write access to this project.')), ro.stderr);
    assert.equal(bareGit(bare, ['for-each-ref', 'refs/heads/deploy-ro']), '');

    // can_push: an unprotected branch, attributed to the key's user; not the protected default branch
    const pushed = await sshGit(rw.dir, port, writer.file, ['push', '-q', 'origin', 'HEAD:refs/heads/deploy-rw']);
    assert.equal(pushed.code, 0, pushed.stderr);
    const ev = (await pushEvents(s.c)).find((e: any) => e.ref === 'refs/heads/deploy-rw');
    assert.equal(ev.user_id, creator.id);
    const main = await sshGit(rw.dir, port, writer.file, ['push', 'origin', 'HEAD:main']);
    assert.notEqual(main.code, 0);
    assert.match(main.stderr, /You are not allowed to push code to protected branches on this project\./);
    // a protected tag is refused to a deploy key as well
    await s.c.db.kysely
      .insertInto('protected_tags')
      .values({ project_id: project.id, name: 'release-*', created_at: new Date().toISOString(), updated_at: new Date().toISOString() })
      .execute();
    rw.git(['tag', 'release-1']);
    const tag = await sshGit(rw.dir, port, writer.file, ['push', 'origin', 'release-1']);
    assert.notEqual(tag.code, 0);
    assert.match(tag.stderr, /You are not allowed to create this tag as it is protected\./);
    assert.equal(bareGit(bare, ['for-each-ref', 'refs/tags/release-1']), '');

    // another project, private: the key sees nothing there
    const { project: other } = await s.seed.repoProject({ owner, namespace: ns });
    const elsewhere = await sshGit(tmp(), port, writer.file, ['clone', sshUrl(`${ns.full_path}/${other.path}`), 'x']);
    assert.ok(elsewhere.stderr.includes(box(NOT_FOUND)), elsewhere.stderr);
    // archived: fetch yes, push no
    await s.c.db.kysely.updateTable('projects').set({ archived: 1 }).where('id', '=', project.id).execute();
    const arch = await sshGit(rw.dir, port, writer.file, ['push', 'origin', 'HEAD:refs/heads/deploy-arch']);
    assert.ok(arch.stderr.includes(box('ERROR: You are not allowed to push code to an archived project.')), arch.stderr);
    assert.equal((await sshGit(rw.dir, port, reader.file, ['fetch', '-q', 'origin'])).code, 0);
    await s.c.db.kysely.updateTable('projects').set({ archived: 0 }).where('id', '=', project.id).execute();
  });

  test('a renamed project answers at its old path; a client gone mid-push moves no ref', async () => {
    const renamed = await s.app.inject({ method: 'PUT', url: `/api/v4/projects/${project.id}`, headers: s.root, payload: { path: `${project.path}-new` } });
    assert.equal(renamed.statusCode, 200, renamed.body);
    const work = tmp();
    const cloned = await sshGit(work, port, ownerKey.file, ['clone', '-q', sshUrl(full), 'old']);
    assert.equal(cloned.code, 0, cloned.stderr);
    assert.ok(fs.existsSync(path.join(work, 'old', 'README.md')));
    const newFull = `${ns.full_path}/${project.path}-new`;

    // a push whose pack never arrives whole: the client is killed after the commands and half a pack
    const refsBefore = bareGit(bare, ['for-each-ref']);
    const eventsBefore = (await pushEvents(s.c)).length;
    const head = bareGit(bare, ['rev-parse', 'main']).trim();
    const pkt = (line: string) => (line.length + 4).toString(16).padStart(4, '0') + line;
    const child = spawn('ssh', [...sshArgs(port, ownerKey.file), 'git@127.0.0.1', `git-receive-pack '${newFull}.git'`], {
      env: fixtureEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const advertised = new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    await advertised;
    const header = Buffer.alloc(12);
    header.write('PACK', 0);
    header.writeUInt32BE(2, 4);
    header.writeUInt32BE(3, 8);
    child.stdin.write(`${pkt(`${head} ${'1'.repeat(40)} refs/heads/main\0report-status\n`)}0000`);
    child.stdin.write(Buffer.concat([header, Buffer.from([0x95, 0x0a, 0x78, 0x9c])]));
    await new Promise((r) => setTimeout(r, 200));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('close', r));
    // the server's receive-pack has ended: only then can nothing have moved for good
    await sessionsEnded();
    assert.equal(bareGit(bare, ['for-each-ref']), refsBefore);
    assert.equal((await pushEvents(s.c)).length, eventsBefore);
  });

  test("pushes over SSH get git's object checks and the path component limit as over HTTP; nothing moves", async () => {
    const work = tmp();
    assert.equal((await sshGit(work, port, ownerKey.file, ['clone', '-q', sshUrl(full), 'o'])).code, 0);
    const w = new WorkTree(path.join(work, 'o'));
    const base = w.write('base.txt', 'base\n').commit('Base');
    const file = w.git(['hash-object', '-w', '--stdin'], {}, 'x\n');
    const bad = (entry: string) => {
      const tree = w.git(['mktree'], {}, `${entry}\n`);
      return w.git(['commit-tree', tree, '-p', base, '-m', 'bad'], {
        GIT_AUTHOR_NAME: 'A',
        GIT_AUTHOR_EMAIL: 'a@x',
        GIT_COMMITTER_NAME: 'A',
        GIT_COMMITTER_EMAIL: 'a@x',
      });
    };
    const dotGit = w.git(['mktree'], {}, `100644 blob ${file}\tconfig\n`);
    const before = bareGit(bare, ['for-each-ref']);
    for (const [commit, said] of [
      [bad(`040000 tree ${dotGit}\t.GIT`), /remote: error: object [0-9a-f]+: hasDotgit: contains '\.git'/],
      [bad(`100644 blob ${file}\t${'b'.repeat(256)}`), /remote: path component longer than 255 bytes: 'b{40}…' \(256 bytes\)/],
    ] as const) {
      const r = await sshGit(w.dir, port, ownerKey.file, ['push', 'origin', `${commit}:refs/heads/ssh-checked`]);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, said);
      assert.match(r.stderr, /\[remote rejected\] [0-9a-f]+ -> ssh-checked/);
    }
    assert.equal(bareGit(bare, ['for-each-ref']), before);
    assert.deepEqual(await s.c.db.kysely.selectFrom('pending_pushes').selectAll().execute(), []);
  });
});
