// Searching a repository at a ref, as GitLab's basic search does (Gitlab::FileFinder, Search::FoundBlob,
// Repository#find_commits_by_message): files whose path holds the term, then the lines that hold it with two
// lines of context; commits whose message holds it, and the commit a SHA names. The term is a fixed string
// matched in any case. `filename:`, `path:` and `extension:` in the term narrow the files (a leading `-`
// excludes), as Gitlab::Search::Query parses them. git runs with a time limit and an output cap.
import type { Commit } from '../../git/objects.ts';
import { grepChunks, GrepLimit, treeFiles } from '../../git/grep.ts';
import { Errors } from '../../lib/errors.ts';
import type { RepoContext } from './context.ts';

/** How long one search may run git, and how much it may read. */
export const SEARCH_TIME_LIMIT_MS = 5_000;
const GREP_MAX_BYTES = 8 * 1024 * 1024;
const TREE_MAX_BYTES = 32 * 1024 * 1024;
/** Search::FoundBlob#fetch_blob reads at most this much of a file found by its path. */
const PATH_MATCH_BYTES = 1024;

/** A file found by its path or its content (Search::FoundBlob). */
export interface FoundBlob {
  /** the path without its extension */
  basename: string;
  /** the matched lines with their context, or the beginning of a file found by its path */
  data: string;
  path: string;
  /** the blob id of a file found by its path; null for a content match */
  id: string | null;
  ref: string;
  startline: number;
}

export interface PathFilter {
  kind: 'filename' | 'path' | 'extension';
  negated: boolean;
  pattern: RegExp;
}

export interface CodeQuery {
  /** the words that are not filters, or '*' when there are none */
  term: string;
  filters: PathFilter[];
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Gitlab::Search::Query with FileFinder's filters: tokens split on spaces outside double quotes; a token
 * `filename:x`, `path:x` or `extension:x` (or with a leading `-`) is a filter, its value lower-cased with the
 * quotes removed and `*` a wildcard; the rest joined by spaces is the term.
 */
export function parseCodeQuery(raw: string): CodeQuery {
  const tokens = raw.split(/\s(?=(?:[^"]|"[^"]*")*$)/).filter(Boolean);
  const filters: PathFilter[] = [];
  const rest: string[] = [];
  for (const token of tokens) {
    const m = /^(-?)(filename|path|extension):(.*)$/s.exec(token);
    const value = m ? m[3].replace(/^"|"$/g, '').toLowerCase() : '';
    if (!m || !value) {
      // "filename:" with nothing after it is no filter: it stays in the term, as GitLab leaves it
      rest.push(token);
      continue;
    }
    const kind = m[2] as PathFilter['kind'];
    const body = escapeRegExp(value).replace(/\\\*/g, '.*?');
    const source = kind === 'filename' ? `${body}$` : kind === 'extension' ? `\\.${body}$` : body;
    filters.push({ kind, negated: m[1] === '-', pattern: new RegExp(source, 'i') });
  }
  return { term: rest.length ? rest.join(' ') : '*', filters };
}

const passes = (filters: PathFilter[], path: string) => filters.every((f) => f.pattern.test(path) !== f.negated);

/** Pathname#sub_ext(''): the path without the extension of its last part. */
export function withoutExtension(path: string): string {
  const slash = path.lastIndexOf('/');
  const dot = path.lastIndexOf('.');
  return dot > slash + 1 ? path.slice(0, dot) : path;
}

/** The longest prefix of `buf` up to `max` bytes that does not cut a UTF-8 character. */
function utf8Head(buf: Buffer, max: number): string {
  if (buf.length <= max) return buf.toString('utf8');
  let end = max;
  while (end > 0 && (buf[end] & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString('utf8');
}

/** The time limit answers GitLab's search timeout (408). */
function limited<T>(p: Promise<T>): Promise<T> {
  return p.catch((e) => {
    if (e instanceof GrepLimit) throw Errors.refused({ error: 'Request timed out' }, 408);
    throw e;
  });
}

/** A term git can be given: no NUL and no line break (git's patterns are lines). */
const searchable = (term: string) => term.trim() !== '' && !/[\0\n\r]/.test(term);

/**
 * The files at `ref` (default: the default branch) found by path, then by content, at most `limit` of each
 * (without a limit when filters narrow the files, as FileFinder drops its cutoff then). An unknown ref finds
 * nothing.
 */
export async function searchBlobs(ctx: RepoContext, ref: string | undefined, query: string, limit: number): Promise<FoundBlob[]> {
  const refName = ref || ctx.project.default_branch || 'main';
  if (!ctx.repo.exists()) return [];
  const commit = await ctx.repo.resolveCommit(refName);
  if (!commit) return [];
  const { term, filters } = parseCodeQuery(query);
  if (term !== '*' && !searchable(term)) return [];
  const needle = term.toLowerCase();
  const wildcard = term === '*' ? null : new RegExp(escapeRegExp(needle).replace(/\\\*/g, '.*?'), 'i');
  const cutoff = filters.length ? Number.POSITIVE_INFINITY : limit;

  const byPath = await limited(
    treeFiles(ctx.repo.gitDir, commit, (p) => (wildcard === null || wildcard.test(p)) && passes(filters, p), {
      max: cutoff,
      timeoutMs: SEARCH_TIME_LIMIT_MS,
      maxBytes: TREE_MAX_BYTES,
    }),
  );
  const pathBlobs: FoundBlob[] = [];
  for (const f of byPath) {
    const o = await ctx.repo.read(f.id);
    pathBlobs.push({
      basename: withoutExtension(f.path),
      data: o?.content ? utf8Head(o.content, PATH_MATCH_BYTES) : '',
      path: f.path,
      id: f.id,
      ref: refName,
      startline: 1,
    });
  }
  if (term === '*') return pathBlobs;

  const chunks = await limited(
    grepChunks(ctx.repo.gitDir, commit, term, {
      maxChunks: cutoff,
      timeoutMs: SEARCH_TIME_LIMIT_MS,
      maxBytes: GREP_MAX_BYTES,
    }),
  );
  const contentBlobs = chunks
    .filter((c) => passes(filters, c.path))
    .map((c) => ({
      basename: withoutExtension(c.path),
      data: c.lines.map((l) => `${l}\n`).join(''),
      path: c.path,
      id: null,
      ref: refName,
      startline: c.startline,
    }));
  return [...pathBlobs, ...contentBlobs];
}

/**
 * The commits reachable from `ref` (default: the default branch) whose message holds `term`, newest first,
 * at most `limit`; then the commit the term names when it is a SHA (Commit.valid_hash?) not already listed.
 */
export async function searchCommits(ctx: RepoContext, ref: string | undefined, term: string, limit: number): Promise<Commit[]> {
  if (!ctx.repo.exists() || !searchable(term)) return [];
  const commit = await ctx.repo.resolveCommit(ref || ctx.project.default_branch || 'main');
  const shas: string[] = [];
  if (commit) {
    const { stdout } = await limited(
      ctx.repo.run(['log', '--format=%H', '--regexp-ignore-case', '--fixed-strings', `--grep=${term}`, `--max-count=${limit}`, commit, '--'], {
        timeoutMs: SEARCH_TIME_LIMIT_MS,
        maxBytes: 1024 * 1024,
      }),
    ).catch((e) => {
      // the git wrapper reports its own time limit as a kill
      if (e instanceof Error && /killed by SIGKILL/.test(e.message)) throw Errors.refused({ error: 'Request timed out' }, 408);
      throw e;
    });
    shas.push(...stdout.toString('utf8').split('\n').filter(Boolean));
  }
  const key = term.trim();
  if (/^[0-9a-f]{7,40}$/i.test(key)) {
    const named = await ctx.repo.resolveCommit(key.toLowerCase());
    if (named && !shas.includes(named)) shas.push(named);
  }
  const out: Commit[] = [];
  for (const sha of shas) {
    const c = await ctx.repo.commit(sha);
    if (c) out.push(c);
  }
  return out;
}
