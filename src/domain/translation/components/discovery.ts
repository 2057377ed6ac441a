// Discovery (reference §10.2): the files of the repository tree that `filemask` matches, each with the
// language code written in its name (the longest `*` capture, encoding suffix stripped) and the
// language that code stands for (codes and aliases, case and `-`/`_` insensitive).
import type { TreeFile } from './vcs.ts';

export interface LanguageRef {
  id: number;
  code: string;
}

export interface DiscoveredFile extends TreeFile {
  /** as written in the file name */
  languageCode: string;
  language: LanguageRef;
}

const ENCODING_SUFFIX = /\.(utf-?8|iso-?8859-?\d+|latin-?1)$/i;

/** `po/*.po` → /^po\/([^/]*)\.po$/ */
export function filemaskRegExp(filemask: string): RegExp {
  const parts = filemask.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('([^/]*)')}$`);
}

/** Looks language codes up the way Weblate's auto-detection does: exact, normalised, alias, base language. */
export class LanguageLookup {
  private readonly byKey = new Map<string, LanguageRef>();

  constructor(languages: LanguageRef[], aliases: { alias: string; code: string }[]) {
    for (const l of languages) this.byKey.set(norm(l.code), l);
    for (const a of aliases) {
      const target = this.byKey.get(norm(a.code));
      if (target && !this.byKey.has(norm(a.alias))) this.byKey.set(norm(a.alias), target);
    }
  }

  find(code: string): LanguageRef | undefined {
    const key = norm(code);
    const hit = this.byKey.get(key);
    if (hit) return hit;
    // pt_BR.UTF-8@euro style leftovers, then a region nobody knows: fall back to the base language
    const base = key.split(/[_@]/)[0];
    return base !== key ? this.byKey.get(base) : undefined;
  }
}

function norm(code: string): string {
  return code.trim().toLowerCase().replace(/-/g, '_');
}

/**
 * The translation files of a tree: one per language (the first path in sorted order wins when two map to
 * the same language), the template itself excluded, codes failing `languageRegex` or equal to "source" skipped.
 */
export function discover(
  files: TreeFile[],
  opts: { filemask: string; template: string; languageRegex: string; languages: LanguageLookup },
): {
  found: DiscoveredFile[];
  unknown: string[];
} {
  const re = filemaskRegExp(opts.filemask);
  let languageRe: RegExp | null = null;
  try {
    languageRe = opts.languageRegex ? new RegExp(opts.languageRegex) : null;
  } catch {
    languageRe = null;
  }
  const found: DiscoveredFile[] = [];
  const unknown: string[] = [];
  const seen = new Set<number>();
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    if (opts.template && f.path === opts.template) continue;
    const m = re.exec(f.path);
    if (!m) continue;
    const code = m
      .slice(1)
      .reduce((a, b) => (b.length > a.length ? b : a), '')
      .replace(ENCODING_SUFFIX, '');
    if (!code || code === 'source' || (languageRe && !languageRe.test(code))) continue;
    const language = opts.languages.find(code);
    if (!language) {
      unknown.push(f.path);
      continue;
    }
    if (seen.has(language.id)) continue;
    seen.add(language.id);
    found.push({ ...f, languageCode: code, language });
  }
  return { found, unknown };
}
