// End to end on a real port, more of the CI file: `needs` (a job of a later stage runs as soon as the
// job it needs is done, with that job's artifacts only), artifacts on failure and untracked files,
// before_script and job variables, and a failed job retried through the API and run again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yauzl from 'yauzl';
import { cloneUrl, startTestServer } from '../helpers/server.ts';
import { runGit, tmpDir, WorkTree } from '../helpers/git.ts';
import { Runner } from '../../src/runner/runner.ts';

const CI_FILE = `stages: [one, two, three]
default:
  before_script:
    - echo "before in $CI_JOB_NAME"
a:
  stage: one
  script:
    - echo a > a.txt
  artifacts:
    paths: [a.txt]
b:
  stage: one
  script:
    - echo b > b.txt
  artifacts:
    untracked: true
slow:
  stage: two
  script:
    - echo slow
c:
  stage: three
  needs: [a]
  variables:
    WHO: needs-a
  script:
    - test -f a.txt
    - test ! -f b.txt
    - echo "$WHO saw $(cat a.txt)"
broken:
  stage: three
  needs: [b]
  script:
    - echo partial > log.txt
    - test -f "$CI_PROJECT_DIR/retry-me"
  artifacts:
    when: on_failure
    paths: [log.txt]
`;

function names(buf: Buffer): Promise<string[]> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buf, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err);
      const out: string[] = [];
      zip.on('entry', (e: yauzl.Entry) => {
        out.push(e.fileName);
        zip.readEntry();
      });
      zip.on('end', () => resolve(out.sort()));
      zip.readEntry();
    });
  });
}

test('needs, artifacts on failure and untracked, before_script, variables, retry', async (t) => {
  const srv = await startTestServer(t, { jobRequestTimeoutMs: 300 }, { selfUrl: true });
  const { seed } = srv;
  const owner = await seed.user();
  const ns = await seed.namespaceOf(owner);
  const { project } = await seed.repoProject({ owner, namespace: ns, path: 'dag' });
  await seed.member({ project }, owner, 50);
  const { token, headers } = await seed.token(owner);
  const work = tmpDir(t);
  await runGit(work, ['clone', '-q', cloneUrl(srv.base, `${ns.full_path}/${project.path}`, owner.username, token), 'w']);
  const w = new WorkTree(path.join(work, 'w'));
  w.git(['checkout', '-q', '-B', 'main']);
  w.write('.service-ci.yml', CI_FILE).write('.gitignore', 'ignored.txt\n').commit('CI');
  await runGit(w.dir, ['push', '-q', 'origin', 'main']);

  const get = async (url: string) => {
    const r = await fetch(`${srv.base}/api/v4${url}`, { headers });
    const buf = Buffer.from(await r.arrayBuffer());
    return { status: r.status, buf, json: r.headers.get('content-type')?.includes('json') ? JSON.parse(buf.toString()) : null };
  };
  const reg = await fetch(`${srv.base}/api/v4/user/runners`, {
    method: 'POST',
    headers: { 'private-token': token, 'content-type': 'application/json' },
    body: JSON.stringify({ runner_type: 'project_type', project_id: project.id }),
  });
  const { token: runnerToken } = (await reg.json()) as { token: string };

  const buildsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-builds-'));
  t.after(() => fs.rmSync(buildsDir, { recursive: true, force: true }));
  const runner = new Runner({ url: srv.base, token: runnerToken, concurrent: 2, buildsDir, log: () => {}, idleMs: 100 });
  const running = runner.run();
  const end = Date.now() + 180_000; // bounds a hang only: a loaded machine runs jobs slowly
  let jobs: Record<string, any> = {};
  let pipelineId = 0;
  for (;;) {
    const p = await get(`/projects/${project.id}/pipelines`);
    if (p.json?.length) {
      pipelineId = p.json[0].id;
      const j = await get(`/projects/${project.id}/pipelines/${pipelineId}/jobs?per_page=100`);
      jobs = Object.fromEntries((j.json as any[]).map((x) => [x.name, x]));
      if (['success', 'failed'].includes(p.json[0].status)) break;
    }
    assert.ok(Date.now() < end, `pipeline not finished: ${JSON.stringify(Object.values(jobs).map((x) => [x.name, x.status]))}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.deepEqual(Object.fromEntries(Object.values(jobs).map((x) => [x.name, x.status])), {
    a: 'success',
    b: 'success',
    slow: 'success',
    c: 'success',
    broken: 'failed',
  });
  const trace = async (name: string) => (await get(`/projects/${project.id}/jobs/${jobs[name].id}/trace`)).buf.toString();
  assert.match(await trace('c'), /before in c\n/);
  assert.match(await trace('c'), /needs-a saw a\n/);
  assert.match(await trace('c'), /Downloading artifacts for a \(/);
  assert.doesNotMatch(await trace('c'), /Downloading artifacts for b \(/);
  // untracked: the files git does not track and does not ignore
  const bZip = await get(`/projects/${project.id}/jobs/${jobs.b.id}/artifacts`);
  assert.equal(bZip.status, 200);
  assert.deepEqual(await names(bZip.buf), ['b.txt']);
  // on failure: the failed job's artifacts
  const brokenZip = await get(`/projects/${project.id}/jobs/${jobs.broken.id}/artifacts`);
  assert.equal(brokenZip.status, 200);
  assert.deepEqual(await names(brokenZip.buf), ['log.txt']);
  assert.equal((await get(`/projects/${project.id}/jobs/${jobs.a.id}/artifacts`)).status, 200);
  assert.equal((await get(`/projects/${project.id}/jobs/${jobs.slow.id}/artifacts`)).status, 404);

  // retry the failed job: a new job, run by the same runner
  const retry = await fetch(`${srv.base}/api/v4/projects/${project.id}/jobs/${jobs.broken.id}/retry`, { method: 'POST', headers });
  assert.equal(retry.status, 201);
  const retried = (await retry.json()) as { id: number; status: string };
  assert.notEqual(retried.id, jobs.broken.id);
  for (;;) {
    const j = await get(`/projects/${project.id}/jobs/${retried.id}`);
    if (j.json.status === 'failed' || j.json.status === 'success') {
      assert.equal(j.json.status, 'failed');
      break;
    }
    assert.ok(Date.now() < end + 60_000, `retried job: ${j.json.status}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  runner.stop();
  await running;
  const p = await get(`/projects/${project.id}/pipelines/${pipelineId}`);
  assert.equal(p.json.status, 'failed');
  assert.ok(runner.results.length >= 6);
  srv.app.server.closeAllConnections();
});

test('a trigger job: the child pipeline from a local file runs on the runner; strategy depend carries its status to the bridge', async (t) => {
  const srv = await startTestServer(t, { jobRequestTimeoutMs: 300 }, { selfUrl: true });
  const { seed } = srv;
  const owner = await seed.user();
  const ns = await seed.namespaceOf(owner);
  const { project } = await seed.repoProject({ owner, namespace: ns, path: 'parent' });
  await seed.member({ project }, owner, 50);
  const { token, headers } = await seed.token(owner);
  const work = tmpDir(t);
  await runGit(work, ['clone', '-q', cloneUrl(srv.base, `${ns.full_path}/${project.path}`, owner.username, token), 'w']);
  const w = new WorkTree(path.join(work, 'w'));
  w.git(['checkout', '-q', '-B', 'main']);
  w.write(
    '.service-ci.yml',
    'prep:\n  stage: build\n  script: [echo prep]\nchild:\n  stage: test\n  trigger:\n    include: ci/child.yml\n    strategy: depend\n',
  );
  w.write('ci/child.yml', 'inner:\n  script:\n    - echo "inner of $CI_PIPELINE_SOURCE"\n');
  w.commit('CI with a child');
  await runGit(w.dir, ['push', '-q', 'origin', 'main']);
  const reg = await fetch(`${srv.base}/api/v4/user/runners`, {
    method: 'POST',
    headers: { 'private-token': token, 'content-type': 'application/json' },
    body: JSON.stringify({ runner_type: 'project_type', project_id: project.id }),
  });
  const { token: runnerToken } = (await reg.json()) as { token: string };
  const buildsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-builds-'));
  t.after(() => fs.rmSync(buildsDir, { recursive: true, force: true }));
  const runner = new Runner({ url: srv.base, token: runnerToken, buildsDir, log: () => {}, idleMs: 100 });
  const running = runner.run();
  const get = async (url: string) => (await fetch(`${srv.base}/api/v4${url}`, { headers })).json() as Promise<any>;
  const end = Date.now() + 180_000; // bounds a hang only: a loaded machine runs jobs slowly
  let pipelines: any[] = [];
  for (;;) {
    pipelines = await get(`/projects/${project.id}/pipelines`);
    const parent = pipelines.find((p) => p.source === 'push');
    if (parent && ['success', 'failed'].includes(parent.status)) break;
    assert.ok(Date.now() < end, JSON.stringify(pipelines.map((p) => [p.id, p.source, p.status])));
    await new Promise((r) => setTimeout(r, 200));
  }
  runner.stop();
  await running;
  // the list leaves child pipelines out (GitLab's no_child); the bridge names it
  assert.deepEqual(
    pipelines.map((p) => [p.source, p.status]),
    [['push', 'success']],
  );
  const parent = pipelines[0];
  const bridges = await get(`/projects/${project.id}/pipelines/${parent.id}/bridges`);
  assert.deepEqual(
    bridges.map((b: any) => [b.name, b.status, b.downstream_pipeline?.status]),
    [['child', 'success', 'success']],
  );
  const child = await get(`/projects/${project.id}/pipelines/${bridges[0].downstream_pipeline.id}`);
  assert.deepEqual([child.source, child.status], ['parent_pipeline', 'success']);
  const inner = (await get(`/projects/${project.id}/pipelines/${child.id}/jobs`))[0];
  const log = await (await fetch(`${srv.base}/api/v4/projects/${project.id}/jobs/${inner.id}/trace`, { headers })).text();
  assert.match(log, /inner of parent_pipeline\n/);
  srv.app.server.closeAllConnections();
});

test('an archive over max_artifacts_size: 413, the job fails, nothing stored', async (t) => {
  const srv = await startTestServer(t, { jobRequestTimeoutMs: 300 }, { selfUrl: true });
  const { seed, c } = srv;
  const owner = await seed.user();
  const ns = await seed.namespaceOf(owner);
  const { project } = await seed.repoProject({ owner, namespace: ns, path: 'big' });
  await seed.member({ project }, owner, 50);
  const { token, headers } = await seed.token(owner);
  const set = await fetch(`${srv.base}/api/v4/application/settings?max_artifacts_size=1`, { method: 'PUT', headers: srv.root });
  assert.equal(set.status, 200);
  const work = tmpDir(t);
  await runGit(work, ['clone', '-q', cloneUrl(srv.base, `${ns.full_path}/${project.path}`, owner.username, token), 'w']);
  const w = new WorkTree(path.join(work, 'w'));
  w.git(['checkout', '-q', '-B', 'main']);
  w.write('.service-ci.yml', 'big:\n  script:\n    - head -c 3000000 /dev/urandom > big.bin\n  artifacts:\n    paths: [big.bin]\n').commit('CI');
  await runGit(w.dir, ['push', '-q', 'origin', 'main']);
  const reg = await fetch(`${srv.base}/api/v4/user/runners`, {
    method: 'POST',
    headers: { 'private-token': token, 'content-type': 'application/json' },
    body: JSON.stringify({ runner_type: 'project_type', project_id: project.id }),
  });
  const { token: runnerToken } = (await reg.json()) as { token: string };
  const buildsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-builds-'));
  t.after(() => fs.rmSync(buildsDir, { recursive: true, force: true }));
  const end = Date.now() + 60_000; // bounds a hang only
  while (!(await c.db.kysely.selectFrom('ci_builds').select('id').where('status', '=', 'pending').executeTakeFirst())) {
    assert.ok(Date.now() < end, 'no pending job');
    await new Promise((r) => setTimeout(r, 100));
  }
  const runner = new Runner({ url: srv.base, token: runnerToken, once: true, buildsDir, log: () => {} });
  await runner.run();
  const [r] = runner.results;
  assert.deepEqual(r?.result, { state: 'failed', failureReason: 'script_failure' });
  const log = await (await fetch(`${srv.base}/api/v4/projects/${project.id}/jobs/${r!.id}/trace`, { headers })).text();
  // the server answers 413 and drops the rest of the body (it does not cut the connection off)
  assert.match(log, /ERROR: Uploading artifacts as "archive" to coordinator\.\.\. too large archive/);
  const rows = await c.db.kysely.selectFrom('ci_job_artifacts').select('id').where('job_id', '=', r!.id).execute();
  assert.deepEqual(rows, []);
  srv.app.server.closeAllConnections();
});
