// The search page: /search?search=…&scope=… at the instance, a group and a project (a tab per scope, the results
// of the API's search), what anonymous visitors and non-members see, the translation units' search still at
// /search/, and in a browser: the header's search box leads there.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/build-app.ts';
import { assertAccessible, chromiumAvailable, launchBrowser, newContext, screenshot, signInWithForm } from '../helpers/browser.ts';
import { workTree } from '../helpers/git.ts';
import { insertMergeRequest } from '../helpers/merge-requests-notes.ts';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { webGet, webSignIn } from '../helpers/web.ts';

/** The results list of a page: the text of each row, spaces collapsed. */
function rows(html: string): string[] {
  const list = /<ul class="Box mb-3" data-results="search">([\s\S]*?)<\/ul>/.exec(html);
  if (!list) return [];
  return [...list[1].matchAll(/<li class="Box-row">([\s\S]*?)<\/li>/g)].map((m) =>
    m[1]
      .replace(/<[^>]+>/g, ' ')
      .replace(/&amp;/g, '&')
      .replace(/&#39;|&#x27;/g, "'")
      .replace(/\s+/g, ' ')
      .trim(),
  );
}
const tabs = (html: string) =>
  [...html.matchAll(/<a class="UnderlineNav-item" href="([^"]*)"( aria-current="page")?>([^<]*)</g)].map((m) => `${m[3]}${m[2] ? '*' : ''}`);

test('the search page: scopes at the instance, a group and a project; private projects stay hidden', async (t) => {
  const ctx = await buildTestApp(t);
  const { seed } = ctx;
  const doc = await seed.user({ username: 'doc', name: 'Emmett Brown' });
  await seed.user({ username: 'biff', name: 'Biff Tannen' });
  const group = await seed.group({ path: 'hill-valley', name: 'Hill Valley', visibility: 'public' });
  await seed.member({ group }, doc, 50);
  const { project, dir } = await seed.repoProject({ path: 'delorean', name: 'DeLorean', namespace: group, visibility: 'public' });
  const secret = await seed.project({ path: 'time-circuits', name: 'Time circuits', namespace: group, visibility: 'private' });
  await insertMergeRequest(ctx.c, project, doc, { iid: 1, title: 'Fit the flux capacitor' });
  await insertMergeRequest(ctx.c, secret, doc, { iid: 1, title: 'Tune the flux capacitor' });
  const wt = workTree(t, dir);
  wt.write('lib/flux.rb', 'def capacitor\n  1.21 <gigawatts>\nend\n');
  wt.commit('Add the flux capacitor');
  wt.push();

  const docS = await webSignIn(ctx.app, 'doc');
  const biffS = await webSignIn(ctx.app, 'biff');

  // the instance: projects first; the header's box on every page
  const home = await webGet(ctx.app, '/search', docS);
  assert.equal(home.statusCode, 200);
  assert.match(home.body, /<input id="header-search"[^>]* name="search"/);
  assert.deepEqual(tabs(home.body), ['Projects*', 'Issues', 'Merge requests', 'Milestones', 'Users', 'Translation strings']);
  assert.match(home.body, /What are you looking for\?/);

  const projects = await webGet(ctx.app, '/search?search=hill', docS);
  assert.deepEqual(rows(projects.body), ['Hill Valley / Time circuits', 'Hill Valley / DeLorean']);
  const asBiff = await webGet(ctx.app, '/search?search=hill', biffS);
  assert.deepEqual(rows(asBiff.body), ['Hill Valley / DeLorean']);
  const anonymous = await webGet(ctx.app, '/search?search=hill&scope=merge_requests');
  assert.equal(anonymous.statusCode, 200);
  assert.deepEqual(rows((await webGet(ctx.app, '/search?search=flux&scope=merge_requests')).body), ['Fit the flux capacitor hill-valley/delorean!1 · opened']);
  assert.deepEqual(rows((await webGet(ctx.app, '/search?search=flux&scope=merge_requests', docS)).body), [
    'Tune the flux capacitor hill-valley/time-circuits!1 · opened',
    'Fit the flux capacitor hill-valley/delorean!1 · opened',
  ]);
  assert.deepEqual(rows((await webGet(ctx.app, '/search?search=tannen&scope=users', docS)).body), ['Biff Tannen @biff']);
  const none = await webGet(ctx.app, '/search?search=nothing-like-it&scope=merge_requests', docS);
  assert.match(none.body, /No merge requests found/);

  // a group: its scopes, the group kept in the form and the tabs
  const inGroup = await webGet(ctx.app, `/search?search=flux&group_id=${group.id}&scope=merge_requests`, biffS);
  assert.deepEqual(tabs(inGroup.body), ['Projects', 'Issues', 'Merge requests*', 'Milestones', 'Users']);
  assert.match(inGroup.body, new RegExp(`<input type="hidden" name="group_id" value="${group.id}"`));
  assert.deepEqual(rows(inGroup.body), ['Fit the flux capacitor hill-valley/delorean!1 · opened']);

  // a project: code first (escaped as text), commits
  const code = await webGet(ctx.app, `/search?search=gigawatts&project_id=${project.id}`, biffS);
  assert.deepEqual(tabs(code.body), ['Code*', 'Issues', 'Commits', 'Merge requests', 'Milestones', 'Comments', 'Users']);
  assert.deepEqual(rows(code.body), ['lib/flux.rb 1 def capacitor 2 1.21 &lt;gigawatts&gt; 3 end']);
  assert.match(code.body, /href="\/hill-valley\/delorean\/-\/blob\/main\/lib\/flux.rb#L1"/);
  assert.deepEqual(rows((await webGet(ctx.app, `/search?search=capacitor&project_id=${project.id}&scope=commits`, biffS)).body).length, 1);
  // comments: one on an issue leads to the note on the issue's page
  const issue = await ctx.app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/issues`, headers: ctx.root, payload: { title: 'Power' } });
  const comment = await ctx.app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/issues/${issue.json().iid}/notes`,
    headers: ctx.root,
    payload: { body: 'It takes 1.21 gigawatts' },
  });
  const comments = await webGet(ctx.app, `/search?search=gigawatts&project_id=${project.id}&scope=notes`, biffS);
  assert.deepEqual(rows(comments.body), [`Administrator on #${issue.json().iid} It takes 1.21 gigawatts`]);
  assert.match(comments.body, new RegExp(`href="/hill-valley/delorean/-/issues/${issue.json().iid}#note_${comment.json().id}"`));
  // on a project's pages the header's box searches the project
  const projectHome = await webGet(ctx.app, '/hill-valley/delorean', biffS);
  assert.equal(projectHome.statusCode, 200);
  assert.match(
    projectHome.body,
    new RegExp(`<input type="hidden" name="project_id" value="${project.id}">\\s*<label for="header-search" class="sr-only">\\s*Search this project`),
  );
  // a private project is not found for a non-member
  assert.equal((await webGet(ctx.app, `/search?search=flux&project_id=${secret.id}`, biffS)).statusCode, 404);
  assert.equal((await webGet(ctx.app, `/search?search=flux&project_id=${secret.id}`)).statusCode, 404);

  // the translation units' search is still /search/ (Weblate's URL), and a tab away
  const units = await webGet(ctx.app, '/search/', docS);
  assert.equal(units.statusCode, 200);
  assert.match(units.body, /<label for="site-search" class="sr-only">Search strings<\/label>/);
  assert.match(projects.body, /href="\/search\/\?q=hill"[^>]*>Translation strings</);
});

test('anonymous visitors: search_rate_limit_unauthenticated searches a minute per address', async (t) => {
  const ctx = await buildTestApp(t);
  await ctx.seed.user({ username: 'doc' });
  const docS = await webSignIn(ctx.app, 'doc');
  await ctx.app.inject({ method: 'PUT', url: '/api/v4/application/settings', headers: ctx.root, payload: { search_rate_limit_unauthenticated: 2 } });
  // the windows are minutes: not across the end of one
  if (Date.now() % 60_000 > 55_000) await new Promise((r) => setTimeout(r, 60_000 - (Date.now() % 60_000) + 100));
  assert.equal((await webGet(ctx.app, '/search?search=hill')).statusCode, 200);
  assert.equal((await webGet(ctx.app, '/search')).statusCode, 200); // no term: no search
  assert.equal((await webGet(ctx.app, '/search?search=valley&scope=users')).statusCode, 200);
  const third = await webGet(ctx.app, '/search?search=hill');
  assert.equal(third.statusCode, 429);
  assert.match(third.body, /<h1[^>]*>/);
  assert.equal((await webGet(ctx.app, '/search?search=hill', docS)).statusCode, 200);
});

test("in a browser: typing in the header's search box leads to the results", { skip: skipWithout(chromiumAvailable, 'chromium') }, async (t) => {
  assertTool(chromiumAvailable, 'chromium');
  const { base, seed, c } = await startTestServer(t);
  const doc = await seed.user({ username: 'doc', password: 'doc-password-1' });
  const group = await seed.group({ path: 'hill-valley', visibility: 'public' });
  const project = await seed.project({ path: 'delorean', namespace: group, visibility: 'public' });
  await insertMergeRequest(c, project, doc, { iid: 1, title: 'Fit the flux capacitor' });
  const browser = await launchBrowser(t);
  const page = await (await newContext(browser, base)).newPage();
  await signInWithForm(page, 'doc', 'doc-password-1');
  await page.goto('/explore');
  await page.getByLabel('Search projects, merge requests, code and users').fill('flux');
  await page.keyboard.press('Enter');
  await page.waitForURL(/\/search\?search=flux/);
  assert.equal(await page.locator('h1').innerText(), 'Search');
  await page.getByRole('link', { name: 'Merge requests', exact: true }).last().click();
  await page.waitForURL(/scope=merge_requests/);
  assert.equal(await page.getByRole('link', { name: 'Fit the flux capacitor' }).count(), 1);
  await screenshot(page, 'search-merge-requests');
  await assertAccessible(page, 'the search page');
});
