// npm run bench (third part): system-hook deliveries. 20 hooks point at a local sink (its
// own worker thread, so receiving does not share the server's thread); the job worker runs in the
// server's process, as `serve` runs it. Measured: the latency from the start of a real `git push`
// over smart HTTP to the receipt of each push delivery (30 pushes × 20 hooks), and the deliveries per
// second sustained when 1,000 events are queued at once (× 20 hooks = 20,000 deliveries).
// Bar: p99 < 1 s from push to receipt; ≥ 500 deliveries/s. Then the same push → receipt with 20
// project webhooks instead (the fan-out to a project's hooks), p99 < 1 s.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Worker as Thread } from 'node:worker_threads';
import { buildApp } from '../src/app.ts';
import { gitEnv } from '../src/git/command.ts';
import { recordSystemEvent } from '../src/domain/core/system-events.ts';
import { nowIso } from '../src/lib/time.ts';
import { benchContainer, ROOT_TOKEN } from './harness.ts';

const HOOKS = 20;
const PUSHES = Number(process.env.BENCH_PUSHES ?? 30);
const QUEUED = Number(process.env.BENCH_QUEUED ?? 1_000);
const run = promisify(execFile);

const { c, dataDir } = await benchContainer('hearth-bench-hooks-');
const config = c.config;
const app = await buildApp(c);
const address = await app.listen({ port: 0, host: '127.0.0.1' });

// --- the sink: counts deliveries and reports the receipt time of push deliveries by commit ---
const sinkCode = `
const http = require('node:http');
const { parentPort } = require('node:worker_threads');
let count = 0;
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const at = performance.timeOrigin + performance.now();
    count++;
    const body = Buffer.concat(chunks).toString();
    if (body.startsWith('{"object_kind":"push"')) parentPort.postMessage({ push: JSON.parse(body).after, at });
    res.end('ok');
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
setInterval(() => parentPort.postMessage({ count }), 20).unref();
parentPort.on('message', (m) => { if (m === 'close') server.close(() => process.exit(0)); });
`;
const sink = new Thread(sinkCode, { eval: true });
let sinkCount = 0;
const receipts = new Map<string, number[]>();
const sinkPort = await new Promise<number>((resolve) => {
  sink.on('message', (m: { port?: number; count?: number; push?: string; at?: number }) => {
    if (m.port) resolve(m.port);
    if (m.count !== undefined) sinkCount = m.count;
    if (m.push) receipts.set(m.push, [...(receipts.get(m.push) ?? []), m.at!]);
  });
});

const headers = { 'private-token': ROOT_TOKEN };
await c.worker.drain(); // root's own user_create, before any hook
for (let i = 0; i < HOOKS; i++) {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v4/hooks',
    headers,
    payload: { url: `http://127.0.0.1:${sinkPort}/hook/${i}`, push_events: true, token: `secret-${i}` },
  });
  if (res.statusCode !== 201) throw new Error(res.body);
}
const created = await app.inject({ method: 'POST', url: '/api/v4/projects', headers, payload: { name: 'Hooked', initialize_with_readme: true } });
if (created.statusCode !== 201) throw new Error(created.body);
const project = created.json() as { path_with_namespace: string };
c.worker.start();

const until = async (cond: () => boolean, ms: number, what: string) => {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
};

// --- push → receipt ---
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-bench-hooks-clone-'));
const remote = new URL(`${address}/${project.path_with_namespace}.git`);
remote.username = 'root';
remote.password = ROOT_TOKEN;
const env = gitEnv();
await run('git', ['clone', '-q', remote.toString(), 'w'], { cwd: work, env }); // async: this thread serves it
const wdir = path.join(work, 'w');
const gitIn = (args: string[]) =>
  execFileSync('git', args, {
    cwd: wdir,
    env: { ...env, GIT_AUTHOR_NAME: 'Bench', GIT_AUTHOR_EMAIL: 'bench@example.com', GIT_COMMITTER_NAME: 'Bench', GIT_COMMITTER_EMAIL: 'bench@example.com' },
  })
    .toString()
    .trim();
const latencies: number[] = [];
const pushTimes: number[] = [];
for (let i = 0; i < PUSHES; i++) {
  fs.writeFileSync(path.join(wdir, 'file.txt'), `change ${i}\n`);
  gitIn(['add', '-A']);
  gitIn(['commit', '-q', '-m', `Change ${i}`]);
  const sha = gitIn(['rev-parse', 'HEAD']);
  const t0 = performance.timeOrigin + performance.now();
  await run('git', ['push', '-q', 'origin', 'HEAD:main'], { cwd: wdir, env });
  pushTimes.push(performance.timeOrigin + performance.now() - t0);
  await until(() => (receipts.get(sha)?.length ?? 0) >= HOOKS, 10_000, `the deliveries of push ${i}`);
  for (const at of receipts.get(sha)!) latencies.push(at - t0);
}
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

// --- 1,000 queued events ---
await c.worker.stop();
const before = sinkCount;
await c.db.kysely.transaction().execute(async (trx) => {
  for (let i = 0; i < QUEUED; i++)
    await recordSystemEvent(trx, {
      event_name: 'group_create',
      created_at: nowIso(),
      updated_at: nowIso(),
      name: `g${i}`,
      path: `g${i}`,
      full_path: `g${i}`,
      group_id: i + 1000,
      owner_email: null,
      owner_name: null,
    });
});
const expected = before + QUEUED * HOOKS;
const t0 = performance.now();
c.worker.start();
await until(() => sinkCount >= expected, 300_000, 'the queued deliveries');
const seconds = (performance.now() - t0) / 1000;
const rate = (QUEUED * HOOKS) / seconds;
await c.worker.stop();

// --- a push to a project with 20 webhooks (project hooks, the same engine) ---
const systemHooks = (await app.inject({ method: 'GET', url: '/api/v4/hooks?per_page=100', headers })).json() as { id: number }[];
for (const h of systemHooks) await app.inject({ method: 'DELETE', url: `/api/v4/hooks/${h.id}`, headers });
await c.settings.update({ allow_local_requests_from_web_hooks_and_services: true });
const projectId = (created.json() as { id: number }).id;
for (let i = 0; i < HOOKS; i++) {
  const res = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${projectId}/hooks`,
    headers,
    payload: { url: `http://127.0.0.1:${sinkPort}/web/${i}`, push_events: true, token: `web-secret-${i}` },
  });
  if (res.statusCode !== 201) throw new Error(res.body);
}
c.worker.start();
const webLatencies: number[] = [];
for (let i = 0; i < PUSHES; i++) {
  fs.writeFileSync(path.join(wdir, 'file.txt'), `web change ${i}\n`);
  gitIn(['add', '-A']);
  gitIn(['commit', '-q', '-m', `Web change ${i}`]);
  const sha = gitIn(['rev-parse', 'HEAD']);
  const t0 = performance.timeOrigin + performance.now();
  await run('git', ['push', '-q', 'origin', 'HEAD:main'], { cwd: wdir, env });
  await until(() => (receipts.get(sha)?.length ?? 0) >= HOOKS, 10_000, `the webhook deliveries of push ${i}`);
  for (const at of receipts.get(sha)!) webLatencies.push(at - t0);
}
await c.worker.stop();
const webP50 = pct(webLatencies, 50);
const webP99 = pct(webLatencies, 99);
const okWeb = webP99 < 1000;

const p50 = pct(latencies, 50);
const p99 = pct(latencies, 99);
const okLatency = p99 < 1000;
const okRate = rate >= 500;
const lines = [
  `Hearth hooks bench — ${HOOKS} hooks on a local sink (own thread), worker in the server's process (poll ${config.workerPollMs} ms), ${c.db.dialect}, node ${process.version}`,
  '',
  '| measure | value | bar |',
  '|---|---|---|',
  `| git push → receipt, p50 (${PUSHES} pushes × ${HOOKS} hooks) | ${p50.toFixed(0)} ms | |`,
  `| git push → receipt, p99 | ${p99.toFixed(0)} ms | < 1000 ms ${okLatency ? 'ok' : 'MISSED'} |`,
  `| git push itself, median | ${pct(pushTimes, 50).toFixed(0)} ms | |`,
  `| ${QUEUED} queued events × ${HOOKS} hooks: ${QUEUED * HOOKS} deliveries in ${seconds.toFixed(1)} s | ${rate.toFixed(0)} deliveries/s | ≥ 500 ${okRate ? 'ok' : 'MISSED'} |`,
  `| git push → receipt by ${HOOKS} project webhooks, p50 (${PUSHES} pushes) | ${webP50.toFixed(0)} ms | |`,
  `| git push → receipt by ${HOOKS} project webhooks, p99 | ${webP99.toFixed(0)} ms | < 1000 ms ${okWeb ? 'ok' : 'MISSED'} |`,
];
for (const l of lines) console.log(l);
if (process.env.BENCH_OUT) fs.appendFileSync(process.env.BENCH_OUT, lines.join('\n') + '\n');

sink.postMessage('close');
await app.close();
await c.close();
fs.rmSync(dataDir, { recursive: true, force: true });
fs.rmSync(work, { recursive: true, force: true });
process.exit(okLatency && okRate && okWeb ? 0 : 1);
