// Parsing a big file off the event loop. A format's parse() is synchronous: a 300,000-unit PO file
// takes seconds, and in the server's own thread nothing else (not even /-/health) would answer
// meanwhile. Files over SYNC_PARSE_MAX go to a worker thread, which parses them, keeps the units and
// hands them back a batch at a time: the caller takes a batch in, deals with it, and the next one is
// asked for once the event loop went round. So no turn of the loop copies in more than a batch, and a
// caller that keeps only what it needs of each batch never holds the whole file's units (a heap of
// 300,000 units makes every garbage collection long). Smaller files are parsed at once.
import type { Worker } from 'node:worker_threads';
import { startWorker, workerEntry } from '../lib/worker-boot.ts';
import { FormatError, type FileFormat, type ParsedFile, type ParsedUnit, type ParseOptions } from './types.ts';

/** Files up to this size are parsed in the calling thread. */
export const SYNC_PARSE_MAX = 64 * 1024;
/** Units per message from the worker. */
const BATCH = 2000;

/** To the worker: a file to parse, the next batch of a parsed one, or drop what is left of one. */
export type ParseRequest =
  | { id: number; format: string; bytes: Uint8Array; opts: ParseOptions | undefined; batch: number }
  | { id: number; next: true }
  | { id: number; drop: true };
/** From the worker: a file parsed (its header and count) or not, then its units a batch at a time. */
export type ParseAnswer =
  | { id: number; header: ParsedFile['header']; total: number }
  | { id: number; units: ParsedUnit[]; done: boolean }
  | { id: number; error: string; formatError: boolean };

/**
 * A parsed file's units, in batches: iterate once (`for await`), or `discard()` them. Stopping early
 * (break, throw) discards the rest.
 */
export interface UnitBatches extends AsyncIterable<ParsedUnit[]> {
  total: number;
  header: ParsedFile['header'];
  discard(): void;
}

const ENTRY = workerEntry(import.meta.url, 'parse.worker');

let worker: Worker | null = null;
let nextId = 0;
/** the one answer each job waits for */
const waiting = new Map<number, { resolve: (m: ParseAnswer) => void; reject: (e: Error) => void }>();

/** The worker thread (started by the first big file, then kept; it does not hold the process open). */
function thread(): Worker {
  if (worker) return worker;
  const w = startWorker(ENTRY);
  const fail = (e: Error) => {
    if (worker === w) worker = null;
    for (const job of waiting.values()) job.reject(e);
    waiting.clear();
  };
  w.on('message', (m: ParseAnswer) => {
    const job = waiting.get(m.id);
    waiting.delete(m.id);
    job?.resolve(m);
  });
  w.on('error', fail);
  w.on('exit', (code) => fail(new Error(`the parsing worker stopped (exit code ${code})`)));
  w.unref(); // after the listeners: adding a 'message' listener refs the worker again
  worker = w;
  return w;
}

function ask(w: Worker, request: ParseRequest): Promise<ParseAnswer> {
  return new Promise((resolve, reject) => {
    waiting.set(request.id, { resolve, reject });
    w.postMessage(request);
  });
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * `format.parse(bytes, opts)` as batches of units, parsed in a worker thread when the file is big.
 * Throws what parse() throws (FormatError with the format's message for a malformed file) before any
 * batch.
 */
export async function parseInBatches(format: FileFormat, bytes: Buffer, opts?: ParseOptions): Promise<UnitBatches> {
  if (bytes.length <= SYNC_PARSE_MAX) {
    const file = format.parse(bytes, opts);
    return {
      total: file.units.length,
      header: file.header,
      discard() {},
      async *[Symbol.asyncIterator]() {
        if (file.units.length) yield file.units;
      },
    };
  }
  const w = thread();
  const id = ++nextId;
  // the bytes are copied: the request's buffer may be a slice of a larger pooled one
  const parsed = await ask(w, { id, format: format.id, bytes: new Uint8Array(bytes), opts, batch: BATCH });
  if ('error' in parsed) throw parsed.formatError ? new FormatError(parsed.error) : new Error(parsed.error);
  if (!('total' in parsed)) throw new Error('the parsing worker answered out of turn');
  let held = parsed.total > 0;
  const discard = () => {
    if (held) w.postMessage({ id, drop: true } satisfies ParseRequest);
    held = false;
  };
  return {
    total: parsed.total,
    header: parsed.header,
    discard,
    async *[Symbol.asyncIterator]() {
      try {
        while (held) {
          await nextTurn();
          const m = await ask(w, { id, next: true });
          if ('error' in m) throw new Error(m.error);
          if (!('units' in m)) throw new Error('the parsing worker answered out of turn');
          if (m.done) held = false;
          yield m.units;
        }
      } finally {
        discard();
      }
    },
  };
}

/** Every unit of the batches at once: for callers that need them all. */
export async function allUnits(batches: UnitBatches): Promise<ParsedUnit[]> {
  const units: ParsedUnit[] = [];
  for await (const batch of batches) for (const u of batch) units.push(u);
  return units;
}

/** `format.parse(bytes, opts)`, in a worker thread when the file is big (see parseInBatches). */
export async function parseOffThread(format: FileFormat, bytes: Buffer, opts?: ParseOptions): Promise<ParsedFile> {
  const batches = await parseInBatches(format, bytes, opts);
  const units = await allUnits(batches);
  return batches.header === undefined ? { units } : { units, header: batches.header };
}
