// The real Prometheus (Debian's /usr/bin/prometheus) scrapes GET /-/metrics of a listening server every second; its
// query API then shows the target up and Hearth's series. Skipped without the binary, except in CI (which installs it).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { startTestServer } from '../helpers/server.ts';

const PROMETHEUS = process.env.PROMETHEUS_BIN || '/usr/bin/prometheus';
const missing = !fs.existsSync(PROMETHEUS);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const addr = s.address();
      s.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

test('a real prometheus scrapes /-/metrics', { skip: missing && process.env.CI !== 'true' ? `no ${PROMETHEUS}` : false, timeout: 300_000 }, async (t) => {
  const server = await startTestServer(t);
  const target = new URL(server.base).host;
  // known requests before and while it scrapes
  for (let i = 0; i < 3; i++) assert.equal((await server.app.inject({ method: 'GET', url: '/api/v4/version', headers: server.root })).statusCode, 200);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-prometheus-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(
    path.join(dir, 'prometheus.yml'),
    [
      'global:',
      // a scrape of a loaded machine may take over a second: it gets five, and the queries wait for it
      '  scrape_interval: 5s',
      '  scrape_timeout: 5s',
      'scrape_configs:',
      '  - job_name: hearth',
      '    metrics_path: /-/metrics',
      '    static_configs:',
      `      - targets: ['${target}']`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const prometheus = spawn(
    PROMETHEUS,
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  prometheus.stderr!.on('data', (b: Buffer) => {
    stderr += b.toString('utf8');
  });
  const exited = new Promise<void>((resolve) => prometheus.once('exit', () => resolve()));
  t.after(async () => {
    prometheus.kill('SIGTERM');
    await exited;
  });

  /** polls an instant query until `ok` accepts its result */
  const query = async (q: string, ok: (r: Sample[]) => boolean): Promise<Sample[]> => {
    const deadline = Date.now() + 120_000; // bounds a hang only
    let last: unknown = null;
    while (Date.now() < deadline) {
      if (prometheus.exitCode !== null) assert.fail(`prometheus exited (${prometheus.exitCode}): ${stderr}`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(q)}`);
        if (res.ok) {
          const body = (await res.json()) as { status: string; data: { resultType: string; result: Sample[] } };
          last = body;
          if (body.status === 'success' && ok(body.data.result)) return body.data.result;
        }
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.fail(`no answer to ${q}: ${JSON.stringify(last)}\n${stderr}`);
  };

  const up = await query('up{job="hearth"}', (r) => r.length === 1 && r[0].value[1] === '1');
  assert.deepEqual(up[0].metric, { __name__: 'up', instance: target, job: 'hearth' });

  // the series of the 2xx answers (the process's registry also counts the other tests of its shard: at least 3)
  const version = await query('http_requests_total{route="/api/v4/version",status="2xx"}', (r) => r.length === 1 && Number(r[0].value[1]) >= 3);
  assert.deepEqual(version[0].metric, {
    __name__: 'http_requests_total',
    instance: target,
    job: 'hearth',
    method: 'GET',
    route: '/api/v4/version',
    status: '2xx',
  });
  // its own scrapes are counted too, and the series of the database and the process are there
  await query('http_requests_total{route="/-/metrics",status="2xx"}', (r) => r.length === 1 && Number(r[0].value[1]) >= 1);
  await query('sum(hearth_db_query_duration_seconds_count)', (r) => r.length === 1 && Number(r[0].value[1]) > 0);
  await query('process_resident_memory_bytes{job="hearth"}', (r) => r.length === 1 && Number(r[0].value[1]) > 0);
  await query('hearth_db_pool_connections{state="total"}', (r) => r.length === 1 && Number(r[0].value[1]) >= 1);
});
