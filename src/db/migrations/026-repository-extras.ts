import type { CreateTableBuilder, Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';

// Commit comments and repository housekeeping.
//
// commit_notes: GitLab's notes on a commit (noteable_type 'Commit', commit_id the SHA). `path`,
// `line`, `line_type` and `line_code` are set when the comment found its line in the commit's diff (a
// LegacyDiffNote), all null otherwise. Housekeeping needs no table: its runs are jobs of kind
// repository_housekeeping in the outbox (one queued or running per project at a time).
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const id = <T extends string>(t: CreateTableBuilder<T, any>) =>
    dialect === 'postgres' ? t.addColumn('id', 'serial', (c) => c.primaryKey()) : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());

  await id(db.schema.createTable('commit_notes'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('commit_id', 'text', (c) => c.notNull())
    .addColumn('author_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('note', 'text', (c) => c.notNull())
    .addColumn('path', 'text')
    .addColumn('line', 'integer')
    .addColumn('line_type', 'text')
    .addColumn('line_code', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('commit_notes_commit').on('commit_notes').columns(['project_id', 'commit_id', 'id']).execute();
}
