// The guarded client's total deadline: whatever stalls — a listener that accepts and never speaks
// (plain or TLS, verification on or off), a DNS lookup that never answers, a body that drips — the
// request ends at `timeoutMs` with OutboundError 'timeout'; requests to an origin that hangs never
// queue a request to the same origin behind them; header values with control characters are refused
// before anything is sent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type net from 'node:net';
import { Outbound, OutboundError, type OutboundRules } from '../../src/lib/outbound.ts';
import { blackHole } from '../helpers/black-hole.ts';
import { slack } from '../helpers/slack.ts';

const OPEN: OutboundRules = { allowLocal: true, allowlist: [] };
type After = { after(fn: () => unknown): void };

function client(t: After, resolve?: (host: string) => Promise<string[]>) {
  const o = new Outbound(resolve ? { resolve } : {});
  t.after(() => o.close());
  return o;
}

/** The failure of a request, and how long it took to come (ms). */
async function timedFailure(start: () => Promise<unknown>): Promise<[OutboundError, number]> {
  // the clock starts before the request does (a promise made first would have started earlier)
  const started = performance.now();
  try {
    await start();
  } catch (e) {
    assert.ok(e instanceof OutboundError, String(e));
    return [e, performance.now() - started];
  }
  assert.fail('expected an OutboundError');
}

test('a listener that accepts and never answers: plain, TLS with and without verification, all at the deadline', async (t) => {
  const hole = await blackHole(t);
  const extra = await slack(t);
  const o = client(t);
  const runs = await Promise.all([
    timedFailure(() => o.request({ url: `http://127.0.0.1:${hole.port}/`, body: '{}', timeoutMs: 300, rules: OPEN })),
    timedFailure(() => o.request({ url: `https://127.0.0.1:${hole.port}/`, body: '{}', timeoutMs: 300, rules: OPEN })),
    timedFailure(() => o.request({ url: `https://127.0.0.1:${hole.port}/`, body: '{}', timeoutMs: 300, verifyTls: false, rules: OPEN })),
  ]);
  for (const [e, ms] of runs) {
    assert.deepEqual([e.kind, e.message], ['timeout', 'Request timed out']);
    assert.ok(ms >= 290 && ms < 300 + extra, `ended after ${Math.round(ms)} ms (allowed ${Math.round(300 + extra)})`);
  }
  assert.ok(hole.connections() >= 3, `${hole.connections()} connections`);
});

test('a DNS lookup that never answers ends at the deadline', async (t) => {
  const extra = await slack(t);
  const o = client(t, () => new Promise<string[]>(() => {}));
  const [e, ms] = await timedFailure(() => o.request({ url: 'http://never.test/', timeoutMs: 300, rules: OPEN }));
  assert.equal(e.kind, 'timeout');
  assert.ok(ms < 300 + extra, `ended after ${Math.round(ms)} ms (allowed ${Math.round(300 + extra)})`);
});

test('a body that drips a byte at a time ends at the deadline, however steady the drip', async (t) => {
  const s = http.createServer((_req, res) => {
    res.writeHead(200);
    const drip = setInterval(() => res.write('x'), 50);
    res.on('close', () => clearInterval(drip));
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  t.after(
    () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  );
  const extra = await slack(t);
  const o = client(t);
  const [e, ms] = await timedFailure(() => o.request({ url: `http://127.0.0.1:${(s.address() as net.AddressInfo).port}/`, timeoutMs: 400, rules: OPEN }));
  assert.equal(e.kind, 'timeout');
  assert.ok(ms < 400 + extra, `ended after ${Math.round(ms)} ms (allowed ${Math.round(400 + extra)})`);
});

test('requests hanging on an origin never hold up another request to that origin', async (t) => {
  let hanging = 0;
  const s = http.createServer((req, res) => {
    if (req.url === '/hang') return void hanging++;
    res.end('quick');
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  t.after(
    () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  );
  const base = `http://127.0.0.1:${(s.address() as net.AddressInfo).port}`;
  const extra = await slack(t);
  const o = client(t);
  // the hanging ones end at their deadline, well after a quick request's allowance: one queued behind them shows
  const hangMs = 3 * extra;
  const stuck = Array.from({ length: 80 }, () => o.request({ url: `${base}/hang`, timeoutMs: hangMs, rules: OPEN }).catch((e) => e));
  while (hanging < 80) await new Promise((r) => setTimeout(r, 10));
  const started = performance.now();
  const res = await o.request({ url: `${base}/quick`, timeoutMs: hangMs, rules: OPEN });
  assert.equal(res.body.toString(), 'quick');
  const quickMs = performance.now() - started;
  assert.ok(quickMs < extra, `the quick request took ${Math.round(quickMs)} ms (allowed ${Math.round(extra)})`);
  for (const e of await Promise.all(stuck)) assert.equal((e as OutboundError).kind, 'timeout');
});

test('header names and values with control characters are refused before anything is sent', async (t) => {
  let hits = 0;
  const s = http.createServer((_req, res) => void (hits++, res.end('ok')));
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  t.after(
    () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  );
  const url = `http://127.0.0.1:${(s.address() as net.AddressInfo).port}/`;
  const extra = await slack(t);
  const o = client(t);
  const cases: Record<string, string>[] = [
    { 'x-token': 'a\0b' },
    { 'x-token': 'a\r\nx-injected: 1' },
    { 'x-token': 'a\x1bb' },
    { 'x-token': 'a\x7f' },
    { 'x-token': '€' },
    { 'x to\0ken': 'a' },
  ];
  for (const headers of cases) {
    const [e, ms] = await timedFailure(() => o.request({ url, headers, verifyTls: false, timeoutMs: 3 * extra, rules: OPEN }));
    assert.deepEqual([e.kind, e.message], ['invalid_request', `invalid ${Object.keys(headers)[0]} header`]);
    assert.ok(ms < extra, `refused after ${Math.round(ms)} ms (allowed ${Math.round(extra)})`);
  }
  assert.equal(hits, 0);
  const fine = await o.request({ url, headers: { 'x-token': 'tab\there, latin-1 \xe9' }, rules: OPEN });
  assert.equal(fine.status, 200);
  assert.equal(hits, 1);
});
