// The blob store (DESIGN: storage/): job artifacts now, export archives and uploads later. A local
// directory under DATA_DIR by default; an S3-compatible bucket when HEARTH_S3_BUCKET is set
// (config.blobStore). Keys are relative paths made by Hearth (never from users), e.g.
// `artifacts/<project>/<job>/<type>-<random>.zip`; they are still checked (checkKey). The store the
// configuration asks for is made by create-blob-store.ts.
import type { Readable } from 'node:stream';

export interface BlobStat {
  size: number;
}

export interface BlobStore {
  /**
   * Writes the whole stream under `key` (replacing any blob there); answers its size and SHA-256.
   * Over `maxBytes` it stops reading, writes nothing and throws BlobTooLargeError. Never holds the
   * whole body in memory.
   */
  put(key: string, body: Readable | Buffer, opts?: { contentType?: string; maxBytes?: number }): Promise<{ size: number; sha256: string }>;
  /**
   * Stores a complete local file under `key` (the caller's temporary file, which the store may move:
   * the caller removes it afterwards if it is still there). Saves a second copy when the caller had to
   * spool the body anyway (size limit, checks before storing).
   */
  putFile(key: string, file: string, opts?: { contentType?: string }): Promise<void>;
  /** The blob's bytes, or a byte range of them (inclusive end); null when there is no such blob. */
  get(key: string, range?: { start: number; end: number }): Promise<Readable | null>;
  stat(key: string): Promise<BlobStat | null>;
  /** Removes the blob; a missing blob is not an error. */
  delete(key: string): Promise<void>;
  /** A URL a client may be redirected to (a presigned S3 URL when direct download is on), else null. */
  downloadUrl(key: string, opts: { fileName: string; contentType: string; ttlSeconds: number }): Promise<string | null>;
  close(): Promise<void>;
}

/** put() read more than `maxBytes`. */
export class BlobTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`blob larger than ${maxBytes} bytes`);
  }
}

/** A key is relative, `/`-separated segments of [A-Za-z0-9._-], none `.` or `..`. */
export function checkKey(key: string): string {
  const ok = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/.test(key) && key.length <= 1024 && !key.split('/').some((s) => s === '.' || s === '..');
  if (!ok) throw new Error(`invalid blob key: ${JSON.stringify(key)}`);
  return key;
}
