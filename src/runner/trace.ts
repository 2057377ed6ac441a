// The job log as the runner sends it (gitlab-runner network/trace.go): kept whole in memory, masked,
// sent by PATCH …/trace from the first byte the server lacks, about every second (or the interval
// the server asks for), and the server's Job-Status watched for a cancel.
import zlib from 'node:zlib';
import type { RunnerClient } from './protocol.ts';

export class JobTrace {
  private buf: Buffer[] = [];
  private size = 0;
  private sent = 0;
  private timer: NodeJS.Timeout | null = null;
  private sending: Promise<void> | null = null;
  private intervalMs: number;
  /** the server said the job is canceled (or failed, or the token is no longer valid) */
  aborted = false;
  /** the server asked for a graceful cancel (canceling) */
  canceling = false;
  onCancel: (() => void) | null = null;

  constructor(
    private readonly client: RunnerClient,
    private readonly jobId: number,
    private readonly jobToken: string,
    private readonly masks: string[],
    intervalMs = 1000,
  ) {
    this.intervalMs = intervalMs;
  }

  private mask(text: string): string {
    let out = text;
    for (const m of this.masks) if (m) out = out.split(m).join('[MASKED]');
    return out;
  }

  write(text: string): void {
    const b = Buffer.from(this.mask(text), 'utf8');
    this.buf.push(b);
    this.size += b.length;
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
        await this.flush();
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

  /** Sends what the server lacks (one PATCH at a time); a range mismatch (416) resends from where the server is. */
  async flush(): Promise<void> {
    while (this.sending) await this.sending;
    if (this.sent >= this.size || this.aborted) return;
    this.sending = (async () => {
      for (let attempt = 0; attempt < 3 && this.sent < this.size; attempt++) {
        const all = this.contents();
        const chunk = all.subarray(this.sent);
        let r: Awaited<ReturnType<RunnerClient['patchTrace']>>;
        try {
          r = await this.client.patchTrace(this.jobId, this.jobToken, Buffer.from(chunk), this.sent);
        } catch {
          return; // the network: the next tick tries again
        }
        if (r.updateInterval) this.intervalMs = Math.max(1000, Math.min(r.updateInterval * 1000, 30_000));
        if (r.jobStatus === 'canceled' || r.jobStatus === 'failed' || r.status === 403) {
          this.aborted = true;
          this.onCancel?.();
          return;
        }
        if (r.jobStatus === 'canceling' && !this.canceling) {
          this.canceling = true;
          this.onCancel?.();
        }
        if (r.status === 202) {
          this.sent += chunk.length;
          return;
        }
        if (r.status === 416 && r.remoteEnd !== null && r.remoteEnd <= this.size) {
          this.sent = r.remoteEnd;
          continue;
        }
        if (r.status === 404) {
          this.aborted = true;
          this.onCancel?.();
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
