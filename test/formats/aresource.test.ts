import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeAndroid, unescapeAndroid } from '../../src/formats/aresource.format.ts';
import { getFormat } from '../../src/formats/registry.ts';
import { FormatError } from '../../src/formats/types.ts';

const android = getFormat('aresource')!;
const value = (inner: string) => android.parse(Buffer.from(`<resources><string name="s">${inner}</string></resources>`)).units[0].target[0];

test("Android's unescaping: whitespace collapses outside quotes, escapes resolve, unknown escapes drop", () => {
  assert.equal(value('  two\n    lines  '), 'two lines');
  assert.equal(value('"  kept  "'), '  kept  ');
  assert.equal(value('It\\\'s \\"ok\\" \\@ \\? \\\\'), 'It\'s "ok" @ ? \\');
  assert.equal(value('tab\\tnew\\nline \\nafter'), 'tab\tnew\nline\nafter');
  assert.equal(value('\\u00e9\\u2615 \\x'), 'é☕ ');
  assert.equal(value('a &amp; &lt;b&gt; <![CDATA[<raw>]]>'), 'a & <b> <raw>');
  assert.equal(value("<b>bold</b>  &amp; it\\'s"), "<b>bold</b> &amp; it's");
  assert.throws(() => value('\\uZZZZ'), FormatError);
  assert.equal(unescapeAndroid(' a ', false), ' a ');
});

test("Android's escaping: quotes, backslash, newline, a leading @ or ?, spaces kept by quoting", () => {
  assert.equal(escapeAndroid('It\'s "x"\n\\', true), 'It\\\'s \\"x\\"\\n\\\\');
  assert.equal(escapeAndroid('@string/x', true), '\\@string/x');
  assert.equal(escapeAndroid('?attr', true), '\\?attr');
  assert.equal(escapeAndroid(' lead', true), '" lead"');
  assert.equal(escapeAndroid('a  b', false), 'a \\u0020b');
  for (const s of ['plain', 'It\'s "x"\n\\', '@x', '  spaced  out ', 'a < b & c']) {
    const out = android.write(Buffer.from('<resources><string name="s">x</string></resources>'), [{ id: 's', target: [s], state: 20 }]);
    assert.equal(android.parse(out).units[0].target[0], s, s);
  }
});

test("units are added to Weblate's empty <resources></resources> and to <resources/>", () => {
  const template = Buffer.from(
    '<resources>\n    <string name="a">A</string>\n    <plurals name="p"><item quantity="one">1</item><item quantity="other">n</item></plurals>\n</resources>\n',
  );
  const updates = [
    { id: 'a', target: ['x'], state: 20 as const },
    { id: 'p', target: ['1', '2', '3', '4'], state: 20 as const },
  ];
  const expected =
    '<resources>\n    <string name="a">x</string>\n    <plurals name="p">\n        <item quantity="one">1</item>\n        <item quantity="few">2</item>\n' +
    '        <item quantity="many">3</item>\n        <item quantity="other">4</item>\n    </plurals>\n</resources>';
  assert.equal(android.write(Buffer.from('<resources></resources>'), updates, { template, language: 'cs' }).toString(), expected);
  assert.equal(android.write(Buffer.from('<resources/>'), updates, { template, language: 'cs' }).toString(), expected);
});

test('read-only strings refuse updates; plurals read in CLDR order, limited to the language', () => {
  const src = Buffer.from(
    '<resources><string name="r" translatable="false">x</string><plurals name="p"><item quantity="other">n</item><item quantity="zero">0</item><item quantity="one">1</item></plurals></resources>',
  );
  assert.throws(() => android.write(src, [{ id: 'r', target: ['y'], state: 20 }]), /read-only/);
  assert.deepEqual(android.parse(src).units[1].target, ['0', '1', 'n']);
  assert.deepEqual(android.parse(src, { language: 'en' }).units[1].target, ['1', 'n']);
});
