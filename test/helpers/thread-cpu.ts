// CPU time of one thread, read from Linux's /proc: what "the server's event loop was not held" tests measure
// instead of wall-clock waits, which a busy machine stretches (other test files, a CPU hog beside the suite).
// A main thread that renders, parses or expands for seconds spends seconds of its own CPU between two turns of
// its loop, however busy the machine; one that hands the work to worker threads spends milliseconds.
import fs from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ: the unit of utime and stime in /proc/<pid>/task/<tid>/stat

/** The CPU milliseconds (user + system) thread `tid` of process `pid` has used (the main thread: tid = pid); null where /proc is absent. */
export function threadCpuMs(pid: number, tid = pid): number | null {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // after "pid (comm) ": state is field 3; utime and stime are fields 14 and 15
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** The CPU milliseconds all threads of process `pid` have used; null where /proc is absent. */
export function processCpuMs(pid: number): number | null {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/**
 * What a request cost the server: the CPU its process used meanwhile (all threads), or where /proc is absent the
 * wall-clock time. A request that expands a CI file into millions of jobs costs a minute either way; one that
 * refuses it at once costs milliseconds of CPU however long a busy machine makes the client wait.
 */
export async function serverCost<T>(pid: number, request: () => Promise<T>): Promise<{ value: T; ms: number; unit: 'CPU' | 'wall-clock' }> {
  const perProc = processCpuMs(pid) !== null;
  const now = () => (perProc ? (processCpuMs(pid) ?? 0) : performance.now());
  const before = now();
  const value = await request();
  return { value, ms: now() - before, unit: perProc ? 'CPU' : 'wall-clock' };
}

/**
 * The longest stretch a process's main thread was busy between two moments `mark()` is called at: the CPU it
 * used from one mark to the next, the largest such step. Where /proc is absent (not Linux), the wall-clock
 * time between marks instead. Call `mark()` whenever the thread shows it is free (it answered a request, a
 * timer fired).
 */
export function busiestStretch(pid = process.pid): { mark(): void; readonly maxMs: number; readonly unit: 'CPU' | 'wall-clock' } {
  const perProc = threadCpuMs(pid) !== null;
  const now = () => (perProc ? (threadCpuMs(pid) ?? 0) : performance.now());
  let last = now();
  let maxMs = 0;
  return {
    mark() {
      const t = now();
      maxMs = Math.max(maxMs, t - last);
      last = t;
    },
    get maxMs() {
      return maxMs;
    },
    unit: perProc ? 'CPU' : 'wall-clock',
  };
}
