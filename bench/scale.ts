// npm run bench:scale: the list pages on their cache-miss path at 10× data (test/helpers/scale-seed.ts: 1M users,
// 100k projects, 1.5M merge requests, 10M translation units at BENCH_SCALE=10). Each page is requested
// BENCH_SCALE_REQUESTS times in-process, one at a time, each with a query parameter no cache has seen;
// p50 and p99 of those exact times. Bar (PostgreSQL at scale 10): p99 ≤ 50 ms, searches ≤ 100 ms.
// BENCH_SCALE (default 10), DATABASE_URL (PostgreSQL; the bench uses the database hearth_bench_scale_<S>),
// BENCH_SCALE_REUSE=1 keeps the seeded database (PostgreSQL) or data directory (SQLite, in the system's
// temporary directory) and reuses it when it is already there; BENCH_PICK: only the pages whose name
// contains it; BENCH_SCALE_PLANS=1 prints each page's queries with their plans.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
import { buildApp } from '../src/app.ts';
import { Report, ROOT_TOKEN } from './harness.ts';
import { scalePages, seedScale, type ScaleSeed } from '../test/helpers/scale-seed.ts';
import { observeStatements, type ObservedStatement } from '../src/db/statement-observers.ts';

const SCALE = Number(process.env.BENCH_SCALE ?? 10);
const REQUESTS = Number(process.env.BENCH_SCALE_REQUESTS ?? 100);
const REUSE = process.env.BENCH_SCALE_REUSE === '1';
const BAR = { list: 50, search: 100 };

let databaseUrl: string | null = null;
if (process.env.DATABASE_URL) {
  const url = new URL(process.env.DATABASE_URL);
  url.pathname = `/hearth_bench_scale_${SCALE}`;
  databaseUrl = url.toString();
}
// the data directory keeps seed.json (what was seeded) next to the SQLite database
const dataDir = path.join(os.tmpdir(), `hearth-bench-scale-${SCALE}${databaseUrl ? '-pg' : ''}`);
const fresh = !(REUSE && fs.existsSync(path.join(dataDir, 'seed.json')));
if (fresh) {
  fs.rmSync(dataDir, { recursive: true, force: true });
  if (databaseUrl) {
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`drop database if exists hearth_bench_scale_${SCALE}`);
    await admin.query(`create database hearth_bench_scale_${SCALE}`);
    await admin.end();
  }
}
fs.mkdirSync(dataDir, { recursive: true });
const config = loadConfig({ DATA_DIR: dataDir, HEARTH_ROOT_PASSWORD: 'bench-password', HEARTH_ROOT_TOKEN: ROOT_TOKEN, LOG_LEVEL: 'silent' }, { databaseUrl });
const opening = performance.now();
const c = await createContainer(config, { log: pino({ level: 'silent' }) });
const openSeconds = (performance.now() - opening) / 1000;
const k = c.db.kysely;
const seedFile = path.join(dataDir, 'seed.json');
let seed: ScaleSeed;
if (fresh) {
  const t0 = performance.now();
  seed = await seedScale(k, c.db.dialect, SCALE);
  seed.seconds.total = (performance.now() - t0) / 1000;
  fs.writeFileSync(seedFile, JSON.stringify(seed));
} else seed = JSON.parse(fs.readFileSync(seedFile, 'utf8'));

const member = (await c.users.byId(seed.member))!;
const memberToken = (await c.tokens.create(member, { name: `bench ${Date.now()}`, scopes: ['api'] })).token!;
const app = await buildApp(c);
await app.ready();

const asRoot = { 'private-token': ROOT_TOKEN };
const asMember = { 'private-token': memberToken };
const pages = scalePages(seed).map((p) => ({ ...p, headers: p.as === 'root' ? asRoot : asMember }));

const report = new Report();
const line = (x: string) => report.line(x);
const counts = `${seed.users.toLocaleString('en')} users, ${seed.groups.toLocaleString('en')} groups, ${seed.projects.toLocaleString('en')} projects, ${seed.mergeRequests.toLocaleString('en')} merge requests, ${seed.pipelines.toLocaleString('en')} pipelines, ${seed.units.toLocaleString('en')} units`;
line(`Hearth scale bench — ×${SCALE}: ${counts}; ${c.db.dialect}, node ${process.version}, load average ${os.loadavg()[0].toFixed(2)}`);
if (fresh)
  line(
    `Seeded in ${seed.seconds.total.toFixed(0)} s (${Object.entries(seed.seconds)
      .map(([t, s]) => `${t} ${s.toFixed(1)} s`)
      .join(', ')}).`,
  );
if (!fresh) line(`Opened the seeded database (with any migration it lacked) in ${openSeconds.toFixed(1)} s.`);
line('');
line(`Each page ${REQUESTS} times in-process, one at a time, each with a query parameter no cache has seen (the cache-miss path).`);
line('');
line(`| page | rows | p50 ms | p99 ms | bar (p99 ≤ ${BAR.list} ms, search ≤ ${BAR.search} ms) |`);
line('|---|---|---|---|---|');
let failed = false;
const planned = process.env.BENCH_SCALE_PLANS === '1';
for (const p of pages) {
  if (process.env.BENCH_PICK && !p.name.includes(process.env.BENCH_PICK)) continue;
  const join = p.url.includes('?') ? '&' : '?';
  const first = await app.inject({ method: 'GET', url: `${p.url}${join}warm=0`, headers: p.headers });
  if (first.statusCode !== 200) throw new Error(`${p.url} → ${first.statusCode} ${first.body.slice(0, 300)}`);
  const body = first.json();
  const rows = Array.isArray(body) ? body.length : (body.results?.length ?? body.total ?? 1);
  for (let r = 1; r < 5; r++) await app.inject({ method: 'GET', url: `${p.url}${join}warm=${r}`, headers: p.headers });
  if (planned) await explainPage(p.url, p.headers);
  const times: number[] = [];
  for (let r = 0; r < REQUESTS; r++) {
    const t = performance.now();
    const res = await app.inject({ method: 'GET', url: `${p.url}${join}miss=${r}`, headers: p.headers });
    times.push(performance.now() - t);
    if (res.statusCode !== 200) throw new Error(`${p.url} → ${res.statusCode}`);
  }
  times.sort((a, b) => a - b);
  const p50 = times[Math.floor(times.length / 2)];
  const p99 = times[Math.min(times.length - 1, Math.floor(times.length * 0.99))];
  const bar = p.search ? BAR.search : BAR.list;
  // the bar is PostgreSQL's at ×10, the scale-out database (SQLite's searches have their FTS5 trigram tables since
  // migration 033; some of its lists still read more rows than PostgreSQL's)
  const barred = SCALE >= 10 && c.db.dialect === 'postgres' && !p.broad;
  const ok = !barred || p99 <= bar;
  failed ||= !ok;
  const verdict = p.broad ? '(for reference)' : !barred ? '(bar: PostgreSQL at ×10)' : ok ? 'ok' : 'MISSED';
  line(`| ${p.name} | ${rows} | ${p50.toFixed(1)} | ${p99.toFixed(1)} | ${verdict} |`);
}

/** BENCH_SCALE_PLANS: the statements one request of the page runs, each with its time and plan */
async function explainPage(url: string, headers: Record<string, string>) {
  const seen: ObservedStatement[] = [];
  const stop = observeStatements((s) => seen.push(s));
  await app.inject({ method: 'GET', url: `${url}${url.includes('?') ? '&' : '?'}plan=${Date.now()}`, headers });
  stop();
  console.log(`\n### ${url}`);
  for (const q of seen) {
    if (!/^\s*select/i.test(q.sql)) continue;
    const t = performance.now();
    await sql.raw(inline(q.sql, q.parameters)).execute(k);
    const ms = performance.now() - t;
    const explain = c.db.dialect === 'postgres' ? 'explain (analyze, costs off, timing off, summary off)' : 'explain query plan';
    const plan = (await sql.raw(`${explain} ${inline(q.sql, q.parameters)}`).execute(k)).rows as Record<string, unknown>[];
    console.log(`-- ${ms.toFixed(1)} ms: ${inline(q.sql, q.parameters).slice(0, 600)}`);
    for (const r of plan) console.log(`   ${String(r['QUERY PLAN'] ?? r.detail)}`);
  }
}
function inline(text: string, params: readonly unknown[]): string {
  const lit = (v: unknown) => (v === null ? 'null' : typeof v === 'number' ? String(v) : `'${String(v).replace(/'/g, "''")}'`);
  return c.db.dialect === 'postgres'
    ? text.replace(/\$(\d+)/g, (_, n) => lit(params[Number(n) - 1]))
    : text.replace(
        /\?/g,
        (() => {
          let i = 0;
          return () => lit(params[i++]);
        })(),
      );
}

await app.close();
await c.close();
if (!REUSE) fs.rmSync(dataDir, { recursive: true, force: true });
report.save(false);
process.exit(failed ? 1 : 0);
