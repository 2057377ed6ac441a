// The forge as a person walks it, in a real browser (Chromium): sign in → dashboard → create a project
// through its form → open a file → open a commit → open a merge request through its form and merge it.
// Each page is screenshotted (test-artifacts/screenshots/forge-*.png) and checked by axe-core; the state
// afterwards is checked through the API and git.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertAccessible, chromiumAvailable, launchBrowser, newContext, screenshot, signInWithForm } from '../helpers/browser.ts';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';

test('forge walk: sign in, create a project, open a file and a commit, open a merge request and merge it', {
  skip: skipWithout(chromiumAvailable, 'chromium'),
}, async (t) => {
  assertTool(chromiumAvailable, 'chromium');
  const ctx = await startTestServer(t);
  const { base, seed, app } = ctx;
  const user = await seed.user({ username: 'walker', name: 'Walker', password: 'walker-password-1' });
  const { headers } = await seed.token(user, { scopes: ['api'] });
  const browser = await launchBrowser(t);
  const page = await (await newContext(browser, base)).newPage();
  const step = async (name: string) => {
    await screenshot(page, `forge-${name}`);
    await assertAccessible(page, name);
  };

  // sign in → the dashboard
  await signInWithForm(page, 'walker', 'walker-password-1');
  assert.equal(new URL(page.url()).pathname, '/');
  await step('dashboard');

  // the dashboard's "New project" → the form → the new project's home
  await page.getByRole('link', { name: 'New project' }).first().click();
  await page.getByLabel('Project name', { exact: true }).fill('Walk Through');
  await page.getByLabel('Public').check();
  await page.getByLabel('Initialize repository with a README').check();
  await step('new-project');
  await page.getByRole('button', { name: 'Create project' }).click();
  await page.waitForURL(/\/walker\/walk-through$/);
  assert.equal(await page.locator('h1').first().innerText(), 'Walk Through');
  await step('project-home');
  const projects = await app.inject({
    method: 'GET',
    url: '/api/v4/projects/walker%2Fwalk-through',
    headers,
  });
  assert.equal(projects.statusCode, 200);
  const project = projects.json();
  assert.equal(project.visibility, 'public');

  // open a file from the tree
  await page.getByRole('link', { name: 'README.md', exact: true }).first().click();
  await page.waitForURL(/\/-\/blob\/main\/README\.md$/);
  // a markdown file is shown rendered, as GitLab shows it; its source has line anchors
  assert.equal(await page.locator('.markdown-body h1').innerText(), 'Walk Through');
  await step('file');
  await page.goto('/walker/walk-through/-/blob/main/README.md?plain=1');
  assert.equal(await page.locator('#L1').count(), 1, 'line anchors');
  await step('file-source');

  // a change on a branch, as a push would bring it
  const commit = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/repository/commits`,
    headers,
    payload: {
      branch: 'feature',
      start_branch: 'main',
      commit_message: 'Describe the walk',
      actions: [{ action: 'update', file_path: 'README.md', content: '# Walk Through\n\nA walk.\n' }],
    },
  });
  assert.equal(commit.statusCode, 201, commit.body);
  const sha = commit.json().id as string;

  // open the commit page (from the branch's history)
  await page.goto(`/walker/walk-through/-/commits/feature`);
  await page.getByRole('link', { name: 'Describe the walk' }).first().click();
  await page.waitForURL(new RegExp(`/-/commit/${sha}$`));
  assert.ok((await page.locator('.d2h-file-wrapper').count()) >= 1, 'the diff is shown');
  await step('commit');

  // a merge request through its form
  await page.goto('/walker/walk-through/-/merge_requests/new');
  await page.getByLabel('Source branch').selectOption('feature');
  await page.getByLabel('Target branch').selectOption('main');
  await page.getByLabel('Title', { exact: true }).fill('Describe the walk');
  await page.getByLabel('Description', { exact: true }).fill('It walks **well**.');
  await step('new-merge-request');
  await page.getByRole('button', { name: 'Create merge request' }).click();
  await page.waitForURL(/\/-\/merge_requests\/1$/);
  await step('merge-request');

  // merge it
  await page.getByRole('button', { name: 'Merge', exact: true }).click();
  await page.waitForURL(/\/-\/merge_requests\/1$/);
  await page.getByText('Merged', { exact: false }).first().waitFor();
  await step('merged');
  const mr = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/merge_requests/1`, headers });
  assert.equal(mr.json().state, 'merged');
  const main = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/repository/files/README.md/raw?ref=main`, headers });
  assert.equal(main.body, '# Walk Through\n\nA walk.\n');
});
