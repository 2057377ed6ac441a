import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';
import { trackTableVersions } from '../versions.ts';

// Subscriptions (GitLab's subscriptions table, the Subscribable concern): a user subscribed to, or
// explicitly unsubscribed from, a label (subscribable_type 'Label'; 'MergeRequest' for merge requests),
// either everywhere (project_id null) or within one project (a group label followed from a project).
// One row per user, thing and level.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const id =
    dialect === 'postgres'
      ? (t: any) => t.addColumn('id', 'serial', (c: any) => c.primaryKey())
      : (t: any) => t.addColumn('id', 'integer', (c: any) => c.primaryKey().autoIncrement());
  await id(db.schema.createTable('subscriptions'))
    .addColumn('user_id', 'integer', (c: any) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('subscribable_type', 'text', (c: any) => c.notNull())
    .addColumn('subscribable_id', 'integer', (c: any) => c.notNull())
    .addColumn('project_id', 'integer', (c: any) => c.references('projects.id').onDelete('cascade'))
    .addColumn('subscribed', 'integer', (c: any) => c.notNull())
    .addColumn('created_at', 'text', (c: any) => c.notNull())
    .addColumn('updated_at', 'text', (c: any) => c.notNull())
    .execute();
  await sql`create unique index subscriptions_unique on subscriptions (subscribable_type, subscribable_id, user_id, coalesce(project_id, 0))`.execute(db);
  await trackTableVersions(db, dialect, ['subscriptions']);
}
