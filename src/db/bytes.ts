// Byte columns read in PostgreSQL's binary format. In the text format a bytea travels as hex: twice its size on
// the wire, encoded by the server and decoded here. A job log's live reads are megabytes, and the hex round
// trip cost PostgreSQL 19 ms per MB against SQLite's 4 (bench/ci-live-log.ts). SQLite returns the bytes as they are.
import type { Compilable } from 'kysely';
import type pg from 'pg';
import { observeQuery } from '../metrics/registry.ts';
import type { Db } from './connect.ts';
import { notifyStatementObservers } from './statement-observers.ts';

/** every column as the bytes the server sent (the query selects one bytea column) */
const AS_SENT = { getTypeParser: () => (v: Buffer) => v };

/** The one bytea column of each row of `query`, in order (`query` selects that column only, as `column`). */
export async function selectBytes(
  db: Db,
  query: Compilable<Record<string, unknown>> & { execute(): Promise<Record<string, unknown>[]> },
  column: string,
): Promise<Buffer[]> {
  if (!db.pool) return (await query.execute()).map((r) => Buffer.from(r[column] as Uint8Array));
  const compiled = query.compile();
  const start = performance.now();
  // `binary` is pg's result format switch (missing from its type definitions)
  const config = { text: compiled.sql, values: [...compiled.parameters], binary: true, types: AS_SENT } as unknown as pg.QueryConfig;
  const res = await db.pool.query<Record<string, Buffer>>(config);
  observeQuery({ level: 'query', query: compiled, queryDurationMillis: performance.now() - start });
  notifyStatementObservers(compiled);
  return res.rows.map((r) => r[column]!);
}
