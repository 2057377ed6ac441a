// npm run bench:merge-requests: seeds 100,000 merge requests over 1,000 projects (one top-level group with
// 20 subgroups of 50 projects), 50 group labels, 20 group milestones and 2,000 users with bulk inserts,
// then measures the merge request lists with autocannon next to a static payload of the same size.
// Bar: ratio ≥ 0.5 and p99 < 20 ms at 10 connections. Also the uncached path: a query no cache has seen,
// and the first read after a write (median of 21 in-process requests each).
import { groupRow, insertAll, memberRow, projectRow, userRow } from '../test/helpers/rows.ts';
import fs from 'node:fs';
import { sql } from 'kysely';
import { userActor } from '../src/domain/access/actor.ts';
import type { MergeRequestFilters, MergeRequestListScope } from '../src/domain/merge-requests/merge-requests-query.ts';
import {
  benchContainer,
  CONNECTIONS,
  DURATION,
  freshBenchDatabase,
  listTableHeader,
  median,
  publicProject,
  Report,
  ROOT_TOKEN,
  ROUNDS,
  serve,
} from './harness.ts';

const MRS = Number(process.env.BENCH_MRS ?? 100_000);
const PROJECTS = Number(process.env.BENCH_MR_PROJECTS ?? 1_000);
const USERS = Number(process.env.BENCH_MR_USERS ?? 2_000);
const LABELS = 50;
const MILESTONES = 20;
const SUBGROUPS = 20;
const BAR = { ratio: 0.5, p99: 20 };
/** open merge requests into the branch a commit goes to, and the bar of that commit's p99 */
const OPEN_INTO = Number(process.env.BENCH_MR_OPEN_INTO ?? 5_000);
const COMMITS = Number(process.env.BENCH_MR_COMMITS ?? 40);
const COMMIT_BAR_MS = 300;

// PostgreSQL: a database of its own, made afresh (the seed assumes empty tables).
await freshBenchDatabase('hearth_bench_mr');

const { c, dataDir } = await benchContainer('hearth-bench-mr-');
const k = c.db.kysely;
const t0 = performance.now();
const base = Date.UTC(2025, 0, 1);
const iso = (ms: number) => new Date(ms).toISOString();
/** a deterministic pseudo-random sequence (the same data on every run) */
let seed = 42;
const rand = () => {
  seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
  return seed / 0x7fffffff;
};
const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];

// --- users ---
const now = iso(base);
await insertAll(
  k,
  'users',
  Array.from({ length: USERS }, (_, j) => userRow(`mr${j}`, { name: `MR User ${j}` }, now)),
);
const userIds = (await k.selectFrom('users').select('id').where('username', 'like', 'mr%').orderBy('id').execute()).map((u) => u.id);
const viewer = (await c.users.byUsername('mr1'))!;
const viewerToken = (await c.tokens.create(viewer, { name: 'bench', scopes: ['api'] })).token!;

// --- one top-level group, 20 subgroups, 1,000 projects (a third each public, internal, private) ---
const group = (path: string, parent: { id: number; full_path: string } | null) => groupRow(path, parent, { visibility: 'internal' }, now);
const top = await k.insertInto('namespaces').values(group('mr-bench', null)).returningAll().executeTakeFirstOrThrow();
await k
  .updateTable('namespaces')
  .set({ traversal_ids: `/${top.id}/` })
  .where('id', '=', top.id)
  .execute();
const topRow = { ...top, traversal_ids: `/${top.id}/` };
await insertAll(
  k,
  'namespaces',
  Array.from({ length: SUBGROUPS }, (_, i) => group(`team-${i}`, topRow)),
);
await sql`update namespaces set traversal_ids = ${topRow.traversal_ids} || id || '/' where parent_id = ${top.id}`.execute(k);
const subgroups = await k.selectFrom('namespaces').select(['id', 'full_path']).where('parent_id', '=', top.id).orderBy('id').execute();
const visibilities = ['public', 'internal', 'private'];
await insertAll(
  k,
  'projects',
  Array.from({ length: PROJECTS }, (_, i) =>
    projectRow(subgroups[i % SUBGROUPS].id, `service-${i}`, { creator_id: 1, name: `Service ${i}`, visibility: visibilities[i % 3] }, now),
  ),
);
const projects = await k.selectFrom('projects').select(['id', 'namespace_id', 'visibility']).where('name', 'like', 'Service %').orderBy('id').execute();
// The viewer: a Developer of two subgroups (100 projects) and a Reporter of 50 private projects elsewhere.
const member = (type: 'Project' | 'Namespace', id: number, level: number) => memberRow(type, id, viewer.id, level, now);
const privates = projects.filter((p) => p.visibility === 'private' && p.namespace_id !== subgroups[0].id && p.namespace_id !== subgroups[1].id);
await insertAll(k, 'members', [
  member('Namespace', subgroups[0].id, 30),
  member('Namespace', subgroups[1].id, 30),
  ...privates.slice(0, 50).map((p) => member('Project', p.id, 20)),
]);

// --- 50 labels and 20 milestones of the top-level group (every project inherits them) ---
await insertAll(
  k,
  'labels',
  Array.from({ length: LABELS }, (_, i) => ({
    project_id: null,
    group_id: top.id,
    title: `label-${i}`,
    color: '#428bca',
    description: `Label ${i}`,
    priority: null,
    created_at: now,
    updated_at: now,
  })),
);
const labelIds = (await k.selectFrom('labels').select('id').where('group_id', '=', top.id).orderBy('id').execute()).map((l) => l.id);
await insertAll(
  k,
  'milestones',
  Array.from({ length: MILESTONES }, (_, i) => ({
    iid: i + 1,
    project_id: null,
    group_id: top.id,
    title: `v${i}.0`,
    description: null,
    state: i < 15 ? 'closed' : 'active',
    due_date: iso(base + (i + 1) * 30 * 86_400_000).slice(0, 10),
    start_date: iso(base + i * 30 * 86_400_000).slice(0, 10),
    created_at: now,
    updated_at: now,
  })),
);
const milestoneIds = (await k.selectFrom('milestones').select('id').where('group_id', '=', top.id).orderBy('id').execute()).map((m) => m.id);

// --- 100,000 merge requests, 100 a project, with assignees, reviewers and labels ---
const WORDS = ['fix', 'refactor', 'add', 'remove', 'update', 'cache', 'login', 'parser', 'api', 'docs', 'tests', 'build', 'deploy', 'memory', 'query'];
const STATES = ['opened', 'opened', 'merged', 'merged', 'closed'];
const perProject = Math.ceil(MRS / projects.length);
const mrs: any[] = [];
for (let n = 0; n < MRS; n++) {
  const project = projects[n % projects.length];
  const created = base + n * 60_000;
  const state = pick(STATES);
  const title = `${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)} #${n}`;
  mrs.push({
    iid: Math.floor(n / projects.length) + 1,
    project_id: project.id,
    source_project_id: project.id,
    source_branch: `feature-${n}`,
    target_branch: rand() < 0.9 ? 'main' : 'stable',
    title: rand() < 0.1 ? `Draft: ${title}` : title,
    description: `Changes the ${pick(WORDS)} of the ${pick(WORDS)} (${n}).`,
    state,
    draft: 0,
    author_id: pick(userIds),
    milestone_id: rand() < 0.6 ? pick(milestoneIds) : null,
    merge_user_id: state === 'merged' ? pick(userIds) : null,
    merged_at: state === 'merged' ? iso(created + 3_600_000) : null,
    closed_at: state === 'closed' ? iso(created + 3_600_000) : null,
    created_at: iso(created),
    updated_at: iso(created + Math.floor(rand() * 30 * 86_400_000)),
  });
}
for (const m of mrs) m.draft = m.title.startsWith('Draft:') ? 1 : 0;
await insertAll(k, 'merge_requests', mrs, 1000);
const mrIds = (await k.selectFrom('merge_requests').select('id').orderBy('id').execute()).map((m) => m.id);
const assignees: any[] = [];
const reviewers: any[] = [];
const mrLabels: any[] = [];
for (const id of mrIds) {
  if (rand() < 0.7) assignees.push({ merge_request_id: id, user_id: pick(userIds), created_at: now });
  if (rand() < 0.5) reviewers.push({ merge_request_id: id, user_id: pick(userIds), created_at: now });
  const n = Math.floor(rand() * 4);
  const chosen = new Set<number>();
  for (let j = 0; j < n; j++) chosen.add(pick(labelIds));
  for (const l of chosen) mrLabels.push({ merge_request_id: id, label_id: l, created_at: now });
}
await insertAll(k, 'merge_request_assignees', assignees, 5000);
await insertAll(k, 'merge_request_reviewers', reviewers, 5000);
await insertAll(k, 'merge_request_labels', mrLabels, 5000);
if (c.db.dialect === 'postgres') await sql`analyze`.execute(k);
const seeded = (performance.now() - t0) / 1000;

/** a parameter inlined for EXPLAIN (SQLite's plan of `?` is the same; PostgreSQL plans literals best) */
let qi = 0;
const literal = (v: unknown) => (typeof v === 'number' ? String(v) : `'${String(v).replace(/'/g, "''")}'`);
/** SQLite's plan rows nest by parent id */
const depth = (rows: { id: number; parent: number }[], r: { id: number; parent: number }): number => {
  let d = 0;
  for (let p = r.parent; p; p = rows.find((x) => x.id === p)?.parent ?? 0) d++;
  return d;
};

// --- the scenarios ---
const inMine = projects.find((p) => p.namespace_id === subgroups[0].id)!;
const inMineRow = await k.selectFrom('projects').selectAll().where('id', '=', inMine.id).executeTakeFirstOrThrow();
const scenarios: { name: string; url: string; where: MergeRequestListScope; filters: MergeRequestFilters }[] = [
  {
    name: 'GET /projects/:id/merge_requests?state=opened&labels=label-3&target_branch=main (3 filters)',
    url: `/api/v4/projects/${inMine.id}/merge_requests?state=opened&labels=label-3&target_branch=main`,
    where: { kind: 'project', project: inMineRow },
    filters: { state: 'opened', labels: ['label-3'], targetBranch: 'main' },
  },
  {
    name: 'GET /merge_requests?scope=all&labels=label-7&state=opened&order_by=updated_at',
    url: '/api/v4/merge_requests?scope=all&labels=label-7&state=opened&order_by=updated_at',
    where: { kind: 'all' },
    filters: { scope: 'all', labels: ['label-7'], state: 'opened', orderBy: 'updated_at' },
  },
  {
    name: 'GET /merge_requests?scope=all&search=cache login',
    url: '/api/v4/merge_requests?scope=all&search=cache%20login',
    where: { kind: 'all' },
    filters: { scope: 'all', search: 'cache login' },
  },
  {
    name: 'GET /groups/:id/merge_requests?state=merged&milestone=v16.0',
    url: `/api/v4/groups/${top.id}/merge_requests?state=merged&milestone=v16.0`,
    where: { kind: 'group', group: topRow, nonArchived: true },
    filters: { state: 'merged', milestone: 'v16.0' },
  },
];

// BENCH_EXPLAIN=1: the plans of each scenario's page query and count (as the viewer), then stop.
if (process.env.BENCH_EXPLAIN) {
  const actor = userActor(viewer, { credential: 'personal_access_token' });
  // and the plain lists each index of migration 016 is for
  const plain: typeof scenarios = [
    { name: 'GET /merge_requests (created_by_me)', url: '', where: { kind: 'all' }, filters: { scope: 'created_by_me' } },
    {
      name: 'GET /merge_requests?scope=all&state=opened&order_by=updated_at',
      url: '',
      where: { kind: 'all' },
      filters: { scope: 'all', state: 'opened', orderBy: 'updated_at' },
    },
    { name: 'GET /projects/:id/merge_requests', url: '', where: { kind: 'project', project: inMineRow }, filters: {} },
    { name: 'GET /merge_requests?scope=all&milestone=v16.0', url: '', where: { kind: 'all' }, filters: { scope: 'all', milestone: 'v16.0' } },
  ];
  for (const s of [...scenarios, ...plain]) {
    const q = await c.mergeRequestsQuery.list(actor, s.where, s.filters);
    const page = q.limit(21).offset(0).compile();
    const count = (q as any).clearSelect().clearOrderBy().select(sql.lit(1).as('one')).limit(10_001).compile();
    for (const [what, compiled] of [
      ['page', page],
      ['count', count],
    ] as const) {
      const prefix = c.db.dialect === 'postgres' ? 'explain (analyze, costs off, timing off) ' : 'explain query plan ';
      const runs: number[] = [];
      for (let r = 0; r < 7; r++) {
        const t1 = performance.now();
        await k.executeQuery(compiled);
        runs.push(performance.now() - t1);
      }
      const ran = median(runs, (x) => x);
      const t = performance.now();
      const rows = (
        await sql
          .raw(prefix + compiled.sql.replace(/\$(\d+)|\?/g, (_m: string, n: string | undefined) => literal(compiled.parameters[n ? Number(n) - 1 : qi++])))
          .execute(k)
      ).rows;
      qi = 0;
      console.log(`\n## ${s.name} — ${what} (runs in ${ran.toFixed(1)} ms, median of 7; explained in ${(performance.now() - t).toFixed(1)} ms)`);
      for (const r of rows as any[]) console.log(r['QUERY PLAN'] ?? `${'  '.repeat(depth(rows as any[], r))}${r.detail}`);
    }
  }
  await c.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
}

const { app, listScenario } = await serve(c);
const report = new Report();
const line = (x: string) => report.line(x);
line(
  `Hearth merge requests bench — ${MRS} merge requests over ${projects.length} projects (${perProject} each), ${LABELS} labels, ${MILESTONES} milestones, ${USERS} users (seeded in ${seeded.toFixed(1)} s), viewer a member of 150 projects, ${CONNECTIONS} connections, median of ${ROUNDS} alternating ${DURATION}s rounds, ${c.db.dialect}, node ${process.version}`,
);
for (const l of listTableHeader(BAR)) line(l);
let failed = false;
const headers = { 'private-token': viewerToken };
for (const [i, s] of scenarios.entries()) {
  // the first read after a write: a merge request changes, the same URL is read again
  const write = (r: number) => k.updateTable('merge_requests').set({ user_notes_count: r }).where('id', '=', mrIds[r]).execute();
  const { row, ok } = await listScenario(i, s, headers, BAR, write, 'MRs');
  failed ||= !ok;
  line(row);
}

// --- a commit through the API into a branch with OPEN_INTO open merge requests, beside one into a branch with none ---
const busy = await publicProject(c, 'Busy', 'busy');
const root = { 'private-token': ROOT_TOKEN };
const commit = async (branch: string, n: number, start?: string) => {
  const t1 = performance.now();
  const r = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${busy.id}/repository/commits`,
    headers: root,
    payload: {
      branch,
      ...(start ? { start_branch: start } : {}),
      commit_message: `Commit ${n}`,
      actions: [{ action: 'create', file_path: `${branch}/${n}.txt`, content: `${n}\n` }],
    },
  });
  if (r.statusCode !== 201) throw new Error(`commit: ${r.statusCode} ${r.body}`);
  return performance.now() - t1;
};
await commit('main', 0);
await commit('quiet', 0, 'main');
await insertAll(
  k,
  'merge_requests',
  Array.from({ length: OPEN_INTO }, (_, n) => ({
    iid: n + 1,
    project_id: busy.id,
    source_project_id: busy.id,
    source_branch: `topic-${n}`,
    target_branch: 'main',
    title: `Topic ${n}`,
    description: null,
    state: 'opened',
    draft: 0,
    author_id: 1,
    merge_status: 'can_be_merged',
    created_at: iso(base + n * 1000),
    updated_at: iso(base + n * 1000),
  })),
  1000,
);
if (c.db.dialect === 'postgres') await sql`analyze merge_requests`.execute(k);
const intoBusy: number[] = [];
const intoQuiet: number[] = [];
for (let n = 1; n <= COMMITS; n++) {
  intoBusy.push(await commit('main', n));
  intoQuiet.push(await commit('quiet', n));
}
const t2 = performance.now();
await c.merges.idle();
const drained = performance.now() - t2;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const commitOk = pct(intoBusy, 99) <= COMMIT_BAR_MS;
failed ||= !commitOk;
line('');
line(`| commit through the API (${COMMITS} in a row, in-process) | p50 ms | p99 ms | bar (p99 ≤ ${COMMIT_BAR_MS} ms) |`);
line('|---|---|---|---|');
line(
  `| into main, ${OPEN_INTO} open merge requests into it | ${pct(intoBusy, 50).toFixed(0)} | ${pct(intoBusy, 99).toFixed(0)} | ${commitOk ? 'ok' : 'MISSED'} |`,
);
line(`| into a branch no merge request targets | ${pct(intoQuiet, 50).toFixed(0)} | ${pct(intoQuiet, 99).toFixed(0)} | — |`);
line(`| (the background refreshes of those commits drained ${drained.toFixed(0)} ms after the last) | | | |`);

await app.close();
await c.close();
fs.rmSync(dataDir, { recursive: true, force: true });
report.save(true);
process.exit(failed ? 1 : 0);
