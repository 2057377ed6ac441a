// Pipeline processing (Ci::ProcessPipelineService): when: manual / always / on_failure / delayed,
// allow_failure, needs on skipped jobs, trigger jobs without strategy, a child that cannot be created,
// external statuses counted in the pipeline's status, idempotence and concurrent calls.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { suiteApp } from '../../helpers/ci.ts';
import { nowIso } from '../../../src/lib/time.ts';

// one suite: the shared fixture of `before` lives from this file's first test to its last, also in a shard
describe('ci-pipelines-process', () => {
  const ctx = suiteApp();
  let n = 0;

  /** A project whose main branch holds `files`; the pipeline its push created. */
  async function pushed(files: Record<string, string>) {
    const { project } = await ctx.seed.repoProject({ path: `proc${++n}` });
    const r = await ctx.app.inject({
      method: 'POST',
      url: `/api/v4/projects/${project.id}/repository/commits`,
      headers: ctx.root,
      payload: {
        branch: 'main',
        commit_message: 'ci',
        actions: Object.entries(files).map(([file_path, content]) => ({ action: 'create', file_path, content })),
      },
    });
    assert.equal(r.statusCode, 201, r.body);
    const pipelines = await ctx.c.db.kysely.selectFrom('ci_pipelines').selectAll().where('project_id', '=', project.id).orderBy('id').execute();
    return { project, pipelines };
  }

  const statuses = async (pipelineId: number) =>
    Object.fromEntries(
      (await ctx.c.db.kysely.selectFrom('ci_builds').selectAll().where('pipeline_id', '=', pipelineId).where('retried', '=', 0).orderBy('id').execute()).map(
        (j) => [j.name, j.status],
      ),
    );
  const pipelineRow = (id: number) => ctx.c.db.kysely.selectFrom('ci_pipelines').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  async function setStatus(pipelineId: number, name: string, status: string) {
    await ctx.c.db.kysely
      .updateTable('ci_builds')
      .set({ status, started_at: nowIso() })
      .where('pipeline_id', '=', pipelineId)
      .where('name', '=', name)
      .where('retried', '=', 0)
      .execute();
    await ctx.c.ci.pipelines.process(pipelineId);
  }

  test('manual jobs: allowed to fail by default they do not block; with allow_failure: false they block the next stages', async () => {
    const { pipelines } = await pushed({
      '.service-ci.yml': `
build: { stage: build, script: x }
optional: { stage: build, script: x, when: manual }
gate: { stage: test, script: x, when: manual, allow_failure: false }
deploy: { stage: deploy, script: x }
always: { stage: deploy, script: x, when: always }
`,
    });
    const p = pipelines[0];
    assert.deepEqual(await statuses(p.id), { build: 'pending', optional: 'manual', gate: 'created', deploy: 'created', always: 'created' });
    await setStatus(p.id, 'build', 'success');
    assert.deepEqual(await statuses(p.id), { build: 'success', optional: 'manual', gate: 'manual', deploy: 'created', always: 'created' });
    assert.equal((await pipelineRow(p.id)).status, 'manual');
    await setStatus(p.id, 'gate', 'success');
    assert.deepEqual(await statuses(p.id), { build: 'success', optional: 'manual', gate: 'success', deploy: 'pending', always: 'pending' });
    await setStatus(p.id, 'deploy', 'success');
    await setStatus(p.id, 'always', 'success');
    const done = await pipelineRow(p.id);
    assert.equal(done.status, 'success');
    assert.ok(done.finished_at && done.started_at);
    assert.equal(typeof done.duration, 'number');
  });

  test('allow_failure: a failed job allowed to fail lets the next stage run; always runs after a failure; needs on a skipped job skip', async () => {
    const { pipelines } = await pushed({
      '.service-ci.yml': `
lint: { stage: build, script: x, allow_failure: true }
compile: { stage: build, script: x }
unit: { stage: test, script: x }
report: { stage: deploy, script: x, when: always }
after_unit: { stage: deploy, script: x, needs: [unit] }
`,
    });
    const p = pipelines[0];
    await setStatus(p.id, 'lint', 'failed');
    await setStatus(p.id, 'compile', 'success');
    assert.deepEqual(await statuses(p.id), { lint: 'failed', compile: 'success', unit: 'pending', report: 'created', after_unit: 'created' });
    await setStatus(p.id, 'unit', 'failed');
    assert.deepEqual(await statuses(p.id), { lint: 'failed', compile: 'success', unit: 'failed', report: 'pending', after_unit: 'skipped' });
    await setStatus(p.id, 'report', 'success');
    assert.equal((await pipelineRow(p.id)).status, 'failed');
  });

  test('delayed jobs are scheduled and become pending once start_in passed', async () => {
    const { pipelines } = await pushed({ '.service-ci.yml': 'later: { script: x, when: delayed, start_in: 1 second }\n' });
    const p = pipelines[0];
    assert.deepEqual(await statuses(p.id), { later: 'scheduled' });
    assert.equal((await pipelineRow(p.id)).status, 'scheduled');
    await new Promise((r) => setTimeout(r, 1300));
    assert.ok((await ctx.c.ci.pipelines.processScheduled()) >= 0);
    assert.deepEqual(await statuses(p.id), { later: 'pending' });
    // a scheduled job whose timer was lost (a restart): the worker's round queues it
    await ctx.c.db.kysely
      .updateTable('ci_builds')
      .set({ status: 'scheduled', queued_at: '2020-01-01T00:00:00.000Z' })
      .where('pipeline_id', '=', p.id)
      .execute();
    assert.ok((await ctx.c.ci.pipelines.processScheduled()) >= 1);
    assert.deepEqual(await statuses(p.id), { later: 'pending' });
  });

  test('a trigger job without strategy succeeds once its child exists; a child that cannot be created (or is invalid) fails it', async () => {
    const { project, pipelines } = await pushed({
      '.service-ci.yml': `
child: { trigger: { include: ci/child.yml } }
broken: { trigger: { include: ci/missing.yml } }
`,
      'ci/child.yml': 'inner: { script: x }\n',
    });
    const p = pipelines[0];
    const all = await ctx.c.db.kysely.selectFrom('ci_pipelines').selectAll().where('project_id', '=', project.id).orderBy('id').execute();
    assert.equal(all.length, 3);
    const [, good, bad] = all;
    assert.deepEqual(
      [good.source, good.status, bad.status, bad.yaml_errors],
      ['parent_pipeline', 'pending', 'failed', 'Local file `ci/missing.yml` does not exist!'],
    );
    assert.deepEqual(await statuses(p.id), { child: 'success', broken: 'failed' });
    const brokenJob = await ctx.c.db.kysely
      .selectFrom('ci_builds')
      .selectAll()
      .where('pipeline_id', '=', p.id)
      .where('name', '=', 'broken')
      .executeTakeFirstOrThrow();
    assert.equal(brokenJob.failure_reason, 'downstream_pipeline_creation_failed');
    assert.equal((await pipelineRow(p.id)).status, 'failed');
    // the child finishing does not move a trigger job without strategy: depend
    await setStatus(good.id, 'inner', 'failed');
    assert.deepEqual(await statuses(p.id), { child: 'success', broken: 'failed' });
  });

  test('external statuses count in the pipeline status and are never moved; process is idempotent under concurrent calls', async () => {
    const { project, pipelines } = await pushed({ '.service-ci.yml': 'a: { script: x }\nb: { script: x, stage: deploy }\n' });
    const p = pipelines[0];
    const now = nowIso();
    await ctx.c.db.kysely
      .insertInto('ci_builds')
      .values({
        project_id: project.id,
        pipeline_id: p.id,
        type: 'generic',
        name: 'ext',
        stage: 'external',
        stage_idx: 9,
        status: 'running',
        ref: 'main',
        sha: p.sha,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await ctx.c.db.kysely.updateTable('ci_builds').set({ status: 'success' }).where('pipeline_id', '=', p.id).where('name', '=', 'a').execute();
    await Promise.all([1, 2, 3, 4].map(() => ctx.c.ci.pipelines.process(p.id)));
    assert.deepEqual(await statuses(p.id), { a: 'success', b: 'pending', ext: 'running' });
    await setStatus(p.id, 'b', 'success');
    assert.equal((await pipelineRow(p.id)).status, 'running');
    await setStatus(p.id, 'ext', 'failed');
    assert.equal((await pipelineRow(p.id)).status, 'failed');
  });

  test('a push that deletes a branch creates no pipeline; one pipeline per pushed branch and tag', async () => {
    const { project, pipelines } = await pushed({ '.service-ci.yml': 'a: { script: x }\n' });
    assert.equal(pipelines.length, 1);
    const url = `/api/v4/projects/${project.id}`;
    assert.equal((await ctx.app.inject({ method: 'POST', url: `${url}/repository/branches?branch=dev&ref=main`, headers: ctx.root })).statusCode, 201);
    assert.equal((await ctx.app.inject({ method: 'DELETE', url: `${url}/repository/branches/dev`, headers: ctx.root })).statusCode, 204);
    const rows = await ctx.c.db.kysely.selectFrom('ci_pipelines').selectAll().where('project_id', '=', project.id).orderBy('id').execute();
    assert.deepEqual(
      rows.map((r) => [r.ref, r.source, r.before_sha]),
      [
        ['main', 'push', '0000000000000000000000000000000000000000'],
        ['dev', 'push', '0000000000000000000000000000000000000000'],
      ],
    );
  });

  test('a job that needs a manual job is skipped until the manual job is played (resetSkippedAfter)', async () => {
    const { pipelines } = await pushed({
      '.service-ci.yml': `
approve: { stage: build, script: x, when: manual }
release: { stage: deploy, script: x, needs: [approve] }
notify: { stage: deploy, script: x, needs: [release] }
`,
    });
    const p = pipelines[0];
    assert.deepEqual(await statuses(p.id), { approve: 'manual', release: 'skipped', notify: 'skipped' });
    assert.equal((await pipelineRow(p.id)).status, 'skipped');
    // played: the job runs, the skipped jobs after it come back
    await ctx.c.db.kysely.updateTable('ci_builds').set({ status: 'pending' }).where('pipeline_id', '=', p.id).where('name', '=', 'approve').execute();
    const approve = await ctx.c.db.kysely
      .selectFrom('ci_builds')
      .selectAll()
      .where('pipeline_id', '=', p.id)
      .where('name', '=', 'approve')
      .executeTakeFirstOrThrow();
    await ctx.c.ci.pipelines.resetSkippedAfter(approve);
    assert.deepEqual(await statuses(p.id), { approve: 'pending', release: 'created', notify: 'created' });
    assert.equal((await pipelineRow(p.id)).status, 'pending');
    await setStatus(p.id, 'approve', 'success');
    assert.deepEqual(await statuses(p.id), { approve: 'success', release: 'pending', notify: 'created' });
  });

  test('a project whose CI is disabled gets no pipeline on push', async () => {
    const { project } = await ctx.seed.repoProject({ path: `off${++n}` });
    const url = `/api/v4/projects/${project.id}`;
    assert.equal((await ctx.app.inject({ method: 'PUT', url, headers: ctx.root, payload: { builds_access_level: 'disabled' } })).statusCode, 200);
    const r = await ctx.app.inject({
      method: 'POST',
      url: `${url}/repository/commits`,
      headers: ctx.root,
      payload: { branch: 'main', commit_message: 'ci', actions: [{ action: 'create', file_path: '.service-ci.yml', content: 'a: { script: x }\n' }] },
    });
    assert.equal(r.statusCode, 201);
    assert.deepEqual(await ctx.c.db.kysely.selectFrom('ci_pipelines').selectAll().where('project_id', '=', project.id).execute(), []);
  });

  test('rules:changes compares the files a push changed (a new branch counts as changed)', async () => {
    const ci = 'docs:\n  script: x\n  rules:\n    - changes: [docs/**/*]\nbuild:\n  script: x\n  rules:\n    - changes: [src/**/*, .service-ci.yml]\n';
    const { project, pipelines } = await pushed({ '.service-ci.yml': ci, 'src/a.ts': 'a' });
    assert.deepEqual(await statuses(pipelines[0].id), { docs: 'pending', build: 'pending' });
    const url = `/api/v4/projects/${project.id}`;
    const write = async (file: string) => {
      const r = await ctx.app.inject({
        method: 'POST',
        url: `${url}/repository/commits`,
        headers: ctx.root,
        payload: { branch: 'main', commit_message: file, actions: [{ action: 'create', file_path: file, content: 'x' }] },
      });
      assert.equal(r.statusCode, 201);
    };
    await write('docs/guide.md');
    await write('src/b.ts');
    const rows = await ctx.c.db.kysely.selectFrom('ci_pipelines').selectAll().where('project_id', '=', project.id).orderBy('id').execute();
    assert.equal(rows.length, 3);
    assert.deepEqual(await statuses(rows[1].id), { docs: 'pending' });
    assert.deepEqual(await statuses(rows[2].id), { build: 'pending' });
  });

  test('ci_config_path: the CI file is read from the project setting', async () => {
    const { project } = await ctx.seed.repoProject({ path: `cfg${++n}` });
    const url = `/api/v4/projects/${project.id}`;
    const put = await ctx.app.inject({ method: 'PUT', url, headers: ctx.root, payload: { ci_config_path: 'ci/pipeline.conf' } });
    assert.equal(put.statusCode, 200, put.body);
    const r = await ctx.app.inject({
      method: 'POST',
      url: `${url}/repository/commits`,
      headers: ctx.root,
      payload: {
        branch: 'main',
        commit_message: 'ci',
        actions: [
          { action: 'create', file_path: 'ci/pipeline.conf', content: 'custom: { script: x }\n' },
          { action: 'create', file_path: '.service-ci.yml', content: 'default_file: { script: x }\n' },
        ],
      },
    });
    assert.equal(r.statusCode, 201);
    const [p] = await ctx.c.db.kysely.selectFrom('ci_pipelines').selectAll().where('project_id', '=', project.id).execute();
    assert.deepEqual(await statuses(p.id), { custom: 'pending' });
  });

  test('POST /jobs/:id/play on a manual job brings back the jobs that needed it (through the jobs API)', async () => {
    const { project, pipelines } = await pushed({
      '.service-ci.yml': `
approve: { stage: build, script: x, when: manual }
release: { stage: deploy, script: x, needs: [approve] }
`,
    });
    const p = pipelines[0];
    assert.deepEqual(await statuses(p.id), { approve: 'manual', release: 'skipped' });
    const approve = await ctx.c.db.kysely
      .selectFrom('ci_builds')
      .selectAll()
      .where('pipeline_id', '=', p.id)
      .where('name', '=', 'approve')
      .executeTakeFirstOrThrow();
    const res = await ctx.app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/jobs/${approve.id}/play`, headers: ctx.root });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, 'pending');
    assert.deepEqual(await statuses(p.id), { approve: 'pending', release: 'created' });
    await setStatus(p.id, 'approve', 'success');
    assert.deepEqual(await statuses(p.id), { approve: 'success', release: 'pending' });
  });
});
