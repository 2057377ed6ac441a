// Where an import's archive comes from besides an upload (GitLab's FileAcquisitionStrategies RemoteFile and
// RemoteFileS3 with Import::GitlabProjects::RemoteFileValidator): checked at request time (the headers of
// a HEAD, the S3 object's metadata), fetched by the job into a temporary file under the same size limit.
import fs from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../../../config.ts';

/** RemoteFileValidator::FILE_SIZE_LIMIT */
export const REMOTE_FILE_LIMIT = 10 * 1024 ** 3;
/** RemoteFileValidator::ALLOWED_CONTENT_TYPES ("S3 uses different file types") */
export const ALLOWED_CONTENT_TYPES = ['application/gzip', 'application/x-tar', 'application/x-gzip'];

/** ActiveSupport's number_to_human_size (binary units, 3 significant digits): "1 Byte", "10 GB", "1.5 MB". */
export function humanSize(n: number): string {
  if (n < 1024) return n === 1 ? '1 Byte' : `${n} Bytes`;
  const units = ['KB', 'MB', 'GB', 'TB', 'PB', 'EB'];
  let exp = Math.min(Math.floor(Math.log(n) / Math.log(1024)), units.length);
  let value = n / 1024 ** exp;
  if (Number(value.toPrecision(3)) >= 1024 && exp < units.length) {
    exp++;
    value = n / 1024 ** exp;
  }
  return `${Number(value.toPrecision(3))} ${units[exp - 1]}`;
}

/** The size limit of a remote archive: max_import_remote_file_size (MiB; 0 → the 10 GB cap). */
export function remoteLimit(settingMiB: unknown): number {
  const mib = Number(settingMiB) || 0;
  return mib > 0 ? Math.min(mib * 1024 * 1024, REMOTE_FILE_LIMIT) : REMOTE_FILE_LIMIT;
}

/** Content-Length as Ruby's `headers['content-length'].to_i` after a strict check (a valid number, else 0). */
export function contentLengthOf(value: string | number | undefined | null): number {
  if (typeof value === 'number') return Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
  const s = String(value ?? '').trim();
  return /^\d+$/.test(s) ? Number(s) : 0;
}

/** RemoteFileValidator's messages (full messages, in its order): empty when the file may be imported. */
export function remoteFileErrors(contentLength: number, contentType: string | undefined | null, limit: number): string[] {
  const errors: string[] = [];
  if (contentLength <= 0) errors.push(`Content length is too small (should be at least ${humanSize(1)})`);
  else if (contentLength > limit) errors.push(`Content length is too big (should be at most ${humanSize(limit)})`);
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (!ALLOWED_CONTENT_TYPES.includes(type)) {
    errors.push(`Content type '${contentType ?? ''}' not allowed. (Allowed: ${ALLOWED_CONTENT_TYPES.join(', ')})`);
  }
  return errors;
}

export interface S3Source {
  region: string;
  bucket_name: string;
  file_key: string;
  access_key_id: string;
  secret_access_key: string;
}

function s3Client(config: Config, src: S3Source): S3Client {
  return new S3Client({
    region: src.region,
    credentials: { accessKeyId: src.access_key_id, secretAccessKey: src.secret_access_key },
    ...(config.importS3.endpoint ? { endpoint: config.importS3.endpoint } : {}),
    forcePathStyle: config.importS3.forcePathStyle,
    maxAttempts: 2,
  });
}

const notFound = (e: unknown) => {
  const err = e as { name?: string; $metadata?: { httpStatusCode?: number } };
  return err.name === 'NotFound' || err.name === 'NoSuchKey' || err.name === 'NoSuchBucket' || err.$metadata?.httpStatusCode === 404;
};

const messageOf = (e: unknown) => {
  const err = e as { name?: string; message?: string };
  return err.message && err.message !== 'UnknownError' ? err.message : (err.name ?? String(e));
};

/**
 * RemoteFileS3's request-time checks: the object exists and can be read with these credentials
 * ("File not found '<key>' in '<bucket>'", "Failed to open '<key>' in '<bucket>': <reason>"), then
 * RemoteFileValidator on its size and content type. Answers the messages (empty: acceptable).
 */
export async function checkS3(config: Config, src: S3Source, limit: number): Promise<string[]> {
  const client = s3Client(config, src);
  try {
    const head = await client.send(new HeadObjectCommand({ Bucket: src.bucket_name, Key: src.file_key }));
    return remoteFileErrors(contentLengthOf(head.ContentLength), head.ContentType, limit);
  } catch (e) {
    if (notFound(e)) return [`File not found '${src.file_key}' in '${src.bucket_name}'`];
    return [`Failed to open '${src.file_key}' in '${src.bucket_name}': ${messageOf(e)}`];
  } finally {
    client.destroy();
  }
}

export class SourceError extends Error {}

/** The job's download of the S3 object into `file`, streamed, refused beyond `limit` bytes; its size. */
export async function fetchS3(config: Config, src: S3Source, file: string, limit: number): Promise<number> {
  const client = s3Client(config, src);
  try {
    let out;
    try {
      out = await client.send(new GetObjectCommand({ Bucket: src.bucket_name, Key: src.file_key }));
    } catch (e) {
      if (notFound(e)) throw new SourceError(`File not found '${src.file_key}' in '${src.bucket_name}'`);
      throw new SourceError(`Failed to open '${src.file_key}' in '${src.bucket_name}': ${messageOf(e)}`);
    }
    let size = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        size += chunk.length;
        if (size > limit) cb(new SourceError(`Content length is too big (should be at most ${humanSize(limit)})`));
        else cb(null, chunk);
      },
    });
    await pipeline(out.Body as NodeJS.ReadableStream, counter, fs.createWriteStream(file));
    return size;
  } finally {
    client.destroy();
  }
}
