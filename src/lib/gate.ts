// A counting semaphore for work that runs on a few worker threads (limited reads, CI file parses,
// markdown renders): `slots` run at once, up to `queue` more wait, each at most its own time. Optionally
// fair between clients: one client holds at most `clientSlots` and has at most `clientQueue` waiting, and
// a freed slot goes to the first waiter whose client may take one.

/** every slot is taken and the queue is full, or the wait for a slot took the whole time allowed */
export class GateBusy extends Error {
  constructor(message = 'every slot is taken') {
    super(message);
  }
}

export interface GateLimits {
  slots: number;
  queue: number;
  /** slots one client may hold (default: all) */
  clientSlots?: number;
  /** waiters one client may have (default: the whole queue) */
  clientQueue?: number;
  /** the error a refused or timed-out entry throws (default: GateBusy) */
  busy?: () => Error;
}

export class Gate {
  private active = 0;
  /** slots held, per client */
  private readonly held = new Map<string, number>();
  private readonly waiting: { client: string; go: () => void; fail: () => void }[] = [];
  private closed = false;
  private readonly clientSlots: number;
  private readonly clientQueue: number;
  private readonly busy: () => Error;

  constructor(private readonly limits: GateLimits) {
    this.clientSlots = limits.clientSlots ?? limits.slots;
    this.clientQueue = limits.clientQueue ?? limits.queue;
    this.busy = limits.busy ?? (() => new GateBusy());
  }

  /**
   * takes a slot for `client`, waiting at most `maxWaitMs`; returns the client, to hand to leave().
   * With `maxWaitMs` Infinity (work nobody waits for) the entry waits as long as it takes and is never
   * refused for a full queue (it still counts in it).
   */
  async enter(maxWaitMs: number, client = ''): Promise<string> {
    if (this.active < this.limits.slots && this.mayTake(client)) {
      this.take(client);
      return client;
    }
    if (this.closed) throw this.busy();
    const patient = maxWaitMs === Infinity;
    if (!patient && (this.waiting.length >= this.limits.queue || this.waiting.filter((w) => w.client === client).length >= this.clientQueue)) throw this.busy();
    await new Promise<void>((resolve, reject) => {
      const waiter = {
        client,
        go: () => {
          if (timer) clearTimeout(timer);
          resolve();
        },
        fail: () => {
          if (timer) clearTimeout(timer);
          reject(this.busy());
        },
      };
      const timer = patient
        ? null
        : setTimeout(() => {
            this.waiting.splice(this.waiting.indexOf(waiter), 1);
            reject(this.busy());
          }, maxWaitMs);
      this.waiting.push(waiter);
    });
    return client;
  }

  /**
   * refuses every waiter, and every later entry that finds no free slot (shutdown: the work in flight
   * goes on while there is room, nothing waits behind a queue); held slots end as they end
   */
  close(): void {
    this.closed = true;
    for (const w of this.waiting.splice(0)) w.fail();
  }

  /** frees the client's slot and hands free slots to the first waiters whose clients may take one */
  leave(client = ''): void {
    this.active--;
    const n = (this.held.get(client) ?? 1) - 1;
    if (n > 0) this.held.set(client, n);
    else this.held.delete(client);
    while (this.active < this.limits.slots) {
      const i = this.waiting.findIndex((w) => this.mayTake(w.client));
      if (i < 0) break;
      const [next] = this.waiting.splice(i, 1);
      this.take(next.client);
      next.go();
    }
  }

  load(): { running: number; waiting: number } {
    return { running: this.active, waiting: this.waiting.length };
  }

  private mayTake(client: string): boolean {
    return (this.held.get(client) ?? 0) < this.clientSlots;
  }

  private take(client: string): void {
    this.active++;
    this.held.set(client, (this.held.get(client) ?? 0) + 1);
  }
}
