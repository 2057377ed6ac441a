// The job log as the runner sends it (gitlab-runner network/trace.go): kept whole in memory, masked,
// sent by PATCH …/trace from the first byte the server lacks, about every second (or the interval
// the server asks for), and the server's Job-Status watched for a cancel.
import zlib from 'node:zlib';
import type { RunnerClient } from './protocol.ts';

/**
 * Nothing to send for this long: ask for the job's status (PUT state=running) so that a cancel is seen
 * soon. The server's X-GitLab-Trace-Update-Interval (60 s unless someone watches the log) is an
 * upper bound for gitlab-runner; this runner asks as often as GitLab does for a watched log.
 */
const TOUCH_INTERVAL_MS = 3000;

/**
 * Masks secrets in a stream of text (gitlab-runner's masking writer): a secret split between two writes is
 * still masked, since the end of a write that could begin a secret is held back until the next write (or
 * the end) shows whether it does.
 */
export class Masker {
  private held = '';
  private readonly masks: string[];
  private readonly longest: number;

  constructor(masks: string[]) {
    this.masks = [...new Set(masks.filter(Boolean))].sort((a, b) => b.length - a.length);
    this.longest = this.masks[0]?.length ?? 0;
  }

  write(text: string): string {
    if (!this.longest) return text;
    let out = this.held + text;
    for (const m of this.masks) if (out.includes(m)) out = out.split(m).join('[MASKED]');
    // the longest end of the text that begins some secret (shorter than it) waits for the next write
    let keep = 0;
    for (let k = Math.min(this.longest - 1, out.length); k > 0; k--) {
      const tail = out.slice(out.length - k);
      if (this.masks.some((m) => m.length > k && m.startsWith(tail))) {
        keep = k;
        break;
      }
    }
    this.held = out.slice(out.length - keep);
    return out.slice(0, out.length - keep);
  }

  end(): string {
    const rest = this.held;
    this.held = '';
    return rest;
  }
}

export class JobTrace {
  private buf: Buffer[] = [];
  private size = 0;
  private sent = 0;
  private timer: NodeJS.Timeout | null = null;
  private sending: Promise<void> | null = null;
  private readonly intervalMs: number;
  /** the server said the job is canceled (or failed, or the token is no longer valid) */
  aborted = false;
  /** the server asked for a graceful cancel (canceling) */
  canceling = false;
  onCancel: (() => void) | null = null;
  /** the last contact with the server about this job (ms) */
  private contact = Date.now();
  /** PUT jobs/:id with state running (gitlab-runner's touchJob): asks for the job's status when there is nothing to send */
  touch: (() => Promise<{ status: number; jobStatus: string | null }>) | null = null;

  constructor(
    private readonly client: RunnerClient,
    private readonly jobId: number,
    private readonly jobToken: string,
    private readonly masks: string[],
    intervalMs = 1000,
  ) {
    this.intervalMs = intervalMs;
    this.masker = new Masker(masks);
  }

  private readonly masker: Masker;

  write(text: string): void {
    this.append(this.masker.write(text));
  }

  private append(text: string): void {
    if (!text) return;
    const b = Buffer.from(text, 'utf8');
    this.buf.push(b);
    this.size += b.length;
  }

  /** No more output of the job: what the masker held back (a beginning of a secret that never came whole) goes out. */
  end(): void {
    this.append(this.masker.end());
  }

  /** A line of the runner's own (GitLab's colours: section text bold green, errors bold red). */
  info(text: string): void {
    this.write(`\x1b[32;1m${text}\x1b[0;m\n`);
  }
  warn(text: string): void {
    this.write(`\x1b[0;33mWARNING: ${text}\x1b[0;m\n`);
  }
  error(text: string): void {
    this.write(`\x1b[31;1mERROR: ${text}\x1b[0;m\n`);
  }

  contents(): Buffer {
    if (this.buf.length > 1) this.buf = [Buffer.concat(this.buf)];
    return this.buf[0] ?? Buffer.alloc(0);
  }

  /** common.JobTraceOutput: crc32 of the whole log and its size. */
  output(): { checksum: string; bytesize: number } {
    const all = this.contents();
    return { checksum: `crc32:${zlib.crc32(all).toString(16).padStart(8, '0')}`, bytesize: all.length };
  }

  start(): void {
    const tick = () => {
      this.timer = setTimeout(async () => {
        if (this.sent < this.size) await this.flush();
        else if (Date.now() - this.contact >= TOUCH_INTERVAL_MS) await this.touchJob();
        if (this.timer) tick();
      }, this.intervalMs);
      this.timer.unref?.();
    };
    tick();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async touchJob(): Promise<void> {
    if (!this.touch || this.aborted) return;
    this.contact = Date.now();
    let r: { status: number; jobStatus: string | null };
    try {
      r = await this.touch();
    } catch {
      return;
    }
    this.remoteStatus(r.status, r.jobStatus);
  }

  /** What the server says of the job: canceled, failed or a refused token end it; canceling asks for a graceful stop. */
  private remoteStatus(status: number, jobStatus: string | null): boolean {
    if (jobStatus === 'canceled' || jobStatus === 'failed' || status === 403 || status === 404) {
      this.aborted = true;
      this.onCancel?.();
      return true;
    }
    if (jobStatus === 'canceling' && !this.canceling) {
      this.canceling = true;
      this.onCancel?.();
    }
    return false;
  }

  /** Sends what the server lacks (one PATCH at a time); a range mismatch (416) resends from where the server is. */
  async flush(): Promise<void> {
    while (this.sending) await this.sending;
    if (this.sent >= this.size || this.aborted) return;
    this.sending = (async () => {
      for (let attempt = 0; attempt < 3 && this.sent < this.size; attempt++) {
        const all = this.contents();
        const chunk = all.subarray(this.sent);
        let r: Awaited<ReturnType<RunnerClient['patchTrace']>>;
        this.contact = Date.now();
        try {
          r = await this.client.patchTrace(this.jobId, this.jobToken, Buffer.from(chunk), this.sent);
        } catch {
          return; // the network: the next tick tries again
        }
        if (this.remoteStatus(r.status, r.jobStatus)) return;
        if (r.status === 202) {
          this.sent += chunk.length;
          return;
        }
        if (r.status === 416 && r.remoteEnd !== null && r.remoteEnd <= this.size) {
          this.sent = r.remoteEnd;
          continue;
        }
        return;
      }
    })();
    try {
      await this.sending;
    } finally {
      this.sending = null;
    }
  }
}
