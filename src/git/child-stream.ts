// A git process's output as a response body: its first bytes looked at before anything is sent (git
// checks everything before its first byte, so an exit without output is a refusal), then the rest
// streamed without buffering.
import type { ChildProcess } from 'node:child_process';
import { PassThrough, type Readable } from 'node:stream';

/** The first bytes of a stream (up to n, or all of it when shorter), leaving them readable again. */
export function peek(stream: Readable, n: number): Promise<{ head: Buffer; ended: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let got = 0;
    const finish = (ended: boolean) => {
      stream.off('readable', onReadable);
      stream.off('end', onEnd);
      stream.off('error', reject);
      const head = Buffer.concat(chunks);
      if (!ended && head.length) stream.unshift(head);
      resolve({ head, ended });
    };
    const onReadable = () => {
      let chunk: Buffer | null;
      while (got < n && (chunk = stream.read()) !== null) {
        chunks.push(chunk);
        got += chunk.length;
      }
      if (got >= n) finish(false);
    };
    const onEnd = () => finish(true);
    stream.on('readable', onReadable);
    stream.once('end', onEnd);
    stream.once('error', reject);
  });
}

/** The exit code of a child (null when it was killed or failed to start). */
export const exitCode = (child: ChildProcess): Promise<number | null> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve(child.exitCode)
    : new Promise((resolve) => {
        child.once('close', (code) => resolve(code));
        child.once('error', () => resolve(null));
      });

/**
 * A child's stdout as a stream whose end is held back until git exits: a failure after the first
 * byte destroys it with an error (the client sees a truncated transfer, never a complete-looking
 * broken file). Destroying the stream (the server does when the client goes away) kills the child.
 */
export function streamChild(child: ChildProcess): PassThrough {
  const out = new PassThrough({ highWaterMark: 256 * 1024 });
  child.stdout!.pipe(out, { end: false });
  child.once('close', (code) => {
    if (code === 0) out.end();
    else if (!out.destroyed) out.destroy(new Error(`git exited with ${code}`));
    // destroyed already: the client left, nothing to report
  });
  out.once('close', () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    // a filter git started (bzip2) holds the pipe too: closing our end makes it stop as well
    child.stdout!.destroy();
  });
  return out;
}
