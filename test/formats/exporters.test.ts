// The conversions of a download (?format=): each exporter's file reads back with the matching format
// (PO, XLIFF, CSV, JSON, Android, .strings) or as a MO catalogue, with the units it was given.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EXPORTERS, getExporter, type ExportMeta, type ExportUnit } from '../../src/formats/exporters.ts';
import { getFormat } from '../../src/formats/registry.ts';

const unit = (u: Partial<ExportUnit>): ExportUnit => ({
  source: ['Hello'],
  target: ['Ahoj'],
  context: '',
  note: '',
  location: '',
  flags: '',
  explanation: '',
  state: 20,
  checksum: '0123456789abcdef',
  ...u,
});

const meta = (monolingual: boolean, fileFormat = monolingual ? 'json' : 'po'): ExportMeta => ({
  project: { name: 'Hello', slug: 'hello' },
  component: { slug: 'app', fileFormat, monolingual },
  language: { code: 'cs', name: 'Czech' },
  sourceLanguage: 'en',
  plural: { number: 3, formula: '(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2' },
  url: 'http://hearth.test/translate/hello/app/cs/',
  now: new Date('2026-11-26T17:05:00Z'),
});

const BILINGUAL = [
  unit({ source: ['Hello, "world"!'], target: ['Ahoj, „světe“!'], location: 'a.c:1, b.c:2', note: 'Greeting', checksum: '1111111111111111' }),
  unit({ source: ['Open'], target: ['Otevřít'], context: 'menu', state: 10 }),
  unit({ source: ['Apple'], target: [''], state: 0, checksum: '2222222222222222' }),
  unit({ source: ['%d file', '%d files'], target: ['%d soubor', '%d soubory', '%d souborů'], flags: 'c-format', state: 30 }),
];

const MONOLINGUAL = [
  unit({ source: ['Hello'], target: ['Ahoj\nsvěte'], context: 'greeting', note: 'On the front page' }),
  unit({ source: ['Bye'], target: ['Nashle "x"'], context: 'menu.bye' }),
  unit({ source: ['@Start'], target: ['@Začátek'], context: 'start' }),
];

test('the exporters Weblate has, minus xlsx and csv-multi', () => {
  assert.deepEqual([...EXPORTERS.keys()], ['po', 'mo', 'xliff', 'xliff11', 'tbx', 'tmx', 'csv', 'json', 'json-nested', 'aresource', 'strings']);
  assert.equal(getExporter('xlsx'), undefined);
  // monolingual-only exporters, and MO for gettext components only
  for (const name of ['json', 'json-nested', 'aresource', 'strings']) {
    assert.equal(getExporter(name)!.supports(meta(false)), false, name);
    assert.equal(getExporter(name)!.supports(meta(true)), true, name);
  }
  assert.equal(getExporter('mo')!.supports(meta(false, 'po')), true);
  assert.equal(getExporter('mo')!.supports(meta(true, 'po-mono')), true);
  assert.equal(getExporter('mo')!.supports(meta(true, 'json')), false);
});

test('po reads back: contexts, plurals, fuzzy, notes, locations, flags', () => {
  const out = getExporter('po')!.serialize(meta(false), BILINGUAL);
  const parsed = getFormat('po')!.parse(out);
  assert.equal(parsed.header!.Language, 'cs');
  assert.equal(parsed.header!['Plural-Forms'], 'nplurals=3; plural=(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2;');
  assert.deepEqual(
    parsed.units.map((u) => [u.context, u.source, u.target, u.state, u.note, u.location, u.flags]),
    [
      ['', ['Hello, "world"!'], ['Ahoj, „světe“!'], 20, 'Greeting', 'a.c:1, b.c:2', ''],
      ['menu', ['Open'], ['Otevřít'], 10, '', '', ''],
      ['', ['Apple'], [''], 0, '', '', ''],
      ['', ['%d file', '%d files'], ['%d soubor', '%d soubory', '%d souborů'], 20, '', '', 'c-format'],
    ],
  );
});

test('xliff reads back (approved, needs editing, notes); csv reads back (fuzzy, context, the formula guard)', () => {
  const xliff = getFormat('xliff')!.parse(
    getExporter('xliff')!.serialize(meta(false), [...BILINGUAL.slice(0, 3), unit({ source: ['Yes'], target: ['Ano'], context: 'yes', state: 30 })]),
  );
  assert.deepEqual(
    xliff.units.map((u) => [u.context, u.source, u.target, u.state, u.note]),
    [
      // without a context the id is the unit's checksum
      ['hello-app-cs///1111111111111111', ['Hello, "world"!'], ['Ahoj, „světe“!'], 20, 'Greeting'],
      ['menu', ['Open'], ['Otevřít'], 10, ''],
      ['hello-app-cs///2222222222222222', ['Apple'], [''], 0, ''],
      ['yes', ['Yes'], ['Ano'], 30, ''],
    ],
  );
  const csv = getFormat('csv')!.parse(getExporter('csv')!.serialize(meta(false), [...BILINGUAL.slice(0, 3), unit({ source: ['=1+1'], target: ['=2'] })]));
  assert.deepEqual(
    csv.units.map((u) => [u.context, u.source, u.target, u.state, u.note, u.location]),
    [
      ['', ['Hello, "world"!'], ['Ahoj, „světe“!'], 20, 'Greeting', 'a.c:1, b.c:2'],
      ['menu', ['Open'], ['Otevřít'], 10, '', ''],
      ['', ['Apple'], [''], 0, '', ''],
      ['', ['=1+1'], ['=2'], 20, '', ''],
    ],
  );
});

test('monolingual exporters read back with their formats: json, json-nested, aresource, strings', () => {
  const m = meta(true);
  const values = (id: string, name: string) =>
    getFormat(id)!
      .parse(getExporter(name)!.serialize(m, MONOLINGUAL))
      .units.map((u) => [u.context, u.target]);
  const expected = [
    ['greeting', ['Ahoj\nsvěte']],
    ['menu.bye', ['Nashle "x"']],
    ['start', ['@Začátek']],
  ];
  assert.deepEqual(values('json', 'json'), expected);
  assert.deepEqual(values('json-nested', 'json-nested'), expected);
  assert.deepEqual(values('aresource', 'aresource'), expected);
  assert.deepEqual(values('strings', 'strings'), expected);
  assert.equal(
    getExporter('json-nested')!.serialize(m, MONOLINGUAL).toString(),
    '{\n    "greeting": "Ahoj\\nsvěte",\n    "menu": {\n        "bye": "Nashle \\"x\\""\n    },\n    "start": "@Začátek"\n}\n',
  );
  // Android notes are comments above the entry, which the format reads as the note again
  const android = getFormat('aresource')!.parse(getExporter('aresource')!.serialize(m, MONOLINGUAL));
  assert.equal(android.units[0].note, 'On the front page');
});

test('mo: a GNU catalogue of the translated units, sorted, the header first', () => {
  const out = getExporter('mo')!.serialize(meta(false), BILINGUAL);
  assert.equal(out.readUInt32LE(0), 0x950412de);
  const n = out.readUInt32LE(8);
  const str = (table: number, i: number) =>
    out.subarray(out.readUInt32LE(table + i * 8 + 4), out.readUInt32LE(table + i * 8 + 4) + out.readUInt32LE(table + i * 8)).toString();
  const keys = Array.from({ length: n }, (_, i) => str(out.readUInt32LE(12), i));
  const values = Array.from({ length: n }, (_, i) => str(out.readUInt32LE(16), i));
  assert.deepEqual(keys, ['', '%d file\0%d files', 'Hello, "world"!']);
  assert.deepEqual(values.slice(1), ['%d soubor\0%d soubory\0%d souborů', 'Ahoj, „světe“!']);
  assert.match(values[0], /^Project-Id-Version: Czech \(Hello\)\n.*Plural-Forms: nplurals=3;/s);
  // monolingual: the key is the msgid
  const mono = getExporter('mo')!.serialize(meta(true, 'po-mono'), MONOLINGUAL.slice(0, 1));
  assert.ok(mono.includes(Buffer.from('greeting\0')));
});
