// ndjson files of the archive: written with backpressure (a slow disk never buffers a whole relation in
// memory), read line by line over a stream of bytes (an archive's relation may be gigabytes), one line at
// most MAX_JSON_DOCUMENT_BYTES long (a longer one fails the import: it is never made one string).
import fs from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { jsonTooLarge, MAX_JSON_DOCUMENT_BYTES } from '../archive/layout.ts';
import { TreeError } from './errors.ts';

export class NdjsonWriter {
  private readonly out: fs.WriteStream;
  private failed: Error | null = null;
  count = 0;

  constructor(file: string) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    this.out = fs.createWriteStream(file);
    this.out.on('error', (e) => {
      this.failed = e;
    });
  }

  /** Appends one object as a line; waits when the stream's buffer is full. */
  async write(value: unknown): Promise<void> {
    if (this.failed) throw this.failed;
    this.count++;
    if (!this.out.write(`${JSON.stringify(value)}\n`)) await once(this.out, 'drain');
  }

  async close(): Promise<void> {
    if (this.failed) throw this.failed;
    this.out.end();
    await once(this.out, 'close');
    if (this.failed) throw this.failed;
  }
}

export type NdjsonLine = { lineNumber: number; value: Record<string, unknown> } | { lineNumber: number; error: Error };

/**
 * The lines of an ndjson file as objects; a line that is not a JSON object is yielded as an error (the
 * caller records it and goes on). lineNumber counts from 0 as GitLab's relation_index; blank lines are
 * skipped (a single-object relation ends without a newline, an array relation with one). Lines end at
 * `\n` (a `\r` before it is dropped), as GitLab's File.foreach. A line longer than `maxLine` bytes throws
 * TreeError (the import fails), before more than that is buffered.
 */
export async function* readNdjson(file: string, maxLine = MAX_JSON_DOCUMENT_BYTES): AsyncGenerator<NdjsonLine> {
  const input = fs.createReadStream(file);
  let n = -1;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  function* emit(bytes: Buffer): Generator<NdjsonLine> {
    n++;
    const line = bytes.toString('utf8');
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (e) {
      yield { lineNumber: n, error: new JsonParseError((e as Error).message) };
      return;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      yield { lineNumber: n, error: new JsonParseError('expected a JSON object') };
      return;
    }
    yield { lineNumber: n, value: value as Record<string, unknown> };
  }
  const tooLong = () => new TreeError(jsonTooLarge(path.basename(file)));
  try {
    for await (const chunk of input as AsyncIterable<Buffer>) {
      let start = 0;
      for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
        if (pendingBytes + nl - start > maxLine + 1) throw tooLong(); // (+1: a \r before the \n)
        const piece = chunk.subarray(start, nl);
        const whole = pending.length ? Buffer.concat([...pending, piece]) : piece;
        pending = [];
        pendingBytes = 0;
        const bytes = whole.at(-1) === 0x0d ? whole.subarray(0, -1) : whole;
        if (bytes.length > maxLine) throw tooLong();
        yield* emit(bytes);
        start = nl + 1;
      }
      if (start < chunk.length) {
        pendingBytes += chunk.length - start;
        if (pendingBytes > maxLine + 1) throw tooLong();
        pending.push(chunk.subarray(start));
      }
    }
    if (pendingBytes) {
      const whole = Buffer.concat(pending);
      if (whole.length > maxLine) throw tooLong();
      yield* emit(whole);
    }
  } finally {
    input.destroy();
  }
}

/** A line of a relation file that is not a JSON object (GitLab: JSON::ParserError). */
export class JsonParseError extends Error {
  override name = 'JSON::ParserError';
}
