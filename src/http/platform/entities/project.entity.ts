// Wire shapes of projects (GitLab's Entities::BasicProjectDetails, ProjectDetails, Project and
// ProjectWithAccess). Which shape a caller gets depends on the endpoint and on who asks; which fields
// of a shape appear depends on the viewer's abilities, exactly as GitLab's `expose … if:` conditions.
import { Type, type Static, type TSchema } from 'typebox';
import type { ProjectView } from '../../../domain/projects/projects-query.ts';
import type { ProjectRow } from '../../../db/schema.ts';
import { FEATURES, settingsOf, type Feature } from '../../../domain/core/project-settings.ts';
import { toUserRef, UserRefSchema, type UserViewContext } from './user.entity.ts';
import { sshUrlToRepo } from '../../../domain/core/ssh-url.ts';
import { NullableBoolean, NullableInteger, NullableString, optionalAll } from '../schemas/common.ts';

/** basic: BasicProjectDetails (lists for anonymous callers, simple=true); details: ProjectDetails
 * (a single project for anonymous callers); full: Project; with_access: ProjectWithAccess. */
export type ProjectShape = 'basic' | 'details' | 'full' | 'with_access';

export interface ProjectViewContext {
  externalUrl: string;
  isAdmin: boolean;
  users: UserViewContext;
  /** whether a project's repository has no branches and no tags (true when there is no repository) */
  isEmptyRepo: (p: ProjectRow) => boolean;
}

export function projectViewContext(users: UserViewContext, isAdmin: boolean, isEmptyRepo: (p: ProjectRow) => boolean): ProjectViewContext {
  return { externalUrl: users.externalUrl, isAdmin, users, isEmptyRepo };
}

// ---- schemas ---------------------------------------------------------------------------------

export const NamespaceBasicSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  path: Type.String(),
  kind: Type.String(),
  full_path: Type.String(),
  parent_id: NullableInteger,
  avatar_url: NullableString,
  web_url: Type.String(),
});

const identityProps = {
  id: Type.Integer(),
  description: NullableString,
  name: Type.String(),
  name_with_namespace: Type.String(),
  path: Type.String(),
  path_with_namespace: Type.String(),
  created_at: Type.String(),
};

const basicProps = {
  default_branch: Type.String(),
  tag_list: Type.Array(Type.String()),
  topics: Type.Array(Type.String()),
  ssh_url_to_repo: Type.String(),
  http_url_to_repo: Type.String(),
  web_url: Type.String(),
  readme_url: NullableString,
  forks_count: Type.Integer(),
  license_url: NullableString,
  license: Type.Unsafe<Record<string, unknown> | null>({ type: ['object', 'null'] }),
  avatar_url: NullableString,
  star_count: Type.Integer(),
  last_activity_at: Type.String(),
  namespace: NamespaceBasicSchema,
  repository_storage: Type.String(),
};

/** BasicProjectDetails: a fork's source (forked_from_project) */
export const BasicProjectSchema = Type.Object({ ...identityProps, ...optionalAll(basicProps) });

/** ProjectDetails: forked_from_project, shown when the project is a fork and its source visible */
const detailsProps = { forked_from_project: BasicProjectSchema };

const S = Type.String();
const B = Type.Boolean();
const accessLevelProps: Record<string, TSchema> = {};
for (const f of [
  'issues',
  'repository',
  'merge_requests',
  'forking',
  'wiki',
  'builds',
  'snippets',
  'pages',
  'analytics',
  'container_registry',
  'security_and_compliance',
  'releases',
  'environments',
  'feature_flags',
  'infrastructure',
  'monitor',
  'model_experiments',
  'model_registry',
]) {
  accessLevelProps[`${f}_access_level`] = S;
}

const MemberAccessSchema = Type.Unsafe<{ access_level: number; notification_level: number } | null>({
  type: ['object', 'null'],
  properties: { access_level: Type.Integer(), notification_level: Type.Integer() },
});

const fullProps = {
  _links: Type.Object({
    // all optional so that the fields keep GitLab's order (required ones would be written first)
    ...optionalAll({ self: S, issues: S, merge_requests: S, repo_branches: S, labels: S, events: S, members: S, cluster_agents: S }),
  }),
  packages_enabled: B,
  empty_repo: B,
  archived: B,
  visibility: S,
  owner: UserRefSchema,
  resolve_outdated_diff_discussions: B,
  repository_object_format: S,
  issues_enabled: B,
  merge_requests_enabled: B,
  wiki_enabled: B,
  jobs_enabled: B,
  snippets_enabled: B,
  container_registry_enabled: B,
  service_desk_enabled: B,
  service_desk_address: NullableString,
  can_create_merge_request_in: B,
  ...accessLevelProps,
  emails_disabled: B,
  emails_enabled: B,
  shared_runners_enabled: B,
  lfs_enabled: B,
  creator_id: NullableInteger,
  mr_default_target_self: B,
  import_url: NullableString,
  import_type: NullableString,
  import_status: S,
  import_error: NullableString,
  open_issues_count: Type.Integer(),
  description_html: S,
  updated_at: S,
  ci_default_git_depth: NullableInteger,
  ci_delete_pipelines_in_seconds: NullableInteger,
  ci_forward_deployment_enabled: B,
  ci_forward_deployment_rollback_allowed: B,
  ci_job_token_scope_enabled: B,
  ci_separated_caches: B,
  ci_allow_fork_pipelines_to_run_in_parent_project: B,
  ci_id_token_sub_claim_components: Type.Array(S),
  build_git_strategy: S,
  keep_latest_artifact: B,
  restrict_user_defined_variables: B,
  ci_pipeline_variables_minimum_override_role: S,
  runner_token_expiration_interval: NullableInteger,
  group_runners_enabled: B,
  auto_cancel_pending_pipelines: S,
  build_timeout: Type.Integer(),
  auto_devops_enabled: B,
  auto_devops_deploy_strategy: S,
  ci_push_repository_for_job_token_allowed: B,
  ci_config_path: NullableString,
  public_jobs: B,
  shared_with_groups: Type.Array(Type.Object({})),
  only_allow_merge_if_pipeline_succeeds: B,
  allow_merge_on_skipped_pipeline: NullableBoolean,
  request_access_enabled: B,
  only_allow_merge_if_all_discussions_are_resolved: B,
  remove_source_branch_after_merge: B,
  printing_merge_request_link_enabled: B,
  merge_method: S,
  squash_option: S,
  enforce_auth_checks_on_uploads: B,
  suggestion_commit_message: NullableString,
  merge_commit_template: NullableString,
  squash_commit_template: NullableString,
  issue_branch_template: NullableString,
  warn_about_potentially_unwanted_characters: B,
  autoclose_referenced_issues: B,
  max_artifacts_size: NullableInteger,
  permissions: Type.Object({ project_access: MemberAccessSchema, group_access: MemberAccessSchema }),
};

/** Every field any shape may have, in GitLab's order; the identity fields are always there. */
export const ProjectSchema = Type.Object({ ...identityProps, ...optionalAll(basicProps), ...optionalAll(detailsProps), ...optionalAll(fullProps) });
export type ProjectEntity = Static<typeof ProjectSchema>;

// ---- entity ----------------------------------------------------------------------------------

/** Namespace full name: "Group / Subgroup" (a personal namespace: its owner's name). */
export function namespaceEntity(view: ProjectView, ctx: ProjectViewContext) {
  const ns = view.namespace;
  const user = ns.type === 'User';
  return {
    id: ns.id,
    name: user && view.owner ? view.owner.name : ns.name,
    path: ns.path,
    kind: user ? 'user' : 'group',
    full_path: ns.full_path,
    parent_id: ns.parent_id,
    avatar_url: user ? (view.owner?.avatar_url ?? null) : ns.avatar_url,
    web_url: user ? `${ctx.externalUrl}/${ns.full_path}` : `${ctx.externalUrl}/groups/${ns.full_path}`,
  };
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** description_html: the description as one paragraph (Markdown rendering is not done here). */
function descriptionHtml(description: string | null): string {
  if (!description) return '';
  return `<p dir="auto">${escapeHtml(description).replace(/\r?\n/g, '<br>')}</p>`;
}

// The settings a project entity copies as they are, in the entity's order.
const CI_SETTINGS_1 = [
  'ci_default_git_depth',
  'ci_delete_pipelines_in_seconds',
  'ci_forward_deployment_enabled',
  'ci_forward_deployment_rollback_allowed',
] as const;
const CI_SETTINGS_2 = [
  'ci_separated_caches',
  'ci_allow_fork_pipelines_to_run_in_parent_project',
  'ci_id_token_sub_claim_components',
  'build_git_strategy',
  'keep_latest_artifact',
  'restrict_user_defined_variables',
  'ci_pipeline_variables_minimum_override_role',
] as const;
const CI_SETTINGS_3 = [
  'group_runners_enabled',
  'auto_cancel_pending_pipelines',
  'build_timeout',
  'auto_devops_enabled',
  'auto_devops_deploy_strategy',
  'ci_push_repository_for_job_token_allowed',
] as const;
const MERGE_SETTINGS = [
  'only_allow_merge_if_pipeline_succeeds',
  'allow_merge_on_skipped_pipeline',
  'request_access_enabled',
  'only_allow_merge_if_all_discussions_are_resolved',
  'remove_source_branch_after_merge',
  'printing_merge_request_link_enabled',
  'merge_method',
  'squash_option',
  'enforce_auth_checks_on_uploads',
  'suggestion_commit_message',
  'merge_commit_template',
  'squash_commit_template',
  'issue_branch_template',
  'warn_about_potentially_unwanted_characters',
  'autoclose_referenced_issues',
  'max_artifacts_size',
] as const;
const FEATURE_ACCESS_LEVELS = (Object.keys(FEATURES) as Feature[]).filter((f) => f !== 'package_registry').map((f) => `${f}_access_level` as const);

export function toProject(view: ProjectView, shape: ProjectShape, ctx: ProjectViewContext): ProjectEntity {
  const { project: p, access } = view;
  const fullPath = `${view.namespace.full_path}/${p.path}`;
  const readCode = access.abilities.has('read_code');
  const adminProject = access.abilities.has('admin_project');
  const topics = (JSON.parse(p.topics) as string[]).slice().sort();
  const out: Record<string, unknown> = {
    id: p.id,
    description: p.description,
    name: p.name,
    name_with_namespace: `${view.namespaceFullName} / ${p.name}`,
    path: p.path,
    path_with_namespace: fullPath,
    created_at: p.created_at,
  };
  if (readCode) out.default_branch = p.default_branch ?? 'main';
  out.tag_list = topics;
  out.topics = topics;
  out.ssh_url_to_repo = sshUrlToRepo(ctx.externalUrl, fullPath);
  out.http_url_to_repo = `${ctx.externalUrl}/${fullPath}.git`;
  out.web_url = `${ctx.externalUrl}/${fullPath}`;
  if (readCode) {
    out.readme_url = null;
    out.forks_count = view.forksCount;
  }
  out.avatar_url = p.avatar_url ?? null;
  out.star_count = view.starCount ?? 0;
  out.last_activity_at = p.last_activity_at;
  out.namespace = namespaceEntity(view, ctx);
  if (ctx.isAdmin) out.repository_storage = p.repository_storage;
  if (shape === 'basic') return out as ProjectEntity;
  if (view.forkedFrom) out.forked_from_project = toProject(view.forkedFrom, 'basic', ctx);
  if (shape === 'details') return out as ProjectEntity;

  const s = settingsOf(p);
  const api = `${ctx.externalUrl}/api/v4/projects/${p.id}`;
  const issues = view.openFeatures.has('issues');
  const mergeRequests = view.openFeatures.has('merge_requests');
  out._links = {
    self: api,
    ...(issues ? { issues: `${api}/issues` } : {}),
    ...(mergeRequests && access.abilities.has('read_merge_request') ? { merge_requests: `${api}/merge_requests` } : {}),
    repo_branches: `${api}/repository/branches`,
    labels: `${api}/labels`,
    events: `${api}/events`,
    members: `${api}/members`,
    cluster_agents: `${api}/cluster_agents`,
  };
  out.packages_enabled = s.packages_enabled;
  out.empty_repo = ctx.isEmptyRepo(p);
  out.archived = p.archived === 1;
  out.visibility = p.visibility;
  if (view.namespace.type === 'User' && view.owner) out.owner = toUserRef(view.owner, ctx.users);
  out.resolve_outdated_diff_discussions = s.resolve_outdated_diff_discussions;
  out.repository_object_format = s.repository_object_format;
  out.issues_enabled = issues;
  out.merge_requests_enabled = mergeRequests;
  out.wiki_enabled = view.openFeatures.has('wiki');
  out.jobs_enabled = view.openFeatures.has('builds');
  out.snippets_enabled = view.openFeatures.has('snippets');
  out.container_registry_enabled = view.openFeatures.has('container_registry');
  out.service_desk_enabled = s.service_desk_enabled;
  // admin_issue: Reporter and above.
  if (ctx.isAdmin || access.level >= 20) out.service_desk_address = null;
  // create_merge_request_in: members who may read merge requests, while the project takes them.
  out.can_create_merge_request_in = (ctx.isAdmin || access.level >= 10) && access.abilities.has('read_merge_request') && p.archived === 0 && mergeRequests;
  for (const k of FEATURE_ACCESS_LEVELS) out[k] = s[k];
  out.emails_disabled = !s.emails_enabled;
  out.emails_enabled = s.emails_enabled;
  out.shared_runners_enabled = s.shared_runners_enabled;
  out.lfs_enabled = s.lfs_enabled;
  out.creator_id = p.creator_id;
  if (view.isFork) out.mr_default_target_self = s.mr_default_target_self;
  if (adminProject) {
    out.import_url = null;
    out.import_type = view.importState?.import_type ?? null;
  }
  out.import_status = view.importState?.status ?? 'none';
  if (adminProject) out.import_error = view.importState?.import_error ?? null;
  if (issues) out.open_issues_count = 0;
  out.description_html = descriptionHtml(p.description);
  out.updated_at = p.updated_at;
  if (adminProject) {
    for (const k of CI_SETTINGS_1) out[k] = s[k];
    out.ci_job_token_scope_enabled = false;
    for (const k of CI_SETTINGS_2) out[k] = s[k];
    out.runner_token_expiration_interval = null;
    for (const k of CI_SETTINGS_3) out[k] = s[k];
  }
  if (readCode) out.ci_config_path = s.ci_config_path;
  out.public_jobs = s.public_jobs;
  out.shared_with_groups = [];
  for (const k of MERGE_SETTINGS) out[k] = s[k];
  if (shape === 'with_access') {
    const memberAccess = (level: number | null) => (level === null ? null : { access_level: level, notification_level: NOTIFICATION_GLOBAL });
    out.permissions = {
      project_access: memberAccess(view.projectMemberLevel),
      group_access: view.namespace.type === 'Group' ? memberAccess(view.groupMemberLevel) : null,
    };
  }
  return out as ProjectEntity;
}

/** NotificationSetting.levels[:global]: a member's notification level until they choose another. */
const NOTIFICATION_GLOBAL = 3;
