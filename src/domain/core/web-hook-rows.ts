// Web hook rows leave with their delivery history: when a hook is deleted, and in the transaction that
// deletes its project or group.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';

/** Deletes web hooks with their delivery history (a hook deleted, or its project or group). */
export async function deleteWebHookRows(trx: Kysely<Database>, hookIds: number[]): Promise<void> {
  if (!hookIds.length) return;
  for (let i = 0; i < hookIds.length; i += 500) {
    const ids = hookIds.slice(i, i + 500);
    const deliveries = trx.selectFrom('hook_deliveries').select('id').where('hook_type', '=', 'web').where('hook_id', 'in', ids);
    await trx.deleteFrom('hook_attempts').where('delivery_id', 'in', deliveries).execute();
    await trx.deleteFrom('hook_deliveries').where('hook_type', '=', 'web').where('hook_id', 'in', ids).execute();
    await trx.deleteFrom('web_hooks').where('id', 'in', ids).execute();
  }
}

/** The hooks of these projects and groups, and their deliveries (called where projects and groups are deleted). */
export async function deleteWebHooksOf(trx: Kysely<Database>, of: { projectIds?: number[]; groupIds?: number[] }): Promise<void> {
  const projectIds = of.projectIds ?? [];
  const groupIds = of.groupIds ?? [];
  if (!projectIds.length && !groupIds.length) return;
  const rows = await trx
    .selectFrom('web_hooks')
    .select('id')
    .where((eb) => {
      const ors = [];
      if (projectIds.length) ors.push(eb('project_id', 'in', projectIds));
      if (groupIds.length) ors.push(eb('group_id', 'in', groupIds));
      return eb.or(ors);
    })
    .execute();
  await deleteWebHookRows(
    trx,
    rows.map((r) => r.id),
  );
}
