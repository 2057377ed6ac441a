// The one source of row types. Booleans are 0/1 integers, times ISO-8601 UTC text, JSON as text.
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

export interface UsersTable {
  id: Generated<number>;
  username: string;
  name: string;
  email: string;
  state: string; // active | blocked | deactivated | blocked_pending_approval
  password_hash: string | null;
  password_set_at: string | null;
  is_admin: number;
  external: number;
  bot: number;
  user_type: string; // human | project_bot | support_bot | alert_bot ...
  private_profile: number;
  bio: string;
  location: string;
  public_email: string | null;
  commit_email: string | null;
  job_title: string;
  pronouns: string | null;
  website_url: string;
  organization: string;
  messenger_a: string;
  network_a: string;
  network_b: string;
  chat_a: string;
  note: string | null;
  projects_limit: number;
  can_create_group: number;
  can_create_project: number;
  two_factor_enabled: number;
  theme_id: number;
  color_scheme_id: number;
  avatar_url: string | null;
  created_by_id: number | null;
  created_at: string;
  updated_at: string;
  confirmed_at: string | null;
  last_sign_in_at: string | null;
  current_sign_in_at: string | null;
  last_sign_in_ip: string | null;
  current_sign_in_ip: string | null;
  sign_in_count: number;
  last_activity_on: string | null;
  failed_attempts: number;
  locked_at: string | null;
}

export interface IdentitiesTable {
  id: Generated<number>;
  user_id: number;
  provider: string;
  extern_uid: string;
  saml_provider_id: number | null;
  created_at: string;
}

export interface UserCustomAttributesTable {
  id: Generated<number>;
  user_id: number;
  key: string;
  value: string;
  created_at: string;
  updated_at: string;
}

export interface PersonalAccessTokensTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  description: string | null;
  token_digest: string;
  scopes: string; // JSON array
  impersonation: number;
  revoked: number;
  expires_at: string | null; // YYYY-MM-DD
  last_used_at: string | null;
  previous_personal_access_token_id: number | null;
  created_at: string;
  updated_at: string;
}

export interface OauthTokensTable {
  id: Generated<number>;
  user_id: number;
  token_digest: string;
  refresh_token_digest: string;
  scopes: string; // space separated, as OAuth
  expires_in: number;
  created_at: string;
  revoked_at: string | null;
  previous_refresh_token_digest: string | null;
}

export interface WebSessionsTable {
  id: Generated<number>;
  session_digest: string;
  csrf_token: string;
  user_id: number;
  created_at: string;
  expires_at: string;
  ip: string | null;
}

export interface ApplicationSettingsTable {
  id: number;
  settings: string; // JSON object of stored values (defaults are in code)
  created_at: string;
  updated_at: string;
}

export interface InstanceSecretsTable {
  name: string;
  value: string;
}

/** Background work written in the same transaction as its cause (an outbox). */
export interface JobsTable {
  id: Generated<number>;
  kind: string;
  payload: string; // JSON
  state: string; // queued | running | done | failed
  attempts: number;
  run_at: string;
  locked_by: string | null;
  locked_until: string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

export interface NamespacesTable {
  id: Generated<number>;
  type: 'User' | 'Group';
  name: string;
  path: string;
  full_path: string;
  parent_id: number | null;
  /** "/1/5/9/": ids from the root down to this namespace */
  traversal_ids: string;
  owner_id: number | null;
  visibility: string;
  description: string;
  avatar_url: string | null;
  request_access_enabled: number;
  project_creation_level: string;
  subgroup_creation_level: string;
  share_with_group_lock: number;
  settings: string; // JSON
  created_by_id: number | null;
  created_at: string;
  updated_at: string;
}

export interface ProjectsTable {
  id: Generated<number>;
  namespace_id: number;
  creator_id: number | null;
  name: string;
  path: string;
  description: string | null;
  visibility: string;
  default_branch: string | null;
  archived: number;
  repository_storage: string;
  topics: string; // JSON array
  settings: string; // JSON: feature flags and access levels
  created_at: string;
  updated_at: string;
  last_activity_at: string;
}

export interface MemberRolesTable {
  id: Generated<number>;
  namespace_id: number | null;
  name: string;
  description: string | null;
  base_access_level: number;
  permissions: string; // JSON object: permission → true
  created_at: string;
  updated_at: string;
}

export interface MembersTable {
  id: Generated<number>;
  source_type: 'Project' | 'Namespace';
  source_id: number;
  user_id: number;
  access_level: number;
  expires_at: string | null; // YYYY-MM-DD
  member_role_id: number | null;
  created_by_id: number | null;
  created_at: string;
  updated_at: string;
}

export interface RedirectRoutesTable {
  id: Generated<number>;
  source_type: 'Project' | 'Namespace';
  source_id: number;
  path: string;
  created_at: string;
}

export interface TableVersionsTable {
  name: string;
  version: number;
}

export interface SystemHooksTable {
  id: Generated<number>;
  url: string;
  name: string | null;
  description: string | null;
  token_encrypted: string | null;
  push_events: number;
  tag_push_events: number;
  merge_requests_events: number;
  repository_update_events: number;
  enable_ssl_verification: number;
  push_events_branch_filter: string | null;
  branch_filter_strategy: string; // wildcard | regex | all_branches
  created_at: string;
  updated_at: string;
}

export interface HookDeliveriesTable {
  id: Generated<number>;
  hook_id: number;
  event_name: string;
  payload: string; // JSON
  idempotency_key: string;
  event_uuid: string;
  state: string; // pending | delivered | failed
  attempts: number;
  run_at: string;
  locked_by: string | null;
  locked_until: string | null;
  last_status: string | null;
  created_at: string;
  updated_at: string;
}

export interface HookAttemptsTable {
  id: Generated<number>;
  delivery_id: number;
  attempt: number;
  url: string;
  request_headers: string; // JSON
  response_status: string;
  error: string | null;
  duration_ms: number;
  response_headers: string; // JSON
  response_body: string;
  created_at: string;
}

/** A push over smart HTTP in flight, or left by a process that died (migration 009). */
export interface PendingPushesTable {
  id: Generated<number>;
  project_id: number;
  user_id: number;
  owner: string;
  lease_until: string;
  changes: string; // "<before> <after> <ref>\n" lines, as git prepared them
  created_at: string;
  // migration 030: a merge's row names the merge request it locked and what to write when it ends
  merge_request_id: number | null;
  merge: string | null; // JSON JournaledMerge
}

export interface LanguagesTable {
  id: Generated<number>;
  code: string;
  name: string;
  direction: string; // ltr | rtl
  population: number;
  created_at: string;
}

export interface LanguagePluralsTable {
  id: Generated<number>;
  language_id: number;
  source: number;
  number: number;
  formula: string;
  type: number;
}

export interface LanguageAliasesTable {
  alias: string;
  code: string;
}

export interface TranslationProjectsTable {
  id: Generated<number>;
  name: string;
  slug: string;
  web: Generated<string>;
  source_language_id: number;
  access_control: Generated<number>; // 0 public, 1 protected, 100 private
  locked: Generated<number>;
  created_at: string;
  // migration 017 (unit edits): Weblate's "Enable reviews"
  translation_review: Generated<number>;
}

export interface ComponentsTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  slug: string;
  vcs: Generated<string>;
  repo: string;
  push: Generated<string>;
  branch: Generated<string>;
  filemask: string;
  template: Generated<string>;
  new_base: Generated<string>;
  edit_template: Generated<number>;
  file_format: string;
  license: Generated<string>;
  license_url: Generated<string>;
  agreement: Generated<string>;
  new_lang: Generated<string>;
  language_code_style: Generated<string>;
  language_regex: Generated<string>;
  check_flags: Generated<string>;
  enforced_checks: Generated<string>; // a JSON list of check ids
  restricted: Generated<number>;
  priority: Generated<number>;
  source_language_id: number;
  locked: Generated<number>;
  platform_project_id: number | null;
  head: Generated<string>;
  scan_state: Generated<string>;
  scan_error: string | null;
  created_at: string;
  // migration 019 (repository operations)
  push_branch: Generated<string>;
  commit_message: Generated<string>;
  add_message: Generated<string>;
  delete_message: Generated<string>;
  merge_message: Generated<string>;
  commit_pending_age: Generated<number>;
  merge_style: Generated<string>; // rebase | merge | merge_noff
  push_on_commit: Generated<number>;
}

/** Counters kept on each translation (words and chars are counted on the source text). */
export interface StatsColumns {
  total: Generated<number>;
  total_words: Generated<number>;
  total_chars: Generated<number>;
  translated: Generated<number>;
  translated_words: Generated<number>;
  translated_chars: Generated<number>;
  fuzzy: Generated<number>;
  fuzzy_words: Generated<number>;
  fuzzy_chars: Generated<number>;
  approved: Generated<number>;
  approved_words: Generated<number>;
  approved_chars: Generated<number>;
  readonly: Generated<number>;
  readonly_words: Generated<number>;
  readonly_chars: Generated<number>;
  failing: Generated<number>;
  failing_words: Generated<number>;
  failing_chars: Generated<number>;
  suggestions: Generated<number>;
  comments: Generated<number>;
  recent_changes: Generated<number>;
  last_change: string | null;
  last_author_id: number | null;
}

export interface TranslationsTable extends StatsColumns {
  id: Generated<number>;
  component_id: number;
  language_id: number;
  plural_id: number;
  language_code: string;
  filename: Generated<string>;
  revision: Generated<string>;
  is_template: Generated<number>;
  is_source: Generated<number>;
  created_at: string;
}

export interface UnitsTable {
  id: Generated<number>;
  translation_id: number;
  component_id: number;
  language_id: number;
  position: number;
  id_hash: string; // signed 64-bit, decimal
  content_hash: string;
  source: Generated<string>; // plural forms joined by U+001E
  target: Generated<string>;
  previous_source: Generated<string>;
  context: Generated<string>;
  note: Generated<string>;
  location: Generated<string>;
  flags: Generated<string>;
  explanation: Generated<string>;
  extra_flags: Generated<string>;
  state: Generated<number>;
  num_words: Generated<number>;
  source_chars: Generated<number>;
  priority: Generated<number>;
  has_suggestion: Generated<number>;
  has_comment: Generated<number>;
  has_failing_check: Generated<number>;
  failing_checks: Generated<string>; // comma separated check ids
  pending: Generated<number>;
  timestamp: string;
  last_updated: string;
  // migration 017 (unit edits): who made the pending edit ("Name <email>") and their user id
  pending_author: Generated<string>;
  pending_author_id: number | null;
}

// migration 017 (unit edits): members of a translation project (role translate | review | manage)
export interface TranslationProjectMembersTable {
  id: Generated<number>;
  project_id: number;
  user_id: number;
  role: string;
  created_at: string;
}

export interface TranslationChangesTable {
  id: Generated<number>;
  project_id: number | null;
  component_id: number | null;
  translation_id: number | null;
  unit_id: number | null;
  language_id: number | null;
  user_id: number | null;
  author_id: number | null;
  action: number;
  target: Generated<string>;
  old: Generated<string>;
  details: Generated<string>; // JSON object
  timestamp: string;
}

// migration 018 (suggestions and comments): Weblate's Suggestion and Comment, on a unit
export interface SuggestionsTable {
  id: Generated<number>;
  unit_id: number;
  translation_id: number;
  user_id: number | null;
  author_name: Generated<string>;
  author_email: Generated<string>;
  target: string; // plural forms joined by U+001E
  timestamp: string;
}

export interface CommentsTable {
  id: Generated<number>;
  unit_id: number;
  translation_id: number;
  user_id: number | null;
  comment: string;
  scope: Generated<string>; // global | translation | report
  resolved: Generated<number>;
  timestamp: string;
}

// ---- merge requests and what hangs on them (migration 010) -----------------------------------

/** The last iid handed out per scope (usage 'merge_requests' | 'milestones' | 'deployments'). */
export interface InternalIdsTable {
  usage: string;
  scope_type: 'Project' | 'Namespace';
  scope_id: number;
  last_value: number;
}

export interface ProjectForksTable {
  project_id: number;
  forked_from_project_id: number | null;
  root_project_id: number | null;
  created_at: string;
}

/** A project label (project_id) or a group label (group_id, a namespace id). */
export interface LabelsTable {
  id: Generated<number>;
  project_id: number | null;
  group_id: number | null;
  title: string;
  color: string;
  description: string | null;
  priority: number | null;
  created_at: string;
  updated_at: string;
}

/** A user's subscription to a label (or merge request), everywhere (project_id null) or within one project. */
export interface SubscriptionsTable {
  id: Generated<number>;
  user_id: number;
  subscribable_type: string; // Label | MergeRequest | Issue
  subscribable_id: number;
  project_id: number | null;
  subscribed: number;
  created_at: string;
  updated_at: string;
}

export interface MilestonesTable {
  id: Generated<number>;
  iid: number;
  project_id: number | null;
  group_id: number | null;
  title: string;
  description: string | null;
  state: string; // active | closed
  due_date: string | null; // YYYY-MM-DD
  start_date: string | null;
  created_at: string;
  updated_at: string;
}

export interface MergeRequestsTable {
  id: Generated<number>;
  iid: number;
  /** the target project */
  project_id: number;
  source_project_id: number;
  source_branch: string;
  target_branch: string;
  title: string;
  description: string | null;
  state: string; // opened | closed | locked | merged
  draft: Generated<number>;
  author_id: number | null;
  milestone_id: number | null;
  merge_user_id: number | null;
  closed_by_id: number | null;
  sha: string | null;
  diff_base_sha: string | null;
  merge_commit_sha: string | null;
  squash_commit_sha: string | null;
  /** GitLab's stored state machine: unchecked | preparing | checking | can_be_merged | cannot_be_merged | cannot_be_merged_recheck | cannot_be_merged_rechecked */
  merge_status: Generated<string>;
  merge_error: string | null;
  /** the target head was an ancestor of the source head at the last mergeability check (null: not checked) */
  fast_forward_possible: number | null;
  rebase_in_progress: Generated<number>;
  squash: Generated<number>;
  merge_params: Generated<string>; // JSON
  merge_when_pipeline_succeeds: Generated<number>;
  discussion_locked: number | null;
  allow_collaboration: Generated<number>;
  imported_from: Generated<string>;
  time_estimate: Generated<number>;
  total_time_spent: Generated<number>;
  upvotes: Generated<number>;
  downvotes: Generated<number>;
  user_notes_count: Generated<number>;
  merged_at: string | null;
  closed_at: string | null;
  prepared_at: string | null;
  /** who may read it, kept by triggers from the project: 'public' | 'internal' | 'private' (members of Reporter and up) | 'disabled' (migration 034) */
  visibility: Generated<string>;
  created_at: string;
  updated_at: string;
}

export interface MergeRequestUsersTable {
  merge_request_id: number;
  user_id: number;
  created_at: string;
}

export interface MergeRequestReviewersTable extends MergeRequestUsersTable {
  state: Generated<string>; // unreviewed | reviewed | requested_changes | approved | unapproved | review_started
}

export interface MergeRequestLabelsTable {
  merge_request_id: number;
  label_id: number;
  created_at: string;
}

export interface NotesTable {
  id: Generated<number>;
  project_id: number;
  noteable_type: string; // MergeRequest | Issue
  noteable_id: number;
  discussion_id: string;
  type: string | null; // null | DiscussionNote | DiffNote
  author_id: number | null;
  body: string;
  system: Generated<number>;
  internal: Generated<number>;
  resolvable: Generated<number>;
  resolved_at: string | null;
  resolved_by_id: number | null;
  position: string | null; // JSON
  created_at: string;
  updated_at: string;
}

export interface AwardEmojiTable {
  id: Generated<number>;
  awardable_type: string; // MergeRequest | Issue | Note
  awardable_id: number;
  user_id: number;
  name: string;
  created_at: string;
  updated_at: string;
}

export interface ResourceLabelEventsTable {
  id: Generated<number>;
  merge_request_id: number | null;
  issue_id: number | null; // migration 035: one of the two is set
  label_id: number | null;
  user_id: number | null;
  action: string; // add | remove
  created_at: string;
}

export interface ResourceMilestoneEventsTable {
  id: Generated<number>;
  merge_request_id: number | null;
  issue_id: number | null; // migration 035: one of the two is set
  milestone_id: number | null;
  user_id: number | null;
  action: string; // add | remove
  state: string;
  created_at: string;
}

export interface ResourceStateEventsTable {
  id: Generated<number>;
  merge_request_id: number | null;
  issue_id: number | null; // migration 035: one of the two is set
  user_id: number | null;
  state: string; // opened | closed | reopened | merged | locked
  source_commit: string | null;
  created_at: string;
}

export interface EnvironmentsTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  slug: string;
  external_url: string | null;
  state: Generated<string>; // available | stopping | stopped
  tier: Generated<string>;
  created_at: string;
  updated_at: string;
}

export interface DeploymentsTable {
  id: Generated<number>;
  iid: number;
  project_id: number;
  environment_id: number;
  ref: string;
  tag: Generated<number>;
  sha: string;
  user_id: number | null;
  status: string; // created | running | success | failed | canceled | skipped | blocked
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

export interface DeploymentMergeRequestsTable {
  deployment_id: number;
  merge_request_id: number;
  environment_id: number;
}

// ---- CI (migration 021) ------------------------------------------------------------------------------

export interface CiRunnersTable {
  id: Generated<number>;
  runner_type: string; // instance_type | group_type | project_type
  token_digest: string;
  token_expires_at: string | null;
  creation_method: Generated<string>; // registration_token | authenticated_user
  creator_id: number | null;
  name: string | null;
  description: Generated<string>;
  active: Generated<number>;
  locked: Generated<number>;
  run_untagged: Generated<number>;
  tag_list: Generated<string>; // JSON array
  access_level: Generated<string>; // not_protected | ref_protected
  maximum_timeout: number | null;
  maintenance_note: string | null;
  contacted_at: string | null;
  version: string | null;
  revision: string | null;
  platform: string | null;
  architecture: string | null;
  executor_type: string | null;
  ip_address: string | null;
  created_at: string;
  updated_at: string;
}

export interface CiRunnerProjectsTable {
  runner_id: number;
  project_id: number;
  created_at: string;
}

export interface CiRunnerNamespacesTable {
  runner_id: number;
  namespace_id: number;
}

export interface CiRegistrationTokensTable {
  scope: string; // instance | group | project
  scope_id: number; // 0 for the instance
  token_digest: string;
  created_at: string;
}

export interface CiPipelinesTable {
  id: Generated<number>;
  iid: number;
  project_id: number;
  ref: string;
  tag: Generated<number>;
  sha: string;
  before_sha: string | null;
  source: string; // push | web | api | trigger | parent_pipeline | external | merge_request_event | schedule | pipeline
  status: Generated<string>;
  yaml_errors: string | null;
  failure_reason: string | null;
  user_id: number | null;
  parent_pipeline_id: number | null;
  parent_job_id: number | null;
  variables: Generated<string>; // JSON [{key, value, variable_type}]
  coverage: string | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
  committed_at: string | null;
  duration: number | null;
  queued_duration: number | null;
  /** migration 043: the merge request of a merge request pipeline (source merge_request_event) */
  merge_request_id: number | null;
  /** the schedule that created it (migration 042) */
  pipeline_schedule_id: number | null;
  /** the trigger whose token created it (migration 042) */
  trigger_id: number | null;
}

// migration 042: pipeline triggers, schedules and the job token scope
export interface CiTriggersTable {
  id: Generated<number>;
  project_id: number;
  owner_id: number | null;
  description: Generated<string>;
  token_digest: string;
  token_sealed: string; // SecretBox: shown again to its owner
  last_used: string | null;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface CiPipelineSchedulesTable {
  id: Generated<number>;
  project_id: number;
  owner_id: number | null;
  description: string;
  ref: string;
  cron: string;
  cron_timezone: Generated<string>;
  next_run_at: string | null;
  active: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface CiPipelineScheduleVariablesTable {
  id: Generated<number>;
  pipeline_schedule_id: number;
  key: string;
  value: Generated<string>;
  variable_type: Generated<string>; // env_var | file
  created_at: string;
  updated_at: string;
}

export interface CiJobTokenProjectScopeLinksTable {
  id: Generated<number>;
  source_project_id: number;
  target_project_id: number;
  direction: Generated<string>; // inbound
  added_by_id: number | null;
  created_at: string;
}

export interface CiJobTokenGroupScopeLinksTable {
  id: Generated<number>;
  source_project_id: number;
  target_group_id: number;
  added_by_id: number | null;
  created_at: string;
}

export interface ProjectCiCdSettingsTable {
  project_id: number;
  inbound_job_token_scope_enabled: number;
}

export interface CiBuildsTable {
  id: Generated<number>;
  project_id: number;
  pipeline_id: number;
  type: Generated<string>; // build | bridge | generic
  name: string;
  stage: string;
  stage_idx: Generated<number>;
  status: Generated<string>;
  ref: string;
  tag: Generated<number>;
  sha: string;
  user_id: number | null;
  runner_id: number | null;
  runner_system_id: string | null;
  options: Generated<string>; // JSON
  yaml_variables: Generated<string>; // JSON [{key, value, public}]
  tag_list: Generated<string>; // JSON array
  when: Generated<string>; // on_success | on_failure | always | manual | delayed
  allow_failure: Generated<number>;
  environment: string | null;
  coverage: number | null;
  failure_reason: string | null;
  description: string | null;
  target_url: string | null;
  token_digest: string | null;
  retried: Generated<number>;
  trace_size: Generated<number>;
  timeout: number | null;
  lock_version: Generated<number>;
  created_at: string;
  updated_at: string;
  queued_at: string | null;
  started_at: string | null;
  finished_at: string | null;
  erased_at: string | null;
  artifacts_expire_at: string | null;
}

/** migration 040: CI/CD variables of a project, a group or (neither) the instance; `value` sealed (Keyring) */
export interface CiVariablesTable {
  id: Generated<number>;
  project_id: number | null;
  group_id: number | null;
  key: string;
  value: string;
  variable_type: Generated<string>; // env_var | file
  protected: Generated<number>;
  masked: Generated<number>;
  hidden: Generated<number>;
  raw: Generated<number>;
  environment_scope: Generated<string>;
  description: string | null;
  created_at: string;
  updated_at: string;
}

export interface CiBuildTraceChunksTable {
  build_id: number;
  seq: number;
  data: Buffer;
}

export interface CiJobArtifactsTable {
  id: Generated<number>;
  project_id: number;
  job_id: number;
  file_type: string; // archive | metadata | trace | junit …
  file_format: string; // zip | gzip | raw
  file_name: string;
  size: number;
  file_sha256: string | null;
  store_key: string;
  expire_at: string | null;
  created_at: string;
}

// ---- project export and import (migration 022) -----------------------------------------------------

export interface ProjectExportsTable {
  id: Generated<number>;
  project_id: number;
  user_id: number;
  status: string; // queued | started | finished | failed (the current run); none once its archive expired
  description: string | null;
  /** sealed (SecretBox); cleared once the archive was sent */
  upload_url: string | null;
  upload_method: string | null; // PUT | POST
  /** the last finished archive (kept while a new run regenerates it) */
  store_key: string | null;
  file_name: string | null;
  size: number | null;
  error: string | null;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export interface ProjectImportsTable {
  project_id: number;
  user_id: number | null;
  import_type: Generated<string>; // gitlab_project
  source: string; // file | url | s3
  /** sealed (SecretBox) JSON: what the job needs to fetch the archive; cleared when done */
  source_params: string | null;
  status: string; // scheduled | started | finished | failed | canceled
  correlation_id: string;
  import_error: string | null;
  failed_relations: Generated<string>; // JSON array
  store_key: string | null;
  override_params: Generated<string>; // JSON object
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export interface RelationImportsTable {
  id: Generated<number>;
  project_id: number;
  user_id: number | null;
  relation: string; // issues | milestones | ci_pipelines | merge_requests
  status: string; // created | started | finished | failed
  store_key: string | null;
  error: string | null;
  created_at: string;
  updated_at: string;
}

export interface IssuesTable {
  id: Generated<number>;
  project_id: number;
  iid: number;
  title: string;
  description: string | null;
  state: string; // opened | closed
  author_id: number | null;
  milestone_id: number | null;
  confidential: Generated<number>;
  discussion_locked: number | null;
  due_date: string | null; // YYYY-MM-DD
  weight: number | null;
  closed_by_id: number | null;
  closed_at: string | null;
  imported_from: Generated<string>;
  created_at: string;
  updated_at: string;
  // migration 035
  issue_type: Generated<string>; // issue | incident
  time_estimate: Generated<number>;
  total_time_spent: Generated<number>;
  upvotes: Generated<number>;
  downvotes: Generated<number>;
  user_notes_count: Generated<number>;
  relative_position: number | null;
  moved_to_id: number | null;
  duplicated_to_id: number | null;
  updated_by_id: number | null;
  last_edited_by_id: number | null;
  last_edited_at: string | null;
  /** kept by triggers: public | internal | private (Reporter and up) | disabled */
  visibility: Generated<string>;
  // migration 037: PostgreSQL also keeps `search_vector` (a generated tsvector) on the row, which is not read:
  // a query takes ISSUE_COLUMNS, never `issues.*`
}

/** The columns of an issue row (IssueRow), as a query selects or returns them. */
export const ISSUE_COLUMNS = [
  'issues.id',
  'issues.project_id',
  'issues.iid',
  'issues.title',
  'issues.description',
  'issues.state',
  'issues.author_id',
  'issues.milestone_id',
  'issues.confidential',
  'issues.discussion_locked',
  'issues.due_date',
  'issues.weight',
  'issues.closed_by_id',
  'issues.closed_at',
  'issues.imported_from',
  'issues.created_at',
  'issues.updated_at',
  'issues.issue_type',
  'issues.time_estimate',
  'issues.total_time_spent',
  'issues.upvotes',
  'issues.downvotes',
  'issues.user_notes_count',
  'issues.relative_position',
  'issues.moved_to_id',
  'issues.duplicated_to_id',
  'issues.updated_by_id',
  'issues.last_edited_by_id',
  'issues.last_edited_at',
  'issues.visibility',
] as const satisfies readonly `issues.${keyof IssuesTable}`[];

export interface IssueUsersTable {
  issue_id: number;
  user_id: number;
  created_at: string;
}

export interface IssueLabelsTable {
  issue_id: number;
  label_id: number;
  /** the issue's project (migration 039): a project's links of a label are read by `issue_labels_project` */
  project_id: number;
  created_at: string;
}

export interface IssueLinksTable {
  id: Generated<number>;
  source_id: number;
  target_id: number;
  link_type: string; // relates_to | blocks
  created_at: string;
  updated_at: string;
}

export interface TodosTable {
  id: Generated<number>;
  user_id: number;
  project_id: number | null;
  group_id: number | null;
  target_type: string; // Issue | MergeRequest
  target_id: number;
  author_id: number | null;
  action: number; // GitLab's Todo action ids
  state: Generated<string>; // pending | done
  note_id: number | null;
  body: string | null;
  created_at: string;
  updated_at: string;
}

export interface BoardsTable {
  id: Generated<number>;
  project_id: number | null;
  group_id: number | null;
  name: string;
  hide_backlog_list: Generated<number>;
  hide_closed_list: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface MergeRequestsClosingIssuesTable {
  merge_request_id: number;
  issue_id: number;
  created_at: string;
}

export interface MergeRequestsMentioningIssuesTable {
  issue_id: number;
  merge_request_id: number;
  /** the system note "mentioned in merge request !45" on the issue */
  note_id: number | null;
  created_at: string;
}

export interface BoardListsTable {
  id: Generated<number>;
  board_id: number;
  list_type: string; // backlog | label | closed | assignee | milestone
  label_id: number | null;
  milestone_id: number | null;
  user_id: number | null;
  position: number | null;
  created_at: string;
  updated_at: string;
}

export interface Database {
  table_versions: TableVersionsTable;
  namespaces: NamespacesTable;
  projects: ProjectsTable;
  member_roles: MemberRolesTable;
  members: MembersTable;
  redirect_routes: RedirectRoutesTable;
  users: UsersTable;
  identities: IdentitiesTable;
  user_custom_attributes: UserCustomAttributesTable;
  personal_access_tokens: PersonalAccessTokensTable;
  oauth_tokens: OauthTokensTable;
  web_sessions: WebSessionsTable;
  application_settings: ApplicationSettingsTable;
  instance_secrets: InstanceSecretsTable;
  jobs: JobsTable;
  system_hooks: SystemHooksTable;
  hook_deliveries: HookDeliveriesTable;
  hook_attempts: HookAttemptsTable;
  pending_pushes: PendingPushesTable;
  languages: LanguagesTable;
  language_plurals: LanguagePluralsTable;
  language_aliases: LanguageAliasesTable;
  translation_projects: TranslationProjectsTable;
  components: ComponentsTable;
  translations: TranslationsTable;
  units: UnitsTable;
  translation_changes: TranslationChangesTable;
  suggestions: SuggestionsTable; // migration 018
  comments: CommentsTable; // migration 018
  translation_project_members: TranslationProjectMembersTable; // migration 017
  internal_ids: InternalIdsTable;
  project_forks: ProjectForksTable;
  labels: LabelsTable;
  milestones: MilestonesTable;
  merge_requests: MergeRequestsTable;
  merge_request_assignees: MergeRequestUsersTable;
  merge_request_reviewers: MergeRequestReviewersTable;
  approvals: MergeRequestUsersTable;
  merge_request_labels: MergeRequestLabelsTable;
  subscriptions: SubscriptionsTable;
  notes: NotesTable;
  award_emoji: AwardEmojiTable;
  resource_label_events: ResourceLabelEventsTable;
  resource_milestone_events: ResourceMilestoneEventsTable;
  resource_state_events: ResourceStateEventsTable;
  environments: EnvironmentsTable;
  deployments: DeploymentsTable;
  deployment_merge_requests: DeploymentMergeRequestsTable;
  ci_runners: CiRunnersTable; // migration 021
  ci_runner_projects: CiRunnerProjectsTable;
  ci_runner_namespaces: CiRunnerNamespacesTable;
  ci_registration_tokens: CiRegistrationTokensTable;
  ci_pipelines: CiPipelinesTable;
  ci_triggers: CiTriggersTable;
  ci_pipeline_schedules: CiPipelineSchedulesTable;
  ci_pipeline_schedule_variables: CiPipelineScheduleVariablesTable;
  ci_job_token_project_scope_links: CiJobTokenProjectScopeLinksTable;
  ci_job_token_group_scope_links: CiJobTokenGroupScopeLinksTable;
  project_ci_cd_settings: ProjectCiCdSettingsTable;
  ci_builds: CiBuildsTable;
  ci_build_trace_chunks: CiBuildTraceChunksTable;
  ci_job_artifacts: CiJobArtifactsTable;
  ci_variables: CiVariablesTable; // migration 040
  project_exports: ProjectExportsTable; // migration 022
  project_imports: ProjectImportsTable;
  relation_imports: RelationImportsTable;
  issues: IssuesTable;
  // migration 035 (issues)
  issue_assignees: IssueUsersTable;
  issue_labels: IssueLabelsTable;
  issue_links: IssueLinksTable;
  todos: TodosTable;
  boards: BoardsTable;
  board_lists: BoardListsTable;
  // migration 036
  merge_requests_closing_issues: MergeRequestsClosingIssuesTable;
  // migration 038 (merge request mentions)
  merge_requests_mentioning_issues: MergeRequestsMentioningIssuesTable;
  // migration 023 (web hooks)
  web_hooks: WebHooksTable;
  // migration 024 (protected refs)
  protected_branches: ProtectedBranchesTable;
  protected_tags: ProtectedTagsTable;
  protected_ref_access_levels: ProtectedRefAccessLevelsTable;
  // migration 025 (namespace extras)
  project_custom_attributes: ProjectCustomAttributesTable;
  group_custom_attributes: GroupCustomAttributesTable;
  // migration 026 (repository extras)
  commit_notes: CommitNotesTable;
  // migration 027 (events and stars)
  events: EventsTable;
  push_event_payloads: PushEventPayloadsTable;
  users_star_projects: UsersStarProjectsTable;
  // migration 028 (uploads)
  uploads: UploadsTable;
  // migration 029 (SSH keys and deploy keys)
  keys: KeysTable;
  deploy_keys_projects: DeployKeysProjectsTable;
  deploy_tokens: DeployTokensTable;
}

export type CiRunnerRow = Selectable<CiRunnersTable>;
export type CiPipelineRow = Selectable<CiPipelinesTable>;
export type CiTriggerRow = Selectable<CiTriggersTable>;
export type CiPipelineScheduleRow = Selectable<CiPipelineSchedulesTable>;
export type CiPipelineScheduleVariableRow = Selectable<CiPipelineScheduleVariablesTable>;
export type CiBuildRow = Selectable<CiBuildsTable>;
export type CiVariableRow = Selectable<CiVariablesTable>;
export type CiJobArtifactRow = Selectable<CiJobArtifactsTable>;
export type ProjectExportRow = Selectable<ProjectExportsTable>;
export type ProjectImportRow = Selectable<ProjectImportsTable>;
export type RelationImportRow = Selectable<RelationImportsTable>;
export type IssueRow = Selectable<IssuesTable>;
export type IssueLinkRow = Selectable<IssueLinksTable>;
export type TodoRow = Selectable<TodosTable>;
export type BoardRow = Selectable<BoardsTable>;
export type BoardListRow = Selectable<BoardListsTable>;

export type UserRow = Selectable<UsersTable>;
export type LanguageRow = Selectable<LanguagesTable>;
export type LanguagePluralRow = Selectable<LanguagePluralsTable>;
export type TranslationProjectRow = Selectable<TranslationProjectsTable>;
export type ComponentRow = Selectable<ComponentsTable>;
export type TranslationRow = Selectable<TranslationsTable>;
export type UnitRow = Selectable<UnitsTable>;
export type TranslationChangeRow = Selectable<TranslationChangesTable>;
export type SuggestionRow = Selectable<SuggestionsTable>; // migration 018
export type CommentRow = Selectable<CommentsTable>; // migration 018
export type SystemHookRow = Selectable<SystemHooksTable>;
export type HookDeliveryRow = Selectable<HookDeliveriesTable>;
export type HookAttemptRow = Selectable<HookAttemptsTable>;
export type PendingPushRow = Selectable<PendingPushesTable>;
export type NewUser = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
export type PatRow = Selectable<PersonalAccessTokensTable>;
export type OauthTokenRow = Selectable<OauthTokensTable>;
export type IdentityRow = Selectable<IdentitiesTable>;
export type NamespaceRow = Selectable<NamespacesTable>;
export type ProjectRow = Selectable<ProjectsTable>;
export type MemberRow = Selectable<MembersTable>;
export type MemberRoleRow = Selectable<MemberRolesTable>;
export type LabelRow = Selectable<LabelsTable>;
export type MilestoneRow = Selectable<MilestonesTable>;
export type MergeRequestRow = Selectable<MergeRequestsTable>;
export type NoteRow = Selectable<NotesTable>;
export type AwardEmojiRow = Selectable<AwardEmojiTable>;
export type EnvironmentRow = Selectable<EnvironmentsTable>;
export type DeploymentRow = Selectable<DeploymentsTable>;

// ---- migration 023 (web hooks)

/** Project and group hooks (GitLab's web_hooks: a project_id or a group_id). Flags 0/1. */
export interface WebHooksTable {
  id: Generated<number>;
  project_id: number | null;
  group_id: number | null;
  url: string;
  name: string | null;
  description: string | null;
  token_encrypted: string | null;
  url_variables_encrypted: string | null; // sealed JSON object
  custom_headers_encrypted: string | null; // sealed JSON object
  custom_webhook_template: string | null;
  push_events: number;
  tag_push_events: number;
  merge_requests_events: number;
  repository_update_events: number;
  issues_events: number;
  confidential_issues_events: number;
  note_events: number;
  confidential_note_events: number;
  job_events: number;
  pipeline_events: number;
  wiki_page_events: number;
  deployment_events: number;
  feature_flag_events: number;
  releases_events: number;
  milestone_events: number;
  emoji_events: number;
  resource_access_token_events: number;
  resource_deploy_token_events: number;
  vulnerability_events: number;
  subgroup_events: number;
  member_events: number;
  project_events: number;
  enable_ssl_verification: number;
  push_events_branch_filter: string | null;
  branch_filter_strategy: string;
  recent_failures: number;
  disabled_until: string | null;
  created_at: string;
  updated_at: string;
}
export type WebHookRow = Selectable<WebHooksTable>;

/** Migration 023 adds the kind of hook a delivery goes to (merged into HookDeliveriesTable above). */
export interface HookDeliveriesTable {
  /** 'system' (system_hooks.id) or 'web' (web_hooks.id) */
  hook_type: Generated<string>;
}

// ---- migration 024 (protected refs)

export interface ProtectedBranchesTable {
  id: Generated<number>;
  project_id: number;
  /** a branch name or a wildcard (`*`) */
  name: string;
  allow_force_push: number;
  code_owner_approval_required: number;
  created_at: string;
  updated_at: string;
}

export interface ProtectedTagsTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  created_at: string;
  updated_at: string;
}

/** An access level of a protected branch (push | merge | unprotect) or tag (create): a role, a user or a group. */
export interface ProtectedRefAccessLevelsTable {
  id: Generated<number>;
  protected_branch_id: number | null;
  protected_tag_id: number | null;
  action: 'push' | 'merge' | 'unprotect' | 'create';
  access_level: number | null;
  user_id: number | null;
  group_id: number | null;
  created_at: string;
  updated_at: string;
}

export type ProtectedBranchRow = Selectable<ProtectedBranchesTable>;
export type ProtectedTagRow = Selectable<ProtectedTagsTable>;
export type ProtectedRefAccessLevelRow = Selectable<ProtectedRefAccessLevelsTable>;

// ---- migration 025 (namespace extras)

export interface ProjectCustomAttributesTable {
  id: Generated<number>;
  project_id: number;
  key: string;
  value: string;
  created_at: string;
  updated_at: string;
}

export interface GroupCustomAttributesTable {
  id: Generated<number>;
  group_id: number;
  key: string;
  value: string;
  created_at: string;
  updated_at: string;
}

/** Migration 025 adds the project's uploaded avatar to `projects` (declaration merging with ProjectsTable above). */
export interface ProjectsTable {
  /** absolute URL of the uploaded avatar (GitLab's avatar_url); the blob is avatars/project/<id>/<file name> */
  avatar_url: ColumnType<string | null, string | null | undefined, string | null>;
}

// ---- migration 026 (repository extras)

/** A comment on a commit (GitLab's notes with noteable_type 'Commit'); path/line/line_type/line_code only when its diff line was found. */
export interface CommitNotesTable {
  id: Generated<number>;
  project_id: number;
  commit_id: string;
  author_id: number | null;
  note: string;
  path: string | null;
  line: number | null;
  line_type: string | null; // new | old
  line_code: string | null;
  created_at: string;
  updated_at: string;
}

export type CommitNoteRow = Selectable<CommitNotesTable>;

// ---- migration 027 (events and stars)
export interface EventsTable {
  id: Generated<number>;
  project_id: number | null;
  author_id: number;
  action: number; // GitLab's Event.actions: created 1 … approved 12
  target_type: string | null; // MergeRequest | Note | DiffNote | DiscussionNote | null
  target_id: number | null;
  created_at: string;
  updated_at: string;
}

export interface PushEventPayloadsTable {
  event_id: number;
  commit_count: number;
  action: string; // created | removed | pushed
  ref_type: string; // branch | tag
  commit_from: string | null;
  commit_to: string | null;
  ref: string | null;
  commit_title: string | null;
  ref_count: number | null;
}

export interface UsersStarProjectsTable {
  id: Generated<number>;
  project_id: number;
  user_id: number;
  created_at: string;
  updated_at: string;
}

export type EventRow = Selectable<EventsTable>;
export type PushEventPayloadRow = Selectable<PushEventPayloadsTable>;

// ---- migration 028 (uploads)
export interface UploadsTable {
  id: Generated<number>;
  project_id: number;
  /** 32 hex characters, the path segment of /uploads/<secret>/<filename> */
  secret: string;
  /** sanitised as CarrierWave does ([^\w.+-] → _) */
  filename: string;
  size: number;
  store_key: string;
  uploaded_by_user_id: number | null;
  created_at: string;
}

export type UploadRow = Selectable<UploadsTable>;

// ---- migration 029 (SSH keys and deploy keys)
export interface KeysTable {
  id: Generated<number>;
  type: 'user' | 'deploy';
  /** the owner of a user key; the creator of a deploy key */
  user_id: number | null;
  title: string;
  /** "<type> <base64>[ <comment>]" */
  key: string;
  key_type: string;
  bits: number;
  /** MD5, colon-separated hex */
  fingerprint: string;
  /** "SHA256:<base64 without padding>" */
  fingerprint_sha256: string;
  usage_type: 'auth' | 'signing' | 'auth_and_signing';
  public: Generated<number>;
  expires_at: string | null;
  last_used_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface DeployKeysProjectsTable {
  id: Generated<number>;
  deploy_key_id: number;
  project_id: number;
  can_push: number;
  created_at: string;
  updated_at: string;
}

export type KeyRow = Selectable<KeysTable>;
export type DeployKeyProjectRow = Selectable<DeployKeysProjectsTable>;

/** A deploy token, held by one project or one group. */
export interface DeployTokensTable {
  id: Generated<number>;
  name: string;
  /** null: the default `gitlab+deploy-token-<id>` */
  username: string | null;
  token_digest: string;
  scopes: string; // JSON array
  revoked: number;
  /** ISO-8601 UTC time or null (never expires) */
  expires_at: string | null;
  project_id: number | null;
  group_id: number | null;
  creator_id: number | null;
  created_at: string;
}
export type DeployTokenRow = Selectable<DeployTokensTable>;
