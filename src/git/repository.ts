// One bare repository: reads through the cat-file pool, everything else through the command wrapper.
import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import path from 'node:path';
import type { CatFilePool, GitObject } from './cat-file.ts';
import type { RefUpdate } from './hooks.ts';
import { git, spawnGit, type GitResult, type GitRunOptions, type SpawnOptions } from './command.ts';
import { parseCommit, parseTag, parseTree, type AnnotatedTag, type Commit, type TreeEntry } from './objects.ts';
import { BRANCH_PREFIX, isValidRevision, TAG_PREFIX, ZERO_SHA } from './refs.ts';

/** One ref's move: full name, value before and after (ZERO_SHA: none), as git's hooks report them. */
export type RefMove = RefUpdate;

/**
 * What a write wants told around each ref move it makes (the push journal of an API write: see
 * RepositoryService.journaled): `moving` before git moves the ref (a throw stops the move), `moved`
 * once it did. Set for the write's async scope, so no code path that moves a ref can forget it.
 */
export interface RefMoveGuard {
  moving(m: RefMove): Promise<void>;
  moved(m: RefMove): void;
}
const refMoveGuard = new AsyncLocalStorage<RefMoveGuard>();

/** Runs `fn` with `guard` told of every updateRef/deleteRef it makes. */
export function withRefMoveGuard<T>(guard: RefMoveGuard, fn: () => Promise<T>): Promise<T> {
  return refMoveGuard.run(guard, fn);
}

export interface Ref {
  /** full name, "refs/heads/main" */
  name: string;
  /** short name, "main" */
  short: string;
  kind: 'branch' | 'tag';
  /** what the ref points at (an annotated tag object for annotated tags) */
  sha: string;
  /** the commit it ends at */
  commit: string;
  /** annotated tags: the tag object */
  tag: AnnotatedTag | null;
}

/** Commits never change: one cache for every repository. */
const commitCache = new Map<string, Commit>();
const COMMIT_CACHE_MAX = 50_000;

/**
 * Objects named by a full SHA (`<sha>`, `<sha>:<path>`, `<sha>^{tree}`) never change either: one
 * cache for every repository, bounded in bytes, small objects only. Misses are not kept (a push
 * may bring the object later).
 */
const IMMUTABLE_REV = /^[0-9a-f]{40}(?:[0-9a-f]{24})?(?:$|:|\^\{(?:tree|commit)\}$)/;
const OBJECT_CACHE_BYTES = 64 << 20;
const OBJECT_CACHE_MAX_OBJECT = 1 << 20;
const objectCache = new Map<string, GitObject>();
let objectCacheBytes = 0;

function cacheObject(key: string, o: GitObject): void {
  const size = o.content?.length ?? 0;
  if (size > OBJECT_CACHE_MAX_OBJECT) return;
  while (objectCacheBytes + size > OBJECT_CACHE_BYTES && objectCache.size) {
    const [oldest, old] = objectCache.entries().next().value!;
    objectCache.delete(oldest);
    objectCacheBytes -= old.content?.length ?? 0;
  }
  objectCache.set(key, o);
  objectCacheBytes += size;
}

/** Drops the cached objects of a repository that moves or goes away. */
export function forgetObjects(gitDir: string): void {
  const prefix = `${gitDir}\0`;
  for (const [key, o] of objectCache) {
    if (!key.startsWith(prefix)) continue;
    objectCache.delete(key);
    objectCacheBytes -= o.content?.length ?? 0;
  }
}

async function cachedRead(key: string, rev: string, load: () => Promise<GitObject | null>): Promise<GitObject | null> {
  if (!IMMUTABLE_REV.test(rev)) return load();
  const hit = objectCache.get(key);
  if (hit) return hit;
  const o = await load();
  if (o && !objectCache.has(key)) cacheObject(key, o);
  return o;
}

const REFS_STAMP = 'hearth-refs-stamp';

export class Repository {
  private refsCache: { stamp: string; refs: Ref[]; byShort: Map<string, Ref> } | null = null;
  private refsLoading: { stamp: string; loading: Promise<{ refs: Ref[]; byShort: Map<string, Ref> }> } | null = null;
  private stampSeen = '';
  private seen = false;
  private stampCheckedAt = -Infinity;
  private memo: { stamp: string; values: Map<string, Promise<unknown>> } = { stamp: '', values: new Map() };
  private emptyCache: { stamp: string; empty: boolean } | null = null;

  constructor(
    readonly gitDir: string,
    private readonly pool: CatFilePool,
  ) {}

  /** Once seen, a repository stays (removal drops this handle: RepositoryStore.remove). */
  exists(): boolean {
    return (this.seen ||= fs.existsSync(path.join(this.gitDir, 'HEAD')));
  }

  run(args: string[], opts: Omit<GitRunOptions, 'gitDir'> = {}): Promise<GitResult> {
    return git(args, { ...opts, gitDir: this.gitDir });
  }

  spawn(args: string[], opts: Omit<SpawnOptions, 'gitDir'> = {}) {
    return spawnGit(args, { ...opts, gitDir: this.gitDir });
  }

  /** Object with content; null when missing. `rev` must come from code or be checked by isValidRevision. */
  read(rev: string): Promise<GitObject | null> {
    return cachedRead(`${this.gitDir}\0${rev}`, rev, () => this.pool.read(this.gitDir, rev));
  }

  info(rev: string): Promise<GitObject | null> {
    return cachedRead(`${this.gitDir}\0?${rev}`, rev, () => this.pool.info(this.gitDir, rev));
  }

  /**
   * The commit a user-given revision (branch, tag, SHA) names, or null. A plain branch or tag name
   * is looked up in the cached refs, with git's precedence (a tag before a branch of the same name;
   * names git would first try elsewhere, such as `heads/x`, or that look like a SHA go to git).
   */
  async resolveCommit(rev: string): Promise<string | null> {
    if (!isValidRevision(rev)) return null;
    if (!/^(?:[0-9a-f]{4,64}|HEAD|[A-Z_]*HEAD|(?:heads|tags|remotes|refs)\/.*)$/.test(rev)) {
      const ref = (await this.refsState()).byShort.get(rev);
      if (ref) return ref.commit;
    }
    const o = await this.info(`${rev}^{commit}`);
    return o?.sha ?? null;
  }

  async commit(sha: string): Promise<Commit | null> {
    const hit = commitCache.get(sha);
    if (hit) return hit;
    const o = await this.read(sha);
    if (!o || o.type !== 'commit') return null;
    const c = parseCommit(o.sha, o.content!);
    if (commitCache.size >= COMMIT_CACHE_MAX) commitCache.delete(commitCache.keys().next().value!);
    commitCache.set(o.sha, c);
    if (o.sha !== sha) commitCache.set(sha, c);
    return c;
  }

  /** Entries of the tree at `rev:path`, in git's order; null when it is not a tree. */
  async tree(commitSha: string, treePath: string): Promise<TreeEntry[] | null> {
    const o = await this.read(treePath ? `${commitSha}:${treePath}` : `${commitSha}^{tree}`);
    if (!o || o.type !== 'tree') return null;
    return parseTree(o.content!);
  }

  /** The object at `path` in a commit: its header (no content), or null. */
  entryAt(commitSha: string, filePath: string): Promise<GitObject | null> {
    return this.info(`${commitSha}:${filePath}`);
  }

  // ---- refs ----------------------------------------------------------------------------------

  private stampFile = '';
  private stampPath(): string {
    return (this.stampFile ||= path.join(this.gitDir, REFS_STAMP));
  }

  /** Marks the refs as changed (after a push or any ref update), for every process sharing the disk. */
  touchRefs(): void {
    fs.writeFileSync(this.stampPath(), String(process.hrtime.bigint()));
    this.stampCheckedAt = -Infinity;
  }

  /** A token that changes whenever the refs change (for caches of responses made from refs). */
  refsVersion(): string {
    return this.refsStamp();
  }

  /** the stamp file's identity, looked at most once a millisecond (touchRefs() resets it at once) */
  private refsStamp(): string {
    const now = performance.now();
    if (now - this.stampCheckedAt < 1) return this.stampSeen;
    this.stampSeen = this.readRefsStamp();
    this.stampCheckedAt = now;
    return this.stampSeen;
  }

  private readRefsStamp(): string {
    const st = fs.statSync(this.stampPath(), { bigint: true, throwIfNoEntry: false });
    return st ? `${st.mtimeNs}:${st.size}:${st.ino}` : 'none';
  }

  /** Branches and tags, sorted by name; cached until touchRefs(). */
  async refs(): Promise<Ref[]> {
    return (await this.refsState()).refs;
  }

  /** The refs for the current stamp; concurrent readers after a change share one `for-each-ref`. */
  private refsState(): Promise<{ refs: Ref[]; byShort: Map<string, Ref> }> | { refs: Ref[]; byShort: Map<string, Ref> } {
    const stamp = this.refsStamp();
    if (this.refsCache && this.refsCache.stamp === stamp) return this.refsCache;
    if (this.refsLoading?.stamp === stamp) return this.refsLoading.loading;
    const loading = this.loadRefs(stamp).finally(() => {
      if (this.refsLoading?.loading === loading) this.refsLoading = null;
    });
    this.refsLoading = { stamp, loading };
    return loading;
  }

  private async loadRefs(stamp: string): Promise<{ stamp: string; refs: Ref[]; byShort: Map<string, Ref> }> {
    const { stdout } = await this.run(['for-each-ref', '--format=%(objectname) %(objecttype) %(*objectname) %(refname)', 'refs/heads/', 'refs/tags/']);
    const refs: Ref[] = [];
    for (const line of stdout.toString('utf8').split('\n')) {
      if (!line) continue;
      const [sha, type, peeled, ...rest] = line.split(' ');
      const name = rest.join(' ');
      const kind = name.startsWith(BRANCH_PREFIX) ? 'branch' : 'tag';
      const short = name.slice(kind === 'branch' ? BRANCH_PREFIX.length : TAG_PREFIX.length);
      let tag: AnnotatedTag | null = null;
      let commit = sha;
      if (type === 'tag') {
        const o = await this.read(sha);
        if (o) tag = parseTag(sha, o.content!);
        commit = peeled || sha;
        // nested tags: peel to the commit
        if (tag && tag.type !== 'commit') commit = (await this.info(`${sha}^{commit}`))?.sha ?? peeled;
      }
      refs.push({ name, short, kind, sha, commit, tag });
    }
    // git's order for a short name: refs/tags/<name> before refs/heads/<name>
    const byShort = new Map<string, Ref>();
    for (const r of refs) if (r.kind === 'tag' || !byShort.has(r.short)) byShort.set(r.short, r);
    this.refsCache = { stamp, refs, byShort };
    return this.refsCache;
  }

  /**
   * `compute()` once per state of the refs, for results that depend only on refs and objects (such
   * as which branches the default branch contains); concurrent callers share one computation.
   */
  whileRefs<T>(key: string, compute: () => Promise<T>): Promise<T> {
    const stamp = this.refsStamp();
    if (this.memo.stamp !== stamp) this.memo = { stamp, values: new Map() };
    const values = this.memo.values;
    let p = values.get(key) as Promise<T> | undefined;
    if (!p) {
      p = compute();
      values.set(key, p);
      p.catch(() => values.delete(key));
    }
    return p;
  }

  async branches(): Promise<Ref[]> {
    return (await this.refs()).filter((r) => r.kind === 'branch');
  }

  async tags(): Promise<Ref[]> {
    return (await this.refs()).filter((r) => r.kind === 'tag');
  }

  async branch(name: string): Promise<Ref | undefined> {
    const r = (await this.refsState()).byShort.get(name);
    return r?.kind === 'branch' ? r : (await this.refs()).find((x) => x.kind === 'branch' && x.short === name);
  }

  async tag(name: string): Promise<Ref | undefined> {
    const r = (await this.refsState()).byShort.get(name);
    return r?.kind === 'tag' ? r : undefined;
  }

  /**
   * No branch and no tag, read from disk without git (for project lists); true without a repository.
   * Kept per state of the refs (the stamp every ref change touches, on any node), so a page of projects
   * costs one stat per project rather than two directory reads and a file.
   */
  isEmptySync(): boolean {
    const stamp = this.refsStamp();
    if (this.emptyCache?.stamp === stamp) return this.emptyCache.empty;
    const empty = this.scanEmpty();
    this.emptyCache = { stamp, empty };
    return empty;
  }

  private scanEmpty(): boolean {
    const hasLoose = (dir: string): boolean => {
      let names: string[];
      try {
        names = fs.readdirSync(dir);
      } catch {
        return false;
      }
      return names.some((n) => {
        const full = path.join(dir, n);
        return fs.statSync(full).isDirectory() ? hasLoose(full) : true;
      });
    };
    if (hasLoose(path.join(this.gitDir, 'refs', 'heads')) || hasLoose(path.join(this.gitDir, 'refs', 'tags'))) return false;
    try {
      return !/ refs\/(heads|tags)\//.test(fs.readFileSync(path.join(this.gitDir, 'packed-refs'), 'latin1'));
    } catch {
      return true;
    }
  }

  async isEmpty(): Promise<boolean> {
    return (await this.refs()).length === 0;
  }

  /** Compare-and-swap of one ref (`old` = ZERO_SHA to create, `sha` = ZERO_SHA... use deleteRef). */
  async updateRef(ref: string, sha: string, old?: string): Promise<void> {
    const guard = refMoveGuard.getStore();
    const move = guard && { ref, before: old ?? (await this.refValue(ref)), after: sha };
    if (move) await guard.moving(move);
    await this.run(old === undefined ? ['update-ref', ref, sha] : ['update-ref', ref, sha, old]);
    this.touchRefs();
    if (move) guard.moved(move);
  }

  async deleteRef(ref: string, old?: string): Promise<void> {
    const guard = refMoveGuard.getStore();
    const move = guard && { ref, before: old ?? (await this.refValue(ref)), after: ZERO_SHA };
    if (move) await guard.moving(move);
    await this.run(old === undefined ? ['update-ref', '-d', ref] : ['update-ref', '-d', ref, old]);
    this.touchRefs();
    if (move) guard.moved(move);
  }

  /** A ref's value now (exact name), or ZERO_SHA. */
  private async refValue(ref: string): Promise<string> {
    const r = await this.run(['rev-parse', '--verify', '--quiet', ref], { okCodes: [0, 1] });
    return r.stdout.toString().trim() || ZERO_SHA;
  }

  async setHead(branch: string): Promise<void> {
    await this.run(['symbolic-ref', 'HEAD', BRANCH_PREFIX + branch]);
  }

  /** `git merge-base --is-ancestor a b` */
  async isAncestor(a: string, b: string): Promise<boolean> {
    const r = await this.run(['merge-base', '--is-ancestor', a, b], { okCodes: [0, 1] });
    return r.code === 0;
  }
}
