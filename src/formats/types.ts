// The one interface every translation file format implements (Weblate's TranslationFormat, reduced to
// what Hearth needs): parse bytes into units, and patch bytes with changed targets so that everything
// the change does not touch stays byte-identical.

export type UnitState = 0 | 10 | 20 | 30 | 100; // 0 empty, 10 needs editing (fuzzy), 20 translated, 30 approved, 100 read-only

export const STATE_EMPTY = 0;
export const STATE_FUZZY = 10;
export const STATE_TRANSLATED = 20;
export const STATE_APPROVED = 30;
export const STATE_READONLY = 100;

export interface ParsedUnit {
  /** unique within the file: the key for monolingual files, msgctxt+"\u0004"+msgid (or the id attribute) for bilingual */
  id: string;
  /** Weblate "context": for monolingual formats the key; for PO msgctxt; for XLIFF the resname/id */
  context: string;
  /** plural forms; one element when not plural. For monolingual translation files: the template's value (see parse opts) */
  source: string[];
  target: string[];
  previousSource: string; // PO #| msgid ; '' otherwise
  note: string; // comments/notes joined with '\n' (PO: #. developer comments first, then '# ' translator comments)
  location: string; // PO '#: a.c:1 b.c:2' → 'a.c:1, b.c:2'; '' when none
  flags: string; // comma+space separated Weblate flags (without 'fuzzy')
  state: UnitState;
  plural: boolean;
}

export interface ParsedFile {
  units: ParsedUnit[];
  /** PO header fields etc. when the format has them (Plural-Forms, Language) */
  header?: Record<string, string>;
}

export interface UnitUpdate {
  id: string;
  target: string[];
  state: UnitState;
}

export interface ParseOptions {
  /** the template (base file) bytes for a monolingual translation file */
  template?: Buffer;
  /** parsing the template itself: source = target = value */
  isTemplate?: boolean;
  /** the translation's language code (plural categories of Android / i18next v4) */
  language?: string;
}

/** A string appended to a file (Weblate's add_unit): a monolingual entry is keyed by its context. */
export interface NewEntry {
  context: string;
  /** one element, or the singular and the plural of a plural string */
  source: string[];
  target: string[];
  state: number;
  monolingual: boolean;
}

export interface WriteOptions {
  template?: Buffer;
  language?: string;
}

export interface FileFormat {
  id: string; // 'po', 'aresource', ...
  name: string; // human name as Weblate shows it ('gettext PO file', 'Android String Resource', ...)
  /** true: monolingual only; false: bilingual only; null: either (Weblate's semantics) */
  monolingual: boolean | null;
  extension: string; // 'po', 'xml', 'json', ...
  mimetype: string; // what a download sends, e.g. 'text/x-po', 'application/json', 'application/x-xliff+xml'
  /** the states the file itself can record (default [0, 20]); any other state of a non-empty target is written, and read back, as 20 */
  states?: readonly UnitState[];
  /** parse a file. For monolingual use, pass the template (base file) bytes: source comes from the template, target from this file;
   *  units missing in the translation file get target [''] and state 0; when parsing the template itself (opts.isTemplate or no template),
   *  source = target = value, state 20 (or 0 when value empty). Throws FormatError with a clear message on malformed input. */
  parse(content: Buffer, opts?: ParseOptions): ParsedFile;
  /** apply updates; must return the IDENTICAL bytes when updates is empty; untouched entries stay byte-identical; add an entry that
   *  exists in the template but not in the file when an update names it (monolingual). Throws FormatError for an unknown id or a
   *  read-only unit. */
  write(content: Buffer, updates: UnitUpdate[], opts?: WriteOptions): Buffer;
  /** the byte range [start, end) of the entry holding unit `id` in content — what write() may rewrite for it; undefined when absent */
  locate?(content: Buffer, id: string, opts?: ParseOptions): [number, number] | undefined;
  /** the file with a new string at its end; formats without it can not take new strings (Weblate's can_add_unit).
   *  Every entry already there parses as before. */
  append?(content: Buffer, entry: NewEntry): Buffer;
  /** append writes plural strings too */
  appendsPlurals?: boolean;
  /** the file without the entry of unit `id` (its locate range, with the separators next to it), or null when no cut gives a file
   *  that parses to the same units less that one. `before`: the units parse gives for `content` and `opts` (parsed when absent). */
  remove?(content: Buffer, id: string, opts?: ParseOptions, before?: ParsedUnit[]): Buffer | null;
  /** set header fields (PO: `PO-Revision-Date`, `Last-Translator` …): a field's line is rewritten, a missing one added at the
   *  end of the header; every other byte stays. Formats without a header do not have it. */
  updateHeader?(content: Buffer, fields: Record<string, string>): Buffer;
}

export class FormatError extends Error {
  override name = 'FormatError';
}

/** The state a unit has after write() stored `update` and the file was parsed again. */
export function storedState(format: Pick<FileFormat, 'states'>, update: Pick<UnitUpdate, 'target' | 'state'>): UnitState {
  if (update.target.every((t) => t === '')) return STATE_EMPTY;
  return format.states?.includes(update.state) && update.state !== STATE_EMPTY ? update.state : STATE_TRANSLATED;
}
