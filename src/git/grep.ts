// Code search in a repository: `git grep` for the lines that hold a fixed string (any case) with two lines
// of context around them, and `git ls-tree` for the paths. Both run within the git budget, with a time limit
// and an output cap, and stop early once they have what was asked for. The term is given after `-e`, so it
// is never read as an option, whatever it starts with.
import { gitSlot } from './budget.ts';
import { GitError, spawnGit } from './command.ts';

/** One group of lines git grep prints together: matches and their context, as in a file. */
export interface GrepChunk {
  path: string;
  /** the number of the first line of `lines` */
  startline: number;
  lines: string[];
}

export interface GrepOptions {
  /** at most this many chunks (git is stopped once it has printed them); none: all */
  maxChunks?: number;
  /** lines of context before and after each match */
  context?: number;
  timeoutMs: number;
  /** output cap in bytes: reading stops there */
  maxBytes: number;
}

/** The time limit or the output cap stopped git before it finished. */
export class GrepLimit extends Error {}

/**
 * Runs git with `args` in `gitDir`, hands each complete output record (ended by `sep`) to `onRecord`, which
 * returns false to stop early. Rejects with GrepLimit when the time limit passes, GitError when git fails.
 */
async function streamRecords(gitDir: string, args: string[], sep: number, opts: { timeoutMs: number; maxBytes: number }, onRecord: (r: Buffer) => boolean) {
  const release = await gitSlot(gitDir);
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawnGit(args, { gitDir, timeoutMs: opts.timeoutMs + 1000 });
      let pending: Buffer = Buffer.alloc(0);
      let size = 0;
      let stopped = false;
      let timedOut = false;
      const err: Buffer[] = [];
      const stop = () => {
        if (stopped) return;
        stopped = true;
        child.kill('SIGKILL');
      };
      const timer = setTimeout(() => {
        timedOut = true;
        stop();
      }, opts.timeoutMs);
      child.stdout!.on('data', (b: Buffer) => {
        if (stopped) return;
        size += b.length;
        pending = pending.length ? Buffer.concat([pending, b]) : b;
        let at = 0;
        for (let i = pending.indexOf(sep, at); i >= 0; i = pending.indexOf(sep, at)) {
          const record = pending.subarray(at, i);
          at = i + 1;
          if (!onRecord(record)) {
            stop();
            return;
          }
        }
        pending = pending.subarray(at);
        // the cap: what was read so far is the answer
        if (size > opts.maxBytes) stop();
      });
      child.stderr!.on('data', (b: Buffer) => {
        if (err.length < 16) err.push(b);
      });
      child.stdin!.on('error', () => {});
      child.stdin!.end();
      child.on('error', (e) => {
        clearTimeout(timer);
        reject(new GitError(`git ${args[0]}: ${e.message}`, null, ''));
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        if (timedOut) return reject(new GrepLimit(`git ${args[0]} took longer than ${opts.timeoutMs} ms`));
        if (stopped) return resolve();
        if (pending.length) onRecord(pending);
        // git grep: 1 when nothing matched
        if (code === 0 || code === 1) return resolve();
        const stderr = Buffer.concat(err).toString('utf8');
        reject(new GitError(`git ${args[0]} exited with ${code}: ${stderr.trim()}`, code, stderr));
      });
    });
  } finally {
    release();
  }
}

const GREP_LINE = /^[0-9a-f]+:([^\0]*)\0(\d+)\0(.*)$/s;

/** The chunks of the files at `commit` that hold `term` (a fixed string, any case; binary files skipped). */
export async function grepChunks(gitDir: string, commit: string, term: string, opts: GrepOptions): Promise<GrepChunk[]> {
  if (!/^[0-9a-f]{40,64}$/.test(commit)) throw new Error('grepChunks takes a commit id');
  const context = String(opts.context ?? 2);
  const args = ['grep', '--no-color', '-F', '-i', '-I', '-n', '-z', `--before-context=${context}`, `--after-context=${context}`, '-e', term, commit, '--'];
  const chunks: GrepChunk[] = [];
  let current: GrepChunk | null = null;
  const max = opts.maxChunks ?? Number.POSITIVE_INFINITY;
  await streamRecords(gitDir, args, 0x0a, opts, (record) => {
    const line = record.toString('utf8');
    if (line === '--') {
      current = null;
      return chunks.length < max;
    }
    const m = GREP_LINE.exec(line);
    if (!m) return true;
    const [, path, n, text] = m;
    if (!current || current.path !== path) {
      if (chunks.length >= max) return false;
      current = { path, startline: Number(n), lines: [] };
      chunks.push(current);
    }
    current.lines.push(text);
    return true;
  });
  return chunks;
}

/** A file of a tree: its path and blob id. */
export interface TreeFile {
  path: string;
  id: string;
}

/** The files (blobs) of the tree of `commit` whose path `keep` accepts, at most `max` of them. */
export async function treeFiles(
  gitDir: string,
  commit: string,
  keep: (path: string) => boolean,
  opts: { max: number; timeoutMs: number; maxBytes: number },
): Promise<TreeFile[]> {
  if (!/^[0-9a-f]{40,64}$/.test(commit)) throw new Error('treeFiles takes a commit id');
  const out: TreeFile[] = [];
  await streamRecords(gitDir, ['ls-tree', '-r', '-z', '--full-tree', commit], 0, opts, (record) => {
    // <mode> SP <type> SP <object> TAB <path>
    const s = record.toString('utf8');
    const tab = s.indexOf('\t');
    if (tab < 0) return true;
    const [, type, id] = s.slice(0, tab).split(' ');
    const path = s.slice(tab + 1);
    if (type === 'blob' && keep(path)) out.push({ path, id });
    return out.length < opts.max;
  });
  return out;
}
