// The git layer against real repositories: cat-file pool, refs cache, commit builder, storages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { buildTestApp } from '../helpers/build-app.ts';
import { bareGit, workTree } from '../helpers/git.ts';
import { commitFiles, CommitActionError } from '../../src/git/commit-builder.ts';
import { git, userArg, UnsafeArgument, isSafePath } from '../../src/git/command.ts';
import { isValidRefName, isValidRevision } from '../../src/git/refs.ts';
import { RepositoryStore } from '../../src/git/storage.ts';

test('reads commits, trees and refs of a pushed repository through the cat-file pool', async (t) => {
  const { c, seed } = await buildTestApp(t);
  const { project, dir } = await seed.repoProject();
  assert.ok(dir.endsWith(RepositoryStore.diskPath(project.id)));
  const repo = c.repos.repository(project);
  assert.equal(await repo.isEmpty(), true);
  assert.equal(repo.isEmptySync(), true);

  const wt = workTree(t, dir);
  wt.write('README.md', '# hi\n').write('src/a.txt', 'a\n').write('src/b.sh', '#!/bin/sh\n', 0o755);
  const first = wt.commit('First commit\n\nBody line\n\nChangelog: added');
  wt.tag('v1.0.0', 'release 1');
  wt.push();

  assert.equal(repo.isEmptySync(), false);
  const refs = await repo.refs();
  assert.deepEqual(
    refs.map((r) => [r.name, r.kind, r.commit]),
    [
      ['refs/heads/main', 'branch', first],
      ['refs/tags/v1.0.0', 'tag', first],
    ],
  );
  assert.equal(refs[1].tag?.message, 'release 1\n');

  const commit = await repo.commit(first);
  assert.equal(commit?.message, 'First commit\n\nBody line\n\nChangelog: added\n');
  assert.deepEqual(commit?.parents, []);
  assert.equal(commit?.author.email, 'ada@example.com');

  const root = await repo.tree(first, '');
  assert.deepEqual(
    root?.map((e) => [e.mode, e.type, e.name]),
    [
      ['100644', 'blob', 'README.md'],
      ['040000', 'tree', 'src'],
    ],
  );
  const src = await repo.tree(first, 'src');
  assert.deepEqual(
    src?.map((e) => [e.mode, e.name]),
    [
      ['100644', 'a.txt'],
      ['100755', 'b.sh'],
    ],
  );
  assert.equal(src?.[0].sha, bareGit(dir, ['rev-parse', `${first}:src/a.txt`]).trim());
  assert.equal(await repo.tree(first, 'missing'), null);
  assert.equal(await repo.resolveCommit('main'), first);
  assert.equal(await repo.resolveCommit('v1.0.0'), first);
  assert.equal(await repo.resolveCommit('nope'), null);
  assert.equal(await repo.resolveCommit('--all'), null);
  assert.equal(await repo.resolveCommit('main:README.md'), null);

  // concurrent reads share one process and answer in order
  const many = await Promise.all(Array.from({ length: 50 }, (_, i) => repo.read(i % 2 ? `${first}:README.md` : `${first}:src/a.txt`)));
  assert.deepEqual(
    many.slice(0, 2).map((o) => o!.content!.toString()),
    ['a\n', '# hi\n'],
  );

  // a new commit through the builder moves the branch (compare-and-swap) and invalidates the refs cache
  const second = await commitFiles(repo, {
    branch: 'main',
    parent: first,
    actions: [
      { action: 'update', file_path: 'README.md', content: Buffer.from('# changed\n') },
      { action: 'delete', file_path: 'src/a.txt' },
      { action: 'create', file_path: 'docs/new.md', content: Buffer.from('new\n') },
    ],
    message: 'Second',
    author: { name: 'Bob', email: 'bob@example.com', time: 1_700_100_000 },
  });
  assert.equal((await repo.branch('main'))?.commit, second);
  assert.equal(bareGit(dir, ['show', `${second}:README.md`]), '# changed\n');
  assert.equal(bareGit(dir, ['ls-tree', '-r', '--name-only', second]), 'README.md\ndocs/new.md\nsrc/b.sh\n');
  assert.equal(bareGit(dir, ['log', '-1', '--format=%an <%ae> %at %s', second]), 'Bob <bob@example.com> 1700100000 Second\n');

  await assert.rejects(
    commitFiles(repo, {
      branch: 'main',
      parent: second,
      actions: [{ action: 'create', file_path: 'README.md', content: Buffer.from('x') }],
      message: 'x',
      author: { name: 'B', email: 'b@x' },
    }),
    (e: Error) => e instanceof CommitActionError && e.message === 'A file with this name already exists',
  );
  // a path below an existing file would replace the file: refused
  await assert.rejects(
    commitFiles(repo, {
      branch: 'main',
      parent: second,
      actions: [{ action: 'create', file_path: 'README.md/inside', content: Buffer.from('x') }],
      message: 'x',
      author: { name: 'B', email: 'b@x' },
    }),
    (e: Error) => e instanceof CommitActionError && e.message === 'A file with this name already exists',
  );
  // a stale parent is refused by update-ref and the branch stays
  await assert.rejects(commitFiles(repo, { branch: 'main', parent: first, actions: [], message: 'stale', author: { name: 'B', email: 'b@x' } }));
  assert.equal((await repo.branch('main'))?.commit, second);
  assert.deepEqual(
    fs.readdirSync(dir).filter((f) => f.startsWith('hearth-index') || f.startsWith('hearth-objects')),
    [],
  );
});

test('names resolve from the cached refs as git resolves them, and follow ref changes', async (t) => {
  const { c, seed } = await buildTestApp(t);
  const { project, dir } = await seed.repoProject();
  const wt = workTree(t, dir);
  const one = wt.write('a', '1').commit('one');
  const two = wt.write('a', '2').commit('two');
  wt.push();
  bareGit(dir, ['branch', 'same', one]);
  bareGit(dir, ['tag', 'same', two]); // a tag and a branch of one name: git takes the tag
  bareGit(dir, ['branch', 'heads/main', one]); // "heads/main" is refs/heads/main to git, before refs/heads/heads/main
  const repo = c.repos.repository(project);
  repo.touchRefs();
  for (const rev of ['main', 'same', 'heads/main', 'tags/same', 'refs/heads/same', 'HEAD', one.slice(0, 10)]) {
    assert.equal(await repo.resolveCommit(rev), bareGit(dir, ['rev-parse', `${rev}^{commit}`]).trim(), rev);
  }
  assert.equal((await repo.branch('same'))?.commit, one);
  assert.equal((await repo.tag('same'))?.commit, two);
  // a ref update through the repository is seen at once
  await repo.updateRef('refs/heads/main', one, two);
  assert.equal(await repo.resolveCommit('main'), one);
  // objects named by a full SHA are cached, names are not: a deleted tag is gone
  assert.equal((await repo.read(`${two}:a`))?.content?.toString(), '2');
  await repo.deleteRef('refs/tags/same');
  assert.equal(await repo.resolveCommit('same'), one);
});

test('the cat-file pool restarts a process that died', async (t) => {
  const { c, seed } = await buildTestApp(t);
  const { project, dir } = await seed.repoProject();
  const wt = workTree(t, dir);
  const sha = wt.write('a', 'a').commit('one');
  wt.push();
  const repo = c.repos.repository(project);
  assert.equal((await repo.read(sha))?.type, 'commit');
  c.repos.pool.drop(dir);
  assert.equal((await repo.read(`${sha}:a`))?.content?.toString(), 'a');
});

test('user values never become git options; ref and path rules', async () => {
  assert.throws(() => userArg('--upload-pack=evil'), UnsafeArgument);
  assert.throws(() => userArg('a\nb'), UnsafeArgument);
  assert.equal(userArg('main'), 'main');
  for (const bad of ['', '-x', 'a..b', 'a b', 'a:b', 'a~1', 'a^', 'a/', '/a', 'a.lock', 'a//b', '@{u}', 'HEAD', '.hidden', 'a/.b', 'x\x00'])
    assert.equal(isValidRefName(bad), false, bad);
  for (const ok of ['main', 'feature/x', 'v1.0.0', 'release-1.2', 'ü']) assert.equal(isValidRefName(ok), true, ok);
  assert.equal(isValidRevision('abc123'), true);
  assert.equal(isValidRevision('HEAD'), true);
  for (const bad of ['../x', 'a/../b', '/etc/passwd', '-rf', 'a//b', '.git/config', '', 'a\nb', 'a\rb']) assert.equal(isSafePath(bad), false, bad);
  assert.equal(isSafePath('src/a.txt'), true);
  await assert.rejects(git(['rev-parse', '--verify', 'nothing'], { gitDir: '/nonexistent' }));
});
