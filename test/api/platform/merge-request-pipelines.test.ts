// Merge request pipelines: a .gitlab-ci.yml whose rules allow merge request events gets a detached pipeline
// (source merge_request_event, ref refs/merge-requests/<iid>/head) when the merge request opens and when its source
// branch moves; head_pipeline and the merge request's pipelines list show it; the runner gets the merge request's
// variables and ref; "merge when pipeline succeeds" merges only after the pipeline succeeded, and a failed one
// aborts it and, when the project requires pipelines to succeed, blocks the merge (405).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN } from '../../helpers/build-app.ts';
import { startTestServer } from '../../helpers/server.ts';
import { runGit } from '../../helpers/git.ts';
import { MR_PIPELINE_CI as CI, pushedCi, pushOver, runPendingJobs, seedRunner } from '../../helpers/ci.ts';

test('detached merge request pipelines, head_pipeline, the runner payload, merge when pipeline succeeds', async (t) => {
  const { app, c, seed, base } = await startTestServer(t, { jobRequestTimeoutMs: 0 });
  const root = { 'private-token': ROOT_TOKEN };
  const json = (r: { body: string }) => JSON.parse(r.body);
  const g = await seed.group({ path: 'grp' });
  const { project, dir } = await seed.repoProject({ namespace: g, path: 'app' });
  // pushes over HTTP, as a user's, and asynchronous (the server is this process): they make push events
  const w = await pushedCi(t, { base, dir, fullPath: 'grp/app', user: 'root', secret: ROOT_TOKEN }, CI);
  w.checkout('feature', true);
  const first = w.write('f.txt', '1\n').commit('feature work');
  await pushOver(w, 'feature');
  const jobs = c.merges.deps.jobs;
  await jobs.round('merge_request_refresh');
  const pipelines = () => c.db.kysely.selectFrom('ci_pipelines').selectAll().where('project_id', '=', project.id).orderBy('id').execute();
  // the branch pipeline of the push: branch-only (no rules), not test (neither rule matches a feature branch)
  const branch = (await pipelines()).at(-1)!;
  assert.deepEqual([branch.ref, branch.source, branch.merge_request_id], ['feature', 'push', null]);

  const created = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/merge_requests`,
    headers: root,
    payload: { source_branch: 'feature', target_branch: 'main', title: 'Feature' },
  });
  assert.equal(created.statusCode, 201, created.body);
  const mr = json(created);
  await jobs.round('merge_request_pipeline');
  const mrPipeline = (await pipelines()).at(-1)!;
  assert.deepEqual(
    [mrPipeline.ref, mrPipeline.source, mrPipeline.merge_request_id, mrPipeline.sha, mrPipeline.status],
    [`refs/merge-requests/${mr.iid}/head`, 'merge_request_event', mr.id, first, 'pending'],
  );
  const mrJobs = await c.db.kysely.selectFrom('ci_builds').select(['name']).where('pipeline_id', '=', mrPipeline.id).execute();
  assert.deepEqual(
    mrJobs.map((j) => j.name),
    ['test'],
  );
  // the head ref exists for the runner to fetch
  assert.equal((await c.repos.repository(project).resolveCommit(`refs/merge-requests/${mr.iid}/head`)) ?? null, first);

  // head_pipeline is the merge request pipeline (newest at the head); the list holds both
  const got = json(await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/merge_requests/${mr.iid}`, headers: root }));
  assert.equal(got.head_pipeline.id, mrPipeline.id);
  assert.equal(got.head_pipeline.source, 'merge_request_event');
  const list = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/merge_requests/${mr.iid}/pipelines`, headers: root });
  assert.deepEqual(
    json(list).map((p: { id: number; ref: string; source: string }) => [p.id, p.ref, p.source]),
    [
      [mrPipeline.id, `refs/merge-requests/${mr.iid}/head`, 'merge_request_event'],
      [branch.id, 'feature', 'push'],
    ],
  );
  assert.deepEqual(Object.keys(json(list)[0]).sort(), ['created_at', 'id', 'iid', 'project_id', 'ref', 'sha', 'source', 'status', 'updated_at', 'web_url']);

  // the runner: the merge request's variables, its ref fetched, no CI_COMMIT_BRANCH
  const { token } = await seedRunner(c, { projects: [project] });
  // the older pipelines' jobs (main's and the branch's) go first: finished as they come
  const mrJob = await c.db.kysely.selectFrom('ci_builds').select('id').where('pipeline_id', '=', mrPipeline.id).executeTakeFirstOrThrow();
  const [left] = await runPendingJobs({ app, c }, token, (j) => (j.payload.id === mrJob.id ? null : 'success'));
  const job = left!.payload;
  assert.equal(job.id, mrJob.id);
  assert.equal(job.job_info.name, 'test');
  const vars = Object.fromEntries(job.variables.map((v: { key: string; value: string }) => [v.key, v.value]));
  assert.equal(vars.CI_PIPELINE_SOURCE, 'merge_request_event');
  assert.equal(vars.CI_MERGE_REQUEST_IID, String(mr.iid));
  assert.equal(vars.CI_MERGE_REQUEST_SOURCE_BRANCH_NAME, 'feature');
  assert.equal(vars.CI_MERGE_REQUEST_TARGET_BRANCH_NAME, 'main');
  assert.equal(vars.CI_MERGE_REQUEST_EVENT_TYPE, 'detached');
  assert.equal(vars.CI_COMMIT_REF_NAME, 'feature');
  assert.equal(vars.CI_COMMIT_BRANCH, undefined);
  assert.deepEqual(job.git_info.refspecs, [`+refs/merge-requests/${mr.iid}/head:refs/merge-requests/${mr.iid}/head`]);

  // merge when pipeline succeeds: waits while the head pipeline runs
  const mwps = await app.inject({
    method: 'PUT',
    url: `/api/v4/projects/${project.id}/merge_requests/${mr.iid}/merge`,
    headers: root,
    payload: { merge_when_pipeline_succeeds: true },
  });
  assert.equal(mwps.statusCode, 200, mwps.body);
  assert.deepEqual([json(mwps).state, json(mwps).merge_when_pipeline_succeeds], ['opened', true]);
  // the pipeline succeeds: merged
  const done = await app.inject({ method: 'PUT', url: `/api/v4/jobs/${job.id}`, payload: { token: job.token, state: 'success' } });
  assert.equal(done.statusCode, 200);
  const merged = await c.db.kysely.selectFrom('merge_requests').selectAll().where('id', '=', mr.id).executeTakeFirstOrThrow();
  assert.deepEqual([merged.state, merged.merge_when_pipeline_succeeds], ['merged', 0]);
  assert.equal((await c.db.kysely.selectFrom('ci_pipelines').select('status').where('id', '=', mrPipeline.id).executeTakeFirstOrThrow()).status, 'success');

  // a second merge request, the project requiring pipelines to succeed: a push makes a new merge request pipeline,
  // which fails — the auto-merge is aborted with GitLab's note, and the merge is refused
  await app.inject({ method: 'PUT', url: `/api/v4/projects/${project.id}`, headers: root, payload: { only_allow_merge_if_pipeline_succeeds: true } });
  w.checkout('main');
  await runGit(w.dir, ['pull', '-q', 'origin', 'main']);
  w.checkout('second', true);
  w.write('s.txt', '1\n').commit('second');
  await pushOver(w, 'second');
  await jobs.round('merge_request_refresh');
  const second = json(
    await app.inject({
      method: 'POST',
      url: `/api/v4/projects/${project.id}/merge_requests`,
      headers: root,
      payload: { source_branch: 'second', target_branch: 'main', title: 'Second' },
    }),
  );
  await jobs.round('merge_request_pipeline');
  const head2 = w.write('s.txt', '2\n').commit('second, again');
  await pushOver(w, 'second');
  await jobs.round('merge_request_refresh');
  await jobs.round('merge_request_pipeline');
  const mine = (await pipelines()).filter((p) => p.merge_request_id === second.id);
  assert.deepEqual(
    mine.map((p) => p.sha),
    [mine[0]!.sha, head2],
    'one merge request pipeline on open, one after the push',
  );
  const latest = mine.at(-1)!;
  const wait = await app.inject({
    method: 'PUT',
    url: `/api/v4/projects/${project.id}/merge_requests/${second.iid}/merge`,
    headers: root,
    payload: { merge_when_pipeline_succeeds: true },
  });
  assert.equal(json(wait).merge_when_pipeline_succeeds, true);
  // take every pending job; the latest merge request pipeline's fails
  await runPendingJobs({ app, c }, token, (j) => (j.pipelineId === latest.id ? 'failed' : 'success'));
  const aborted = await c.db.kysely.selectFrom('merge_requests').selectAll().where('id', '=', second.id).executeTakeFirstOrThrow();
  assert.deepEqual([aborted.state, aborted.merge_when_pipeline_succeeds], ['opened', 0]);
  const note = await c.db.kysely
    .selectFrom('notes')
    .select(['body', 'system'])
    .where('noteable_id', '=', second.id)
    .where('noteable_type', '=', 'MergeRequest')
    .execute();
  assert.deepEqual(note, [{ body: 'aborted the automatic merge because the pipeline failed', system: 1 }]);
  const refused = await app.inject({ method: 'PUT', url: `/api/v4/projects/${project.id}/merge_requests/${second.iid}/merge`, headers: root });
  assert.equal(refused.statusCode, 405);
  assert.deepEqual(json(refused), { message: '405 Method Not Allowed' });
  const status = json(await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/merge_requests/${second.iid}`, headers: root }));
  assert.equal(status.detailed_merge_status, 'ci_must_pass');

  // POST …/pipelines: a new merge request pipeline now
  const made = await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/merge_requests/${second.iid}/pipelines`, headers: root });
  assert.equal(made.statusCode, 200, made.body);
  assert.deepEqual([json(made).source, json(made).ref, json(made).sha], ['merge_request_event', `refs/merge-requests/${second.iid}/head`, head2]);
  // someone who may not run pipelines: 403; a merge request of no project of theirs: 404
  const guest = await seed.user({ username: 'guest' });
  await seed.member({ project }, guest, 10);
  const asGuest = (await seed.token(guest)).headers;
  const denied = await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/merge_requests/${second.iid}/pipelines`, headers: asGuest });
  assert.equal(denied.statusCode, 403);
  // `async`: 202 and no body; a job creates the pipeline (the guest's is refused at once)
  const later = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/merge_requests/${second.iid}/pipelines`,
    headers: root,
    payload: { async: true },
  });
  assert.deepEqual([later.statusCode, later.body], [202, '']);
  const deniedLater = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/merge_requests/${second.iid}/pipelines?async=true`,
    headers: asGuest,
  });
  assert.equal(deniedLater.statusCode, 403);
  await c.worker.drain();
  const newest = await c.db.kysely.selectFrom('ci_pipelines').selectAll().where('project_id', '=', project.id).orderBy('id', 'desc').executeTakeFirstOrThrow();
  assert.deepEqual(
    [newest.id > json(made).id, newest.source, newest.ref, newest.sha, newest.user_id],
    [true, 'merge_request_event', `refs/merge-requests/${second.iid}/head`, head2, 1],
  );
});
