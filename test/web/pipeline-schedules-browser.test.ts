// Pipeline schedules and triggers as a Maintainer reaches them in a real browser (Chromium): from the project's
// page through its Pipelines tab to Pipeline schedules — a schedule created with a bad cron line first (the form
// shows GitLab's message and keeps the values), then a good one; run now (its pipeline appears), edited; another
// Maintainer takes ownership — then Pipeline triggers: a token added (shown in full to its owner) and revoked.
// Only the project's page is typed; axe-core checks the schedules list, the form and the triggers page.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertAccessible, chromiumAvailable, launchBrowser, newContext, screenshot, signInWithForm } from '../helpers/browser.ts';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';

test('in a browser: project → Pipelines → schedules (new, run, edit, take ownership) and triggers (add, revoke) — the pages accessible', {
  skip: skipWithout(chromiumAvailable, 'chromium'),
}, async (t) => {
  assertTool(chromiumAvailable, 'chromium');
  const srv = await startTestServer(t);
  const { seed, c, app } = srv;
  const tag = Math.random().toString(36).slice(2, 6);
  const mia = await seed.user({ username: `mia${tag}`, name: 'Mia Maintainer', password: 'walker-password-1' });
  const max = await seed.user({ username: `max${tag}`, name: 'Max Maintainer', password: 'walker-password-2' });
  const group = await seed.group({ visibility: 'private', path: `ops-${tag}`, name: `Ops ${tag}` });
  const { project } = await seed.repoProject({ namespace: group, visibility: 'private', path: 'svc', name: 'Svc' });
  await seed.member({ group }, mia, 40);
  await seed.member({ group }, max, 40);
  const headers = (await seed.token(mia)).headers;
  const commit = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/repository/commits`,
    headers,
    payload: { branch: 'main', commit_message: 'ci', actions: [{ action: 'create', file_path: '.service-ci.yml', content: 'build:\n  script: [echo hi]\n' }] },
  });
  assert.equal(commit.statusCode, 201, commit.body);

  const browser = await launchBrowser(t);
  const page = await (await newContext(browser, srv.base)).newPage();
  await signInWithForm(page, mia.username, 'walker-password-1');

  // the project page → Pipelines → Pipeline schedules
  await page.goto(`/${group.full_path}/svc`);
  await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Pipelines' }).click();
  await page.waitForURL(`**/${group.full_path}/svc/-/pipelines`);
  await page.getByRole('navigation', { name: 'CI/CD' }).getByRole('link', { name: 'Pipeline schedules' }).click();
  await page.waitForURL('**/-/pipeline_schedules');
  await page.getByText('No pipeline schedules').waitFor();
  await page.getByRole('link', { name: 'New schedule' }).click();
  await page.waitForURL('**/-/pipeline_schedules/new');
  await assertAccessible(page, 'the new schedule form');

  // a bad cron line: GitLab's message, the values kept
  await page.getByLabel('Description').fill('Nightly build');
  await page.getByLabel('Interval pattern').fill('every night');
  await page.getByRole('button', { name: 'Create pipeline schedule' }).click();
  await page.getByText('Cron syntax is invalid').waitFor();
  assert.equal(await page.getByLabel('Description').inputValue(), 'Nightly build');
  assert.deepEqual(await c.db.kysely.selectFrom('ci_pipeline_schedules').selectAll().where('project_id', '=', project.id).execute(), []);
  await page.getByLabel('Interval pattern').fill('0 2 * * *');
  await page.getByLabel('Cron timezone').fill('Europe/Berlin');
  await page.getByRole('button', { name: 'Create pipeline schedule' }).click();
  await page.waitForURL('**/-/pipeline_schedules');
  await page.getByText('Pipeline schedule was successfully created.').waitFor();
  const [row] = await c.db.kysely.selectFrom('ci_pipeline_schedules').selectAll().where('project_id', '=', project.id).execute();
  assert.deepEqual(
    [row.description, row.ref, row.cron, row.cron_timezone, row.owner_id, row.active],
    ['Nightly build', 'main', '0 2 * * *', 'Europe/Berlin', mia.id, 1],
  );
  const line = page.locator(`#schedule_${row.id}`);
  assert.match(await line.innerText(), /Nightly build\s+main\s+0 2 \* \* \* \(Europe\/Berlin\)/);
  await screenshot(page, 'pipeline-schedules-list');
  await assertAccessible(page, 'the pipeline schedules');

  // run it now: the pipeline is created for her
  await line.getByRole('button', { name: 'Run Nightly build' }).click();
  await page.getByText('Successfully scheduled a pipeline to run.').waitFor();
  await c.ci.schedules.idle();
  const runs = await c.db.kysely.selectFrom('ci_pipelines').selectAll().where('pipeline_schedule_id', '=', row.id).execute();
  assert.deepEqual(
    runs.map((p) => [p.source, p.user_id, p.ref]),
    [['schedule', mia.id, 'main']],
  );

  // edit: the form holds the schedule, the change is saved
  await line.getByRole('link', { name: 'Edit Nightly build' }).click();
  await page.waitForURL(`**/-/pipeline_schedules/${row.id}/edit`);
  assert.equal(await page.getByLabel('Interval pattern').inputValue(), '0 2 * * *');
  await page.getByLabel('Description').fill('Nightly release build');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText('Pipeline schedule was successfully updated.').waitFor();
  assert.equal(
    (await c.db.kysely.selectFrom('ci_pipeline_schedules').select('description').where('id', '=', row.id).executeTakeFirstOrThrow()).description,
    'Nightly release build',
  );

  // another Maintainer takes ownership
  const page2 = await (await newContext(browser, srv.base)).newPage();
  await signInWithForm(page2, max.username, 'walker-password-2');
  await page2.goto(`/${group.full_path}/svc`);
  await page2.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Pipelines' }).click();
  await page2.getByRole('navigation', { name: 'CI/CD' }).getByRole('link', { name: 'Pipeline schedules' }).click();
  await page2.getByRole('button', { name: 'Take ownership of Nightly release build' }).click();
  await page2.getByText('You are now the owner of the pipeline schedule.').waitFor();
  assert.match(await page2.locator(`#schedule_${row.id}`).innerText(), /Max Maintainer/);
  assert.equal((await c.db.kysely.selectFrom('ci_pipeline_schedules').select('owner_id').where('id', '=', row.id).executeTakeFirstOrThrow()).owner_id, max.id);

  // back to the pipelines → Pipeline triggers: a token added, shown in full to her, then revoked
  await page.getByRole('link', { name: 'Pipelines' }).first().click();
  await page.waitForURL('**/-/pipelines');
  await page.getByRole('navigation', { name: 'CI/CD' }).getByRole('link', { name: 'Pipeline triggers' }).click();
  await page.waitForURL('**/-/triggers');
  await page.getByLabel('Description').fill('Deploy hook');
  await page.getByRole('button', { name: 'Create pipeline trigger token' }).click();
  await page.getByText('Trigger token was created.').waitFor();
  const trigger = await c.db.kysely.selectFrom('ci_triggers').selectAll().where('project_id', '=', project.id).executeTakeFirstOrThrow();
  const token = c.ci.triggers.view({ isAdmin: true } as never, { level: 50 } as never, trigger).token;
  assert.match(await page.locator(`#trigger_${trigger.id}`).innerText(), new RegExp(`Deploy hook\\s+${token}`));
  await screenshot(page, 'pipeline-triggers');
  await assertAccessible(page, 'the pipeline triggers');
  await page.getByRole('button', { name: 'Revoke Deploy hook' }).click();
  await page.getByText('Trigger token was revoked.').waitFor();
  assert.deepEqual(await c.db.kysely.selectFrom('ci_triggers').selectAll().where('project_id', '=', project.id).execute(), []);
});
