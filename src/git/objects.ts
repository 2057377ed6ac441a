// Parsing of raw git objects (commits, trees, annotated tags) read through cat-file.

export interface Signature {
  name: string;
  email: string;
  /** seconds since the epoch */
  time: number;
  /** "+0200" */
  tz: string;
}

export interface Commit {
  sha: string;
  tree: string;
  parents: string[];
  author: Signature;
  committer: Signature;
  message: string;
}

export interface TreeEntry {
  mode: string; // zero-padded, "040000"
  type: 'tree' | 'blob' | 'commit';
  name: string;
  sha: string;
}

export interface AnnotatedTag {
  sha: string;
  object: string;
  type: string;
  tag: string;
  tagger: Signature | null;
  message: string;
}

const SIG = /^(.*) <([^>]*)> (-?\d+) ([+-]\d{4})$/;

export function parseSignature(s: string): Signature {
  const m = SIG.exec(s);
  if (!m) return { name: s, email: '', time: 0, tz: '+0000' };
  return { name: m[1], email: m[2], time: Number(m[3]), tz: m[4] };
}

/** Header lines and message of a commit or tag object; continuation lines (gpgsig) are folded away. */
function headersAndMessage(raw: Buffer): { headers: [string, string][]; message: string } {
  const text = raw.toString('utf8');
  const end = text.indexOf('\n\n');
  const head = end < 0 ? text : text.slice(0, end);
  const headers: [string, string][] = [];
  for (const line of head.split('\n')) {
    if (line.startsWith(' ')) continue;
    const sp = line.indexOf(' ');
    headers.push([line.slice(0, sp), line.slice(sp + 1)]);
  }
  return { headers, message: end < 0 ? '' : text.slice(end + 2) };
}

export function parseCommit(sha: string, raw: Buffer): Commit {
  const { headers, message } = headersAndMessage(raw);
  const c: Commit = { sha, tree: '', parents: [], author: parseSignature(''), committer: parseSignature(''), message };
  for (const [k, v] of headers) {
    if (k === 'tree') c.tree = v;
    else if (k === 'parent') c.parents.push(v);
    else if (k === 'author') c.author = parseSignature(v);
    else if (k === 'committer') c.committer = parseSignature(v);
  }
  return c;
}

export function parseTag(sha: string, raw: Buffer): AnnotatedTag {
  const { headers, message } = headersAndMessage(raw);
  const t: AnnotatedTag = { sha, object: '', type: '', tag: '', tagger: null, message };
  for (const [k, v] of headers) {
    if (k === 'object') t.object = v;
    else if (k === 'type') t.type = v;
    else if (k === 'tag') t.tag = v;
    else if (k === 'tagger') t.tagger = parseSignature(v);
  }
  // a signature block is not part of the message
  const sig = t.message.indexOf('-----BEGIN PGP SIGNATURE-----');
  if (sig >= 0) t.message = t.message.slice(0, sig);
  return t;
}

export function parseTree(raw: Buffer): TreeEntry[] {
  const out: TreeEntry[] = [];
  let i = 0;
  while (i < raw.length) {
    const sp = raw.indexOf(32, i);
    const nul = raw.indexOf(0, sp);
    const mode = raw.toString('latin1', i, sp).padStart(6, '0');
    const name = raw.toString('utf8', sp + 1, nul);
    const sha = raw.toString('hex', nul + 1, nul + 21);
    i = nul + 21;
    out.push({ mode, name, sha, type: mode === '040000' ? 'tree' : mode === '160000' ? 'commit' : 'blob' });
  }
  return out;
}

/** "2021-09-20T11:50:22.000+02:00": GitLab's rendering of a git time in its own offset. */
export function isoTime(time: number, tz: string): string {
  const sign = tz.startsWith('-') ? -1 : 1;
  const minutes = sign * (Number(tz.slice(1, 3)) * 60 + Number(tz.slice(3, 5)));
  const local = new Date((time + minutes * 60) * 1000).toISOString().slice(0, 23);
  return `${local}${tz.slice(0, 3)}:${tz.slice(3, 5)}`;
}

/** Commit#title: the first line, cut at 100 characters the way GitLab does. */
export function commitTitle(message: string): string {
  const first = message.replace(/^\s+/, '').split('\n', 1)[0].trimEnd();
  if (first.length < 100) return first;
  let cut = first.slice(0, 80);
  const sp = cut.lastIndexOf(' ');
  if (sp > 0) cut = cut.slice(0, sp);
  return cut + '…';
}

/** Git trailers of the message's last paragraph ("Changelog: feature"). */
export function commitTrailers(message: string): { trailers: Record<string, string>; extended: Record<string, string[]> } {
  const paragraphs = message.trim().split(/\n\s*\n/);
  const trailers: Record<string, string> = {};
  const extended: Record<string, string[]> = {};
  if (paragraphs.length < 2) return { trailers, extended };
  const lines = paragraphs[paragraphs.length - 1].split('\n');
  if (!lines.every((l) => /^[A-Za-z0-9][A-Za-z0-9-]*:\s*\S/.test(l) || /^\s/.test(l))) return { trailers, extended };
  for (const l of lines) {
    const m = /^([A-Za-z0-9][A-Za-z0-9-]*):\s*(.*)$/.exec(l);
    if (!m) continue;
    trailers[m[1]] = m[2].trim();
    (extended[m[1]] ??= []).push(m[2].trim());
  }
  return { trailers, extended };
}
