// The open-model load generator of `bench/mixed.ts`, in a worker thread of its own (started with
// `startWorker`), so that it never shares the server's event loop. Requests start at a constant arrival
// rate whatever the server's answers (k6's constant-arrival-rate, not a closed loop of connections): each
// is drawn from the weighted mix, sent through an undici agent with more connections than can ever be busy,
// and timed from the moment it was due, so a late start counts against the server, not hidden by it.
import { parentPort } from 'node:worker_threads';
import { Agent, request } from 'undici';

/** One route of the mix: its weight and the requests it draws from (`%n%` in a path or body: a number never used before). */
export interface MixRoute {
  name: string;
  weight: number;
  method: 'GET' | 'POST';
  /** `random`: any of `requests` each time; `sequence`: each once, in order (a fresh source branch per merge request) */
  pick: 'random' | 'sequence';
  requests: { path: string; body?: string }[];
}

export interface LoadPlan {
  address: string;
  headers: Record<string, string>;
  rate: number;
  seconds: number;
  routes: MixRoute[];
  /** the first `%n%` of this run (runs after one another never reuse one) */
  counterStart: number;
  timeoutMs: number;
}

export interface RouteResult {
  name: string;
  latencies: number[];
  /** status → count of the non-2xx answers (0: no answer: a timeout or a broken connection) */
  failures: Record<string, number>;
}

export interface LoadResult {
  sent: number;
  completed: number;
  elapsedS: number;
  /** how late requests started against their schedule (ms), p99 and max: the generator's own lag */
  lagP99: number;
  lagMax: number;
  routes: RouteResult[];
  counterEnd: number;
}

/** per route name, the next request of a `sequence` route: kept across runs, so that each is sent once */
const next = new Map<string, number>();

async function run(plan: LoadPlan): Promise<LoadResult> {
  const agent = new Agent({ connections: 4096, pipelining: 1, keepAliveTimeout: 30_000, headersTimeout: plan.timeoutMs, bodyTimeout: plan.timeoutMs });
  const total = plan.routes.reduce((n, r) => n + r.weight, 0);
  const cumulative: number[] = [];
  let acc = 0;
  for (const r of plan.routes) cumulative.push((acc += r.weight / total));
  const results: RouteResult[] = plan.routes.map((r) => ({ name: r.name, latencies: [], failures: {} }));
  let counter = plan.counterStart;
  // a fixed sequence of draws (the same mix on every run)
  let seed = 12_345;
  const rand = () => {
    seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const sequence = (name: string) => {
    const n = next.get(name) ?? 0;
    next.set(name, n + 1);
    return n;
  };
  const lags: number[] = [];
  let sent = 0;
  let completed = 0;
  const inFlight = new Set<Promise<void>>();

  const fire = (due: number) => {
    const x = rand();
    let i = cumulative.findIndex((c) => x < c);
    if (i < 0) i = plan.routes.length - 1;
    const route = plan.routes[i];
    const spec =
      route.pick === 'sequence' ? route.requests[sequence(route.name) % route.requests.length] : route.requests[Math.floor(rand() * route.requests.length)];
    const n = String(counter++);
    const body = spec.body?.replaceAll('%n%', n);
    lags.push(performance.now() - due);
    sent++;
    const p = (async () => {
      let status = 0;
      try {
        const res = await request(plan.address + spec.path.replaceAll('%n%', n), {
          method: route.method,
          dispatcher: agent,
          headers: { ...plan.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body,
        });
        status = res.statusCode;
        await res.body.arrayBuffer();
      } catch {
        status = 0;
      }
      const ms = performance.now() - due;
      completed++;
      // failures are timed too: they count in the percentiles as well as among the errors
      const r = results[i];
      r.latencies.push(ms);
      if (status < 200 || status >= 300) r.failures[status] = (r.failures[status] ?? 0) + 1;
    })();
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };

  const start = performance.now();
  const interval = 1000 / plan.rate;
  const count = Math.round(plan.rate * plan.seconds);
  let scheduled = 0;
  while (scheduled < count) {
    const now = performance.now();
    while (scheduled < count && start + scheduled * interval <= now) fire(start + scheduled++ * interval);
    if (scheduled < count) await new Promise((r) => setTimeout(r, Math.max(0, start + scheduled * interval - performance.now())));
  }
  await Promise.all(inFlight);
  const elapsedS = (performance.now() - start) / 1000;
  await agent.close();
  lags.sort((a, b) => a - b);
  return {
    sent,
    completed,
    elapsedS,
    lagP99: lags[Math.floor(lags.length * 0.99)] ?? 0,
    lagMax: lags[lags.length - 1] ?? 0,
    routes: results,
    counterEnd: counter,
  };
}

if (parentPort) {
  const port = parentPort;
  port.on('message', (plan: LoadPlan) => {
    run(plan).then(
      (result) => port.postMessage({ result }),
      (e: Error) => port.postMessage({ error: e.stack ?? String(e) }),
    );
  });
  port.postMessage({ ready: true });
}
