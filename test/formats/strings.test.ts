import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getFormat } from '../../src/formats/registry.ts';

const strings = getFormat('strings')!;
const entry = '/* note */\n"key" = "value";\n"other" = "x";\n';

test('UTF-16 (either byte order) and UTF-8 with a BOM are written back in their own encoding', () => {
  const encodings: [string, Buffer][] = [
    ['utf-16le', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(entry, 'utf16le')])],
    ['utf-16be', Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(entry, 'utf16le').swap16()])],
    ['utf-8 with BOM', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(entry)])],
  ];
  for (const [name, src] of encodings) {
    assert.deepEqual(
      strings.parse(src).units.map((u) => [u.id, u.target[0], u.note]),
      [
        ['key', 'value', 'note'],
        ['other', 'x', ''],
      ],
      name,
    );
    const out = strings.write(src, [{ id: 'key', target: ['žluť "q"'], state: 20 }]);
    const bom = src.subarray(0, name === 'utf-8 with BOM' ? 3 : 2);
    assert.ok(out.subarray(0, bom.length).equals(bom), name);
    assert.deepEqual(
      strings.parse(out).units.map((u) => u.target[0]),
      ['žluť "q"', 'x'],
      name,
    );
  }
});

test('malformed UTF-16 is a FormatError', () => {
  assert.throws(() => strings.parse(Buffer.from([0xff, 0xfe, 0x00, 0xd8, 0x41, 0x00])), /not valid UTF-16LE/);
});
