// git blame without a working copy: `git blame --porcelain` of a path at a commit, optionally a line
// range, parsed into runs of consecutive lines last changed by the same commit (Gitlab::Blame#groups).
import { GitError } from './command.ts';
import type { Repository } from './repository.ts';

export interface BlameGroup {
  /** the commit that last changed these lines */
  commit: string;
  /** the lines' text, without line endings */
  lines: string[];
}

/** A range that starts after the file's last line (git: "file … has only N lines"). */
export class BlameRangeOutOfFile extends Error {}

const HEADER = /^([0-9a-f]{40}(?:[0-9a-f]{24})?) \d+ \d+(?: \d+)?$/;

/** Parses `git blame --porcelain` output into groups of consecutive lines of one commit. */
export function parsePorcelainBlame(out: Buffer): BlameGroup[] {
  const groups: BlameGroup[] = [];
  let current: string | null = null;
  let start = 0;
  while (start < out.length) {
    let end = out.indexOf(0x0a, start);
    if (end < 0) end = out.length;
    const line = out.subarray(start, end);
    start = end + 1;
    if (line[0] === 0x09) {
      // the line's content (after the tab)
      if (current === null) continue;
      const text = line.subarray(1).toString('utf8');
      const last = groups[groups.length - 1];
      if (last && last.commit === current) last.lines.push(text);
      else groups.push({ commit: current, lines: [text] });
      continue;
    }
    const m = HEADER.exec(line.toString('latin1'));
    if (m) current = m[1];
    // other lines are the commit's headers (author, committer, summary, filename …): read from the commit itself
  }
  return groups;
}

/**
 * Blames `filePath` at `commit` (lines start…end, 1-based and inclusive, when a range is given; git
 * stops at the file's end). Throws BlameRangeOutOfFile when the range starts after the last line.
 */
export async function blame(repo: Repository, commit: string, filePath: string, range?: { start: number; end: number }): Promise<BlameGroup[]> {
  const args = ['blame', '--porcelain'];
  if (range) args.push('-L', `${range.start},${range.end}`);
  args.push(commit, '--', filePath);
  try {
    const { stdout } = await repo.run(args, { env: { GIT_LITERAL_PATHSPECS: '1' }, timeoutMs: 120_000, maxBytes: 256 * 1024 * 1024 });
    return parsePorcelainBlame(stdout);
  } catch (e) {
    if (e instanceof GitError && /has only \d+ lines?/.test(e.stderr)) throw new BlameRangeOutOfFile(e.stderr.trim());
    throw e;
  }
}
