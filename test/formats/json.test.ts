import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getFormat } from '../../src/formats/registry.ts';
import { FormatError, type UnitUpdate } from '../../src/formats/types.ts';

const write = (id: string, src: string, updates: UnitUpdate[], opts: { template?: string; language?: string } = {}) =>
  getFormat(id)!
    .write(Buffer.from(src), updates, { template: opts.template === undefined ? undefined : Buffer.from(opts.template), language: opts.language })
    .toString();

const template = '{"menu": {"open": "Open", "close": "Close"}, "title": "Title"}';

test("new keys fill Weblate's empty {} and an empty file, four spaces deep", () => {
  const updates: UnitUpdate[] = [
    { id: 'menu.open', target: ['Otevřít'], state: 20 },
    { id: 'title', target: ['Titulek'], state: 20 },
  ];
  const expected = '{\n    "menu": {\n        "open": "Otevřít"\n    },\n    "title": "Titulek"\n}\n';
  assert.equal(write('json-nested', '{}\n', updates, { template }), expected);
  assert.equal(write('json-nested', '', updates, { template }), expected);
  // flat JSON adds the dotted key at the top
  assert.equal(write('json', '{}', updates, { template }), '{\n    "menu.open": "Otevřít",\n    "title": "Titulek"\n}');
});

test('a one-line object gets its new keys on the same line', () => {
  assert.equal(
    write('json-nested', '{"title": "T"}', [{ id: 'menu.close', target: ['Zavřít'], state: 20 }], { template }),
    '{"title": "T", "menu": {"close": "Zavřít"}}',
  );
});

test('values are JSON-escaped; numbers, booleans, null and arrays are no units', () => {
  const src = '{"a": "x", "n": 1, "b": true, "z": null, "l": ["q"]}';
  assert.deepEqual(
    getFormat('json')!
      .parse(Buffer.from(src))
      .units.map((u) => u.id),
    ['a'],
  );
  assert.equal(write('json', src, [{ id: 'a', target: ['"\n\u0001'], state: 20 }]), src.replace('"x"', '"\\"\\n\\u0001"'));
});

test('i18next v3: key_0… for a language without exactly two forms; a key/key_plural pair does not turn into those', () => {
  const v3 = '{\n  "m": "one",\n  "m_plural": "many"\n}\n';
  assert.equal(
    write('i18next', '{\n  "x": "y"\n}\n', [{ id: 'm', target: ['a', 'b', 'c'], state: 20 }], { template: v3, language: 'cs' }),
    '{\n  "x": "y",\n  "m_0": "a",\n  "m_1": "b",\n  "m_2": "c"\n}\n',
  );
  assert.equal(write('i18next', v3, [{ id: 'm', target: ['1', '2'], state: 20 }]), v3.replace('"one"', '"1"').replace('"many"', '"2"'));
  assert.throws(() => write('i18next', v3, [{ id: 'm', target: ['a', 'b', 'c'], state: 20 }], { language: 'cs' }), FormatError);
});

test('i18next v4: forms go to the CLDR categories of the language; a count that fits neither it nor the file is refused', () => {
  const src = '{"n_one": "1", "n_other": "n"}';
  assert.equal(write('i18nextv4', src, [{ id: 'n', target: ['a', 'b', 'c'], state: 20 }], { language: 'ro' }), '{"n_one": "a", "n_other": "c", "n_few": "b"}');
  assert.throws(() => write('i18nextv4', src, [{ id: 'n', target: ['a', 'b', 'c'], state: 20 }], { language: 'en' }), /3 plural forms/);
  // a lone key with a plural-looking suffix is a plain key
  assert.deepEqual(
    getFormat('i18nextv4')!
      .parse(Buffer.from('{"done_one": "x"}'))
      .units.map((u) => [u.id, u.plural]),
    [['done_one', false]],
  );
});

test('malformed JSON reports where', () => {
  assert.throws(() => getFormat('json')!.parse(Buffer.from('{\n  "a": "b" "c"\n}')), /expected ',' or '}' at line 2, column 12/);
  assert.throws(() => getFormat('json')!.parse(Buffer.from('"just a string"')), /top level must be an object/);
});
