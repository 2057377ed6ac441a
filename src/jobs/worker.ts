// The job worker: takes system events from the outbox and delivers them to system hooks. `serve`
// runs one in-process (HEARTH_IN_PROCESS_WORKER); `hearth worker` runs one alone. Several workers
// share the work through the leases of HookDeliveries.
import type { Logger } from 'pino';
import type { HookDeliveries } from '../domain/hooks/deliveries.ts';

export class Worker {
  private running = false;
  private loop: Promise<void> | null = null;
  private sleeping: { timer: NodeJS.Timeout; resolve: () => void } | null = null;

  constructor(
    private readonly deliveries: HookDeliveries,
    private readonly log: Logger,
    private readonly pollMs: number,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
    this.loop = null;
  }

  /** Look for work now (after this process wrote events). */
  wake(): void {
    const s = this.sleeping;
    if (!s) return;
    this.sleeping = null;
    clearTimeout(s.timer);
    s.resolve();
  }

  /** One round: events fanned out, due deliveries sent; the amount of work done. */
  async tick(): Promise<number> {
    const events = await this.deliveries.dispatch();
    const sent = await this.deliveries.deliverDue();
    return events + sent;
  }

  /** Rounds until nothing is due (tests, and the end of a batch). */
  async drain(): Promise<void> {
    while ((await this.tick()) > 0);
  }

  private async run(): Promise<void> {
    while (this.running) {
      let busy = 0;
      try {
        busy = await this.tick();
      } catch (e) {
        this.log.error({ err: e }, 'worker round failed');
        await this.sleep(1000);
        continue;
      }
      if (!busy) await this.sleep(this.pollMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (!this.running) return resolve();
      this.sleeping = { timer: setTimeout(() => { this.sleeping = null; resolve(); }, ms), resolve };
    });
  }
}
