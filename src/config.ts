// The only reader of process.env. Everything else receives a Config.
import { DEFAULT_GIT_BUDGET, type GitBudgetLimits } from './git/budget.ts';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/** HEARTH_TEST_FAULT's values (see PushFault in domain/repository/push-journal.ts) */
const TEST_FAULTS = ['pause-before-ref-update', 'pause-before-push-events', 'pause-before-merge-ref-update', 'pause-after-merge-ref-update'] as const;

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  externalUrl: string; // no trailing slash
  databaseUrl: string | null; // null = embedded SQLite under dataDir
  logLevel: string;
  /** LOG_FORMAT: JSON lines, or one readable line per entry for a terminal (default: pretty when stdout is one) */
  logFormat: 'json' | 'pretty';
  rootPassword: string | null;
  rootToken: string | null;
  /** Impersonation tokens may be used (GitLab: gitlab_rails['impersonation_enabled']). */
  impersonationEnabled: boolean;
  /** Run the job worker inside `serve`. */
  inProcessWorker: boolean;
  /** how often an idle worker looks for work (ms) */
  workerPollMs: number;
  /** seconds to wait before each retry of a failed hook delivery (6 tries over about an hour) */
  hookRetrySchedule: number[];
  /** outbound request timeout for hook deliveries (ms) */
  hookTimeoutMs: number;
  /** repository storage name → directory (REPOSITORY_STORAGES); unlisted storages live under <dataDir>/repositories/<name> */
  repositoryStorages: Record<string, string>;
  /** repository archive downloads per user (or IP) and minute; 0 = unlimited (GitLab: 5) */
  archiveRateLimit: number;
  /** time limit of the queries of a units search with a regular expression (ms); also the longest wait for a free slot */
  searchTimeoutMs: number;
  /** git processes at once in this process, per repository, waiting, and a request's longest wait (src/git/budget.ts) */
  gitBudget: GitBudgetLimits;
  /** time limit of one markdown render on a worker thread (ms); also the longest it waits for a thread */
  markdownTimeoutMs: number;
  /** POST /markdown calls without a user per IP and minute; 0 = unlimited */
  markdownRateLimit: number;
  /**
   * gitlab.yml's `issue_closing_pattern` (HEARTH_ISSUE_CLOSING_PATTERN, a Ruby-style regular expression with
   * `%{issue_ref}`): the statements whose issues a merge or push closes. GitLab's default when unset.
   */
  issueClosingPattern: string | null;
  /** time limit of parsing one CI configuration, in a worker thread (ms; lint, a new pipeline); also the longest wait for a thread */
  ciConfigTimeoutMs: number;
  /**
   * HEARTH_ENCRYPTION_KEYS: the keys that seal secrets at rest (CI/CD variables), comma-separated, the first
   * sealing and every one opening; empty: a key file `<dataDir>/encryption.key` made on first start.
   */
  encryptionKeys: string[];
  /**
   * Where blobs (job artifacts, later export archives and uploads) live: a directory (HEARTH_BLOB_DIR,
   * default <dataDir>/blobs) or an S3-compatible bucket when HEARTH_S3_BUCKET is set.
   */
  blobStore: BlobStoreConfig;
  /** how long a finished project export stays downloadable (hours; GitLab: 24) */
  exportTtlHours: number;
  /**
   * POST /projects/remote-import-s3 fetches from AWS S3, or from this S3-compatible endpoint
   * (HEARTH_IMPORT_S3_ENDPOINT, e.g. http://127.0.0.1:4569) with path-style addressing
   * (HEARTH_IMPORT_S3_FORCE_PATH_STYLE, default on when an endpoint is set).
   */
  importS3: { endpoint: string | null; forcePathStyle: boolean };
  /** longest wait of a runner's POST /jobs/request when no job is waiting (ms; GitLab Workhorse: 50 s) */
  jobRequestTimeoutMs: number;
  /** Hearth's (package.json) */
  version: string;
  /** the GitLab version the API answers (see GITLAB_VERSION) */
  gitlabVersion: string;
  revision: string;
  /** git over SSH (see src/ssh/): the embedded server and what ssh_url_to_repo advertises */
  ssh: SshConfig;
  /** HEARTH_METRICS_ALLOW: addresses or CIDR ranges, besides loopback, that may read GET /-/metrics (GitLab's monitoring_whitelist) */
  metricsAllow: string[];
  /** HEARTH_SLOW_REQUEST_MS: a request slower than this is logged (warn); 0 = never */
  slowRequestMs: number;
  /** HEARTH_SHUTDOWN_TIMEOUT_MS: the longest serve and worker drain on SIGTERM/SIGINT before they exit anyway */
  shutdownTimeoutMs: number;
  /** test only (HEARTH_TEST_FAULT): a push (or a merge) stops for good at that point, so a test can kill -9 there */
  testFault: (typeof TEST_FAULTS)[number] | null;
}

export type BlobStoreConfig =
  | { kind: 'local'; dir: string }
  | {
      kind: 's3';
      bucket: string;
      /** e.g. http://127.0.0.1:4569 for an S3-compatible server; unset = AWS */
      endpoint: string | null;
      region: string;
      accessKeyId: string | null;
      secretAccessKey: string | null;
      forcePathStyle: boolean;
      /** downloads answer 302 to a presigned URL instead of streaming through Hearth */
      directDownload: boolean;
    };

export interface SshConfig {
  /** HEARTH_SSH_PORT: where the embedded SSH server listens (default 2222); 0 = no SSH server */
  port: number;
  /** HEARTH_SSH_LISTEN: the address it binds (default HOST) */
  listen: string;
  /** HEARTH_SSH_HOST: the host of ssh_url_to_repo (GitLab's gitlab_ssh_host; default EXTERNAL_URL's host) */
  externalHost: string;
  /** HEARTH_SSH_EXTERNAL_PORT: the port of ssh_url_to_repo (GitLab's gitlab_shell_ssh_port; default the port, 22 when it is 0) */
  externalPort: number;
  /** HEARTH_SSH_MAX_SESSIONS: git sessions at once, all users together (more are refused) */
  maxSessions: number;
  /** HEARTH_SSH_MAX_SESSIONS_PER_USER: git sessions at once per user or deploy key */
  maxSessionsPerUser: number;
  /** HEARTH_SSH_IDLE_TIMEOUT: seconds a connection may send and receive nothing before it is closed */
  idleTimeoutMs: number;
  /** HEARTH_SSH_LOGIN_GRACE_TIME: seconds a client has to authenticate (OpenSSH's LoginGraceTime) */
  authTimeoutMs: number;
}

export class ConfigError extends Error {}

function encryptionKeys(raw: string | undefined): string[] {
  const keys = (raw ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  for (const k of keys) {
    if (k.length < 32) throw new ConfigError('HEARTH_ENCRYPTION_KEYS: each key must be at least 32 characters (e.g. `openssl rand -base64 32`)');
  }
  return keys;
}

function intVar(env: NodeJS.ProcessEnv, name: string, def: number, min = 0, max = 65535): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function boolVar(env: NodeJS.ProcessEnv, name: string, def: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Hearth's version (package.json, one directory above src/ and dist/): `hearth --version`, User-Agent, backups. */
export const VERSION = (JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
/** The GitLab version the API answers (GET /api/v4/version, /metadata; GITLAB_VERSION of exports): clients choose features by it. */
export const GITLAB_VERSION = '17.0.0';
export const REVISION = 'hearth';

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const port = intVar(env, 'PORT', 8080);
  const host = env.HOST || '0.0.0.0';
  const dataDir = path.resolve(env.DATA_DIR || './data');
  let externalUrl = env.EXTERNAL_URL || `http://localhost:${port}`;
  try {
    const u = new URL(externalUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('protocol');
  } catch {
    throw new ConfigError(`EXTERNAL_URL must be an http(s) URL, got "${externalUrl}"`);
  }
  externalUrl = externalUrl.replace(/\/+$/, '');
  const databaseUrl = env.DATABASE_URL || null;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// (leave it unset for the embedded SQLite database)');
  }
  const repositoryStorages: Record<string, string> = {};
  for (const item of (env.REPOSITORY_STORAGES || '').split(',').filter(Boolean)) {
    const m = /^([A-Za-z0-9_][A-Za-z0-9_.-]*)=(.+)$/.exec(item.trim());
    if (!m) throw new ConfigError(`REPOSITORY_STORAGES must be name=/directory[,name=/directory], got "${item}"`);
    repositoryStorages[m[1]] = path.resolve(m[2]);
  }
  const hookRetrySchedule = (env.HEARTH_HOOK_RETRY_SCHEDULE ?? '30,120,300,900,2400')
    .split(',')
    .filter((x) => x.trim() !== '')
    .map(Number);
  if (hookRetrySchedule.some((n) => !Number.isFinite(n) || n < 0)) {
    throw new ConfigError(`HEARTH_HOOK_RETRY_SCHEDULE must be seconds separated by commas, got "${env.HEARTH_HOOK_RETRY_SCHEDULE}"`);
  }
  const testFault = (env.HEARTH_TEST_FAULT || null) as Config['testFault'];
  if (testFault !== null && !TEST_FAULTS.includes(testFault)) {
    throw new ConfigError(`HEARTH_TEST_FAULT must be one of ${TEST_FAULTS.join(', ')}, got "${testFault}"`);
  }
  const blobStore: BlobStoreConfig = env.HEARTH_S3_BUCKET
    ? {
        kind: 's3',
        bucket: env.HEARTH_S3_BUCKET,
        endpoint: env.HEARTH_S3_ENDPOINT || null,
        region: env.HEARTH_S3_REGION || 'us-east-1',
        accessKeyId: env.HEARTH_S3_ACCESS_KEY_ID || null,
        secretAccessKey: env.HEARTH_S3_SECRET_ACCESS_KEY || null,
        forcePathStyle: boolVar(env, 'HEARTH_S3_FORCE_PATH_STYLE', Boolean(env.HEARTH_S3_ENDPOINT)),
        directDownload: boolVar(env, 'HEARTH_S3_DIRECT_DOWNLOAD', false),
      }
    : { kind: 'local', dir: path.resolve(env.HEARTH_BLOB_DIR || path.join(dataDir, 'blobs')) };
  const sshPort = intVar(env, 'HEARTH_SSH_PORT', 2222);
  const sshHost = env.HEARTH_SSH_HOST || new URL(externalUrl).hostname;
  if (!/^[A-Za-z0-9.:[\]-]+$/.test(sshHost)) throw new ConfigError(`HEARTH_SSH_HOST must be a host name, got "${sshHost}"`);
  const ssh: SshConfig = {
    port: sshPort,
    listen: env.HEARTH_SSH_LISTEN || host,
    externalHost: sshHost,
    externalPort: intVar(env, 'HEARTH_SSH_EXTERNAL_PORT', sshPort || 22, 1),
    maxSessions: intVar(env, 'HEARTH_SSH_MAX_SESSIONS', 128, 1, 100_000),
    maxSessionsPerUser: intVar(env, 'HEARTH_SSH_MAX_SESSIONS_PER_USER', 32, 1, 100_000),
    idleTimeoutMs: intVar(env, 'HEARTH_SSH_IDLE_TIMEOUT', 300, 1, 86_400) * 1000,
    authTimeoutMs: intVar(env, 'HEARTH_SSH_LOGIN_GRACE_TIME', 60, 1, 3600) * 1000,
  };
  const metricsAllow = (env.HEARTH_METRICS_ALLOW || '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  for (const a of metricsAllow) {
    const [ip, prefix, more] = a.split('/');
    const family = net.isIP(ip);
    if (!family || more !== undefined || (prefix !== undefined && (!/^\d{1,3}$/.test(prefix) || Number(prefix) > (family === 4 ? 32 : 128)))) {
      throw new ConfigError(`HEARTH_METRICS_ALLOW must be IP addresses or CIDR ranges separated by commas, got "${a}"`);
    }
  }
  const logLevel = (env.LOG_LEVEL || 'info').toLowerCase();
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  const logFormat = (env.LOG_FORMAT || (process.stdout.isTTY ? 'pretty' : 'json')).toLowerCase();
  if (logFormat !== 'json' && logFormat !== 'pretty') throw new ConfigError(`LOG_FORMAT must be json or pretty, got "${env.LOG_FORMAT}"`);
  return {
    port,
    host,
    dataDir,
    externalUrl,
    databaseUrl,
    logLevel,
    logFormat,
    rootPassword: env.HEARTH_ROOT_PASSWORD || null,
    rootToken: env.HEARTH_ROOT_TOKEN || null,
    impersonationEnabled: boolVar(env, 'HEARTH_IMPERSONATION_ENABLED', true),
    inProcessWorker: boolVar(env, 'HEARTH_IN_PROCESS_WORKER', true),
    workerPollMs: intVar(env, 'HEARTH_WORKER_POLL_MS', 100, 1, 60_000),
    hookRetrySchedule,
    hookTimeoutMs: intVar(env, 'HEARTH_HOOK_TIMEOUT_MS', 10_000, 100, 600_000),
    repositoryStorages,
    archiveRateLimit: intVar(env, 'HEARTH_ARCHIVE_RATE_LIMIT', 5, 0, 1_000_000),
    searchTimeoutMs: intVar(env, 'HEARTH_SEARCH_TIMEOUT_MS', 5000, 10, 600_000),
    gitBudget: {
      concurrency: intVar(env, 'HEARTH_GIT_CONCURRENCY', DEFAULT_GIT_BUDGET.concurrency, 1, 10_000),
      perRepository: intVar(env, 'HEARTH_GIT_CONCURRENCY_PER_REPOSITORY', DEFAULT_GIT_BUDGET.perRepository, 1, 10_000),
      queue: intVar(env, 'HEARTH_GIT_QUEUE', DEFAULT_GIT_BUDGET.queue, 0, 1_000_000),
      waitMs: intVar(env, 'HEARTH_GIT_QUEUE_TIMEOUT_MS', DEFAULT_GIT_BUDGET.waitMs, 1, 600_000),
    },
    markdownTimeoutMs: intVar(env, 'HEARTH_MARKDOWN_TIMEOUT_MS', 2000, 10, 600_000),
    markdownRateLimit: intVar(env, 'HEARTH_MARKDOWN_RATE_LIMIT', 30, 0, 1_000_000),
    issueClosingPattern: env.HEARTH_ISSUE_CLOSING_PATTERN || null,
    ciConfigTimeoutMs: intVar(env, 'HEARTH_CI_CONFIG_TIMEOUT_MS', 10_000, 1, 60_000),
    encryptionKeys: encryptionKeys(env.HEARTH_ENCRYPTION_KEYS),
    blobStore,
    exportTtlHours: intVar(env, 'HEARTH_EXPORT_TTL_HOURS', 24, 1, 24 * 365),
    importS3: {
      endpoint: env.HEARTH_IMPORT_S3_ENDPOINT || null,
      forcePathStyle: boolVar(env, 'HEARTH_IMPORT_S3_FORCE_PATH_STYLE', Boolean(env.HEARTH_IMPORT_S3_ENDPOINT)),
    },
    jobRequestTimeoutMs: intVar(env, 'HEARTH_JOB_REQUEST_TIMEOUT_MS', 50_000, 0, 600_000),
    version: VERSION,
    gitlabVersion: GITLAB_VERSION,
    revision: REVISION,
    ssh,
    metricsAllow,
    slowRequestMs: intVar(env, 'HEARTH_SLOW_REQUEST_MS', 1000, 0, 3_600_000),
    shutdownTimeoutMs: intVar(env, 'HEARTH_SHUTDOWN_TIMEOUT_MS', 8000, 0, 3_600_000),
    testFault,
    ...overrides,
  };
}
