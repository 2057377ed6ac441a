// The layout in a real browser: the sign-in form works with the keyboard, the 404 page has its
// landmarks and no serious accessibility violation (axe-core).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertAccessible, chromiumAvailable, launchBrowser, newContext, screenshot, signInWithForm } from '../helpers/browser.ts';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';

test('sign in through the form, then the page frame is accessible', { skip: skipWithout(chromiumAvailable, 'chromium') }, async (t) => {
  assertTool(chromiumAvailable, 'chromium');
  const { base, seed } = await startTestServer(t);
  const user = await seed.user({ username: 'walker', password: 'walker-password-1' });
  const browser = await launchBrowser(t);
  const page = await (await newContext(browser, base)).newPage();
  await signInWithForm(page, user.username, 'walker-password-1');
  await page.goto('/no-such-page-here');
  assert.equal(await page.locator('h1').innerText(), 'Page not found');
  assert.equal(await page.getByRole('main').count(), 1);
  assert.equal(await page.getByRole('navigation', { name: 'Main' }).count(), 1);
  await screenshot(page, 'layout-404');
  await assertAccessible(page, 'the 404 page');
});
