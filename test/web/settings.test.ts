// User settings (profile, personal access tokens, SSH keys), the sign-in page's redirect_to, and
// project settings (general, members, protected branches and tags, webhooks) as web pages.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/build-app.ts';
import { assertAccessible, chromiumAvailable, launchBrowser, newContext, screenshot } from '../helpers/browser.ts';
import { workTree } from '../helpers/git.ts';
import { startTestServer } from '../helpers/server.ts';
import { startSink } from '../helpers/sink.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { webGet, webPost, webSignIn } from '../helpers/web.ts';

const signInForm = async (app: Parameters<typeof webGet>[0], url: string) => {
  const form = await app.inject({ method: 'GET', url });
  const token = /name="authenticity_token" value="([^"]+)"/.exec(form.body)![1];
  const csrf = form.cookies.find((c) => c.name === '_service_csrf')!.value;
  return { form, token, csrf };
};

test('sign-in: the form in the layout, redirect_to honoured for local paths only', async (t) => {
  const { app, seed } = await buildTestApp(t);
  await seed.user({ username: 'alice' });
  const submit = async (redirectTo: string) => {
    const { token, csrf } = await signInForm(app, `/users/sign_in?redirect_to=${encodeURIComponent(redirectTo)}`);
    return app.inject({
      method: 'POST',
      url: '/users/sign_in',
      cookies: { _service_csrf: csrf },
      payload: { authenticity_token: token, redirect_to: redirectTo, user: { login: 'alice', password: 'password-123' } },
    });
  };
  const { form } = await signInForm(app, '/users/sign_in?redirect_to=%2F-%2Fprofile');
  assert.equal(form.statusCode, 200);
  assert.match(form.body, /<main id="main-content"/);
  assert.match(form.body, /<label class="FormControl-label" for="user_login">Username or primary email<\/label>/);
  assert.match(form.body, /<label class="FormControl-label" for="user_password">Password<\/label>/);
  assert.match(form.body, /<button type="submit" class="btn btn-primary btn-block">Sign in<\/button>/);
  assert.match(form.body, /<input type="hidden" name="redirect_to" value="\/-\/profile">/);
  assert.equal((form.body.match(/<h1/g) ?? []).length, 1);

  assert.equal((await submit('/-/profile')).headers.location, '/-/profile');
  assert.equal((await submit('/group/project/-/tree/main?ref=x')).headers.location, '/group/project/-/tree/main?ref=x');
  for (const evil of ['https://evil.example/', '//evil.example/x', '/\\evil.example', 'javascript:alert(1)', '/users/sign_in']) {
    const res = await submit(evil);
    assert.equal(res.statusCode, 302, evil);
    assert.equal(res.headers.location, '/', evil);
  }
  // the other host is not even put in the form
  const { form: evilForm } = await signInForm(app, '/users/sign_in?redirect_to=https%3A%2F%2Fevil.example%2F');
  assert.doesNotMatch(evilForm.body, /name="redirect_to"/);
});

test('profile: the form for its user, saved through the users service, a bad value is 422 with nothing saved', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user({ username: 'bob', name: 'Bob' });
  const anon = await webGet(app, '/-/profile');
  assert.equal(anon.statusCode, 302);
  assert.equal(anon.headers.location, '/users/sign_in?redirect_to=%2F-%2Fprofile');
  const s = await webSignIn(app, 'bob');
  const page = await webGet(app, '/-/profile', s);
  assert.equal(page.statusCode, 200);
  for (const label of ['Full name', 'Public email', 'Pronouns', 'Job title', 'Organization', 'Location', 'Website URL', 'Bio']) {
    assert.match(page.body, new RegExp(`<label class="FormControl-label" for="user_[a-z_]+">${label}</label>`), label);
  }
  assert.match(page.body, /Update profile settings<\/button>/);

  const ok = await webPost(app, '/-/profile', s, {
    user: {
      name: 'Bobby Tables',
      public_email: 'bob@example.com',
      bio: 'Hi <there>',
      location: 'Berlin',
      website_url: 'https://bob.example',
      private_profile: ['0', '1'],
    },
  });
  assert.equal(ok.statusCode, 303);
  assert.equal(ok.headers.location, '/-/profile');
  const after = (await c.users.byId(u.id))!;
  assert.equal(after.name, 'Bobby Tables');
  assert.equal(after.public_email, 'bob@example.com');
  assert.equal(after.bio, 'Hi <there>');
  assert.equal(after.location, 'Berlin');
  assert.equal(after.private_profile, 1);
  const shown = await webGet(app, '/-/profile', s);
  assert.match(shown.body, /Hi &lt;there&gt;<\/textarea>/);

  const bad = await webPost(app, '/-/profile', s, { user: { name: '', location: 'Paris' } });
  assert.equal(bad.statusCode, 422);
  assert.match(bad.body, /class="flash flash-error mb-3" role="alert"/);
  assert.match(bad.body, /value="Paris"/);
  const unchanged = (await c.users.byId(u.id))!;
  assert.equal(unchanged.name, 'Bobby Tables');
  assert.equal(unchanged.location, 'Berlin');

  // without the CSRF token nothing is saved
  const forged = await app.inject({ method: 'POST', url: '/-/profile', headers: { cookie: s.cookie }, payload: { user: { name: 'Mallory' } } });
  assert.equal(forged.statusCode, 422);
  assert.equal((await c.users.byId(u.id))!.name, 'Bobby Tables');
});

test('personal access tokens: created and shown exactly once, only the digest stored, listed, revoked', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user({ username: 'carol' });
  const other = await seed.user({ username: 'dan' });
  const othersToken = await seed.token(other, { name: 'dans-token', scopes: ['api'] });
  const s = await webSignIn(app, 'carol');

  const page = await webGet(app, '/-/profile/personal_access_tokens', s);
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /<label class="FormControl-label" for="token_name">Token name<\/label>/);
  assert.match(page.body, /<label class="FormControl-label" for="token_expires_at">Expiration date<\/label>/);
  assert.match(page.body, /type="date" value="\d{4}-\d{2}-\d{2}"/);
  assert.match(page.body, /id="scope_read_api" name="scopes\[\]" value="read_api"/);
  assert.doesNotMatch(page.body, /value="sudo"/); // not an administrator's scope list
  assert.doesNotMatch(page.body, /dans-token/);

  const bad = await webPost(app, '/-/profile/personal_access_tokens', s, { name: 'ci', expires_at: '' });
  assert.equal(bad.statusCode, 422);
  assert.match(bad.body, /Scopes can&#39;t be blank/);
  assert.match(bad.body, /id="token_name" name="name" type="text" value="ci"/);
  assert.equal((await c.db.kysely.selectFrom('personal_access_tokens').selectAll().where('user_id', '=', u.id).execute()).length, 0);

  const created = await webPost(app, '/-/profile/personal_access_tokens', s, { name: 'ci', scopes: ['read_api', 'read_repository'] });
  assert.equal(created.statusCode, 200);
  const secret = /id="created_token" type="text" readonly value="([^"]+)"/.exec(created.body)?.[1];
  assert.ok(secret, 'the new token is on the page');
  assert.match(created.body, /<label class="FormControl-label" for="created_token">Your new personal access token<\/label>/);
  assert.match(created.body, /data-copy-target="created_token"/);
  const rows = await c.db.kysely.selectFrom('personal_access_tokens').selectAll().where('user_id', '=', u.id).execute();
  assert.equal(rows.length, 1);
  assert.notEqual(rows[0].token_digest, secret);
  assert.ok(!JSON.stringify(rows[0]).includes(secret!));
  assert.deepEqual(JSON.parse(rows[0].scopes), ['read_api', 'read_repository']);
  // the token works, and is never shown again
  const api = await app.inject({ method: 'GET', url: '/api/v4/user', headers: { 'private-token': secret! } });
  assert.equal(api.statusCode, 200);
  const again = await webGet(app, '/-/profile/personal_access_tokens', s);
  assert.ok(!again.body.includes(secret!));
  assert.match(again.body, /<th scope="row">ci<\/th><td>read_api, read_repository<\/td>/);

  // someone else's token cannot be revoked from here
  const foreign = await webPost(app, `/-/profile/personal_access_tokens/${othersToken.id}/revoke`, s);
  assert.equal(foreign.statusCode, 303);
  assert.equal((await c.tokens.byId(othersToken.id))!.revoked, 0);
  const missing = await webPost(app, '/-/profile/personal_access_tokens/99999/revoke', s);
  assert.equal(missing.statusCode, 404);
  const revoke = await webPost(app, `/-/profile/personal_access_tokens/${rows[0].id}/revoke`, s);
  assert.equal(revoke.statusCode, 303);
  assert.equal(revoke.headers.location, '/-/profile/personal_access_tokens');
  assert.equal((await c.tokens.byId(rows[0].id))!.revoked, 1);
  assert.doesNotMatch((await webGet(app, '/-/profile/personal_access_tokens', s)).body, /<th scope="row">ci<\/th>/);
  assert.equal((await app.inject({ method: 'GET', url: '/api/v4/user', headers: { 'private-token': secret! } })).statusCode, 401);

  const keys = await webGet(app, '/-/profile/keys', s);
  assert.equal(keys.statusCode, 200);
  assert.match(keys.body, /There are no SSH keys with access to your account\./); // the page itself: test/web/ssh-keys.test.ts
});

async function projectSetup(t: Parameters<typeof buildTestApp>[0]) {
  const env = await buildTestApp(t);
  const { seed } = env;
  const owner = await seed.user({ username: 'olga' });
  const maintainer = await seed.user({ username: 'max' });
  const dev = await seed.user({ username: 'devi' });
  const outsider = await seed.user({ username: 'otto' });
  const { project, dir } = await seed.repoProject({ owner, path: 'app', visibility: 'private' });
  const wt = workTree(t, dir);
  wt.write('README.md', 'hi\n').commit('first');
  wt.push();
  await seed.member({ project }, maintainer, 40);
  await seed.member({ project }, dev, 30);
  return { ...env, owner, maintainer, dev, outsider, project, base: '/olga/app' };
}

test('project settings pages: Maintainers see them, Developers get 403, outsiders 404', async (t) => {
  const { app, base } = await projectSetup(t);
  const s = { max: await webSignIn(app, 'max'), devi: await webSignIn(app, 'devi'), otto: await webSignIn(app, 'otto') };
  for (const page of ['/-/edit', '/-/project_members', '/-/settings/repository', '/-/hooks']) {
    const ok = await webGet(app, `${base}${page}`, s.max);
    assert.equal(ok.statusCode, 200, page);
    assert.equal((ok.body.match(/<h1/g) ?? []).length, 1, page);
    assert.equal((await webGet(app, `${base}${page}`, s.devi)).statusCode, 403, page);
    assert.equal((await webGet(app, `${base}${page}`, s.otto)).statusCode, 404, page);
    assert.equal((await webGet(app, `${base}${page}`)).statusCode, 404, page);
  }
  // a Maintainer cannot rename, change visibility, archive or delete: those controls are not shown
  const edit = await webGet(app, `${base}/-/edit`, s.max);
  assert.doesNotMatch(edit.body, /id="project_name"/);
  assert.doesNotMatch(edit.body, /id="project_visibility"/);
  assert.doesNotMatch(edit.body, /Delete project<\/button>/);
  assert.match(edit.body, /<option value="main" selected>main<\/option>/);
  // posts are refused the same way
  assert.equal((await webPost(app, '/-/p/1/edit', s.devi, { description: 'x' })).statusCode, 403);
  assert.equal((await webPost(app, '/-/p/1/edit', s.otto, { description: 'x' })).statusCode, 404);
  assert.equal((await webPost(app, '/-/p/abc/edit', s.otto, { description: 'x' })).statusCode, 404);
  assert.equal((await webPost(app, '/-/p/1/delete', s.max, { confirm_path: 'olga/app' })).statusCode, 403);
});

test('project general settings: update, bad input 422, archive, delete with the path typed', async (t) => {
  const { app, c, project, base } = await projectSetup(t);
  const s = await webSignIn(app, 'olga');
  const page = await webGet(app, `${base}/-/edit`, s);
  assert.match(page.body, /<label class="FormControl-label" for="project_name">Project name<\/label>/);
  assert.match(page.body, /Type the project path to confirm/);
  const ok = await webPost(app, `/-/p/${project.id}/edit`, s, { name: 'App', description: 'The app', visibility: 'internal', default_branch: 'main' });
  assert.equal(ok.statusCode, 303);
  assert.equal(ok.headers.location, `${base}/-/edit`);
  let row = (await c.resolve.findProjectRow(project.id)) as { project: typeof project };
  assert.equal(row.project.description, 'The app');
  assert.equal(row.project.visibility, 'internal');

  const bad = await webPost(app, `/-/p/${project.id}/edit`, s, { name: '-bad name!', description: 'changed', visibility: 'internal' });
  assert.equal(bad.statusCode, 422);
  assert.match(bad.body, /role="alert"/);
  assert.match(bad.body, /value="-bad name!"/);
  row = (await c.resolve.findProjectRow(project.id)) as { project: typeof project };
  assert.equal(row.project.name, 'App');
  assert.equal(row.project.description, 'The app');

  const badVisibility = await webPost(app, `/-/p/${project.id}/edit`, s, { name: 'App', description: 'x', visibility: 'secret' });
  assert.equal(badVisibility.statusCode, 422);
  assert.match(badVisibility.body, /visibility does not have a valid value/);
  row = (await c.resolve.findProjectRow(project.id)) as { project: typeof project };
  assert.equal(row.project.visibility, 'internal');

  assert.equal((await webPost(app, `/-/p/${project.id}/archive`, s)).statusCode, 303);
  assert.equal(((await c.resolve.findProjectRow(project.id)) as { project: typeof project }).project.archived, 1);
  assert.match((await webGet(app, `${base}/-/edit`, s)).body, /Unarchive project<\/button>/);
  assert.equal((await webPost(app, `/-/p/${project.id}/unarchive`, s)).statusCode, 303);

  const wrong = await webPost(app, `/-/p/${project.id}/delete`, s, { confirm_path: 'app' });
  assert.equal(wrong.statusCode, 422);
  assert.match(wrong.body, /Type olga\/app to confirm the deletion/);
  assert.ok(await c.resolve.findProjectRow(project.id));
  const del = await webPost(app, `/-/p/${project.id}/delete`, s, { confirm_path: 'olga/app' });
  assert.equal(del.statusCode, 303);
  assert.equal(del.headers.location, '/');
  assert.equal(await c.resolve.findProjectRow(project.id), undefined);
});

test('project members: add by username with a role, change the role, remove', async (t) => {
  const { app, c, project, base, outsider } = await projectSetup(t);
  const s = await webSignIn(app, 'max');
  const page = await webGet(app, `${base}/-/project_members`, s);
  assert.match(page.body, /<label class="FormControl-label" for="member_username">Username<\/label>/);
  assert.match(page.body, /<label class="FormControl-label" for="member_access_level">Role<\/label>/);
  assert.match(page.body, /@devi/);
  assert.doesNotMatch(page.body, /@otto/);

  const unknown = await webPost(app, `/-/p/${project.id}/members`, s, { username: 'nobody', access_level: '30' });
  assert.equal(unknown.statusCode, 422);
  assert.match(unknown.body, /User &#39;nobody&#39; was not found/);
  assert.match(unknown.body, /id="member_username" name="username" type="text" value="nobody"/);

  const add = await webPost(app, `/-/p/${project.id}/members`, s, { username: 'otto', access_level: '20' });
  assert.equal(add.statusCode, 303);
  assert.equal(add.headers.location, `${base}/-/project_members`);
  const member = () =>
    c.db.kysely
      .selectFrom('members')
      .selectAll()
      .where('source_type', '=', 'Project')
      .where('source_id', '=', project.id)
      .where('user_id', '=', outsider.id)
      .executeTakeFirst();
  assert.equal((await member())!.access_level, 20);
  assert.match((await webGet(app, `${base}/-/project_members`, s)).body, /@otto/);

  assert.equal((await webPost(app, `/-/p/${project.id}/members/${outsider.id}`, s, { access_level: '30' })).statusCode, 303);
  assert.equal((await member())!.access_level, 30);
  // a Maintainer cannot make Owners: the service's message comes back as a flash, nothing changes
  const owner = await webPost(app, `/-/p/${project.id}/members/${outsider.id}`, s, { access_level: '50' });
  assert.equal(owner.statusCode, 303);
  assert.equal((await member())!.access_level, 30);

  assert.equal((await webPost(app, `/-/p/${project.id}/members/${outsider.id}/delete`, s)).statusCode, 303);
  assert.equal(await member(), undefined);
  assert.doesNotMatch((await webGet(app, `${base}/-/project_members`, s)).body, /@otto/);
});

test('protected branches and tags: protect with access levels, conflict is 422, unprotect', async (t) => {
  const { app, c, project, base } = await projectSetup(t);
  const s = await webSignIn(app, 'max');
  const page = await webGet(app, `${base}/-/settings/repository`, s);
  assert.match(page.body, /<label class="FormControl-label" for="protected_branch_push">Allowed to push and merge<\/label>/);
  assert.match(page.body, /<option value="30">Developers \+ Maintainers<\/option>/);

  const add = await webPost(app, `/-/p/${project.id}/protected_branches`, s, {
    name: 'release/*',
    push_access_level: '0',
    merge_access_level: '30',
    allow_force_push: ['0'],
  });
  assert.equal(add.statusCode, 303);
  const branches = () => c.db.kysely.selectFrom('protected_branches').selectAll().where('project_id', '=', project.id).execute();
  // the default branch was protected when the repository got it; the new rule joins it
  assert.deepEqual(
    (await branches()).map((b) => b.name),
    ['main', 'release/*'],
  );
  const shown = await webGet(app, `${base}/-/settings/repository`, s);
  assert.match(shown.body, /<th scope="row" class="text-mono">release\/\*<\/th><td>No one<\/td><td>Developers \+ Maintainers<\/td>/);

  const dup = await webPost(app, `/-/p/${project.id}/protected_branches`, s, { name: 'release/*', push_access_level: '40', merge_access_level: '40' });
  assert.equal(dup.statusCode, 422);
  assert.match(dup.body, /Protected branch &#39;release\/\*&#39; already exists/);
  const badLevel = await webPost(app, `/-/p/${project.id}/protected_branches`, s, { name: 'stable', push_access_level: '99', merge_access_level: '40' });
  assert.equal(badLevel.statusCode, 422);
  assert.equal((await branches()).length, 2);

  assert.equal((await webPost(app, `/-/p/${project.id}/protected_tags`, s, { name: 'v*', create_access_level: '40' })).statusCode, 303);
  const tags = () => c.db.kysely.selectFrom('protected_tags').selectAll().where('project_id', '=', project.id).execute();
  assert.equal((await tags()).length, 1);

  assert.equal((await webPost(app, `/-/p/${project.id}/protected_branches/delete`, s, { name: 'release/*' })).statusCode, 303);
  assert.deepEqual(
    (await branches()).map((b) => b.name),
    ['main'],
  );
  assert.equal((await webPost(app, `/-/p/${project.id}/protected_tags/delete`, s, { name: 'v*' })).statusCode, 303);
  assert.equal((await tags()).length, 0);
  // Developers cannot
  const d = await webSignIn(app, 'devi');
  assert.equal((await webPost(app, `/-/p/${project.id}/protected_tags`, d, { name: 'x', create_access_level: '40' })).statusCode, 403);
});

test('project webhooks: add, edit, test, recent deliveries with resend, delete', async (t) => {
  const { app, c, project, base } = await projectSetup(t);
  await c.settings.save({ allow_local_requests_from_web_hooks_and_services: true });
  const sink = await startSink(t);
  const s = await webSignIn(app, 'max');
  const page = await webGet(app, `${base}/-/hooks`, s);
  assert.match(page.body, /<label class="FormControl-label" for="hook_url">URL<\/label>/);
  assert.match(page.body, /<label class="FormControl-label" for="hook_token">Secret token<\/label>/);
  assert.match(page.body, /id="hook_push_events" name="push_events" value="1" checked/);

  const bad = await webPost(app, `/-/p/${project.id}/hooks`, s, { url: 'not a url', push_events: ['0', '1'] });
  assert.equal(bad.statusCode, 422);
  assert.match(bad.body, /value="not a url"/);
  const hooks = () => c.db.kysely.selectFrom('web_hooks').selectAll().where('project_id', '=', project.id).execute();
  assert.equal((await hooks()).length, 0);

  const add = await webPost(app, `/-/p/${project.id}/hooks`, s, {
    url: `${sink.url}/hook`,
    token: 'sekret',
    push_events: ['0', '1'],
    tag_push_events: ['0', '1'],
    merge_requests_events: '0',
    enable_ssl_verification: ['0', '1'],
  });
  assert.equal(add.statusCode, 303);
  const [hook] = await hooks();
  assert.equal(hook.url, `${sink.url}/hook`);
  assert.equal(hook.tag_push_events, 1);
  assert.equal(hook.merge_requests_events, 0);
  assert.ok(hook.token_encrypted && !hook.token_encrypted.includes('sekret'));
  assert.match((await webGet(app, `${base}/-/hooks`, s)).body, new RegExp(`${sink.url}/hook`));

  const edit = await webGet(app, `${base}/-/hooks/${hook.id}/edit`, s);
  assert.equal(edit.statusCode, 200);
  assert.match(edit.body, /No deliveries yet/);
  assert.doesNotMatch(edit.body, /sekret/);
  assert.equal((await webGet(app, `${base}/-/hooks/99999/edit`, s)).statusCode, 404);
  const upd = await webPost(app, `/-/p/${project.id}/hooks/${hook.id}`, s, {
    url: `${sink.url}/hook`,
    token: '',
    push_events: ['0', '1'],
    merge_requests_events: ['0', '1'],
  });
  assert.equal(upd.statusCode, 303);
  const [updated] = await hooks();
  assert.equal(updated.url, `${sink.url}/hook`);
  assert.equal(updated.merge_requests_events, 1);
  assert.equal(updated.token_encrypted, hook.token_encrypted); // empty token field: kept

  const test1 = await webPost(app, `/-/p/${project.id}/hooks/${hook.id}/test`, s);
  assert.equal(test1.statusCode, 303);
  await sink.waitFor(1);
  assert.equal(sink.received[0].headers['x-service-token'], 'sekret');
  const attempts = () => c.deliveries.attemptsQuery(hook.id, 'web').execute();
  const [first] = await attempts();
  const withDelivery = await webGet(app, `${base}/-/hooks/${hook.id}/edit`, s);
  assert.match(withDelivery.body, /200 OK/);
  assert.match(withDelivery.body, new RegExp(`action="/-/p/${project.id}/hooks/${hook.id}/events/${first.id}/resend"`));

  const resend = await webPost(app, `/-/p/${project.id}/hooks/${hook.id}/events/${first.id}/resend`, s);
  assert.equal(resend.statusCode, 303);
  assert.equal(resend.headers.location, `${base}/-/hooks/${hook.id}/edit`);
  await sink.waitFor(2);
  const after = await attempts();
  assert.equal(after.length, 2);
  assert.equal(after[0].delivery_id, first.delivery_id);
  assert.equal(sink.received[1].headers['idempotency-key'], sink.received[0].headers['idempotency-key']);
  assert.equal((await webPost(app, `/-/p/${project.id}/hooks/${hook.id}/events/999999/resend`, s)).statusCode, 404);

  assert.equal((await webPost(app, `/-/p/${project.id}/hooks/${hook.id}/delete`, s)).statusCode, 303);
  assert.equal((await hooks()).length, 0);
});

test('browser: sign in with redirect_to, create a token (shown once), walk the settings and admin pages with axe-core', {
  skip: skipWithout(chromiumAvailable, 'chromium'),
}, async (t) => {
  assertTool(chromiumAvailable, 'chromium');
  const { base, seed } = await startTestServer(t);
  const root = (await seed.user({ username: 'rooty', is_admin: true, password: 'rooty-password-1' }))!;
  const { project, dir } = await seed.repoProject({ owner: root, path: 'site', visibility: 'private' });
  const wt = workTree(t, dir);
  wt.write('README.md', 'hi\n').commit('first');
  wt.push();
  await seed.member({ project }, await seed.user({ username: 'helper' }), 30);
  const browser = await launchBrowser(t);
  const page = await (await newContext(browser, base)).newPage();

  await page.goto('/-/profile/personal_access_tokens');
  assert.match(page.url(), /\/users\/sign_in\?redirect_to=%2F-%2Fprofile%2Fpersonal_access_tokens$/);
  await assertAccessible(page, 'the sign-in page');
  await screenshot(page, 'settings-sign-in');
  await page.getByLabel('Username or primary email').fill('rooty');
  await page.getByLabel('Password').fill('rooty-password-1');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/-\/profile\/personal_access_tokens$/);

  await page.getByLabel('Token name').fill('browser token');
  await page.getByLabel('read_api').check();
  await page.getByRole('button', { name: 'Create personal access token' }).click();
  await page.waitForLoadState('domcontentloaded');
  const secret = await page.getByLabel('Your new personal access token').inputValue();
  assert.ok(secret.length > 20);
  await assertAccessible(page, 'the tokens page with the new token');
  await screenshot(page, 'settings-token-created');
  await page.goto('/-/profile/personal_access_tokens');
  assert.equal(await page.getByLabel('Your new personal access token').count(), 0);
  assert.ok(!(await page.content()).includes(secret));

  for (const [url, name] of [
    ['/-/profile', 'settings-profile'],
    ['/-/profile/keys', 'settings-keys'],
    ['/rooty/site/-/edit', 'project-settings-general'],
    ['/rooty/site/-/project_members', 'project-settings-members'],
    ['/rooty/site/-/settings/repository', 'project-settings-repository'],
    ['/rooty/site/-/hooks', 'project-settings-hooks'],
    ['/admin', 'admin-overview'],
    ['/admin/users', 'admin-users'],
    ['/admin/users/helper', 'admin-user'],
    ['/admin/hooks', 'admin-hooks'],
    ['/admin/application_settings/general', 'admin-settings'],
  ]) {
    const res = await page.goto(url);
    assert.equal(res?.status(), 200, url);
    assert.equal(await page.locator('h1').count(), 1, url);
    await assertAccessible(page, url);
    await screenshot(page, name);
  }
});
