// The head pipeline of a merge request (MergeRequest#diff_head_pipeline): the newest pipeline of the
// source branch at the merge request's head sha, shown as head_pipeline (Entities::Ci::Pipeline) and
// pipeline (PipelineBasic) — also for a merge request opened on a head that already had its pipeline —
// and the CI check of detailed_merge_status and of the merge when the project requires pipelines to
// succeed (ci_must_pass, ci_still_running; 405 on merge).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-app.ts';
import { seedPipeline } from '../../helpers/ci.ts';
import { bareGit, workTree } from '../../helpers/git.ts';

const ZERO = '0'.repeat(40);

test('head_pipeline and pipeline: the newest pipeline of the source branch at the head sha, for a merge request opened after it; the CI check when pipelines must succeed', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const tag = Math.random().toString(36).slice(2, 7);
  const dev = await seed.user({ name: 'Dee Developer', username: `dee${tag}` });
  const maintainer = await seed.user({ name: 'Mae Maintainer', username: `mae${tag}` });
  const group = await seed.group({ visibility: 'private', path: `grp-${tag}` });
  const { project, dir } = await seed.repoProject({ namespace: group, visibility: 'private', path: 'app' });
  await seed.member({ project }, dev, 30);
  await seed.member({ project }, maintainer, 40);
  const wt = workTree(t, dir);
  wt.write('README.md', 'one\n').commit('Initial');
  wt.checkout('feature', true);
  const older = wt.write('f.txt', 'f\n').commit('Feature work');
  const head = wt.write('f.txt', 'f2\n').commit('More feature work');
  wt.checkout('main');
  wt.push();
  const headers = { dev: (await seed.token(dev)).headers, maintainer: (await seed.token(maintainer)).headers };

  // pipelines before the merge request exists: the head's (an older and a newer one), the branch's
  // previous commit, the same sha on another branch
  await seedPipeline(c, project, { ref: 'feature', sha: head, status: 'success', created_at: '2026-01-01T00:00:00.000Z' });
  const { pipeline } = await seedPipeline(c, project, { ref: 'feature', sha: head, status: 'failed', created_at: '2026-01-02T00:00:00.000Z' });
  await seedPipeline(c, project, { ref: 'feature', sha: older, status: 'success' });
  await seedPipeline(c, project, { ref: 'main', sha: head, status: 'success' });

  const created = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/merge_requests`,
    headers: headers.dev,
    payload: { source_branch: 'feature', target_branch: 'main', title: 'Feature' },
  });
  assert.equal(created.statusCode, 201, created.body);
  const iid = created.json().iid as number;
  const url = `/api/v4/projects/${project.id}/merge_requests/${iid}`;
  c.merges.queueRecheck([created.json().id]);
  await c.merges.idle();
  const webUrl = `${c.config.externalUrl}/${group.full_path}/app/-/pipelines/${pipeline.id}`;
  const basic = {
    id: pipeline.id,
    iid: pipeline.iid,
    project_id: project.id,
    sha: head,
    ref: 'feature',
    status: 'failed',
    source: 'push',
    created_at: '2026-01-02T00:00:00.000Z',
    updated_at: '2026-01-02T00:00:00.000Z',
    web_url: webUrl,
  };
  const detail = (status: string, text: string, label: string) => ({
    ...basic,
    status,
    before_sha: ZERO,
    tag: false,
    yaml_errors: null,
    user: null,
    started_at: null,
    finished_at: null,
    committed_at: null,
    duration: null,
    queued_duration: null,
    coverage: null,
    detailed_status: {
      icon: `status_${status}`,
      text,
      label,
      group: status,
      tooltip: label,
      has_details: true,
      details_path: new URL(webUrl).pathname,
      illustration: null,
      favicon: `/assets/ci_favicons/favicon_status_${status}.png`,
    },
    name: null,
    archived: false,
  });

  const get = async (who: Record<string, string> = headers.dev) => {
    const r = await app.inject({ method: 'GET', url, headers: who });
    assert.equal(r.statusCode, 200, r.body);
    return r.json();
  };
  let mr = await get();
  assert.equal(mr.sha, head);
  assert.deepEqual(mr.head_pipeline, detail('failed', 'Failed', 'failed'));
  assert.deepEqual(mr.pipeline, basic);
  // pipelines need not succeed: a failed one does not block
  assert.equal(mr.detailed_merge_status, 'mergeable');

  const setSettings = async (values: Record<string, unknown>) => {
    const row = await c.db.kysely.selectFrom('projects').select('settings').where('id', '=', project.id).executeTakeFirstOrThrow();
    await c.db.kysely
      .updateTable('projects')
      .set({ settings: JSON.stringify({ ...JSON.parse(row.settings || '{}'), ...values }) })
      .where('id', '=', project.id)
      .execute();
  };
  await setSettings({ only_allow_merge_if_pipeline_succeeds: true });
  mr = await get();
  assert.equal(mr.detailed_merge_status, 'ci_must_pass');
  const list = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/merge_requests`, headers: headers.dev });
  assert.deepEqual(
    list.json().map((m: { iid: number; detailed_merge_status: string }) => [m.iid, m.detailed_merge_status]),
    [[iid, 'ci_must_pass']],
  );
  const mainBefore = bareGit(dir, ['rev-parse', 'refs/heads/main']).trim();
  const refused = await app.inject({ method: 'PUT', url: `${url}/merge`, headers: headers.maintainer });
  assert.equal(refused.statusCode, 405, refused.body);
  assert.deepEqual(refused.json(), { message: '405 Method Not Allowed' });
  assert.equal(bareGit(dir, ['rev-parse', 'refs/heads/main']).trim(), mainBefore);
  assert.equal((await get()).state, 'opened');

  await c.db.kysely.updateTable('ci_pipelines').set({ status: 'running' }).where('id', '=', pipeline.id).execute();
  mr = await get();
  assert.equal(mr.detailed_merge_status, 'ci_still_running');
  assert.deepEqual(mr.head_pipeline, detail('running', 'Running', 'running'));
  assert.equal((await app.inject({ method: 'PUT', url: `${url}/merge`, headers: headers.maintainer })).statusCode, 405);

  // without read_pipeline (CI/CD off for everyone but administrators): no pipeline shown
  await setSettings({ builds_access_level: 'disabled' });
  mr = await get();
  assert.equal(mr.head_pipeline, null);
  assert.equal(mr.pipeline, null);
  await setSettings({ builds_access_level: 'enabled' });

  await c.db.kysely.updateTable('ci_pipelines').set({ status: 'success' }).where('id', '=', pipeline.id).execute();
  assert.equal((await get()).detailed_merge_status, 'mergeable');
  const merged = await app.inject({ method: 'PUT', url: `${url}/merge`, headers: headers.maintainer });
  assert.equal(merged.statusCode, 200, merged.body);
  assert.equal(merged.json().state, 'merged');
  assert.deepEqual(merged.json().head_pipeline, detail('success', 'Passed', 'passed'));
  await c.merges.idle();
});
