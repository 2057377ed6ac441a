// The PO header update a commit makes (updateHeader: PO-Revision-Date, Last-Translator): a field's
// line(s) rewritten, a missing field added at the end of the header, every other byte kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getFormat } from '../../src/formats/registry.ts';

const po = getFormat('po')!;
const FIELDS = { 'PO-Revision-Date': '2026-11-26 17:05+0000', 'Last-Translator': 'Jana <jana@example.com>' };
const update = (text: string, fields: Record<string, string> = FIELDS) => po.updateHeader!(Buffer.from(text), fields).toString();

const BODY = '\n#: a.c:1\nmsgid "Hello"\nmsgstr "Ahoj"\n';

test('po and po-mono update their header; other formats have no header to update', () => {
  assert.equal(typeof getFormat('po')!.updateHeader, 'function');
  assert.equal(typeof getFormat('po-mono')!.updateHeader, 'function');
  assert.equal(getFormat('json')!.updateHeader, undefined);
});

test('present fields are rewritten in place, wrapped ones as one line', () => {
  const header = [
    'msgid ""',
    'msgstr ""',
    '"Project-Id-Version: hello 1.0\\n"',
    '"PO-Revision-Date: 2020-01-01 00:00+0000\\n"',
    '"Last-Translator: Someone with a very long name that gettext wrapped "',
    '"<someone@example.com>\\n"',
    '"Language: cs\\n"',
    '',
  ].join('\n');
  assert.equal(
    update(header + BODY),
    [
      'msgid ""',
      'msgstr ""',
      '"Project-Id-Version: hello 1.0\\n"',
      '"PO-Revision-Date: 2026-11-26 17:05+0000\\n"',
      '"Last-Translator: Jana <jana@example.com>\\n"',
      '"Language: cs\\n"',
      '',
    ].join('\n') + BODY,
  );
});

test('missing fields are added after the last header line; a last field without its \\n gets one', () => {
  assert.equal(
    update('msgid ""\nmsgstr ""\n"Language: cs\\n"\n' + BODY),
    'msgid ""\nmsgstr ""\n"Language: cs\\n"\n"PO-Revision-Date: 2026-11-26 17:05+0000\\n"\n"Last-Translator: Jana <jana@example.com>\\n"\n' + BODY,
  );
  assert.equal(
    update('msgid ""\nmsgstr ""\n"Language: cs"\n' + BODY, { 'Last-Translator': 'J <j@x.org>' }),
    'msgid ""\nmsgstr ""\n"Language: cs\\n"\n"Last-Translator: J <j@x.org>\\n"\n' + BODY,
  );
  // the header's text on the msgstr line itself
  assert.equal(
    update('msgid ""\nmsgstr "Language: cs\\n"\n' + BODY, { 'Last-Translator': 'J <j@x.org>' }),
    'msgid ""\nmsgstr "Language: cs\\n"\n"Last-Translator: J <j@x.org>\\n"\n' + BODY,
  );
  assert.equal(
    update('msgid ""\nmsgstr "Last-Translator: X\\n"\n' + BODY, { 'Last-Translator': 'J <j@x.org>' }),
    'msgid ""\nmsgstr "Last-Translator: J <j@x.org>\\n"\n' + BODY,
  );
});

test('CRLF files keep their line breaks; quotes are escaped; no header, no change', () => {
  const crlf = 'msgid ""\r\nmsgstr ""\r\n"Language: de\\n"\r\n\r\nmsgid "Save"\r\nmsgstr "Speichern"\r\n';
  assert.equal(
    update(crlf, { 'Last-Translator': 'Jan "Honza" <j@x.org>' }),
    'msgid ""\r\nmsgstr ""\r\n"Language: de\\n"\r\n"Last-Translator: Jan \\"Honza\\" <j@x.org>\\n"\r\n\r\nmsgid "Save"\r\nmsgstr "Speichern"\r\n',
  );
  const headerless = '#: a.c:1\nmsgid "Hello"\nmsgstr "Ahoj"\n';
  assert.equal(update(headerless), headerless);
  assert.equal(update('msgid ""\nmsgstr ""\n"Language: cs\\n"\n' + BODY, {}), 'msgid ""\nmsgstr ""\n"Language: cs\\n"\n' + BODY);
  // what the update wrote parses back
  const parsed = po.parse(Buffer.from(update('msgid ""\nmsgstr ""\n"Language: cs\\n"\n' + BODY)));
  assert.deepEqual(parsed.header, { Language: 'cs', 'PO-Revision-Date': '2026-11-26 17:05+0000', 'Last-Translator': 'Jana <jana@example.com>' });
  assert.deepEqual(
    parsed.units.map((u) => u.target),
    [['Ahoj']],
  );
});
