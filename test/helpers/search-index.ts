// SQLite's search tables (FTS5, migration 033) against the tables they index.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { Container } from '../../src/container.ts';

/**
 * On SQLite, each search table holds exactly what its table holds (FTS5's integrity check, the content table
 * compared too: it fails on an index the triggers left behind a write); nothing to check on PostgreSQL.
 */
export async function assertSearchIndexesInSync(c: Container): Promise<void> {
  if (c.db.dialect !== 'sqlite') return;
  for (const table of ['users', 'projects', 'namespaces', 'merge_requests']) {
    await assert.doesNotReject(
      sql.raw(`insert into ${table}_search (${table}_search, rank) values ('integrity-check', 1)`).execute(c.db.kysely),
      `${table}_search is in step with ${table}`,
    );
  }
}
