// Background work declared once. A job kind is a name and the schema of its payload (`jobKind`): what is
// queued under it is checked against the schema, in the type and when it is written. What runs a kind
// is a definition beside its service (`defineJob`: lease, how many a round claims, retries); work found
// by the clock rather than by a row is a sweep (`defineSweep`). `Jobs` runs every registered kind the
// same way — claim, run, retry or release, on the outbox rows of job-row.ts — as the worker's rounds;
// a service that runs its jobs at once in its own process drains the same round (`round`) in the
// background after queueing them.
import crypto from 'node:crypto';
import os from 'node:os';
import type { Insertable, Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Static, TSchema } from 'typebox';
import { Value } from 'typebox/value';
import type { Db } from '../db/connect.ts';
import type { Database, JobsTable } from '../db/schema.ts';
import { type ClaimedJob, claimJobs, queuedJob, queueOnce, runClaimed } from './job-row.ts';

/** A kind of job and the payload its rows carry. */
export interface JobKind<S extends TSchema = TSchema> {
  readonly name: string;
  readonly payload: S;
  /** The row of a new job, due now (the payload checked against the schema). */
  row(payload: Static<S>, now?: string): Insertable<JobsTable>;
  /** In the caller's transaction: a new job. */
  queue(trx: Kysely<Database>, payload: Static<S>, now?: string): Promise<void>;
  /** In the caller's transaction: a new job, unless one with this payload still waits (then it is due now). */
  queueOnce(trx: Kysely<Database>, payload: Static<S>, now?: string): Promise<void>;
}

export class InvalidPayload extends Error {}

export function jobKind<S extends TSchema>(name: string, payload: S): JobKind<S> {
  const checked = (value: Static<S>) => {
    if (!Value.Check(payload, value)) {
      const [first] = Value.Errors(payload, value);
      throw new InvalidPayload(`invalid payload of a ${name} job: ${first ? `${first.instancePath || '/'} ${first.message}` : 'does not match'}`);
    }
    return value;
  };
  return {
    name,
    payload,
    row: (value, now) => queuedJob(name, checked(value), now),
    queue: async (trx, value, now) => {
      await trx
        .insertInto('jobs')
        .values(queuedJob(name, checked(value), now))
        .execute();
    },
    queueOnce: (trx, value, now) => queueOnce(trx, name, checked(value), now),
  };
}

/** When a failed run is tried again: up to `attempts` claims in all, the n-th retry `delayMs(n)` later. */
export interface Backoff {
  attempts: number;
  delayMs(attempt: number): number;
}

/** `baseMs`, then doubled at each retry, never more than `maxMs`. */
export const exponentialBackoff = (attempts: number, baseMs: number, maxMs: number): Backoff => ({
  attempts,
  delayMs: (n) => Math.min(baseMs * 2 ** (n - 1), maxMs),
});

/** `stepMs` more at each retry. */
export const linearBackoff = (attempts: number, stepMs: number): Backoff => ({ attempts, delayMs: (n) => stepMs * n });

/** A failure that trying again cannot fix: the job fails at once, whatever its backoff. */
export class FinalFailure extends Error {}

export interface JobContext {
  /** the job's row */
  id: number;
  /** how many times the job was claimed before this claim (a process died running it) */
  claimedBefore: number;
}

export interface JobDefinition<S extends TSchema = TSchema> {
  kind: JobKind<S>;
  /** what the logs call one job ("a project export") */
  what: string;
  /** how long a claimed job is this worker's before another may take it */
  leaseMs: number;
  /** the lease renewed so often while a job runs (long jobs); none when absent */
  renewMs?: number;
  /** how many jobs a round claims; they run one after the other, oldest first */
  concurrency: number;
  /** failed runs tried again; without it a failed run fails the job */
  backoff?: Backoff;
  /** checked before claiming, at most every `everyMs` (and on the first round): a safety net that queues what was missed */
  sweep?: { everyMs: number; run(): Promise<unknown> };
  /** a job claimed MAX_CLAIMS times whose process died each time: what it was doing is settled before it fails */
  giveUp?(payload: Static<S>, job: ClaimedJob): Promise<void>;
  run(payload: Static<S>, ctx: JobContext): Promise<void>;
}

export const defineJob = <S extends TSchema>(def: JobDefinition<S>): JobDefinition<S> => def;

/** Work found by the clock (expiry, timeouts): `run` does what is due and answers how much. */
export interface SweepDefinition {
  name: string;
  /** at most this often; 0: on every round */
  everyMs: number;
  run(): Promise<number>;
}

export const defineSweep = (def: SweepDefinition): SweepDefinition => def;

/** One of the worker's rounds. */
export interface Round {
  name: string;
  everyMs: number;
  run(): Promise<number>;
}

interface Registered {
  def: JobDefinition<any>;
  lastSweep: number;
}

export class Jobs {
  /** who holds the claims of this process */
  readonly workerId = `${os.hostname()}:${process.pid}:jobs:${crypto.randomBytes(3).toString('hex')}`;
  private readonly kinds = new Map<string, Registered>();
  private readonly list: Round[] = [];

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  /** What runs, in this order on every worker round. */
  register(...defs: (JobDefinition<any> | SweepDefinition)[]): void {
    for (const def of defs) {
      if ('kind' in def) {
        const name = def.kind.name;
        if (this.kinds.has(name)) throw new Error(`job kind ${name} is registered twice`);
        this.kinds.set(name, { def, lastSweep: 0 });
        this.list.push({ name, everyMs: 0, run: () => this.round(name) });
      } else this.list.push({ name: def.name, everyMs: def.everyMs, run: () => def.run() });
    }
  }

  get rounds(): readonly Round[] {
    return this.list;
  }

  /** One round of a kind: its sweep when due, then up to `limit` due jobs claimed and run; how many it claimed. */
  async round(kind: string, limit?: number): Promise<number> {
    const r = this.registered(kind);
    const { def } = r;
    if (def.sweep && Date.now() - r.lastSweep > def.sweep.everyMs) {
      r.lastSweep = Date.now();
      await def.sweep.run();
    }
    const giveUp = def.giveUp;
    const jobs = await claimJobs(this.db, kind, this.workerId, {
      leaseMs: def.leaseMs,
      limit: limit ?? def.concurrency,
      giveUp: giveUp && (async (job) => giveUp(this.parse(def, job.payload), job)),
    });
    for (const job of jobs) await this.runOne(def, job);
    return jobs.length;
  }

  private registered(kind: string): Registered {
    const r = this.kinds.get(kind);
    if (!r) throw new Error(`no job kind ${kind} is registered`);
    return r;
  }

  private parse<S extends TSchema>(def: JobDefinition<S>, payload: string): Static<S> {
    const value: unknown = JSON.parse(payload);
    if (!Value.Check(def.kind.payload, value)) throw new InvalidPayload(`invalid payload of a ${def.kind.name} job`);
    return value as Static<S>;
  }

  private async runOne(def: JobDefinition<any>, job: ClaimedJob): Promise<void> {
    const backoff = def.backoff;
    await runClaimed(
      this.db,
      job,
      this.workerId,
      {
        leaseMs: def.leaseMs,
        renewMs: def.renewMs,
        log: this.log,
        what: def.what,
        retryAt: backoff && ((e) => retryAt(backoff, job.attempts + 1, e)),
      },
      (claimedBefore) => def.run(this.parse(def, job.payload), { id: job.id, claimedBefore }),
    );
  }
}

/** When a job that failed on its `attempt`-th claim runs again; null: not again. */
function retryAt(backoff: Backoff, attempt: number, e: unknown): string | null {
  if (e instanceof FinalFailure || e instanceof InvalidPayload || attempt >= backoff.attempts) return null;
  return new Date(Date.now() + backoff.delayMs(attempt)).toISOString();
}

/** The payload of a kind's jobs. */
export type PayloadOf<K> = K extends JobKind<infer S> ? Static<S> : never;
