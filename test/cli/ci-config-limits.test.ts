// A CI file that would expand to 100 million jobs (`parallel: matrix` of 5 keys × 40 values, under
// 700 bytes) against a real server started as the README starts it (`node bin/hearth.js serve`, a fresh
// DATA_DIR): lint answers GitLab's error at once, a commit of the file makes a failed pipeline with
// the error, and the process lives on (/-/health answers after each); `POST /projects/:id/pipeline`
// answers GitLab's 400 with it. And CI files of 2 MB, each seconds of YAML parsing, posted to lint
// at once: the parsing runs on worker threads, /-/health keeps answering and the server's main thread is never
// busy for a second between two answers. Costs are the server's own CPU (thread-cpu.ts), which a busy machine
// does not stretch as it stretches the wall-clock wait.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startHearth, tempDataDir, TOKEN } from '../helpers/process.ts';
import { busiestStretch, serverCost } from '../helpers/thread-cpu.ts';

const values = Array.from({ length: 40 }, (_, i) => i).join(',');
const MATRIX = `test:\n  script: echo\n  parallel:\n    matrix:\n${['A', 'B', 'C', 'D', 'E'].map((k, i) => `${i ? '        ' : '      - '}${k}: [${values}]\n`).join('')}`;
/** lint's merged_yaml of it: the same data, in block style */
const MERGED = `---\ntest:\n  script: echo\n  parallel:\n    matrix:\n${['A', 'B', 'C', 'D', 'E']
  .map((k, i) => `${i ? '        ' : '      - '}${k}:\n${Array.from({ length: 40 }, (_, n) => `          - ${n}\n`).join('')}`)
  .join('')}`;
const MATRIX_ERROR = 'jobs:test:parallel:matrix config generates too many jobs (maximum is 200)';

test('a matrix of 40^5 jobs in under 700 bytes: lint answers the error in under a second, a commit fails its pipeline, the server lives', {
  timeout: 180_000,
}, async (t) => {
  assert.ok(Buffer.byteLength(MATRIX) < 700);
  const { child: server, base, pid } = await startHearth(t, { dataDir: tempDataDir(t, 'hearth-ci-limits-') });
  // a server that expands the matrix does not answer for a minute, then dies: 30 s is far beyond
  // what the answer takes even on a loaded machine, and the elapsed time is checked below
  const api = (method: string, url: string, body?: unknown) =>
    fetch(`${base}/api/v4${url}`, {
      method,
      headers: { 'private-token': TOKEN, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
  const health = async () => {
    const r = await fetch(`${base}/-/health`, { signal: AbortSignal.timeout(30_000) });
    assert.equal(r.status, 200);
    assert.equal(await r.text(), 'Hearth OK');
  };

  const created = await api('POST', '/projects', { name: 'Matrix', path: 'matrix' });
  assert.equal(created.status, 201);
  const project = (await created.json()) as { id: number };
  const readme = await api('POST', `/projects/${project.id}/repository/commits`, {
    branch: 'main',
    commit_message: 'readme',
    actions: [{ action: 'create', file_path: 'README.md', content: 'hi\n' }],
  });
  assert.equal(readme.status, 201);

  // lint: GitLab's shape, valid false and the error, for under a second of the server's CPU (expanding the
  // matrix takes a minute of it)
  const lint = await serverCost(pid, async () => {
    const r = await api('POST', `/projects/${project.id}/ci/lint`, { content: MATRIX });
    return { status: r.status, body: await r.json() };
  });
  assert.equal(lint.value.status, 200);
  assert.deepEqual(lint.value.body, { valid: false, errors: [MATRIX_ERROR], warnings: [], merged_yaml: MERGED, includes: [] });
  assert.ok(lint.ms < 1000, `lint cost the server ${lint.ms} ms (${lint.unit})`);
  await health();

  // the commit path: the pushed file makes a failed pipeline whose yaml_errors is the error
  const commit = await api('POST', `/projects/${project.id}/repository/commits`, {
    branch: 'main',
    commit_message: 'ci',
    actions: [{ action: 'create', file_path: '.service-ci.yml', content: MATRIX }],
  });
  assert.equal(commit.status, 201);
  const sha = ((await commit.json()) as { id: string }).id;
  let pipelines: { id: number; sha: string; status: string }[] = [];
  for (const deadline = Date.now() + 60_000; !pipelines.length && Date.now() < deadline; ) {
    pipelines = (await (await api('GET', `/projects/${project.id}/pipelines`)).json()) as typeof pipelines;
    if (!pipelines.length) await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(pipelines.length, 1);
  assert.equal(pipelines[0].sha, sha);
  assert.equal(pipelines[0].status, 'failed');
  const detail = (await (await api('GET', `/projects/${project.id}/pipelines/${pipelines[0].id}`)).json()) as Record<string, unknown>;
  assert.equal(detail.status, 'failed');
  assert.equal(detail.yaml_errors, MATRIX_ERROR);
  const jobs = await api('GET', `/projects/${project.id}/pipelines/${pipelines[0].id}/jobs`);
  assert.deepEqual(await jobs.json(), []);
  await health();

  // the API: save_on_errors false, GitLab's render_validation_error! body, no pipeline
  const create = await serverCost(pid, async () => {
    const r = await api('POST', `/projects/${project.id}/pipeline`, { ref: 'main' });
    return { status: r.status, body: await r.json() };
  });
  assert.equal(create.value.status, 400);
  assert.deepEqual(create.value.body, { message: { base: [MATRIX_ERROR] } });
  assert.ok(create.ms < 1000, `the pipeline API cost the server ${create.ms} ms (${create.unit})`);
  const after = (await (await api('GET', `/projects/${project.id}/pipelines`)).json()) as unknown[];
  assert.equal(after.length, 1);
  await health();
  assert.equal(server.exitCode, null);
});

/** A valid CI file of nearly 2 MB (the limit is 2 MiB): 1,900 jobs of 38 script lines, written as merged_yaml writes it. */
function bigConfig(seed: number): string {
  let s = 'stages:\n  - build\n  - test\n';
  for (let j = 0; j < 1900; j++) {
    s += `job_${seed}_${j}:\n  stage: test\n  script:\n`;
    for (let l = 0; l < 38; l++) s += `    - echo step ${l} of ${j}\n`;
  }
  return s;
}

test('four CI files of 2 MB posted to lint at once: each answered, /-/health answers all along, the loop never busy for a second', {
  timeout: 600_000,
}, async (t) => {
  // a time limit no parse reaches on a busy machine: every answer is the file's own
  const { child: server, base, pid } = await startHearth(t, { dataDir: tempDataDir(t, 'hearth-ci-limits-'), env: { HEARTH_CI_CONFIG_TIMEOUT_MS: '60000' } });
  const headers = { 'private-token': TOKEN, 'content-type': 'application/json' };
  const created = await fetch(`${base}/api/v4/projects`, { method: 'POST', headers, body: JSON.stringify({ name: 'Big', path: 'big' }) });
  assert.equal(created.status, 201);
  const project = (await created.json()) as { id: number };

  const files = [0, 1, 2, 3].map(bigConfig);
  for (const f of files) {
    assert.ok(Buffer.byteLength(f) > 1_900_000 && Buffer.byteLength(f) < 2 * 1024 * 1024, `${Buffer.byteLength(f)} bytes`);
  }
  let done = 0;
  const lints = files.map(async (content) => {
    const r = await fetch(`${base}/api/v4/projects/${project.id}/ci/lint`, { method: 'POST', headers, body: JSON.stringify({ content }) });
    done++;
    return { status: r.status, body: await r.json() };
  });
  // every answer is awaited below; when an assertion fails first, the server stops under requests still open
  const answered = Promise.all(lints);
  answered.catch(() => {});
  // health, one request after the other, until every lint has answered
  let checks = 0;
  const busy = busiestStretch(pid);
  while (done < files.length) {
    const r = await fetch(`${base}/-/health`);
    assert.equal(r.status, 200);
    assert.equal(await r.text(), 'Hearth OK');
    busy.mark();
    assert.ok(busy.maxMs < 1000, `the main thread was busy ${busy.maxMs} ms (${busy.unit}) between two answers of /-/health while CI files were parsed`);
    checks++;
  }
  assert.ok(checks > 0);
  const answers = await answered;
  for (const [i, a] of answers.entries()) {
    assert.equal(a.status, 200);
    assert.deepEqual(a.body, { valid: true, errors: [], warnings: [], merged_yaml: `---\n${files[i]}`, includes: [] });
  }
  assert.equal(server.exitCode, null);
});
