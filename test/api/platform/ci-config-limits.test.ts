// The bounds of a CI file, checked before anything is expanded: a file's size and depth
// (max_yaml_size_bytes, max_yaml_depth), aliases by what they expand to, `extends` by its depth and
// by what it copies, includes by count and combined size, `needs` after `parallel`, the number of
// jobs `parallel` makes. Each answer is lint's normal body with GitLab's message.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EXTERNAL_URL } from '../../helpers/build-app.ts';
import { suiteApp } from '../../helpers/ci.ts';

// one suite: the shared fixture of `before` lives from this file's first test to its last, also in a shard
describe('ci-config-limits', () => {
  const json = (r: { body: string }) => JSON.parse(r.body);
  const TOO_BIG = 'The parsed YAML is too big';
  const TOTAL_TOO_BIG = 'Total size of combined CI/CD configuration is too big';
  // files of megabytes take seconds to parse on a busy machine: a time limit none of them reaches
  const ctx = suiteApp({ ciConfigTimeoutMs: 60_000 });

  let n = 0;
  async function setup() {
    const g = await ctx.seed.group({ path: `limits${++n}`, name: `Limits${n}` });
    const { project } = await ctx.seed.repoProject({ namespace: g, path: 'app', name: 'App' });
    const u = await ctx.seed.user({ username: `maintainer${n}` });
    await ctx.seed.member({ group: g }, u, 40);
    const headers = (await ctx.seed.token(u)).headers;
    const url = `/api/v4/projects/${project.id}`;
    /** one commit of `files`; its sha */
    const commit = async (files: Record<string, string>) => {
      const r = await ctx.app.inject({
        method: 'POST',
        url: `${url}/repository/commits`,
        headers,
        payload: {
          branch: 'main',
          commit_message: 'ci files',
          actions: Object.entries(files).map(([file_path, content]) => ({ action: 'create', file_path, content })),
        },
      });
      assert.equal(r.statusCode, 201, r.body);
      return json(r).id as string;
    };
    const lint = async (content: string) => {
      const r = await ctx.app.inject({ method: 'POST', url: `${url}/ci/lint`, headers, payload: { content } });
      assert.equal(r.statusCode, 200, r.body.slice(0, 500));
      return json(r);
    };
    const include = (sha: string, location: string) => ({
      type: 'local',
      location,
      blob: `${EXTERNAL_URL}/limits${n}/app/-/blob/${sha}/${location}`,
      raw: `${EXTERNAL_URL}/limits${n}/app/-/raw/${sha}/${location}`,
      extra: {},
      context_project: `limits${n}/app`,
      context_sha: sha,
    });
    return { commit, lint, include };
  }

  const refused = (error: string, includes: unknown[] = []) => ({ valid: false, errors: [error], warnings: [], merged_yaml: null, includes });

  test('YAML: size and depth are checked before parsing, aliases by what they expand to', async () => {
    const { lint } = await setup();
    // over max_yaml_size_bytes (2 MB): refused unread
    assert.deepEqual(await lint(`# ${'x'.repeat(2 * 1024 * 1024)}\njob:\n  script: x\n`), refused(TOO_BIG));
    // deeper than max_yaml_depth (100)
    const nest = (depth: number) => `.x: ${'['.repeat(depth)}${']'.repeat(depth)}\njob:\n  script: x\n`;
    assert.equal((await lint(nest(90))).valid, true);
    assert.deepEqual(await lint(nest(101)), refused(TOO_BIG));
    // nesting the parser would overflow the stack on: refused from the tokens, before parsing
    assert.deepEqual(await lint(nest(100_000)), refused(TOO_BIG));
    assert.deepEqual(await lint(`.x:\n  ${'- '.repeat(5000)}x\njob:\n  script: x\n`), refused(TOO_BIG));
    // a 50 KB string used 999 times is a 50 MB document (once: 50 MB of merged_yaml and job options)
    const bomb = `.big: &big "${'x'.repeat(50_000)}"\njob:\n  script: [${Array(999).fill('*big').join(', ')}]\n`;
    assert.ok(bomb.length < 60_000);
    assert.deepEqual(await lint(bomb), refused(TOO_BIG));
    // the classic billion laughs: refused by the alias count
    const laughs = ['.a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 10; i++)
      laughs.push(
        `.a${i}: &a${i} [${Array(10)
          .fill(`*a${i - 1}`)
          .join(', ')}]`,
      );
    assert.deepEqual(
      await lint(`${laughs.join('\n')}\njob:\n  script: x\n`),
      refused('(<unknown>): excessive alias count indicates a resource exhaustion attack'),
    );
  });

  test('extends: 11 levels at most; what it copies counts towards the combined size', async () => {
    const { lint } = await setup();
    const chain = (levels: number) => {
      const lines = ['.t0:\n  script: x'];
      for (let i = 1; i < levels; i++) lines.push(`.t${i}:\n  extends: .t${i - 1}`);
      return `${lines.join('\n')}\njob:\n  extends: .t${levels - 1}\n`;
    };
    assert.equal((await lint(chain(10))).valid, true);
    assert.deepEqual(await lint(chain(12)), refused('job: nesting too deep in `extends`'));
    // the same chain written from the job down: the depth does not depend on the order of the file
    const reversed = (levels: number) => {
      const lines = [`job:\n  extends: .t${levels - 1}`];
      for (let i = levels - 1; i >= 1; i--) lines.push(`.t${i}:\n  extends: .t${i - 1}`);
      return `${lines.join('\n')}\n.t0:\n  script: x\n`;
    };
    assert.equal((await lint(reversed(10))).valid, true);
    assert.deepEqual(await lint(reversed(12)), refused('.t1: nesting too deep in `extends`'));
    // 2,000 variables (30 KB) extended by 1,000 hidden jobs: 2 million copies, about 30 MB
    const vars = Array.from({ length: 2000 }, (_, i) => `    VARIABLE_${i}: v`).join('\n');
    const extenders = Array.from({ length: 1000 }, (_, i) => `.j${i}:\n  extends: .base`).join('\n');
    assert.deepEqual(await lint(`.base:\n  variables:\n${vars}\n${extenders}\njob:\n  script: x\n`), refused(TOTAL_TOO_BIG));
  });

  test('includes: 150 at most, nested or not; each file within max_yaml_size_bytes; their combined size bounded', async () => {
    const { commit, lint, include } = await setup();
    // a chain of 152 nested files: the 151st is refused before it is read
    const chain: Record<string, string> = {};
    for (let i = 0; i < 152; i++) chain[`c${i}.yml`] = `include: c${i + 1}.yml\n`;
    let sha = await commit(chain);
    const nested = await lint('include: c0.yml\njob:\n  script: x\n');
    assert.deepEqual(
      nested,
      refused(
        'Maximum of 150 nested includes are allowed!',
        Array.from({ length: 150 }, (_, i) => include(sha, `c${i}.yml`)),
      ),
    );
    // 151 files side by side
    const flat = Array.from({ length: 151 }, (_, i) => `  - c${i}.yml`).join('\n');
    assert.deepEqual((await lint(`include:\n${flat}\njob:\n  script: x\n`)).errors, ['Maximum of 150 nested includes are allowed!']);
    // a file over 2 MB is refused from its size, unread
    sha = await commit({ 'big.yml': `.x: "${'y'.repeat(2 * 1024 * 1024)}"\n` });
    assert.deepEqual(await lint('include: big.yml\njob:\n  script: x\n'), refused(`\`big.yml\`: ${TOO_BIG}`));
    // six files of 1.9 MB each: over the combined 10 MB when the sixth is read
    const files: Record<string, string> = {};
    for (let i = 0; i < 6; i++) files[`part${i}.yml`] = `.p${i}: "${'z'.repeat(1_900_000)}"\n`;
    for (const [file, content] of Object.entries(files)) sha = await commit({ [file]: content });
    const parts = Object.keys(files);
    assert.deepEqual(
      await lint(`include:\n${parts.map((p) => `  - ${p}`).join('\n')}\njob:\n  script: x\n`),
      refused(
        TOTAL_TOO_BIG,
        parts.map((p) => include(sha, p)),
      ),
    );
  });

  test('parallel: the matrix product, the number of jobs and the needs after expansion are checked before expanding', async () => {
    const { lint } = await setup();
    // (a matrix of 40^5 jobs: test/cli/ci-config-limits.test.ts, against a real server)
    // several entries: their sum counts (10×10 + 10×10 + 1)
    const two = await lint(
      't:\n  script: x\n  parallel:\n    matrix:\n      - A: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n        B: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n      - C: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n        D: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n      - E: 1\n',
    );
    assert.deepEqual(two.errors, ['jobs:t:parallel:matrix config generates too many jobs (maximum is 200)']);

    // 11 jobs of 200: more than a pipeline may have
    const jobs = Array.from({ length: 11 }, (_, i) => `j${i}:\n  script: x\n  parallel: 200\n`).join('');
    assert.deepEqual(await lint(jobs), {
      valid: false,
      errors: [
        'The number of jobs has exceeded the limit of 2000. Try splitting the configuration with parent-child-pipelines https://docs.gitlab.com/ee/ci/troubleshooting.html#pipeline-with-many-jobs-fails-to-start',
      ],
      warnings: [],
      merged_yaml: `---\n${jobs}`,
      includes: [],
    });

    // two needs on jobs of 30 instances each are 60 needs
    const needs =
      'a:\n  stage: build\n  script: x\n  parallel: 30\nb:\n  stage: build\n  script: x\n  parallel: 30\nc:\n  script: x\n  needs:\n    - a\n    - b\n';
    assert.deepEqual(await lint(needs), {
      valid: false,
      errors: ['c: one job can only need 50 others, but you have listed 60. See needs keyword documentation for more details'],
      warnings: [],
      merged_yaml: `---\n${needs}`,
      includes: [],
    });
    assert.equal((await lint(needs.replace('parallel: 30\nc', 'parallel: 20\nc'))).valid, true);
  });
});
