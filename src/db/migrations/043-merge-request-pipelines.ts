import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';

// Merge request pipelines (GitLab's detached merge request pipelines, source merge_request_event): the merge
// request a pipeline runs for. Its ref is refs/merge-requests/<iid>/head; the merge request's pipelines are
// those of its source branch and these. And the index a job request's count of a project's running jobs reads.
export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  await db.schema.alterTable('ci_pipelines').addColumn('merge_request_id', 'integer').execute();
  await db.schema.createIndex('ci_pipelines_merge_request').on('ci_pipelines').columns(['merge_request_id', 'id']).execute();
  // a job request counts the project's running jobs on instance runners (job_info): by status, not every job
  await db.schema.createIndex('ci_builds_project_status').on('ci_builds').columns(['project_id', 'status']).execute();
}
