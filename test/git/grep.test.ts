// Code search in the git layer: git grep's chunks (context merged, groups apart), a term that looks like options,
// stopping after enough chunks, the output cap, the time limit, and the tree's files by path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../helpers/build-app.ts';
import { workTree } from '../helpers/git.ts';
import { grepChunks, GrepLimit, treeFiles } from '../../src/git/grep.ts';
import { parseCodeQuery, withoutExtension } from '../../src/domain/repository/search.ts';

const LIMITS = { timeoutMs: 5_000, maxBytes: 1 << 20 };

test('git grep: chunks with context, options as terms, early stops, the output cap and the time limit', async (t) => {
  const { seed } = await buildTestApp(t);
  const { dir } = await seed.repoProject();
  const wt = workTree(t, dir);
  const lines = Array.from({ length: 20 }, (_, i) => (i === 3 || i === 4 || i === 15 ? `needle ${i}` : `hay ${i}`));
  wt.write('a.txt', `${lines.join('\n')}\n`);
  wt.write('b/c.md', '--output=/tmp/x\n-e NEEDLE\n');
  wt.write('z.bin', Buffer.from([0, 0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65]));
  const sha = wt.commit('files');
  wt.push();

  assert.deepEqual(await grepChunks(dir, sha, 'NeEdLe', LIMITS), [
    { path: 'a.txt', startline: 2, lines: ['hay 1', 'hay 2', 'needle 3', 'needle 4', 'hay 5', 'hay 6'] },
    { path: 'a.txt', startline: 14, lines: ['hay 13', 'hay 14', 'needle 15', 'hay 16', 'hay 17'] },
    { path: 'b/c.md', startline: 1, lines: ['--output=/tmp/x', '-e NEEDLE'] },
  ]);
  assert.deepEqual(await grepChunks(dir, sha, '--output=/tmp/x', LIMITS), [{ path: 'b/c.md', startline: 1, lines: ['--output=/tmp/x', '-e NEEDLE'] }]);
  assert.deepEqual(await grepChunks(dir, sha, 'nothing like it', LIMITS), []);
  assert.equal((await grepChunks(dir, sha, 'needle', { ...LIMITS, maxChunks: 1 })).length, 1);
  // the cap: what was read before it
  assert.ok((await grepChunks(dir, sha, 'hay', { ...LIMITS, maxBytes: 10 })).length <= 1);
  await assert.rejects(grepChunks(dir, sha, 'needle', { ...LIMITS, timeoutMs: 0 }), GrepLimit);
  await assert.rejects(grepChunks(dir, 'main', 'needle', LIMITS), /commit id/);

  assert.deepEqual(await treeFiles(dir, sha, (p) => p.endsWith('.md') || p.startsWith('a'), { max: 10, ...LIMITS }), [
    { path: 'a.txt', id: wt.git(['rev-parse', `${sha}:a.txt`]) },
    { path: 'b/c.md', id: wt.git(['rev-parse', `${sha}:b/c.md`]) },
  ]);
  assert.equal((await treeFiles(dir, sha, () => true, { max: 2, ...LIMITS })).length, 2);
});

test("the code query: GitLab's filters, quotes, negation and wildcards; the basename", () => {
  const q = parseCodeQuery('flux "two words" filename:*.RB -path:vendor extension:md path:');
  assert.equal(q.term, 'flux "two words" path:');
  assert.deepEqual(
    q.filters.map((f) => [f.kind, f.negated, f.pattern.source]),
    [
      ['filename', false, '.*?\\.rb$'],
      ['path', true, 'vendor'],
      ['extension', false, '\\.md$'],
    ],
  );
  assert.equal(parseCodeQuery('extension:rb').term, '*');
  assert.equal(withoutExtension('lib/flux.rb'), 'lib/flux');
  assert.equal(withoutExtension('a.tar.gz'), 'a.tar');
  assert.equal(withoutExtension('.gitignore'), '.gitignore');
  assert.equal(withoutExtension('dir.d/README'), 'dir.d/README');
});
