// The jobs table (the outbox): a new row, queued now and not claimed by any worker; and claiming due rows.
import type { ExpressionBuilder, Insertable } from 'kysely';
import type { Db } from '../db/connect.ts';
import type { Database, JobsTable } from '../db/schema.ts';
import { skipLocked } from '../db/sql.ts';
import { nowIso } from '../lib/time.ts';

export function queuedJob(kind: string, payload: unknown, now = nowIso()): Insertable<JobsTable> {
  return {
    kind,
    payload: JSON.stringify(payload),
    state: 'queued',
    attempts: 0,
    run_at: now,
    locked_by: null,
    locked_until: null,
    last_error: null,
    created_at: now,
    updated_at: now,
  };
}

/**
 * Claims up to `limit` jobs of `kind` that are due (queued, or running with a lease that ran out) for
 * `workerId` until `leaseMs` from now; several workers share a kind (SKIP LOCKED on PostgreSQL, and the
 * update checks the state again, so a job is never claimed twice). The claimed jobs, oldest first.
 */
export async function claimJobs(
  db: Db,
  kind: string,
  workerId: string,
  opts: { leaseMs: number; limit: number },
): Promise<{ id: number; payload: string; attempts: number }[]> {
  const k = db.kysely;
  const now = nowIso();
  const claimable = (eb: ExpressionBuilder<Database, 'jobs'>) =>
    eb.or([eb('state', '=', 'queued'), eb.and([eb('state', '=', 'running'), eb('locked_until', '<', now)])]);
  const due = k
    .selectFrom('jobs')
    .select('id')
    .where('kind', '=', kind)
    .where(claimable)
    .where('run_at', '<=', now)
    .orderBy('id')
    .limit(opts.limit)
    .modifyEnd(skipLocked(db.dialect));
  const jobs = await k
    .updateTable('jobs')
    .set({ state: 'running', locked_by: workerId, locked_until: new Date(Date.now() + opts.leaseMs).toISOString(), updated_at: now })
    .where('id', 'in', due)
    .where(claimable)
    .returning(['id', 'payload', 'attempts'])
    .execute();
  return jobs.sort((a, b) => a.id - b.id);
}
