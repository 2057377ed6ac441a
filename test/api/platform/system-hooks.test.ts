// System hooks API (spec "System hooks (admin)", reference §5): administrators only, every parameter,
// defaults, validation with GitLab's bodies, the token never shown, the test delivery, attempts and
// resending. Deliveries themselves: test/hooks/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import { startSink } from '../../helpers/sink.ts';

const URL = '/api/v4/hooks';

async function hookRows(c: TestApp['c']) {
  return c.db.kysely.selectFrom('system_hooks').selectAll().orderBy('id').execute();
}

function entity(over: Record<string, unknown>): any {
  return {
    name: null,
    description: null,
    push_events: false,
    tag_push_events: false,
    merge_requests_events: false,
    repository_update_events: true,
    enable_ssl_verification: true,
    alert_status: 'executable',
    disabled_until: null,
    url_variables: [],
    push_events_branch_filter: null,
    branch_filter_strategy: 'wildcard',
    custom_webhook_template: null,
    custom_headers: [],
    ...over,
  };
}

test('create with defaults, get, list: the token is taken, sealed and never shown', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const created = await app.inject({ method: 'POST', url: URL, headers: root, payload: { url: 'http://hooks.example.com/in', token: 's3cret-token' } });
  assert.equal(created.statusCode, 201);
  assert.equal(created.headers['content-type'], 'application/json');
  const body: any = created.json();
  assert.deepEqual(body, entity({ id: body.id, url: 'http://hooks.example.com/in', created_at: body.created_at }));
  assert.match(body.created_at, /^\d{4}-\d{2}-\d{2}T/);
  assert.ok(!created.body.includes('s3cret-token'));

  const [row] = await hookRows(c);
  assert.ok(row.token_encrypted && !row.token_encrypted.includes('s3cret-token'));
  assert.equal(c.hooks.tokenOf(row), 's3cret-token');

  const one = await app.inject({ method: 'GET', url: `${URL}/${body.id}`, headers: root });
  assert.equal(one.statusCode, 200);
  assert.deepEqual(one.json(), body);
  const list = await app.inject({ method: 'GET', url: URL, headers: root });
  assert.equal(list.statusCode, 200);
  assert.deepEqual(list.json(), [body]);
  assert.equal(list.headers['x-total'], '1');
  assert.equal(list.headers['x-page'], '1');
});

test('every parameter on create, in JSON and as form fields; the URL password is masked', async (t) => {
  const { app, root } = await buildTestApp(t);
  const full = {
    url: 'https://bob:pa55@hooks.example.com/in?x=1',
    name: 'Audit',
    description: 'to the audit log',
    token: 't',
    push_events: true,
    tag_push_events: true,
    merge_requests_events: true,
    repository_update_events: false,
    enable_ssl_verification: false,
    push_events_branch_filter: 'release/*',
    branch_filter_strategy: 'wildcard',
  };
  const res = await app.inject({ method: 'POST', url: URL, headers: root, payload: full });
  assert.equal(res.statusCode, 201);
  const b: any = res.json();
  const { token: _t, ...shown } = full;
  assert.deepEqual(b, entity({ ...shown, id: b.id, created_at: b.created_at, url: 'https://bob:*****@hooks.example.com/in?x=1' }));

  const form = await app.inject({
    method: 'POST',
    url: URL,
    headers: { ...root, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'url=http%3A%2F%2Fhooks.example.com%2Fa&push_events=true&tag_push_events=1&branch_filter_strategy=regex&push_events_branch_filter=%5Emain%24',
  });
  assert.equal(form.statusCode, 201);
  assert.deepEqual(
    (({ push_events, tag_push_events, branch_filter_strategy, push_events_branch_filter }) => ({
      push_events,
      tag_push_events,
      branch_filter_strategy,
      push_events_branch_filter,
    }))(form.json()),
    { push_events: true, tag_push_events: true, branch_filter_strategy: 'regex', push_events_branch_filter: '^main$' },
  );
  // all_branches keeps no filter (GitLab sets it to nil before validation)
  const all = await app.inject({
    method: 'POST',
    url: URL,
    headers: root,
    payload: { url: 'http://hooks.example.com/b', branch_filter_strategy: 'all_branches', push_events_branch_filter: 'x' },
  });
  assert.equal(all.json().push_events_branch_filter, null);
});

test('bad input: Grape 400s, GitLab 422s, and nothing is written', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const cases: [Record<string, unknown>, number, unknown][] = [
    [{}, 400, { error: 'url is missing' }],
    [{ url: 'not a url' }, 422, { error: 'Invalid url given' }],
    [{ url: 'ftp://hooks.example.com/' }, 422, { error: 'Invalid url given' }],
    [{ url: 'javascript:alert(1)' }, 422, { error: 'Invalid url given' }],
    [{ url: `http://hooks.example.com/${'a'.repeat(2100)}` }, 422, { error: 'Invalid url given' }],
    [{ url: 'http://hooks.example.com/', push_events: 'maybe' }, 400, { error: 'push_events is invalid' }],
    [{ url: 'http://hooks.example.com/', branch_filter_strategy: 'glob' }, 400, { error: 'branch_filter_strategy does not have a valid value' }],
    [
      { url: 'http://hooks.example.com/', branch_filter_strategy: 'regex', push_events_branch_filter: '(unclosed' },
      422,
      { error: 'Invalid branch filter given' },
    ],
    [
      { url: 'http://hooks.example.com/', branch_filter_strategy: 'regex', push_events_branch_filter: '(?=lookahead)' },
      422,
      { error: 'Invalid branch filter given' },
    ],
    [{ url: 'http://hooks.example.com/', push_events_branch_filter: 'a..b' }, 422, { error: 'Invalid branch filter given' }],
    [{ url: 'http://hooks.example.com/', push_events_branch_filter: 'has space' }, 422, { error: 'Invalid branch filter given' }],
  ];
  for (const [payload, status, body] of cases) {
    const res = await app.inject({ method: 'POST', url: URL, headers: root, payload });
    assert.equal(res.statusCode, status, JSON.stringify(payload));
    assert.deepEqual(res.json(), body, JSON.stringify(payload));
  }
  assert.deepEqual(await hookRows(c), []);
  for (const bad of ['abc', '1.5', '-1x']) {
    const res = await app.inject({ method: 'GET', url: `${URL}/${bad}`, headers: root });
    assert.equal(res.statusCode, 400, bad);
    assert.deepEqual(res.json(), { error: 'hook_id is invalid' });
  }
  const missing = await app.inject({ method: 'GET', url: `${URL}/999`, headers: root });
  assert.equal(missing.statusCode, 404);
  assert.deepEqual(missing.json(), { message: '404 Not found' });
  for (const method of ['PUT', 'DELETE', 'POST'] as const) {
    const res = await app.inject({ method, url: `${URL}/999`, headers: root, payload: { url: 'http://hooks.example.com/' } });
    assert.equal(res.statusCode, 404, method);
    assert.deepEqual(res.json(), { message: '404 Not found' });
  }
});

test('local addresses: allowed by default for system hooks, refused when the setting is off unless allow-listed', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const local = ['http://127.0.0.1:9/', 'http://localhost/', 'http://[::1]/', 'http://10.0.0.1/', 'http://192.168.0.10/', 'http://169.254.169.254/'];
  for (const url of local) {
    const res = await app.inject({ method: 'POST', url: URL, headers: root, payload: { url } });
    assert.equal(res.statusCode, 201, url);
  }
  const off = await app.inject({
    method: 'PUT',
    url: '/api/v4/application/settings',
    headers: root,
    payload: { allow_local_requests_from_system_hooks: false },
  });
  assert.equal(off.statusCode, 200);
  const before = (await hookRows(c)).length;
  const why: Record<string, string> = {
    'http://127.0.0.1:9/': 'Requests to localhost are not allowed',
    'http://localhost/': 'Requests to localhost are not allowed',
    'http://[::1]/': 'Requests to localhost are not allowed',
    'http://10.0.0.1/': 'Requests to the local network are not allowed',
    'http://192.168.0.10/': 'Requests to the local network are not allowed',
    'http://169.254.169.254/': 'Requests to the link local network are not allowed',
  };
  for (const url of local) {
    const res = await app.inject({ method: 'POST', url: URL, headers: root, payload: { url } });
    assert.equal(res.statusCode, 422, url);
    // the cause and the setting that allows it are named
    assert.deepEqual(res.json(), {
      error: `Invalid url given: Url is blocked: ${why[url]} (an administrator can allow them with the setting allow_local_requests_from_system_hooks)`,
    });
  }
  assert.equal((await hookRows(c)).length, before);
  // a public name that does not resolve (yet) is saved, as GitLab does
  const unresolved = await app.inject({ method: 'POST', url: URL, headers: root, payload: { url: 'http://does-not-resolve.invalid/' } });
  assert.equal(unresolved.statusCode, 201);
  await app.inject({
    method: 'PUT',
    url: '/api/v4/application/settings',
    headers: root,
    payload: { outbound_local_requests_whitelist: ['127.0.0.1', '10.0.0.0/8'] },
  });
  for (const url of ['http://127.0.0.1:9/', 'http://10.0.0.1/']) {
    const res = await app.inject({ method: 'POST', url: URL, headers: root, payload: { url } });
    assert.equal(res.statusCode, 201, url);
  }
  const still = await app.inject({ method: 'POST', url: URL, headers: root, payload: { url: 'http://192.168.0.10/' } });
  assert.equal(still.statusCode, 422);
});

test('update: only what is given; nothing is a 400; a new URL without a token clears the token', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const id = (
    await app.inject({ method: 'POST', url: URL, headers: root, payload: { url: 'http://hooks.example.com/a', token: 'one', push_events: true } })
  ).json().id;
  const nothing = await app.inject({ method: 'PUT', url: `${URL}/${id}`, headers: root, payload: {} });
  assert.equal(nothing.statusCode, 400);
  assert.deepEqual(nothing.json(), { error: 'No parameters provided' });

  const flags = await app.inject({ method: 'PUT', url: `${URL}/${id}`, headers: root, payload: { tag_push_events: true, push_events_branch_filter: 'main' } });
  assert.equal(flags.statusCode, 200);
  assert.deepEqual(
    (({ url, push_events, tag_push_events, push_events_branch_filter }) => ({ url, push_events, tag_push_events, push_events_branch_filter }))(flags.json()),
    { url: 'http://hooks.example.com/a', push_events: true, tag_push_events: true, push_events_branch_filter: 'main' },
  );
  assert.equal(c.hooks.tokenOf((await hookRows(c))[0]), 'one');

  const sameUrl = await app.inject({ method: 'PUT', url: `${URL}/${id}`, headers: root, payload: { url: 'http://hooks.example.com/a' } });
  assert.equal(sameUrl.statusCode, 200);
  assert.equal(c.hooks.tokenOf((await hookRows(c))[0]), 'one');
  await app.inject({ method: 'PUT', url: `${URL}/${id}`, headers: root, payload: { url: 'http://hooks.example.com/b' } });
  assert.equal((await hookRows(c))[0].token_encrypted, null);
  await app.inject({ method: 'PUT', url: `${URL}/${id}`, headers: root, payload: { url: 'http://hooks.example.com/c', token: 'two' } });
  assert.equal(c.hooks.tokenOf((await hookRows(c))[0]), 'two');

  const before = await hookRows(c);
  const bad = await app.inject({ method: 'PUT', url: `${URL}/${id}`, headers: root, payload: { url: 'gopher://x', push_events: false } });
  assert.equal(bad.statusCode, 422);
  assert.deepEqual(bad.json(), { error: 'Invalid url given' });
  const badFilter = await app.inject({
    method: 'PUT',
    url: `${URL}/${id}`,
    headers: root,
    payload: { branch_filter_strategy: 'regex', push_events_branch_filter: '[' },
  });
  assert.equal(badFilter.statusCode, 422);
  assert.deepEqual(badFilter.json(), { error: 'Invalid branch filter given' });
  assert.deepEqual(await hookRows(c), before);
});

test('administrators only: 401 anonymous, 403 for users, on every route', async (t) => {
  const { app, seed, root } = await buildTestApp(t);
  const id = (await app.inject({ method: 'POST', url: URL, headers: root, payload: { url: 'http://hooks.example.com/a' } })).json().id;
  const user = await seed.user();
  const { headers } = await seed.token(user);
  const routes: [string, string][] = [
    ['GET', URL],
    ['POST', URL],
    ['GET', `${URL}/${id}`],
    ['PUT', `${URL}/${id}`],
    ['POST', `${URL}/${id}`],
    ['DELETE', `${URL}/${id}`],
    ['GET', `${URL}/${id}/events`],
    ['POST', `${URL}/${id}/events/1/resend`],
  ];
  for (const [method, url] of routes) {
    const anon = await app.inject({ method: method as 'GET', url, payload: method === 'GET' ? undefined : { url: 'http://x.example/' } });
    assert.equal(anon.statusCode, 401, `${method} ${url}`);
    assert.deepEqual(anon.json(), { message: '401 Unauthorized' });
    const res = await app.inject({ method: method as 'GET', url, headers, payload: method === 'GET' ? undefined : { url: 'http://x.example/' } });
    assert.equal(res.statusCode, 403, `${method} ${url}`);
    assert.deepEqual(res.json(), { message: '403 Forbidden' });
  }
});

test('test delivery: the mock event, sent now with the headers, answered 201 with the mock whatever the receiver says', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const sink = await startSink(t);
  const id = (await app.inject({ method: 'POST', url: URL, headers: root, payload: { url: `${sink.url}/hook?a=1`, token: 'tok\nen' } })).json().id;
  const mock = { event_name: 'project_create', name: 'Ruby', path: 'ruby', project_id: 1, owner_name: 'Someone', owner_email: 'example@gitlabhq.com' };
  sink.respond.push(500);
  for (let i = 0; i < 2; i++) {
    const res = await app.inject({ method: 'POST', url: `${URL}/${id}`, headers: root });
    assert.equal(res.statusCode, 201);
    assert.deepEqual(res.json(), mock);
  }
  assert.equal(sink.received.length, 2); // synchronous, and a failed test is not retried
  const [first, second] = sink.received;
  assert.equal(first.method, 'POST');
  assert.equal(first.url, '/hook?a=1');
  assert.deepEqual(first.json, mock);
  assert.equal(first.headers['content-type'], 'application/json');
  assert.equal(first.headers['user-agent'], `Hearth/${c.config.version}`);
  assert.equal(first.headers['x-service-event'], 'System Hook');
  assert.equal(first.headers['x-service-token'], 'token');
  assert.equal(first.headers['x-service-instance'], c.config.externalUrl);
  for (const h of ['idempotency-key', 'x-service-event-uuid', 'x-service-webhook-uuid']) assert.match(String(first.headers[h]), /^[0-9a-f-]{36}$/, h);
  assert.notEqual(first.headers['idempotency-key'], second.headers['idempotency-key']); // two tests, two events

  const events = await app.inject({ method: 'GET', url: `${URL}/${id}/events`, headers: root });
  assert.equal(events.statusCode, 200);
  const list = events.json();
  assert.deepEqual(
    list.map((e: any) => [e.response_status, e.trigger, e.attempt, e.delivery_state, e.event_name]),
    [
      ['200', 'system_hooks', 1, 'delivered', 'project_create'],
      ['500', 'system_hooks', 1, 'failed', 'project_create'],
    ],
  );
  assert.deepEqual(list[1].request_data, mock);
  assert.equal(list[1].request_headers['x-service-token'], '[REDACTED]');
  assert.equal(list[1].response_body, 'sink says 500');
  assert.equal(list[1].response_headers['x-sink'], 'yes');
  assert.equal(list[1].url, `${sink.url}/hook?a=1`);
  assert.equal(list[1].idempotency_key, first.headers['idempotency-key']);
  assert.ok(list[1].execution_duration >= 0);
  assert.equal(events.headers['x-total'], '2');

  // resend the failed one: the same Idempotency-Key, a new attempt of the same delivery
  const resend = await app.inject({ method: 'POST', url: `${URL}/${id}/events/${list[1].id}/resend`, headers: root });
  assert.equal(resend.statusCode, 201);
  assert.deepEqual(resend.json(), { response_status: '200' });
  assert.equal(sink.received[2].headers['idempotency-key'], first.headers['idempotency-key']);
  const after = (await app.inject({ method: 'GET', url: `${URL}/${id}/events`, headers: root })).json();
  assert.deepEqual([after[0].delivery_id, after[0].attempt, after[0].delivery_state], [list[1].delivery_id, 2, 'delivered']);
  const unknown = await app.inject({ method: 'POST', url: `${URL}/${id}/events/9999/resend`, headers: root });
  assert.equal(unknown.statusCode, 404);
  assert.deepEqual(unknown.json(), { message: '404 Not found' });
});

test('delete: 204, the hook and its delivery history are gone', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const sink = await startSink(t);
  const id = (await app.inject({ method: 'POST', url: URL, headers: root, payload: { url: sink.url } })).json().id;
  await app.inject({ method: 'POST', url: `${URL}/${id}`, headers: root });
  const del = await app.inject({ method: 'DELETE', url: `${URL}/${id}`, headers: root });
  assert.equal(del.statusCode, 204);
  assert.equal(del.body, '');
  assert.deepEqual(await hookRows(c), []);
  assert.deepEqual(await c.db.kysely.selectFrom('hook_deliveries').selectAll().execute(), []);
  assert.deepEqual(await c.db.kysely.selectFrom('hook_attempts').selectAll().execute(), []);
  const again = await app.inject({ method: 'GET', url: `${URL}/${id}`, headers: root });
  assert.equal(again.statusCode, 404);
});

test('header-bearing and stored fields: control characters in the token, the URL or anywhere a NUL are refused; nothing is written', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const ok = 'http://hooks.example.com/';
  const cases: [Record<string, unknown>, number, unknown][] = [
    [{ url: ok, token: 'bad\u0000token' }, 400, { error: 'token is invalid' }],
    [{ url: ok, token: 'esc\u001b[2J' }, 400, { error: 'token is invalid' }],
    [{ url: ok, token: 'bell\u0007' }, 400, { error: 'token is invalid' }],
    [{ url: ok, token: 'del\u007f' }, 400, { error: 'token is invalid' }],
    [{ url: ok, token: 'c1\u0085' }, 400, { error: 'token is invalid' }],
    [{ url: ok, name: 'a\u0000b' }, 400, { error: 'name is invalid' }],
    [{ url: ok, description: '\u0000' }, 400, { error: 'description is invalid' }],
    [{ url: ok, push_events_branch_filter: 'main\u0000' }, 400, { error: 'push_events_branch_filter is invalid' }],
    [{ url: 'http://hooks.example.com/\u0000' }, 400, { error: 'url is invalid' }],
    [{ url: 'http://hooks.example.com/a\u0001b' }, 422, { error: 'Invalid url given' }],
    [{ url: 'http://hooks.example.com/\r\nX-Injected: 1' }, 422, { error: 'Invalid url given' }],
  ];
  for (const [payload, status, body] of cases) {
    const res = await app.inject({ method: 'POST', url: URL, headers: root, payload });
    assert.deepEqual([res.statusCode, res.json()], [status, body], JSON.stringify(payload));
  }
  // as form fields too
  const form = await app.inject({
    method: 'POST',
    url: URL,
    headers: { ...root, 'content-type': 'application/x-www-form-urlencoded' },
    payload: `url=${encodeURIComponent(ok)}&token=a%1Bb`,
  });
  assert.deepEqual([form.statusCode, form.json()], [400, { error: 'token is invalid' }]);
  assert.deepEqual(await hookRows(c), []);
  // the service refuses them whatever the transport
  await assert.rejects(
    c.hooks.create({ url: ok, name: 'x\u0000', token: 'y\u0002' }),
    (e: any) => e.status === 400 && e.detail === 'name is invalid, token is invalid',
  );

  // what GitLab takes: line breaks (removed when sending, as GitLab does), a tab, any printable Unicode
  const sink = await startSink(t);
  const created = await app.inject({ method: 'POST', url: URL, headers: root, payload: { url: sink.url, token: 'line\r\nbreaks\tand é€' } });
  assert.equal(created.statusCode, 201, created.body);
  const id = created.json().id;
  assert.equal((await app.inject({ method: 'POST', url: `${URL}/${id}`, headers: root })).statusCode, 201);
  assert.equal(sink.received.length, 1);
  assert.equal(Buffer.from(String(sink.received[0].headers['x-service-token']), 'latin1').toString('utf8'), 'linebreaks\tand é€');

  // update: the same checks, and the stored token is kept
  for (const [payload, error] of [
    [{ token: 'a\u0000' }, 'token is invalid'],
    [{ token: 'a\u0008' }, 'token is invalid'],
    [{ name: 'n', token: 'a\u0002' }, 'token is invalid'],
  ] as const) {
    const res = await app.inject({ method: 'PUT', url: `${URL}/${id}`, headers: root, payload });
    assert.deepEqual([res.statusCode, res.json()], [400, { error }], JSON.stringify(payload));
  }
  const bad = await app.inject({ method: 'PUT', url: `${URL}/${id}`, headers: root, payload: { url: `${sink.url}/\u0003` } });
  assert.deepEqual([bad.statusCode, bad.json()], [422, { error: 'Invalid url given' }]);
  const [row] = await hookRows(c);
  assert.equal(c.hooks.tokenOf(row), 'line\r\nbreaks\tand é€');
  assert.equal(row.url, sink.url);
});

test('ids beyond the id column name no hook: 404, on either database', async (t) => {
  const { app, root } = await buildTestApp(t);
  for (const [method, url] of [
    ['GET', `${URL}/2147483648`],
    ['PUT', `${URL}/99999999999`],
    ['DELETE', `${URL}/2147483648`],
    ['POST', `${URL}/2147483648`],
    ['GET', `${URL}/2147483648/events`],
    ['POST', `${URL}/1/events/99999999999/resend`],
  ] as const) {
    const res = await app.inject({ method, url, headers: root, payload: method === 'PUT' ? { name: 'x' } : undefined });
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Not found' }], `${method} ${url}`);
  }
});
