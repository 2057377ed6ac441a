// readNdjson: the lines of a relation file as objects, split on bytes (CRLF, a last line without a newline,
// lines across read chunks); a line longer than the limit fails the whole read with GitLab's message and
// is never made one string.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TreeError } from '../../../src/domain/import-export/tree/errors.ts';
import { readNdjson } from '../../../src/domain/import-export/tree/ndjson.ts';

function file(t: { after: (fn: () => void) => void }, content: string | Buffer): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-ndjson-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const f = path.join(dir, 'issues.ndjson');
  fs.writeFileSync(f, content);
  return f;
}

async function all(f: string, maxLine?: number) {
  const out: unknown[] = [];
  for await (const l of readNdjson(f, maxLine)) out.push('error' in l ? { lineNumber: l.lineNumber, error: l.error.message } : l);
  return out;
}

test('lines as objects: CRLF, blank lines, a broken line, a last line without a newline, a line across read chunks', async (t) => {
  const long = 'é'.repeat(100_000); // 200 kB: spans several 64 kB chunks, multi-byte characters cut between them
  const f = file(t, `{"a":1}\r\n\n[1]\n{"b":"${long}"}\r\nnot json\n{"c":3}`);
  const got = (await all(f)) as any[];
  assert.deepEqual(got[0], { lineNumber: 0, value: { a: 1 } });
  assert.deepEqual(got[1], { lineNumber: 2, error: 'expected a JSON object' });
  assert.deepEqual(got[2], { lineNumber: 3, value: { b: long } });
  assert.equal(got[3].lineNumber, 4);
  assert.match(got[3].error, /JSON/);
  assert.deepEqual(got[4], { lineNumber: 5, value: { c: 3 } });
  assert.equal(got.length, 5);
});

test('a line longer than the limit: TreeError "JSON exceeds 50 MB limit in <file>" (in the middle, and as the last line); at the limit it is read', async (t) => {
  const line = (n: number) => `{"t":"${'a'.repeat(n - 8)}"}`;
  assert.deepEqual(await all(file(t, `${line(300_000)}\r\n${line(300_000)}`), 300_000), [
    { lineNumber: 0, value: { t: 'a'.repeat(300_000 - 8) } },
    { lineNumber: 1, value: { t: 'a'.repeat(300_000 - 8) } },
  ]);
  for (const content of [`{"a":1}\n${line(300_001)}\n{"a":2}\n`, `{"a":1}\n${line(300_001)}`, `${line(1_000_000)}\n`]) {
    const seen: unknown[] = [];
    await assert.rejects(
      (async () => {
        for await (const l of readNdjson(file(t, content), 300_000)) seen.push(l);
      })(),
      (e: Error) => e instanceof TreeError && e.message === 'JSON exceeds 50 MB limit in issues.ndjson',
    );
    assert.ok(seen.length <= 1);
  }
});
