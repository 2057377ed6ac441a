// The process's metrics (prom-client), served by GET /-/metrics (src/http/plugins/metrics.ts). One registry per
// process, as Prometheus scrapes a process: the series are module-level, so the places that count (git, the
// database, hook deliveries, translation scans) import them without a container. Labels stay bounded: route
// patterns, never URLs; status classes; kinds and outcomes from code.
import client from 'prom-client';

export const registry = new client.Registry();

let defaults = false;
/** Node's process metrics (CPU, memory, event loop lag, GC, handles), started once by the first app built. */
export function collectDefaultMetrics(): void {
  if (defaults) return;
  defaults = true;
  client.collectDefaultMetrics({ register: registry });
}

const FAST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

// HTTP (GitLab's and Gitea's names)
export const httpRequests = new client.Counter({
  name: 'http_requests_total',
  help: 'HTTP requests answered, by method, route pattern and status class',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});
export const httpDuration = new client.Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time from a request to its response, by method, route pattern and status class',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: FAST_BUCKETS,
  registers: [registry],
});

// database
export const dbQueryDuration = new client.Histogram({
  name: 'hearth_db_query_duration_seconds',
  help: 'Database statements, by kind (select, insert, update, delete, raw) and outcome',
  labelNames: ['operation', 'outcome'] as const,
  buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
  registers: [registry],
});
export const dbPoolConnections = new client.Gauge({
  name: 'hearth_db_pool_connections',
  help: 'PostgreSQL pool connections by state (total, idle); the embedded SQLite database has one connection',
  labelNames: ['state'] as const,
  registers: [registry],
});
export const dbPoolWaiting = new client.Gauge({
  name: 'hearth_db_pool_waiting_clients',
  help: 'Queries waiting for a free PostgreSQL pool connection',
  registers: [registry],
});

// response cache
export const responseCacheRequests = new client.Counter({
  name: 'hearth_response_cache_requests_total',
  help: 'Lookups of the response cache of hot lists, by route pattern and result (hit, miss, shared: a miss that waited for the same computation)',
  labelNames: ['route', 'result'] as const,
  registers: [registry],
});

// outbox and hooks (gauges set at scrape time)
export const outboxJobs = new client.Gauge({
  name: 'hearth_outbox_jobs',
  help: 'Jobs waiting or running in the outbox (the jobs table), by kind',
  labelNames: ['kind'] as const,
  registers: [registry],
});
export const outboxOldest = new client.Gauge({
  name: 'hearth_outbox_oldest_job_age_seconds',
  help: 'Age of the oldest job waiting or running in the outbox, by kind',
  labelNames: ['kind'] as const,
  registers: [registry],
});
export const hookDeliveriesPending = new client.Gauge({
  name: 'hearth_hook_deliveries_pending',
  help: 'Hook deliveries not yet delivered nor given up (first tries and scheduled retries)',
  registers: [registry],
});
export const hookDeliveriesOldest = new client.Gauge({
  name: 'hearth_hook_deliveries_oldest_pending_age_seconds',
  help: 'Age of the oldest pending hook delivery',
  registers: [registry],
});
export const hookDeliveries = new client.Counter({
  name: 'hearth_hook_deliveries_total',
  help: 'Hook delivery attempts, by hook type (system, web) and outcome (delivered, retry, failed)',
  labelNames: ['hook_type', 'outcome'] as const,
  registers: [registry],
});

// git
export const gitProcesses = new client.Gauge({
  name: 'hearth_git_processes',
  help: 'git processes running now, by git command',
  labelNames: ['command'] as const,
  registers: [registry],
});
export const gitCommands = new client.Counter({
  name: 'hearth_git_commands_total',
  help: 'git processes started, by git command',
  labelNames: ['command'] as const,
  registers: [registry],
});
export const catFileProcesses = new client.Gauge({
  name: 'hearth_git_cat_file_processes',
  help: 'Long-lived git cat-file processes of the read pool, by mode (batch, check)',
  labelNames: ['mode'] as const,
  registers: [registry],
});

// translation
export const translationScans = new client.Histogram({
  name: 'hearth_translation_scan_duration_seconds',
  help: 'Scans of translation components (repository files to translations and units), by outcome',
  labelNames: ['outcome'] as const,
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [registry],
});
export const translationScanFiles = new client.Counter({
  name: 'hearth_translation_scan_files_parsed_total',
  help: 'Translation files parsed by scans (files whose blob did not change are skipped)',
  registers: [registry],
});

const GIT_COMMAND = /^[a-z][a-z0-9-]{0,39}$/;
/** The git subcommand of an argument list (after `-c name=value` and other global options), for a bounded label. */
export function gitCommandOf(args: readonly string[]): string {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '-c' || a === '-C' || a === '--git-dir' || a === '--work-tree' || a === '--namespace') {
      i++;
      continue;
    }
    if (a.startsWith('-')) continue;
    return GIT_COMMAND.test(a) ? a : 'other';
  }
  return 'other';
}

/** Counts a started git process until it ends. */
export function trackGitProcess(args: readonly string[], child: { pid?: number; once(event: 'close' | 'error', f: () => void): unknown }): void {
  const command = gitCommandOf(args);
  gitCommands.inc({ command });
  if (child.pid === undefined) return; // did not start (its 'error' follows)
  gitProcesses.inc({ command });
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    gitProcesses.dec({ command });
  };
  child.once('close', end);
  child.once('error', end);
}

const KINDS: Record<string, string> = { SelectQueryNode: 'select', InsertQueryNode: 'insert', UpdateQueryNode: 'update', DeleteQueryNode: 'delete' };
/** Kysely's `log` option: every statement's duration. */
export function observeQuery(event: { level: 'query' | 'error'; query: { query: { kind: string } }; queryDurationMillis: number }): void {
  dbQueryDuration.observe(
    { operation: KINDS[event.query.query.kind] ?? 'raw', outcome: event.level === 'error' ? 'error' : 'ok' },
    event.queryDurationMillis / 1000,
  );
}

/** Times a translation scan and counts the files it parsed. */
export async function timedScan<R extends { parsed: number }>(scan: () => Promise<R>): Promise<R> {
  const end = translationScans.startTimer();
  try {
    const r = await scan();
    end({ outcome: 'ok' });
    translationScanFiles.inc(r.parsed);
    return r;
  } catch (e) {
    end({ outcome: 'error' });
    throw e;
  }
}
