// CI in a real browser (Chromium), only clicking from the project's page: Settings → CI/CD, a project runner
// registered (its token shown once), a CI/CD variable added; Pipelines → Run pipeline for main with a variable;
// the job opened while the test, acting as that runner through the runner protocol (POST /jobs/request, PATCH
// /jobs/:id/trace, PUT /jobs/:id, the artifacts upload), writes its log — the page's log grows with no reload
// (a marker on `window` survives, one navigation entry), and when the job fails Cancel gives way to Retry, still
// without one —; the failed job retried, and the retried job's artifacts box appearing as it finishes, the archive
// downloaded from it (the bytes checked). The project's `.gitlab-ci.yml` is committed to it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { RunnerClient } from '../../src/runner/protocol.ts';
import { makeZip } from '../helpers/zip.ts';
import { assertAccessible, chromiumAvailable, launchBrowser, newContext, screenshot, signInWithForm } from '../helpers/browser.ts';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';

const CI_FILE = 'build:\n  stage: build\n  script:\n    - echo "deploying to $DEPLOY_TO"\n  artifacts:\n    paths: [dist/]\n';

test('in a browser: a runner and a variable in CI/CD settings, Run pipeline, the job log growing live, Retry, the artifacts downloaded', {
  skip: skipWithout(chromiumAvailable, 'chromium'),
}, async (t) => {
  assertTool(chromiumAvailable, 'chromium');
  const srv = await startTestServer(t);
  const { seed, c, app } = srv;
  const tag = Math.random().toString(36).slice(2, 6);
  const mia = await seed.user({ username: `mia${tag}`, name: 'Mia Maintainer', password: 'walker-password-1' });
  const group = await seed.group({ visibility: 'private', path: `ci-${tag}`, name: `CI ${tag}` });
  const { project } = await seed.repoProject({ namespace: group, visibility: 'private', path: 'svc', name: 'Svc' });
  await seed.member({ group }, mia, 40);
  const headers = (await seed.token(mia)).headers;
  const commit = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/repository/commits`,
    headers,
    payload: { branch: 'main', commit_message: 'ci', actions: [{ action: 'create', file_path: '.gitlab-ci.yml', content: CI_FILE }] },
  });
  assert.equal(commit.statusCode, 201, commit.body);
  // the push made a pipeline: start from none
  for (const p of await c.db.kysely.selectFrom('ci_pipelines').selectAll().where('project_id', '=', project.id).execute()) await c.ci.pipelines.destroy(p);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ci-pages-browser-'));
  t.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  const browser = await launchBrowser(t);
  const page = await (await newContext(browser, srv.base)).newPage();
  await signInWithForm(page, mia.username, 'walker-password-1');

  // project → Settings → CI/CD
  await page.goto(`/${group.full_path}/svc`);
  await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Settings' }).click();
  await page.waitForURL('**/svc/-/edit');
  await page.getByRole('navigation', { name: 'Project settings' }).getByRole('link', { name: 'CI/CD' }).click();
  await page.waitForURL('**/svc/-/settings/ci_cd');
  await assertAccessible(page, 'the CI/CD settings');

  // a project runner: its token shown once, with the command
  await page.getByLabel('Runner description (optional)').fill('browser box');
  await page.getByRole('button', { name: 'Create runner' }).click();
  const token = await page.getByLabel('Runner authentication token').inputValue();
  assert.match(token, /^glrt-/);
  assert.equal(
    await page.locator('#runner_command').innerText(),
    `HEARTH_RUNNER_URL=${c.config.externalUrl} HEARTH_RUNNER_TOKEN=${token} node bin/hearth.js runner register && node bin/hearth.js runner`,
  );
  const runnerRow = await c.db.kysely.selectFrom('ci_runners').selectAll().executeTakeFirstOrThrow();
  assert.deepEqual([runnerRow.runner_type, runnerRow.description, runnerRow.creator_id], ['project_type', 'browser box', mia.id]);

  // a CI/CD variable (masked)
  await page.getByLabel('Key').fill('API_SECRET');
  await page.getByLabel('Value').fill('s3cr3t-value-42');
  await page.getByLabel('Masked', { exact: true }).check();
  await page.getByRole('button', { name: 'Add variable' }).click();
  await page.getByText('Variable API_SECRET was added.').waitFor();
  assert.equal(await page.locator('#variable_API_SECRET td').nth(1).innerText(), '*****');
  assert.deepEqual(
    (await c.db.kysely.selectFrom('ci_variables').select(['key', 'masked', 'hidden']).where('project_id', '=', project.id).execute()).map((v) => [
      v.key,
      v.masked,
      v.hidden,
    ]),
    [['API_SECRET', 1, 0]],
  );

  // Pipelines → Run pipeline for main with a variable
  await page.getByRole('link', { name: 'Pipelines', exact: true }).first().click();
  await page.waitForURL('**/svc/-/pipelines');
  await page.getByRole('link', { name: 'Run pipeline' }).click();
  await page.waitForURL('**/svc/-/pipelines/new');
  await assertAccessible(page, 'the Run pipeline form');
  assert.equal(await page.getByLabel('Run for branch name or tag').inputValue(), 'main');
  await page.locator('#variable_key_0').fill('DEPLOY_TO');
  await page.locator('#variable_value_0').fill('staging');
  await page.getByRole('button', { name: 'Run pipeline' }).click();
  await page.waitForURL(/\/svc\/-\/pipelines\/\d+$/);
  const pipeline = await c.db.kysely.selectFrom('ci_pipelines').selectAll().where('project_id', '=', project.id).executeTakeFirstOrThrow();
  assert.deepEqual([pipeline.source, pipeline.ref, pipeline.user_id], ['web', 'main', mia.id]);

  // the runner takes the job: the variables of the run and of the settings reach it
  const runner = new RunnerClient(srv.base, token, { name: 'test-runner', version: '1.0.0' } as never, 's_0123456789ab');
  const taken = await runner.requestJob();
  assert.ok(taken);
  const vars = new Map((taken.variables ?? []).map((v) => [v.key, v.value]));
  assert.deepEqual([vars.get('DEPLOY_TO'), vars.get('API_SECRET')], ['staging', 's3cr3t-value-42']);

  // open the job: its log grows while the page stays
  await page.getByRole('link', { name: 'build' }).click();
  await page.waitForURL(`**/svc/-/jobs/${taken.id}`);
  await page.evaluate(() => {
    (window as unknown as { __stayed: boolean }).__stayed = true;
  });
  let at = 0;
  const write = async (text: string) => {
    const r = await runner.patchTrace(taken.id, taken.token, Buffer.from(text), at);
    assert.equal(r.status, 202);
    at += Buffer.byteLength(text);
  };
  const logText = () => page.locator('#job-log').innerText();
  await write('\x1b[32;1m$ echo "deploying to $DEPLOY_TO"\x1b[0m\n');
  await page.locator('#L1').waitFor();
  assert.match(await logText(), /\$ echo "deploying to \$DEPLOY_TO"/);
  await write('deploying to staging\n');
  await page.locator('#L2').waitFor();
  await write('step 3 of 3\nERROR: something broke\n');
  await page.locator('#L4').waitFor();
  assert.match(await logText(), /deploying to staging[\s\S]*step 3 of 3[\s\S]*ERROR: something broke/);
  assert.equal(await page.locator('#L3 .term-fg-2').count(), 0);
  // the first line's colour came through as a class
  assert.equal(await page.locator('#L1 .term-fg-2').count(), 1);
  const stayed = await page.evaluate(() => ({
    marker: (window as unknown as { __stayed?: boolean }).__stayed === true,
    navigations: performance.getEntriesByType('navigation').length,
  }));
  assert.deepEqual(stayed, { marker: true, navigations: 1 });
  await screenshot(page, 'ci-job-live-log');

  // the job fails: the page says so, the live log stops, Cancel gives way to Retry — all without a reload
  assert.equal(await page.getByRole('button', { name: 'Cancel job build' }).count(), 1);
  assert.equal((await runner.updateJob(taken.id, { token: taken.token, state: 'failed', failure_reason: 'script_failure', exit_code: 1 })).status, 200);
  await page.locator('[data-job-status] .ci-status-failed').waitFor();
  await page.locator('#job-log[data-trace-complete]').waitFor();
  await page.getByRole('button', { name: 'Retry job build' }).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Cancel job build' }).count(), 0);
  assert.equal(
    await page.locator('.ci-job-facts').innerText(),
    `Duration\n${await page.locator('.ci-job-facts dd').first().innerText()}\nRunner\n#${runnerRow.id} (browser box)\nFailure reason\nscript failure`,
  );
  assert.deepEqual(
    await page.evaluate(() => ({
      marker: (window as unknown as { __stayed?: boolean }).__stayed === true,
      navigations: performance.getEntriesByType('navigation').length,
    })),
    { marker: true, navigations: 1 },
  );

  // retry
  await page.getByRole('button', { name: 'Retry job build' }).click();
  await page.waitForURL(/\/svc\/-\/jobs\/\d+$/);
  await page.getByText('Job build is retried.').waitFor();
  const retried = await runner.requestJob();
  assert.ok(retried);
  assert.notEqual(retried.id, taken.id);
  assert.ok(page.url().endsWith(`/-/jobs/${retried.id}`));
  const zip = makeZip([{ name: 'dist/' }, { name: 'dist/app.js', data: 'console.log("built")\n' }]);
  const zipFile = path.join(tmp, 'artifacts.zip');
  fs.writeFileSync(zipFile, zip);
  at = 0;
  const r2 = await runner.patchTrace(retried.id, retried.token, Buffer.from('deploying to staging\nok\n'), 0);
  assert.equal(r2.status, 202);
  const up = await runner.uploadArtifacts(retried.id, retried.token, zipFile, {
    baseName: 'artifacts.zip',
    format: 'zip',
    type: 'archive',
    expireIn: '1 week',
  });
  assert.equal(up.status, 201, up.message);
  assert.equal((await runner.updateJob(retried.id, { token: retried.token, state: 'success', exit_code: 0 })).status, 200);
  await page.locator('[data-job-status] .ci-status-success').waitFor();

  // the artifacts box comes with the finished job's page top, no reload: browse, download
  await page.getByRole('heading', { name: 'Job artifacts' }).waitFor();
  await page.getByRole('button', { name: 'Retry job build' }).waitFor();
  await page.getByText('Browse (1 file)').click();
  await page.getByText('dist/app.js').waitFor();
  await assertAccessible(page, 'the job page');
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download' }).click()]);
  const saved = await download.path();
  assert.deepEqual(fs.readFileSync(saved), zip);
  await screenshot(page, 'ci-job-artifacts');
});
