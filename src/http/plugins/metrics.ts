// GET /-/metrics (Prometheus text format) and what every request adds to it: count and duration by method, route
// pattern and status class. Guarded as GitLab guards its own: loopback and the configured allowlist
// (HEARTH_METRICS_ALLOW, GitLab's monitoring_whitelist) by the socket's address, never X-Forwarded-For; anyone else
// gets the answer of an unknown path (GitLab's render_404). Also: the request id for log lines written outside the
// request logger (src/lib/request-context.ts) and the slow-request log (HEARTH_SLOW_REQUEST_MS).
import net from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import { outboxBacklog } from '../../db/outbox-backlog.ts';
import { BOUND_REQUEST_ID, requestContext } from '../../lib/request-context.ts';
import {
  collectDefaultMetrics,
  dbPoolConnections,
  dbPoolWaiting,
  hookDeliveriesOldest,
  hookDeliveriesPending,
  httpDuration,
  httpRequests,
  outboxJobs,
  outboxOldest,
  registry,
} from '../../metrics/registry.ts';

/** How long the outbox figures (two indexed queries) are reused between scrapes. */
const OUTBOX_CACHE_MS = 2000;

/** Loopback (as GitLab's default 127.0.0.0/8 and ::1) plus the configured addresses and ranges. */
export function metricsAllowList(entries: readonly string[]): (address: string | undefined) => boolean {
  const list = new net.BlockList();
  list.addSubnet('127.0.0.0', 8, 'ipv4');
  list.addAddress('::1', 'ipv6');
  for (const e of entries) {
    const [ip, prefix] = e.split('/');
    const family = net.isIP(ip) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(ip, family);
    else list.addSubnet(ip, Number(prefix), family);
  }
  return (address) => {
    if (!address) return false;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    const ip = mapped ? mapped[1] : address;
    return list.check(ip, net.isIP(ip) === 6 ? 'ipv6' : 'ipv4');
  };
}

export function metricsPlugin(app: FastifyInstance, c: Container): void {
  collectDefaultMetrics();
  const allowed = metricsAllowList(c.config.metricsAllow);
  const slowMs = c.config.slowRequestMs;

  // request loggers carry reqId already; the container's logger adds it from the request context
  app.setChildLoggerFactory((logger, bindings, opts) => {
    const child = logger.child(bindings, opts);
    (child as unknown as Record<symbol, unknown>)[BOUND_REQUEST_ID] = true;
    return child;
  });
  const enter = (req: FastifyRequest, _reply: unknown, done: () => void) => requestContext.run(req.id, done);
  app.addHook('onRequest', enter);
  app.addHook('preHandler', enter); // again: reading a body runs in the socket's context, not the request's

  const series = new Map<string, { count: ReturnType<typeof httpRequests.labels>; duration: ReturnType<typeof httpDuration.labels> }>();
  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched';
    const status = `${Math.floor(reply.statusCode / 100)}xx`;
    const key = `${req.method} ${status} ${route}`;
    let s = series.get(key);
    if (!s) {
      const labels = { method: req.method, route, status };
      s = { count: httpRequests.labels(labels), duration: httpDuration.labels(labels) };
      series.set(key, s);
    }
    const ms = reply.elapsedTime;
    s.count.inc();
    s.duration.observe(ms / 1000);
    if (slowMs > 0 && ms >= slowMs && !req.routeOptions.config.longPoll) {
      req.log.warn({ method: req.method, route, statusCode: reply.statusCode, durationMs: Math.round(ms) }, 'slow request');
    }
    done();
  });

  let outboxAt = 0;
  const refreshOutbox = async () => {
    if (Date.now() - outboxAt < OUTBOX_CACHE_MS) return;
    const { jobs, deliveries } = await outboxBacklog(c.db);
    const now = Date.now();
    const age = (iso: string | null) => (iso ? Math.max(0, (now - Date.parse(iso)) / 1000) : 0);
    outboxJobs.reset();
    outboxOldest.reset();
    for (const j of jobs) {
      outboxJobs.set({ kind: j.kind }, j.n);
      outboxOldest.set({ kind: j.kind }, age(j.oldest));
    }
    hookDeliveriesPending.set(deliveries.n);
    hookDeliveriesOldest.set(age(deliveries.oldest));
    outboxAt = now;
  };

  app.get('/-/metrics', { schema: { hide: true } }, async (req, reply) => {
    if (!allowed(req.socket.remoteAddress)) return reply.callNotFound();
    await refreshOutbox();
    const pool = c.db.pool;
    if (pool) {
      dbPoolConnections.set({ state: 'total' }, pool.totalCount);
      dbPoolConnections.set({ state: 'idle' }, pool.idleCount);
      dbPoolWaiting.set(pool.waitingCount);
    } else {
      dbPoolConnections.set({ state: 'total' }, 1);
      dbPoolWaiting.set(0);
    }
    const body = await registry.metrics();
    return reply.type(registry.contentType).send(body);
  });
}
