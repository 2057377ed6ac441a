// The guarded client's streaming transfers against real local servers: sendFile (export uploads) sends
// a file as the body with its length, fetchToFile (remote imports) writes an answer into a file. The same
// rules as request() — local addresses refused before connecting and again in the pool's lookup (DNS
// rebinding), headers validated, one deadline over the whole transfer — plus the caps: what is read back
// after an upload, and what is written by a fetch (a declared length over the cap refused before reading,
// a body growing past it cut off at once, and never a file left behind by a failure).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Outbound, OutboundError, type OutboundRules } from '../../src/lib/outbound.ts';
import { blackHole } from '../helpers/black-hole.ts';
import { slack } from '../helpers/slack.ts';

const OPEN: OutboundRules = { allowLocal: true, allowlist: [] };
const CLOSED: OutboundRules = { allowLocal: false, allowlist: [] };
type After = { after(fn: () => unknown): void };

interface Hit {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  size: number;
  sha256: string;
}

/** A server that hashes what it receives (never keeping it) before handing the request to `handler`. */
async function server(t: After, handler: (req: http.IncomingMessage, res: http.ServerResponse) => void, opts: { hashBody?: boolean } = {}) {
  const hits: Hit[] = [];
  const s = http.createServer((req, res) => {
    if (opts.hashBody === false) {
      hits.push({ method: req.method!, url: req.url!, headers: req.headers, size: 0, sha256: '' });
      handler(req, res);
      return;
    }
    const hash = crypto.createHash('sha256');
    let size = 0;
    req.on('data', (c: Buffer) => {
      hash.update(c);
      size += c.length;
    });
    req.on('end', () => {
      hits.push({ method: req.method!, url: req.url!, headers: req.headers, size, sha256: hash.digest('hex') });
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

function client(t: After, resolve?: (host: string) => Promise<string[]>) {
  const o = new Outbound(resolve ? { resolve } : {});
  t.after(() => o.close());
  return o;
}

function tmpDir(t: After): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-outbound-stream-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
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

/** A file of `size` pseudo-random bytes (written in 1 MiB chunks) and its sha256. */
async function randomFile(file: string, size: number): Promise<string> {
  const hash = crypto.createHash('sha256');
  const out = fs.createWriteStream(file);
  const chunk = crypto.randomBytes(1024 * 1024);
  for (let left = size; left > 0; left -= chunk.length) {
    const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
    hash.update(part);
    if (!out.write(part)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r, j) => {
    out.on('error', j);
    out.end(() => r());
  });
  return hash.digest('hex');
}

const sha256File = async (file: string) => {
  const hash = crypto.createHash('sha256');
  for await (const c of fs.createReadStream(file)) hash.update(c as Buffer);
  return hash.digest('hex');
};

// ---------------------------------------------------------------------------------------------- sendFile

test('sendFile: the file arrives whole as a PUT (the default) or a POST, with its length; basic auth from the userinfo', async (t) => {
  const dir = tmpDir(t);
  const file = path.join(dir, 'export.tar.gz');
  const digest = await randomFile(file, 5 * 1024 * 1024 + 17);
  const { port, hits } = await server(t, (_req, res) => res.writeHead(201, { 'x-stored': 'yes' }).end('stored'));
  const o = client(t);
  const put = await o.sendFile({ url: `http://up:s%40cret@127.0.0.1:${port}/bucket/key?sig=1`, file, headers: { 'x-amz-acl': 'private' }, rules: OPEN });
  assert.deepEqual([put.status, put.body.toString(), put.truncated, put.headers['x-stored']], [201, 'stored', false, 'yes']);
  assert.ok(put.durationMs >= 0);
  const post = await o.sendFile({ url: `http://127.0.0.1:${port}/in`, file, method: 'post', rules: OPEN });
  assert.equal(post.status, 201);
  assert.equal(hits.length, 2);
  assert.deepEqual(
    hits.map((h) => [h.method, h.url, h.size, h.sha256, h.headers['content-length'], h.headers['transfer-encoding']]),
    [
      ['PUT', '/bucket/key?sig=1', 5 * 1024 * 1024 + 17, digest, String(5 * 1024 * 1024 + 17), undefined],
      ['POST', '/in', 5 * 1024 * 1024 + 17, digest, String(5 * 1024 * 1024 + 17), undefined],
    ],
  );
  assert.equal(hits[0].headers.authorization, 'Basic ' + Buffer.from('up:s@cret').toString('base64'));
  assert.equal(hits[0].headers['x-amz-acl'], 'private');
  assert.equal(hits[1].headers.authorization, undefined);
});

test('sendFile: an empty file is a zero length body; a caller’s Content-Length is replaced by the real one', async (t) => {
  const dir = tmpDir(t);
  const file = path.join(dir, 'empty');
  fs.writeFileSync(file, '');
  const { port, hits } = await server(t, (_req, res) => res.end());
  const o = client(t);
  const res = await o.sendFile({ url: `http://127.0.0.1:${port}/`, file, headers: { 'Content-Length': '999' }, rules: OPEN });
  assert.deepEqual([res.status, res.body.length, res.truncated], [200, 0, false]);
  assert.deepEqual([hits[0].size, hits[0].headers['content-length']], [0, '0']);
});

test('sendFile: the answer read back is capped (64 KiB by default)', async (t) => {
  const dir = tmpDir(t);
  const file = path.join(dir, 'f');
  fs.writeFileSync(file, 'x');
  const { port } = await server(t, (_req, res) => res.end(Buffer.alloc(200 * 1024, 98)));
  const o = client(t);
  const capped = await o.sendFile({ url: `http://127.0.0.1:${port}/`, file, rules: OPEN });
  assert.deepEqual([capped.status, capped.body.length, capped.truncated], [200, 64 * 1024, true]);
  assert.ok(capped.body.every((b) => b === 98));
  const smaller = await o.sendFile({ url: `http://127.0.0.1:${port}/`, file, maxResponseBytes: 10, rules: OPEN });
  assert.deepEqual([smaller.body.toString(), smaller.truncated], ['bbbbbbbbbb', true]);
  const whole = await o.sendFile({ url: `http://127.0.0.1:${port}/`, file, maxResponseBytes: 300 * 1024, rules: OPEN });
  assert.deepEqual([whole.body.length, whole.truncated], [200 * 1024, false]);
});

test('sendFile: bad methods, headers and URLs are refused before anything is sent', async (t) => {
  const dir = tmpDir(t);
  const file = path.join(dir, 'f');
  fs.writeFileSync(file, 'data');
  const { port, hits } = await server(t, (_req, res) => res.end());
  const o = client(t);
  const url = `http://127.0.0.1:${port}/`;
  for (const [req, kind, message] of [
    [{ method: 'GET' }, 'invalid_request', 'invalid method GET'],
    [{ method: 'DELETE' }, 'invalid_request', 'invalid method DELETE'],
    [{ headers: { 'x-bad': 'a\r\nb: c' } }, 'invalid_request', 'invalid x-bad header'],
    [{ headers: { 'bad name': 'v' } }, 'invalid_request', 'invalid bad name header'],
    [{ url: 'ftp://example.com/f' }, 'invalid_url', 'Only allowed schemes are http, https'],
    [{ url: 'not a url' }, 'invalid_url', 'URI is invalid'],
  ] as const) {
    const e = await failure(o.sendFile({ url, file, rules: OPEN, ...req }));
    assert.deepEqual([e.kind, e.message], [kind, message], JSON.stringify(req));
  }
  assert.equal(hits.length, 0);
});

test('sendFile: local addresses are blocked before connecting, and again in the pool’s lookup (DNS rebinding)', async (t) => {
  const dir = tmpDir(t);
  const file = path.join(dir, 'f');
  fs.writeFileSync(file, 'data');
  const { port, hits } = await server(t, (_req, res) => res.end());
  const o = client(t, async (host) => (host === 'localhost' ? ['127.0.0.1'] : host === 'private.test' ? ['10.1.2.3'] : []));
  for (const [url, message] of [
    [`http://127.0.0.1:${port}/`, 'Requests to localhost are not allowed'],
    [`http://localhost:${port}/`, 'Requests to localhost are not allowed'],
    [`http://[::ffff:127.0.0.1]:${port}/`, 'Requests to localhost are not allowed'],
    ['http://private.test/', 'Requests to the local network are not allowed'],
    ['http://169.254.169.254/latest', 'Requests to the link local network are not allowed'],
    ['http://nowhere.test/', 'Host cannot be resolved or invalid'],
  ]) {
    const e = await failure(o.sendFile({ url, file, rules: CLOSED, timeoutMs: 1000 }));
    assert.deepEqual([e.kind, e.message], ['blocked', message], url);
  }
  let calls = 0;
  const rebinding = client(t, async () => (calls++ === 0 ? ['93.184.216.34'] : ['127.0.0.1']));
  const e = await failure(rebinding.sendFile({ url: `http://rebind.test:${port}/`, file, rules: CLOSED, timeoutMs: 2000 }));
  assert.deepEqual([e.kind, e.message], ['blocked', 'Requests to localhost are not allowed']);
  assert.ok(calls >= 2);
  assert.equal(hits.length, 0);
  // the allowlist lets it through
  const allowed = await o.sendFile({ url: `http://127.0.0.1:${port}/`, file, rules: { allowLocal: false, allowlist: ['127.0.0.1'] } });
  assert.equal(allowed.status, 200);
  assert.equal(hits.length, 1);
});

test('sendFile: the deadline covers the whole upload — a receiver that stops reading, one that never answers', async (t) => {
  const dir = tmpDir(t);
  const file = path.join(dir, 'big');
  await randomFile(file, 64 * 1024 * 1024);
  // reads nothing: the upload fills the socket buffers and stalls
  const stalled = await server(t, (req) => req.pause(), { hashBody: false });
  const hole = await blackHole(t);
  const extra = await slack(t);
  const o = client(t);
  for (const url of [`http://127.0.0.1:${stalled.port}/`, `http://127.0.0.1:${hole.port}/`]) {
    const started = performance.now();
    const e = await failure(o.sendFile({ url, file, timeoutMs: 400, rules: OPEN }));
    const ms = performance.now() - started;
    assert.deepEqual([e.kind, e.message], ['timeout', 'Request timed out'], url);
    assert.ok(ms >= 390 && ms < 400 + extra, `${url} ended after ${Math.round(ms)} ms (allowed ${Math.round(400 + extra)})`);
  }
  assert.equal(stalled.hits.length, 1);
});

test('sendFile: a missing file is the caller’s error, nothing is sent', async (t) => {
  const dir = tmpDir(t);
  const { port, hits } = await server(t, (_req, res) => res.end());
  const o = client(t);
  await assert.rejects(o.sendFile({ url: `http://127.0.0.1:${port}/`, file: path.join(dir, 'missing'), rules: OPEN }), { code: 'ENOENT' });
  assert.equal(hits.length, 0);
});

// ------------------------------------------------------------------------------------------- fetchToFile

/** Serves `size` bytes of a repeating pseudo-random 1 MiB chunk, streamed; answers its sha256. */
function servedStream(size: number, chunk: Buffer) {
  const hash = crypto.createHash('sha256');
  for (let left = size; left > 0; left -= chunk.length) hash.update(left >= chunk.length ? chunk : chunk.subarray(0, left));
  const digest = hash.digest('hex');
  const write = async (res: http.ServerResponse) => {
    for (let left = size; left > 0; left -= chunk.length) {
      if (res.destroyed) return;
      if (!res.write(left >= chunk.length ? chunk : chunk.subarray(0, left))) await new Promise((r) => res.once('drain', r));
    }
    res.end();
  };
  return { digest, write };
}

test('fetchToFile: 200 MB streamed into the file, the same bytes (sha256), memory flat; accept sees the answer first', async (t) => {
  const dir = tmpDir(t);
  const size = 200 * 1024 * 1024;
  const chunk = crypto.randomBytes(1024 * 1024);
  const served = servedStream(size, chunk);
  const { port, hits } = await server(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': String(size), 'X-Extra': 'v' });
    void served.write(res);
  });
  const o = client(t);
  const file = path.join(dir, 'import.tar.gz');
  const seen: [number, Record<string, string>, boolean][] = [];
  global.gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  let res: Awaited<ReturnType<Outbound['fetchToFile']>>;
  try {
    res = await o.fetchToFile({
      url: `http://importer:pw@127.0.0.1:${port}/archive.tar.gz?x=1`,
      file,
      maxBytes: size,
      headers: { 'x-token': 't' },
      timeoutMs: 60_000,
      rules: OPEN,
      accept: (status, headers) => seen.push([status, headers, fs.existsSync(file)]),
    });
  } finally {
    clearInterval(sampler);
  }
  assert.equal(res.status, 200);
  assert.equal(res.size, size);
  assert.equal(res.headers['content-type'], 'application/gzip');
  assert.equal(res.headers['x-extra'], 'v');
  assert.equal(seen.length, 1);
  assert.deepEqual([seen[0][0], seen[0][1]['content-length'], seen[0][1]['content-type'], seen[0][2]], [200, String(size), 'application/gzip', false]);
  assert.equal(fs.statSync(file).size, size);
  assert.equal(await sha256File(file), served.digest);
  assert.deepEqual([hits[0].method, hits[0].url, hits[0].headers['x-token']], ['GET', '/archive.tar.gz?x=1', 't']);
  assert.equal(hits[0].headers.authorization, 'Basic ' + Buffer.from('importer:pw').toString('base64'));
  // buffering the body would take 200 MB more; streaming stays within a few socket and file buffers
  const growth = (peak - before) / 1024 / 1024;
  assert.ok(growth < 64, `rss grew by ${growth.toFixed(1)} MB during a 200 MB transfer`);
});

test('fetchToFile: a chunked body (no length) is written whole too; an empty body makes an empty file', async (t) => {
  const dir = tmpDir(t);
  const chunk = crypto.randomBytes(64 * 1024);
  const served = servedStream(3 * 1024 * 1024 + 5, chunk);
  const { port } = await server(t, (req, res) => {
    if (req.url === '/empty') return res.end();
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    void served.write(res);
  });
  const o = client(t);
  const file = path.join(dir, 'a');
  const res = await o.fetchToFile({ url: `http://127.0.0.1:${port}/chunked`, file, maxBytes: 3 * 1024 * 1024 + 5, rules: OPEN });
  assert.deepEqual([res.status, res.size, res.headers['transfer-encoding']], [200, 3 * 1024 * 1024 + 5, 'chunked']);
  assert.equal(await sha256File(file), served.digest);
  const empty = path.join(dir, 'b');
  const none = await o.fetchToFile({ url: `http://127.0.0.1:${port}/empty`, file: empty, maxBytes: 10, rules: OPEN });
  assert.deepEqual([none.status, none.size, fs.readFileSync(empty).length], [200, 0, 0]);
});

test('fetchToFile: a declared length over the cap is refused before reading; a body growing past it is cut off at once; no file left', async (t) => {
  const dir = tmpDir(t);
  let endless = 0;
  const closed: string[] = [];
  const { port } = await server(t, (req, res) => {
    res.on('close', () => closed.push(req.url!));
    if (req.url === '/declared') {
      res.writeHead(200, { 'content-length': String(1024 * 1024 * 1024) });
      res.write(Buffer.alloc(1024));
      return; // never sends the rest: the client must not wait for it
    }
    // no length, never ends: the cap must stop it
    res.writeHead(200, { 'content-type': 'application/gzip' });
    const chunk = Buffer.alloc(64 * 1024, 1);
    const pump = () => {
      while (!res.destroyed && res.write(chunk)) endless += chunk.length;
      if (!res.destroyed) res.once('drain', pump);
    };
    pump();
  });
  const extra = await slack(t);
  const o = client(t);
  const file = path.join(dir, 'import.tar.gz');
  let accepted = 0;
  const started = performance.now();
  const declared = await failure(
    o.fetchToFile({ url: `http://127.0.0.1:${port}/declared`, file, maxBytes: 1024 * 1024, timeoutMs: 3 * extra, rules: OPEN, accept: () => accepted++ }),
  );
  assert.deepEqual([declared.kind, declared.message], ['too_large', 'File is too large']);
  // refused on the declared size, at once (not after reading up to the limit or the deadline)
  assert.ok(performance.now() - started < extra, `after ${Math.round(performance.now() - started)} ms (allowed ${Math.round(extra)})`);
  assert.equal(accepted, 1); // accept saw the answer first (a refused status is told before the size)
  assert.equal(fs.existsSync(file), false);
  const grown = await failure(o.fetchToFile({ url: `http://127.0.0.1:${port}/endless`, file, maxBytes: 2 * 1024 * 1024, timeoutMs: 10_000, rules: OPEN }));
  assert.deepEqual([grown.kind, grown.message], ['too_large', 'File is too large']);
  assert.equal(fs.existsSync(file), false);
  assert.deepEqual(fs.readdirSync(dir), []);
  // the connection was dropped: the server saw its answers closed and stopped well short of "endless"
  for (const deadline = Date.now() + 30_000; closed.length < 2 && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(closed.sort(), ['/declared', '/endless']);
  assert.ok(endless < 64 * 1024 * 1024, `the server wrote ${endless} bytes`);
});

test('fetchToFile: accept may refuse — its own error comes back as is, nothing is written', async (t) => {
  const dir = tmpDir(t);
  const { port } = await server(t, (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>'));
  const o = client(t);
  const file = path.join(dir, 'f');
  class Refused extends Error {}
  const refusal = new Refused('Content type is not allowed');
  await assert.rejects(
    o.fetchToFile({
      url: `http://127.0.0.1:${port}/`,
      file,
      maxBytes: 100,
      rules: OPEN,
      accept: (_status, headers) => {
        if (headers['content-type'] !== 'application/gzip') throw refusal;
      },
    }),
    (e) => e === refusal,
  );
  assert.equal(fs.existsSync(file), false);
});

test('fetchToFile: redirects are not followed — the 3xx goes to accept and back to the caller; an error status too', async (t) => {
  const dir = tmpDir(t);
  const { port, hits } = await server(t, (req, res) => {
    if (req.url === '/moved') return res.writeHead(302, { location: '/elsewhere' }).end('moved');
    res.writeHead(404).end('nope');
  });
  const o = client(t);
  const file = path.join(dir, 'f');
  const seen: [number, string | undefined][] = [];
  const res = await o.fetchToFile({ url: `http://127.0.0.1:${port}/moved`, file, maxBytes: 100, rules: OPEN, accept: (s, h) => seen.push([s, h.location]) });
  assert.deepEqual([res.status, res.headers.location, res.size], [302, '/elsewhere', 5]);
  assert.deepEqual(seen, [[302, '/elsewhere']]);
  assert.deepEqual(
    hits.map((h) => h.url),
    ['/moved'],
  );
  const missing = await o.fetchToFile({ url: `http://127.0.0.1:${port}/gone`, file, maxBytes: 100, rules: OPEN });
  assert.deepEqual([missing.status, fs.readFileSync(file, 'utf8')], [404, 'nope']);
});

test('fetchToFile: the whole-transfer deadline, and the silence limit; no file left after either', async (t) => {
  const dir = tmpDir(t);
  const timers = new Set<NodeJS.Timeout>();
  t.after(() => {
    for (const x of timers) clearInterval(x);
  });
  const { port } = await server(t, (req, res) => {
    res.writeHead(200);
    if (req.url === '/drip') {
      // a steady drip: never silent for long, never done
      const x = setInterval(() => (res.destroyed ? clearInterval(x) : res.write('x')), 30);
      timers.add(x);
    } else {
      res.write('first bytes'); // then silence
    }
  });
  const hole = await blackHole(t);
  const o = client(t);
  const file = path.join(dir, 'f');
  // each transfer ends by the limit named last, never before it (timers never fire early); the bound above
  // tells the limits apart without a wall-clock budget a busy machine could stretch: a transfer ended by
  // the silence limit ends before half of its 10 s deadline, one ended by its deadline alone well before
  // the test's own timeout
  const cases: [string, { timeoutMs: number; idleTimeoutMs?: number }, number][] = [
    [`http://127.0.0.1:${port}/drip`, { timeoutMs: 400, idleTimeoutMs: 200 }, 400],
    [`http://127.0.0.1:${port}/silent`, { timeoutMs: 10_000, idleTimeoutMs: 300 }, 300],
    [`http://127.0.0.1:${port}/silent`, { timeoutMs: 400 }, 400],
    [`http://127.0.0.1:${hole.port}/`, { timeoutMs: 400 }, 400],
    [`http://127.0.0.1:${hole.port}/`, { timeoutMs: 10_000, idleTimeoutMs: 300 }, 300],
  ];
  for (const [url, limits, expected] of cases) {
    const started = performance.now();
    const e = await failure(o.fetchToFile({ url, file, maxBytes: 1024 * 1024, rules: OPEN, ...limits }));
    const ms = performance.now() - started;
    assert.deepEqual([e.kind, e.message], ['timeout', 'Request timed out'], url);
    const before = expected === limits.idleTimeoutMs ? limits.timeoutMs / 2 : 10_000;
    assert.ok(ms >= expected - 10 && ms < before, `${url} ${JSON.stringify(limits)} ended after ${Math.round(ms)} ms (expected ${expected}, before ${before})`);
    assert.equal(fs.existsSync(file), false, url);
  }
});

test('fetchToFile: local addresses blocked before connecting and in the pool’s lookup; bad headers and URLs refused; no file', async (t) => {
  const dir = tmpDir(t);
  const { port, hits } = await server(t, (_req, res) => res.end('data'));
  const o = client(t, async (host) => (host === 'localhost' ? ['127.0.0.1'] : host === 'private.test' ? ['192.168.0.7'] : []));
  const file = path.join(dir, 'f');
  for (const [url, rules, headers, kind, message] of [
    [`http://127.0.0.1:${port}/`, CLOSED, {}, 'blocked', 'Requests to localhost are not allowed'],
    [`http://localhost:${port}/`, CLOSED, {}, 'blocked', 'Requests to localhost are not allowed'],
    ['http://private.test/a.tar.gz', CLOSED, {}, 'blocked', 'Requests to the local network are not allowed'],
    ['http://224.0.0.1/', OPEN, {}, 'blocked', 'Requests to multicast addresses are not allowed'],
    ['file:///etc/passwd', OPEN, {}, 'invalid_url', 'Only allowed schemes are http, https'],
    [`http://127.0.0.1:${port}/`, OPEN, { 'x-a': 'line\nbreak' }, 'invalid_request', 'invalid x-a header'],
  ] as const) {
    const e = await failure(o.fetchToFile({ url, file, maxBytes: 100, rules, headers, timeoutMs: 1000 }));
    assert.deepEqual([e.kind, e.message], [kind, message], url);
    assert.equal(fs.existsSync(file), false);
  }
  let calls = 0;
  const rebinding = client(t, async () => (calls++ === 0 ? ['93.184.216.34'] : ['127.0.0.1']));
  const e = await failure(rebinding.fetchToFile({ url: `http://rebind.test:${port}/`, file, maxBytes: 100, rules: CLOSED, timeoutMs: 2000 }));
  assert.deepEqual([e.kind, e.message], ['blocked', 'Requests to localhost are not allowed']);
  assert.ok(calls >= 2);
  assert.equal(hits.length, 0);
  assert.equal(fs.existsSync(file), false);
  const ok = await o.fetchToFile({ url: `http://localhost:${port}/`, file, maxBytes: 100, rules: { allowLocal: false, allowlist: ['localhost'] } });
  assert.deepEqual([ok.status, ok.size, fs.readFileSync(file, 'utf8')], [200, 4, 'data']);
});

test('fetchToFile: a connection dropped mid-body is a connection failure and leaves no file', async (t) => {
  const dir = tmpDir(t);
  const { port } = await server(t, (_req, res) => {
    res.writeHead(200, { 'content-length': '100000' });
    res.write(Buffer.alloc(5000));
    setTimeout(() => res.destroy(), 50);
  });
  const o = client(t);
  const file = path.join(dir, 'f');
  const e = await failure(o.fetchToFile({ url: `http://127.0.0.1:${port}/`, file, maxBytes: 1_000_000, timeoutMs: 5000, rules: OPEN }));
  assert.equal(e.kind, 'connection');
  assert.equal(fs.existsSync(file), false);
});
