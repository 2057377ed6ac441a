// npm run bench:mixed (also the last part of `npm run bench`): a GitLab-style mixed load, after the mix of
// GitLab's performance tool (gitlab-org/quality/performance, k6/tests/api/*), against the big repository
// (10,000 files, 5,000 commits) in a public project with a few thousand users and some hundreds of open merge
// requests with notes. An open-model generator (constant arrival rate, in a worker thread of its own: see
// bench/mixed-load.ts) sends the weighted mix at each rate of BENCH_MIXED_RATES (100 and 200 req/s) for
// BENCH_MIXED_SECONDS after a warm-up. Reported per rate: achieved rate, p50/p90/p99 overall and per route,
// errors (non-2xx; 503s, the git budget's refusals, apart), the CPU of the server's thread and of its git
// child processes. Bar (at the first rate, 100 req/s): p90 ≤ 200 ms and no error.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import type { Worker } from 'node:worker_threads';
import { gitEnv } from '../src/git/command.ts';
import { startWorker, workerEntry } from '../src/lib/worker-boot.ts';
import { insertAll, memberRow, userRow } from '../test/helpers/rows.ts';
import { buildBigRepo } from './big-repo.ts';
import { apiClient, benchContainer, freshBenchDatabase, publicProject, Report, serve } from './harness.ts';
import type { LoadPlan, LoadResult, MixRoute } from './mixed-load.ts';
import { sql } from 'kysely';

const RATES = (process.env.BENCH_MIXED_RATES ?? '100,200').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_MIXED_SECONDS ?? 30);
const WARMUP = Number(process.env.BENCH_MIXED_WARMUP ?? 5);
const USERS = Number(process.env.BENCH_MIXED_USERS ?? 3_000);
const MRS = Number(process.env.BENCH_MIXED_MRS ?? 300);
const NOTES_PER_MR = 3;
/** branches kept for the merge requests the load creates (one each) */
const SPARE_BRANCHES = 1_000;
const BAR = { rate: RATES[0], p90: 200 };
const TIMEOUT_MS = 60_000;

await freshBenchDatabase('hearth_bench_mixed');
const { c, dataDir } = await benchContainer('hearth-bench-mixed-');
const k = c.db.kysely;
const t0 = performance.now();

// --- the big repository in a public project, with branches for merge requests ---
const project = await publicProject(c, 'Big', 'big');
const bare = c.repos.pathOf(project);
const big = await buildBigRepo(bare, gitEnv());
const gitAt = (args: string[], input?: string) =>
  execFileSync('git', ['--git-dir', bare, ...args], { env: gitEnv(), maxBuffer: 1 << 30, input })
    .toString()
    .trim();
const history = gitAt(['rev-list', '--max-count=100', 'main']).split('\n');
const base = gitAt(['rev-parse', 'compare-base']);
const head = gitAt(['rev-parse', 'main']);
/** A branch of one commit that changes five files, on top of a commit of main's last 100. */
const branchCommits = (names: string[]) => {
  let s = '';
  let time = 1_700_000_000;
  for (const [i, name] of names.entries()) {
    s += `commit refs/heads/${name}\nauthor Bench <bench@example.com> ${time} +0000\ncommitter Bench <bench@example.com> ${time++} +0000\n`;
    const msg = `Work on ${name}\n`;
    s += `data ${Buffer.byteLength(msg)}\n${msg}from ${history[i % history.length]}\n`;
    for (let f = 0; f < 5; f++) {
      const body = `# ${name}\n${'changed line\n'.repeat(10 + f)}`;
      s += `M 100644 inline dir${String((i * 7 + f * 13) % 100).padStart(3, '0')}/file${String((i + f) % 100).padStart(3, '0')}.txt\ndata ${Buffer.byteLength(body)}\n${body}\n`;
    }
    s += '\n';
  }
  return s;
};
const mrBranches = Array.from({ length: MRS }, (_, i) => `feature-${String(i).padStart(4, '0')}`);
const spareBranches = Array.from({ length: SPARE_BRANCHES }, (_, i) => `topic-${String(i).padStart(4, '0')}`);
gitAt(['fast-import', '--quiet'], `${branchCommits([...mrBranches, ...spareBranches])}reset refs/heads/load-commits\nfrom ${head}\n\n`);
c.repos.repository(project).touchRefs();

// --- users, a developer and their token ---
const now = new Date().toISOString();
await insertAll(
  k,
  'users',
  Array.from({ length: USERS }, (_, j) => userRow(`user${String(j).padStart(5, '0')}`, { name: `Bench User ${j}` }, now)),
);
const dev = (await k
  .insertInto('users')
  .values(userRow('developer', { name: 'Dev Eloper' }, now))
  .returningAll()
  .executeTakeFirstOrThrow())!;
await k
  .insertInto('members')
  .values(memberRow('Project', project.id, dev.id, 30, now))
  .execute();
const token = (await c.tokens.create(dev, { name: 'bench', scopes: ['api'] })).token!;
const headers = { 'private-token': token };

const { app, address } = await serve(c);
const api = apiClient(address, headers);
const P = `/api/v4/projects/${project.id}`;

// --- open merge requests from the branches, with notes, through the API ---
const inParallel = async <T>(items: T[], n: number, fn: (x: T) => Promise<void>) => {
  let i = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (i < items.length) await fn(items[i++]);
    }),
  );
};
const iids: number[] = [];
await inParallel(mrBranches, 4, async (branch) => {
  const r = await api('POST', `${P}/merge_requests`, {
    source_branch: branch,
    target_branch: 'main',
    title: `Merge ${branch}`,
    description: `Changes five files of ${branch}.`,
  });
  if (r.status !== 201) throw new Error(`create merge request: ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
  iids.push(r.json.iid);
});
await inParallel(
  iids.flatMap((iid) => Array.from({ length: NOTES_PER_MR }, (_, n) => ({ iid, n }))),
  4,
  async ({ iid, n }) => {
    const r = await api('POST', `${P}/merge_requests/${iid}/notes`, { body: `Review note ${n} on !${iid}: looks good, one question about the cache.` });
    if (r.status !== 201) throw new Error(`note: ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
  },
);
await c.merges.idle();
if (c.db.dialect === 'postgres') await sql`analyze`.execute(k);
const seeded = (performance.now() - t0) / 1000;

// --- the mix ---
const enc = encodeURIComponent;
const files = Array.from({ length: 10 }, (_, i) => `${big.directory}/file${String(i * 10 + 7).padStart(3, '0')}.txt`);
const someIids = (n: number) => iids.filter((_, i) => i % Math.ceil(iids.length / n) === 0);
const get = (name: string, weight: number, paths: string[]): MixRoute => ({
  name,
  weight,
  method: 'GET',
  pick: 'random',
  requests: paths.map((path) => ({ path })),
});
const routes: MixRoute[] = [
  get('MR list', 10, [`${P}/merge_requests`, `${P}/merge_requests?state=opened`]),
  get(
    'MR show',
    8,
    someIids(50).map((iid) => `${P}/merge_requests/${iid}`),
  ),
  get(
    'MR changes',
    4,
    someIids(50).map((iid) => `${P}/merge_requests/${iid}/changes`),
  ),
  get(
    'MR discussions',
    3,
    someIids(50).map((iid) => `${P}/merge_requests/${iid}/discussions`),
  ),
  get(
    'MR commits',
    2,
    someIids(50).map((iid) => `${P}/merge_requests/${iid}/commits`),
  ),
  get('tree (root, 100 entries)', 6, [`${P}/repository/tree?per_page=100`]),
  get('tree with a path (100 entries)', 6, [`${P}/repository/tree?path=${big.directory}&per_page=100`]),
  get(
    'file (with last commit)',
    8,
    files.map((f) => `${P}/repository/files/${enc(f)}?ref=main`),
  ),
  get(
    'raw file',
    6,
    files.map((f) => `${P}/repository/files/${enc(f)}/raw?ref=main`),
  ),
  get(
    'users search',
    5,
    ['user00012', 'user01', 'Bench User 7', 'dev'].map((s) => `/api/v4/users?search=${enc(s)}`),
  ),
  get('users list', 5, ['/api/v4/users', '/api/v4/users?per_page=100']),
  get('compare (200 commits, 500 files)', 2, [`${P}/repository/compare?from=${base}&to=${head}`]),
  get('commits list', 6, [`${P}/repository/commits?ref_name=main`, `${P}/repository/commits?ref_name=main&path=${enc(big.directory)}`]),
  get('branches list', 5, [`${P}/repository/branches`, `${P}/repository/branches?search=feature-00`]),
  get('project show', 10, [P]),
  {
    name: 'create MR (write)',
    weight: 1,
    method: 'POST',
    pick: 'sequence',
    requests: spareBranches.map((b) => ({
      path: `${P}/merge_requests`,
      body: JSON.stringify({ source_branch: b, target_branch: 'main', title: `Merge ${b}` }),
    })),
  },
  {
    name: 'MR note (write)',
    weight: 2,
    method: 'POST',
    pick: 'random',
    requests: someIids(50).map((iid) => ({ path: `${P}/merge_requests/${iid}/notes`, body: JSON.stringify({ body: 'Another look: fine by me (%n%).' }) })),
  },
  {
    name: 'commit (write)',
    weight: 1,
    method: 'POST',
    pick: 'random',
    requests: [
      {
        path: `${P}/repository/commits`,
        body: JSON.stringify({
          branch: 'load-commits',
          commit_message: 'Load commit %n%',
          actions: [{ action: 'create', file_path: 'load/%n%.txt', content: 'written under load %n%\n' }],
        }),
      },
    ],
  },
];
// every request of the mix answers 2xx once before the load starts (and warms what a first request warms)
for (const r of routes) {
  if (r.method !== 'GET') continue;
  for (const q of r.requests) {
    const res = await api('GET', q.path);
    if (res.status !== 200) throw new Error(`${r.name} ${q.path} → ${res.status} ${JSON.stringify(res.json).slice(0, 300)}`);
  }
}

// --- CPU: the server's thread, and git (reaped children through cutime/cstime, live ones through /proc) ---
const TICK = 100; // USER_HZ on Linux
const statOf = (file: string): number[] | null => {
  try {
    const s = fs.readFileSync(file, 'utf8');
    return s
      .slice(s.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number); // field 3 (state) is index 0
  } catch {
    return null;
  }
};
function cpuNow(): { thread: number; reaped: number; live: Map<number, number> } {
  const self = statOf(`/proc/self/task/${process.pid}/stat`)!;
  const proc = statOf('/proc/self/stat')!;
  const live = new Map<number, number>();
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const st = statOf(`/proc/${pid}/stat`);
    // index 1: ppid; 11, 12: utime, stime
    if (st && st[1] === process.pid) live.set(Number(pid), st[11] + st[12]);
  }
  return { thread: (self[11] + self[12]) / TICK, reaped: (proc[13] + proc[14]) / TICK, live };
}
function cpuSince(a: ReturnType<typeof cpuNow>) {
  const b = cpuNow();
  let live = 0;
  for (const [pid, t] of b.live) live += t - (a.live.get(pid) ?? 0);
  return { thread: b.thread - a.thread, git: b.reaped - a.reaped + live / TICK };
}

// --- the generator ---
const worker: Worker = startWorker(workerEntry(import.meta.url, 'mixed-load'));
await new Promise<void>((resolve, reject) => {
  worker.once('message', () => resolve());
  worker.once('error', reject);
});
let counter = 0;
const load = (rate: number, seconds: number) =>
  new Promise<LoadResult>((resolve, reject) => {
    const plan: LoadPlan = { address, headers, rate, seconds, routes, counterStart: counter, timeoutMs: TIMEOUT_MS };
    worker.once('message', (m: { result?: LoadResult; error?: string }) => {
      if (m.error) return reject(new Error(m.error));
      counter = m.result!.counterEnd;
      resolve(m.result!);
    });
    worker.postMessage(plan);
  });

const pct = (xs: number[], p: number) => (xs.length ? xs[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] : 0);
const ms = (x: number) => (x < 10 ? x.toFixed(1) : x.toFixed(0));
const uptime = () =>
  execFileSync('uptime')
    .toString()
    .trim()
    .replace(/.*load average: /, '');

const report = new Report();
const line = (x: string) => report.line(x);
const weights = routes.reduce((n, r) => n + r.weight, 0);
line(
  `Hearth mixed load — ${big.files} files, ${big.commits} commits, ${USERS} users, ${MRS} open merge requests with ${NOTES_PER_MR} notes each (seeded in ${seeded.toFixed(1)} s), ${c.db.dialect}, node ${process.version}, ${execFileSync('git', ['--version']).toString().trim()}, ${os.cpus().length} cores`,
);
line('');
line(`Mix (weights of ${weights}): ${routes.map((r) => `${r.name} ${r.weight}`).join(', ')}.`);
let failed = false;
for (const rate of RATES) {
  if (WARMUP > 0) await load(rate, WARMUP);
  await c.merges.idle();
  const loadBefore = uptime();
  const cpu0 = cpuNow();
  const r = await load(rate, SECONDS);
  const cpu = cpuSince(cpu0);
  const loadAfter = uptime();
  const all = r.routes.flatMap((x) => x.latencies).sort((a, b) => a - b);
  const count = (x: { failures: Record<string, number> }, which: '503' | 'other') =>
    Object.entries(x.failures).reduce((n, [status, m]) => n + ((status === '503') === (which === '503') ? m : 0), 0);
  const errors = r.routes.reduce((n, x) => n + count(x, 'other'), 0);
  const busy = r.routes.reduce((n, x) => n + count(x, '503'), 0);
  const p90 = pct(all, 90);
  const bar = rate === BAR.rate;
  const ok = p90 <= BAR.p90 && errors + busy === 0;
  if (bar) failed ||= !ok;
  line('');
  line(
    `### ${rate} req/s for ${SECONDS} s (after ${WARMUP} s of warm-up): load average ${loadBefore} before, ${loadAfter} after; generator lag p99 ${ms(r.lagP99)} ms, max ${ms(r.lagMax)} ms`,
  );
  line('');
  line(`| route | share | requests | p50 ms | p90 ms | p99 ms | max ms | errors | 503 |`);
  line('|---|---|---|---|---|---|---|---|---|');
  line(
    `| **all** (${(r.completed / r.elapsedS).toFixed(1)} req/s achieved, ${(r.sent / SECONDS).toFixed(1)} sent; server thread ${cpu.thread.toFixed(1)} s CPU, git ${cpu.git.toFixed(1)} s CPU = ${((cpu.git * 60) / r.elapsedS).toFixed(0)} s a minute) | 100 % | ${all.length} | ${ms(pct(all, 50))} | **${ms(p90)}** | ${ms(pct(all, 99))} | ${ms(all[all.length - 1] ?? 0)} | ${errors} | ${busy} |`,
  );
  for (const [i, x] of r.routes.entries()) {
    const l = x.latencies.sort((a, b) => a - b);
    const other = Object.entries(x.failures)
      .filter(([s]) => s !== '503')
      .map(([s, n]) => `${n}×${s === '0' ? 'no answer' : s}`)
      .join(', ');
    line(
      `| ${x.name} | ${((routes[i].weight * 100) / weights).toFixed(1)} % | ${l.length} | ${ms(pct(l, 50))} | ${ms(pct(l, 90))} | ${ms(pct(l, 99))} | ${ms(l[l.length - 1] ?? 0)} | ${other || 0} | ${count(x, '503')} |`,
    );
  }
  line('');
  line(
    bar
      ? `Bar at ${rate} req/s (p90 ≤ ${BAR.p90} ms, no error, no 503): ${ok ? 'ok' : 'MISSED'}`
      : `(reported; the bar is at ${BAR.rate} req/s: ${ok ? 'would hold' : 'would be missed'})`,
  );
}

await worker.terminate();
await app.close();
await c.close();
fs.rmSync(dataDir, { recursive: true, force: true });
report.save(true);
process.exit(failed ? 1 : 0);
