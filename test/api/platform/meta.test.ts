import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-app.ts';

test('version and metadata need a signed-in user and answer exact JSON', async (t) => {
  const { app, root } = await buildTestApp(t);
  const anon = await app.inject({ method: 'GET', url: '/api/v4/version' });
  assert.equal(anon.statusCode, 401);
  assert.deepEqual(anon.json(), { message: '401 Unauthorized' });

  const res = await app.inject({ method: 'GET', url: '/api/v4/version', headers: root });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.equal(res.headers['x-frame-options'], 'SAMEORIGIN');
  assert.equal(res.headers['x-content-type-options'], 'nosniff');
  assert.match(String(res.headers['x-request-id']), /^[\w-]+$/);
  assert.deepEqual(res.json(), { version: '17.0.0', revision: 'hearth' });

  const meta = await app.inject({ method: 'GET', url: '/api/v4/metadata', headers: root });
  assert.deepEqual(meta.json(), {
    version: '17.0.0',
    revision: 'hearth',
    kas: { enabled: false, externalUrl: null, externalK8sProxyUrl: null, version: null },
    enterprise: false,
  });
});

test('health probes', async (t) => {
  const { app } = await buildTestApp(t);
  const h = await app.inject({ method: 'GET', url: '/-/health' });
  assert.equal(h.statusCode, 200);
  assert.equal(h.body, 'Hearth OK');
  const l = await app.inject({ method: 'GET', url: '/-/liveness' });
  assert.deepEqual(l.json(), { status: 'ok' });
  const r = await app.inject({ method: 'GET', url: '/-/readiness' });
  assert.equal(r.statusCode, 200);
  assert.deepEqual(r.json(), { status: 'ok', db_check: [{ status: 'ok' }], git_check: [{ status: 'ok' }] });
});

test('readiness is 503 when the database is gone', async (t) => {
  const { app, c } = await buildTestApp(t);
  await c.db.close();
  const r = await app.inject({ method: 'GET', url: '/-/readiness' });
  assert.equal(r.statusCode, 503);
  assert.equal(r.json().status, 'failed');
  assert.equal(r.json().db_check[0].status, 'failed');
});

test('unknown routes, wrong methods and API v3', async (t) => {
  const { app, root } = await buildTestApp(t);
  const nf = await app.inject({ method: 'GET', url: '/api/v4/nope', headers: root });
  assert.equal(nf.statusCode, 404);
  assert.deepEqual(nf.json(), { error: '404 Not Found' });
  assert.equal(nf.headers['content-type'], 'application/json');
  const na = await app.inject({ method: 'DELETE', url: '/api/v4/version', headers: root });
  assert.equal(na.statusCode, 405);
  assert.equal(na.headers.allow, 'GET, HEAD');
  assert.deepEqual(na.json(), { error: '405 Not Allowed' });
  const v3 = await app.inject({ method: 'GET', url: '/api/v3/projects' });
  assert.equal(v3.statusCode, 410);
  assert.deepEqual(v3.json(), { error: 'API V3 is no longer supported. Use API V4 instead.' });
});

test('OpenAPI document lists the routes', async (t) => {
  const { app } = await buildTestApp(t);
  const res = await app.inject({ method: 'GET', url: '/api/v4/openapi.json' });
  assert.equal(res.statusCode, 200);
  const doc = res.json();
  assert.equal(doc.openapi, '3.0.3');
  assert.ok(doc.paths['/api/v4/version']);
  assert.equal(doc.servers[0].url, 'http://hearth.test');
});
