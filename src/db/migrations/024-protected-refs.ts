import type { CreateTableBuilder, Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';
import { trackTableVersions } from '../versions.ts';

// Protected branches and protected tags: GitLab's protected_branches and
// protected_tags with their access levels (protected_branch_push_access_levels, …) in one table.
// Existing projects get the protection of their default branch from the group's or the instance's
// default_branch_protection_defaults, as GitLab's ProtectDefaultBranchService gave it at their first push.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const id = <T extends string>(t: CreateTableBuilder<T, any>) =>
    dialect === 'postgres' ? t.addColumn('id', 'serial', (c) => c.primaryKey()) : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());

  // name: a branch name or a wildcard (`*` matches anything, GitLab's RefMatcher)
  await id(db.schema.createTable('protected_branches'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('allow_force_push', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('code_owner_approval_required', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('protected_branches_project_name').on('protected_branches').columns(['project_id', 'name']).unique().execute();

  await id(db.schema.createTable('protected_tags'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('protected_tags_project_name').on('protected_tags').columns(['project_id', 'name']).unique().execute();

  // One row per access level of a protected branch (action push | merge | unprotect) or tag (create):
  // a role (access_level: 0 no one, 30, 40, 60 administrators), a user or a group.
  await id(db.schema.createTable('protected_ref_access_levels'))
    .addColumn('protected_branch_id', 'integer', (c) => c.references('protected_branches.id').onDelete('cascade'))
    .addColumn('protected_tag_id', 'integer', (c) => c.references('protected_tags.id').onDelete('cascade'))
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('access_level', 'integer')
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('protected_ref_access_levels_branch').on('protected_ref_access_levels').column('protected_branch_id').execute();
  await db.schema.createIndex('protected_ref_access_levels_tag').on('protected_ref_access_levels').column('protected_tag_id').execute();

  await trackTableVersions(db, dialect, ['protected_branches', 'protected_tags', 'protected_ref_access_levels']);

  // the default branch of every existing project, protected as the defaults say
  const settingsRow = await db.selectFrom('application_settings').select('settings').where('id', '=', 1).executeTakeFirst();
  const instance = parse(settingsRow?.settings).default_branch_protection_defaults;
  const namespaces = new Map<number, Defaults | null>();
  for (const ns of await db.selectFrom('namespaces').select(['id', 'type', 'settings']).where('type', '=', 'Group').execute()) {
    namespaces.set(Number(ns.id), (parse(ns.settings).default_branch_protection_defaults as Defaults | null | undefined) ?? null);
  }
  const now = new Date().toISOString();
  const projects = await db.selectFrom('projects').select(['id', 'namespace_id', 'default_branch']).orderBy('id').execute();
  for (const p of projects) {
    const d: Defaults = namespaces.get(Number(p.namespace_id)) ?? (instance as Defaults | null | undefined) ?? {};
    const push = levels(d.allowed_to_push);
    const merge = levels(d.allowed_to_merge);
    const force = d.allow_force_push === true;
    if (push.includes(30) && force) continue; // "not protected": no rule (GitLab's PROTECTION_NONE)
    const row = await db
      .insertInto('protected_branches')
      .values({
        project_id: p.id,
        name: p.default_branch ?? 'main',
        allow_force_push: force ? 1 : 0,
        code_owner_approval_required: d.code_owner_approval_required === true ? 1 : 0,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const rows = [...push.map((l) => ({ action: 'push', access_level: l })), ...merge.map((l) => ({ action: 'merge', access_level: l }))].map((r) => ({
      ...r,
      protected_branch_id: row.id,
      protected_tag_id: null,
      user_id: null,
      group_id: null,
      created_at: now,
      updated_at: now,
    }));
    await db.insertInto('protected_ref_access_levels').values(rows).execute();
  }
}

interface Defaults {
  allowed_to_push?: { access_level: number }[];
  allowed_to_merge?: { access_level: number }[];
  allow_force_push?: boolean;
  code_owner_approval_required?: boolean;
}

function parse(json: string | null | undefined): Record<string, unknown> {
  try {
    const v = json ? JSON.parse(json) : {};
    return v && typeof v === 'object' ? v : {};
  } catch {
    return {};
  }
}

function levels(list: { access_level: number }[] | undefined): number[] {
  return Array.isArray(list) && list.length ? [...new Set(list.map((e) => Number(e.access_level)))] : [40];
}
