// The CI file parsed on a worker thread (config/parse-pool.ts): the same answer as parseCiConfig,
// included files read by the calling thread, a read's errors kept (GitLab's message for a file too
// big, any other error thrown as is), and past the time limit GitLab's timeout message — the thread
// is then replaced and the next parse answers as before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isMainThread } from 'node:worker_threads';
import { ConfigError, mergedYaml, parseCiConfig } from '../../../src/domain/ci/config/parse.ts';
import { parseCiLimited, TIMEOUT_MESSAGE } from '../../../src/domain/ci/config/parse-pool.ts';

const FILE = 'include: common.yml\nbuild:\n  extends: .base\n  script: make\n';
const FILES: Record<string, string> = { 'common.yml': '.base:\n  stage: test\n  tags: [linux]\n' };
const LIMIT = { timeoutMs: 60_000 };

test('the worker answers what parseCiConfig answers; the included files are read by the calling thread', async () => {
  const reads: string[] = [];
  const read = async ({ path: p }: { path: string }) => {
    assert.ok(isMainThread);
    reads.push(p);
    return FILES[p] ?? null;
  };
  const inline = await parseCiConfig(FILE, read);
  const pooled = await parseCiLimited(FILE, read, { ...LIMIT, mergedYaml: true });
  assert.deepEqual(reads, ['common.yml', 'common.yml']);
  const { merged, ...rest } = inline;
  assert.deepEqual(pooled, { ...rest, mergedYaml: mergedYaml(merged) });
  assert.deepEqual(
    pooled.config?.jobs.map((j) => [j.name, j.stage, j.tags]),
    [['build', 'test', ['linux']]],
  );
  // merged_yaml only when asked
  assert.equal((await parseCiLimited(FILE, read, LIMIT)).mergedYaml, null);
  // no reader: includes are missing files
  assert.deepEqual((await parseCiLimited(FILE, null, LIMIT)).errors, ['Local file `common.yml` does not exist!']);
});

test("a read's ConfigError is the file's error; any other error is thrown as it was", async () => {
  const tooBig = await parseCiLimited(
    FILE,
    async () => {
      throw new ConfigError('The parsed YAML is too big');
    },
    LIMIT,
  );
  assert.deepEqual([tooBig.config, tooBig.errors], [null, ['`common.yml`: The parsed YAML is too big']]);
  const broken = new Error('git cat-file failed');
  await assert.rejects(
    parseCiLimited(
      FILE,
      async () => {
        throw broken;
      },
      LIMIT,
    ),
    (e) => e === broken,
  );
  // the thread is still good
  assert.deepEqual((await parseCiLimited(FILE, async ({ path }) => FILES[path] ?? null, LIMIT)).errors, []);
});

test('past the time limit: GitLab’s timeout message; the thread is replaced', async () => {
  let big = '';
  for (let j = 0; j < 1900; j++) big += `job_${j}:\n  script:\n${'    - echo step\n'.repeat(38)}`;
  const slow = await parseCiLimited(big, null, { timeoutMs: 1 });
  assert.deepEqual(slow, { config: null, errors: [TIMEOUT_MESSAGE], warnings: [], includes: [], mergedYaml: null });
  // every thread of the pool, one after the other, past its limit, then a parse that has the time
  const many = await Promise.all([1, 2, 3].map(() => parseCiLimited(big, null, { timeoutMs: 1 })));
  assert.deepEqual(
    many.map((r) => r.errors),
    [[TIMEOUT_MESSAGE], [TIMEOUT_MESSAGE], [TIMEOUT_MESSAGE]],
  );
  const next = await parseCiLimited(FILE, async ({ path }) => FILES[path] ?? null, LIMIT);
  assert.deepEqual(next.errors, []);
  assert.equal(next.config?.jobs.length, 1);
});
