// Blobs whose rows went with a deleted project (project, group or user deletion): their keys are queued
// in the outbox (jobs kind blob_delete) in the transaction that deletes the rows, and a worker round
// removes them from the store afterwards. A crash between the two loses nothing: the job is still queued.
// Which blobs go with which rows is the product's rule; the store (storage/) only deletes keys.
import os from 'node:os';
import type { Kysely } from 'kysely';
import type { Db } from '../../db/connect.ts';
import type { Database } from '../../db/schema.ts';
import { claimJobs, queuedJob } from '../../jobs/job-row.ts';
import { nowIso } from '../../lib/time.ts';
import type { BlobStore } from '../../storage/blob-store.ts';

const KIND = 'blob_delete';
const KEYS_PER_JOB = 500;
const MAX_ATTEMPTS = 5;

/** In the deleting transaction: queues the blobs of these projects (artifacts, archives) for removal. */
export async function queueProjectBlobs(trx: Kysely<Database>, projectIds: number[]): Promise<void> {
  if (!projectIds.length) return;
  const keys: string[] = [];
  const artifacts = await trx.selectFrom('ci_job_artifacts').select('store_key').where('project_id', 'in', projectIds).execute();
  keys.push(...artifacts.map((r) => r.store_key));
  // project uploads (markdown attachments)
  const uploads = await trx.selectFrom('uploads').select('store_key').where('project_id', 'in', projectIds).execute();
  keys.push(...uploads.map((r) => r.store_key));
  // export archives, and import archives not yet consumed
  for (const table of ['project_exports', 'project_imports', 'relation_imports'] as const) {
    const rows = await trx.selectFrom(table).select('store_key').where('project_id', 'in', projectIds).where('store_key', 'is not', null).execute();
    keys.push(...rows.map((r) => r.store_key!));
  }
  await queueBlobDeletion(trx, keys);
}

/** In the caller's transaction: queues these blobs for removal once it commits (replaced or expired archives). */
export async function queueBlobDeletion(trx: Kysely<Database>, keys: string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += KEYS_PER_JOB) {
    await trx
      .insertInto('jobs')
      .values(queuedJob(KIND, { keys: keys.slice(i, i + KEYS_PER_JOB) }))
      .execute();
  }
}

export class BlobDeletions {
  private readonly workerId = `${os.hostname()}:${process.pid}:blobs:${Math.random().toString(36).slice(2, 8)}`;

  constructor(
    private readonly db: Db,
    private readonly store: BlobStore,
  ) {}

  /** One worker round: removes the queued blobs (a missing blob is not an error); answers how many jobs it did. */
  async runQueued(limit = 5): Promise<number> {
    const jobs = await claimJobs(this.db, KIND, this.workerId, { leaseMs: 5 * 60_000, limit });
    for (const job of jobs) {
      let error: string | null = null;
      try {
        const { keys } = JSON.parse(job.payload) as { keys: string[] };
        for (const key of keys) await this.store.delete(key);
      } catch (e) {
        error = e instanceof Error ? e.message : String(e);
      }
      const attempts = job.attempts + 1;
      const retry = error !== null && attempts < MAX_ATTEMPTS;
      await this.db.kysely
        .updateTable('jobs')
        .set({
          state: error === null ? 'done' : retry ? 'queued' : 'failed',
          attempts,
          last_error: error,
          run_at: retry ? new Date(Date.now() + 60_000 * attempts).toISOString() : nowIso(),
          locked_by: null,
          locked_until: null,
          updated_at: nowIso(),
        })
        .where('id', '=', job.id)
        .where('locked_by', '=', this.workerId)
        .execute();
    }
    return jobs.length;
  }
}
