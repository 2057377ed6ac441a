// The translation editor in a real browser: a translator signs in, opens the editor and translates three
// units with the keyboard only (type, Ctrl+Enter saves and moves to the next unit); the API's statistics
// and units show them; Alt+ArrowLeft goes back; a screenshot; no serious accessibility violation.
import assert from 'node:assert/strict';
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
  await page.goto('/translate/hello/po/cs/');
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
});
