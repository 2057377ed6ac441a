// Patterns from users (GitLab's Gitlab::UntrustedRegexp, which is RE2): compiled without the
// features RE2 lacks, and run in a separate context with a time limit, so that a catastrophic
// pattern cannot stall the server.
import vm from 'node:vm';

const MATCH_TIMEOUT_MS = 250;
const matchScript = new vm.Script('(() => { const out = []; for (const n of names) out.push(re.test(n)); return out; })()');
const matchContext = vm.createContext({ re: null, names: null });

export class PatternTimeout extends Error {}

/**
 * The RegExp of an RE2 pattern, or null when it is not one: no look-around and no
 * back-references; a leading `(?i)` (also `m`, `s`) is RE2's flag syntax.
 */
export function untrustedRegexp(source: string): RegExp | null {
  let pattern = source;
  let flags = '';
  const inline = /^\(\?([ims]+)\)/.exec(pattern);
  if (inline) {
    pattern = pattern.slice(inline[0].length);
    flags = [...new Set(inline[1])].join('');
  }
  if (/\(\?<?[=!]|\\[1-9]|\\k</.test(pattern)) return null;
  try {
    return new RegExp(pattern, flags);
  } catch {
    return null;
  }
}

/** `re.test(name)` for every name, within the time limit (else PatternTimeout). */
export function matchAll(re: RegExp, names: string[]): boolean[] {
  matchContext.re = re;
  matchContext.names = names;
  try {
    return Array.from(matchScript.runInContext(matchContext, { timeout: MATCH_TIMEOUT_MS }) as boolean[]);
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw new PatternTimeout();
    throw e;
  } finally {
    matchContext.re = null;
    matchContext.names = null;
  }
}

/**
 * Whether a pattern repeats without bound a group that itself repeats without bound, as `(a+)+` or
 * `(\w+\s?)*$`: the shape that backtracks exponentially. Patterns that run where no time limit can reach
 * them (SQLite's `regexp()` runs per row in the server's own thread) are refused when it holds. Escapes and
 * character classes are skipped; `*`, `+` and `{n,}` (lazy or not) count as unbounded, `?` and `{n,m}` do not.
 */
export function nestedRepetition(pattern: string): boolean {
  /** per open group: whether something inside it repeats without bound */
  const groups: boolean[] = [false];
  /** whether the atom just before a quantifier was a group that repeats inside */
  let groupRepeats = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    let unbounded = false;
    if (ch === '\\') {
      i++;
      groupRepeats = false;
      continue;
    } else if (ch === '[') {
      for (i++; i < pattern.length && pattern[i] !== ']'; i++) if (pattern[i] === '\\') i++;
      groupRepeats = false;
      continue;
    } else if (ch === '(') {
      groups.push(false);
      if (pattern[i + 1] === '?') i++; // (?: (?= (?<name> (?i) …: not a quantifier
      groupRepeats = false;
      continue;
    } else if (ch === ')') {
      const inner = groups.length > 1 ? groups.pop()! : false;
      groups[groups.length - 1] ||= inner;
      groupRepeats = inner;
      continue;
    } else if (ch === '*' || ch === '+') unbounded = true;
    else if (ch === '{') {
      const m = /^\{\d+,\}/.exec(pattern.slice(i));
      if (m) {
        unbounded = true;
        i += m[0].length - 1;
      }
    }
    if (unbounded) {
      if (groupRepeats) return true;
      groups[groups.length - 1] = true;
    }
    groupRepeats = false;
  }
  return false;
}
