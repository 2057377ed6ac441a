// The plans of the list pages (the pages of `npm run bench:scale`), on a small copy of its data set: every
// statement a page runs is explained, and no plan reads a large table whole. That a page is fast at 10× data
// then rests on indexes, and this test fails when one of them is dropped.
// - PostgreSQL: sequential scans disabled for the EXPLAIN (`enable_seqscan = off`), so that a plan holds one
//   only where no index can serve; a search must use its trigram index (pg_trgm).
// - SQLite: the planner is given the statistics of the 10× data set (sqlite_stat1), as ANALYZE would leave
//   them there; a plan may not `SCAN` a large table except in the order of an index (its rowid included)
//   that a LIMIT stops.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledQuery, sql } from 'kysely';
import { buildTestApp } from '../helpers/build-app.ts';
import { scalePages, seedScale } from '../helpers/scale-seed.ts';
import { observeStatements, type ObservedStatement } from '../../src/db/statement-observers.ts';

/** the tables that are large at 10× (a million rows and more) */
const LARGE = ['users', 'namespaces', 'projects', 'members', 'merge_requests', 'ci_pipelines', 'units'];

interface PgPlan {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PgPlan[];
}
const walk = (p: PgPlan, out: PgPlan[] = []): PgPlan[] => {
  out.push(p);
  for (const c of p.Plans ?? []) walk(c, out);
  return out;
};

test('no list page reads a large table whole: each is served by an index', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const k = c.db.kysely;
  const pg = c.db.dialect === 'postgres';
  const seed = await seedScale(k, c.db.dialect, 0.01, 100);
  if (pg) await sql`analyze`.execute(k);
  else {
    // the 10× data set's row counts, as ANALYZE writes them (table rows, then rows per distinct key prefix)
    await sql`analyze`.execute(k);
    const rows: Record<string, number> = { users: 1e6, namespaces: 1e6, projects: 1e5, members: 6e5, merge_requests: 1.5e6, ci_pipelines: 5e5, units: 1e7 };
    const stats = (await sql<{ tbl: string; idx: string | null; stat: string }>`select tbl, idx, stat from sqlite_stat1`.execute(k)).rows;
    for (const s of stats) {
      if (!(s.tbl in rows)) continue;
      const [n, ...perKey] = s.stat.split(' ').map(Number);
      // a key that repeats repeats as much more often as the table grows; a unique one stays unique
      const factor = rows[s.tbl] / Math.max(1, n);
      const scaled = [rows[s.tbl], ...perKey.map((x) => (x > 1 ? Math.round(x * factor) : x))];
      await sql`update sqlite_stat1 set stat = ${scaled.join(' ')} where tbl = ${s.tbl} and idx is ${s.idx}`.execute(k);
    }
    await sql`analyze sqlite_schema`.execute(k);
  }
  const member = (await c.users.byId(seed.member))!;
  const token = (await c.tokens.create(member, { name: 'plans', scopes: ['api'] })).token!;
  const headers = { root, member: { 'private-token': token } };
  const trigram = pg && !!(await sql`select 1 from pg_extension where extname = 'pg_trgm'`.execute(k)).rows.length;
  if (pg) assert.ok(trigram, 'pg_trgm is available to the test database (the migration creates it)');

  const failures: string[] = [];
  let explained = 0;
  for (const page of scalePages(seed)) {
    const seen: ObservedStatement[] = [];
    const stop = observeStatements((s) => seen.push(s));
    const res = await app.inject({ method: 'GET', url: `${page.url}${page.url.includes('?') ? '&' : '?'}plans=1`, headers: headers[page.as] });
    stop();
    assert.equal(res.statusCode, 200, `${page.name}: ${res.body.slice(0, 200)}`);
    const selects = seen.filter((s) => /^\s*(select|with)\b/i.test(s.sql));
    assert.ok(selects.length > 0, `${page.name} ran no statement`);
    const used = new Set<string>();
    for (const s of selects) {
      explained++;
      if (pg) {
        const plan = await k.connection().execute(async (conn) => {
          await conn.executeQuery(CompiledQuery.raw('set enable_seqscan = off'));
          try {
            const r = await conn.executeQuery<{ 'QUERY PLAN': { Plan: PgPlan }[] }>(CompiledQuery.raw(`explain (format json) ${s.sql}`, [...s.parameters]));
            return r.rows[0]['QUERY PLAN'][0].Plan;
          } finally {
            await conn.executeQuery(CompiledQuery.raw('reset enable_seqscan'));
          }
        });
        for (const node of walk(plan)) {
          if (node['Index Name']) used.add(node['Index Name']);
          if (node['Node Type'] === 'Seq Scan' && LARGE.includes(node['Relation Name']!))
            failures.push(`${page.name}: Seq Scan on ${node['Relation Name']} in\n  ${s.sql}`);
        }
      } else {
        const plan = (await k.executeQuery<{ parent: number; detail: string }>(CompiledQuery.raw(`explain query plan ${s.sql}`, [...s.parameters]))).rows;
        // a plain SCAN reads the whole table, unless it walks rowid order and a LIMIT stops it (no sort of the result)
        const stops = /\blimit\b/i.test(s.sql) && !plan.some((r) => r.parent === 0 && r.detail.includes('TEMP B-TREE FOR ORDER BY'));
        for (const { detail } of plan) {
          for (const idx of detail.matchAll(/USING (?:COVERING )?INDEX (\w+)/g)) used.add(idx[1]);
          const m = /^SCAN (\w+)(?: AS \w+)?( USING .*)?$/.exec(detail);
          if (m && LARGE.includes(m[1]) && !m[2] && !stops)
            failures.push(`${page.name}: ${detail} in\n  ${s.sql}\n  ${plan.map((r) => r.detail).join('\n  ')}`);
        }
      }
    }
    if (trigram)
      for (const index of page.indexes ?? []) if (!used.has(index)) failures.push(`${page.name}: does not use ${index} (used: ${[...used].join(', ')})`);
  }
  assert.deepEqual(failures, []);
  assert.ok(explained > 40, `${explained} statements explained`);
});
