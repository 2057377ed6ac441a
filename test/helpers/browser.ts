// A real browser for the web interface's tests: Debian's Chromium through playwright-core, pages
// signed in through the real sign-in form, screenshots written as test artifacts, and axe-core's
// accessibility check run in the page.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { TestContext } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const chromiumAvailable = fs.existsSync(CHROMIUM);
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
/** Screenshots of every page a walk visits (CI keeps the directory as the run's artifacts). */
export const SCREENSHOTS = path.resolve('test-artifacts/screenshots');
const require = createRequire(import.meta.url);

/** A browser for this test, closed after it. */
export async function launchBrowser(t: TestContext): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  t.after(() => browser.close());
  return browser;
}

/** A fresh browser context (its own cookies); axe needs its script injected, so the page CSP is bypassed for the tests only. */
export async function newContext(browser: Browser, base: string): Promise<BrowserContext> {
  return browser.newContext({ baseURL: base, bypassCSP: true, viewport: { width: 1280, height: 900 } });
}

/** Signs in through the form as a person would. */
export async function signInWithForm(page: Page, login: string, password: string): Promise<void> {
  await page.goto('/users/sign_in');
  await page.getByLabel('Username or primary email').fill(login);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForLoadState('domcontentloaded');
}

/** Writes `<dir>/<name>.png` (full page). */
export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name.replace(/[^\w.-]+/g, '-')}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown; html: string }[];
}

/** axe-core's WCAG 2 A/AA rules on the current page: the serious and critical violations. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
  const result = (await page.evaluate(async () => {
    const axe = (globalThis as any).axe;
    return axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
  })) as { violations: AxeViolation[] };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => ({ target: n.target, html: n.html })) }));
}

/** Fails with the violations listed when the page has any serious one. */
export async function assertAccessible(page: Page, what: string): Promise<void> {
  const v = await seriousViolations(page);
  assert.deepEqual(v, [], `${what}: serious accessibility violations`);
}
