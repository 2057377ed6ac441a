// Archives are untrusted: extraction into a fresh directory refuses what could escape it or exhaust
// the machine.
//
// The .tar.gz is read as a stream: gunzip (its output counted against maxBytes, the whole run under
// timeoutMs) → node-tar's Parser (strict: a bad checksum, a truncated or unrecognised archive is an error)
// → each entry decided here before a byte of it is written: regular files and directories only, written
// by this module (never through tar's Unpack), with paths checked segment by segment and resolved inside
// `dest`. Nothing but directories and regular files is ever created, so no path can be redirected by
// an earlier entry; files are opened O_NOFOLLOW all the same. A JSON document of the tree (a line of a
// relation file, project.json) longer than MAX_JSON_DOCUMENT_BYTES stops the extraction at the limit. Memory stays bounded: the parser is fed
// one gunzip chunk at a time, with backpressure, and one file is written at a time.
import { once } from 'node:events';
import { constants, createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { basename, dirname, resolve, sep } from 'node:path';
import { Transform } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import { isJsonDocument, jsonTooLarge, MAX_JSON_DOCUMENT_BYTES } from './layout.ts';

export interface ExtractLimits {
  /** max_decompressed_archive_size (MiB → bytes here); 0 = unlimited */
  maxBytes: number;
  /** decompress_archive_file_timeout (s → ms here); 0 = unlimited */
  timeoutMs: number;
}

/** The archive cannot be used: the import fails with this message in import_error. */
export class ArchiveError extends Error {}

/** GitLab's message (Gitlab::ImportExport::DecompressedArchiveSizeValidator through FileImporter) */
export const SIZE_MESSAGE = 'Decompressed archive size validation failed.';
export const TIMEOUT_MESSAGE = 'Timeout reached during archive decompression';

const FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile']);
const REFUSED_TYPES: Record<string, string> = {
  SymbolicLink: 'symbolic link',
  Link: 'hard link',
  CharacterDevice: 'character device',
  BlockDevice: 'block device',
  FIFO: 'FIFO',
};
const MAX_PATH = 4096;

/**
 * Extracts the .tar.gz `file` into `dest` (created, must not exist). Only regular files and directories;
 * refuses (ArchiveError, and removes `dest`) absolute paths, `..` segments, symlinks, hard links, device
 * files, more than maxBytes decompressed, more than timeoutMs, and anything that is not gzip+tar.
 */
export async function extractArchive(file: string, dest: string, limits: ExtractLimits): Promise<void> {
  const root = resolve(dest);
  await mkdir(dirname(root), { recursive: true });
  await mkdir(root, { mode: 0o700 }); // EEXIST: the caller's mistake, nothing of theirs is removed
  const abort = new AbortController();
  let failure: Error | null = null;
  const fail = (err: Error) => {
    if (failure) return;
    failure = err;
    abort.abort(err);
  };
  let timer: NodeJS.Timeout | undefined;
  if (limits.timeoutMs > 0) timer = setTimeout(() => fail(new ArchiveError(TIMEOUT_MESSAGE)), limits.timeoutMs);
  const writers = new Set<WriteStream>();
  try {
    await run(file, root, limits.maxBytes, abort.signal, fail, () => failure, writers);
    if (failure) throw failure;
  } catch (err) {
    const e = toArchiveError(failure ?? err);
    for (const w of writers) w.destroy();
    await rm(root, { recursive: true, force: true });
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

async function run(
  file: string,
  root: string,
  maxBytes: number,
  signal: AbortSignal,
  fail: (err: Error) => void,
  failed: () => Error | null,
  writers: Set<WriteStream>,
): Promise<void> {
  const source = createReadStream(file);
  const gunzip = createGunzip();
  const parser = new Parser({ strict: true, zstd: false, brotli: false });
  const parsed = new Promise<void>((res, rej) => {
    parser.once('end', res);
    parser.once('error', (err: Error) => rej(new ArchiveError(`Invalid file: not a valid tar archive (${err.message})`)));
  });
  parsed.catch(() => {}); // observed below; a failure elsewhere may come first
  parser.on('error', (err: Error) => fail(new ArchiveError(`Invalid file: not a valid tar archive (${err.message})`)));
  signal.addEventListener('abort', () => {
    source.destroy();
    gunzip.destroy();
  });
  const aborted = new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));

  // One entry at a time: the next is taken once the previous file is closed (an entry not read holds
  // the parser, which holds the loop below: at most a chunk is buffered), so entries never race.
  let chain: Promise<void> = Promise.resolve();
  const made = new Set<string>([root]);
  parser.on('entry', (entry: ReadEntry) => {
    chain = chain
      .then(() => writeEntry(entry, root, made, failed, writers))
      .catch((err) => {
        entry.resume();
        fail(err as Error);
      });
  });

  let completed = false;
  try {
    await feed(source, gunzip, parser, maxBytes, signal, fail, failed);
    if (failed()) return;
    parser.end();
    await Promise.race([parsed, aborted]);
    // the last file still being written
    await Promise.race([chain, aborted]);
    completed = !failed();
  } catch (err) {
    fail(err as Error);
    throw err;
  } finally {
    if (!completed) {
      // nothing more is written once run() returns: the file being written is closed, the entries
      // still queued are skipped (failed() is set), then the caller removes dest
      for (const w of writers) w.destroy();
      await chain.catch(() => {});
    }
  }
}

/** Gunzip output into the parser, counted against maxBytes, with backpressure. */
async function feed(
  source: NodeJS.ReadableStream & { destroy(): void },
  gunzip: ReturnType<typeof createGunzip>,
  parser: Parser,
  maxBytes: number,
  signal: AbortSignal,
  fail: (err: Error) => void,
  failed: () => Error | null,
): Promise<void> {
  let total = 0;
  let head = Buffer.alloc(0);
  try {
    source.on('error', (err) => gunzip.destroy(err));
    source.pipe(gunzip);
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      if (failed()) break;
      total += chunk.length;
      if (maxBytes > 0 && total > maxBytes) return fail(new ArchiveError(SIZE_MESSAGE));
      if (head.length < 4) {
        head = Buffer.concat([head, chunk.subarray(0, 4 - head.length)]);
        // a compressed stream inside: node-tar would inflate it again, past the count above
        if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return fail(new ArchiveError('Invalid file: not a tar archive'));
      }
      if (!parser.write(chunk)) await once(parser, 'drain', { signal });
    }
  } catch (err) {
    if (failed()) return;
    const e = err as NodeJS.ErrnoException;
    if (e.code?.startsWith('Z_') || e.code === 'ERR_ZLIB') return fail(new ArchiveError(`Invalid file: not a valid gzip archive (${e.message})`));
    throw err;
  }
}

/** Writes one entry (a directory, or a file through O_NOFOLLOW), or skips it once the extraction failed. */
async function writeEntry(entry: ReadEntry, root: string, made: Set<string>, failed: () => Error | null, writers: Set<WriteStream>): Promise<void> {
  if (failed()) return void entry.resume();
  const target = checkEntry(entry, root);
  if (target === null) return void entry.resume();
  const dir = entry.type === 'Directory' ? target : dirname(target);
  if (!made.has(dir)) {
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw fsError(err, entry.path);
    }
    made.add(dir);
  }
  if (entry.type === 'Directory') return void entry.resume();
  const out = createWriteStream(target, {
    flags: (constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW) as unknown as string,
    mode: 0o600,
  });
  writers.add(out);
  try {
    await new Promise<void>((resolve, reject) => {
      out.once('error', (err) => reject(fsError(err, entry.path)));
      out.once('close', () => resolve());
      if (!isJsonDocument(target)) return void entry.pipe(out);
      // a JSON document (a relation file's line, project.json) longer than the reader takes fails here,
      // before gigabytes of it reach the disk
      const lines = lineLimit(MAX_JSON_DOCUMENT_BYTES + 1, () => new ArchiveError(jsonTooLarge(basename(target)))); // +1: a \r before the \n
      lines.once('error', (err) => {
        out.destroy();
        reject(err);
      });
      entry.pipe(lines).pipe(out);
    });
  } finally {
    writers.delete(out);
  }
}

/** Passes bytes through while no line (bytes between newlines) is longer than `max`; fails with `tooLong()` else. */
function lineLimit(max: number, tooLong: () => Error): Transform {
  let run = 0; // bytes since the last newline
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      let start = 0;
      for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
        if (run + nl - start > max) return done(tooLong());
        run = 0;
        start = nl + 1;
      }
      run += chunk.length - start;
      done(run > max ? tooLong() : null, chunk);
    },
  });
}

/** The entry's place under `root`, null to skip (the root itself), or ArchiveError. */
function checkEntry(entry: ReadEntry, root: string): string | null {
  const p = entry.path;
  const shown = JSON.stringify(p.length > 200 ? `${p.slice(0, 200)}…` : p);
  const refused = REFUSED_TYPES[entry.type];
  if (refused) throw new ArchiveError(`Invalid file: ${shown} is a ${refused}`);
  if (!FILE_TYPES.has(entry.type) && entry.type !== 'Directory') throw new ArchiveError(`Invalid file: ${shown} has an unsupported type (${entry.type})`);
  if (p.includes('\0')) throw new ArchiveError('Invalid file: a path holds a NUL byte');
  if (Buffer.byteLength(p) > MAX_PATH) throw new ArchiveError('Invalid file: a path is too long');
  if (p.startsWith('/')) throw new ArchiveError(`Invalid file: ${shown} is an absolute path`);
  const segments = p.split('/');
  if (segments.includes('..')) throw new ArchiveError(`Invalid file: ${shown} leaves the archive`);
  const kept = segments.filter((s) => s !== '' && s !== '.');
  if (kept.length === 0) {
    if (entry.type === 'Directory') return null;
    throw new ArchiveError(`Invalid file: ${shown} is not a file name`);
  }
  const target = resolve(root, ...kept);
  if (!target.startsWith(root + sep)) throw new ArchiveError(`Invalid file: ${shown} leaves the archive`);
  return target;
}

function fsError(err: unknown, path: string): Error {
  const e = err as NodeJS.ErrnoException;
  const shown = JSON.stringify(path.length > 200 ? `${path.slice(0, 200)}…` : path);
  if (['EEXIST', 'ENOTDIR', 'EISDIR', 'ENAMETOOLONG', 'ELOOP'].includes(e.code ?? '')) {
    return new ArchiveError(`Invalid file: ${shown} cannot be written (${e.code})`);
  }
  return e;
}

function toArchiveError(err: unknown): Error {
  if (err instanceof ArchiveError) return err;
  const e = err as NodeJS.ErrnoException;
  if (e?.code?.startsWith('Z_') || e?.code === 'ERR_ZLIB') return new ArchiveError(`Invalid file: not a valid gzip archive (${e.message})`);
  if (e?.code === 'ABORT_ERR') return new ArchiveError('Invalid file');
  return e instanceof Error ? e : new Error(String(e));
}
