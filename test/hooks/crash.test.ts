// Crash safety: an event committed with its cause is delivered even when the process is killed
// (SIGKILL) right after the commit, before any delivery; after a restart the sink receives it
// exactly once, under one Idempotency-Key. Real processes (`node bin/hearth.js serve`), a real port.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startSink } from '../helpers/sink.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const TOKEN = 'glpat-crash-test-root-token-0001';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** `hearth serve` (with or without its worker), or `hearth worker` alone (ready when `ready` says so). */
async function startServer(dataDir: string, port: number, worker: boolean, command = 'serve', ready?: () => boolean): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['bin/hearth.js', command], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: '',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      HEARTH_ROOT_PASSWORD: 'crash-test-password-1',
      HEARTH_ROOT_TOKEN: TOKEN,
      HEARTH_IN_PROCESS_WORKER: String(worker),
      HEARTH_WORKER_POLL_MS: '20',
      HEARTH_SSH_PORT: '0',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (b) => (stderr += b));
  const deadline = Date.now() + 90_000; // bounds a hang only: a loaded machine starts slowly
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited: ${stderr}`);
    if (ready) {
      if (ready()) return child;
      if (Date.now() > deadline) throw new Error(`worker did nothing: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    try {
      const res = await fetch(`http://127.0.0.1:${port}/-/readiness`);
      if (res.ok) return child;
    } catch {}
    if (Date.now() > deadline) throw new Error(`server did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const api = (port: number, method: string, url: string, body?: unknown) =>
  fetch(`http://127.0.0.1:${port}/api/v4${url}`, {
    method,
    headers: { 'private-token': TOKEN, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

test('kill -9 after the commit, before delivery: delivered once by `hearth worker` after a restart, never twice', { timeout: 300_000 }, async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-crash-'));
  t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const sink = await startSink(t);
  const port = await freePort();

  // first life: no worker, so nothing can be delivered before the kill
  const first = await startServer(dataDir, port, false);
  t.after(() => first.kill('SIGKILL'));
  assert.equal((await api(port, 'POST', '/hooks', { url: `${sink.url}/crash` })).status, 201);
  const created = await api(port, 'POST', '/groups', { name: 'Crash', path: 'crash' });
  assert.equal(created.status, 201);
  const group = (await created.json()) as { id: number };
  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));
  assert.equal(sink.received.length, 0);

  // second life: `hearth worker` alone finds the committed events
  const second = await startServer(dataDir, port, true, 'worker', () => sink.received.length >= 3);
  t.after(() => second.kill('SIGKILL'));
  // root's user_create (written at the first start), the group_create and the creator's
  // user_add_to_group, each once
  await sink.waitFor(3);
  const got = sink.received.find((r) => r.json.event_name === 'group_create')!;
  assert.equal(got.url, '/crash');
  assert.equal(got.json.group_id, group.id);
  await new Promise((r) => setTimeout(r, 1000));
  assert.deepEqual(sink.received.map((r) => r.json.event_name).sort(), ['group_create', 'user_add_to_group', 'user_create']);

  // third life, the server with its worker, after another kill: nothing is sent twice
  second.kill('SIGKILL');
  await new Promise((r) => second.once('exit', r));
  const third = await startServer(dataDir, port, true);
  t.after(() => third.kill('SIGKILL'));
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal(sink.received.length, 3);
  assert.equal(new Set(sink.received.map((r) => r.headers['idempotency-key'])).size, 3);
});
