// The bot users of project and group access tokens go with their project or group (GitLab deletes a resource's
// bots when it deletes the resource): called by the one project deletion routine and by group deletion, in
// their transaction, before the memberships that name the bots are deleted. A bot's token, membership and
// personal namespace go with its row (foreign keys).
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { recordSystemEvent, userPayload } from './system-events.ts';

export async function deleteResourceBots(trx: Kysely<Database>, sourceType: 'Project' | 'Namespace', sourceIds: number[]): Promise<void> {
  if (!sourceIds.length) return;
  const bots = await trx
    .selectFrom('users')
    .selectAll()
    .where('user_type', '=', 'project_bot')
    .where('id', 'in', (eb) => eb.selectFrom('members').select('user_id').where('source_type', '=', sourceType).where('source_id', 'in', sourceIds))
    .orderBy('id')
    .execute();
  if (!bots.length) return;
  await trx
    .deleteFrom('users')
    .where(
      'id',
      'in',
      bots.map((b) => b.id),
    )
    .execute();
  for (const bot of bots) await recordSystemEvent(trx, userPayload('user_destroy', bot));
}
