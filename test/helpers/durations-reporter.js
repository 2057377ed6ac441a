// A node:test reporter that prints, after the run, the time each test file spent in its tests (the sum of
// its top-level tests' durations), slowest first, as TAP comments: where the suite's time goes.
// Plain JavaScript: node loads reporters before tsx's loader is in place.
import path from 'node:path';

/** @param {AsyncIterable<{ type: string, data: any }>} source */
export default async function* durations(source) {
  /** @type {Map<string, { ms: number, tests: number }>} */
  const files = new Map();
  for await (const event of source) {
    if ((event.type !== 'test:pass' && event.type !== 'test:fail') || event.data.nesting !== 0 || !event.data.file) continue;
    const file = path.relative(process.cwd(), event.data.file);
    const entry = files.get(file) ?? { ms: 0, tests: 0 };
    entry.ms += event.data.details?.duration_ms ?? 0;
    entry.tests += 1;
    files.set(file, entry);
  }
  const rows = [...files].sort((a, b) => b[1].ms - a[1].ms);
  const total = rows.reduce((sum, [, e]) => sum + e.ms, 0);
  yield `# time in tests per file (${rows.length} files, ${(total / 1000).toFixed(1)} s in all; files run side by side, so the sum exceeds the wall time)\n`;
  for (const [file, e] of rows) yield `# ${(e.ms / 1000).toFixed(1).padStart(7)} s  ${String(e.tests).padStart(3)} tests  ${file}\n`;
}
