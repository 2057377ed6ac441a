import type { CreateTableBuilder, Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';

// Unit edits:
// - units.pending_author: who made the pending edit, "Name <email>" (one commit per author), and
//   units.pending_author_id (the user, when there is one); both cleared when the edit is committed;
// - translation_projects.translation_review: Weblate's "Enable reviews" (approving needs unit.review);
// - translation_project_members: who may do what on a translation project whose components are not
//   projects of this server (role translate | review | manage), managed by administrators.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const id = <T extends string>(t: CreateTableBuilder<T, any>) =>
    dialect === 'postgres' ? t.addColumn('id', 'serial', (c) => c.primaryKey()) : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
  await db.schema
    .alterTable('units')
    .addColumn('pending_author', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema.alterTable('units').addColumn('pending_author_id', 'integer').execute();
  await db.schema
    .alterTable('translation_projects')
    .addColumn('translation_review', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await id(db.schema.createTable('translation_project_members'))
    .addColumn('project_id', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('translation_project_members_project_user')
    .on('translation_project_members')
    .columns(['project_id', 'user_id'])
    .unique()
    .execute();
  await db.schema.createIndex('translation_project_members_user').on('translation_project_members').column('user_id').execute();
  await db.schema.createIndex('units_component_pending').on('units').columns(['component_id', 'pending']).execute();
}
