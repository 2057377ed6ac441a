// Java .properties, monolingual: `key = value` logical lines (a trailing backslash continues a line),
// \uXXXX and \t \n \r \f escapes, `#` / `!` comment lines right above an entry as its note. Weblate reads
// this format as ISO-8859-1; a file that is valid UTF-8 with non-ASCII bytes is read as UTF-8 instead.
// Written values escape every non-ASCII character as \uXXXX, so either encoding stays valid.

import { FormatError, STATE_EMPTY, STATE_TRANSLATED } from './types.ts';
import { decode, newlineOf, type TextFile } from './support/text.ts';
import { defineFormat, keyValueUnit, type Entry } from './support/units.ts';

interface PropEntry {
  /** where the value starts and the logical line ends (before its line break) */
  valueStart: number;
  valueEnd: number;
  /** the text between key and value as written ('=', ' = ', ': ', ' ') */
  separator: string;
}

export const propertiesFormat = defineFormat<PropEntry>({
  id: 'properties',
  name: 'Java Properties (ISO 8859-1)',
  monolingual: true,
  extension: 'properties',
  mimetype: 'text/plain',
  states: [STATE_EMPTY, STATE_TRANSLATED],
  scan(content) {
    const file = decodeProperties(content);
    const text = file.text;
    const entries: Entry<PropEntry>[] = [];
    let comments: string[] = [];
    let pos = 0;
    while (pos < text.length) {
      const lineEnd = endOfLine(text, pos);
      const lead = /^[ \t\f]*/.exec(text.slice(pos, lineEnd))![0].length;
      const first = text[pos + lead];
      if (pos + lead === lineEnd)
        comments = []; // a blank line detaches comments from the next entry
      else if (first === '#' || first === '!')
        comments.push(
          text
            .slice(pos + lead + 1, lineEnd)
            .replace(/^ /, '')
            .trimEnd(),
        );
      else {
        // the logical line: physical lines joined where one ends in an odd number of backslashes
        const chars: { c: string; at: number }[] = [];
        let p = pos + lead;
        let end = lineEnd;
        for (;;) {
          for (; p < end; p++) chars.push({ c: text[p], at: p });
          const slashes = /\\*$/.exec(text.slice(pos, end))![0].length;
          if (slashes % 2 === 0 || end >= text.length) break;
          chars.pop(); // the continuation backslash
          p = skipBreak(text, end);
          end = endOfLine(text, p);
          while (p < end && ' \t\f'.includes(text[p])) p++;
        }
        const { keyLength, valueIndex } = splitKey(chars);
        const valueStart = valueIndex < chars.length ? chars[valueIndex].at : end;
        const keyEnd = keyLength < chars.length ? chars[keyLength].at : end;
        entries.push({
          start: pos,
          end,
          data: { valueStart, valueEnd: end, separator: text.slice(keyEnd, valueStart) },
          unit: keyValueUnit(unescape(chars.slice(0, keyLength)), [unescape(chars.slice(valueIndex))], { note: comments.join('\n') }),
        });
        comments = [];
        pos = skipBreak(text, end);
        continue;
      }
      pos = skipBreak(text, lineEnd);
    }
    return { file, entries };
  },
  update(_scan, entry, update) {
    if (update.target.length !== 1) throw new FormatError(`unit ${JSON.stringify(update.id)} is not plural`);
    return [{ start: entry.data.valueStart, end: entry.data.valueEnd, text: escape(update.target[0], false) }];
  },
  add(scan, additions) {
    const text = scan.file.text;
    const nl = newlineOf(text);
    const lines = additions.map(({ template, update }) => {
      if (update.target.length !== 1) throw new FormatError(`unit ${JSON.stringify(update.id)} is not plural`);
      return escape(template.unit.id, true) + (template.data.separator || '=') + escape(update.target[0], false) + nl;
    });
    const lead = text === '' || text.endsWith('\n') ? '' : nl;
    return [{ start: text.length, end: text.length, text: lead + lines.join('') }];
  },
});

function decodeProperties(content: Buffer): TextFile {
  if (content.some((b) => b > 0x7f)) {
    try {
      return decode(content, 'utf-8');
    } catch {
      // not UTF-8: ISO-8859-1 as Java reads it
    }
  }
  return decode(content, 'latin1');
}

function endOfLine(text: string, pos: number): number {
  const nl = text.indexOf('\n', pos);
  const end = nl < 0 ? text.length : nl;
  return end > pos && text[end - 1] === '\r' ? end - 1 : end;
}

function skipBreak(text: string, end: number): number {
  if (text[end] === '\r' && text[end + 1] === '\n') return end + 2;
  return end < text.length ? end + 1 : end;
}

/** The key ends at the first unescaped whitespace, '=' or ':'; whitespace and one '=' or ':' separate it from the value. */
function splitKey(chars: { c: string }[]): { keyLength: number; valueIndex: number } {
  let i = 0;
  while (i < chars.length && !' \t\f=:'.includes(chars[i].c)) i += chars[i].c === '\\' ? 2 : 1;
  const keyLength = Math.min(i, chars.length);
  while (i < chars.length && ' \t\f'.includes(chars[i].c)) i++;
  if (i < chars.length && '=:'.includes(chars[i].c)) i++;
  while (i < chars.length && ' \t\f'.includes(chars[i].c)) i++;
  return { keyLength, valueIndex: i };
}

function unescape(chars: { c: string }[]): string {
  const s = chars.map((x) => x.c).join('');
  return s.replace(/\\(u[0-9a-fA-F]{4}|u|.)/gs, (_, e: string) => {
    if (e[0] === 'u') {
      if (e.length === 1) throw new FormatError('invalid \\u escape in a properties file');
      return String.fromCharCode(parseInt(e.slice(1), 16));
    }
    return { t: '\t', n: '\n', r: '\r', f: '\f' }[e] ?? e;
  });
}

/** Java's escaping: backslash, control characters, non-ASCII as \uXXXX, a leading space; in keys also spaces, '=', ':', '#', '!'. */
function escape(value: string, isKey: boolean): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    const code = c.charCodeAt(0);
    if (c === '\\') out += '\\\\';
    else if (c === '\n') out += '\\n';
    else if (c === '\r') out += '\\r';
    else if (c === '\t') out += '\\t';
    else if (c === '\f') out += '\\f';
    else if (code < 0x20 || code > 0x7e) out += `\\u${code.toString(16).toUpperCase().padStart(4, '0')}`;
    else if (c === ' ' && (isKey || i === 0)) out += '\\ ';
    else if (isKey && '=:#!'.includes(c)) out += `\\${c}`;
    else out += c;
  }
  return out;
}
