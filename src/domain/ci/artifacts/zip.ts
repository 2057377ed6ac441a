// Zip archives of job artifacts, read by random access (yauzl) from a file or from the blob store
// (ranged reads, a small block cache for the central directory), never whole in memory.
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import yauzl from 'yauzl';
import type { BlobStore } from '../../../storage/blob-store.ts';

/** What is wrong with an uploaded archive (400). */
export class BadArchiveError extends Error {}

const BLOCK = 256 * 1024;
/** reads up to this size go through the block cache (headers, central directory) */
const SMALL = 64 * 1024;

/** A yauzl reader over a blob: small reads from cached 256 KiB blocks, large ones streamed. */
class BlobReader extends yauzl.RandomAccessReader {
  private readonly blocks = new Map<number, Promise<Buffer>>();
  constructor(
    private readonly store: BlobStore,
    private readonly key: string,
    private readonly size: number,
  ) {
    super();
  }

  private block(i: number): Promise<Buffer> {
    let b = this.blocks.get(i);
    if (!b) {
      const start = i * BLOCK;
      const end = Math.min(this.size, start + BLOCK) - 1;
      b = this.store.get(this.key, { start, end }).then(async (s) => {
        if (!s) throw new Error('blob vanished');
        const parts: Buffer[] = [];
        for await (const chunk of s) parts.push(chunk as Buffer);
        return Buffer.concat(parts);
      });
      if (this.blocks.size >= 16) this.blocks.delete(this.blocks.keys().next().value!);
      this.blocks.set(i, b);
    }
    return b;
  }

  override _readStreamForRange(start: number, end: number): Readable {
    const out = new PassThrough();
    (async () => {
      if (end <= start) return out.end();
      if (end - start > SMALL) {
        const s = await this.store.get(this.key, { start, end: end - 1 });
        if (!s) throw new Error('blob vanished');
        s.on('error', (e) => out.destroy(e));
        s.pipe(out);
        return;
      }
      const parts: Buffer[] = [];
      for (let i = Math.floor(start / BLOCK); i * BLOCK < end; i++) {
        const b = await this.block(i);
        const from = Math.max(start - i * BLOCK, 0);
        const to = Math.min(end - i * BLOCK, b.length);
        parts.push(b.subarray(from, to));
      }
      out.end(Buffer.concat(parts));
    })().catch((e) => out.destroy(e));
    return out;
  }
}

function openZip(open: (cb: (err: Error | null, zip?: yauzl.ZipFile) => void) => void): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => open((err, zip) => (err || !zip ? reject(err ?? new Error('no zip')) : resolve(zip))));
}

const OPTS: yauzl.Options = { lazyEntries: true, autoClose: false, validateEntrySizes: true, decodeStrings: true, strictFileNames: false };

export function openZipFile(file: string): Promise<yauzl.ZipFile> {
  return openZip((cb) => yauzl.open(file, OPTS, cb));
}

export function openZipBlob(store: BlobStore, key: string, size: number): Promise<yauzl.ZipFile> {
  const reader = new BlobReader(store, key, size);
  return openZip((cb) => yauzl.fromRandomAccessReader(reader, size, OPTS, cb));
}

/** Every entry in turn; stop by answering true. Errors (bad names, a broken directory) reject. */
export function eachEntry(zip: yauzl.ZipFile, visit: (e: yauzl.Entry) => Promise<boolean | undefined> | boolean | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    zip.on('error', reject);
    zip.on('end', () => resolve());
    zip.on('entry', (entry: yauzl.Entry) => {
      Promise.resolve(visit(entry)).then(
        (stop) => (stop ? resolve() : zip.readEntry()),
        (err) => reject(err),
      );
    });
    zip.readEntry();
  });
}

export function entryStream(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) => zip.openReadStream(entry, (err, s) => (err || !s ? reject(err ?? new Error('no stream')) : resolve(s))));
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

/** An entry name that stays inside the archive: relative, no `..` going up, no NUL or backslash. */
export function safeEntryName(name: string): boolean {
  if (!name || name.includes('\0') || name.includes('\\') || name.startsWith('/') || /^[A-Za-z]:/.test(name)) return false;
  const norm = path.posix.normalize(name);
  return norm !== '..' && !norm.startsWith('../');
}

/**
 * Checks an uploaded archive: a readable zip whose entries stay inside it (no absolute names, no `..`,
 * no symbolic link pointing out of it). Throws BadArchiveError.
 */
export async function validateArchive(file: string): Promise<void> {
  let zip: yauzl.ZipFile;
  try {
    zip = await openZipFile(file);
  } catch (err) {
    throw new BadArchiveError(`invalid zip archive: ${(err as Error).message}`);
  }
  try {
    await eachEntry(zip, async (e) => {
      if (!safeEntryName(e.fileName)) throw new BadArchiveError(`invalid entry path: ${e.fileName}`);
      const mode = (e.externalFileAttributes >>> 16) & S_IFMT;
      if (mode === S_IFLNK) {
        if (e.uncompressedSize > 4096) throw new BadArchiveError(`invalid symbolic link: ${e.fileName}`);
        const s = await entryStream(zip, e);
        const parts: Buffer[] = [];
        for await (const chunk of s) parts.push(chunk as Buffer);
        const target = Buffer.concat(parts).toString('utf8');
        const resolved = path.posix.join(path.posix.dirname(e.fileName), target);
        if (target.startsWith('/') || !safeEntryName(resolved)) throw new BadArchiveError(`symbolic link out of the archive: ${e.fileName}`);
      }
      return false;
    });
  } catch (err) {
    if (err instanceof BadArchiveError) throw err;
    throw new BadArchiveError(`invalid zip archive: ${(err as Error).message}`);
  } finally {
    zip.close();
  }
}

/**
 * Go's mime.TypeByExtension built-in table (what Workhorse answers for an artifact entry), plus .txt,
 * less the types a browser runs or renders as a page (.html, .js, .mjs, .svg, .xml, .css, .wasm): an
 * artifact is written by any job, so it must never become a script, a style or a document of this
 * origin (`<script src>` to an artifact would pass a `script-src 'self'` policy). Those are served as
 * text/plain, with nosniff, like the rest.
 */
const MIME: Record<string, string> = {
  '.avif': 'image/avif',
  '.gif': 'image/gif',
  '.jpeg': 'image/jpeg',
  '.jpg': 'image/jpeg',
  '.json': 'application/json',
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.txt': 'text/plain; charset=utf-8',
  '.webp': 'image/webp',
};
const ACTIVE = new Set(['.css', '.htm', '.html', '.js', '.mjs', '.svg', '.wasm', '.xhtml', '.xml', '.xsl', '.xslt']);

export function entryContentType(name: string): string {
  const ext = path.posix.extname(name).toLowerCase();
  if (ACTIVE.has(ext)) return 'text/plain; charset=utf-8';
  return MIME[ext] ?? 'application/octet-stream';
}
