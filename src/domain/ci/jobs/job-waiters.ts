// The runners waiting in POST /jobs/request (GitLab: Workhorse holds the request until the runner's
// queue changes). One list of waiters per process, woken together: at once by jobsQueued() (a job
// became pending on this node), or by one shared watcher that, while anybody waits, looks at the
// ci_builds table version (free on PostgreSQL with the LISTEN feed, a pragma on SQLite: other nodes'
// and processes' writes) and, when it moved, asks once whether any job is pending at all. So 50 idle
// runners cost one timer and, per change of ci_builds, one query — not 50 pollers.
import type { Db } from '../../../db/connect.ts';
import { readVersions } from '../../../db/versions.ts';

interface Waiter {
  /** the ci_builds version the waiter last looked for a job at */
  since: number | undefined;
  wake: () => void;
}

export class JobWaiters {
  private readonly waiters = new Set<Waiter>();
  private timer: NodeJS.Timeout | null = null;
  private checking = false;
  private closed = false;

  constructor(
    private readonly db: Db,
    /** true when some job may be pending (one cheap query) */
    private readonly anyPending: () => Promise<boolean>,
    private readonly intervalMs = 100,
  ) {}

  /** close() was called: the app is going away */
  get isClosed(): boolean {
    return this.closed;
  }

  get size(): number {
    return this.waiters.size;
  }

  /** The version of ci_builds now (read it before looking for a job, then pass it to wait). */
  async version(): Promise<number | undefined> {
    return (await readVersions(this.db)).ci_builds;
  }

  /**
   * Resolves when jobs may have become pending since ci_builds was at version `since` (true), or
   * false when `ms` passed, `signal` aborted or the waiters were closed.
   */
  wait(since: number | undefined, ms: number, signal?: AbortSignal): Promise<boolean> {
    if (this.closed || ms <= 0 || signal?.aborted) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const done = (woken: boolean) => {
        clearTimeout(timeout);
        signal?.removeEventListener('abort', onAbort);
        this.waiters.delete(waiter);
        if (!this.waiters.size) this.stopWatching();
        resolve(woken);
      };
      const waiter: Waiter = { since, wake: () => done(!this.closed) };
      const onAbort = () => done(false);
      const timeout = setTimeout(() => done(false), ms);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(waiter);
      this.startWatching();
      // a job that became pending between the caller's look and now is seen by the first tick
    });
  }

  /** Wakes every waiter (they look for a job again). */
  wakeAll(): void {
    for (const w of [...this.waiters]) w.wake();
  }

  /** Ends every wait (the app closes); later waits return at once. */
  close(): void {
    this.closed = true;
    this.wakeAll();
    this.stopWatching();
  }

  private startWatching(): void {
    if (this.timer || this.closed) return;
    void this.tick();
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  private stopWatching(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async tick(): Promise<void> {
    if (this.checking || !this.waiters.size) return;
    this.checking = true;
    try {
      const v = (await readVersions(this.db)).ci_builds;
      const behind = [...this.waiters].filter((w) => w.since !== v);
      if (!behind.length) return;
      if (await this.anyPending()) {
        for (const w of behind) w.wake();
      } else {
        // nothing to take: they wait on from this version
        for (const w of behind) w.since = v;
      }
    } catch {
      // the database is away for a moment: the waiters time out or are woken later
    } finally {
      this.checking = false;
    }
  }
}
