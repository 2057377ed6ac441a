// Trees of a repository as the API lists them (GitLab's Tree#sorted_entries, Gitaly's keyset pages):
// the commit a ref names through the cached refs, the object at a path, and sorted listings, cached by
// tree id (an object id never changes meaning).
import { parseTree, type TreeEntry } from '../../git/objects.ts';
import type { Repository } from '../../git/repository.ts';
import { isSafePath } from '../../git/command.ts';
import { isValidRevision } from '../../git/refs.ts';
import { BoundedMap } from '../../lib/bounded-map.ts';
import { Errors } from '../../lib/errors.ts';
import { resolveRef, type RepoContext } from './context.ts';

/**
 * A path inside the repository from a user (`path` of tree and archive, `exclude_paths`), without its
 * trailing slashes; '' for the root; null when it cannot name anything. Besides isSafePath's rules it
 * refuses CR and LF (the cat-file protocol is line based). A leading `-` is allowed: these paths only
 * ever reach git after `<commit>:` or after `--` as literal pathspecs, never as an option.
 */
export function repoPath(raw: string | undefined): string | null {
  if (raw === undefined) return '';
  const p = raw.replace(/\/+$/, '');
  if (p === '' || p === '.') return '';
  if (/[\r\n]/.test(p)) return null;
  return isSafePath(p.startsWith('-') ? `x${p}` : p) ? p : null;
}

/** The commit a ref names, through the cached ref list when the name is a branch or tag. */
export async function commitOf(ctx: RepoContext, ref: string | undefined): Promise<string | null> {
  const name = ref || ctx.project.default_branch || 'main';
  // git's own precedence: a full SHA, then refs/tags/<name>, then refs/heads/<name>
  if (!/^[0-9a-f]{40}$|^[0-9a-f]{64}$/i.test(name) && isValidRevision(name)) {
    const index = refIndex(await ctx.repo.refs());
    const hit = index.get(name);
    if (hit !== undefined) return hit || resolveRef(ctx, name);
  }
  return resolveRef(ctx, name);
}

const refIndexes = new WeakMap<object, Map<string, string>>();

/** short name → commit, tags first (git resolves `v1` to refs/tags/v1 before refs/heads/v1). */
function refIndex(refs: Awaited<ReturnType<Repository['refs']>>): Map<string, string> {
  let index = refIndexes.get(refs);
  if (!index) {
    index = new Map();
    // '': ask git (a lightweight tag may name a tree or a blob; it still hides a branch of that name)
    for (const r of refs) if (r.kind === 'tag') index.set(r.short, r.tag?.type === 'commit' ? r.commit : '');
    for (const r of refs) if (r.kind === 'branch' && !index.has(r.short)) index.set(r.short, r.commit);
    refIndexes.set(refs, index);
  }
  return index;
}

/** A read that fails because the repository is missing on disk means "nothing there". */
export async function orMissing<T>(repo: Repository, read: () => Promise<T>, missing: T): Promise<T> {
  try {
    return await read();
  } catch (e) {
    if (!repo.exists()) return missing;
    throw e;
  }
}

// ---- tree listings -------------------------------------------------------------------------------

export interface TreeObject {
  id: string;
  name: string;
  type: 'tree' | 'blob' | 'commit';
  path: string;
  mode: string;
}

export interface Listing {
  /** GitLab's Tree#sorted_entries: trees, then blobs, then submodules, each in git's order */
  entries: TreeObject[];
  byPath?: Map<string, number>;
  byId?: Map<string, number>;
}

/** Listings by (tree id, base path, recursive): immutable, bounded by the number of entries held. */
class ListingCache {
  private readonly map = new Map<string, Listing>();
  private held = 0;
  constructor(private readonly maxEntries: number) {}

  get(key: string): Listing | undefined {
    const hit = this.map.get(key);
    if (hit) {
      this.map.delete(key);
      this.map.set(key, hit);
    }
    return hit;
  }

  set(key: string, listing: Listing): void {
    if (listing.entries.length > this.maxEntries / 2) return; // one huge tree must not flush everything
    this.map.set(key, listing);
    this.held += listing.entries.length;
    for (const [k, v] of this.map) {
      if (this.held <= this.maxEntries) break;
      this.map.delete(k);
      this.held -= v.entries.length;
    }
  }
}

const listings = new ListingCache(200_000);

/** `<commit>:<path>` → the object there (or null): a commit's content never changes. */
const objectsAt = new BoundedMap<{ sha: string; type: string } | null>(50_000);

const join = (base: string, name: string) => (base ? `${base}/${name}` : name);

function treeObject(e: TreeEntry, path: string): TreeObject {
  return { id: e.sha, name: e.name, type: e.type, path, mode: e.mode };
}

function sorted(entries: TreeObject[]): TreeObject[] {
  const trees: TreeObject[] = [];
  const blobs: TreeObject[] = [];
  const submodules: TreeObject[] = [];
  for (const e of entries) (e.type === 'tree' ? trees : e.type === 'blob' ? blobs : submodules).push(e);
  for (const b of blobs) trees.push(b);
  for (const s of submodules) trees.push(s);
  return trees;
}

/** `git ls-tree -r -t -z <tree>`: every entry below the tree, each tree before its content. */
async function recursiveEntries(repo: Repository, treeSha: string, base: string): Promise<TreeObject[]> {
  const { stdout } = await repo.run(['ls-tree', '-r', '-t', '-z', treeSha], { maxBytes: 512 * 1024 * 1024 });
  const out: TreeObject[] = [];
  let i = 0;
  while (i < stdout.length) {
    const nul = stdout.indexOf(0, i);
    const end = nul < 0 ? stdout.length : nul;
    const tab = stdout.indexOf(9, i);
    const [mode, type, id] = stdout.toString('latin1', i, tab).split(' ');
    const rel = stdout.toString('utf8', tab + 1, end);
    const slash = rel.lastIndexOf('/');
    out.push({ id, name: slash < 0 ? rel : rel.slice(slash + 1), type: type as TreeObject['type'], path: join(base, rel), mode: mode.padStart(6, '0') });
    i = end + 1;
  }
  return out;
}

/** A submodule entry at `path` (its commit is in another repository, so cat-file misses it), or null. */
async function gitlinkAt(repo: Repository, commit: string, path: string): Promise<{ sha: string; type: string } | null> {
  const slash = path.lastIndexOf('/');
  const parent = await repo.tree(commit, slash < 0 ? '' : path.slice(0, slash));
  const entry = parent?.find((e) => e.name === path.slice(slash + 1));
  return entry?.type === 'commit' ? { sha: entry.sha, type: 'commit' } : null;
}

/** The sorted listing of a tree object (cached). */
export async function listing(repo: Repository, treeSha: string, base: string, recursive: boolean): Promise<Listing> {
  const key = `${treeSha}\0${base}\0${recursive ? 1 : 0}`;
  const hit = listings.get(key);
  if (hit) return hit;
  let entries: TreeObject[];
  if (recursive) {
    entries = await recursiveEntries(repo, treeSha, base);
  } else {
    const o = await repo.read(treeSha);
    if (!o || o.type !== 'tree') throw Errors.notFound('Tree');
    entries = parseTree(o.content!).map((e) => treeObject(e, join(base, e.name)));
  }
  const l: Listing = { entries: sorted(entries) };
  listings.set(key, l);
  return l;
}

/**
 * Where a keyset page starts, as Gitaly finds it: a base64 JSON token `{"file_name": <entry path>}`
 * names the last entry of the previous page; anything else is an (old style) object id. -1: no such entry.
 */
export function keysetStart(l: Listing, token: string): { index: number; start: string } {
  let fileName: string | null = null;
  if (/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(token)) {
    try {
      const v = JSON.parse(Buffer.from(token, 'base64').toString('utf8'));
      if (v === null) fileName = '';
      else if (typeof v === 'object' && !Array.isArray(v)) fileName = typeof v.file_name === 'string' ? v.file_name : '';
    } catch {
      /* not JSON: an object id */
    }
  }
  if (fileName === '') return { index: 0, start: '' };
  if (fileName !== null) {
    l.byPath ??= new Map(l.entries.map((e, i) => [e.path, i]));
    const i = l.byPath.get(fileName);
    return { index: i === undefined ? -1 : i + 1, start: fileName };
  }
  if (!l.byId) {
    l.byId = new Map();
    l.entries.forEach((e, i) => {
      if (!l.byId!.has(e.id)) l.byId!.set(e.id, i);
    });
  }
  const i = l.byId.get(token);
  return { index: i === undefined ? -1 : i + 1, start: token };
}

export const pageToken = (e: TreeObject) => Buffer.from(JSON.stringify({ file_name: e.path })).toString('base64');

/**
 * GET tree's object: the tree (or file, or submodule) at `path` in the commit `ref` names, with the
 * path as it is listed ('' for the root). 404 Tree Not Found without a commit, 404 "invalid revision
 * or path" for a path that cannot name anything or names nothing. The root tree comes from the cached
 * commit; `<commit>:<path>` lookups are cached (a commit's content never changes).
 */
export async function treeAt(
  ctx: RepoContext,
  ref: string | undefined,
  rawPath: string | undefined,
): Promise<{ path: string; object: { sha: string; type: string } }> {
  const repo = ctx.repo;
  const commit = await orMissing(repo, () => commitOf(ctx, ref), null);
  if (!commit) throw Errors.notFound('Tree');
  const path = repoPath(rawPath);
  if (path === null) throw Errors.notFound('invalid revision or path');
  let object: { sha: string; type: string } | null | undefined;
  if (path === '') {
    const parsed = await repo.commit(commit);
    object = parsed ? { sha: parsed.tree, type: 'tree' } : null;
  } else {
    const at = `${commit}:${path}`;
    object = objectsAt.get(at);
    if (object === undefined) {
      const o = await repo.info(at);
      object = o ? { sha: o.sha, type: o.type } : await gitlinkAt(repo, commit, path);
      objectsAt.set(at, object);
    }
  }
  if (!object) throw Errors.notFound('invalid revision or path');
  return { path, object };
}

/** The sorted entries of the object treeAt found (a file or a submodule lists nothing, as Gitaly answers). */
export function entriesOf(repo: Repository, object: { sha: string; type: string }, path: string, recursive: boolean): Promise<Listing> {
  return object.type === 'tree' ? listing(repo, object.sha, path, recursive) : Promise.resolve({ entries: [] });
}
