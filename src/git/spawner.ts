// The server's side of the git spawner (spawner.mjs): run-to-completion git commands are started by a small child
// process instead of the server itself. Starting a process copies the page tables of the process that starts it, on
// its event loop: from a server of a few hundred megabytes each git command cost 5–15 ms of the loop's time, from
// the spawner about 2 ms of its own. Requests and answers travel over the child's IPC channel (V8 serialization,
// buffers as they are). The spawner starts with the first command, holds the process open only while a command
// runs, and is started again after it died (the commands it was running fail with GitError). Streaming commands
// (upload-pack, receive-pack, archive, cat-file) keep their pipes to the server: command.ts's spawnGit.
import { type ChildProcess, fork } from 'node:child_process';
import { EventEmitter } from 'node:events';

export interface SpawnerRequest {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  input?: Buffer | string;
  timeoutMs: number;
  maxBytes: number;
}

export type SpawnerAnswer =
  | { error: string }
  | { error?: undefined; code: number | null; signal: NodeJS.Signals | null; stdout: Buffer | null; stderr: string; tooBig: boolean };

const SCRIPT = new URL('./spawner.mjs', import.meta.url);

class Spawner {
  private child: ChildProcess | null = null;
  private readonly pending = new Map<number, (a: SpawnerAnswer) => void>();
  private nextId = 1;

  run(req: SpawnerRequest): Promise<SpawnerAnswer> {
    const child = this.child ?? this.start();
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      if (this.pending.size === 1) this.hold(true);
      child.send({ id, ...req }, (e) => {
        if (e) this.settle(id, { error: `git spawner: ${e.message}` });
      });
    });
  }

  private start(): ChildProcess {
    // no execArgv: not the server's loaders (tsx) or flags; the spawner needs Node's built-ins only
    const child = fork(SCRIPT, [], { execArgv: [], serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child = child;
    child.on('message', (m: SpawnerAnswer & { id: number }) => {
      const { id, ...answer } = m;
      if (answer.error === undefined && answer.stdout) answer.stdout = Buffer.from(answer.stdout.buffer, answer.stdout.byteOffset, answer.stdout.byteLength);
      this.settle(id, answer as SpawnerAnswer);
    });
    const gone = (why: string) => {
      if (this.child !== child) return;
      this.child = null;
      const waiting = [...this.pending.values()];
      this.pending.clear();
      for (const resolve of waiting) resolve({ error: `git spawner ${why}` });
    };
    child.on('exit', (code, signal) => gone(`exited (${signal ?? code})`));
    child.on('error', (e) => gone(`failed: ${e.message}`));
    if (this.pending.size === 0) this.hold(false);
    return child;
  }

  private settle(id: number, answer: SpawnerAnswer): void {
    const resolve = this.pending.get(id);
    if (!resolve) return;
    this.pending.delete(id);
    if (this.pending.size === 0) this.hold(false);
    resolve(answer);
  }

  /** the spawner keeps the process open only while a command of it runs */
  private hold(on: boolean): void {
    const child = this.child as (ChildProcess & { channel?: { ref(): void; unref(): void } }) | null;
    if (!child) return;
    if (on) {
      child.ref();
      child.channel?.ref();
    } else {
      child.unref();
      child.channel?.unref();
    }
  }

  /** stops the spawner (tests; a server's exit ends it anyway: it leaves when its channel closes); its commands fail */
  stop(): void {
    this.child?.kill();
  }
}

export const spawner = new Spawner();

/** what metrics' trackGitProcess follows: a started command, until it closes */
export class SpawnedCommand extends EventEmitter {
  readonly pid = 0;
}
