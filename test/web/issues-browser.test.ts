// The issue tracker as a person walks it in a real browser (Chromium): the project's page → the Issues tab →
// New issue → title, a label, a preview of the description → the issue page → a comment → Close. Each page is
// screenshotted (test-artifacts/screenshots/issues-*.png) and the list and issue pages are checked by
// axe-core; the rows are checked afterwards.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertAccessible, chromiumAvailable, launchBrowser, newContext, screenshot, signInWithForm } from '../helpers/browser.ts';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';

test('in a browser: open the Issues tab, create an issue with a label, comment on it and close it — the pages accessible', {
  skip: skipWithout(chromiumAvailable, 'chromium'),
}, async (t) => {
  assertTool(chromiumAvailable, 'chromium');
  const srv = await startTestServer(t);
  const { seed, c, app } = srv;
  const tag = Math.random().toString(36).slice(2, 6);
  const rae = await seed.user({ username: `rae${tag}`, name: 'Rae Reporter', password: 'walker-password-1' });
  const group = await seed.group({ visibility: 'private', path: `team-${tag}` });
  const { project } = await seed.repoProject({ namespace: group, visibility: 'private', path: 'app' });
  await seed.member({ project }, rae, 20);
  const headers = (await seed.token(rae)).headers;
  for (const [name, color] of [
    ['bug', '#d9534f'],
    ['documentation', '#f0ad4e'],
  ]) {
    const r = await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/labels`, headers, payload: { name, color } });
    assert.equal(r.statusCode, 201, r.body);
  }
  const first = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/issues`,
    headers,
    payload: { title: 'An older issue', labels: 'documentation' },
  });
  assert.equal(first.statusCode, 201, first.body);
  const full = `${group.full_path}/app`;
  const browser = await launchBrowser(t);
  const page = await (await newContext(browser, srv.base)).newPage();
  await signInWithForm(page, rae.username, 'walker-password-1');

  // the project's page → its Issues tab (with the one open issue counted)
  await page.goto(`/${full}`);
  const tab = page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: /^Issues/ });
  assert.equal((await tab.innerText()).replace(/\s+/g, ' ').trim(), 'Issues 1');
  await tab.click();
  await page.waitForURL(`**/${full}/-/issues`);
  assert.equal(await page.locator('#issues-list > li').count(), 1);
  await screenshot(page, 'issues-list');
  await assertAccessible(page, 'the issues list');

  // New issue → title, a label, the description previewed
  await page.getByRole('link', { name: 'New issue' }).click();
  await page.waitForURL(`**/${full}/-/issues/new`);
  await page.getByLabel('Title', { exact: true }).fill('The save button does nothing');
  await page.getByLabel('bug').check();
  await page.getByLabel('Description', { exact: true }).fill('Press **Save**: nothing happens.');
  await page.getByRole('tab', { name: 'Preview' }).click();
  await page.locator('#issue_description_preview strong').waitFor();
  assert.equal(await page.locator('#issue_description_preview strong').innerText(), 'Save');
  assert.equal(await page.locator('#issue_description').isVisible(), false);
  await screenshot(page, 'issues-new-preview');
  await assertAccessible(page, 'the new issue form');
  await page.getByRole('tab', { name: 'Write' }).click();
  assert.equal(await page.locator('#issue_description').isVisible(), true);
  await page.getByRole('button', { name: 'Create issue' }).click();

  // the issue page
  await page.waitForURL(`**/${full}/-/issues/2`);
  await page.getByText('The issue was created.').waitFor();
  assert.equal((await page.locator('h1').innerText()).replace(/\s+/g, ' ').trim(), 'The save button does nothing #2');
  assert.equal(await page.locator('#issue-description strong').innerText(), 'Save');
  assert.equal(await page.locator('aside .issue-label').innerText(), 'bug');
  await screenshot(page, 'issues-show');
  await assertAccessible(page, 'the issue page');

  // a comment
  await page.getByLabel('Comment', { exact: true }).fill('It works after a *reload*.');
  await page.getByRole('button', { name: 'Comment', exact: true }).click();
  await page.getByText('Your comment was added.').waitFor();
  assert.equal(await page.locator('.note.Box .markdown-body em').innerText(), 'reload');

  // close it
  await page.getByRole('button', { name: 'Close issue' }).click();
  await page.getByText('The issue was closed.').waitFor();
  assert.equal(await page.locator('#issue-state .Label').first().innerText(), 'Closed');
  await page.getByRole('button', { name: 'Reopen issue' }).waitFor();
  await screenshot(page, 'issues-closed');
  await assertAccessible(page, 'the closed issue');

  const row = await c.db.kysely.selectFrom('issues').selectAll().where('project_id', '=', project.id).where('iid', '=', 2).executeTakeFirstOrThrow();
  assert.equal(row.title, 'The save button does nothing');
  assert.equal(row.state, 'closed');
  assert.equal(row.author_id, rae.id);
  assert.equal(row.user_notes_count, 1);
  const labels = await c.db.kysely
    .selectFrom('issue_labels')
    .innerJoin('labels', 'labels.id', 'issue_labels.label_id')
    .select('labels.title')
    .where('issue_labels.issue_id', '=', row.id)
    .execute();
  assert.deepEqual(
    labels.map((l) => l.title),
    ['bug'],
  );

  // the list now: one open, the closed one under Closed
  await page.goto(`/${full}/-/issues?state=closed`);
  assert.equal(await page.locator('#issues-list > li').count(), 1);
  await screenshot(page, 'issues-list-closed');

  // on a phone: the sidebar goes below the discussion, nothing wider than the screen
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`/${full}/-/issues/2`);
  const overflow = await page.evaluate(() => document.querySelector('main')!.scrollWidth - document.querySelector('main')!.clientWidth);
  assert.ok(overflow <= 0, `the issue page's content is ${overflow}px wider than a phone`);
  await screenshot(page, 'issues-show-mobile');
});
