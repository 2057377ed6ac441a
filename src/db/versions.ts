// Table versions: a counter per table, bumped by a trigger in the same transaction as every write.
// Caches key their entries by the versions they were computed from, so a write on any node makes
// them miss at once (data read after a version is never older than that version).
import { sql, type Kysely } from 'kysely';
import type { DialectName } from './connect.ts';

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

export async function readVersions(db: Kysely<any>): Promise<Versions> {
  const rows = await db.selectFrom('table_versions').select(['name', 'version']).execute();
  const out: Versions = {};
  for (const r of rows) out[r.name as string] = Number(r.version);
  return out;
}

/** The part of a snapshot a cache entry depends on, as one comparable string. */
export function stamp(v: Versions, tables: readonly string[]): string {
  let s = '';
  for (const t of tables) s += (v[t] ?? -1) + ':';
  return s;
}
