import type { CreateTableBuilder, Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';
import { trackTableVersions } from '../versions.ts';

// Project export and import (GitLab's ProjectExportJob / ImportExportUpload, ProjectImportState,
// Projects::ImportExport::RelationImportTracker) and the issues an archive may carry.
// Archives live in the blob store (src/storage/) under `store_key`; the work itself runs as outbox jobs
// (jobs kinds project_export, project_import, relation_import).
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const id = <T extends string>(t: CreateTableBuilder<T, any>) =>
    dialect === 'postgres' ? t.addColumn('id', 'serial', (c) => c.primaryKey()) : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
  const project = (c: any) => c.notNull().references('projects.id').onDelete('cascade');
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';

  // One export per project and user (GitLab: export_status(current_user)). status: the current run —
  // queued | started | finished | failed, or none once its archive expired; `store_key` is the last finished archive, kept (and still
  // downloadable) while a new run regenerates it (regeneration_in_progress) until `expires_at`.
  // upload_url / upload_method: where the finished archive is sent (upload[url]); the URL is a secret
  // (presigned URLs carry credentials): stored sealed (SecretBox) and cleared once sent.
  await id(db.schema.createTable('project_exports'))
    .addColumn('project_id', 'integer', project)
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('upload_url', 'text')
    .addColumn('upload_method', 'text')
    .addColumn('store_key', 'text')
    .addColumn('file_name', 'text')
    .addColumn('size', bigint)
    .addColumn('error', 'text')
    .addColumn('expires_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .execute();
  await db.schema.createIndex('project_exports_project_user').on('project_exports').columns(['project_id', 'user_id']).unique().execute();
  await db.schema.createIndex('project_exports_expires').on('project_exports').column('expires_at').execute();

  // The import state of a project made by an import (one row per project, GitLab's project_import_states).
  // source: file | url | s3. source_params: what the job needs to fetch the archive (url; bucket, key,
  // region and credentials for s3), sealed (SecretBox) since it may hold credentials; cleared when done.
  // store_key: the uploaded or fetched archive while the import is pending. override_params: JSON object.
  // failed_relations: JSON array of {id, created_at, exception_class, exception_message, source,
  // relation_name, line_number} (at most 100).
  await db.schema
    .createTable('project_imports')
    .addColumn('project_id', 'integer', (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('import_type', 'text', (c) => c.notNull().defaultTo('gitlab_project'))
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('source_params', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('correlation_id', 'text', (c) => c.notNull())
    .addColumn('import_error', 'text')
    .addColumn('failed_relations', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('store_key', 'text')
    .addColumn('override_params', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .execute();

  // Single-relation imports into an existing project: created | started | finished | failed; one at a
  // time per project (a second is refused while one is created or started).
  await id(db.schema.createTable('relation_imports'))
    .addColumn('project_id', 'integer', project)
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('relation', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('store_key', 'text')
    .addColumn('error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('relation_imports_project').on('relation_imports').columns(['project_id', 'id']).execute();

  // Issues are not otherwise a resource of Hearth: an archive's issues are kept here so they round-trip
  // (title, description, state, author, assignees, labels, milestone, dates; their notes are `notes`
  // rows with noteable_type 'Issue'). labels: JSON array of label titles; assignee_ids: JSON array.
  await id(db.schema.createTable('issues'))
    .addColumn('project_id', 'integer', project)
    .addColumn('iid', 'integer', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('author_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('assignee_ids', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('milestone_id', 'integer', (c) => c.references('milestones.id').onDelete('set null'))
    .addColumn('labels', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('confidential', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('discussion_locked', 'integer')
    .addColumn('due_date', 'text')
    .addColumn('weight', 'integer')
    .addColumn('closed_by_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('closed_at', 'text')
    .addColumn('imported_from', 'text', (c) => c.notNull().defaultTo('none'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('issues_project_iid').on('issues').columns(['project_id', 'iid']).unique().execute();

  await trackTableVersions(db, dialect, ['project_exports', 'project_imports', 'relation_imports', 'issues']);
}
