import { sql, type CreateTableBuilder, type Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';
import { trackTableVersions } from '../versions.ts';

// Pipeline triggers, pipeline schedules and the CI/CD job token scope (GitLab's ci_triggers,
// ci_pipeline_schedules, ci_pipeline_schedule_variables, ci_job_token_project_scope_links,
// ci_job_token_group_scope_links and project_ci_cd_settings.inbound_job_token_scope_enabled).
// - A trigger token (glptt-…) is shown in full to its owner on every read, so it is sealed (SecretBox),
//   with a digest beside it to find the trigger by its token.
// - A pipeline remembers the schedule or the trigger that created it (a schedule's pipelines, last_pipeline).
// - The inbound job token scope of a project is on unless its row says otherwise: projects that exist
//   now keep their open behaviour (a row with 0), new ones are restricted (GitLab 17's default).
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const id = <T extends string>(t: CreateTableBuilder<T, any>) =>
    dialect === 'postgres' ? t.addColumn('id', 'serial', (c) => c.primaryKey()) : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
  const project = (c: any) => c.notNull().references('projects.id').onDelete('cascade');

  await id(db.schema.createTable('ci_triggers'))
    .addColumn('project_id', 'integer', project)
    .addColumn('owner_id', 'integer')
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('token_digest', 'text', (c) => c.notNull().unique())
    .addColumn('token_sealed', 'text', (c) => c.notNull())
    .addColumn('last_used', 'text')
    .addColumn('expires_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ci_triggers_project').on('ci_triggers').columns(['project_id', 'id']).execute();

  await id(db.schema.createTable('ci_pipeline_schedules'))
    .addColumn('project_id', 'integer', project)
    .addColumn('owner_id', 'integer')
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('ref', 'text', (c) => c.notNull())
    .addColumn('cron', 'text', (c) => c.notNull())
    .addColumn('cron_timezone', 'text', (c) => c.notNull().defaultTo('UTC'))
    .addColumn('next_run_at', 'text')
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ci_pipeline_schedules_project').on('ci_pipeline_schedules').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('ci_pipeline_schedules_due').on('ci_pipeline_schedules').columns(['active', 'next_run_at']).execute();

  await id(db.schema.createTable('ci_pipeline_schedule_variables'))
    .addColumn('pipeline_schedule_id', 'integer', (c) => c.notNull().references('ci_pipeline_schedules.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('variable_type', 'text', (c) => c.notNull().defaultTo('env_var'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('ci_pipeline_schedule_variables_key')
    .unique()
    .on('ci_pipeline_schedule_variables')
    .columns(['pipeline_schedule_id', 'key'])
    .execute();

  await db.schema.alterTable('ci_pipelines').addColumn('pipeline_schedule_id', 'integer').execute();
  await db.schema.alterTable('ci_pipelines').addColumn('trigger_id', 'integer').execute();
  await db.schema.createIndex('ci_pipelines_schedule').on('ci_pipelines').columns(['pipeline_schedule_id', 'id']).execute();

  // source_project: the project whose allowlist it is; target: the project (or group) it lets in
  await id(db.schema.createTable('ci_job_token_project_scope_links'))
    .addColumn('source_project_id', 'integer', project)
    .addColumn('target_project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('direction', 'text', (c) => c.notNull().defaultTo('inbound'))
    .addColumn('added_by_id', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('ci_job_token_project_scope_links_pair')
    .unique()
    .on('ci_job_token_project_scope_links')
    .columns(['source_project_id', 'target_project_id', 'direction'])
    .execute();
  await id(db.schema.createTable('ci_job_token_group_scope_links'))
    .addColumn('source_project_id', 'integer', project)
    .addColumn('target_group_id', 'integer', (c) => c.notNull().references('namespaces.id').onDelete('cascade'))
    .addColumn('added_by_id', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('ci_job_token_group_scope_links_pair')
    .unique()
    .on('ci_job_token_group_scope_links')
    .columns(['source_project_id', 'target_group_id'])
    .execute();

  await db.schema
    .createTable('project_ci_cd_settings')
    .addColumn('project_id', 'integer', (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
    .addColumn('inbound_job_token_scope_enabled', 'integer', (c) => c.notNull())
    .execute();
  await sql`insert into project_ci_cd_settings (project_id, inbound_job_token_scope_enabled) select id, 0 from projects`.execute(db);

  // the job token scope is part of what a project resolution reads (its cache keys on these versions)
  await trackTableVersions(db, dialect, [
    'ci_triggers',
    'ci_pipeline_schedules',
    'ci_pipeline_schedule_variables',
    'ci_job_token_project_scope_links',
    'ci_job_token_group_scope_links',
    'project_ci_cd_settings',
  ]);
}
