import type { Kysely } from 'kysely';

// Merges journaled as pushes are (push-journal.ts): a merge's journal row names the merge request it
// locked (written in the transaction that locks it) and what to write when the merge ends (the merge
// and squash commits, set before the target branch moves). A replay of a merge whose process is gone
// marks the merge request merged (the target has the merge) or opens it again, with the row's deletion.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('pending_pushes').addColumn('merge_request_id', 'integer').execute();
  await db.schema.alterTable('pending_pushes').addColumn('merge', 'text').execute();
}
