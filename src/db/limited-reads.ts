// Reads whose cost a user controls — a units search with their regular expression — run where a
// time limit reaches them, never unbounded in the server's own thread:
//   SQLite: in a worker thread with its own read-only connection to the same file (and the same
//     `regexp()` function); past the deadline the worker is terminated, and replaced on next use.
//   PostgreSQL: in a transaction with `set local statement_timeout`; query_canceled (57014) is the
//     deadline, invalid_regular_expression (2201B) a pattern PostgreSQL refuses.
// At most SLOTS such reads run at once in a process; up to QUEUE more wait for a slot, each at most
// its own time limit. Beyond that, or after that wait, ReadsBusy. Per client (the caller names it with
// `asReadsClient`: a user, or an address for anonymous callers) at most CLIENT_SLOTS run and CLIENT_QUEUE
// wait, and a freed slot goes to the first waiter whose client runs nothing: one client cannot hold
// every slot while another waits.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Worker } from 'node:worker_threads';
import { sql, type CompiledQuery, type Kysely } from 'kysely';
import type { Database } from './schema.ts';
import { Gate } from '../lib/gate.ts';
import { startWorker, workerEntry } from '../lib/worker-boot.ts';

/** the time limit passed before the reads were done */
export class ReadTimeout extends Error {
  constructor(readonly ms: number) {
    super(`limited read stopped after ${ms} ms`);
  }
}

/** every slot is taken and the queue is full, or the wait for a slot took the whole time limit */
export class ReadsBusy extends Error {
  constructor() {
    super('too many limited reads at once');
  }
}

/** PostgreSQL refused a regular expression of the query (SQLSTATE 2201B); the message is PostgreSQL's */
export class InvalidPattern extends Error {}

/** Runs one query within what is left of the time limit. */
export type Read = <R>(query: CompiledQuery<R>) => Promise<R[]>;

export interface LimitedReads {
  /**
   * Runs `work` holding a slot; its queries (through `read`, one at a time) share one deadline,
   * `timeoutMs` from when the slot is ready. Throws ReadTimeout, ReadsBusy or InvalidPattern.
   */
  run<T>(timeoutMs: number, work: (read: Read) => Promise<T>): Promise<T>;
  /** reads holding a slot and reads waiting for one, now */
  load(): { running: number; waiting: number };
  close(): Promise<void>;
}

export const SLOTS = 2;
export const QUEUE = 16;
/** reads one client may run at once, and may have waiting */
export const CLIENT_SLOTS = 1;
export const CLIENT_QUEUE = 4;

const clients = new AsyncLocalStorage<string>();

/** the slots of one process's limited reads, fair between clients (asReadsClient) */
const newGate = () => new Gate({ slots: SLOTS, queue: QUEUE, clientSlots: CLIENT_SLOTS, clientQueue: CLIENT_QUEUE, busy: () => new ReadsBusy() });

/** Runs `fn` with the limited reads it starts counted for `client` (reads outside any share the client ""). */
export function asReadsClient<T>(client: string, fn: () => T): T {
  return clients.run(client, fn);
}

export function limitedReads(opts: { dialect: 'sqlite'; file: string } | { dialect: 'postgres'; kysely: Kysely<Database> }): LimitedReads {
  return opts.dialect === 'sqlite' ? new SqliteReads(opts.file) : new PostgresReads(opts.kysely);
}

class Deadline {
  private readonly at: number;
  constructor(readonly ms: number) {
    this.at = performance.now() + ms;
  }
  /** ms left (≥ 1), or ReadTimeout */
  left(): number {
    const left = Math.ceil(this.at - performance.now());
    if (left <= 0) throw new ReadTimeout(this.ms);
    return left;
  }
}

class PostgresReads implements LimitedReads {
  private readonly gate = newGate();
  constructor(private readonly kysely: Kysely<Database>) {}

  async run<T>(timeoutMs: number, work: (read: Read) => Promise<T>): Promise<T> {
    const client = await this.gate.enter(timeoutMs, clients.getStore() ?? '');
    try {
      const deadline = new Deadline(timeoutMs);
      return await work(async <R>(query: CompiledQuery<R>) => {
        const left = deadline.left();
        try {
          return await this.kysely.transaction().execute(async (trx) => {
            await sql.raw(`set local statement_timeout = ${left}`).execute(trx);
            return (await trx.executeQuery(query)).rows;
          });
        } catch (e) {
          const code = (e as { code?: string }).code;
          if (code === '57014') throw new ReadTimeout(timeoutMs);
          if (code === '2201B') throw new InvalidPattern((e as Error).message);
          throw e;
        }
      });
    } finally {
      this.gate.leave(client);
    }
  }

  load() {
    return this.gate.load();
  }

  async close(): Promise<void> {}
}

// The worker's entry is TypeScript when the server runs its sources through tsx (bin/hearth.js, tsx
// --test): the worker then registers tsx itself before loading it. A compiled build loads the .js.
const ENTRY = workerEntry(import.meta.url, 'limited-reads.worker');

/** What the worker answers: `ready` once, then one answer per query. */
export type WorkerAnswer = { ready: true } | { rows: unknown[] } | { error: string };

/** One worker thread with its read-only connection; runs one query at a time. */
class QueryThread {
  readonly ready: Promise<void>;
  dead = false;
  private pending: { resolve: (rows: unknown[]) => void; reject: (e: Error) => void; timer: NodeJS.Timeout } | null = null;
  private readonly worker: Worker;

  constructor(file: string) {
    this.worker = startWorker(ENTRY, { file });
    this.worker.unref();
    let started: () => void;
    let failed: (e: Error) => void;
    this.ready = new Promise<void>((resolve, reject) => {
      started = resolve;
      failed = reject;
    });
    this.ready.catch(() => undefined);
    this.worker.on('message', (m: WorkerAnswer) => {
      if ('ready' in m) return started();
      const p = this.pending;
      if (!p) return;
      this.pending = null;
      clearTimeout(p.timer);
      if ('rows' in m) p.resolve(m.rows);
      else p.reject(new Error(m.error));
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
    this.worker.on('exit', (code) => fail(new Error(`the limited reads worker stopped (exit code ${code})`)));
  }

  query(query: CompiledQuery<unknown>, leftMs: number, timeoutMs: number): Promise<unknown[]> {
    if (this.dead) return Promise.reject(new ReadTimeout(timeoutMs));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending = null;
        this.stop();
        reject(new ReadTimeout(timeoutMs));
      }, leftMs);
      this.pending = { resolve, reject, timer };
      this.worker.postMessage({ sql: query.sql, parameters: query.parameters });
    });
  }

  stop(): Promise<number> {
    this.dead = true;
    return this.worker.terminate();
  }
}

class SqliteReads implements LimitedReads {
  private readonly gate = newGate();
  private readonly idle: QueryThread[] = [];
  private readonly all = new Set<QueryThread>();
  private closed = false;

  constructor(private readonly file: string) {}

  async run<T>(timeoutMs: number, work: (read: Read) => Promise<T>): Promise<T> {
    if (this.closed) throw new Error('the database is closed');
    const client = await this.gate.enter(timeoutMs, clients.getStore() ?? '');
    let thread: QueryThread | undefined;
    try {
      thread = this.idle.pop() ?? this.spawn();
      await thread.ready;
      const deadline = new Deadline(timeoutMs);
      const t = thread;
      return await work(async <R>(query: CompiledQuery<R>) => (await t.query(query, deadline.left(), timeoutMs)) as R[]);
    } finally {
      if (thread && !thread.dead && !this.closed) this.idle.push(thread);
      else if (thread) this.all.delete(thread);
      this.gate.leave(client);
    }
  }

  load() {
    return this.gate.load();
  }

  private spawn(): QueryThread {
    const thread = new QueryThread(this.file);
    this.all.add(thread);
    return thread;
  }

  async close(): Promise<void> {
    this.closed = true;
    const threads = [...this.all];
    this.all.clear();
    this.idle.length = 0;
    await Promise.all(threads.map((t) => t.stop()));
  }
}
