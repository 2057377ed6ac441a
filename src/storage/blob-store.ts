// The blob store (DESIGN: storage/): job artifacts now, export archives and uploads later. A local
// directory under DATA_DIR by default; an S3-compatible bucket when HEARTH_S3_BUCKET is set
// (config.blobStore). Keys are relative paths made by Hearth (never from users), e.g.
// `artifacts/<project>/<job>/<type>-<random>.zip`.
import type { Readable } from 'node:stream';
import type { BlobStoreConfig } from '../config.ts';

export interface BlobStat {
  size: number;
}

export interface BlobStore {
  /** Writes the whole stream under `key` (replacing any blob there); answers its size and SHA-256. */
  put(key: string, body: Readable | Buffer, opts?: { contentType?: string; maxBytes?: number }): Promise<{ size: number; sha256: string }>;
  /** The blob's bytes, or a byte range of them (inclusive end); null when there is no such blob. */
  get(key: string, range?: { start: number; end: number }): Promise<Readable | null>;
  stat(key: string): Promise<BlobStat | null>;
  /** Removes the blob; a missing blob is not an error. */
  delete(key: string): Promise<void>;
  /** A URL a client may be redirected to (a presigned S3 URL when direct download is on), else null. */
  downloadUrl(key: string, opts: { fileName: string; contentType: string; ttlSeconds: number }): Promise<string | null>;
  close(): Promise<void>;
}

export function createBlobStore(_config: BlobStoreConfig): BlobStore {
  const missing = async (): Promise<never> => {
    throw new Error('the blob store is not built yet');
  };
  return { put: missing, get: missing, stat: missing, delete: missing, downloadUrl: missing, close: async () => {} };
}
