// The translation walk in a real browser: a translator signs in, goes to the component's page and from
// its Czech row into the editor, translates three units with the keyboard only (type, Ctrl+Enter saves
// and moves to the next unit); the page's statistics and the API show them; Alt+ArrowLeft goes back; then
// the repository page's Commit button writes them to git, and a `git clone` of the component's repository
// shows them. Screenshots of each page; no serious accessibility violation.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { assertAccessible, chromiumAvailable, launchBrowser, newContext, screenshot, signInWithForm } from '../helpers/browser.ts';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { AS_ROOT, poComponent } from '../helpers/translation.ts';

test('translate three units with the keyboard in the editor, then the API shows them', { skip: skipWithout(chromiumAvailable, 'chromium') }, async (t) => {
  assertTool(chromiumAvailable, 'chromium');
  const ctx = await startTestServer(t);
  await poComponent(t, ctx);
  const user = await ctx.seed.user({ username: 'translator', password: 'translator-pass-1' });
  // Developer of the forge project the component translates: may translate (unit.edit)
  const component = await ctx.c.db.kysely.selectFrom('components').select('platform_project_id').executeTakeFirstOrThrow();
  const project = await ctx.c.db.kysely.selectFrom('projects').selectAll().where('id', '=', component.platform_project_id!).executeTakeFirstOrThrow();
  await ctx.seed.member({ project }, user, 30);

  const browser = await launchBrowser(t);
  const page = await (await newContext(browser, ctx.base)).newPage();
  await signInWithForm(page, user.username, 'translator-pass-1');
  await page.goto('/projects/hello/po/');
  await screenshot(page, 'translation-component');
  await assertAccessible(page, 'the component page');
  await page.getByRole('link', { name: 'Translate cs' }).click();
  await page.waitForURL((u) => u.pathname === '/translate/hello/po/cs/');
  assert.equal(await page.locator('h1').innerText(), 'Translate Po into Czech');
  await assertAccessible(page, 'the editor');
  await screenshot(page, 'editor-first-unit');

  const typed = ['Ahoj, světe!!', 'Pomeranč', 'Jablko'];
  for (const [i, text] of typed.entries()) {
    assert.equal(await page.locator('.editor-nav [aria-live]').innerText(), `${i + 1} / 4`);
    // the first translation field has the focus when the page opens
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'target-0');
    await page.keyboard.press('Control+A');
    await page.keyboard.type(text);
    const before = page.url();
    await Promise.all([page.waitForURL((u) => u.href !== before && u.search.includes('checksum=')), page.keyboard.press('Control+Enter')]);
    await page.waitForLoadState('domcontentloaded');
  }
  // the fourth unit: the plural one, with a labelled field per form
  assert.equal(await page.locator('.editor-nav [aria-live]').innerText(), '4 / 4');
  assert.equal(await page.locator('textarea.editor-target').count(), 3);
  assert.match(await page.getByRole('status').innerText(), /Translation saved/);
  await screenshot(page, 'editor-plural-unit');
  await assertAccessible(page, 'the editor on a plural unit');

  // Alt+ArrowLeft: the previous unit
  await Promise.all([page.waitForURL((u) => u.search.includes('offset=3')), page.keyboard.press('Alt+ArrowLeft')]);
  assert.equal(await page.locator('textarea#target-0').inputValue(), 'Jablko');

  const units = (await ctx.app.inject({ method: 'GET', url: '/api/translations/hello/po/cs/units/', headers: AS_ROOT })).json().results;
  assert.deepEqual(
    units.slice(0, 3).map((u: { target: string; state: number }) => [u.target, u.state]),
    typed.map((x) => [x, 20]),
  );
  const stats = (await ctx.app.inject({ method: 'GET', url: '/api/translations/hello/po/cs/statistics/', headers: AS_ROOT })).json();
  assert.equal(stats.translated, 4);
  assert.equal(stats.fuzzy, 0);

  // the translation's page shows the new figures
  await page.goto('/projects/hello/po/cs/');
  assert.match(await page.locator('main').innerText(), /100%/);
  await screenshot(page, 'translation-overview');

  // commit from the repository page, then a clone of the component's repository has the translations
  await page.goto('/projects/hello/po/-/repository/');
  await screenshot(page, 'translation-repository-before');
  await assertAccessible(page, 'the repository page');
  await page.getByRole('button', { name: 'Commit' }).click();
  await page.waitForLoadState('domcontentloaded');
  await screenshot(page, 'translation-repository-after');
  const repo = (await ctx.app.inject({ method: 'GET', url: '/api/components/hello/po/repository/', headers: AS_ROOT })).json();
  assert.equal(repo.needs_commit, false);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'walk-clone-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  // asynchronously: the server answering the clone runs in this process
  await promisify(execFile)('git', ['clone', '-q', `${ctx.base}/git/hello/po/`, dir], { env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
  const po = fs.readFileSync(path.join(dir, 'po/cs.po'), 'utf8');
  for (const text of typed) assert.ok(po.includes(`msgstr "${text}"`), `${text} in the cloned po/cs.po`);
});
