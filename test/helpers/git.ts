// Real git for fixtures: a working copy cloned from a project's bare repository, commits with fixed
// authors and dates, pushed straight to the bare directory (no server in between).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { syncGit } from './sync-git.ts';
import { spawner } from '../../src/git/spawner.ts';

export const AUTHOR = { name: 'Ada Lovelace', email: 'ada@example.com' };

let clock = 1_700_000_000;

/** The environment of fixture git commands: no user or system config, deterministic identity. */
export function fixtureEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: os.tmpdir(),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    LC_ALL: 'C',
    ...extra,
  };
}

export interface CommitOptions {
  author?: { name: string; email: string };
  /** seconds since the epoch; default: a clock that advances one minute per commit */
  time?: number;
  tz?: string;
}

export class WorkTree {
  constructor(readonly dir: string) {}

  git(args: string[], env: Record<string, string> = {}, input?: string | Buffer): string {
    return syncGit(args, { cwd: this.dir, env: fixtureEnv(env), input })
      .toString('utf8')
      .trim();
  }

  write(file: string, content: string | Buffer, mode?: number): this {
    const full = path.join(this.dir, file);
    fs.mkdirSync(path.dirname(full), { recursive: true });
    fs.writeFileSync(full, content);
    if (mode !== undefined) fs.chmodSync(full, mode);
    return this;
  }

  rm(file: string): this {
    this.git(['rm', '-q', '-r', '--', file]);
    return this;
  }

  /** Stages everything and commits; returns the new commit's SHA. */
  commit(message: string, opts: CommitOptions = {}): string {
    const a = opts.author ?? AUTHOR;
    const time = opts.time ?? (clock += 60);
    const date = `@${time} ${opts.tz ?? '+0000'}`;
    this.git(['add', '-A']);
    this.git(
      ['commit', '-q', '--allow-empty', '-F', '-'],
      {
        GIT_AUTHOR_NAME: a.name,
        GIT_AUTHOR_EMAIL: a.email,
        GIT_AUTHOR_DATE: date,
        GIT_COMMITTER_NAME: a.name,
        GIT_COMMITTER_EMAIL: a.email,
        GIT_COMMITTER_DATE: date,
      },
      message,
    );
    return this.git(['rev-parse', 'HEAD']);
  }

  checkout(branch: string, create = false): this {
    this.git(create ? ['checkout', '-q', '-b', branch] : ['checkout', '-q', branch]);
    return this;
  }

  tag(name: string, message?: string): this {
    const env = { GIT_COMMITTER_NAME: AUTHOR.name, GIT_COMMITTER_EMAIL: AUTHOR.email, GIT_COMMITTER_DATE: `@${(clock += 60)} +0000` };
    this.git(message ? ['tag', '-a', name, '-m', message] : ['tag', name], env);
    return this;
  }

  /** Pushes to the bare repository it was cloned from (default: every branch and tag). */
  push(...refspecs: string[]): this {
    this.git(['push', '-q', '--force', 'origin', ...(refspecs.length ? refspecs : ['--all'])]);
    if (!refspecs.length) this.git(['push', '-q', '--force', 'origin', '--tags']);
    // what our server would do after a push: mark the refs as changed
    const bare = this.git(['config', 'remote.origin.url']);
    fs.writeFileSync(path.join(bare, 'hearth-refs-stamp'), String(process.hrtime.bigint()));
    return this;
  }
}

/** A working copy of the bare repository at `bareDir` (removed after the test). */
export function workTree(t: { after(fn: () => unknown): void }, bareDir: string): WorkTree {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-wt-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  syncGit(['clone', '-q', bareDir, dir], { env: fixtureEnv() });
  const wt = new WorkTree(dir);
  wt.git(['config', 'user.name', AUTHOR.name]);
  wt.git(['config', 'user.email', AUTHOR.email]);
  if (!fs.existsSync(path.join(dir, '.git', 'refs', 'heads', 'main'))) wt.git(['checkout', '-q', '-B', 'main']);
  return wt;
}

/** `git` against a bare directory directly (to compare API answers with git's own). */
export function bareGit(bareDir: string, args: string[]): string {
  return syncGit(['--git-dir', bareDir, ...args], { env: fixtureEnv() }).toString('utf8');
}

/** ISO time as GitLab writes it for a Unix time (UTC, "+00:00"). */
export const isoTime = (t: number) => new Date(t * 1000).toISOString().replace('Z', '+00:00');

/** GitLab's Commit entity for `sha`, from git's own answers. */
export function commitJson(dir: string, sha: string, webUrl: string) {
  const raw = bareGit(dir, ['cat-file', 'commit', sha]);
  const message = raw.slice(raw.indexOf('\n\n') + 2);
  const [parents, an, ae, at, cn, ce, ct] = bareGit(dir, ['show', '-s', '--format=%P%n%an%n%ae%n%at%n%cn%n%ce%n%ct', sha]).split('\n');
  return {
    id: sha,
    short_id: sha.slice(0, 8),
    created_at: isoTime(Number(ct)),
    parent_ids: parents ? parents.split(' ') : [],
    title: message.split('\n')[0],
    message,
    author_name: an,
    author_email: ae,
    authored_date: isoTime(Number(at)),
    committer_name: cn,
    committer_email: ce,
    committed_date: isoTime(Number(ct)),
    trailers: {},
    extended_trailers: {},
    web_url: `${webUrl}/-/commit/${sha}`,
  };
}

/** The push, tag_push and repository_update events in the outbox, oldest first. */
export async function pushEvents(c: { db: { kysely: any } }): Promise<any[]> {
  const rows = await c.db.kysely.selectFrom('jobs').select(['payload']).orderBy('id').execute();
  return rows
    .map((r: { payload: string }) => JSON.parse(r.payload))
    .filter((p: { event_name: string }) => ['push', 'tag_push', 'repository_update'].includes(p.event_name));
}

/** Runs git in `cwd` (asynchronously: the server under test runs in this process; from the product's small spawner
 * process, see src/git/spawner.ts); resolves with its output or rejects with stderr in the message. */
export async function runGit(cwd: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  const env = fixtureEnv({ GIT_AUTHOR_NAME: AUTHOR.name, GIT_AUTHOR_EMAIL: AUTHOR.email, GIT_COMMITTER_NAME: AUTHOR.name, GIT_COMMITTER_EMAIL: AUTHOR.email });
  const a = await spawner.run({ file: 'git', args, cwd, env: env as Record<string, string>, timeoutMs: 600_000, maxBytes: 256 * 1024 * 1024 });
  if (a.error !== undefined) throw new Error(`spawn git ${a.error}`);
  if (a.code !== 0) throw new Error(a.stderr || `Command failed: git ${args.join(' ')} (${a.signal ?? a.code})`);
  return { stdout: (a.stdout ?? Buffer.alloc(0)).toString('utf8'), stderr: a.stderr };
}

/** A temporary directory removed after the test. */
export function tmpDir(t: { after(fn: () => unknown): void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-clone-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}
