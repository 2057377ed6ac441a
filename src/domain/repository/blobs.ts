// Blobs by id (GET blobs/:sha and blobs/:sha/raw): read through the cat-file pool up to 8 MiB, bigger
// ones from their own `git cat-file` (streamed for raw); raw headers as Workhorse sends them, cached
// by blob id (content never changes under an id).
import type { Readable } from 'node:stream';
import { exitCode, peek, streamChild } from '../../git/child-stream.ts';
import type { GitObject } from '../../git/cat-file.ts';
import { Errors } from '../../lib/errors.ts';
import { blobHeaders } from './content-type.ts';
import type { RepoContext } from './context.ts';
import { orMissing } from './tree.ts';

/** Bigger blobs are streamed from their own `git cat-file` instead of the shared pool. */
const POOLED_BLOB_MAX = 8 * 1024 * 1024;

const HEX = /^[0-9a-f]{4,64}$/i;

/** blob SHA → its headers */
const headersOfBlob = new Map<string, { type: string; disposition: string }>();

/** The blob `sha` names (hex only: no revision syntax reaches git), or 404 Blob Not Found. */
export async function blobInfo(ctx: RepoContext, sha: string): Promise<GitObject> {
  if (!HEX.test(sha)) throw Errors.notFound('Blob');
  const o = await orMissing(ctx.repo, () => ctx.repo.info(sha), null);
  if (!o || o.type !== 'blob') throw Errors.notFound('Blob');
  return o;
}

/** The whole content of a blob blobInfo found. */
export async function blobContent(ctx: RepoContext, info: GitObject): Promise<Buffer> {
  if (info.size <= POOLED_BLOB_MAX) {
    const o = await ctx.repo.read(info.sha);
    if (!o || o.type !== 'blob') throw Errors.notFound('Blob');
    return o.content!;
  }
  return (await ctx.repo.run(['cat-file', 'blob', info.sha], { maxBytes: info.size + 1, timeoutMs: 600_000 })).stdout;
}

export interface RawBlob {
  type: string;
  disposition: string;
  /** the content (null for a HEAD request of a streamed blob) */
  body: Buffer | Readable | null;
  /** Content-Length of a streamed blob */
  length?: number;
}

/** A blob blobInfo found, as GET blobs/:sha/raw sends it; `head`: a HEAD request (nothing is streamed). */
export async function rawBlob(ctx: RepoContext, info: GitObject, head: boolean): Promise<RawBlob> {
  if (info.size <= POOLED_BLOB_MAX) {
    const o = await ctx.repo.read(info.sha);
    if (!o || o.type !== 'blob') throw Errors.notFound('Blob');
    let h = headersOfBlob.get(info.sha);
    if (!h) {
      if (headersOfBlob.size >= 10_000) headersOfBlob.clear();
      headersOfBlob.set(info.sha, (h = blobHeaders(o.content!)));
    }
    return { type: h.type, disposition: h.disposition, body: o.content!, length: undefined };
  }
  const child = ctx.repo.spawn(['cat-file', 'blob', info.sha]);
  child.on('error', () => {}); // a failed spawn ends stdout, which peek reports
  child.stdin!.end();
  child.stderr!.resume();
  const { head: first, ended } = await peek(child.stdout!, 4096);
  if (ended && (await exitCode(child)) !== 0) throw Errors.notFound('Blob');
  const h = blobHeaders(first);
  if (ended) return { type: h.type, disposition: h.disposition, body: first, length: undefined };
  if (head) {
    child.kill('SIGKILL');
    return { type: h.type, disposition: h.disposition, body: null, length: info.size };
  }
  return { type: h.type, disposition: h.disposition, body: streamChild(child), length: info.size };
}
