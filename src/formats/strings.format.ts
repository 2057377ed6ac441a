// Apple .strings, monolingual: `"key" = "value";` entries, /* … */ and // comments above an entry as its
// note. Xcode writes UTF-16 with a byte-order mark; UTF-8 (with or without one) is read too, and a file is
// written back in the encoding it came in.

import { FormatError, STATE_EMPTY, STATE_TRANSLATED } from './types.ts';
import { decode, lineCol, newlineOf } from './support/text.ts';
import { defineFormat, keyValueUnit, type Entry } from './support/units.ts';

interface StringsEntry {
  /** the value's quoted string, quotes included */
  valueStart: number;
  valueEnd: number;
}

export const stringsFormat = defineFormat<StringsEntry>({
  id: 'strings',
  name: 'iOS strings (UTF-16)',
  monolingual: true,
  extension: 'strings',
  mimetype: 'text/plain',
  states: [STATE_EMPTY, STATE_TRANSLATED],
  scan(content) {
    const file = decode(content);
    const text = file.text;
    let pos = 0;
    const fail = (what: string): never => {
      throw new FormatError(`invalid .strings file: ${what} at ${lineCol(text, pos)}`);
    };
    const comments: string[] = [];
    /** whitespace and comments; the comments right above an entry are its note */
    const skip = () => {
      for (;;) {
        const start = pos;
        while (pos < text.length && /\s/.test(text[pos])) pos++;
        if (/\n[ \t]*\r?\n/.test(text.slice(start, pos))) comments.length = 0; // a blank line detaches comments from the next entry
        if (text.startsWith('/*', pos)) {
          const end = text.indexOf('*/', pos + 2);
          if (end < 0) fail('unterminated comment');
          comments.push(text.slice(pos + 2, end).trim());
          pos = end + 2;
        } else if (text.startsWith('//', pos)) {
          const end = text.indexOf('\n', pos);
          comments.push(text.slice(pos + 2, end < 0 ? text.length : end).trim());
          pos = end < 0 ? text.length : end + 1;
        } else return;
      }
    };
    const string = (): { value: string; start: number; end: number } => {
      const start = pos;
      if (text[pos] === '"') {
        let value = '';
        for (pos++; text[pos] !== '"'; pos++) {
          if (pos >= text.length) fail('unterminated string');
          if (text[pos] !== '\\') {
            value += text[pos];
            continue;
          }
          const e = text[++pos];
          const hex = /^[uU]([0-9a-fA-F]{4})/.exec(text.slice(pos, pos + 5));
          if (hex) {
            value += String.fromCharCode(parseInt(hex[1], 16));
            pos += 4;
          } else value += { n: '\n', t: '\t', r: '\r', 0: '\0' }[e] ?? e;
        }
        pos++;
        return { value, start, end: pos };
      }
      const bare = /^[A-Za-z0-9_.$:/-]+/.exec(text.slice(pos));
      if (!bare) fail('expected a string');
      pos += bare![0].length;
      return { value: bare![0], start, end: pos };
    };
    const entries: Entry<StringsEntry>[] = [];
    for (;;) {
      skip();
      if (pos >= text.length) break;
      const key = string();
      skip();
      if (text[pos] !== '=') fail("expected '='");
      pos++;
      skip();
      const value = string();
      skip();
      if (text[pos] !== ';') fail("expected ';'");
      pos++;
      entries.push({
        start: key.start,
        end: pos,
        data: { valueStart: value.start, valueEnd: value.end },
        unit: keyValueUnit(key.value, [value.value], { note: comments.splice(0).join('\n') }),
      });
    }
    return { file, entries };
  },
  update(_scan, entry, update) {
    if (update.target.length !== 1) throw new FormatError(`unit ${JSON.stringify(update.id)} is not plural`);
    return [{ start: entry.data.valueStart, end: entry.data.valueEnd, text: quote(update.target[0]) }];
  },
  add(scan, additions) {
    const text = scan.file.text;
    const nl = newlineOf(text);
    const lines = additions.map(({ template, update }) => {
      if (update.target.length !== 1) throw new FormatError(`unit ${JSON.stringify(update.id)} is not plural`);
      return `${quote(template.unit.id)} = ${quote(update.target[0])};${nl}`;
    });
    const lead = text === '' || text.endsWith('\n') ? '' : nl;
    return [{ start: text.length, end: text.length, text: lead + lines.join('') }];
  },
});

function quote(value: string): string {
  return `"${value.replace(/[\\"\n\t\r]/g, (c) => ({ '\\': '\\\\', '"': '\\"', '\n': '\\n', '\t': '\\t', '\r': '\\r' })[c]!)}"`;
}
