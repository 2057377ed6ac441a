// Table versions: a counter per table, bumped by a trigger in the same transaction as every write.
// Caches key their entries by the versions they were computed from, so a write on any node makes
// them miss at once (data read after a version is never older than that version).
import { sql, type CompiledQuery, type Kysely } from 'kysely';
import type { Db, DialectName } from './connect.ts';

export type Versions = Record<string, number>;

/** Creates the counters and the triggers for `tables` (call from a migration). */
export async function trackTableVersions(db: Kysely<any>, dialect: DialectName, tables: string[]): Promise<void> {
  await db.schema
    .createTable('table_versions')
    .ifNotExists()
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  if (dialect === 'postgres') {
    await sql`create or replace function bump_table_version() returns trigger language plpgsql as $$
      begin update table_versions set version = version + 1 where name = TG_TABLE_NAME; return null; end $$`.execute(db);
  }
  for (const t of tables) {
    await db.insertInto('table_versions').values({ name: t, version: 0 }).onConflict((oc) => oc.column('name').doNothing()).execute();
    if (dialect === 'postgres') {
      await sql`create trigger ${sql.id(`tv_${t}`)} after insert or update or delete on ${sql.table(t)}
        for each statement execute function bump_table_version()`.execute(db);
    } else {
      for (const op of ['insert', 'update', 'delete']) {
        await sql`create trigger ${sql.id(`tv_${t}_${op}`)} after ${sql.raw(op)} on ${sql.table(t)}
          begin update table_versions set version = version + 1 where name = ${sql.lit(t)}; end`.execute(db);
      }
    }
  }
}

const compiled = new WeakMap<Kysely<any>, CompiledQuery>();
const statements = new WeakMap<object, { all(): unknown[] }>();

/**
 * One small query per request. On SQLite it runs synchronously on the handle (the versions table is
 * tiny, and Kysely's connection mutex costs more than the query); on PostgreSQL it is compiled once.
 */
export async function readVersions(db: Db): Promise<Versions> {
  const out: Versions = {};
  if (db.sqlite) {
    let stmt = statements.get(db.sqlite);
    if (!stmt) statements.set(db.sqlite, (stmt = db.sqlite.prepare('select name, version from table_versions').raw()));
    for (const [name, version] of stmt.all() as [string, number][]) out[name] = version;
    return out;
  }
  const k = db.kysely as unknown as Kysely<any>;
  let q = compiled.get(k);
  if (!q) compiled.set(k, (q = k.selectFrom('table_versions').select(['name', 'version']).compile()));
  const { rows } = await k.executeQuery<{ name: string; version: number }>(q);
  for (const r of rows) out[r.name] = Number(r.version);
  return out;
}

/** The part of a snapshot a cache entry depends on, as one comparable string. */
export function stamp(v: Versions, tables: readonly string[]): string {
  let s = '';
  for (const t of tables) s += (v[t] ?? -1) + ':';
  return s;
}
