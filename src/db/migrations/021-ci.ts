import type { CreateTableBuilder, Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';
import { trackTableVersions } from '../versions.ts';

// CI (GitLab's Ci::Runner, Ci::Pipeline, Ci::Build / Ci::Bridge / GenericCommitStatus, Ci::JobArtifact):
// runners and where they may run, registration tokens, pipelines, their jobs (one table for builds,
// trigger jobs and external commit statuses, as GitLab's ci_builds), the job log in append-only chunks,
// and artifacts, whose bytes live in the blob store (src/storage/) under `store_key`.
// Every secret is stored as a digest (lib tokens' salted SHA-256), never in clear.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const id = <T extends string>(t: CreateTableBuilder<T, any>) =>
    dialect === 'postgres' ? t.addColumn('id', 'serial', (c) => c.primaryKey()) : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
  const flag = (def: number) => (c: any) => c.notNull().defaultTo(def);
  const project = (c: any) => c.notNull().references('projects.id').onDelete('cascade');
  const blob = dialect === 'postgres' ? 'bytea' : 'blob';

  // runner_type: instance_type | group_type | project_type. token_digest: the authentication token
  // (glrt-…); creation_method: registration_token | authenticated_user. tag_list: JSON array.
  // contacted_at is written on contact, at most once a minute (RunnersService.authenticate); version … architecture,
  // ip_address and executor_type come from the runner's `info` on each contact.
  await id(db.schema.createTable('ci_runners'))
    .addColumn('runner_type', 'text', (c) => c.notNull())
    .addColumn('token_digest', 'text', (c) => c.notNull().unique())
    .addColumn('token_expires_at', 'text')
    .addColumn('creation_method', 'text', (c) => c.notNull().defaultTo('registration_token'))
    .addColumn('creator_id', 'integer')
    .addColumn('name', 'text')
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('active', 'integer', flag(1))
    .addColumn('locked', 'integer', flag(0))
    .addColumn('run_untagged', 'integer', flag(1))
    .addColumn('tag_list', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('access_level', 'text', (c) => c.notNull().defaultTo('not_protected'))
    .addColumn('maximum_timeout', 'integer')
    .addColumn('maintenance_note', 'text')
    .addColumn('contacted_at', 'text')
    .addColumn('version', 'text')
    .addColumn('revision', 'text')
    .addColumn('platform', 'text')
    .addColumn('architecture', 'text')
    .addColumn('executor_type', 'text')
    .addColumn('ip_address', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ci_runners_type').on('ci_runners').columns(['runner_type', 'id']).execute();
  await db.schema.createIndex('ci_runners_contacted').on('ci_runners').column('contacted_at').execute();

  // Which projects (project_type) and groups (group_type) a runner serves; the first row of a project
  // runner is its owner project.
  await db.schema
    .createTable('ci_runner_projects')
    .addColumn('runner_id', 'integer', (c) => c.notNull().references('ci_runners.id').onDelete('cascade'))
    .addColumn('project_id', 'integer', project)
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('ci_runner_projects_pk', ['runner_id', 'project_id'])
    .execute();
  await db.schema.createIndex('ci_runner_projects_project').on('ci_runner_projects').columns(['project_id', 'runner_id']).execute();
  await db.schema
    .createTable('ci_runner_namespaces')
    .addColumn('runner_id', 'integer', (c) => c.notNull().references('ci_runners.id').onDelete('cascade'))
    .addColumn('namespace_id', 'integer', (c) => c.notNull().references('namespaces.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('ci_runner_namespaces_pk', ['runner_id', 'namespace_id'])
    .execute();
  await db.schema.createIndex('ci_runner_namespaces_namespace').on('ci_runner_namespaces').columns(['namespace_id', 'runner_id']).execute();

  // Registration tokens (deprecated in GitLab, still what `gitlab-runner register` sends): one per
  // scope — instance (scope_id 0), a group (namespace id) or a project. Shown once, on reset.
  await db.schema
    .createTable('ci_registration_tokens')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('scope_id', 'integer', (c) => c.notNull())
    .addColumn('token_digest', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('ci_registration_tokens_pk', ['scope', 'scope_id'])
    .execute();

  // status: created | waiting_for_resource | preparing | pending | running | success | failed |
  // canceled | skipped | manual | scheduled. source: push | web | api | trigger | parent_pipeline |
  // external. yaml_errors: why the CI file was refused (the pipeline is then failed, never a 500).
  // variables: JSON [{key, value, variable_type}] given on creation. A child pipeline points at its
  // parent and at the trigger job (a bridge) that created it.
  await id(db.schema.createTable('ci_pipelines'))
    .addColumn('iid', 'integer', (c) => c.notNull())
    .addColumn('project_id', 'integer', project)
    .addColumn('ref', 'text', (c) => c.notNull())
    .addColumn('tag', 'integer', flag(0))
    .addColumn('sha', 'text', (c) => c.notNull())
    .addColumn('before_sha', 'text')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('created'))
    .addColumn('yaml_errors', 'text')
    .addColumn('failure_reason', 'text')
    .addColumn('user_id', 'integer')
    .addColumn('parent_pipeline_id', 'integer')
    .addColumn('parent_job_id', 'integer')
    .addColumn('variables', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('coverage', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .addColumn('committed_at', 'text')
    .addColumn('duration', 'integer')
    .addColumn('queued_duration', 'integer')
    .execute();
  await db.schema.createIndex('ci_pipelines_project_iid').unique().on('ci_pipelines').columns(['project_id', 'iid']).execute();
  await db.schema.createIndex('ci_pipelines_project_ref').on('ci_pipelines').columns(['project_id', 'ref', 'id']).execute();
  await db.schema.createIndex('ci_pipelines_project_sha').on('ci_pipelines').columns(['project_id', 'sha']).execute();
  await db.schema.createIndex('ci_pipelines_parent').on('ci_pipelines').column('parent_pipeline_id').execute();

  // One row per job. type: build (a runner runs it) | bridge (`trigger:`, creates a child pipeline) |
  // generic (an external commit status). options: JSON of what the runner needs (script, before_script,
  // after_script, image, services, artifacts, environment, needs, trigger, timeout, dependencies);
  // yaml_variables: JSON [{key, value, public}]; tag_list: JSON array; when: on_success | on_failure |
  // always | manual | delayed. token_digest: the job token, set while the job runs and cleared when it
  // finishes. runner_system_id: the runner's system_id from the request that took the job.
  // trace_size: bytes of log received (ci_build_trace_chunks). artifacts_expire_at null = kept.
  // retried: 1 once a newer job of the same name replaced it (lists hide it unless asked).
  await id(db.schema.createTable('ci_builds'))
    .addColumn('project_id', 'integer', project)
    .addColumn('pipeline_id', 'integer', (c) => c.notNull().references('ci_pipelines.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull().defaultTo('build'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('stage', 'text', (c) => c.notNull())
    .addColumn('stage_idx', 'integer', flag(0))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('created'))
    .addColumn('ref', 'text', (c) => c.notNull())
    .addColumn('tag', 'integer', flag(0))
    .addColumn('sha', 'text', (c) => c.notNull())
    .addColumn('user_id', 'integer')
    .addColumn('runner_id', 'integer')
    .addColumn('runner_system_id', 'text')
    .addColumn('options', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('yaml_variables', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('tag_list', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('when', 'text', (c) => c.notNull().defaultTo('on_success'))
    .addColumn('allow_failure', 'integer', flag(0))
    .addColumn('environment', 'text')
    .addColumn('coverage', 'real')
    .addColumn('failure_reason', 'text')
    .addColumn('description', 'text')
    .addColumn('target_url', 'text')
    .addColumn('token_digest', 'text', (c) => c.unique())
    .addColumn('retried', 'integer', flag(0))
    .addColumn('trace_size', 'bigint', flag(0))
    .addColumn('timeout', 'integer')
    .addColumn('lock_version', 'integer', flag(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('queued_at', 'text')
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .addColumn('erased_at', 'text')
    .addColumn('artifacts_expire_at', 'text')
    .execute();
  await db.schema.createIndex('ci_builds_pipeline').on('ci_builds').columns(['pipeline_id', 'stage_idx', 'id']).execute();
  await db.schema.createIndex('ci_builds_project').on('ci_builds').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('ci_builds_runner').on('ci_builds').columns(['runner_id', 'id']).execute();
  await db.schema.createIndex('ci_builds_runner_status').on('ci_builds').columns(['runner_id', 'status', 'id']).execute();
  await db.schema.createIndex('ci_builds_queue').on('ci_builds').columns(['status', 'type', 'id']).execute();
  await db.schema.createIndex('ci_builds_project_sha').on('ci_builds').columns(['project_id', 'sha']).execute();

  // The job log as the runner sends it (PATCH /jobs/:id/trace): append-only chunks, in order.
  await db.schema
    .createTable('ci_build_trace_chunks')
    .addColumn('build_id', 'integer', (c) => c.notNull().references('ci_builds.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('data', blob, (c) => c.notNull())
    .addPrimaryKeyConstraint('ci_build_trace_chunks_pk', ['build_id', 'seq'])
    .execute();

  // file_type: archive | metadata | trace | junit …; file_format: zip | gzip | raw. store_key: where the
  // bytes are in the blob store. expire_at null = never expires (or kept).
  await id(db.schema.createTable('ci_job_artifacts'))
    .addColumn('project_id', 'integer', project)
    .addColumn('job_id', 'integer', (c) => c.notNull().references('ci_builds.id').onDelete('cascade'))
    .addColumn('file_type', 'text', (c) => c.notNull())
    .addColumn('file_format', 'text', (c) => c.notNull())
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('file_sha256', 'text')
    .addColumn('store_key', 'text', (c) => c.notNull())
    .addColumn('expire_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ci_job_artifacts_job_type').unique().on('ci_job_artifacts').columns(['job_id', 'file_type']).execute();
  await db.schema.createIndex('ci_job_artifacts_project').on('ci_job_artifacts').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('ci_job_artifacts_expire').on('ci_job_artifacts').column('expire_at').execute();

  await trackTableVersions(db, dialect, ['ci_runners', 'ci_runner_projects', 'ci_runner_namespaces', 'ci_pipelines', 'ci_builds', 'ci_job_artifacts']);
}
