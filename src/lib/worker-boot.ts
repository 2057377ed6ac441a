// How this codebase starts a worker thread: the worker's entry is TypeScript when the server runs its
// sources through tsx (bin/hearth.js, tsx --test), and the worker then registers tsx itself before
// loading it; a compiled build loads the .js beside the caller.
import { Worker, type WorkerOptions } from 'node:worker_threads';

const BOOT = `const { workerData } = require('node:worker_threads');
(async () => {
  if (workerData.tsx) (await import(workerData.tsx)).register();
  await import(workerData.entry);
})();`;

/**
 * The entry `<name>.ts` (sources) or `<name>.js` (build) beside the module at `callerUrl`
 * (its import.meta.url), as `workerData` for startWorker.
 */
export function workerEntry(callerUrl: string, name: string): { entry: string; tsx: string | null } {
  const ts = callerUrl.endsWith('.ts');
  const entry = new URL(`./${name}${ts ? '.ts' : '.js'}`, callerUrl).href;
  return { entry, tsx: ts ? import.meta.resolve('tsx/esm/api') : null };
}

/** A worker thread running `entry`; `data` joins workerData (the worker reads its own fields). */
export function startWorker(
  entry: { entry: string; tsx: string | null },
  data: Record<string, unknown> = {},
  opts: Omit<WorkerOptions, 'eval' | 'workerData'> = {},
): Worker {
  return new Worker(BOOT, { ...opts, eval: true, workerData: { ...data, ...entry } });
}
