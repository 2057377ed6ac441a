// A new row of the jobs table (the outbox): queued now, not claimed by any worker.
import type { Insertable } from 'kysely';
import type { JobsTable } from '../db/schema.ts';
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
