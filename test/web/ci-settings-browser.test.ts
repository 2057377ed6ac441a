// The CI settings in a real browser (Chromium), reached only by clicking from the start page as a newcomer would:
// Groups → the group → Settings → a group CI/CD variable (masked, shown as *****); Admin → CI/CD variables → an
// instance variable; the project → Settings → CI/CD → Edit runner → the runner's form saved, then paused; and the
// project's job page, opened from its pipeline while a runner (the test, through the runner protocol) runs the job,
// turning Cancel into Retry when the job finishes — with no reload. Each new page passes axe.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RunnerClient } from '../../src/runner/protocol.ts';
import { assertAccessible, chromiumAvailable, launchBrowser, newContext, screenshot, signInWithForm } from '../helpers/browser.ts';
import { seedRunner } from '../helpers/ci.ts';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';

const CI_FILE = 'build:\n  stage: build\n  script:\n    - echo "building"\n';

test('in a browser: from the start page to group CI/CD variables, the instance variables and a runner’s edit form by clicking; the job page’s buttons follow the job', {
  skip: skipWithout(chromiumAvailable, 'chromium'),
}, async (t) => {
  assertTool(chromiumAvailable, 'chromium');
  const srv = await startTestServer(t);
  const { seed, c, app } = srv;
  const tag = Math.random().toString(36).slice(2, 6);
  const nina = await seed.user({ username: `nina${tag}`, name: 'Nina Newcomer', password: 'walker-password-1', is_admin: true });
  const group = await seed.group({ visibility: 'private', path: `team-${tag}`, name: `Team ${tag}` });
  const { project } = await seed.repoProject({ namespace: group, visibility: 'private', path: 'svc', name: 'Svc' });
  await seed.member({ group }, nina, 50);
  const { runner, token } = await seedRunner(c, { projects: [project], description: 'build box', contacted_at: new Date().toISOString() });
  const commit = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/repository/commits`,
    headers: (await seed.token(nina)).headers,
    payload: { branch: 'main', commit_message: 'ci', actions: [{ action: 'create', file_path: '.gitlab-ci.yml', content: CI_FILE }] },
  });
  assert.equal(commit.statusCode, 201, commit.body);

  const browser = await launchBrowser(t);
  const page = await (await newContext(browser, srv.base)).newPage();
  await signInWithForm(page, nina.username, 'walker-password-1');
  const main = page.getByRole('navigation', { name: 'Main' });

  // the start page → Groups → the group → Settings (its CI/CD page) → a masked group variable
  await page.goto('/');
  await main.getByRole('link', { name: 'Groups' }).click();
  await page.waitForURL('**/dashboard/groups');
  await page.getByRole('list', { name: 'Groups' }).getByRole('link', { name: group.name }).click();
  await page.waitForURL(`**/groups/${group.full_path}`);
  await page.getByRole('navigation', { name: 'Group', exact: true }).getByRole('link', { name: 'Settings' }).click();
  await page.waitForURL(`**/groups/${group.full_path}/-/settings/ci_cd`);
  await assertAccessible(page, 'the group CI/CD settings');
  await page.getByLabel('Key').fill('GROUP_SECRET');
  await page.getByLabel('Value').fill('group-secret-123');
  await page.getByLabel('Masked', { exact: true }).check();
  await page.getByRole('button', { name: 'Add variable' }).click();
  await page.getByText('Variable GROUP_SECRET was added.').waitFor();
  assert.equal(await page.locator('#variable_GROUP_SECRET td').nth(1).innerText(), '*****');
  await screenshot(page, 'group-ci-cd-settings');
  assert.deepEqual(await c.db.kysely.selectFrom('ci_variables').select(['key', 'masked', 'group_id', 'project_id']).execute(), [
    { key: 'GROUP_SECRET', masked: 1, group_id: group.id, project_id: null },
  ]);
  // the group's other settings pages are one tab away
  await page.getByRole('navigation', { name: 'Group settings' }).getByRole('link', { name: 'Access tokens' }).click();
  await page.waitForURL(`**/groups/${group.full_path}/-/settings/access_tokens`);
  await assertAccessible(page, 'the group access tokens');
  await page.getByRole('navigation', { name: 'Group settings' }).getByRole('link', { name: 'Deploy tokens' }).click();
  await page.waitForURL(`**/groups/${group.full_path}/-/settings/deploy_tokens`);
  await assertAccessible(page, 'the group deploy tokens');

  // Admin → CI/CD variables → an instance variable
  await main.getByRole('link', { name: 'Admin' }).click();
  await page.waitForURL('**/admin');
  await page.getByRole('navigation', { name: 'Admin area' }).getByRole('link', { name: 'CI/CD variables' }).click();
  await page.waitForURL('**/admin/ci/variables');
  await assertAccessible(page, 'the instance CI/CD variables');
  assert.equal(await page.getByLabel('Environments').count(), 0);
  await page.getByLabel('Key').fill('REGISTRY');
  await page.getByLabel('Value').fill('registry.example.com');
  await page.getByRole('button', { name: 'Add variable' }).click();
  await page.getByText('Variable REGISTRY was added.').waitFor();
  assert.equal(await page.locator('#variable_REGISTRY td').nth(1).innerText(), 'registry.example.com');
  await screenshot(page, 'admin-ci-variables');

  // the start page → the project → Pipelines → the pipeline → its job, which the runner takes and runs
  await page.goto('/');
  await page.getByRole('list', { name: 'Projects' }).getByRole('link', { name: /Svc$/ }).click();
  await page.waitForURL(`**/${group.full_path}/svc`);
  await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Pipelines' }).click();
  await page.waitForURL('**/svc/-/pipelines');
  const client = new RunnerClient(srv.base, token, { name: 'test-runner', version: '1.0.0' } as never, 's_0123456789ab');
  const job = await client.requestJob();
  assert.ok(job);
  const vars = new Map((job.variables ?? []).map((v) => [v.key, v.value]));
  assert.deepEqual([vars.get('GROUP_SECRET'), vars.get('REGISTRY')], ['group-secret-123', 'registry.example.com']);
  await page
    .getByRole('link', { name: /^#\d+$/ })
    .first()
    .click();
  await page.waitForURL(/\/svc\/-\/pipelines\/\d+$/);
  await page.getByRole('link', { name: 'build' }).click();
  await page.waitForURL(`**/svc/-/jobs/${job.id}`);
  await page.getByRole('button', { name: 'Cancel job build' }).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Retry job build' }).count(), 0);
  assert.equal((await client.patchTrace(job.id, job.token, Buffer.from('building\n'), 0)).status, 202);
  await page.locator('#L1').waitFor();
  assert.equal((await client.updateJob(job.id, { token: job.token, state: 'success', exit_code: 0 })).status, 200);
  await page.getByRole('button', { name: 'Retry job build' }).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Cancel job build' }).count(), 0);
  assert.equal(await page.locator('[data-job-status]').innerText(), 'passed');
  assert.equal(await page.evaluate(() => performance.getEntriesByType('navigation').length), 1);
  await assertAccessible(page, 'the finished job page');
  await screenshot(page, 'ci-job-finished');

  // the project → Settings → CI/CD → Edit runner: its form saved, then paused from the list
  await page.getByRole('link', { name: 'Svc', exact: true }).click();
  await page.waitForURL(`**/${group.full_path}/svc`);
  await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Settings' }).click();
  await page.waitForURL('**/svc/-/edit');
  await page.getByRole('navigation', { name: 'Project settings' }).getByRole('link', { name: 'CI/CD' }).click();
  await page.waitForURL('**/svc/-/settings/ci_cd');
  await page.getByRole('link', { name: `Edit runner #${runner.id}` }).click();
  await page.waitForURL(`**/svc/-/runners/${runner.id}/edit`);
  await assertAccessible(page, 'the runner edit form');
  await page.getByLabel('Runner description').fill('fast box');
  await page.getByLabel('Tags').fill('linux, docker');
  await page.getByLabel('Protected').check();
  await page.getByLabel('Maximum job timeout (seconds, optional)').fill('1800');
  await screenshot(page, 'runner-edit');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.waitForURL('**/svc/-/settings/ci_cd');
  await page.getByText(`Runner #${runner.id} was updated.`).waitFor();
  assert.match(await page.locator(`#runner_${runner.id}`).innerText(), /fast box[\s\S]*linux, docker/);
  await page.getByRole('button', { name: `Pause runner #${runner.id}` }).click();
  await page.getByText(`Runner #${runner.id} was paused.`).waitFor();
  await page.getByRole('button', { name: `Resume runner #${runner.id}` }).waitFor();
  const row = await c.db.kysely.selectFrom('ci_runners').selectAll().where('id', '=', runner.id).executeTakeFirstOrThrow();
  assert.deepEqual(
    [row.description, row.tag_list, row.access_level, row.maximum_timeout, row.active],
    ['fast box', '["linux","docker"]', 'ref_protected', 1800, 0],
  );
});
