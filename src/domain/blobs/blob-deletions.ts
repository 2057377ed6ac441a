// Blobs whose rows went with a deleted project (project, group or user deletion): their keys are queued
// in the outbox (jobs kind blob_delete) in the transaction that deletes the rows, and a worker round
// removes them from the store afterwards. A crash between the two loses nothing: the job is still queued.
// Which blobs go with which rows is the product's rule; the store (storage/) only deletes keys.
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { Database } from '../../db/schema.ts';
import { defineJob, jobKind, linearBackoff } from '../../jobs/registry.ts';
import type { BlobStore } from '../../storage/blob-store.ts';

const BlobDelete = jobKind('blob_delete', Type.Object({ keys: Type.Array(Type.String()) }));
const KEYS_PER_JOB = 500;

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
    await BlobDelete.queue(trx, { keys: keys.slice(i, i + KEYS_PER_JOB) });
  }
}

/**
 * The worker's job: removes the queued blobs (a missing blob is not an error). A store that fails is
 * tried again a minute later, then two, three, four: five claims in all.
 */
export const blobDeletionJob = (store: BlobStore) =>
  defineJob({
    kind: BlobDelete,
    what: 'a blob deletion',
    leaseMs: 5 * 60_000,
    concurrency: 5,
    backoff: linearBackoff(5, 60_000),
    run: async ({ keys }) => {
      for (const key of keys) await store.delete(key);
    },
  });
