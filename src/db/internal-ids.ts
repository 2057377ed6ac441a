// GitLab's internal ids (iid): numbers per scope — merge requests and deployments per project,
// milestones per project or group. Taken in the writer's transaction, so a rolled-back write gives its
// number back; the row is locked by the UPDATE until that transaction ends (PostgreSQL), and SQLite has
// one writer at a time.
import type { Kysely } from 'kysely';
import type { Database, InternalIdsTable } from './schema.ts';

export type IidUsage = 'merge_requests' | 'milestones' | 'deployments' | 'ci_pipelines' | 'issues';

/** The next iid of `usage` in the scope (1 for the first). Call inside the transaction that inserts the row. */
export async function nextIid(trx: Kysely<Database>, usage: IidUsage, scopeType: InternalIdsTable['scope_type'], scopeId: number): Promise<number> {
  const bumped = await trx
    .updateTable('internal_ids')
    .set((eb) => ({ last_value: eb('last_value', '+', 1) }))
    .where('usage', '=', usage)
    .where('scope_type', '=', scopeType)
    .where('scope_id', '=', scopeId)
    .returning('last_value')
    .executeTakeFirst();
  if (bumped) return bumped.last_value;
  // First of its scope: two first writers race on the primary key; the loser retries as an update.
  const inserted = await trx
    .insertInto('internal_ids')
    .values({ usage, scope_type: scopeType, scope_id: scopeId, last_value: 1 })
    .onConflict((oc) => oc.columns(['usage', 'scope_type', 'scope_id']).doUpdateSet((eb) => ({ last_value: eb('internal_ids.last_value', '+', 1) })))
    .returning('last_value')
    .executeTakeFirstOrThrow();
  return inserted.last_value;
}
