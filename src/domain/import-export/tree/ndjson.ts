// ndjson files of the archive: written with backpressure (a slow disk never buffers a whole relation in
// memory), read line by line (readline over a stream: an archive's relation may be gigabytes).
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { once } from 'node:events';

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
 * skipped (a single-object relation ends without a newline, an array relation with one).
 */
export async function* readNdjson(file: string): AsyncGenerator<NdjsonLine> {
  const input = fs.createReadStream(file, { encoding: 'utf8' });
  const rl = readline.createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let n = -1;
  try {
    for await (const line of rl) {
      n++;
      if (line.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (e) {
        yield { lineNumber: n, error: new JsonParseError((e as Error).message) };
        continue;
      }
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        yield { lineNumber: n, error: new JsonParseError('expected a JSON object') };
        continue;
      }
      yield { lineNumber: n, value: value as Record<string, unknown> };
    }
  } finally {
    rl.close();
    input.destroy();
  }
}

/** A line of a relation file that is not a JSON object (GitLab: JSON::ParserError). */
export class JsonParseError extends Error {
  override name = 'JSON::ParserError';
}
