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
  const sink = new Writable({ write(chunk, _enc, cb) { lines.push(JSON.parse(String(chunk))); cb(); } });
  const config = loadConfig({ DATA_DIR: dir, HEARTH_ROOT_PASSWORD: 'pw-123456', HEARTH_ROOT_TOKEN: 'glpat-500-test' }, { databaseUrl: null });
  const c = await createContainer(config, { log: pino({ level: 'info' }, sink) });
  const app = await buildApp(c);
  t.after(async () => { await app.close(); fs.rmSync(dir, { recursive: true, force: true }); });
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
