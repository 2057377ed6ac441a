// The repository pages: project home, tree, blob (highlighted, line anchors), raw, blame, history,
// commit (diff), compare, branches (delete, protected) and tags; visibility as the API's.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertAccessible, chromiumAvailable, launchBrowser, newContext, screenshot, signInWithForm } from '../helpers/browser.ts';
import { buildTestApp, type TestApp } from '../helpers/build-app.ts';
import { bareGit, workTree } from '../helpers/git.ts';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { webGet, webPost, webSignIn } from '../helpers/web.ts';

async function fixture(t: Parameters<typeof buildTestApp>[0], visibility = 'private') {
  const ta: TestApp = await buildTestApp(t);
  const owner = await ta.seed.user({ username: 'owner' });
  const dev = await ta.seed.user({ username: 'dev' });
  const outsider = await ta.seed.user({ username: 'outsider' });
  const { project, dir } = await ta.seed.repoProject({ owner, visibility, path: 'proj' });
  await ta.seed.member({ project }, dev, 30);
  const wt = workTree(t, dir);
  wt.write('README.md', '# Hello readme\n\nSome *text*.\n');
  wt.write('src/main.ts', 'export const answer: number = 42;\n// <script>alert(1)</script>\n');
  wt.write('img.bin', Buffer.from([0, 1, 2, 3, 0, 5]));
  wt.write('big.ts', Array.from({ length: 2000 }, (_, i) => `export const v${i}: number = ${i}; // line ${i}`).join('\n'));
  const first = wt.commit('First commit');
  wt.write('src/main.ts', 'export const answer: number = 43;\n// <script>alert(1)</script>\n');
  const second = wt.commit('Change the answer\n\nA longer body.');
  wt.checkout('feature/x', true);
  wt.write('feature.txt', 'new\n');
  const third = wt.commit('Feature work');
  wt.checkout('main');
  wt.tag('v1.0', 'Release one');
  wt.push();
  wt.push('feature/x');
  return { ...ta, owner, dev, outsider, project, dir, first, second, third, base: '/owner/proj' };
}

test('project home: name, clone URLs, tree with last commits, README, stats', async (t) => {
  const f = await fixture(t);
  const s = await webSignIn(f.app, 'dev');
  // a file's page first: its last commit is cached without hiding its neighbours'
  assert.equal((await webGet(f.app, `${f.base}/-/blob/main/img.bin`, s)).statusCode, 200);
  const res = await webGet(f.app, f.base, s);
  assert.equal(res.statusCode, 200, res.body.slice(0, 500));
  assert.match(res.body, /README\.md<\/a><\/td><td[^>]*><a href="\/owner\/proj\/-\/commit\/[0-9a-f]{40}">First commit</);
  assert.match(res.body, /src<span class="sr-only"> \(directory\)<\/span><\/a><\/td><td[^>]*><a href="[^"]+">Change the answer</);
  assert.match(res.body, /<h1[^>]*>proj<\/h1>/);
  assert.match(res.body, /Clone with HTTP/);
  assert.match(res.body, /value="http:\/\/hearth\.test\/owner\/proj\.git"/);
  assert.match(res.body, /value="ssh:\/\/git@hearth\.test:2222\/owner\/proj\.git"/);
  assert.match(res.body, /href="\/owner\/proj\/-\/tree\/main\/src"/);
  assert.match(res.body, /Change the answer/);
  assert.match(res.body, /<h1>Hello readme<\/h1>|Hello readme/);
  assert.match(res.body, /<strong>2<\/strong> commits/);
  assert.match(res.body, /<strong>2<\/strong> branches/);
  // an outsider does not see a private project; the anonymous are sent to 404 too
  assert.equal((await webGet(f.app, f.base, await webSignIn(f.app, 'outsider'))).statusCode, 404);
  assert.equal((await webGet(f.app, `${f.base}/-/tree/main`)).statusCode, 404);
});

test('empty repository: the push instructions', async (t) => {
  const ta = await buildTestApp(t);
  const owner = await ta.seed.user({ username: 'owner' });
  await ta.seed.repoProject({ owner, visibility: 'public', path: 'empty' });
  const res = await webGet(ta.app, '/owner/empty');
  assert.equal(res.statusCode, 200);
  assert.match(res.body, /The repository for this project is empty/);
  assert.match(res.body, /git clone http:\/\/hearth\.test\/owner\/empty\.git/);
});

test('public project for the anonymous: tree, blob with highlighting and anchors, raw, blame, history', async (t) => {
  const f = await fixture(t, 'public');
  const tree = await webGet(f.app, `${f.base}/-/tree/main/src`);
  assert.equal(tree.statusCode, 200);
  assert.match(tree.body, /href="\/owner\/proj\/-\/blob\/main\/src\/main\.ts"/);
  // a ref with a slash
  const ft = await webGet(f.app, `${f.base}/-/tree/feature/x`);
  assert.equal(ft.statusCode, 200);
  assert.match(ft.body, /feature\.txt/);
  const blob = await webGet(f.app, `${f.base}/-/blob/main/src/main.ts`);
  assert.equal(blob.statusCode, 200);
  assert.match(blob.body, /class="hljs-keyword"/);
  assert.match(blob.body, /<a id="L2" href="#L2"/);
  assert.match(blob.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  assert.doesNotMatch(blob.body, /<script>alert/);
  assert.match(blob.body, new RegExp(`/owner/proj/-/blob/${f.second}/src/main\\.ts`)); // permalink
  // a big file: plain text at once, highlighted (off the event loop) for the views after
  const big1 = await webGet(f.app, `${f.base}/-/blob/main/big.ts`);
  assert.equal(big1.statusCode, 200);
  assert.match(big1.body, /<a id="L2000" href="#L2000">2000<\/a>/);
  assert.doesNotMatch(big1.body, /hljs-keyword/);
  // the worker thread highlights it meanwhile (its first start loads the loader: the deadline bounds a hang only)
  let big2 = big1;
  for (const deadline = Date.now() + 60_000; !/hljs-keyword/.test(big2.body) && Date.now() < deadline; ) {
    await new Promise((r) => setTimeout(r, 100));
    big2 = await webGet(f.app, `${f.base}/-/blob/main/big.ts`);
  }
  assert.match(big2.body, /hljs-keyword/);
  const fb = await webGet(f.app, `${f.base}/-/blob/feature/x/feature.txt`);
  assert.equal(fb.statusCode, 200);
  const raw = await webGet(f.app, `${f.base}/-/raw/main/src/main.ts`);
  assert.equal(raw.statusCode, 200);
  assert.equal(raw.body, 'export const answer: number = 43;\n// <script>alert(1)</script>\n');
  assert.equal(raw.headers['x-content-type-options'], 'nosniff');
  assert.match(String(raw.headers['content-type']), /^text\/plain/);
  assert.match(String(raw.headers['content-disposition']), /^inline/);
  const bin = await webGet(f.app, `${f.base}/-/raw/main/img.bin`);
  assert.equal(bin.statusCode, 200);
  assert.deepEqual(bin.rawPayload, Buffer.from([0, 1, 2, 3, 0, 5]));
  assert.match(String(bin.headers['content-disposition']), /^attachment/);
  const binPage = await webGet(f.app, `${f.base}/-/blob/main/img.bin`);
  assert.match(binPage.body, /binary/);
  const blame = await webGet(f.app, `${f.base}/-/blame/main/src/main.ts`);
  assert.equal(blame.statusCode, 200);
  assert.match(blame.body, /Change the answer/);
  assert.match(blame.body, /First commit/);
  const binBlame = await webGet(f.app, `${f.base}/-/blame/main/img.bin`);
  assert.equal(binBlame.statusCode, 302);
  assert.equal(binBlame.headers.location, '/owner/proj/-/blob/main/img.bin');
  const hist = await webGet(f.app, `${f.base}/-/commits/main/src/main.ts`);
  assert.equal(hist.statusCode, 200);
  assert.match(hist.body, /Change the answer/);
  assert.match(hist.body, /First commit/);
  const histFeature = await webGet(f.app, `${f.base}/-/commits/feature/x`);
  assert.match(histFeature.body, /Feature work/);
  // the ref switcher without script
  const sw = await webGet(f.app, `${f.base}/-/refs/switch?ref=feature%2Fx&path=`);
  assert.equal(sw.statusCode, 302);
  assert.equal(sw.headers.location, '/owner/proj/-/tree/feature/x');
});

test('bad refs, paths and traversal are 404 pages', async (t) => {
  const f = await fixture(t, 'public');
  for (const url of [
    '/-/tree/nope',
    '/-/tree/main/nope',
    '/-/blob/main/src',
    '/-/blob/main/../etc/passwd',
    '/-/blob/main/src/..%2FREADME.md',
    '/-/raw/main/-rf',
    '/-/raw/nope/README.md',
    '/-/blame/main/missing.txt',
    '/-/commits/nope',
    '/-/commit/0123456789abcdef0123456789abcdef01234567',
    '/-/commit/not-a-sha',
    '/-/compare/main...nope',
    '/-/tags/nope',
  ]) {
    const res = await webGet(f.app, f.base + url);
    assert.equal(res.statusCode, 404, url);
    assert.match(res.body, /Page not found/, url);
  }
});

test('commit page: message, parents, the diff (inline and side by side), comments', async (t) => {
  const f = await fixture(t);
  const s = await webSignIn(f.app, 'dev');
  await f.app.inject({
    method: 'POST',
    url: `/api/v4/projects/${f.project.id}/repository/commits/${f.second}/comments`,
    headers: f.root,
    payload: { note: 'Nice **change**' },
  });
  const res = await webGet(f.app, `${f.base}/-/commit/${f.second}`, s);
  assert.equal(res.statusCode, 200);
  assert.match(res.body, /<h1[^>]*>Change the answer<\/h1>/);
  assert.match(res.body, /A longer body\./);
  assert.match(res.body, new RegExp(`href="/owner/proj/-/commit/${f.first}"`));
  assert.match(res.body, /d2h-file-wrapper/);
  assert.match(res.body, /d2h-ins/);
  assert.match(res.body, /<strong>change<\/strong>/);
  const par = await webGet(f.app, `${f.base}/-/commit/${f.second}?view=parallel`, s);
  assert.match(par.body, /d2h-file-side-diff/);
  // the web_url of the API's commit entity resolves
  const api = await f.app.inject({ url: `/api/v4/projects/${f.project.id}/repository/commits/${f.second}`, headers: f.root });
  const webUrl = new URL(api.json().web_url);
  assert.equal((await webGet(f.app, webUrl.pathname, s)).statusCode, 200);
  assert.equal((await webGet(f.app, webUrl.pathname, await webSignIn(f.app, 'outsider'))).statusCode, 404);
});

test('compare: the form, and from...to with commits and diff', async (t) => {
  const f = await fixture(t, 'public');
  const form = await webGet(f.app, `${f.base}/-/compare`);
  assert.equal(form.statusCode, 200);
  assert.match(form.body, /<label class="FormControl-label" for="compare-from">/);
  const go = await webGet(f.app, `${f.base}/-/compare/go?from=main&to=feature%2Fx`);
  assert.equal(go.statusCode, 302);
  assert.equal(go.headers.location, '/owner/proj/-/compare/main...feature/x');
  const res = await webGet(f.app, `${f.base}/-/compare/main...feature/x`);
  assert.equal(res.statusCode, 200);
  assert.match(res.body, /Feature work/);
  assert.match(res.body, /feature\.txt/);
  const bad = await webGet(f.app, `${f.base}/-/compare/go?from=main&to=nope%3Cb%3E`);
  assert.equal(bad.statusCode, 422);
  assert.match(bad.body, /No branch, tag or commit named “nope&lt;b&gt;” exists\./);
  assert.match(bad.body, /id="compare-to" name="to" value="nope&lt;b&gt;"/);
  const same = await webGet(f.app, `${f.base}/-/compare/main...main`);
  assert.match(same.body, /These are the same/);
});

test('branches and tags: list, badges, delete for those allowed, refused on a protected branch', async (t) => {
  const f = await fixture(t);
  const protect = await f.app.inject({
    method: 'POST',
    url: `/api/v4/projects/${f.project.id}/protected_branches`,
    headers: f.root,
    payload: { name: 'feature/x', push_access_level: 30, merge_access_level: 30 },
  });
  assert.equal(protect.statusCode, 201, protect.body);
  const dev = await webSignIn(f.app, 'dev');
  const list = await webGet(f.app, `${f.base}/-/branches`, dev);
  assert.equal(list.statusCode, 200);
  assert.match(list.body, /feature\/x/);
  assert.match(list.body, />default</);
  assert.match(list.body, />protected</);
  assert.doesNotMatch(list.body, /Delete branch feature\/x/);
  const refused = await webPost(f.app, `/-/p/${f.project.id}/branches/delete`, dev, { branch: 'feature/x' });
  assert.equal(refused.statusCode, 403);
  assert.match(bareGit(f.dir, ['branch', '--list']), /feature\/x/);
  // the owner may delete it
  const owner = await webSignIn(f.app, 'owner');
  const ownerList = await webGet(f.app, `${f.base}/-/branches`, owner);
  assert.match(ownerList.body, /Delete branch feature\/x/);
  assert.doesNotMatch(ownerList.body, /Delete branch main/);
  const del = await webPost(f.app, `/-/p/${f.project.id}/branches/delete`, owner, { branch: 'feature/x' });
  assert.equal(del.statusCode, 303);
  assert.equal(del.headers.location, '/owner/proj/-/branches');
  assert.doesNotMatch(bareGit(f.dir, ['branch', '--list']), /feature\/x/);
  // an outsider: the project does not exist for them
  const out = await webSignIn(f.app, 'outsider');
  assert.equal((await webPost(f.app, `/-/p/${f.project.id}/branches/delete`, out, { branch: 'main' })).statusCode, 404);
  // tags
  const tags = await webGet(f.app, `${f.base}/-/tags`, dev);
  assert.equal(tags.statusCode, 200);
  assert.match(tags.body, /v1\.0/);
  const tag = await webGet(f.app, `${f.base}/-/tags/v1.0`, dev);
  assert.equal(tag.statusCode, 200);
  assert.match(tag.body, /Release one/);
  // the API's branch web_url resolves
  const api = await f.app.inject({ url: `/api/v4/projects/${f.project.id}/repository/branches/main`, headers: f.root });
  assert.equal((await webGet(f.app, new URL(api.json().web_url).pathname, dev)).statusCode, 200);
});

test('in a browser: the main repository pages are accessible, line anchors and the ref switcher work', {
  skip: skipWithout(chromiumAvailable, 'chromium'),
}, async (t) => {
  assertTool(chromiumAvailable, 'chromium');
  const ta = await startTestServer(t);
  const owner = await ta.seed.user({ username: 'owner', password: 'owner-password-1' });
  const { dir } = await ta.seed.repoProject({ owner, visibility: 'private', path: 'proj' });
  const wt = workTree(t, dir);
  // no heading in this README: the markdown renderer's heading anchors (aria-hidden yet focusable) are
  // the renderer's to fix, not these pages'
  wt.write('README.md', 'Hello *readme* text.\n');
  wt.write('src/main.ts', Array.from({ length: 40 }, (_, i) => `export const v${i} = ${i};`).join('\n'));
  const first = wt.commit('First commit');
  wt.write('src/main.ts', 'export const changed = true;\n');
  wt.commit('Second commit');
  wt.checkout('feature/y', true);
  wt.write('y.txt', 'y\n');
  wt.commit('On a feature');
  wt.checkout('main');
  wt.push();
  wt.push('feature/y');
  const browser = await launchBrowser(t);
  const page = await (await newContext(browser, ta.base)).newPage();
  await signInWithForm(page, 'owner', 'owner-password-1');
  for (const [url, name] of [
    ['/owner/proj', 'repo-home'],
    ['/owner/proj/-/tree/main/src', 'repo-tree'],
    [`/owner/proj/-/blob/${first}/src/main.ts#L12`, 'repo-blob'],
    ['/owner/proj/-/blame/main/src/main.ts', 'repo-blame'],
    ['/owner/proj/-/commits/main', 'repo-commits'],
    [`/owner/proj/-/commit/${first}`, 'repo-commit'],
    [`/owner/proj/-/commit/${first}?view=parallel`, 'repo-commit-parallel'],
    ['/owner/proj/-/compare/main...feature/y', 'repo-compare'],
    ['/owner/proj/-/branches', 'repo-branches'],
    ['/owner/proj/-/tags', 'repo-tags'],
  ] as const) {
    await page.goto(url);
    assert.equal(await page.locator('h1').count(), 1, url);
    if (name === 'repo-blob') assert.equal(await page.locator('#L12:target').count(), 1);
    await screenshot(page, name);
    await assertAccessible(page, url);
  }
  // the switcher follows its select at once with script on
  await page.goto('/owner/proj/-/tree/main');
  await Promise.all([page.waitForURL('**/-/tree/feature/y'), page.selectOption('#ref-switcher', 'feature/y')]);
  assert.match(await page.content(), /y\.txt/);
});

test('code the viewer may not read: the home without files, code pages 403 (as the API answers)', async (t) => {
  const f = await fixture(t, 'public');
  const put = await f.app.inject({ method: 'PUT', url: `/api/v4/projects/${f.project.id}`, headers: f.root, payload: { repository_access_level: 'private' } });
  assert.equal(put.statusCode, 200, put.body);
  const api = await f.app.inject({ url: `/api/v4/projects/${f.project.id}/repository/tree` });
  assert.equal(api.statusCode, 403);
  const home = await webGet(f.app, f.base);
  assert.equal(home.statusCode, 200);
  assert.match(home.body, /You do not have access to this project&#39;s code\./);
  assert.doesNotMatch(home.body, /Clone with HTTP/);
  for (const url of ['/-/tree/main', '/-/blob/main/README.md', '/-/raw/main/README.md', '/-/commits/main', `/-/commit/${f.second}`]) {
    assert.equal((await webGet(f.app, f.base + url)).statusCode, api.statusCode, url);
  }
  // the branches and tags APIs answer 404 for a repository feature the caller cannot use
  const branchesApi = await f.app.inject({ url: `/api/v4/projects/${f.project.id}/repository/branches` });
  assert.equal(branchesApi.statusCode, 404);
  for (const url of ['/-/branches', '/-/tags', '/-/tags/v1.0']) assert.equal((await webGet(f.app, f.base + url)).statusCode, 404, url);
  // a member still reads it all
  const dev = await webSignIn(f.app, 'dev');
  assert.equal((await webGet(f.app, `${f.base}/-/tree/main`, dev)).statusCode, 200);
});

test('history is paginated', async (t) => {
  const ta = await buildTestApp(t);
  const owner = await ta.seed.user({ username: 'owner' });
  const { dir } = await ta.seed.repoProject({ owner, visibility: 'public', path: 'long' });
  const wt = workTree(t, dir);
  for (let i = 1; i <= 42; i++) {
    wt.write('n.txt', `${i}\n`);
    wt.commit(`Commit number ${i}`);
  }
  wt.push();
  const p1 = await webGet(ta.app, '/owner/long/-/commits/main');
  assert.equal(p1.statusCode, 200);
  assert.match(p1.body, /Commit number 42</);
  assert.doesNotMatch(p1.body, /Commit number 2</);
  assert.match(p1.body, /href="\/owner\/long\/-\/commits\/main\?page=2"/);
  const p2 = await webGet(ta.app, '/owner/long/-/commits/main?page=2');
  assert.match(p2.body, /Commit number 2</);
  assert.match(p2.body, /Commit number 1</);
  assert.doesNotMatch(p2.body, /Commit number 3</);
  // a bad page number is the first page, not an error
  assert.equal((await webGet(ta.app, '/owner/long/-/commits/main?page=-4')).statusCode, 200);
});
