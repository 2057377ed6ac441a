// What a repository takes in: pushes (smart HTTP, SSH) run git's own object checks (receive.fsckObjects
// with Gitaly's relaxed message ids) and a limit on path components; the commits and files APIs check
// the same before any ref moves. Old-style objects that clone fine stay pushable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, cloneUrl, type TestServer } from '../helpers/server.ts';
import { bareGit, WorkTree, runGit as git, tmpDir as tmp, workTree } from '../helpers/git.ts';
import { ROOT_TOKEN } from '../helpers/build-app.ts';

const root = { 'private-token': ROOT_TOKEN };
const LONG = 'a'.repeat(300);

/** A project with one commit on main, its owner (password "secret-pass-1") and a clone of it. */
async function setup(t: Parameters<typeof startTestServer>[0]) {
  const s = await startTestServer(t);
  const owner = await s.seed.user({ password: 'secret-pass-1' });
  const ns = await s.seed.namespaceOf(owner);
  const { project, dir: bare } = await s.seed.repoProject({ owner, namespace: ns });
  await s.seed.member({ project }, owner, 50);
  const url = cloneUrl(s.base, `${ns.full_path}/${project.path}`, owner.username, 'secret-pass-1');
  const work = tmp(t);
  await git(work, ['clone', '-q', url, 'w']);
  const w = new WorkTree(path.join(work, 'w'));
  w.git(['checkout', '-q', '-b', 'main']);
  const first = w.write('README.md', '# hello\n').commit('First');
  await git(w.dir, ['push', '-q', 'origin', 'main']);
  return { s, owner, project, bare, w, first };
}

/** A commit on top of `parent` whose root tree has `entries` besides README.md (written with plumbing: git add refuses them). */
function plumbingCommit(w: WorkTree, parent: string, entries: { mode: string; type: 'blob' | 'tree'; name: string; sha: string }[]): string {
  const readme = w.git(['rev-parse', `${parent}:README.md`]);
  const lines = [`100644 blob ${readme}\tREADME.md`, ...entries.map((e) => `${e.mode} ${e.type} ${e.sha}\t${e.name}`)];
  const tree = w.git(['mktree'], {}, lines.join('\n') + '\n');
  const env = { GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@x', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@x' };
  return w.git(['commit-tree', tree, '-p', parent, '-m', 'bad'], env);
}

function blob(w: WorkTree, content: string): string {
  return w.git(['hash-object', '-w', '--stdin'], {}, content);
}

/** A tree holding one file `config`. */
function dirTree(w: WorkTree): string {
  return w.git(['mktree'], {}, `100644 blob ${blob(w, '[core]\n\tbare = false\n')}\tconfig\n`);
}

const refs = (bare: string) => bareGit(bare, ['for-each-ref', '--format=%(refname) %(objectname)']);
const pending = (s: TestServer) => s.c.db.kysely.selectFrom('pending_pushes').selectAll().execute();

const BAD_GITMODULES = '[submodule "x"]\n\tpath = x\n\turl = --upload-pack=touch /tmp/pwned\n';

test('pushes over smart HTTP of .GIT, git~1, .git., a .gitmodules with an option as url and a 300-byte name are refused; refs and the journal stay as they were', async (t) => {
  const { s, bare, w, first } = await setup(t);
  const before = refs(bare);
  const cases: { name: string; entry: () => { mode: string; type: 'blob' | 'tree'; name: string; sha: string }; said: RegExp }[] = [
    { name: '.GIT', entry: () => ({ mode: '040000', type: 'tree', name: '.GIT', sha: dirTree(w) }), said: /hasDotgit: contains '\.git'/ },
    { name: 'git~1', entry: () => ({ mode: '040000', type: 'tree', name: 'git~1', sha: dirTree(w) }), said: /hasDotgit: contains '\.git'/ },
    { name: '.git.', entry: () => ({ mode: '040000', type: 'tree', name: '.git.', sha: dirTree(w) }), said: /hasDotgit: contains '\.git'/ },
    {
      name: '.gitmodules',
      entry: () => ({ mode: '100644', type: 'blob', name: '.gitmodules', sha: blob(w, BAD_GITMODULES) }),
      said: /gitmodulesUrl: disallowed submodule url: --upload-pack=touch \/tmp\/pwned/,
    },
    {
      name: '300 bytes',
      entry: () => ({ mode: '100644', type: 'blob', name: LONG, sha: blob(w, 'x\n') }),
      said: new RegExp(`remote: path component longer than 255 bytes: '${'a'.repeat(40)}…' \\(300 bytes\\)`),
    },
  ];
  for (const c of cases) {
    const bad = plumbingCommit(w, first, [c.entry()]);
    await assert.rejects(git(w.dir, ['push', 'origin', `${bad}:refs/heads/main`]), (e: Error) => {
      assert.match(e.message, c.said, c.name);
      assert.match(e.message, /\[remote rejected\] .*-> main/, c.name);
      return true;
    });
    // a new branch is refused as well
    await assert.rejects(git(w.dir, ['push', 'origin', `${bad}:refs/heads/other`]), c.said);
    assert.equal(refs(bare), before, c.name);
    assert.deepEqual(await pending(s), [], c.name);
  }
  // the same repository takes a good push afterwards
  w.git(['reset', '-q', '--hard', first]);
  const good = w.write('ok.txt', 'ok\n').commit('Good');
  await git(w.dir, ['push', '-q', 'origin', 'main']);
  assert.equal(bareGit(bare, ['rev-parse', 'refs/heads/main']).trim(), good);
  assert.deepEqual(await pending(s), []);
});

test('old-style objects that clone fine (bad time zone, no space before the date, zero-padded file modes) are still pushable', async (t) => {
  const { bare, w, first } = await setup(t);
  const readme = w.git(['rev-parse', `${first}:README.md`]);
  // a zero-padded mode ("040000" written as "040000" is git's own; "0100644" is the old padding)
  const inner = w.git(
    ['hash-object', '-t', 'tree', '-w', '--literally', '--stdin'],
    {},
    Buffer.concat([Buffer.from('0100644 f\0'), Buffer.from(readme, 'hex')]),
  );
  const tree = w.git(['mktree'], {}, `100644 blob ${readme}\tREADME.md\n040000 tree ${inner}\told\n`);
  const raw = [
    `tree ${tree}`,
    `parent ${first}`,
    'author Old Tool <old@example.com>1700000000 +0000',
    'committer Old Tool <old@example.com> 1700000000 +99999',
    '',
    'Written by an old tool',
    '',
  ].join('\n');
  const commit = w.git(['hash-object', '-t', 'commit', '-w', '--literally', '--stdin'], {}, raw);
  // git itself finds these objects wrong, but only what Gitaly ignores
  const fsck = await git(w.dir, ['fsck', '--strict', '--no-dangling']).catch((e: Error) => ({ stderr: e.message }));
  assert.match(fsck.stderr, /zeroPaddedFilemode|badTimezone|missingSpaceBeforeDate/);
  await git(w.dir, ['push', '-q', 'origin', `${commit}:refs/heads/main`]);
  assert.equal(bareGit(bare, ['rev-parse', 'refs/heads/main']).trim(), commit);
});

test('the commits API and the files API refuse the same paths and contents with a 400 before any ref moves', async (t) => {
  const { s, project, bare } = await setup(t);
  const before = refs(bare);
  const commit = (file_path: string, content = 'x\n') =>
    s.app.inject({
      method: 'POST',
      url: `/api/v4/projects/${project.id}/repository/commits`,
      headers: root,
      payload: { branch: 'main', commit_message: 'c', actions: [{ action: 'create', file_path, content }] },
    });
  const file = (file_path: string, content = 'x\n') =>
    s.app.inject({
      method: 'POST',
      url: `/api/v4/projects/${project.id}/repository/files/${encodeURIComponent(file_path)}`,
      headers: root,
      payload: { branch: 'main', commit_message: 'c', content },
    });
  for (const p of ['.GIT/config', 'git~1/config', '.git./config', '.git /config', 'a/.Git', 'a/\u200c.git/x', 'GIT~1', `dir/${LONG}`, `${LONG}/x`]) {
    for (const send of [commit, file]) {
      const res = await send(p);
      assert.equal(res.statusCode, 400, `${p}: ${res.body}`);
      assert.deepEqual(res.json(), { message: `invalid path: '${p}'` });
    }
  }
  const message = { message: 'gitmodulesUrl: disallowed submodule url: --upload-pack=touch /tmp/pwned' };
  for (const send of [commit, file]) {
    for (const p of ['.gitmodules', 'sub/.gitmodules']) {
      const res = await send(p, BAD_GITMODULES);
      assert.equal(res.statusCode, 400, res.body);
      assert.deepEqual(res.json(), message);
    }
  }
  // a move onto a bad name, and an update of .gitmodules with a bad url
  const created = await commit('.gitmodules', '[submodule "x"]\n\tpath = x\n\turl = https://example.com/x.git\n');
  assert.equal(created.statusCode, 201, created.body);
  const after = refs(bare);
  const moved = await s.app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/repository/commits`,
    headers: root,
    payload: { branch: 'main', commit_message: 'm', actions: [{ action: 'move', previous_path: 'README.md', file_path: '.GIT' }] },
  });
  assert.equal(moved.statusCode, 400);
  assert.deepEqual(moved.json(), { message: "invalid path: '.GIT'" });
  const updated = await s.app.inject({
    method: 'PUT',
    url: `/api/v4/projects/${project.id}/repository/files/.gitmodules`,
    headers: root,
    payload: { branch: 'main', commit_message: 'u', content: BAD_GITMODULES },
  });
  assert.equal(updated.statusCode, 400);
  assert.deepEqual(updated.json(), message);
  assert.equal(refs(bare), after);
  assert.notEqual(after, before);
  assert.deepEqual(await pending(s), []);
  // no leftovers of the checks in the repository (they are removed behind the answer: given a second)
  const leftovers = () => fs.readdirSync(path.join(bare, 'objects')).filter((n) => n.startsWith('incoming-'));
  for (let i = 0; i < 100 && leftovers().length; i++) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(leftovers(), []);
});

test('a repository with a long name from before: a push that removes it is accepted (the thin pack may carry the old tree)', async (t) => {
  const { s, project, bare } = await setup(t);
  // written straight to the disk, as before the checks (the index takes the name, no file system does)
  const direct = workTree(t, bare);
  for (let i = 0; i < 60; i++) direct.write(`file-${i}.txt`, `line ${i}\n`.repeat(20));
  direct.git(['add', '-A']);
  direct.git(['update-index', '--add', '--cacheinfo', `100644,${blob(direct, 'long\n')},${LONG}`]);
  direct.git(['commit', '-q', '-m', 'Many files and a long name']);
  direct.push('main');
  const ns = await s.c.db.kysely.selectFrom('namespaces').select('full_path').where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
  const work = tmp(t);
  await git(work, ['clone', '-q', '--no-checkout', cloneUrl(s.base, `${ns.full_path}/${project.path}`, 'root', ROOT_TOKEN), 'c']);
  const w = new WorkTree(path.join(work, 'c'));
  w.git(['reset', '-q']);
  w.git(['rm', '-q', '--cached', '--', LONG]);
  w.git(['update-index', '--cacheinfo', `100644,${blob(w, 'changed\n')},file-1.txt`]);
  // over receive.unpackLimit (100 objects): index-pack keeps the pack, and completes a thin one with its bases
  for (let i = 0; i < 110; i++) w.git(['update-index', '--add', '--cacheinfo', `100644,${blob(w, `more ${i}\n`)},more/${i}.txt`]);
  w.git(['commit', '-q', '-m', 'Remove the long name'], { GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@x', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@x' });
  const fixed = w.git(['rev-parse', 'HEAD']);
  const pushed = await git(w.dir, ['push', '--thin', 'origin', 'main']);
  assert.match(pushed.stderr, /main -> main/);
  assert.equal(bareGit(bare, ['rev-parse', 'refs/heads/main']).trim(), fixed);
});
