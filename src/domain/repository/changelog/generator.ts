// Gitlab::Changelog::Generator: puts a release section into existing changelog Markdown, before the
// header of the next lower version, or at the end.
import { rubyRstrip, type Release } from './release.ts';
import { rsortVersions, UNBOUNDED_SEMVER } from './version.ts';

const RELEASE_HEADER = new RegExp(`^##[\\t\\n\\v\\f\\r ]+(?<version>${UNBOUNDED_SEMVER})`);

/** Ruby's String#lines: every line keeps its "\n". */
function lines(s: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', start)) {
    out.push(s.slice(start, i + 1));
    start = i + 1;
  }
  if (start < s.length) out.push(s.slice(start));
  return out;
}

/** Version → index of its header line ("## 1.2.3 …"); a later duplicate wins, in first-seen order. */
export function releaseHeaders(input: string): Map<string, number> {
  const locations = new Map<string, number>();
  lines(input).forEach((line, index) => {
    const version = RELEASE_HEADER.exec(line)?.groups?.version;
    if (version) locations.set(version, index);
  });
  return locations;
}

/** The changelog with the section `markdown` of `version` added (`input` is '' for a new file). */
export function insertSection(input: string, version: string, markdown: string): string {
  const current = lines(input);
  const locations = releaseHeaders(input);
  const versions = rsortVersions([version, ...locations.keys()]);
  const index = versions.indexOf(version);
  const insertBefore = versions[index + 1];
  if (insertBefore !== undefined) {
    current.splice(locations.get(insertBefore)!, 0, markdown);
  } else {
    // At the end, the previous section ends with a single newline: keep an empty line between them.
    if (versions.length > 1) current.push('\n');
    current.push(rubyRstrip(markdown));
    current.push('\n');
  }
  return current.join('');
}

/** Generator#add */
export function addRelease(input: string, release: Release): string {
  return insertSection(input, release.version, release.toMarkdown());
}
