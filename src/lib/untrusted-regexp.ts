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
