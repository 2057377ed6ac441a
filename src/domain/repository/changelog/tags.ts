// Repositories::ChangelogTagFinder: the tag of the last stable release before a version, used as the
// start of the commit range when `from` is not given. Tags are matched with the configured tag_regex
// (RE2 syntax in GitLab; translated to a JavaScript RegExp here and run with a time limit, since a
// backtracking engine could be made to spin by a hostile pattern).
import vm from 'node:vm';
import { ChangelogError } from './error.ts';
import { DEFAULT_TAG_REGEX, sortVersions } from './version.ts';

export interface TagRef {
  /** short name, "v1.0.0" */
  short: string;
  /** the commit it points at (peeled) */
  commit: string;
}

interface CompiledRegex {
  source: string;
  flags: string;
}

const MATCH_TIMEOUT_MS = 1000;

/** RE2 → JavaScript: named groups (?P<name>…), \A and \z, leading inline flags (?i) (?s) (?m). */
export function compileTagRegex(re2: string): CompiledRegex {
  let source = re2;
  let flags = '';
  const inline = /^\(\?([imsU]+)\)/.exec(source);
  if (inline) {
    source = source.slice(inline[0].length);
    for (const f of new Set(inline[1])) if (f !== 'U') flags += f;
  }
  // \A / \z outside of character classes; (?P<name> and (?P=name)
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i];
    if (ch === '\\') {
      const next = source[i + 1];
      if (!inClass && next === 'A') out += '^';
      else if (!inClass && next === 'z') out += '$';
      else out += ch + (next ?? '');
      i++;
      continue;
    }
    if (inClass) {
      if (ch === ']') inClass = false;
      out += ch;
      continue;
    }
    if (ch === '[') {
      inClass = true;
      out += ch;
      if (source[i + 1] === '^') out += source[++i];
      if (source[i + 1] === ']') out += source[++i];
      continue;
    }
    if (source.startsWith('(?P<', i)) {
      out += '(?<';
      i += 3;
      continue;
    }
    out += ch;
  }
  try {
    new RegExp(out, flags);
  } catch (e) {
    const detail = (e as Error).message.replace(/^Invalid regular expression: /, '');
    throw new ChangelogError(`The regular expression to use for finding the previous tag for a version is invalid: ${detail}`);
  }
  return { source: out, flags };
}

type Groups = Record<string, string | undefined> | null;

/** The named groups of each name's first match (null: no match), computed under a time limit. */
function matchAll(regex: CompiledRegex, names: string[]): Groups[] {
  const sandbox = { source: regex.source, flags: regex.flags, names, result: null as unknown };
  const script = `
    const re = new RegExp(source, flags);
    result = names.map((n) => {
      const m = re.exec(n);
      if (!m) return null;
      const g = {};
      if (m.groups) for (const k of Object.keys(m.groups)) g[k] = m.groups[k];
      return g;
    });`;
  try {
    vm.runInNewContext(script, sandbox, { timeout: MATCH_TIMEOUT_MS });
  } catch {
    throw new ChangelogError('The regular expression to use for finding the previous tag for a version is invalid: matching the tags takes too long');
  }
  return (sandbox.result as Groups[]).map((g) => (g ? { ...g } : null));
}

/** assemble_version: "major.minor.patch[+meta]", or null without the three numbers. */
function assemble(groups: Groups): string | null {
  if (!groups) return null;
  const { major, minor, patch, meta } = groups;
  if (major === undefined || minor === undefined || patch === undefined) return null;
  let version = `${major}.${minor}.${patch}`;
  if (meta !== undefined) version += `+${meta}`;
  return version;
}

/**
 * The commit of the tag with the highest version below `version` (pre-releases skipped), or
 * ChangelogError when there is none.
 */
export function previousTagCommit(tags: TagRef[], tagRegex: string, version: string): string {
  const custom = compileTagRegex(tagRegex);
  const dflt = compileTagRegex(DEFAULT_TAG_REGEX);
  const requested = assemble(new RegExp(dflt.source, dflt.flags).exec(version)?.groups ?? null);
  if (!requested) {
    throw new ChangelogError('The requested `version` attribute format is not correct. Use formats such as `1.0.0` or `v1.0.0`.');
  }
  const byVersion = new Map<string, TagRef>();
  const versions = [requested];
  const matches = matchAll(
    custom,
    tags.map((t) => t.short),
  );
  tags.forEach((tag, i) => {
    const groups = matches[i];
    if (!groups) return;
    // the last stable release, not some release candidate after it
    if (groups.pre !== undefined) return;
    const v = assemble(groups);
    if (!v) return;
    byVersion.set(v, tag);
    versions.push(v);
  });
  const sorted = sortVersions(versions);
  const index = sorted.indexOf(requested);
  const previous = index > 0 ? byVersion.get(sorted[index - 1]) : undefined;
  if (!previous) throw new ChangelogError('The commit start range is unspecified, and no previous tag could be found to use instead');
  return previous.commit;
}
