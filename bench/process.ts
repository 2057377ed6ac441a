// npm run bench:process: the server as a process, compiled (dist/, plain node) against the sources through
// tsx (HEARTH_DEV=1), in the same run on the same data: spawn → /-/readiness 200, RSS after start, the hot
// lists with autocannon (10 connections), RSS after the load. Seeds 10,000 users and 10,000 projects first
// (as the platform bench). Run `npm run build` before, or the "compiled" rows run the loader too (it says so).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import autocannon from 'autocannon';
import { groupRow, projectRow, userRow } from '../test/helpers/rows.ts';
import { nowIso } from '../src/lib/time.ts';
import { benchContainer, freshBenchDatabase, ROOT_TOKEN } from './harness.ts';
import { sourceState } from '../bin/source-state.js';

const USERS = Number(process.env.BENCH_USERS ?? 10_000);
const PROJECTS = Number(process.env.BENCH_PROJECTS ?? 10_000);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const STARTS = Number(process.env.BENCH_STARTS ?? 3);

const built = (() => {
  try {
    const b = JSON.parse(fs.readFileSync('dist/build.json', 'utf8'));
    const now = sourceState('src');
    return b.files === now.files && now.newest <= b.newest;
  } catch {
    return false;
  }
})();
if (!built) process.stderr.write('bench:process: dist/ is missing or older than src/ (npm run build): "compiled" runs the loader too\n');

await freshBenchDatabase('hearth_bench_process');
const { c, dataDir } = await benchContainer('hearth-bench-process-');
const now = nowIso();
const k = c.db.kysely;
for (let i = 0; i < USERS; i += 500) {
  await k
    .insertInto('users')
    .values(Array.from({ length: Math.min(500, USERS - i) }, (_, j) => userRow(`bench${i + j}`, { name: `Bench User ${i + j}` }, now)))
    .execute();
}
await k
  .insertInto('namespaces')
  .values(groupRow('bench-group', null, { name: 'Bench' }, now))
  .execute();
const ns = await k.selectFrom('namespaces').select('id').where('path', '=', 'bench-group').executeTakeFirstOrThrow();
for (let i = 0; i < PROJECTS; i += 500) {
  await k
    .insertInto('projects')
    .values(
      Array.from({ length: Math.min(500, PROJECTS - i) }, (_, j) =>
        projectRow(
          ns.id,
          `project-${i + j}`,
          { creator_id: 1, name: `Project ${i + j}`, description: `Bench project number ${i + j}`, visibility: 'public' },
          now,
        ),
      ),
    )
    .execute();
}
await c.close();

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const addr = s.address();
      s.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function start(mode: 'compiled' | 'tsx') {
  const port = await freePort();
  const env: Record<string, string> = { ...(process.env as Record<string, string>) };
  delete env.NODE_OPTIONS;
  Object.assign(env, {
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    HEARTH_SSH_PORT: '0',
    HEARTH_ROOT_TOKEN: ROOT_TOKEN,
    LOG_LEVEL: 'warn',
    HEARTH_DEV: mode === 'tsx' ? '1' : '0',
  });
  const t0 = performance.now();
  const child = spawn(process.execPath, [path.resolve('bin/hearth.js'), 'serve'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${port}/-/readiness`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    if (child.exitCode !== null) throw new Error(`serve (${mode}) exited ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return { child, port, readyMs: performance.now() - t0 };
}

async function stop(child: ReturnType<typeof spawn>) {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

const urls = ['/api/v4/users?per_page=100', '/api/v4/projects?per_page=100', '/api/v4/version'];
const rows: string[] = [];
const startTimes: Record<string, number[]> = { compiled: [], tsx: [] };
const startRss: Record<string, number[]> = { compiled: [], tsx: [] };
// start-up, alternating the modes
for (let i = 0; i < STARTS; i++) {
  for (const mode of ['compiled', 'tsx'] as const) {
    const s = await start(mode);
    await new Promise((r) => setTimeout(r, 500)); // what start-up left to settle
    startTimes[mode].push(s.readyMs);
    startRss[mode].push(rssMb(s.child.pid!));
    await stop(s.child);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const mode of ['compiled', 'tsx'] as const) {
  rows.push(
    `| ${mode} | start to ready (median of ${STARTS}) | ${median(startTimes[mode]).toFixed(0)} ms | RSS after start ${median(startRss[mode]).toFixed(0)} MB |`,
  );
}
// the hot lists, one process per mode
for (const mode of ['compiled', 'tsx'] as const) {
  const s = await start(mode);
  for (const url of urls) {
    const r = await autocannon({
      url: `http://127.0.0.1:${s.port}${url}`,
      connections: 10,
      duration: DURATION,
      headers: { 'private-token': ROOT_TOKEN },
    });
    rows.push(
      `| ${mode} | GET ${url} | ${r.requests.average.toFixed(0)} req/s | p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms${r.non2xx ? `, ${r.non2xx} non-2xx` : ''} |`,
    );
  }
  rows.push(`| ${mode} | RSS after the load | ${rssMb(s.child.pid!).toFixed(0)} MB | |`);
  await stop(s.child);
}
process.stdout.write(
  `bench:process (${c.db.dialect}, ${USERS} users, ${PROJECTS} projects, ${DURATION} s per list, 10 connections${built ? '' : ', dist/ NOT current'})\n| mode | what | figure | |\n|---|---|---|---|\n${rows.join('\n')}\n`,
);
fs.rmSync(dataDir, { recursive: true, force: true });
