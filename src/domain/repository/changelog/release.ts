// Gitlab::Changelog::Release: the entries of one version, grouped by category, rendered with the
// configured template under a fixed "## <version> (<date>)" header.
import { categoryOf, type ChangelogConfig } from './config.ts';
import { ChangelogError, TemplateError } from './error.ts';
import { strftime, type ReleaseDate } from './time.ts';

export interface ReleaseEntry {
  title: string;
  commit: { reference: string; trailers: Record<string, string> };
  author?: { reference: string; contributor: boolean; credit: boolean };
  merge_request?: { reference: string };
}

/** Ruby's String#strip / #rstrip whitespace (and NUL at the end). */
export function rubyRstrip(s: string): string {
  return s.replace(/[\0\t\n\v\f\r ]+$/, '');
}
export function rubyStrip(s: string): string {
  return rubyRstrip(s).replace(/^[\t\n\v\f\r ]+/, '');
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

export class Release {
  /** category title → entries; the configured categories first, in the file's order */
  private readonly entries = new Map<unknown, ReleaseEntry[]>();

  constructor(
    readonly version: string,
    private readonly date: ReleaseDate,
    private readonly config: ChangelogConfig,
  ) {
    for (const title of config.categories.values()) this.entries.set(title, []);
  }

  addEntry(category: string, entry: ReleaseEntry): void {
    const title = categoryOf(this.config, category);
    let list = this.entries.get(title);
    if (!list) this.entries.set(title, (list = []));
    list.push(entry);
  }

  /** The template's data: non-empty categories with title, count, single_change and entries. */
  templateData(): { categories: Record<string, unknown>[] } {
    const rows: Record<string, unknown>[] = [];
    for (const [title, entries] of this.entries) {
      if (!entries.length) continue;
      rows.push({ title, count: entries.length, single_change: entries.length === 1, entries });
    }
    return { categories: rows };
  }

  /** "## <version> (<date>)\n\n<template output, stripped>\n\n"; ChangelogError when the template fails. */
  toMarkdown(): string {
    let markdown: string;
    try {
      markdown = rubyStrip(this.config.template.evaluate(this.templateData()));
    } catch (e) {
      if (e instanceof TemplateError) throw new ChangelogError(e.message);
      throw e;
    }
    return `## ${this.version} (${strftime(this.config.dateFormat, this.date)})\n\n${markdown}\n\n`;
  }

  /** /^##\s*<version>/: the changelog already has this release. */
  headerStartPattern(): RegExp {
    return new RegExp(`^##[\\t\\n\\v\\f\\r ]*${escapeRegExp(this.version)}`, 'm');
  }
}
