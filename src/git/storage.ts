// Where repositories live: one bare repository per project, addressed by id (GitLab's @hashed layout,
// so renames and transfers never move it), on the storages of repository_storages_weighted.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { CatFilePool } from './cat-file.ts';
import { git } from './command.ts';
import { commitFiles, type Person } from './commit-builder.ts';
import { forgetObjects, Repository } from './repository.ts';
import { installHooks } from './hooks.ts';

export interface RepositoryRef {
  id: number;
  repository_storage: string;
}

export const STORAGE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

export class RepositoryStore {
  readonly pool = new CatFilePool();
  /** the hooks receive-pack runs for pushes over smart HTTP */
  readonly hooksDir: string;
  private readonly open = new Map<string, Repository>();

  constructor(
    private readonly dataDir: string,
    /** storage name → directory, from REPOSITORY_STORAGES; others live under <DATA_DIR>/repositories/<name> */
    private readonly storagePaths: Record<string, string>,
  ) {
    this.hooksDir = installHooks(path.join(dataDir, 'git-hooks'));
  }

  /** Storages of this instance: `default` and those of REPOSITORY_STORAGES. */
  storageNames(): string[] {
    return [...new Set(['default', ...Object.keys(this.storagePaths)])];
  }

  storageDir(name: string): string {
    const configured = this.storagePaths[name];
    if (configured) return configured;
    if (!STORAGE_NAME.test(name)) throw new Error(`invalid storage name ${name}`);
    return path.join(this.dataDir, 'repositories', name);
  }

  /** "@hashed/6b/86/6b86….git" */
  static diskPath(projectId: number): string {
    const h = crypto.createHash('sha256').update(String(projectId)).digest('hex');
    return `@hashed/${h.slice(0, 2)}/${h.slice(2, 4)}/${h}.git`;
  }

  pathOf(p: RepositoryRef): string {
    return path.join(this.storageDir(p.repository_storage), RepositoryStore.diskPath(p.id));
  }

  /** The repository handle of a project (cached: it carries the refs cache). */
  repository(p: RepositoryRef): Repository {
    const key = `${p.repository_storage}\0${p.id}`;
    let r = this.open.get(key);
    if (!r) {
      if (this.open.size > 10_000) this.open.clear();
      r = new Repository(this.pathOf(p), this.pool);
      this.open.set(key, r);
    }
    return r;
  }

  /** A storage for a new repository, chosen by weight (weights of 0 are never chosen). */
  pickStorage(weights: Record<string, number>): string {
    const entries = Object.entries(weights).filter(([, w]) => Number(w) > 0);
    if (!entries.length) return 'default';
    const total = entries.reduce((s, [, w]) => s + Number(w), 0);
    let r = Math.random() * total;
    for (const [name, w] of entries) {
      r -= Number(w);
      if (r < 0) return name;
    }
    return entries[entries.length - 1][0];
  }

  /** An empty bare repository with the settings every push needs. */
  private async init(p: RepositoryRef, defaultBranch: string): Promise<Repository> {
    const dir = this.pathOf(p);
    if (fs.existsSync(dir)) fs.rmSync(dir, { recursive: true, force: true }); // left over by a crash before its row
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    await git(['init', '--bare', '--quiet', dir]);
    const repo = this.repository(p);
    await repo.setHead(defaultBranch);
    // receive-pack settings every push needs; the hooks path is given per push.
    await repo.run(['config', 'receive.advertisePushOptions', 'true']);
    await repo.run(['config', 'uploadpack.allowFilter', 'true']);
    await repo.run(['config', 'uploadpack.allowAnySHA1InWant', 'true']);
    return repo;
  }

  /** Creates the bare repository (and, when asked, a first commit with a README). */
  async create(p: RepositoryRef, opts: { defaultBranch: string; readme?: { title: string; author: Person } }): Promise<Repository> {
    const repo = await this.init(p, opts.defaultBranch);
    repo.touchRefs();
    if (opts.readme) {
      await commitFiles(repo, {
        branch: opts.defaultBranch,
        parent: null,
        actions: [{ action: 'create', file_path: 'README.md', content: Buffer.from(`# ${opts.readme.title}\n`) }],
        message: 'Initial commit',
        author: opts.readme.author,
      });
    }
    return repo;
  }

  // ---- forks: borrowed objects (git alternates) -----------------------------------------------
  //
  // A fork's repository lists its source's object directory in objects/info/alternates, so forking
  // copies refs, not objects. The source keeps the list of repositories that borrow from it
  // (BORROWERS, one git directory a line), so that before it moves or goes away each borrower gets
  // its own copy of what it needs (`git repack -a -d` packs borrowed objects too, then the
  // alternates file goes) — GitLab's "disconnect alternates".

  /**
   * A fork's repository: its objects borrowed from `source`, its refs those of `source` (branches and
   * tags; only the branches named when `branches` is given). HEAD names `defaultBranch`.
   */
  async createFork(p: RepositoryRef, source: RepositoryRef, opts: { defaultBranch: string; branches?: string[] }): Promise<Repository> {
    const from = this.repository(source);
    const repo = await this.init(p, opts.defaultBranch);
    if (!fs.existsSync(path.join(from.gitDir, 'HEAD'))) {
      // a source without a repository on disk: an empty fork
      repo.touchRefs();
      return repo;
    }
    fs.mkdirSync(path.join(repo.gitDir, 'objects', 'info'), { recursive: true });
    fs.writeFileSync(alternatesFile(repo.gitDir), `${path.join(from.gitDir, 'objects')}\n`);
    fs.appendFileSync(path.join(from.gitDir, BORROWERS), `${repo.gitDir}\n`);
    const wanted = opts.branches ? new Set(opts.branches) : null;
    const refs = (await from.refs()).filter((r) => (wanted ? r.kind === 'branch' && wanted.has(r.short) : true));
    if (refs.length) {
      // one transaction for every ref; the objects are already there through the alternates
      await repo.run(['update-ref', '--stdin', '-z'], { input: Buffer.from(refs.map((r) => `create ${r.name}\0${r.sha}\0`).join('')) });
    }
    repo.touchRefs();
    return repo;
  }

  /** The git directory a repository borrows objects from (its alternates), or null. */
  borrowsFrom(p: RepositoryRef): string | null {
    return readAlternate(this.pathOf(p));
  }

  /**
   * The repository stops borrowing: it packs every object it needs, borrowed ones included, and
   * drops its alternates (a fork unlinked from its source; the source about to go away).
   */
  async disconnect(p: RepositoryRef): Promise<void> {
    await this.disconnectDir(this.pathOf(p));
  }

  private async disconnectDir(dir: string): Promise<void> {
    const file = alternatesFile(dir);
    if (!fs.existsSync(file)) return;
    const source = readAlternate(dir);
    await git(['repack', '-a', '-d', '-q'], { gitDir: dir, timeoutMs: 30 * 60_000 });
    fs.rmSync(file, { force: true });
    this.pool.drop(dir);
    if (source) removeLine(path.join(source, BORROWERS), dir);
  }

  /**
   * Before `dir` moves or goes away: every repository that borrows from it, directly or through
   * another fork, gets its own objects — the deepest first, so that a fork's repack never drops
   * what a fork of it still reads through it.
   */
  private async detachBorrowers(dir: string): Promise<void> {
    const order: string[] = [];
    const visit = (d: string, depth: number) => {
      if (depth > 32) return;
      for (const b of readLines(path.join(d, BORROWERS))) {
        if (!fs.existsSync(path.join(b, 'HEAD')) || readAlternate(b) !== d || order.includes(b)) continue;
        visit(b, depth + 1);
        order.push(b);
      }
    };
    visit(dir, 0);
    for (const b of order) {
      try {
        // only the direct borrowers stop borrowing; deeper ones keep reading through their own source
        if (readAlternate(b) === dir) await this.disconnectDir(b);
        else await git(['repack', '-a', '-d', '-q'], { gitDir: b, timeoutMs: 30 * 60_000 });
      } catch (e) {
        // a borrower removed meanwhile (a group deleted with a project and its fork) needs nothing
        if (fs.existsSync(path.join(b, 'HEAD'))) throw e;
      }
    }
  }

  /** Background work on repositories (borrowers detached before a removal) still running. */
  private readonly pending = new Set<Promise<void>>();

  /** Resolves when no background work on repositories is running (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }

  /** Drops what is kept in memory for a repository that moves or goes away. */
  private forget(p: RepositoryRef, dir: string): void {
    this.pool.drop(dir);
    this.open.delete(`${p.repository_storage}\0${p.id}`);
    forgetObjects(dir);
  }

  /**
   * Moves a repository to another storage (an administrator changed repository_storage). Whoever
   * borrows from it, and the list of its own source, follow the new place.
   */
  move(p: RepositoryRef, toStorage: string): void {
    const from = this.pathOf(p);
    const to = this.pathOf({ id: p.id, repository_storage: toStorage });
    if (!fs.existsSync(from) || from === to) return;
    this.forget(p, from);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.cpSync(from, to, { recursive: true });
    for (const b of readLines(path.join(to, BORROWERS))) {
      if (readAlternate(b) === from) fs.writeFileSync(alternatesFile(b), `${path.join(to, 'objects')}\n`);
    }
    const source = readAlternate(to);
    if (source) {
      removeLine(path.join(source, BORROWERS), from);
      fs.appendFileSync(path.join(source, BORROWERS), `${to}\n`);
    }
    fs.rmSync(from, { recursive: true, force: true });
  }

  /**
   * Removes the repository from disk (after its project's row is gone). When forks borrow its
   * objects, they get their own copies first (in the background; the directory goes after them).
   */
  remove(p: RepositoryRef): void {
    const dir = this.pathOf(p);
    this.forget(p, dir);
    const source = readAlternate(dir);
    if (source) removeLine(path.join(source, BORROWERS), dir);
    if (!readLines(path.join(dir, BORROWERS)).some((b) => readAlternate(b) === dir)) {
      if (this.pending.size === 0) {
        fs.rmSync(dir, { recursive: true, force: true });
        return;
      }
      // background work may be repacking this very directory (it borrowed from a repository removed just
      // before it: a group deleted with a project and its fork); removed while git writes there, it would
      // come back in part, so it goes after that work
      const running = [...this.pending];
      const after = Promise.allSettled(running)
        .then(() => fs.rmSync(dir, { recursive: true, force: true }))
        .catch(() => {
          // the directory stays (disk, not a broken repository)
        })
        .finally(() => this.pending.delete(after));
      this.pending.add(after);
      return;
    }
    const work = this.detachBorrowers(dir)
      .then(() => fs.rmSync(dir, { recursive: true, force: true }))
      .catch(() => {
        // a borrower could not be repacked: the directory stays (disk, not a broken fork)
      })
      .finally(() => this.pending.delete(work));
    this.pending.add(work);
  }

  close(): void {
    this.pool.close();
  }
}

/** The repositories (git directories) that borrow objects from a repository. */
const BORROWERS = 'hearth-borrowers';

const alternatesFile = (gitDir: string) => path.join(gitDir, 'objects', 'info', 'alternates');

/** The git directory whose objects `gitDir` borrows, or null. */
function readAlternate(gitDir: string): string | null {
  try {
    const line = fs.readFileSync(alternatesFile(gitDir), 'utf8').split('\n')[0].trim();
    return line ? path.dirname(line) : null;
  } catch {
    return null;
  }
}

function readLines(file: string): string[] {
  try {
    return [...new Set(fs.readFileSync(file, 'utf8').split('\n').filter(Boolean))];
  } catch {
    return [];
  }
}

function removeLine(file: string, line: string): void {
  const lines = readLines(file);
  if (!lines.includes(line)) return;
  const rest = lines.filter((l) => l !== line);
  if (rest.length) fs.writeFileSync(file, rest.map((l) => `${l}\n`).join(''));
  else fs.rmSync(file, { force: true });
}
