// npm run bench:git-spawn: what starting a git command costs the server. The process is grown to a server's size
// first (BENCH_RSS_MB of touched memory, default 300: a server under load is 150–700 MB), then runs 500 short
// commands (`git rev-parse --is-bare-repository`) one after another and 8 at a time: through git() (the spawner,
// src/git/spawner.ts), and started by this process itself, as git() did before. Per command: the wall time and this
// process's own CPU (user + kernel), which is the event loop's; the longest event-loop delay seen. Bar: through
// git(), the server's CPU per command < 2 ms at that size.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { configureGit, git, gitEnv } from '../src/git/command.ts';
import { spawner } from '../src/git/spawner.ts';
import { Report } from './harness.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 500);
const RSS_MB = Number(process.env.BENCH_RSS_MB ?? 300);
const BAR_CPU_MS = 2;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-bench-git-spawn-'));
configureGit(path.join(dir, 'home'));
const gitDir = path.join(dir, 'repo.git');
await git(['init', '--bare', '-q', gitDir]);

// a server's size: memory that is written, so its pages are mapped (a fork copies their page tables)
const ballast: Buffer[] = [];
while (process.memoryUsage().rss < RSS_MB * 1024 * 1024) ballast.push(Buffer.alloc(16 << 20, 1));

const direct = (args: string[]) =>
  new Promise<void>((resolve, reject) => {
    const child = spawn('git', ['--git-dir', gitDir, ...args], { env: gitEnv(), stdio: 'pipe' });
    child.stdout.resume();
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`git exited with ${code}`))));
  });
const viaGit = (args: string[]) => git(args, { gitDir }).then(() => undefined);

const pct = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(q * xs.length) - 1)]!;

async function measure(run: (args: string[]) => Promise<void>, parallel: number) {
  const times: number[] = [];
  for (let i = 0; i < 20; i++) await run(['rev-parse', '--is-bare-repository']); // warm
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const r0 = process.resourceUsage();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < CALLS) {
        next++;
        const s = performance.now();
        await run(['rev-parse', '--is-bare-repository']);
        times.push(performance.now() - s);
      }
    }),
  );
  const wall = performance.now() - t0;
  const r1 = process.resourceUsage();
  delay.disable();
  const cpu = (r1.userCPUTime - r0.userCPUTime + (r1.systemCPUTime - r0.systemCPUTime)) / 1000 / CALLS;
  const sys = (r1.systemCPUTime - r0.systemCPUTime) / 1000 / CALLS;
  return { p50: pct(times, 0.5), p99: pct(times, 0.99), perSecond: (CALLS / wall) * 1000, cpu, sys, maxDelay: delay.max / 1e6 };
}

const report = new Report();
const rss = Math.round(process.memoryUsage().rss / 1e6);
report.line(`Hearth git spawn bench — ${CALLS} commands each, this process at ${rss} MB RSS, node ${process.version}, ${os.cpus().length} cores`);
report.line('');
report.line(
  `| how | at once | p50 ms | p99 ms | commands/s | server CPU ms per command (kernel) | longest event-loop delay ms | bar (server CPU < ${BAR_CPU_MS} ms) |`,
);
report.line('|---|---|---|---|---|---|---|---|');
let failed = false;
for (const parallel of [1, 8]) {
  for (const [how, run] of [
    ['git(): the spawner', viaGit],
    ['started by the server (before)', direct],
  ] as const) {
    const m = await measure(run, parallel);
    const barred = how.startsWith('git()');
    const ok = !barred || m.cpu < BAR_CPU_MS;
    failed ||= !ok;
    report.line(
      `| ${how} | ${parallel} | ${m.p50.toFixed(2)} | ${m.p99.toFixed(2)} | ${m.perSecond.toFixed(0)} | ${m.cpu.toFixed(2)} (${m.sys.toFixed(2)}) | ${m.maxDelay.toFixed(1)} | ${barred ? (ok ? 'ok' : 'MISSED') : '—'} |`,
    );
  }
}
ballast.length = 0;
spawner.stop();
fs.rmSync(dir, { recursive: true, force: true });
report.save(true);
process.exit(failed ? 1 : 0);
