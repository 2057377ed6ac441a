import { sql, type Kysely, type CreateTableBuilder } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';
import { trackTableVersions } from '../versions.ts';

export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const id = <T extends string>(t: CreateTableBuilder<T, any>) =>
    dialect === 'postgres' ? t.addColumn('id', 'serial', (c) => c.primaryKey()) : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
  const int = (def: number) => (c: any) => c.notNull().defaultTo(def);

  // Users' personal namespaces and groups (with subgroups). traversal_ids is "/1/5/9/": the ids from
  // the root down to this namespace, so ancestors and descendants are prefix matches.
  await id(db.schema.createTable('namespaces'))
    .addColumn('type', 'text', (c) => c.notNull()) // User | Group
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('full_path', 'text', (c) => c.notNull())
    .addColumn('parent_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('traversal_ids', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('owner_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('visibility', 'text', (c) => c.notNull().defaultTo('private'))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('avatar_url', 'text')
    .addColumn('request_access_enabled', 'integer', int(1))
    .addColumn('project_creation_level', 'text', (c) => c.notNull().defaultTo('developer'))
    .addColumn('subgroup_creation_level', 'text', (c) => c.notNull().defaultTo('maintainer'))
    .addColumn('share_with_group_lock', 'integer', int(0))
    .addColumn('settings', 'text', (c) => c.notNull().defaultTo('{}')) // the rest of GitLab's group attributes
    .addColumn('created_by_id', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await sql`create unique index namespaces_full_path_lower on namespaces (lower(full_path))`.execute(db);
  await db.schema.createIndex('namespaces_parent').on('namespaces').columns(['parent_id', 'id']).execute();
  await db.schema.createIndex('namespaces_traversal').on('namespaces').column('traversal_ids').execute();
  await db.schema.createIndex('namespaces_owner').on('namespaces').column('owner_id').execute();

  await id(db.schema.createTable('projects'))
    .addColumn('namespace_id', 'integer', (c) => c.notNull().references('namespaces.id'))
    .addColumn('creator_id', 'integer')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('visibility', 'text', (c) => c.notNull().defaultTo('private'))
    .addColumn('default_branch', 'text')
    .addColumn('archived', 'integer', int(0))
    .addColumn('repository_storage', 'text', (c) => c.notNull().defaultTo('default'))
    .addColumn('topics', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('settings', 'text', (c) => c.notNull().defaultTo('{}')) // feature flags and access levels
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('last_activity_at', 'text', (c) => c.notNull())
    .execute();
  await sql`create unique index projects_namespace_path_lower on projects (namespace_id, lower(path))`.execute(db);
  await sql`create unique index projects_namespace_name_lower on projects (namespace_id, lower(name))`.execute(db);
  await db.schema.createIndex('projects_visibility').on('projects').columns(['visibility', 'id']).execute();

  await id(db.schema.createTable('member_roles'))
    .addColumn('namespace_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('base_access_level', 'integer', (c) => c.notNull())
    .addColumn('permissions', 'text', (c) => c.notNull().defaultTo('{}')) // JSON: permission → true
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  // A membership of a user in a project or a namespace (group).
  await id(db.schema.createTable('members'))
    .addColumn('source_type', 'text', (c) => c.notNull()) // Project | Namespace
    .addColumn('source_id', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('access_level', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('member_role_id', 'integer', (c) => c.references('member_roles.id').onDelete('set null'))
    .addColumn('created_by_id', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('members_source_user').unique().on('members').columns(['source_type', 'source_id', 'user_id']).execute();
  await db.schema.createIndex('members_user').on('members').columns(['user_id', 'source_type', 'source_id']).execute();

  // Old paths of renamed or moved projects and groups.
  await id(db.schema.createTable('redirect_routes'))
    .addColumn('source_type', 'text', (c) => c.notNull())
    .addColumn('source_id', 'integer', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await sql`create unique index redirect_routes_path_lower on redirect_routes (lower(path))`.execute(db);

  await trackTableVersions(db, dialect, ['namespaces', 'projects', 'member_roles', 'members', 'redirect_routes']);
}
