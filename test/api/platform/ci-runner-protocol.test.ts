// The runner protocol for jobs, as gitlab-runner speaks it: POST /jobs/request (job payload, matching
// rules, atomic claim, long poll), PUT /jobs/:id, PATCH /jobs/:id/trace, GET /job, and job tokens.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { buildTestApp, EXTERNAL_URL, type TestApp } from '../../helpers/build-app.ts';
import { workTree } from '../../helpers/git.ts';
import { ciDigest, seedPipeline, seedRunner } from '../../helpers/ci.ts';
import type { ProjectRow, UserRow } from '../../../src/db/schema.ts';
import { userActor } from '../../../src/domain/access/actor.ts';

// one suite: the shared fixture of `before` lives from this file's first test to its last, also in a shard
describe('ci-runner-protocol', () => {
  const json = (r: { body: string }) => JSON.parse(r.body);
  const later: (() => unknown)[] = [];
  const hooks = { after: (fn: () => unknown) => later.push(fn) };

  let ctx: TestApp;
  let user: UserRow;
  let userHeaders: Record<string, string>;
  let project: ProjectRow;
  let sha: string;
  let message: string;

  before(async () => {
    ctx = await buildTestApp(hooks, { jobRequestTimeoutMs: 0 });
    const { seed } = ctx;
    user = await seed.user({ username: 'dev', name: 'Dev Eloper', email: 'dev@example.com' });
    userHeaders = (await seed.token(user)).headers;
    const g = await seed.group({ path: 'grp', name: 'Grp' });
    await seed.member({ group: g }, user, 30);
    const repo = await seed.repoProject({ namespace: g, path: 'app', name: 'App' });
    project = repo.project;
    const wt = workTree(hooks, repo.dir);
    message = 'Add the app\n\nWith a body line.\n';
    sha = wt.write('a.txt', 'a').commit(message.trimEnd());
    wt.checkout('feature', true).write('b.txt', 'b').commit('feature work');
    wt.push();
    fs.rmSync(wt.dir, { recursive: true, force: true });
  });

  after(async () => {
    for (const fn of later.reverse()) await fn();
  });

  /** No pending job is left for the next test (the queue is shared by every test of this file). */
  async function clearQueue() {
    await ctx.c.db.kysely.updateTable('ci_builds').set({ status: 'canceled' }).where('status', 'in', ['pending', 'running']).execute();
  }

  function request(token: string, extra: Record<string, unknown> = {}) {
    return ctx.app.inject({
      method: 'POST',
      url: '/api/v4/jobs/request',
      payload: {
        token,
        info: { name: 'r1', version: '17.5.0', revision: 'abc', platform: 'linux', architecture: 'amd64', executor: 'shell' },
        system_id: 's_0123456789ab',
        ...extra,
      },
    });
  }

  test('POST /jobs/request: token missing 400, unknown 403, paused 204, nothing pending 204 with X-GitLab-Last-Update', async () => {
    await clearQueue();
    let r = await ctx.app.inject({ method: 'POST', url: '/api/v4/jobs/request', payload: {} });
    assert.equal(r.statusCode, 400);
    assert.deepEqual(json(r), { error: 'token is missing' });
    r = await request('glrt-unknown');
    assert.equal(r.statusCode, 403);
    assert.deepEqual(json(r), { message: '403 Forbidden' });
    const paused = await seedRunner(ctx.c, { active: false });
    await seedPipeline(ctx.c, project, { sha }, [{ name: 'waiting' }]);
    r = await request(paused.token);
    assert.equal(r.statusCode, 204);
    assert.equal(r.body, '');
    assert.match(String(r.headers['x-gitlab-last-update']), /^\d+$/);
    await clearQueue();
    const idle = await seedRunner(ctx.c);
    r = await request(idle.token);
    assert.equal(r.statusCode, 204);
    assert.match(String(r.headers['x-gitlab-last-update']), /^\d+$/);
    // the runner's contact was recorded
    const row = await ctx.c.db.kysely.selectFrom('ci_runners').selectAll().where('id', '=', idle.runner.id).executeTakeFirstOrThrow();
    assert.ok(row.contacted_at);
    assert.equal(row.version, '17.5.0');
  });

  test('POST /jobs/request: the oldest pending job, the whole JobResponse, and the job running afterwards', async () => {
    await clearQueue();
    const { runner, token: runnerToken } = await seedRunner(ctx.c, { description: 'shell runner', tag_list: ['linux'], maximum_timeout: 1800 });
    const options = {
      before_script: ['echo before'],
      script: ['make', 'make test'],
      after_script: ['echo after'],
      image: { name: 'alpine:3.20', entrypoint: [''] },
      services: [{ name: 'postgres:16', alias: 'db' }],
      artifacts: { name: 'out', paths: ['dist/'], exclude: ['dist/*.tmp'], expire_in: '1 week', when: 'on_success' as const },
      timeout: 7200,
    };
    const { pipeline, jobs } = await seedPipeline(ctx.c, project, { sha, user_id: user.id }, [
      { name: 'build', stage: 'build', options, tag_list: ['linux'] },
      { name: 'later', stage: 'test', stage_idx: 1 },
    ]);
    await ctx.c.db.kysely
      .updateTable('ci_builds')
      .set({ yaml_variables: JSON.stringify([{ key: 'GREETING', value: 'hello', public: true }]) })
      .where('id', '=', jobs[0].id)
      .execute();
    await ctx.c.db.kysely
      .updateTable('ci_pipelines')
      .set({ variables: JSON.stringify([{ key: 'DEPLOY', value: 'yes', variable_type: 'env_var' }]) })
      .where('id', '=', pipeline.id)
      .execute();
    const r = await request(runnerToken, { session: { url: 'https://runner.example:8093/session/abc', certificate: '', authorization: 'x' } });
    assert.equal(r.statusCode, 201);
    assert.equal(r.headers['content-type'], 'application/json');
    const body = json(r);
    const token: string = body.token;
    assert.match(token, /^glcbt-[A-Za-z0-9_-]{20,}$/);
    const repoUrl = `http://gitlab-ci-token:${token}@hearth.test/grp/app.git`;
    const v = (key: string, value: string, pub = true, masked = false) => ({ key, value, public: pub, masked });
    const job = await ctx.c.db.kysely.selectFrom('ci_builds').selectAll().where('id', '=', jobs[0].id).executeTakeFirstOrThrow();
    assert.equal(typeof body.job_info.time_in_queue_seconds, 'number');
    assert.deepEqual(body, {
      id: jobs[0].id,
      token,
      allow_git_fetch: true,
      job_info: {
        id: jobs[0].id,
        name: 'build',
        stage: 'build',
        project_id: project.id,
        project_name: 'App',
        time_in_queue_seconds: body.job_info.time_in_queue_seconds,
        project_jobs_running_on_instance_runners_count: '1',
      },
      git_info: {
        repo_url: repoUrl,
        repo_object_format: 'sha1',
        ref: 'main',
        sha,
        before_sha: '0'.repeat(40),
        ref_type: 'branch',
        refspecs: ['+refs/heads/main:refs/remotes/origin/main'],
        depth: 20,
      },
      runner_info: { timeout: 1800, runner_session_url: 'https://runner.example:8093/session/abc' },
      variables: [
        v('CI_PIPELINE_ID', String(pipeline.id)),
        v('CI_PIPELINE_URL', `${EXTERNAL_URL}/grp/app/-/pipelines/${pipeline.id}`),
        v('CI_JOB_ID', String(jobs[0].id)),
        v('CI_JOB_URL', `${EXTERNAL_URL}/grp/app/-/jobs/${jobs[0].id}`),
        v('CI_JOB_TOKEN', token, false, true),
        v('CI_JOB_STARTED_AT', job.started_at!.replace(/\.\d{3}Z$/, 'Z')),
        v('CI_REPOSITORY_URL', repoUrl, false),
        v('CI_JOB_NAME', 'build'),
        v('CI_JOB_NAME_SLUG', 'build'),
        v('CI_JOB_STAGE', 'build'),
        v('CI_NODE_TOTAL', '1'),
        v('CI_JOB_TIMEOUT', '1800'),
        v('CI', 'true'),
        v('GITLAB_CI', 'true'),
        v('CI_SERVER_URL', EXTERNAL_URL),
        v('CI_SERVER_HOST', 'hearth.test'),
        v('CI_SERVER_PORT', '80'),
        v('CI_SERVER_PROTOCOL', 'http'),
        v('CI_SERVER_SHELL_SSH_HOST', 'hearth.test'),
        v('CI_SERVER_NAME', 'GitLab'),
        v('GITLAB_FEATURES', ''),
        v('CI_PROJECT_ID', String(project.id)),
        v('CI_PROJECT_NAME', 'app'),
        v('CI_PROJECT_TITLE', 'App'),
        v('CI_PROJECT_DESCRIPTION', project.description ?? ''),
        v('CI_PROJECT_PATH', 'grp/app'),
        v('CI_PROJECT_PATH_SLUG', 'grp-app'),
        v('CI_PROJECT_NAMESPACE', 'grp'),
        v('CI_PROJECT_NAMESPACE_SLUG', 'grp'),
        v('CI_PROJECT_NAMESPACE_ID', String(project.namespace_id)),
        v('CI_PROJECT_ROOT_NAMESPACE', 'grp'),
        v('CI_PROJECT_URL', `${EXTERNAL_URL}/grp/app`),
        v('CI_PROJECT_VISIBILITY', project.visibility),
        v('CI_PROJECT_CLASSIFICATION_LABEL', ''),
        v('CI_DEFAULT_BRANCH', 'main'),
        v('CI_CONFIG_PATH', '.gitlab-ci.yml'),
        v('CI_API_V4_URL', `${EXTERNAL_URL}/api/v4`),
        v('CI_API_GRAPHQL_URL', `${EXTERNAL_URL}/api/graphql`),
        v('CI_PIPELINE_IID', String(pipeline.iid)),
        v('CI_PIPELINE_SOURCE', 'push'),
        v('CI_PIPELINE_CREATED_AT', pipeline.created_at.replace(/\.\d{3}Z$/, 'Z')),
        v('CI_COMMIT_SHA', sha),
        v('CI_COMMIT_SHORT_SHA', sha.slice(0, 8)),
        v('CI_COMMIT_BEFORE_SHA', '0'.repeat(40)),
        v('CI_COMMIT_REF_NAME', 'main'),
        v('CI_COMMIT_REF_SLUG', 'main'),
        v('CI_COMMIT_BRANCH', 'main'),
        v('CI_COMMIT_MESSAGE', message),
        v('CI_COMMIT_TITLE', 'Add the app'),
        v('CI_COMMIT_DESCRIPTION', 'With a body line.\n'),
        v('CI_COMMIT_REF_PROTECTED', 'true'),
        v('CI_COMMIT_TIMESTAMP', String(body.variables.find((x: { key: string }) => x.key === 'CI_COMMIT_TIMESTAMP')?.value)),
        v('CI_COMMIT_AUTHOR', 'Ada Lovelace <ada@example.com>'),
        v('CI_RUNNER_ID', String(runner.id)),
        v('CI_RUNNER_DESCRIPTION', 'shell runner'),
        v('CI_RUNNER_TAGS', '["linux"]'),
        v('GITLAB_USER_ID', String(user.id)),
        v('GITLAB_USER_EMAIL', 'dev@example.com'),
        v('GITLAB_USER_LOGIN', 'dev'),
        v('GITLAB_USER_NAME', 'Dev Eloper'),
        v('GREETING', 'hello'),
        v('DEPLOY', 'yes', false),
      ],
      steps: [
        { name: 'script', script: ['echo before', 'make', 'make test'], timeout: 1800, when: 'on_success', allow_failure: false },
        { name: 'after_script', script: ['echo after'], timeout: 1800, when: 'always', allow_failure: true },
      ],
      image: { name: 'alpine:3.20', entrypoint: [''], ports: [], pull_policy: null },
      services: [{ name: 'postgres:16', entrypoint: null, ports: [], alias: 'db', command: null, pull_policy: null, variables: [] }],
      artifacts: [
        {
          name: 'out',
          untracked: false,
          paths: ['dist/'],
          exclude: ['dist/*.tmp'],
          when: 'on_success',
          expire_in: '1 week',
          artifact_type: 'archive',
          artifact_format: 'zip',
        },
      ],
      cache: [],
      credentials: [],
      dependencies: [],
      features: body.features,
    });
    assert.equal(body.features.trace_sections, true);
    assert.ok(body.features.failure_reasons.includes('script_failure'));
    assert.match(String(body.variables.find((x: { key: string }) => x.key === 'CI_COMMIT_TIMESTAMP')?.value), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // the job runs: runner, system id, token digest, start time, timeout (the runner's maximum wins)
    assert.equal(job.status, 'running');
    assert.equal(job.runner_id, runner.id);
    assert.equal(job.runner_system_id, 's_0123456789ab');
    assert.equal(job.token_digest, await ciDigest(ctx.c, token));
    assert.equal(job.timeout, 1800);
    assert.ok(job.started_at && Date.parse(job.started_at) <= Date.now());
    assert.equal(job.lock_version, jobs[0].lock_version + 1);
    // one job per request: the next one waits
    const other = await ctx.c.db.kysely.selectFrom('ci_builds').select('status').where('id', '=', jobs[1].id).executeTakeFirstOrThrow();
    assert.equal(other.status, 'pending');
  });

  test('POST /jobs/request: which runner may take which job (tags, run_untagged, runner type, shared runners, protected refs)', async () => {
    await clearQueue();
    const { seed, c } = ctx;
    const sub = await seed.group({ path: 'sub', name: 'Sub', parent: await c.resolve.namespaceById(project.namespace_id).then((n) => n!) });
    const subProject = await seed.project({ namespace: sub, path: 'lib', name: 'Lib' });
    const elsewhere = await seed.project({ path: 'other', name: 'Other' });
    const { pipeline: p1, jobs: tagged } = await seedPipeline(c, project, { sha }, [{ name: 'tagged', tag_list: ['docker', 'linux'] }]);
    const takes = async (token: string) => {
      const r = await request(token);
      return r.statusCode === 201 ? json(r).job_info.name : r.statusCode;
    };
    // tags: every job tag among the runner's
    assert.equal(await takes((await seedRunner(c, { tag_list: ['docker'] })).token), 204);
    assert.equal(await takes((await seedRunner(c, { tag_list: ['docker', 'linux', 'x'], run_untagged: false })).token), 'tagged');
    assert.equal(p1.id, tagged[0].pipeline_id);
    // untagged jobs only for run_untagged runners
    await seedPipeline(c, project, { sha }, [{ name: 'untagged' }]);
    assert.equal(await takes((await seedRunner(c, { tag_list: ['docker'], run_untagged: false })).token), 204);
    // a project runner takes only its projects' jobs
    assert.equal(await takes((await seedRunner(c, { projects: [elsewhere] })).token), 204);
    assert.equal(await takes((await seedRunner(c, { projects: [project] })).token), 'untagged');
    // a group runner takes jobs of its group's subgroups, not of other namespaces
    await seedPipeline(c, subProject, { sha }, [{ name: 'in-subgroup' }]);
    assert.equal(await takes((await seedRunner(c, { groups: [elsewhere.namespace_id] })).token), 204);
    assert.equal(await takes((await seedRunner(c, { groups: [project.namespace_id] })).token), 'in-subgroup');
    // instance runners only where shared runners are enabled
    await seedPipeline(c, elsewhere, { sha }, [{ name: 'no-shared' }]);
    const settings = JSON.parse(elsewhere.settings);
    await c.db.kysely
      .updateTable('projects')
      .set({ settings: JSON.stringify({ ...settings, shared_runners_enabled: false }) })
      .where('id', '=', elsewhere.id)
      .execute();
    assert.equal(await takes((await seedRunner(c)).token), 204);
    assert.equal(await takes((await seedRunner(c, { projects: [elsewhere] })).token), 'no-shared');
    // ref_protected runners: only protected refs (the default branch), never `feature`
    await seedPipeline(c, project, { sha, ref: 'feature' }, [{ name: 'on-feature' }]);
    const protectedRunner = await seedRunner(c, { access_level: 'ref_protected' });
    assert.equal(await takes(protectedRunner.token), 204);
    await seedPipeline(c, project, { sha, ref: 'main' }, [{ name: 'on-main' }]);
    assert.equal(await takes(protectedRunner.token), 'on-main');
    assert.equal(await takes((await seedRunner(c)).token), 'on-feature');
    // nothing else is pending
    const left = await c.db.kysely.selectFrom('ci_builds').select('name').where('status', '=', 'pending').execute();
    assert.deepEqual(left, []);
  });

  test('POST /jobs/request: two runners asking at once for one job — one gets it, the other 204', async () => {
    await clearQueue();
    const a = await seedRunner(ctx.c);
    const b = await seedRunner(ctx.c);
    const { jobs } = await seedPipeline(ctx.c, project, { sha }, [{ name: 'only-one' }]);
    const [ra, rb] = await Promise.all([request(a.token), request(b.token)]);
    const codes = [ra.statusCode, rb.statusCode].sort();
    assert.deepEqual(codes, [201, 204]);
    const winner = ra.statusCode === 201 ? a : b;
    const row = await ctx.c.db.kysely.selectFrom('ci_builds').selectAll().where('id', '=', jobs[0].id).executeTakeFirstOrThrow();
    assert.equal(row.runner_id, winner.runner.id);
    assert.equal(row.lock_version, 1);
    // many more at once for several jobs: every job exactly once
    await clearQueue();
    const { jobs: many } = await seedPipeline(ctx.c, project, { sha }, [{ name: 'm1' }, { name: 'm2' }, { name: 'm3' }]);
    const runners = await Promise.all(Array.from({ length: 8 }, () => seedRunner(ctx.c)));
    const answers = await Promise.all(runners.map((r) => request(r.token)));
    const taken = answers.filter((r) => r.statusCode === 201).map((r) => json(r).id);
    assert.deepEqual(taken.sort(), many.map((j) => j.id).sort());
    assert.equal(answers.filter((r) => r.statusCode === 204).length, 5);
  });

  /** Runs `fn` with a longer long poll (the shared app answers at once otherwise). */
  async function withWait<T>(ms: number, fn: () => Promise<T>): Promise<T> {
    const before = ctx.c.config.jobRequestTimeoutMs;
    (ctx.c.config as { jobRequestTimeoutMs: number }).jobRequestTimeoutMs = ms;
    try {
      return await fn();
    } finally {
      (ctx.c.config as { jobRequestTimeoutMs: number }).jobRequestTimeoutMs = before;
    }
  }

  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  /** Until `n` requests wait in the long poll (they authenticate first: on a busy machine that takes a while). */
  async function untilWaiting(n: number): Promise<void> {
    for (const deadline = Date.now() + 60_000; ctx.c.ci.jobs.waiters.size !== n && Date.now() < deadline; ) await sleep(10);
    assert.equal(ctx.c.ci.jobs.waiters.size, n);
  }

  test('long poll: a waiting runner is answered 204 when the wait ends, and at once when a job is queued (in process or only by the table version)', async () => {
    await clearQueue();
    const { token } = await seedRunner(ctx.c);
    await withWait(300, async () => {
      const t0 = performance.now();
      const r = await request(token);
      const took = performance.now() - t0;
      assert.equal(r.statusCode, 204);
      assert.match(String(r.headers['x-gitlab-last-update']), /^\d+$/);
      assert.ok(took >= 280, `waited ${took} ms`);
      assert.equal(ctx.c.ci.jobs.waiters.size, 0);
    });
    // a wait of a minute: a waiter that is not woken answers 204 at its end, so a 201 well before it is the wake
    await withWait(60_000, async () => {
      for (const wake of [true, false]) {
        const pending = request(token);
        await untilWaiting(1);
        const t0 = performance.now();
        const { jobs } = await seedPipeline(ctx.c, project, { sha }, [{ name: wake ? 'queued-here' : 'queued-elsewhere' }]);
        if (wake) ctx.c.ci.jobs.jobsQueued();
        const r = await pending;
        const took = performance.now() - t0;
        assert.equal(r.statusCode, 201);
        assert.equal(json(r).id, jobs[0].id);
        assert.ok(took < 30_000, `picked up after ${took} ms`);
      }
    });
    assert.equal(ctx.c.ci.jobs.waiters.size, 0);
  });

  test('long poll: 50 idle runners, one new job is picked up by one of them in well under a second; the others wait on', async () => {
    await clearQueue();
    const runners = await Promise.all(Array.from({ length: 50 }, () => seedRunner(ctx.c)));
    // a wait of a minute: however long 50 runners take to start waiting on this machine, none gives up meanwhile
    await withWait(60_000, async () => {
      // the reference on this machine: one idle runner picking up one job
      const alone = request(runners[0].token);
      await untilWaiting(1);
      const r0 = performance.now();
      await seedPipeline(ctx.c, project, { sha }, [{ name: 'for-the-one' }]);
      ctx.c.ci.jobs.jobsQueued();
      assert.equal((await alone).statusCode, 201);
      const refMs = performance.now() - r0;

      let answered = 0;
      const answers = runners.map((r) => request(r.token).finally(() => answered++));
      await untilWaiting(50);
      const t0 = performance.now();
      const { jobs } = await seedPipeline(ctx.c, project, { sha }, [{ name: 'for-one' }]);
      ctx.c.ci.jobs.jobsQueued();
      const first = await Promise.race(answers.map((p) => p.then((r) => (r.statusCode === 201 ? r : new Promise<never>(() => {})))));
      const took = performance.now() - t0;
      // well under a second on an idle machine; on a loaded one, not much more than one runner alone
      assert.ok(took < Math.max(1000, 10 * refMs), `picked up after ${took} ms (one runner alone: ${refMs} ms)`);
      assert.equal(json(first).id, jobs[0].id);
      // the others wait on: all 49 back in the wait, none answered
      await untilWaiting(49);
      assert.equal(answered, 1);
      // and each takes one of 49 more jobs when they come: nobody got a job twice, nobody lost one
      const more = await seedPipeline(
        ctx.c,
        project,
        { sha },
        Array.from({ length: 49 }, (_, i) => ({ name: `for-the-rest-${i}` })),
      );
      ctx.c.ci.jobs.jobsQueued();
      const all = await Promise.all(answers);
      assert.equal(all.filter((r) => r.statusCode === 201).length, 50);
      assert.deepEqual(all.map((r) => json(r).id).sort(), [jobs[0].id, ...more.jobs.map((j) => j.id)].sort());
    });
  });

  /** A job taken by a fresh runner: its id and job token. */
  async function takeJob(name: string) {
    await clearQueue();
    const runner = await seedRunner(ctx.c);
    const { pipeline, jobs } = await seedPipeline(ctx.c, project, { sha, user_id: user.id }, [{ name }]);
    const r = await request(runner.token);
    assert.equal(r.statusCode, 201);
    return { id: jobs[0].id as number, token: json(r).token as string, pipeline, runner };
  }

  const row = (id: number) => ctx.c.db.kysely.selectFrom('ci_builds').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  function put(id: number | string, payload: Record<string, unknown>, headers: Record<string, string> = {}) {
    return ctx.app.inject({ method: 'PUT', url: `/api/v4/jobs/${id}`, payload, headers });
  }

  function patchTrace(id: number, token: string | null, range: string | null, data: string | Buffer) {
    const headers: Record<string, string> = { 'content-type': 'text/plain' };
    if (token !== null) headers['job-token'] = token;
    if (range !== null) headers['content-range'] = range;
    return ctx.app.inject({ method: 'PATCH', url: `/api/v4/jobs/${id}/trace`, headers, payload: data });
  }

  test('PUT /jobs/:id: token checks, running refreshes, success finishes (token no longer valid), then 403 with Job-Status', async () => {
    const { id, token, runner } = await takeJob('put-success');
    // a job's update is a contact of its runner (written when the last one is old)
    const old = new Date(Date.now() - 3 * 3600_000).toISOString();
    await ctx.c.db.kysely.updateTable('ci_runners').set({ contacted_at: old }).where('id', '=', runner.runner.id).execute();
    let r = await put(id, {});
    assert.equal(r.statusCode, 400);
    assert.deepEqual(json(r), { error: 'token is missing' });
    r = await put('abc', { token });
    assert.equal(r.statusCode, 400);
    assert.deepEqual(json(r), { error: 'id is invalid' });
    r = await put(id, { token: 'glcbt-wrong' });
    assert.equal(r.statusCode, 403);
    assert.deepEqual(json(r), { message: '403 Forbidden' });
    assert.equal(r.headers['job-status'], undefined);
    r = await put(999_999, { token });
    assert.equal(r.statusCode, 403);
    assert.deepEqual(json(r), { message: '403 Forbidden' });
    // an unknown state: 400 "400", the job untouched
    r = await put(id, { token, state: 'exploded' });
    assert.equal(r.statusCode, 400);
    assert.equal(r.body, '"400"');
    assert.equal((await row(id)).status, 'running');
    // running: a refresh
    const before = (await row(id)).updated_at;
    await sleep(5);
    r = await put(id, { token, state: 'running', output: { checksum: 'crc32:0', bytesize: 0 } }, { 'job-token': token });
    assert.equal(r.statusCode, 200);
    assert.equal(r.body, '"200"');
    assert.ok((await row(id)).updated_at > before);
    const contacted = await ctx.c.db.kysely.selectFrom('ci_runners').select('contacted_at').where('id', '=', runner.runner.id).executeTakeFirstOrThrow();
    assert.ok(contacted.contacted_at! > old);
    // while running, the token authenticates as the job's user
    const resolved = await ctx.c.ci.jobs.resolveToken(token);
    assert.deepEqual({ user: resolved?.user.id, jobId: resolved?.jobId }, { user: user.id, jobId: id });
    r = await put(id, { token, state: 'success', exit_code: 0 });
    assert.equal(r.statusCode, 200);
    const done = await row(id);
    assert.equal(done.status, 'success');
    assert.equal(done.failure_reason, null);
    assert.ok(done.finished_at);
    assert.equal(await ctx.c.ci.jobs.resolveToken(token), null);
    // the job no longer runs: 403 with its status, so the runner stops
    r = await put(id, { token, state: 'success' });
    assert.equal(r.statusCode, 403);
    assert.equal(r.headers['job-status'], 'success');
    assert.deepEqual(json(r), { message: '403 Forbidden - Job is not running' });
  });

  test('PUT /jobs/:id: failed with the runner failure reason (unknown ones become unknown_failure)', async () => {
    let { id, token } = await takeJob('put-failed');
    let r = await put(id, { token, state: 'failed', failure_reason: 'script_failure', exit_code: 1 });
    assert.equal(r.statusCode, 200);
    let done = await row(id);
    assert.deepEqual([done.status, done.failure_reason], ['failed', 'script_failure']);
    ({ id, token } = await takeJob('put-failed-2'));
    r = await put(id, { token, state: 'failed', failure_reason: 'gremlins' });
    assert.equal(r.statusCode, 200);
    done = await row(id);
    assert.deepEqual([done.status, done.failure_reason], ['failed', 'unknown_failure']);
    r = await put(id, { token, state: 'running' });
    assert.equal(r.statusCode, 403);
    assert.equal(r.headers['job-status'], 'failed');
  });

  test('PATCH /jobs/:id/trace: appends at the current size (202 with Job-Status, Range, X-GitLab-Trace-Update-Interval), 416 elsewhere, 400 without Content-Range, 403 for a canceled job', async () => {
    const { id, token } = await takeJob('tracing');
    let r = await patchTrace(id, token, null, 'x');
    assert.equal(r.statusCode, 400);
    assert.deepEqual(json(r), { message: '400 Missing header Content-Range' });
    r = await patchTrace(id, 'glcbt-wrong', '0-5', 'hello');
    assert.equal(r.statusCode, 403);
    assert.deepEqual(json(r), { message: '403 Forbidden' });
    r = await patchTrace(id, token, '0-5', 'hello');
    assert.equal(r.statusCode, 202);
    assert.equal(r.body, '');
    assert.equal(r.headers['job-status'], 'running');
    assert.equal(r.headers.range, '0-5');
    assert.equal(r.headers['x-gitlab-trace-update-interval'], '60');
    // the runner sends raw bytes, whatever the content type
    r = await ctx.app.inject({
      method: 'PATCH',
      url: `/api/v4/jobs/${id}/trace?token=${token}`,
      headers: { 'content-type': 'application/octet-stream', 'content-range': '5-8' },
      payload: Buffer.from([0x20, 0xe2, 0x9c, 0x93]),
    });
    assert.equal(r.statusCode, 202);
    assert.equal(r.headers.range, '0-9');
    // a start other than the current size: 416 with the size, nothing written
    for (const range of ['0-9', '3-4', '20-30']) {
      r = await patchTrace(id, token, range, 'again');
      assert.equal(r.statusCode, 416);
      assert.deepEqual(json(r), { message: '416 Range Not Satisfiable' });
      assert.equal(r.headers.range, '0-9');
    }
    // an empty patch at the end is fine
    r = await patchTrace(id, token, '9-9', '');
    assert.equal(r.statusCode, 202);
    assert.equal(r.headers.range, '0-9');
    const job = await row(id);
    assert.equal(job.trace_size, 9);
    assert.equal((await ctx.c.ci.jobs.trace(id)).toString('utf8'), 'hello ✓');
    // canceled from the API: the runner's next patch is refused with the status, so it stops
    const cancel = await ctx.app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/jobs/${id}/cancel`, headers: userHeaders });
    assert.equal(cancel.statusCode, 201);
    r = await patchTrace(id, token, '9-14', 'more\n');
    assert.equal(r.statusCode, 403);
    assert.equal(r.headers['job-status'], 'canceled');
    assert.deepEqual(json(r), { message: '403 Forbidden - Job is not running' });
    r = await put(id, { token, state: 'success' });
    assert.equal(r.statusCode, 403);
    assert.equal(r.headers['job-status'], 'canceled');
    assert.equal((await row(id)).status, 'canceled');
  });

  test('GET /job: the job of a running job token; job tokens are refused elsewhere and once the job finished', async () => {
    const { id, token } = await takeJob('whoami');
    let r = await ctx.app.inject({ method: 'GET', url: '/api/v4/job', headers: { 'job-token': token } });
    assert.equal(r.statusCode, 200);
    const body = json(r);
    assert.equal(body.id, id);
    assert.equal(body.name, 'whoami');
    assert.equal(body.status, 'running');
    assert.equal(body.user.id, user.id);
    r = await ctx.app.inject({ method: 'GET', url: `/api/v4/job?job_token=${token}` });
    assert.equal(r.statusCode, 200);
    // a personal token: no job behind it
    r = await ctx.app.inject({ method: 'GET', url: '/api/v4/job', headers: userHeaders });
    assert.equal(r.statusCode, 404);
    assert.deepEqual(json(r), { message: '404 Job Not Found' });
    r = await ctx.app.inject({ method: 'GET', url: '/api/v4/job' });
    assert.equal(r.statusCode, 401);
    assert.deepEqual(json(r), { message: '401 Unauthorized' });
    // not a job-token endpoint: 401 even for a good job token
    r = await ctx.app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}`, headers: { 'job-token': token } });
    assert.equal(r.statusCode, 401);
    assert.deepEqual(json(r), { message: '401 Unauthorized' });
    r = await ctx.app.inject({ method: 'GET', url: '/api/v4/user', headers: { 'job-token': token } });
    assert.equal(r.statusCode, 401);
    // a job-token endpoint of the API: the job's project only
    r = await ctx.app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/jobs`, headers: { 'job-token': token } });
    assert.equal(r.statusCode, 200);
    assert.ok(json(r).some((j: { id: number }) => j.id === id));
    const other = await ctx.seed.project({ path: 'not-the-job', name: 'Not The Job', visibility: 'public' });
    r = await ctx.app.inject({ method: 'GET', url: `/api/v4/projects/${other.id}/jobs`, headers: { 'job-token': token } });
    assert.equal(r.statusCode, 404);
    assert.deepEqual(json(r), { message: '404 Project Not Found' });
    // finished: the token authenticates nothing
    assert.equal((await put(id, { token, state: 'success' })).statusCode, 200);
    r = await ctx.app.inject({ method: 'GET', url: '/api/v4/job', headers: { 'job-token': token } });
    assert.equal(r.statusCode, 401);
    assert.deepEqual(json(r), { message: '401 Unauthorized' });
    r = await ctx.app.inject({ method: 'GET', url: '/api/v4/job', headers: { 'job-token': 'glcbt-never-issued' } });
    assert.equal(r.statusCode, 401);
  });

  test('bad inputs: info and session must be hashes, ids integers; an unknown job is 403 on every job endpoint', async () => {
    const { token } = await seedRunner(ctx.c);
    let r = await ctx.app.inject({ method: 'POST', url: '/api/v4/jobs/request', payload: { token, info: 'linux' } });
    assert.equal(r.statusCode, 400);
    assert.deepEqual(json(r), { error: 'info is invalid' });
    r = await ctx.app.inject({ method: 'POST', url: '/api/v4/jobs/request', payload: { token, session: ['x'] } });
    assert.equal(r.statusCode, 400);
    assert.deepEqual(json(r), { error: 'session is invalid' });
    r = await ctx.app.inject({ method: 'POST', url: '/api/v4/jobs/request', payload: { token: [token] } });
    assert.equal(r.statusCode, 400);
    assert.deepEqual(json(r), { error: 'token is invalid' });
    r = await ctx.app.inject({ method: 'POST', url: '/api/v4/jobs/request', headers: { 'content-type': 'application/json' }, payload: '{"token":' });
    assert.equal(r.statusCode, 400);
    r = await ctx.app.inject({ method: 'PATCH', url: '/api/v4/jobs/abc/trace', headers: { 'content-range': '0-1', 'job-token': 'glcbt-x' }, payload: 'x' });
    assert.equal(r.statusCode, 400);
    assert.deepEqual(json(r), { error: 'id is invalid' });
    r = await patchTrace(987_654, 'glcbt-x', '0-1', 'x');
    assert.equal(r.statusCode, 403);
    assert.deepEqual(json(r), { message: '403 Forbidden' });
    r = await put(987_654, { token: 'glcbt-x', state: 'success' });
    assert.equal(r.statusCode, 403);
    // a job token in place of the runner's: no runner
    const { token: jobToken } = await takeJob('not-a-runner');
    r = await request(jobToken);
    assert.equal(r.statusCode, 403);
    // a runner token in place of the job's: no job
    const runner = await seedRunner(ctx.c);
    const { id } = await takeJob('wrong-token-kind');
    r = await put(id, { token: runner.token, state: 'success' });
    assert.equal(r.statusCode, 403);
    assert.equal((await row(id)).status, 'running');
  });

  test('a job taken for a runner that hung up before the answer goes back to the queue, its token void', async () => {
    const { id, token } = await takeJob('requeued');
    await ctx.c.ci.jobs.requeue(await row(id));
    const back = await row(id);
    assert.deepEqual([back.status, back.runner_id, back.token_digest, back.started_at], ['pending', null, null, null]);
    assert.equal(await ctx.c.ci.jobs.resolveToken(token), null);
    assert.equal((await put(id, { token, state: 'success' })).statusCode, 403);
    const other = await seedRunner(ctx.c);
    const r = await request(other.token);
    assert.equal(r.statusCode, 201);
    assert.equal(json(r).id, id);
    assert.notEqual(json(r).token, token);
    // a second requeue of an older copy of the row changes nothing (lock_version)
    await ctx.c.ci.jobs.requeue(back);
    assert.equal((await row(id)).status, 'running');
  });

  test('job_age: only jobs queued at least that long ago', async () => {
    await clearQueue();
    const { token } = await seedRunner(ctx.c);
    const { jobs } = await seedPipeline(ctx.c, project, { sha }, [{ name: 'fresh' }]);
    let r = await request(token, { job_age: 60 });
    assert.equal(r.statusCode, 204);
    await ctx.c.db.kysely
      .updateTable('ci_builds')
      .set({ queued_at: new Date(Date.now() - 120_000).toISOString() })
      .where('id', '=', jobs[0].id)
      .execute();
    r = await request(token, { job_age: 60 });
    assert.equal(r.statusCode, 201);
    assert.equal(json(r).id, jobs[0].id);
    r = await request(token, { job_age: 'old' });
    assert.equal(r.statusCode, 400);
    assert.deepEqual(json(r), { error: 'job_age is invalid' });
  });

  test('with a real CI file: the runner takes the first stage, its success queues the next stage, whose runner then takes it', async () => {
    await clearQueue();
    const { seed, c } = ctx;
    const { project: p, dir } = await seed.repoProject({ namespace: (await c.resolve.namespaceById(project.namespace_id))!, path: 'staged', name: 'Staged' });
    const wt = workTree(hooks, dir);
    const head = wt
      .write('.service-ci.yml', 'stages: [build, test]\nbuild:\n  stage: build\n  script: [make]\ntest:\n  stage: test\n  script: [make test]\n')
      .commit('CI');
    wt.push();
    const pipeline = await c.ci.pipelines.create(p, userActor(user), { ref: 'main', source: 'api', sha: head });
    assert.ok(pipeline);
    const { token } = await seedRunner(c);
    await withWait(60_000, async () => {
      let r = await request(token);
      assert.equal(r.statusCode, 201);
      const build = json(r);
      assert.equal(build.job_info.name, 'build');
      assert.deepEqual(build.steps[0].script, ['make']);
      // the test job waits for the build stage: a second runner waits, and gets it once build succeeded
      const other = await seedRunner(c);
      const waiting = request(other.token);
      await untilWaiting(1);
      assert.equal((await put(build.id, { token: build.token, state: 'success' })).statusCode, 200);
      r = await waiting;
      assert.equal(r.statusCode, 201);
      const test2 = json(r);
      assert.equal(test2.job_info.name, 'test');
      assert.equal((await put(test2.id, { token: test2.token, state: 'failed', failure_reason: 'script_failure' })).statusCode, 200);
    });
    const after = await c.db.kysely.selectFrom('ci_pipelines').select('status').where('id', '=', pipeline!.id).executeTakeFirstOrThrow();
    assert.equal(after.status, 'failed');
  });
});
