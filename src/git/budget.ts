// How much git work a process runs at once (Gitaly's concurrency limits): at most `concurrency` git
// processes that run to completion (`git()` of command.ts), `perRepository` of them on one repository. More
// wait in a queue of at most `queue`: the git of a request waits at most `waitMs` (past it, or with the
// queue full, the request gets 503 with Retry-After), background work as long as it takes. A slow git route
// thus makes git routes wait, never the routes without git, and nothing starts 39 git processes on 2 cores.
// A diff (diff.ts), parsed while git streams it, runs to completion and is counted as well. Long-lived and
// streaming processes (the cat-file pool, upload-pack, receive-pack, archive) are not
// counted here: they have limits of their own. On a stop signal the queue is closed: its waiters, and later
// git that finds no free slot, get 503 at once (the requests in flight go on while there is room), so
// shutdown never waits behind it.
import os from 'node:os';
import { DomainError } from '../lib/errors.ts';
import { Gate } from '../lib/gate.ts';
import { requestContext } from '../lib/request-context.ts';

export interface GitBudgetLimits {
  concurrency: number;
  perRepository: number;
  queue: number;
  waitMs: number;
}

export const BUSY_MESSAGE = 'Too many git operations are running. Try again later.';
const RETRY_AFTER_S = 5;

/** The answer of a request whose git could not start in time: 503, Retry-After. */
export class GitBusy extends DomainError {
  constructor() {
    super('refused', 503, BUSY_MESSAGE, { 'retry-after': String(RETRY_AFTER_S) });
  }
}

const cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;

/** 4 git processes per core (at least 8), half of them on one repository; 200 waiting, 30 s each. */
export const DEFAULT_GIT_BUDGET: GitBudgetLimits = {
  concurrency: Math.max(8, 4 * cores),
  perRepository: Math.max(4, 2 * cores),
  queue: 200,
  waitMs: 30_000,
};

let limits = DEFAULT_GIT_BUDGET;
let gate = newGate(limits);
let closed = false;

function newGate(l: GitBudgetLimits): Gate {
  return new Gate({ slots: l.concurrency, queue: l.queue, clientSlots: l.perRepository, busy: () => new GitBusy() });
}

/** Sets this process's limits (the container, from the configuration); a change starts a new gate. */
export function configureGitBudget(next: GitBudgetLimits): void {
  if (!closed && JSON.stringify(next) === JSON.stringify(limits)) return;
  limits = next;
  gate = newGate(next);
  closed = false;
}

/**
 * Takes a slot for git work on `repository` (its directory); the returned function frees it. A request's
 * wait is bounded (GitBusy), background work waits as long as it takes.
 */
export async function gitSlot(repository: string): Promise<() => void> {
  const g = gate;
  const client = await g.enter(requestContext.getStore() === undefined ? Infinity : limits.waitMs, repository);
  let freed = false;
  return () => {
    if (freed) return;
    freed = true;
    g.leave(client);
  };
}

/** Shutdown: every waiter, and every later git that finds no free slot, gets GitBusy at once. */
export function closeGitBudget(): void {
  closed = true;
  gate.close();
}

/** git processes running and waiting in this process (metrics, tests) */
export function gitLoad(): { running: number; waiting: number } {
  return gate.load();
}
