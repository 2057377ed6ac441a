// Background work a service starts in its own process and waits for when it closes: `track` a promise;
// `kick` drains a round (a function that does what is due and answers how much it did) until it finds
// nothing, one drain at a time — a kick during a drain makes it go round again.
import { requestContext } from '../lib/request-context.ts';

export class Background {
  private readonly running = new Set<Promise<unknown>>();
  private draining: Promise<void> | null = null;
  private redrain = false;

  constructor(
    private readonly round: () => Promise<number>,
    private readonly onError: (e: unknown) => void,
  ) {}

  track(p: Promise<unknown>): void {
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
  }

  kick(): void {
    if (this.draining) {
      this.redrain = true;
      return;
    }
    const run = async () => {
      do {
        this.redrain = false;
        while ((await this.round()) > 0);
      } while (this.redrain);
    };
    // outside the request that kicked it: its log lines do not carry that request's id
    this.draining = requestContext
      .exit(run)
      .catch(this.onError)
      .finally(() => {
        this.draining = null;
      });
    this.track(this.draining);
  }

  /** Resolves when the work this process started is done (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running]);
  }
}
