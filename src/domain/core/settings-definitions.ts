// Every application setting we know: its type, GitLab's default and its constraints. This table is the
// allow-list of GET and PUT /application/settings and drives the response schema, the PUT coercion
// and the model validation (settings-update.ts). Defaults follow gitlabhq
// app/models/application_setting_implementation.rb `defaults` (non-FIPS, gitlab.yml defaults).
// Each definition carries the type of its value, so `Settings` (what a read answers) is derived from
// the table and a new setting is typed where it is declared.
import type { BranchProtectionDefaults } from './group-settings.ts';

export type SettingType = 'integer' | 'number' | 'boolean' | 'string' | 'array' | 'hash';

/** `T`: the type of the setting's value (only in the type: the definitions are plain data). */
export interface SettingDef<T = unknown> {
  type: SettingType;
  default: T;
  /** null is a valid value (also in responses) */
  nullable?: boolean;
  /** Grape `values`: anything else → 400 {"error":"<name> does not have a valid value"} */
  values?: readonly (string | number)[];
  /** model numericality (GitLab's messages: "must be greater than 0" …) */
  gt?: number;
  gte?: number;
  lt?: number;
  lte?: number;
  /** model length limit for strings: "is too long (maximum is N characters)" */
  maxLength?: number;
  /** model inclusion: "is not included in the list" */
  inclusion?: readonly (string | number)[];
  /** extra model check, see settings-update.ts */
  check?: 'url' | 'email' | 'regex' | 'token_prefix' | 'ci_config_path' | 'domains' | 'duration' | 'ref';
  /** accepted on PUT but never returned (credentials of third-party services) */
  writeOnly?: boolean;
}

type Extra = Partial<Omit<SettingDef, 'type' | 'default'>>;
const int = <D extends number | null>(d: D, extra: Extra = {}): SettingDef<D extends null ? number | null : number> => ({
  type: 'integer',
  default: d as D extends null ? number | null : number,
  nullable: d === null,
  ...extra,
});
const num = (d: number, extra: Extra = {}): SettingDef<number> => ({ type: 'number', default: d, ...extra });
const bool = (d: boolean): SettingDef<boolean> => ({ type: 'boolean', default: d });
/** nullable unless `nullable: false` is given */
const str = <E extends Extra = Extra>(d: string | null, extra?: E): SettingDef<E extends { nullable: false } ? string : string | null> => ({
  type: 'string',
  default: d as string,
  nullable: true,
  ...extra,
});
const list = <T>(d: T[], extra: Extra = {}): SettingDef<T[]> => ({ type: 'array', default: d, ...extra });
const hash = <T>(d: T): SettingDef<T> => ({ type: 'hash', default: d });
const domains = (): SettingDef<string[]> => list<string>([], { check: 'domains' });

export const VISIBILITY_LEVELS = { private: 0, internal: 10, public: 20 } as const;
export type VisibilityName = keyof typeof VISIBILITY_LEVELS;
const VISIBILITY = Object.keys(VISIBILITY_LEVELS) as VisibilityName[];

/** KeyRestrictionValidator.supported_key_restrictions: 0 (any size), -1 (forbidden) and the key sizes. */
const keyRestriction = (...sizes: number[]): SettingDef<number> => int(0, { values: [0, -1, ...sizes] });

/** Gitlab::I18n.available_locales */
export const LOCALES = [
  'bg',
  'cs_CZ',
  'da_DK',
  'de',
  'en',
  'eo',
  'es',
  'fil_PH',
  'fr',
  'gl_ES',
  'id_ID',
  'it',
  'ja',
  'ko',
  'nb_NO',
  'nl_NL',
  'pl_PL',
  'pt_BR',
  'ro_RO',
  'ru',
  'si_LK',
  'sk_SK',
  'sv_SE',
  'tr_TR',
  'uk',
  'zh_CN',
  'zh_HK',
  'zh_TW',
] as const;

/** Gitlab::Access: NO_ACCESS, DEVELOPER, MAINTAINER, ADMIN (allowed_access_levels of push and merge). */
export const BRANCH_ACCESS_LEVELS = [0, 30, 40, 60] as const;

/** Repository storages known to this instance (gitlab.yml `repositories.storages`). */
export const STORAGES = ['default'] as const;
export const IMPORT_SOURCES = [
  'github',
  'bitbucket',
  'bitbucket_server',
  'fogbugz',
  'git',
  'gitlab_project',
  'gitea',
  'manifest',
  'gitlab_built_in_project_template',
] as const;

const DEFINITIONS = {
  // integers
  default_projects_limit: int(100000, { gte: 0 }),
  default_branch_protection: int(2, { values: [0, 1, 2, 3, 4] }),
  max_attachment_size: int(100, { gt: 0 }),
  max_artifacts_size: int(100, { gt: 0 }),
  push_event_hooks_limit: int(3, { gte: 0 }),
  diff_max_patch_bytes: int(204800, { gte: 102400, lte: 1048576 }),
  diff_max_files: int(1000, { gte: 500, lte: 3000 }),
  diff_max_lines: int(50000, { gte: 1000, lte: 50000 }),
  max_decompressed_archive_size: int(25600, { gte: 0 }),
  max_export_size: int(0, { gte: 0 }),
  max_import_size: int(0, { gte: 0 }),
  max_import_remote_file_size: int(10240, { gte: 0 }),
  max_login_attempts: int(null, { gt: 0 }),
  session_expire_delay: int(10080, { gt: 0 }),
  failed_login_attempts_unlock_period_in_minutes: int(null, { gt: 0 }),
  container_registry_cleanup_tags_service_max_list_size: int(200, { gte: 0 }),
  container_registry_delete_tags_service_timeout: int(250, { gte: 0 }),
  container_registry_expiration_policies_worker_capacity: int(4, { gte: 0 }),
  container_registry_token_expire_delay: int(5, { gt: 0 }),
  decompress_archive_file_timeout: int(210, { gte: 0 }),
  package_registry_cleanup_policies_worker_capacity: int(2, { gte: 0 }),
  terminal_max_session_time: int(0, { gte: 0 }),
  rsa_key_restriction: keyRestriction(1024, 2048, 3072, 4096),
  dsa_key_restriction: keyRestriction(1024, 2048, 3072),
  ecdsa_key_restriction: keyRestriction(256, 384, 521),
  ed25519_key_restriction: keyRestriction(256),
  ecdsa_sk_key_restriction: keyRestriction(256),
  ed25519_sk_key_restriction: keyRestriction(256),
  first_day_of_week: int(0, { inclusion: [0, 1, 6] }),
  // written as a group path (performance_bar_allowed_group_path); see settings-update.ts
  performance_bar_allowed_group_id: int(null),
  local_markdown_version: int(0, { gte: 0, lt: 65536 }),
  snippet_size_limit: int(52428800, { gt: 0 }),
  issues_create_limit: int(300, { gte: 0 }),
  raw_blob_request_limit: int(300, { gte: 0 }),
  wiki_page_max_content_bytes: int(52428800, { gte: 1024 }),
  bulk_import_max_download_file_size: int(5120, { gte: 0 }),
  bulk_import_concurrent_pipeline_batch_limit: int(25, { gt: 0 }),
  project_jobs_api_rate_limit: int(600, { gt: 0 }),
  projects_api_rate_limit_unauthenticated: int(400, { gte: 0 }),
  // Gitlab::ApplicationRateLimiter :search_rate_limit (a minute per user) and its unauthenticated one (per address)
  search_rate_limit: int(300, { gte: 0 }),
  search_rate_limit_unauthenticated: int(100, { gte: 0 }),
  downstream_pipeline_trigger_limit_per_project_user_sha: int(0, { gte: 0 }),
  file_template_project_id: int(null),
  geo_status_timeout: int(10, { gt: 0 }),
  deletion_adjourned_period: int(7, { gte: 1, lte: 90 }),
  security_approval_policies_limit: int(5, { gte: 0 }),
  unconfirmed_users_delete_after_days: int(7, { gt: 0 }),
  concurrent_github_import_jobs_limit: int(1000, { gt: 0 }),
  concurrent_bitbucket_import_jobs_limit: int(100, { gt: 0 }),
  concurrent_bitbucket_server_import_jobs_limit: int(100, { gt: 0 }),
  two_factor_grace_period: int(48, { gte: 0 }),
  housekeeping_optimize_repository_period: int(10, { gt: 0 }),
  external_pipeline_validation_service_timeout: int(null, { gt: 0 }),
  // rate limits (user and IP throttles applied by src/http/plugins/rate-limit.ts)
  throttle_unauthenticated_api_enabled: bool(false),
  throttle_unauthenticated_api_requests_per_period: int(3600, { gt: 0 }),
  throttle_unauthenticated_api_period_in_seconds: int(3600, { gt: 0 }),
  throttle_authenticated_api_enabled: bool(false),
  throttle_authenticated_api_requests_per_period: int(7200, { gt: 0 }),
  throttle_authenticated_api_period_in_seconds: int(3600, { gt: 0 }),
  // web throttles: HTML pages and upload downloads; throttle_unauthenticated_* are their legacy names
  throttle_unauthenticated_web_enabled: bool(false),
  throttle_unauthenticated_web_requests_per_period: int(3600, { gt: 0 }),
  throttle_unauthenticated_web_period_in_seconds: int(3600, { gt: 0 }),
  throttle_authenticated_web_enabled: bool(false),
  throttle_authenticated_web_requests_per_period: int(7200, { gt: 0 }),
  throttle_authenticated_web_period_in_seconds: int(3600, { gt: 0 }),
  // other settings GitLab documents (stored and returned; README says which act)
  default_project_creation: int(2, { values: [0, 1, 2, 3, 4] }),
  gitaly_timeout_default: int(55, { gte: 0 }),
  gitaly_timeout_fast: int(10, { gte: 0 }),
  gitaly_timeout_medium: int(30, { gte: 0 }),
  max_pages_size: int(100, { gte: 0 }),
  // PersonalAccessToken lifetime cap in days (GitLab: 1..365); tokens without expires_at get it
  max_personal_access_token_lifetime: int(null, { gt: 0, lte: 365 }),
  push_event_activities_limit: int(3, { gte: 0 }),
  unique_ips_limit_per_user: int(10, { gte: 1 }),
  unique_ips_limit_time_window: int(3600, { gte: 0 }),
  minimum_password_length: int(8, { gte: 8, lte: 128 }),
  deactivate_dormant_users_period: int(90, { gte: 90 }),
  receive_max_input_size: int(null, { gt: 0 }),
  asciidoc_max_includes: int(32, { gte: 0, lte: 64 }),
  // numbers
  polling_interval_multiplier: num(1, { gte: 0 }),
  external_authorization_service_timeout: num(0.5),
  // booleans
  signup_enabled: bool(true),
  password_authentication_enabled_for_web: bool(true),
  password_authentication_enabled_for_git: bool(true),
  user_oauth_applications: bool(true),
  domain_denylist_enabled: bool(false),
  enforce_terms: bool(false),
  admin_mode: bool(false),
  silent_mode_enabled: bool(false),
  silent_admin_exports_enabled: bool(false),
  project_export_enabled: bool(true),
  keep_latest_artifact: bool(true),
  require_admin_approval_after_user_signup: bool(true),
  allow_account_deletion: bool(true),
  updating_name_disabled_for_users: bool(false),
  user_show_add_ssh_key_message: bool(true),
  user_defaults_to_private_profile: bool(false),
  can_create_group: bool(true),
  asset_proxy_enabled: bool(false),
  allow_local_requests_from_web_hooks_and_services: bool(false),
  allow_local_requests_from_system_hooks: bool(true),
  maven_package_requests_forwarding: bool(true),
  npm_package_requests_forwarding: bool(true),
  pypi_package_requests_forwarding: bool(true),
  package_registry_allow_anyone_to_pull_option: bool(true),
  external_authorization_service_enabled: bool(false),
  container_expiration_policies_enable_historic_entries: bool(false),
  container_registry_expiration_policies_caching: bool(true),
  notify_on_unknown_sign_in: bool(true),
  email_restrictions_enabled: bool(false),
  group_owners_can_manage_default_branch_protection: bool(true),
  default_project_deletion_protection: bool(false),
  disable_personal_access_tokens: bool(false),
  require_personal_access_token_expiry: bool(true),
  security_policy_global_group_approvers_enabled: bool(true),
  delete_unconfirmed_users: bool(false),
  allow_group_owners_to_manage_ldap: bool(true),
  floc_enabled: bool(false),
  require_two_factor_authentication: bool(false),
  housekeeping_enabled: bool(true),
  user_default_external: bool(false),
  help_page_hide_commercial_content: bool(false),
  html_emails_enabled: bool(true),
  email_author_in_body: bool(false),
  mirror_available: bool(true),
  shared_runners_enabled: bool(true),
  auto_devops_enabled: bool(true),
  dns_rebinding_protection_enabled: bool(true),
  version_check_enabled: bool(true),
  usage_ping_enabled: bool(true),
  repository_checks_enabled: bool(true),
  protected_ci_variables: bool(true),
  time_tracking_limit_to_hours: bool(false),
  unique_ips_limit_enabled: bool(false),
  suggest_pipeline_enabled: bool(true),
  deactivate_dormant_users: bool(false),
  authorized_keys_enabled: bool(true),
  hide_third_party_offers: bool(false),
  allow_project_creation_for_guest_and_below: bool(true),
  invisible_captcha_enabled: bool(false),
  math_rendering_limits_enabled: bool(true),
  allow_runner_registration_token: bool(true),
  bulk_import_enabled: bool(false),
  user_deactivation_emails_enabled: bool(true),
  // the vendor-named enable flags of the spec: spam check, avatar service, diagram renderers, AI features
  akismet_enabled: bool(false),
  recaptcha_enabled: bool(false),
  gravatar_enabled: bool(true),
  plantuml_enabled: bool(false),
  kroki_enabled: bool(false),
  diagramsnet_enabled: bool(true),
  duo_features_enabled: bool(true),
  lock_duo_features_enabled: bool(false),
  // strings
  default_preferred_language: str('en', { nullable: false, inclusion: LOCALES }),
  // ApplicationSetting: presence and DurationValidator ("is not a correct duration")
  default_artifacts_expire_in: str('30 days', { nullable: false, check: 'duration' }),
  home_page_url: str(null, { check: 'url' }),
  after_sign_out_path: str(null, { check: 'url' }),
  after_sign_up_text: str(null),
  default_snippet_visibility: str('private', { values: VISIBILITY, nullable: false }),
  default_project_visibility: str('private', { values: VISIBILITY, nullable: false }),
  default_group_visibility: str('private', { values: VISIBILITY, nullable: false }),
  default_ci_config_path: str(null, { check: 'ci_config_path', maxLength: 255 }),
  terms: str(null),
  asset_proxy_url: str(null),
  asset_proxy_secret_key: str(null, { writeOnly: true }),
  personal_access_token_prefix: str('glpat-', { check: 'token_prefix' }),
  rate_limiting_response_text: str(null, { maxLength: 255 }),
  security_txt_content: str(null, { maxLength: 2048 }),
  external_authorization_service_url: str(null),
  external_authorization_service_default_label: str(null),
  external_pipeline_validation_service_url: str(null, { check: 'url' }),
  external_pipeline_validation_service_token: str(null),
  geo_node_allowed_ips: str('0.0.0.0/0, ::/0'),
  globally_allowed_ips: str(''),
  email_restrictions: str(null, { check: 'regex' }),
  abuse_notification_email: str(null, { check: 'email' }),
  akismet_api_key: str(null, { writeOnly: true }),
  recaptcha_site_key: str(null, { writeOnly: true }),
  recaptcha_private_key: str(null, { writeOnly: true }),
  plantuml_url: str(null),
  kroki_url: str(null),
  diagramsnet_url: str('https://embed.diagrams.net'),
  // the branch of new repositories (and the default of projects created without default_branch)
  default_branch_name: str(null, { check: 'ref', maxLength: 255 }),
  email_confirmation_setting: str('off', { values: ['off', 'soft', 'hard'], nullable: false }),
  user_default_internal_regex: str(null, { check: 'regex' }),
  help_page_text: str(null),
  help_page_support_url: str(null, { check: 'url', maxLength: 255 }),
  help_page_documentation_base_url: str(null, { check: 'url', maxLength: 255 }),
  shared_runners_text: str(null),
  auto_devops_domain: str(null),
  commit_email_hostname: str(null),
  // arrays
  restricted_visibility_levels: list<VisibilityName>([]),
  /** Gitlab::ImportSources: where projects may be imported from (gitlab_project: export archives) */
  import_sources: list<string>(['github', 'bitbucket', 'bitbucket_server', 'fogbugz', 'git', 'gitlab_project', 'gitea', 'manifest'], {
    values: IMPORT_SOURCES,
  }),
  domain_allowlist: domains(),
  domain_denylist: domains(),
  outbound_local_requests_whitelist: domains(),
  asset_proxy_allowlist: domains(),
  disabled_oauth_sign_in_sources: list<string>([]),
  // hashes
  default_branch_protection_defaults: hash<BranchProtectionDefaults>({
    allowed_to_push: [{ access_level: 40 }],
    allow_force_push: false,
    allowed_to_merge: [{ access_level: 40 }],
    developer_can_initial_push: false,
  }),
  repository_storages_weighted: hash<Record<string, number>>({ default: 100 }),
};

/** Every definition by name, for the code that walks the table. */
export const SETTINGS: Record<string, SettingDef> = DEFINITIONS;

/** Legacy parameter names rewritten to the current one after validation (lib/api/settings.rb). */
export const ALIASES: Record<string, string> = {
  signin_enabled: 'password_authentication_enabled_for_web',
  password_authentication_enabled: 'password_authentication_enabled_for_web',
  allow_local_requests_from_hooks_and_services: 'allow_local_requests_from_web_hooks_and_services',
  asset_proxy_whitelist: 'asset_proxy_allowlist',
  admin_notification_email: 'abuse_notification_email',
  outbound_local_requests_allowlist: 'outbound_local_requests_whitelist',
  housekeeping_incremental_repack_period: 'housekeeping_optimize_repository_period',
  performance_bar_allowed_group_path: 'performance_bar_allowed_group_id',
  throttle_unauthenticated_enabled: 'throttle_unauthenticated_web_enabled',
  throttle_unauthenticated_requests_per_period: 'throttle_unauthenticated_web_requests_per_period',
  throttle_unauthenticated_period_in_seconds: 'throttle_unauthenticated_web_period_in_seconds',
};

/** Deprecated parameters that are still accepted (and type-checked) but have no effect. */
export const IGNORED_PARAMS: Record<string, SettingType> = {
  housekeeping_bitmaps_enabled: 'boolean',
  housekeeping_full_repack_period: 'integer',
  housekeeping_gc_period: 'integer',
};

/** Old names still present in responses, mirroring the current setting (Entities::ApplicationSetting). */
export const RESPONSE_ALIASES: Record<string, string> = {
  password_authentication_enabled: 'password_authentication_enabled_for_web',
  signin_enabled: 'password_authentication_enabled_for_web',
  allow_local_requests_from_hooks_and_services: 'allow_local_requests_from_web_hooks_and_services',
  asset_proxy_whitelist: 'asset_proxy_allowlist',
  admin_notification_email: 'abuse_notification_email',
  housekeeping_full_repack_period: 'housekeeping_optimize_repository_period',
  housekeeping_gc_period: 'housekeeping_optimize_repository_period',
  housekeeping_incremental_repack_period: 'housekeeping_optimize_repository_period',
  throttle_unauthenticated_enabled: 'throttle_unauthenticated_web_enabled',
  throttle_unauthenticated_requests_per_period: 'throttle_unauthenticated_web_requests_per_period',
  throttle_unauthenticated_period_in_seconds: 'throttle_unauthenticated_web_period_in_seconds',
};

/** Deprecated response fields with a fixed value. */
export const RESPONSE_CONSTANTS: Record<string, boolean> = { housekeeping_bitmaps_enabled: true };

/** Settings removed in the past: never returned, ignored on write. */
export const REMOVED = [
  'delayed_project_deletion',
  'delayed_group_deletion',
  'in_product_marketing_emails_enabled',
  'repository_storages',
  'user_email_lookup_limit',
];

/** Grape `given X: ->(val) { val } do requires Y end`: 400 {"error":"Y is missing"}. */
export const REQUIRES: Record<string, string[]> = {
  akismet_enabled: ['akismet_api_key'],
  diagramsnet_enabled: ['diagramsnet_url'],
  email_restrictions_enabled: ['email_restrictions'],
  kroki_enabled: ['kroki_url'],
  plantuml_enabled: ['plantuml_url'],
  recaptcha_enabled: ['recaptcha_site_key', 'recaptcha_private_key'],
  require_two_factor_authentication: ['two_factor_grace_period'],
};

/** Grape `mutually_exclusive`. */
export const MUTUALLY_EXCLUSIVE: string[][] = [['password_authentication_enabled_for_web', 'password_authentication_enabled', 'signin_enabled']];

/** The instance settings as a read answers them: every definition's value, typed by its definition. */
export type Settings = { [K in keyof typeof DEFINITIONS]: (typeof DEFINITIONS)[K] extends SettingDef<infer T> ? T : never };

/** A setting read by a name known only at run time (the code that walks the table). */
export function settingNamed(settings: Settings, name: string): unknown {
  return (settings as Record<string, unknown>)[name];
}

export function defaults(): Settings {
  const out: Record<string, unknown> = {};
  for (const [k, d] of Object.entries(SETTINGS)) out[k] = structuredClone(d.default);
  return out as Settings;
}

/** Stored values over the defaults; unknown and removed keys are dropped. */
export function withDefaults(stored: Record<string, unknown>): Settings {
  const out = defaults() as Record<string, unknown>;
  for (const [k, v] of Object.entries(stored)) if (Object.hasOwn(SETTINGS, k)) out[k] = v;
  return out as Settings;
}
