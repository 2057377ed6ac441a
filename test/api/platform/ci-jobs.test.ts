// The jobs API: GET /projects/:id/jobs[/:job_id], the log, cancel, retry, play and erase — whole job
// records (commit, user, pipeline, runner, artifacts), who may do what, and the state afterwards.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { buildTestApp, EXTERNAL_URL, type TestApp } from '../../helpers/build-app.ts';
import { commitJson, workTree } from '../../helpers/git.ts';
import { seedPipeline, seedRunner } from '../../helpers/ci.ts';
import { inOneWindow } from '../../helpers/rate-window.ts';
import type { NamespaceRow, ProjectRow, UserRow } from '../../../src/db/schema.ts';

// one suite: the shared fixture of `before` lives from this file's first test to its last, also in a shard
describe('ci-jobs', () => {
  const json = (r: { body: string }) => JSON.parse(r.body);
  const later: (() => unknown)[] = [];
  const hooks = { after: (fn: () => unknown) => later.push(fn) };

  let ctx: TestApp;
  let g: NamespaceRow;
  let project: ProjectRow;
  let dir: string;
  let sha: string;
  const users: Record<string, UserRow> = {};
  const as: Record<string, Record<string, string>> = {};

  before(async () => {
    ctx = await buildTestApp(hooks, { jobRequestTimeoutMs: 0 });
    const { seed } = ctx;
    g = await seed.group({ path: 'grp', name: 'Grp' });
    ({ project, dir } = await seed.repoProject({ namespace: g, path: 'app', name: 'App', visibility: 'private' }));
    const wt = workTree(hooks, dir);
    sha = wt.write('a.txt', 'a').commit('First commit\n\nbody');
    wt.push();
    fs.rmSync(wt.dir, { recursive: true, force: true });
    for (const [name, level] of [
      ['guest', 10],
      ['reporter', 20],
      ['developer', 30],
      ['other_dev', 30],
      ['maintainer', 40],
    ] as const) {
      users[name] = await seed.user({ username: name, name: name.toUpperCase(), email: `${name}@example.com` });
      await seed.member({ group: g }, users[name], level);
      as[name] = (await seed.token(users[name])).headers;
    }
    users.stranger = await seed.user({ username: 'stranger' });
    as.stranger = (await seed.token(users.stranger)).headers;
  });

  after(async () => {
    for (const fn of later.reverse()) await fn();
  });

  const api = (method: 'GET' | 'POST' | 'PUT', url: string, headers: Record<string, string> = {}, payload?: unknown) =>
    ctx.app.inject({ method, url: `/api/v4${url}`, headers, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  const P = () => `/projects/${project.id}`;
  /** A record without what moves with the clock while a job is active. */
  const still = ({ queued_duration: _q, duration: _d, ...rest }: Record<string, unknown>) => rest;
  const row = (id: number) => ctx.c.db.kysely.selectFrom('ci_builds').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  async function setProjectSettings(p: ProjectRow, changes: Record<string, unknown>) {
    const current = await ctx.c.db.kysely.selectFrom('projects').select('settings').where('id', '=', p.id).executeTakeFirstOrThrow();
    await ctx.c.db.kysely
      .updateTable('projects')
      .set({ settings: JSON.stringify({ ...JSON.parse(current.settings), ...changes }) })
      .where('id', '=', p.id)
      .execute();
  }

  test('GET /projects/:id/jobs/:job_id: the whole job record (commit, user, pipeline, runner, runner manager, artifacts)', async () => {
    const { runner } = await seedRunner(ctx.c, { description: 'the runner', contacted_at: new Date().toISOString() });
    // one "now" for the three times: the durations between them are whole seconds
    const now = Date.now();
    const started = new Date(now - 90_000).toISOString();
    const finished = new Date(now - 30_000).toISOString();
    const created = new Date(now - 120_000).toISOString();
    const { pipeline, jobs } = await seedPipeline(ctx.c, project, { sha, user_id: users.developer.id, created_at: created }, [
      {
        name: 'build',
        stage: 'build',
        status: 'failed',
        runner_id: runner.id,
        tag_list: ['linux', 'docker'],
        started_at: started,
        finished_at: finished,
        allow_failure: true,
        artifacts_expire_at: '2030-01-01T00:00:00.000Z',
      },
    ]);
    const id = jobs[0].id;
    await ctx.c.db.kysely
      .updateTable('ci_builds')
      .set({ failure_reason: 'script_failure', runner_system_id: 's_abc', coverage: 98.5, queued_at: created })
      .where('id', '=', id)
      .execute();
    for (const [file_type, file_format, file_name, size] of [
      ['archive', 'zip', 'artifacts.zip', 1234],
      ['metadata', 'gzip', 'metadata.gz', 56],
      ['trace', 'raw', 'job.log', 78],
    ] as const) {
      await ctx.c.db.kysely
        .insertInto('ci_job_artifacts')
        .values({ project_id: project.id, job_id: id, file_type, file_format, file_name, size, store_key: `k/${id}/${file_type}`, created_at: finished })
        .execute();
    }
    const r = await api('GET', `${P()}/jobs/${id}`, as.reporter);
    assert.equal(r.statusCode, 200);
    const body = json(r);
    const me = await api('GET', `/users/${users.developer.id}`, as.reporter);
    const runnerRow = await ctx.c.db.kysely.selectFrom('ci_runners').selectAll().where('id', '=', runner.id).executeTakeFirstOrThrow();
    assert.deepEqual(body, {
      id,
      status: 'failed',
      stage: 'build',
      name: 'build',
      ref: 'main',
      tag: false,
      coverage: 98.5,
      allow_failure: true,
      created_at: created,
      started_at: started,
      finished_at: finished,
      erased_at: null,
      duration: 60,
      queued_duration: 30,
      user: json(me),
      commit: commitJson(dir, sha, `${EXTERNAL_URL}/grp/app`),
      pipeline: {
        id: pipeline.id,
        iid: pipeline.iid,
        project_id: project.id,
        sha,
        ref: 'main',
        status: pipeline.status,
        source: 'push',
        created_at: pipeline.created_at,
        updated_at: pipeline.updated_at,
        web_url: `${EXTERNAL_URL}/grp/app/-/pipelines/${pipeline.id}`,
      },
      failure_reason: 'script_failure',
      web_url: `${EXTERNAL_URL}/grp/app/-/jobs/${id}`,
      project: { ci_job_token_scope_enabled: false },
      artifacts_file: { filename: 'artifacts.zip', size: 1234 },
      artifacts: [
        { file_type: 'archive', size: 1234, filename: 'artifacts.zip', file_format: 'zip' },
        { file_type: 'metadata', size: 56, filename: 'metadata.gz', file_format: 'gzip' },
        { file_type: 'trace', size: 78, filename: 'job.log', file_format: 'raw' },
      ],
      runner: {
        id: runner.id,
        description: 'the runner',
        ip_address: '',
        active: true,
        paused: false,
        is_shared: true,
        runner_type: 'instance_type',
        name: null,
        online: true,
        created_at: runnerRow.created_at,
        status: 'online',
      },
      runner_manager: {
        id: runner.id,
        system_id: 's_abc',
        version: null,
        revision: null,
        platform: null,
        architecture: null,
        created_at: runnerRow.created_at,
        contacted_at: runnerRow.contacted_at,
        ip_address: null,
        status: 'online',
      },
      artifacts_expire_at: '2030-01-01T00:00:00.000Z',
      archived: false,
      tag_list: ['docker', 'linux'],
      download_url: `${EXTERNAL_URL}/grp/app/-/jobs/${id}/artifacts/download`,
    });
    // a job without runner, artifacts or failure: the optional parts go
    const { jobs: plain } = await seedPipeline(ctx.c, project, { sha: 'f'.repeat(40) }, [{ name: 'plain', status: 'pending' }]);
    const p = json(await api('GET', `${P()}/jobs/${plain[0].id}`, as.reporter));
    assert.equal(p.user, null);
    assert.equal(p.commit, null);
    assert.equal(p.runner, null);
    assert.equal(p.runner_manager, null);
    assert.equal(p.started_at, null);
    assert.equal(p.duration, null);
    assert.equal(typeof p.queued_duration, 'number');
    assert.deepEqual(p.artifacts, []);
    assert.equal(p.download_url, null);
    assert.ok(!('artifacts_file' in p));
    assert.ok(!('failure_reason' in p));
    assert.deepEqual(p.tag_list, []);
  });

  test('GET /projects/:id/jobs: newest first, scope filters, bridges left out, pagination without totals', async () => {
    const { seed } = ctx;
    const { project: q } = await seed.repoProject({ namespace: g, path: 'list', name: 'List' });
    const { jobs } = await seedPipeline(ctx.c, q, { sha }, [
      { name: 'a', status: 'success' },
      { name: 'b', status: 'failed' },
      { name: 'c', status: 'running' },
      { name: 'bridge', type: 'bridge', status: 'pending' },
      { name: 'd', status: 'pending' },
    ]);
    const ids = (r: { body: string }) => json(r).map((j: { id: number }) => j.id);
    const [a, b, c, , d] = jobs.map((j) => j.id);
    let r = await api('GET', `/projects/${q.id}/jobs`, as.reporter);
    assert.equal(r.statusCode, 200);
    assert.deepEqual(ids(r), [d, c, b, a]);
    assert.equal(r.headers['x-total'], undefined);
    assert.equal(r.headers['x-total-pages'], undefined);
    assert.equal(r.headers['x-per-page'], '20');
    assert.equal(r.headers['x-page'], '1');
    assert.equal(r.headers['x-next-page'], '');
    // the entity of the list is the entity of the job
    assert.deepEqual(json(r)[3], json(await api('GET', `/projects/${q.id}/jobs/${a}`, as.reporter)));
    r = await api('GET', `/projects/${q.id}/jobs?scope=failed`, as.reporter);
    assert.deepEqual(ids(r), [b]);
    r = await api('GET', `/projects/${q.id}/jobs?scope[]=success&scope[]=running`, as.reporter);
    assert.deepEqual(ids(r), [c, a]);
    r = await api('GET', `/projects/${q.id}/jobs?scope[0]=pending`, as.reporter);
    assert.deepEqual(ids(r), [d]);
    for (const bad of ['scope=nope', 'scope[]=success&scope[]=nope']) {
      r = await api('GET', `/projects/${q.id}/jobs?${bad}`, as.reporter);
      assert.equal(r.statusCode, 400);
      assert.deepEqual(json(r), { error: 'scope does not have a valid value' });
    }
    r = await api('GET', `/projects/${q.id}/jobs?per_page=2&page=1`, as.reporter);
    assert.deepEqual(ids(r), [d, c]);
    assert.equal(r.headers['x-next-page'], '2');
    assert.equal(
      r.headers.link,
      `<${EXTERNAL_URL}/api/v4/projects/${q.id}/jobs?id=${q.id}&page=2&per_page=2>; rel="next", <${EXTERNAL_URL}/api/v4/projects/${q.id}/jobs?id=${q.id}&page=1&per_page=2>; rel="first"`,
    );
    r = await api('GET', `/projects/${q.id}/jobs?per_page=2&page=2`, as.reporter);
    assert.deepEqual(ids(r), [b, a]);
    assert.equal(r.headers['x-next-page'], '');
    assert.equal(r.headers['x-prev-page'], '1');
    // retried jobs are listed, unless include_retried=false
    await ctx.c.db.kysely.updateTable('ci_builds').set({ retried: 1 }).where('id', '=', b).execute();
    assert.deepEqual(ids(await api('GET', `/projects/${q.id}/jobs`, as.reporter)), [d, c, b, a]);
    assert.deepEqual(ids(await api('GET', `/projects/${q.id}/jobs?include_retried=false`, as.reporter)), [d, c, a]);
  });

  test('reading jobs: signed-in only; Reporters of a private project; guests and others only with public_jobs and the jobs feature open; 404 for what is not there', async () => {
    const { seed } = ctx;
    const { jobs } = await seedPipeline(ctx.c, project, { sha }, [{ name: 'visible', status: 'success' }]);
    const id = jobs[0].id;
    let r = await api('GET', `${P()}/jobs`);
    assert.equal(r.statusCode, 401);
    assert.deepEqual(json(r), { message: '401 Unauthorized' });
    r = await api('GET', `${P()}/jobs/${id}`, as.stranger);
    assert.equal(r.statusCode, 404);
    assert.deepEqual(json(r), { message: '404 Project Not Found' });
    for (const who of ['reporter', 'developer', 'maintainer', 'guest']) {
      assert.equal((await api('GET', `${P()}/jobs/${id}`, as[who])).statusCode, 200, who);
    }
    assert.equal((await api('GET', `${P()}/jobs/${id}`, ctx.root)).statusCode, 200);
    // public_jobs off: guests no longer
    await setProjectSettings(project, { public_jobs: false });
    r = await api('GET', `${P()}/jobs/${id}`, as.guest);
    assert.equal(r.statusCode, 403);
    assert.deepEqual(json(r), { message: '403 Forbidden' });
    assert.equal((await api('GET', `${P()}/jobs/${id}`, as.reporter)).statusCode, 200);
    await setProjectSettings(project, { public_jobs: true });
    // jobs disabled: nobody
    await setProjectSettings(project, { builds_access_level: 'disabled' });
    r = await api('GET', `${P()}/jobs`, as.maintainer);
    assert.equal(r.statusCode, 403);
    await setProjectSettings(project, { builds_access_level: 'enabled' });
    // a public project: anyone signed in, unless public_jobs is off
    const pub = await seed.project({ namespace: g, path: 'pub', name: 'Pub', visibility: 'public' });
    const { jobs: pj } = await seedPipeline(ctx.c, pub, { sha }, [{ name: 'public-job' }]);
    assert.equal((await api('GET', `/projects/${pub.id}/jobs/${pj[0].id}`, as.stranger)).statusCode, 200);
    await setProjectSettings(pub, { public_jobs: false });
    assert.equal((await api('GET', `/projects/${pub.id}/jobs/${pj[0].id}`, as.stranger)).statusCode, 403);
    // not found: unknown, another project's, a bridge; a bad id
    for (const jid of [999_999, pj[0].id]) {
      r = await api('GET', `${P()}/jobs/${jid}`, as.reporter);
      assert.equal(r.statusCode, 404);
      assert.deepEqual(json(r), { message: '404 Not found' });
    }
    const { jobs: br } = await seedPipeline(ctx.c, project, { sha }, [{ name: 'trigger', type: 'bridge' }]);
    assert.equal((await api('GET', `${P()}/jobs/${br[0].id}`, as.reporter)).statusCode, 404);
    r = await api('GET', `${P()}/jobs/abc`, as.reporter);
    assert.equal(r.statusCode, 400);
    assert.deepEqual(json(r), { error: 'job_id is invalid' });
  });

  test('GET /projects/:id/jobs/:job_id/trace: the whole log as text/plain', async () => {
    const { jobs } = await seedPipeline(ctx.c, project, { sha }, [
      { name: 'logged', status: 'success' },
      { name: 'silent', status: 'success' },
    ]);
    const id = jobs[0].id;
    await ctx.c.db.kysely
      .insertInto('ci_build_trace_chunks')
      .values([
        { build_id: id, seq: 0, data: Buffer.from('line 1\n') },
        { build_id: id, seq: 1, data: Buffer.from('line 2 ✓\n') },
      ])
      .execute();
    let r = await api('GET', `${P()}/jobs/${id}/trace`, as.reporter);
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers['content-type'], 'text/plain');
    assert.equal(r.headers['content-disposition'], `infile; filename="${id}.log"`);
    assert.equal(r.body, 'line 1\nline 2 ✓\n');
    r = await api('GET', `${P()}/jobs/${jobs[1].id}/trace`, as.reporter);
    assert.equal(r.statusCode, 200);
    assert.equal(r.body, '');
    assert.equal((await api('GET', `${P()}/jobs/${id}/trace`, as.stranger)).statusCode, 404);
  });

  test('POST cancel: Developers; active jobs become canceled (201 with the job), finished ones stay', async () => {
    const { jobs } = await seedPipeline(ctx.c, project, { sha }, [
      { name: 'to-cancel', status: 'pending' },
      { name: 'done', status: 'success' },
    ]);
    let r = await api('POST', `${P()}/jobs/${jobs[0].id}/cancel`, as.reporter);
    assert.equal(r.statusCode, 403);
    assert.deepEqual(json(r), { message: '403 Forbidden' });
    r = await api('POST', `${P()}/jobs/${jobs[0].id}/cancel`, as.developer);
    assert.equal(r.statusCode, 201);
    const body = json(r);
    assert.equal(body.status, 'canceled');
    assert.deepEqual(still(body), still(json(await api('GET', `${P()}/jobs/${jobs[0].id}`, as.developer))));
    const after = await row(jobs[0].id);
    assert.equal(after.status, 'canceled');
    assert.ok(after.finished_at);
    r = await api('POST', `${P()}/jobs/${jobs[1].id}/cancel`, as.developer);
    assert.equal(r.statusCode, 201);
    assert.equal(json(r).status, 'success');
    // force: Maintainers only
    r = await api('POST', `${P()}/jobs/${jobs[1].id}/cancel`, as.developer, { force: true });
    assert.equal(r.statusCode, 403);
    assert.equal((await api('POST', `${P()}/jobs/999999/cancel`, as.developer)).statusCode, 404);
    // an archived project's jobs are read-only
    const arch = await ctx.seed.project({ namespace: g, path: 'arch', name: 'Arch', archived: true });
    const { jobs: aj } = await seedPipeline(ctx.c, arch, { sha }, [{ name: 'frozen', status: 'pending' }]);
    assert.equal((await api('GET', `/projects/${arch.id}/jobs/${aj[0].id}`, as.maintainer)).statusCode, 200);
    r = await api('POST', `/projects/${arch.id}/jobs/${aj[0].id}/cancel`, as.maintainer);
    assert.equal(r.statusCode, 403);
    assert.equal((await row(aj[0].id)).status, 'pending');
    await ctx.c.db.kysely.updateTable('ci_builds').set({ status: 'canceled' }).where('id', '=', aj[0].id).execute();
  });

  test('POST retry: a new pending job copying the old one, which is marked retried; only finished jobs, once', async () => {
    const { jobs } = await seedPipeline(ctx.c, project, { sha, user_id: users.developer.id }, [
      { name: 'flaky', stage: 'test', stage_idx: 1, status: 'failed', tag_list: ['linux'], options: { script: ['exit 1'] }, allow_failure: true },
      { name: 'busy', status: 'running' },
    ]);
    const old = jobs[0];
    let r = await api('POST', `${P()}/jobs/${old.id}/retry`, as.reporter);
    assert.equal(r.statusCode, 403);
    r = await api('POST', `${P()}/jobs/${old.id}/retry`, as.maintainer);
    assert.equal(r.statusCode, 201);
    const body = json(r);
    assert.notEqual(body.id, old.id);
    assert.deepEqual(still(body), still(json(await api('GET', `${P()}/jobs/${body.id}`, as.maintainer))));
    assert.deepEqual(
      [body.name, body.stage, body.status, body.allow_failure, body.tag_list, body.user.id, body.pipeline.id],
      ['flaky', 'test', 'pending', true, ['linux'], users.maintainer.id, old.pipeline_id],
    );
    const fresh = await row(body.id);
    assert.equal(fresh.options, old.options);
    assert.equal(fresh.stage_idx, 1);
    assert.equal(fresh.retried, 0);
    assert.ok(fresh.queued_at);
    assert.equal((await row(old.id)).retried, 1);
    // the old one again, or a running one: not retryable
    for (const id of [old.id, jobs[1].id]) {
      r = await api('POST', `${P()}/jobs/${id}/retry`, as.maintainer);
      assert.equal(r.statusCode, 403);
      assert.deepEqual(json(r), { message: '403 Forbidden - Job is not retryable' });
    }
    // a runner takes the new job
    const runner = await seedRunner(ctx.c, { tag_list: ['linux'] });
    await ctx.c.db.kysely.updateTable('ci_builds').set({ status: 'canceled' }).where('status', '=', 'pending').where('id', '!=', body.id).execute();
    r = await ctx.app.inject({ method: 'POST', url: '/api/v4/jobs/request', payload: { token: runner.token } });
    assert.equal(r.statusCode, 201);
    assert.equal(json(r).id, body.id);
  });

  test('POST play: a manual job is queued as the player (200); anything else is 400 Unplayable Job', async () => {
    const { jobs } = await seedPipeline(ctx.c, project, { sha }, [
      { name: 'deploy', status: 'manual', when: 'manual' },
      { name: 'auto', status: 'success' },
    ]);
    let r = await api('POST', `${P()}/jobs/${jobs[0].id}/play`, as.reporter);
    assert.equal(r.statusCode, 403);
    r = await api('POST', `${P()}/jobs/${jobs[0].id}/play`, as.developer, { job_variables_attributes: [{ key: 'TARGET', value: 'prod' }] });
    assert.equal(r.statusCode, 200);
    const body = json(r);
    assert.equal(body.status, 'pending');
    assert.equal(body.user.id, users.developer.id);
    const played = await row(jobs[0].id);
    assert.equal(played.status, 'pending');
    assert.deepEqual(JSON.parse(played.yaml_variables), [{ key: 'TARGET', value: 'prod', public: false }]);
    for (const id of [jobs[0].id, jobs[1].id]) {
      r = await api('POST', `${P()}/jobs/${id}/play`, as.developer);
      assert.equal(r.statusCode, 400);
      assert.deepEqual(json(r), { message: '400 Bad request - Unplayable Job' });
    }
  });

  test('POST erase: Maintainers or the Developer who ran it; the log and artifacts go, erased_at is set', async () => {
    const { jobs } = await seedPipeline(ctx.c, project, { sha, user_id: users.developer.id }, [
      { name: 'erase-me', status: 'success' },
      { name: 'nothing-to-erase', status: 'success' },
      { name: 'still-running', status: 'running' },
    ]);
    const id = jobs[0].id;
    await ctx.c.db.kysely
      .insertInto('ci_build_trace_chunks')
      .values({ build_id: id, seq: 0, data: Buffer.from('secret log\n') })
      .execute();
    await ctx.c.db.kysely.updateTable('ci_builds').set({ trace_size: 11 }).where('id', '=', id).execute();
    const key = `erase-test/${id}/archive.zip`;
    await ctx.c.store.put(key, Buffer.from('PK\x05\x06' + '\0'.repeat(18)));
    await ctx.c.db.kysely
      .insertInto('ci_job_artifacts')
      .values({
        project_id: project.id,
        job_id: id,
        file_type: 'archive',
        file_format: 'zip',
        file_name: 'artifacts.zip',
        size: 22,
        store_key: key,
        created_at: new Date().toISOString(),
      })
      .execute();
    assert.equal(json(await api('GET', `${P()}/jobs/${id}`, as.developer)).artifacts.length, 1);
    let r = await api('POST', `${P()}/jobs/${id}/erase`, as.other_dev);
    assert.equal(r.statusCode, 403);
    assert.deepEqual(json(r), { message: '403 Forbidden' });
    r = await api('POST', `${P()}/jobs/${id}/erase`, as.developer);
    assert.equal(r.statusCode, 201);
    const body = json(r);
    assert.ok(body.erased_at);
    assert.deepEqual(body, json(await api('GET', `${P()}/jobs/${id}`, as.developer)));
    assert.deepEqual(body.artifacts, []);
    assert.ok(!('artifacts_file' in body));
    assert.equal(body.download_url, null);
    const after = await row(id);
    assert.equal(after.trace_size, 0);
    assert.deepEqual(await ctx.c.db.kysely.selectFrom('ci_job_artifacts').select('id').where('job_id', '=', id).execute(), []);
    assert.equal((await api('GET', `${P()}/jobs/${id}/trace`, as.developer)).body, '');
    r = await api('POST', `${P()}/jobs/${id}/erase`, as.maintainer);
    assert.equal(r.statusCode, 403);
    assert.deepEqual(json(r), { message: '403 Forbidden - Job is not erasable!' });
    for (const j of [jobs[1], jobs[2]]) {
      r = await api('POST', `${P()}/jobs/${j.id}/erase`, as.maintainer);
      assert.equal(r.statusCode, 403);
      assert.deepEqual(json(r), { message: '403 Forbidden - Job is not erasable!' });
    }
  });

  test('failStale: a running job past its timeout fails with job_execution_timeout; a job pending for a day with stuck_or_timeout_failure', async () => {
    const long = new Date(Date.now() - 2 * 3600_000).toISOString();
    const { jobs } = await seedPipeline(ctx.c, project, { sha }, [
      { name: 'too-long', status: 'running', started_at: long },
      { name: 'in-time', status: 'running', started_at: new Date().toISOString() },
      { name: 'stuck', status: 'pending' },
    ]);
    await ctx.c.db.kysely.updateTable('ci_builds').set({ timeout: 3600 }).where('id', 'in', [jobs[0].id, jobs[1].id]).execute();
    await ctx.c.db.kysely
      .updateTable('ci_builds')
      .set({ queued_at: new Date(Date.now() - 25 * 3600_000).toISOString() })
      .where('id', '=', jobs[2].id)
      .execute();
    const n = await ctx.c.ci.jobs.failStale();
    assert.ok(n >= 2);
    const [a, b, c] = await Promise.all(jobs.map((j) => row(j.id)));
    assert.deepEqual([a.status, a.failure_reason], ['failed', 'job_execution_timeout']);
    assert.ok(a.finished_at);
    assert.deepEqual([b.status, b.failure_reason], ['running', null]);
    assert.deepEqual([c.status, c.failure_reason], ['failed', 'stuck_or_timeout_failure']);
  });

  test('GET /projects/:id/jobs is rate limited per user (project_jobs_api_rate_limit a minute)', async () => {
    const set = await api('PUT', '/application/settings', ctx.root, { project_jobs_api_rate_limit: 2 });
    assert.equal(set.statusCode, 200);
    try {
      // a minute's window aligned on the epoch: fresh users for each attempt
      await inOneWindow(60, async (n) => {
        const u = await ctx.seed.user({ username: n ? `limited-${n}` : 'limited' });
        await ctx.seed.member({ group: g }, u, 20);
        const h = (await ctx.seed.token(u)).headers;
        assert.equal((await api('GET', `${P()}/jobs`, h)).statusCode, 200);
        assert.equal((await api('GET', `${P()}/jobs`, h)).statusCode, 200);
        const r = await api('GET', `${P()}/jobs`, h);
        assert.equal(r.statusCode, 429);
        assert.deepEqual(json(r), { message: { error: 'This endpoint has been requested too many times. Try again later.' } });
        // another user has a window of their own
        const v = await ctx.seed.user({ username: n ? `limited-too-${n}` : 'limited-too' });
        await ctx.seed.member({ group: g }, v, 20);
        assert.equal((await api('GET', `${P()}/jobs`, (await ctx.seed.token(v)).headers)).statusCode, 200);
      });
    } finally {
      await api('PUT', '/application/settings', ctx.root, { project_jobs_api_rate_limit: 600 });
    }
  });
});
