// Blobs in an S3-compatible bucket. An upload is spooled to a temporary file first (size limit, size
// and SHA-256 known before anything is sent), then sent with its known length in one PutObject: the
// body is never whole in memory, and a refused or broken upload leaves no object behind.
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { BlobStoreConfig } from '../config.ts';
import { type BlobStat, type BlobStore, checkKey } from './blob-store.ts';
import { spool } from './local-store.ts';

type S3Config = Extract<BlobStoreConfig, { kind: 's3' }>;

function missing(err: unknown): boolean {
  if (!(err instanceof S3ServiceException)) return false;
  return err.name === 'NoSuchKey' || err.name === 'NotFound' || err.$metadata?.httpStatusCode === 404;
}

/** Content-Disposition of a download: the RFC 6266 form GitLab sends (ASCII fallback and UTF-8 name). */
export function attachmentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName).replace(/['()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

export class S3BlobStore implements BlobStore {
  readonly client: S3Client;
  private readonly bucket: string;

  constructor(private readonly config: S3Config) {
    this.bucket = config.bucket;
    this.client = new S3Client({
      region: config.region,
      endpoint: config.endpoint ?? undefined,
      forcePathStyle: config.forcePathStyle,
      credentials: config.accessKeyId && config.secretAccessKey ? { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } : undefined,
      // S3-compatible servers do not all take the flexible checksums (aws-chunked trailers)
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async put(key: string, body: Readable | Buffer, opts: { contentType?: string; maxBytes?: number } = {}): Promise<{ size: number; sha256: string }> {
    checkKey(key);
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'hearth-blob-'));
    const temp = path.join(dir, randomBytes(8).toString('hex'));
    try {
      const result = await spool(body, temp, opts.maxBytes);
      await this.putFile(key, temp, opts);
      return result;
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  }

  async putFile(key: string, file: string, opts: { contentType?: string } = {}): Promise<void> {
    checkKey(key);
    const { size } = await fs.stat(file);
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: createReadStream(file, { highWaterMark: 1 << 20 }),
        ContentLength: size,
        ContentType: opts.contentType ?? 'application/octet-stream',
      }),
    );
  }

  async get(key: string, range?: { start: number; end: number }): Promise<Readable | null> {
    checkKey(key);
    try {
      const res = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
      );
      return (res.Body as Readable | undefined) ?? null;
    } catch (err) {
      if (missing(err)) return null;
      throw err;
    }
  }

  async stat(key: string): Promise<BlobStat | null> {
    checkKey(key);
    try {
      const res = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { size: Number(res.ContentLength ?? 0) };
    } catch (err) {
      if (missing(err)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (err) {
      if (!missing(err)) throw err;
    }
  }

  async downloadUrl(key: string, opts: { fileName: string; contentType: string; ttlSeconds: number }): Promise<string | null> {
    checkKey(key);
    if (!this.config.directDownload) return null;
    const cmd = new GetObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ResponseContentDisposition: attachmentDisposition(opts.fileName),
      ResponseContentType: opts.contentType,
    });
    return getSignedUrl(this.client, cmd, { expiresIn: opts.ttlSeconds });
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}
