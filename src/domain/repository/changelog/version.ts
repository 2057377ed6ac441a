// Versions: GitLab's semver regexes and the ordering of the version_sorter gem (VersionSorter.sort /
// rsort, ext/version_sorter/version_sorter.c) that changelogs use to find tags and insert sections.

/** Gitlab::Regex.unbounded_semver_regex (not anchored: the API's `version` check and changelog headers). */
export const UNBOUNDED_SEMVER =
  '(?<major>0|[1-9]\\d*)\\.(?<minor>0|[1-9]\\d*)\\.(?<patch>0|[1-9]\\d*)' +
  '(?:-(?<prerelease>(?:\\d*[a-zA-Z-][0-9a-zA-Z-]*|[1-9]\\d*|0)(?:\\.(?:\\d*[a-zA-Z-][0-9a-zA-Z-]*|[1-9]\\d*|0))*))?' +
  '(?:\\+(?<build>[0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*))?';

/** Gitlab::Changelog::Config::DEFAULT_TAG_REGEX, in RE2 syntax as GitLab keeps it. */
export const DEFAULT_TAG_REGEX =
  '^v?(?P<major>0|[1-9]\\d*)\\.(?P<minor>0|[1-9]\\d*)\\.(?P<patch>0|[1-9]\\d*)' +
  '(?:-(?P<pre>(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\\.(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*))*))' +
  '?(?:\\+(?P<meta>[0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*))?$';

const unboundedSemver = new RegExp(UNBOUNDED_SEMVER);

/** The API's `regexp: unbounded_semver_regex` check: a semantic version somewhere in the value. */
export function isSemverParam(v: string): boolean {
  return unboundedSemver.test(v);
}

type Component = { num: number } | { str: string };

const digit = (c: number) => c >= 48 && c <= 57;
const alpha = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/** parse_version_number: runs of digits (numbers), "-" or letters (strings); anything else separates. */
function parse(version: string): Component[] {
  const b = Buffer.from(version, 'utf8');
  const out: Component[] = [];
  let i = 0;
  while (i < b.length && out.length < 64) {
    if (digit(b[i])) {
      const start = i;
      while (i < b.length && digit(b[i])) i++;
      const n = Number(b.toString('latin1', start, i));
      // uint32 overflow: compared as a string
      out.push(n > 0xffffffff ? { str: b.toString('latin1', start, i) } : { num: n });
      continue;
    }
    if (b[i] === 45 /* - */ || alpha(b[i])) {
      const start = i;
      if (b[i] === 45) i++;
      while (i < b.length && alpha(b[i])) i++;
      out.push({ str: b.toString('latin1', start, i) });
      continue;
    }
    i++;
  }
  return out;
}

function byteCompare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'latin1'), Buffer.from(b, 'latin1'));
}

/** compare_version_number: numbers by value, strings bytewise, a number beats a string; "1.0" < "1.0.1", "1.0-rc" < "1.0". */
export function compareVersions(a: string, b: string): number {
  const pa = parse(a);
  const pb = parse(b);
  const n = Math.min(pa.length, pb.length);
  for (let i = 0; i < n; i++) {
    const x = pa[i];
    const y = pb[i];
    const xNum = 'num' in x;
    const yNum = 'num' in y;
    if (xNum !== yNum) return xNum ? 1 : -1;
    const cmp = 'num' in x ? Math.sign(x.num - (y as { num: number }).num) : byteCompare(x.str, (y as { str: string }).str);
    if (cmp) return cmp;
  }
  if (pa.length < pb.length) return 'num' in pb[n] ? -1 : 1;
  if (pa.length > pb.length) return 'num' in pa[n] ? 1 : -1;
  return 0;
}

/** VersionSorter.sort */
export function sortVersions(versions: string[]): string[] {
  return [...versions].sort(compareVersions);
}

/** VersionSorter.rsort */
export function rsortVersions(versions: string[]): string[] {
  return [...versions].sort((a, b) => compareVersions(b, a));
}
