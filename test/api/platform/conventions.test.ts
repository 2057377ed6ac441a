// Wire conventions that hold for every endpoint.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../../src/config.ts';
import { createContainer } from '../../../src/container.ts';
import { buildApp } from '../../../src/app.ts';
import { buildTestApp } from '../../helpers/build-app.ts';

test('an unexpected error is a 500 with a fixed body; the real error is logged under the request id', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-500-'));
  const lines: any[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)));
      cb();
    },
  });
  const config = loadConfig({ DATA_DIR: dir, HEARTH_ROOT_PASSWORD: 'pw-123456', HEARTH_ROOT_TOKEN: 'glpat-500-test' }, { databaseUrl: null });
  const c = await createContainer(config, { log: pino({ level: 'info' }, sink) });
  const app = await buildApp(c);
  t.after(async () => {
    await app.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  await c.db.close(); // the database goes away under the running app
  const res = await app.inject({ method: 'GET', url: '/api/v4/version', headers: { 'private-token': 'glpat-500-test', 'x-request-id': 'req-abc-123' } });
  assert.equal(res.statusCode, 500);
  assert.deepEqual(res.json(), { message: '500 Internal Server Error' });
  assert.equal(res.headers['x-request-id'], 'req-abc-123');
  assert.equal(res.headers['content-type'], 'application/json');
  const logged = lines.find((l) => l.msg === 'unhandled error');
  assert.ok(logged, 'the error was logged');
  assert.equal(logged.reqId, 'req-abc-123');
  assert.ok(logged.err.message.length > 0);
  assert.ok(!JSON.stringify(lines).includes('glpat-500-test'), 'no secret in the log');
});

test('a request id is generated when none (or an unsafe one) is given', async (t) => {
  const { app } = await buildTestApp(t);
  const a = await app.inject({ method: 'GET', url: '/-/liveness' });
  const b = await app.inject({ method: 'GET', url: '/-/liveness', headers: { 'x-request-id': 'bad id\twith spaces' } });
  assert.match(String(a.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  assert.match(String(b.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  assert.notEqual(a.headers['x-request-id'], b.headers['x-request-id']);
});

test('parameters arrive as JSON, form, multipart, query string, or an empty JSON body', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const u = await seed.user();
  const expires = new Date(Date.now() + 30 * 86400_000).toISOString().slice(0, 10);
  const boundary = '----hearth';
  const multipart = `--${boundary}\r\nContent-Disposition: form-data; name="expires_at"\r\n\r\n${expires}\r\n--${boundary}--\r\n`;
  const variants = [
    { headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ expires_at: expires }) },
    { headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `expires_at=${expires}` },
    { headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, payload: multipart },
    { url: `?expires_at=${expires}`, headers: {}, payload: undefined },
  ];
  for (const v of variants) {
    const tok = await seed.token(u, { scopes: ['api'] });
    const res = await app.inject({
      method: 'POST',
      url: '/api/v4/personal_access_tokens/self/rotate' + (v.url ?? ''),
      headers: { ...tok.headers, ...v.headers },
      payload: v.payload,
    });
    assert.equal(res.statusCode, 200, `${JSON.stringify(v.headers)} → ${res.body}`);
    assert.equal(res.json().expires_at, expires);
  }
  const tok = await seed.token(u, { scopes: ['api'] });
  const empty = await app.inject({
    method: 'POST',
    url: '/api/v4/personal_access_tokens/self/rotate',
    headers: { ...tok.headers, 'content-type': 'application/json' },
    payload: '',
  });
  assert.equal(empty.statusCode, 200);
  const tok2 = await seed.token(u, { scopes: ['api'] });
  const broken = await app.inject({
    method: 'POST',
    url: '/api/v4/personal_access_tokens/self/rotate',
    headers: { ...tok2.headers, 'content-type': 'application/json' },
    payload: '{"expires_at":',
  });
  assert.equal(broken.statusCode, 400);
  assert.equal(broken.headers['content-type'], 'application/json');
  assert.ok(typeof broken.json().error === 'string');
});
