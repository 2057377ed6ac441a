// Progress of a backup or restore on stderr: a bar redrawn in place on a terminal, otherwise one line
// every few seconds (logs, CI), and a last line when the step ends.
export class Progress {
  private done = 0;
  private lastLine = 0;
  private readonly tty: boolean;

  constructor(
    private readonly label: string,
    private readonly total: number,
    private readonly out: NodeJS.WriteStream | { write(s: string): unknown; isTTY?: boolean } = process.stderr,
    private readonly everyMs = 2000,
  ) {
    this.tty = Boolean(out.isTTY);
  }

  tick(what: string, n = 1): void {
    this.done += n;
    const now = Date.now();
    if (this.tty) this.out.write(`\r${this.bar()} ${what.slice(0, 40).padEnd(40)}`);
    else if (now - this.lastLine >= this.everyMs) {
      this.lastLine = now;
      this.out.write(`${this.label}: ${this.done}/${this.total} (${this.percent()}%) ${what}\n`);
    }
  }

  finish(summary = ''): void {
    if (this.tty) this.out.write(`\r${this.bar()} ${''.padEnd(40)}\n`);
    this.out.write(`${this.label}: done, ${this.done}/${this.total}${summary ? `, ${summary}` : ''}\n`);
  }

  private percent(): number {
    return this.total ? Math.min(100, Math.floor((this.done * 100) / this.total)) : 100;
  }

  private bar(): string {
    const width = 30;
    const filled = Math.round((this.percent() / 100) * width);
    return `${this.label} [${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${String(this.percent()).padStart(3)}%`;
  }
}
