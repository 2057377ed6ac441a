// One job with the shell executor: a fresh directory, the sources at the job's commit (git fetch of
// the refspecs, detached checkout), the dependencies' artifacts, the `script` step then the
// `after_script` step in bash with the job's variables only, the artifacts zipped and uploaded, and the
// final state. The log streams to the server meanwhile (JobTrace).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { collectArtifacts, escapesRoot, extractZip, UnsafeArchive, writeZip } from './files.ts';
import type { JobArtifact, JobResponse, JobStep, RunnerClient } from './protocol.ts';
import { JobTrace } from './trace.ts';

export interface JobRunOptions {
  /** where the job's temporary directory is made */
  buildsDir: string;
  /** a short text naming the runner in the log ("on <description>") */
  runnerName: string;
  traceIntervalMs?: number;
  /** default timeout of after_script (GitLab's 5 minutes) */
  afterScriptTimeoutS?: number;
}

export interface JobResult {
  state: 'success' | 'failed';
  failureReason?: string;
  exitCode?: number;
}

const DEFAULT_JOB_TIMEOUT_S = 3600;

/** bash's $'…' quoting of any text. */
function ansiC(text: string): string {
  return `$'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}'`;
}

/** The script of a step as GitLab's bash shell writes it: each command echoed in green, then run; the first failure ends it. */
export function stepScript(lines: string[]): string {
  const out = ['set -eo pipefail', 'set +o noclobber'];
  for (const line of lines) {
    out.push(`echo ${ansiC(`\x1b[32;1m$ ${line}\x1b[0;m`)}`);
    out.push(line);
  }
  return `${out.join('\n')}\n`;
}

/** The repository URL without its credentials, for the log. */
function cleanUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return '<repository>';
  }
}

export class JobRun {
  readonly trace: JobTrace;
  private child: ChildProcess | null = null;
  private canceled = false;
  private dir = '';

  constructor(
    private readonly client: RunnerClient,
    readonly job: JobResponse,
    private readonly opts: JobRunOptions,
  ) {
    const masks = [job.token, ...(job.variables ?? []).filter((v) => v.masked && v.value.length >= 8).map((v) => v.value)];
    this.trace = new JobTrace(client, job.id, job.token, masks, opts.traceIntervalMs ?? 1000);
    this.trace.onCancel = () => this.cancel();
    this.trace.touch = () => client.updateJob(job.id, { token: job.token, state: 'running', output: this.trace.output() });
  }

  /** Stops the running step (the server canceled the job, or the runner is told to stop). */
  cancel(): void {
    this.canceled = true;
    this.kill();
  }

  private kill(): void {
    const c = this.child;
    if (!c || c.exitCode !== null || c.pid === undefined) return;
    try {
      process.kill(-c.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    setTimeout(() => {
      try {
        if (c.exitCode === null && c.pid !== undefined) process.kill(-c.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }, 2000).unref();
  }

  /** The whole job, then its final state sent (PUT); resolves with what was sent. */
  async run(): Promise<JobResult> {
    const { trace } = this;
    trace.start();
    let result: JobResult;
    try {
      result = await this.execute();
    } catch (err) {
      trace.error(`Job failed (system failure): ${err instanceof Error ? err.message : String(err)}`);
      result = { state: 'failed', failureReason: 'runner_system_failure' };
    } finally {
      if (this.dir) fs.rmSync(this.dir, { recursive: true, force: true });
    }
    if (result.state === 'success') trace.info('Job succeeded');
    trace.end();
    trace.stop();
    await trace.flush();
    await this.finish(result);
    return result;
  }

  private async finish(result: JobResult): Promise<void> {
    if (this.trace.aborted) return; // the server has finished the job already (canceled)
    for (let attempt = 0; attempt < 30; attempt++) {
      let status = 0;
      try {
        const r = await this.client.updateJob(this.job.id, {
          token: this.job.token,
          state: result.state,
          ...(result.failureReason ? { failure_reason: result.failureReason } : {}),
          output: this.trace.output(),
          ...(result.exitCode !== undefined ? { exit_code: result.exitCode } : {}),
        });
        status = r.status;
      } catch {
        status = 0;
      }
      // 202: accepted, not yet complete (the server still assembles the log); anything but a
      // network failure or a 5xx is the final answer
      if (status === 200 || (status >= 400 && status < 500)) return;
      await new Promise((r) => setTimeout(r, status === 202 ? 500 : 1000));
    }
  }

  private async execute(): Promise<JobResult> {
    const { job, trace } = this;
    const info = this.client.info;
    trace.info(`Running with ${info.name} ${info.version} (${info.revision})`);
    trace.write(`  on ${this.opts.runnerName}\n`);
    trace.info('Preparing the "shell" executor');
    fs.mkdirSync(this.opts.buildsDir, { recursive: true });
    this.dir = fs.mkdtempSync(path.join(this.opts.buildsDir, `job-${job.id}-`));
    const projectDir = path.join(this.dir, 'project');
    const tmpDir = path.join(this.dir, 'tmp');
    fs.mkdirSync(projectDir);
    fs.mkdirSync(tmpDir);
    trace.write(`Using Shell executor...\n`);

    const jobTimeoutS = job.runner_info?.timeout && job.runner_info.timeout > 0 ? job.runner_info.timeout : DEFAULT_JOB_TIMEOUT_S;
    const deadline = Date.now() + jobTimeoutS * 1000;
    const env = this.environment(projectDir, tmpDir);

    // sources
    trace.info('Getting source from Git repository');
    const fetched = await this.fetchSources(projectDir, env, deadline);
    if (this.canceled) return this.canceledResult();
    if (!fetched) return { state: 'failed', failureReason: 'script_failure' };

    // dependencies' artifacts
    for (const dep of job.dependencies ?? []) {
      if (!dep.artifacts_file) continue;
      trace.write(`Downloading artifacts for ${dep.name} (${dep.id})...\n`);
      const zipPath = path.join(tmpDir, `dep-${dep.id}.zip`);
      let status: number;
      try {
        status = await this.client.downloadArtifacts(dep.id, dep.token, zipPath);
      } catch (err) {
        trace.error(`Downloading artifacts from coordinator... error ${err instanceof Error ? err.message : ''}`);
        return { state: 'failed', failureReason: 'script_failure' };
      }
      if (status !== 200) {
        trace.error(`Downloading artifacts from coordinator... ${status === 404 ? 'not found' : status === 403 ? 'forbidden' : `failed (${status})`}`);
        return { state: 'failed', failureReason: 'script_failure' };
      }
      try {
        const n = await extractZip(zipPath, projectDir);
        trace.write(`Downloading artifacts from coordinator... ok  id=${dep.id} entries=${n}\n`);
      } catch (err) {
        trace.error(err instanceof UnsafeArchive ? `refused archive: ${err.message}` : `extracting artifacts: ${err instanceof Error ? err.message : ''}`);
        return { state: 'failed', failureReason: 'script_failure' };
      } finally {
        fs.rmSync(zipPath, { force: true });
      }
    }

    // steps: script (and release) on success of what came before; after_script always
    const steps = job.steps ?? [];
    let failed: JobResult | null = null;
    for (const step of steps.filter((s) => s.name !== 'after_script')) {
      if (failed && step.when === 'on_success') continue;
      if (!failed && step.when === 'on_failure') continue;
      trace.info(`Executing "step_${step.name}" stage of the job script`);
      const r = await this.runStep(step, projectDir, env, deadline);
      if (this.canceled) break;
      if (r.timedOut) {
        trace.error(`Job failed: execution took longer than ${jobTimeoutS}s seconds`);
        failed = { state: 'failed', failureReason: 'job_execution_timeout' };
      } else if (r.code !== 0 && !step.allow_failure && !failed) {
        trace.error(`Job failed: exit code ${r.code}`);
        failed = { state: 'failed', failureReason: 'script_failure', exitCode: r.code };
      }
    }
    const after = steps.find((s) => s.name === 'after_script');
    if (after && after.script.length && !this.trace.aborted) {
      const wasCanceled = this.canceled;
      this.canceled = false; // after_script runs on a graceful cancel as well
      trace.info('Running after_script');
      const timeoutS = after.timeout > 0 ? after.timeout : (this.opts.afterScriptTimeoutS ?? 300);
      const r = await this.runStep(after, projectDir, env, Date.now() + timeoutS * 1000);
      if (r.timedOut) trace.warn(`after_script failed, but job will continue unaffected: execution took longer than ${timeoutS}s seconds`);
      else if (r.code !== 0) trace.warn(`after_script failed, but job will continue unaffected: exit status ${r.code}`);
      this.canceled = this.canceled || wasCanceled;
    }
    if (this.canceled || this.trace.aborted) return this.canceledResult();

    const succeeded = !failed;
    const uploaded = await this.uploadArtifacts(projectDir, tmpDir, env, succeeded);
    if (failed) return failed;
    if (!uploaded) return { state: 'failed', failureReason: 'script_failure' };
    return { state: 'success', exitCode: 0 };
  }

  private canceledResult(): JobResult {
    this.trace.error('Job failed: canceled');
    return { state: 'failed', failureReason: 'job_canceled' };
  }

  /** The job's environment: its variables (file variables as files) and the runner's predefined ones; nothing of the runner's own. */
  private environment(projectDir: string, tmpDir: string): Record<string, string> {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: tmpDir,
      LANG: 'C.UTF-8',
      SHELL: '/bin/bash',
      TMPDIR: tmpDir,
      GIT_TERMINAL_PROMPT: '0',
      GIT_CONFIG_NOSYSTEM: '1',
      CI_BUILDS_DIR: this.dir,
      CI_PROJECT_DIR: projectDir,
      CI_SERVER: 'yes',
      CI_RUNNER_EXECUTABLE_ARCH: `${process.platform}/${process.arch}`,
      CI_RUNNER_VERSION: this.client.info.version,
      CI_RUNNER_REVISION: this.client.info.revision,
    };
    let n = 0;
    for (const v of this.job.variables ?? []) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(v.key)) continue;
      if (v.file) {
        const f = path.join(tmpDir, `var-${++n}-${v.key}`);
        fs.writeFileSync(f, v.value, { mode: 0o600 });
        env[v.key] = f;
      } else {
        env[v.key] = v.value;
      }
    }
    return env;
  }

  /** git init, fetch the refspecs (or the branches and tags when they are refused), checkout the SHA detached. */
  private async fetchSources(projectDir: string, env: Record<string, string>, deadline: number): Promise<boolean> {
    const { git_info: g } = this.job;
    const { trace } = this;
    if (!/^[0-9a-f]{40,64}$/.test(g.sha)) {
      trace.error('the job names no commit');
      return false;
    }
    const gitEnv = { ...env, GIT_ASKPASS: '/bin/false', GIT_CONFIG_GLOBAL: '/dev/null' };
    const git = (args: string[]) => this.spawnQuiet('git', args, projectDir, gitEnv, deadline);
    trace.write(`Fetching changes...\n`);
    let r = await git(['init', '-q', '--template=', '.']);
    if (r.code !== 0) return this.gitFailed(r.out);
    r = await git(['remote', 'add', 'origin', '--', g.repo_url]);
    if (r.code !== 0) return this.gitFailed(r.out);
    trace.write(`Created fresh repository.\n`);
    const refspecs = (g.refspecs ?? []).filter((s) => !s.startsWith('-') && !/[\0\n\r]/.test(s));
    const depth = g.depth && g.depth > 0 ? [`--depth=${g.depth}`] : [];
    const fetch = (specs: string[]) => git(['-c', 'http.followRedirects=false', 'fetch', '-q', '--no-tags', '--prune', ...depth, 'origin', '--', ...specs]);
    let fetched = refspecs.length ? await fetch(refspecs) : { code: 1, out: '' };
    if (fetched.code !== 0) fetched = await fetch(['+refs/heads/*:refs/remotes/origin/*', '+refs/tags/*:refs/tags/*']);
    if (fetched.code !== 0) return this.gitFailed(fetched.out);
    trace.write(`Checking out ${g.sha.slice(0, 8)} as detached HEAD (ref is ${g.ref})...\n`);
    r = await git(['-c', 'advice.detachedHead=false', 'checkout', '-f', '-q', g.sha, '--']);
    if (r.code !== 0 && depth.length) {
      await git(['fetch', '-q', '--unshallow', 'origin']);
      r = await git(['-c', 'advice.detachedHead=false', 'checkout', '-f', '-q', g.sha, '--']);
    }
    if (r.code !== 0) return this.gitFailed(r.out);
    trace.write(`\n`);
    return true;
  }

  private gitFailed(out: string): false {
    if (out) this.trace.write(out.endsWith('\n') ? out : `${out}\n`);
    this.trace.error('Job failed: fetching the sources failed');
    return false;
  }

  /** A command whose output is kept (not streamed): git, with the credentials masked by the trace. */
  private spawnQuiet(cmd: string, args: string[], cwd: string, env: Record<string, string>, deadline: number): Promise<{ code: number; out: string }> {
    return new Promise((resolve) => {
      const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      this.child = child;
      let out = '';
      const add = (b: Buffer) => {
        if (out.length < 64 * 1024) out += b.toString('utf8');
      };
      child.stdout!.on('data', add);
      child.stderr!.on('data', add);
      const timer = setTimeout(() => this.kill(), Math.max(0, deadline - Date.now()));
      child.on('error', (err) => {
        clearTimeout(timer);
        resolve({ code: 127, out: err.message });
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        this.child = null;
        // the URL's credentials never reach the log
        resolve({ code: code ?? 1, out: out.replaceAll(this.job.git_info.repo_url, cleanUrl(this.job.git_info.repo_url)) });
      });
    });
  }

  /** A step's script in `bash -e` (sh when there is no bash), its output streamed to the log. */
  private runStep(step: JobStep, cwd: string, env: Record<string, string>, deadline: number): Promise<{ code: number; timedOut: boolean }> {
    const scriptFile = path.join(env.TMPDIR!, `step-${step.name}.sh`);
    fs.writeFileSync(scriptFile, stepScript(step.script), { mode: 0o700 });
    const stepDeadline = step.timeout > 0 ? Math.min(deadline, Date.now() + step.timeout * 1000) : deadline;
    const shell = fs.existsSync('/bin/bash') ? ['/bin/bash', ['--noprofile', '--norc', '-e', scriptFile]] : ['/bin/sh', ['-e', scriptFile]];
    return new Promise((resolve) => {
      if (this.canceled) return resolve({ code: 1, timedOut: false });
      const child = spawn(shell[0] as string, shell[1] as string[], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      this.child = child;
      let timedOut = false;
      const decoder = new TextDecoder();
      const onData = (b: Buffer) => this.trace.write(decoder.decode(b, { stream: true }));
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      const timer = setTimeout(
        () => {
          timedOut = true;
          this.kill();
        },
        Math.max(0, stepDeadline - Date.now()),
      );
      child.on('error', (err) => {
        clearTimeout(timer);
        this.trace.error(err.message);
        resolve({ code: 127, timedOut: false });
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        this.child = null;
        resolve({ code: code ?? (signal ? 128 + 15 : 1), timedOut });
      });
    });
  }

  /** Every artifacts entry whose `when` fits the outcome: zipped and uploaded; false when one upload failed. */
  private async uploadArtifacts(projectDir: string, tmpDir: string, env: Record<string, string>, succeeded: boolean): Promise<boolean> {
    const { trace, job } = this;
    let ok = true;
    const wanted = (a: JobArtifact) => {
      const when = a.when ?? 'on_success';
      return when === 'always' || (when === 'on_success' && succeeded) || (when === 'on_failure' && !succeeded);
    };
    for (const [i, a] of (job.artifacts ?? []).entries()) {
      if (!wanted(a)) continue;
      const type = a.artifact_type ?? 'archive';
      const format = a.artifact_format ?? 'zip';
      if (format !== 'zip') {
        trace.warn(`artifacts of format ${format} (${type}) are not supported by this runner: skipped`);
        continue;
      }
      trace.info(`Uploading artifacts for ${succeeded ? 'successful' : 'failed'} job`);
      let untracked: string[] = [];
      if (a.untracked) {
        const r = await this.spawnQuiet('git', ['ls-files', '-o', '-z', '--exclude-standard'], projectDir, env, Date.now() + 60_000);
        untracked = r.code === 0 ? r.out.split('\0').filter(Boolean) : [];
      }
      const paths = (a.paths ?? []).filter((p) => {
        if (!escapesRoot(p)) return true;
        trace.warn(`${p}: artifact path is not a subpath of project directory`);
        return false;
      });
      const { files, warnings } = collectArtifacts(projectDir, paths, a.exclude ?? [], untracked);
      for (const w of warnings) trace.warn(w);
      if (!files.length) {
        trace.error('No files to upload');
        continue;
      }
      trace.write(`Uploading artifacts...\n`);
      for (const f of files) trace.write(`${f}: found\n`);
      const zipPath = path.join(tmpDir, `artifacts-${i}.zip`);
      await writeZip(projectDir, files, zipPath);
      const baseName = `${(a.name || 'artifacts').replace(/[/\\]/g, '_')}.zip`;
      let r: { status: number; message: string };
      try {
        r = await this.client.uploadArtifacts(job.id, job.token, zipPath, { baseName, format, type, expireIn: a.expire_in });
      } catch (err) {
        r = { status: 0, message: err instanceof Error ? err.message : String(err) };
      } finally {
        fs.rmSync(zipPath, { force: true });
      }
      if (r.status === 201) {
        trace.write(`Uploading artifacts as "${type}" to coordinator... 201 Created  id=${job.id} responseStatus=201 Created\n`);
      } else {
        ok = false;
        const why = r.status === 413 ? 'too large archive' : r.status === 403 ? 'forbidden' : `failed (${r.status || 'network'})`;
        trace.error(`Uploading artifacts as "${type}" to coordinator... ${why}  id=${job.id} ${r.message}`);
      }
    }
    return ok;
  }
}
