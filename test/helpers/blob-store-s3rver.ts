// A real S3-compatible server for tests (s3rver on a free port, a temporary directory, one bucket).
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { BlobStoreConfig } from '../../src/config.ts';

const require = createRequire(import.meta.url);
// s3rver ships no types
const S3rver = require('s3rver') as new (
  opts: Record<string, unknown>,
) => {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
};

export interface S3Server {
  config(opts?: { directDownload?: boolean }): Extract<BlobStoreConfig, { kind: 's3' }>;
  endpoint: string;
  stop(): Promise<void>;
}

export async function startS3(bucket = 'hearth-test'): Promise<S3Server> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'hearth-s3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    config: (opts = {}) => ({
      kind: 's3',
      bucket,
      endpoint,
      region: 'us-east-1',
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
      directDownload: opts.directDownload ?? false,
    }),
    async stop() {
      await server.close();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}
