// The database of one test app, prepared without migrating from scratch each time (test set-up was most of the
// suite's time). Each test still starts from the state a first start of the product leaves: migrations applied,
// settings and languages seeded, root and its token created — the same rows, the same ids, sequences where a
// fresh start leaves them.
// - SQLite: the first app of a test process initialises as the product does; its database file is then copied
//   (VACUUM INTO) as this process's template, and later apps start from a copy of that file.
// - PostgreSQL: the first app migrates a fresh schema; its rows and sequences right after start are kept in memory.
//   A schema is not dropped after its test but kept in this process's pool: the next test's app takes it, every
//   table emptied and the first-start rows and sequence positions restored (in one transaction, triggers off, so no
//   table-version notification fires). A schema whose tables or triggers a test changed is dropped instead; the
//   pool is dropped when the process ends.
// Templates are keyed by what the first start writes from the configuration (the root password and token); with no
// root password (the product writes `initial_root_password` into DATA_DIR) there is no template.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import pg from 'pg';
import type { Config } from '../../src/config.ts';
import type { Container } from '../../src/container.ts';

const SQLITE_FILE = 'hearth.sqlite3';
/** HEARTH_TEST_NO_TEMPLATES=1: every app migrates a new database (to compare, or to rule the templates out) */
const NO_TEMPLATES = process.env.HEARTH_TEST_NO_TEMPLATES === '1';

/** What the first start writes that depends on the configuration; null: no template for this configuration. */
function templateKey(config: Config): string | null {
  if (!config.rootPassword || NO_TEMPLATES) return null;
  return JSON.stringify([config.rootPassword, config.rootToken ?? null]);
}

// ---------------------------------------------------------------------------------------------------------- SQLite

const sqliteTemplates = new Map<string, string>();
let sqliteTemplateDir: string | null = null;

/** Before createContainer: puts a copy of this process's template database into dataDir (when there is one). */
export function prepareSqlite(config: Config): void {
  const key = templateKey(config);
  const file = key && sqliteTemplates.get(key);
  if (file) fs.copyFileSync(file, path.join(config.dataDir, SQLITE_FILE));
}

/** After createContainer: the first app of a configuration leaves its database as the template. */
export function rememberSqlite(config: Config, c: Container): void {
  const key = templateKey(config);
  if (!key || sqliteTemplates.has(key) || !c.db.sqlite) return;
  if (!sqliteTemplateDir) {
    const dir = fs.mkdtempSync(path.join(path.dirname(config.dataDir), 'hearth-test-template-'));
    process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    sqliteTemplateDir = dir;
  }
  const file = path.join(sqliteTemplateDir, `${sqliteTemplates.size}.sqlite3`);
  c.db.sqlite.prepare('vacuum into ?').run(file);
  sqliteTemplates.set(key, file);
}

// ------------------------------------------------------------------------------------------------------ PostgreSQL

interface PgSnapshot {
  /** every table of the schema */
  tables: string[];
  /** the tables with rows after the first start, as JSON arrays */
  rows: Map<string, string>;
  /** every sequence: [name, last_value, is_called] */
  sequences: [string, number, boolean][];
  /** the schema's tables, columns and triggers: a pooled schema must still match */
  shape: string;
}

const pgSnapshots = new Map<string, PgSnapshot>();
/** schemas whose test ended, ready to be reset for the next one */
const pgPool: string[] = [];
const pgAll = new Set<string>();
/** false once resetting failed (no privilege for session_replication_role …): fresh schemas only */
let pgReuse = !NO_TEMPLATES;
let exitHook = false;

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

function shapeQuery(schema: string): string {
  const ns = `${pg.escapeLiteral(schema)}::regnamespace`;
  return `select md5(coalesce((select string_agg(c.relname || ':' || c.relkind::text || ':' || c.relnatts, ',' order by c.relname)
      from pg_class c where c.relnamespace = ${ns}), '') || '|' || coalesce((select string_agg(t.tgname, ',' order by t.tgname)
      from pg_trigger t join pg_class c on c.oid = t.tgrelid where c.relnamespace = ${ns}), '') || '|' ||
      coalesce((select string_agg(a.attname || ':' || a.atttypid::text, ',' order by c.relname, a.attnum)
      from pg_attribute a join pg_class c on c.oid = a.attrelid where c.relnamespace = ${ns} and c.relkind = 'r' and a.attnum > 0
      and not a.attisdropped), '')) as shape`;
}

/** A schema for a new test app: a pooled one reset to the first-start state, else a new empty one (null key: new). */
export async function acquirePgSchema(url: string, config: Config): Promise<string> {
  const key = templateKey(config);
  const snapshot = key ? pgSnapshots.get(key) : undefined;
  if (snapshot && pgReuse) {
    while (pgReuse && pgPool.length > 0) {
      const schema = pgPool.pop()!;
      try {
        await withClient(url, (client) => client.query(resetSql(schema, snapshot)));
        return schema;
      } catch (err) {
        // no privilege to turn triggers off, a lock held by a leftover connection …: this schema goes, later tests migrate
        if ((err as { code?: string }).code === '42501') pgReuse = false;
        await dropPgSchema(url, schema);
      }
    }
  }
  const schema = 't_' + crypto.randomBytes(6).toString('hex');
  await withClient(url, (client) => client.query(`create schema ${schema}`));
  pgAll.add(schema);
  if (!exitHook) {
    exitHook = true;
    // drops the pooled schemas once the tests of this process are done (beforeExit may run async work)
    process.on('beforeExit', () => {
      const left = [...pgAll];
      pgAll.clear();
      pgPool.length = 0;
      if (left.length) void withClient(url, (client) => client.query(left.map((s) => `drop schema if exists ${s} cascade;`).join('\n'))).catch(() => {});
    });
  }
  return schema;
}

/** After createContainer on a new schema: the first start's state of this configuration, kept to reset pooled schemas. */
export async function rememberPg(url: string, config: Config, schema: string): Promise<void> {
  const key = templateKey(config);
  if (!key || pgSnapshots.has(key) || !pgReuse) return;
  await withClient(url, async (client) => {
    const tables = (
      await client.query<{ name: string }>(`select tablename as name from pg_tables where schemaname = $1 order by tablename`, [schema])
    ).rows.map((r) => r.name);
    const counts = await client.query(
      `select ${tables.map((t, i) => `(select coalesce(json_agg(x), '[]')::text from ${schema}.${ident(t)} x) as c${i}`).join(', ')}`,
    );
    const rows = new Map<string, string>();
    tables.forEach((t, i) => {
      const json = counts.rows[0][`c${i}`] as string;
      if (json !== '[]') rows.set(t, json);
    });
    const sequences = (
      await client.query<{ name: string; last_value: number; is_called: boolean }>(
        `select s.relname as name, (pg_sequence_last_value(s.oid) is not null) as is_called,
           coalesce(pg_sequence_last_value(s.oid), q.seqstart) as last_value
         from pg_class s join pg_sequence q on q.seqrelid = s.oid where s.relnamespace = $1::regnamespace and s.relkind = 'S'`,
        [schema],
      )
    ).rows.map((r): [string, number, boolean] => [r.name, Number(r.last_value), r.is_called]);
    const shape = (await client.query<{ shape: string }>(shapeQuery(schema))).rows[0].shape;
    pgSnapshots.set(key, { tables, rows, sequences, shape });
  });
}

function resetSql(schema: string, s: PgSnapshot): string {
  const parts = [
    'begin',
    // no user triggers (table versions, notifications) and no foreign-key checks while the tables are emptied and refilled
    'set local session_replication_role = replica',
    "set local lock_timeout = '10s'",
    ...s.tables.map((t) => `delete from ${schema}.${ident(t)}`),
    ...[...s.rows].map(
      ([t, json]) =>
        `insert into ${schema}.${ident(t)} overriding system value select * from json_populate_recordset(null::${schema}.${ident(t)}, ${pg.escapeLiteral(json)})`,
    ),
    s.sequences.length
      ? `select ${s.sequences.map(([name, v, called]) => `setval(${pg.escapeLiteral(`${schema}.${ident(name)}`)}, ${v}, ${called})`).join(', ')}`
      : 'select 1',
    'commit',
  ];
  return parts.join(';\n');
}

/** After the test: back into the pool when its tables and triggers are as the first start left them, else dropped. */
export async function releasePgSchema(url: string, config: Config, schema: string): Promise<void> {
  const key = templateKey(config);
  const snapshot = key ? pgSnapshots.get(key) : undefined;
  if (pgReuse && snapshot) {
    const shape = await withClient(url, (client) => client.query<{ shape: string }>(shapeQuery(schema)));
    if (shape.rows[0].shape === snapshot.shape) {
      pgPool.push(schema);
      return;
    }
  }
  await dropPgSchema(url, schema);
}

async function dropPgSchema(url: string, schema: string): Promise<void> {
  pgAll.delete(schema);
  await withClient(url, (client) => client.query(`drop schema ${schema} cascade`));
}
