// What GitLab's Namespace and Group models accept (app/models/namespace.rb, group.rb,
// lib/gitlab/path_regex.rb, lib/gitlab/regex.rb), with its messages.

export type FieldErrors = Record<string, string[]>;

/** Gitlab::Access.project_creation_string_values */
export const PROJECT_CREATION_LEVELS = ['noone', 'owner', 'maintainer', 'developer', 'administrator'] as const;
/** Gitlab::Access.subgroup_creation_string_values */
export const SUBGROUP_CREATION_LEVELS = ['owner', 'maintainer'] as const;
/** Namespace::SHARED_RUNNERS_SETTINGS */
export const SHARED_RUNNERS_SETTINGS = ['disabled_and_unoverridable', 'disabled_and_overridable', 'disabled_with_override', 'enabled'] as const;
export const GIT_ACCESS_PROTOCOLS = ['ssh', 'http', 'all'] as const;
/** Gitlab::Access.protection_values */
export const BRANCH_PROTECTION_VALUES = [0, 1, 2, 3, 4] as const;

/**
 * Gitlab::PathRegex::NAMESPACE_FORMAT_REGEX: starts with a letter, digit, '_' or '.', then those or '-',
 * never ends in '.', and never in '.git' or '.atom'.
 */
const NAMESPACE_FORMAT = /^(?:[a-zA-Z0-9_.][a-zA-Z0-9_.-]*[a-zA-Z0-9_-]|[a-zA-Z0-9_])$/;
const NO_SUFFIX = /\.(git|atom)$/i;
export const NAMESPACE_FORMAT_MESSAGE = "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'.";

/**
 * Gitlab::PathRegex::TOP_LEVEL_ROUTES: a top-level group would be masked by these routes. Ours adds `git`
 * (the translation API's repository exports at `/git/<project>/<component>/`) and the translation pages'
 * `engage`, `languages` and `translate` (`projects` is GitLab's own).
 */
const TOP_LEVEL_ROUTES = new Set([
  '-',
  'git',
  '.well-known',
  '404.html',
  '422.html',
  '500.html',
  '502.html',
  '503.html',
  'admin',
  'api',
  'apple-touch-icon.png',
  'apple-touch-icon-precomposed.png',
  'assets',
  'dashboard',
  'deploy.html',
  'engage',
  'explore',
  'favicon.ico',
  'favicon.png',
  'files',
  'groups',
  'health_check',
  'help',
  'import',
  'jwt',
  'languages',
  'login',
  'oauth',
  'profile',
  'projects',
  'public',
  'robots.txt',
  's',
  'search',
  'sitemap',
  'sitemap.xml',
  'sitemap.xml.gz',
  'slash-command-logo.png',
  'snippets',
  'translate',
  'unsubscribes',
  'uploads',
  'users',
  'v2',
]);
/** Gitlab::PathRegex::PROJECT_WILDCARD_ROUTES: words that follow a project's path in the web routes; reserved
 * for projects and, as ILLEGAL_GROUP_PATH_WORDS, for subgroups. */
export const PROJECT_WILDCARD_ROUTES = new Set([
  '-',
  'badges',
  'blame',
  'blob',
  'builds',
  'commits',
  'create',
  'create_dir',
  'edit',
  'files',
  'find_file',
  'new',
  'preview',
  'raw',
  'refs',
  'tree',
  'update',
  'wikis',
]);

/** Gitlab::Regex.group_name_regex: starts with a letter, digit, emoji or '_'. */
const GROUP_NAME = /^[\p{L}\p{N}\u{00A9}-\u{1F9FF}_][\p{L}\p{N}\p{Pd}\u{00A9}-\u{1F9FF}_(). ]*$/u;
export const GROUP_NAME_MESSAGE =
  "can contain only letters, digits, emoji, '_', '.', dash, space, parenthesis. It must start with letter, digit, emoji or '_'.";

const MAX_LENGTH = 255;

function add(errors: FieldErrors, field: string, message: string): void {
  (errors[field] ??= []).push(message);
}

/** Namespace name: presence, length, and Group's format. */
export function validateName(name: string, errors: FieldErrors): void {
  if (name.trim() === '') add(errors, 'name', "can't be blank");
  if (name.length > MAX_LENGTH) add(errors, 'name', `is too long (maximum is ${MAX_LENGTH} characters)`);
  if (!GROUP_NAME.test(name)) add(errors, 'name', GROUP_NAME_MESSAGE);
}

export function validateDescription(description: string, errors: FieldErrors): void {
  if (description.length > MAX_LENGTH) add(errors, 'description', `is too long (maximum is ${MAX_LENGTH} characters)`);
}

/** Namespace path: presence, length, format, reserved words (top level or below), minimum length 2. */
export function validatePath(path: string, topLevel: boolean, errors: FieldErrors): void {
  if (path === '') add(errors, 'path', "can't be blank");
  if (path.length > MAX_LENGTH) add(errors, 'path', `is too long (maximum is ${MAX_LENGTH} characters)`);
  if (!NAMESPACE_FORMAT.test(path) || NO_SUFFIX.test(path)) add(errors, 'path', NAMESPACE_FORMAT_MESSAGE);
  else if ((topLevel ? TOP_LEVEL_ROUTES : PROJECT_WILDCARD_ROUTES).has(path.toLowerCase())) add(errors, 'path', `${path} is a reserved name`);
  if (path.length < 2) add(errors, 'path', 'is too short (minimum is 2 characters)');
}

/**
 * Ruby's Hash#inspect of `errors.messages` (symbol keys), as POST /groups embeds it in its message:
 * {:path=>["has already been taken"]}.
 */
export function rubyInspect(errors: FieldErrors): string {
  const parts = Object.entries(errors).map(([k, msgs]) => `:${k}=>[${msgs.map((m) => JSON.stringify(m).replace(/#(?=[{$@])/g, '\\#')).join(', ')}]`);
  return `{${parts.join(', ')}}`;
}
