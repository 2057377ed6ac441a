// One bare repository: reads through the cat-file pool, everything else through the command wrapper.
import fs from 'node:fs';
import path from 'node:path';
import type { CatFilePool, GitObject } from './cat-file.ts';
import { git, spawnGit, type GitResult, type GitRunOptions } from './command.ts';
import { parseCommit, parseTag, parseTree, type AnnotatedTag, type Commit, type TreeEntry } from './objects.ts';
import { BRANCH_PREFIX, isValidRevision, TAG_PREFIX } from './refs.ts';

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

const REFS_STAMP = 'hearth-refs-stamp';

export class Repository {
  private refsCache: { stamp: string; refs: Ref[] } | null = null;

  constructor(
    readonly gitDir: string,
    private readonly pool: CatFilePool,
  ) {}

  exists(): boolean {
    return fs.existsSync(path.join(this.gitDir, 'HEAD'));
  }

  run(args: string[], opts: Omit<GitRunOptions, 'gitDir'> = {}): Promise<GitResult> {
    return git(args, { ...opts, gitDir: this.gitDir });
  }

  spawn(args: string[], opts: Omit<GitRunOptions, 'gitDir' | 'input' | 'maxBytes' | 'okCodes'> = {}) {
    return spawnGit(args, { ...opts, gitDir: this.gitDir });
  }

  /** Object with content; null when missing. `rev` must come from code or be checked by isValidRevision. */
  read(rev: string): Promise<GitObject | null> {
    return this.pool.read(this.gitDir, rev);
  }

  info(rev: string): Promise<GitObject | null> {
    return this.pool.info(this.gitDir, rev);
  }

  /** The commit a user-given revision (branch, tag, SHA) names, or null. */
  async resolveCommit(rev: string): Promise<string | null> {
    if (!isValidRevision(rev)) return null;
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

  private stampPath(): string {
    return path.join(this.gitDir, REFS_STAMP);
  }

  /** Marks the refs as changed (after a push or any ref update), for every process sharing the disk. */
  touchRefs(): void {
    fs.writeFileSync(this.stampPath(), String(process.hrtime.bigint()));
  }

  private refsStamp(): string {
    try {
      const st = fs.statSync(this.stampPath(), { bigint: true });
      return `${st.mtimeNs}:${st.size}:${st.ino}`;
    } catch {
      return 'none';
    }
  }

  /** Branches and tags, sorted by name; cached until touchRefs(). */
  async refs(): Promise<Ref[]> {
    const stamp = this.refsStamp();
    if (this.refsCache && this.refsCache.stamp === stamp) return this.refsCache.refs;
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
    this.refsCache = { stamp, refs };
    return refs;
  }

  async branches(): Promise<Ref[]> {
    return (await this.refs()).filter((r) => r.kind === 'branch');
  }

  async tags(): Promise<Ref[]> {
    return (await this.refs()).filter((r) => r.kind === 'tag');
  }

  async branch(name: string): Promise<Ref | undefined> {
    return (await this.refs()).find((r) => r.kind === 'branch' && r.short === name);
  }

  async tag(name: string): Promise<Ref | undefined> {
    return (await this.refs()).find((r) => r.kind === 'tag' && r.short === name);
  }

  /** No branch and no tag, read from disk without git (for project lists); true without a repository. */
  isEmptySync(): boolean {
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
    await this.run(old === undefined ? ['update-ref', ref, sha] : ['update-ref', ref, sha, old]);
    this.touchRefs();
  }

  async deleteRef(ref: string, old?: string): Promise<void> {
    await this.run(old === undefined ? ['update-ref', '-d', ref] : ['update-ref', '-d', ref, old]);
    this.touchRefs();
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
