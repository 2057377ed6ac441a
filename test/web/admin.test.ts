// The admin area as web pages: administrators only (others get the 404 page), users with block and
// unblock, system hooks with their deliveries and resend, and the general application settings form.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/build-app.ts';
import { startSink } from '../helpers/sink.ts';
import { webGet, webPost, webSignIn } from '../helpers/web.ts';

const PAGES = ['/admin', '/admin/users', '/admin/users/root', '/admin/hooks', '/admin/application_settings/general'];

test('admin pages: administrators see them, everyone else gets the 404 page (the anonymous are sent to sign in)', async (t) => {
  const { app, seed } = await buildTestApp(t);
  await seed.user({ username: 'alice' });
  const root = await webSignIn(app, 'root', 'root-password-1');
  const alice = await webSignIn(app, 'alice');
  for (const page of PAGES) {
    const ok = await webGet(app, page, root);
    assert.equal(ok.statusCode, 200, page);
    assert.equal(ok.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal((ok.body.match(/<h1/g) ?? []).length, 1, page);
    const no = await webGet(app, page, alice);
    assert.equal(no.statusCode, 404, page);
    assert.match(no.body, /Page not found/);
    const anon = await webGet(app, page);
    assert.equal(anon.statusCode, 302, page);
    assert.equal(anon.headers.location, `/users/sign_in?redirect_to=${encodeURIComponent(page)}`);
  }
  assert.equal((await webPost(app, '/admin/users/root/block', alice)).statusCode, 404);
  assert.equal((await webPost(app, '/admin/hooks', alice, { url: 'http://example.com' })).statusCode, 404);
  assert.equal((await webGet(app, '/admin/users/nobody', root)).statusCode, 404);
  assert.equal((await webGet(app, '/admin/hooks/12345', root)).statusCode, 404);
  assert.equal((await webGet(app, '/admin/hooks/abc', root)).statusCode, 404);

  const overview = await webGet(app, '/admin', root);
  assert.match(overview.body, /<span class="f1 d-block">2<\/span><span class="color-fg-muted">Users<\/span>/);
});

test('admin users: search, state filter, block and unblock through the users service', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const bob = await seed.user({ username: 'bob', name: 'Bob Builder' });
  await seed.user({ username: 'carl' });
  const root = await webSignIn(app, 'root', 'root-password-1');
  const bobSession = await webSignIn(app, 'bob');

  const list = await webGet(app, '/admin/users?search=builder', root);
  assert.equal(list.statusCode, 200);
  assert.match(list.body, /<label class="FormControl-label" for="user_search">Search by name, username or email<\/label>/);
  assert.match(list.body, /href="\/admin\/users\/bob">Bob Builder<\/a>/);
  assert.doesNotMatch(list.body, /@carl/);

  const page = await webGet(app, '/admin/users/bob', root);
  assert.match(page.body, /Block user<\/button>/);
  // no block button for oneself
  assert.doesNotMatch((await webGet(app, '/admin/users/root', root)).body, /Block user<\/button>/);

  const block = await webPost(app, '/admin/users/bob/block', root);
  assert.equal(block.statusCode, 303);
  assert.equal(block.headers.location, '/admin/users/bob');
  assert.equal((await c.users.byId(bob.id))!.state, 'blocked');
  // the blocked user's session no longer signs them in
  assert.equal((await webGet(app, '/-/profile', bobSession)).statusCode, 302);
  const blocked = await webGet(app, '/admin/users?state=blocked', root);
  assert.match(blocked.body, /@bob/);
  assert.doesNotMatch(blocked.body, /@carl/);
  assert.match((await webGet(app, '/admin/users/bob', root)).body, /Unblock user<\/button>/);

  // blocking oneself is refused by the service: a flash, nothing changes
  const self = await webPost(app, '/admin/users/root/block', root);
  assert.equal(self.statusCode, 303);
  const root2 = (await c.users.byUsername('root'))!;
  assert.equal(root2.state, 'active');

  assert.equal((await webPost(app, '/admin/users/bob/unblock', root)).statusCode, 303);
  assert.equal((await c.users.byId(bob.id))!.state, 'active');
});

test('admin system hooks: add, test, recent deliveries with resend, delete', async (t) => {
  const { app, c } = await buildTestApp(t);
  const sink = await startSink(t);
  const root = await webSignIn(app, 'root', 'root-password-1');
  const page = await webGet(app, '/admin/hooks', root);
  assert.match(page.body, /<label class="FormControl-label" for="system_hook_url">URL<\/label>/);
  assert.match(page.body, /<label for="system_hook_push_events">/);

  const bad = await webPost(app, '/admin/hooks', root, { url: 'ftp://nowhere' });
  assert.equal(bad.statusCode, 422);
  assert.match(bad.body, /value="ftp:\/\/nowhere"/);
  assert.equal((await c.hooks.listQuery().execute()).length, 0);

  const add = await webPost(app, '/admin/hooks', root, {
    url: `${sink.url}/system`,
    name: 'audit',
    token: 'tok',
    push_events: ['0', '1'],
    tag_push_events: '0',
  });
  assert.equal(add.statusCode, 303);
  const [hook] = await c.hooks.listQuery().execute();
  assert.equal(hook.url, `${sink.url}/system`);
  assert.equal(hook.push_events, 1);
  assert.equal(hook.tag_push_events, 0);
  assert.match((await webGet(app, '/admin/hooks', root)).body, /href="\/admin\/hooks\/\d+">audit<\/a>/);

  const test1 = await webPost(app, `/admin/hooks/${hook.id}/test`, root);
  assert.equal(test1.statusCode, 303);
  assert.equal(test1.headers.location, `/admin/hooks/${hook.id}`);
  await sink.waitFor(1);
  const [first] = await c.deliveries.attemptsQuery(hook.id).execute();
  const detail = await webGet(app, `/admin/hooks/${hook.id}`, root);
  assert.match(detail.body, /Recent deliveries/);
  assert.match(detail.body, new RegExp(`action="/admin/hooks/${hook.id}/events/${first.id}/resend"`));

  const resend = await webPost(app, `/admin/hooks/${hook.id}/events/${first.id}/resend`, root);
  assert.equal(resend.statusCode, 303);
  await sink.waitFor(2);
  const attempts = await c.deliveries.attemptsQuery(hook.id).execute();
  assert.equal(attempts.length, 2);
  assert.equal(attempts[0].delivery_id, first.delivery_id);
  assert.equal((await webPost(app, `/admin/hooks/${hook.id}/events/99999/resend`, root)).statusCode, 404);

  assert.equal((await webPost(app, `/admin/hooks/${hook.id}/delete`, root)).statusCode, 303);
  assert.equal((await c.hooks.listQuery().execute()).length, 0);
});

test('admin application settings: saved through the settings service; a bad value is 422 naming the key, nothing saved', async (t) => {
  const { app, c } = await buildTestApp(t);
  const root = await webSignIn(app, 'root', 'root-password-1');
  const page = await webGet(app, '/admin/application_settings/general', root);
  assert.match(page.body, /<label class="FormControl-label" for="application_setting_default_projects_limit">Default projects limit<\/label>/);
  assert.match(page.body, /<label for="application_setting_signup_enabled">/);
  assert.match(page.body, /<option value="private" selected>Private<\/option>/);

  const ok = await webPost(app, '/admin/application_settings/general', root, {
    application_setting: {
      signup_enabled: '0',
      default_project_visibility: 'internal',
      default_projects_limit: '42',
      session_expire_delay: '600',
      max_personal_access_token_lifetime: '',
      require_personal_access_token_expiry: ['0', '1'],
    },
  });
  assert.equal(ok.statusCode, 303);
  assert.equal(ok.headers.location, '/admin/application_settings/general');
  let s = (await c.settings.fresh()).values;
  assert.equal(s.signup_enabled, false);
  assert.equal(s.default_project_visibility, 'internal');
  assert.equal(s.default_projects_limit, 42);
  assert.equal(s.session_expire_delay, 600);
  assert.equal(s.require_personal_access_token_expiry, true);
  assert.match((await webGet(app, '/admin/application_settings/general', root)).body, /id="application_setting_default_projects_limit"[^>]*value="42"/);

  const bad = await webPost(app, '/admin/application_settings/general', root, {
    application_setting: { signup_enabled: ['0', '1'], default_projects_limit: '-5', default_project_visibility: 'public' },
  });
  assert.equal(bad.statusCode, 422);
  assert.match(bad.body, /role="alert"/);
  assert.match(bad.body, /default_projects_limit/);
  assert.match(bad.body, /value="-5"/);
  s = (await c.settings.fresh()).values;
  assert.equal(s.signup_enabled, false);
  assert.equal(s.default_projects_limit, 42);
  assert.equal(s.default_project_visibility, 'internal');
});
