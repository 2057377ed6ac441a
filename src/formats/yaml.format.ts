// YAML, monolingual: nested mappings, keys joined with '.'; string values are units (an empty `key:` is an
// empty one). Parsed with the `yaml` package, whose nodes carry their source ranges, so a change rewrites
// just the value's scalar. Lists, numbers and booleans are not translatable and stay as they are.

import { isMap, isScalar, parse as parseYaml, parseDocument, type Pair, type Scalar, type YAMLMap } from 'yaml';
import { FormatError, STATE_EMPTY, STATE_TRANSLATED } from './types.ts';
import { decode, indentAt, newlineOf, type Edit } from './support/text.ts';
import { defineFormat, keyValueUnit, setIn, type Entry, type Tree } from './support/units.ts';

interface YamlEntry {
  path: string[];
  value: Scalar;
}

export const yamlFormat = defineFormat<YamlEntry>({
  id: 'yaml',
  name: 'YAML file',
  monolingual: true,
  extension: 'yml',
  mimetype: 'text/yaml',
  states: [STATE_EMPTY, STATE_TRANSLATED],
  scan(content) {
    const file = decode(content);
    const root = readDocument(file.text);
    const entries: Entry<YamlEntry>[] = [];
    const walk = (map: YAMLMap, path: string[]) => {
      for (const pair of map.items as Pair<Scalar, unknown>[]) {
        const p = [...path, String(pair.key.value)];
        const v = pair.value;
        if (isMap(v)) walk(v, p);
        else if (isScalar(v) && (typeof v.value === 'string' || v.value === null)) {
          entries.push({
            start: pair.key.range![0],
            end: v.range![1],
            data: { path: p, value: v },
            unit: keyValueUnit(p.join('.'), [v.value ?? '']),
          });
        }
      }
    };
    if (root) walk(root, []);
    return { file, entries };
  },
  update(scan, entry, update) {
    if (update.target.length !== 1) throw new FormatError(`unit ${JSON.stringify(update.id)} is not plural`);
    const text = scan.file.text;
    const [start, end] = entry.data.value.range!;
    // an empty `key:` has no scalar text: the value goes after the colon; a block scalar's span ends with its line break
    const lead = start === end ? ' ' : '';
    const trail = text[end - 1] === '\n' && start !== end ? newlineOf(text) : '';
    return [{ start, end, text: lead + renderScalar(update.target[0], entry.data.value.type) + trail }];
  },
  add(scan, additions) {
    const text = scan.file.text;
    const root = readDocument(text);
    const nl = newlineOf(text);
    const step = indentStep(text, root);
    const groups = new Map<YAMLMap | undefined, Tree>();
    for (const { template, update } of additions) {
      if (update.target.length !== 1) throw new FormatError(`unit ${JSON.stringify(update.id)} is not plural`);
      const path = template.data.path;
      let map = root;
      let depth = 0;
      while (map && depth < path.length - 1) {
        const next = (map.items as Pair<Scalar, unknown>[]).find((p) => String(p.key.value) === path[depth])?.value;
        if (next === undefined) break;
        if (!isMap(next)) throw new FormatError(`cannot add ${JSON.stringify(update.id)}: ${path.slice(0, depth + 1).join('.')} is not a mapping`);
        map = next;
        depth++;
      }
      const tree = groups.get(map) ?? new Map();
      groups.set(map, tree);
      setIn(tree, path.slice(depth), update.target[0]);
    }
    const edits: Edit[] = [];
    for (const [map, tree] of groups) {
      if (!map || (map === root && map.items.length === 0)) {
        // an empty document or the `{}` Weblate starts new YAML translations with
        const [start, end] = map ? map.range! : [text.length, text.length];
        // the block brings its own line break in place of the one after `{}`
        const after = text.startsWith(nl, end) ? end + nl.length : end;
        edits.push({ start, end: after, text: renderBlock(tree, '', step, nl) });
        continue;
      }
      if (map.flow) throw new FormatError('cannot add keys to a flow mapping');
      const first = (map.items[0] as Pair<Scalar>).key;
      // at the start of the line after the mapping's last value (its range may end before that line's break or comment)
      const lineEnd = text[map.range![1] - 1] === '\n' ? map.range![1] - 1 : text.indexOf('\n', map.range![1]);
      const at = lineEnd < 0 ? text.length : lineEnd + 1;
      const lead = lineEnd < 0 ? nl : '';
      edits.push({ start: at, end: at, text: lead + renderBlock(tree, indentAt(text, first.range![0]), step, nl) });
    }
    return edits;
  },
});

function readDocument(text: string): YAMLMap | undefined {
  const doc = parseDocument(text, { keepSourceTokens: false });
  if (doc.errors.length) throw new FormatError(`invalid YAML: ${doc.errors[0].message.split('\n')[0]}`);
  if (doc.contents === null) return undefined;
  if (!isMap(doc.contents)) throw new FormatError('invalid YAML translation file: the top level must be a mapping');
  for (const pair of doc.contents.items) {
    if (!isScalar(pair.key)) throw new FormatError('invalid YAML translation file: keys must be scalars');
  }
  return doc.contents;
}

/** The file's indentation step: how far the first nested mapping is indented, else two spaces. */
function indentStep(text: string, root: YAMLMap | undefined): string {
  for (const pair of (root?.items ?? []) as Pair<Scalar, unknown>[]) {
    if (isMap(pair.value) && !pair.value.flow && pair.value.items.length) {
      const inner = indentAt(text, (pair.value.items[0] as Pair<Scalar>).key.range![0]);
      const outer = indentAt(text, pair.key.range![0]);
      if (inner.length > outer.length) return inner.slice(outer.length);
    }
  }
  return '  ';
}

function renderBlock(tree: Tree, indent: string, step: string, nl: string): string {
  return [...tree]
    .map(([k, v]) =>
      typeof v === 'string' ? `${indent}${renderKey(k)}: ${renderScalar(v)}${nl}` : `${indent}${renderKey(k)}:${nl}${renderBlock(v, indent + step, step, nl)}`,
    )
    .join('');
}

function renderKey(key: string): string {
  return /^[A-Za-z_][\w.-]*$/.test(key) && isPlainString(key) ? key : JSON.stringify(key);
}

/** A value as a one-line scalar: plain when YAML reads it back as the same string, single-quoted if it was so, else double-quoted. */
function renderScalar(value: string, style?: Scalar['type']): string {
  if (style === 'QUOTE_SINGLE' && !/[\n\r\t]/.test(value)) return `'${value.replace(/'/g, "''")}'`;
  if (style !== 'QUOTE_DOUBLE' && value !== '' && !/[\n\r\t,[\]{}#&*!|>'"%@`]|^[-?:\s]|:(\s|$)|\s$/.test(value) && isPlainString(value)) {
    return value;
  }
  return JSON.stringify(value);
}

function isPlainString(s: string): boolean {
  try {
    return parseYaml(`k: ${s}`)?.k === s;
  } catch {
    return false;
  }
}
