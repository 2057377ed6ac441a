// The issue tracker's walk in a real browser (Chromium), end to end: a person opens an issue with a label from
// the issue form, moves it across the board to the "Doing" list, writes "Closes #N" in a new merge request's
// description (the issue reference is a link on the merge request's page), merges it, follows the link and
// sees the issue closed by the merge. axe-core checks the board and the merge request page; the rows are
// checked afterwards.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertAccessible, chromiumAvailable, launchBrowser, newContext, screenshot, signInWithForm } from '../helpers/browser.ts';
import { workTree } from '../helpers/git.ts';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';

test('in a browser: an issue opened with a label, moved across the board, closed by the merge request that names it', {
  skip: skipWithout(chromiumAvailable, 'chromium'),
}, async (t) => {
  assertTool(chromiumAvailable, 'chromium');
  // the instance's URL is the server's own: references link to it
  const srv = await startTestServer(t, {}, { selfUrl: true });
  const { seed, c, app } = srv;
  const tag = Math.random().toString(36).slice(2, 6);
  const mia = await seed.user({ username: `mia${tag}`, name: 'Mia Maintainer', password: 'walker-password-1' });
  const group = await seed.group({ visibility: 'private', path: `crew-${tag}` });
  const { project, dir } = await seed.repoProject({ namespace: group, visibility: 'private', path: 'app' });
  await seed.member({ project }, mia, 40);
  const headers = (await seed.token(mia)).headers;
  for (const [name, color] of [
    ['bug', '#d9534f'],
    ['Doing', '#1f883d'],
  ]) {
    const r = await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/labels`, headers, payload: { name, color } });
    assert.equal(r.statusCode, 201, r.body);
  }
  const wt = workTree(t, dir);
  wt.write('README.md', '# App\n').commit('Initial');
  wt.checkout('fix-save', true);
  wt.write('save.txt', 'saved\n').commit('Make Save save');
  wt.checkout('main');
  wt.push();
  const full = `${group.full_path}/app`;
  const browser = await launchBrowser(t);
  const page = await (await newContext(browser, srv.base)).newPage();
  await signInWithForm(page, mia.username, 'walker-password-1');

  // an issue with a label, from the issue form
  await page.goto(`/${full}`);
  await page
    .getByRole('navigation', { name: 'Project' })
    .getByRole('link', { name: /^Issues/ })
    .click();
  await page.getByRole('link', { name: 'New issue' }).click();
  await page.getByLabel('Title', { exact: true }).fill('Save does not save');
  await page.getByLabel('bug').check();
  await page.getByRole('button', { name: 'Create issue' }).click();
  await page.waitForURL(`**/${full}/-/issues/1`);

  // the board: add the Doing list, move the card there
  await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Boards' }).click();
  await page.waitForURL(`**/${full}/-/boards/*`);
  await page.getByLabel('Add a list of the label').selectOption({ label: 'Doing' });
  await page.getByRole('button', { name: 'Add list' }).click();
  await page.getByText('The list was added.').waitFor();
  const open = page.getByRole('region', { name: 'Open' });
  assert.equal(await open.getByText('Save does not save').count(), 1);
  await open.getByLabel('Move #1 to').selectOption({ label: 'Doing' });
  await open.getByRole('button', { name: 'Move' }).click();
  await page.getByText('#1 moved to Doing.').waitFor();
  assert.equal(await page.getByRole('region', { name: 'Doing' }).getByText('Save does not save').count(), 1);
  assert.equal(await page.getByRole('region', { name: 'Open' }).getByText('Save does not save').count(), 0);
  await screenshot(page, 'issues-walk-board');
  await assertAccessible(page, 'the board');

  // a merge request whose description closes the issue
  await page.goto(`/${full}/-/merge_requests`);
  await page.getByRole('link', { name: 'New merge request' }).click();
  await page.getByLabel('Source branch').selectOption('fix-save');
  await page.getByLabel('Target branch').selectOption('main');
  await page.getByLabel('Title', { exact: true }).fill('Make Save save');
  await page.getByLabel('Description', { exact: true }).fill('Closes #1');
  await page.getByRole('button', { name: /Create merge request/ }).click();
  await page.waitForURL(`**/${full}/-/merge_requests/1`);
  const ref = page.locator('a.gfm-issue', { hasText: '#1' }).first();
  assert.equal(await ref.getAttribute('title'), 'Save does not save');
  await screenshot(page, 'issues-walk-merge-request');
  await assertAccessible(page, 'the merge request');

  // merge it, then follow the reference: the issue is closed by the merge
  await page.getByRole('button', { name: 'Merge', exact: true }).click();
  await page
    .getByText(/merged/i)
    .first()
    .waitFor();
  await c.issueClosing.idle();
  await page.locator('a.gfm-issue', { hasText: '#1' }).first().click();
  await page.waitForURL(`**/${full}/-/issues/1`);
  assert.equal(await page.locator('#issue-state .Label').first().innerText(), 'Closed');
  await page.getByText('closed via merge request !1').waitFor();
  await screenshot(page, 'issues-walk-closed');
  await assertAccessible(page, 'the closed issue');

  const issue = await c.db.kysely.selectFrom('issues').selectAll().where('project_id', '=', project.id).where('iid', '=', 1).executeTakeFirstOrThrow();
  assert.deepEqual([issue.state, issue.closed_by_id], ['closed', mia.id]);
  const labels = await c.db.kysely
    .selectFrom('issue_labels')
    .innerJoin('labels', 'labels.id', 'issue_labels.label_id')
    .select('labels.title')
    .where('issue_id', '=', issue.id)
    .orderBy('labels.title')
    .execute();
  assert.deepEqual(
    labels.map((l) => l.title),
    ['Doing', 'bug'],
  );
});
