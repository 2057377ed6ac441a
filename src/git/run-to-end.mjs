// One command run to its end, for the small processes that start git for bigger ones (spawner.mjs for the server,
// the tests' sync-git-server.mjs): its output (up to `maxBytes`, else killed and `tooBig`), the first 64 chunks of
// its stderr, killed at `timeoutMs` (when finite). Plain JavaScript, Node's built-ins only.
import { spawn } from 'node:child_process';

const MAX_STDERR_CHUNKS = 64;

/**
 * @param {{ file: string, args: string[], cwd?: string, env?: Record<string, string>, input?: Uint8Array | string,
 *   timeoutMs?: number, maxBytes?: number }} m
 * @param {(answer: { error: string } | { code: number | null, signal: string | null, stdout: Buffer | null,
 *   stderr: Buffer, tooBig: boolean }) => void} done called once
 */
export function runToEnd(m, done) {
  let child;
  try {
    child = spawn(m.file, m.args, { cwd: m.cwd, env: m.env, stdio: 'pipe' });
  } catch (e) {
    done({ error: e.message });
    return;
  }
  const maxBytes = m.maxBytes ?? Number.POSITIVE_INFINITY;
  const out = [];
  const err = [];
  let size = 0;
  let tooBig = false;
  let answered = false;
  let timer = null;
  const answer = (a) => {
    if (answered) return;
    answered = true;
    if (timer) clearTimeout(timer);
    done(a);
  };
  if (Number.isFinite(m.timeoutMs)) timer = setTimeout(() => child.kill('SIGKILL'), m.timeoutMs);
  child.stdout.on('data', (b) => {
    size += b.length;
    if (size > maxBytes) {
      if (!tooBig) child.kill('SIGKILL');
      tooBig = true;
      return;
    }
    out.push(b);
  });
  child.stderr.on('data', (b) => {
    if (err.length < MAX_STDERR_CHUNKS) err.push(b);
  });
  child.stdin.on('error', () => {});
  // 'error': it did not start (or could not be killed); 'close': it ended and its output is all read
  child.on('error', (e) => answer({ error: e.message }));
  child.on('close', (code, signal) => answer({ code, signal, stdout: tooBig ? null : Buffer.concat(out), stderr: Buffer.concat(err), tooBig }));
  child.stdin.end(m.input ?? undefined);
}
