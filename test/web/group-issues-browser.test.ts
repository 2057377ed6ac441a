// A group's issues and board as a person reaches them in a real browser (Chromium): from the start page through the
// header's Groups, the group, the group's Issues (rows from two projects, each with its reference; a filter by label),
// then the group's Boards — a list of the group's label added, a card dragged from Open to it (the board's script
// posts the move) — and the header's Issues, the issues assigned to them. Only the start page is typed. axe-core
// checks the group issues list, the board and the dashboard list; the label is checked in the rows afterwards.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertAccessible, chromiumAvailable, launchBrowser, newContext, screenshot, signInWithForm } from '../helpers/browser.ts';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';

test('in a browser: the group page → its Issues → its Boards, a card dragged to a label list; the dashboard issues — the pages accessible', {
  skip: skipWithout(chromiumAvailable, 'chromium'),
}, async (t) => {
  assertTool(chromiumAvailable, 'chromium');
  const srv = await startTestServer(t);
  const { seed, c, app } = srv;
  const tag = Math.random().toString(36).slice(2, 6);
  const rae = await seed.user({ username: `rae${tag}`, name: 'Rae Reporter', password: 'walker-password-1' });
  const group = await seed.group({ visibility: 'private', path: `crew-${tag}`, name: `Crew ${tag}` });
  const web = await seed.project({ namespace: group, visibility: 'private', path: 'web' });
  const api = await seed.project({ namespace: group, visibility: 'private', path: 'api' });
  await seed.member({ group }, rae, 20);
  const headers = (await seed.token(rae)).headers;
  const post = async (url: string, payload: Record<string, unknown>) => {
    const r = await app.inject({ method: 'POST', url: `/api/v4${url}`, headers, payload });
    assert.equal(r.statusCode, 201, r.body);
    return r.json() as Record<string, any>;
  };
  await post(`/groups/${group.id}/labels`, { name: 'bug', color: '#d9534f' });
  await post(`/groups/${group.id}/labels`, { name: 'Doing', color: '#1f883d' });
  const login = await post(`/projects/${web.id}/issues`, { title: 'Login page is blank', labels: 'bug', assignee_ids: [rae.id] });
  const tokens = await post(`/projects/${api.id}/issues`, { title: 'Tokens expire too early' });

  const browser = await launchBrowser(t);
  const page = await (await newContext(browser, srv.base)).newPage();
  await signInWithForm(page, rae.username, 'walker-password-1');

  // the start page → Groups → the group → its Issues
  await page.goto('/');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Groups' }).click();
  await page.waitForURL('**/dashboard/groups');
  await page.getByRole('list', { name: 'Groups' }).getByRole('link', { name: group.name }).click();
  await page.waitForURL(`**/groups/${group.full_path}`);
  await screenshot(page, 'group-page-navigation');
  await page.getByRole('navigation', { name: 'Group' }).getByRole('link', { name: 'Issues' }).click();
  await page.waitForURL(`**/groups/${group.full_path}/-/issues`);
  const rows = page.locator('#issues-list > li');
  assert.equal(await rows.count(), 2);
  assert.deepEqual(
    (await page.locator('#issues-list .issue-meta > span:first-child').allInnerTexts()).map((s) => s.trim()),
    [`api#${tokens.iid}`, `web#${login.iid}`],
  );
  assert.equal((await page.getByRole('link', { name: /^Open/ }).innerText()).replace(/\s+/g, ' ').trim(), 'Open 2');
  await screenshot(page, 'group-issues-list');
  await assertAccessible(page, "the group's issues");
  // a label of a row filters the list by it
  await page.locator(`#issue_${login.id}`).getByRole('link', { name: 'bug' }).click();
  await page.waitForURL(/labels=bug/);
  assert.equal(await rows.count(), 1);
  assert.equal(await page.getByLabel('Labels').inputValue(), 'bug');

  // → its Boards: the first board, a list of the group's label Doing, a card dragged there
  await page.getByRole('navigation', { name: 'Group' }).getByRole('link', { name: 'Boards' }).click();
  await page.waitForURL(`**/groups/${group.full_path}/-/boards/*`);
  await page.getByLabel('Add a list of the label').selectOption({ label: 'Doing' });
  await page.getByRole('button', { name: 'Add list' }).click();
  await page.getByText('The list was added.').waitFor();
  const open = page.getByRole('region', { name: 'Open' });
  const doing = page.getByRole('region', { name: 'Doing' });
  assert.equal(await open.getByText('Tokens expire too early').count(), 1);
  assert.equal(await doing.getByText('Tokens expire too early').count(), 0);
  const card = open.locator('[data-board-card]', { hasText: 'Tokens expire too early' });
  // the script posts the move and reloads the board: the card is in Doing as the server has it
  const posted = page.waitForResponse((r) => r.request().method() === 'POST' && /\/-\/g\/\d+\/boards\/\d+\/move$/.test(r.url()));
  const reloaded = page.waitForEvent('load');
  await card.dragTo(doing.locator('[data-board-cards]'));
  assert.equal((await posted).status(), 303);
  await reloaded;
  assert.equal(await page.getByRole('region', { name: 'Open' }).getByText('Tokens expire too early').count(), 0);
  assert.equal(await page.getByRole('region', { name: 'Doing' }).getByText('Tokens expire too early').count(), 1);
  await screenshot(page, 'group-board');
  await assertAccessible(page, "the group's board");
  const labels = await c.db.kysely
    .selectFrom('issue_labels')
    .innerJoin('labels', 'labels.id', 'issue_labels.label_id')
    .select(['labels.title', 'labels.group_id'])
    .where('issue_labels.issue_id', '=', tokens.id)
    .execute();
  assert.deepEqual(labels, [{ title: 'Doing', group_id: group.id }]);

  // the header's Issues: the issues assigned to them, by their full reference
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Issues' }).click();
  await page.waitForURL('**/dashboard/issues');
  assert.equal(await rows.count(), 1);
  assert.equal((await page.locator('#issues-list .issue-meta > span:first-child').innerText()).trim(), `${group.full_path}/web#${login.iid}`);
  await page.getByRole('navigation', { name: 'Whose issues' }).getByRole('link', { name: 'Created by you' }).click();
  await page.waitForURL(/scope=created_by_me/);
  assert.equal(await rows.count(), 2);
  await screenshot(page, 'dashboard-issues');
  await assertAccessible(page, 'the dashboard issues');
});
