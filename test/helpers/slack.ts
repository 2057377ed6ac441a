// What a timed operation may take beyond its own limit on this machine now, measured in the same run: tests that
// check a deadline or a "refused at once" add this instead of a fixed allowance that a loaded machine overruns.
import http from 'node:http';
import type net from 'node:net';
import { Outbound } from '../../src/lib/outbound.ts';

/**
 * Ten times the slowest of three quick requests to a local server through a fresh guarded client, at least 700 ms:
 * the 700 ms on an idle machine; on a loaded one it grows with the machine's slowness, and stays far below what a
 * missing or per-phase deadline costs.
 */
export async function slack(t: { after(fn: () => unknown): void }): Promise<number> {
  const s = http.createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const o = new Outbound({});
  t.after(() => {
    void o.close();
    s.closeAllConnections();
    return new Promise<void>((r) => s.close(() => r()));
  });
  const url = `http://127.0.0.1:${(s.address() as net.AddressInfo).port}/`;
  let slowest = 0;
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    await o.request({ url, timeoutMs: 60_000, rules: { allowLocal: true, allowlist: [] } });
    slowest = Math.max(slowest, performance.now() - started);
  }
  return Math.max(700, 10 * slowest);
}
