// The CI pages' forms and endpoints through inject: Run pipeline (created as the API creates it, source web;
// errors in words), Retry and Cancel, the job page (runner, stuck hint, artifacts box, keep), the live log's
// trace.json read piece by piece, the CI/CD settings (variables: add, errors per field, edit, delete; a project
// runner with its token shown once) and the admin runners list.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/build-app.ts';
import { seedPipeline, seedRunner } from '../helpers/ci.ts';
import { finishJob, jobWithArchive, makeZip, runJob, upload } from '../helpers/ci-artifacts.ts';
import { elementOf, mainOf, webGet, webPost, webSignIn } from '../helpers/web.ts';

const CI_FILE = 'build:\n  stage: build\n  script: [echo hi]\n';

async function setup(t: Parameters<typeof buildTestApp>[0]) {
  const ta = await buildTestApp(t);
  const { seed, c, app } = ta;
  const mia = await seed.user();
  const dev = await seed.user();
  const guest = await seed.user();
  const group = await seed.group({ visibility: 'private' });
  const { project } = await seed.repoProject({ namespace: group, visibility: 'private', path: 'app' });
  await seed.member({ project }, mia, 40);
  await seed.member({ project }, dev, 30);
  await seed.member({ project }, guest, 10);
  const headers = (await seed.token(mia)).headers;
  const commit = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/repository/commits`,
    headers,
    payload: { branch: 'main', commit_message: 'ci', actions: [{ action: 'create', file_path: '.gitlab-ci.yml', content: CI_FILE }] },
  });
  assert.equal(commit.statusCode, 201, commit.body);
  // a branch without a CI file
  await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/repository/branches`, headers, payload: { branch: 'bare', ref: 'main' } });
  await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/repository/commits`,
    headers,
    payload: { branch: 'bare', commit_message: 'no ci', actions: [{ action: 'delete', file_path: '.gitlab-ci.yml' }] },
  });
  const pipelines = () => c.db.kysely.selectFrom('ci_pipelines').selectAll().where('project_id', '=', project.id).orderBy('id').execute();
  // pushes made pipelines: start from none
  for (const p of await pipelines()) await c.ci.pipelines.destroy(p);
  return { ...ta, mia, dev, guest, group, project, full: `${group.full_path}/app`, pipelines };
}

test('Run pipeline: the form, errors in words, a pipeline with its variables (source web), Retry and Cancel', async (t) => {
  const s = await setup(t);
  const sess = await webSignIn(s.app, s.dev.username);
  const list = await webGet(s.app, `/${s.full}/-/pipelines`, sess);
  assert.equal(list.statusCode, 200);
  assert.match(list.body, new RegExp(`<a class="btn btn-primary" href="/${s.full}/-/pipelines/new">Run pipeline</a>`));
  const form = await webGet(s.app, `/${s.full}/-/pipelines/new`, sess);
  assert.equal(form.statusCode, 200);
  assert.match(form.body, /<option value="main" selected="">main<\/option>|<option value="main" selected>main<\/option>/);
  assert.match(form.body, /<option value="bare">bare<\/option>/);
  assert.match(form.body, /<label class="FormControl-label" for="variable_key_0">Key<\/label>/);

  const post = (fields: Record<string, unknown>) => webPost(s.app, `/-/p/${s.project.id}/pipelines`, sess, fields);
  const errs: [Record<string, unknown>, string][] = [
    [{ ref: '' }, 'Ref can’t be blank'],
    [{ ref: 'nope' }, 'Reference not found'],
    [{ ref: 'bare' }, 'Missing CI config file'],
    [{ ref: 'main', variables: { 0: { key: 'BAD-KEY', value: 'x' } } }, 'Variable BAD-KEY: the key can contain only letters, digits and &#39;_&#39;'],
    [{ ref: 'main', variables: { 0: { key: '', value: 'x' } } }, 'Variable 1: the key can’t be blank'],
  ];
  for (const [fields, text] of errs) {
    const res = await post(fields);
    assert.equal(res.statusCode, 422, JSON.stringify(fields));
    assert.ok(res.body.includes(text), `${text} in ${JSON.stringify(fields)}`);
  }
  assert.deepEqual(await s.pipelines(), []);

  // main is protected: a Developer may not run its pipeline (the API's check and message)
  const denied = await post({ ref: 'main' });
  assert.equal(denied.statusCode, 422);
  assert.match(denied.body, /Insufficient permissions to create a new pipeline/);
  const ms = await webSignIn(s.app, s.mia.username);
  const ok = await webPost(s.app, `/-/p/${s.project.id}/pipelines`, ms, {
    ref: 'main',
    variables: { 0: { key: 'DEPLOY_TO', value: 'staging', variable_type: 'env_var' }, 1: { key: '', value: '' } },
  });
  assert.equal(ok.statusCode, 303, /<ul class="ml-3">(.*?)<\/ul>/s.exec(ok.body)?.[1]);
  const [pl] = await s.pipelines();
  assert.ok(pl);
  assert.equal(ok.headers.location, `/${s.full}/-/pipelines/${pl.id}`);
  assert.deepEqual([pl.source, pl.ref, pl.user_id, pl.status], ['web', 'main', s.mia.id, 'pending']);
  assert.deepEqual(JSON.parse(pl.variables), [{ key: 'DEPLOY_TO', value: 'staging', variable_type: 'env_var' }]);

  // a guest sees no button and may not post
  const gs = await webSignIn(s.app, s.guest.username);
  assert.equal((await webPost(s.app, `/-/p/${s.project.id}/pipelines`, gs, { ref: 'main' })).statusCode, 403);

  // cancel, then retry, from the pipeline page
  const page = await webGet(s.app, `/${s.full}/-/pipelines/${pl.id}`, sess);
  assert.match(page.body, new RegExp(`aria-label="Cancel pipeline #${pl.id}"`));
  assert.doesNotMatch(page.body, /aria-label="Retry pipeline/);
  const cancel = await webPost(s.app, `/-/p/${s.project.id}/pipelines/${pl.id}/cancel`, sess);
  assert.equal(cancel.statusCode, 303);
  const jobs1 = await s.c.db.kysely.selectFrom('ci_builds').select(['name', 'status', 'retried']).where('pipeline_id', '=', pl.id).execute();
  assert.deepEqual(jobs1, [{ name: 'build', status: 'canceled', retried: 0 }]);
  assert.match((await webGet(s.app, `/${s.full}/-/pipelines`, sess)).body, new RegExp(`aria-label="Retry pipeline #${pl.id}"`));
  const retry = await webPost(s.app, `/-/p/${s.project.id}/pipelines/${pl.id}/retry`, sess);
  assert.equal(retry.statusCode, 303);
  const jobs2 = await s.c.db.kysely.selectFrom('ci_builds').select(['name', 'status', 'retried']).where('pipeline_id', '=', pl.id).orderBy('id').execute();
  assert.deepEqual(jobs2, [
    { name: 'build', status: 'canceled', retried: 1 },
    { name: 'build', status: 'pending', retried: 0 },
  ]);
  // a pipeline that is not failed or canceled is not retried
  assert.equal((await webPost(s.app, `/-/p/${s.project.id}/pipelines/${pl.id}/retry`, sess)).statusCode, 403);
  // the jobs list shows both
  const jl = await webGet(s.app, `/${s.full}/-/jobs`, sess);
  assert.equal(jl.statusCode, 200);
  assert.equal((jl.body.match(/<tr id="job_\d+">/g) ?? []).length, 2);
});

test('the job page: stuck hint, runner, Retry, artifacts (browse, download, keep) and the live log read piece by piece', async (t) => {
  const s = await setup(t);
  const sess = await webSignIn(s.app, s.dev.username);
  const { jobs } = await seedPipeline(s.c, s.project, { ref: 'main', status: 'running', user_id: s.dev.id }, [
    { name: 'compile', stage: 'build', stage_idx: 0, status: 'pending' },
  ]);
  const job = jobs[0]!;
  let page = await webGet(s.app, `/${s.full}/-/jobs/${job.id}`, sess);
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /This job is stuck because the project doesn&#39;t have any runners online assigned to it\./);
  assert.match(page.body, /<dt>Runner<\/dt><dd>none yet<\/dd>/);
  assert.match(page.body, new RegExp(`data-trace-url="/${s.full}/-/jobs/${job.id}/trace.json" data-trace-state="0.1...0"`));
  // an online runner of the project that takes untagged jobs: no hint
  const { runner } = await seedRunner(s.c, { projects: [s.project], description: 'box', contacted_at: new Date().toISOString() });
  page = await webGet(s.app, `/${s.full}/-/jobs/${job.id}`, sess);
  assert.doesNotMatch(page.body, /This job is stuck/);

  // the log grows: each poll answers the whole lines after its state
  await runJob(s.c, job);
  await s.c.db.kysely.updateTable('ci_builds').set({ runner_id: runner.id }).where('id', '=', job.id).execute();
  const append = async (text: string) => {
    const row = await s.c.ci.jobs.reload(job.id);
    assert.equal((await s.c.ci.jobs.appendTrace(row, row.trace_size, Buffer.from(text))).status, 202);
  };
  const poll = async (state: string) => {
    const res = await webGet(s.app, `/${s.full}/-/jobs/${job.id}/trace.json?state=${encodeURIComponent(state)}`, sess);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    return JSON.parse(res.body);
  };
  await append('\x1b[32mone\n');
  await append('two\nthr');
  let t1 = await poll('0');
  assert.deepEqual(t1, {
    id: job.id,
    status: 'running',
    complete: false,
    state: '13.3.2..0',
    append: false,
    offset: 0,
    size: 13,
    total: 16,
    html: '<span id="L1"><span class="term-fg-2">one</span></span><span id="L2"><span class="term-fg-2">two</span></span>',
  });
  // nothing whole yet: an empty append
  t1 = await poll(t1.state);
  assert.deepEqual([t1.append, t1.size, t1.html, t1.complete], [true, 0, '', false]);
  await append('ee <b>\n');
  const t2 = await poll(t1.state);
  assert.deepEqual([t2.append, t2.offset, t2.size, t2.state], [true, 13, 10, '23.4.2..0']);
  assert.equal(t2.html, '<span id="L3"><span class="term-fg-2">three &lt;b&gt;</span></span>');
  await append('done');
  await s.c.db.kysely.updateTable('ci_builds').set({ status: 'failed', finished_at: new Date().toISOString() }).where('id', '=', job.id).execute();
  const t3 = await poll(t2.state);
  assert.deepEqual([t3.complete, t3.status, t3.size, t3.total], [true, 'failed', 4, 27]);
  assert.match(t3.html, /id="L4".*done/);
  // a state that does not parse starts over
  assert.deepEqual([(await poll('x')).append, (await poll('x')).size], [false, 27]);

  page = await webGet(s.app, `/${s.full}/-/jobs/${job.id}`, sess);
  assert.doesNotMatch(page.body, /data-trace-url/);
  assert.match(page.body, new RegExp(`<dt>Runner</dt><dd>#${runner.id} \\(box\\)</dd>`));
  assert.match(page.body, /aria-label="Retry job compile"/);
  const retry = await webPost(s.app, `/-/p/${s.project.id}/jobs/${job.id}/retry`, sess);
  assert.equal(retry.statusCode, 303);
  const all = await s.c.db.kysely
    .selectFrom('ci_builds')
    .select(['id', 'status', 'retried'])
    .where('pipeline_id', '=', job.pipeline_id)
    .orderBy('id')
    .execute();
  assert.equal(all.length, 2);
  assert.deepEqual([all[0]!.retried, all[1]!.status, all[1]!.retried], [1, 'pending', 0]);
  assert.equal(retry.headers.location, `/${s.full}/-/jobs/${all[1]!.id}`);
  // cancel the new one
  assert.equal((await webPost(s.app, `/-/p/${s.project.id}/jobs/${all[1]!.id}/cancel`, sess)).statusCode, 303);
  assert.equal((await s.c.ci.jobs.reload(all[1]!.id)).status, 'canceled');

  // artifacts: browse, download, keep
  const { jobs: more } = await seedPipeline(s.c, s.project, { ref: 'main', status: 'running', user_id: s.dev.id }, [
    { name: 'pack', stage: 'build', stage_idx: 0, status: 'pending' },
  ]);
  const zip = makeZip([{ name: 'dist/' }, { name: 'dist/app.js', data: 'console.log(1)\n' }, { name: 'README.txt', data: 'hello' }]);
  await jobWithArchive(s.app, s.c, more[0]!, zip, 'artifact_format=zip&artifact_type=archive&expire_in=1+day');
  page = await webGet(s.app, `/${s.full}/-/jobs/${more[0]!.id}`, sess);
  assert.match(page.body, /<h2 class="Box-title flex-auto" id="job-artifacts">Job artifacts<\/h2>/);
  assert.match(page.body, /<summary>Browse \(2 files\)<\/summary>/);
  assert.match(page.body, /dist\/app\.js <span class="color-fg-muted">\(15 B\)<\/span>/);
  assert.match(page.body, /README\.txt/);
  assert.match(page.body, /aria-label="Keep the artifacts"/);
  const dl = await s.app.inject({ method: 'GET', url: `/${s.full}/-/jobs/${more[0]!.id}/artifacts/download`, headers: { cookie: sess.cookie } });
  assert.equal(dl.statusCode, 200);
  assert.deepEqual(dl.rawPayload, zip);
  const keep = await webPost(s.app, `/-/p/${s.project.id}/jobs/${more[0]!.id}/artifacts/keep`, sess);
  assert.equal(keep.statusCode, 303);
  assert.equal((await s.c.ci.jobs.reload(more[0]!.id)).artifacts_expire_at, null);
  assert.deepEqual(
    (await s.c.db.kysely.selectFrom('ci_job_artifacts').select('expire_at').where('job_id', '=', more[0]!.id).execute()).map((r) => r.expire_at),
    [null],
  );
  assert.doesNotMatch((await webGet(s.app, `/${s.full}/-/jobs/${more[0]!.id}`, sess)).body, /Keep the artifacts/);
});

test('CI/CD settings: variables (add, errors beside fields, edit, delete) and a project runner with its token once; the admin runners list', async (t) => {
  const s = await setup(t);
  const sess = await webSignIn(s.app, s.mia.username);
  const url = `/${s.full}/-/settings/ci_cd`;
  const page = await webGet(s.app, url, sess);
  assert.equal(page.statusCode, 200);
  assert.match(page.body, new RegExp(`<a class="UnderlineNav-item" href="${url}" aria-current="page">CI/CD</a>`));
  assert.match(page.body, /There are no variables yet\./);
  assert.match(page.body, new RegExp(`href="/${s.full}/-/pipeline_schedules">Pipeline schedules</a>`));
  // Developers: 403
  assert.equal((await webGet(s.app, url, await webSignIn(s.app, s.dev.username))).statusCode, 403);

  const rows = () =>
    s.c.db.kysely
      .selectFrom('ci_variables')
      .select(['key', 'protected', 'masked', 'hidden', 'raw', 'environment_scope', 'description', 'variable_type'])
      .where('project_id', '=', s.project.id)
      .orderBy('id')
      .execute();
  const add = (f: Record<string, unknown>) =>
    webPost(s.app, `/-/p/${s.project.id}/variables`, sess, {
      variable_type: 'env_var',
      environment_scope: '*',
      protected: '0',
      expand: ['0', '1'],
      visibility: 'visible',
      ...f,
    });

  let res = await add({ key: 'bad key', value: 'x' });
  assert.equal(res.statusCode, 422);
  assert.match(res.body, /<p class="note color-fg-danger" id="variable_key_error">can contain only letters, digits and &#39;_&#39;\.<\/p>/);
  assert.match(res.body, /value="bad key"/);
  res = await add({ key: 'TOKEN', value: 'short', visibility: 'masked' });
  assert.equal(res.statusCode, 422);
  assert.match(res.body, /id="variable_value_error"/);
  assert.deepEqual(await rows(), []);

  res = await add({ key: 'DEPLOY_TOKEN', value: 'secret-value-123', visibility: 'masked_and_hidden', protected: ['0', '1'], description: 'for deploys' });
  assert.equal(res.statusCode, 303, res.body.slice(0, 500));
  res = await add({ key: 'REGION', value: 'eu-west', expand: '0' });
  assert.equal(res.statusCode, 303);
  assert.deepEqual(await rows(), [
    { key: 'DEPLOY_TOKEN', protected: 1, masked: 1, hidden: 1, raw: 0, environment_scope: '*', description: 'for deploys', variable_type: 'env_var' },
    { key: 'REGION', protected: 0, masked: 0, hidden: 0, raw: 1, environment_scope: '*', description: null, variable_type: 'env_var' },
  ]);
  res = await add({ key: 'REGION', value: 'again' });
  assert.match(res.body, /id="variable_key_error">\(REGION\) has already been taken<\/p>/);
  const list = await webGet(s.app, url, sess);
  assert.match(list.body, /<td class="text-mono">\*\*\*\*\*<\/td>/);
  assert.match(list.body, /<td class="text-mono">eu-west<\/td>/);
  assert.doesNotMatch(list.body, /secret-value-123/);

  // edit: a hidden value stays when left empty
  const edit = await webGet(s.app, `/${s.full}/-/settings/ci_cd/variables/edit?key=DEPLOY_TOKEN&environment_scope=*`, sess);
  assert.equal(edit.statusCode, 200);
  assert.doesNotMatch(edit.body, /secret-value-123/);
  res = await webPost(s.app, `/-/p/${s.project.id}/variables/update`, sess, {
    key: 'DEPLOY_TOKEN',
    original_environment_scope: '*',
    variable_type: 'file',
    environment_scope: 'production',
    protected: '0',
    expand: '0',
    value: '',
    description: 'for deploys',
  });
  assert.equal(res.statusCode, 303, res.body.slice(0, 500));
  const sv = await s.c.ci.variables.forJob(s.project, s.group, { protectedRef: false, environment: 'production' });
  assert.equal(sv.find((v) => v.key === 'DEPLOY_TOKEN')?.value, 'secret-value-123');
  assert.deepEqual((await rows())[0], {
    key: 'DEPLOY_TOKEN',
    protected: 0,
    masked: 1,
    hidden: 1,
    raw: 1,
    environment_scope: 'production',
    description: 'for deploys',
    variable_type: 'file',
  });
  res = await webPost(s.app, `/-/p/${s.project.id}/variables/delete`, sess, { key: 'REGION', environment_scope: '*' });
  assert.equal(res.statusCode, 303);
  assert.deepEqual(
    (await rows()).map((r) => r.key),
    ['DEPLOY_TOKEN'],
  );

  // a project runner: the token shown once, with the command
  res = await webPost(s.app, `/-/p/${s.project.id}/runners`, sess, { description: 'build box', tag_list: 'linux, docker', run_untagged: ['0', '1'] });
  assert.equal(res.statusCode, 200);
  const token = /id="runner_token" type="text" readonly="" value="(glrt-[^"]+)"|id="runner_token" type="text" readonly value="(glrt-[^"]+)"/.exec(res.body);
  assert.ok(token, res.body.slice(0, 200));
  const tok = token[1] ?? token[2]!;
  assert.ok(
    res.body.includes(
      `HEARTH_RUNNER_URL=${s.c.config.externalUrl} HEARTH_RUNNER_TOKEN=${tok} node bin/hearth.js runner register &amp;&amp; node bin/hearth.js runner`,
    ),
  );
  const runners = await s.c.db.kysely.selectFrom('ci_runners').select(['id', 'runner_type', 'description', 'tag_list', 'run_untagged', 'creator_id']).execute();
  assert.deepEqual(
    runners.map(({ id: _id, ...r }) => r),
    [{ runner_type: 'project_type', description: 'build box', tag_list: JSON.stringify(['linux', 'docker']), run_untagged: 1, creator_id: s.mia.id }],
  );
  assert.ok(await s.c.ci.runners.authenticate(tok));
  const again = await webGet(s.app, url, sess);
  assert.doesNotMatch(again.body, new RegExp(tok));
  assert.match(again.body, new RegExp(`<tr id="runner_${runners[0]!.id}">.*never contacted.*build box.*linux, docker`, 's'));

  // the admin runners list
  const admin = await s.seed.user({ is_admin: true });
  const as = await webSignIn(s.app, admin.username);
  const ar = await webGet(s.app, '/admin/runners', as);
  assert.equal(ar.statusCode, 200);
  assert.match(ar.body, /<a class="UnderlineNav-item" href="\/admin\/runners" aria-current="page">Runners<\/a>/);
  assert.match(ar.body, new RegExp(`<tr id="runner_${runners[0]!.id}">.*never contacted.*build box.*Project.*${s.full}`, 's'));
  assert.match(ar.body, /Online 0 · Offline 0 · Stale 0 · Never contacted 1/);
  assert.equal((await webGet(s.app, '/admin/runners', sess)).statusCode, 404);
});

test('trace.json: the status the page shows names what it lacks — a changed status brings the page’s new top (Retry instead of Cancel, the artifacts)', async (t) => {
  const s = await setup(t);
  const sess = await webSignIn(s.app, s.dev.username);
  const { jobs } = await seedPipeline(s.c, s.project, { ref: 'main', status: 'running', user_id: s.dev.id }, [
    { name: 'pack', stage: 'build', stage_idx: 0, status: 'pending' },
  ]);
  const job = jobs[0]!;
  const token = await runJob(s.c, job);
  const poll = async (status: string) => {
    const res = await webGet(s.app, `/${s.full}/-/jobs/${job.id}/trace.json?state=0&status=${status}`, sess);
    assert.equal(res.statusCode, 200);
    return JSON.parse(res.body) as { status: string; complete: boolean; summary?: string };
  };
  // the page shows the job's status: no summary
  const same = await poll('running');
  assert.deepEqual([same.status, same.complete, 'summary' in same], ['running', false, false]);
  // the page was opened while pending: the new top, Cancel for the running job
  const started = await poll('pending');
  assert.match(started.summary!, /^<div id="job-summary" data-status="running">/);
  assert.match(started.summary!, /aria-label="Cancel job pack"/);
  assert.doesNotMatch(started.summary!, /Retry job pack|This job is stuck/);

  // the job finishes with artifacts: Retry and the artifacts box replace Cancel
  const zip = makeZip([{ name: 'out.txt', data: 'done' }]);
  assert.equal((await upload(s.app, job.id, token, zip, 'artifact_format=zip&artifact_type=archive&expire_in=1+day')).statusCode, 201);
  await finishJob(s.c, job);
  const done = await poll('running');
  assert.equal(done.status, 'success');
  const top = done.summary!.replace(/<input type="hidden" name="authenticity_token" value="[^"]*">/g, '');
  assert.match(top, /^<div id="job-summary" data-status="success">/);
  assert.match(
    top,
    new RegExp(
      `<div class="d-flex ci-actions" data-job-actions><form method="post" action="/-/p/${s.project.id}/jobs/${job.id}/retry" accept-charset="UTF-8"><button type="submit" class="btn btn-sm" aria-label="Retry job pack">Retry</button></form></div>`,
    ),
  );
  assert.doesNotMatch(top, /Cancel job pack/);
  assert.match(top, /<span data-job-status><span class="Label Label--success ci-status ci-status-success">passed<\/span><\/span>/);
  assert.match(top, /<h2 class="Box-title flex-auto" id="job-artifacts">Job artifacts<\/h2>/);
  assert.match(top, /<summary>Browse \(1 file\)<\/summary>/);
  // the same as the top of the page opened now
  const times = (html: string) => html.replace(/<time datetime="[^"]*" title="[^"]*">[^<]*<\/time>/g, '<time>');
  const page = mainOf((await webGet(s.app, `/${s.full}/-/jobs/${job.id}`, sess)).body);
  assert.equal(times(elementOf(page, '<div id="job-summary"')), times(top));
});
