import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';

// Indexes of the merge request lists (merge-requests-query.ts), each justified by EXPLAIN on SQLite and
// PostgreSQL over 100,000 merge requests (bench/merge-requests.ts, BENCH_EXPLAIN=1; bench/README.md):
// - (created_at, id), (updated_at, id): global and group lists read their order's index and stop after
//   a page, instead of sorting every visible merge request;
// - (project_id, created_at, id): a project's list in its default order, without a sort;
// - (author_id, created_at, id): GET /merge_requests' default scope, created_by_me;
// - (milestone_id): milestone filters (and milestone deletion's ON DELETE SET NULL);
// - labels (title): label filters name labels by title across every project and group.
export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  const index = (name: string, table: string, columns: string[]) => db.schema.createIndex(name).on(table).columns(columns).execute();
  await index('merge_requests_created', 'merge_requests', ['created_at', 'id']);
  await index('merge_requests_updated', 'merge_requests', ['updated_at', 'id']);
  await index('merge_requests_project_created', 'merge_requests', ['project_id', 'created_at', 'id']);
  await index('merge_requests_author_created', 'merge_requests', ['author_id', 'created_at', 'id']);
  await index('merge_requests_milestone', 'merge_requests', ['milestone_id']);
  await index('labels_title', 'labels', ['title']);
}
