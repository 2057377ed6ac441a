// GitLab Flavored Markdown references found in text (no database: this runs in the markdown worker too):
// `@user` / `@group/sub` / `@all`, `#123` and `project#123` / `group/project#123` (issues), `!45` (merge
// requests), `a1b2c3d` and `project@a1b2c3d` (commits: 7 to 40 hex digits, a whole word), `~label`,
// `~"multi word"`, `~123` (labels), `%milestone`, `%"multi word"`, `%3` (milestones), each kind with GitLab's
// pattern (app/models: User, Issue, MergeRequest, Commit, Label, Milestone; Project for the optional
// `namespace/project` before the sigil; Gitlab::PathRegex for the path formats), at most FILTER_ITEM_LIMIT
// of each kind in a text.
//
// Banzai runs one filter per kind over the document's text nodes, in a fixed order (user, issue, merge
// request, commit, label, milestone), each leaving alone what an earlier one turned into a link; the scan claims
// text in the same order. (Banzai leaves a reference it could not resolve as text that a later filter may
// still read; here a candidate claims its text before the lookup, so `%"a #1"` is one milestone candidate
// where GitLab would link `#1` when no such milestone exists.)
//
// The project path before a sigil is read backwards from the sigil over path characters, and each place a
// path may start is tried with an anchored pattern: GitLab's unanchored pattern, tried at every position of
// a long run of letters, is quadratic.

export type ReferenceKind = 'user' | 'issue' | 'merge_request' | 'commit' | 'label' | 'milestone';

/** One reference as written: where it is in the text, its kind, and what names its target. */
export interface ReferenceCandidate {
  kind: ReferenceKind;
  /** the text as written (`group/project#12`) */
  text: string;
  /** the project part as written (`project` or `group/project`), null for the context project */
  project: string | null;
  /** issue and merge request iid, milestone iid, label id */
  number?: number;
  /** label or milestone name (quotes removed), user or group path */
  name?: string;
}

export interface FoundReference extends ReferenceCandidate {
  start: number;
  end: number;
}

// ---- Gitlab::PathRegex ------------------------------------------------------------------------------
const PATH_START_CHAR = /[a-zA-Z0-9_.]/;
const PATH_REGEX_STR = '[a-zA-Z0-9_.][a-zA-Z0-9_\\-.]*';
const NO_SUFFIX = '(?<!\\.git|\\.atom)';
const NAMESPACE_FORMAT = `(?:${PATH_REGEX_STR}[a-zA-Z0-9_\\-]|[a-zA-Z0-9_])${NO_SUFFIX}`;
const PROJECT_PATH_FORMAT = `(?:${PATH_REGEX_STR})${NO_SUFFIX}`;
/** a group path of at most 21 levels (FULL_NAMESPACE_FORMAT_REGEX) */
export const FULL_NAMESPACE_FORMAT = `(?:${NAMESPACE_FORMAT}/){0,20}${NAMESPACE_FORMAT}`;

/** Project.reference_pattern, anchored: the whole string is `[namespace/]project`. */
const PROJECT_REF = new RegExp(`^(?:(${FULL_NAMESPACE_FORMAT})/)?(${PROJECT_PATH_FORMAT})$`);
/** characters of a project path (and its namespace) */
const PATH_CHAR = /[a-zA-Z0-9_.\-/]/;
/** the longest `namespace/project` read before a sigil */
const MAX_PROJECT_REF = 512;

// ---- what follows each sigil (sticky: matched at the sigil) ----------------------------------------
/** Issue.reference_pattern with Gitlab::Regex.issue (the `+` / `+s` formats are read as plain text after the reference) */
const ISSUE = /#(\d+)(?=\W|$)/y;
/** MergeRequest.reference_pattern with Gitlab::Regex.merge_request */
const MERGE_REQUEST = /!(\d+)/y;
/** Label.reference_pattern: an id (all digits), a word (scoped `a::b` too), or a quoted title */
const LABEL = /~(?:(\d+(?!\S\w)\b)|([A-Za-z0-9_\-?.&]+(?:::?[A-Za-z0-9_\-?.&]+)*(?<![.?])|".+?"))/y;
/** Milestone.reference_pattern: an iid (all digits), a word, or a quoted title */
const MILESTONE = /%(?:(\d+(?!\S\w)\b)|([^"\s<]+\b|"[^"]+"))/y;
/** Commit::WHOLE_WORD_COMMIT_SHA_PATTERN */
const COMMIT = /(?<![0-9A-Za-z_])[0-9a-fA-F]{7,40}(?![0-9A-Za-z_])/g;
/** Banzai::Filter::FILTER_ITEM_LIMIT: the references of one kind a text may hold */
export const FILTER_ITEM_LIMIT = 1000;
/** User.reference_pattern: `@` not after a word character, then a user or group path */
const USER = new RegExp(`@(${FULL_NAMESPACE_FORMAT})`, 'y');

const MAX_INT = 2147483647;

interface Kind {
  kind: ReferenceKind;
  sigil: string;
  /** whether a project may be written before the sigil */
  project: boolean;
  read(m: RegExpExecArray): Pick<ReferenceCandidate, 'number' | 'name'> | null;
  pattern: RegExp;
}

const unquote = (s: string) => s.replace(/"/g, '');
const validNumber = (s: string) => {
  const n = Number(s);
  return n > 0 && n <= MAX_INT ? n : null;
};

/** Banzai's filter order. */
const KINDS: Kind[] = [
  { kind: 'user', sigil: '@', project: false, pattern: USER, read: (m) => ({ name: m[1] }) },
  {
    kind: 'issue',
    sigil: '#',
    project: true,
    pattern: ISSUE,
    read: (m) => {
      const n = validNumber(m[1]);
      return n === null ? null : { number: n };
    },
  },
  {
    kind: 'merge_request',
    sigil: '!',
    project: true,
    pattern: MERGE_REQUEST,
    read: (m) => {
      const n = validNumber(m[1]);
      return n === null ? null : { number: n };
    },
  },
  // commits have no sigil: found by COMMIT, `project@` before them
  { kind: 'commit', sigil: '', project: true, pattern: COMMIT, read: (m) => ({ name: m[0].toLowerCase() }) },
  {
    kind: 'label',
    sigil: '~',
    project: true,
    pattern: LABEL,
    read: (m) => (m[1] !== undefined ? (Number(m[1]) <= MAX_INT ? { number: Number(m[1]) } : null) : { name: unquote(m[2]) }),
  },
  {
    kind: 'milestone',
    sigil: '%',
    project: true,
    pattern: MILESTONE,
    read: (m) => (m[1] !== undefined ? (Number(m[1]) <= MAX_INT ? { number: Number(m[1]) } : null) : { name: unquote(m[2]) }),
  },
];

export interface ScanOptions {
  /** with a context project every kind; without one only users and groups (GitLab's skip_project_check) */
  projectContext: boolean;
}

/** The references in one text node, in order of position, none overlapping. */
export function scanReferences(text: string, opts: ScanOptions): FoundReference[] {
  const found: FoundReference[] = [];
  for (const k of KINDS) {
    if (k.kind !== 'user' && !opts.projectContext) continue;
    let count = 0;
    const add = (start: number, end: number, project: string | null, target: Pick<ReferenceCandidate, 'number' | 'name'>) => {
      found.push({ kind: k.kind, text: text.slice(start, end), project, start, end, ...target });
      count++;
    };
    if (k.kind === 'commit') {
      k.pattern.lastIndex = 0;
      for (const m of text.matchAll(k.pattern)) {
        if (count >= FILTER_ITEM_LIMIT) break;
        const p = m.index;
        const end = p + m[0].length;
        if (overlaps(found, p, end)) continue;
        // `project@sha`: the project before the `@`, when it is one
        const before = p > 0 && text[p - 1] === '@' && !claimed(found, p - 1) ? projectBefore(text, p - 1, leftBound(found, p)) : null;
        add(before ? before.start : p, end, before?.path ?? null, k.read(m)!);
      }
      continue;
    }
    let from = 0;
    while (count < FILTER_ITEM_LIMIT) {
      const p = text.indexOf(k.sigil, from);
      if (p < 0) break;
      from = p + 1;
      if (claimed(found, p)) continue;
      if (k.kind === 'user' && p > 0 && /\w/.test(text[p - 1])) continue;
      k.pattern.lastIndex = p;
      const m = k.pattern.exec(text);
      if (!m) continue;
      const end = p + m[0].length;
      if (overlaps(found, p, end)) continue;
      const target = k.read(m);
      if (!target) continue;
      const before = k.project ? projectBefore(text, p, leftBound(found, p)) : null;
      add(before ? before.start : p, end, before?.path ?? null, target);
      from = end;
    }
  }
  return found.sort((a, b) => a.start - b.start);
}

function claimed(found: FoundReference[], p: number): boolean {
  return found.some((f) => p >= f.start && p < f.end);
}
function overlaps(found: FoundReference[], start: number, end: number): boolean {
  return found.some((f) => start < f.end && end > f.start);
}
/** where the text before `p` not claimed by an earlier reference starts */
function leftBound(found: FoundReference[], p: number): number {
  let bound = 0;
  for (const f of found) if (f.end <= p && f.end > bound) bound = f.end;
  return bound;
}

/**
 * The `[namespace/]project` written right before the sigil at `p`: the leftmost place in the run of path
 * characters before it where a path may start (not after a PATH_START_CHAR) and the rest is a project reference.
 */
function projectBefore(text: string, p: number, bound: number): { start: number; path: string } | null {
  let s = p;
  while (s > bound && p - s < MAX_PROJECT_REF && PATH_CHAR.test(text[s - 1])) s--;
  for (let i = s; i < p; i++) {
    if (i > 0 && PATH_START_CHAR.test(text[i - 1])) continue;
    const path = text.slice(i, p);
    if (PROJECT_REF.test(path)) return { start: i, path };
  }
  return null;
}

// ---- references in markdown-it's tokens -------------------------------------------------------------

/** Text as HTML element content and attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

/**
 * The placeholder of reference `i` in rendered HTML: NUL never reaches the HTML from a text (markdown-it
 * replaces it with U+FFFD), so a placeholder cannot be forged.
 */
export function referencePlaceholder(i: number): string {
  return `\u0000${i}\u0000`;
}
export const PLACEHOLDERS = /\u0000(\d+)\u0000/g;
