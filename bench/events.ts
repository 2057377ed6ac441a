// npm run bench:events: seeds a user with 100,000 events (pushes with their payloads, project creations,
// memberships, merge request events) over 60 projects (a third each public, internal, private), then
// measures the events lists with autocannon next to a static payload of the same size.
// Bar: a page of 20 at ratio ≥ 0.5 (p99 < 20 ms), and the uncached path — a query no cache
// has seen (median at one connection over HTTP), and the first read after a write (median of 21 in-process
// requests) — at most 5 ms each; the mixed variant (a writer every 100 ms) ≥ 0.5 of the read-only req/s.
import { groupRow, insertAll, memberRow, projectRow, userRow } from '../test/helpers/rows.ts';
import fs from 'node:fs';
import { sql } from 'kysely';
import { benchContainer, CONNECTIONS, DURATION, freshBenchDatabase, listTableHeader, Report, ROUNDS, serve } from './harness.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 100_000);
const PROJECTS = 60;
const BAR = { ratio: 0.5, p99: 20 };
const MISS_MS = 5;

await freshBenchDatabase('hearth_bench_events');

const { c, dataDir } = await benchContainer('hearth-bench-events-');
const k = c.db.kysely;
const t0 = performance.now();
const base = Date.UTC(2025, 0, 1);
const iso = (ms: number) => new Date(ms).toISOString();

const now = iso(base);
await insertAll(k, 'users', [userRow('busy', { name: 'Busy Bee' }, now), userRow('watcher', { name: 'Watcher' }, now)]);
const busy = (await c.users.byUsername('busy'))!;
const watcher = (await c.users.byUsername('watcher'))!;
const busyToken = (await c.tokens.create(busy, { name: 'bench', scopes: ['api'] })).token!;
const watcherToken = (await c.tokens.create(watcher, { name: 'bench', scopes: ['api'] })).token!;

// --- one group with 60 projects (a third each public, internal, private); busy is a Developer of the group ---
const group = await k
  .insertInto('namespaces')
  .values(groupRow('events-bench', null, { visibility: 'public' }, now))
  .returningAll()
  .executeTakeFirstOrThrow();
await k
  .updateTable('namespaces')
  .set({ traversal_ids: `/${group.id}/` })
  .where('id', '=', group.id)
  .execute();
const visibilities = ['public', 'internal', 'private'];
await insertAll(
  k,
  'projects',
  Array.from({ length: PROJECTS }, (_, i) =>
    projectRow(group.id, `service-${i}`, { creator_id: busy.id, name: `Service ${i}`, visibility: visibilities[i % 3] }, now),
  ),
);
const projects = await k.selectFrom('projects').select(['id', 'visibility']).where('namespace_id', '=', group.id).orderBy('id').execute();
await insertAll(k, 'members', [memberRow('Namespace', group.id, busy.id, 30, now)]);

// --- 100,000 events of busy: 80% pushes (with payloads), then project creations, joins and merge request events ---
const sha = (n: number) => n.toString(16).padStart(40, '0');
const events: any[] = [];
const payloads: any[] = [];
const firstId = 1;
for (let i = 0; i < EVENTS; i++) {
  const at = iso(base + i * 60_000);
  const r = i % 10;
  const action = r < 8 ? 5 : r === 8 ? 1 : 8;
  events.push({ project_id: projects[i % PROJECTS].id, author_id: busy.id, action, target_type: null, target_id: null, created_at: at, updated_at: at });
  if (action === 5)
    payloads.push({
      event_id: firstId + i,
      commit_count: 1 + (i % 5),
      action: 'pushed',
      ref_type: 'branch',
      commit_from: sha(i),
      commit_to: sha(i + 1),
      ref: 'main',
      commit_title: `Change number ${i}`,
      ref_count: null,
    });
}
await insertAll(k, 'events', events);
const maxId = (
  await k
    .selectFrom('events')
    .select((eb) => eb.fn.max('id').as('m'))
    .executeTakeFirstOrThrow()
).m as number;
if (maxId !== EVENTS) throw new Error(`event ids start at ${maxId - EVENTS + 1}, not 1`);
await insertAll(k, 'push_event_payloads', payloads);
// A live PostgreSQL database is vacuumed and analysed by autovacuum (since PostgreSQL 13 also after inserts: the
// visibility map lets the count behind X-Total read the index alone); a freshly loaded one gets both now.
if (c.db.dialect === 'postgres') await sql`vacuum analyze`.execute(k);
const seeded = (performance.now() - t0) / 1000;

// BENCH_EXPLAIN=1: the plans and times of the page and count queries of each list, then stop.
if (process.env.BENCH_EXPLAIN) {
  const { EventsQuery } = await import('../src/domain/events/events-query.ts');
  const { userActor } = await import('../src/domain/access/actor.ts');
  const query = new EventsQuery(c.db, c.policy);
  const cases = [
    { name: 'user events (watcher)', actor: userActor(watcher), source: { kind: 'user' as const, user: busy }, f: {} },
    { name: 'own events', actor: userActor(busy), source: { kind: 'user' as const, user: busy }, f: {} },
    { name: 'scope=all pushed', actor: userActor(busy), source: { kind: 'authorized' as const, userId: busy.id }, f: { action: 'pushed' as const } },
  ];
  for (const x of cases) {
    for (let r = 0; r < 3; r++) {
      const t1 = performance.now();
      const q0 = await query.list(x.actor, x.source, { sort: 'desc', ...x.f });
      const t2 = performance.now();
      const rows = await q0.limit(21).execute();
      const t3 = performance.now();
      await query.present(x.actor, rows.slice(0, 20));
      const t4 = performance.now();
      console.log(`## ${x.name}: build ${(t2 - t1).toFixed(2)} page ${(t3 - t2).toFixed(2)} present ${(t4 - t3).toFixed(2)}`);
    }
    const q = await query.list(x.actor, x.source, { sort: 'desc', ...x.f });
    const page = q.limit(21).offset(0).compile();
    const count = (q as any).clearSelect().clearOrderBy().select(sql.lit(1).as('one')).limit(10_001).compile();
    for (const [what, compiled] of [
      ['page', page],
      ['count', count],
    ] as const) {
      const t = performance.now();
      for (let r = 0; r < 5; r++) await k.executeQuery(compiled);
      console.log(`\n## ${x.name} — ${what}: ${((performance.now() - t) / 5).toFixed(2)} ms\n${compiled.sql}`);
      const prefix = c.db.dialect === 'postgres' ? 'explain (analyze, costs off, timing off) ' : 'explain query plan ';
      const rows = (await k.executeQuery({ ...compiled, sql: prefix + compiled.sql } as any)).rows as any[];
      for (const r of rows) console.log(r['QUERY PLAN'] ?? r.detail);
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
  `Hearth events bench — ${EVENTS} events of one user over ${PROJECTS} projects (seeded in ${seeded.toFixed(1)} s), ${CONNECTIONS} connections, median of ${ROUNDS} alternating ${DURATION}s rounds, ${c.db.dialect}, node ${process.version}`,
);
for (const l of listTableHeader({ ...BAR, missMs: MISS_MS })) line(l);
let failed = false;
const scenarios = [
  { name: 'GET /users/:id/events (another user: public and internal projects)', url: `/api/v4/users/${busy.id}/events`, token: watcherToken },
  { name: 'GET /events (own events)', url: '/api/v4/events', token: busyToken },
  { name: 'GET /events?scope=all&action=pushed', url: '/api/v4/events?scope=all&action=pushed', token: busyToken },
  { name: 'GET /projects/:id/events', url: `/api/v4/projects/${projects[0].id}/events`, token: watcherToken },
];
for (const [i, s] of scenarios.entries()) {
  // the first read after a write: busy pushes again to a public project (a new first row)
  const write = async () => {
    const at = new Date().toISOString();
    const e = await k
      .insertInto('events')
      .values({ project_id: projects[0].id, author_id: busy.id, action: 5, target_type: null, target_id: null, created_at: at, updated_at: at })
      .returning('id')
      .executeTakeFirstOrThrow();
    await k
      .insertInto('push_event_payloads')
      .values({
        event_id: e.id,
        commit_count: 1,
        action: 'pushed',
        ref_type: 'branch',
        commit_from: sha(1),
        commit_to: sha(2),
        ref: 'main',
        commit_title: 'Again',
        ref_count: null,
      })
      .execute();
  };
  const { row, ok, afterWriteMs } = await listScenario(i, s, { 'private-token': s.token }, { ...BAR, missMs: MISS_MS }, write, 'events');
  const fast = afterWriteMs <= MISS_MS;
  failed ||= !ok || !fast;
  line(fast ? row : `${row} MISSED (first read after a write > ${MISS_MS} ms)`);
}
await app.close();
await c.close();
fs.rmSync(dataDir, { recursive: true, force: true });
report.save(true);
process.exit(failed ? 1 : 0);
