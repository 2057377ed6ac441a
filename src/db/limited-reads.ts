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
import { sql, type CompiledQuery, type Kysely } from 'kysely';
import type { Database } from './schema.ts';
import { Gate } from '../lib/gate.ts';
import { type JobAnswer, JobThread, ThreadPool, workerEntry } from '../lib/worker-boot.ts';

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

const ENTRY = workerEntry(import.meta.url, 'limited-reads.worker');

/** What the worker answers: `ready` once, then one answer per query. */
export type WorkerAnswer = JobAnswer<'rows', unknown[]>;

/** One worker thread with its read-only connection; runs one query at a time. */
class QueryThread extends JobThread<{ sql: string; parameters: readonly unknown[] }, 'rows', unknown[]> {
  constructor(file: string) {
    super(ENTRY, 'rows', 'limited reads', { file });
  }

  query(query: CompiledQuery<unknown>, leftMs: number, timeoutMs: number): Promise<unknown[]> {
    if (this.dead) return Promise.reject(new ReadTimeout(timeoutMs));
    return this.run({ sql: query.sql, parameters: query.parameters }, leftMs, () => new ReadTimeout(timeoutMs));
  }
}

class SqliteReads implements LimitedReads {
  private readonly gate = newGate();
  private readonly threads = new ThreadPool(() => new QueryThread(this.file));

  constructor(private readonly file: string) {}

  async run<T>(timeoutMs: number, work: (read: Read) => Promise<T>): Promise<T> {
    if (this.threads.closed) throw new Error('the database is closed');
    const client = await this.gate.enter(timeoutMs, clients.getStore() ?? '');
    let thread: QueryThread | undefined;
    try {
      thread = this.threads.take();
      await thread.ready;
      const deadline = new Deadline(timeoutMs);
      const t = thread;
      return await work(async <R>(query: CompiledQuery<R>) => (await t.query(query, deadline.left(), timeoutMs)) as R[]);
    } finally {
      if (thread) this.threads.give(thread);
      this.gate.leave(client);
    }
  }

  load() {
    return this.gate.load();
  }

  close(): Promise<void> {
    return this.threads.close();
  }
}
