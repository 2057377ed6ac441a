// Long-lived `git cat-file --batch` / `--batch-check` processes, one pair per repository in a bounded
// pool, so hot reads (trees, blobs, refs) cost a pipe round trip instead of a process spawn.
import type { ChildProcess } from 'node:child_process';
import { spawnGit } from './command.ts';
import { catFileProcesses } from '../metrics/registry.ts';

export interface GitObject {
  sha: string;
  type: 'blob' | 'tree' | 'commit' | 'tag';
  size: number;
  /** present for --batch reads */
  content?: Buffer;
}

interface Pending {
  resolve(o: GitObject | null): void;
  reject(e: Error): void;
}

/** One cat-file process answering requests in order. */
class CatFileProcess {
  private readonly child: ChildProcess;
  private readonly queue: Pending[] = [];
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** header of the object whose content is being read */
  private header: GitObject | null = null;
  dead = false;

  constructor(
    gitDir: string,
    private readonly withContent: boolean,
  ) {
    this.child = spawnGit(['cat-file', withContent ? '--batch' : '--batch-check'], { gitDir, timeoutMs: 24 * 3600_000 });
    catFileProcesses.inc({ mode: withContent ? 'batch' : 'check' });
    this.child.stdout!.on('data', (b: Buffer) => this.onData(b));
    this.child.stdin!.on('error', () => this.fail(new Error('cat-file stdin closed')));
    this.child.on('close', () => this.fail(new Error('cat-file exited')));
    this.child.on('error', (e) => this.fail(e));
  }

  request(rev: string): Promise<GitObject | null> {
    if (this.dead) return Promise.reject(new Error('cat-file is not running'));
    return new Promise((resolve, reject) => {
      this.queue.push({ resolve, reject });
      this.child.stdin!.write(rev + '\n');
    });
  }

  close(): void {
    this.ended();
    this.child.stdin!.end();
    this.child.kill();
  }

  /** dead from now on (counted once) */
  private ended(): void {
    if (!this.dead) catFileProcesses.dec({ mode: this.withContent ? 'batch' : 'check' });
    this.dead = true;
  }

  private fail(e: Error): void {
    this.ended();
    for (const p of this.queue.splice(0)) p.reject(e);
  }

  private take(n: number): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.buffered);
    const head = all.subarray(0, n);
    const rest = all.subarray(n);
    this.chunks = rest.length ? [rest] : [];
    this.buffered = rest.length;
    return head;
  }

  private onData(b: Buffer): void {
    this.chunks.push(b);
    this.buffered += b.length;
    for (;;) {
      if (!this.header) {
        const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.buffered);
        this.chunks = [all];
        const nl = all.indexOf(10);
        if (nl < 0) return;
        const line = this.take(nl + 1).toString('utf8', 0, nl);
        const parts = line.split(' ');
        if (parts.length !== 3 || !/^[0-9a-f]{40,64}$/.test(parts[0])) {
          this.queue.shift()?.resolve(null); // "<rev> missing" / "<rev> ambiguous"
          continue;
        }
        const obj: GitObject = { sha: parts[0], type: parts[1] as GitObject['type'], size: Number(parts[2]) };
        if (!this.withContent) {
          this.queue.shift()?.resolve(obj);
          continue;
        }
        this.header = obj;
      }
      const need = this.header.size + 1;
      if (this.buffered < need) return;
      const content = this.take(need).subarray(0, this.header.size);
      const obj = this.header;
      this.header = null;
      obj.content = Buffer.from(content); // own copy: the chunk may be large and shared
      this.queue.shift()?.resolve(obj);
    }
  }
}

interface Entry {
  batch: CatFileProcess | null;
  check: CatFileProcess | null;
  lastUsed: number;
}

/** Bounded pool keyed by repository; least recently used repositories lose their processes first. */
export class CatFilePool {
  private readonly entries = new Map<string, Entry>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly maxRepositories = 64,
    private readonly idleMs = 60_000,
  ) {
    this.timer = setInterval(() => this.reap(), Math.min(idleMs, 30_000));
    this.timer.unref();
  }

  private entry(gitDir: string): Entry {
    let e = this.entries.get(gitDir);
    if (e) {
      this.entries.delete(gitDir); // re-insert: Map order is our LRU order
    } else {
      e = { batch: null, check: null, lastUsed: 0 };
      if (this.entries.size >= this.maxRepositories) {
        const [oldest] = this.entries.keys();
        this.drop(oldest);
      }
    }
    e.lastUsed = Date.now();
    this.entries.set(gitDir, e);
    return e;
  }

  /** Object header and content, or null when `rev` names nothing. */
  read(gitDir: string, rev: string): Promise<GitObject | null> {
    const e = this.entry(gitDir);
    if (!e.batch || e.batch.dead) e.batch = new CatFileProcess(gitDir, true);
    return e.batch.request(rev);
  }

  /** Object header only. */
  info(gitDir: string, rev: string): Promise<GitObject | null> {
    const e = this.entry(gitDir);
    if (!e.check || e.check.dead) e.check = new CatFileProcess(gitDir, false);
    return e.check.request(rev);
  }

  /** Stops the processes of a repository (deleted or rewritten). */
  drop(gitDir: string): void {
    const e = this.entries.get(gitDir);
    if (!e) return;
    e.batch?.close();
    e.check?.close();
    this.entries.delete(gitDir);
  }

  private reap(): void {
    const cutoff = Date.now() - this.idleMs;
    for (const [dir, e] of this.entries) if (e.lastUsed < cutoff) this.drop(dir);
  }

  close(): void {
    clearInterval(this.timer);
    for (const dir of [...this.entries.keys()]) this.drop(dir);
  }
}
