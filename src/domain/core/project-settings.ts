// The project attributes that live in projects.settings (JSON): feature access levels and GitLab's
// project, merge request and CI/CD settings, each with its type, GitLab's default for a new project
// and the values the API accepts. One table drives the route schemas, the validation and the entity.
import type { ProjectRow } from '../../db/schema.ts';

export const ACCESS_LEVEL_VALUES = ['disabled', 'private', 'enabled'] as const;
export const ACCESS_LEVEL_VALUES_WITH_PUBLIC = ['disabled', 'private', 'enabled', 'public'] as const;
export type FeatureAccessLevel = (typeof ACCESS_LEVEL_VALUES_WITH_PUBLIC)[number];

/** ProjectFeature: each feature's access level (the `<feature>_access_level` attributes). */
export const FEATURES = {
  issues: ACCESS_LEVEL_VALUES,
  repository: ACCESS_LEVEL_VALUES,
  merge_requests: ACCESS_LEVEL_VALUES,
  forking: ACCESS_LEVEL_VALUES,
  wiki: ACCESS_LEVEL_VALUES,
  builds: ACCESS_LEVEL_VALUES,
  snippets: ACCESS_LEVEL_VALUES,
  package_registry: ACCESS_LEVEL_VALUES_WITH_PUBLIC,
  pages: ACCESS_LEVEL_VALUES_WITH_PUBLIC,
  analytics: ACCESS_LEVEL_VALUES,
  container_registry: ACCESS_LEVEL_VALUES,
  security_and_compliance: ACCESS_LEVEL_VALUES,
  releases: ACCESS_LEVEL_VALUES,
  environments: ACCESS_LEVEL_VALUES,
  feature_flags: ACCESS_LEVEL_VALUES,
  infrastructure: ACCESS_LEVEL_VALUES,
  monitor: ACCESS_LEVEL_VALUES,
  model_experiments: ACCESS_LEVEL_VALUES,
  model_registry: ACCESS_LEVEL_VALUES,
} as const;
export type Feature = keyof typeof FEATURES;

/** The old boolean switches (API v5 drops them): true → enabled, false → disabled. */
export const LEGACY_FEATURE_FLAGS: Record<string, Feature> = {
  issues_enabled: 'issues',
  merge_requests_enabled: 'merge_requests',
  wiki_enabled: 'wiki',
  jobs_enabled: 'builds',
  snippets_enabled: 'snippets',
  container_registry_enabled: 'container_registry',
};

type Kind = 'boolean' | 'string' | 'integer' | 'string[]';
export interface SettingDef {
  kind: Kind;
  default: unknown;
  /** null is a value of its own (GitLab shows null for these on a new project) */
  nullable?: boolean;
  values?: readonly string[];
  /** accepted on create only, on update only, or both (default) */
  on?: 'create' | 'update';
}

const bool = (d: boolean | null, extra: Partial<SettingDef> = {}): SettingDef => ({ kind: 'boolean', default: d, nullable: d === null, ...extra });
const str = (d: string | null, extra: Partial<SettingDef> = {}): SettingDef => ({ kind: 'string', default: d, nullable: d === null, ...extra });
const int = (d: number | null, extra: Partial<SettingDef> = {}): SettingDef => ({ kind: 'integer', default: d, nullable: d === null, ...extra });
const oneOf = (values: readonly string[], d: string, extra: Partial<SettingDef> = {}): SettingDef => ({ kind: 'string', default: d, values, ...extra });

/** Settings other than the feature access levels, as the API names them. */
export const PROJECT_SETTINGS: Record<string, SettingDef> = {
  build_git_strategy: oneOf(['fetch', 'clone'], 'fetch'),
  build_timeout: int(3600),
  auto_cancel_pending_pipelines: oneOf(['disabled', 'enabled'], 'enabled'),
  ci_config_path: str(null),
  service_desk_enabled: bool(false),
  emails_enabled: bool(true),
  show_default_award_emojis: bool(true),
  show_diff_preview_in_email: bool(true),
  warn_about_potentially_unwanted_characters: bool(true),
  enforce_auth_checks_on_uploads: bool(true),
  shared_runners_enabled: bool(true),
  group_runners_enabled: bool(true),
  resource_group_default_process_mode: oneOf(['unordered', 'oldest_first', 'newest_first', 'newest_ready_first'], 'unordered'),
  resolve_outdated_diff_discussions: bool(false),
  remove_source_branch_after_merge: bool(true),
  packages_enabled: bool(true),
  lfs_enabled: bool(true),
  public_jobs: bool(true),
  request_access_enabled: bool(true),
  only_allow_merge_if_pipeline_succeeds: bool(false),
  allow_merge_on_skipped_pipeline: bool(null),
  only_allow_merge_if_all_discussions_are_resolved: bool(false),
  printing_merge_request_link_enabled: bool(true),
  merge_method: oneOf(['ff', 'rebase_merge', 'merge'], 'merge'),
  suggestion_commit_message: str(null),
  merge_commit_template: str(null),
  squash_commit_template: str(null),
  issue_branch_template: str(null),
  auto_devops_enabled: bool(false),
  auto_devops_deploy_strategy: oneOf(['continuous', 'manual', 'timed_incremental'], 'continuous'),
  autoclose_referenced_issues: bool(true),
  squash_option: oneOf(['never', 'always', 'default_on', 'default_off'], 'default_off'),
  mr_default_target_self: bool(false),
  merge_request_title_regex: str(null),
  merge_request_title_regex_description: str(null),
  // create only
  repository_object_format: oneOf(['sha1', 'sha256'], 'sha1', { on: 'create' }),
  initialize_with_readme: bool(false, { on: 'create' }),
  // update only (optional_update_params)
  ci_default_git_depth: int(20, { on: 'update' }),
  keep_latest_artifact: bool(true, { on: 'update' }),
  ci_forward_deployment_enabled: bool(true, { on: 'update' }),
  ci_forward_deployment_rollback_allowed: bool(true, { on: 'update' }),
  ci_allow_fork_pipelines_to_run_in_parent_project: bool(true, { on: 'update' }),
  ci_separated_caches: bool(true, { on: 'update' }),
  restrict_user_defined_variables: bool(false, { on: 'update' }),
  ci_pipeline_variables_minimum_override_role: oneOf(['no_one_allowed', 'developer', 'maintainer', 'owner'], 'developer', { on: 'update' }),
  ci_push_repository_for_job_token_allowed: bool(false, { on: 'update' }),
  ci_id_token_sub_claim_components: { kind: 'string[]', default: ['project_path', 'ref_type', 'ref'], on: 'update' },
  ci_delete_pipelines_in_seconds: int(null, { on: 'update' }),
  max_artifacts_size: int(null, { on: 'update' }),
};

/** Deprecated names the API still takes, and what they mean now. */
export const SETTING_ALIASES: Record<string, { to: string; invert?: boolean }> = {
  emails_disabled: { to: 'emails_enabled', invert: true },
  public_builds: { to: 'public_jobs' },
};

/** Every stored attribute of a project's settings JSON, with the defaults filled in. */
export type ProjectSettings = Record<string, unknown> & { [K in `${Feature}_access_level`]: FeatureAccessLevel };

/** GitLab's defaults for a new project of this visibility. */
export function defaultSettings(visibility: string): ProjectSettings {
  return structuredClone(DEFAULTS[visibility] ?? DEFAULTS.private);
}

function buildDefaults(visibility: string): ProjectSettings {
  const out: Record<string, unknown> = {};
  for (const f of Object.keys(FEATURES) as Feature[]) out[`${f}_access_level`] = 'enabled';
  out.pages_access_level = visibility === 'public' ? 'enabled' : 'private';
  out.security_and_compliance_access_level = 'private';
  // No container registry is configured, so GitLab starts its feature disabled.
  out.container_registry_access_level = 'disabled';
  for (const [k, d] of Object.entries(PROJECT_SETTINGS)) out[k] = d.default;
  return Object.freeze(out) as ProjectSettings;
}

const DEFAULTS: Record<string, ProjectSettings> = { private: buildDefaults('private'), internal: buildDefaults('internal'), public: buildDefaults('public') };

/**
 * The stored settings over the defaults (rows written before a setting existed get its default).
 * For reading: values may be shared with the defaults, so change a copy.
 */
export function settingsOf(project: Pick<ProjectRow, 'settings' | 'visibility'>): ProjectSettings {
  const stored = project.settings === '{}' ? null : (JSON.parse(project.settings) as Record<string, unknown>);
  const base = DEFAULTS[project.visibility] ?? DEFAULTS.private;
  return stored ? { ...base, ...stored } : base;
}

/** Settings changes from API input (aliases and legacy flags resolved; access levels win over flags). */
export function settingsChanges(input: Record<string, unknown>, on: 'create' | 'update'): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [flag, feature] of Object.entries(LEGACY_FEATURE_FLAGS)) {
    if (input[flag] !== undefined) out[`${feature}_access_level`] = input[flag] ? 'enabled' : 'disabled';
  }
  if (input.packages_enabled !== undefined) out.package_registry_access_level = input.packages_enabled ? 'enabled' : 'disabled';
  for (const [alias, { to, invert }] of Object.entries(SETTING_ALIASES)) {
    if (input[alias] !== undefined && input[to] === undefined) out[to] = invert ? !input[alias] : input[alias];
  }
  for (const f of Object.keys(FEATURES)) {
    const key = `${f}_access_level`;
    if (input[key] !== undefined) out[key] = input[key];
  }
  for (const [k, d] of Object.entries(PROJECT_SETTINGS)) {
    if (d.on && d.on !== on) continue;
    if (input[k] !== undefined) out[k] = input[k];
  }
  return out;
}

/** Model validations of the settings, GitLab's messages (Project and ProjectCiCdSetting). */
export function validateSettings(s: Record<string, unknown>, errors: Record<string, string[]>): void {
  const add = (k: string, m: string) => void (errors[k] ??= []).push(m);
  const ci = s.ci_config_path;
  if (typeof ci === 'string' && ci !== '') {
    if (/\.{2}|^\//.test(ci)) add('ci_config_path', 'cannot include leading slash or directory traversal.');
    if (ci.length > 255) add('ci_config_path', 'is too long (maximum is 255 characters)');
  }
  const timeout = s.build_timeout;
  if (typeof timeout === 'number' && (timeout < 600 || timeout >= 2_629_746)) add('build_timeout', 'needs to be between 10 minutes and 1 month');
  const depth = s.ci_default_git_depth;
  if (typeof depth === 'number') {
    if (depth < 0) add('ci_cd_settings.default_git_depth', 'must be greater than or equal to 0');
    if (depth > 1000) add('ci_cd_settings.default_git_depth', 'must be less than or equal to 1000');
  }
  const maxArtifacts = s.max_artifacts_size;
  if (typeof maxArtifacts === 'number' && maxArtifacts <= 0) add('max_artifacts_size', 'must be greater than 0');
}
