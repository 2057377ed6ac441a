// What every format shares: building units, monolingual template merge, plural categories, flags, and
// defineFormat(), which turns a format's scanner and patchers into a FileFormat.

import {
  FormatError,
  STATE_EMPTY,
  STATE_READONLY,
  STATE_TRANSLATED,
  type FileFormat,
  type ParsedFile,
  type ParsedUnit,
  type ParseOptions,
  type UnitUpdate,
  type WriteOptions,
} from '../types.ts';
import { removeEntry } from './remove.ts';
import { applyEdits, byteRange, encode, type Edit, type TextFile } from './text.ts';

/** One unit as it sits in a file: the unit read from it and the characters [start, end) that hold it. */
export interface Entry<Extra = unknown> {
  unit: ParsedUnit;
  start: number;
  end: number;
  /** whatever the format needs to patch the entry later */
  data: Extra;
}

export interface Scan<Extra = unknown> {
  file: TextFile;
  entries: Entry<Extra>[];
  header?: Record<string, string>;
}

/** A unit of the template that the translation file lacks, and the update that adds it. */
export interface Addition<Extra = unknown> {
  template: Entry<Extra>;
  update: UnitUpdate;
}

export interface FormatSpec<Extra> extends Omit<FileFormat, 'parse' | 'write' | 'locate' | 'remove'> {
  /** read the file; units as a template/bilingual file has them (source = target = value for key/value files) */
  scan(content: Buffer, opts: ParseOptions): Scan<Extra>;
  /** edits that give an existing entry the update's target and state */
  update(scan: Scan<Extra>, entry: Entry<Extra>, update: UnitUpdate, opts: WriteOptions): Edit[];
  /** edits that add template units missing from the file (monolingual formats only) */
  add?(scan: Scan<Extra>, additions: Addition<Extra>[], opts: WriteOptions): Edit[];
}

export function defineFormat<Extra>(spec: FormatSpec<Extra>): FileFormat {
  const { scan, update, add, ...meta } = spec;
  const merged = (content: Buffer, opts: ParseOptions): { own: Scan<Extra>; units: ParsedUnit[] } => {
    const own = scan(content, opts);
    indexEntries(own.entries); // ids are unique within a file
    if (!opts.template || opts.isTemplate || spec.monolingual === false) return { own, units: own.entries.map((e) => e.unit) };
    // the template is in the source language: the translation's plural categories do not apply to it
    const template = scan(opts.template, { isTemplate: true });
    indexEntries(template.entries);
    return { own, units: mergeTemplate(template.entries, own.entries) };
  };
  const format: FileFormat = {
    ...meta,
    parse(content, opts = {}): ParsedFile {
      const { own, units } = merged(content, opts);
      return own.header ? { units, header: own.header } : { units };
    },
    write(content, updates, opts = {}) {
      if (updates.length === 0) return Buffer.from(content);
      const own = scan(content, { language: opts.language });
      const byId = indexEntries(own.entries);
      const template = opts.template && spec.monolingual !== false ? indexEntries(scan(opts.template, { isTemplate: true }).entries) : undefined;
      const edits: Edit[] = [];
      const additions: Addition<Extra>[] = [];
      const seen = new Set<string>();
      for (const u of updates) {
        if (seen.has(u.id)) throw new FormatError(`unit ${JSON.stringify(u.id)} is updated twice`);
        seen.add(u.id);
        const entry = byId.get(u.id);
        const templateEntry = template?.get(u.id);
        if (entry?.unit.state === STATE_READONLY || templateEntry?.unit.state === STATE_READONLY) {
          throw new FormatError(`unit ${JSON.stringify(u.id)} is read-only`);
        }
        if (entry) edits.push(...update(own, entry, u, opts));
        else if (templateEntry && add) additions.push({ template: templateEntry, update: u });
        else throw new FormatError(`no unit ${JSON.stringify(u.id)} in the file${template ? ' or its template' : ''}`);
      }
      if (additions.length) edits.push(...add!(own, additions, opts));
      return encode(own.file, applyEdits(own.file.text, edits));
    },
    locate(content, id, opts = {}) {
      const own = scan(content, opts);
      const entry = own.entries.find((e) => e.unit.id === id);
      return entry && byteRange(own.file, entry.start, entry.end);
    },
    remove(content, id, opts = {}, before) {
      return removeEntry(format, content, id, opts, before ?? format.parse(content, opts).units);
    },
  };
  return format;
}

function indexEntries<Extra>(entries: Entry<Extra>[]): Map<string, Entry<Extra>> {
  const map = new Map<string, Entry<Extra>>();
  for (const e of entries) {
    if (map.has(e.unit.id)) throw new FormatError(`duplicate unit ${JSON.stringify(e.unit.id)}`);
    map.set(e.unit.id, e);
  }
  return map;
}

/**
 * Monolingual merge (Weblate's TTKitUnit with a template): the template decides which units exist, their
 * context, location, source (the template's value) and read-only state; the translation gives target and
 * state. Notes of both are kept (the template's first, once when equal); flags of both merge.
 */
export function mergeTemplate(template: Entry[], translation: Entry[]): ParsedUnit[] {
  const byId = new Map(translation.map((e) => [e.unit.id, e.unit]));
  return template.map(({ unit: t }) => {
    const u = byId.get(t.id);
    const readonly = t.state === STATE_READONLY;
    if (!u) return { ...t, source: t.target, target: [''], previousSource: '', state: readonly ? STATE_READONLY : STATE_EMPTY };
    return {
      ...t,
      source: t.target,
      target: u.target,
      previousSource: u.previousSource,
      note: t.note && u.note && t.note !== u.note ? `${t.note}\n${u.note}` : t.note || u.note,
      flags: mergeFlags(t.flags, u.flags),
      state: readonly ? STATE_READONLY : u.state,
      plural: t.plural || u.plural,
    };
  });
}

/** A unit of a key/value file, as its template parse sees it: source = target = value. */
export function keyValueUnit(key: string, value: string[], extra: Partial<ParsedUnit> = {}): ParsedUnit {
  return {
    id: key,
    context: key,
    source: value,
    target: value,
    previousSource: '',
    note: '',
    location: '',
    flags: '',
    state: isEmpty(value) ? STATE_EMPTY : STATE_TRANSLATED,
    plural: value.length > 1,
    ...extra,
  };
}

export function isEmpty(target: string[]): boolean {
  return target.every((t) => t === '');
}

/** Weblate flags are 'a, b:c' lists; merging keeps the first occurrence of each flag name. */
export function mergeFlags(...lists: string[]): string {
  const out = new Map<string, string>();
  for (const list of lists) {
    for (const flag of splitFlags(list)) {
      const name = flag.split(':')[0];
      if (!out.has(name)) out.set(name, flag);
    }
  }
  return [...out.values()].join(', ');
}

export function splitFlags(list: string): string[] {
  return list
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean);
}

/** CLDR plural categories in CLDR order. */
export const CLDR_ORDER = ['zero', 'one', 'two', 'few', 'many', 'other'] as const;

/** The CLDR plural categories a language uses (Intl.PluralRules), in CLDR order; undefined for an unknown language. */
export function pluralCategories(language: string | undefined): string[] | undefined {
  if (!language) return undefined;
  // Weblate/Android codes: pt_BR, zh-rTW, b+sr+Latn
  const tag = language
    .replace(/^b\+/, '')
    .replace(/[_+]/g, '-')
    .replace(/-r([A-Z]{2})$/, '-$1');
  try {
    const found = new Intl.PluralRules(tag).resolvedOptions().pluralCategories as string[];
    return CLDR_ORDER.filter((c) => found.includes(c));
  } catch {
    return undefined;
  }
}

/**
 * The categories to write `count` plural forms to: the language's when it has that many, else the ones the
 * entry (or its template) already uses. Throws when neither fits.
 */
export function categoriesFor(count: number, language: string | undefined, ...existing: (string[] | undefined)[]): string[] {
  for (const candidate of [pluralCategories(language), ...existing]) {
    if (candidate && candidate.length === count) return candidate;
  }
  throw new FormatError(`${count} plural forms do not match the plural categories of ${language ?? 'the file'}`);
}

/** Sort plural categories present in a file in CLDR order, keeping only the language's when it is known. */
export function presentCategories(present: string[], language: string | undefined): string[] {
  const allowed = pluralCategories(language);
  return CLDR_ORDER.filter((c) => present.includes(c) && (!allowed || allowed.includes(c)));
}

/** Weblate's flags carried by XML attributes (weblate/checks/flags.py): weblate-flags, maxwidth + size-unit. */
export function xmlAttributeFlags(attr: (name: string) => string | undefined): string {
  const flags: string[] = [];
  const own = attr('weblate-flags');
  if (own) flags.push(...splitFlags(own));
  const maxwidth = attr('maxwidth');
  const unit = attr('size-unit') ?? 'char';
  if (maxwidth && unit === 'char') flags.push(`max-length:${maxwidth}`);
  if (maxwidth && unit === 'pixel') flags.push(`max-size:${maxwidth}`);
  return mergeFlags(flags.join(', '));
}

/** New keys to add to a nested file, as a tree of objects and string values. */
export type Tree = Map<string, Tree | string>;

export function setIn(tree: Tree, path: string[], value: string) {
  let t = tree;
  for (const k of path.slice(0, -1)) {
    let next = t.get(k);
    if (typeof next === 'string') throw new FormatError(`${k} is both a value and an object`);
    if (!next) t.set(k, (next = new Map()));
    t = next;
  }
  t.set(path[path.length - 1], value);
}
