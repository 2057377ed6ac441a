// npm run bench:issues: seeds 100,000 issues over 1,000 projects (one top-level group with 20 subgroups of 50
// projects; one project of 5,000 issues, the others about 95 each), 50 group labels and 10 labels of each project,
// 20 group milestones and 2,000 users with bulk inserts, then measures the issue lists of a viewer who is a member
// of 500 projects. Titles and descriptions draw their words from a vocabulary of 50,000 with Zipf's frequencies,
// so a search term can be common, typical or rare.
// Bars (the issue tracker's acceptance), on the cache-miss path: every request a query no cache has seen (other
// labels, another page, another term of the same frequency), median of 41 in-process requests: a project's list
// with 2 labels < 10 ms, the global list of the 500-project member < 20 ms, a search < 50 ms (GitLab's full-text
// search of issues: PostgreSQL the issues' tsvector with its GIN index, SQLite the FTS5 table of words, migration
// 037; a term is a word of the vocabulary, which the search also finds as the beginning of longer ones). Also the hot figures
// with autocannon against the floor (ratio ≥ 0.5, p99 < 20 ms at 10 connections), the first read after a write,
// the ignored-parameter miss and the mixed load of the other list benches. Exits non-zero when a bar is missed.
// BENCH_ONLY=miss: the cache-miss table alone. BENCH_EXPLAIN=1 prints the plan of each scenario's page and count queries, with their times, then stops.
import { groupRow, insertAll, memberRow, projectRow, userRow } from '../test/helpers/rows.ts';
import fs from 'node:fs';
import { CompiledQuery, sql } from 'kysely';
import { observeStatements, type ObservedStatement } from '../src/db/statement-observers.ts';
import { userActor } from '../src/domain/access/actor.ts';
import type { IssueFilters, IssueListScope } from '../src/domain/issues/issues-query.ts';
import { benchContainer, CONNECTIONS, DURATION, freshBenchDatabase, listTableHeader, median, Report, ROUNDS, serve } from './harness.ts';

const ISSUES = Number(process.env.BENCH_ISSUES ?? 100_000);
const PROJECTS = Number(process.env.BENCH_ISSUE_PROJECTS ?? 1_000);
const USERS = Number(process.env.BENCH_ISSUE_USERS ?? 2_000);
/** the issues of the one big project the project list is measured on */
const BIG = Math.min(5_000, Math.floor(ISSUES / 10));
const GROUP_LABELS = 50;
const PROJECT_LABELS = ['bug', 'feature', 'frontend', 'backend', 'documentation', 'security', 'performance', 'ux', 'priority::1', 'priority::2'];
const MILESTONES = 20;
const SUBGROUPS = 20;
const VOCABULARY = 50_000;
const HOT_BAR = { ratio: 0.5, p99: 20 };
/** in-process requests per cache-miss figure */
const MISSES = Number(process.env.BENCH_ISSUE_MISSES ?? 41);

await freshBenchDatabase('hearth_bench_issues');

const { c, dataDir } = await benchContainer('hearth-bench-issues-');
const k = c.db.kysely;
const t0 = performance.now();
const base = Date.UTC(2025, 0, 1);
const iso = (ms: number) => new Date(ms).toISOString();
let seed = 42;
const rand = () => {
  // in 32-bit integer arithmetic (a float product past 2^53 loses the low bits, and the sequence its period)
  seed = (Math.imul(seed, 1_103_515_245) + 12_345) & 0x7fffffff;
  return seed / 0x7fffffff;
};
const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];

// --- the vocabulary: real words first (the most frequent), then coined ones; Zipf's law (s = 1) ---
const REAL = (
  'the when error page user login fails after update with from cannot should not data api button save list crash ' +
  'request server client timeout search filter import export settings profile issue merge branch pipeline job ' +
  'cache memory query database migration test flaky build deploy release version upgrade broken missing wrong ' +
  'slow loading view mobile browser firefox chrome safari display layout label milestone notification email ' +
  'token permission access group project repository commit diff comment review approve password session ' +
  'redirect link image upload download file size limit count total empty null undefined exception stack trace ' +
  'log warning config option default value format date time zone locale translation unicode encoding'
).split(' ');
/** coined words: 2–4 syllables of a consonant and a vowel (about 2,000 distinct trigrams, as a language has) */
const CONSONANTS = 'bcdfghjklmnprstvwz';
const VOWELS = 'aeiou';
const coined = new Set<string>(REAL);
while (coined.size < VOCABULARY) {
  const syllables = 2 + Math.floor(rand() * 3);
  let w = '';
  for (let j = 0; j < syllables; j++) w += CONSONANTS[Math.floor(rand() * CONSONANTS.length)] + VOWELS[Math.floor(rand() * VOWELS.length)];
  if (rand() < 0.3) w += CONSONANTS[Math.floor(rand() * CONSONANTS.length)];
  coined.add(w);
}
const vocabulary = [...coined];
const cumulative: number[] = [];
{
  let sum = 0;
  for (let r = 1; r <= vocabulary.length; r++) cumulative.push((sum += 1 / r));
}
const word = () => {
  const x = rand() * cumulative[cumulative.length - 1];
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return vocabulary[lo];
};
const words = (n: number) => Array.from({ length: n }, word).join(' ');

// --- users ---
const now = iso(base);
await insertAll(
  k,
  'users',
  Array.from({ length: USERS }, (_, j) => userRow(`is${j}`, { name: `Issue User ${j}` }, now)),
);
const userIds = (await k.selectFrom('users').select('id').where('username', 'like', 'is%').orderBy('id').execute()).map((u) => u.id);
const viewer = (await c.users.byUsername('is1'))!;
const viewerToken = (await c.tokens.create(viewer, { name: 'bench', scopes: ['api'] })).token!;

// --- one top-level group, 20 subgroups, 1,000 projects (a third each public, internal, private) ---
const group = (path: string, parent: { id: number; full_path: string } | null) => groupRow(path, parent, { visibility: 'internal' }, now);
const top = await k.insertInto('namespaces').values(group('issue-bench', null)).returningAll().executeTakeFirstOrThrow();
await k
  .updateTable('namespaces')
  .set({ traversal_ids: `/${top.id}/` })
  .where('id', '=', top.id)
  .execute();
const topRow = { ...top, traversal_ids: `/${top.id}/` };
await insertAll(
  k,
  'namespaces',
  Array.from({ length: SUBGROUPS }, (_, i) => group(`squad-${i}`, topRow)),
);
await sql`update namespaces set traversal_ids = ${topRow.traversal_ids} || id || '/' where parent_id = ${top.id}`.execute(k);
const subgroups = await k.selectFrom('namespaces').select(['id', 'full_path']).where('parent_id', '=', top.id).orderBy('id').execute();
const visibilities = ['public', 'internal', 'private'];
await insertAll(
  k,
  'projects',
  Array.from({ length: PROJECTS }, (_, i) =>
    projectRow(subgroups[i % SUBGROUPS].id, `app-${i}`, { creator_id: 1, name: `App ${i}`, visibility: visibilities[i % 3] }, now),
  ),
);
const projects = await k.selectFrom('projects').select(['id', 'namespace_id', 'visibility']).where('name', 'like', 'App %').orderBy('id').execute();
// The viewer, a member of 500 projects: a Developer of four subgroups (200 projects), a Reporter of 150 private
// projects elsewhere (confidential issues too) and a Guest of 150 more (of every visibility: no confidential issues).
const mySubgroups = new Set(subgroups.slice(0, 4).map((g) => g.id));
const elsewhere = projects.filter((p) => !mySubgroups.has(p.namespace_id));
const reporterOf = elsewhere.filter((p) => p.visibility === 'private').slice(0, 150);
const guestOf = elsewhere.filter((p) => !reporterOf.includes(p)).slice(0, 150);
const member = (type: 'Project' | 'Namespace', id: number, level: number) => memberRow(type, id, viewer.id, level, now);
await insertAll(k, 'members', [
  ...[...mySubgroups].map((id) => member('Namespace', id, 30)),
  ...reporterOf.map((p) => member('Project', p.id, 20)),
  ...guestOf.map((p) => member('Project', p.id, 10)),
]);
const memberOf = projects.filter((p) => mySubgroups.has(p.namespace_id)).length + reporterOf.length + guestOf.length;

// --- labels: 50 of the top-level group (every project inherits them), 10 of each project; 20 group milestones ---
const labelRow = (title: string, owner: { project_id: number | null; group_id: number | null }) => ({
  ...owner,
  title,
  color: '#428bca',
  description: null,
  priority: null,
  created_at: now,
  updated_at: now,
});
await insertAll(
  k,
  'labels',
  Array.from({ length: GROUP_LABELS }, (_, i) => labelRow(`team::${i}`, { project_id: null, group_id: top.id })),
);
const groupLabels = (await k.selectFrom('labels').select(['id', 'title']).where('group_id', '=', top.id).orderBy('id').execute()).map((l) => l.id);
await insertAll(
  k,
  'labels',
  projects.flatMap((p) => PROJECT_LABELS.map((title) => labelRow(title, { project_id: p.id, group_id: null }))),
  2000,
);
const projectLabels = new Map<number, number[]>();
for (const l of await k.selectFrom('labels').select(['id', 'project_id']).where('project_id', 'is not', null).orderBy('id').execute()) {
  const list = projectLabels.get(l.project_id!) ?? [];
  list.push(l.id);
  projectLabels.set(l.project_id!, list);
}
await insertAll(
  k,
  'milestones',
  Array.from({ length: MILESTONES }, (_, i) => ({
    iid: i + 1,
    project_id: null,
    group_id: top.id,
    title: `${2025 + Math.floor(i / 4)}-Q${(i % 4) + 1}`,
    description: null,
    state: i < 15 ? 'closed' : 'active',
    due_date: iso(base + (i + 1) * 30 * 86_400_000).slice(0, 10),
    start_date: iso(base + i * 30 * 86_400_000).slice(0, 10),
    created_at: now,
    updated_at: now,
  })),
);
const milestoneIds = (await k.selectFrom('milestones').select('id').where('group_id', '=', top.id).orderBy('id').execute()).map((m) => m.id);

// --- 100,000 issues: the big project's 5,000, the rest round the other projects ---
const big = projects.find((p) => mySubgroups.has(p.namespace_id) && p.visibility === 'private')!;
const others = projects.filter((p) => p !== big);
const iids = new Map<number, number>();
const issues: any[] = [];
for (let n = 0; n < ISSUES; n++) {
  const project = n % Math.floor(ISSUES / BIG) === 0 ? big : others[n % others.length];
  const iid = (iids.get(project.id) ?? 0) + 1;
  iids.set(project.id, iid);
  const created = base + n * 5 * 60_000;
  const closed = rand() < 0.4;
  issues.push({
    project_id: project.id,
    iid,
    title: words(4 + Math.floor(rand() * 6)),
    description: rand() < 0.1 ? null : words(20 + Math.floor(rand() * 60)),
    state: closed ? 'closed' : 'opened',
    // a fiftieth by the viewer, the others by anyone
    author_id: rand() < 0.02 ? viewer.id : pick(userIds),
    milestone_id: rand() < 0.6 ? pick(milestoneIds) : null,
    confidential: rand() < 0.05 ? 1 : 0,
    due_date: rand() < 0.3 ? iso(created + Math.floor(rand() * 60) * 86_400_000).slice(0, 10) : null,
    closed_at: closed ? iso(created + 86_400_000) : null,
    created_at: iso(created),
    updated_at: iso(created + Math.floor(rand() * 30 * 86_400_000)),
  });
}
await insertAll(k, 'issues', issues, 500);
const issueRows = await k.selectFrom('issues').select(['id', 'project_id']).orderBy('id').execute();
const assignees: any[] = [];
const issueLabels: any[] = [];
/** group labels by Zipf's law too: the first in a sixth of the issues, the last in a few hundred */
const groupLabel = () => groupLabels[Math.min(GROUP_LABELS - 1, Math.floor(GROUP_LABELS ** rand()) - 1)];
for (const { id, project_id } of issueRows) {
  const r = rand();
  if (r < 0.02) assignees.push({ issue_id: id, user_id: viewer.id, created_at: now });
  else if (r < 0.7) assignees.push({ issue_id: id, user_id: pick(userIds), created_at: now });
  if (rand() < 0.1) assignees.push({ issue_id: id, user_id: pick(userIds), created_at: now });
  const chosen = new Set<number>();
  const n = Math.floor(rand() * 5);
  for (let j = 0; j < n; j++) chosen.add(rand() < 0.5 ? groupLabel() : pick(projectLabels.get(project_id)!));
  for (const label_id of chosen) issueLabels.push({ issue_id: id, label_id, project_id, created_at: now });
}
const seenAssignee = new Set<string>();
await insertAll(
  k,
  'issue_assignees',
  assignees.filter((a) => !seenAssignee.has(`${a.issue_id}:${a.user_id}`) && seenAssignee.add(`${a.issue_id}:${a.user_id}`)),
  5000,
);
await insertAll(k, 'issue_labels', issueLabels, 5000);
// as autovacuum leaves a table that has settled (visibility map set, statistics read), not its first minute after a bulk load
if (c.db.dialect === 'postgres') await sql`vacuum analyze`.execute(k);
const seeded = (performance.now() - t0) / 1000;

// --- search terms by how many issues hold them (titles and descriptions, as whole words) ---
const documents = new Map<string, number>();
for (const i of issues) for (const w of new Set(`${i.title} ${i.description ?? ''}`.split(' '))) documents.set(w, (documents.get(w) ?? 0) + 1);
const termsIn = (min: number, max: number, coinedOnly = false) =>
  vocabulary.filter((w) => (documents.get(w) ?? 0) >= min && (documents.get(w) ?? 0) <= max && (!coinedOnly || !REAL.includes(w)));
const common = termsIn(ISSUES * 0.1, ISSUES * 0.4).filter((w) => w.length >= 3);
const typical = termsIn(ISSUES * 0.005, ISSUES * 0.02, true);
const rare = termsIn(3, 20, true);
const projectTerms = termsIn(ISSUES * 0.02, ISSUES * 0.1).filter((w) => w.length >= 3);
for (const [what, list] of [
  ['common', common],
  ['typical', typical],
  ['rare', rare],
  ['project', projectTerms],
] as const)
  if (list.length < 3) throw new Error(`too few ${what} search terms (${list.length})`);
const cycle = <T>(xs: readonly T[], n: number) => xs[n % xs.length];
const df = (w: string) => documents.get(w) ?? 0;

// --- the scenarios ---
const bigRow = await k.selectFrom('projects').selectAll().where('id', '=', big.id).executeTakeFirstOrThrow();
const actor = userActor(viewer, { credential: 'personal_access_token' });
const bigAccess = (await c.issues.project(actor, big.id)).access;
const bigNamespace = await k.selectFrom('namespaces').selectAll().where('id', '=', bigRow.namespace_id).executeTakeFirstOrThrow();
const projectWhere: IssueListScope = { kind: 'project', project: bigRow, namespace: bigNamespace, access: bigAccess };
const titles = PROJECT_LABELS;
/** two labels: one of the project's, one of the group's (commoner ones first) */
const labelPair = (n: number): [string, string] => [titles[n % titles.length], `team::${Math.floor(n / titles.length) % 12}`];
interface Scenario {
  name: string;
  bar: number;
  /** the n-th URL of the cache-miss path (n ≥ 0 never repeats); `hot` is url(0) */
  url: (n: number) => string;
  where: IssueListScope;
  filters: (n: number) => IssueFilters;
  /** the number of issues the term is in (searches) */
  note?: string;
}
const scenarios: Scenario[] = [
  {
    name: 'GET /projects/:id/issues?labels=<project label>,<group label>&per_page=20 (5,000 issues)',
    bar: 10,
    url: (n) => `/api/v4/projects/${big.id}/issues?labels=${encodeURIComponent(labelPair(n).join(','))}&per_page=20`,
    where: projectWhere,
    filters: (n) => ({ scope: 'all', labels: labelPair(n) }),
  },
  {
    name: 'GET /issues?scope=all (member of 500 projects)',
    bar: 20,
    url: (n) => `/api/v4/issues?scope=all&per_page=20&page=${(n % 25) + 1}`,
    where: { kind: 'all' },
    filters: () => ({ scope: 'all' }),
  },
  {
    name: 'GET /issues?scope=all&state=opened&order_by=updated_at',
    bar: 20,
    url: (n) => `/api/v4/issues?scope=all&state=opened&order_by=updated_at&per_page=20&page=${(n % 25) + 1}`,
    where: { kind: 'all' },
    filters: () => ({ scope: 'all', state: 'opened', orderBy: 'updated_at' }),
  },
  {
    name: 'GET /issues?scope=assigned_to_me',
    bar: 20,
    url: (n) => `/api/v4/issues?scope=assigned_to_me&per_page=20&page=${(n % 10) + 1}`,
    where: { kind: 'all' },
    filters: () => ({ scope: 'assigned_to_me' }),
  },
  {
    name: 'GET /issues (created_by_me)',
    bar: 20,
    url: (n) => `/api/v4/issues?per_page=20&page=${(n % 10) + 1}`,
    where: { kind: 'all' },
    filters: () => ({ scope: 'created_by_me' }),
  },
  {
    name: 'GET /issues?scope=all&search=<a common word>',
    bar: 50,
    url: (n) => `/api/v4/issues?scope=all&search=${cycle(common, n)}&per_page=20`,
    where: { kind: 'all' },
    filters: (n) => ({ scope: 'all', search: cycle(common, n) }),
    note: `${common.length} words in ${Math.min(...common.map(df))}–${Math.max(...common.map(df))} issues`,
  },
  {
    name: 'GET /issues?scope=all&search=<a word>',
    bar: 50,
    url: (n) => `/api/v4/issues?scope=all&search=${cycle(typical, n)}&per_page=20`,
    where: { kind: 'all' },
    filters: (n) => ({ scope: 'all', search: cycle(typical, n) }),
    note: `${typical.length} words in ${Math.min(...typical.map(df))}–${Math.max(...typical.map(df))} issues`,
  },
  {
    name: 'GET /issues?scope=all&search=<a rare word>',
    bar: 50,
    url: (n) => `/api/v4/issues?scope=all&search=${cycle(rare, n)}&per_page=20`,
    where: { kind: 'all' },
    filters: (n) => ({ scope: 'all', search: cycle(rare, n) }),
    note: `${rare.length} words in ${Math.min(...rare.map(df))}–${Math.max(...rare.map(df))} issues`,
  },
  {
    name: 'GET /projects/:id/issues?search=<a word> (5,000 issues)',
    bar: 50,
    url: (n) => `/api/v4/projects/${big.id}/issues?search=${cycle(projectTerms, n)}&per_page=20`,
    where: projectWhere,
    filters: (n) => ({ scope: 'all', search: cycle(projectTerms, n) }),
    note: `${projectTerms.length} words in ${Math.min(...projectTerms.map(df))}–${Math.max(...projectTerms.map(df))} issues`,
  },
];

/** a parameter inlined for EXPLAIN (SQLite's plan of `?` is the same; PostgreSQL plans literals best) */
const literal = (v: unknown) => (typeof v === 'number' ? String(v) : `'${String(v).replace(/'/g, "''")}'`);
const inline = (compiled: { sql: string; parameters: readonly unknown[] }) => {
  let qi = 0;
  return compiled.sql.replace(/\$(\d+)|\?/g, (_m: string, n: string | undefined) => literal(compiled.parameters[n ? Number(n) - 1 : qi++]));
};
const depth = (rows: { id: number; parent: number }[], r: { id: number; parent: number }): number => {
  let d = 0;
  for (let p = r.parent; p; p = rows.find((x) => x.id === p)?.parent ?? 0) d++;
  return d;
};

// BENCH_EXPLAIN=1: the plans of each scenario's page query and count (as the viewer), then stop.
if (process.env.BENCH_EXPLAIN) {
  const only = process.env.BENCH_EXPLAIN === '1' ? null : process.env.BENCH_EXPLAIN;
  for (const s of scenarios) {
    if (only && !s.name.includes(only)) continue;
    const q = await c.issuesQuery.list(actor, s.where, s.filters(0));
    const page = q.limit(21).offset(0).compile();
    const count = (q as any).clearSelect().clearOrderBy().select(sql.lit(1).as('one')).limit(10_001).compile();
    for (const [what, compiled] of [
      ['page', page],
      ['count', count],
    ] as const) {
      const prefix = c.db.dialect === 'postgres' ? 'explain (analyze, costs off, timing off) ' : 'explain query plan ';
      const runs: number[] = [];
      let found = 0;
      for (let r = 0; r < 7; r++) {
        const t1 = performance.now();
        found = (await k.executeQuery(compiled)).rows.length;
        runs.push(performance.now() - t1);
      }
      const ran = median(runs, (x) => x);
      const rows = (await sql.raw(prefix + inline(compiled)).execute(k)).rows;
      console.log(`\n## ${s.name} — ${what} (${found} rows in ${ran.toFixed(1)} ms, median of 7)`);
      if (process.env.BENCH_EXPLAIN_SQL) console.log(inline(compiled));
      for (const r of rows as any[]) console.log(r['QUERY PLAN'] ?? `${'  '.repeat(depth(rows as any[], r))}${r.detail}`);
    }
  }
  await c.close();
  if (process.env.BENCH_KEEP) console.log(`\nkept: ${dataDir}`);
  else fs.rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
}

const { app, listScenario } = await serve(c);
const report = new Report();
const line = (x: string) => report.line(x);
const headers = { 'private-token': viewerToken };
line(
  `Hearth issues bench — ${ISSUES} issues over ${projects.length} projects (one of ${BIG}), ${GROUP_LABELS} group labels and ${PROJECT_LABELS.length} a project, ${MILESTONES} milestones, ${USERS} users (seeded in ${seeded.toFixed(1)} s), viewer a member of ${memberOf} projects, ${CONNECTIONS} connections, median of ${ROUNDS} alternating ${DURATION}s rounds, ${c.db.dialect}, node ${process.version}`,
);

// The cache-miss path: each request one no cache has seen (other labels, page or term), in-process, one at a time.
let failed = false;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((xs.length * p) / 100) - 1)];
line('');
line(`Cache-miss path: ${MISSES} in-process requests, each a query string no cache has seen (the labels, page or term vary); bar on the median.`);
line('');
line('| scenario | rows | X-Total | p50 ms | p99 ms | bar (p50) | result |');
line('|---|---|---|---|---|---|---|');
let next = 1;
const missResults: boolean[] = [];
for (const s of scenarios) {
  const times: number[] = [];
  let rows = 0;
  let total = '';
  for (let r = 0; r < MISSES + 3; r++) {
    // n never repeats across the bench, and the term or labels of n change with n; `page` cycles, so `v` keeps each URL new
    const n = next++;
    const url = `${s.url(n)}&v=${n}`;
    const t = performance.now();
    const res = await app.inject({ method: 'GET', url, headers });
    const ms = performance.now() - t;
    if (res.statusCode !== 200) throw new Error(`${url} → ${res.statusCode} ${res.body.slice(0, 200)}`);
    if (r < 3) continue; // warm-up of the route's code
    times.push(ms);
    rows += JSON.parse(res.body).length;
    total = String(res.headers['x-total'] ?? '—');
    if (process.env.BENCH_DEBUG && r === 3) {
      // the request's statements, each run again (median of 5): how much of it is the database's
      const statements: ObservedStatement[] = [];
      const stop = observeStatements((st) => statements.push(st));
      await app.inject({ method: 'GET', url: `${url}&again=1`, headers });
      stop();
      let sum = 0;
      for (const st of statements) {
        const runs: number[] = [];
        for (let j = 0; j < 5; j++) {
          const t1 = performance.now();
          await k.executeQuery(CompiledQuery.raw(st.sql, [...st.parameters]));
          runs.push(performance.now() - t1);
        }
        const m = median(runs, (x) => x);
        sum += m;
        console.error(`  ${m.toFixed(2)} ms  ${st.sql.slice(0, 160)}`);
      }
      console.error(`${url}: ${statements.length} statements, ${sum.toFixed(1)} ms of ${ms.toFixed(1)} ms`);
    }
  }
  const ok = pct(times, 50) < s.bar;
  missResults.push(ok);
  failed ||= !ok;
  line(
    `| ${s.name}${s.note ? ` (${s.note})` : ''} | ${(rows / times.length).toFixed(1)} | ${total} | ${pct(times, 50).toFixed(1)} | ${pct(times, 99).toFixed(1)} | < ${s.bar} ms | ${ok ? 'ok' : 'MISSED'} |`,
  );
}

// The hot figures (and the ignored-parameter miss, after a write, mixed) as the other list benches report them.
line('');
for (const l of listTableHeader(HOT_BAR)) line(l);
for (const [i, s] of scenarios.entries()) {
  if (process.env.BENCH_ONLY === 'miss') break;
  const write = (r: number) => k.updateTable('issues').set({ user_notes_count: r }).where('id', '=', issueRows[r].id).execute();
  const { row, ok } = await listScenario(i, { name: s.name, url: s.url(0) }, headers, { ...HOT_BAR, missMs: s.bar }, write, 'issues');
  failed ||= !ok;
  line(row);
}

await app.close();
await c.close();
fs.rmSync(dataDir, { recursive: true, force: true });
if (process.env.DATABASE_URL) {
  // the bench's database goes with it
  const url = new URL(process.env.DATABASE_URL);
  const name = url.pathname.slice(1);
  url.pathname = '/postgres';
  const pg = (await import('pg')).default;
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  await admin.query(`drop database if exists ${name}`);
  await admin.end();
}
report.save(true);
process.exit(failed ? 1 : 0);
