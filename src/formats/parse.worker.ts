// The worker thread of formats/off-thread.ts: parses the files it is sent with the format registry,
// keeps their units and hands them back a batch at a time, each when the main thread asks for it.
import { parentPort } from 'node:worker_threads';
import { getFormat } from './registry.ts';
import { FormatError, type ParsedUnit } from './types.ts';
import type { ParseAnswer, ParseRequest } from './off-thread.ts';

const port = parentPort!;
/** the units of each parsed file not handed back yet, by job id */
const held = new Map<number, { units: ParsedUnit[]; at: number; batch: number }>();
const answer = (m: ParseAnswer) => port.postMessage(m);
/** Buffers arrive as plain Uint8Arrays */
const buffer = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

port.on('message', (m: ParseRequest) => {
  if ('drop' in m) {
    held.delete(m.id);
    return;
  }
  if ('next' in m) {
    const job = held.get(m.id);
    if (!job) return answer({ id: m.id, error: 'no such parsed file', formatError: false });
    const units = job.units.slice(job.at, job.at + job.batch);
    job.at += units.length;
    const done = job.at >= job.units.length;
    if (done) held.delete(m.id);
    return answer({ id: m.id, units, done });
  }
  try {
    const format = getFormat(m.format);
    if (!format) throw new Error(`unknown format ${m.format}`);
    const opts = m.opts?.template ? { ...m.opts, template: buffer(m.opts.template) } : m.opts;
    const file = format.parse(buffer(m.bytes), opts);
    if (file.units.length) held.set(m.id, { units: file.units, at: 0, batch: m.batch });
    answer({ id: m.id, header: file.header, total: file.units.length });
  } catch (e) {
    answer({ id: m.id, error: (e as Error).message, formatError: e instanceof FormatError });
  }
});
