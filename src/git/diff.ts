// Diffs between two commits as GitLab serves them (compare, commit diffs): one
// `git diff --raw -z -p` process, parsed as it streams with Gitaly's limits (lib/gitlab/git/diff*.rb,
// gitaly internal/gitaly/diff/diff.go): per-file patch without the file header, files past the
// safe limits collapsed, patches over diff_max_patch_bytes marked too large, and the collection
// cut short (overflow) once the file, line or byte budget is spent.
import type { Repository } from './repository.ts';
import { GitError } from './command.ts';
import { gitSlot } from './budget.ts';

export const EMPTY_TREE_SHA1 = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
export const EMPTY_TREE_SHA256 = '6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321';

/** The empty tree of the repository's hash (root commits are diffed against it). */
export function emptyTree(anySha: string): string {
  return anySha.length === 64 ? EMPTY_TREE_SHA256 : EMPTY_TREE_SHA1;
}

export interface DiffLimits {
  /** Gitaly's enforce_limits */
  enforce: boolean;
  maxFiles: number;
  maxLines: number;
  maxBytes: number;
  safeMaxFiles: number;
  safeMaxLines: number;
  safeMaxBytes: number;
  /** diff_max_patch_bytes: a file whose patch reaches it comes back empty and too_large */
  maxPatchBytes: number;
  /**
   * GitLab's `expanded` diff option. When false (compare), Gitaly collapses the files past the
   * safe limits and Rails collapses any patch of maxPatchBytes / 10 or more, except in a
   * single-file collection. When true (commit diffs), nothing is collapsed.
   */
  expanded: boolean;
}

/** Application settings that size the limits: diff_max_files, diff_max_lines, diff_max_patch_bytes (GitLab's defaults when absent). */
export type DiffSettings = Record<string, unknown>;

const positive = (v: unknown, def: number): number => {
  const n = Number(v);
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : def;
};

/**
 * Gitlab::Git::DiffCollection.limits(Commit.max_diff_options): max_files 1000 and max_lines 50,000
 * (application settings), max_bytes 5 KiB per file, safe limits a tenth of those
 * (Commit::DIFF_SAFE_LIMIT_FACTOR), max_patch_bytes 200 KiB; Gitaly's upper bounds applied.
 */
export function diffLimits(settings: DiffSettings, expanded: boolean): DiffLimits {
  const maxFiles = Math.min(positive(settings.diff_max_files, 1000), 5000);
  const maxLines = Math.min(positive(settings.diff_max_lines, 50_000), 250_000);
  const safeMaxFiles = Math.min(Math.floor(maxFiles / 10), maxFiles, 500);
  const safeMaxLines = Math.min(Math.floor(maxLines / 10), maxLines, 25_000);
  return {
    enforce: true,
    maxFiles,
    maxLines,
    maxBytes: maxFiles * 5120,
    safeMaxFiles,
    safeMaxLines,
    safeMaxBytes: safeMaxFiles * 5120,
    maxPatchBytes: Math.min(positive(settings.diff_max_patch_bytes, 204_800), 512_000),
    expanded,
  };
}

export interface FileDiff {
  oldPath: string;
  newPath: string;
  /** octal without leading zeros, "0" for a side that does not exist (Gitaly's `mode.to_s(8)`) */
  aMode: string;
  bMode: string;
  newFile: boolean;
  deletedFile: boolean;
  renamedFile: boolean;
  /** the hunks (or git's "Binary files … differ" line) without the file header; '' when pruned */
  patch: string;
  collapsed: boolean;
  tooLarge: boolean;
}

export interface DiffCollection {
  files: FileDiff[];
  /** a limit stopped the collection: files after the last one returned are missing */
  overflow: boolean;
}

/** API::Entities::Diff */
export interface DiffEntity {
  diff: string;
  collapsed: boolean;
  too_large: boolean;
  new_path: string;
  old_path: string;
  a_mode: string;
  b_mode: string;
  new_file: boolean;
  renamed_file: boolean;
  deleted_file: boolean;
  generated_file: null;
}

/** Gitlab::Git::Diff#unidiff: the patch with `---`/`+++` lines (binary notices and empty patches as they are). */
export function unidiff(d: FileDiff): string {
  if (d.patch === '' || /^Binary files .* and .* differ/.test(d.patch)) return d.patch;
  const a = d.newFile ? '/dev/null' : `a/${d.oldPath}`;
  const b = d.deletedFile ? '/dev/null' : `b/${d.newPath}`;
  return `--- ${a}\n+++ ${b}\n${d.patch}`;
}

export function diffEntity(d: FileDiff, withUnidiff = false): DiffEntity {
  return {
    diff: withUnidiff ? unidiff(d) : d.patch,
    collapsed: d.collapsed,
    too_large: d.tooLarge,
    new_path: d.newPath,
    old_path: d.oldPath,
    a_mode: d.aMode,
    b_mode: d.bMode,
    new_file: d.newFile,
    renamed_file: d.renamedFile,
    deleted_file: d.deletedFile,
    // no generated-file detection in the compare and commit diff collections (nil in GitLab)
    generated_file: null,
  };
}

// ---- parsing ---------------------------------------------------------------------------------

interface RawEntry {
  oldMode: string;
  newMode: string;
  oldSha: string;
  newSha: string;
  oldPath: string;
  newPath: string;
}

const isZero = (sha: string) => /^0+$/.test(sha);
const mode = (m: string) => parseInt(m, 8).toString(8);

const DIFF_GIT = Buffer.from('diff --git ');
const BINARY = Buffer.from('Binary');
const NL = 10;
const AT = 64;

function startsWith(buf: Buffer, at: number, end: number, p: Buffer): boolean {
  if (end - at < p.length) return false;
  for (let i = 0; i < p.length; i++) if (buf[at + i] !== p[i]) return false;
  return true;
}

/**
 * Incremental parser of `git diff --raw -z -p` output. Feed chunks; `done` becomes true when a limit
 * stopped the collection (the rest of the output is not needed).
 */
export class DiffParser {
  readonly files: FileDiff[] = [];
  overflow = false;
  done = false;

  private phase: 'raw' | 'patch' = 'raw';
  private rawCarry: Buffer = Buffer.alloc(0);
  private rawTokens: string[] = [];
  private entries: RawEntry[] = [];
  private nextEntry = 0;

  // the line being assembled across chunks
  private lineParts: Buffer[] = [];
  private lineLen = 0;

  // the section (one file) being read
  private current: RawEntry | null = null;
  private inContent = false;
  private patchParts: Buffer[] = [];
  private patchLen = 0;
  private keepPatch = true;
  private lineCount = 0;
  private byteCount = 0;

  private filesProcessed = 0;
  private linesProcessed = 0;
  private bytesProcessed = 0;

  constructor(private readonly limits: DiffLimits) {}

  push(chunk: Buffer): void {
    if (this.done) return;
    let pos = 0;
    if (this.phase === 'raw') {
      pos = this.parseRaw(chunk);
      if (this.phase === 'raw') return;
    }
    while (pos < chunk.length && !this.done) {
      const nl = chunk.indexOf(NL, pos);
      if (nl < 0) {
        this.lineParts.push(chunk.subarray(pos));
        this.lineLen += chunk.length - pos;
        return;
      }
      let line: Buffer;
      if (this.lineParts.length) {
        this.lineParts.push(chunk.subarray(pos, nl + 1));
        line = Buffer.concat(this.lineParts, this.lineLen + nl + 1 - pos);
        this.lineParts = [];
        this.lineLen = 0;
      } else {
        line = chunk.subarray(pos, nl + 1);
      }
      this.onLine(line);
      pos = nl + 1;
    }
  }

  /** End of output: the last section (and a last line without newline). */
  end(): DiffCollection {
    if (!this.done) {
      if (this.lineLen) {
        this.onLine(Buffer.concat(this.lineParts, this.lineLen));
        this.lineParts = [];
        this.lineLen = 0;
      }
      if (this.phase === 'raw') this.flushRawTokens(true);
      this.finishSection();
      // entries without a patch section (none with -p, but never lose a file)
      while (!this.done && this.nextEntry < this.entries.length) {
        this.startSection();
        this.finishSection();
      }
    }
    return { files: this.files, overflow: this.overflow };
  }

  // -- raw part: ":<old mode> <new mode> <old sha> <new sha> <status>\0<path>\0[<path>\0]" …, then "\0"

  private parseRaw(chunk: Buffer): number {
    // the carried bytes hold no NUL, so every NUL found lies in `chunk`
    const carried = this.rawCarry.length;
    const buf = carried ? Buffer.concat([this.rawCarry, chunk]) : chunk;
    this.rawCarry = Buffer.alloc(0);
    let pos = 0;
    for (;;) {
      const nul = buf.indexOf(0, pos);
      if (nul < 0) {
        this.rawCarry = Buffer.from(buf.subarray(pos));
        return chunk.length;
      }
      if (nul === pos) {
        // the empty record: the patch part follows
        this.flushRawTokens(true);
        this.phase = 'patch';
        return nul + 1 - carried;
      }
      this.rawTokens.push(buf.toString('utf8', pos, nul));
      this.flushRawTokens(false);
      pos = nul + 1;
    }
  }

  private flushRawTokens(final: boolean): void {
    const t = this.rawTokens;
    while (t.length) {
      const head = t[0];
      if (!head.startsWith(':')) {
        t.shift();
        continue;
      }
      const [oldMode, newMode, oldSha, newSha, status] = head.slice(1).split(' ');
      const two = status?.[0] === 'R' || status?.[0] === 'C';
      const need = two ? 3 : 2;
      if (t.length < need) {
        if (final) t.length = 0;
        return;
      }
      const oldPath = t[1];
      const newPath = two ? t[2] : t[1];
      t.splice(0, need);
      if (status[0] === 'T') {
        // a type change is a deletion followed by an addition (Gitaly's handleTypeChangeDiff)
        this.entries.push({ oldMode, newMode: '0', oldSha, newSha: '0'.repeat(newSha.length), oldPath, newPath: oldPath });
        this.entries.push({ oldMode: '0', newMode, oldSha: '0'.repeat(oldSha.length), newSha, oldPath: newPath, newPath });
      } else {
        this.entries.push({ oldMode, newMode, oldSha, newSha, oldPath, newPath });
      }
    }
  }

  // -- patch part: one "diff --git" section per entry, in order

  private onLine(line: Buffer): void {
    const n = line.length;
    // content lines start with ' ', '+', '-', '\\' or '@@': a "diff --git" line always opens a section
    if (startsWith(line, 0, n, DIFF_GIT)) {
      this.finishSection();
      if (this.done) return;
      this.startSection();
      return;
    }
    if (!this.current) return;
    if (!this.inContent) {
      // header lines are dropped; the patch starts at the first hunk or the binary notice
      if (n >= 2 && line[0] === AT && line[1] === AT) this.inContent = true;
      else if (startsWith(line, 0, n, BINARY)) this.inContent = true;
      else return;
    }
    const hunkHeader = n >= 2 && line[0] === AT && line[1] === AT;
    if (!hunkHeader) {
      this.lineCount++;
      this.byteCount += n;
    }
    this.patchLen += n;
    if (this.keepPatch) {
      this.patchParts.push(line);
      // it will be pruned as too large: stop keeping its bytes
      if (this.limits.enforce && this.patchLen >= this.limits.maxPatchBytes) {
        this.keepPatch = false;
        this.patchParts = [];
      }
    }
  }

  private startSection(): void {
    this.current = this.entries[this.nextEntry++] ?? null;
    this.inContent = false;
    this.patchParts = [];
    this.patchLen = 0;
    this.keepPatch = true;
    this.lineCount = 0;
    this.byteCount = 0;
    if (this.current) this.filesProcessed++;
  }

  private finishSection(): void {
    const e = this.current;
    if (!e) return;
    this.current = null;
    const L = this.limits;
    this.linesProcessed += this.lineCount;
    this.bytesProcessed += this.byteCount;
    let pruned = false;
    let collapsed = false;
    let tooLarge = false;
    let patchLen = this.patchLen;
    const prune = () => {
      this.linesProcessed -= this.lineCount;
      this.bytesProcessed -= patchLen;
      patchLen = 0;
      pruned = true;
    };
    if (
      !L.expanded &&
      this.lineCount > 0 &&
      (this.filesProcessed > L.safeMaxFiles || this.linesProcessed > L.safeMaxLines || this.bytesProcessed > L.safeMaxBytes)
    ) {
      prune();
      collapsed = true;
    }
    if (L.enforce) {
      if (patchLen >= L.maxPatchBytes) {
        prune();
        tooLarge = true;
      }
      if (this.filesProcessed > L.maxFiles || this.linesProcessed >= L.maxLines || this.bytesProcessed >= L.maxBytes) {
        // this file is dropped and the collection ends here
        this.overflow = true;
        this.done = true;
        return;
      }
    }
    const patch = pruned ? '' : Buffer.concat(this.patchParts, this.patchLen).toString('utf8');
    this.patchParts = [];
    this.files.push({
      oldPath: e.oldPath,
      newPath: e.newPath,
      aMode: mode(e.oldMode),
      bMode: mode(e.newMode),
      newFile: isZero(e.oldSha),
      deletedFile: isZero(e.newSha),
      renamedFile: e.oldPath !== e.newPath,
      patch,
      collapsed,
      tooLarge,
    });
  }

  /**
   * Rails' soft limit (Gitlab::Git::Diff#collapsed?): when not expanded, a patch of a tenth of
   * max_patch_bytes or more is emptied and marked collapsed, unless the collection has one file.
   */
  applySoftLimit(): void {
    const L = this.limits;
    if (L.expanded || this.entries.length === 1) return;
    const soft = Math.floor(L.maxPatchBytes / 10);
    for (const f of this.files) {
      if (f.tooLarge || f.collapsed || f.patch === '') continue;
      if (Buffer.byteLength(f.patch) >= soft) {
        f.patch = '';
        f.collapsed = true;
      }
    }
  }
}

/** Parses a whole `git diff --raw -z -p` output (tests, small diffs). */
export function parseDiff(out: Buffer, limits: DiffLimits): DiffCollection {
  const p = new DiffParser(limits);
  p.push(out);
  const r = p.end();
  p.applySoftLimit();
  return r;
}

/** git arguments of the diff between two commits (or trees): rename detection as Gitaly's (30 %). */
export function diffArgs(from: string, to: string): string[] {
  return [
    'diff',
    '--raw',
    '-z',
    '-p',
    '--no-abbrev',
    '--full-index',
    '--find-renames=30%',
    '--no-color',
    '--no-ext-diff',
    '--no-textconv',
    '--src-prefix=a/',
    '--dst-prefix=b/',
    '--ignore-submodules=none',
    from,
    to,
    '--',
  ];
}

/**
 * The diff between two commits, streamed from one git process; git is stopped as soon as a limit
 * ends the collection. `from` and `to` must be object names checked by the caller (SHAs). The process
 * runs to completion, so it takes a slot of the git budget (budget.ts) as `git()` does: a request's diff
 * waits its bounded time for one (then GitBusy, 503).
 */
export async function diffBetween(repo: Repository, from: string, to: string, limits: DiffLimits, timeoutMs = 120_000): Promise<DiffCollection> {
  if (!/^[0-9a-f]{40,64}$/.test(from) || !/^[0-9a-f]{40,64}$/.test(to)) throw new Error('diffBetween: object names only');
  const release = await gitSlot(repo.gitDir);
  try {
    return await runDiff(repo, from, to, limits, timeoutMs);
  } finally {
    release();
  }
}

function runDiff(repo: Repository, from: string, to: string, limits: DiffLimits, timeoutMs: number): Promise<DiffCollection> {
  return new Promise((resolve, reject) => {
    const parser = new DiffParser(limits);
    const child = repo.spawn(diffArgs(from, to), { timeoutMs });
    const err: Buffer[] = [];
    let stopped = false;
    child.stdout!.on('data', (b: Buffer) => {
      if (stopped) return;
      try {
        parser.push(b);
      } catch (e) {
        stopped = true;
        child.kill('SIGKILL');
        reject(e);
        return;
      }
      if (parser.done) {
        stopped = true;
        child.stdout!.destroy();
        child.kill('SIGKILL');
      }
    });
    child.stderr!.on('data', (b: Buffer) => {
      if (err.length < 16) err.push(b);
    });
    child.stdin!.on('error', () => {});
    child.stdin!.end();
    child.on('error', (e) => reject(new GitError(`git diff: ${e.message}`, null, '')));
    child.on('close', (code, signal) => {
      if (!parser.done && (signal || code !== 0)) {
        const stderr = Buffer.concat(err).toString('utf8');
        return reject(new GitError(`git diff exited with ${code ?? signal}: ${stderr.trim()}`, code, stderr));
      }
      try {
        const r = parser.end();
        parser.applySoftLimit();
        resolve(r);
      } catch (e) {
        reject(e);
      }
    });
  });
}
