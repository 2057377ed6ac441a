// A hook URL the network rules refuse: the page names the cause and the setting that allows it, and
// the administrator's settings page offers that setting (and its sibling, and the allowlist).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/build-app.ts';
import { webGet, webPost, webSignIn } from '../helpers/web.ts';

const SETTINGS = '/admin/application_settings/general';

test('project webhook to a local address: the form names the cause and the setting; the admin page turns it on and the hook saves', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const max = await seed.user({ username: 'max' });
  const project = await seed.project({ owner: max, path: 'app' });
  const hooks = async () => (await c.db.kysely.selectFrom('web_hooks').select('url').where('project_id', '=', project.id).execute()).map((h) => h.url);
  const s = await webSignIn(app, 'max');
  const root = await webSignIn(app, 'root', 'root-password-1');

  const bad = await webPost(app, `/-/p/${project.id}/hooks`, s, { url: 'http://127.0.0.1:8080/hook', push_events: ['0', '1'] });
  assert.equal(bad.statusCode, 422);
  assert.match(
    bad.body,
    /<div class="flash flash-error mb-3" role="alert">[\s\S]*Invalid url given: Url is blocked: Requests to localhost are not allowed \(an administrator can allow them with the setting allow_local_requests_from_web_hooks_and_services\)/,
  );
  assert.doesNotMatch(bad.body, />\s*raw\s*</);
  assert.match(bad.body, /value="http:\/\/127.0.0.1:8080\/hook"/);
  assert.deepEqual(await hooks(), []);

  // the settings page offers both switches (off and on by default) and the allowlist
  const page = await webGet(app, SETTINGS, root);
  assert.match(page.body, /<legend class="h3 mb-2">Outbound requests<\/legend>/);
  assert.match(
    page.body,
    /<input type="checkbox" id="application_setting_allow_local_requests_from_web_hooks_and_services" name="application_setting\[allow_local_requests_from_web_hooks_and_services\]" value="1"> Allow requests to the local network from webhooks and integrations/,
  );
  assert.match(
    page.body,
    /id="application_setting_allow_local_requests_from_system_hooks" name="application_setting\[allow_local_requests_from_system_hooks\]" value="1" checked/,
  );
  assert.match(page.body, /<textarea [^>]*id="application_setting_outbound_local_requests_whitelist"[^>]*><\/textarea>/);

  // an allowlisted address is allowed with the switch off
  let saved = await webPost(app, SETTINGS, root, { application_setting: { outbound_local_requests_whitelist: '127.0.0.1:8080\n10.9.9.9, *.internal.test' } });
  assert.equal(saved.statusCode, 303);
  assert.deepEqual((await c.settings.fresh()).values.outbound_local_requests_whitelist, ['127.0.0.1:8080', '10.9.9.9', '*.internal.test']);
  assert.match(
    (await webGet(app, SETTINGS, root)).body,
    /<textarea [^>]*id="application_setting_outbound_local_requests_whitelist"[^>]*>127.0.0.1:8080\n10.9.9.9\n\*.internal.test<\/textarea>/,
  );
  assert.equal((await webPost(app, `/-/p/${project.id}/hooks`, s, { url: 'http://127.0.0.1:8080/hook', push_events: ['0', '1'] })).statusCode, 303);
  assert.equal((await webPost(app, `/-/p/${project.id}/hooks`, s, { url: 'http://127.0.0.2/hook', push_events: ['0', '1'] })).statusCode, 422);

  // the switch, through the page: on, then any local address is saved
  saved = await webPost(app, SETTINGS, root, {
    application_setting: { allow_local_requests_from_web_hooks_and_services: ['0', '1'], outbound_local_requests_whitelist: '' },
  });
  assert.equal(saved.statusCode, 303);
  const values = (await c.settings.fresh()).values;
  assert.deepEqual([values.allow_local_requests_from_web_hooks_and_services, values.outbound_local_requests_whitelist], [true, []]);
  assert.match((await webGet(app, SETTINGS, root)).body, /id="application_setting_allow_local_requests_from_web_hooks_and_services" [^>]*checked/);
  const ok = await webPost(app, `/-/p/${project.id}/hooks`, s, { url: 'http://127.0.0.2/hook', push_events: ['0', '1'] });
  assert.equal(ok.statusCode, 303);
  assert.deepEqual(await hooks(), ['http://127.0.0.1:8080/hook', 'http://127.0.0.2/hook']);
});

test('system hook to a local address with the system-hooks switch off: the admin page names the cause and allow_local_requests_from_system_hooks', async (t) => {
  const { app, c } = await buildTestApp(t);
  const root = await webSignIn(app, 'root', 'root-password-1');
  const off = await webPost(app, SETTINGS, root, { application_setting: { allow_local_requests_from_system_hooks: '0' } });
  assert.equal(off.statusCode, 303);
  assert.equal((await c.settings.fresh()).values.allow_local_requests_from_system_hooks, false);
  const bad = await webPost(app, '/admin/hooks', root, { url: 'http://10.0.0.7/hook' });
  assert.equal(bad.statusCode, 422);
  assert.match(
    bad.body,
    /Invalid url given: Url is blocked: Requests to the local network are not allowed \(an administrator can allow them with the setting allow_local_requests_from_system_hooks\)/,
  );
  assert.equal((await c.db.kysely.selectFrom('system_hooks').select('id').execute()).length, 0);
});
