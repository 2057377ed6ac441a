// Artifacts tests: zips built byte by byte (so that a test can make the bad ones a real archiver
// refuses to write: `..`, absolute names, symbolic links), a job set running as a runner would, and
// the runner's upload.
import { crc32 } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../../src/container.ts';
import type { CiBuildRow } from '../../../src/db/schema.ts';
import { randomToken } from '../../../src/lib/secrets.ts';
import { nowIso } from '../../../src/lib/time.ts';
import { ciDigest } from '../../helpers/ci.ts';
import { multipart } from '../../helpers/files.ts';

export interface ZipEntry {
  name: string;
  data: Buffer | string;
  symlink?: boolean;
}

/** A zip of stored (uncompressed) entries; a symlink entry carries its target as data, mode 0120777. */
export function makeZip(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const data = Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data, 'utf8');
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(0, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, data);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by Unix
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    const mode = e.symlink ? 0o120777 : e.name.endsWith('/') ? 0o40755 : 0o100644;
    central.writeUInt32LE((mode << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += 30 + name.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

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
