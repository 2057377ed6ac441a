// Files at a ref (GitLab's lib/api/files.rb reads, Gitlab::Git::Blob.find): the entry at a path, its
// bytes, and its SHA-256 (cached by blob id, like GitLab's blob_content_sha256 cache).
import crypto from 'node:crypto';
import type { Repository } from '../../git/repository.ts';
import { Errors } from '../../lib/errors.ts';
import { LruCache } from '../../lib/lru-cache.ts';
import { resolveRef, type RepoContext } from './context.ts';

export interface FileEntry {
  name: string;
  path: string;
  mode: string;
  type: 'blob' | 'commit';
  sha: string;
}

/** The blob (or submodule) at `filePath` in `commit`; null for a missing path or a tree. */
async function entryOf(repo: Repository, commit: string, filePath: string): Promise<FileEntry | null> {
  const slash = filePath.lastIndexOf('/');
  const dir = slash < 0 ? '' : filePath.slice(0, slash);
  const name = filePath.slice(slash + 1);
  const entries = await repo.tree(commit, dir);
  const e = entries?.find((x) => x.name === name);
  if (!e || e.type === 'tree') return null;
  return { name, path: filePath, mode: e.mode, type: e.type, sha: e.sha };
}

/** Blob bytes (a submodule reads as empty, as Gitlab::Git::Blob.find makes it). */
export async function contentOf(repo: Repository, entry: FileEntry): Promise<Buffer> {
  if (entry.type !== 'blob') return Buffer.alloc(0);
  const o = await repo.read(entry.sha);
  if (!o || o.type !== 'blob') throw Errors.notFound('File');
  return o.content!;
}

/** Blob ids never change: their SHA-256 is cached like GitLab's blob_content_sha256 cache. */
const sha256Cache = new Map<string, string>();
const SHA256_CACHE_MAX = 10_000;

export function contentSha256(entry: FileEntry, data: Buffer): string {
  const key = `${entry.type}:${entry.sha}`;
  let hit = sha256Cache.get(key);
  if (!hit) {
    hit = crypto.createHash('sha256').update(data).digest('hex');
    if (sha256Cache.size >= SHA256_CACHE_MAX) sha256Cache.delete(sha256Cache.keys().next().value!);
    sha256Cache.set(key, hit);
  }
  return hit;
}

/** assign_file_vars!: the commit (404 Commit Not Found) and the blob at the path (404 File Not Found). */
export async function fileAt(ctx: RepoContext, ref: string | undefined, filePath: string): Promise<{ commit: string; entry: FileEntry }> {
  if (!ctx.repo.exists()) throw Errors.notFound('Commit');
  const commit = await resolveRef(ctx, ref);
  if (!commit) throw Errors.notFound('Commit');
  const entry = await entryOf(ctx.repo, commit, filePath);
  if (!entry) throw Errors.notFound('File');
  return { commit, entry };
}

/** last commits by repository, commit id and path: a commit's history never changes (GitLab caches it the same way) */
const lastCommits = new LruCache<string | null>(20_000);
const COMMIT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/**
 * `git log -1 <commit> -- <path>` with literal pathspecs (Gitaly's LastCommitForPath); null when none.
 * Kept per (repository, commit id, path): the same file at an unchanged ref costs no git.
 */
export function lastCommitFor(repo: Repository, commit: string, filePath: string): Promise<string | null> {
  const find = async () => {
    const r = await repo.run(['log', '-1', '--format=%H', commit, '--', filePath], { env: { GIT_LITERAL_PATHSPECS: '1' }, okCodes: [0, 128] });
    if (r.code !== 0) return null;
    return r.stdout.toString().trim() || null;
  };
  return COMMIT_ID.test(commit) ? lastCommits.get(`${repo.gitDir}\0${commit}\0${filePath}`, find) : find();
}
