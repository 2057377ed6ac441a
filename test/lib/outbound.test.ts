// The guarded outbound client against real local servers: what arrives, caps, timeouts, TLS, and the
// local-network rules (literal addresses, names, DNS rebinding, the allowlist).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { maskUrl, Outbound, OutboundError, type OutboundRules } from '../../src/lib/outbound.ts';
import { slack } from '../helpers/slack.ts';

const OPEN: OutboundRules = { allowLocal: true, allowlist: [] };
const CLOSED: OutboundRules = { allowLocal: false, allowlist: [] };

async function server(t: { after(fn: () => unknown): void }, handler: http.RequestListener) {
  const hits: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
  const s = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hits.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() });
      handler(req, res);
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  t.after(
    () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  );
  return { port: (s.address() as { port: number }).port, hits };
}

function client(t: { after(fn: () => unknown): void }, resolve?: (host: string) => Promise<string[]>) {
  const o = new Outbound(resolve ? { resolve } : {});
  t.after(() => o.close());
  return o;
}

async function failure(p: Promise<unknown>): Promise<OutboundError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof OutboundError, String(e));
    return e;
  }
  assert.fail('expected an OutboundError');
}

test('a POST arrives as sent; basic auth from the userinfo; the answer comes back', async (t) => {
  const { port, hits } = await server(t, (_req, res) => res.writeHead(202, { 'x-answer': 'yes' }).end('thanks'));
  const o = client(t);
  const res = await o.request({
    url: `http://bob:p%40ss@127.0.0.1:${port}/in?x=1`,
    headers: { 'content-type': 'application/json', 'x-one': '1' },
    body: '{"a":1}',
    rules: OPEN,
  });
  assert.equal(res.status, 202);
  assert.equal(res.body.toString(), 'thanks');
  assert.equal(res.truncated, false);
  assert.equal(res.headers['x-answer'], 'yes');
  assert.ok(res.durationMs >= 0);
  assert.equal(hits.length, 1);
  assert.deepEqual([hits[0].method, hits[0].url, hits[0].body], ['POST', '/in?x=1', '{"a":1}']);
  assert.equal(hits[0].headers.authorization, 'Basic ' + Buffer.from('bob:p@ss').toString('base64'));
  assert.equal(hits[0].headers['x-one'], '1');
});

test('what is read back is capped; a slow receiver times out; a closed port is a connection error', async (t) => {
  const big = await server(t, (_req, res) => res.end(Buffer.alloc(3 * 1024 * 1024, 97)));
  const small = await server(t, (_req, res) => res.end('x'.repeat(100)));
  const never = await server(t, () => {});
  const o = client(t);
  const capped = await o.request({ url: `http://127.0.0.1:${big.port}/`, maxResponseBytes: 1000, rules: OPEN });
  assert.deepEqual([capped.status, capped.body.length, capped.truncated], [200, 1000, true]);
  const whole = await o.request({ url: `http://127.0.0.1:${small.port}/`, maxResponseBytes: 1000, rules: OPEN });
  assert.deepEqual([whole.body.length, whole.truncated], [100, false]);
  const extra = await slack(t);
  const started = Date.now();
  const timeout = await failure(o.request({ url: `http://127.0.0.1:${never.port}/`, timeoutMs: 300, rules: OPEN }));
  assert.deepEqual([timeout.kind, timeout.message], ['timeout', 'Request timed out']);
  assert.ok(Date.now() - started < 300 + extra, `after ${Date.now() - started} ms (allowed ${Math.round(300 + extra)})`);
  const closed = await failure(o.request({ url: 'http://127.0.0.1:1/', rules: OPEN }));
  assert.equal(closed.kind, 'connection');
  const huge = await failure(o.request({ url: `http://127.0.0.1:${small.port}/`, body: Buffer.alloc(26 * 1024 * 1024), rules: OPEN }));
  assert.equal(huge.kind, 'too_large');
});

test('TLS: a self-signed certificate fails with verification and passes without', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-tls-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=localhost',
      '-days',
      '1',
      '-keyout',
      path.join(dir, 'key.pem'),
      '-out',
      path.join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  const s = https.createServer({ key: fs.readFileSync(path.join(dir, 'key.pem')), cert: fs.readFileSync(path.join(dir, 'cert.pem')) }, (_req, res) =>
    res.end('secure'),
  );
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  t.after(
    () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  );
  const url = `https://127.0.0.1:${(s.address() as { port: number }).port}/`;
  const o = client(t);
  const refused = await failure(o.request({ url, rules: OPEN }));
  assert.equal(refused.kind, 'tls');
  const res = await o.request({ url, verifyTls: false, rules: OPEN });
  assert.equal(res.body.toString(), 'secure');
});

test('local addresses are refused unless allowed: literals, odd forms, names, DNS rebinding', async (t) => {
  const { port, hits } = await server(t, (_req, res) => res.end('reached'));
  const names: Record<string, string[]> = { 'private.test': ['10.0.0.5'], 'mixed.test': ['93.184.216.34', '192.168.1.9'], localhost: ['127.0.0.1', '::1'] };
  const o = client(t, async (host) => names[host] ?? []);
  const cases: [string, string][] = [
    [`http://127.0.0.1:${port}/`, 'Requests to localhost are not allowed'],
    [`http://localhost:${port}/`, 'Requests to localhost are not allowed'],
    [`http://[::1]:${port}/`, 'Requests to localhost are not allowed'],
    [`http://[::ffff:127.0.0.1]:${port}/`, 'Requests to localhost are not allowed'],
    [`http://2130706433:${port}/`, 'Requests to localhost are not allowed'],
    [`http://0x7f.1:${port}/`, 'Requests to localhost are not allowed'],
    [`http://0.0.0.0:${port}/`, 'Requests to localhost are not allowed'],
    ['http://10.1.2.3/', 'Requests to the local network are not allowed'],
    ['http://172.16.0.1/', 'Requests to the local network are not allowed'],
    ['http://192.168.1.1/', 'Requests to the local network are not allowed'],
    ['http://[fd00::1]/', 'Requests to the local network are not allowed'],
    ['http://169.254.169.254/latest/meta-data', 'Requests to the link local network are not allowed'],
    ['http://private.test/', 'Requests to the local network are not allowed'],
    ['http://mixed.test/', 'Requests to the local network are not allowed'],
  ];
  for (const [url, message] of cases) {
    assert.equal(await o.check(url, CLOSED), message, url);
    const e = await failure(o.request({ url, rules: CLOSED, timeoutMs: 500 }));
    assert.deepEqual([e.kind, e.message], ['blocked', message], url);
  }
  assert.equal(hits.length, 0);
  // always refused, whatever the rules
  for (const [url, message] of [
    ['ftp://example.com/', 'Only allowed schemes are http, https'],
    ['http://', 'URI is invalid'],
    ['http://nowhere.test/', 'Host cannot be resolved or invalid'],
  ]) {
    assert.equal(await o.check(url, OPEN), message, url);
  }
  assert.equal(await o.check('http://93.184.216.34/', CLOSED), null);

  // DNS rebinding: public when checked, loopback when connected — the connection is refused
  let calls = 0;
  const rebinding = client(t, async () => (calls++ === 0 ? ['93.184.216.34'] : ['127.0.0.1']));
  const e = await failure(rebinding.request({ url: `http://rebind.test:${port}/`, rules: CLOSED, timeoutMs: 2000 }));
  assert.deepEqual([e.kind, e.message], ['blocked', 'Requests to localhost are not allowed']);
  assert.ok(calls >= 2);
  assert.equal(hits.length, 0);
});

test('allowLocal and the allowlist (addresses, ranges, names, ports)', async (t) => {
  const { port, hits } = await server(t, (_req, res) => res.end('reached'));
  const o = client(t, async (host) => (host === 'localhost' ? ['127.0.0.1'] : []));
  const reach = async (url: string, rules: OutboundRules) => (await o.request({ url, rules })).body.toString();
  assert.equal(await reach(`http://127.0.0.1:${port}/`, OPEN), 'reached');
  assert.equal(await reach(`http://127.0.0.1:${port}/`, { allowLocal: false, allowlist: ['127.0.0.1'] }), 'reached');
  assert.equal(await reach(`http://127.0.0.1:${port}/`, { allowLocal: false, allowlist: ['127.0.0.0/8'] }), 'reached');
  assert.equal(await reach(`http://127.0.0.1:${port}/`, { allowLocal: false, allowlist: [`127.0.0.1:${port}`] }), 'reached');
  assert.equal(await reach(`http://localhost:${port}/`, { allowLocal: false, allowlist: ['localhost'] }), 'reached');
  assert.equal(hits.length, 5);
  const other = await failure(o.request({ url: `http://127.0.0.1:${port}/`, rules: { allowLocal: false, allowlist: [`127.0.0.1:${port + 1}`] } }));
  assert.equal(other.kind, 'blocked');
  assert.equal(await o.check('http://10.0.0.1/', { allowLocal: false, allowlist: ['10.0.0.0/8'] }), null);
  assert.equal(await o.check('http://10.0.0.1/', { allowLocal: false, allowlist: ['192.168.0.0/16'] }), 'Requests to the local network are not allowed');
  assert.equal(hits.length, 5);
});

test('IPv4 inside IPv6 (NAT64, 6to4, compatible, translated) is judged by the IPv4 rules; 198.18.0.0/15; zone indexes', async (t) => {
  const names: Record<string, string[]> = { 'zone.test': ['fe80::1%eth0'], 'nat64.test': ['64:ff9b::a00:5'], 'public64.test': ['64:ff9b::5db8:d822'] };
  const o = client(t, async (host) => names[host] ?? []);
  const cases: [string, string | null][] = [
    ['http://[64:ff9b::7f00:1]/', 'Requests to localhost are not allowed'],
    ['http://[64:ff9b::127.0.0.1]/', 'Requests to localhost are not allowed'],
    ['http://[64:ff9b::c0a8:101]/', 'Requests to the local network are not allowed'],
    ['http://[64:ff9b::a9fe:a9fe]/', 'Requests to the link local network are not allowed'],
    ['http://[64:ff9b:1::1]/', 'Requests to the local network are not allowed'],
    ['http://[2002:7f00:1::]/', 'Requests to localhost are not allowed'],
    ['http://[2002:c0a8:101::1]/', 'Requests to the local network are not allowed'],
    ['http://[2002:a9fe:a9fe:1::5]/', 'Requests to the link local network are not allowed'],
    ['http://[::7f00:1]/', 'Requests to localhost are not allowed'],
    ['http://[::10.0.0.1]/', 'Requests to the local network are not allowed'],
    ['http://[::ffff:0:a00:1]/', 'Requests to the local network are not allowed'],
    ['http://[::ffff:a9fe:a9fe]/', 'Requests to the link local network are not allowed'],
    ['http://198.18.0.1/', 'Requests to the local network are not allowed'],
    ['http://198.19.255.254/', 'Requests to the local network are not allowed'],
    ['http://[fec0::1]/', 'Requests to the local network are not allowed'],
    ['http://zone.test/', 'Requests to the link local network are not allowed'],
    ['http://nat64.test/', 'Requests to the local network are not allowed'],
    // the same forms around a public address are public
    ['http://[64:ff9b::5db8:d822]/', null],
    ['http://[2002:5db8:d822::1]/', null],
    ['http://[::ffff:5db8:d822]/', null],
    ['http://public64.test/', null],
    ['http://198.20.0.1/', null],
    ['http://198.17.255.255/', null],
    ['http://[2001:db8::1]/', null],
  ];
  for (const [url, message] of cases) {
    assert.equal(await o.check(url, CLOSED), message, url);
    if (message) {
      const e = await failure(o.request({ url, rules: CLOSED, timeoutMs: 500 }));
      assert.deepEqual([e.kind, e.message], ['blocked', message], url);
    }
  }
  // allowLocal lets them through, as the plain forms
  assert.equal(await o.check('http://[64:ff9b::7f00:1]/', OPEN), null);
  assert.equal(await o.check('http://[2002:c0a8:101::1]/', OPEN), null);
});

test('multicast and the limited broadcast address are refused whatever the rules', async (t) => {
  const o = client(t, async (host) => (host === 'group.test' ? ['ff05::1:3'] : []));
  const cases: [string, string][] = [
    ['http://224.0.0.1/', 'Requests to multicast addresses are not allowed'],
    ['http://239.255.255.250:1900/', 'Requests to multicast addresses are not allowed'],
    ['http://[ff02::1]/', 'Requests to multicast addresses are not allowed'],
    ['http://[::ffff:224.0.0.251]/', 'Requests to multicast addresses are not allowed'],
    ['http://[64:ff9b::e000:1]/', 'Requests to multicast addresses are not allowed'],
    ['http://group.test/', 'Requests to multicast addresses are not allowed'],
    ['http://255.255.255.255/', 'Requests to the limited broadcast address are not allowed'],
    ['http://[2002:ffff:ffff::]/', 'Requests to the limited broadcast address are not allowed'],
  ];
  for (const [url, message] of cases) {
    for (const rules of [CLOSED, OPEN, { allowLocal: false, allowlist: ['224.0.0.0/4', 'ff00::/8', '255.255.255.255', 'group.test'] }]) {
      assert.equal(await o.check(url, rules), message, `${url} ${JSON.stringify(rules)}`);
    }
    const e = await failure(o.request({ url, rules: OPEN, timeoutMs: 500 }));
    assert.deepEqual([e.kind, e.message], ['blocked', message], url);
  }
});

test("the allowlist's port holds when connecting: a name rebound to an allowed address on another port is refused", async (t) => {
  const { port, hits } = await server(t, (_req, res) => res.end('reached'));
  // public when checked, then the loopback address the allowlist allows — but on another port
  let calls = 0;
  const o = client(t, async () => (calls++ === 0 ? ['93.184.216.34'] : ['127.0.0.1']));
  const rules = { allowLocal: false, allowlist: [`127.0.0.1:${port + 1}`] };
  const e = await failure(o.request({ url: `http://rebind.test:${port}/`, rules, timeoutMs: 2000 }));
  assert.deepEqual([e.kind, e.message], ['blocked', 'Requests to localhost are not allowed']);
  assert.ok(calls >= 2);
  assert.equal(hits.length, 0);
  // on the allowed port the same rebinding connects: the port, not the address, refused it
  calls = 0;
  const ok = client(t, async () => (calls++ === 0 ? ['93.184.216.34'] : ['127.0.0.1']));
  const res = await ok.request({ url: `http://rebind.test:${port}/`, rules: { allowLocal: false, allowlist: [`127.0.0.1:${port}`] }, timeoutMs: 2000 });
  assert.equal(res.body.toString(), 'reached');
});

test('pin: the URL as parsed, its port and the checked addresses a self-connecting client must be held to', async (t) => {
  const o = client(t, async (host) => (host === 'two.test' ? ['93.184.216.34', '2606:2800:220:1::1'] : []));
  assert.deepEqual(await o.pin('HTTP://Two.TEST/a/../repo.git', CLOSED), {
    url: 'http://two.test/repo.git',
    host: 'two.test',
    port: 80,
    addresses: ['93.184.216.34', '2606:2800:220:1::1'],
    literal: false,
  });
  assert.deepEqual(await o.pin('https://[2606:2800:220:1::1]:8443/r', CLOSED), {
    url: 'https://[2606:2800:220:1::1]:8443/r',
    host: '2606:2800:220:1::1',
    port: 8443,
    addresses: ['2606:2800:220:1::1'],
    literal: true,
  });
  const blocked = await failure(o.pin('http://10.0.0.1/r', CLOSED));
  assert.deepEqual([blocked.kind, blocked.message], ['blocked', 'Requests to the local network are not allowed']);
  const invalid = await failure(o.pin('ftp://two.test/r', OPEN));
  assert.deepEqual([invalid.kind, invalid.message], ['invalid_url', 'Only allowed schemes are http, https']);
});

test('maskUrl hides a userinfo password only', () => {
  assert.equal(maskUrl('https://bob:secret@example.com/p?q=1'), 'https://bob:*****@example.com/p?q=1');
  assert.equal(maskUrl('http://bob@example.com/'), 'http://bob@example.com/');
  assert.equal(maskUrl('http://example.com/a:b@c'), 'http://example.com/a:b@c');
  assert.equal(maskUrl('not a url'), 'not a url');
});
