// Project settings → Access tokens and Deploy tokens as web pages: Maintainers only (Developers 403, outsiders
// and anonymous 404); a token made through the form shows its secret once and writes what the API writes (the
// bot, its membership, the token's digest); refused input shows GitLab's messages and writes nothing; revoking
// goes through the same services. In a real browser: from the General settings tab to both pages by clicking.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertAccessible, chromiumAvailable, launchBrowser, newContext, screenshot, signInWithForm } from '../helpers/browser.ts';
import { buildTestApp } from '../helpers/build-app.ts';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { webGet, webPost, webSignIn } from '../helpers/web.ts';
import { addDays, todayDate } from '../../src/lib/time.ts';

async function setup(t: Parameters<typeof buildTestApp>[0]) {
  const env = await buildTestApp(t);
  const { seed, c } = env;
  const owner = await seed.user({ username: 'olga' });
  const maintainer = await seed.user({ username: 'max' });
  const dev = await seed.user({ username: 'devi' });
  await seed.user({ username: 'otto' });
  const project = await seed.project({ owner, path: 'app', name: 'App' });
  await seed.member({ project }, maintainer, 40);
  await seed.member({ project }, dev, 30);
  const bots = () => c.db.kysely.selectFrom('users').select(['id', 'name']).where('user_type', '=', 'project_bot').orderBy('id').execute();
  const deployTokens = () => c.db.kysely.selectFrom('deploy_tokens').select(['id', 'name', 'username', 'revoked', 'project_id']).orderBy('id').execute();
  return { ...env, project, bots, deployTokens, base: '/olga/app' };
}

test('the token pages: Maintainers only, and both tabs on the settings pages', async (t) => {
  const { app, base } = await setup(t);
  const s = { max: await webSignIn(app, 'max'), devi: await webSignIn(app, 'devi'), otto: await webSignIn(app, 'otto') };
  for (const path of ['/-/settings/access_tokens', '/-/settings/deploy_tokens']) {
    const ok = await webGet(app, `${base}${path}`, s.max);
    assert.equal(ok.statusCode, 200, path);
    assert.equal((ok.body.match(/<h1/g) ?? []).length, 1);
    assert.match(ok.body, new RegExp(`<a[^>]*href="${base}/-/settings/access_tokens"[^>]*>Access tokens`));
    assert.match(ok.body, new RegExp(`<a[^>]*href="${base}/-/settings/deploy_tokens"[^>]*>Deploy tokens`));
    assert.equal((await webGet(app, `${base}${path}`, s.devi)).statusCode, 403, path);
    assert.equal((await webGet(app, `${base}${path}`, s.otto)).statusCode, 404, path);
    assert.equal((await webGet(app, `${base}${path}`)).statusCode, 404, path);
  }
  const general = await webGet(app, `${base}/-/edit`, s.max);
  assert.match(general.body, /Access tokens/);
  assert.match(general.body, /Deploy tokens/);
});

test('access tokens through the form: the secret shown once, the bot and its membership; refused input; revoke', async (t) => {
  const { app, c, project, bots, base } = await setup(t);
  const max = await webSignIn(app, 'max');
  const devi = await webSignIn(app, 'devi');
  const url = `/-/p/${project.id}/access_tokens`;

  const page = await webGet(app, `${base}/-/settings/access_tokens`, max);
  // a Maintainer gives at most the Maintainer role
  assert.match(page.body, /<option value="40" selected>Maintainer<\/option>/);
  assert.doesNotMatch(page.body, /<option value="50"/);
  assert.match(page.body, /This project has no active access tokens\./);

  const refused = await webPost(app, url, max, { name: 'x', access_level: '40', expires_at: addDays(todayDate(), -1), scopes: ['api'] });
  assert.equal(refused.statusCode, 422);
  assert.match(refused.body, /Expires at must be in the future/);
  const noScopes = await webPost(app, url, max, { name: 'x', access_level: '40' });
  assert.equal(noScopes.statusCode, 422);
  assert.match(noScopes.body, /Scopes can&#39;t be blank|Scopes can't be blank/);
  const above = await webPost(app, url, max, { name: 'x', access_level: '50', scopes: ['api'] });
  assert.equal(above.statusCode, 422);
  assert.match(above.body, /Access level of the token contains permissions not held by the creating user/);
  assert.deepEqual(await bots(), []);
  assert.equal((await webPost(app, url, devi, { name: 'x', scopes: ['api'] })).statusCode, 403);

  const made = await webPost(app, url, max, {
    name: 'deployer',
    access_level: '30',
    expires_at: addDays(todayDate(), 10),
    scopes: ['read_api', 'read_repository'],
  });
  assert.equal(made.statusCode, 200);
  const secret = /id="created_token" type="text" readonly value="(glpat-[^"]+)"/.exec(made.body)?.[1];
  assert.ok(secret, 'the new token is on the page');
  assert.match(made.body, /Your new project access token &quot;deployer&quot; has been created\.|Your new project access token "deployer" has been created\./);
  const [bot] = await bots();
  assert.equal(bot.name, 'deployer');
  const member = await c.db.kysely.selectFrom('members').select(['source_type', 'source_id', 'access_level']).where('user_id', '=', bot.id).execute();
  assert.deepEqual(member, [{ source_type: 'Project', source_id: project.id, access_level: 30 }]);
  const pat = await c.db.kysely.selectFrom('personal_access_tokens').selectAll().where('user_id', '=', bot.id).executeTakeFirstOrThrow();
  assert.equal(pat.token_digest, c.tokens.digest(secret));
  assert.equal(pat.scopes, '["read_api","read_repository"]');
  // the next view of the page lists it without the secret
  const listed = await webGet(app, `${base}/-/settings/access_tokens`, max);
  assert.ok(!listed.body.includes(secret));
  assert.match(listed.body, /<th scope="row">deployer<\/th>\s*<td>read_api, read_repository<\/td>\s*<td>Developer<\/td>/);

  const revoked = await webPost(app, `${url}/${pat.id}/revoke`, max);
  assert.equal(revoked.statusCode, 303);
  assert.equal(revoked.headers.location, `${base}/-/settings/access_tokens`);
  assert.deepEqual(await bots(), []);
  assert.equal((await app.inject({ url: '/api/v4/user', headers: { 'private-token': secret } })).statusCode, 401);
});

test('deploy tokens through the form: the username and secret shown once; refused input; revoke keeps the row, revoked', async (t) => {
  const { app, c, project, deployTokens, base } = await setup(t);
  const max = await webSignIn(app, 'max');
  const url = `/-/p/${project.id}/deploy_tokens`;
  const refused = await webPost(app, url, max, { name: 'x', username: 'bad name', scopes: ['read_repository'] });
  assert.equal(refused.statusCode, 422);
  assert.match(
    refused.body,
    /Username can contain only letters, digits, &#39;_&#39;, &#39;-&#39;, &#39;\+&#39;, and &#39;\.&#39;|Username can contain only letters/,
  );
  const noScopes = await webPost(app, url, max, { name: 'x' });
  assert.equal(noScopes.statusCode, 422);
  assert.deepEqual(await deployTokens(), []);

  const made = await webPost(app, url, max, { name: 'ci', username: '', expires_at: '', scopes: ['read_repository'] });
  assert.equal(made.statusCode, 200);
  const secret = /id="created_token" type="text" readonly value="(gldt-[^"]+)"/.exec(made.body)?.[1];
  assert.ok(secret);
  const [row] = await deployTokens();
  assert.deepEqual(row, { id: row.id, name: 'ci', username: null, revoked: 0, project_id: project.id });
  assert.match(made.body, new RegExp(`id="created_username" type="text" readonly value="gitlab\\+deploy-token-${row.id}"`));
  const full = await c.db.kysely.selectFrom('deploy_tokens').select('token_digest').executeTakeFirstOrThrow();
  assert.equal(full.token_digest, c.tokens.digest(secret));

  const revoked = await webPost(app, `${url}/${row.id}/revoke`, max);
  assert.equal(revoked.statusCode, 303);
  assert.deepEqual(await deployTokens(), [{ ...row, revoked: 1 }]);
  const after = await webGet(app, `${base}/-/settings/deploy_tokens`, max);
  assert.match(after.body, /This project has no active deploy tokens\./);
  assert.equal((await webPost(app, `${url}/${row.id + 100}/revoke`, max)).statusCode, 404);
});

test('in a real browser: from the General settings to Access tokens and Deploy tokens by clicking; create and revoke; the pages pass axe', {
  skip: skipWithout(chromiumAvailable, 'chromium'),
}, async (t) => {
  assertTool(chromiumAvailable, 'chromium');
  const { base, seed, c } = await startTestServer(t);
  const owner = await seed.user({ username: 'bria', password: 'bria-password-1' });
  const project = await seed.project({ owner, path: 'site', name: 'Site' });
  const browser = await launchBrowser(t);
  const page = await (await newContext(browser, base)).newPage();
  await signInWithForm(page, 'bria', 'bria-password-1');

  await page.goto('/bria/site/-/edit');
  await page.getByRole('link', { name: 'Access tokens' }).click();
  await page.waitForURL(/\/bria\/site\/-\/settings\/access_tokens$/);
  await assertAccessible(page, 'the access tokens page');
  await page.getByLabel('Token name').fill('Browser bot');
  await page.getByLabel('Select a role').selectOption('20');
  await page.getByLabel('read_api').check();
  await page.getByRole('button', { name: 'Create project access token' }).click();
  const secret = await page.locator('#created_token').inputValue();
  assert.match(secret, /^glpat-/);
  assert.equal(await page.getByRole('button', { name: 'Revoke Browser bot' }).count(), 1);
  await assertAccessible(page, 'the access tokens page with a new token');
  await screenshot(page, 'project-settings-access-tokens');
  const bot = await c.db.kysely.selectFrom('users').selectAll().where('user_type', '=', 'project_bot').executeTakeFirstOrThrow();
  const member = await c.db.kysely
    .selectFrom('members')
    .select('access_level')
    .where('user_id', '=', bot.id)
    .where('source_id', '=', project.id)
    .executeTakeFirstOrThrow();
  assert.equal(member.access_level, 20);

  await page.getByRole('link', { name: 'Deploy tokens' }).click();
  await page.waitForURL(/\/bria\/site\/-\/settings\/deploy_tokens$/);
  await assertAccessible(page, 'the deploy tokens page');
  await page.getByLabel('Name', { exact: true }).fill('Browser deploy');
  await page.getByLabel('read_repository').check();
  await page.getByRole('button', { name: 'Create deploy token' }).click();
  assert.match(await page.locator('#created_token').inputValue(), /^gldt-/);
  await screenshot(page, 'project-settings-deploy-tokens');
  await page.getByRole('button', { name: 'Revoke Browser deploy' }).click();
  await page.waitForURL(/\/bria\/site\/-\/settings\/deploy_tokens$/);
  assert.equal(await page.getByRole('button', { name: /^Revoke / }).count(), 0);
  const rows = await c.db.kysely.selectFrom('deploy_tokens').select(['name', 'revoked']).execute();
  assert.deepEqual(rows, [{ name: 'Browser deploy', revoked: 1 }]);

  await page.getByRole('link', { name: 'Access tokens' }).click();
  await page.getByRole('button', { name: 'Revoke Browser bot' }).click();
  await page.waitForURL(/\/bria\/site\/-\/settings\/access_tokens$/);
  assert.deepEqual(await c.db.kysely.selectFrom('users').select('id').where('user_type', '=', 'project_bot').execute(), []);
});
