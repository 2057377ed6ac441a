// Merging without a working copy against real repositories: mergeability, merge and squash commits,
// rebases (conflicts, binary files, deletes and renames, empty changes), compared with git's own view.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../helpers/build-app.ts';
import { bareGit, workTree } from '../helpers/git.ts';
import { MergeConflict, mergeability, mergeBase, mergeCommit, RebaseConflict, rebase, squashCommit } from '../../src/git/merge.ts';

const ME = { name: 'Merger', email: 'merger@example.com', time: 1_800_000_000 };

async function setup(t: Parameters<typeof buildTestApp>[0]) {
  const { c, seed } = await buildTestApp(t);
  const { project, dir } = await seed.repoProject();
  const repo = c.repos.repository(project);
  const wt = workTree(t, dir);
  wt.write('README.md', 'one\ntwo\nthree\nfour\nfive\n')
    .write('bin.dat', Buffer.from([0, 1, 2, 3]))
    .write('old.txt', 'a file that moves\n'.repeat(20));
  const base = wt.commit('base');
  return { c, repo, wt, dir, base };
}

const tree = (dir: string, rev: string) => bareGit(dir, ['ls-tree', '-r', rev]).trim();
const show = (dir: string, rev: string) => bareGit(dir, ['show', '-s', '--format=%P|%an|%ae|%at|%cn|%ce|%B', rev]).trim();

test('a clean merge: mergeability, a two-parent merge commit with the merged tree, a squash commit and a merge on top', async (t) => {
  const { repo, wt, dir, base } = await setup(t);
  wt.checkout('feature', true).write('README.md', 'ONE\ntwo\nthree\nfour\nfive\n').write('new.txt', 'n\n');
  wt.git(['mv', 'old.txt', 'moved.txt']);
  wt.commit('feature 1');
  wt.rm('bin.dat');
  const head = wt.commit('feature 2');
  wt.checkout('main').write('README.md', 'one\ntwo\nthree\nfour\nFIVE\n');
  const target = wt.commit('main moves');
  wt.push();

  const m = await mergeability(repo, target, head);
  assert.equal(m.clean, true);
  assert.deepEqual(m.conflicts, []);
  assert.match(m.tree!, /^[0-9a-f]{40}$/);

  const merge = await mergeCommit(repo, { targetSha: target, sourceSha: head, message: "Merge branch 'feature' into 'main'\n\nTitle", author: ME });
  assert.equal(
    show(dir, merge),
    `${target} ${head}|Merger|merger@example.com|1800000000|Merger|merger@example.com|Merge branch 'feature' into 'main'\n\nTitle`,
  );
  assert.equal(bareGit(dir, ['rev-parse', `${merge}^{tree}`]).trim(), m.tree);
  // what git itself would merge
  wt.git(['merge', '-q', '--no-ff', '-m', 'x', 'feature']);
  assert.equal(tree(dir, merge), wt.git(['ls-tree', '-r', 'HEAD']));
  assert.equal(bareGit(dir, ['show', `${merge}:README.md`]), 'ONE\ntwo\nthree\nfour\nFIVE\n');
  // nothing moved
  assert.equal(bareGit(dir, ['rev-parse', 'refs/heads/main']).trim(), target);

  const author = { name: 'Author', email: 'author@example.com', time: 1_800_000_100 };
  const s = await squashCommit(repo, {
    targetSha: target,
    sourceSha: head,
    message: 'The title',
    author,
    committer: ME,
    merge: { message: 'Merge it', author: ME },
  });
  assert.equal(show(dir, s.squash), `${target}|Author|author@example.com|1800000100|Merger|merger@example.com|The title`);
  assert.equal(show(dir, s.merge!), `${target} ${s.squash}|Merger|merger@example.com|1800000000|Merger|merger@example.com|Merge it`);
  assert.equal(tree(dir, s.squash), tree(dir, merge));
  const only = await squashCommit(repo, { targetSha: target, sourceSha: head, message: 'Only', author });
  assert.equal(only.merge, null);
  assert.equal(await mergeBase(repo, target, head), base);
});

test('conflicts: text, binary, modify/delete; the commit makers refuse them', async (t) => {
  const { repo, wt, base } = await setup(t);
  wt.checkout('feature', true)
    .write('README.md', 'uno\ntwo\nthree\nfour\nfive\n')
    .write('bin.dat', Buffer.from([0, 9, 9]));
  wt.rm('old.txt');
  const head = wt.commit('feature');
  wt.checkout('main')
    .write('README.md', 'eins\ntwo\nthree\nfour\nfive\n')
    .write('bin.dat', Buffer.from([0, 7, 7]))
    .write('old.txt', 'changed\n');
  const target = wt.commit('main');
  wt.push();
  const m = await mergeability(repo, target, head);
  assert.equal(m.clean, false);
  assert.deepEqual([...m.conflicts].sort(), ['README.md', 'bin.dat', 'old.txt']);
  await assert.rejects(
    mergeCommit(repo, { targetSha: target, sourceSha: head, message: 'm', author: ME }),
    (e) => e instanceof MergeConflict && e.conflicts.length === 3,
  );
  await assert.rejects(squashCommit(repo, { targetSha: target, sourceSha: head, message: 'm', author: ME }), MergeConflict);
  await assert.rejects(rebase(repo, { ontoSha: target, baseSha: base, headSha: head, committer: ME }), (e) => e instanceof RebaseConflict && e.commit === head);
});

test('an empty change (source already in target) and unrelated histories', async (t) => {
  const { repo, wt, dir, base } = await setup(t);
  wt.checkout('main').write('x.txt', 'x\n');
  const target = wt.commit('main');
  wt.git(['checkout', '-q', '--orphan', 'other']);
  wt.write('z.txt', 'z\n');
  const orphan = wt.commit('orphan');
  wt.push();
  const m = await mergeability(repo, target, base);
  assert.equal(m.clean, true);
  assert.equal(m.tree, bareGit(dir, ['rev-parse', `${target}^{tree}`]).trim());
  assert.deepEqual(await mergeability(repo, target, orphan), { clean: false, conflicts: [] });
  assert.equal(await mergeBase(repo, target, orphan), null);
  // rebasing something already contained moves nothing
  assert.equal(await rebase(repo, { ontoSha: target, baseSha: base, headSha: base, committer: ME }), target);
});

test('rebase replays each commit with its author onto the new base (renames, deletes, binary), dropping merges and commits already applied', async (t) => {
  const { repo, wt, dir, base } = await setup(t);
  const grace = { name: 'Grace Hopper', email: 'grace@example.com' };
  wt.checkout('feature', true).write('old.txt', 'a file that moves\n'.repeat(19) + 'changed on the branch\n');
  const f1 = wt.commit('edit the file that main moves', { author: grace, tz: '+0200' });
  wt.write('bin.dat', Buffer.from([5, 0, 5])).rm('README.md');
  wt.commit('binary and delete');
  wt.write('same.txt', 'same\n');
  wt.commit('also on main');
  // a merge of main into the branch is dropped (git rebase without --rebase-merges)
  wt.checkout('main').git(['mv', 'old.txt', 'renamed.txt']);
  wt.write('same.txt', 'same\n');
  const onto = wt.commit('rename on main, same file');
  wt.checkout('feature').git(['merge', '-q', '--no-edit', 'main'], { GIT_COMMITTER_DATE: '@1700009999 +0000', GIT_AUTHOR_DATE: '@1700009999 +0000' });
  wt.write('last.txt', 'last\n');
  const head = wt.commit('last');
  wt.push();

  const newHead = await rebase(repo, { ontoSha: onto, baseSha: base, headSha: head, committer: ME });
  const log = bareGit(dir, ['log', '--format=%s|%an|%ae|%ad|%cn|%P', '--date=raw', `${onto}..${newHead}`])
    .trim()
    .split('\n');
  const f1Date = bareGit(dir, ['show', '-s', '--format=%ad', '--date=raw', f1]).trim();
  assert.equal(log.length, 3);
  assert.deepEqual(
    log.map((l) => l.split('|').slice(0, 3).join('|')),
    ['last|Ada Lovelace|ada@example.com', 'binary and delete|Ada Lovelace|ada@example.com', 'edit the file that main moves|Grace Hopper|grace@example.com'],
  );
  assert.equal(log[2].split('|')[3], f1Date);
  assert.match(f1Date, / \+0200$/);
  assert.ok(log.every((l) => l.split('|')[4] === 'Merger'));
  assert.equal(log[2].split('|')[5], onto);
  // the rename on main carried the branch's edit; the binary change and the delete applied
  assert.equal(bareGit(dir, ['show', `${newHead}:renamed.txt`]), 'a file that moves\n'.repeat(19) + 'changed on the branch\n');
  assert.throws(() => bareGit(dir, ['cat-file', '-e', `${newHead}:old.txt`]));
  assert.throws(() => bareGit(dir, ['cat-file', '-e', `${newHead}:README.md`]));
  assert.equal(bareGit(dir, ['rev-parse', `${newHead}:bin.dat`]), bareGit(dir, ['rev-parse', `${head}:bin.dat`]));
  assert.equal(await repo.isAncestor(onto, newHead), true);
  // the commits made outside git are well-formed and complete
  bareGit(dir, ['fsck', '--no-dangling', '--strict']);
  assert.equal(bareGit(dir, ['cat-file', 'commit', newHead]).split('\n\n')[0].split('\n').length, 4);
  // nothing moved
  assert.equal(bareGit(dir, ['rev-parse', 'refs/heads/feature']).trim(), head);
});
