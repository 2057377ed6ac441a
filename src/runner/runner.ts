// `hearth runner`: asks the server for jobs (POST /jobs/request, long-polling) with a runner
// authentication token and runs each with the shell executor (JobRun), up to `concurrent` at once.
// The first SIGINT/SIGTERM stops taking jobs and lets the running ones finish; a second cancels them.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { JobRun, type JobResult } from './job.ts';
import { RunnerClient, type FeaturesInfo, type VersionInfo } from './protocol.ts';

export interface RunnerOptions {
  url: string;
  token: string;
  /** take one job (or none) and exit */
  once?: boolean;
  concurrent?: number;
  buildsDir?: string;
  /** trace PATCH interval (default 1 s) */
  traceIntervalMs?: number;
  /** pause after a 204 or an error before asking again (default 1 s; the server long-polls anyway) */
  idleMs?: number;
  log?: (line: string) => void;
}

export const FEATURES: FeaturesInfo = {
  variables: true,
  image: false,
  services: false,
  artifacts: true,
  cache: false,
  shared: false,
  upload_multiple_artifacts: true,
  upload_raw_artifacts: true,
  session: false,
  terminal: false,
  refspecs: true,
  masking: true,
  proxy: false,
  raw_variables: true,
  artifacts_exclude: true,
  multi_build_steps: true,
  trace_reset: false,
  trace_checksum: true,
  trace_size: true,
  vault_secrets: false,
  cancelable: true,
  return_exit_code: true,
  cancel_gracefully: true,
};

function packageVersion(): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

export function versionInfo(): VersionInfo {
  return {
    name: 'hearth-runner',
    version: packageVersion(),
    revision: process.env.HEARTH_REVISION || 'unknown',
    platform: process.platform,
    architecture: process.arch === 'x64' ? 'amd64' : process.arch,
    executor: 'shell',
    shell: 'bash',
    features: FEATURES,
  };
}

export function defaultBuildsDir(): string {
  return path.join(os.tmpdir(), 'hearth-runner');
}

/** The runner's system id ("s_" and 12 hex digits), kept in the builds directory so it stays the same across runs. */
export function systemId(buildsDir: string): string {
  const file = path.join(buildsDir, '.runner_system_id');
  try {
    const id = fs.readFileSync(file, 'utf8').trim();
    if (/^[sr]_[0-9a-zA-Z]{12}$/.test(id)) return id;
  } catch {
    // not yet
  }
  const id = `s_${crypto.randomBytes(6).toString('hex')}`;
  fs.mkdirSync(buildsDir, { recursive: true });
  fs.writeFileSync(file, `${id}\n`);
  return id;
}

export class Runner {
  readonly client: RunnerClient;
  readonly buildsDir: string;
  private stopping = false;
  private readonly polls = new Set<AbortController>();
  readonly running = new Set<JobRun>();
  readonly results: { id: number; result: JobResult }[] = [];
  private readonly log: (line: string) => void;

  constructor(readonly opts: RunnerOptions) {
    if (!/^https?:\/\//.test(opts.url)) throw new Error('--url must be an http(s) URL');
    if (!opts.token) throw new Error('--token is required');
    this.buildsDir = path.resolve(opts.buildsDir ?? defaultBuildsDir());
    this.client = new RunnerClient(opts.url, opts.token, versionInfo(), systemId(this.buildsDir));
    this.log = opts.log ?? ((line) => process.stderr.write(`${line}\n`));
  }

  /** Stop taking jobs (the running ones finish); `cancel` also stops them. */
  stop(cancel = false): void {
    this.stopping = true;
    for (const c of this.polls) c.abort();
    if (cancel) for (const j of this.running) j.cancel();
  }

  /** Runs until stopped (or, with `once`, after one job or none); resolves with the number of jobs run. */
  async run(): Promise<number> {
    const n = this.opts.once ? 1 : Math.max(1, this.opts.concurrent ?? 1);
    const workers = Array.from({ length: n }, () => this.worker());
    await Promise.all(workers);
    return this.results.length;
  }

  private async worker(): Promise<void> {
    while (!this.stopping) {
      const ac = new AbortController();
      this.polls.add(ac);
      let job: Awaited<ReturnType<RunnerClient['requestJob']>> = null;
      try {
        job = await this.client.requestJob(ac.signal);
      } catch (err) {
        if (this.stopping) break;
        const status = (err as { status?: number }).status;
        this.log(
          `Checking for jobs... ${status === 403 ? 'forbidden (check the runner token)' : `failed: ${err instanceof Error ? err.message : String(err)}`}`,
        );
        if (status === 403 || this.opts.once) throw err;
      } finally {
        this.polls.delete(ac);
      }
      if (!job) {
        if (this.opts.once) return;
        await new Promise((r) => setTimeout(r, this.opts.idleMs ?? 1000));
        continue;
      }
      this.log(`Checking for jobs... received  job=${job.id} repo_url=${safeUrl(job.git_info?.repo_url)}`);
      const run = new JobRun(this.client, job, {
        buildsDir: this.buildsDir,
        runnerName: `hearth-runner ${this.opts.token.replace(/^glrt-/, '').slice(0, 8)}`,
        traceIntervalMs: this.opts.traceIntervalMs,
      });
      this.running.add(run);
      try {
        const result = await run.run();
        this.results.push({ id: job.id, result });
        this.log(`Job ${result.state}  job=${job.id}${result.failureReason ? ` reason=${result.failureReason}` : ''}`);
      } finally {
        this.running.delete(run);
      }
      if (this.opts.once) return;
    }
  }
}

function safeUrl(url: string | undefined): string {
  if (!url) return '';
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return '';
  }
}
