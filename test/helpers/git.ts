// Real git for fixtures: a working copy cloned from a project's bare repository, commits with fixed
// authors and dates, pushed straight to the bare directory (no server in between).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

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
    return execFileSync('git', args, { cwd: this.dir, env: fixtureEnv(env), input, maxBuffer: 256 * 1024 * 1024 }).toString('utf8').trim();
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
    this.git(['commit', '-q', '--allow-empty', '-F', '-'], {
      GIT_AUTHOR_NAME: a.name, GIT_AUTHOR_EMAIL: a.email, GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_NAME: a.name, GIT_COMMITTER_EMAIL: a.email, GIT_COMMITTER_DATE: date,
    }, message);
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
  execFileSync('git', ['clone', '-q', bareDir, dir], { env: fixtureEnv(), stdio: 'pipe' });
  const wt = new WorkTree(dir);
  wt.git(['config', 'user.name', AUTHOR.name]);
  wt.git(['config', 'user.email', AUTHOR.email]);
  if (!fs.existsSync(path.join(dir, '.git', 'refs', 'heads', 'main'))) wt.git(['checkout', '-q', '-B', 'main']);
  return wt;
}

/** `git` against a bare directory directly (to compare API answers with git's own). */
export function bareGit(bareDir: string, args: string[]): string {
  return execFileSync('git', ['--git-dir', bareDir, ...args], { env: fixtureEnv(), maxBuffer: 256 * 1024 * 1024 }).toString('utf8');
}
