// The translation pages: projects, a project, a project's language, a component (one row per language),
// a translation (statistics, upload, download), the repository page (commit, lock), languages, the
// shortcuts and the site search — each figure equal to the API's, invisible objects the 404 page, and
// every action through the API's domain code (the API shows its effects).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/build-app.ts';
import { assertAccessible, chromiumAvailable, launchBrowser, newContext, screenshot, signInWithForm } from '../helpers/browser.ts';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { componentRow, multipart, translationRow, unitsOf, unzip } from '../helpers/files.ts';
import { bareGit } from '../helpers/git.ts';
import { percent } from '../../src/domain/translation/stats/stats.ts';
import { AS_ROOT, createComponent, createProject, getJson, jsonComponent, poComponent } from '../helpers/translation.ts';
import { type WebSession, webGet, webPost, webSignIn } from '../helpers/web.ts';

const ROOT_PASSWORD = 'root-password-1';

/** the text of the element carrying data-stat="key" inside the row data-row="row" (or the page when row is null) */
function stat(html: string, key: string, row: string | null = null): string {
  let scope = html;
  if (row !== null) {
    const i = html.indexOf(`data-row="${row}"`);
    assert.ok(i >= 0, `no row ${row}`);
    scope = html.slice(i, html.indexOf('</tr>', i));
  }
  const m = new RegExp(`data-stat="${key}"[^>]*>([\\s\\S]*?)</(?:td|dd|span|p)>`).exec(scope);
  assert.ok(m, `no ${key} in ${row ?? 'page'}`);
  return m![1].replace(/<[^>]+>/g, '').trim();
}

function webUpload(ctx: TestApp, url: string, s: WebSession, fields: Record<string, string | Buffer>) {
  const m = multipart({ authenticity_token: s.csrf, ...fields });
  return ctx.app.inject({ method: 'POST', url, headers: { cookie: s.cookie, ...m.headers }, payload: m.payload });
}

test('overviews: projects, project, component, translation, languages show the API statistics; shortcuts redirect', async (t) => {
  const ctx = await buildTestApp(t);
  const { app } = ctx;
  const { component } = await poComponent(t, ctx);

  const list = await webGet(app, '/projects/');
  assert.equal(list.statusCode, 200);
  assert.match(list.body, /<h1 class="Subhead-heading">Projects<\/h1>/);
  assert.match(list.body, /href="\/projects\/hello\/">Hello<\/a>/);
  // the progress of a project or a component sums the API's figures of its target translations
  const targets = (await getJson(ctx, '/api/components/hello/po/statistics/')).results.filter((s: { code: string }) => s.code !== 'en');
  const targetTotal = targets.reduce((n: number, s: { total: number }) => n + s.total, 0);
  const targetTranslated = targets.reduce((n: number, s: { translated: number }) => n + s.translated, 0);
  const targetPercent = `${percent(targetTranslated, targetTotal, true)}%`;
  assert.equal(stat(list.body, 'translated_percent', 'hello'), targetPercent);

  const project = await webGet(app, '/projects/hello/');
  assert.equal(project.statusCode, 200);
  assert.equal(stat(project.body, 'total'), String(targetTotal));
  assert.equal(stat(project.body, 'translated'), String(targetTranslated));
  assert.equal(stat(project.body, 'translated_percent'), targetPercent);
  assert.equal(stat(project.body, 'translated_percent', 'po'), targetPercent);
  for (const l of await getJson(ctx, '/api/projects/hello/languages/')) {
    assert.equal(stat(project.body, 'translated_percent', l.code), `${l.translated_percent}%`);
  }

  // the component: one row per language with the API's figures and links into the editor
  const page = await webGet(app, '/projects/hello/po/');
  assert.equal(page.statusCode, 200);
  assert.equal(stat(page.body, 'translated_percent'), targetPercent);
  const stats = await getJson(ctx, '/api/components/hello/po/statistics/');
  assert.ok(stats.results.length >= 3);
  for (const s of stats.results) {
    assert.equal(stat(page.body, 'translated_percent', s.code), `${s.translated_percent}%`);
    assert.equal(stat(page.body, 'total', s.code), String(s.total));
    assert.equal(stat(page.body, 'fuzzy', s.code), String(s.fuzzy));
    assert.match(page.body, new RegExp(`href="/translate/hello/po/${s.code}/"`));
  }
  assert.match(page.body, /href="\/translate\/hello\/po\/cs\/\?q=state%3A%3Ctranslated"/);
  // the anonymous see no repository management
  assert.doesNotMatch(page.body, /Manage repository/);

  const cs = await webGet(app, '/projects/hello/po/cs/');
  assert.equal(cs.statusCode, 200);
  const csStats = await getJson(ctx, '/api/translations/hello/po/cs/statistics/');
  for (const key of ['total', 'translated', 'fuzzy', 'failing', 'approved', 'suggestions', 'comments', 'total_words']) {
    assert.equal(stat(cs.body, key), String(csStats[key]), key);
  }
  assert.equal(stat(cs.body, 'translated_percent'), `${csStats.translated_percent}%`);
  assert.match(cs.body, /<form method="get" action="\/translate\/hello\/po\/cs\/"/);
  assert.match(cs.body, /href="\/download\/hello\/po\/cs\/"/);
  assert.match(cs.body, /href="\/download\/hello\/po\/cs\/\?format=mo"/);
  assert.doesNotMatch(cs.body, /multipart\/form-data/, 'no upload form for the anonymous');

  // the filters the page links to count what the statistics say
  const untranslated = await getJson(ctx, `/api/translations/hello/po/cs/units/?q=${encodeURIComponent('state:<translated')}`);
  assert.equal(untranslated.count, csStats.total - csStats.translated);
  const fuzzy = await getJson(ctx, `/api/translations/hello/po/cs/units/?q=${encodeURIComponent('state:>=needs-editing AND state:<translated')}`);
  assert.equal(fuzzy.count, csStats.fuzzy);

  // the project's language and the language pages
  const pl = await webGet(app, '/projects/hello/-/cs/');
  assert.equal(pl.statusCode, 200);
  assert.equal(stat(pl.body, 'translated_percent', 'hello/po'), `${csStats.translated_percent}%`);
  const langs = await webGet(app, '/languages/');
  assert.equal(langs.statusCode, 200);
  assert.match(langs.body, /href="\/languages\/cs\/">Czech<\/a>/);
  assert.equal(stat(langs.body, 'translated_percent', 'cs'), `${(await getJson(ctx, '/api/languages/cs/statistics/')).translated_percent}%`);
  const czech = await webGet(app, '/languages/cs/');
  assert.equal(czech.statusCode, 200);
  const csLang = await getJson(ctx, '/api/languages/cs/statistics/');
  assert.equal(stat(czech.body, 'translated'), String(csLang.translated));

  // every web_url the API gives for these objects is a page
  const urls = [
    (await getJson(ctx, '/api/projects/hello/')).web_url,
    (await getJson(ctx, '/api/components/hello/po/')).web_url,
    (await getJson(ctx, '/api/translations/hello/po/cs/')).web_url,
    (await getJson(ctx, '/api/languages/cs/')).web_url,
  ];
  for (const u of urls) assert.equal((await webGet(app, new URL(u).pathname)).statusCode, 200, u);
  const share = (await getJson(ctx, '/api/translations/hello/po/cs/')).share_url;
  const engaged = await webGet(app, new URL(share).pathname);
  assert.equal(engaged.statusCode, 302);
  assert.equal(engaged.headers.location, '/projects/hello/-/cs/');
  assert.equal((await webGet(app, '/engage/hello/')).headers.location, '/projects/hello/');
  assert.equal((await webGet(app, '/translate/hello/-/cs/')).headers.location, '/projects/hello/-/cs/');
  for (const l of await getJson(ctx, '/api/projects/hello/languages/')) assert.equal((await webGet(app, new URL(l.url).pathname)).statusCode, 200);

  // bad parameters: the 404 page
  assert.equal((await webGet(app, '/projects/?page=abc')).statusCode, 404);
  assert.equal((await webGet(app, '/projects/hello/po/xx/')).statusCode, 404);
  assert.equal((await webGet(app, '/download/hello/po/cs/?format=nope')).statusCode, 400);
  assert.ok(component);
});

test('a private project and a restricted component are the 404 page for others, pages for administrators', async (t) => {
  const ctx = await buildTestApp(t);
  const { app, seed } = ctx;
  const { fixture } = await poComponent(t, ctx);
  await createProject(ctx, { name: 'Secret', slug: 'secret', access_control: 100 });
  await createComponent(ctx, 'secret', { repo: fixture.repo });
  await createComponent(ctx, 'hello', { name: 'Hidden', slug: 'hidden', repo: fixture.repo, restricted: true });
  const user = await seed.user();
  const s = await webSignIn(app, user.username);
  const root = await webSignIn(app, 'root', ROOT_PASSWORD);
  const paths = [
    '/projects/secret/',
    '/projects/secret/po/',
    '/projects/secret/po/cs/',
    '/projects/secret/-/cs/',
    '/engage/secret/',
    '/download/secret/po/cs/',
  ];
  for (const p of [...paths, '/projects/hello/hidden/', '/projects/hello/hidden/cs/', '/projects/hello/hidden/-/repository/']) {
    assert.equal((await webGet(app, p, s)).statusCode, 404, p);
    assert.equal((await webGet(app, p, null)).statusCode, 404, p);
  }
  for (const p of [...paths.slice(0, 4), '/projects/hello/hidden/', '/projects/hello/hidden/cs/'])
    assert.equal((await webGet(app, p, root)).statusCode, 200, p);
  const list = await webGet(app, '/projects/', s);
  assert.doesNotMatch(list.body, /Secret/);
  const hello = await webGet(app, '/projects/hello/', s);
  assert.doesNotMatch(hello.body, /Hidden/);
  // the restricted component's units are not counted for the user, as the API's statistics (target languages)
  const apiLanguages = await ctx.app.inject({ method: 'GET', url: '/api/projects/hello/languages/', headers: { host: 'weblate.test' } });
  const targetTotal = apiLanguages.json().reduce((n: number, l: { code: string; total: number }) => (l.code === 'en' ? n : n + l.total), 0);
  assert.equal(stat(hello.body, 'total'), String(targetTotal));
  const rootHello = await webGet(app, '/projects/hello/', root);
  assert.equal(stat(rootHello.body, 'total'), String(2 * targetTotal), 'administrators count the hidden component too');
  // the search does not find them either
  const found = await webGet(app, `/search/?q=${encodeURIComponent('source:Apple')}`, s);
  const apiFound = await ctx.app.inject({ method: 'GET', url: `/api/units/?q=${encodeURIComponent('source:Apple')}`, headers: { host: 'weblate.test' } });
  const n = apiFound.json().count;
  assert.equal(stat(found.body, 'total'), `${n} string${n === 1 ? '' : 's'} found`);
  const rootFound = await webGet(app, `/search/?q=${encodeURIComponent('source:Apple')}`, root);
  assert.ok(Number(stat(rootFound.body, 'total').split(' ')[0]) > n, 'administrators find the hidden ones too');
});

test('upload from the translation page changes the units; a bad file is a 422 page and changes nothing', async (t) => {
  const ctx = await buildTestApp(t);
  const { app } = ctx;
  await poComponent(t, ctx);
  const root = await webSignIn(app, 'root', ROOT_PASSWORD);
  const page = await webGet(app, '/projects/hello/po/cs/', root);
  assert.match(page.body, /enctype="multipart\/form-data"/);
  assert.match(page.body, /<label class="FormControl-label" for="upload-file">File<\/label>/);

  const before = await unitsOf(ctx, 'cs');
  const bad = await webUpload(ctx, '/-/translation/hello/po/cs/upload', root, {
    file: Buffer.from('msgid "Apple"\nmsgstr "Jablko"\nmsgstr "again"\n'),
    method: 'translate',
    conflicts: '',
    fuzzy: '',
  });
  assert.equal(bad.statusCode, 422, bad.body.slice(0, 500));
  assert.match(bad.body, /The form contains 1 error:/);
  assert.match(bad.body, /File: duplicate msgstr at line 3, column 1/);
  assert.deepEqual(await unitsOf(ctx, 'cs'), before);
  const empty = await webUpload(ctx, '/-/translation/hello/po/cs/upload', root, { file: '', method: 'translate' });
  assert.equal(empty.statusCode, 422);
  assert.match(empty.body, /No file was submitted\./);
  const badMethod = await webUpload(ctx, '/-/translation/hello/po/cs/upload', root, { file: Buffer.from('x'), method: 'nope', fuzzy: 'process' });
  assert.equal(badMethod.statusCode, 422);
  assert.match(badMethod.body, /&quot;nope&quot; is not a valid choice\./);
  assert.match(badMethod.body, /<option value="process" selected>/, 'what was chosen is kept');

  const file = `msgid ""\nmsgstr ""\n"Language: cs\\n"\n\nmsgid "Apple"\nmsgstr "Jablko"\n`;
  const ok = await webUpload(ctx, '/-/translation/hello/po/cs/upload', root, { file: Buffer.from(file), method: 'translate', conflicts: '', fuzzy: '' });
  assert.equal(ok.statusCode, 303, ok.body);
  assert.equal(ok.headers.location, '/projects/hello/po/cs/');
  const units = await getJson(ctx, `/api/translations/hello/po/cs/units/?q=${encodeURIComponent('source:Apple')}`);
  assert.deepEqual(
    units.results.flatMap((u: { target: string[] }) => u.target),
    ['Jablko'],
  );
  const after = await webGet(app, '/projects/hello/po/cs/', { cookie: `${root.cookie}; ${String(ok.headers['set-cookie']).split(';')[0]}`, csrf: root.csrf });
  assert.match(after.body, /Processed 1 string from the uploaded file \(skipped: 0, not found: 0, updated: 1\)\./);

  // a signed-in user without the permission sees no form and a forged post is the 403 page
  const user = await ctx.seed.user();
  const s = await webSignIn(app, user.username);
  assert.doesNotMatch((await webGet(app, '/projects/hello/po/cs/', s)).body, /multipart\/form-data/);
  const forged = await webUpload(ctx, '/-/translation/hello/po/cs/upload', s, { file: Buffer.from(file), method: 'translate' });
  assert.equal(forged.statusCode, 403);
  // without the CSRF token: refused
  const m = multipart({ file: Buffer.from(file) });
  const noToken = await app.inject({
    method: 'POST',
    url: '/-/translation/hello/po/cs/upload',
    headers: { cookie: root.cookie, ...m.headers },
    payload: m.payload,
  });
  assert.equal(noToken.statusCode, 422);
});

test('download: the bytes of the API file endpoint, as stored and converted', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  for (const q of ['', '?format=mo', '?format=csv']) {
    const web = await webGet(ctx.app, `/download/hello/po/cs/${q}`);
    const api = await ctx.app.inject({ method: 'GET', url: `/api/translations/hello/po/cs/file/${q}`, headers: AS_ROOT });
    assert.equal(web.statusCode, 200, q);
    assert.equal(api.statusCode, 200, q);
    assert.deepEqual(web.rawPayload, api.rawPayload, q);
    assert.equal(web.headers['content-type'], api.headers['content-type']);
    assert.equal(web.headers['content-disposition'], api.headers['content-disposition']);
  }
  // the component's zip: the same entries (zips carry times, so compared by content)
  const page = await webGet(ctx.app, '/projects/hello/po/');
  assert.match(page.body, /href="\/download\/hello\/po\/" download>Download all files \(zip\)<\/a>/);
  const zipWeb = await webGet(ctx.app, '/download/hello/po/');
  const zipApi = await ctx.app.inject({ method: 'GET', url: '/api/components/hello/po/file/', headers: AS_ROOT });
  assert.equal(zipWeb.statusCode, 200);
  assert.equal(zipWeb.headers['content-disposition'], zipApi.headers['content-disposition']);
  assert.deepEqual([...unzip(zipWeb.rawPayload)], [...unzip(zipApi.rawPayload)]);
  assert.equal((await webGet(ctx.app, '/download/hello/po/?format=tar')).statusCode, 400);
});

test('repository page: commit creates a git commit, lock locks; buttons hidden and forged posts refused for others', async (t) => {
  const ctx = await buildTestApp(t);
  const { app } = ctx;
  await poComponent(t, ctx);
  const root = await webSignIn(app, 'root', ROOT_PASSWORD);
  const user = await ctx.seed.user();
  const s = await webSignIn(app, user.username);
  const component = await componentRow(ctx);
  const mirror = (args: string[]) => bareGit(ctx.c.translation.vcs.mirrorDir(component.id), args).trim();

  const before = await webGet(app, '/projects/hello/po/', root);
  assert.equal(before.statusCode, 200);
  // a pending edit through the API
  const [apple] = (await getJson(ctx, `/api/translations/hello/po/cs/units/?q=${encodeURIComponent('source:Apple')}`)).results;
  const patched = await app.inject({ method: 'PATCH', url: `/api/units/${apple.id}/`, headers: AS_ROOT, payload: { target: ['Jablko'], state: 20 } });
  assert.equal(patched.statusCode, 200, patched.body);

  const overview = await webGet(app, '/projects/hello/po/', root);
  const csNow = await getJson(ctx, '/api/translations/hello/po/cs/statistics/');
  assert.equal(stat(overview.body, 'translated_percent', 'cs'), `${csNow.translated_percent}%`, 'the cached languages table follows the edit');
  assert.match(overview.body, /href="\/projects\/hello\/po\/-\/repository\/"/);
  assert.match(stat(overview.body, 'pending'), /^1 pending change/);
  assert.ok(before, 'the table was cached before the edit');
  const repo = await webGet(app, '/projects/hello/po/-/repository/', root);
  assert.equal(repo.statusCode, 200);
  assert.equal(stat(repo.body, 'pending'), '1');
  for (const b of ['Commit', 'Push', 'Pull', 'Lock']) assert.match(repo.body, new RegExp(`<button type="submit" class="btn[^"]*">${b}</button>`));

  // others: no link, the page is 403, a forged commit does nothing
  assert.doesNotMatch((await webGet(app, '/projects/hello/po/', s)).body, /Manage repository/);
  assert.equal((await webGet(app, '/projects/hello/po/-/repository/', s)).statusCode, 403);
  assert.equal((await webGet(app, '/projects/hello/po/-/repository/')).statusCode, 403);
  const head = mirror(['rev-parse', 'refs/heads/main']);
  const forged = await webPost(app, '/-/translation/hello/po/commit', s, {});
  assert.equal(forged.statusCode, 403);
  assert.equal(mirror(['rev-parse', 'refs/heads/main']), head);
  assert.equal((await webPost(app, '/-/translation/hello/po/lock', s, {})).statusCode, 403);
  assert.equal((await getJson(ctx, '/api/components/hello/po/lock/')).locked, false);
  assert.equal((await webPost(app, '/-/translation/hello/po/explode', root, {})).statusCode, 404);

  const commit = await webPost(app, '/-/translation/hello/po/commit', root, {});
  assert.equal(commit.statusCode, 303);
  assert.equal(commit.headers.location, '/projects/hello/po/-/repository/');
  const sha = mirror(['rev-parse', 'refs/heads/main']);
  assert.notEqual(sha, head);
  assert.match(mirror(['show', `${sha}:po/cs.po`]), /msgid "Apple"\nmsgstr "Jablko"/);
  const status = await getJson(ctx, '/api/components/hello/po/repository/');
  assert.equal(status.needs_commit, false);
  assert.equal(status.weblate_commit.revision, sha);

  const lock = await webPost(app, '/-/translation/hello/po/lock', root, {});
  assert.equal(lock.statusCode, 303);
  assert.equal((await getJson(ctx, '/api/components/hello/po/lock/')).locked, true);
  const locked = await webGet(app, '/projects/hello/po/-/repository/', root);
  assert.match(locked.body, />Unlock<\/button>/);
  assert.equal((await webPost(app, '/-/translation/hello/po/unlock', root, {})).statusCode, 303);
  assert.equal((await getJson(ctx, '/api/components/hello/po/lock/')).locked, false);
  assert.ok(await translationRow(ctx, 'cs'));
});

test('search: exactly the units the API finds, each linking to the editor by checksum; a bad query is a form error', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  for (const q of ['source:Apple', 'state:<translated', 'file', 'language:de']) {
    const api = await getJson(ctx, `/api/units/?q=${encodeURIComponent(q)}`);
    const page = await webGet(ctx.app, `/search/?q=${encodeURIComponent(q)}`);
    assert.equal(page.statusCode, 200);
    const ids = [...page.body.matchAll(/data-unit="(\d+)"/g)].map((m) => Number(m[1]));
    assert.deepEqual(
      ids,
      api.results.map((u: { id: number }) => u.id),
      q,
    );
    for (const u of api.results) {
      const href = new URL(u.web_url).pathname + new URL(u.web_url).search;
      assert.ok(page.body.includes(`href="${href.replace(/&/g, '&amp;')}"`), `${q}: ${href}`);
    }
  }
  const bad = await webGet(ctx.app, `/search/?q=${encodeURIComponent('state:nonsense(')}`);
  assert.equal(bad.statusCode, 400);
  assert.match(bad.body, /Could not parse query string/);
  const blank = await webGet(ctx.app, '/search/');
  assert.equal(blank.statusCode, 200);
  assert.match(blank.body, /<label for="site-search" class="sr-only">Search strings<\/label>/);
});

test('in a browser: the translation pages have no serious accessibility violation; lock from the repository page', {
  skip: skipWithout(chromiumAvailable, 'chromium'),
}, async (t) => {
  assertTool(chromiumAvailable, 'chromium');
  const server = await startTestServer(t);
  await poComponent(t, server);
  const browser = await launchBrowser(t);
  const page = await (await newContext(browser, server.base)).newPage();
  await signInWithForm(page, 'root', ROOT_PASSWORD);
  const pages: [string, string][] = [
    ['/projects/', 'translation-projects'],
    ['/projects/hello/', 'translation-project'],
    ['/projects/hello/po/', 'translation-component'],
    ['/projects/hello/po/cs/', 'translation-translation'],
    ['/projects/hello/-/cs/', 'translation-project-language'],
    ['/languages/', 'translation-languages'],
    ['/languages/cs/', 'translation-language'],
    ['/search/?q=Apple', 'translation-search'],
    ['/projects/hello/po/-/repository/', 'translation-repository'],
  ];
  for (const [url, name] of pages) {
    const res = await page.goto(url);
    assert.equal(res?.status(), 200, url);
    assert.equal(await page.locator('h1').count(), 1, url);
    await screenshot(page, name);
    await assertAccessible(page, url);
  }
  await page.getByRole('button', { name: 'Lock', exact: true }).click();
  await page.waitForURL('**/projects/hello/po/-/repository/');
  assert.equal(await page.getByRole('status').innerText(), 'The component is now locked.');
  assert.equal(await page.getByRole('button', { name: 'Unlock' }).count(), 1);
  // the translation page's search box opens the editor with ?q=
  await page.goto('/projects/hello/po/cs/');
  await page.getByLabel('Search strings in this translation').fill('source:Apple');
  await page.getByRole('button', { name: 'Search in the editor' }).click();
  assert.match(page.url(), /\/translate\/hello\/po\/cs\/\?q=source%3AApple$/);
});

test('progress in the pages counts target languages only; the API counts the source translation as Weblate does', async (t) => {
  const ctx = await buildTestApp(t);
  const { app } = ctx;
  // 15 source strings, 1 of them translated into Czech
  const keys = Array.from({ length: 15 }, (_, i) => `key${String(i + 1).padStart(2, '0')}`);
  const en = `${JSON.stringify(Object.fromEntries(keys.map((k) => [k, `Source ${k}`])), null, 2)}\n`;
  const cs = `${JSON.stringify({ key01: 'Překlad' }, null, 2)}\n`;
  await jsonComponent(t, ctx, { 'locales/en.json': en, 'locales/cs.json': cs });

  // the API: Weblate's ComponentStats and ProjectStats sum every translation, the source one included
  // (15 read-only source strings + 1 of 15 Czech = 16 of 30)
  const components = await getJson(ctx, '/api/components/hello/app/statistics/');
  assert.deepEqual(
    components.results.map((s: Record<string, unknown>) => [s.code, s.total, s.translated, s.translated_percent]),
    [
      ['en', 15, 15, 100.0],
      ['cs', 15, 1, 6.6],
    ],
  );
  const project = await getJson(ctx, '/api/projects/hello/statistics/');
  assert.equal(project.total, 30);
  assert.equal(project.translated, 16);
  assert.equal(project.translated_percent, 53.3);
  assert.equal(project.translated_words_percent, 53.3);

  // the pages: progress over the target languages (1 of 15), the source row still in the languages table
  const list = await webGet(app, '/projects/');
  assert.equal(stat(list.body, 'translated_percent', 'hello'), '6.6%');
  const page = await webGet(app, '/projects/hello/');
  assert.equal(page.statusCode, 200);
  assert.equal(stat(page.body, 'translated_percent'), '6.6%');
  assert.equal(stat(page.body, 'total'), '15');
  assert.equal(stat(page.body, 'translated'), '1');
  assert.equal(stat(page.body, 'translated_percent', 'app'), '6.6%');
  assert.equal(stat(page.body, 'translated_percent', 'cs'), '6.6%');
  assert.equal(stat(page.body, 'translated_percent', 'en'), '100%');
  const comp = await webGet(app, '/projects/hello/app/');
  assert.equal(comp.statusCode, 200);
  assert.equal(stat(comp.body, 'translated_percent'), '6.6%');
  assert.equal(stat(comp.body, 'total'), '15');
  assert.equal(stat(comp.body, 'translated'), '1');
  assert.equal(stat(comp.body, 'translated_percent', 'cs'), '6.6%');
  assert.equal(stat(comp.body, 'translated_percent', 'en'), '100%');
});
