// The jobs table (the outbox): a new row, queued now and not claimed by any worker; and claiming due rows.
import type { ExpressionBuilder, Insertable, Kysely } from 'kysely';
import type { Logger } from 'pino';
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
 * How many times a job may be claimed when its lease ran out: a job whose process died while running it
 * (a crash, a kill, a deploy) is taken again until it was claimed this many times in all, then it fails
 * for good — a job that kills the process that runs it cannot take the service down more than that.
 * Jobs a service puts back in the queue itself (its own retries) are not counted against this.
 */
export const MAX_CLAIMS = 3;
export const INTERRUPTED = 'The job was interrupted too many times';

export interface ClaimedJob {
  id: number;
  payload: string;
  /** how many times the job was claimed before this claim */
  attempts: number;
}

/**
 * Claims up to `limit` jobs of `kind` that are due (queued, or running with a lease that ran out) for
 * `workerId` until `leaseMs` from now, counting the claim in `attempts`; several workers share a kind
 * (SKIP LOCKED on PostgreSQL, and the update checks the state again, so a job is never claimed twice).
 * A running job whose lease ran out after MAX_CLAIMS claims is not run again: `giveUp` settles what it
 * was doing (its row marked failed…) and the job fails with INTERRUPTED. The claimed jobs, oldest first.
 */
export async function claimJobs(
  db: Db,
  kind: string,
  workerId: string,
  opts: { leaseMs: number; limit: number; giveUp?: (job: ClaimedJob) => Promise<void> },
): Promise<ClaimedJob[]> {
  const k = db.kysely;
  const now = nowIso();
  const until = new Date(Date.now() + opts.leaseMs).toISOString();
  const expired = (eb: ExpressionBuilder<Database, 'jobs'>) => eb.and([eb('state', '=', 'running'), eb('locked_until', '<', now)]);
  const exhausted = (eb: ExpressionBuilder<Database, 'jobs'>) => eb.and([expired(eb), eb('attempts', '>=', MAX_CLAIMS)]);
  const claimable = (eb: ExpressionBuilder<Database, 'jobs'>) => eb.or([eb('state', '=', 'queued'), eb.and([expired(eb), eb('attempts', '<', MAX_CLAIMS)])]);
  const due = (which: typeof claimable) =>
    k
      .selectFrom('jobs')
      .select('id')
      .where('kind', '=', kind)
      .where(which)
      .where('run_at', '<=', now)
      .orderBy('id')
      .limit(opts.limit)
      .modifyEnd(skipLocked(db.dialect));

  // nothing due (the usual answer of a worker's round): one read, no write
  const any = await k
    .selectFrom('jobs')
    .select('id')
    .where('kind', '=', kind)
    .where((eb) => eb.or([eb('state', '=', 'queued'), expired(eb)]))
    .where('run_at', '<=', now)
    .limit(1)
    .executeTakeFirst();
  if (!any) return [];

  // The due ids are chosen once, in a materialized CTE: as `id in (select … limit n for update skip locked)`,
  // PostgreSQL may scan the subquery again for later rows, skip the rows this statement just changed (they no
  // longer match) and so claim more than `limit` jobs.
  // given up: held by this worker while `giveUp` runs, then failed
  const abandoned = await k
    .with(
      (cte) => cte('due').materialized(),
      () => due(exhausted),
    )
    .updateTable('jobs')
    .set({ locked_by: workerId, locked_until: until, updated_at: now })
    .where('id', 'in', (eb) => eb.selectFrom('due').select('due.id'))
    .where(exhausted)
    .returning(['id', 'payload', 'attempts'])
    .execute();
  for (const job of abandoned) {
    let error = INTERRUPTED;
    try {
      await opts.giveUp?.(job);
    } catch (e) {
      error = `${INTERRUPTED}; settling it failed: ${e instanceof Error ? e.message : String(e)}`;
    }
    await k
      .updateTable('jobs')
      .set({ state: 'failed', last_error: error, locked_by: null, locked_until: null, updated_at: nowIso() })
      .where('id', '=', job.id)
      .where('locked_by', '=', workerId)
      .execute();
  }

  const jobs = await k
    .with(
      (cte) => cte('due').materialized(),
      () => due(claimable),
    )
    .updateTable('jobs')
    .set((eb) => ({ state: 'running', attempts: eb('attempts', '+', 1), locked_by: workerId, locked_until: until, updated_at: now }))
    .where('id', 'in', (eb) => eb.selectFrom('due').select('due.id'))
    .where(claimable)
    .returning(['id', 'payload', 'attempts'])
    .execute();
  return jobs.map((j) => ({ ...j, attempts: j.attempts - 1 })).sort((a, b) => a.id - b.id);
}

/**
 * Runs one claimed job to its end (its claim already counted the attempt, so that a process dying in the
 * middle counts too): the lease renewed every `renewMs` while `work` runs (a long job is not taken by another
 * worker), then the job released — done, or failed with the error's message — while this worker still
 * holds it. A failure `retryAt` gives a time for is queued again for then instead of failed. `work` gets
 * how many times the job was claimed before this one.
 */
export async function runClaimed(
  db: Db,
  job: { id: number; attempts: number },
  workerId: string,
  opts: { leaseMs: number; renewMs?: number; log: Logger; what: string; retryAt?: (e: unknown) => string | null },
  work: (claimedBefore: number) => Promise<void>,
): Promise<void> {
  const k = db.kysely;
  const held = <Q extends { where: (...args: any[]) => Q }>(q: Q) => q.where('id', '=', job.id).where('locked_by', '=', workerId);
  const renew = opts.renewMs
    ? setInterval(() => {
        held(k.updateTable('jobs').set({ locked_until: new Date(Date.now() + opts.leaseMs).toISOString() }))
          .execute()
          .catch((e) => opts.log.warn({ err: e, job: job.id }, `renewing the lease of ${opts.what} failed`));
      }, opts.renewMs)
    : null;
  renew?.unref();
  let error: string | null = null;
  let again: string | null = null;
  try {
    await work(job.attempts);
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
    again = opts.retryAt?.(e) ?? null;
    opts.log.error({ err: e, job: job.id }, `${opts.what} failed unexpectedly`);
  } finally {
    if (renew) clearInterval(renew);
  }
  const state = error === null ? 'done' : again === null ? 'failed' : 'queued';
  await held(
    k
      .updateTable('jobs')
      .set({ state, last_error: error, ...(again === null ? {} : { run_at: again }), locked_by: null, locked_until: null, updated_at: nowIso() }),
  ).execute();
}

/**
 * In the caller's transaction: queues a job of `kind` with `payload`, unless one with that payload is
 * still waiting — then that one is made due now (it reads its work from the rows when it runs).
 */
export async function queueOnce(trx: Kysely<Database>, kind: string, payload: unknown, now = nowIso()): Promise<void> {
  const text = JSON.stringify(payload);
  const waiting = await trx
    .selectFrom('jobs')
    .select('id')
    .where('kind', '=', kind)
    .where('state', '=', 'queued')
    .where('payload', '=', text)
    .executeTakeFirst();
  if (waiting) await trx.updateTable('jobs').set({ run_at: now, updated_at: now }).where('id', '=', waiting.id).execute();
  else
    await trx
      .insertInto('jobs')
      .values(queuedJob(kind, payload, now))
      .execute();
}
