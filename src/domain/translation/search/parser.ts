// The units search language `q` (Weblate's weblate/utils/search.py, docs/user/search.rst).
//
// Grammar (pyparsing's infix_notation in Weblate, reproduced with the same backtracking):
//   query  := or?
//   or     := and ((OR and) | and)*          — an operand without OR is an implicit AND with the previous one
//   and    := not (AND not)*
//   not    := NOT not | atom
//   atom   := "(" or ")" | term
//   term   := field operator (range | string) | string
//   field  := [a-zA-Z_]+ (not starting with http, ftp, https, mailto)
//   operator := ":" | ":=" | ":<" | ":<=" | ":>" | ":>="
//   range  := "[" date "to" date "]"           date := [A-Za-z0-9:._-]+
//   string := r"regex" | '…' | "…" | word       word := [^ \r\n()]([^ \r\n'"]*[^ \r\n'")])?
// AND, OR and NOT are case-insensitive keywords; a keyword that cannot act as an operator is a word.
// Precedence: NOT > AND > implicit AND > OR (AND being associative, that is NOT > AND > OR).

import { RegexpError, userRegexp } from '../../../db/regexp.ts';
import { CHECK_IDS } from '../checks/index.ts';

export class QueryParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'QueryParseError';
  }
}

/** Text columns of `units` the language can search. */
export type TextColumn = 'source' | 'target' | 'context' | 'note' | 'location' | 'explanation' | 'flags' | 'extra_flags';
export type NumberColumn = 'priority' | 'id' | 'position' | 'state';
export type FlagColumn = 'pending' | 'has_suggestion' | 'has_comment' | 'has_failing_check';
export type TimeColumn = 'timestamp' | 'last_updated';
export type CompareOp = 'eq' | 'lt' | 'lte' | 'gt' | 'gte';

export type QueryNode =
  | { type: 'all' }
  | { type: 'none' }
  | { type: 'and'; children: QueryNode[] }
  | { type: 'or'; children: QueryNode[] }
  | { type: 'not'; child: QueryNode }
  /** any of the columns matches: case-insensitive substring, exact (case-sensitive) or regular expression */
  | { type: 'text'; columns: TextColumn[]; match: 'substring' | 'exact' | 'regex'; value: string }
  | { type: 'number'; column: NumberColumn; op: CompareOp; value: number }
  /** inclusive */
  | { type: 'range'; column: NumberColumn; from: number; to: number }
  | { type: 'in'; column: NumberColumn; values: number[] }
  | { type: 'flag'; column: FlagColumn; value: boolean }
  | { type: 'nonEmpty'; column: TextColumn }
  /** case-sensitive literal substring (the plural separator) */
  | { type: 'contains'; column: TextColumn; value: string }
  /** language code, component slug or project slug: case-insensitive equal, equal, or regular expression */
  | { type: 'ref'; ref: 'language' | 'component' | 'project'; match: 'iexact' | 'exact' | 'regex'; value: string }
  /** units.failing_checks lists any of the ids */
  | { type: 'check'; ids: string[] }
  /** ISO-8601 text comparison of a timestamp column */
  | { type: 'time'; column: TimeColumn; op: CompareOp; value: string }
  /**
   * a suggestion (its target) or unresolved comment (its text) on the unit — or, `onSource`, on its source
   * string — matches, or one by that author (username), or (`any`) there is one
   */
  | {
      type: 'related';
      table: 'suggestions' | 'comments';
      what: 'text' | 'author' | 'any';
      match: 'substring' | 'exact' | 'iexact' | 'regex';
      value: string;
      onSource?: boolean;
    };

type Value = { kind: 'word' | 'quoted' | 'regex'; text: string } | { kind: 'range'; start: string; end: string };
interface Term {
  field: string | null;
  operator: string;
  value: Value;
}

const OPERATORS = [':<=', ':>=', ':=', ':<', ':>', ':'];
const FIELD = /(?!http|ftp|https|mailto)[a-zA-Z_]+/y;
const WORD = /[^ \r\n()](?:[^ \r\n'"]*[^ \r\n'")])?/y;
const DATE = /[A-Za-z0-9:._-]+/y;
const WS = /[ \t\r\n]*/y;
const IDENT = /[A-Za-z0-9_$]/;

/** Parses `q`; throws QueryParseError (its message follows "Could not parse query string: "). */
export function parseQuery(q: string): QueryNode {
  if (q.includes('\x00')) throw new QueryParseError('Invalid query string.');
  return new Parser(q).parse();
}

class Parser {
  private pos = 0;
  constructor(private readonly text: string) {}

  parse(): QueryNode {
    const node = this.parseOr();
    this.skip();
    if (this.pos < this.text.length) throw new QueryParseError(syntaxError(this.text, this.pos));
    return node ?? { type: 'all' };
  }

  private skip(): void {
    WS.lastIndex = this.pos;
    WS.exec(this.text);
    this.pos = WS.lastIndex;
  }

  /** A case-insensitive keyword at the current position (after whitespace), not part of a longer word. */
  private keyword(kw: string): boolean {
    const { text, pos } = this;
    if (text.slice(pos, pos + kw.length).toUpperCase() !== kw) return false;
    if (pos + kw.length < text.length && IDENT.test(text[pos + kw.length])) return false;
    if (pos > 0 && IDENT.test(text[pos - 1])) return false;
    return true;
  }

  private parseOr(): QueryNode | null {
    const first = this.parseAnd();
    if (!first) return null;
    const groups: QueryNode[][] = [[first]];
    for (;;) {
      const save = this.pos;
      this.skip();
      if (this.keyword('OR')) {
        this.pos += 2;
        const next = this.parseAnd();
        if (next) {
          groups.push([next]);
          continue;
        }
      }
      this.pos = save;
      const next = this.parseAnd();
      if (next) {
        groups[groups.length - 1].push(next); // implicit AND
        continue;
      }
      this.pos = save;
      break;
    }
    const ands = groups.map((g) => (g.length === 1 ? g[0] : { type: 'and' as const, children: g }));
    return ands.length === 1 ? ands[0] : { type: 'or', children: ands };
  }

  private parseAnd(): QueryNode | null {
    const first = this.parseNot();
    if (!first) return null;
    const children = [first];
    for (;;) {
      const save = this.pos;
      this.skip();
      if (this.keyword('AND')) {
        this.pos += 3;
        const next = this.parseNot();
        if (next) {
          children.push(next);
          continue;
        }
      }
      this.pos = save;
      break;
    }
    return children.length === 1 ? first : { type: 'and', children };
  }

  private parseNot(): QueryNode | null {
    const save = this.pos;
    this.skip();
    if (this.keyword('NOT')) {
      this.pos += 3;
      const inner = this.parseNot();
      if (inner) return { type: 'not', child: inner };
      this.pos = save;
      this.skip();
    }
    return this.parseAtom();
  }

  private parseAtom(): QueryNode | null {
    const save = this.pos;
    this.skip();
    if (this.text[this.pos] === '(') {
      this.pos++;
      const inner = this.parseOr();
      if (inner) {
        this.skip();
        if (this.text[this.pos] === ')') {
          this.pos++;
          return inner;
        }
      }
      this.pos = save;
      return null;
    }
    const term = this.parseTerm();
    if (!term) {
      this.pos = save;
      return null;
    }
    return termNode(term);
  }

  private parseTerm(): Term | null {
    const start = this.pos;
    FIELD.lastIndex = start;
    const field = FIELD.exec(this.text);
    if (field) {
      this.pos = FIELD.lastIndex;
      this.skip();
      const operator = OPERATORS.find((op) => this.text.startsWith(op, this.pos));
      if (operator) {
        this.pos += operator.length;
        this.skip();
        const value = this.parseRange() ?? this.parseString();
        if (value) return { field: field[0], operator, value };
      }
      this.pos = start;
    }
    const value = this.parseString();
    return value ? { field: null, operator: ':', value } : null;
  }

  private parseRange(): Value | null {
    const save = this.pos;
    const fail = () => {
      this.pos = save;
      return null;
    };
    if (this.text[this.pos] !== '[') return null;
    this.pos++;
    this.skip();
    const startDate = this.match(DATE);
    if (startDate === null) return fail();
    this.skip();
    if (!this.text.startsWith('to', this.pos)) return fail();
    this.pos += 2;
    this.skip();
    const endDate = this.match(DATE);
    if (endDate === null) return fail();
    this.skip();
    if (this.text[this.pos] !== ']') return fail();
    this.pos++;
    return { kind: 'range', start: startDate, end: endDate };
  }

  private match(re: RegExp): string | null {
    re.lastIndex = this.pos;
    const m = re.exec(this.text);
    if (!m) return null;
    this.pos = re.lastIndex;
    return m[0];
  }

  private parseString(): Value | null {
    if (this.text[this.pos] === 'r') {
      const save = this.pos;
      this.pos++;
      this.skip();
      const regex = this.quoted('"');
      if (regex !== null) return { kind: 'regex', text: regex };
      this.pos = save;
    }
    const quoted = this.quoted("'") ?? this.quoted('"');
    if (quoted !== null) return { kind: 'quoted', text: quoted };
    const word = this.match(WORD);
    return word === null ? null : { kind: 'word', text: word };
  }

  /** pyparsing's QuotedString (as Weblate's RawQuotedString): one line, `\` escapes the quote and itself. */
  private quoted(q: string): string | null {
    const { text } = this;
    if (text[this.pos] !== q) return null;
    let out = '';
    for (let i = this.pos + 1; i < text.length; i++) {
      const ch = text[i];
      if (ch === '\n' || ch === '\r') return null;
      if (ch === '\\' && i + 1 < text.length) {
        const next = text[i + 1];
        if (next === q || next === '\\') out += next;
        else if (next === 't') out += '\t';
        else if (next === 'n') out += '\n';
        else if (next === 'r') out += '\r';
        else if (next === 'f') out += '\f';
        else out += ch + next;
        i++;
        continue;
      }
      if (ch === q) {
        this.pos = i + 1;
        return out;
      }
      out += ch;
    }
    return null;
  }
}

/** pyparsing's message for input left over after the query. */
function syntaxError(text: string, loc: number): string {
  const found = /^[\p{L}\p{N}_]{1,16}/u.exec(text.slice(loc))?.[0] ?? String.fromCodePoint(text.codePointAt(loc)!);
  const repr = found.includes("'") && !found.includes('"') ? `"${found}"` : `'${found.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const before = text.slice(0, loc);
  const line = before.split('\n').length;
  const col = loc - before.lastIndexOf('\n');
  return `Expected end of text, found ${repr}  (at char ${loc}), (line:${line}, col:${col})`;
}

// ---- terms → nodes ---------------------------------------------------------------------------------

const TEXT_FIELDS: Record<string, TextColumn[]> = {
  source: ['source'],
  target: ['target'],
  context: ['context'],
  key: ['context'],
  note: ['note'],
  location: ['location'],
  explanation: ['explanation'],
  flags: ['flags', 'extra_flags'],
};
const NUMBER_FIELDS = new Set<string>(['priority', 'id', 'position', 'state']);
const REF_FIELDS = new Set<string>(['language', 'component', 'project']);
const TIME_FIELDS: Record<string, TimeColumn> = { added: 'timestamp', last_changed: 'last_updated' };
/** Fields over the suggestions and comments of a unit (migration 018). */
const RELATED_FIELDS: Record<string, { table: 'suggestions' | 'comments'; what: 'text' | 'author'; onSource?: boolean }> = {
  suggestion: { table: 'suggestions', what: 'text' },
  comment: { table: 'comments', what: 'text' },
  suggestion_author: { table: 'suggestions', what: 'author' },
  comment_author: { table: 'comments', what: 'author' },
  source_comment: { table: 'comments', what: 'text', onSource: true },
  source_comment_author: { table: 'comments', what: 'author', onSource: true },
};

/** Weblate's STATE_NAMES (reference §4.2). */
export const STATE_NAMES: Readonly<Record<string, number>> = {
  empty: 0,
  untranslated: 0,
  'needs-editing': 10,
  fuzzy: 10,
  'needs-rewriting': 11,
  'needs-checking': 12,
  translated: 20,
  approved: 30,
  readonly: 100,
  'read-only': 100,
};

const OP: Record<string, CompareOp> = { ':': 'eq', ':=': 'eq', ':<': 'lt', ':<=': 'lte', ':>': 'gt', ':>=': 'gte' };
const NOTHING: QueryNode = { type: 'none' };

function termNode(term: Term): QueryNode {
  const { field, value } = term;
  let { operator } = term;
  if (field === null) {
    // A plain word or phrase: source, target or context contains it (r"…": matches the expression)
    const columns: TextColumn[] = ['source', 'target', 'context'];
    if (value.kind === 'regex') return { type: 'text', columns, match: 'regex', value: checkRegex(value.text) };
    return { type: 'text', columns, match: 'substring', value: valueText(value, 'text') };
  }
  if (field === 'is') return isNode(valueText(value, field));
  if (field === 'has') return hasNode(valueText(value, field));

  const related = RELATED_FIELDS[field];
  if (related) {
    if (value.kind === 'range') throw new QueryParseError(`Unsupported range for field: ${field}`);
    if (value.kind === 'regex') return { type: 'related', ...related, match: 'regex', value: checkRegex(value.text) };
    if (related.what === 'author') {
      if (operator !== ':' && operator !== ':=') throw new QueryParseError(`Unsupported operator ${operator} for field: ${field}`);
      return { type: 'related', ...related, match: operator === ':=' ? 'exact' : 'iexact', value: value.text };
    }
    const needle = operator !== ':' && operator !== ':=' ? operator.slice(1) + value.text : value.text;
    return { type: 'related', ...related, match: operator === ':=' ? 'exact' : 'substring', value: needle };
  }

  const text = TEXT_FIELDS[field];
  if (text) {
    if (value.kind === 'range') throw new QueryParseError(`Unsupported range for field: ${field}`);
    if (value.kind === 'regex') return { type: 'text', columns: text, match: 'regex', value: checkRegex(value.text) };
    // Avoid unwanted lt/gt searches on text fields: `source:<b>` looks for "<b>"
    let needle = value.text;
    if (operator !== ':' && operator !== ':=') {
      needle = operator.slice(1) + needle;
      operator = ':';
    }
    return { type: 'text', columns: text, match: operator === ':=' ? 'exact' : 'substring', value: needle };
  }

  if (NUMBER_FIELDS.has(field)) return numberNode(field as NumberColumn, operator, value);

  if (field === 'pending') return { type: 'flag', column: 'pending', value: convertBool(valueText(value, field)) };

  if (REF_FIELDS.has(field)) {
    const ref = field as 'language' | 'component' | 'project';
    if (value.kind === 'range') throw new QueryParseError(`Unsupported range for field: ${field}`);
    if (value.kind === 'regex') return { type: 'ref', ref, match: 'regex', value: checkRegex(value.text) };
    if (operator !== ':' && operator !== ':=') throw new QueryParseError(`Unsupported operator ${operator} for field: ${field}`);
    return { type: 'ref', ref, match: operator === ':=' ? 'exact' : 'iexact', value: value.text };
  }

  if (field === 'check') {
    if (value.kind === 'range') throw new QueryParseError(`Unsupported range for field: ${field}`);
    if (value.kind === 'regex') {
      const re = userRegexp(checkRegex(value.text));
      return { type: 'check', ids: CHECK_IDS.filter((id) => re.test(id)) };
    }
    if (operator !== ':' && operator !== ':=') throw new QueryParseError(`Unsupported operator ${operator} for field: ${field}`);
    return { type: 'check', ids: [checkId(operator === ':=' ? value.text : value.text.toLowerCase())] };
  }

  const time = TIME_FIELDS[field];
  if (time) return timeNode(time, operator, value);

  throw new QueryParseError(`Unsupported field: ${field}`);
}

function valueText(value: Value, field: string): string {
  if (value.kind === 'range') throw new QueryParseError(`Unsupported range for field: ${field}`);
  if (value.kind === 'regex') throw new QueryParseError(`Unsupported regular expression for field: ${field}`);
  return value.text;
}

/** A check id as stored; `c-format` is accepted for `c_format` (Weblate's ids use underscores there). */
function checkId(text: string): string {
  if (CHECK_IDS.includes(text)) return text;
  const alt = text.replaceAll('-', '_');
  return CHECK_IDS.includes(alt) ? alt : text;
}

/**
 * A regular expression as the databases will run it: RE2 syntax (db/regexp.ts), on both databases, so
 * that no pattern can backtrack without end. Unlike Weblate (PostgreSQL's regular expressions), this
 * refuses back-references, look-around and repeat counts over 1000.
 */
function checkRegex(pattern: string): string {
  try {
    userRegexp(pattern);
  } catch (e) {
    if (e instanceof RegexpError) throw new QueryParseError(`Invalid regular expression: ${e.message}`);
    throw e;
  }
  return pattern;
}

function isNode(text: string): QueryNode {
  switch (text) {
    case 'read-only':
    case 'readonly':
      return { type: 'number', column: 'state', op: 'eq', value: 100 };
    case 'approved':
      return { type: 'number', column: 'state', op: 'eq', value: 30 };
    case 'fuzzy':
    case 'needs-editing':
      return { type: 'number', column: 'state', op: 'eq', value: 10 };
    case 'translated':
      return { type: 'number', column: 'state', op: 'gte', value: 20 };
    case 'untranslated':
      return { type: 'number', column: 'state', op: 'lt', value: 20 };
    case 'pending':
      return { type: 'flag', column: 'pending', value: true };
    case 'automatically-translated':
      return NOTHING; // not tracked by Hearth
  }
  throw new QueryParseError(`Unsupported is lookup: ${text}`);
}

function hasNode(text: string): QueryNode {
  switch (text) {
    case 'plural':
      return { type: 'contains', column: 'source', value: '\x1e' };
    case 'context':
      return { type: 'nonEmpty', column: 'context' };
    case 'note':
      return { type: 'nonEmpty', column: 'note' };
    case 'location':
      return { type: 'nonEmpty', column: 'location' };
    case 'explanation':
      return { type: 'nonEmpty', column: 'explanation' };
    case 'flags':
      return { type: 'nonEmpty', column: 'extra_flags' };
    case 'suggestion':
      return { type: 'flag', column: 'has_suggestion', value: true };
    case 'comment':
      return { type: 'flag', column: 'has_comment', value: true };
    case 'check':
    case 'failing-check':
    case 'failing_check':
      return { type: 'flag', column: 'has_failing_check', value: true };
    case 'translation':
      return { type: 'number', column: 'state', op: 'gte', value: 20 };
    // Known to Weblate, but Hearth keeps no such data: nothing has them
    case 'resolved-comment':
    case 'resolved_comment':
    case 'dismissed-check':
    case 'dismissed_check':
    case 'ignored-check':
    case 'ignored_check':
    case 'variant':
    case 'shaping':
    case 'label':
    case 'screenshot':
    case 'glossary':
      return NOTHING;
    case 'source-comment':
      return { type: 'related', table: 'comments', what: 'any', match: 'substring', value: '', onSource: true };
  }
  throw new QueryParseError(`Unsupported has lookup: ${text}`);
}

function convertBool(text: string): boolean {
  const l = text.toLowerCase();
  if (['yes', 'true', 'on', '1'].includes(l)) return true;
  if (['no', 'false', 'off', '0'].includes(l)) return false;
  throw new QueryParseError(`Invalid boolean value: ${text}`);
}

/** Python's int(text) and its message. */
function convertInt(text: string): number {
  const t = text.trim();
  if (!/^[+-]?\d+(?:_\d+)*$/.test(t)) throw new QueryParseError(`invalid literal for int() with base 10: '${text}'`);
  return Number(t.replaceAll('_', ''));
}

function convertNumber(column: NumberColumn, text: string): number {
  if (column !== 'state') return convertInt(text);
  if (/^\d+$/.test(text)) return Number(text);
  const state = STATE_NAMES[text];
  if (state === undefined) throw new QueryParseError(`Unsupported state: ${text}`);
  return state;
}

function numberNode(column: NumberColumn, operator: string, value: Value): QueryNode {
  if (value.kind === 'regex') throw new QueryParseError(`Unsupported regular expression for field: ${column}`);
  if (value.kind === 'range') {
    const from = convertNumber(column, value.start);
    const to = convertNumber(column, value.end);
    if (operator === ':' || operator === ':=') return { type: 'range', column, from, to };
    if (operator === ':>' || operator === ':>=') return { type: 'number', column, op: 'gte', value: from };
    return { type: 'number', column, op: 'lte', value: to };
  }
  if (column === 'id' && value.text.includes(',')) {
    return { type: 'in', column, values: [...new Set(value.text.split(',').map(convertInt))] };
  }
  return { type: 'number', column, op: OP[operator], value: convertNumber(column, value.text) };
}

// ---- timestamps ------------------------------------------------------------------------------------

/** [start, end] (a year or a day) or an instant, as ISO-8601 UTC text with milliseconds. */
function parseTime(text: string, bound?: 'start' | 'end'): string | [string, string] {
  const iso = (d: Date) => d.toISOString();
  let m = /^(\d{4})$/.exec(text);
  if (m) {
    const y = Number(m[1]);
    const range: [string, string] = [iso(new Date(Date.UTC(y, 0, 1))), iso(new Date(Date.UTC(y + 1, 0, 1) - 1))];
    return bound === 'start' ? range[0] : bound === 'end' ? range[1] : range;
  }
  m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (m) {
    const start = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
    const d = new Date(start);
    if (d.getUTCMonth() !== Number(m[2]) - 1 || d.getUTCDate() !== Number(m[3])) throw new QueryParseError('Could not parse timestamp');
    const range: [string, string] = [iso(d), iso(new Date(start + 86_400_000 - 1))];
    return bound === 'start' ? range[0] : bound === 'end' ? range[1] : range;
  }
  m = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?$/i.exec(text);
  if (m) {
    const zoned = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(text) ? text : text + 'Z';
    const d = new Date(zoned.replace(' ', 'T'));
    if (!Number.isNaN(d.getTime())) return iso(d);
  }
  throw new QueryParseError('Could not parse timestamp');
}

function timeNode(column: TimeColumn, operator: string, value: Value): QueryNode {
  if (value.kind === 'regex') throw new QueryParseError(`Unsupported regular expression for field: ${column}`);
  const parsed: string | [string, string] =
    value.kind === 'range' ? [parseTime(value.start, 'start') as string, parseTime(value.end, 'end') as string] : parseTime(value.text);
  if (typeof parsed === 'string') return { type: 'time', column, op: OP[operator], value: parsed };
  const [from, to] = parsed;
  if (operator === ':' || operator === ':=') {
    return {
      type: 'and',
      children: [
        { type: 'time', column, op: 'gte', value: from },
        { type: 'time', column, op: 'lte', value: to },
      ],
    };
  }
  if (operator === ':>' || operator === ':>=') return { type: 'time', column, op: 'gte', value: from };
  return { type: 'time', column, op: 'lte', value: to };
}
