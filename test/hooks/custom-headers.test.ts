// Webhook custom headers may not take over the request: reserved names (Host, Cookie, Content-Length,
// X-Gitlab-*/X-Service-*, …) are refused when saved and never sent; the delivery's own headers win.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SecretBox } from '../../src/lib/secrets.ts';
import { buildTestApp, type TestApp } from '../helpers/build-app.ts';
import { workTree } from '../helpers/git.ts';
import { startSink } from '../helpers/sink.ts';

/** The instance's secret box, as the container builds it (to write a row as an older version did). */
async function box(c: TestApp['c']): Promise<SecretBox> {
  const row = await c.db.kysely.selectFrom('instance_secrets').select('value').where('name', '=', 'secret_box_key').executeTakeFirstOrThrow();
  return new SecretBox(row.value);
}

async function setup(t: Parameters<typeof buildTestApp>[0]) {
  const ctx = await buildTestApp(t);
  await ctx.c.settings.update({ allow_local_requests_from_web_hooks_and_services: true });
  const { project, dir } = await ctx.seed.repoProject();
  const w = workTree(t, dir);
  w.write('r.md', 'x').commit('One');
  w.push('main');
  const base = `/api/v4/projects/${project.id}/hooks`;
  return { ...ctx, project, base };
}

test('reserved custom header names are refused on create, update and PUT …/custom_headers/:key; nothing is stored', async (t) => {
  const { app, c, root, base } = await setup(t);
  const rows = async () => (await c.db.kysely.selectFrom('web_hooks').selectAll().execute()).map((r) => c.webHooks.customHeadersOf(r));
  for (const key of [
    'Host',
    'host',
    'Cookie',
    'Content-Length',
    'Transfer-Encoding',
    'Connection',
    'Content-Type',
    'X-Gitlab-Token',
    'X-Service-Event',
    'Proxy-Authorization',
  ]) {
    const res = await app.inject({
      method: 'POST',
      url: base,
      headers: root,
      payload: { url: 'http://example.com/hook', custom_headers: [{ key, value: 'v' }] },
    });
    assert.deepEqual(
      [res.statusCode, res.json()],
      [422, { error: `Custom headers validation failed: ${key} is set by every delivery and cannot be a custom header` }],
      key,
    );
  }
  // Authorization is the receiver's business, unless the URL's user and password make it
  let res = await app.inject({
    method: 'POST',
    url: base,
    headers: root,
    payload: { url: 'http://u:p@example.com/hook', custom_headers: [{ key: 'Authorization', value: 'Bearer t' }] },
  });
  assert.deepEqual(
    [res.statusCode, res.json()],
    [422, { error: 'Custom headers validation failed: Authorization is set from the user and password of the URL and cannot be a custom header' }],
  );
  assert.deepEqual(await rows(), []);

  const hook = (
    await app.inject({
      method: 'POST',
      url: base,
      headers: root,
      payload: { url: 'http://example.com/hook', custom_headers: [{ key: 'Authorization', value: 'Bearer t' }] },
    })
  ).json();
  assert.deepEqual(hook.custom_headers, [{ key: 'Authorization' }]);
  res = await app.inject({ method: 'PUT', url: `${base}/${hook.id}`, headers: root, payload: { custom_headers: [{ key: 'Cookie', value: 'session=x' }] } });
  assert.deepEqual(
    [res.statusCode, res.json()],
    [422, { error: 'Custom headers validation failed: Cookie is set by every delivery and cannot be a custom header' }],
  );
  res = await app.inject({ method: 'PUT', url: `${base}/${hook.id}/custom_headers/Host`, headers: root, payload: { value: 'internal.example' } });
  assert.deepEqual([res.statusCode, res.json()], [422, { error: 'Illegal key or value: Host is set by every delivery and cannot be a custom header' }]);
  assert.deepEqual(await rows(), [{ Authorization: 'Bearer t' }], 'unchanged');
});

test("delivery: custom headers never override the delivery's own, reserved ones stored before are not sent, values go as UTF-8", async (t) => {
  const { app, c, root, base, project } = await setup(t);
  const sink = await startSink(t);
  const hook = (
    await app.inject({
      method: 'POST',
      url: base,
      headers: root,
      payload: {
        url: `${sink.url}/hook`,
        token: 'secret',
        custom_headers: [
          { key: 'Authorization', value: 'Bearer abc' },
          { key: 'X-Api-Key', value: 'clé €' },
        ],
      },
    })
  ).json();
  // a row written before the rule: Host, Cookie and the event header among its custom headers
  const row = await c.db.kysely.selectFrom('web_hooks').selectAll().where('id', '=', hook.id).executeTakeFirstOrThrow();
  const legacy = { ...c.webHooks.customHeadersOf(row), Host: 'evil.example', Cookie: 'a=b', 'X-Service-Event': 'Forged', 'Content-Length': '1' };
  await c.db.kysely
    .updateTable('web_hooks')
    .set({ custom_headers_encrypted: (await box(c)).seal(JSON.stringify(legacy)) })
    .where('id', '=', hook.id)
    .execute();

  const res = await app.inject({ method: 'POST', url: `${base}/${hook.id}/test/push_events`, headers: root });
  assert.equal(res.statusCode, 201, res.body);
  const [got] = await sink.waitFor(1);
  assert.equal(got.headers.host, `127.0.0.1:${sink.port}`);
  assert.equal(got.headers.cookie, undefined);
  assert.equal(got.headers['x-service-event'], 'Push Hook');
  assert.equal(got.headers['x-service-token'], 'secret');
  assert.equal(got.headers['content-type'], 'application/json');
  assert.equal(got.headers['content-length'], String(Buffer.byteLength(got.body)));
  assert.equal(got.headers.authorization, 'Bearer abc');
  assert.equal(Buffer.from(String(got.headers['x-api-key']), 'latin1').toString('utf8'), 'clé €');
  assert.ok(got.json && got.json.project_id === project.id);
  // the logged request headers: the custom ones redacted, the reserved ones absent
  const attempt = await c.db.kysely.selectFrom('hook_attempts').selectAll().orderBy('id', 'desc').executeTakeFirstOrThrow();
  const logged = JSON.parse(attempt.request_headers) as Record<string, string>;
  assert.deepEqual(
    [logged.authorization, logged['x-api-key'], logged.host, logged.cookie, logged['x-service-event']],
    ['[REDACTED]', '[REDACTED]', undefined, undefined, 'Push Hook'],
  );
});
