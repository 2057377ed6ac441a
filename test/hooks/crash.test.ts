// Crash safety: an event committed with its cause is delivered even when the process is killed
// (SIGKILL) right after the commit, before any delivery; after a restart the sink receives it
// exactly once, under one Idempotency-Key. Real processes (`node bin/hearth.js serve`), a real port.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freePort, startHearth, tempDataDir, TOKEN } from '../helpers/process.ts';
import { startSink } from '../helpers/sink.ts';

const api = (port: number, method: string, url: string, body?: unknown) =>
  fetch(`http://127.0.0.1:${port}/api/v4${url}`, {
    method,
    headers: { 'private-token': TOKEN, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

test('kill -9 after the commit, before delivery: delivered once by `hearth worker` after a restart, never twice', { timeout: 300_000 }, async (t) => {
  const dataDir = tempDataDir(t, 'hearth-crash-');
  const sink = await startSink(t);
  const port = await freePort();
  /** `hearth serve` (with or without its worker) or `hearth worker` alone, on this DATA_DIR and port */
  const start = (worker: boolean, command = 'serve', ready?: Promise<unknown>) =>
    startHearth(t, { dataDir, port, command, ready, env: { HEARTH_IN_PROCESS_WORKER: String(worker), HEARTH_WORKER_POLL_MS: '20' } });

  // first life: no worker, so nothing can be delivered before the kill
  const first = await start(false);
  assert.equal((await api(port, 'POST', '/hooks', { url: `${sink.url}/crash` })).status, 201);
  const created = await api(port, 'POST', '/groups', { name: 'Crash', path: 'crash' });
  assert.equal(created.status, 201);
  const group = (await created.json()) as { id: number };
  first.child.kill('SIGKILL');
  await first.exited;
  assert.equal(sink.received.length, 0);

  // second life: `hearth worker` alone finds the committed events
  // (it logs nothing when it has started: ready when the sink has the three deliveries)
  const second = await start(true, 'worker', sink.waitFor(3, 180_000));
  // root's user_create (written at the first start), the group_create and the creator's
  // user_add_to_group, each once
  await sink.waitFor(3);
  const got = sink.received.find((r) => r.json.event_name === 'group_create')!;
  assert.equal(got.url, '/crash');
  assert.equal(got.json.group_id, group.id);
  await new Promise((r) => setTimeout(r, 1000));
  assert.deepEqual(sink.received.map((r) => r.json.event_name).sort(), ['group_create', 'user_add_to_group', 'user_create']);

  // third life, the server with its worker, after another kill: nothing is sent twice
  second.child.kill('SIGKILL');
  await second.exited;
  await start(true);
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal(sink.received.length, 3);
  assert.equal(new Set(sink.received.map((r) => r.headers['idempotency-key'])).size, 3);
});
