// A CI file whose parsing passes the time limit (HEARTH_CI_CONFIG_TIMEOUT_MS, here 1 ms: a file of
// 2 MB takes seconds) is a configuration error with GitLab's Gitlab::Ci::Config::TIMEOUT_MESSAGE on
// every path: lint answers valid false, a commit makes a failed pipeline with it as yaml_errors, the
// pipeline API answers 400 with render_validation_error!'s body and creates nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-app.ts';

const json = (r: { body: string }) => JSON.parse(r.body);
const TIMEOUT = 'Request timed out when fetching configuration files.';

/** a valid CI file of some 2 MB */
function bigConfig(): string {
  let s = '';
  for (let j = 0; j < 1900; j++) {
    s += `job_${j}:\n  script:\n`;
    for (let l = 0; l < 38; l++) s += `    - echo step ${l} of ${j}\n`;
  }
  return s;
}

test('past the time limit: lint, a commit and the pipeline API answer GitLab’s timeout as the configuration error', async (t) => {
  const ctx = await buildTestApp(t, { ciConfigTimeoutMs: 1 });
  const { project } = await ctx.seed.repoProject({ path: 'slow', name: 'Slow' });
  const url = `/api/v4/projects/${project.id}`;
  const headers = ctx.root;
  const content = bigConfig();
  assert.ok(Buffer.byteLength(content) < 2 * 1024 * 1024);

  const lint = await ctx.app.inject({ method: 'POST', url: `${url}/ci/lint`, headers, payload: { content } });
  assert.equal(lint.statusCode, 200);
  assert.deepEqual(json(lint), { valid: false, errors: [TIMEOUT], warnings: [], merged_yaml: null, includes: [] });

  const commit = await ctx.app.inject({
    method: 'POST',
    url: `${url}/repository/commits`,
    headers,
    payload: { branch: 'main', commit_message: 'ci', actions: [{ action: 'create', file_path: '.service-ci.yml', content }] },
  });
  assert.equal(commit.statusCode, 201, commit.body);
  const sha = json(commit).id;
  const rows = await ctx.c.db.kysely.selectFrom('ci_pipelines').selectAll().where('project_id', '=', project.id).execute();
  assert.equal(rows.length, 1);
  assert.deepEqual([rows[0].sha, rows[0].status, rows[0].failure_reason, rows[0].yaml_errors], [sha, 'failed', 'config_error', TIMEOUT]);
  const jobs = await ctx.c.db.kysely.selectFrom('ci_builds').select('id').where('pipeline_id', '=', rows[0].id).execute();
  assert.deepEqual(jobs, []);

  const create = await ctx.app.inject({ method: 'POST', url: `${url}/pipeline`, headers, payload: { ref: 'main' } });
  assert.equal(create.statusCode, 400);
  assert.deepEqual(json(create), { message: { base: [TIMEOUT] } });
  const after = await ctx.c.db.kysely.selectFrom('ci_pipelines').select('id').where('project_id', '=', project.id).execute();
  assert.equal(after.length, 1);
});
