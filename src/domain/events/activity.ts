// User activity (GitLab's events table: GET /events, /users/:id/events, /projects/:id/events), written
// in the same transaction as the system event that describes the change (recordSystemEvent calls this).
// Issue 18, helper E.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';

export interface ActivityMeta {
  /** who caused the change, when the payload does not say it */
  authorId?: number;
}

export async function recordActivity(_trx: Kysely<Database>, _payload: Record<string, unknown>, _meta: ActivityMeta): Promise<void> {}
