// npm run bench:search (and the last part of npm run bench): the search API on its cache-miss path (it keeps no
// answers: every request runs its queries or git), each request a term never searched before, median of
// BENCH_TIMED_RUNS over HTTP at one connection.
// Seed: a public repository of 10,000 files and 5,000 commits (bench/big-repo.ts); 2,000 projects in 100 groups (a
// third each public, internal, private) with 50,000 merge requests; a Developer of 10 groups searches.
// Bars: code search (blobs) at most 1.5× the bare git commands doing the same work (`git ls-tree -r` for the paths,
// `git grep -F -i -I -n -z -B2 -A2` for the lines) plus 15 ms; commit search at most 1.5× `git log --grep -F -i`
// plus 15 ms; the global merge request and project searches and a project's merge request search at most 25 ms.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { gitEnv } from '../src/git/command.ts';
import { groupRow, insertAll, memberRow, projectRow, userRow } from '../test/helpers/rows.ts';
import { buildBigRepo } from './big-repo.ts';
import { apiClient, benchContainer, freshBenchDatabase, median, publicProject, Report, ROOT_TOKEN, serve } from './harness.ts';

const run = promisify(execFile);
const RUNS = Number(process.env.BENCH_TIMED_RUNS ?? 21);
const PROJECTS = Number(process.env.BENCH_SEARCH_PROJECTS ?? 2_000);
const MRS = Number(process.env.BENCH_SEARCH_MRS ?? 50_000);
const GROUPS = 100;
const GIT_RATIO = 1.5;
const GIT_SLACK_MS = 15;
const LIST_MS = 25;

await freshBenchDatabase('hearth_bench_search');
const { c, dataDir } = await benchContainer('hearth-bench-search-');
const k = c.db.kysely;
const t0 = performance.now();

// --- the repository ---
const big = await publicProject(c, 'Big', 'big');
const bare = c.repos.pathOf(big);
const repo = await buildBigRepo(bare, gitEnv());
c.repos.repository(big).touchRefs();
const head = execFileSync('git', ['--git-dir', bare, 'rev-parse', 'main'], { env: gitEnv() }).toString().trim();

// --- groups, projects, merge requests; the searching user is a Developer of 10 groups ---
const now = new Date().toISOString();
await insertAll(k, 'users', [userRow('searcher', { name: 'Sam Searcher' }, now)]);
const searcher = (await c.users.byUsername('searcher'))!;
const token = (await c.tokens.create(searcher, { name: 'bench', scopes: ['api'] })).token!;
await insertAll(
  k,
  'namespaces',
  Array.from({ length: GROUPS }, (_, i) => groupRow(`team-${i}`, null, { visibility: ['public', 'internal', 'private'][i % 3] }, now)),
);
const groups = await k.selectFrom('namespaces').select(['id']).where('type', '=', 'Group').orderBy('id').execute();
for (const g of groups)
  await k
    .updateTable('namespaces')
    .set({ traversal_ids: `/${g.id}/` })
    .where('id', '=', g.id)
    .execute();
await insertAll(
  k,
  'projects',
  Array.from({ length: PROJECTS }, (_, i) =>
    projectRow(
      groups[i % GROUPS].id,
      `service-${i}`,
      { creator_id: 1, name: `Service ${i}`, description: `The ${i} service`, visibility: ['public', 'internal', 'private'][i % 3] },
      now,
    ),
  ),
);
const projects = await k.selectFrom('projects').select(['id']).where('path', 'like', 'service-%').orderBy('id').execute();
await insertAll(
  k,
  'members',
  groups.slice(0, 10).map((g) => memberRow('Namespace', g.id, searcher.id, 30, now)),
);
const WORDS = ['fix', 'refactor', 'add', 'remove', 'update', 'cache', 'login', 'parser', 'api', 'docs', 'tests', 'build', 'deploy', 'memory', 'query'];
let seed = 7;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
const base = Date.UTC(2025, 0, 1);
await insertAll(
  k,
  'merge_requests',
  Array.from({ length: MRS }, (_, n) => {
    const p = projects[n % projects.length];
    const at = new Date(base + n * 60_000).toISOString();
    return {
      iid: Math.floor(n / projects.length) + 1,
      project_id: p.id,
      source_project_id: p.id,
      source_branch: `feature-${n}`,
      target_branch: 'main',
      title: `${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)} #${n}`,
      description: `Changes the ${pick(WORDS)} of the ${pick(WORDS)} (${n}).`,
      state: pick(['opened', 'merged', 'closed']),
      draft: 0,
      author_id: searcher.id,
      created_at: at,
      updated_at: at,
    };
  }),
  1000,
);
if (c.db.dialect === 'postgres') await sql`vacuum analyze`.execute(k);
const seeded = (performance.now() - t0) / 1000;

const { app, address } = await serve(c);
const api = apiClient(address, { 'private-token': token });
const asRoot = apiClient(address, { 'private-token': ROOT_TOKEN });
const report = new Report();
const line = (x: string) => report.line(x);
let failed = false;

/** Median ms of RUNS calls of `fn(i)` (after one warm-up). */
async function timed(fn: (i: number) => Promise<unknown>): Promise<number> {
  await fn(-1);
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const s = performance.now();
    await fn(i);
    times.push(performance.now() - s);
  }
  return median(times, (x) => x);
}
const ok200 = async (p: Promise<{ status: number; json: any }>) => {
  const r = await p;
  if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(r.json)}`);
  return r.json;
};
const gitRun = (args: string[]) => run('git', ['--git-dir', bare, ...args], { env: gitEnv(), maxBuffer: 1 << 30 });

line(
  `Hearth search bench — ${repo.files} files and ${repo.commits} commits; ${PROJECTS} projects in ${GROUPS} groups, ${MRS} merge requests (seeded in ${seeded.toFixed(1)} s); median of ${RUNS} requests at one connection, each a term not searched before; ${c.db.dialect}, node ${process.version}`,
);
line('');
line(`| search | Hearth ms | bare git ms | bar | result | rows |`);
line('|---|---|---|---|---|---|');

// each file's lines hold "line <l> of file <i>": "of file <i>:" finds exactly one file's eight lines (one chunk)
const blobTerm = (i: number) => `of file ${(i + 1) * 37}:`;
const blobs = await timed((i) => ok200(asRoot('GET', `/api/v4/projects/${big.id}/search?scope=blobs&search=${encodeURIComponent(blobTerm(i))}`)));
const blobRows = (await ok200(asRoot('GET', `/api/v4/projects/${big.id}/search?scope=blobs&search=${encodeURIComponent(blobTerm(0))}`))).length;
const blobGit = await timed(async (i) => {
  await gitRun(['ls-tree', '-r', '-z', '--full-tree', head]);
  await gitRun(['grep', '-F', '-i', '-I', '-n', '-z', '--before-context=2', '--after-context=2', '-e', blobTerm(i), head, '--']).catch(() => null);
});
const blobOk = blobs <= blobGit * GIT_RATIO + GIT_SLACK_MS;
failed ||= !blobOk;
line(
  `| project blobs, \`${blobTerm(0)}\` | ${blobs.toFixed(1)} | ${blobGit.toFixed(1)} | ≤ ${GIT_RATIO}× git + ${GIT_SLACK_MS} ms | ${blobOk ? 'ok' : 'MISSED'} | ${blobRows} |`,
);

// commit messages are "Commit number <n>": each term one commit
const commitTerm = (i: number) => `number ${4000 + i + 1}`;
const commits = await timed((i) => ok200(asRoot('GET', `/api/v4/projects/${big.id}/search?scope=commits&search=${encodeURIComponent(commitTerm(i))}`)));
const commitGit = await timed((i) =>
  gitRun(['log', '--format=%H', '--regexp-ignore-case', '--fixed-strings', `--grep=${commitTerm(i)}`, '--max-count=100', head, '--']),
);
const commitOk = commits <= commitGit * GIT_RATIO + GIT_SLACK_MS;
failed ||= !commitOk;
line(
  `| project commits, \`${commitTerm(0)}\` | ${commits.toFixed(1)} | ${commitGit.toFixed(1)} | ≤ ${GIT_RATIO}× git + ${GIT_SLACK_MS} ms | ${commitOk ? 'ok' : 'MISSED'} | |`,
);

const lists: { name: string; url: (i: number) => string }[] = [
  {
    name: 'global merge_requests (one word, a Developer of 10 groups)',
    url: (i) => `/api/v4/search?scope=merge_requests&search=${['parser', 'login', 'memory', 'deploy'][i & 3]}&page=${1 + (i >> 2)}`,
  },
  { name: 'global merge_requests, a rare word (one row)', url: (i) => `/api/v4/search?scope=merge_requests&search=${encodeURIComponent(`(${1000 + i})`)}` },
  { name: 'global projects (one word)', url: (i) => `/api/v4/search?scope=projects&search=${encodeURIComponent(`${100 + i} service`)}` },
  {
    name: 'project merge_requests',
    url: (i) => `/api/v4/projects/${projects[3].id}/search?scope=merge_requests&search=${['parser', 'login', 'memory', 'deploy'][i & 3]}&page=${1 + (i >> 2)}`,
  },
];
for (const l of lists) {
  const ms = await timed((i) => ok200(api('GET', l.url(Math.max(i, 0)))));
  const rows = (await ok200(api('GET', l.url(0)))).length;
  const ok = ms <= LIST_MS;
  failed ||= !ok;
  line(`| ${l.name} | ${ms.toFixed(1)} | | ≤ ${LIST_MS} ms | ${ok ? 'ok' : 'MISSED'} | ${rows} |`);
}

await app.close();
await c.close();
fs.rmSync(dataDir, { recursive: true, force: true });
report.save(true);
process.exit(failed ? 1 : 0);
