// Merge request pipelines of merge requests from forks (GitLab's MergeRequests::CreatePipelineService
// #pipeline_project_and_ref). An outside contributor's merge request gets its detached pipeline in the fork, on the
// source branch, as the contributor: its jobs name the target in CI_MERGE_REQUEST_PROJECT_* and the fork in
// CI_MERGE_REQUEST_SOURCE_PROJECT_*, the runner fetches the branch from the fork with its job token; head_pipeline
// and the merge request's pipelines show it, and "merge when pipeline succeeds" merges after it succeeds. Someone who
// may run pipelines in neither project gets none (403 through the API). A Maintainer of the target running it
// (POST …/merge_requests/:iid/pipelines) gets it in the target project on refs/merge-requests/<iid>/head, unless
// the target keeps fork pipelines out (ci_allow_fork_pipelines_to_run_in_parent_project).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EXTERNAL_URL, ROOT_TOKEN } from '../../helpers/build-app.ts';
import { cloneUrl, startTestServer } from '../../helpers/server.ts';
import { MR_PIPELINE_CI as CI, pushedCi, pushOver, runPendingJobs, seedRunner, type TakenJob } from '../../helpers/ci.ts';
import { bareGit, runGit, tmpDir, workTree } from '../../helpers/git.ts';
import { MergeRequestPipelineJob } from '../../../src/domain/merge-requests/mr-pipelines.ts';

const json = (r: { body: string }) => JSON.parse(r.body);

/**
 * A public project grp/app (its CI file pushed by root; a Maintainer and a Reporter), an outside contributor's fork
 * of it with a feature branch pushed over HTTP, and the contributor's merge request from it, opened.
 */
async function forkWorld(t: Parameters<typeof startTestServer>[0]) {
  const s = await startTestServer(t, { jobRequestTimeoutMs: 0 });
  const { app, c, seed, base } = s;
  const g = await seed.group({ path: 'grp', visibility: 'public' });
  const { project: target, dir } = await seed.repoProject({ namespace: g, path: 'app', visibility: 'public' });
  await pushedCi(t, { base, dir, fullPath: 'grp/app', user: 'root', secret: ROOT_TOKEN }, CI);
  const users = {
    carla: await seed.user({ username: 'carla' }),
    mae: await seed.user({ username: 'mae' }),
    rory: await seed.user({ username: 'rory' }),
    rita: await seed.user({ username: 'rita' }),
  };
  await seed.member({ group: g }, users.mae, 40);
  await seed.member({ group: g }, users.rory, 20);
  const tokens = {
    carla: await seed.token(users.carla),
    mae: await seed.token(users.mae),
    rory: await seed.token(users.rory),
    rita: await seed.token(users.rita),
  };
  const as = { carla: tokens.carla.headers, mae: tokens.mae.headers, rory: tokens.rory.headers, rita: tokens.rita.headers };

  const forked = await app.inject({ method: 'POST', url: `/api/v4/projects/${target.id}/fork`, headers: as.carla, payload: {} });
  assert.equal(forked.statusCode, 201, forked.body);
  const fork = await c.db.kysely.selectFrom('projects').selectAll().where('id', '=', json(forked).id).executeTakeFirstOrThrow();
  assert.equal(json(forked).path_with_namespace, 'carla/app');
  const w = workTree(t, c.repos.pathOf(fork));
  w.git(['remote', 'set-url', 'origin', cloneUrl(base, 'carla/app', 'carla', tokens.carla.token)]);
  w.checkout('feature', true);
  const head = w.write('f.txt', 'from the fork\n').commit('fork work');
  await pushOver(w, 'feature');
  const jobs = c.merges.deps.jobs;
  await jobs.round('merge_request_refresh');

  const created = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${fork.id}/merge_requests`,
    headers: as.carla,
    payload: { source_branch: 'feature', target_branch: 'main', target_project_id: target.id, title: 'From the fork' },
  });
  assert.equal(created.statusCode, 201, created.body);
  const mr = json(created);
  await jobs.round('merge_request_pipeline');
  const pipelinesOf = (projectId: number) => c.db.kysely.selectFrom('ci_pipelines').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
  const mrUrl = `/api/v4/projects/${target.id}/merge_requests/${mr.iid}`;
  return { ...s, g, target, dir, fork, users, as, head, mr, mrUrl, jobs, pipelinesOf };
}

/** The variables of a job's payload as a map. */
const variablesOf = (job: TakenJob) => Object.fromEntries(job.payload.variables.map((v: { key: string; value: string }) => [v.key, v.value]));

test('from a fork: the pipeline runs in the fork on its source branch as the contributor; head_pipeline, the list, the runner, merge when pipeline succeeds; none for who may not run it', async (t) => {
  const w = await forkWorld(t);
  const { app, c, target, dir, fork, users, as, head, mr, mrUrl, jobs, pipelinesOf } = w;

  // the fork's pipelines: the push's branch pipeline (branch-only), then the merge request's (test)
  const inFork = await pipelinesOf(fork.id);
  assert.deepEqual(
    inFork.map((p) => [p.ref, p.tag, p.source, p.merge_request_id, p.sha, p.user_id, p.status]),
    [
      ['feature', 0, 'push', null, head, users.carla.id, 'pending'],
      ['feature', 0, 'merge_request_event', mr.id, head, users.carla.id, 'pending'],
    ],
  );
  const [branch, mrPipeline] = inFork as [(typeof inFork)[0], (typeof inFork)[0]];
  const jobNames = async (pipelineId: number) =>
    (await c.db.kysely.selectFrom('ci_builds').select(['name', 'project_id']).where('pipeline_id', '=', pipelineId).execute()).map((j) => [
      j.name,
      j.project_id,
    ]);
  assert.deepEqual(await jobNames(branch.id), [['branch-only', fork.id]]);
  assert.deepEqual(await jobNames(mrPipeline.id), [['test', fork.id]]);
  // none in the target: the contributor may not create pipelines there
  const inTarget = await pipelinesOf(target.id);
  assert.deepEqual(
    inTarget.map((p) => [p.ref, p.source, p.merge_request_id]),
    [['main', 'push', null]],
  );

  // head_pipeline: the fork's merge request pipeline, with the fork's URLs, for the target's Maintainer and for the
  // contributor (the target is public)
  const webUrl = `${EXTERNAL_URL}/carla/app/-/pipelines/${mrPipeline.id}`;
  for (const who of [as.mae, as.carla]) {
    const got = json(await app.inject({ method: 'GET', url: mrUrl, headers: who }));
    assert.deepEqual(
      [got.head_pipeline.id, got.head_pipeline.project_id, got.head_pipeline.ref, got.head_pipeline.source, got.head_pipeline.web_url],
      [mrPipeline.id, fork.id, 'feature', 'merge_request_event', webUrl],
    );
    assert.deepEqual([got.pipeline.id, got.pipeline.web_url], [mrPipeline.id, webUrl]);
    assert.equal(got.head_pipeline.user.username, 'carla');
    // the merge request's pipelines: its own first, then the source branch's, in the fork
    const list = await app.inject({ method: 'GET', url: `${mrUrl}/pipelines`, headers: who });
    assert.equal(list.statusCode, 200, list.body);
    assert.deepEqual(
      json(list).map((p: { id: number; project_id: number; ref: string; source: string; web_url: string }) => [p.id, p.project_id, p.ref, p.source, p.web_url]),
      [
        [mrPipeline.id, fork.id, 'feature', 'merge_request_event', webUrl],
        [branch.id, fork.id, 'feature', 'push', `${EXTERNAL_URL}/carla/app/-/pipelines/${branch.id}`],
      ],
    );
  }

  // who may run pipelines in neither project: 403 through the API, none from the worker; nothing written
  const count = async () => (await c.db.kysely.selectFrom('ci_pipelines').select('id').execute()).length;
  const before = await count();
  for (const who of [as.rory, as.rita]) {
    const denied = await app.inject({ method: 'POST', url: `${mrUrl}/pipelines`, headers: who });
    assert.equal(denied.statusCode, 403, denied.body);
    assert.deepEqual(json(denied), { message: '403 Forbidden' });
  }
  await MergeRequestPipelineJob.queue(c.db.kysely, { mergeRequestId: mr.id, userId: users.rita.id });
  await jobs.round('merge_request_pipeline');
  assert.equal(await count(), before);

  // the runner of the fork: the merge request's variables (the target as the project, the fork as the source), the
  // fork's repository and its branch
  const { token } = await seedRunner(c, { projects: [fork] });
  const [job] = await runPendingJobs({ app, c }, token, (j) => (j.pipelineId === mrPipeline.id ? null : 'success'));
  assert.equal(job!.pipelineId, mrPipeline.id);
  const vars = variablesOf(job!);
  assert.deepEqual(Object.fromEntries(Object.entries(vars).filter(([k]) => k.startsWith('CI_MERGE_REQUEST_'))), {
    CI_MERGE_REQUEST_ID: String(mr.id),
    CI_MERGE_REQUEST_IID: String(mr.iid),
    CI_MERGE_REQUEST_REF_PATH: `refs/merge-requests/${mr.iid}/head`,
    CI_MERGE_REQUEST_PROJECT_ID: String(target.id),
    CI_MERGE_REQUEST_PROJECT_PATH: 'grp/app',
    CI_MERGE_REQUEST_PROJECT_URL: `${EXTERNAL_URL}/grp/app`,
    CI_MERGE_REQUEST_TARGET_BRANCH_NAME: 'main',
    CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: 'feature',
    CI_MERGE_REQUEST_SOURCE_PROJECT_ID: String(fork.id),
    CI_MERGE_REQUEST_SOURCE_PROJECT_PATH: 'carla/app',
    CI_MERGE_REQUEST_SOURCE_PROJECT_URL: `${EXTERNAL_URL}/carla/app`,
    CI_MERGE_REQUEST_TITLE: 'From the fork',
    CI_MERGE_REQUEST_DESCRIPTION: '',
    CI_MERGE_REQUEST_EVENT_TYPE: 'detached',
    CI_MERGE_REQUEST_DIFF_BASE_SHA: (await c.db.kysely.selectFrom('merge_requests').select('diff_base_sha').where('id', '=', mr.id).executeTakeFirstOrThrow())
      .diff_base_sha!,
  });
  assert.deepEqual(
    [vars.CI_PROJECT_PATH, vars.CI_PIPELINE_SOURCE, vars.CI_COMMIT_REF_NAME, vars.CI_COMMIT_BRANCH, vars.CI_COMMIT_SHA, vars.GITLAB_USER_LOGIN],
    ['carla/app', 'merge_request_event', 'feature', undefined, head, 'carla'],
  );
  const git = job!.payload.git_info;
  assert.deepEqual([git.ref, git.ref_type, git.sha, git.refspecs], ['feature', 'branch', head, ['+refs/heads/feature:refs/remotes/origin/feature']]);
  const repoUrl = new URL(git.repo_url);
  assert.deepEqual([repoUrl.username, repoUrl.pathname], ['gitlab-ci-token', '/carla/app.git']);
  // what the runner fetches, with the job's token, from the fork's repository on this server
  const clone = tmpDir(t);
  await runGit(clone, ['init', '-q']);
  await runGit(clone, ['fetch', '-q', cloneUrl(w.base, 'carla/app', 'gitlab-ci-token', job!.payload.token), ...git.refspecs]);
  assert.equal((await runGit(clone, ['rev-parse', 'refs/remotes/origin/feature'])).stdout.trim(), head);

  // merge when pipeline succeeds, set by the target's Maintainer: waits while the fork's pipeline runs, merges after
  const mwps = await app.inject({ method: 'PUT', url: `${mrUrl}/merge`, headers: as.mae, payload: { merge_when_pipeline_succeeds: true } });
  assert.equal(mwps.statusCode, 200, mwps.body);
  assert.deepEqual([json(mwps).state, json(mwps).merge_when_pipeline_succeeds], ['opened', true]);
  const done = await app.inject({ method: 'PUT', url: `/api/v4/jobs/${job!.payload.id}`, payload: { token: job!.payload.token, state: 'success' } });
  assert.equal(done.statusCode, 200, done.body);
  assert.equal((await c.db.kysely.selectFrom('ci_pipelines').select('status').where('id', '=', mrPipeline.id).executeTakeFirstOrThrow()).status, 'success');
  const merged = await c.db.kysely.selectFrom('merge_requests').selectAll().where('id', '=', mr.id).executeTakeFirstOrThrow();
  assert.deepEqual([merged.state, merged.merge_when_pipeline_succeeds, merged.merge_user_id], ['merged', 0, users.mae.id]);
  assert.equal(bareGit(dir, ['show', 'refs/heads/main:f.txt']), 'from the fork\n');
});

test("from a fork, run by the target's Maintainer: the pipeline runs in the target on refs/merge-requests/<iid>/head, becomes the head pipeline and settles auto-merge; not when the target keeps fork pipelines out", async (t) => {
  const w = await forkWorld(t);
  const { app, c, target, fork, users, as, head, mr, mrUrl, pipelinesOf } = w;
  const [forkPipeline] = (await pipelinesOf(fork.id)).filter((p) => p.merge_request_id === mr.id);

  // POST …/pipelines by the target's Maintainer (no member of the fork): in the target, as the Maintainer
  const made = await app.inject({ method: 'POST', url: `${mrUrl}/pipelines`, headers: as.mae });
  assert.equal(made.statusCode, 200, made.body);
  const body = json(made);
  assert.deepEqual(
    [body.project_id, body.ref, body.sha, body.source, body.user.username, body.web_url],
    [target.id, `refs/merge-requests/${mr.iid}/head`, head, 'merge_request_event', 'mae', `${EXTERNAL_URL}/grp/app/-/pipelines/${body.id}`],
  );
  const row = await c.db.kysely.selectFrom('ci_pipelines').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
  assert.deepEqual([row.project_id, row.merge_request_id, row.user_id, row.tag], [target.id, mr.id, users.mae.id, 0]);
  // the fork's branch is in the target, where the runner fetches it
  assert.equal(await c.repos.repository(target).resolveCommit(`refs/merge-requests/${mr.iid}/head`), head);
  // the newest merge request pipeline is the head pipeline; the list holds both merge request pipelines first
  const got = json(await app.inject({ method: 'GET', url: mrUrl, headers: as.mae }));
  assert.deepEqual([got.head_pipeline.id, got.head_pipeline.project_id], [body.id, target.id]);
  const list = json(await app.inject({ method: 'GET', url: `${mrUrl}/pipelines`, headers: as.mae }));
  assert.deepEqual(
    list.map((p: { id: number; project_id: number; source: string }) => [p.id, p.project_id, p.source]),
    [
      [body.id, target.id, 'merge_request_event'],
      [forkPipeline!.id, fork.id, 'merge_request_event'],
      [(await pipelinesOf(fork.id))[0]!.id, fork.id, 'push'],
    ],
  );

  // the contributor running it: in the fork, as before
  const mine = await app.inject({ method: 'POST', url: `${mrUrl}/pipelines`, headers: as.carla });
  assert.equal(mine.statusCode, 200, mine.body);
  assert.deepEqual(
    [json(mine).project_id, json(mine).ref, json(mine).user.username, json(mine).web_url],
    [fork.id, 'feature', 'carla', `${EXTERNAL_URL}/carla/app/-/pipelines/${json(mine).id}`],
  );

  // the target keeping fork pipelines out: its Maintainer's run falls back to the fork, where they may not run it
  const setting = (on: boolean) =>
    app.inject({ method: 'PUT', url: `/api/v4/projects/${target.id}`, headers: as.mae, payload: { ci_allow_fork_pipelines_to_run_in_parent_project: on } });
  const off = await setting(false);
  assert.equal(off.statusCode, 200, off.body);
  assert.equal(json(off).ci_allow_fork_pipelines_to_run_in_parent_project, false);
  const count = async () => (await c.db.kysely.selectFrom('ci_pipelines').select('id').execute()).length;
  const before = await count();
  const refused = await app.inject({ method: 'POST', url: `${mrUrl}/pipelines`, headers: as.mae });
  assert.equal(refused.statusCode, 403, refused.body);
  assert.equal(await count(), before);
  assert.equal((await setting(true)).statusCode, 200);

  // the target's runner gets the target's merge request ref; auto-merge waits for the head pipeline, now the
  // contributor's newer one in the fork: the target's succeeding does not merge, the fork's does
  const targetRunner = (await seedRunner(c, { projects: [target] })).token;
  const forkRunner = (await seedRunner(c, { projects: [fork] })).token;
  const [targetJob] = await runPendingJobs({ app, c }, targetRunner, (j) => (j.pipelineId === body.id ? null : 'success'));
  assert.deepEqual(targetJob!.payload.git_info.refspecs, [`+refs/merge-requests/${mr.iid}/head:refs/merge-requests/${mr.iid}/head`]);
  assert.equal(new URL(targetJob!.payload.git_info.repo_url).pathname, '/grp/app.git');
  const targetVars = variablesOf(targetJob!);
  assert.deepEqual(
    [targetVars.CI_PROJECT_PATH, targetVars.CI_MERGE_REQUEST_PROJECT_PATH, targetVars.CI_MERGE_REQUEST_SOURCE_PROJECT_PATH, targetVars.GITLAB_USER_LOGIN],
    ['grp/app', 'grp/app', 'carla/app', 'mae'],
  );
  const mwps = await app.inject({ method: 'PUT', url: `${mrUrl}/merge`, headers: as.mae, payload: { merge_when_pipeline_succeeds: true } });
  assert.equal(mwps.statusCode, 200, mwps.body);
  assert.deepEqual([json(mwps).state, json(mwps).merge_when_pipeline_succeeds], ['opened', true]);
  const done = await app.inject({
    method: 'PUT',
    url: `/api/v4/jobs/${targetJob!.payload.id}`,
    payload: { token: targetJob!.payload.token, state: 'success' },
  });
  assert.equal(done.statusCode, 200, done.body);
  const waiting = await c.db.kysely.selectFrom('merge_requests').selectAll().where('id', '=', mr.id).executeTakeFirstOrThrow();
  assert.deepEqual([waiting.state, waiting.merge_when_pipeline_succeeds], ['opened', 1]);
  await runPendingJobs({ app, c }, forkRunner, () => 'success');
  const merged = await c.db.kysely.selectFrom('merge_requests').selectAll().where('id', '=', mr.id).executeTakeFirstOrThrow();
  assert.deepEqual([merged.state, merged.merge_when_pipeline_succeeds, merged.merge_user_id], ['merged', 0, users.mae.id]);
});
