// npm run bench:ci-live-log: the job page's live log. A running job whose log is 10 MB (appended as a runner
// appends it, 64 KB at a time, coloured lines), read whole through the page's append-only endpoint
// (`/-/jobs/:id/trace.json?state=…`) over HTTP as the page script reads it — each answer's state is the next
// request's, its JSON parsed — signed in as root; the reader shares the server's thread. Reports MB/s (median of 3 reads; bar ≥ 20 MB/s, exit 1 below it), the first
// poll of a running job after start (the cache-miss path: nothing warmed, state 0) and a poll with nothing new
// (what a page waiting on a quiet job asks every 2 s; median of 21).
import fs from 'node:fs';
import { seedPipeline } from '../test/helpers/ci.ts';
import { benchContainer, freshBenchDatabase, median, publicProject, Report, serve } from './harness.ts';

const LOG_MB = Number(process.env.BENCH_LOG_MB ?? 10);
const CHUNK = 64 * 1024;
const BAR = { mbps: 20 };

await freshBenchDatabase('hearth_bench_ci_live_log');
const { c, dataDir } = await benchContainer('hearth-bench-ci-live-log-');
const project = await publicProject(c, 'Live log', 'live-log');
const root = (await c.users.byUsername('root'))!;
const { jobs } = await seedPipeline(c, project, { ref: 'main', status: 'running', user_id: root.id }, [
  { name: 'long', stage: 'test', stage_idx: 0, status: 'running' },
  { name: 'other', stage: 'test', stage_idx: 0, status: 'running' },
]);

/** A log of `bytes` bytes: numbered lines, every fifth coloured, the way a build prints. */
function logText(bytes: number): Buffer {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line =
      i % 5 === 0
        ? `\x1b[32;1m$ step ${i}\x1b[0m compiling module_${i}.ts with options --strict --target es2022\n`
        : `  ok ${i} src/module_${i}.ts (${i % 97} ms) <done> & cached\n`;
    lines.push(line);
    size += Buffer.byteLength(line);
  }
  // exactly `bytes`, ending with a whole line (a running job's unfinished line waits for its end)
  const out = Buffer.from(lines.join('')).subarray(0, bytes);
  out[out.length - 1] = 0x0a;
  return out;
}

const seedStart = performance.now();
for (const job of jobs) {
  const log = logText(LOG_MB * 1024 * 1024);
  let row = await c.ci.jobs.reload(job.id);
  for (let at = 0; at < log.length; at += CHUNK) {
    const r = await c.ci.jobs.appendTrace(row, at, log.subarray(at, at + CHUNK));
    if (r.status !== 202) throw new Error(`append: ${r.status}`);
    row = { ...row, trace_size: r.size };
  }
}
const seedMs = performance.now() - seedStart;

const { app, address, machineFloor } = await serve(c);
const machine = await machineFloor();
const session = await c.sessions.create(root, 60, null);
const headers = { cookie: `_service_session=${session.id}`, 'accept-encoding': 'identity' };
const report = new Report();
const line = (x: string) => report.line(x);
const url = (jobId: number, state: string) => `${address}/root/live-log/-/jobs/${jobId}/trace.json?state=${encodeURIComponent(state)}`;

async function poll(jobId: number, state: string) {
  const t = performance.now();
  const res = await fetch(url(jobId, state), { headers });
  if (res.status !== 200) throw new Error(`trace.json → ${res.status} ${(await res.text()).slice(0, 200)}`);
  const body = (await res.json()) as { state: string; offset: number; size: number; total: number; html: string };
  return { ...body, ms: performance.now() - t };
}

// the first poll of a running job after start: no statement, page or cache warmed for it
const first = await poll(jobs[1]!.id, '0');

/** The whole log through successive states, as the page script reads it. */
async function readAll(jobId: number) {
  const t = performance.now();
  let state = '0';
  let bytes = 0;
  let polls = 0;
  let html = 0;
  for (;;) {
    const r = await poll(jobId, state);
    polls++;
    bytes += r.size;
    html += r.html.length;
    state = r.state;
    if (r.offset + r.size >= r.total) return { bytes, polls, html, total: r.total, ms: performance.now() - t, state };
    if (r.size === 0) throw new Error(`no progress at ${r.offset} of ${r.total}`);
  }
}

const reads = [];
for (let i = 0; i < 3; i++) reads.push(await readAll(jobs[0]!.id));
const m = median(reads, (r) => r.bytes / r.ms);
if (m.bytes !== m.total) throw new Error(`read ${m.bytes} bytes of ${m.total}`);
const mbps = m.bytes / 1e6 / (m.ms / 1000);
const quiet = [];
for (let i = 0; i < 21; i++) quiet.push((await poll(jobs[0]!.id, m.state)).ms);
quiet.sort((a, b) => a - b);
const ok = mbps >= BAR.mbps;

line('');
line(`### The live job log (${LOG_MB} MB log, ${(seedMs / 1000).toFixed(1)} s to append it in 64 KB pieces; ${machine})`);
line('');
line(`| scenario | MB/s | polls | ms | HTML MB | first poll ms (cache miss) | quiet poll p50 ms | bar (≥ ${BAR.mbps} MB/s) |`);
line('|---|---|---|---|---|---|---|---|');
line(
  `| read the whole log through trace.json | ${mbps.toFixed(1)} | ${m.polls} | ${m.ms.toFixed(0)} | ${(m.html / 1e6).toFixed(1)} | ${first.ms.toFixed(1)} (${(first.size / 1024).toFixed(0)} KB) | ${quiet[10]!.toFixed(2)} | ${ok ? 'ok' : 'MISSED'} |`,
);

await app.close();
await c.close();
fs.rmSync(dataDir, { recursive: true, force: true });
report.save(true);
process.exit(ok ? 0 : 1);
