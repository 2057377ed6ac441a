// The one contract every registered translation file format passes, over its fixtures in
// test/formats/fixtures/<id>/: expected.json lists the cases (a file, optionally its template and
// language, the whole units parse must give, updates to apply) and the malformed files.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { FORMATS, formatIds, getFormat } from '../../src/formats/registry.ts';
import {
  FormatError,
  storedState,
  type FileFormat,
  type NewEntry,
  type ParsedFile,
  type ParsedUnit,
  type ParseOptions,
  type UnitState,
  type UnitUpdate,
} from '../../src/formats/types.ts';

interface Case {
  file: string;
  template?: string;
  language?: string;
  header?: Record<string, string>;
  units: ParsedUnit[];
  /** updates of existing units, each applied on its own */
  edits?: UnitUpdate[];
  /** updates naming template units the file lacks, each applied on its own */
  adds?: UnitUpdate[];
}

interface Expected {
  cases: Case[];
  bad: string[];
}

const FIXTURES = new URL('./fixtures/', import.meta.url);

function load(id: string): { expected: Expected; read: (name: string) => Buffer } {
  const dir = new URL(`${id}/`, FIXTURES);
  return {
    expected: JSON.parse(readFileSync(new URL('expected.json', dir), 'utf8')) as Expected,
    read: (name) => readFileSync(new URL(name, dir)),
  };
}

/** Parse again after a write and compare: the updated unit carries the update, every other unit is as before. */
function assertOnlyChanged(format: FileFormat, before: ParsedUnit[], after: ParsedFile, update: UnitUpdate) {
  const changed = after.units.find((u) => u.id === update.id);
  assert.ok(changed, `unit ${update.id} present after the write`);
  assert.deepEqual(changed.target, update.target);
  assert.equal(changed.state, storedState(format, update));
  assert.deepEqual(
    after.units.filter((u) => u.id !== update.id),
    before.filter((u) => u.id !== update.id),
  );
}

/** The first and last byte where two buffers differ: [start, oldEnd) in `a` became [start, newEnd) in `b`. */
function diffRange(a: Buffer, b: Buffer): [number, number] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let tail = 0;
  while (tail < a.length - start && tail < b.length - start && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  return [start, a.length - tail];
}

/** New strings appended one at a time: each parses as written, after every unit the file had. */
function appendCases(format: FileFormat, content: Buffer, opts: ParseOptions) {
  const before = format.parse(content, opts).units;
  const monolingual = format.monolingual === true;
  const entries: NewEntry[] = [
    { context: 'hearth-added', source: ['A new string'], target: ['Ein neuer Text'], state: 20, monolingual },
    { context: 'hearth-fuzzy', source: ['Fuzzy "one"'], target: ['Unscharf\nzwei'], state: 10, monolingual },
  ];
  if (format.appendsPlurals) entries.push({ context: '', source: ['One file', '%d files'], target: ['Ein', '%d'], state: 20, monolingual: false });
  for (const e of entries) {
    const after = format.parse(format.append!(content, e), opts).units;
    assert.deepEqual(after.slice(0, -1), before, e.context);
    const added = after.at(-1)!;
    assert.deepEqual(
      [added.context, added.source, added.target, added.state],
      [e.context, monolingual ? e.target : e.source, e.target, storedState(format, { target: e.target, state: e.state as UnitState })],
    );
  }
}

test('the registry lists every format once, sorted, and nothing else', () => {
  assert.deepEqual(formatIds(), ['aresource', 'csv', 'i18next', 'i18nextv4', 'json', 'json-nested', 'po', 'po-mono', 'properties', 'strings', 'xliff', 'yaml']);
  assert.equal(getFormat('nope'), undefined);
  for (const [id, format] of FORMATS) {
    assert.equal(format.id, id);
    assert.ok(format.name && format.extension && format.mimetype, id);
  }
});

for (const [id, format] of FORMATS) {
  describe(`format ${id}`, () => {
    const hasFixtures = existsSync(new URL(`${id}/expected.json`, FIXTURES));
    test('has fixtures', () => assert.ok(hasFixtures));
    if (!hasFixtures) return;
    const { expected, read } = load(id);

    for (const c of expected.cases) {
      describe(c.file, () => {
        const content = read(c.file);
        const template = c.template ? read(c.template) : undefined;
        const opts = { template, language: c.language };

        test('parses to the expected units', () => {
          const parsed = format.parse(content, opts);
          assert.deepEqual(parsed.units, c.units);
          assert.equal(parsed.units.length, c.units.length);
          assert.deepEqual(parsed.header, c.header);
        });

        test('writes the identical bytes when nothing changed', () => {
          const out = format.write(content, [], opts);
          assert.ok(out.equals(content));
          assert.notEqual(out, content, 'a copy, not the caller buffer');
        });

        for (const update of c.edits ?? []) {
          test(`changes only ${JSON.stringify(update.id)} (${update.target.length} form${update.target.length > 1 ? 's' : ''}, state ${update.state})`, () => {
            const out = format.write(content, [update], opts);
            assertOnlyChanged(format, c.units, format.parse(out, opts), update);
            // every byte outside the entry is unchanged
            const entry = format.locate!(content, update.id, opts);
            assert.ok(entry, 'locate finds the entry');
            const [start, end] = entry;
            assert.ok(out.subarray(0, start).equals(content.subarray(0, start)), 'the bytes before the entry are unchanged');
            assert.ok(out.subarray(out.length - (content.length - end)).equals(content.subarray(end)), 'the bytes after the entry are unchanged');
          });
        }

        for (const update of c.adds ?? []) {
          test(`adds ${JSON.stringify(update.id)} from the template`, () => {
            assert.equal(format.locate!(content, update.id, opts), undefined, 'not in the file before');
            const out = format.write(content, [update], opts);
            assertOnlyChanged(format, c.units, format.parse(out, opts), update);
            assert.ok(format.locate!(out, update.id, opts), 'in the file after');
            // the existing entries keep their bytes: the file grew by an insertion
            const [start, end] = diffRange(content, out);
            assert.equal(end, start, 'nothing of the old file was replaced');
          });
        }

        test('applies all its updates in one write', () => {
          const updates = [...(c.edits ?? []), ...(c.adds ?? [])];
          const after = format.parse(format.write(content, updates, opts), opts);
          for (const u of updates) {
            const unit = after.units.find((x) => x.id === u.id)!;
            assert.deepEqual([unit.target, unit.state], [u.target, storedState(format, u)], u.id);
          }
          assert.equal(after.units.length, c.units.length);
        });

        test('refuses an unknown unit', () => {
          assert.throws(() => format.write(content, [{ id: 'no such unit \u2603', target: ['x'], state: 20 }], opts), FormatError);
        });

        // removing and adding work on the file read alone (a template is edited as itself)
        const own = { language: c.language };

        if (format.remove) {
          test('removes each string, or answers null where no cut leaves the others intact', () => {
            const before = format.parse(content, own).units;
            const key = (u: ParsedUnit) => JSON.stringify([u.id, u.source, u.target, u.state]);
            let removed = 0;
            for (const u of before) {
              const out = format.remove!(content, u.id, own, before);
              if (!out) continue;
              removed++;
              assert.deepEqual(format.parse(out, own).units.map(key), before.filter((x) => x.id !== u.id).map(key), u.id);
              assert.equal(format.locate!(out, u.id, own), undefined, `${u.id} is gone`);
            }
            assert.ok(removed > 0, 'at least one string can be removed');
            assert.equal(format.remove!(content, 'no such unit \u2603', own), null);
          });
        }

        if (format.append) {
          test('appends new strings, the existing ones unchanged', () => {
            appendCases(format, content, own);
          });
        }
      });
    }

    if (format.append) test('appends new strings to an empty file', () => appendCases(format, Buffer.alloc(0), {}));

    for (const bad of expected.bad) {
      test(`rejects malformed ${bad} with a FormatError`, () => {
        assert.throws(
          () => format.parse(read(bad)),
          (e: unknown) => e instanceof FormatError && e.message.length > 0,
        );
      });
    }
  });
}
