// Project and group webhooks through the API: create, list, get, update, delete, custom headers and
// URL variables, permissions (Maintainer for projects, Owner for groups), bad inputs, and the deletion
// of hooks and their deliveries with their project or group.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../helpers/build-app.ts';

const URL = 'http://example.com/hook';

async function setup(t: Parameters<typeof buildTestApp>[0]) {
  const ctx = await buildTestApp(t);
  const { c, seed } = ctx;
  await c.settings.update({ allow_local_requests_from_web_hooks_and_services: true });
  const group = await seed.group();
  const project = await seed.project({ namespace: group });
  const maintainer = await seed.user();
  await seed.member({ project }, maintainer, 40);
  const m = await seed.token(maintainer);
  return { ...ctx, group, project, maintainer, m };
}

function projectHook(id: number, projectId: number, over: Record<string, unknown> = {}) {
  return {
    id,
    url: URL,
    name: null,
    description: null,
    created_at: over.created_at,
    push_events: true,
    tag_push_events: false,
    merge_requests_events: false,
    repository_update_events: false,
    enable_ssl_verification: true,
    alert_status: 'executable',
    disabled_until: null,
    url_variables: [],
    push_events_branch_filter: null,
    branch_filter_strategy: 'wildcard',
    custom_webhook_template: null,
    custom_headers: [],
    project_id: projectId,
    issues_events: false,
    confidential_issues_events: false,
    note_events: false,
    confidential_note_events: false,
    pipeline_events: false,
    wiki_page_events: false,
    deployment_events: false,
    feature_flag_events: false,
    job_events: false,
    releases_events: false,
    milestone_events: false,
    emoji_events: false,
    resource_access_token_events: false,
    resource_deploy_token_events: false,
    vulnerability_events: false,
    ...over,
  };
}

test('project hooks: create, get, list, update, delete with GitLab bodies', async (t) => {
  const { app, c, project, m } = await setup(t);
  const base = `/api/v4/projects/${project.id}/hooks`;
  const created = await app.inject({ method: 'POST', url: base, headers: m.headers, payload: { url: URL } });
  assert.equal(created.statusCode, 201, created.body);
  const body = created.json();
  assert.match(body.created_at, /^\d{4}-\d\d-\d\dT/);
  assert.deepEqual(body, projectHook(body.id, project.id, { created_at: body.created_at }));
  assert.deepEqual(Object.keys(body), Object.keys(projectHook(1, 1)));

  const full = await app.inject({
    method: 'POST',
    url: base,
    headers: m.headers,
    payload: {
      url: 'http://example.com/{path}',
      name: 'CI',
      description: 'all of it',
      token: 's3cret',
      push_events: false,
      tag_push_events: true,
      merge_requests_events: true,
      note_events: true,
      pipeline_events: true,
      job_events: true,
      enable_ssl_verification: false,
      push_events_branch_filter: 'release/*',
      custom_webhook_template: '{"kind":"{{object_kind}}"}',
      url_variables: [{ key: 'path', value: 'secret-path' }],
      custom_headers: [{ key: 'X-Custom', value: 'custom-value' }],
    },
  });
  assert.equal(full.statusCode, 201, full.body);
  const f = full.json();
  assert.equal(f.token, undefined);
  assert.deepEqual(
    [f.url, f.name, f.push_events, f.tag_push_events, f.merge_requests_events, f.note_events, f.pipeline_events, f.job_events, f.enable_ssl_verification],
    ['http://example.com/{path}', 'CI', false, true, true, true, true, true, false],
  );
  assert.deepEqual(f.url_variables, [{ key: 'path' }]);
  assert.deepEqual(f.custom_headers, [{ key: 'X-Custom' }]);
  assert.equal(f.custom_webhook_template, '{"kind":"{{object_kind}}"}');
  // secrets are sealed in the row
  const row = await c.db.kysely.selectFrom('web_hooks').selectAll().where('id', '=', f.id).executeTakeFirstOrThrow();
  assert.ok(row.token_encrypted && !row.token_encrypted.includes('s3cret'));
  assert.ok(row.custom_headers_encrypted && !row.custom_headers_encrypted.includes('custom-value'));
  assert.equal(c.webHooks.tokenOf(row), 's3cret');

  // list: no url_variables nor custom_headers (GitLab's with_url_variables: false)
  const list = await app.inject({ method: 'GET', url: base, headers: m.headers });
  assert.equal(list.statusCode, 200);
  assert.equal(list.headers['x-total'], '2');
  const { url_variables: _u, custom_headers: _h, ...listed } = projectHook(body.id, project.id, { created_at: body.created_at });
  assert.deepEqual(list.json()[0], listed);
  assert.deepEqual(
    list.json().map((h: any) => h.id),
    [body.id, f.id],
  );

  const got = await app.inject({ method: 'GET', url: `${base}/${f.id}`, headers: m.headers });
  assert.deepEqual(got.json(), f);

  // update: only what is given; a new URL drops the token and the custom headers
  const upd = await app.inject({ method: 'PUT', url: `${base}/${f.id}`, headers: m.headers, payload: { name: 'renamed', issues_events: true } });
  assert.equal(upd.statusCode, 200, upd.body);
  assert.deepEqual(upd.json(), { ...f, name: 'renamed', issues_events: true });
  const moved = await app.inject({ method: 'PUT', url: `${base}/${f.id}`, headers: m.headers, payload: { url: 'http://example.org/other' } });
  assert.equal(moved.statusCode, 200, moved.body);
  assert.deepEqual(moved.json().custom_headers, []);
  const after = await c.db.kysely.selectFrom('web_hooks').selectAll().where('id', '=', f.id).executeTakeFirstOrThrow();
  assert.equal(after.token_encrypted, null);

  const del = await app.inject({ method: 'DELETE', url: `${base}/${f.id}`, headers: m.headers });
  assert.equal(del.statusCode, 204);
  const again = await app.inject({ method: 'DELETE', url: `${base}/${f.id}`, headers: m.headers });
  assert.equal(again.statusCode, 404);
  assert.deepEqual(again.json(), { message: '404 Not found' });
});

test('project hooks: bad inputs answer GitLab errors, never a 500', async (t) => {
  const { app, project, m } = await setup(t);
  const base = `/api/v4/projects/${project.id}/hooks`;
  const post = (payload: unknown) => app.inject({ method: 'POST', url: base, headers: m.headers, payload: payload as any });
  let res = await post({});
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'url is missing' });
  res = await post({ url: 'not a url' });
  assert.equal(res.statusCode, 422);
  assert.deepEqual(res.json(), { error: 'Invalid url given' });
  res = await post({ url: 'ftp://example.com/x' });
  assert.deepEqual([res.statusCode, res.json()], [422, { error: 'Invalid url given' }]);
  res = await post({ url: URL, branch_filter_strategy: 'regex', push_events_branch_filter: '(' });
  assert.deepEqual([res.statusCode, res.json()], [422, { error: 'Invalid branch filter given' }]);
  res = await post({ url: URL, branch_filter_strategy: 'nope' });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'branch_filter_strategy does not have a valid value' }]);
  res = await post({ url: URL, push_events: 'maybe' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'push_events is invalid' });
  res = await post({ url: URL, token: 'a\u0001b' });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'token is invalid' }]);
  res = await post({ url: URL, custom_headers: [{ key: 'bad header', value: 'x' }] });
  assert.deepEqual([res.statusCode, res.json()], [422, { error: 'Custom headers must be a valid json schema' }]);
  res = await post({ url: 'http://example.com/{missing}' });
  assert.deepEqual([res.statusCode, res.json()], [422, { error: 'Invalid url given' }]);
  res = await post({ url: URL, custom_webhook_template: 'x'.repeat(4097) });
  assert.equal(res.statusCode, 422);

  const created = (await post({ url: URL })).json();
  res = await app.inject({ method: 'PUT', url: `${base}/${created.id}`, headers: m.headers, payload: {} });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'No parameters provided' }]);
  res = await app.inject({ method: 'GET', url: `${base}/99999999999`, headers: m.headers });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Not found' }]);
  res = await app.inject({ method: 'GET', url: `${base}/abc`, headers: m.headers });
  assert.equal(res.statusCode, 400);
  res = await app.inject({ method: 'POST', url: `${base}/${created.id}/test/nothing`, headers: m.headers });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'trigger does not have a valid value' }]);
  res = await app.inject({ method: 'GET', url: `${base}/${created.id}/events?per_page=21`, headers: m.headers });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'per_page does not have a valid value' }]);
  res = await app.inject({ method: 'GET', url: `${base}/${created.id}/events?status=teapot`, headers: m.headers });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'status does not have a valid value' }]);
});

test('project hooks: local addresses follow allow_local_requests_from_web_hooks_and_services', async (t) => {
  const { app, c, project, m } = await setup(t);
  await c.settings.update({ allow_local_requests_from_web_hooks_and_services: false, allow_local_requests_from_system_hooks: true });
  const count = async () => (await c.db.kysely.selectFrom('web_hooks').select('id').execute()).length;
  const before = await count();
  let res = await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/hooks`, headers: m.headers, payload: { url: 'http://127.0.0.1:9/x' } });
  // GitLab's "Invalid url given", followed by the cause and the setting that allows it
  assert.deepEqual(
    [res.statusCode, res.json()],
    [
      422,
      {
        error:
          'Invalid url given: Url is blocked: Requests to localhost are not allowed (an administrator can allow them with the setting allow_local_requests_from_web_hooks_and_services)',
      },
    ],
  );
  res = await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/hooks`, headers: m.headers, payload: { url: 'http://10.1.2.3/x' } });
  assert.equal(
    res.json().error,
    'Invalid url given: Url is blocked: Requests to the local network are not allowed (an administrator can allow them with the setting allow_local_requests_from_web_hooks_and_services)',
  );
  // multicast is never allowed: the cause, no setting to name
  res = await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/hooks`, headers: m.headers, payload: { url: 'http://224.0.0.1/x' } });
  assert.deepEqual([res.statusCode, res.json()], [422, { error: 'Invalid url given: Url is blocked: Requests to multicast addresses are not allowed' }]);
  assert.equal(await count(), before, 'nothing stored');
  // turned on, the same URL is saved
  await c.settings.update({ allow_local_requests_from_web_hooks_and_services: true });
  res = await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/hooks`, headers: m.headers, payload: { url: 'http://127.0.0.1:9/x' } });
  assert.equal(res.statusCode, 201, res.body);
});

test('project hooks: permissions — Maintainer manages, Developer 403, stranger 404, anonymous 401', async (t) => {
  const { app, seed, project, m } = await setup(t);
  const base = `/api/v4/projects/${project.id}/hooks`;
  const dev = await seed.user();
  await seed.member({ project }, dev, 30);
  const d = await seed.token(dev);
  const stranger = await seed.token(await seed.user());
  const hook = (await app.inject({ method: 'POST', url: base, headers: m.headers, payload: { url: URL } })).json();
  for (const [method, url] of [
    ['GET', base],
    ['POST', base],
    ['GET', `${base}/${hook.id}`],
    ['PUT', `${base}/${hook.id}`],
    ['DELETE', `${base}/${hook.id}`],
    ['GET', `${base}/${hook.id}/events`],
    ['POST', `${base}/${hook.id}/test/push_events`],
    ['PUT', `${base}/${hook.id}/custom_headers/X-A`],
  ] as const) {
    const payload = method === 'POST' || method === 'PUT' ? { url: URL, value: 'v' } : undefined;
    const r1 = await app.inject({ method, url, headers: d.headers, payload });
    assert.deepEqual([r1.statusCode, r1.json()], [403, { message: '403 Forbidden' }], `${method} ${url}`);
    const r2 = await app.inject({ method, url, headers: stranger.headers, payload });
    assert.deepEqual([r2.statusCode, r2.json()], [404, { message: '404 Project Not Found' }], `${method} ${url}`);
    const r3 = await app.inject({ method, url, payload });
    assert.equal(r3.statusCode, 401);
  }
});

test('custom headers and URL variables: set, unset, GitLab errors', async (t) => {
  const { app, c, project, m } = await setup(t);
  const base = `/api/v4/projects/${project.id}/hooks`;
  const hook = (
    await app.inject({ method: 'POST', url: base, headers: m.headers, payload: { url: 'http://example.com/{a}', url_variables: [{ key: 'a', value: 'x' }] } })
  ).json();
  let res = await app.inject({ method: 'PUT', url: `${base}/${hook.id}/custom_headers/X-Api-Key`, headers: m.headers, payload: { value: 'k1' } });
  assert.equal(res.statusCode, 204, res.body);
  res = await app.inject({ method: 'PUT', url: `${base}/${hook.id}/custom_headers/bad%20key`, headers: m.headers, payload: { value: 'k1' } });
  assert.deepEqual([res.statusCode, res.json()], [422, { error: 'Illegal key or value' }]);
  res = await app.inject({ method: 'PUT', url: `${base}/${hook.id}/custom_headers/X-B`, headers: m.headers, payload: { value: 'a\r\nInjected: 1' } });
  assert.deepEqual([res.statusCode, res.json()], [422, { error: 'Illegal key or value' }]);
  res = await app.inject({ method: 'PUT', url: `${base}/${hook.id}/custom_headers/X-B`, headers: m.headers, payload: {} });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'value is missing' }]);
  res = await app.inject({ method: 'PUT', url: `${base}/${hook.id}/url_variables/b`, headers: m.headers, payload: { value: 'y' } });
  assert.equal(res.statusCode, 204);
  const got = (await app.inject({ method: 'GET', url: `${base}/${hook.id}`, headers: m.headers })).json();
  assert.deepEqual(got.custom_headers, [{ key: 'X-Api-Key' }]);
  assert.deepEqual(got.url_variables, [{ key: 'a' }, { key: 'b' }]);
  res = await app.inject({ method: 'DELETE', url: `${base}/${hook.id}/custom_headers/X-Nope`, headers: m.headers });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Custom header Not Found' }]);
  res = await app.inject({ method: 'DELETE', url: `${base}/${hook.id}/url_variables/zz`, headers: m.headers });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 URL variable Not Found' }]);
  res = await app.inject({ method: 'DELETE', url: `${base}/${hook.id}/url_variables/a`, headers: m.headers });
  assert.deepEqual([res.statusCode, res.json()], [422, { error: 'Could not unset variable' }]);
  res = await app.inject({ method: 'DELETE', url: `${base}/${hook.id}/custom_headers/X-Api-Key`, headers: m.headers });
  assert.equal(res.statusCode, 204);
  const row = await c.db.kysely.selectFrom('web_hooks').selectAll().where('id', '=', hook.id).executeTakeFirstOrThrow();
  assert.deepEqual(c.webHooks.customHeadersOf(row), {});
  assert.deepEqual(c.webHooks.urlVariablesOf(row), { a: 'x', b: 'y' });
});

test('group hooks: Owner only, GroupHook entity; deleting the group or project deletes hooks and deliveries', async (t) => {
  const { app, c, seed, group, project, m, root } = await setup(t);
  const owner = await seed.user();
  await seed.member({ group }, owner, 50);
  const o = await seed.token(owner);
  const base = `/api/v4/groups/${group.id}/hooks`;
  const maint = await seed.user();
  await seed.member({ group }, maint, 40);
  const mt = await seed.token(maint);
  let res = await app.inject({ method: 'POST', url: base, headers: mt.headers, payload: { url: URL } });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  // a project member sees the group above (403); a stranger does not see the private group (404)
  res = await app.inject({ method: 'GET', url: base, headers: m.headers });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  res = await app.inject({ method: 'GET', url: base, headers: (await seed.token(await seed.user())).headers });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Group Not Found' }]);
  res = await app.inject({ method: 'POST', url: base, headers: o.headers, payload: { url: URL, subgroup_events: true, member_events: true } });
  assert.equal(res.statusCode, 201, res.body);
  const h = res.json();
  assert.deepEqual(Object.keys(h).slice(17), [
    'group_id',
    'issues_events',
    'confidential_issues_events',
    'note_events',
    'confidential_note_events',
    'pipeline_events',
    'wiki_page_events',
    'job_events',
    'deployment_events',
    'feature_flag_events',
    'releases_events',
    'milestone_events',
    'subgroup_events',
    'emoji_events',
    'resource_access_token_events',
    'member_events',
    'vulnerability_events',
    'project_events',
  ]);
  assert.deepEqual([h.group_id, h.subgroup_events, h.member_events, h.push_events], [group.id, true, true, true]);
  const ph = (await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/hooks`, headers: m.headers, payload: { url: URL } })).json();
  // a delivery recorded for each
  for (const id of [h.id, ph.id]) {
    const hook = await c.db.kysely.selectFrom('web_hooks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    await c.deliveries.deliverNow(hook, { object_kind: 'push', ref: 'refs/heads/main' }).catch(() => {});
  }
  assert.equal((await c.db.kysely.selectFrom('hook_deliveries').select('id').where('hook_type', '=', 'web').execute()).length, 2);
  res = await app.inject({ method: 'DELETE', url: `/api/v4/projects/${project.id}`, headers: root });
  assert.ok([202, 204].includes(res.statusCode), res.body);
  await c.worker.drain();
  const left = await c.db.kysely.selectFrom('web_hooks').select('id').execute();
  assert.deepEqual(
    left.map((r) => r.id),
    [h.id],
  );
  res = await app.inject({ method: 'DELETE', url: `/api/v4/groups/${group.id}`, headers: root });
  assert.ok([202, 204].includes(res.statusCode), res.body);
  await c.worker.drain();
  assert.deepEqual(await c.db.kysely.selectFrom('web_hooks').select('id').execute(), []);
  assert.deepEqual(await c.db.kysely.selectFrom('hook_deliveries').select('id').where('hook_type', '=', 'web').execute(), []);
  assert.deepEqual(await c.db.kysely.selectFrom('hook_attempts').select('id').execute(), []);
});

export type { TestApp };
