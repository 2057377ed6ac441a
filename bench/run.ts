// npm run bench: seeds 10,000 users and 5,000 tokens, and 10,000 projects in 500 groups with the
// memberships of 2,000 users, then measures the hot lists with autocannon on a local port (in this
// process, as the floor is), next to a static payload of the same size served by the same Fastify
// process (the framework's floor), each with its cache-miss and mixed variants (harness listScenario).
// Bars: ratio ≥ 0.5 and p99 < 10 ms at 10 connections; on SQLite, a cache-miss page of 100 users in
// ≤ 3 ms and of 100 projects in ≤ 8 ms (median, one connection); mixed ≥ 0.5 of the read-only req/s.
import { groupRow, memberRow, userRow } from '../test/helpers/rows.ts';
import fs from 'node:fs';
import inspector from 'node:inspector';
import { sql } from 'kysely';
import { dbQueryDuration } from '../src/metrics/registry.ts';
import { nowIso } from '../src/lib/time.ts';
import { benchContainer, CONNECTIONS, DURATION, freshBenchDatabase, listTableHeader, Report, ROOT_TOKEN, ROUNDS, serve } from './harness.ts';

const USERS = Number(process.env.BENCH_USERS ?? 10_000);
const TOKENS = Number(process.env.BENCH_TOKENS ?? 5_000);
const PROJECTS = Number(process.env.BENCH_PROJECTS ?? 10_000);
const GROUPS = Number(process.env.BENCH_GROUPS ?? 500);
const BAR = { ratio: 0.5, p99: 10 };
const PROJECT_USERS = Math.min(USERS, Number(process.env.BENCH_PROJECT_USERS ?? 2_000));

await freshBenchDatabase('hearth_bench_platform');
const { c, dataDir } = await benchContainer('hearth-bench-');

// --- seed (bulk inserts; no password hashing) ---
const now = nowIso();
const k = c.db.kysely;
const batch = 500;
for (let i = 0; i < USERS; i += batch) {
  const rows = [];
  for (let j = i; j < Math.min(i + batch, USERS); j++) {
    rows.push(userRow(`bench${j}`, { name: `Bench User ${j}` }, now));
  }
  await k.insertInto('users').values(rows).execute();
}
const member = (await c.users.byUsername('bench1'))!;
const memberToken = await c.tokens.create(member, { name: 'bench', scopes: ['api'] });
const admin = (await c.users.byId(1))!;
for (let i = 0; i < TOKENS; i += batch) {
  const rows = [];
  for (let j = i; j < Math.min(i + batch, TOKENS); j++) {
    rows.push({
      user_id: j % 2 ? admin.id : member.id,
      name: `token ${j}`,
      description: null,
      token_digest: `bench-digest-${j}`,
      scopes: '["api"]',
      impersonation: 0,
      revoked: j % 7 === 0 ? 1 : 0,
      expires_at: null,
      last_used_at: null,
      previous_personal_access_token_id: null,
      created_at: now,
      updated_at: now,
    });
  }
  await k.insertInto('personal_access_tokens').values(rows).execute();
}

// --- projects: 100 top-level groups with 4 subgroups each, 10,000 projects, memberships ---
// The measured user (bench1) is a Developer of the first top-level group, which holds 100 projects,
// and a Reporter of 100 projects elsewhere: a member of 200 projects, directly and through a group.
const insertAll = async (table: 'namespaces' | 'projects' | 'members', rows: any[]) => {
  for (let i = 0; i < rows.length; i += batch)
    await k
      .insertInto(table)
      .values(rows.slice(i, i + batch))
      .execute();
};
const group = (path: string, parent: { id: number; full_path: string } | null) => groupRow(path, parent, { name: path.toUpperCase() }, now);
const tops = Math.max(1, Math.floor(GROUPS / 5));
await insertAll(
  'namespaces',
  Array.from({ length: tops }, (_, i) => group(`bench-group-${i}`, null)),
);
const topRows = await k.selectFrom('namespaces').select(['id', 'full_path']).where('type', '=', 'Group').orderBy('id').execute();
// the first top-level group keeps no subgroups, so its members see exactly its 100 projects
await insertAll(
  'namespaces',
  Array.from({ length: GROUPS - tops }, (_, i) => group(`sub-${i}`, topRows[1 + (i % Math.max(1, tops - 1))] ?? topRows[0])),
);
await sql`update namespaces set traversal_ids = case when parent_id is null then '/' || id || '/' else '/' || parent_id || '/' || id || '/' end
  where type = 'Group'`.execute(k);
const groupRows = await k.selectFrom('namespaces').select(['id', 'parent_id']).where('type', '=', 'Group').orderBy('id').execute();
const benchUsers = await k
  .selectFrom('users')
  .select(['id', 'username', 'name'])
  .where('username', 'like', 'bench%')
  .orderBy('id')
  .limit(PROJECT_USERS)
  .execute();
await insertAll(
  'namespaces',
  benchUsers.map((u) => ({ ...group(u.username, null), type: 'User' as const, name: u.name, owner_id: u.id, visibility: 'public' })),
);
await sql`update namespaces set traversal_ids = '/' || id || '/' where type = 'User'`.execute(k);
const visibilities = ['public', 'internal', 'private'];
await insertAll(
  'projects',
  Array.from({ length: PROJECTS }, (_, i) => ({
    // the first 100 projects are the first top-level group's; the rest go round the other groups
    namespace_id: i < 100 ? groupRows[0].id : groupRows[1 + (i % (groupRows.length - 1))].id,
    creator_id: admin.id,
    name: `Project ${i}`,
    path: `project-${i}`,
    description: `Bench project number ${i}`,
    visibility: visibilities[i % 3],
    default_branch: 'main',
    archived: 0,
    repository_storage: 'default',
    topics: '[]',
    settings: '{}',
    created_at: now,
    updated_at: now,
    last_activity_at: now,
  })),
);
const projectIds = (await k.selectFrom('projects').select('id').orderBy('id').execute()).map((r) => r.id);
const memberRows = new Map<string, object>();
const addMember = (type: 'Project' | 'Namespace', sourceId: number, userId: number, level: number) =>
  memberRows.set(`${type}:${sourceId}:${userId}`, memberRow(type, sourceId, userId, level, now));
addMember('Namespace', groupRows[0].id, member.id, 30);
for (let i = 0; i < 100; i++) addMember('Project', projectIds[100 + i * 97], member.id, 20);
benchUsers.forEach((u, n) => {
  if (u.id === member.id) return;
  for (let j = 0; j < 2; j++) addMember('Namespace', groupRows[(n * 7 + j * 13) % groupRows.length].id, u.id, [10, 20, 30, 40, 50][(n + j) % 5]);
  for (let j = 0; j < 5; j++) addMember('Project', projectIds[(n * 31 + j * 1009) % projectIds.length], u.id, [10, 20, 30, 40][(n + j) % 4]);
});
await insertAll('members', [...memberRows.values()]);
// A live PostgreSQL database has statistics (autovacuum); a freshly loaded one gets them now.
if (c.db.dialect === 'postgres') await sql`analyze`.execute(k);

// --- the scenarios, each next to a static payload of the same size ---
const scenarios = [
  { name: 'GET /users?per_page=100 (administrator)', url: '/api/v4/users?per_page=100', token: ROOT_TOKEN, unit: 'users', missMs: 3 },
  { name: 'GET /users?per_page=100 (non-administrator)', url: '/api/v4/users?per_page=100', token: memberToken.token!, unit: 'users', missMs: 3 },
  { name: 'GET /personal_access_tokens?per_page=100', url: '/api/v4/personal_access_tokens?per_page=100', token: ROOT_TOKEN, unit: 'tokens' },
  {
    name: 'GET /projects?membership=true&per_page=100 (member of 200)',
    url: '/api/v4/projects?membership=true&per_page=100',
    token: memberToken.token!,
    unit: 'projects',
    missMs: 8,
  },
  {
    name: 'GET /groups/:id/projects?per_page=100 (member of 200)',
    url: `/api/v4/groups/${groupRows[0].id}/projects?per_page=100`,
    token: memberToken.token!,
    unit: 'projects',
    missMs: 8,
  },
];

// The writers change a row of each page: the newest users and tokens come first, and the first top-level
// group's 100 projects are on both project pages.
const lastUser = USERS + 1;
const lastToken = Number(
  (
    await k
      .selectFrom('personal_access_tokens')
      .select((eb) => eb.fn.max('id').as('id'))
      .executeTakeFirstOrThrow()
  ).id,
);
const groupProjects = projectIds.slice(0, 100);
const touchUser = (r: number) =>
  k
    .updateTable('users')
    .set({ bio: `bio ${r}`, updated_at: nowIso() })
    .where('id', '=', lastUser - (r % 100))
    .execute();
const touchToken = (r: number) =>
  k
    .updateTable('personal_access_tokens')
    .set({ description: `used ${r}`, updated_at: nowIso() })
    .where('id', '=', lastToken - (r % 100))
    .execute();
const touchProject = (r: number) =>
  k
    .updateTable('projects')
    .set({ description: `changed ${r}`, updated_at: nowIso() })
    .where('id', '=', groupProjects[r % 100])
    .execute();
const writers = [touchUser, touchUser, touchToken, touchProject, touchProject];
// autocannon in this thread, as the floor's: the figures of the Foundation and Projects sections
const { app, listScenario } = await serve(c);
// BENCH_PROFILE=<n>: only scenario n's cache-miss path, 300 times in-process (with BENCH_PROFILE_OUT, its CPU
// profile there; BENCH_EXPLAIN: a statement to time and explain afterwards)
if (process.env.BENCH_PROFILE) {
  const s = scenarios[Number(process.env.BENCH_PROFILE)];
  const session = new inspector.Session();
  session.connect();
  const post = (method: string) => new Promise<any>((resolve, reject) => session.post(method, (err, res) => (err ? reject(err) : resolve(res))));
  for (let r = 0; r < 50; r++) await app.inject({ method: 'GET', url: `${s.url}&warm=${r}`, headers: { 'private-token': s.token } });
  const profiling = !!process.env.BENCH_PROFILE_OUT;
  if (profiling) {
    await post('Profiler.enable');
    await post('Profiler.start');
  }
  const sqlTime = async () => (await dbQueryDuration.get()).values.filter((v) => v.metricName?.endsWith('_sum') || v.metricName?.endsWith('_count'));
  const before = await sqlTime();
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  // BENCH_PROFILE_WRITE: the first read after a write instead (the scenario's writer before each request)
  const afterWrite = !!process.env.BENCH_PROFILE_WRITE;
  for (let r = 0; r < 300; r++) {
    if (afterWrite) await writers[Number(process.env.BENCH_PROFILE)](r);
    await app.inject({ method: 'GET', url: afterWrite ? s.url : `${s.url}&profile=${r}`, headers: { 'private-token': s.token } });
  }
  const cpu = process.cpuUsage(cpu0);
  console.log(`${s.name}: ${((performance.now() - t0) / 300).toFixed(2)} ms per request, CPU ${((cpu.user + cpu.system) / 300 / 1000).toFixed(2)} ms`);
  for (const v of await sqlTime()) {
    const b = before.find((x) => x.metricName === v.metricName && JSON.stringify(x.labels) === JSON.stringify(v.labels));
    console.log(v.metricName, JSON.stringify(v.labels), ((v.value - (b?.value ?? 0)) / 300).toFixed(4), 'per request');
  }
  if (profiling) fs.writeFileSync(process.env.BENCH_PROFILE_OUT!, JSON.stringify((await post('Profiler.stop')).profile));
  if (process.env.BENCH_EXPLAIN) {
    const q = process.env.BENCH_EXPLAIN;
    const t = performance.now();
    for (let r = 0; r < 100; r++) await sql.raw(q).execute(k);
    console.log(`${((performance.now() - t) / 100).toFixed(3)} ms`);
    for (const r of (await sql.raw(`explain query plan ${q}`).execute(k)).rows as any[]) console.log(r.detail);
    if (c.db.sqlite) {
      const stmt = c.db.sqlite.prepare(q);
      const t1 = performance.now();
      for (let r = 0; r < 100; r++) stmt.all();
      console.log(`better-sqlite3 alone: ${((performance.now() - t1) / 100).toFixed(3)} ms`);
      const t2 = performance.now();
      for (let r = 0; r < 100; r++) stmt.raw(true).all();
      console.log(`raw arrays: ${((performance.now() - t2) / 100).toFixed(3)} ms`);
      const cols = stmt.columns().map((x) => x.name);
      const make = new Function('r', `return {${cols.map((name, i) => `${JSON.stringify(name)}: r[${i}]`).join(', ')}};`) as any;
      const t3 = performance.now();
      for (let r = 0; r < 100; r++) stmt.raw(true).all().map(make);
      console.log(`raw arrays made objects: ${((performance.now() - t3) / 100).toFixed(3)} ms`);
      stmt.raw(false);
      const t4 = performance.now();
      for (let r = 0; r < 100; r++) stmt.all();
      console.log(`objects again: ${((performance.now() - t4) / 100).toFixed(3)} ms`);
    }
  }
  process.exit(0);
}
const report = new Report();
const line = (x: string) => report.line(x);
line(
  `Hearth bench — ${USERS} users, ${TOKENS} tokens, ${PROJECTS} projects in ${GROUPS} groups (memberships of ${PROJECT_USERS} users), ${CONNECTIONS} connections, median of ${ROUNDS} alternating ${DURATION}s rounds, ${c.db.dialect}, node ${process.version}`,
);
line('');
for (const l of listTableHeader(BAR)) line(l);
let failed = false;
for (const [i, s] of scenarios.entries()) {
  if (process.env.BENCH_PICK && !s.name.includes(process.env.BENCH_PICK)) continue;
  // the cache-miss bars hold on SQLite; PostgreSQL's figures are reported beside them
  const missMs = c.db.dialect === 'sqlite' ? s.missMs : undefined;
  const { row, ok } = await listScenario(i, s, { 'private-token': s.token }, { ...BAR, missMs }, writers[i], s.unit);
  failed ||= !ok;
  line(row);
}

await app.close();
await c.close();
fs.rmSync(dataDir, { recursive: true, force: true });
report.save(false);
process.exit(failed ? 1 : 0);
