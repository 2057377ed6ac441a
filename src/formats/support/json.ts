// A JSON parser that keeps every value's character span, and the JSON formats built on it: flat key/value,
// nested (keys joined with '.') and i18next v3/v4 (plural forms in sibling keys). A changed string is
// replaced in place; a new key is inserted into the deepest object that already exists, indented like
// its neighbours.

import { FormatError, type NewEntry } from '../types.ts';
import { decode, indentAt, lineCol, newlineOf, type Edit } from './text.ts';
import { CLDR_ORDER, categoriesFor, defineFormat, keyValueUnit, presentCategories, setIn, type Entry, type FormatSpec, type Tree } from './units.ts';

export type JNode = JObject | { kind: 'array'; start: number; end: number; items: JNode[] } | JString | { kind: 'other'; start: number; end: number };
export interface JObject {
  kind: 'object';
  start: number;
  end: number;
  members: JMember[];
}
export interface JString {
  kind: 'string';
  start: number;
  end: number;
  value: string;
}
export interface JMember {
  key: string;
  keyStart: number;
  keyEnd: number;
  node: JNode;
}

export function parseJson(text: string): JNode {
  let pos = 0;
  const fail = (what: string): never => {
    throw new FormatError(`invalid JSON: ${what} at ${lineCol(text, pos)}`);
  };
  const ws = () => {
    while (pos < text.length && ' \t\r\n'.includes(text[pos])) pos++;
  };
  const string = (): JString => {
    const start = pos++;
    let value = '';
    for (;;) {
      const c = text[pos];
      if (c === undefined) fail('unterminated string');
      if (c === '"') break;
      if (c < ' ') fail('control character in string');
      if (c === '\\') {
        const e = text[pos + 1];
        const simple: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
        if (e in simple) {
          value += simple[e];
          pos += 2;
        } else if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(pos + 2, pos + 6))) {
          value += String.fromCharCode(parseInt(text.slice(pos + 2, pos + 6), 16));
          pos += 6;
        } else fail('invalid escape');
      } else {
        value += c;
        pos++;
      }
    }
    pos++;
    return { kind: 'string', start, end: pos, value };
  };
  const value = (depth: number): JNode => {
    if (depth > 500) fail('nesting too deep');
    ws();
    const start = pos;
    const c = text[pos];
    if (c === '{') {
      pos++;
      const members: JMember[] = [];
      const keys = new Set<string>();
      ws();
      if (text[pos] === '}') return { kind: 'object', start, end: ++pos, members };
      for (;;) {
        ws();
        if (text[pos] !== '"') fail('expected a key');
        const key = string();
        if (keys.has(key.value)) fail(`duplicate key ${JSON.stringify(key.value)}`);
        keys.add(key.value);
        ws();
        if (text[pos] !== ':') fail("expected ':'");
        pos++;
        members.push({ key: key.value, keyStart: key.start, keyEnd: key.end, node: value(depth + 1) });
        ws();
        if (text[pos] === ',') pos++;
        else if (text[pos] === '}') return { kind: 'object', start, end: ++pos, members };
        else fail("expected ',' or '}'");
      }
    }
    if (c === '[') {
      pos++;
      const items: JNode[] = [];
      ws();
      if (text[pos] === ']') return { kind: 'array', start, end: ++pos, items };
      for (;;) {
        items.push(value(depth + 1));
        ws();
        if (text[pos] === ',') pos++;
        else if (text[pos] === ']') return { kind: 'array', start, end: ++pos, items };
        else fail("expected ',' or ']'");
      }
    }
    if (c === '"') return string();
    const lit = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(pos, pos + 400));
    if (!lit) fail(c === undefined ? 'unexpected end' : `unexpected ${JSON.stringify(c)}`);
    pos += lit![0].length;
    return { kind: 'other', start, end: pos };
  };
  const root = value(0);
  ws();
  if (pos < text.length) fail('trailing content');
  return root;
}

// ---------------------------------------------------------------------------------------------------
// The formats

export type JsonFlavour = 'flat' | 'nested' | 'i18next' | 'i18nextv4';

export interface JsonEntry {
  /** the object holding the unit's key(s) and its path from the root */
  parent: JObject;
  parentPath: string[];
  /** the unit's key (the base key of a plural) */
  key: string;
  /** the members holding the forms, in form order, and their plural suffixes ('' for a plain string) */
  forms: JMember[];
  suffixes: string[];
  /** every member of the group, also forms of plural categories the language does not use (left untouched) */
  covers: JMember[];
}

const V4_SUFFIX = new RegExp(`^(.+)_(${CLDR_ORDER.join('|')})$`);

export function jsonFormat(meta: Omit<FormatSpec<JsonEntry>, 'scan' | 'update' | 'add'>, flavour: JsonFlavour) {
  const plurals = flavour === 'i18next' || flavour === 'i18nextv4';
  return defineFormat<JsonEntry>({
    ...meta,
    scan(content, opts) {
      const file = decode(content);
      // an empty file is an empty catalogue (Weblate creates new JSON translations as "{}")
      const root = file.text.trim() === '' ? undefined : parseJson(file.text);
      if (root && root.kind !== 'object') throw new FormatError('invalid JSON: the top level must be an object');
      const entries: Entry<JsonEntry>[] = [];
      const walk = (obj: JObject, path: string[]) => {
        // i18next: the members of each plural group, found up front so the group is read at its first member
        const groupOf = new Map<JMember, JsonEntry>();
        if (plurals) for (const g of groupPlurals(obj, path, flavour, opts.language)) for (const m of g.covers) groupOf.set(m, g);
        const done = new Set<JsonEntry>();
        for (const m of obj.members) {
          const group = groupOf.get(m);
          if (group) {
            if (done.has(group)) continue;
            done.add(group);
            push(group, [...path, group.key]);
          } else if (m.node.kind === 'object') walk(m.node, [...path, m.key]);
          else if (m.node.kind === 'string') push({ parent: obj, parentPath: path, key: m.key, forms: [m], suffixes: [''], covers: [m] }, [...path, m.key]);
          // numbers, booleans, null and arrays are not translatable and stay as they are
        }
      };
      const push = (data: JsonEntry, path: string[]) => {
        const values = data.forms.map((f) => (f.node as JString).value);
        const key = path.join('.');
        entries.push({
          start: Math.min(...data.forms.map((f) => f.keyStart)),
          end: Math.max(...data.forms.map((f) => f.node.end)),
          data,
          unit: keyValueUnit(key, values, { plural: data.suffixes[0] !== '' || values.length > 1 }),
        });
      };
      if (root) walk(root, []);
      return { file, entries };
    },
    update(scan, entry, update, opts) {
      const e = entry.data;
      if (!entry.unit.plural) {
        if (update.target.length !== 1) throw new FormatError(`unit ${JSON.stringify(update.id)} is not plural`);
        return [{ start: e.forms[0].node.start, end: e.forms[0].node.end, text: JSON.stringify(update.target[0]) }];
      }
      const suffixes = pluralSuffixes(flavour, update.target.length, opts.language, e.suffixes, true);
      const edits: Edit[] = [];
      const missing: [string, string][] = [];
      suffixes.forEach((suffix, i) => {
        const member = e.forms.find((_, j) => e.suffixes[j] === suffix);
        if (member) edits.push({ start: member.node.start, end: member.node.end, text: JSON.stringify(update.target[i]) });
        else missing.push([pluralKey(e.key, suffix), update.target[i]]);
      });
      if (missing.length) {
        const last = e.forms.reduce((a, b) => (a.node.end > b.node.end ? a : b));
        edits.push(insertAfter(scan.file.text, e.parent, last, missing));
      }
      return edits;
    },
    add(scan, additions, opts) {
      const text = scan.file.text;
      const root = text.trim() === '' ? undefined : (parseJson(text) as JObject);
      // group the new leaves by the deepest object that exists along their path
      const groups = new Map<JObject | undefined, Tree>();
      for (const { template, update } of additions) {
        const t = template.data;
        const path = flavour === 'flat' ? [template.unit.id] : [...t.parentPath, t.key];
        const plural = plurals && template.unit.plural;
        if (!plural && update.target.length !== 1) throw new FormatError(`unit ${JSON.stringify(update.id)} is not plural`);
        const leaves: [string[], string][] = plural
          ? pluralSuffixes(flavour, update.target.length, opts.language, t.suffixes, false).map((s, i) => [
              [...t.parentPath, pluralKey(t.key, s)],
              update.target[i],
            ])
          : [[path, update.target[0]]];
        for (const [leafPath, value] of leaves) {
          let obj = root;
          let depth = 0;
          while (obj && depth < leafPath.length - 1) {
            const m = obj.members.find((x) => x.key === leafPath[depth]);
            if (!m) break;
            if (m.node.kind !== 'object')
              throw new FormatError(`cannot add ${JSON.stringify(update.id)}: ${leafPath.slice(0, depth + 1).join('.')} is not an object`);
            obj = m.node;
            depth++;
          }
          const tree = groups.get(obj) ?? new Map();
          groups.set(obj, tree);
          setIn(tree, leafPath.slice(depth), value);
        }
      }
      const edits: Edit[] = [];
      for (const [obj, tree] of groups) {
        if (!obj) {
          const nl = '\n';
          edits.push({ start: 0, end: text.length, text: `{${nl}${renderMembers(tree, '    ', '    ', ': ', nl)}${nl}}${nl}` });
        } else if (obj.members.length) {
          edits.push(insertAfter(text, obj, obj.members[obj.members.length - 1], [...tree]));
        } else {
          const nl = newlineOf(text);
          const outer = indentAt(text, obj.start);
          const unit = indentUnit(text, root!);
          edits.push({ start: obj.start + 1, end: obj.end - 1, text: `${nl}${renderMembers(tree, outer + unit, unit, ': ', nl)}${nl}${outer}` });
        }
      }
      return edits;
    },
  });
}

/** The i18next plural groups of one object. */
function groupPlurals(obj: JObject, path: string[], flavour: JsonFlavour, language: string | undefined): JsonEntry[] {
  const byKey = new Map(obj.members.map((m) => [m.key, m]));
  const isString = (k: string) => byKey.get(k)?.node.kind === 'string';
  const groups = new Map<string, JsonEntry>();
  const group = (base: string, suffixes: string[], covers: string[]) =>
    groups.set(base, {
      parent: obj,
      parentPath: path,
      key: base,
      forms: suffixes.map((s) => byKey.get(pluralKey(base, s))!),
      suffixes,
      covers: covers.map((s) => byKey.get(pluralKey(base, s))!),
    });
  for (const m of obj.members) {
    if (m.node.kind !== 'string') continue;
    if (flavour === 'i18nextv4') {
      const match = V4_SUFFIX.exec(m.key);
      if (!match || groups.has(match[1]) || !isString(`${match[1]}_other`)) continue;
      const present = CLDR_ORDER.filter((c) => isString(`${match[1]}_${c}`));
      group(match[1], presentCategories(present, language), present);
    } else if (m.key.endsWith('_plural') && isString(m.key.slice(0, -7))) {
      group(m.key.slice(0, -7), ['', 'plural'], ['', 'plural']);
    } else if (m.key.endsWith('_0')) {
      const base = m.key.slice(0, -2);
      const suffixes: string[] = [];
      for (let i = 0; isString(`${base}_${i}`); i++) suffixes.push(String(i));
      group(base, suffixes, suffixes);
    }
  }
  return [...groups.values()];
}

function pluralKey(base: string, suffix: string): string {
  return suffix === '' ? base : `${base}_${suffix}`;
}

/** The key suffixes that `count` forms go to. v4: CLDR categories; v3: key/key_plural for two forms, key_0…key_N otherwise.
 *  `existing` are the suffixes the entry (or, for a new entry, its template) uses. */
function pluralSuffixes(flavour: JsonFlavour, count: number, language: string | undefined, existing: string[], replacing: boolean): string[] {
  if (flavour === 'i18nextv4') return categoriesFor(count, language, existing);
  const pair = existing[0] === '';
  if (count === 2 && (pair || !replacing)) return ['', 'plural'];
  // keys are never removed, so a key/key_plural pair cannot turn into numbered keys
  if (replacing && pair) throw new FormatError(`${count} plural forms cannot replace the key/key_plural pair of i18next v3`);
  return Array.from({ length: count }, (_, i) => String(i));
}

/** Members as JSON text; nl === '' lays them out on one line. */
function renderMembers(tree: Tree | [string, Tree | string][], indent: string, unit: string, colon: string, nl: string): string {
  return [...tree]
    .map(([k, v]) => {
      const value =
        typeof v === 'string'
          ? JSON.stringify(v)
          : nl
            ? `{${nl}${renderMembers(v, indent + unit, unit, colon, nl)}${nl}${indent}}`
            : `{${renderMembers(v, '', '', colon, '')}}`;
      return `${indent}${JSON.stringify(k)}${colon}${value}`;
    })
    .join(nl ? `,${nl}` : ', ');
}

/** Insert members after `after` in `obj`, laid out like the object's existing members. */
function insertAfter(text: string, obj: JObject, after: JMember, members: [string, Tree | string][]): Edit {
  const first = obj.members[0];
  const colon = text.slice(first.keyEnd, first.node.start) || ': ';
  const between = text.slice(obj.start + 1, first.keyStart);
  const multiline = between.includes('\n');
  const nl = newlineOf(text);
  const indent = multiline ? indentAt(text, first.keyStart) : '';
  const unit = multiline ? indent.slice(indentAt(text, obj.start).length) || '    ' : '';
  const body = multiline ? `,${nl}${renderMembers(members, indent, unit, colon, nl)}` : `, ${renderMembers(members, '', '', colon, '')}`;
  return { start: after.node.end, end: after.node.end, text: body };
}

/** The file's indentation step: the indentation of the root object's first member. */
function indentUnit(text: string, root: JObject): string {
  const first = root.members[0];
  if (!first) return '    ';
  return indentAt(text, first.keyStart) || '    ';
}

/** A new key as the last member of the top-level object, indented as the members before it. */
export function appendJson(bytes: Buffer, e: NewEntry): Buffer {
  const text = bytes.toString('utf8');
  const nl = newlineOf(text);
  const close = text.lastIndexOf('}');
  const open = text.indexOf('{');
  const entry = `${JSON.stringify(e.context)}: ${JSON.stringify(e.target[0] ?? '')}`;
  if (close < 0 || open < 0 || open > close) return Buffer.from(`{${nl}    ${entry}${nl}}${nl}`, 'utf8');
  const inner = text.slice(open + 1, close);
  const indent = /\n([ \t]+)"/.exec(inner)?.[1] ?? '    ';
  const head = text.slice(0, close).replace(/\s+$/, '');
  const empty = inner.trim() === '';
  return Buffer.from(`${head}${empty ? '' : ','}${nl}${indent}${entry}${nl}${text.slice(close)}`, 'utf8');
}
