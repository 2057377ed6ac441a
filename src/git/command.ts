// The one way the product runs git: fixed environment, timeouts, output caps, and user values that
// can never become options (checked by `userArg`, and paths placed after `--`).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { trackGitProcess } from '../metrics/registry.ts';
import { gitSlot } from './budget.ts';
import { SpawnedCommand, type SpawnerAnswer, spawner } from './spawner.ts';

export class GitError extends Error {
  constructor(
    message: string,
    readonly code: number | null,
    readonly stderr: string,
  ) {
    super(message);
  }
}

/** A value from a user that reached git unchecked would be a hole: refuse options, NUL and newlines. */
export class UnsafeArgument extends Error {}

let baseEnv: Record<string, string> | null = null;

/** Private HOME (no user or system config), no prompts, C locale. Called once by the container. */
export function configureGit(home: string): void {
  fs.mkdirSync(home, { recursive: true });
  const config = path.join(home, '.gitconfig');
  if (!fs.existsSync(config)) fs.writeFileSync(config, '[core]\n\tquotePath = false\n[init]\n\tdefaultBranch = main\n');
  baseEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: config,
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '/bin/false',
    LC_ALL: 'C',
    TZ: 'UTC',
  };
}

export function gitEnv(extra?: Record<string, string>): Record<string, string> {
  if (!baseEnv) throw new Error('configureGit() was not called');
  return extra ? { ...baseEnv, ...extra } : baseEnv;
}

/** A user value that goes to git as an argument: never an option, never multi-line. */
export function userArg(value: string, what = 'argument'): string {
  if (value.startsWith('-') || /[\0\n\r]/.test(value)) throw new UnsafeArgument(`invalid ${what}`);
  return value;
}

/** A repository path from a user (file path, tree path): relative, no `..`, no NUL. */
export function isSafePath(p: string): boolean {
  // eslint-disable-next-line no-control-regex
  if (p === '' || /[\x00-\x1f\x7f]/.test(p) || p.startsWith('/') || p.startsWith('-')) return false;
  return p.split('/').every((seg) => seg !== '..' && seg !== '.' && seg !== '' && seg !== '.git');
}

export interface GitRunOptions {
  gitDir?: string;
  cwd?: string;
  input?: Buffer | string;
  /** default 60 s */
  timeoutMs?: number;
  /** stdout cap in bytes (default 64 MiB); more is an error */
  maxBytes?: number;
  env?: Record<string, string>;
  /** exit codes that are not errors (default [0]) */
  okCodes?: number[];
}

export interface GitResult {
  stdout: Buffer;
  stderr: string;
  code: number;
}

function argv(args: string[], gitDir?: string): string[] {
  return gitDir ? ['--git-dir', gitDir, ...args] : args;
}

export interface SpawnOptions extends Omit<GitRunOptions, 'input' | 'maxBytes' | 'okCodes'> {
  /** more sockets after stdin, stdout and stderr (fd 3, 4, …), inherited by git's hooks */
  extraPipes?: number;
  /** an environment variable that names git's own process id (for hooks: "is my parent that git?") */
  pidEnv?: string;
}

/** Starts git for streaming (archive, upload-pack, receive-pack); the caller owns the streams. */
export function spawnGit(args: string[], opts: SpawnOptions = {}): ChildProcess {
  const stdio: 'pipe'[] = Array<'pipe'>(3 + (opts.extraPipes ?? 0)).fill('pipe');
  const options = { cwd: opts.cwd ?? opts.gitDir ?? '/', env: gitEnv(opts.env), stdio };
  let child: ChildProcess;
  if (opts.pidEnv) {
    if (!/^[A-Z_][A-Z0-9_]*$/.test(opts.pidEnv)) throw new Error(`invalid variable name ${opts.pidEnv}`);
    // the shell names its own pid, then becomes git (exec keeps the pid)
    child = spawn('/bin/sh', ['-c', `${opts.pidEnv}=$$; export ${opts.pidEnv}; exec git "$@"`, 'git', ...argv(args, opts.gitDir)], options);
  } else child = spawn('git', argv(args, opts.gitDir), options);
  trackGitProcess(args, child);
  const timeout = opts.timeoutMs ?? 600_000;
  const timer = setTimeout(() => child.kill('SIGKILL'), timeout);
  timer.unref();
  child.once('close', () => clearTimeout(timer));
  return child;
}

/**
 * Runs git to completion, within the process's git budget (budget.ts: GitBusy when a request's git cannot
 * start in time); rejects with GitError on an exit code outside okCodes, a timeout or too much output.
 */
export async function git(args: string[], opts: GitRunOptions = {}): Promise<GitResult> {
  const release = await gitSlot(opts.gitDir ?? opts.cwd ?? '');
  try {
    return await runGit(args, opts);
  } finally {
    release();
  }
}

/** Through the spawner (spawner.ts): the server's event loop does not pay for starting the process. */
async function runGit(args: string[], opts: GitRunOptions): Promise<GitResult> {
  const maxBytes = opts.maxBytes ?? 64 * 1024 * 1024;
  const okCodes = opts.okCodes ?? [0];
  const started = new SpawnedCommand();
  trackGitProcess(args, started);
  let a: SpawnerAnswer;
  try {
    a = await spawner.run({
      file: 'git',
      args: argv(args, opts.gitDir),
      cwd: opts.cwd ?? opts.gitDir ?? '/',
      env: gitEnv(opts.env),
      input: opts.input,
      timeoutMs: opts.timeoutMs ?? 60_000,
      maxBytes,
    });
  } finally {
    started.emit('close');
  }
  if (a.error !== undefined) throw new GitError(`git ${args[0]}: ${a.error}`, null, '');
  if (a.tooBig) throw new GitError(`git ${args[0]}: output exceeds ${maxBytes} bytes`, null, '');
  if (a.signal) throw new GitError(`git ${args[0]} killed by ${a.signal}`, null, a.stderr);
  if (!okCodes.includes(a.code ?? -1)) throw new GitError(`git ${args[0]} exited with ${a.code}: ${a.stderr.trim()}`, a.code, a.stderr);
  return { stdout: a.stdout ?? Buffer.alloc(0), stderr: a.stderr, code: a.code ?? 0 };
}
