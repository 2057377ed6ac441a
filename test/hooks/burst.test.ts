// A burst of failing deliveries never stops the others. Bad hooks — tokens with a NUL
// byte or that no longer open (rows written directly: the API refuses such tokens), TLS without
// verification and plain HTTP to a listener that accepts and never speaks, a receiver answering NUL
// bytes — take a burst of events beside one good hook. The test endpoint and resend answer within the
// hook timeout; every event reaches the good hook on its first try, while the bad deliveries time out and
// are retried on their schedule. The test waits on events (deliveries received, rows written), never on a
// time budget; the hook timeout is the product's default, so that a delivery to the good hook (a local
// listener) never meets it, however busy the machine: on a loaded one it took up to 8 s, and a 2 s
// deadline turned it into a retry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type net from 'node:net';
import { buildTestApp, type TestApp } from '../helpers/build-app.ts';
import { startSink } from '../helpers/sink.ts';
import { blackHole } from '../helpers/black-hole.ts';
import { MOCK_SYSTEM_EVENT } from '../../src/domain/hooks/deliveries.ts';
import { recordSystemEvent } from '../../src/domain/core/system-events.ts';
import type { SecretBox } from '../../src/lib/secrets.ts';

// the product's default (HEARTH_HOOK_TIMEOUT_MS): what a delivery may take before it counts as hanging
const TIMEOUT_MS = 10_000;
const RETRY_S = [4, 4];
/** the test's own timeout bounds every wait: a wait never fails on a time budget of its own */
const UNBOUNDED_MS = 600_000;

async function createHook(app: TestApp['app'], root: Record<string, string>, payload: Record<string, unknown>): Promise<number> {
  const res = await app.inject({ method: 'POST', url: '/api/v4/hooks', headers: root, payload });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().id;
}

/** A receiver that answers 200 with NUL bytes in its body (PostgreSQL refuses NUL in text). */
async function nulAnswering(t: { after(fn: () => unknown): void }): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const s = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => void (hits++, res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.from('ok\0\0done'))));
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  t.after(
    () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  );
  return { url: `http://127.0.0.1:${(s.address() as net.AddressInfo).port}/nul`, hits: () => hits };
}

test('a burst of hanging and broken deliveries: the test endpoint answers in time, later events reach the good hook on schedule', {
  timeout: 300_000,
}, async (t) => {
  const { app, c, root } = await buildTestApp(t, { hookTimeoutMs: TIMEOUT_MS, hookRetrySchedule: RETRY_S });
  await c.worker.drain(); // the bootstrap's own events, before any hook exists
  const hole = await blackHole(t);
  const trap = await startSink(t); // what the hooks with broken tokens point to: nothing may arrive
  const nul = await nulAnswering(t);
  const good = await startSink(t);

  const tls: number[] = [];
  const plain: number[] = [];
  for (let i = 0; i < 3; i++) {
    tls.push(await createHook(app, root, { url: `https://127.0.0.1:${hole.port}/tls${i}`, enable_ssl_verification: false, token: 'secret' }));
    plain.push(await createHook(app, root, { url: `http://127.0.0.1:${hole.port}/plain${i}` }));
  }
  const box = (c.hooks as unknown as { box: SecretBox }).box;
  const broken: number[] = [];
  for (const sealed of [box.seal('bad\0token'), box.seal('esc\x1b[2J'), 'v1:not-a-sealed-token']) {
    const id = await createHook(app, root, { url: `${trap.url}/broken`, token: 'replaced-below' });
    await c.db.kysely.updateTable('system_hooks').set({ token_encrypted: sealed }).where('id', '=', id).execute();
    broken.push(id);
  }
  const nulId = await createHook(app, root, { url: nul.url });
  const goodId = await createHook(app, root, { url: `${good.url}/good`, token: 'good-secret' });

  c.worker.start();
  t.after(() => c.worker.stop());
  // the burst: 30 events, each to every hook (6 of 11 hang until the deadline, then are retried)
  await c.db.kysely.transaction().execute(async (trx) => {
    for (let i = 0; i < 30; i++) await recordSystemEvent(trx, { event_name: 'group_create', group_id: i, name: `burst-${i}` });
  });
  await good.waitFor(30, UNBOUNDED_MS);

  // the test endpoint and resend, against a listener that never speaks, while the burst goes on
  let started = performance.now();
  const tested = await app.inject({ method: 'POST', url: `/api/v4/hooks/${tls[0]}`, headers: root });
  const testMs = performance.now() - started;
  assert.equal(tested.statusCode, 201);
  assert.deepEqual(tested.json(), MOCK_SYSTEM_EVENT);
  // ended by the deadline (not at once, and not after a second try: that would take twice the timeout)
  assert.ok(testMs >= TIMEOUT_MS && testMs < 2 * TIMEOUT_MS, `the test endpoint took ${Math.round(testMs)} ms`);
  const [attempt] = (await app.inject({ method: 'GET', url: `/api/v4/hooks/${tls[0]}/events?per_page=100`, headers: root }))
    .json()
    .filter((e: any) => e.event_name === 'project_create');
  assert.deepEqual([attempt.response_status, attempt.delivery_state], ['internal error', 'failed']);
  started = performance.now();
  const resent = await app.inject({ method: 'POST', url: `/api/v4/hooks/${tls[0]}/events/${attempt.id}/resend`, headers: root });
  const resendMs = performance.now() - started;
  assert.deepEqual([resent.statusCode, resent.json()], [201, { response_status: 'internal error' }]);
  assert.ok(resendMs >= TIMEOUT_MS && resendMs < 2 * TIMEOUT_MS, `resend took ${Math.round(resendMs)} ms`);
  const brokenTest = await app.inject({ method: 'POST', url: `/api/v4/hooks/${broken[0]}`, headers: root });
  assert.deepEqual([brokenTest.statusCode, brokenTest.json()], [201, MOCK_SYSTEM_EVENT]);

  // later events, one at a time: each reaches the good hook on its first try (its row says so below)
  const latencies: number[] = [];
  for (let i = 0; i < 5; i++) {
    const before = good.received.length;
    const at = performance.now();
    await c.db.kysely.transaction().execute((trx) => recordSystemEvent(trx, { event_name: 'group_create', group_id: 100 + i, name: `later-${i}` }));
    const got = await good.waitFor(before + 1, UNBOUNDED_MS);
    latencies.push(Math.round(performance.now() - at));
    assert.equal(got.at(-1)!.json.name, `later-${i}`);
  }
  t.diagnostic(
    `test endpoint ${Math.round(testMs)} ms, resend ${Math.round(resendMs)} ms against a black hole (timeout ${TIMEOUT_MS} ms); good hook latency during the burst: ${latencies.join(', ')} ms`,
  );
  await c.worker.stop();

  // the good hook: every event once, on the first try, with its token
  const goodFailures = await c.db.kysely
    .selectFrom('hook_attempts')
    .innerJoin('hook_deliveries', 'hook_deliveries.id', 'hook_attempts.delivery_id')
    .select(['hook_attempts.error', 'hook_attempts.duration_ms'])
    .where('hook_deliveries.hook_id', '=', goodId)
    .where('hook_attempts.error', 'is not', null)
    .execute();
  assert.equal(good.received.length, 35, `failed attempts to the good hook: ${JSON.stringify(goodFailures)}`);
  assert.deepEqual(new Set(good.received.map((r) => r.headers['x-service-token'])), new Set(['good-secret']));
  const goodRows = await c.db.kysely.selectFrom('hook_deliveries').select(['state', 'attempts']).where('hook_id', '=', goodId).execute();
  assert.ok(goodRows.length === 35 && goodRows.every((r) => r.state === 'delivered' && r.attempts === 1), JSON.stringify(goodRows));
  // broken tokens: never sent, never retried, the reason kept
  assert.equal(trap.received.length, 0);
  const brokenRows = await c.db.kysely
    .selectFrom('hook_deliveries')
    .select(['hook_id', 'state', 'attempts', 'last_status'])
    .where('hook_id', 'in', broken)
    .execute();
  assert.ok(
    brokenRows.length >= 90 && brokenRows.every((r) => r.state === 'failed' && r.attempts === 1 && r.last_status === 'internal error'),
    JSON.stringify(brokenRows.slice(0, 3)),
  );
  const errors = await c.db.kysely
    .selectFrom('hook_attempts')
    .innerJoin('hook_deliveries', 'hook_deliveries.id', 'hook_attempts.delivery_id')
    .select(['hook_deliveries.hook_id', 'hook_attempts.error'])
    .where('hook_deliveries.hook_id', 'in', broken)
    .execute();
  assert.deepEqual(new Set(errors.filter((e) => e.hook_id !== broken[2]).map((e) => e.error)), new Set(['invalid x-service-token header']));
  // NUL bytes in an answer are stored (as U+FFFD) on either database
  const nulRows = await c.db.kysely.selectFrom('hook_deliveries').select('state').where('hook_id', '=', nulId).execute();
  assert.ok(nulRows.length === 35 && nulRows.every((r) => r.state === 'delivered'), JSON.stringify(nulRows));
  assert.equal(nul.hits(), 35);
  const nulBody = await c.db.kysely
    .selectFrom('hook_attempts')
    .innerJoin('hook_deliveries', 'hook_deliveries.id', 'hook_attempts.delivery_id')
    .select('response_body')
    .where('hook_id', '=', nulId)
    .executeTakeFirstOrThrow();
  assert.equal(nulBody.response_body, 'ok\ufffd\ufffddone');
  // the hanging ones timed out at the deadline and were retried, never more than the schedule allows (a black
  // hole never answers: without the deadline an attempt would last to the end of the test; below twice the
  // deadline is what a loaded machine adds to a timer)
  const hanging = await c.db.kysely
    .selectFrom('hook_attempts')
    .innerJoin('hook_deliveries', 'hook_deliveries.id', 'hook_attempts.delivery_id')
    .select(['hook_attempts.error', 'hook_attempts.duration_ms', 'hook_deliveries.attempts'])
    .where('hook_deliveries.hook_id', 'in', [...tls, ...plain])
    .execute();
  assert.ok(hanging.length >= 6, `${hanging.length} attempts to the hanging hooks`);
  assert.ok(
    hanging.every((a) => a.error === 'Request timed out' && a.duration_ms < 2 * TIMEOUT_MS && a.attempts <= RETRY_S.length + 1),
    JSON.stringify(hanging.find((a) => a.error !== 'Request timed out' || a.duration_ms >= 2 * TIMEOUT_MS)),
  );
});
