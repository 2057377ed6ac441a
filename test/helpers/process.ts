// `node bin/hearth.js <command>` as the README starts it: a real process on a temporary data directory, its
// JSON log read line by line, waited on by events (a log line, readiness, exit) rather than by the clock.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { promisify } from 'node:util';
import SQLite from 'better-sqlite3';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const TOKEN = 'glpat-process-test-root-token-01';

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export interface HearthProcess {
  child: ChildProcess;
  pid: number;
  port: number;
  dataDir: string;
  /** "http://127.0.0.1:<port>" */
  base: string;
  /** the log so far, one parsed object per JSON line (other lines as { msg: line }) */
  lines: LogLine[];
  /** everything written to stdout and stderr */
  output(): string;
  /** resolves with the first log line (so far or to come) that `match` accepts */
  waitForLine(match: (l: LogLine) => boolean): Promise<LogLine>;
  /** resolves when the process has exited */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export function tempDataDir(t: TestContext, prefix = 'hearth-process-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Starts `hearth <command>` (default serve) and resolves once it listens (serve) or logged `ready` (other commands);
 * `ready` may also be an event outside the process (a promise), for a command that logs none, such as `worker`.
 * `port`: the port of an earlier life on the same DATA_DIR (default: a free one).
 */
export async function startHearth(
  t: TestContext,
  opts: {
    dataDir: string;
    command?: string;
    env?: Record<string, string>;
    ready?: ((l: LogLine) => boolean) | Promise<unknown>;
    port?: number;
  },
): Promise<HearthProcess> {
  const port = opts.port ?? (await freePort());
  const command = opts.command ?? 'serve';
  const child = spawn(process.execPath, ['bin/hearth.js', command], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: '',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: opts.dataDir,
      HEARTH_ROOT_PASSWORD: 'process-test-password-1',
      HEARTH_ROOT_TOKEN: TOKEN,
      HEARTH_SSH_PORT: '0',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let out = '';
  let pending = '';
  const lines: LogLine[] = [];
  const waiters: { match: (l: LogLine) => boolean; resolve: (l: LogLine) => void }[] = [];
  const take = (chunk: Buffer) => {
    out += chunk;
    pending += chunk;
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const text = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      if (!text.trim()) continue;
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        line = { level: 0, msg: text };
      }
      lines.push(line);
      for (const w of [...waiters]) {
        if (w.match(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  };
  child.stdout!.on('data', take);
  child.stderr!.on('data', take);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const waitForLine = (match: (l: LogLine) => boolean) => {
    const seen = lines.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise<LogLine>((resolve) => waiters.push({ match, resolve }));
  };
  const ready = opts.ready ?? ((l: LogLine) => l.msg.startsWith('Server listening at '));
  const started = await Promise.race([typeof ready === 'function' ? waitForLine(ready) : ready.then(() => true), exited.then(() => null)]);
  if (!started) throw new Error(`hearth ${command} exited before it was ready:\n${out}`);
  return { child, pid: child.pid!, port, dataDir: opts.dataDir, base: `http://127.0.0.1:${port}`, lines, output: () => out, waitForLine, exited };
}

/** `hearth <args>` run to its end (a one-shot command: backup, admin…) on `dataDir`: its exit code and output. */
export async function runHearth(dataDir: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await promisify(execFile)(process.execPath, ['bin/hearth.js', ...args], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'warn', HEARTH_SSH_PORT: '0' },
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e: any) {
    return { code: e.code as number, stdout: e.stdout as string, stderr: e.stderr as string };
  }
}

/** The paths of the groups in DATA_DIR's SQLite database, read beside a running server (WAL) or after it. */
export function groupsOf(dataDir: string): string[] {
  const db = new SQLite(path.join(dataDir, 'hearth.sqlite3'), { readonly: true });
  try {
    return (db.prepare('select path from namespaces where type = ? order by id').all('Group') as { path: string }[]).map((r) => r.path);
  } finally {
    db.close();
  }
}

/** kill -9: resolves once the process is gone (its DATA_DIR as a crash leaves it) */
export async function kill9(p: HearthProcess): Promise<void> {
  p.child.kill('SIGKILL');
  await p.exited;
}

/** Checks `fn` every 50 ms until it holds, for a state that has no event to wait on (a lock file, a delivery); `ms` bounds a hang only. */
export async function until(what: string, fn: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
