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

  /** Creates the bare repository (and, when asked, a first commit with a README). */
  async create(p: RepositoryRef, opts: { defaultBranch: string; readme?: { title: string; author: Person } }): Promise<Repository> {
    const dir = this.pathOf(p);
    if (fs.existsSync(dir)) fs.rmSync(dir, { recursive: true, force: true }); // left over by a crash before its row
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    await git(['init', '--bare', '--quiet', dir]);
    const repo = this.repository(p);
    await repo.setHead(opts.defaultBranch);
    // receive-pack settings every push needs; the hooks path is given per push.
    await repo.run(['config', 'receive.advertisePushOptions', 'true']);
    await repo.run(['config', 'uploadpack.allowFilter', 'true']);
    await repo.run(['config', 'uploadpack.allowAnySHA1InWant', 'true']);
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

  /** Drops what is kept in memory for a repository that moves or goes away. */
  private forget(p: RepositoryRef, dir: string): void {
    this.pool.drop(dir);
    this.open.delete(`${p.repository_storage}\0${p.id}`);
    forgetObjects(dir);
  }

  /** Moves a repository to another storage (an administrator changed repository_storage). */
  move(p: RepositoryRef, toStorage: string): void {
    const from = this.pathOf(p);
    const to = this.pathOf({ id: p.id, repository_storage: toStorage });
    if (!fs.existsSync(from) || from === to) return;
    this.forget(p, from);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.cpSync(from, to, { recursive: true });
    fs.rmSync(from, { recursive: true, force: true });
  }

  /** Removes the repository from disk (after its project's row is gone). */
  remove(p: RepositoryRef): void {
    const dir = this.pathOf(p);
    this.forget(p, dir);
    fs.rmSync(dir, { recursive: true, force: true });
  }

  close(): void {
    this.pool.close();
  }
}
