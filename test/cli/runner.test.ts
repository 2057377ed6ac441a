// End to end on a real port: a CI file pushed with git over HTTP makes a pipeline; a runner created
// through the API (POST /user/runners) runs its jobs with `hearth runner` (the CLI, spawned, and the
// same runner in-process), and the server shows the logs, statuses, the pipeline's status and the
// artifacts, whose download endpoints return the bytes the runner uploaded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import yauzl from 'yauzl';
import { startTestServer, cloneUrl, type TestServer } from '../helpers/server.ts';
import { runGit, tmpDir, WorkTree } from '../helpers/git.ts';
import { Runner } from '../../src/runner/runner.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

const CI_FILE = `stages: [build, test]
variables:
  GREETING: hello
build:
  stage: build
  script:
    - mkdir -p out/sub
    - echo "$GREETING from $CI_JOB_NAME" > out/result.txt
    - echo scratch > out/sub/skip.tmp
    - echo kept > out/sub/kept.txt
    - echo "built at $CI_COMMIT_SHORT_SHA"
  artifacts:
    name: build-output
    paths: [out/]
    exclude: ['out/**/*.tmp']
flaky:
  stage: test
  allow_failure: true
  script:
    - echo about to fail
    - exit 3
  after_script:
    - echo cleaning up after $CI_JOB_NAME
check:
  stage: test
  script:
    - cat out/result.txt
    - test ! -e out/sub/skip.tmp
    - test -z "$HEARTH_RUNNER_TOKEN"
`;

interface Setup {
  srv: TestServer;
  headers: Record<string, string>;
  projectId: number;
  sha: string;
  runnerToken: string;
  runnerId: number;
}

function unzipEntries(buf: Buffer): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buf, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err);
      const out: Record<string, string> = {};
      zip.on('entry', (e: yauzl.Entry) => {
        if (e.fileName.endsWith('/')) {
          out[e.fileName] = '';
          return zip.readEntry();
        }
        zip.openReadStream(e, (err2, s) => {
          if (err2 || !s) return reject(err2);
          const chunks: Buffer[] = [];
          s.on('data', (c: Buffer) => chunks.push(c));
          s.on('end', () => {
            out[e.fileName] = Buffer.concat(chunks).toString('utf8');
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(out));
      zip.readEntry();
    });
  });
}

async function api(srv: TestServer, method: string, url: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(`${srv.base}/api/v4${url}`, {
    method,
    headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const buf = Buffer.from(await res.arrayBuffer());
  let json: any = null;
  try {
    json = JSON.parse(buf.toString('utf8'));
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, buf, json };
}

async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, ms = 120_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function setup(t: Parameters<typeof startTestServer>[0]): Promise<Setup> {
  const srv = await startTestServer(t, { jobRequestTimeoutMs: 500 }, { selfUrl: true });
  const { seed } = srv;
  const owner = await seed.user({ username: 'ci-owner' });
  const group = await seed.group({ path: 'ci-group' });
  const { project } = await seed.repoProject({ namespace: group, path: 'app', visibility: 'private' });
  await seed.member({ group }, owner, 50);
  const { token, headers } = await seed.token(owner, { scopes: ['api'] });

  const work = tmpDir(t);
  await runGit(work, ['clone', '-q', cloneUrl(srv.base, `${group.full_path}/${project.path}`, owner.username, token), 'w']);
  const w = new WorkTree(path.join(work, 'w'));
  w.git(['checkout', '-q', '-B', 'main']);
  w.write('.service-ci.yml', CI_FILE).write('README.md', '# app\n');
  const sha = w.commit('CI');
  await runGit(w.dir, ['push', '-q', 'origin', 'main']);

  // the runner, created by a user for the instance (POST /user/runners) — the admin's token
  const created = await api(srv, 'POST', '/user/runners', srv.root, { runner_type: 'instance_type', description: 'e2e runner' });
  assert.equal(created.status, 201, created.buf.toString());
  assert.match(created.json.token, /^glrt-/);
  return { srv, headers, projectId: project.id, sha, runnerToken: created.json.token, runnerId: created.json.id };
}

async function jobsOf(s: Setup, pipelineId: number) {
  const r = await api(s.srv, 'GET', `/projects/${s.projectId}/pipelines/${pipelineId}/jobs?per_page=100`, s.headers);
  assert.equal(r.status, 200, r.buf.toString());
  return Object.fromEntries((r.json as any[]).map((j) => [j.name, j]));
}

test('push → pipeline → hearth runner (CLI and in-process) → logs, statuses, pipeline status and artifacts', async (t) => {
  const s = await setup(t);
  const { srv } = s;

  const pipeline = await until('the pipeline of the push', async () => {
    const r = await api(srv, 'GET', `/projects/${s.projectId}/pipelines`, s.headers);
    return r.status === 200 && r.json.length ? r.json[0] : null;
  });
  assert.deepEqual([pipeline.sha, pipeline.ref, pipeline.source], [s.sha, 'main', 'push']);
  let jobs = await jobsOf(s, pipeline.id);
  assert.deepEqual(
    Object.values(jobs)
      .map((j: any) => [j.name, j.stage, j.status])
      .sort(),
    [
      ['build', 'build', 'pending'],
      ['check', 'test', 'created'],
      ['flaky', 'test', 'created'],
    ],
  );

  // the CLI, spawned: `hearth runner --once` takes the build job
  const buildsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-builds-'));
  t.after(() => fs.rmSync(buildsDir, { recursive: true, force: true }));
  const cli = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', 'src/main.ts', 'runner', '--url', srv.base, '--once', '--builds-dir', buildsDir],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: os.tmpdir(), HEARTH_RUNNER_TOKEN: s.runnerToken },
      timeout: 180_000, // bounds a hang only: cloning and running the job on a loaded machine takes a while
    },
  ).catch((e) => e);
  assert.equal(cli.code ?? 0, 0, `${cli.stdout}\n${cli.stderr}`);
  assert.match(cli.stderr, new RegExp(`Checking for jobs\\.\\.\\. received  job=${jobs.build.id} `));
  assert.doesNotMatch(cli.stderr, /glrt-|glcbt-/, 'no token in the runner log');
  assert.match(fs.readFileSync(path.join(buildsDir, '.runner_system_id'), 'utf8'), /^s_[0-9a-f]{12}\n$/);
  assert.deepEqual(
    fs.readdirSync(buildsDir).filter((f) => f !== '.runner_system_id'),
    [],
    'the job directory is removed',
  );

  jobs = await jobsOf(s, pipeline.id);
  const build = jobs.build;
  let trace = await api(srv, 'GET', `/projects/${s.projectId}/jobs/${build.id}/trace`, s.headers);
  assert.equal(build.status, 'success', trace.buf.toString());
  assert.equal(build.runner?.id, s.runnerId);
  assert.equal(build.failure_reason, undefined);
  assert.equal(trace.status, 200);
  const log = trace.buf.toString('utf8');
  assert.match(log, /Running with hearth-runner /);
  assert.match(log, /Checking out [0-9a-f]{8} as detached HEAD \(ref is main\)/);
  assert.match(log, /\$ echo "\$GREETING from \$CI_JOB_NAME" > out\/result\.txt/);
  assert.match(log, new RegExp(`built at ${s.sha.slice(0, 8)}\\n`));
  assert.match(log, /out\/result\.txt: found/);
  assert.match(log, /Job succeeded/);
  assert.doesNotMatch(log, /glcbt-|gitlab-ci-token:/, 'the job token is never in the log');

  // the artifacts: the row, the archive by job, by ref and job name, one file, raw
  const row = await srv.c.db.kysely.selectFrom('ci_job_artifacts').selectAll().where('job_id', '=', build.id).execute();
  assert.deepEqual(
    row.map((a) => [a.file_type, a.file_format, a.project_id]),
    [['archive', 'zip', s.projectId]],
  );
  const zip = await api(srv, 'GET', `/projects/${s.projectId}/jobs/${build.id}/artifacts`, s.headers);
  assert.equal(zip.status, 200, zip.buf.toString());
  assert.equal(zip.buf.length, row[0]!.size);
  assert.deepEqual(await unzipEntries(zip.buf), {
    'out/': '',
    'out/result.txt': 'hello from build\n',
    'out/sub/': '',
    'out/sub/kept.txt': 'kept\n',
  });
  // by ref: the latest successful pipeline only — not yet
  const early = await api(srv, 'GET', `/projects/${s.projectId}/jobs/artifacts/main/download?job=build`, s.headers);
  assert.deepEqual([early.status, early.json], [404, { message: '404 Not found' }]);
  const one = await api(srv, 'GET', `/projects/${s.projectId}/jobs/${build.id}/artifacts/out/result.txt`, s.headers);
  assert.deepEqual([one.status, one.buf.toString()], [200, 'hello from build\n']);
  assert.equal(build.artifacts_file?.filename, 'build-output.zip');

  // the same runner in-process, two at once: the test stage (check gets build's artifacts)
  await until('the test stage', async () => {
    const j = await jobsOf(s, pipeline.id);
    return j.check.status === 'pending' && j.flaky.status === 'pending';
  });
  const logs: string[] = [];
  const runner = new Runner({ url: srv.base, token: s.runnerToken, concurrent: 2, buildsDir, log: (l) => logs.push(l), idleMs: 100 });
  const running = runner.run();
  await until('both test jobs', async () => runner.results.length === 2);
  runner.stop();
  await running;

  jobs = await jobsOf(s, pipeline.id);
  assert.deepEqual([jobs.flaky.status, jobs.flaky.failure_reason, jobs.flaky.allow_failure], ['failed', 'script_failure', true]);
  assert.equal(jobs.check.status, 'success');
  trace = await api(srv, 'GET', `/projects/${s.projectId}/jobs/${jobs.flaky.id}/trace`, s.headers);
  assert.match(trace.buf.toString(), /about to fail\n/);
  assert.match(trace.buf.toString(), /ERROR: Job failed: exit code 3/);
  assert.match(trace.buf.toString(), /cleaning up after flaky\n/);
  trace = await api(srv, 'GET', `/projects/${s.projectId}/jobs/${jobs.check.id}/trace`, s.headers);
  assert.match(trace.buf.toString(), /Downloading artifacts for build \(\d+\)/);
  assert.match(trace.buf.toString(), /\nhello from build\n/);

  // the pipeline: success with a failed job allowed to fail
  const p = await api(srv, 'GET', `/projects/${s.projectId}/pipelines/${pipeline.id}`, s.headers);
  assert.equal(p.json.status, 'success');

  // now the artifacts by ref and job name
  const byRef = await api(srv, 'GET', `/projects/${s.projectId}/jobs/artifacts/main/download?job=build`, s.headers);
  assert.equal(byRef.status, 200, byRef.buf.toString());
  assert.ok(byRef.buf.equals(zip.buf));
  const raw = await api(srv, 'GET', `/projects/${s.projectId}/jobs/artifacts/main/raw/out/sub/kept.txt?job=build`, s.headers);
  assert.deepEqual([raw.status, raw.buf.toString()], [200, 'kept\n']);

  // the commit's statuses: every job, as the commit statuses API lists them
  const st = await api(srv, 'GET', `/projects/${s.projectId}/repository/commits/${s.sha}/statuses`, s.headers);
  assert.equal(st.status, 200);
  assert.deepEqual((st.json as any[]).map((x) => [x.name, x.status, x.allow_failure, x.pipeline_id]).sort(), [
    ['build', 'success', false, pipeline.id],
    ['check', 'success', false, pipeline.id],
    ['flaky', 'failed', true, pipeline.id],
  ]);

  // an external CI system reports on the same commit: a generic job in that pipeline, which the
  // pipeline's status follows and no runner takes
  let ext = await api(srv, 'POST', `/projects/${s.projectId}/statuses/${s.sha}`, s.headers, { state: 'running', ref: 'main', name: 'external-ci' });
  assert.equal(ext.status, 201, ext.buf.toString());
  assert.equal(ext.json.pipeline_id, pipeline.id);
  assert.equal((await api(srv, 'GET', `/projects/${s.projectId}/pipelines/${pipeline.id}`, s.headers)).json.status, 'running');
  const idle = new Runner({ url: srv.base, token: s.runnerToken, once: true, buildsDir, log: () => {} });
  assert.equal(await idle.run(), 0, 'no job for a runner');
  ext = await api(srv, 'POST', `/projects/${s.projectId}/statuses/${s.sha}`, s.headers, { state: 'success', ref: 'main', name: 'external-ci' });
  assert.equal(ext.json.status, 'success');
  assert.equal((await api(srv, 'GET', `/projects/${s.projectId}/pipelines/${pipeline.id}`, s.headers)).json.status, 'success');

  // the runner's contact and what it said about itself
  const rr = await api(srv, 'GET', `/runners/${s.runnerId}`, srv.root);
  assert.equal(rr.status, 200);
  assert.deepEqual([rr.json.version, rr.json.platform, rr.json.architecture], ['0.1.0', process.platform, process.arch === 'x64' ? 'amd64' : process.arch]);
  assert.ok(rr.json.contacted_at);
  // every request is answered: the keep-alive sockets of this process's fetch go now, not at the
  // server's keep-alive timeout when the app closes
  srv.app.server.closeAllConnections();
});
