// The git spawner: a small child process that starts the product's run-to-completion git commands (command.ts,
// `git()`) for the server. Plain JavaScript with Node's built-ins only, copied as is to dist/ by the build, and
// started without the parent's loaders, so it stays small: starting a process copies the page tables of the one
// that starts it, and from a server of a few hundred megabytes that cost 5–15 ms of the event loop's time per git
// command (measured: 2 ms from a 60 MB process, 13 ms from 330 MB, 33 ms from 680 MB).
// A request: { id, file, args, cwd, env, input, timeoutMs, maxBytes }. The answer: { id, code, signal, stdout,
// stderr, tooBig } once the command closed, or { id, error } when it could not start.
import { runToEnd } from './run-to-end.mjs';

process.on('message', (m) => {
  runToEnd(m, (a) => process.send({ id: m.id, ...a, ...(a.error === undefined ? { stderr: a.stderr.toString('utf8') } : {}) }));
});

// the server went away: nothing is left to answer
process.on('disconnect', () => process.exit(0));
