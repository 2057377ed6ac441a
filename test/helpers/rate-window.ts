// Rate limits count in fixed windows aligned on the epoch (Rack::Attack's epoch / period): on a slow machine a
// sequence of requests may straddle a window's edge and see its count start over. Tests of a limit run their
// sequence through inOneWindow.

/**
 * Runs `attempt` (with fresh keys each time: its own app, users or addresses, told by `n`) so that its requests fall
 * in one window of `periodSec`. A failure is retried only when a window's edge passed during the attempt (at most
 * three times); any other failure stands.
 */
export async function inOneWindow(periodSec: number, attempt: (n: number) => Promise<void>): Promise<void> {
  const windowOf = () => Math.floor(Date.now() / (periodSec * 1000));
  for (let n = 0; ; n++) {
    const start = windowOf();
    try {
      return await attempt(n);
    } catch (e) {
      if (windowOf() === start || n >= 3) throw e;
    }
  }
}
