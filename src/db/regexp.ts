// Regular expressions from users (the units search `q`, reference §7.2): RE2 syntax, compiled and
// matched by re2js, a JavaScript port of RE2 whose matching time is linear in the text, whatever the
// pattern. Patterns that RE2 refuses (back-references, look-around, repeat counts over 1000, …) throw
// RegexpError, and so do users' patterns whose program is larger than MAX_PROGRAM_SIZE (userRegexp);
// the parser turns it into a 400.
//
// Linear is not free: a large program over many long strings still takes its time, so the queries
// that use a pattern run where a time limit reaches them (db/limited-reads.ts).
import type SQLite from 'better-sqlite3';
import { RE2JS } from 're2js';

export class RegexpError extends Error {}

/**
 * The largest compiled program accepted (RE2's "cost" of a pattern: about one instruction per literal
 * character, class or operator; `(.*){1,300}` has 1502). Matching costs up to this many steps per
 * character of text.
 */
export const MAX_PROGRAM_SIZE = 2000;

/** PostgreSQL's leading embedded options that mean something here (others are left to RE2 to judge). */
const LEADING_OPTIONS = /^\(\?([icmnpsw]+)\)/;

/**
 * `pattern` as RE2 reads it, meaning what it means to PostgreSQL (reference §7.2: Weblate's regular
 * expressions are PostgreSQL's): by default `.` matches a newline and `^`/`$` only the ends of the text;
 * the leading embedded options `(?i)` case-insensitive, `(?c)` case-sensitive, `(?n)` (also `(?m)`)
 * newline-sensitive, `(?p)` partial, `(?w)` inverse partial and `(?s)` become RE2's flags; `\uXXXX`
 * and `\UXXXXXXXX` become RE2's `\x{…}`.
 */
export function re2Pattern(pattern: string): { source: string; flags: number } {
  let source = pattern;
  const { CASE_INSENSITIVE: I, DOTALL: S, MULTILINE: M } = RE2JS;
  let flags = S;
  const options = LEADING_OPTIONS.exec(source);
  if (options) {
    source = source.slice(options[0].length);
    for (const o of options[1]) {
      if (o === 'i') flags |= I;
      else if (o === 'c') flags &= ~I;
      else if (o === 'n' || o === 'm') flags = (flags | M) & ~S;
      else if (o === 'p') flags &= ~(M | S);
      else if (o === 'w') flags |= M | S;
      else if (o === 's') flags = (flags | S) & ~M;
    }
  }
  // every escape is consumed whole, so `\\u0041` stays a backslash followed by "u0041"
  source = source.replace(/\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|.)/gsu, (m, u4?: string, u8?: string) => ((u4 ?? u8) ? `\\x{${u4 ?? u8}}` : m));
  return { source, flags };
}

const cache = new Map<string, RE2JS>();

/** The compiled pattern (cached); throws RegexpError when RE2 refuses it. */
export function compileRegexp(pattern: string): RE2JS {
  let re = cache.get(pattern);
  if (re) return re;
  const { source, flags } = re2Pattern(pattern);
  try {
    re = RE2JS.compile(source, flags);
  } catch (e) {
    // re2js puts the flags before the pattern, and the message quotes it: say it without them
    let message = (e as Error).message;
    try {
      RE2JS.compile(source);
    } catch (plain) {
      message = (plain as Error).message;
    }
    throw new RegexpError(message.replace(/^error parsing regexp: /, ''));
  }
  if (cache.size >= 200) cache.clear();
  cache.set(pattern, re);
  return re;
}

/** A user's pattern, compiled: RegexpError when RE2 refuses it or its program is over MAX_PROGRAM_SIZE. */
export function userRegexp(pattern: string): RE2JS {
  const re = compileRegexp(pattern);
  const size = re.programSize();
  if (size > MAX_PROGRAM_SIZE) throw new RegexpError(`pattern too large: ${size} instructions, at most ${MAX_PROGRAM_SIZE}`);
  return re;
}

/**
 * `value REGEXP pattern` for SQLite (it has the operator but no implementation), with the patterns of
 * compileRegexp (users' patterns were checked by userRegexp when their query was parsed; a long
 * case-insensitive substring search may be larger). NULL values give NULL.
 */
export function registerRegexp(db: SQLite.Database): void {
  db.function('regexp', { deterministic: true }, (pattern: unknown, value: unknown) => {
    if (value === null || value === undefined || pattern === null || pattern === undefined) return null;
    return compileRegexp(String(pattern)).test(String(value)) ? 1 : 0;
  });
}
