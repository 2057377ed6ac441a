// git clone / fetch / push against a running server: every auth variant, the denials, protected
// branches, protocol v2, gzip bodies, and the events a push writes to the outbox.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { startTestServer, cloneUrl } from '../helpers/server.ts';
import { AUTHOR, bareGit, WorkTree, pushEvents, runGit as git, tmpDir as tmp } from '../helpers/git.ts';
import { ZERO_SHA } from '../../src/git/refs.ts';

test('clone an empty repository, push branches and tags with a password, and the events are in the outbox', async (t) => {
  const { c, seed, base } = await startTestServer(t);
  const owner = await seed.user({ password: 'secret-pass-1' });
  const ns = await seed.namespaceOf(owner);
  const { project, dir: bare } = await seed.repoProject({ owner, namespace: ns });
  await seed.member({ project }, owner, 50);
  const url = cloneUrl(base, `${ns.full_path}/${project.path}`, owner.username, 'secret-pass-1');

  const work = tmp(t);
  const cloned = await git(work, ['clone', url, 'w']);
  assert.match(cloned.stderr, /You appear to have cloned an empty repository/);
  const w = new WorkTree(path.join(work, 'w'));
  w.git(['checkout', '-q', '-b', 'main']);
  const first = w.write('README.md', '# hello\n').commit('First');
  w.git(['tag', '-a', 'v1.0.0', '-m', 'one'], { GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@x' });
  w.checkout('feature', true);
  const feat = w.write('f.txt', 'f\n').commit('Feature');
  await git(w.dir, ['push', '-q', 'origin', 'main', 'feature', 'v1.0.0']);

  assert.equal(bareGit(bare, ['rev-parse', 'refs/heads/main']).trim(), first);
  assert.equal(bareGit(bare, ['rev-parse', 'refs/heads/feature']).trim(), feat);
  const tagSha = bareGit(bare, ['rev-parse', 'refs/tags/v1.0.0']).trim();

  // one event per ref, in the order git sent the commands; repository_update last
  const key = (e: any) => String(e.ref ?? '\uffff');
  const byRef = (a: any, b: any) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
  const evs = (await pushEvents(c)).sort(byRef);
  assert.deepEqual(
    evs.map((e: any) => [e.event_name, e.ref ?? null]),
    [
      ['push', 'refs/heads/feature'],
      ['push', 'refs/heads/main'],
      ['tag_push', 'refs/tags/v1.0.0'],
      ['repository_update', null],
    ],
  );
  const push = evs[1];
  const web = `http://hearth.test/${ns.full_path}/${project.path}`;
  const ssh = `ssh://git@hearth.test:2222/${ns.full_path}/${project.path}.git`;
  assert.deepEqual(push, {
    object_kind: 'push',
    event_name: 'push',
    before: ZERO_SHA,
    after: first,
    ref: 'refs/heads/main',
    ref_protected: true,
    checkout_sha: first,
    message: null,
    user_id: owner.id,
    user_name: owner.name,
    user_username: owner.username,
    user_email: owner.email,
    user_avatar: null,
    project_id: project.id,
    project: {
      id: project.id,
      name: project.name,
      description: null,
      web_url: web,
      avatar_url: null,
      git_ssh_url: ssh,
      git_http_url: `${web}.git`,
      namespace: ns.name,
      visibility_level: 0,
      path_with_namespace: `${ns.full_path}/${project.path}`,
      default_branch: 'main',
      ci_config_path: null,
      homepage: web,
      url: ssh,
      ssh_url: ssh,
      http_url: `${web}.git`,
    },
    commits: [
      {
        id: first,
        message: 'First\n',
        title: 'First',
        timestamp: w.git(['show', '-s', '--format=%cI', first]),
        url: `${web}/-/commit/${first}`,
        author: { name: AUTHOR.name, email: AUTHOR.email },
        added: ['README.md'],
        modified: [],
        removed: [],
      },
    ],
    total_commits_count: 1,
    push_options: {},
    repository: { name: project.name, url: ssh, description: null, homepage: web, git_http_url: `${web}.git`, git_ssh_url: ssh, visibility_level: 0 },
  });
  assert.equal(evs[0].total_commits_count, 1); // the feature branch brings one commit beyond main
  assert.equal(evs[2].after, tagSha);
  assert.equal(evs[2].checkout_sha, first);
  assert.deepEqual(evs[3].changes.sort(byRef), [
    { before: ZERO_SHA, after: feat, ref: 'refs/heads/feature' },
    { before: ZERO_SHA, after: first, ref: 'refs/heads/main' },
    { before: ZERO_SHA, after: tagSha, ref: 'refs/tags/v1.0.0' },
  ]);
  assert.deepEqual(evs[3].refs.sort(), ['refs/heads/feature', 'refs/heads/main', 'refs/tags/v1.0.0']);

  // fetch with protocol v2 sees the new commit of another clone; deleting a branch is an event too
  const other = tmp(t);
  await git(other, ['-c', 'protocol.version=2', 'clone', '-q', url, 'o']);
  assert.equal(fs.readFileSync(path.join(other, 'o', 'README.md'), 'utf8'), '# hello\n');
  w.checkout('main');
  const second = w.write('README.md', '# hello again\n').commit('Second');
  await git(w.dir, ['push', '-q', 'origin', 'main', ':feature']);
  await git(path.join(other, 'o'), ['-c', 'protocol.version=2', 'fetch', '-q', 'origin']);
  assert.equal((await git(path.join(other, 'o'), ['rev-parse', 'origin/main'])).stdout.trim(), second);
  assert.equal(bareGit(bare, ['for-each-ref', '--format=%(refname)', 'refs/heads']), 'refs/heads/main\n');
  const last = (await pushEvents(c)).slice(4).sort(byRef);
  assert.deepEqual(
    last.map((e: any) => [e.event_name, e.before ?? null, e.after ?? null]),
    [
      ['push', feat, ZERO_SHA],
      ['push', first, second],
      ['repository_update', null, null],
    ],
  );
  assert.equal(last[1].total_commits_count, 1);
});

test('auth variants: tokens with any username, OAuth, anonymous public clone, and the denials', async (t) => {
  const { c, seed, base } = await startTestServer(t);
  const owner = await seed.user();
  const group = await seed.group();
  const pub = await seed.repoProject({ namespace: group, visibility: 'public' });
  const priv = await seed.repoProject({ namespace: group, visibility: 'private' });
  await seed.member({ group }, owner, 50);
  // one commit in each, pushed straight to disk
  for (const p of [pub, priv]) {
    const w = tmp(t);
    execFileSyncGit(w, ['init', '-q', '-b', 'main']);
    const wt = new WorkTree(w);
    wt.write('a.txt', 'a\n').commit('one');
    wt.git(['push', '-q', p.dir, 'main']);
    c.repos.repository(p.project).touchRefs();
  }
  const pubPath = `${group.full_path}/${pub.project.path}`;
  const privPath = `${group.full_path}/${priv.project.path}`;
  const readToken = (await seed.token(owner, { scopes: ['read_repository'] })).token;
  const writeToken = (await seed.token(owner, { scopes: ['write_repository'] })).token;
  const apiReadToken = (await seed.token(owner, { scopes: ['read_api'] })).token;

  const clone = async (url: string) => git(tmp(t), ['clone', '-q', url, 'c']);

  await clone(cloneUrl(base, pubPath)); // anonymous, public
  await clone(`${base}/${pubPath}`); // without .git
  await clone(cloneUrl(base, privPath, 'anything', readToken));
  await clone(cloneUrl(base, privPath, 'oauth2', writeToken));
  await assert.rejects(clone(cloneUrl(base, privPath)), /could not read Username|Authentication failed|terminal prompts disabled/);
  await assert.rejects(clone(cloneUrl(base, privPath, 'x', 'wrong-token')), /Authentication failed|HTTP Basic: Access denied/);
  await assert.rejects(clone(cloneUrl(base, privPath, owner.username, apiReadToken)), /HTTP Basic: Access denied|Authentication failed/);

  // the HTTP answers themselves
  const anon = await fetch(`${base}/${privPath}.git/info/refs?service=git-upload-pack`);
  assert.equal(anon.status, 401);
  assert.equal(anon.headers.get('www-authenticate'), 'Basic realm="Hearth"');
  assert.match(await anon.text(), /^HTTP Basic: Access denied/);
  const missingAnon = await fetch(`${base}/no/such.git/info/refs?service=git-upload-pack`);
  assert.equal(missingAnon.status, 401);
  const stranger = await seed.user();
  const strangerToken = (await seed.token(stranger, { scopes: ['read_repository'] })).token;
  const auth = (u: string, p: string) => ({ authorization: 'Basic ' + Buffer.from(`${u}:${p}`).toString('base64') });
  const hidden = await fetch(`${base}/${privPath}.git/info/refs?service=git-upload-pack`, { headers: auth('s', strangerToken) });
  assert.equal(hidden.status, 404);
  assert.equal(await hidden.text(), "The project you were looking for could not be found or you don't have permission to view it.\n");
  const pushAnon = await fetch(`${base}/${pubPath}.git/info/refs?service=git-receive-pack`);
  assert.equal(pushAnon.status, 401);
  const readOnly = await fetch(`${base}/${privPath}.git/info/refs?service=git-receive-pack`, { headers: auth('x', readToken) });
  assert.equal(readOnly.status, 403);
  assert.equal(await readOnly.text(), 'You are not allowed to push code to this project.\n');
  const ok = await fetch(`${base}/${privPath}.git/info/refs?service=git-upload-pack`, { headers: auth('x', readToken) });
  assert.equal(ok.status, 200);
  assert.equal(ok.headers.get('content-type'), 'application/x-git-upload-pack-advertisement');
  assert.equal(ok.headers.get('cache-control'), 'no-cache, max-age=0, must-revalidate');
  assert.match(await ok.text(), /^001e# service=git-upload-pack\n0000/);
  const dumb = await fetch(`${base}/${pubPath}.git/info/refs`);
  assert.equal(dumb.status, 403);
  const stray = await fetch(`${base}/api/v4/nothing-here`);
  assert.equal(stray.status, 404);
  assert.deepEqual(await stray.json(), { error: '404 Not Found' });

  // a gzip-compressed upload-pack request (git compresses large negotiations)
  const head = bareGit(pub.dir, ['rev-parse', 'main']).trim();
  const want = `0032want ${head}\n00000009done\n`;
  const res = await fetch(`${base}/${pubPath}.git/git-upload-pack`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-git-upload-pack-request', 'content-encoding': 'gzip' },
    body: zlib.gzipSync(want),
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'application/x-git-upload-pack-result');
  const pack = Buffer.from(await res.arrayBuffer());
  assert.equal(pack.subarray(0, 8).toString(), '0008NAK\n');
  assert.equal(pack.subarray(8, 12).toString(), 'PACK');
  const wrongType = await fetch(`${base}/${pubPath}.git/git-upload-pack`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal(wrongType.status, 415);
});

test('pushes: Developer on the protected default branch, force pushes, Reporter and archived projects are refused with clear messages', async (t) => {
  const { c, seed, base } = await startTestServer(t);
  const group = await seed.group();
  const { project, dir: bare } = await seed.repoProject({ namespace: group });
  const maintainer = await seed.user({ password: 'pass-maint-1' });
  const developer = await seed.user({ password: 'pass-dev-1' });
  const reporter = await seed.user({ password: 'pass-rep-1' });
  await seed.member({ project }, maintainer, 40);
  await seed.member({ project }, developer, 30);
  await seed.member({ project }, reporter, 20);
  const full = `${group.full_path}/${project.path}`;

  // a Developer may not make the first push of a protected default branch (developer_can_initial_push is false)
  const dev = tmp(t);
  await git(dev, ['clone', '-q', cloneUrl(base, full, developer.username, 'pass-dev-1'), 'd']);
  const dw = new WorkTree(path.join(dev, 'd'));
  dw.git(['checkout', '-q', '-b', 'main']);
  dw.write('a', '1').commit('one');
  await assert.rejects(git(dw.dir, ['push', 'origin', 'main']), /You are not allowed to push code to protected branches on this project\./);
  assert.equal(bareGit(bare, ['for-each-ref']), '');

  const m = tmp(t);
  await git(m, ['clone', '-q', cloneUrl(base, full, maintainer.username, 'pass-maint-1'), 'm']);
  const mw = new WorkTree(path.join(m, 'm'));
  mw.git(['config', 'user.name', 'M']);
  mw.git(['config', 'user.email', 'm@example.com']);
  mw.git(['checkout', '-q', '-b', 'main']);
  const one = mw.write('a', '1').commit('one');
  await git(mw.dir, ['push', '-q', 'origin', 'main']);

  // Developers push other branches, not the protected one
  await git(dw.dir, ['fetch', '-q', 'origin']);
  dw.git(['reset', '-q', '--hard', 'origin/main']);
  dw.write('b', '2').commit('two');
  await assert.rejects(git(dw.dir, ['push', 'origin', 'main']), /You are not allowed to push code to protected branches on this project\./);
  await git(dw.dir, ['push', '-q', 'origin', 'main:topic']);
  assert.equal(bareGit(bare, ['rev-parse', 'main']).trim(), one);

  // Maintainers may not force-push or delete the default branch
  mw.git(['commit', '-q', '--amend', '-m', 'rewritten']);
  await assert.rejects(git(mw.dir, ['push', '--force', 'origin', 'main']), /You are not allowed to force push code to a protected branch on this project\./);
  await assert.rejects(git(mw.dir, ['push', 'origin', ':main']), /The default branch of a project cannot be deleted\./);
  assert.equal(bareGit(bare, ['rev-parse', 'main']).trim(), one);
  // but may force-push an unprotected branch
  await git(mw.dir, ['push', '-q', '--force', 'origin', 'main:topic']);

  // Reporters may clone but not push
  const r = tmp(t);
  await git(r, ['clone', '-q', cloneUrl(base, full, reporter.username, 'pass-rep-1'), 'r']);
  await assert.rejects(git(path.join(r, 'r'), ['push', 'origin', 'main:x']), /You are not allowed to push code to this project\./);

  // archived projects take no pushes
  await c.db.kysely.updateTable('projects').set({ archived: 1 }).where('id', '=', project.id).execute();
  await assert.rejects(git(mw.dir, ['push', 'origin', 'main:y']), /You are not allowed to push code to an archived project\./);

  // only the accepted pushes made events
  const evs = await pushEvents(c);
  assert.deepEqual(
    evs.filter((e: any) => e.event_name === 'push').map((e: any) => e.ref),
    ['refs/heads/main', 'refs/heads/topic', 'refs/heads/topic'],
  );
});

function execFileSyncGit(cwd: string, args: string[]): void {
  new WorkTree(cwd).git(args);
}

test('the first branch pushed into an empty repository becomes the default branch when the configured one does not exist', async (t) => {
  const { app, c, seed, base, root } = await startTestServer(t);
  const owner = await seed.user({ password: 'secret-pass-2' });
  const ns = await seed.namespaceOf(owner);
  const { project, dir: bare } = await seed.repoProject({ owner, namespace: ns });
  await seed.member({ project }, owner, 50);
  const work = tmp(t);
  execFileSyncGit(work, ['init', '-q', '-b', 'master']);
  const w = new WorkTree(work);
  w.write('x', 'x').commit('x');
  await git(work, ['push', '-q', cloneUrl(base, `${ns.full_path}/${project.path}`, owner.username, 'secret-pass-2'), 'master']);
  assert.equal(bareGit(bare, ['symbolic-ref', 'HEAD']), 'refs/heads/master\n');
  const res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}`, headers: root });
  assert.equal(res.json().default_branch, 'master');
  assert.equal(res.json().empty_repo, false);
  const [push] = await pushEvents(c);
  assert.equal(push.project.default_branch, 'master');
  assert.equal(push.total_commits_count, 1);
});

test("pushes: an unset default_branch_protection_defaults is GitLab's full protection (Maintainers push the default branch, Developers other branches)", async (t) => {
  const { c, seed, base } = await startTestServer(t);
  await c.settings.save({ default_branch_protection_defaults: null });
  const { project, dir: bare } = await seed.repoProject();
  const maintainer = await seed.user({ password: 'pass-maint-1' });
  const developer = await seed.user({ password: 'pass-dev-1' });
  await seed.member({ project }, maintainer, 40);
  await seed.member({ project }, developer, 30);
  const ns = await c.db.kysely.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
  const full = `${ns.full_path}/${project.path}`;

  const m = tmp(t);
  await git(m, ['clone', '-q', cloneUrl(base, full, maintainer.username, 'pass-maint-1'), 'm']);
  const mw = new WorkTree(path.join(m, 'm'));
  mw.git(['checkout', '-q', '-b', 'main']);
  const one = mw.write('a', '1').commit('one');
  await git(mw.dir, ['push', '-q', 'origin', 'main']);
  assert.equal(bareGit(bare, ['rev-parse', 'main']).trim(), one);

  const d = tmp(t);
  await git(d, ['clone', '-q', cloneUrl(base, full, developer.username, 'pass-dev-1'), 'd']);
  const dw = new WorkTree(path.join(d, 'd'));
  dw.write('b', '2').commit('two');
  await assert.rejects(git(dw.dir, ['push', 'origin', 'main']), /You are not allowed to push code to protected branches on this project\./);
  await git(dw.dir, ['push', '-q', 'origin', 'main:topic']);
  assert.equal(bareGit(bare, ['rev-parse', 'main']).trim(), one);
  const evs = await pushEvents(c);
  assert.deepEqual(
    evs.filter((e: any) => e.event_name === 'push').map((e: any) => [e.ref, e.ref_protected]),
    [
      ['refs/heads/main', true],
      ['refs/heads/topic', false],
    ],
  );
});
