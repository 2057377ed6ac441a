// Every application setting we know: its type and GitLab's default. The table is the allow-list for
// GET and PUT /application/settings.

export type SettingType = 'integer' | 'number' | 'boolean' | 'string' | 'array' | 'hash' | 'int_array';

export interface SettingDef {
  type: SettingType;
  default: unknown;
  /** allowed values (strings or integers) */
  values?: readonly (string | number)[];
  nullable?: boolean;
  min?: number;
}

const int = (d: number | null, extra: Partial<SettingDef> = {}): SettingDef => ({ type: 'integer', default: d, nullable: d === null, ...extra });
const num = (d: number): SettingDef => ({ type: 'number', default: d });
const bool = (d: boolean): SettingDef => ({ type: 'boolean', default: d });
const str = (d: string | null, extra: Partial<SettingDef> = {}): SettingDef => ({ type: 'string', default: d, nullable: true, ...extra });
const arr = (d: string[]): SettingDef => ({ type: 'array', default: d });

const VISIBILITY = ['private', 'internal', 'public'] as const;
const KEY_RESTRICTION = [0, -1, 1024, 2048, 3072, 4096, 256, 384, 521, 255] as const;

export const SETTINGS: Record<string, SettingDef> = {
  // integers
  default_projects_limit: int(100000, { min: 0 }),
  default_branch_protection: int(2, { values: [0, 1, 2, 3, 4] }),
  max_attachment_size: int(100, { min: 1 }),
  max_decompressed_archive_size: int(25600, { min: 0 }),
  max_export_size: int(0, { min: 0 }),
  max_import_size: int(0, { min: 0 }),
  max_import_remote_file_size: int(10240, { min: 0 }),
  max_login_attempts: int(null, { min: 1 }),
  session_expire_delay: int(10080, { min: 1 }),
  failed_login_attempts_unlock_period_in_minutes: int(null, { min: 1 }),
  container_registry_cleanup_tags_service_max_list_size: int(200, { min: 0 }),
  container_registry_delete_tags_service_timeout: int(250, { min: 0 }),
  container_registry_expiration_policies_worker_capacity: int(4, { min: 0 }),
  container_registry_token_expire_delay: int(5, { min: 1 }),
  decompress_archive_file_timeout: int(210, { min: 0 }),
  package_registry_cleanup_policies_worker_capacity: int(2, { min: 0 }),
  terminal_max_session_time: int(0, { min: 0 }),
  rsa_key_restriction: int(0, { values: KEY_RESTRICTION }),
  dsa_key_restriction: int(-1, { values: KEY_RESTRICTION }),
  ecdsa_key_restriction: int(0, { values: KEY_RESTRICTION }),
  ed25519_key_restriction: int(0, { values: KEY_RESTRICTION }),
  ecdsa_sk_key_restriction: int(0, { values: KEY_RESTRICTION }),
  ed25519_sk_key_restriction: int(0, { values: KEY_RESTRICTION }),
  first_day_of_week: int(0, { values: [0, 1, 6] }),
  performance_bar_allowed_group_id: int(null),
  local_markdown_version: int(0, { min: 0 }),
  snippet_size_limit: int(52428800, { min: 1 }),
  issues_create_limit: int(0, { min: 0 }),
  raw_blob_request_limit: int(300, { min: 0 }),
  wiki_page_max_content_bytes: int(52428800, { min: 1024 }),
  bulk_import_max_download_file_size: int(5120, { min: 0 }),
  bulk_import_concurrent_pipeline_batch_limit: int(25, { min: 1 }),
  project_jobs_api_rate_limit: int(600, { min: 0 }),
  projects_api_rate_limit_unauthenticated: int(400, { min: 0 }),
  downstream_pipeline_trigger_limit_per_project_user_sha: int(0, { min: 0 }),
  file_template_project_id: int(null),
  geo_status_timeout: int(10, { min: 1 }),
  deletion_adjourned_period: int(7, { min: 1 }),
  security_approval_policies_limit: int(5, { min: 0 }),
  unconfirmed_users_delete_after_days: int(7, { min: 1 }),
  concurrent_github_import_jobs_limit: int(1000, { min: 0 }),
  concurrent_bitbucket_import_jobs_limit: int(100, { min: 0 }),
  concurrent_bitbucket_server_import_jobs_limit: int(100, { min: 0 }),
  // rate limits (user and IP throttles honoured by the rate-limit plugin)
  throttle_unauthenticated_api_enabled: bool(false),
  throttle_unauthenticated_api_requests_per_period: int(3600, { min: 1 }),
  throttle_unauthenticated_api_period_in_seconds: int(3600, { min: 1 }),
  throttle_authenticated_api_enabled: bool(false),
  throttle_authenticated_api_requests_per_period: int(7200, { min: 1 }),
  throttle_authenticated_api_period_in_seconds: int(3600, { min: 1 }),
  // numbers
  polling_interval_multiplier: num(1),
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
  // strings
  default_preferred_language: str('en'),
  home_page_url: str(null),
  after_sign_out_path: str(null),
  after_sign_up_text: str(null),
  default_snippet_visibility: str('private', { values: VISIBILITY, nullable: false }),
  default_project_visibility: str('private', { values: VISIBILITY, nullable: false }),
  default_group_visibility: str('private', { values: VISIBILITY, nullable: false }),
  default_ci_config_path: str(null),
  terms: str(null),
  asset_proxy_url: str(null),
  personal_access_token_prefix: str('glpat-'),
  rate_limiting_response_text: str(null),
  security_txt_content: str(null),
  external_authorization_service_url: str(null),
  external_authorization_service_default_label: str(null),
  external_pipeline_validation_service_url: str(null),
  external_pipeline_validation_service_token: str(null),
  external_pipeline_validation_service_timeout: int(null),
  geo_node_allowed_ips: str('0.0.0.0/0, ::/0'),
  globally_allowed_ips: str(''),
  email_restrictions: str(null),
  abuse_notification_email: str(null),
  admin_notification_email: str(null),
  two_factor_grace_period: int(48, { min: 0 }),
  housekeeping_optimize_repository_period: int(10, { min: 1 }),
  // arrays
  restricted_visibility_levels: { type: 'array', default: [], values: VISIBILITY },
  domain_allowlist: arr([]),
  domain_denylist: arr([]),
  outbound_local_requests_whitelist: arr([]),
  asset_proxy_allowlist: arr([]),
  // hashes
  default_branch_protection_defaults: {
    type: 'hash',
    default: {
      allowed_to_push: [{ access_level: 40 }],
      allow_force_push: false,
      allowed_to_merge: [{ access_level: 40 }],
      developer_can_initial_push: false,
    },
  },
  repository_storages_weighted: { type: 'hash', default: { default: 100 } },
};

/** Old names rewritten to the current one before validation (reference §12). */
export const ALIASES: Record<string, string> = {
  signin_enabled: 'password_authentication_enabled_for_web',
  password_authentication_enabled: 'password_authentication_enabled_for_web',
  allow_local_requests_from_hooks_and_services: 'allow_local_requests_from_web_hooks_and_services',
  asset_proxy_whitelist: 'asset_proxy_allowlist',
  outbound_local_requests_allowlist: 'outbound_local_requests_whitelist',
  domain_whitelist: 'domain_allowlist',
  domain_blacklist: 'domain_denylist',
  domain_blacklist_enabled: 'domain_denylist_enabled',
};

/** Returned by GET but derived: the response shows both the old and new names. */
export const RESPONSE_ALIASES: Record<string, string> = {
  allow_local_requests_from_hooks_and_services: 'allow_local_requests_from_web_hooks_and_services',
  asset_proxy_whitelist: 'asset_proxy_allowlist',
};

/** Settings removed in the past: never returned, ignored on write. */
export const REMOVED = ['delayed_project_deletion', 'delayed_group_deletion', 'in_product_marketing_emails_enabled', 'repository_storages', 'user_email_lookup_limit'];

/** `given X: true → requires Y` (reference §12). */
export const REQUIRES: Record<string, string[]> = {
  email_restrictions_enabled: ['email_restrictions'],
  require_two_factor_authentication: ['two_factor_grace_period'],
  asset_proxy_enabled: ['asset_proxy_url'],
  external_authorization_service_enabled: ['external_authorization_service_url', 'external_authorization_service_default_label'],
  domain_denylist_enabled: ['domain_denylist'],
};

export const MUTUALLY_EXCLUSIVE: string[][] = [['password_authentication_enabled_for_web', 'password_authentication_enabled', 'signin_enabled']];

export type Settings = Record<string, any> & {
  personal_access_token_prefix: string | null;
  disable_personal_access_tokens: boolean;
  admin_mode: boolean;
  password_authentication_enabled_for_web: boolean;
  max_login_attempts: number | null;
  failed_login_attempts_unlock_period_in_minutes: number | null;
  user_defaults_to_private_profile: boolean;
  email_restrictions_enabled: boolean;
  email_restrictions: string | null;
  domain_allowlist: string[];
  domain_denylist: string[];
  domain_denylist_enabled: boolean;
  require_personal_access_token_expiry: boolean;
  default_projects_limit: number;
  can_create_group: boolean;
};

export function defaults(): Settings {
  const out: Record<string, unknown> = {};
  for (const [k, d] of Object.entries(SETTINGS)) out[k] = structuredClone(d.default);
  return out as Settings;
}
