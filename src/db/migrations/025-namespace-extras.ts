import type { CreateTableBuilder, Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';
import { trackTableVersions } from '../versions.ts';

// Project and group custom attributes, project avatars. User and group avatars
// use the avatar_url columns users and namespaces already have; bans are the user state `banned`;
// identities are the existing `identities` table.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const id = <T extends string>(t: CreateTableBuilder<T, any>) =>
    dialect === 'postgres' ? t.addColumn('id', 'serial', (c) => c.primaryKey()) : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());

  // GitLab's project_custom_attributes and group_custom_attributes: one value per key and owner.
  await id(db.schema.createTable('project_custom_attributes'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('project_custom_attributes_owner_key').unique().on('project_custom_attributes').columns(['project_id', 'key']).execute();
  await db.schema.createIndex('project_custom_attributes_key_value').on('project_custom_attributes').columns(['key', 'value']).execute();

  await id(db.schema.createTable('group_custom_attributes'))
    .addColumn('group_id', 'integer', (c) => c.notNull().references('namespaces.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('group_custom_attributes_owner_key').unique().on('group_custom_attributes').columns(['group_id', 'key']).execute();
  await db.schema.createIndex('group_custom_attributes_key_value').on('group_custom_attributes').columns(['key', 'value']).execute();

  // The project's uploaded avatar: its absolute URL (GitLab's avatar_url), the blob under
  // avatars/project/<id>/<file name>. Users and namespaces already have the column.
  await db.schema.alterTable('projects').addColumn('avatar_url', 'text').execute();

  await trackTableVersions(db, dialect, ['project_custom_attributes', 'group_custom_attributes']);
}
