// The runner side of GitLab's runner protocol (gitlab-runner network/gitlab.go, common/network.go):
// the request and response shapes and one client for the calls a job needs. The runner token goes in
// the JSON body (jobs/request, PUT jobs/:id), the job token in a JOB-TOKEN header (trace, artifacts).
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface FeaturesInfo {
  variables: boolean;
  image: boolean;
  services: boolean;
  artifacts: boolean;
  cache: boolean;
  shared: boolean;
  upload_multiple_artifacts: boolean;
  upload_raw_artifacts: boolean;
  session: boolean;
  terminal: boolean;
  refspecs: boolean;
  masking: boolean;
  proxy: boolean;
  raw_variables: boolean;
  artifacts_exclude: boolean;
  multi_build_steps: boolean;
  trace_reset: boolean;
  trace_checksum: boolean;
  trace_size: boolean;
  vault_secrets: boolean;
  cancelable: boolean;
  return_exit_code: boolean;
  cancel_gracefully: boolean;
}

/** common.VersionInfo */
export interface VersionInfo {
  name: string;
  version: string;
  revision: string;
  platform: string;
  architecture: string;
  executor: string;
  shell: string;
  features: FeaturesInfo;
}

export interface JobVariable {
  key: string;
  value: string;
  public?: boolean;
  file?: boolean;
  masked?: boolean;
  raw?: boolean;
}

export interface JobStep {
  name: string; // script | after_script | release
  script: string[];
  timeout: number;
  when: 'on_success' | 'on_failure' | 'always';
  allow_failure: boolean;
}

export interface JobArtifact {
  name?: string;
  untracked?: boolean;
  paths?: string[];
  exclude?: string[];
  when?: 'on_success' | 'on_failure' | 'always';
  artifact_type?: string;
  artifact_format?: string;
  expire_in?: string;
}

export interface JobDependency {
  id: number;
  token: string;
  name: string;
  artifacts_file?: { filename: string; size: number } | null;
}

/** common.JobResponse (the fields this runner reads). */
export interface JobResponse {
  id: number;
  token: string;
  allow_git_fetch?: boolean;
  job_info: { name: string; stage: string; project_id: number; project_name: string; time_in_queue_seconds?: number };
  git_info: { repo_url: string; ref: string; sha: string; before_sha?: string; ref_type?: string; refspecs?: string[]; depth?: number };
  runner_info?: { timeout?: number };
  variables?: JobVariable[] | null;
  steps?: JobStep[] | null;
  artifacts?: JobArtifact[] | null;
  dependencies?: JobDependency[] | null;
  features?: Record<string, unknown>;
}

export type JobState = 'running' | 'success' | 'failed';

export interface UpdateJobRequest {
  info: VersionInfo;
  token: string;
  state: JobState;
  failure_reason?: string;
  checksum?: string;
  output?: { checksum?: string; bytesize?: number };
  exit_code?: number;
}

export interface PatchResult {
  status: number;
  /** the end of the remote log (Range "0-<n>"), when the server said */
  remoteEnd: number | null;
  /** Job-Status */
  jobStatus: string | null;
  /** X-GitLab-Trace-Update-Interval, seconds */
  updateInterval: number | null;
}

/** The runner's calls of the coordinator (GitLabClient). */
export class RunnerClient {
  private lastUpdate = '';
  constructor(
    readonly url: string,
    readonly token: string,
    readonly info: VersionInfo,
    readonly systemId: string,
  ) {}

  private api(p: string): string {
    return `${this.url.replace(/\/+$/, '')}/api/v4/${p}`;
  }

  /** fetch with our User-Agent; a server that cannot be reached is named, with the reason (not "fetch failed"). */
  private async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    try {
      return await fetch(url, { ...init, headers: { 'user-agent': `Hearth/${this.info.version}`, ...(init.headers as Record<string, string>) } });
    } catch (err) {
      if ((err as Error).name === 'AbortError') throw err;
      throw new ProtocolError(`${init.method ?? 'GET'} ${url}: ${networkReason(err)}`, 0);
    }
  }

  /** POST /runners/verify: the runner's id when the server knows the token (a glrt- token), else a ProtocolError. */
  async verify(): Promise<{ id: number; token_expires_at: string | null }> {
    const res = await this.fetch(this.api('runners/verify'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ token: this.token, system_id: this.systemId }),
    });
    if (res.status === 200) return (await res.json()) as { id: number; token_expires_at: string | null };
    await res.arrayBuffer().catch(() => undefined);
    throw new ProtocolError(res.status === 403 ? 'the server does not know this runner token' : `verifying the runner: ${res.status}`, res.status);
  }

  /** POST /runners with a registration token: the new runner's id and authentication token (glrt-…). */
  async register(input: { description?: string; tagList?: string[]; runUntagged?: boolean }): Promise<{ id: number; token: string }> {
    const res = await this.fetch(this.api('runners'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        token: this.token,
        description: input.description,
        info: this.info,
        ...(input.tagList?.length ? { tag_list: input.tagList.join(',') } : {}),
        ...(input.runUntagged !== undefined ? { run_untagged: input.runUntagged } : {}),
      }),
    });
    if (res.status === 201) return (await res.json()) as { id: number; token: string };
    const text = await res.text().catch(() => '');
    throw new ProtocolError(res.status === 403 ? 'the server refused the registration token' : `registering the runner: ${res.status} ${text}`, res.status);
  }

  /** POST /jobs/request: a job (201), or null (204: nothing for now); anything else throws. */
  async requestJob(signal?: AbortSignal): Promise<JobResponse | null> {
    const body = { info: this.info, token: this.token, system_id: this.systemId, ...(this.lastUpdate ? { last_update: this.lastUpdate } : {}) };
    const res = await this.fetch(this.api('jobs/request'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      signal,
    });
    const lu = res.headers.get('x-gitlab-last-update');
    if (lu) this.lastUpdate = lu;
    if (res.status === 201) return (await res.json()) as JobResponse;
    await res.arrayBuffer().catch(() => undefined);
    if (res.status === 204) return null;
    throw new ProtocolError(`checking for jobs: ${res.status}`, res.status);
  }

  /** PUT /jobs/:id: the status code, the Job-Status and the update interval the server answered. */
  async updateJob(id: number, req: Omit<UpdateJobRequest, 'info'>): Promise<{ status: number; jobStatus: string | null }> {
    const res = await this.fetch(this.api(`jobs/${id}`), {
      method: 'PUT',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ info: this.info, ...req }),
    });
    await res.arrayBuffer().catch(() => undefined);
    return { status: res.status, jobStatus: res.headers.get('job-status') };
  }

  /** PATCH /jobs/:id/trace with Content-Range "<start>-<end inclusive>". */
  async patchTrace(id: number, jobToken: string, content: Buffer, start: number): Promise<PatchResult> {
    const res = await this.fetch(this.api(`jobs/${id}/trace?debug_trace=false`), {
      method: 'PATCH',
      headers: { 'content-type': 'text/plain', 'content-range': `${start}-${start + content.length - 1}`, 'job-token': jobToken },
      body: new Uint8Array(content),
    });
    await res.arrayBuffer().catch(() => undefined);
    const range = res.headers.get('range');
    const end = range ? Number(range.split('-')[1]) : NaN;
    const interval = Number(res.headers.get('x-gitlab-trace-update-interval'));
    return {
      status: res.status,
      remoteEnd: Number.isFinite(end) ? end : null,
      jobStatus: res.headers.get('job-status'),
      updateInterval: Number.isFinite(interval) && interval > 0 ? interval : null,
    };
  }

  /** POST /jobs/:id/artifacts (UploadRawArtifacts): a multipart form with the archive as "file". */
  async uploadArtifacts(
    id: number,
    jobToken: string,
    file: string,
    opts: { baseName: string; format: string; type: string; expireIn?: string },
  ): Promise<{ status: number; message: string }> {
    const q = new URLSearchParams();
    if (opts.expireIn) q.set('expire_in', opts.expireIn);
    q.set('artifact_format', opts.format);
    q.set('artifact_type', opts.type);
    const { status, text } = await postMultipart(
      this.api(`jobs/${id}/artifacts?${q}`),
      { 'job-token': jobToken, 'user-agent': `Hearth/${this.info.version}` },
      'file',
      opts.baseName,
      file,
    );
    let message = text;
    try {
      const parsed = JSON.parse(text) as { message?: unknown; error?: unknown };
      message = String(parsed.message ?? parsed.error ?? text);
    } catch {
      // not JSON: the text as it is
    }
    return { status, message };
  }

  /** GET /jobs/:id/artifacts (a dependency's archive) into `dest`; the status code. */
  async downloadArtifacts(id: number, jobToken: string, dest: string): Promise<number> {
    const res = await this.fetch(this.api(`jobs/${id}/artifacts`), { headers: { 'job-token': jobToken } });
    if (res.status !== 200 || !res.body) {
      await res.arrayBuffer().catch(() => undefined);
      return res.status;
    }
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    await pipeline(Readable.fromWeb(res.body as never), fs.createWriteStream(dest));
    return 200;
  }
}

/** Why a request did not reach the server: undici's "fetch failed" carries it in its cause
 * ("connect ECONNREFUSED 127.0.0.1:8080", "getaddrinfo ENOTFOUND ci.example", one per address tried). */
export function networkReason(err: unknown): string {
  const cause = (err as { cause?: unknown }).cause ?? err;
  const c = cause as { message?: string; code?: string; errors?: { message?: string }[] };
  if (c.errors?.length) return c.errors.map((e) => e.message).join('; ');
  return c.message || c.code || String(cause);
}

/**
 * A multipart POST of one file, streamed, by node:http rather than fetch: a server may answer before
 * it has read the body (413 for an archive over the limit, then it closes the connection), and that
 * answer is what counts, not the failed write that follows.
 */
function postMultipart(url: string, headers: Record<string, string>, field: string, fileName: string, file: string): Promise<{ status: number; text: string }> {
  const boundary = `hearth-${crypto.randomBytes(12).toString('hex')}`;
  const safeName = fileName.replace(/["\r\n]/g, '_');
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${safeName}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const size = fs.statSync(file).size;
  const u = new URL(url);
  const mod = u.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = mod.request(
      u,
      {
        method: 'POST',
        headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + size + tail.length) },
      },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    req.write(head);
    const body = fs.createReadStream(file);
    body.on('error', (err) => req.destroy(err));
    body.on('end', () => req.end(tail));
    req.on('close', () => body.destroy());
    body.pipe(req, { end: false });
  });
}

export class ProtocolError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}
