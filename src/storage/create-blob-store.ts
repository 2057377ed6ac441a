// The blob store the configuration asks for: a local directory under DATA_DIR by default, an
// S3-compatible bucket when HEARTH_S3_BUCKET is set (config.blobStore). Apart from the interface
// (blob-store.ts), which both stores implement.
import type { BlobStoreConfig } from '../config.ts';
import type { BlobStore } from './blob-store.ts';
import { LocalBlobStore } from './local-store.ts';
import { S3BlobStore } from './s3-store.ts';

export function createBlobStore(config: BlobStoreConfig): BlobStore {
  return config.kind === 's3' ? new S3BlobStore(config) : new LocalBlobStore(config.dir);
}
