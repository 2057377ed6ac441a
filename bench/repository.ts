// npm run bench (second part): a repository of 10,000 files, 5,000 commits.
// Hot reads (tree of a 100-entry directory, blob, raw blob, branch list) with autocannon at 10
// connections next to the framework's floor (a static payload of the same size); compare of 200
// commits / 500 files and archive of the whole tree against the bare git commands doing the same
// work; clone over smart HTTP against `git clone --no-local` of the bare directory. Medians.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { gitEnv } from '../src/git/command.ts';
import { buildBigRepo } from './big-repo.ts';
import { apiClient, benchContainer, freshBenchDatabase, CONNECTIONS, DURATION, median, publicProject, Report, ROOT_TOKEN, ROUNDS, serve } from './harness.ts';

const run = promisify(execFile);
const TIMED_RUNS = Number(process.env.BENCH_TIMED_RUNS ?? 5);
/** `hot` or `work`: run only that table; BENCH_PICK: only the hot rows whose name contains it */
const ONLY = process.env.BENCH_ONLY ?? '';

await freshBenchDatabase('hearth_bench_repository');
const { c, dataDir } = await benchContainer('hearth-bench-repo-', { HEARTH_ARCHIVE_RATE_LIMIT: '0' });
const project = await publicProject(c, 'Big', 'big');
const { full_path: owner } = await c.db.kysely.selectFrom('namespaces').select('full_path').where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
const bare = c.repos.pathOf(project);
const t0 = performance.now();
const big = await buildBigRepo(bare, gitEnv());
c.repos.repository(project).touchRefs();
const buildSeconds = (performance.now() - t0) / 1000;
const gitAt = (args: string[]) =>
  execFileSync('git', ['--git-dir', bare, ...args], { env: gitEnv(), maxBuffer: 1 << 30 })
    .toString()
    .trim();
const blobSha = gitAt(['rev-parse', `main:${big.file}`]);
const base = gitAt(['rev-parse', 'compare-base']);
const head = gitAt(['rev-parse', 'main']);

// autocannon in its own worker thread: the load generator does not share the server's thread
const { app, address, againstFloor, missRound, mixedRounds } = await serve(c, { workers: 1 });
const api = `/api/v4/projects/${project.id}/repository`;
const report = new Report();
const line = (x: string) => report.line(x);
let failed = false;

line(
  `Hearth repository bench — ${big.files} files, ${big.commits} commits (built in ${buildSeconds.toFixed(1)} s), ${CONNECTIONS} connections, median of ${ROUNDS} alternating ${DURATION}s rounds, ${c.db.dialect}, node ${process.version}, ${execFileSync('git', ['--version']).toString().trim()}`,
);
line('');
line(
  'Lists also get their cache-miss variant (each request a query string never sent before: req/s at 10 connections, p50/p99 at one) and their mixed one (the hot URL while a writer creates a branch through the API every 100 ms; bar ≥ 0.5 of the read-only req/s).',
);
line('');
line(
  '| scenario | req/s | p50 ms | p99 ms | static req/s | ratio | bar (≥ 5,000 req/s, p99 < 10 ms; lists: mixed ≥ 0.5) | miss req/s | miss p50 ms | miss p99 ms | mixed req/s | mixed / read-only |',
);
line('|---|---|---|---|---|---|---|---|---|---|---|---|');
// The mixed variant's writer: a new branch from main, as POST /repository/branches makes it (the refs change).
const rest = apiClient(address, { 'private-token': ROOT_TOKEN });
let branches = 0;
const newBranch = async () => {
  const res = await rest('POST', `${api}/branches?branch=mixed-${++branches}&ref=main`);
  if (res.status !== 201) throw new Error(`POST branches → ${res.status} ${JSON.stringify(res.json).slice(0, 200)}`);
};
const hot: { name: string; url: string; reference?: boolean; list?: boolean }[] = [
  // what authentication and the hooks cost with nothing behind them: the ceiling of the rows below
  { name: 'GET /version (for reference: the authenticated pipeline alone)', url: `/api/v4/version`, reference: true },
  { name: `tree of ${big.directory} (100 entries, per_page=100)`, url: `${api}/tree?path=${big.directory}&per_page=100`, list: true },
  { name: 'blob', url: `${api}/blobs/${blobSha}` },
  { name: 'raw blob', url: `${api}/blobs/${blobSha}/raw` },
  { name: 'branch list (21 branches)', url: `${api}/branches`, list: true },
];
for (const [i, s] of ONLY === 'work' ? [] : hot.entries()) {
  if (process.env.BENCH_PICK && !s.name.includes(process.env.BENCH_PICK)) continue;
  const headers = { 'private-token': ROOT_TOKEN };
  const sample = await app.inject({ method: 'GET', url: s.url, headers });
  if (sample.statusCode !== 200) throw new Error(`${s.url} → ${sample.statusCode} ${sample.body.slice(0, 300)}`);
  const { real, floor } = await againstFloor(i, s.url, headers, Buffer.from(sample.rawPayload));
  const miss = s.list ? await missRound(s.url, headers) : null;
  const mixed = s.list ? await mixedRounds(s.url, headers, newBranch) : null;
  const mixedRatio = mixed ? mixed.rps / real.rps : null;
  const ok = real.rps >= 5000 && real.p99 < 10 && (mixedRatio === null || mixedRatio >= 0.5);
  if (!s.reference) failed ||= !ok;
  const variants =
    miss && mixed
      ? [miss.rps.toFixed(0), miss.p50.toFixed(1), miss.p99.toFixed(1), `${mixed.rps.toFixed(0)} (${mixed.writes} writes)`, mixedRatio!.toFixed(2)]
      : ['—', '—', '—', '—', '—'];
  line(
    `| ${s.name} (${sample.rawPayload.length} B) | ${real.rps.toFixed(0)} | ${real.p50} | ${real.p99} | ${floor.rps.toFixed(0)} | ${(real.rps / floor.rps).toFixed(2)} | ${s.reference ? '—' : ok ? 'ok' : 'MISSED'} | ${variants.join(' | ')} |`,
  );
}

/** Median wall time of `fn` over TIMED_RUNS runs (after one warm-up), in ms. */
/** the median of TIMED_RUNS runs after a warm-up; `prepare` (not timed) runs before each */
async function timed(fn: () => Promise<unknown>, prepare?: () => Promise<unknown>): Promise<number> {
  await prepare?.();
  await fn();
  const times: number[] = [];
  for (let r = 0; r < TIMED_RUNS; r++) {
    await prepare?.();
    const s = performance.now();
    await fn();
    times.push(performance.now() - s);
  }
  return median(times, (x) => x);
}

/** a compare is kept per commit ids and diff limits: a diff limit one line lower makes each run a miss, as the first compare of two commits is */
let limitShift = 0;
const newDiffLimits = () => c.settings.update({ diff_max_lines: 50_000 - ++limitShift });

async function download(url: string): Promise<number> {
  const res = await fetch(address + url, { headers: { 'private-token': ROOT_TOKEN }, mode: 'same-origin' }); // not cors: the archive hotlink guard
  if (res.status !== 200) throw new Error(`${url} → ${res.status} ${await res.text()}`);
  let n = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) n += chunk.length;
  return n;
}

const gitRun = (args: string[], cwd?: string) => run('git', args, { env: gitEnv(), cwd, maxBuffer: 1 << 30 });
const cloneDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-bench-clone-'));
let cloneN = 0;
const compareGit = async () => {
  await gitRun(['--git-dir', bare, 'log', '--format=raw', `${base}..${head}`]);
  await gitRun(['--git-dir', bare, 'diff', '-M', '--raw', '-p', base, head]);
};
const work: { name: string; ours: () => Promise<unknown>; prepare?: () => Promise<unknown>; git: () => Promise<unknown>; bare: string }[] = [
  {
    name: 'compare (200 commits, 500 files), first time (not kept)',
    ours: () => download(`${api}/compare?from=${base}&to=${head}`),
    prepare: newDiffLimits,
    git: compareGit,
    bare: '`git log base..head` + `git diff -M -p base head`',
  },
  {
    name: 'compare again (the same two commits: kept)',
    ours: () => download(`${api}/compare?from=${base}&to=${head}`),
    git: compareGit,
    bare: '`git log base..head` + `git diff -M -p base head`',
  },
  {
    name: 'archive.tar.gz of the whole tree',
    ours: () => download(`${api}/archive.tar.gz`),
    git: () => gitRun(['--git-dir', bare, 'archive', '--format=tar.gz', '-o', path.join(cloneDir, 'a.tar.gz'), head]),
    bare: '`git archive --format=tar.gz`',
  },
  {
    name: 'archive.zip of the whole tree',
    ours: () => download(`${api}/archive.zip`),
    git: () => gitRun(['--git-dir', bare, 'archive', '--format=zip', '-o', path.join(cloneDir, 'a.zip'), head]),
    bare: '`git archive --format=zip`',
  },
  {
    name: 'clone over smart HTTP',
    ours: () => gitRun(['clone', '-q', '--bare', `${address}/${owner}/big.git`, path.join(cloneDir, `h${cloneN++}`)]),
    git: () => gitRun(['clone', '-q', '--bare', '--no-local', bare, path.join(cloneDir, `g${cloneN++}`)]),
    bare: '`git clone --bare --no-local <bare dir>`',
  },
];
line('');
line('| work | Hearth ms | bare git ms | ratio | bar (≤ 1.5×) | bare git command |');
line('|---|---|---|---|---|---|');
for (const w of ONLY === 'hot' ? [] : work) {
  const ours = await timed(w.ours, w.prepare);
  const theirs = await timed(w.git);
  const ratio = ours / theirs;
  const ok = ratio <= 1.5;
  failed ||= !ok;
  line(`| ${w.name} | ${ours.toFixed(0)} | ${theirs.toFixed(0)} | ${ratio.toFixed(2)} | ${ok ? 'ok' : 'MISSED'} | ${w.bare} |`);
}

await app.close();
await c.close();
fs.rmSync(dataDir, { recursive: true, force: true });
fs.rmSync(cloneDir, { recursive: true, force: true });
report.save(true);
process.exit(failed ? 1 : 0);
