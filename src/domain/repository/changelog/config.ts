// The changelog configuration file (Gitlab::Changelog::Config): YAML read from the default branch,
// with date_format, template, categories, tag_regex and include_groups.
import YAML from 'yaml';
import { ChangelogError, TemplateError } from './error.ts';
import { DEFAULT_TEMPLATE, parseTemplate, type Template } from './template.ts';
import { DEFAULT_TAG_REGEX } from './version.ts';

/** Hearth's default location (GitLab's is .gitlab/changelog_config.yml). */
export const DEFAULT_CONFIG_FILE = '.service/changelog_config.yml';
export const DEFAULT_DATE_FORMAT = '%Y-%m-%d';

export interface ChangelogConfig {
  dateFormat: string;
  template: Template;
  /** trailer value → category title, in the file's order */
  categories: Map<string, unknown>;
  /** RE2 syntax, as written in the file */
  tagRegex: string;
  /** users always credited: direct members of the include_groups the caller may read */
  alwaysCreditUserIds: Set<number>;
}

let defaultTemplate: Template | null = null;

export function defaultConfig(): ChangelogConfig {
  defaultTemplate ??= parseTemplate(DEFAULT_TEMPLATE);
  return { dateFormat: DEFAULT_DATE_FORMAT, template: defaultTemplate, categories: new Map(), tagRegex: DEFAULT_TAG_REGEX, alwaysCreditUserIds: new Set() };
}

/** Config#category: the configured title of a trailer value, or the value itself. */
export function categoryOf(config: ChangelogConfig, name: string): unknown {
  const title = config.categories.has(name) ? config.categories.get(name) : undefined;
  return title === undefined || title === null || title === false ? name : title;
}

function containsDate(v: unknown): boolean {
  if (v instanceof Date) return true;
  if (Array.isArray(v)) return v.some(containsDate);
  if (v && typeof v === 'object') return Object.values(v).some(containsDate);
  return false;
}

/**
 * YAML.safe_load of the file: null for a blank file or an empty document; ChangelogError
 * "<path> does not contain valid YAML" for syntax errors, aliases and values safe_load refuses (dates).
 */
export function parseConfigYaml(text: string, path: string): unknown {
  if (text.trim() === '') return null;
  const invalid = () => new ChangelogError(`${path} does not contain valid YAML`);
  let value: unknown;
  try {
    const docs = YAML.parseAllDocuments(text, { version: '1.1', prettyErrors: false });
    const first = Array.isArray(docs) ? docs[0] : docs;
    if (!first) return null;
    if (first.errors.length) throw invalid();
    value = first.toJS({ maxAliasCount: 0 });
  } catch {
    throw invalid();
  }
  if (containsDate(value)) throw invalid();
  return value ?? null;
}

const truthy = (v: unknown) => v !== undefined && v !== null && v !== false;

function ownValue(hash: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(hash, key) ? hash[key] : undefined;
}

/** Array(x) of Ruby: nil → [], a list as it is, anything else in a list of one. */
function rubyArray(v: unknown): unknown[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v;
  if (typeof v === 'object') return Object.entries(v as object);
  return [v];
}

/**
 * Config.from_hash, in GitLab's order: date_format, template (parse errors), categories (must be a
 * hash), tag_regex, include_groups (`creditedMembers` resolves the group paths the caller may read).
 */
export async function configFromHash(hash: unknown, creditedMembers: (groupPaths: string[]) => Promise<Set<number>>): Promise<ChangelogConfig> {
  const config = defaultConfig();
  // Not a mapping (a bare string or number): no keys, as Ruby's String#[] finds none.
  if (!hash || typeof hash !== 'object' || Array.isArray(hash)) return config;
  const h = hash as Record<string, unknown>;
  const date = ownValue(h, 'date_format');
  if (truthy(date)) config.dateFormat = String(date);
  const template = ownValue(h, 'template');
  if (truthy(template)) {
    try {
      config.template = parseTemplate(String(template));
    } catch (e) {
      if (e instanceof TemplateError) throw new ChangelogError(e.message);
      throw e;
    }
  }
  const categories = ownValue(h, 'categories');
  if (truthy(categories)) {
    if (typeof categories !== 'object' || Array.isArray(categories)) throw new ChangelogError('The "categories" configuration key must be a Hash');
    config.categories = new Map(Object.entries(categories as Record<string, unknown>));
  }
  const regex = ownValue(h, 'tag_regex');
  if (truthy(regex)) config.tagRegex = String(regex);
  const groups = rubyArray(ownValue(h, 'include_groups')).filter((g): g is string => typeof g === 'string');
  if (groups.length) config.alwaysCreditUserIds = await creditedMembers(groups);
  return config;
}
