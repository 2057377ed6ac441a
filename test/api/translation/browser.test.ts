// A real browser (Chromium through playwright-core) walks the browsable translation API on a real
// port: from the API root it follows links shown in the JSON of each page, checks every page's title,
// <h1> and breadcrumbs, then comes back with the browser's back button.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestServer } from '../../helpers/server.ts';
import { poComponent } from '../../helpers/translation.ts';
import { ROOT_TOKEN } from '../../helpers/build-app.ts';
import { assertTool, skipWithout } from '../../helpers/tools.ts';
import { CHROMIUM, chromiumAvailable, launchBrowser } from '../../helpers/browser.ts';

interface Step {
  /** follow the link at this key path of the JSON shown on the current page, e.g. "results.0.url" … */
  follow?: string;
  /** … or the breadcrumb with this text (back up, e.g. to "Api Root" to start another branch) */
  crumb?: string;
  /** the view name the next page shows as its title, <h1> and last breadcrumb */
  view: string;
}

const START = { path: '/api/?format=api', view: 'Api Root' };
/** The walk, one step a line: languages, then back to the root and down to a unit of the seeded component. */
const WALK: Step[] = [
  { follow: 'languages', view: 'Language List' },
  { follow: 'results.0.url', view: 'Language Instance' },
  { follow: 'statistics_url', view: 'Statistics' },
  { crumb: 'Language List', view: 'Language List' },
  { crumb: 'Api Root', view: 'Api Root' },
  { follow: 'projects', view: 'Project List' },
  { follow: 'results.0.url', view: 'Project Instance' },
  { follow: 'components_list_url', view: 'Components' },
  { follow: 'results.0.url', view: 'Component Instance' },
  { follow: 'translations_url', view: 'Translations' },
  { follow: 'results.1.url', view: 'Translation Instance' },
  { follow: 'units_list_url', view: 'Units' },
  { follow: 'results.0.url', view: 'Unit Instance' },
  { follow: 'translation', view: 'Translation Instance' },
  { crumb: 'Api Root', view: 'Api Root' },
];

/** The JSON shown in the page's response-info block (after the status line and headers). */
async function shownData(page: Page): Promise<unknown> {
  const text = await page.locator('.response-info pre').innerText();
  const blank = text.indexOf('\n\n');
  assert.ok(blank > 0, 'headers, a blank line, then the body');
  return JSON.parse(text.slice(blank + 2));
}

function valueAt(data: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), data);
}

async function expectView(page: Page, view: string): Promise<void> {
  assert.equal(await page.title(), `${view} – Django REST framework`);
  assert.equal(await page.locator('h1').innerText(), view);
  assert.equal((await page.locator('.breadcrumb li.active').innerText()).trim(), view);
  // every link into the API keeps the browsable format
  const hrefs = await page.locator('a[href]').evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).href));
  for (const href of hrefs) {
    const u = new URL(href);
    if (u.pathname.startsWith('/api/') && u.searchParams.get('format') !== 'json') assert.equal(u.searchParams.get('format'), 'api', href);
  }
}

test('a browser walks the browsable API by its links and back', { timeout: 120_000, skip: skipWithout(chromiumAvailable, CHROMIUM) }, async (t) => {
  assertTool(chromiumAvailable, CHROMIUM);
  const server = await startTestServer(t);
  await poComponent(t, server); // a project, a component, its translations and units to walk to
  const browser = await launchBrowser(t);
  // administrators see every language (others only languages with translations)
  const context = await browser.newContext({ extraHTTPHeaders: { authorization: `Token ${ROOT_TOKEN}` } });
  const page = await context.newPage();

  const first = await page.goto(server.base + START.path);
  assert.equal(first?.status(), 200);
  assert.equal(first?.headers()['content-type'], 'text/html; charset=utf-8');
  await expectView(page, START.view);
  const visited = [{ url: page.url(), view: START.view }];

  for (const step of WALK) {
    let href: string;
    const crumb = step.crumb === undefined ? null : page.locator('.breadcrumb').getByRole('link', { name: step.crumb, exact: true });
    if (crumb) href = new URL((await crumb.getAttribute('href')) ?? '', page.url()).href;
    else {
      const value = valueAt(await shownData(page), step.follow ?? '');
      assert.equal(typeof value, 'string', `${step.follow} on ${page.url()}`);
      href = value as string;
    }
    assert.equal(new URL(href).searchParams.get('format'), 'api', href);
    const link = crumb ?? page.locator(`.response-info a[href="${href}"]`).first();
    const [response] = await Promise.all([page.waitForResponse((r) => r.url() === href && r.request().isNavigationRequest()), link.click()]);
    await page.waitForURL(href);
    assert.equal(response.status(), 200, href);
    assert.equal(response.headers()['content-type'], 'text/html; charset=utf-8');
    await expectView(page, step.view);
    visited.push({ url: page.url(), view: step.view });
  }
  assert.ok(visited.length >= 15, 'root, languages, and project → component → translation → unit, and back up by the breadcrumbs');

  // the back button retraces the walk
  for (let i = visited.length - 2; i >= 0; i--) {
    await page.goBack();
    assert.equal(page.url(), visited[i].url);
    await expectView(page, visited[i].view);
  }
});
