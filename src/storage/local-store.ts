// Blobs as files under one directory. A write goes to a temporary file in `<dir>/.tmp` (same file
// system), is fsynced, then renamed into place and the directory fsynced: a reader sees the old
// blob or the whole new one, never a part, and a crash leaves at most a stray temporary file.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type BlobStat, type BlobStore, BlobTooLargeError, checkKey } from './blob-store.ts';

/** Counts and hashes what passes; fails with BlobTooLargeError past `max` bytes. */
export class Meter extends Transform {
  size = 0;
  private readonly hash = createHash('sha256');
  constructor(private readonly max: number) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null, data?: Buffer) => void): void {
    this.size += chunk.length;
    if (this.size > this.max) {
      done(new BlobTooLargeError(this.max));
      return;
    }
    this.hash.update(chunk);
    done(null, chunk);
  }
  digest(): string {
    return this.hash.digest('hex');
  }
}

async function fsyncPath(p: string): Promise<void> {
  const fh = await fs.open(p, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Streams `body` into a new file at `file` (fsynced); answers size and SHA-256. Removes the file on failure. */
export async function spool(body: Readable | Buffer, file: string, maxBytes = Number.POSITIVE_INFINITY): Promise<{ size: number; sha256: string }> {
  const meter = new Meter(maxBytes);
  const source = Buffer.isBuffer(body) ? Readable.from([body]) : body;
  const out = createWriteStream(file, { flags: 'wx' });
  try {
    await pipeline(source, meter, out);
    await fsyncPath(file);
  } catch (err) {
    // pipeline can answer before the destroyed file stream has finished opening the file: wait for
    // its close, or the file would appear after the removal below
    if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()));
    await fs.rm(file, { force: true });
    // stop the sender: what is left of the body is not read
    if (!Buffer.isBuffer(body)) body.resume();
    throw err;
  }
  return { size: meter.size, sha256: meter.digest() };
}

export class LocalBlobStore implements BlobStore {
  private readonly tmp: string;
  constructor(private readonly dir: string) {
    this.tmp = path.join(dir, '.tmp');
  }

  private file(key: string): string {
    return path.join(this.dir, ...checkKey(key).split('/'));
  }

  async put(key: string, body: Readable | Buffer, opts: { maxBytes?: number } = {}): Promise<{ size: number; sha256: string }> {
    const target = this.file(key);
    await fs.mkdir(this.tmp, { recursive: true });
    const temp = path.join(this.tmp, `${randomBytes(12).toString('hex')}.part`);
    const result = await spool(body, temp, opts.maxBytes);
    try {
      await fs.mkdir(path.dirname(target), { recursive: true });
      await fs.rename(temp, target);
      await fsyncPath(path.dirname(target));
    } catch (err) {
      await fs.rm(temp, { force: true });
      throw err;
    }
    return result;
  }

  async putFile(key: string, file: string): Promise<void> {
    const target = this.file(key);
    await fs.mkdir(path.dirname(target), { recursive: true });
    try {
      // fsynced by the caller's spool; a rename on the same file system is atomic
      await fs.rename(file, target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      await this.put(key, createReadStream(file, { highWaterMark: 1 << 20 }));
      return;
    }
    await fsyncPath(path.dirname(target));
  }

  async get(key: string, range?: { start: number; end: number }): Promise<Readable | null> {
    const file = this.file(key);
    // open first: a missing blob is null, not a stream that errors later
    let fh: fs.FileHandle;
    try {
      fh = await fs.open(file, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    return fh.createReadStream({ start: range?.start, end: range?.end, highWaterMark: 1 << 20 });
  }

  async stat(key: string): Promise<BlobStat | null> {
    try {
      const st = await fs.stat(this.file(key));
      return st.isFile() ? { size: st.size } : null;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await fs.rm(this.file(key), { force: true });
  }

  async downloadUrl(): Promise<string | null> {
    return null;
  }

  async close(): Promise<void> {}
}
