// Whole expected project bodies for the projects tests, written out from GitLab's entities
// (BasicProjectDetails, ProjectDetails, Project, ProjectWithAccess) independently of the code under test.
import type { NamespaceRow, ProjectRow, UserRow } from '../../src/db/schema.ts';
import { EXTERNAL_URL } from './build-app.ts';

export interface ExpectOptions {
  /** namespace as the API shows it */
  namespace: {
    id: number;
    name: string;
    path: string;
    kind: 'user' | 'group';
    full_path: string;
    parent_id: number | null;
    avatar_url: string | null;
    web_url: string;
  };
  /** "Group / Sub" */
  namespaceFullName: string;
  shape: 'basic' | 'details' | 'full' | 'with_access';
  /** viewer is an administrator (repository_storage) */
  admin?: boolean;
  /** viewer's abilities that change the fields */
  readCode?: boolean;
  adminProject?: boolean;
  /** viewer's membership level in the project (0: none) */
  level?: number;
  owner?: UserRow | null;
  permissions?: { project_access: number | null; group_access: number | null };
  /** fields that differ from a new project's defaults */
  overrides?: Record<string, unknown>;
}

export function groupNs(g: NamespaceRow, name = g.name) {
  return {
    id: g.id,
    name,
    path: g.path,
    kind: 'group' as const,
    full_path: g.full_path,
    parent_id: g.parent_id,
    avatar_url: null,
    web_url: `${EXTERNAL_URL}/groups/${g.full_path}`,
  };
}

export function userNs(ns: NamespaceRow, owner: UserRow) {
  return {
    id: ns.id,
    name: owner.name,
    path: ns.path,
    kind: 'user' as const,
    full_path: ns.full_path,
    parent_id: null,
    avatar_url: owner.avatar_url,
    web_url: `${EXTERNAL_URL}/${owner.username}`,
  };
}

export function expectedProject(p: ProjectRow, o: ExpectOptions): Record<string, unknown> {
  const full = `${o.namespace.full_path}/${p.path}`;
  const readCode = o.readCode ?? true;
  const adminProject = o.adminProject ?? false;
  const topics = (JSON.parse(p.topics) as string[]).slice().sort();
  const api = `${EXTERNAL_URL}/api/v4/projects/${p.id}`;
  const out: Record<string, unknown> = {
    id: p.id,
    description: p.description,
    name: p.name,
    name_with_namespace: `${o.namespaceFullName} / ${p.name}`,
    path: p.path,
    path_with_namespace: full,
    created_at: p.created_at,
    ...(readCode ? { default_branch: p.default_branch } : {}),
    tag_list: topics,
    topics,
    ssh_url_to_repo: `ssh://git@hearth.test:2222/${full}.git`,
    http_url_to_repo: `${EXTERNAL_URL}/${full}.git`,
    web_url: `${EXTERNAL_URL}/${full}`,
    ...(readCode ? { readme_url: null, forks_count: 0 } : {}),
    avatar_url: null,
    star_count: 0,
    last_activity_at: p.last_activity_at,
    namespace: o.namespace,
    ...(o.admin ? { repository_storage: 'default' } : {}),
  };
  if (o.shape === 'basic' || o.shape === 'details') return { ...out, ...pick(o.overrides, Object.keys(out)) };
  const level = o.level ?? 0;
  Object.assign(out, {
    _links: {
      self: api,
      issues: `${api}/issues`,
      ...(readCode ? { merge_requests: `${api}/merge_requests` } : {}),
      repo_branches: `${api}/repository/branches`,
      labels: `${api}/labels`,
      events: `${api}/events`,
      members: `${api}/members`,
      cluster_agents: `${api}/cluster_agents`,
    },
    packages_enabled: true,
    empty_repo: true,
    archived: p.archived === 1,
    visibility: p.visibility,
    ...(o.owner
      ? {
          owner: {
            id: o.owner.id,
            username: o.owner.username,
            name: o.owner.name,
            state: 'active',
            locked: false,
            avatar_url: null,
            web_url: `${EXTERNAL_URL}/${o.owner.username}`,
          },
        }
      : {}),
    resolve_outdated_diff_discussions: false,
    repository_object_format: 'sha1',
    issues_enabled: true,
    merge_requests_enabled: true,
    wiki_enabled: true,
    jobs_enabled: true,
    snippets_enabled: true,
    container_registry_enabled: false,
    service_desk_enabled: false,
    ...(o.admin || level >= 20 ? { service_desk_address: null } : {}),
    can_create_merge_request_in: (o.admin || level >= 10) && readCode && p.archived === 0,
    issues_access_level: 'enabled',
    repository_access_level: 'enabled',
    merge_requests_access_level: 'enabled',
    forking_access_level: 'enabled',
    wiki_access_level: 'enabled',
    builds_access_level: 'enabled',
    snippets_access_level: 'enabled',
    pages_access_level: p.visibility === 'public' ? 'enabled' : 'private',
    analytics_access_level: 'enabled',
    container_registry_access_level: 'disabled',
    security_and_compliance_access_level: 'private',
    releases_access_level: 'enabled',
    environments_access_level: 'enabled',
    feature_flags_access_level: 'enabled',
    infrastructure_access_level: 'enabled',
    monitor_access_level: 'enabled',
    model_experiments_access_level: 'enabled',
    model_registry_access_level: 'enabled',
    emails_disabled: false,
    emails_enabled: true,
    shared_runners_enabled: true,
    lfs_enabled: true,
    creator_id: p.creator_id,
    ...(adminProject ? { import_url: null, import_type: null } : {}),
    import_status: 'none',
    ...(adminProject ? { import_error: null } : {}),
    open_issues_count: 0,
    description_html: p.description ? `<p dir="auto">${p.description}</p>` : '',
    updated_at: p.updated_at,
    ...(adminProject
      ? {
          ci_default_git_depth: 20,
          ci_delete_pipelines_in_seconds: null,
          ci_forward_deployment_enabled: true,
          ci_forward_deployment_rollback_allowed: true,
          ci_job_token_scope_enabled: false,
          ci_separated_caches: true,
          ci_allow_fork_pipelines_to_run_in_parent_project: true,
          ci_id_token_sub_claim_components: ['project_path', 'ref_type', 'ref'],
          build_git_strategy: 'fetch',
          keep_latest_artifact: true,
          restrict_user_defined_variables: false,
          ci_pipeline_variables_minimum_override_role: 'developer',
          runner_token_expiration_interval: null,
          group_runners_enabled: true,
          auto_cancel_pending_pipelines: 'enabled',
          build_timeout: 3600,
          auto_devops_enabled: false,
          auto_devops_deploy_strategy: 'continuous',
          ci_push_repository_for_job_token_allowed: false,
        }
      : {}),
    ...(readCode ? { ci_config_path: null } : {}),
    public_jobs: true,
    shared_with_groups: [],
    only_allow_merge_if_pipeline_succeeds: false,
    allow_merge_on_skipped_pipeline: null,
    request_access_enabled: true,
    only_allow_merge_if_all_discussions_are_resolved: false,
    remove_source_branch_after_merge: true,
    printing_merge_request_link_enabled: true,
    merge_method: 'merge',
    squash_option: 'default_off',
    enforce_auth_checks_on_uploads: true,
    suggestion_commit_message: null,
    merge_commit_template: null,
    squash_commit_template: null,
    issue_branch_template: null,
    warn_about_potentially_unwanted_characters: true,
    autoclose_referenced_issues: true,
    max_artifacts_size: null,
  });
  if (o.shape === 'with_access') {
    const access = (l: number | null) => (l === null ? null : { access_level: l, notification_level: 3 });
    out.permissions = { project_access: access(o.permissions?.project_access ?? null), group_access: access(o.permissions?.group_access ?? null) };
  }
  return { ...out, ...(o.overrides ?? {}) };
}

function pick(o: Record<string, unknown> | undefined, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (o && k in o) out[k] = o[k];
  return out;
}
