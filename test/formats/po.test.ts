import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getFormat } from '../../src/formats/registry.ts';
import { FormatError } from '../../src/formats/types.ts';

const po = getFormat('po')!;
const write = (src: string, target: string[], state: 0 | 10 | 20 = 20, id = 'a') => po.write(Buffer.from(src), [{ id, target, state }]).toString();

test('msgstr is written like msgcat: one line when it fits 79 columns, else wrapped at spaces and after \\n', () => {
  assert.equal(write('msgid "a"\nmsgstr ""\n', ['short']), 'msgid "a"\nmsgstr "short"\n');
  const long = 'word '.repeat(20).trim();
  assert.equal(write('msgid "a"\nmsgstr ""\n', [long]), `msgid "a"\nmsgstr ""\n"${'word '.repeat(15)}"\n"${'word '.repeat(4)}word"\n`);
  assert.equal(write('msgid "a"\nmsgstr ""\n', ['one\ntwo "q"\\']), 'msgid "a"\nmsgstr ""\n"one\\n"\n"two \\"q\\"\\\\"\n');
});

test('fuzzy: added to an existing flags line, and a flags line holding only fuzzy goes away with #| lines', () => {
  assert.equal(write('#, c-format\nmsgid "a"\nmsgstr "b"\n', ['c'], 10), '#, fuzzy, c-format\nmsgid "a"\nmsgstr "c"\n');
  assert.equal(write('#. note\n#, fuzzy\n#| msgid "old"\nmsgid "a"\nmsgstr "b"\n', ['c']), '#. note\nmsgid "a"\nmsgstr "c"\n');
  // an emptied translation is not fuzzy
  assert.equal(write('#, fuzzy\nmsgid "a"\nmsgstr "b"\n', [''], 10), 'msgid "a"\nmsgstr ""\n');
});

test('the last entry without a final line break keeps none', () => {
  assert.equal(write('msgid "a"\nmsgstr "b"', ['c']), 'msgid "a"\nmsgstr "c"');
});

test('obsolete entries are no units and stay as they are', () => {
  const src = 'msgid "a"\nmsgstr "b"\n\n#~ msgid "gone"\n#~ msgstr "pryč"\n';
  assert.deepEqual(
    po.parse(Buffer.from(src)).units.map((u) => u.id),
    ['a'],
  );
  assert.equal(write(src, ['c']), src.replace('"b"', '"c"'));
});

test('a non-plural entry takes one form; unsupported charsets and broken syntax are FormatErrors', () => {
  assert.throws(() => write('msgid "a"\nmsgstr "b"\n', ['x', 'y']), FormatError);
  assert.throws(() => po.parse(Buffer.from('msgid ""\nmsgstr "Content-Type: text/plain; charset=ISO-8859-2\\n"\n')), /unsupported PO charset iso-8859-2/);
  assert.throws(() => po.parse(Buffer.from('msgid "a"\n')), /msgid without msgstr/);
  assert.throws(() => po.parse(Buffer.from('msgid "a\\q"\nmsgstr ""\n')), /invalid escape/);
  assert.throws(() => po.parse(Buffer.from([0x6d, 0xff])), /not valid UTF-8/);
});

test('po-mono adds a template entry at the end, a blank line apart, with its context and plural msgid', () => {
  const mono = getFormat('po-mono')!;
  const template = Buffer.from('msgctxt "btn"\nmsgid "save"\nmsgstr "Save"\n\nmsgid "n"\nmsgid_plural "n_plural"\nmsgstr[0] "%d file"\nmsgstr[1] "%d files"\n');
  const out = mono.write(
    Buffer.from('msgid "x"\nmsgstr "y"\n'),
    [
      { id: 'btn\u0004save', target: ['Uložit'], state: 10 },
      { id: 'n', target: ['a', 'b', 'c'], state: 20 },
    ],
    { template },
  );
  assert.equal(
    out.toString(),
    'msgid "x"\nmsgstr "y"\n\n#, fuzzy\nmsgctxt "btn"\nmsgid "save"\nmsgstr "Uložit"\n\nmsgid "n"\nmsgid_plural "n_plural"\nmsgstr[0] "a"\nmsgstr[1] "b"\nmsgstr[2] "c"\n',
  );
});

test('a unit id twice in one file is a FormatError', () => {
  assert.throws(() => po.parse(Buffer.from('msgid "a"\nmsgstr "b"\n\nmsgid "a"\nmsgstr "c"\n')), /duplicate unit "a"/);
});

test('the previous msgid of a fuzzy entry may span lines; it is not reported for a non-fuzzy one', () => {
  const src = '#, fuzzy\n#| msgctxt "c"\n#| msgid ""\n#| "old "\n#| "text"\nmsgctxt "c"\nmsgid "new text"\nmsgstr "x"\n';
  assert.equal(po.parse(Buffer.from(src)).units[0].previousSource, 'old text');
  assert.equal(po.parse(Buffer.from(src.replace('#, fuzzy\n', ''))).units[0].previousSource, '');
});
