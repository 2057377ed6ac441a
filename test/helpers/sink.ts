// A local HTTP receiver for hook deliveries: records every request, answers what the test says.
import http from 'node:http';
import type { TestContext } from 'node:test';

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
}

export interface Sink {
  /** "http://127.0.0.1:<port>" */
  url: string;
  port: number;
  received: Received[];
  /** the status to answer next (a queue; 200 when empty), or a function of the request */
  respond: number[];
  /** resolves when `n` requests have arrived (rejects after `timeoutMs`, a bound on a hang, not on speed) */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** `silent`: record each request and never answer it (a receiver that hangs; close() ends its connections) */
export async function startSink(t: TestContext | null, opts: { silent?: boolean } = {}): Promise<Sink> {
  const received: Received[] = [];
  const respond: number[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown = null;
      try {
        json = JSON.parse(body);
      } catch {}
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body, json });
      for (const w of waiters.splice(0)) (received.length >= w.n ? w.resolve : () => waiters.push(w))();
      if (opts.silent) return;
      const status = respond.shift() ?? 200;
      res.writeHead(status, { 'content-type': 'text/plain', 'x-sink': 'yes' }).end(`sink says ${status}`);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const sink: Sink = {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    respond,
    waitFor(n, timeoutMs = 60_000) {
      if (received.length >= n) return Promise.resolve(received);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`sink: ${received.length} of ${n} requests after ${timeoutMs} ms`)), timeoutMs);
        waiters.push({ n, resolve: () => (clearTimeout(timer), resolve(received)) });
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  t?.after(() => sink.close());
  return sink;
}
