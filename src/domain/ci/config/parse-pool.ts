// The CI file is parsed where a deadline reaches it, never in the server's own thread: YAML's parser
// takes seconds on a 2 MB file, and lint's merged_yaml about as long again. Each parse (the YAML of
// the file and of its includes, extends, every check, merged_yaml when asked) runs in a worker thread;
// the worker asks this thread for each included file (git reads are this thread's I/O). At most
// THREADS parses run at once in a process and up to QUEUE more wait, each at most the time limit;
// past the limit the worker is terminated (and replaced on next use), and the parse answers GitLab's
// Gitlab::Ci::Config::TIMEOUT_MESSAGE as a configuration error — as does a parse the queue refuses.
import type { Worker } from 'node:worker_threads';
import { Gate, GateBusy } from '../../../lib/gate.ts';
import { readiness, startWorker, workerEntry } from '../../../lib/worker-boot.ts';
import { type CiConfig, type CiInclude, ConfigError, type FileLocation, type ReadFile, TOO_BIG } from './parse.ts';

export const TIMEOUT_MESSAGE = 'Request timed out when fetching configuration files.';
const THREADS = 2;
const QUEUE = 16;
/** a parse that needs more is a file too big, not a server out of memory */
const HEAP_MB = 512;

/** parseCiConfig's result as the worker answers it: lint's merged_yaml as text (when asked) */
export interface ParsedCi {
  config: CiConfig | null;
  errors: string[];
  warnings: string[];
  includes: CiInclude[];
  mergedYaml: string | null;
}

export interface ParseOptions {
  /** the time limit of one parse, and the longest it waits for a thread */
  timeoutMs: number;
  /** answer lint's merged_yaml */
  mergedYaml?: boolean;
}

/** Messages to the worker: a file to parse, or the answer to its read. */
export type ToWorker = { content: string; canRead: boolean; mergedYaml: boolean } | { file: { content: string | null } | { configError: string | null } };
/** Messages from the worker: `ready` once, then per parse its reads and one answer (`failed`: a stack, null when a read failed). */
export type FromWorker = { ready: true } | { read: FileLocation } | { parsed: ParsedCi } | { failed: string | null };

const failedWith = (error: string): ParsedCi => ({ config: null, errors: [error], warnings: [], includes: [], mergedYaml: null });

/**
 * The CI file `content` parsed in a worker thread (parseCiConfig): `read` gives the files
 * `include: local` names. Never throws for a bad or too slow file: the errors come back.
 */
export async function parseCiLimited(content: string, read: ReadFile | null, opts: ParseOptions): Promise<ParsedCi> {
  try {
    await gate.enter(opts.timeoutMs);
  } catch (e) {
    if (e instanceof GateBusy) return failedWith(TIMEOUT_MESSAGE);
    throw e;
  }
  let thread: ParseThread | undefined;
  try {
    thread = idle.pop() ?? new ParseThread();
    thread.busy(true);
    await thread.ready;
    return await thread.parse(content, read, opts);
  } finally {
    thread?.busy(false);
    if (thread && !thread.dead) idle.push(thread);
    gate.leave();
  }
}

/** The project's CI file read with `read` and parsed as parseCiLimited does; null when there is no such file. */
export async function parseCiFileLimited(path: string, read: ReadFile, opts: ParseOptions): Promise<ParsedCi | null> {
  let content: string | null;
  try {
    content = await read({ path });
  } catch (e) {
    if (e instanceof ConfigError) return failedWith(e.message);
    throw e;
  }
  return content === null ? null : parseCiLimited(content, read, opts);
}

const ENTRY = workerEntry(import.meta.url, 'parse.worker');

const gate = new Gate({ slots: THREADS, queue: QUEUE });
const idle: ParseThread[] = [];

interface Job {
  read: ReadFile | null;
  resolve: (r: ParsedCi) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
  /** what `read` threw that was no ConfigError (thrown again here) */
  readError?: unknown;
}

/** One worker thread; parses one file at a time. */
class ParseThread {
  readonly ready: Promise<void>;
  dead = false;
  private job: Job | null = null;
  private readonly worker: Worker;

  constructor() {
    this.worker = startWorker(ENTRY, {}, { resourceLimits: { maxOldGenerationSizeMb: HEAP_MB } });
    const { ready, started, failed } = readiness();
    this.ready = ready;
    this.worker.on('message', (m: FromWorker) => {
      if ('ready' in m) return started();
      const job = this.job;
      if (!job) return;
      if ('read' in m) return void this.answerRead(job, m.read);
      this.settle();
      if ('parsed' in m) job.resolve(m.parsed);
      else job.reject(m.failed === null ? (job.readError as Error) : new Error(`CI configuration worker: ${m.failed}`));
    });
    const fail = (e: Error & { code?: string }) => {
      this.dead = true;
      failed(e);
      const job = this.settle();
      if (job && e.code === 'ERR_WORKER_OUT_OF_MEMORY') job.resolve(failedWith(TOO_BIG));
      else job?.reject(e);
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the CI configuration worker stopped (exit code ${code})`)));
    this.worker.unref(); // after the listeners (as highlight.ts does): an idle thread never holds the process open
  }

  /** a thread at work holds the process open (a command waits for its parse), an idle one does not */
  busy(working: boolean): void {
    if (working) this.worker.ref();
    else this.worker.unref();
  }

  parse(content: string, read: ReadFile | null, opts: ParseOptions): Promise<ParsedCi> {
    if (this.dead) return Promise.reject(new Error('the CI configuration worker stopped'));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.settle();
        this.dead = true;
        void this.worker.terminate();
        resolve(failedWith(TIMEOUT_MESSAGE));
      }, opts.timeoutMs);
      this.job = { read, resolve, reject, timer };
      this.send({ content, canRead: read !== null, mergedYaml: opts.mergedYaml ?? false });
    });
  }

  /** the current job, now done (its timer cleared) */
  private settle(): Job | null {
    const job = this.job;
    this.job = null;
    if (job) clearTimeout(job.timer);
    return job;
  }

  private async answerRead(job: Job, loc: FileLocation): Promise<void> {
    let file: { content: string | null } | { configError: string | null };
    try {
      file = { content: job.read ? await job.read(loc) : null };
    } catch (e) {
      if (e instanceof ConfigError) file = { configError: e.message };
      else {
        job.readError = e;
        file = { configError: null };
      }
    }
    if (this.job === job) this.send({ file });
  }

  private send(m: ToWorker): void {
    this.worker.postMessage(m);
  }
}
