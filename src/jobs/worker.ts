// The job worker: delivers events to hooks and runs the rounds of the registered jobs and sweeps
// (registry.ts). `serve` runs one in-process (HEARTH_IN_PROCESS_WORKER); `hearth worker` runs one alone.
// Several workers share the work through the leases of the delivery queue (the domain's HookDeliveries,
// wired in by the container) and of the jobs.
//
// Deliveries run side by side, each on its own (up to `concurrency` at once, and as many per hook as
// the queue's `claim` allows): the loop claims new work whenever a slot is free and never waits for a
// batch, so a delivery that hangs until its deadline holds up no other delivery, nor the fan-out of
// new events.
import type { Logger } from 'pino';
import type { Round } from './registry.ts';

/** A delivery: its id, and the hook it goes to (for the logs). */
export interface Delivery {
  id: number;
  hook_id: number;
}

/** What the worker sends: deliveries made from events, claimed with leases, sent one by one. */
export interface DeliveryQueue<D extends Delivery> {
  /** Turns queued events into deliveries; the number of events taken. */
  dispatch(): Promise<number>;
  /** Up to `limit` due deliveries; `busy` counts the deliveries in flight by `keyOf`. */
  claim(limit: number, busy: ReadonlyMap<number, number>): Promise<D[]>;
  deliver(d: D): Promise<void>;
  /** Deliveries of the same key (a hook) are limited together. */
  keyOf(d: D): number;
}

export class Worker<D extends Delivery = Delivery> {
  private running = false;
  private loop: Promise<void> | null = null;
  private sleeping: { timer: NodeJS.Timeout; resolve: () => void } | null = null;
  /** deliveries being sent, by id */
  private readonly inFlight = new Map<number, { hookId: number; done: Promise<void> }>();
  /** when a periodic round is due next */
  private readonly next = new Map<Round, number>();
  /** when the jobs' rounds ran last (performance.now()) */
  private roundsAt = -Infinity;

  /**
   * `jobs`: the other work, each round run one at a time after the deliveries' (with its own leases, so
   * several workers share it); a round with `everyMs` runs at most that often instead of on every tick.
   */
  constructor(
    private readonly deliveries: DeliveryQueue<D>,
    private readonly jobs: { readonly rounds: readonly Round[] },
    private readonly log: Logger,
    private readonly pollMs: number,
    private readonly concurrency = 64,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops claiming work and waits for the deliveries in flight (each ends by its deadline). */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
    this.loop = null;
    await this.settled();
  }

  private wakeQueued = false;

  /** wake(), once for the deliveries that finish in one turn of the event loop */
  private wakeSoon(): void {
    if (this.wakeQueued) return;
    this.wakeQueued = true;
    setImmediate(() => {
      this.wakeQueued = false;
      this.wake();
    });
  }

  /** Look for work now (after this process wrote events, or a slot came free). */
  wake(): void {
    const s = this.sleeping;
    if (!s) return;
    this.sleeping = null;
    clearTimeout(s.timer);
    s.resolve();
  }

  /**
   * One round: events fanned out, due deliveries started (not awaited), and the other jobs' rounds; the
   * amount of work taken. Finished deliveries wake the loop (those of one turn of the event loop
   * together), so while deliveries flow a round runs the other jobs' rounds at most every pollMs, as an
   * idle loop would (their services run them at once in their own process): a delivery costs its own
   * statements and a share of a claim, not a dozen job rounds. `all`: every round now (drain).
   */
  async tick(all = false): Promise<number> {
    const events = await this.deliveries.dispatch();
    const free = this.concurrency - this.inFlight.size;
    let claimed: D[] = [];
    if (free > 0) {
      const busy = new Map<number, number>();
      for (const { hookId } of this.inFlight.values()) busy.set(hookId, (busy.get(hookId) ?? 0) + 1);
      claimed = await this.deliveries.claim(free, busy);
      for (const d of claimed) this.launch(d);
    }
    let others = 0;
    const now = performance.now();
    if (!all && now - this.roundsAt < this.pollMs) return events + claimed.length;
    this.roundsAt = now;
    for (const o of this.jobs.rounds) {
      if (o.everyMs) {
        const now = Date.now();
        if (now < (this.next.get(o) ?? 0)) continue;
        this.next.set(o, now + o.everyMs);
      }
      try {
        others += await o.run();
      } catch (e) {
        this.log.error({ err: e, jobs: o.name }, 'worker round failed');
      }
    }
    return events + claimed.length + others;
  }

  /** Rounds until nothing is due and nothing is in flight (tests, and the end of a batch). */
  async drain(): Promise<void> {
    for (;;) {
      const taken = await this.tick(true);
      if (this.inFlight.size) await this.settled();
      else if (!taken) return;
    }
  }

  /** The number of deliveries being sent. */
  get active(): number {
    return this.inFlight.size;
  }

  private launch(d: D): void {
    const done = this.deliveries
      .deliver(d)
      .catch((e) => this.log.error({ err: e, delivery: d.id, hook: d.hook_id }, 'hook delivery failed'))
      .finally(() => {
        this.inFlight.delete(d.id);
        this.wakeSoon();
      });
    this.inFlight.set(d.id, { hookId: this.deliveries.keyOf(d), done });
  }

  private async settled(): Promise<void> {
    while (this.inFlight.size) await Promise.all([...this.inFlight.values()].map((f) => f.done));
  }

  private async run(): Promise<void> {
    while (this.running) {
      let taken = 0;
      try {
        taken = await this.tick();
      } catch (e) {
        this.log.error({ err: e }, 'worker round failed');
        await this.sleep(1000);
        continue;
      }
      if (!taken) await this.sleep(this.pollMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (!this.running) return resolve();
      this.sleeping = {
        timer: setTimeout(() => {
          this.sleeping = null;
          resolve();
        }, ms),
        resolve,
      };
    });
  }
}
