import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';
import { trackTableVersions } from '../versions.ts';

// CI/CD variables (GitLab's Ci::InstanceVariable, Ci::GroupVariable, Ci::Variable) in one table: a project's
// (project_id), a group's (group_id, inherited by its subgroups and projects) or the instance's (neither).
// `value` is sealed with the process's keyring (lib/secrets.ts Keyring: "k1:<key id>:…"), never in clear.
// One key per owner and environment scope (instance variables are all scope '*'); the unique index reads
// a missing owner as 0 so that it binds instance variables too.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const t = db.schema.createTable('ci_variables');
  await (dialect === 'postgres' ? t.addColumn('id', 'serial', (c) => c.primaryKey()) : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement()))
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('variable_type', 'text', (c) => c.notNull().defaultTo('env_var'))
    .addColumn('protected', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('masked', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('hidden', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('raw', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('environment_scope', 'text', (c) => c.notNull().defaultTo('*'))
    .addColumn('description', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await sql`create unique index ci_variables_owner_key on ci_variables (coalesce(project_id, 0), coalesce(group_id, 0), key, environment_scope)`.execute(db);
  await db.schema.createIndex('ci_variables_project').on('ci_variables').columns(['project_id', 'key']).execute();
  await db.schema.createIndex('ci_variables_group').on('ci_variables').columns(['group_id', 'key']).execute();
  await trackTableVersions(db, dialect, ['ci_variables']);
}
