import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';

// Pushes in flight (the journal that makes a crash between a ref update and its events recoverable):
// written before receive-pack starts, given the ref changes while git holds the ref locks (before the
// refs move), deleted in the transaction that writes the push's events. A row left by a process that
// died is replayed: the events of the changes that are visible in the repository are written once.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const table = db.schema.createTable('pending_pushes');
  await (dialect === 'postgres'
    ? table.addColumn('id', 'serial', (c) => c.primaryKey())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
  )
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull())
    // "<host>:<pid>:<process nonce>:<push>": the process that runs the push (or replays it)
    .addColumn('owner', 'text', (c) => c.notNull())
    // renewed while the push runs; a row whose lease ended may be taken over by any node
    .addColumn('lease_until', 'text', (c) => c.notNull())
    // "<before> <after> <ref>\n" lines, appended: the ref updates git prepared (each before its ref moved)
    .addColumn('changes', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('pending_pushes_project').on('pending_pushes').column('project_id').execute();
}
