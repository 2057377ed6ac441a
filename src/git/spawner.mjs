// The git spawner: a small child process that starts the product's run-to-completion git commands (command.ts,
// `git()`) for the server. Plain JavaScript with Node's built-ins only, copied as is to dist/ by the build, and
// started without the parent's loaders, so it stays small: starting a process copies the page tables of the one
// that starts it, and from a server of a few hundred megabytes that cost 5–15 ms of the event loop's time per git
// command (measured: 2 ms from a 60 MB process, 13 ms from 330 MB, 33 ms from 680 MB).
// A request: { id, file, args, cwd, env, input, timeoutMs, maxBytes }. The answer: { id, code, signal, stdout,
// stderr, tooBig } once the command closed, or { id, error } when it could not start.
import { spawn } from 'node:child_process';

const MAX_STDERR_CHUNKS = 64;

process.on('message', (m) => {
  let child;
  try {
    child = spawn(m.file, m.args, { cwd: m.cwd, env: m.env, stdio: 'pipe' });
  } catch (e) {
    process.send({ id: m.id, error: e.message });
    return;
  }
  const out = [];
  const err = [];
  let size = 0;
  let tooBig = false;
  let answered = false;
  const answer = (a) => {
    if (answered) return;
    answered = true;
    clearTimeout(timer);
    process.send({ id: m.id, ...a });
  };
  const timer = setTimeout(() => child.kill('SIGKILL'), m.timeoutMs);
  child.stdout.on('data', (b) => {
    size += b.length;
    if (size > m.maxBytes) {
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
  child.on('close', (code, signal) =>
    answer({ code, signal, stdout: tooBig ? null : Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8'), tooBig }),
  );
  child.stdin.end(m.input ?? undefined);
});

// the server went away: nothing is left to answer
process.on('disconnect', () => process.exit(0));
