// The issues a commit message or merge request description closes (Gitlab::ClosingIssueExtractor): the
// closing statements are the matches of the instance's issue closing pattern (gitlab.yml's
// `issue_closing_pattern`, here HEARTH_ISSUE_CLOSING_PATTERN), whose `%{issue_ref}` stands for an issue
// reference (`#12`, `project#12`, `group/project#12`) or a link to an issue of this instance; the issues
// are the references in those statements. No lookups and no access checks: the caller (the issue tracker,
// on merge or push) finds the issues and decides what the author may close.
import { FULL_NAMESPACE_FORMAT, scanReferences } from './reference-scan.ts';

/** GitLab's default (config/initializers/1_settings.rb). */
export const DEFAULT_ISSUE_CLOSING_PATTERN =
  '\\b((?:[Cc]los(?:e[sd]?|ing)|\\b[Ff]ix(?:e[sd]|ing)?|\\b[Rr]esolv(?:e[sd]?|ing)|\\b[Ii]mplement(?:s|ed|ing)?)(:?) +(?:(?:issues? +)?%{issue_ref}(?:(?: *,? +and +| *,? *)?)|([A-Z][A-Z0-9_]+-\\d+))+)';

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const PATH_REGEX_STR = '[a-zA-Z0-9_.][a-zA-Z0-9_\\-.]*';
const PROJECT_PATH = `(?:${PATH_REGEX_STR})(?<!\\.git|\\.atom)`;
/** Issue.reference_pattern without its named groups (a pattern may hold it more than once) */
const ISSUE_REF = `(?:(?<![a-zA-Z0-9_.])(?:${FULL_NAMESPACE_FORMAT}/)?${PROJECT_PATH})?#\\d+(?:\\+s?)?(?=\\W|$)`;
/** ClosingIssueExtractor::HTTP_LINK_PATTERN */
const LINK = '(?:https?://[^\\s>]{1,300})(?<![?!.,:])';

/**
 * The closing pattern as a JavaScript regular expression (global; `^` and `$` at line ends, as Ruby's):
 * `%{issue_ref}` filled in, and the Ruby forms JavaScript spells differently (`\A`, `\z`, `\Z`, `\h`,
 * `{,n}`) rewritten. Throws on a pattern JavaScript cannot compile.
 */
export function compileClosingPattern(pattern: string): RegExp {
  const js = pattern
    .replace('%{issue_ref}', `(?:(?:${LINK})|(?:${ISSUE_REF}))`)
    .replace(/\\A/g, '(?<![\\s\\S])')
    .replace(/\\z/g, '(?![\\s\\S])')
    .replace(/\\Z/g, '(?=\\n?(?![\\s\\S]))')
    .replace(/\\h/g, '[0-9a-fA-F]')
    .replace(/\{,(\d+)\}/g, '{0,$1}');
  return new RegExp(js, 'gm');
}

/** An issue named by a closing statement: its project's full path and its iid. */
export interface ClosingReference {
  project: string;
  iid: number;
}

/**
 * The issues `text` closes, in order, each once: references relative to `contextProject` (a full path:
 * `#1` is its issue, `other#1` one of its namespace's project `other`) and links to issues of
 * `externalUrl`.
 */
export function closingIssueReferences(text: string, contextProject: string, opts: { pattern: RegExp; externalUrl: string }): ClosingReference[] {
  const statements: string[] = [];
  for (const m of text.matchAll(new RegExp(opts.pattern.source, opts.pattern.flags.includes('g') ? opts.pattern.flags : `${opts.pattern.flags}g`)))
    statements.push(m[0]);
  if (!statements.length) return [];
  let joined = statements.join(' ');
  const found: { at: number; project: string; iid: number }[] = [];
  // links to issues of this instance (…/group/project/-/issues/12, or the older …/issues/12), then blanked out
  const links = new RegExp(`${escapeRegExp(opts.externalUrl)}/((?:${FULL_NAMESPACE_FORMAT})/${PROJECT_PATH})(?:/-)?/issues/(\\d+)(?![\\d])[^\\s>]*`, 'g');
  joined = joined.replace(links, (m: string, project: string, iid: string, at: number) => {
    found.push({ at, project, iid: Number(iid) });
    return ' '.repeat(m.length);
  });
  const namespace = contextProject.slice(0, contextProject.lastIndexOf('/'));
  for (const r of scanReferences(joined, { projectContext: true })) {
    if (r.kind !== 'issue' || r.number === undefined) continue;
    const project = r.project === null ? contextProject : r.project.includes('/') ? r.project : `${namespace}/${r.project}`;
    found.push({ at: r.start, project, iid: r.number });
  }
  const out: ClosingReference[] = [];
  const seen = new Set<string>();
  for (const { project, iid } of found.sort((a, b) => a.at - b.at)) {
    const key = `${project.toLowerCase()}#${iid}`;
    if (iid <= 0 || iid > 2147483647 || seen.has(key)) continue;
    seen.add(key);
    out.push({ project, iid });
  }
  return out;
}
