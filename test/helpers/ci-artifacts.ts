// Artifacts tests: zips built byte by byte (so that a test can make the bad ones a real archiver
// refuses to write: `..`, absolute names, symbolic links), a job set running as a runner would, and
// the runner's upload.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../src/container.ts';
import type { CiBuildRow } from '../../src/db/schema.ts';
import { randomToken } from '../../src/lib/secrets.ts';
import { nowIso } from '../../src/lib/time.ts';
import { ciDigest } from './ci.ts';
import { multipart } from './files.ts';

export { makeZip, type ZipEntry } from './zip.ts';

/** What a runner does when it takes a job: running, with a job token (answered). */
export async function runJob(c: Container, job: CiBuildRow): Promise<string> {
  const token = `glcbt-${randomToken(20)}`;
  await c.db.kysely
    .updateTable('ci_builds')
    .set({ status: 'running', token_digest: await ciDigest(c, token), started_at: nowIso(), queued_at: null })
    .where('id', '=', job.id)
    .execute();
  return token;
}

/** A job finishes: success, token gone. */
export async function finishJob(c: Container, job: CiBuildRow, status = 'success'): Promise<void> {
  await c.db.kysely.updateTable('ci_builds').set({ status, token_digest: null, finished_at: nowIso() }).where('id', '=', job.id).execute();
}

export function upload(
  app: FastifyInstance,
  jobId: number,
  token: string | null,
  file: Buffer | null,
  query = 'artifact_format=zip&artifact_type=archive',
  filename = 'artifacts.zip',
) {
  const mp = multipart(file ? { file } : { other: 'x' }, filename);
  return app.inject({
    method: 'POST',
    url: `/api/v4/jobs/${jobId}/artifacts?${query}`,
    headers: { ...mp.headers, ...(token ? { 'job-token': token } : {}) },
    payload: mp.payload,
  });
}

/** A job with an archive uploaded through the runner API, finished successfully. */
export async function jobWithArchive(app: FastifyInstance, c: Container, job: CiBuildRow, zip: Buffer, query?: string): Promise<void> {
  const token = await runJob(c, job);
  const res = await upload(app, job.id, token, zip, query);
  if (res.statusCode !== 201) throw new Error(`upload: ${res.statusCode} ${res.body}`);
  await finishJob(c, job);
}
