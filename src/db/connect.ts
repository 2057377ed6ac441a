// createDb(config) → { kysely, dialect }. The one place that knows how to open either database.
import fs from 'node:fs';
import path from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import type { Database } from './schema.ts';
import { VersionFeed } from './versions.ts';
import { registerRegexp } from './regexp.ts';
import { limitedReads, type LimitedReads } from './limited-reads.ts';
import { observeQuery } from '../metrics/registry.ts';
import { notifyStatementObservers } from './statement-observers.ts';

export type DialectName = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  dialect: DialectName;
  /** the embedded database's handle, for the few synchronous fast paths in db/ (null on PostgreSQL) */
  sqlite: SQLite.Database | null;
  /** statements that wrote through this process's connections, counted after they ran */
  localWrites: { count: number };
  /** PostgreSQL: the table versions as notified (null on SQLite) */
  versionFeed: VersionFeed | null;
  /** reads whose cost a user controls (a search with their regular expression), under a time limit */
  limited: LimitedReads;
  /** PostgreSQL: the connection pool, for its figures in /-/metrics (null on SQLite) */
  pool: pg.Pool | null;
  close(): Promise<void>;
}

export interface DbOptions {
  databaseUrl: string | null;
  dataDir: string;
  /** SQLite file name override (tests use one per test). */
  sqliteFile?: string;
  /** PostgreSQL schema to use (tests use a fresh one per test). */
  pgSchema?: string;
}

/** Kysely's `log`: the duration metric, and the statement to whoever observes them */
const logQuery: typeof observeQuery = (event) => {
  observeQuery(event);
  notifyStatementObservers((event as unknown as { query: { sql: string; parameters: readonly unknown[] } }).query);
};

// bigint (int8) counts and ids come back as numbers; timestamps stay text (we store text).
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1700, (v) => Number(v));

export function createDb(opts: DbOptions): Db {
  if (opts.databaseUrl) {
    // jit=off: short OLTP queries whose estimates run high (a correlated subplan per row) were JIT-compiled
    // for 350-600 ms each (bench/merge-requests.ts); no query here runs long enough to win it back.
    // synchronize_seqscans=off: a list's count stops at 10,001 rows, and on a big table a sequential scan
    // would start where the last one stopped (to share reads with concurrent scans), reading cold pages each
    // time: 7-13 ms with a 297 ms outlier in 30 at 1.5M merge requests, 4-9 ms from the first block.
    // max_parallel_workers_per_gather=0: a list query is short, and workers of one request take the cores of
    // the others; with them the planner also preferred a parallel scan of every merge request (45 ms) to the
    // search's trigram indexes (15 ms) for a capped count.
    const options = [
      '-c jit=off',
      '-c synchronize_seqscans=off',
      '-c max_parallel_workers_per_gather=0',
      ...(opts.pgSchema ? [`-c search_path=${opts.pgSchema}`] : []),
    ].join(' ');
    const settings = { connectionString: opts.databaseUrl, options };
    const pool = new pg.Pool({ ...settings, max: 10 });
    const localWrites = { count: 0 };
    pool.on('connect', (client) => countWrites(client, localWrites));
    const versionFeed = new VersionFeed(() => new pg.Client(settings));
    void versionFeed.start();
    const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: logQuery });
    const limited = limitedReads({ dialect: 'postgres', kysely });
    return {
      kysely,
      dialect: 'postgres',
      sqlite: null,
      localWrites,
      versionFeed,
      limited,
      pool,
      close: async () => {
        await limited.close();
        await versionFeed.close();
        await kysely.destroy();
      },
    };
  }
  fs.mkdirSync(opts.dataDir, { recursive: true });
  const file = opts.sqliteFile ?? path.join(opts.dataDir, 'hearth.sqlite3');
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('synchronous = NORMAL');
  registerRegexp(sqlite);
  const localWrites = { count: 0 };
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite, localWrites) }), log: logQuery });
  const limited = limitedReads({ dialect: 'sqlite', file });
  const close = async () => {
    await limited.close();
    await kysely.destroy();
  };
  return { kysely, dialect: 'sqlite', sqlite, localWrites, versionFeed: null, limited, pool: null, close };
}

const READ_ONLY = /^\s*select\b/i;
/** Counts the statements that may have written (anything but a plain select, commit included), once they ran. */
function countWrites(client: pg.PoolClient, writes: { count: number }): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
    if (text !== undefined && READ_ONLY.test(text)) return query(...args);
    const bump = () => void writes.count++;
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = (...res: unknown[]) => {
        bump();
        return callback(...res);
      };
      return query(...args);
    }
    const r = query(...args);
    if (r && typeof (r as Promise<unknown>).then === 'function') (r as Promise<unknown>).then(bump, bump);
    return r;
  };
}

/**
 * Kysely prepares every query anew; preparing costs more than running a point lookup. Prepared
 * statements are reusable, so keep them by SQL text (the same SQL always has the same shape).
 * Statements that write also count this connection's writes (`writes`), which lets hot paths
 * know, without a query, that nothing changed here since they last looked.
 * Statements that return rows read them as arrays and make each row with an object literal
 * compiled for the statement's columns (`rowMaker`): better-sqlite3 builds a row object property by
 * property, which costs three times as much for a page of wide rows.
 */
/** `return {"a": r[0], "b": r[1]}` for the statement's columns; null when a name cannot be a literal's key. */
function rowMaker(columns: string[]): ((r: unknown[]) => Record<string, unknown>) | null {
  if (columns.includes('__proto__')) return null;
  return new Function('r', `return {${columns.map((name, i) => `${JSON.stringify(name)}: r[${i}]`).join(', ')}};`) as (r: unknown[]) => Record<string, unknown>;
}

/** A statement that returns rows, as Kysely's driver uses it (reader, all, iterate), its rows made by rowMaker. */
function rowsAsObjects(stmt: SQLite.Statement, writes: { count: number }): SQLite.Statement {
  const make = rowMaker(stmt.columns().map((c) => c.name));
  if (!make) return stmt;
  stmt.raw(true);
  const bump = stmt.readonly ? () => {} : () => void writes.count++;
  const all = (...params: unknown[]) => {
    const rows = stmt.all(...params) as unknown[][];
    bump();
    return rows.map(make);
  };
  function* iterate(...params: unknown[]) {
    bump();
    for (const r of stmt.iterate(...params) as IterableIterator<unknown[]>) yield make!(r);
  }
  const get = (...params: unknown[]) => {
    const r = stmt.get(...params) as unknown[] | undefined;
    bump();
    return r === undefined ? undefined : make(r);
  };
  return { reader: true, readonly: stmt.readonly, source: stmt.source, all, iterate, get } as unknown as SQLite.Statement;
}

function withStatementCache(db: SQLite.Database, writes: { count: number }): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const counted = (stmt: SQLite.Statement): SQLite.Statement => {
    if (stmt.readonly) return stmt;
    const bump = <T>(r: T): T => {
      writes.count++;
      return r;
    };
    return new Proxy(stmt, {
      get(target, prop) {
        if (prop === 'run') return (...a: unknown[]) => bump(target.run(...a));
        if (prop === 'all') return (...a: unknown[]) => bump(target.all(...a));
        if (prop === 'get') return (...a: unknown[]) => bump(target.get(...a));
        if (prop === 'iterate') return (...a: unknown[]) => bump(target.iterate(...a));
        const v = Reflect.get(target, prop, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
  };
  const prepare = (source: string) => {
    let stmt = cache.get(source);
    if (!stmt) {
      const prepared = db.prepare(source);
      stmt = prepared.reader ? rowsAsObjects(prepared, writes) : counted(prepared);
      if (cache.size >= 1000) cache.clear();
      cache.set(source, stmt);
    }
    return stmt;
  };
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === 'prepare') return prepare;
      if (prop === 'close')
        return () => {
          cache.clear();
          return target.close();
        };
      if (prop === 'exec')
        return (source: string) => {
          writes.count++;
          return target.exec(source);
        };
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}
