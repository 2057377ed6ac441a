// How this codebase starts a worker thread: the worker's entry is TypeScript when the server runs its
// sources through tsx (bin/hearth.js, tsx --test), and the worker then registers tsx itself before
// loading it; a compiled build loads the .js beside the caller.
import { Worker, type WorkerOptions } from 'node:worker_threads';

const BOOT = `const { workerData } = require('node:worker_threads');
(async () => {
  if (workerData.tsx) (await import(workerData.tsx)).register();
  await import(workerData.entry);
})();`;

/**
 * The entry `<name>.ts` (sources) or `<name>.js` (build) beside the module at `callerUrl`
 * (its import.meta.url), as `workerData` for startWorker.
 */
export function workerEntry(callerUrl: string, name: string): { entry: string; tsx: string | null } {
  const ts = callerUrl.endsWith('.ts');
  const entry = new URL(`./${name}${ts ? '.ts' : '.js'}`, callerUrl).href;
  return { entry, tsx: ts ? import.meta.resolve('tsx/esm/api') : null };
}

/** A worker thread running `entry`; `data` joins workerData (the worker reads its own fields). */
export function startWorker(
  entry: { entry: string; tsx: string | null },
  data: Record<string, unknown> = {},
  opts: Omit<WorkerOptions, 'eval' | 'workerData'> = {},
): Worker {
  return new Worker(BOOT, { ...opts, eval: true, workerData: { ...data, ...entry } });
}

/** A worker's start: `ready` settles when it posts `{ ready: true }` (started) or dies first (failed); never unhandled. */
export function readiness(): { ready: Promise<void>; started: () => void; failed: (e: Error) => void } {
  let started!: () => void;
  let failed!: (e: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    started = resolve;
    failed = reject;
  });
  ready.catch(() => undefined);
  return { ready, started, failed };
}

/** What a JobThread's worker posts: `{ ready: true }` once, then one answer per job. */
export type JobAnswer<K extends string, T> = { ready: true } | ({ [key in K]: T } & { error?: undefined }) | { error: string };

/**
 * One worker thread that does one job at a time within a time limit: past it the thread is terminated
 * (`dead`; the owner starts another) and the job rejects with the owner's error. The worker answers
 * `{ <key>: value }` or `{ error }`.
 */
export class JobThread<In, K extends string, Out> {
  readonly ready: Promise<void>;
  dead = false;
  private pending: { resolve: (out: Out) => void; reject: (e: Error) => void; timer: NodeJS.Timeout } | null = null;
  private readonly worker: Worker;

  constructor(
    entry: { entry: string; tsx: string | null },
    private readonly key: K,
    name: string,
    data: Record<string, unknown> = {},
  ) {
    this.worker = startWorker(entry, data);
    this.worker.unref();
    const { ready, started, failed } = readiness();
    this.ready = ready;
    this.worker.on('message', (m: JobAnswer<K, Out>) => {
      if ('ready' in m) return started();
      const p = this.pending;
      if (!p) return;
      this.pending = null;
      clearTimeout(p.timer);
      if (typeof m.error === 'string') p.reject(new Error(m.error));
      else p.resolve((m as { [key in K]: Out })[this.key]);
    });
    const fail = (e: Error) => {
      this.dead = true;
      failed(e);
      const p = this.pending;
      this.pending = null;
      if (p) {
        clearTimeout(p.timer);
        p.reject(e);
      }
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the ${name} worker stopped (exit code ${code})`)));
  }

  /** posts `input`; past `leftMs` the thread is stopped and the job rejects with `timeout()` */
  run(input: In, leftMs: number, timeout: () => Error): Promise<Out> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending = null;
        void this.stop();
        reject(timeout());
      }, leftMs);
      this.pending = { resolve, reject, timer };
      this.worker.postMessage(input);
    });
  }

  stop(): Promise<number> {
    this.dead = true;
    return this.worker.terminate();
  }
}

/** The threads of one pool: idle ones are reused, dead ones forgotten, all stopped on close. */
export class ThreadPool<T extends { dead: boolean; stop(): Promise<number> }> {
  private readonly idle: T[] = [];
  private readonly all = new Set<T>();
  closed = false;

  constructor(private readonly make: () => T) {}

  /** an idle thread, or a new one */
  take(): T {
    const reused = this.idle.pop();
    if (reused) return reused;
    const thread = this.make();
    this.all.add(thread);
    return thread;
  }

  /** back to the idle ones, unless it died or the pool closed */
  give(thread: T): void {
    if (!thread.dead && !this.closed) this.idle.push(thread);
    else this.all.delete(thread);
  }

  async close(): Promise<void> {
    this.closed = true;
    const threads = [...this.all];
    this.all.clear();
    this.idle.length = 0;
    await Promise.all(threads.map((t) => t.stop()));
  }
}
