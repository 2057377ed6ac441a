// The plans of the list pages (the pages of `npm run bench:scale`), on a small copy of its data set: every
// statement a page runs is explained, and no plan reads a large table whole. That a page is fast at 10× data
// then rests on indexes, and this test fails when one of them is dropped.
// - PostgreSQL: sequential scans disabled for the EXPLAIN (`enable_seqscan = off`), so that a plan holds one
//   only where no index can serve; a search must use its trigram index (pg_trgm), an issue search the GIN index of
//   the issues' tsvector (migration 037).
// - SQLite: the planner is given the statistics of the 10× data set (sqlite_stat1), as ANALYZE would leave
//   them there; a plan may not `SCAN` a large table except in its own order (the id) for a page that a LIMIT stops;
//   a search must read its FTS5 trigram table (migration 033), an issue search its FTS5 table of words (037).
// Then a few indexes are dropped (in a transaction, rolled back) to see the check catch the pages that need them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledQuery, sql } from 'kysely';
import { buildTestApp } from '../helpers/build-app.ts';
import { scalePages, seedScale, type ScalePage } from '../helpers/scale-seed.ts';
import { observeStatements, type ObservedStatement } from '../../src/db/statement-observers.ts';

/** the tables that are large at 10× (a million rows and more) */
const LARGE = ['users', 'namespaces', 'projects', 'members', 'merge_requests', 'issues', 'issue_labels', 'issue_assignees', 'ci_pipelines', 'units'];

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
  // the 10× data set's row counts, which the planners are told (PostgreSQL: pg_class.reltuples, scaled by the
  // actual pages at planning; SQLite: sqlite_stat1, as ANALYZE writes it)
  const rows: Record<string, number> = {
    users: 1e6,
    namespaces: 1e6,
    projects: 1e5,
    members: 6e5,
    merge_requests: 1.5e6,
    issues: 1.5e6,
    issue_labels: 3e6,
    issue_assignees: 1.5e6,
    ci_pipelines: 5e5,
    units: 1e7,
  };
  if (pg) {
    await sql`analyze`.execute(k);
    for (const [table, n] of Object.entries(rows))
      await sql`update pg_class set reltuples = ${n} where oid = (quote_ident(current_schema()) || '.' || ${table})::regclass`.execute(k);
  } else {
    await sql`analyze`.execute(k);
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

  // each page once, its statements kept
  const pages: { page: ScalePage; statements: ObservedStatement[] }[] = [];
  for (const page of scalePages(seed)) {
    const statements: ObservedStatement[] = [];
    const stop = observeStatements((st) => {
      if (/^\s*(select|with)\b/i.test(st.sql)) statements.push(st);
    });
    const res = await app.inject({ method: 'GET', url: `${page.url}${page.url.includes('?') ? '&' : '?'}plans=1`, headers: headers[page.as] });
    stop();
    assert.equal(res.statusCode, 200, `${page.name}: ${res.body.slice(0, 200)}`);
    assert.ok(statements.length > 0, `${page.name} ran no statement`);
    pages.push({ page, statements });
  }

  /** Every page's statements explained (on one connection, in a transaction that `dropped` is dropped in first, then rolled back). */
  const check = (dropped?: string) =>
    k.connection().execute(async (conn) => {
      const run = <R>(text: string, params: readonly unknown[] = []) => conn.executeQuery<R>(CompiledQuery.raw(text, [...params]));
      const failures: string[] = [];
      let explained = 0;
      await run('begin');
      try {
        if (pg) await run('set local enable_seqscan = off');
        if (dropped) await run(`drop ${/_(search|words)$/.test(dropped) ? 'table' : 'index'} ${dropped}`);
        for (const { page, statements } of pages) {
          const used = new Set<string>();
          for (const st of statements) {
            explained++;
            // X-Total's count stops at 10,001 rows (GitLab's limit): with a filter most rows pass (a state), reading the
            // table in its order until then is the cheapest plan there is
            const cappedCount = /^select count\(\*\) as "n" from \(select 1 as "one" from/.test(st.sql) && !page.search;
            if (pg) {
              const plan = (await run<{ 'QUERY PLAN': { Plan: PgPlan }[] }>(`explain (format json) ${st.sql}`, st.parameters)).rows[0]['QUERY PLAN'][0].Plan;
              for (const node of walk(plan)) {
                if (node['Index Name']) used.add(node['Index Name']);
                if (node['Node Type'] === 'Seq Scan' && LARGE.includes(node['Relation Name']!) && !cappedCount)
                  failures.push(`${page.name}: Seq Scan on ${node['Relation Name']} in\n  ${st.sql}`);
              }
            } else {
              // a statement that cannot be planned (a search table dropped) is a failure of its page
              const plan = await run<{ parent: number; detail: string }>(`explain query plan ${st.sql}`, st.parameters).then(
                (r) => r.rows,
                (err: Error) => (failures.push(`${page.name}: ${err.message} in\n  ${st.sql}`), []),
              );
              // a plain SCAN reads the whole table, unless it walks the table's own order (its id) for a page that a
              // LIMIT stops, without sorting the result
              // the plan names a table by its alias: "namespaces" as "sub" → SCAN sub
              const aliases = new Map([...st.sql.matchAll(/"(\w+)" as "(\w+)"/g)].map((a) => [a[2], a[1]]));
              const sorts = plan.some((r) => r.parent === 0 && r.detail.includes('TEMP B-TREE FOR ORDER BY'));
              const byId = (table: string) => !sorts && new RegExp(`order by "${table}"\\."id" (asc|desc)[^()]* limit`, 'i').test(st.sql);
              for (const { detail } of plan) {
                for (const idx of detail.matchAll(/USING (?:COVERING )?INDEX (\w+)/g)) used.add(idx[1]);
                const fts = /^SCAN (\w+) VIRTUAL TABLE INDEX/.exec(detail);
                if (fts) used.add(fts[1]);
                const m = /^SCAN (\w+)(?: AS \w+)?( USING .*)?$/.exec(detail);
                const table = m && (aliases.get(m[1]) ?? m[1]);
                if (m && table && LARGE.includes(table) && !m[2] && !byId(m[1]) && !cappedCount)
                  failures.push(`${page.name}: ${detail} in\n  ${st.sql}\n  ${plan.map((r) => r.detail).join('\n  ')}`);
              }
            }
          }
          const required = pg ? (trigram ? page.indexes : []) : page.sqliteIndexes;
          for (const index of required ?? []) if (!used.has(index)) failures.push(`${page.name}: does not use ${index} (used: ${[...used].join(', ')})`);
        }
      } finally {
        await run('rollback');
      }
      return { failures, explained };
    });

  const all = await check();
  assert.deepEqual(all.failures, []);
  assert.ok(all.explained > 40, `${all.explained} statements explained`);
  // and the check sees an index go: each of these leaves a page reading a whole table (or, a search table of
  // SQLite, a page that cannot run)
  const needed: [string, string][] = [
    ['namespaces_traversal', 'GET /groups/:id/projects?include_subgroups=true'],
    ...((pg
      ? [
          ['users_name_trgm', 'GET /users?search=<surname>'],
          ['issues_search_vector', 'GET /issues?scope=all&search=<two words>'],
        ]
      : [
          ['users_public_email_lower', 'GET /users?search=<exact public e-mail>'],
          ['merge_requests_search', 'GET /merge_requests?scope=all&search=<two words>'],
          ['issues_words', 'GET /issues?scope=all&search=<two words>'],
        ]) as [string, string][]),
  ];
  for (const [index, page] of needed) {
    const { failures } = await check(index);
    assert.ok(
      failures.some((f) => f.startsWith(page)),
      `without ${index}, ${page} is caught: ${failures.map((f) => f.split('\n')[0]).join('; ') || 'nothing caught'}`,
    );
  }
});
