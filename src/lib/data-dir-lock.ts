// Who uses a data directory. `serve` and `worker` (several may share one DATA_DIR) and `backup restore` each
// keep a file DATA_DIR/locks/<host>-<pid>.json while they run: { pid, host, command, since }. A process
// removes its file when it exits; one killed (kill -9, a crash, a power cut) leaves it behind, and the next
// reader finds it stale — same host, that pid no longer running — and removes it. A file of another host
// (a data directory on a shared volume) cannot be checked and counts as held.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface Holder {
  pid: number;
  host: string;
  /** what runs: "serve", "worker", "backup restore" */
  command: string;
  /** when it started (ISO-8601) */
  since: string;
  file: string;
}

export function locksDir(dataDir: string): string {
  return path.join(dataDir, 'locks');
}

/** Writes this process's file (removed on exit); `release()` removes it sooner. */
export function holdDataDir(dataDir: string, command: string): { file: string; release(): void } {
  const dir = locksDir(dataDir);
  fs.mkdirSync(dir, { recursive: true });
  const host = os.hostname();
  const file = path.join(dir, `${host}-${process.pid}.json`);
  const record = { pid: process.pid, host, command, since: new Date().toISOString() };
  // written whole, then renamed: a reader never sees half a file
  fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(record)}\n`);
  fs.renameSync(`${file}.tmp`, file);
  const release = () => {
    fs.rmSync(file, { force: true });
    process.off('exit', release);
  };
  process.on('exit', release);
  return { file, release };
}

function running(h: Holder): boolean {
  if (h.host !== os.hostname()) return true;
  try {
    process.kill(h.pid, 0);
    return true;
  } catch (e) {
    // EPERM: it runs, as another user
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The other processes that hold `dataDir` now; the files of those gone are removed and returned as `stale`. */
export function dataDirHolders(dataDir: string): { live: Holder[]; stale: Holder[] } {
  const dir = locksDir(dataDir);
  const live: Holder[] = [];
  const stale: Holder[] = [];
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return { live, stale };
  }
  for (const name of names.filter((n) => n.endsWith('.json')).sort()) {
    const file = path.join(dir, name);
    let h: Holder;
    try {
      const r = JSON.parse(fs.readFileSync(file, 'utf8')) as Omit<Holder, 'file'>;
      if (!Number.isInteger(r.pid) || typeof r.host !== 'string') continue;
      h = { pid: r.pid, host: r.host, command: String(r.command), since: String(r.since), file };
    } catch {
      continue; // removed meanwhile, or not ours
    }
    if (h.pid === process.pid && h.host === os.hostname()) continue;
    if (running(h)) live.push(h);
    else {
      fs.rmSync(file, { force: true });
      stale.push(h);
    }
  }
  return { live, stale };
}

/** "hearth serve (pid 123, since 2026-01-02T03:04:05.678Z)", with the host when it is another. */
export function describeHolder(h: Holder): string {
  return `hearth ${h.command} (pid ${h.pid}${h.host === os.hostname() ? '' : ` on ${h.host}`}, since ${h.since})`;
}
