// gettext PO reader/patcher shared by `po` and `po-mono`. A line-based scanner that keeps each entry's
// lines and their offsets, so a change rewrites only the `#,` flags, `#|` previous-msgid and msgstr lines
// of the changed entry. (gettext-parser parses PO well but re-serialises whole files, which would change
// bytes of untouched entries; its wrapping of new msgstr lines is mirrored in renderField below.)

import { FormatError, STATE_EMPTY, STATE_FUZZY, STATE_TRANSLATED, type NewEntry, type ParsedUnit, type UnitUpdate } from '../types.ts';
import { applyEdits, decode, encode, lineCol, newlineOf, type Edit, type TextFile } from './text.ts';
import { isEmpty, mergeFlags, splitFlags } from './units.ts';

interface Line {
  start: number;
  /** end of the line's text, before its line break */
  end: number;
  /** start of the next line */
  next: number;
  /** the line without its break, and without the '#~ ' of an obsolete entry */
  text: string;
}

type Field = 'msgctxt' | 'msgid' | 'msgid_plural' | `msgstr[${number}]` | 'msgstr';

export interface PoEntry {
  lines: Line[];
  /** index in `lines` of each keyword's first line and of the line after its last continuation */
  fields: Map<Field, { first: number; after: number; value: string }>;
  comments: { marker: string; text: string; line: number }[];
  obsolete: boolean;
  msgctxt: string | null;
  msgid: string;
  msgidPlural: string | null;
  msgstr: string[];
  start: number;
  end: number;
}

export interface PoFile {
  file: TextFile;
  entries: PoEntry[];
  header?: PoEntry;
}

const KEYWORD = /^(msgctxt|msgid_plural|msgid|msgstr(?:\[(\d+)\])?)\s+("(?:[^"\\]|\\.)*")\s*$/;
const CONTINUATION = /^("(?:[^"\\]|\\.)*")\s*$/;

export function scanPo(content: Buffer): PoFile {
  const file = decode(content);
  const text = file.text;
  const charset = /charset=([\w-]+)/i.exec(text.slice(0, 2000))?.[1]?.toLowerCase();
  if (charset && !['utf-8', 'utf8', 'charset', 'ascii', 'us-ascii'].includes(charset)) {
    throw new FormatError(`unsupported PO charset ${charset}: only UTF-8 is supported`);
  }
  const entries: PoEntry[] = [];
  // `as`: the closures below assign these, which narrowing from a plain initialiser would not see
  let cur = null as PoEntry | null;
  let lastField = null as Field | null;
  const finish = () => {
    if (cur) {
      if (!cur.fields.has('msgid')) {
        throw new FormatError(`comment without a message at ${lineCol(text, cur.start)}`);
      }
      entries.push(cur);
    }
    cur = null;
    lastField = null;
  };
  const begin = (line: Line, obsolete: boolean): PoEntry =>
    (cur = {
      lines: [],
      fields: new Map(),
      comments: [],
      obsolete,
      msgctxt: null,
      msgid: '',
      msgidPlural: null,
      msgstr: [],
      start: line.start,
      end: line.next,
    });

  let pos = 0;
  while (pos < text.length) {
    const nl = text.indexOf('\n', pos);
    const next = nl === -1 ? text.length : nl + 1;
    const end = nl === -1 ? text.length : nl > pos && text[nl - 1] === '\r' ? nl - 1 : nl;
    let raw = text.slice(pos, end).trimStart();
    const line: Line = { start: pos, end, next, text: raw };
    pos = next;
    if (raw.trim() === '') continue;
    // obsolete entries (#~ msgid …, #~| msgid …) read like live ones behind their marker
    const obsolete = raw.startsWith('#~');
    if (obsolete) raw = raw.slice(2).replace(/^ /, '');
    if (obsolete && raw.startsWith('|')) raw = `#${raw}`;
    line.text = raw;

    if (raw.startsWith('#')) {
      if (cur && hasMsgstr(cur)) finish();
      const e = cur ?? begin(line, obsolete);
      const marker = /^#[.:,|]?/.exec(raw)![0];
      e.comments.push({ marker, text: raw.slice(marker.length).replace(/^ /, ''), line: e.lines.length });
      e.lines.push(line);
      continue;
    }
    const kw = KEYWORD.exec(raw);
    if (kw) {
      const keyword = kw[1].startsWith('msgstr[') ? (`msgstr[${kw[2]}]` as Field) : (kw[1] as Field);
      const startsNew = keyword === 'msgctxt' || keyword === 'msgid';
      if (cur && startsNew && (cur.fields.has('msgid') || (keyword === 'msgctxt' && cur.fields.has('msgctxt')))) finish();
      const e = cur ?? begin(line, obsolete);
      if (!startsNew && !e.fields.has('msgid')) throw new FormatError(`${keyword} without msgid at ${lineCol(text, line.start)}`);
      if (e.fields.has(keyword)) throw new FormatError(`duplicate ${keyword} at ${lineCol(text, line.start)}`);
      e.obsolete ||= obsolete;
      e.fields.set(keyword, { first: e.lines.length, after: e.lines.length + 1, value: unescapePo(kw[3], text, line.start) });
      e.lines.push(line);
      lastField = keyword;
      continue;
    }
    const cont = CONTINUATION.exec(raw);
    if (cont && cur && lastField) {
      const e = cur;
      const f = e.fields.get(lastField)!;
      f.value += unescapePo(cont[1], text, line.start);
      f.after = e.lines.length + 1;
      e.lines.push(line);
      continue;
    }
    throw new FormatError(`unexpected PO syntax at ${lineCol(text, line.start)}: ${JSON.stringify(raw.slice(0, 40))}`);
  }
  finish();

  for (const e of entries) {
    const last = e.lines[e.lines.length - 1];
    e.end = last.next;
    if (!hasMsgstr(e)) {
      throw new FormatError(`msgid without msgstr at ${lineCol(text, e.start)}`);
    }
    e.msgctxt = e.fields.get('msgctxt')?.value ?? null;
    e.msgid = e.fields.get('msgid')!.value;
    e.msgidPlural = e.fields.get('msgid_plural')?.value ?? null;
    const plural = [...e.fields.keys()].filter((k) => k.startsWith('msgstr[')).map((k) => Number(k.slice(7, -1)));
    if (plural.length) {
      const count = Math.max(...plural) + 1;
      e.msgstr = Array.from({ length: count }, (_, i) => e.fields.get(`msgstr[${i}]`)?.value ?? '');
    } else e.msgstr = [e.fields.get('msgstr')!.value];
  }
  const headerIndex = entries.findIndex((e) => !e.obsolete && e.msgid === '' && e.msgctxt === null);
  const header = headerIndex >= 0 ? entries.splice(headerIndex, 1)[0] : undefined;
  return { file, entries: entries.filter((e) => !e.obsolete), header };
}

function hasMsgstr(e: PoEntry): boolean {
  return [...e.fields.keys()].some((k) => k.startsWith('msgstr'));
}

export function headerFields(header: PoEntry | undefined): Record<string, string> | undefined {
  if (!header) return undefined;
  const out: Record<string, string> = {};
  for (const line of header.msgstr[0].split('\n')) {
    const i = line.indexOf(':');
    if (i > 0) out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}

export function poId(msgctxt: string | null, msgid: string): string {
  return msgctxt === null ? msgid : `${msgctxt}\u0004${msgid}`;
}

export function isFuzzy(e: PoEntry): boolean {
  return flagList(e).includes('fuzzy');
}

function flagList(e: PoEntry): string[] {
  return e.comments.filter((c) => c.marker === '#,').flatMap((c) => splitFlags(c.text));
}

/** The parts of a unit that come from the entry's comments and state, common to po and po-mono. */
export function entryUnit(e: PoEntry): Omit<ParsedUnit, 'id' | 'context' | 'source' | 'target'> {
  const fuzzy = isFuzzy(e);
  const commentText = (marker: string) => e.comments.filter((c) => c.marker === marker).map((c) => c.text);
  return {
    previousSource: fuzzy ? previousMsgid(e) : '',
    note: [...commentText('#.'), ...commentText('#')].join('\n'),
    location: commentText('#:')
      .flatMap((t) => t.split(/\s+/))
      .filter(Boolean)
      .join(', '),
    flags: mergeFlags(
      flagList(e)
        .filter((f) => f !== 'fuzzy')
        .join(', '),
    ),
    state: isEmpty(e.msgstr) ? STATE_EMPTY : fuzzy ? STATE_FUZZY : STATE_TRANSLATED,
    plural: e.msgidPlural !== null,
  };
}

/** The `#| msgid` of an entry, with its `#| "…"` continuation lines. */
function previousMsgid(e: PoEntry): string {
  let field = ''; // the #| keyword the current line belongs to
  let value = '';
  for (const c of e.comments.filter((x) => x.marker === '#|')) {
    const keyword = /^(msgctxt|msgid_plural|msgid)\s+(".*")\s*$/.exec(c.text);
    if (keyword) field = keyword[1];
    const quoted = keyword ? keyword[2] : /^(".*")\s*$/.exec(c.text)?.[1];
    if (field === 'msgid' && quoted) value += unescapePo(quoted, '', 0);
  }
  return value;
}

/** Edits that give an entry a new msgstr and fuzzy flag; previous-msgid lines go when it is no longer fuzzy (as Weblate). */
export function updateEntry(text: string, e: PoEntry, update: UnitUpdate): Edit[] {
  const plural = e.msgidPlural !== null;
  if (!plural && update.target.length !== 1) {
    throw new FormatError(`unit ${JSON.stringify(update.id)} is not plural: expected 1 form, got ${update.target.length}`);
  }
  const nl = newlineOf(text);
  const edits: Edit[] = [];
  const fuzzy = update.state === STATE_FUZZY && !isEmpty(update.target);
  const lineSpan = (first: number, after: number) => ({ start: e.lines[first].start, end: e.lines[after - 1].next });

  // flags: keep the line as it is unless the fuzzy flag changes
  if (fuzzy !== isFuzzy(e)) {
    const flagLines = e.comments.filter((c) => c.marker === '#,');
    const others = flagList(e).filter((f) => f !== 'fuzzy');
    const flags = fuzzy ? ['fuzzy', ...others] : others;
    const prefix = e.obsolete ? '#~ ' : '';
    const rendered = flags.length ? `${prefix}#, ${flags.join(', ')}${nl}` : '';
    if (flagLines.length) {
      for (const [i, c] of flagLines.entries()) edits.push({ ...lineSpan(c.line, c.line + 1), text: i === 0 ? rendered : '' });
    } else {
      // gettext's order: translator, extracted, reference comments, then flags, then #| previous
      const before = e.comments.find((c) => c.marker === '#|')?.line ?? Math.min(...[...e.fields.values()].map((f) => f.first));
      edits.push({ start: e.lines[before].start, end: e.lines[before].start, text: rendered });
    }
  }
  if (!fuzzy) {
    for (const c of e.comments.filter((c) => c.marker === '#|')) edits.push({ ...lineSpan(c.line, c.line + 1), text: '' });
  }

  // msgstr lines: they follow msgid(_plural) to the end of the entry
  const msgstrFields = [...e.fields.entries()].filter(([k]) => k.startsWith('msgstr'));
  const first = Math.min(...msgstrFields.map(([, f]) => f.first));
  const after = Math.max(...msgstrFields.map(([, f]) => f.after));
  const span = lineSpan(first, after);
  const lastLine = e.lines[after - 1];
  const endsWithBreak = lastLine.next > lastLine.end;
  const rendered = renderMsgstr(update.target, plural, nl);
  edits.push({ ...span, text: endsWithBreak ? rendered + nl : rendered });
  return edits;
}

export function renderMsgstr(target: string[], plural: boolean, nl: string): string {
  if (!plural) return renderField('msgstr', target[0], nl);
  return target.map((t, i) => renderField(`msgstr[${i}]`, t, nl)).join(nl);
}

/** A keyword and its string the way gettext's msgcat writes it: one line when it fits in 79 columns, else "" and a line per
 *  \n-terminated chunk, wrapped at spaces. */
export function renderField(keyword: string, value: string, nl: string): string {
  const escaped = escapePo(value);
  const chunks = escaped.split(/(?<=\\n)(?!$)/);
  if (chunks.length === 1 && keyword.length + escaped.length + 3 <= 79) return `${keyword} "${escaped}"`;
  const lines = [`${keyword} ""`];
  for (const chunk of chunks) {
    let rest = chunk;
    while (rest.length > 77) {
      const cut = rest.lastIndexOf(' ', 76);
      if (cut <= 0) break;
      lines.push(`"${rest.slice(0, cut + 1)}"`);
      rest = rest.slice(cut + 1);
    }
    lines.push(`"${rest}"`);
  }
  return lines.join(nl);
}

export function escapePo(value: string): string {
  return value.replace(/[\\"\n\t\r]/g, (c) => ({ '\\': '\\\\', '"': '\\"', '\n': '\\n', '\t': '\\t', '\r': '\\r' })[c]!);
}

const PO_ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', f: '\f', v: '\v', '\\': '\\', '"': '"', "'": "'", '?': '?' };

/** A quoted PO string (with its quotes) to text. */
function unescapePo(quoted: string, text: string, at: number): string {
  return quoted.slice(1, -1).replace(/\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)/g, (_, esc: string) => {
    if (esc[0] === 'x') return String.fromCharCode(parseInt(esc.slice(1), 16));
    if (/^[0-7]/.test(esc)) return String.fromCharCode(parseInt(esc, 8));
    const ch = PO_ESCAPES[esc];
    if (ch === undefined) throw new FormatError(`invalid escape \\${esc} at ${lineCol(text, at)}`);
    return ch;
  });
}

/**
 * The PO header with `fields` set (translate-toolkit's updateheader as Weblate calls it on commit): the line(s) of a
 * field present are rewritten as one line `"Key: value\n"`, a missing field is added after the header's last line;
 * every other byte stays. A file without a header is returned as it is.
 */
export function updatePoHeader(content: Buffer, fields: Record<string, string>): Buffer {
  const po = scanPo(content);
  const h = po.header;
  const names = Object.keys(fields);
  if (!h || names.length === 0) return Buffer.from(content);
  const text = po.file.text;
  const nl = newlineOf(text);
  const f = h.fields.get('msgstr')!;
  // the msgstr lines grouped into header fields: a field ends with a line whose value ends in \n
  interface Group {
    first: number;
    last: number;
    value: string;
  }
  const groups: Group[] = [];
  let open: Group | null = null;
  for (let i = f.first; i < f.after; i++) {
    const quoted = /("(?:[^"\\]|\\.)*")\s*$/.exec(h.lines[i].text)![1];
    const value = unescapePo(quoted, text, h.lines[i].start);
    if (!open) {
      if (value === '') continue; // `msgstr ""` opening the header
      open = { first: i, last: i, value };
    } else {
      open.last = i;
      open.value += value;
    }
    if (open.value.endsWith('\n')) {
      groups.push(open);
      open = null;
    }
  }
  if (open) groups.push(open);
  const render = (g: { first: number }, key: string, value: string, newline: boolean) =>
    `${g.first === f.first ? 'msgstr ' : ''}"${escapePo(`${key}: ${value}${newline ? '\n' : ''}`)}"`;
  const edits: Edit[] = [];
  const groupOf = (name: string) => groups.find((x) => x.value.includes(':') && x.value.slice(0, x.value.indexOf(':')).trim() === name);
  const missing = names.filter((name) => !groupOf(name));
  const last = groups[groups.length - 1];
  for (const name of names) {
    const g = groupOf(name);
    if (!g) continue;
    const newline = g.value.endsWith('\n') || (g === last && missing.length > 0);
    edits.push({ start: h.lines[g.first].start, end: h.lines[g.last].end, text: render(g, name, fields[name], newline) });
  }
  if (missing.length) {
    if (last && !last.value.endsWith('\n') && !edits.some((e) => e.start === h.lines[last.first].start)) {
      // the last field must end its line before another one follows
      const i = last.value.indexOf(':');
      const key = i >= 0 ? last.value.slice(0, i) : '';
      edits.push({
        start: h.lines[last.first].start,
        end: h.lines[last.last].end,
        text: i >= 0 ? render(last, key, last.value.slice(i + 1).replace(/^ /, ''), true) : `"${escapePo(`${last.value}\n`)}"`,
      });
    }
    const at = h.lines[f.after - 1].end;
    edits.push({ start: at, end: at, text: missing.map((name) => `${nl}"${escapePo(`${name}: ${fields[name]}\n`)}"`).join('') });
  }
  return encode(po.file, applyEdits(text, edits));
}

/** A new entry at the end of the file (fuzzy when its state is 10), after one blank line. */
export function appendPo(bytes: Buffer, e: NewEntry): Buffer {
  const text = bytes.toString('utf8');
  const nl = newlineOf(text);
  const lines: string[] = [];
  if (e.state === 10) lines.push('#, fuzzy');
  if (e.monolingual) {
    lines.push(renderField('msgid', e.context, nl));
    lines.push(renderMsgstr(e.target, false, nl));
  } else {
    if (e.context) lines.push(renderField('msgctxt', e.context, nl));
    lines.push(renderField('msgid', e.source[0] ?? '', nl));
    const plural = e.source.length > 1;
    if (plural) lines.push(`msgid_plural "${escapePo(e.source[1])}"`);
    lines.push(renderMsgstr(e.target, plural, nl));
  }
  const lead = text === '' ? '' : text.endsWith(nl + nl) ? '' : text.endsWith(nl) ? nl : nl + nl;
  return Buffer.from(text + lead + lines.join(nl) + nl, 'utf8');
}
