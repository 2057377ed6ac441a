// GET /-/metrics: the series after known requests, the guard (loopback, the allowlist, the socket's address rather
// than X-Forwarded-For), request ids on every log line of a request (the request logger's and the container's), the
// slow-request log. One app for the file, built with the product's logger writing to a captured stream.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config.ts';
import { createContainer, createLogger, type Container } from '../../src/container.ts';
import { buildApp } from '../../src/app.ts';
import { git } from '../../src/git/command.ts';
import { CatFilePool } from '../../src/git/cat-file.ts';
import { timedScan } from '../../src/metrics/registry.ts';
import { ROOT_TOKEN } from '../helpers/build-app.ts';
import { acquirePgSchema, releasePgSchema } from '../helpers/test-db.ts';
import { startSink } from '../helpers/sink.ts';

const root = { 'private-token': ROOT_TOKEN };
const lines: Record<string, unknown>[] = [];
const raw: string[] = [];
let app: FastifyInstance;
let c: Container;
let cleanup: () => Promise<void> = async () => {};
// each request's time as the app measured it (reply.elapsedTime), read after the metrics plugin's own reading
const elapsed = new Map<string, number>();
let probeInsertedAt = 0;

before(async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-metrics-'));
  const testUrl = process.env.DATABASE_URL_TEST || null;
  const config = loadConfig(
    {
      DATA_DIR: dataDir,
      EXTERNAL_URL: 'http://hearth.test',
      LOG_LEVEL: 'info',
      HEARTH_ROOT_PASSWORD: 'root-password-1',
      HEARTH_ROOT_TOKEN: ROOT_TOKEN,
      HEARTH_METRICS_ALLOW: '203.0.113.0/24, 2001:db8::7',
      HEARTH_SLOW_REQUEST_MS: '150',
      HEARTH_JOB_REQUEST_TIMEOUT_MS: '300',
    },
    { databaseUrl: testUrl },
  );
  const pgSchema = testUrl ? await acquirePgSchema(testUrl, config) : undefined;
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
        raw.push(line);
        lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  c = await createContainer(config, { db: { pgSchema }, log: createLogger('info', stream) });
  app = await buildApp(c, (a) => {
    // a service that logs through the container's logger after a query, with a body (read before the handler)
    a.post('/test/service-log', async (req) => {
      await c.db.kysely.selectFrom('users').select('id').limit(1).execute();
      c.log.info({ body: req.body }, 'service line');
      req.log.info('request line');
      return { ok: true };
    });
    a.get('/test/fails', async () => {
      throw new Error('broken on purpose');
    });
    a.get('/api/v4/test-fails', { config: { api: 'platform' } }, async () => {
      throw new Error('broken on purpose');
    });
    a.addHook('onResponse', (req, reply, done) => {
      elapsed.set(req.id, reply.elapsedTime);
      done();
    });
    a.get('/test/slow/:n', async (req) => {
      await new Promise((r) => setTimeout(r, Number((req.params as { n: string }).n)));
      return { ok: true };
    });
  });
  // a job waiting in the outbox for 90 s, there before the first scrape (the outbox figures are reused for 2 s)
  probeInsertedAt = Date.now();
  const old = new Date(probeInsertedAt - 90_000).toISOString();
  await c.db.kysely
    .insertInto('jobs')
    .values({ kind: 'metrics_probe', payload: '{}', state: 'queued', attempts: 0, run_at: old, created_at: old, updated_at: old })
    .execute();
  cleanup = async () => {
    await app.close();
    await c.close();
    if (pgSchema) await releasePgSchema(testUrl!, config, pgSchema);
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
});
after(() => cleanup());

/** The samples of an exposition, `name{labels}` → value. */
function samples(text: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    m.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return m;
}

async function scrape(): Promise<Map<string, number>> {
  const res = await app.inject({ method: 'GET', url: '/-/metrics' });
  assert.equal(res.statusCode, 200);
  return samples(res.body);
}

const delta = (a: Map<string, number>, b: Map<string, number>, key: string) => (b.get(key) ?? 0) - (a.get(key) ?? 0);

describe('GET /-/metrics', () => {
  test('Prometheus text format with process metrics and the series of every subsystem', async () => {
    const res = await app.inject({ method: 'GET', url: '/-/metrics' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    const text = res.body;
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
      'http_requests_total',
      'http_request_duration_seconds',
      'hearth_db_query_duration_seconds',
      'hearth_db_pool_connections',
      'hearth_db_pool_waiting_clients',
      'hearth_response_cache_requests_total',
      'hearth_outbox_jobs',
      'hearth_outbox_oldest_job_age_seconds',
      'hearth_hook_deliveries_pending',
      'hearth_hook_deliveries_oldest_pending_age_seconds',
      'hearth_hook_deliveries_total',
      'hearth_git_processes',
      'hearth_git_commands_total',
      'hearth_git_cat_file_processes',
      'hearth_translation_scan_duration_seconds',
      'hearth_translation_scan_files_parsed_total',
    ]) {
      assert.match(text, new RegExp(`^# TYPE ${name} (counter|gauge|histogram)$`, 'm'), name);
    }
    const s = samples(text);
    assert.equal(s.get('hearth_db_pool_waiting_clients'), 0);
    assert.ok((s.get('hearth_db_pool_connections{state="total"}') ?? 0) >= 1);
  });

  test('requests by method, route pattern (never the URL) and status class; the response cache', async () => {
    const before = await scrape();
    for (let i = 0; i < 2; i++) assert.equal((await app.inject({ method: 'GET', url: '/api/v4/users?per_page=3', headers: root })).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: '/api/v4/users/987654', headers: root })).statusCode, 404);
    assert.equal((await app.inject({ method: 'GET', url: '/no/such/thing?secret=1' })).statusCode, 404);
    const after = await scrape();
    const users = 'method="GET",route="/api/v4/users",status="2xx"';
    assert.equal(delta(before, after, `http_requests_total{${users}}`), 2);
    assert.equal(delta(before, after, `http_request_duration_seconds_count{${users}}`), 2);
    assert.equal(delta(before, after, `http_request_duration_seconds_bucket{le="+Inf",${users}}`), 2);
    // the pattern as registered (its regular expression escaped as the text format wants)
    assert.equal(delta(before, after, 'http_requests_total{method="GET",route="/api/v4/users/:id(^\\\\d+$)",status="4xx"}'), 1);
    assert.equal(delta(before, after, 'http_requests_total{method="GET",route="unmatched",status="4xx"}'), 1);
    assert.equal(delta(before, after, 'hearth_response_cache_requests_total{route="/api/v4/users",result="miss"}'), 1);
    assert.equal(delta(before, after, 'hearth_response_cache_requests_total{route="/api/v4/users",result="hit"}'), 1);
    assert.ok(delta(before, after, 'hearth_db_query_duration_seconds_count{operation="select",outcome="ok"}') >= 1);
    for (const key of after.keys()) assert.ok(!key.includes('987654') && !key.includes('secret'), key);
  });

  test('outbox depth and oldest age, hook deliveries by outcome', async () => {
    const sink = await startSink(null);
    try {
      const before = await scrape();
      assert.equal(before.get('hearth_outbox_jobs{kind="metrics_probe"}'), 1);
      const age = before.get('hearth_outbox_oldest_job_age_seconds{kind="metrics_probe"}') ?? 0;
      // at least the 90 s it was backdated, at most that plus the time since it was inserted (however slow the machine)
      assert.ok(age >= 90 && age <= 90 + (Date.now() - probeInsertedAt) / 1000 + 1, String(age));
      const hook = await app.inject({ method: 'POST', url: '/api/v4/hooks', headers: root, payload: { url: `${sink.url}/hook` } });
      assert.equal(hook.statusCode, 201);
      const sent = await app.inject({ method: 'POST', url: `/api/v4/hooks/${hook.json().id}`, headers: root });
      assert.equal(sent.statusCode, 201);
      const after = await scrape();
      assert.equal(delta(before, after, 'hearth_hook_deliveries_total{hook_type="system",outcome="delivered"}'), 1);
    } finally {
      await sink.close();
    }
  });

  test('git processes while they run, the cat-file pool, translation scans', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-metrics-git-'));
    const pool = new CatFilePool(4, 60_000);
    try {
      const s0 = await scrape();
      await git(['init', '--bare', '-q', dir]);
      assert.equal(await pool.info(dir, 'HEAD'), null);
      const s1 = await scrape();
      assert.equal(delta(s0, s1, 'hearth_git_commands_total{command="init"}'), 1);
      assert.equal(delta(s0, s1, 'hearth_git_processes{command="init"}'), 0);
      assert.equal(delta(s0, s1, 'hearth_git_commands_total{command="cat-file"}'), 1);
      assert.equal(delta(s0, s1, 'hearth_git_processes{command="cat-file"}'), 1);
      assert.equal(delta(s0, s1, 'hearth_git_cat_file_processes{mode="check"}'), 1);
      pool.close();
      // the killed process is reaped: wait for that (the deadline only bounds a hang)
      let s2 = await scrape();
      const reaped = (s: Map<string, number>) =>
        delta(s0, s, 'hearth_git_cat_file_processes{mode="check"}') === 0 && delta(s0, s, 'hearth_git_processes{command="cat-file"}') === 0;
      for (const deadline = Date.now() + 30_000; !reaped(s2) && Date.now() < deadline; ) {
        await new Promise((r) => setTimeout(r, 20));
        s2 = await scrape();
      }
      assert.equal(delta(s0, s2, 'hearth_git_cat_file_processes{mode="check"}'), 0);
      assert.equal(delta(s0, s2, 'hearth_git_processes{command="cat-file"}'), 0);
      await timedScan(async () => ({ parsed: 3 }));
      await assert.rejects(
        timedScan(() => Promise.reject(new Error('bad file'))),
        /bad file/,
      );
      const s3 = await scrape();
      assert.equal(delta(s2, s3, 'hearth_translation_scan_duration_seconds_count{outcome="ok"}'), 1);
      assert.equal(delta(s2, s3, 'hearth_translation_scan_duration_seconds_count{outcome="error"}'), 1);
      assert.equal(delta(s2, s3, 'hearth_translation_scan_files_parsed_total'), 3);
    } finally {
      pool.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the guard', () => {
  test('loopback through a real socket; the allowlist; others get the answer of an unknown path', async () => {
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const res = await fetch(`${address}/-/metrics`);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /^# HELP /m);

    for (const remoteAddress of ['203.0.113.77', '::ffff:127.0.0.1', '::1', '2001:db8::7', '::ffff:203.0.113.1']) {
      const ok = await app.inject({ method: 'GET', url: '/-/metrics', remoteAddress });
      assert.equal(ok.statusCode, 200, remoteAddress);
    }
    const unknown = await app.inject({ method: 'GET', url: '/-/no-such-page', remoteAddress: '198.51.100.7' });
    for (const [remoteAddress, headers] of [
      ['198.51.100.7', {}],
      ['2001:db8::8', {}],
      // a proxy's header does not make a remote client local
      ['198.51.100.7', { 'x-forwarded-for': '127.0.0.1' }],
    ] as const) {
      const refused = await app.inject({ method: 'GET', url: '/-/metrics', remoteAddress, headers });
      assert.equal(refused.statusCode, 404, remoteAddress);
      assert.equal(refused.headers['content-type'], unknown.headers['content-type']);
      assert.equal(refused.body.replace('%2F-%2Fmetrics', '%2F-%2Fno-such-page'), unknown.body);
      assert.doesNotMatch(refused.body, /http_requests_total/);
    }
  });

  test('HEARTH_METRICS_ALLOW is checked', () => {
    assert.deepEqual(loadConfig({ HEARTH_METRICS_ALLOW: '10.0.0.0/8,::1/128, 192.0.2.4' }).metricsAllow, ['10.0.0.0/8', '::1/128', '192.0.2.4']);
    for (const bad of ['10.0.0.0/33', 'example.com', '10.0.0.0/8/1', '::1/129', '10.0.0.0/x']) {
      assert.throws(() => loadConfig({ HEARTH_METRICS_ALLOW: bad }), /HEARTH_METRICS_ALLOW must be IP addresses or CIDR ranges/, bad);
    }
    assert.throws(() => loadConfig({ HEARTH_SLOW_REQUEST_MS: '-1' }), /HEARTH_SLOW_REQUEST_MS must be an integer/);
    assert.equal(loadConfig({}).slowRequestMs, 1000);
  });
});

describe('logs', () => {
  test('every line written while serving a request carries its request id, once', async () => {
    const from = lines.length;
    const res = await app.inject({ method: 'POST', url: '/test/service-log', payload: { a: 1 }, headers: { 'x-request-id': 'req-metrics-1' } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['x-request-id'], 'req-metrics-1');
    const mine = lines.slice(from).filter((l) => l.msg === 'service line' || l.msg === 'request line');
    assert.deepEqual(
      mine.map((l) => [l.msg, l.reqId]),
      [
        ['service line', 'req-metrics-1'],
        ['request line', 'req-metrics-1'],
      ],
    );
    for (const line of raw.slice(from)) assert.ok(line.split('"reqId"').length <= 2, line);
    // outside a request: no request id
    c.log.info('idle line');
    assert.equal(lines.at(-1)!.msg, 'idle line');
    assert.equal(lines.at(-1)!.reqId, undefined);
  });

  test('an unhandled error is logged once with its request id; the client sees none of it', async () => {
    const from = lines.length;
    const res = await app.inject({ method: 'GET', url: '/test/fails', headers: { 'x-request-id': 'req-metrics-500' } });
    assert.equal(res.statusCode, 500);
    assert.match(res.body, /Something went wrong/);
    assert.doesNotMatch(res.body, /broken on purpose/);
    const api = await app.inject({ method: 'GET', url: '/api/v4/test-fails', headers: { 'x-request-id': 'req-metrics-500-api' } });
    assert.equal(api.statusCode, 500);
    assert.equal(api.body, '{"message":"500 Internal Server Error"}');
    const logged = raw.slice(from).filter((l) => l.includes('unhandled error'));
    assert.equal(logged.length, 2);
    assert.equal(logged[0].split('"reqId":"req-metrics-500"').length, 2, logged[0]);
    assert.equal(logged[1].split('"reqId":"req-metrics-500-api"').length, 2, logged[1]);

    for (const l of logged) assert.match(l, /broken on purpose/);
  });

  test('a request slower than HEARTH_SLOW_REQUEST_MS is logged (warn) without its query string', async () => {
    // a fast request is not logged: one that the app itself timed under the 150 ms threshold (on a busy machine
    // even a 1 ms handler can take longer, and is then rightly logged: those are asked again, not judged)
    const slowLines = (from: number) => lines.slice(from).filter((l) => l.msg === 'slow request');
    let fastUnder: { from: number; id: string } | null = null;
    for (let i = 0; i < 50 && !fastUnder; i++) {
      const from = lines.length;
      const fast = await app.inject({ method: 'GET', url: '/test/slow/1' });
      assert.equal(fast.statusCode, 200);
      const id = String(fast.headers['x-request-id']);
      if ((elapsed.get(id) ?? Number.POSITIVE_INFINITY) < 150) fastUnder = { from, id };
    }
    assert.ok(fastUnder, 'no request measured under 150 ms in 50 tries');
    assert.deepEqual(slowLines(fastUnder.from), []);

    const from = lines.length;
    const sentAt = performance.now();
    const slow = await app.inject({ method: 'GET', url: '/test/slow/200?private_token=glpat-secret-value' });
    const wallMs = performance.now() - sentAt;
    assert.equal(slow.statusCode, 200);
    const logged = slowLines(from);
    assert.equal(logged.length, 1);
    const { time, pid, hostname, durationMs, ...rest } = logged[0];
    assert.ok(typeof time === 'number' && typeof pid === 'number' && typeof hostname === 'string');
    // the request's own time: at least the handler's 200 ms wait, at most what the caller saw
    assert.ok(typeof durationMs === 'number' && durationMs >= 150 && durationMs <= Math.ceil(wallMs), `${durationMs} of ${wallMs} ms`);
    assert.deepEqual(rest, {
      level: 40,
      reqId: slow.headers['x-request-id'],
      method: 'GET',
      route: '/test/slow/:n',
      statusCode: 200,
      msg: 'slow request',
    });
    assert.ok(!raw.slice(from).some((l) => l.includes('glpat-secret-value')));
  });

  test('a runner long poll (POST /jobs/request waiting HEARTH_JOB_REQUEST_TIMEOUT_MS for a job) is not a slow request', async () => {
    const created = await app.inject({ method: 'POST', url: '/api/v4/user/runners', headers: root, payload: { runner_type: 'instance_type' } });
    assert.equal(created.statusCode, 201, created.body);
    const from = lines.length;
    const poll = await app.inject({ method: 'POST', url: '/api/v4/jobs/request', payload: { token: created.json().token } });
    assert.equal(poll.statusCode, 204, poll.body);
    const slow = await app.inject({ method: 'GET', url: '/test/slow/200' });
    assert.equal(slow.statusCode, 200);
    // the poll waited its 300 ms, over the 150 ms threshold; only the slow handler is logged
    assert.deepEqual(
      lines
        .slice(from)
        .filter((l) => l.msg === 'slow request')
        .map((l) => l.route),
      ['/test/slow/:n'],
    );
  });
});
