// Archives of a ref (GET repository/archive[.format]): `git archive` streamed as it comes (compression
// by git, no Content-Length), with the file name and headers Workhorse sends (internal/git/archive.go).
// Every refusal is 404 File Not Found, as in GitLab.
import { PassThrough, type Readable } from 'node:stream';
import { exitCode, peek, streamChild } from '../../git/child-stream.ts';
import { Errors } from '../../lib/errors.ts';
import type { RepoContext } from './context.ts';
import { commitOf, orMissing, repoPath } from './tree.ts';

/** Gitlab::Git::Repository#archive_file_path: the extension of a requested format. */
function archiveExtension(format: string | undefined): 'zip' | 'tar' | 'tar.gz' | 'tar.bz2' {
  switch (format) {
    case 'tar.bz2':
    case 'tbz':
    case 'tbz2':
    case 'tb2':
    case 'bz2':
      return 'tar.bz2';
    case 'tar':
      return 'tar';
    case 'zip':
      return 'zip';
    default:
      return 'tar.gz';
  }
}

/** A header value git-style: the name's UTF-8 bytes as they are (Node writes header strings as latin1). */
const rawUtf8 = (s: string) => Buffer.from(s.replace(/["\\]/g, '\\$&'), 'utf8').toString('latin1');

export interface ArchiveRequest {
  /** the format (the path's suffix, else the `format` parameter) */
  format?: string;
  /** the ref (default: the default branch) */
  sha?: string;
  path?: string;
  excludePaths?: string[];
}

/** The archive's headers and body; `head`: a HEAD request (the same headers, an empty body, git not run). */
export async function archive(ctx: RepoContext, q: ArchiveRequest, head: boolean): Promise<{ headers: Record<string, string>; body: Readable }> {
  const fileNotFound = () => Errors.notFound('File');
  const ext = archiveExtension(q.format);
  const ref = q.sha || ctx.project.default_branch || 'main';
  const repo = ctx.repo;
  const commit = await orMissing(repo, () => commitOf(ctx, ref), null);
  if (!commit) throw fileNotFound();
  const path = repoPath(q.path);
  if (path === null) throw fileNotFound();
  if (path && !(await repo.entryAt(commit, path))) throw fileNotFound();
  const excludes: string[] = [];
  for (const item of q.excludePaths ?? []) {
    for (const raw of item.split(',')) {
      const trimmed = raw.trim();
      if (!trimmed) continue;
      const p = repoPath(trimmed);
      if (!p) throw fileNotFound();
      excludes.push(p);
    }
  }

  // "<project path>-<ref>-<sha>[-<path>]": the file name and the top-level directory inside
  const segments = [ctx.project.path, ref.replace(/\//g, '-'), commit];
  if (q.path) segments.push(q.path.replace(/\//g, '-'));
  const name = segments.join('-');

  // workhorse/internal/git/archive.go: no Content-Length, the body is streamed
  const headers = {
    'content-disposition': `attachment; filename="${rawUtf8(`${name}.${ext}`)}"`,
    'content-type': ext === 'zip' ? 'application/zip' : 'application/octet-stream',
    'content-transfer-encoding': 'binary',
  };
  // HEAD: the same headers, a streamed empty body (so no Content-Length either)
  if (head) return { headers, body: new PassThrough().end() };

  const pathspecs = [...(path ? [`:(literal)${path}`] : []), ...excludes.map((p) => `:(exclude,literal)${p}`)];
  const args = [...(ext === 'tar.bz2' ? ['-c', 'tar.tar.bz2.command=bzip2 -c'] : []), 'archive', `--format=${ext}`, `--prefix=${name}/`, commit];
  if (pathspecs.length) args.push('--', ...pathspecs);
  // a slow client may take its time: an hour before git is stopped
  const child = repo.spawn(args, { timeoutMs: 3_600_000 });
  child.on('error', () => {}); // a failed spawn ends stdout, which peek reports
  child.stdin!.end();
  child.stderr!.resume();
  // git checks everything before its first byte: an exit without output is a refusal
  const { head: first, ended } = await peek(child.stdout!, 1);
  if (ended && (await exitCode(child)) !== 0) throw fileNotFound();
  return { headers, body: ended ? new PassThrough().end(first) : streamChild(child) };
}
