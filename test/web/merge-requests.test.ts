// Merge request pages: the list and its filters, the new merge request form (created, refused with
// what was typed kept), the merge request page (description, notes with anchors, commits, changes),
// merging through the form (and a forged merge refused), approvals and comments — each checked
// against the rows and refs afterwards.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/build-app.ts';
import { seedPipeline } from '../helpers/ci.ts';
import { bareGit, workTree } from '../helpers/git.ts';
import { webGet, webPost, webSignIn } from '../helpers/web.ts';
import { assertAccessible, chromiumAvailable, launchBrowser, newContext, screenshot, signInWithForm } from '../helpers/browser.ts';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';

async function setup(t: Parameters<typeof buildTestApp>[0]) {
  const ta = await buildTestApp(t);
  const { seed, c } = ta;
  const tag = Math.random().toString(36).slice(2, 7);
  const dev = await seed.user({ name: 'Dee Developer', username: `dee${tag}` });
  const maintainer = await seed.user({ name: 'Mae Maintainer', username: `mae${tag}` });
  const stranger = await seed.user({ name: 'Stan Stranger', username: `stan${tag}` });
  const group = await seed.group({ visibility: 'private', path: `grp-${tag}` });
  const { project, dir } = await seed.repoProject({ namespace: group, visibility: 'private', path: 'app' });
  await seed.member({ project }, dev, 30);
  await seed.member({ project }, maintainer, 40);
  const wt = workTree(t, dir);
  wt.write('README.md', 'one\ntwo\nthree\n').commit('Initial');
  wt.checkout('feature', true);
  wt.write('f.txt', 'feature line\n').commit('Feature work');
  wt.checkout('main').checkout('other', true);
  wt.write('o.txt', 'other\n').commit('Other work');
  wt.checkout('main').checkout('third', true);
  wt.write('t.txt', 'third\n').commit('Third work');
  wt.checkout('main');
  wt.push();
  const full = `${group.full_path}/app`;
  const tokens = { dev: (await seed.token(dev)).headers, maintainer: (await seed.token(maintainer)).headers };
  const api = async (who: Record<string, string>, source: string, extra: Record<string, unknown> = {}) => {
    const r = await ta.app.inject({
      method: 'POST',
      url: `/api/v4/projects/${project.id}/merge_requests`,
      headers: who,
      payload: { source_branch: source, target_branch: 'main', title: `Merge ${source}`, ...extra },
    });
    assert.equal(r.statusCode, 201, r.body);
    return r.json() as { id: number; iid: number; web_url: string };
  };
  const mrRow = (iid: number) =>
    c.db.kysely.selectFrom('merge_requests').selectAll().where('project_id', '=', project.id).where('iid', '=', iid).executeTakeFirstOrThrow();
  const count = async () =>
    Number(
      (
        await c.db.kysely
          .selectFrom('merge_requests')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('project_id', '=', project.id)
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    ...ta,
    dev,
    maintainer,
    stranger,
    group,
    project,
    dir,
    wt,
    full,
    tokens,
    api,
    mrRow,
    count,
    head: (ref: string) => bareGit(dir, ['rev-parse', ref]).trim(),
  };
}

const listedIds = (html: string) => [...html.matchAll(/id="merge_request_(\d+)"/g)].map((m) => Number(m[1])).sort((a, b) => a - b);

test('the project list: state tabs with counts, author and label filters, search — exactly the right merge requests', async (t) => {
  const s = await setup(t);
  const a = await s.api(s.tokens.dev, 'feature', { labels: 'bug', description: 'alpha' });
  const b = await s.api(s.tokens.maintainer, 'other', { title: 'Polish the widget' });
  const cl = await s.api(s.tokens.dev, 'third', { title: 'Closed one' });
  const close = await s.app.inject({
    method: 'PUT',
    url: `/api/v4/projects/${s.project.id}/merge_requests/${cl.iid}`,
    headers: s.tokens.dev,
    payload: { state_event: 'close' },
  });
  assert.equal(close.statusCode, 200, close.body);
  const sess = await webSignIn(s.app, s.dev.username);
  const base = `/${s.full}/-/merge_requests`;

  const open = await webGet(s.app, base, sess);
  assert.equal(open.statusCode, 200, open.body.slice(0, 500));
  assert.deepEqual(listedIds(open.body), [a.id, b.id]);
  assert.match(open.body, /Open<span class="Counter">2<\/span>/);
  assert.match(open.body, /Closed<span class="Counter">1<\/span>/);
  assert.match(open.body, /All<span class="Counter">3<\/span>/);
  assert.match(open.body, /<label class="d-block f6 text-bold" for="mr-author">\s*Author\s*<\/label>/);
  assert.match(open.body, /<label class="d-block f6 text-bold" for="mr-label">\s*Label\s*<\/label>/);
  assert.match(open.body, /New merge request/);

  assert.deepEqual(listedIds((await webGet(s.app, `${base}?state=closed`, sess)).body), [cl.id]);
  assert.deepEqual(listedIds((await webGet(s.app, `${base}?state=all`, sess)).body), [a.id, b.id, cl.id]);
  assert.deepEqual(listedIds((await webGet(s.app, `${base}?state=all&author_username=${s.dev.username}`, sess)).body), [a.id, cl.id]);
  assert.deepEqual(listedIds((await webGet(s.app, `${base}?label_name=bug`, sess)).body), [a.id]);
  assert.deepEqual(listedIds((await webGet(s.app, `${base}?search=widget`, sess)).body), [b.id]);
  assert.deepEqual(listedIds((await webGet(s.app, `${base}?author_username=nobody-at-all`, sess)).body), []);
  // nonsense parameters are not errors
  assert.equal((await webGet(s.app, `${base}?state=bogus&page=-4`, sess)).statusCode, 200);

  // the dashboard: authored by the viewer
  const dash = await webGet(s.app, '/dashboard/merge_requests?scope=authored&state=all', sess);
  assert.equal(dash.statusCode, 200);
  assert.deepEqual(listedIds(dash.body), [a.id, cl.id]);
  assert.equal((await webGet(s.app, '/dashboard/merge_requests')).statusCode, 302);

  // a stranger sees a 404 page, as the API's 404
  const strangerS = await webSignIn(s.app, s.stranger.username);
  assert.equal((await webGet(s.app, base, strangerS)).statusCode, 404);
  assert.equal((await webGet(s.app, `/${s.full}/-/merge_requests/${a.iid}`, strangerS)).statusCode, 404);
});

test('the new merge request form creates one; bad input is refused with 422, nothing created, what was typed kept', async (t) => {
  const s = await setup(t);
  const sess = await webSignIn(s.app, s.dev.username);
  const form = await webGet(s.app, `/${s.full}/-/merge_requests/new`, sess);
  assert.equal(form.statusCode, 200, form.body.slice(0, 300));
  assert.match(form.body, /<label class="FormControl-label" for="merge_request_source_branch">Source branch<\/label>/);
  assert.match(form.body, /<label class="FormControl-label" for="merge_request_target_branch">Target branch<\/label>/);
  assert.match(form.body, /for="merge_request_title">Title</);
  assert.match(form.body, /for="merge_request_description">Description</);
  assert.match(form.body, /<option value="main" selected>main<\/option>/);
  assert.match(form.body, /action="\/-\/p\/\d+\/merge_requests"/);

  const action = `/-/p/${s.project.id}/merge_requests`;
  const same = await webPost(s.app, action, sess, { source_branch: 'main', target_branch: 'main', title: 'Same <b>branches</b>', description: 'kept text' });
  assert.equal(same.statusCode, 422);
  assert.match(same.body, /You can&#39;t use same project\/branch for source and target/);
  assert.match(same.body, /value="Same &lt;b&gt;branches&lt;\/b&gt;"/);
  assert.match(same.body, />\nkept text<\/textarea>/);
  const untitled = await webPost(s.app, action, sess, { source_branch: 'feature', target_branch: 'main', title: '  ' });
  assert.equal(untitled.statusCode, 422);
  assert.match(untitled.body, /Title can&#39;t be blank/);
  const missing = await webPost(s.app, action, sess, { source_branch: 'nope', target_branch: 'main', title: 'x' });
  assert.equal(missing.statusCode, 422);
  assert.match(missing.body, /Source branch &quot;nope&quot; does not exist/);
  assert.equal(await s.count(), 0);

  const ok = await webPost(s.app, action, sess, { source_branch: 'feature', target_branch: 'main', title: 'Add the feature', description: '**bold** text' });
  assert.equal(ok.statusCode, 303, ok.body.slice(0, 300));
  const row = await s.mrRow(1);
  assert.equal(row.title, 'Add the feature');
  assert.equal(row.description, '**bold** text');
  assert.equal(row.author_id, s.dev.id);
  assert.equal(ok.headers.location, `/${s.full}/-/merge_requests/1`);

  // an open merge request for the pair already exists
  const dup = await webPost(s.app, action, sess, { source_branch: 'feature', target_branch: 'main', title: 'Again' });
  assert.equal(dup.statusCode, 422);
  assert.match(dup.body, /Another open merge request already exists for this source branch/);
  assert.equal(await s.count(), 1);

  // the markdown preview (CSRF-checked, the same renderer)
  const preview = await webPost(s.app, '/-/markdown_preview', sess, { description: '**hi** <script>x</script>', project_id: String(s.project.id) });
  assert.equal(preview.statusCode, 200);
  assert.match(preview.body, /<strong>hi<\/strong>/);
  assert.doesNotMatch(preview.body, /<script>/);
  const noCsrf = await s.app.inject({ method: 'POST', url: '/-/markdown_preview', headers: { cookie: sess.cookie }, payload: { description: 'x' } });
  assert.equal(noCsrf.statusCode, 422);

  // a stranger cannot open the form of a private project, nor post to it
  const strangerS = await webSignIn(s.app, s.stranger.username);
  assert.equal((await webGet(s.app, `/${s.full}/-/merge_requests/new`, strangerS)).statusCode, 404);
  assert.equal((await webPost(s.app, action, strangerS, { source_branch: 'other', target_branch: 'main', title: 'x' })).statusCode, 404);
  assert.equal(await s.count(), 1);
});

test('the merge request page: description, notes with anchors, commits and the Changes tab', async (t) => {
  const s = await setup(t);
  const mr = await s.api(s.tokens.dev, 'feature', { description: 'Some **words** <script>alert(1)</script>' });
  const note = await s.app.inject({
    method: 'POST',
    url: `/api/v4/projects/${s.project.id}/merge_requests/${mr.iid}/notes`,
    headers: s.tokens.maintainer,
    payload: { body: 'Looks <b>good</b>' },
  });
  assert.equal(note.statusCode, 201);
  const noteId = (note.json() as { id: number }).id;
  const sess = await webSignIn(s.app, s.dev.username);
  // the web_url the API emits is the page
  const page = await webGet(s.app, new URL(mr.web_url).pathname, sess);
  assert.equal(page.statusCode, 200, page.body.slice(0, 500));
  assert.equal((page.body.match(/<h1/g) ?? []).length, 1);
  assert.match(page.body, /<strong>words<\/strong>/);
  assert.doesNotMatch(page.body, /<script>alert/);
  assert.match(page.body, new RegExp(`id="note_${noteId}"`));
  assert.match(page.body, /Looks &lt;b&gt;good&lt;\/b&gt;/);
  assert.doesNotMatch(page.body, /Looks <b>good<\/b>/);
  assert.match(page.body, /<span class="Label Label--success Label--large mr-2">Open<\/span>/);
  assert.match(page.body, /data-merge-status="/);
  assert.match(page.body, /for="note_body">Comment</);

  // no pipeline yet; then the source head's newest pipeline, linked
  assert.doesNotMatch(page.body, /id="head-pipeline"/);
  const { pipeline } = await seedPipeline(s.c, s.project, { ref: 'feature', sha: s.head('feature'), status: 'success' });
  const withPipeline = await webGet(s.app, `/${s.full}/-/merge_requests/${mr.iid}`, sess);
  assert.match(withPipeline.body, new RegExp(`>passed</span> <a href="/${s.full}/-/pipelines/${pipeline.id}">Pipeline #${pipeline.id}</a>`));

  const commits = await webGet(s.app, `/${s.full}/-/merge_requests/${mr.iid}/commits`, sess);
  assert.equal(commits.statusCode, 200);
  assert.match(commits.body, /Feature work/);
  const diffs = await webGet(s.app, `/${s.full}/-/merge_requests/${mr.iid}/diffs`, sess);
  assert.equal(diffs.statusCode, 200);
  assert.match(diffs.body, /d2h-/);
  assert.match(diffs.body, /f\.txt/);
  assert.match(diffs.body, /feature line/);
  // again, from the cache: the same page (but for the relative times, which a loaded machine may render a second later)
  const relative = (html: string) => html.replace(/(<time [^>]*>)[^<]*(<\/time>)/g, '$1…$2');
  assert.equal(relative((await webGet(s.app, `/${s.full}/-/merge_requests/${mr.iid}/diffs`, sess)).body), relative(diffs.body));

  assert.equal((await webGet(s.app, `/${s.full}/-/merge_requests/999`, sess)).statusCode, 404);
  assert.equal((await webGet(s.app, `/${s.full}/-/merge_requests/abc`, sess)).statusCode, 404);
  assert.equal((await webGet(s.app, `/${s.full}/-/merge_requests/99999999999999`, sess)).statusCode, 404);
});

test('merging through the form moves the target; a Developer without merge rights sees no Merge button and a forged POST merges nothing', async (t) => {
  const s = await setup(t);
  const mr = await s.api(s.tokens.dev, 'feature');
  const before = s.head('main');
  const featureHead = s.head('feature');
  const path = `/${s.full}/-/merge_requests/${mr.iid}`;
  const action = `/-/p/${s.project.id}/merge_requests/${mr.iid}/merge`;

  const dev = await webSignIn(s.app, s.dev.username);
  const devPage = await webGet(s.app, path, dev);
  assert.equal(devPage.statusCode, 200);
  assert.doesNotMatch(devPage.body, />\s*Merge\s*<\/button>/);
  const forged = await webPost(s.app, action, dev, {});
  assert.equal(forged.statusCode, 403);
  assert.equal((await s.mrRow(mr.iid)).state, 'opened');
  assert.equal(s.head('main'), before);

  const mae = await webSignIn(s.app, s.maintainer.username);
  const page = await webGet(s.app, path, mae);
  assert.match(page.body, /<button type="submit" class="btn btn-primary">Merge<\/button>/);
  assert.match(page.body, /<label for="merge_squash"><input type="checkbox" id="merge_squash" name="squash" value="1"\s*\/?>Squash commits<\/label>/);
  assert.match(page.body, /Delete source branch<\/label>/);
  const merged = await webPost(s.app, action, mae, { squash: '1', should_remove_source_branch: '1', sha: featureHead });
  assert.equal(merged.statusCode, 303, merged.body.slice(0, 300));
  assert.equal(merged.headers.location, path);
  const row = await s.mrRow(mr.iid);
  assert.equal(row.state, 'merged');
  assert.notEqual(s.head('main'), before);
  assert.equal(bareGit(s.dir, ['show', 'main:f.txt']), 'feature line\n');
  // the flash on the next page, once
  const cookie = `${mae.cookie}; ${String(merged.headers['set-cookie']).split(';')[0]}`;
  const after = await s.app.inject({ method: 'GET', url: path, headers: { cookie } });
  assert.match(after.body, /The merge request was merged\./);
  assert.match(after.body, /Label--done Label--large mr-2">Merged</);
  // merging again: an alert, nothing changes
  const again = await webPost(s.app, action, mae, {});
  assert.equal(again.statusCode, 303);
  assert.match(String(again.headers['set-cookie']), /alert/);
});

test('a failed head pipeline: the page shows the pipeline the API names; required to succeed, the merge is blocked and not offered; not required, the failure stands next to the merge state', async (t) => {
  const s = await setup(t);
  const mr = await s.api(s.tokens.dev, 'feature');
  const { pipeline } = await seedPipeline(s.c, s.project, { ref: 'feature', sha: s.head('feature'), status: 'failed' });
  s.c.merges.queueRecheck([mr.id]);
  await s.c.merges.idle();
  const path = `/${s.full}/-/merge_requests/${mr.iid}`;
  const action = `/-/p/${s.project.id}/merge_requests/${mr.iid}/merge`;
  const mae = await webSignIn(s.app, s.maintainer.username);
  const status = (html: string) => [...html.matchAll(/<p class="mb-2" data-merge-status="([^"]+)">([^<]*)<\/p>/g)].map((m) => [m[1], m[2]]);
  const api = await s.app.inject({ method: 'GET', url: `/api/v4/projects/${s.project.id}/merge_requests/${mr.iid}`, headers: s.tokens.maintainer });
  assert.equal(api.json().head_pipeline.id, pipeline.id);

  // pipelines need not succeed: mergeable, but not "Ready to merge." alone; the merge button is marked
  const page = await webGet(s.app, path, mae);
  assert.equal(page.statusCode, 200);
  assert.deepEqual(status(page.body), [['mergeable', 'Ready to merge, but the pipeline failed.']]);
  assert.match(
    page.body,
    new RegExp(`>failed</span> <a href="/${s.full}/-/pipelines/${pipeline.id}">Pipeline #${pipeline.id}</a> for the source branch&#39;s head.`),
  );
  assert.match(page.body, /<button type="submit" class="btn btn-danger">Merge<\/button>/);

  // required: blocked, said so, no merge button; a forged POST merges nothing
  const row = await s.c.db.kysely.selectFrom('projects').select('settings').where('id', '=', s.project.id).executeTakeFirstOrThrow();
  await s.c.db.kysely
    .updateTable('projects')
    .set({ settings: JSON.stringify({ ...JSON.parse(row.settings || '{}'), only_allow_merge_if_pipeline_succeeds: true }) })
    .where('id', '=', s.project.id)
    .execute();
  const blocked = await webGet(s.app, path, mae);
  assert.deepEqual(status(blocked.body), [['ci_must_pass', 'Merge blocked: pipeline must succeed. Push a commit that fixes the failure.']]);
  assert.doesNotMatch(blocked.body, /Ready to merge/);
  assert.doesNotMatch(blocked.body, />\s*Merge\s*<\/button>/);
  assert.match(blocked.body, new RegExp(`>failed</span> <a href="/${s.full}/-/pipelines/${pipeline.id}">Pipeline #${pipeline.id}</a>`));
  const before = s.head('main');
  const forged = await webPost(s.app, action, mae, { sha: s.head('feature') });
  assert.equal(forged.statusCode, 303);
  assert.match(String(forged.headers['set-cookie']), /alert/);
  assert.equal((await s.mrRow(mr.iid)).state, 'opened');
  assert.equal(s.head('main'), before);
});

test('approve and revoke through the forms; comments create notes and come back to their anchor; close and reopen', async (t) => {
  const s = await setup(t);
  const mr = await s.api(s.tokens.dev, 'feature');
  const path = `/${s.full}/-/merge_requests/${mr.iid}`;
  const one = `/-/p/${s.project.id}/merge_requests/${mr.iid}`;
  const mae = await webSignIn(s.app, s.maintainer.username);
  const approvals = () => s.c.db.kysely.selectFrom('approvals').selectAll().where('merge_request_id', '=', mr.id).execute();

  assert.match((await webGet(s.app, path, mae)).body, />Approve<\/button>/);
  const ok = await webPost(s.app, `${one}/approve`, mae);
  assert.equal(ok.statusCode, 303);
  assert.deepEqual(
    (await approvals()).map((a) => a.user_id),
    [s.maintainer.id],
  );
  const page = (await webGet(s.app, path, mae)).body;
  assert.match(page, />Revoke approval<\/button>/);
  assert.doesNotMatch(page, />Approve<\/button>/);
  assert.match(page, /Mae Maintainer/);
  const revoke = await webPost(s.app, `${one}/unapprove`, mae);
  assert.equal(revoke.statusCode, 303);
  assert.deepEqual(await approvals(), []);
  // the author may not approve (the project's default): no button, a refused post
  const dev = await webSignIn(s.app, s.dev.username);
  assert.doesNotMatch((await webGet(s.app, path, dev)).body, />Approve<\/button>/);
  const self = await webPost(s.app, `${one}/approve`, dev);
  assert.equal(self.statusCode, 303);
  assert.match(String(self.headers['set-cookie']), /alert/);
  assert.deepEqual(await approvals(), []);

  const comment = await webPost(s.app, `${one}/notes`, dev, { body: 'A *fine* point <img src=x onerror=alert(1)>' });
  assert.equal(comment.statusCode, 303);
  const note = await s.c.db.kysely.selectFrom('notes').selectAll().where('noteable_id', '=', mr.id).where('system', '=', 0).executeTakeFirstOrThrow();
  assert.equal(note.author_id, s.dev.id);
  assert.equal(comment.headers.location, `${path}#note_${note.id}`);
  const shown = (await webGet(s.app, path, dev)).body;
  assert.match(shown, new RegExp(`<li id="note_${note.id}"`));
  assert.match(shown, /<em>fine<\/em>/);
  assert.doesNotMatch(shown, /<img src=x onerror/);
  const empty = await webPost(s.app, `${one}/notes`, dev, { body: '   ' });
  assert.equal(empty.statusCode, 422);
  assert.match(empty.body, /can&#39;t be blank/);

  const close = await webPost(s.app, `${one}/close`, dev);
  assert.equal(close.statusCode, 303);
  assert.equal((await s.mrRow(mr.iid)).state, 'closed');
  assert.match((await webGet(s.app, path, dev)).body, />Reopen merge request<\/button>/);
  assert.equal((await webPost(s.app, `${one}/reopen`, dev)).statusCode, 303);
  assert.equal((await s.mrRow(mr.iid)).state, 'opened');

  // a stranger's forged posts: 404 pages, nothing written
  const stranger = await webSignIn(s.app, s.stranger.username);
  assert.equal((await webPost(s.app, `${one}/approve`, stranger)).statusCode, 404);
  assert.equal((await webPost(s.app, `${one}/notes`, stranger, { body: 'hi' })).statusCode, 404);
  assert.equal((await webPost(s.app, `${one}/close`, stranger)).statusCode, 404);
  assert.equal((await s.mrRow(mr.iid)).state, 'opened');
});

test('in a browser: create a merge request through the form (with a preview), read its tabs, merge it — each page accessible', {
  skip: skipWithout(chromiumAvailable, 'chromium'),
}, async (t) => {
  assertTool(chromiumAvailable, 'chromium');
  const srv = await startTestServer(t);
  const { seed, c } = srv;
  const mae = await seed.user({ username: `mae${Math.random().toString(36).slice(2, 6)}`, name: 'Mae Maintainer', password: 'walker-password-1' });
  const group = await seed.group({ visibility: 'private' });
  const { project, dir } = await seed.repoProject({ namespace: group, visibility: 'private', path: 'app' });
  await seed.member({ project }, mae, 40);
  const wt = workTree(t, dir);
  wt.write('README.md', 'one\n').commit('Initial');
  wt.checkout('feature', true);
  wt.write('f.txt', 'feature line\n').commit('Feature work');
  wt.checkout('main');
  wt.push();
  const full = `${group.full_path}/app`;
  const browser = await launchBrowser(t);
  const page = await (await newContext(browser, srv.base)).newPage();
  await signInWithForm(page, mae.username, 'walker-password-1');

  await page.goto(`/${full}/-/merge_requests/new`);
  await page.getByLabel('Source branch').selectOption('feature');
  await page.getByLabel('Target branch').selectOption('main');
  await page.getByLabel('Title', { exact: true }).fill('Add the feature');
  await page.getByLabel('Description', { exact: true }).fill('Adds **f.txt**.');
  await page.getByRole('button', { name: 'Preview' }).click();
  await page.locator('#merge_request_preview strong').waitFor();
  assert.equal(await page.locator('#merge_request_preview strong').innerText(), 'f.txt');
  await screenshot(page, 'merge-request-new');
  await assertAccessible(page, 'the new merge request form');
  await page.getByRole('button', { name: 'Create merge request' }).click();
  await page.waitForURL(`**/${full}/-/merge_requests/1`);
  assert.equal(await page.locator('h1').count(), 1);
  await screenshot(page, 'merge-request-overview');
  await assertAccessible(page, 'the merge request page');

  await page.getByRole('link', { name: 'Changes' }).click();
  await page.locator('.d2h-file-wrapper').first().waitFor();
  await screenshot(page, 'merge-request-changes');
  await assertAccessible(page, 'the Changes tab');
  await page.getByRole('link', { name: 'Commits' }).click();
  await assertAccessible(page, 'the Commits tab');
  await page.goto(`/${full}/-/merge_requests`);
  await assertAccessible(page, 'the merge request list');

  await page.goto(`/${full}/-/merge_requests/1`);
  await page.getByLabel('Squash commits').check();
  await page.getByRole('button', { name: 'Merge', exact: true }).click();
  await page.getByText('The merge request was merged.').waitFor();
  const row = await c.db.kysely.selectFrom('merge_requests').select('state').where('project_id', '=', project.id).executeTakeFirstOrThrow();
  assert.equal(row.state, 'merged');
  await screenshot(page, 'merge-request-merged');
});

test("the dashboard's assigned and review tabs; a project whose merge requests are off is a 403 page, as the API's list", async (t) => {
  const s = await setup(t);
  const assigned = await s.api(s.tokens.maintainer, 'feature', { assignee_ids: [s.dev.id] });
  const review = await s.api(s.tokens.maintainer, 'other', { reviewer_ids: [s.dev.id] });
  await s.api(s.tokens.maintainer, 'third');
  const sess = await webSignIn(s.app, s.dev.username);
  assert.deepEqual(listedIds((await webGet(s.app, '/dashboard/merge_requests', sess)).body), [assigned.id]);
  assert.deepEqual(listedIds((await webGet(s.app, '/dashboard/merge_requests?scope=review_requested', sess)).body), [review.id]);
  assert.deepEqual(listedIds((await webGet(s.app, '/dashboard/merge_requests?scope=authored', sess)).body), []);

  const row = await s.c.db.kysely.selectFrom('projects').select('settings').where('id', '=', s.project.id).executeTakeFirstOrThrow();
  await s.c.db.kysely
    .updateTable('projects')
    .set({ settings: JSON.stringify({ ...JSON.parse(row.settings || '{}'), merge_requests_access_level: 'disabled' }) })
    .where('id', '=', s.project.id)
    .execute();
  const apiList = await s.app.inject({ method: 'GET', url: `/api/v4/projects/${s.project.id}/merge_requests`, headers: s.tokens.dev });
  assert.equal(apiList.statusCode, 403);
  assert.equal((await webGet(s.app, `/${s.full}/-/merge_requests`, sess)).statusCode, 403);
  assert.equal((await webGet(s.app, `/${s.full}/-/merge_requests/${assigned.iid}`, sess)).statusCode, 403);
  assert.equal((await webGet(s.app, `/${s.full}/-/merge_requests/new`, sess)).statusCode, 403);
  assert.deepEqual(listedIds((await webGet(s.app, '/dashboard/merge_requests', sess)).body), []);
});
