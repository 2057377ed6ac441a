// A component's repository: a bare mirror per component (`DATA_DIR/repositories/@translation/<id>.git`),
// fetched from where `repo` points — a project of this very server (read from its bare repository,
// with the caller's permissions, no network round trip), an http(s) URL (the outbound network rules
// of application settings apply), or, for administrators, a local path.
//
// git over http(s) runs held to what was checked: redirects off (a 302 from an allowed address to a
// blocked one is a failed fetch) and the host pinned to the checked addresses (`http.curloptResolve`),
// so git never resolves the name itself (DNS rebinding); it is handed the URL as the check parsed it.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Actor } from '../../access/actor.ts';
import type { Resolver } from '../../access/resolve.ts';
import { canReadCode } from '../../repository/read-access.ts';
import type { SettingsService } from '../../settings/settings.service.ts';
import { git, GitError, UnsafeArgument, userArg } from '../../../git/command.ts';
import type { CatFilePool } from '../../../git/cat-file.ts';
import { Repository } from '../../../git/repository.ts';
import type { RepositoryStore } from '../../../git/storage.ts';
import { OutboundError, type Outbound, type PinnedUrl } from '../../../lib/outbound.ts';
import { DomainError } from '../../../lib/errors.ts';

/** Where a component's repository comes from. */
export type RepoSource =
  | { kind: 'platform'; projectId: number; dir: string; defaultBranch: string | null }
  | { kind: 'url'; url: string; pinned: PinnedUrl }
  | { kind: 'local'; dir: string };

/** A file of the repository tree (symlinks and submodules are left out). */
export interface TreeFile {
  path: string;
  sha: string;
}

export class RepoError extends Error {}

const FETCH_TIMEOUT_MS = 300_000;
/** where the upstream's branches are kept in a mirror */
export const REMOTE_PREFIX = 'refs/remotes/origin/';

/** only the transports we mean to use: no ext::, no ssh to arbitrary hosts; http held to the checked addresses */
function transportEnv(source: RepoSource): Record<string, string> {
  return source.kind === 'url' ? { GIT_ALLOW_PROTOCOL: 'http:https', ...heldTo(source.pinned) } : { GIT_ALLOW_PROTOCOL: 'file' };
}

export class ComponentVcs {
  constructor(
    private readonly dataDir: string,
    private readonly externalUrl: string,
    private readonly repos: RepositoryStore,
    private readonly resolve: Resolver,
    private readonly settings: SettingsService,
    private readonly outbound: Outbound,
  ) {}

  get pool(): CatFilePool {
    return this.repos.pool;
  }

  mirrorDir(componentId: number): string {
    return path.join(this.dataDir, 'repositories', '@translation', `${componentId}.git`);
  }

  mirror(componentId: number): Repository {
    return new Repository(this.mirrorDir(componentId), this.repos.pool);
  }

  /** A fresh directory to fetch a new component's repository into before the component exists. */
  stagingDir(): string {
    return path.join(this.dataDir, 'repositories', '@translation', `tmp-${crypto.randomUUID()}.git`);
  }

  /** The staged mirror becomes the component's (touched: its age counts from here, see `leftovers`). */
  adopt(stagingDir: string, componentId: number): void {
    const dir = this.mirrorDir(componentId);
    this.discard(dir);
    fs.renameSync(stagingDir, dir);
    const now = new Date();
    fs.utimesSync(dir, now, now);
  }

  /**
   * The mirrors (with their component id) and staging directories (id null) on disk, with when each
   * was last written (the directory or its packs: a fetch in progress writes there).
   */
  leftovers(): { dir: string; componentId: number | null; modifiedMs: number }[] {
    const root = path.join(this.dataDir, 'repositories', '@translation');
    let names: string[];
    try {
      names = fs.readdirSync(root);
    } catch {
      return [];
    }
    const out: { dir: string; componentId: number | null; modifiedMs: number }[] = [];
    for (const name of names) {
      const mirror = /^(\d+)\.git$/.exec(name);
      if (!mirror && !/^tmp-[0-9a-f-]+\.git$/.test(name)) continue;
      const dir = path.join(root, name);
      const modifiedMs = lastWritten(dir);
      if (modifiedMs !== null) out.push({ dir, componentId: mirror ? Number(mirror[1]) : null, modifiedMs });
    }
    return out;
  }

  lastWritten(dir: string): number | null {
    return lastWritten(dir);
  }

  /** The source `repo` names, checked against what the actor may read; RepoError with the reason when it cannot be used. */
  async source(actor: Actor, repo: string): Promise<RepoSource> {
    const ext = this.externalUrl.replace(/\/+$/, '');
    if (repo.startsWith(ext + '/')) {
      const fullPath = decodeURIComponent(
        repo
          .slice(ext.length + 1)
          .replace(/\/+$/, '')
          .replace(/\.git$/, ''),
      );
      let resolved;
      try {
        resolved = await this.resolve.project(actor, fullPath);
      } catch (e) {
        if (e instanceof DomainError) throw new RepoError('The repository was not found.');
        throw e;
      }
      if (!canReadCode(actor, resolved.project, resolved.access)) throw new RepoError('The repository was not found.');
      return { kind: 'platform', projectId: resolved.project.id, dir: this.repos.pathOf(resolved.project), defaultBranch: resolved.project.default_branch };
    }
    if (/^https?:\/\//i.test(repo)) {
      const s = await this.settings.get();
      const rules = {
        allowLocal: Boolean(s.allow_local_requests_from_web_hooks_and_services),
        allowlist: s.outbound_local_requests_whitelist ?? [],
      };
      try {
        const pinned = await this.outbound.pin(repo, rules);
        return { kind: 'url', url: pinned.url, pinned };
      } catch (e) {
        if (e instanceof OutboundError) throw new RepoError(e.message);
        throw e;
      }
    }
    const local = repo.startsWith('file://') ? repo.slice('file://'.length) : repo;
    if (path.isAbsolute(local)) {
      if (!actor.isAdmin) throw new RepoError('Only administrators may use a local repository path.');
      const dir = path.resolve(local);
      if (!fs.existsSync(dir)) throw new RepoError('The repository was not found.');
      return { kind: 'local', dir };
    }
    throw new RepoError('Unsupported repository URL: use an http(s) URL or a project of this server.');
  }

  /**
   * Creates the mirror if needed and fetches every branch of the source into `refs/remotes/origin/*`
   * (the upstream as last seen); the local branch `refs/heads/<branch>` (where translation commits go,
   * see repository/component-repository.ts) is created at the upstream head when missing, or put
   * there when `reset`, and left alone otherwise. Returns the branch that was asked for (or the
   * source's default branch), the local head and the upstream head.
   */
  async fetch(dir: string, source: RepoSource, branch: string, opts: { reset?: boolean } = {}): Promise<{ branch: string; head: string; remote: string }> {
    if (!fs.existsSync(path.join(dir, 'HEAD'))) {
      fs.mkdirSync(path.dirname(dir), { recursive: true });
      await git(['init', '--bare', '--quiet', dir]);
    }
    const wanted = await this.fetchRemote(dir, source, branch);
    const mirror = new Repository(dir, this.repos.pool);
    const remote = await mirror.resolveCommit(`${REMOTE_PREFIX}${wanted}`);
    if (!remote) throw new RepoError(`The branch ${wanted} was not found in the repository.`);
    let head = await mirror.resolveCommit(`refs/heads/${wanted}`);
    if (!head || opts.reset) {
      await mirror.updateRef(`refs/heads/${wanted}`, remote);
      head = remote;
    }
    await git(['symbolic-ref', 'HEAD', `refs/heads/${wanted}`], { gitDir: dir });
    mirror.touchRefs();
    return { branch: wanted, head, remote };
  }

  /** Fetches the source's branches into refs/remotes/origin/* (pruned); returns the branch meant. */
  async fetchRemote(dir: string, source: RepoSource, branch: string): Promise<string> {
    const from = source.kind === 'url' ? userArg(source.url, 'repository URL') : source.dir;
    const env = transportEnv(source);
    let wanted = branch;
    try {
      if (!wanted) {
        if (source.kind === 'platform' && source.defaultBranch) wanted = source.defaultBranch;
        else {
          const out = await git(['ls-remote', '--symref', '--', from, 'HEAD'], { env, timeoutMs: FETCH_TIMEOUT_MS });
          const m = /^ref: refs\/heads\/(\S+)\tHEAD$/m.exec(out.stdout.toString('utf8'));
          wanted = m ? m[1] : 'main';
        }
      }
      userArg(wanted, 'branch');
      await git(['fetch', '--quiet', '--prune', '--no-tags', '--', from, `+refs/heads/*:${REMOTE_PREFIX}*`], { gitDir: dir, env, timeoutMs: FETCH_TIMEOUT_MS });
    } catch (e) {
      if (e instanceof GitError) throw new RepoError(`Could not fetch the repository: ${firstLine(e.stderr || e.message)}`);
      if (e instanceof UnsafeArgument) throw new RepoError(`Could not fetch the repository: ${e.message}`);
      throw e;
    }
    return wanted;
  }

  /**
   * Pushes `sha` from the mirror to `branch` of a URL or local source (a project of this server is
   * pushed to through the repository service, not here). `force` allows a non-fast-forward.
   */
  async pushTo(dir: string, source: RepoSource, sha: string, branch: string, force: boolean): Promise<void> {
    if (source.kind === 'platform') throw new RepoError('A project of this server is pushed to through its repository service.');
    const to = source.kind === 'url' ? userArg(source.url, 'repository URL') : source.dir;
    userArg(branch, 'branch');
    try {
      await git(['push', '--quiet', '--no-verify', '--', to, `${force ? '+' : ''}${sha}:refs/heads/${branch}`], {
        gitDir: dir,
        env: transportEnv(source),
        timeoutMs: FETCH_TIMEOUT_MS,
      });
    } catch (e) {
      if (e instanceof GitError) throw new RepoError(`Could not push the repository: ${firstLine(e.stderr || e.message)}`);
      if (e instanceof UnsafeArgument) throw new RepoError(`Could not push the repository: ${e.message}`);
      throw e;
    }
  }

  /** whether commit `a` is an ancestor of (or is) commit `b` in the mirror `dir` */
  async isAncestor(dir: string, a: string, b: string): Promise<boolean> {
    return (await git(['merge-base', '--is-ancestor', a, b], { gitDir: dir, okCodes: [0, 1] })).code === 0;
  }

  /** Every regular file at a commit, with its blob SHA (symlinks and submodules skipped). */
  async files(dir: string, commit: string): Promise<TreeFile[]> {
    const out = await git(['ls-tree', '-r', '-z', '--full-tree', commit], { gitDir: dir, maxBytes: 512 * 1024 * 1024 });
    const files: TreeFile[] = [];
    for (const line of out.stdout.toString('utf8').split('\0')) {
      if (!line) continue;
      const tab = line.indexOf('\t');
      const [mode, type, sha] = line.slice(0, tab).split(' ');
      if (type !== 'blob' || mode === '120000') continue;
      files.push({ path: line.slice(tab + 1), sha });
    }
    return files;
  }

  async blob(dir: string, sha: string): Promise<Buffer> {
    const o = await this.repos.pool.read(dir, sha);
    if (!o?.content) throw new RepoError(`The object ${sha} is missing from the repository.`);
    return o.content;
  }

  remove(componentId: number): void {
    this.discard(this.mirrorDir(componentId));
  }

  discard(dir: string): void {
    this.repos.pool.drop(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * git configuration (as GIT_CONFIG_* variables) that holds git's http client to a checked URL: no
 * redirects (nor dumb-HTTP alternates, which follow the same setting), and the host resolved to the
 * checked addresses only. A trailing-dot name is pinned with and without the dot (curl drops it).
 */
export function heldTo(pinned: PinnedUrl): Record<string, string> {
  const config: [string, string][] = [['http.followRedirects', 'false']];
  if (!pinned.literal) {
    const addrs = pinned.addresses.map((a) => (a.includes(':') ? `[${a}]` : a)).join(',');
    for (const host of new Set([pinned.host, pinned.host.replace(/\.+$/, '')])) config.push(['http.curloptResolve', `${host}:${pinned.port}:${addrs}`]);
  }
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(config.length) };
  config.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

function lastWritten(dir: string): number | null {
  let latest: number | null = null;
  for (const p of [dir, path.join(dir, 'objects'), path.join(dir, 'objects', 'pack')]) {
    try {
      const st = fs.lstatSync(p);
      if (p === dir && !st.isDirectory()) return null;
      latest = Math.max(latest ?? 0, st.mtimeMs);
    } catch {
      if (p === dir) return null;
    }
  }
  return latest;
}

function firstLine(s: string): string {
  return (
    s
      .trim()
      .split('\n')
      .filter((l) => !/^hint:/.test(l))[0] ?? 'unknown error'
  );
}
