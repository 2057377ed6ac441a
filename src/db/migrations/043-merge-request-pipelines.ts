import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';

// Merge request pipelines (GitLab's detached merge request pipelines, source merge_request_event): the merge
// request a pipeline runs for. Its ref is refs/merge-requests/<iid>/head; the merge request's pipelines are
// those of its source branch and these.
export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  await db.schema.alterTable('ci_pipelines').addColumn('merge_request_id', 'integer').execute();
  await db.schema.createIndex('ci_pipelines_merge_request').on('ci_pipelines').columns(['merge_request_id', 'id']).execute();
}
