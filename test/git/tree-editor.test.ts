// The commit builder edits the parent's tree in memory along the changed paths: the same tree as git's
// index makes of the same actions, without reading, writing and listing an index of every file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildTestApp } from '../helpers/build-app.ts';
import { bareGit, fixtureEnv, workTree } from '../helpers/git.ts';
import { commitFiles, CommitActionError, type FileAction } from '../../src/git/commit-builder.ts';
import { gitCommands } from '../../src/metrics/registry.ts';

/** The tree git's index makes of `lines` (update-index --index-info) on top of `parent`'s tree. */
function indexTree(dir: string, parent: string, lines: string[]): string {
  const index = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-index-test-')), 'index');
  const env = fixtureEnv({ GIT_INDEX_FILE: index });
  const run = (args: string[], input?: string) =>
    execFileSync('git', ['--git-dir', dir, ...args], { env, input })
      .toString()
      .trim();
  run(['read-tree', `${parent}^{tree}`]);
  run(['update-index', '-z', '--index-info'], lines.join('\0') + '\0');
  const tree = run(['write-tree']);
  fs.rmSync(path.dirname(index), { recursive: true, force: true });
  return tree;
}

const blobOf = (dir: string, content: string) =>
  execFileSync('git', ['--git-dir', dir, 'hash-object', '--stdin'], { env: fixtureEnv(), input: content }).toString().trim();

/** git processes started so far, by command */
const started = async () => new Map((await gitCommands.get()).values.map((v) => [String(v.labels.command), v.value]));

test('a commit is the tree git would make of the same actions; only the trees along its paths are read, no index of the whole tree', async (t) => {
  const { c, seed } = await buildTestApp(t);
  const { project, dir } = await seed.repoProject();
  const repo = c.repos.repository(project);
  const wt = workTree(t, dir);
  for (let d = 0; d < 20; d++) for (let f = 0; f < 50; f++) wt.write(`dir${d}/sub/file${f}.txt`, `file ${d}/${f}\n`);
  wt.write('bin/run.sh', '#!/bin/sh\n', 0o755).write('lonely/only.txt', 'alone\n').write('README.md', '# r\n').write('a-b', 'dash\n').write('a/x', 'slash\n');
  const first = wt.commit('Many files');
  wt.push();

  const actions: FileAction[] = [
    { action: 'create', file_path: 'new/deep/path/file.txt', content: Buffer.from('new\n') },
    { action: 'update', file_path: 'dir3/sub/file7.txt', content: Buffer.from('changed\n') },
    // the last file of a directory: the directory goes
    { action: 'delete', file_path: 'lonely/only.txt' },
    { action: 'move', previous_path: 'dir4/sub/file1.txt', file_path: 'dir5/moved.txt' },
    { action: 'chmod', file_path: 'README.md', executable: true },
    { action: 'update', file_path: 'bin/run.sh', content: Buffer.from('#!/bin/sh\necho\n') },
    // a name that sorts between "a" the tree ("a/") and "a-b" the file
    { action: 'create', file_path: 'a.txt', content: Buffer.from('dot\n') },
    { action: 'create', file_path: 'a/y', content: Buffer.from('y\n') },
  ];
  const before = await started();
  const sha = await commitFiles(repo, {
    branch: 'main',
    parent: first,
    actions,
    message: 'Edit',
    author: { name: 'Bob', email: 'bob@example.com', time: 1_700_100_000 },
  });
  const after = await started();
  const ran = (command: string) => (after.get(command) ?? 0) - (before.get(command) ?? 0);

  const expected = indexTree(dir, first, [
    `100644 ${blobOf(dir, 'new\n')}\tnew/deep/path/file.txt`,
    `100644 ${blobOf(dir, 'changed\n')}\tdir3/sub/file7.txt`,
    `0 ${'0'.repeat(40)}\tlonely/only.txt`,
    `0 ${'0'.repeat(40)}\tdir4/sub/file1.txt`,
    `100644 ${bareGit(dir, ['rev-parse', `${first}:dir4/sub/file1.txt`]).trim()}\tdir5/moved.txt`,
    `100755 ${bareGit(dir, ['rev-parse', `${first}:README.md`]).trim()}\tREADME.md`,
    `100755 ${blobOf(dir, '#!/bin/sh\necho\n')}\tbin/run.sh`,
    `100644 ${blobOf(dir, 'dot\n')}\ta.txt`,
    `100644 ${blobOf(dir, 'y\n')}\ta/y`,
  ]);
  assert.equal(bareGit(dir, ['rev-parse', `${sha}^{tree}`]).trim(), expected);
  assert.equal((await repo.branch('main'))?.commit, sha);
  execFileSync('git', ['--git-dir', dir, 'fsck', '--strict', '--no-dangling'], { env: fixtureEnv() });

  // no index: the cost of a commit does not grow with the number of files in the tree
  for (const command of ['read-tree', 'ls-files', 'update-index', 'write-tree']) assert.equal(ran(command), 0, `${command} ran`);
  // the new blobs and trees are written as loose objects without a git process, and no temporary file stays
  assert.equal(ran('hash-object'), 0);
  assert.deepEqual(
    fs.readdirSync(dir).filter((f) => f.startsWith('hearth-objects') || f.startsWith('hearth-index')),
    [],
  );
  assert.deepEqual(
    fs.readdirSync(path.join(dir, 'objects'), { recursive: true }).filter((f) => String(f).includes('tmp_obj')),
    [],
  );

  // every file deleted: the empty tree
  const all = bareGit(dir, ['ls-tree', '-r', '--name-only', sha]).trim().split('\n');
  const empty = await commitFiles(repo, {
    branch: 'main',
    parent: sha,
    actions: all.map((file_path) => ({ action: 'delete', file_path })),
    message: 'Empty',
    author: { name: 'Bob', email: 'bob@example.com' },
  });
  assert.equal(bareGit(dir, ['rev-parse', `${empty}^{tree}`]).trim(), '4b825dc642cb6eb9a060e54bf8d69288fbee4904');
});

test('the actions apply in order, each to the tree the ones before it left, with GitLab’s refusals', async (t) => {
  const { c, seed } = await buildTestApp(t);
  const { project, dir } = await seed.repoProject();
  const repo = c.repos.repository(project);
  const wt = workTree(t, dir);
  wt.write('docs/a.md', 'a\n').write('file', 'f\n');
  const first = wt.commit('First');
  wt.push();
  const commit = (actions: FileAction[]) => commitFiles(repo, { branch: 'main', parent: first, actions, message: 'm', author: { name: 'B', email: 'b@x' } });
  const refused = (message: string) => (e: Error) => e instanceof CommitActionError && e.message === message;

  await assert.rejects(commit([{ action: 'create', file_path: 'docs', content: Buffer.from('x') }]), refused('A directory with this name already exists'));
  await assert.rejects(commit([{ action: 'create', file_path: 'file/inside', content: Buffer.from('x') }]), refused('A file with this name already exists'));
  await assert.rejects(commit([{ action: 'update', file_path: 'docs', content: Buffer.from('x') }]), refused("A file with this name doesn't exist"));
  await assert.rejects(commit([{ action: 'delete', file_path: 'docs' }]), refused("A file with this name doesn't exist"));
  await assert.rejects(commit([{ action: 'move', previous_path: 'file', file_path: 'docs/a.md' }]), refused('A file with this name already exists'));
  await assert.rejects(commit([{ action: 'chmod', file_path: 'missing', executable: true }]), refused("A file with this name doesn't exist"));
  // a file deleted earlier in the same commit makes room for a directory of that name, and the other way round
  const sha = await commit([
    { action: 'delete', file_path: 'file' },
    { action: 'create', file_path: 'file/inside', content: Buffer.from('in\n') },
    { action: 'delete', file_path: 'docs/a.md' },
    { action: 'create', file_path: 'docs', content: Buffer.from('now a file\n') },
  ]);
  assert.equal(bareGit(dir, ['ls-tree', '-r', '--name-only', sha]), 'docs\nfile/inside\n');
  assert.equal((await repo.branch('main'))?.commit, sha);
});
