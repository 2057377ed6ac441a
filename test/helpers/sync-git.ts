// Synchronous git for the test helpers (WorkTree.git, workTree, bareGit), started from a small process instead of
// the test process. Starting a process copies the page tables of the one that starts it: from a test process of
// 300–700 MB (the app, tsx, the test's data) every git command cost 10–30 ms, half of it the test process's own
// kernel time, and the helpers start thousands (the product's own commands go through src/git/spawner.ts for the
// same reason). The test process writes each request into a named pipe and blocks reading the answer from another,
// as execFileSync blocks; sync-git-server.mjs runs the command. Errors look like execFileSync's: `status`,
// `signal`, `stdout`, `stderr` and "Command failed: …". HEARTH_TEST_SYNC_GIT=0 starts git directly again.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SERVER = fileURLToPath(new URL('./sync-git-server.mjs', import.meta.url));
const DIRECT = process.env.HEARTH_TEST_SYNC_GIT === '0';

let channel: { req: number; res: number } | null = null;

function open(): { req: number; res: number } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-sync-git-'));
  const req = path.join(dir, 'req');
  const res = path.join(dir, 'res');
  execFileSync('mkfifo', [req, res]);
  const child = spawn(process.execPath, [SERVER, req, res], { stdio: 'ignore', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  child.unref();
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  // the server opens the request pipe first: until it does, opening our end without blocking fails (ENXIO)
  const started = Date.now();
  const pause = new Int32Array(new SharedArrayBuffer(4));
  let probe: number;
  for (;;) {
    try {
      probe = fs.openSync(req, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENXIO' || Date.now() - started > 10_000) throw new Error(`the sync git server did not start: ${e}`);
      Atomics.wait(pause, 0, 0, 5);
    }
  }
  // it is reading now: these opens (blocking ones, so that reads and writes block) meet it at once; the probe closes
  // only after, so the server never sees its request pipe without a writer (its end of input)
  const opened = { req: fs.openSync(req, 'w'), res: 0 };
  fs.closeSync(probe);
  opened.res = fs.openSync(res, 'r');
  return opened;
}

function readExactly(fd: number, size: number): Buffer {
  const buf = Buffer.alloc(size);
  let at = 0;
  while (at < size) {
    const n = fs.readSync(fd, buf, at, size - at, null);
    if (n === 0) throw new Error('the sync git server went away');
    at += n;
  }
  return buf;
}

export interface SyncGitOptions {
  cwd?: string;
  env: NodeJS.ProcessEnv;
  input?: string | Buffer;
}

/** git `args`, to completion: its stdout, or an error shaped as execFileSync's. */
export function syncGit(args: string[], opts: SyncGitOptions): Buffer {
  if (DIRECT) return execFileSync('git', args, { cwd: opts.cwd, env: opts.env, input: opts.input, maxBuffer: 256 * 1024 * 1024, stdio: 'pipe' });
  channel ??= open();
  const body = Buffer.from(
    JSON.stringify({
      args,
      cwd: opts.cwd ?? process.cwd(),
      env: opts.env,
      input: opts.input === undefined ? undefined : Buffer.from(opts.input).toString('base64'),
    }),
  );
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length);
  fs.writeSync(channel.req, Buffer.concat([head, body]));
  const size = readExactly(channel.res, 4).readUInt32BE(0);
  const a = JSON.parse(readExactly(channel.res, size).toString('utf8')) as {
    status: number | null;
    signal: string | null;
    stdout: string;
    stderr: string;
    error?: string;
  };
  if (a.error !== undefined) throw Object.assign(new Error(`spawnSync git ${a.error}`), { status: null, signal: null });
  const stdout = Buffer.from(a.stdout, 'base64');
  const stderr = Buffer.from(a.stderr, 'base64');
  if (a.status !== 0) {
    throw Object.assign(new Error(`Command failed: git ${args.join(' ')}\n${stderr.toString('utf8')}`), {
      status: a.status,
      signal: a.signal,
      stdout,
      stderr,
      output: [null, stdout, stderr],
    });
  }
  return stdout;
}
