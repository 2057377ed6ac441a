// Table versions: a change token per table, replaced by a trigger in the same transaction as every
// write. Caches key their entries by the versions they were computed from, so a write on any node
// makes them miss at once (data read after a version is never older than that version). Tokens are
// never reused — a sequence on PostgreSQL, a random 53-bit value on SQLite — so a rolled-back write
// cannot bring back a version that a cache entry was computed from.
import { sql, type CompiledQuery, type Kysely } from 'kysely';
import type { Db, DialectName } from './connect.ts';

export type Versions = Record<string, number>;

/** Creates the counters and the triggers for `tables` (call from a migration). */
export async function trackTableVersions(db: Kysely<any>, dialect: DialectName, tables: string[]): Promise<void> {
  await db.schema
    .createTable('table_versions')
    .ifNotExists()
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('version', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  if (dialect === 'postgres') {
    await sql`create sequence if not exists table_versions_seq`.execute(db);
    await sql`create or replace function bump_table_version() returns trigger language plpgsql as $$
      begin update table_versions set version = nextval('table_versions_seq') where name = TG_TABLE_NAME; return null; end $$`.execute(db);
  }
  for (const t of tables) {
    await db.insertInto('table_versions').values({ name: t, version: 0 }).onConflict((oc) => oc.column('name').doNothing()).execute();
    if (dialect === 'postgres') {
      await sql`create trigger ${sql.id(`tv_${t}`)} after insert or update or delete on ${sql.table(t)}
        for each statement execute function bump_table_version()`.execute(db);
    } else {
      for (const op of ['insert', 'update', 'delete']) {
        await sql`create trigger ${sql.id(`tv_${t}_${op}`)} after ${sql.raw(op)} on ${sql.table(t)}
          begin update table_versions set version = abs(random()) % 9007199254740991 where name = ${sql.lit(t)}; end`.execute(db);
      }
    }
  }
}

const compiled = new WeakMap<Kysely<any>, CompiledQuery>();
const sqliteState = new WeakMap<
  object,
  { select: { all(): unknown[] }; dataVersion: { get(): unknown }; seen: string; versions: Versions; checkedAt: number; localWrites: number }
>();

/**
 * One snapshot per request. On SQLite the last snapshot is reused while nothing wrote: no statement
 * wrote through this connection and `PRAGMA data_version` (which moves when another connection, such
 * as the CLI, commits) is unchanged — asked at most once a millisecond. On PostgreSQL the query is compiled once.
 */
export async function readVersions(db: Db): Promise<Versions> {
  if (db.sqlite) {
    let st = sqliteState.get(db.sqlite);
    if (!st) {
      st = {
        select: db.sqlite.prepare('select name, version from table_versions').raw(),
        dataVersion: db.sqlite.prepare('pragma data_version').pluck(),
        seen: '',
        versions: {},
        checkedAt: -Infinity,
        localWrites: -1,
      };
      sqliteState.set(db.sqlite, st);
    }
    // Another process's commit is looked for at most once per millisecond (the pragma is a few µs).
    const now = performance.now();
    if (!db.sqlite.inTransaction && st.localWrites === db.localWrites.count && now - st.checkedAt < 1) return st.versions;
    const seen = `${db.localWrites.count}:${st.dataVersion.get()}:${db.sqlite.inTransaction}`;
    st.checkedAt = now;
    st.localWrites = db.localWrites.count;
    if (seen === st.seen && !db.sqlite.inTransaction) return st.versions;
    const out: Versions = {};
    for (const [name, version] of st.select.all() as [string, number | bigint][]) out[name] = Number(version);
    st.seen = seen;
    st.versions = out;
    return out;
  }
  const k = db.kysely as unknown as Kysely<any>;
  let q = compiled.get(k);
  if (!q) compiled.set(k, (q = k.selectFrom('table_versions').select(['name', 'version']).compile()));
  const { rows } = await k.executeQuery<{ name: string; version: number }>(q);
  const out: Versions = {};
  for (const r of rows) out[r.name] = Number(r.version);
  return out;
}

/** The part of a snapshot a cache entry depends on, as one comparable string. */
export function stamp(v: Versions, tables: readonly string[]): string {
  let s = '';
  for (const t of tables) s += (v[t] ?? -1) + ':';
  return s;
}
