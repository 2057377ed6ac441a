import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';

// What the background mergeability check learns from git besides conflicts: whether the target
// branch's head is an ancestor of the source head (1: a fast-forward is possible; 0: it is not and
// the project's fast-forward or semi-linear merge method needs it, detailed_merge_status need_rebase;
// null: not checked, or the merge method does not care).
// An index for the refresh after pushes: open merge requests by target branch.
export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  await db.schema.alterTable('merge_requests').addColumn('fast_forward_possible', 'integer').execute();
  await db.schema.createIndex('merge_requests_refresh_target').on('merge_requests').columns(['project_id', 'target_branch']).execute();
}
