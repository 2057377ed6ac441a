// Table versions: a change token per table, replaced by a trigger in the same transaction as every
// write (on PostgreSQL at its commit: see BUMP_FUNCTION_PG). Caches key their entries by the versions they were computed from, so a write makes them miss
// (data read after a version is never older than that version). Tokens are never reused — a sequence
// on PostgreSQL, a random 53-bit value on SQLite — so a rolled-back write cannot bring back a version
// that a cache entry was computed from.
//
// Reading them costs no query while nothing wrote: on SQLite, a local write counter and `PRAGMA
// data_version`; on PostgreSQL, a LISTEN connection (VersionFeed) that the trigger notifies on commit,
// plus the local write counter (a node reads its own writes at once; other nodes when the
// notification arrives, about a millisecond after the commit).
import type pg from 'pg';
import { sql, type CompiledQuery, type Kysely } from 'kysely';
import type { Db, DialectName } from './connect.ts';

/** The channel the PostgreSQL trigger notifies: payload `<schema>.<table>:<version>`. */
export const VERSIONS_CHANNEL = 'hearth_table_versions';

/**
 * PostgreSQL, during the transaction: a statement-level trigger notes the table in a transaction-local
 * setting (`hearth.tv_dirty`); no row is locked, so writers of one table do not wait for each other.
 */
export const NOTE_FUNCTION_PG = `create or replace function note_table_write() returns trigger language plpgsql as $$
  declare dirty text := coalesce(current_setting('hearth.tv_dirty', true), '');
  begin
    if position(',' || TG_TABLE_NAME || ',' in dirty) = 0 then
      perform set_config('hearth.tv_dirty', case when dirty = '' then ',' else dirty end || TG_TABLE_NAME || ',', true);
    end if;
    return null;
  end $$`;

/**
 * PostgreSQL, at commit (a deferred constraint trigger; its first firing in a transaction does the work):
 * the noted tables get new versions from the sequence, their rows locked in name order, and are announced
 * on commit. The lock is held from here to the end of the commit only, and taken in one order by every
 * writer, so writers neither queue for a whole transaction nor deadlock on versions; and as the row is
 * still written in the writing transaction, a later commit always has a later version.
 */
export const BUMP_FUNCTION_PG = `create or replace function bump_table_version() returns trigger language plpgsql as $$
  declare
    dirty text := coalesce(current_setting('hearth.tv_dirty', true), '');
    tables text[];
    r record;
  begin
    if dirty = '' then return null; end if;
    perform set_config('hearth.tv_dirty', '', true);
    tables := array(select t from unnest(string_to_array(trim(both ',' from dirty), ',')) t order by t);
    perform 1 from table_versions where name = any(tables) order by name for update;
    for r in update table_versions set version = nextval('table_versions_seq') where name = any(tables) returning name, version loop
      perform pg_notify('${VERSIONS_CHANNEL}', TG_TABLE_SCHEMA || '.' || r.name || ':' || r.version);
    end loop;
    return null;
  end $$`;

/** PostgreSQL: the two triggers of a tracked table (replacing those of an earlier version). */
export async function versionTriggersPg(db: Kysely<any>, table: string): Promise<void> {
  await sql`drop trigger if exists ${sql.id(`tv_${table}`)} on ${sql.table(table)}`.execute(db);
  await sql`drop trigger if exists ${sql.id(`tvc_${table}`)} on ${sql.table(table)}`.execute(db);
  await sql`create trigger ${sql.id(`tv_${table}`)} after insert or update or delete on ${sql.table(table)}
    for each statement execute function note_table_write()`.execute(db);
  await sql`create constraint trigger ${sql.id(`tvc_${table}`)} after insert or update or delete on ${sql.table(table)}
    deferrable initially deferred for each row execute function bump_table_version()`.execute(db);
}

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
    await sql.raw(NOTE_FUNCTION_PG).execute(db);
    await sql.raw(BUMP_FUNCTION_PG).execute(db);
  }
  for (const t of tables) {
    await db
      .insertInto('table_versions')
      .values({ name: t, version: 0 })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    if (dialect === 'postgres') {
      await versionTriggersPg(db, t);
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
  const feed = db.versionFeed;
  const writes = db.localWrites.count;
  if (feed?.current(writes)) return feed.versions;
  const since = feed?.generation;
  const k = db.kysely as unknown as Kysely<any>;
  let q = compiled.get(k);
  if (!q) compiled.set(k, (q = k.selectFrom('table_versions').select(['name', 'version']).compile()));
  const { rows } = await k.executeQuery<{ name: string; version: number }>(q);
  const out: Versions = {};
  for (const r of rows) out[r.name] = Number(r.version);
  feed?.synced(out, writes, since!);
  return feed?.current(writes) ? feed.versions : out;
}

/**
 * PostgreSQL: the table versions kept current by LISTEN. Valid while the connection listens, once a
 * query has read them after it started listening, and while this node has not written since that read
 * (its own writes commit before their notifications arrive: the next read queries again). Versions only
 * grow (a sequence), so reads and notifications merge by maximum, in whatever order they arrive.
 * When the connection drops, every read queries (as without the feed) until it listens again.
 */
export class VersionFeed {
  versions: Versions = {};
  /** bumped whenever the connection is lost or listens again: a read that started before is not trusted */
  generation = 0;
  private listening = false;
  private writesSeen = -1;
  private client: pg.Client | null = null;
  private closed = false;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly connect: () => pg.Client,
    private readonly retryMs = 1000,
  ) {}

  /** listening for notifications */
  get live(): boolean {
    return this.listening;
  }

  /** the listening connection's server process (tests end it to see the feed recover) */
  get pid(): number | undefined {
    return (this.client as unknown as { processID?: number } | null)?.processID;
  }

  /** true when `versions` can be used without a query */
  current(writes: number): boolean {
    return this.listening && this.writesSeen === writes;
  }

  /** a query's result, read when the local write counter was `writes` and the feed at `generation` */
  synced(read: Versions, writes: number, generation: number): void {
    if (!this.listening || generation !== this.generation) return;
    this.merge(read);
    // only moves forward: a slower read that started before a later write must not vouch for it
    if (writes > this.writesSeen) this.writesSeen = writes;
  }

  /** copy on write: a snapshot a request holds never changes under it */
  private merge(v: Versions): void {
    let next: Versions | null = null;
    for (const t in v) if (!(this.versions[t] >= v[t])) (next ??= { ...this.versions })[t] = v[t];
    if (next) this.versions = next;
  }

  async start(): Promise<void> {
    if (this.closed) return;
    const client = this.connect();
    this.client = client;
    const lost = () => {
      if (this.client !== client) return;
      this.client = null;
      this.reset();
      client.end().catch(() => {});
      if (!this.closed) this.retry = setTimeout(() => void this.start(), this.retryMs);
    };
    client.on('error', lost);
    client.on('end', lost);
    try {
      await client.connect();
      const { rows } = await client.query<{ schema: string }>('select current_schema() as schema');
      const prefix = rows[0].schema + '.';
      client.on('notification', (n) => {
        if (n.channel !== VERSIONS_CHANNEL || !n.payload?.startsWith(prefix)) return;
        const colon = n.payload.lastIndexOf(':');
        this.merge({ [n.payload.slice(prefix.length, colon)]: Number(n.payload.slice(colon + 1)) });
      });
      await client.query(`listen ${VERSIONS_CHANNEL}`);
      if (this.client !== client) return;
      this.generation++;
      this.listening = true;
    } catch {
      lost();
    }
  }

  private reset(): void {
    this.listening = false;
    this.writesSeen = -1;
    this.versions = {};
    this.generation++;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    this.reset();
    await client?.end().catch(() => {});
  }
}

/** The part of a snapshot a cache entry depends on, as one comparable string. */
export function stamp(v: Versions, tables: readonly string[]): string {
  let s = '';
  for (const t of tables) s += (v[t] ?? -1) + ':';
  return s;
}
