import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';

// Indexes and column rules for 10× data (bench/scale.ts: 1M users, 100k projects, 1.5M merge requests,
// 10M units), each chosen from the plans of the list queries there:
// - PostgreSQL compares `namespaces.traversal_ids` byte by byte (collation "C"), so that a subtree ('/1/5/'
//   and everything under it) is a range of the btree index (`inSubtree` in db/sql.ts) on every server,
//   whatever the database's default collation. SQLite compares text byte by byte already.
// - Searches (`lower(column) like '%term%'`) on PostgreSQL: trigram GIN indexes (pg_trgm) on the columns the
//   users, projects, groups, namespaces and merge request searches read, and statistics of the same expressions
//   (PostgreSQL 14, the oldest supported) for the planner's estimates. pg_trgm is a trusted
//   extension (PostgreSQL 13+): the database owner may create it. When it cannot be created (no privilege,
//   not installed), the migration goes on without these indexes and searches read the tables instead.
// - users' public e-mail, case-insensitively (a non-administrator's exact e-mail search).
// - groups in each order of the groups list: namespaces hold a personal namespace per user, so the groups
//   are found by type first.
// - jobs by kind: each loop claims its own kind (jobs/job-row.ts), which the ready index (state, run_at) left to
//   a filter over every kind's queue.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  await sql`create index users_public_email_lower on users (lower(public_email))`.execute(db);
  const index = (name: string, table: string, columns: string[]) => db.schema.createIndex(name).on(table).columns(columns).execute();
  await index('namespaces_type_name', 'namespaces', ['type', 'name', 'id']);
  await index('namespaces_type_path', 'namespaces', ['type', 'path', 'id']);
  // a user's personal namespace (owner and type): with the type-first indexes above, SQLite (no statistics) took
  // `type = 'User'` as the narrower condition and read every personal namespace
  await index('namespaces_owner_type', 'namespaces', ['owner_id', 'type']);
  await index('jobs_kind_ready', 'jobs', ['kind', 'state', 'run_at']);
  if (dialect !== 'postgres') return;
  await sql`alter table namespaces alter column traversal_ids type text collate "C"`.execute(db);
  const schema = await trigramSchema(db);
  if (!schema) return;
  // each indexed expression also gets statistics (PostgreSQL 14+), so that the planner knows how many rows a
  // pattern matches: a rare word is read from the index, a common one by walking the list's order
  const trigram = async (name: string, table: string, column: string) => {
    await sql`create index ${sql.id(name)} on ${sql.id(table)} using gin (lower(${sql.ref(column)}) ${sql.id(schema)}.gin_trgm_ops)`.execute(db);
    await sql`create statistics ${sql.id(`${table}_${column}_lower`)} on (lower(${sql.ref(column)})) from ${sql.id(table)}`.execute(db);
  };
  await trigram('users_name_trgm', 'users', 'name');
  await trigram('users_username_trgm', 'users', 'username');
  await trigram('projects_name_trgm', 'projects', 'name');
  await trigram('projects_path_trgm', 'projects', 'path');
  await trigram('projects_description_trgm', 'projects', 'description');
  await trigram('namespaces_name_trgm', 'namespaces', 'name');
  await trigram('namespaces_path_trgm', 'namespaces', 'path');
  await trigram('namespaces_full_path_trgm', 'namespaces', 'full_path');
  await trigram('merge_requests_title_trgm', 'merge_requests', 'title');
  await trigram('merge_requests_description_trgm', 'merge_requests', 'description');
  for (const table of ['users', 'projects', 'namespaces', 'merge_requests']) await sql`analyze ${sql.id(table)}`.execute(db);
}

/**
 * The schema holding pg_trgm, created in `public` when missing; null when it cannot be. (Another
 * process may create it at the same moment: then ours fails, and theirs is found.)
 */
async function trigramSchema(db: Kysely<any>): Promise<string | null> {
  const installed = async () =>
    (
      await sql<{ schema: string }>`select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace
        where e.extname = 'pg_trgm'`.execute(db)
    ).rows[0]?.schema ?? null;
  const found = await installed();
  if (found) return found;
  await sql`savepoint trigram`.execute(db);
  try {
    await sql`create extension pg_trgm with schema public`.execute(db);
    await sql`release savepoint trigram`.execute(db);
    return 'public';
  } catch {
    await sql`rollback to savepoint trigram`.execute(db);
    return installed();
  }
}
