// Access levels, the abilities each level grants, and the one table that maps custom-role permissions
// to abilities. Every feature asks the policy for an ability; nobody re-decides these here-or-there.

export const ACCESS_LEVELS = { NO_ACCESS: 0, MINIMAL_ACCESS: 5, GUEST: 10, PLANNER: 15, REPORTER: 20, DEVELOPER: 30, MAINTAINER: 40, OWNER: 50 } as const;
/** Levels a membership or a member role may have (GitLab's Gitlab::Access.all_values). */
export const MEMBER_ACCESS_LEVELS = [10, 20, 30, 40, 50] as const;
export const ACCESS_LEVEL_NAMES: Record<number, string> = { 10: 'Guest', 15: 'Planner', 20: 'Reporter', 30: 'Developer', 40: 'Maintainer', 50: 'Owner' };

/** Custom-role permissions, in the spec's order (every one present in member-role responses). */
export const CUSTOM_PERMISSIONS = [
  'admin_cicd_variables',
  'admin_compliance_framework',
  'admin_group_member',
  'admin_merge_request',
  'admin_push_rules',
  'admin_infra_state',
  'admin_vulnerability',
  'admin_web_hook',
  'archive_project',
  'manage_deploy_tokens',
  'manage_group_access_tokens',
  'manage_merge_request_settings',
  'manage_project_access_tokens',
  'manage_security_policy_link',
  'read_code',
  'read_runners',
  'read_dependency',
  'read_vulnerability',
  'remove_group',
  'remove_project',
] as const;
export type CustomPermission = (typeof CUSTOM_PERMISSIONS)[number];

export type ProjectAbility =
  | 'read_project'
  | 'read_project_member'
  | 'read_code'
  | 'push_code'
  | 'force_push'
  | 'read_merge_request'
  | 'create_merge_request'
  | 'approve_merge_request'
  | 'admin_merge_request'
  | 'admin_project'
  | 'admin_project_member'
  | 'remove_project'
  | 'archive_project'
  | 'read_runners'
  | 'admin_runners'
  | 'admin_web_hook'
  | 'admin_cicd_variables'
  | 'manage_project_access_tokens'
  | 'manage_deploy_tokens'
  | 'manage_merge_request_settings'
  | 'admin_push_rules'
  | 'admin_infra_state'
  | 'read_dependency'
  | 'read_vulnerability'
  | 'admin_vulnerability'
  | 'admin_compliance_framework'
  | 'manage_security_policy_link'
  | 'read_job_artifacts'
  | 'admin_job_artifacts'
  | 'read_issue'
  | 'create_issue'
  | 'update_issue'
  | 'admin_issue'
  | 'read_confidential_issues'
  | 'admin_issue_link'
  | 'admin_issue_board'
  | 'destroy_issue';

export type GroupAbility =
  | 'read_group'
  | 'read_group_member'
  | 'admin_group'
  | 'admin_group_member'
  | 'remove_group'
  | 'create_subgroup'
  | 'create_projects'
  | 'admin_member_role'
  | 'admin_web_hook'
  | 'admin_cicd_variables'
  | 'read_runners'
  | 'admin_runners'
  | 'manage_group_access_tokens'
  | 'manage_deploy_tokens'
  | 'admin_push_rules'
  | 'admin_compliance_framework'
  | 'read_vulnerability'
  | 'admin_vulnerability'
  | 'read_dependency'
  | 'manage_security_policy_link'
  | 'admin_merge_request'
  | 'read_code'
  | 'admin_issue_board';

/** What each membership level may do in a project (each level includes the ones below it). */
export const PROJECT_LEVEL_ABILITIES: Record<number, readonly ProjectAbility[]> = {
  10: ['read_project', 'read_project_member', 'read_issue', 'create_issue', 'admin_issue_link'],
  20: ['read_code', 'read_merge_request', 'read_job_artifacts', 'update_issue', 'admin_issue', 'read_confidential_issues', 'admin_issue_board'],
  30: ['push_code', 'create_merge_request', 'approve_merge_request', 'read_dependency', 'read_vulnerability'],
  40: [
    'force_push',
    'admin_merge_request',
    'admin_project',
    'admin_project_member',
    'read_runners',
    'admin_runners',
    'admin_web_hook',
    'admin_cicd_variables',
    'manage_project_access_tokens',
    'manage_deploy_tokens',
    'manage_merge_request_settings',
    'admin_push_rules',
    'admin_infra_state',
    'admin_vulnerability',
    'admin_job_artifacts',
  ],
  50: ['remove_project', 'archive_project', 'admin_compliance_framework', 'manage_security_policy_link', 'destroy_issue'],
};

export const GROUP_LEVEL_ABILITIES: Record<number, readonly GroupAbility[]> = {
  10: ['read_group', 'read_group_member'],
  20: ['read_code', 'admin_issue_board'],
  30: ['read_dependency', 'read_vulnerability'],
  40: ['read_runners', 'admin_cicd_variables', 'manage_deploy_tokens', 'admin_vulnerability', 'admin_merge_request'],
  50: [
    'admin_group',
    'admin_group_member',
    'remove_group',
    'admin_member_role',
    'admin_web_hook',
    'admin_runners',
    'manage_group_access_tokens',
    'admin_push_rules',
    'admin_compliance_framework',
    'manage_security_policy_link',
  ],
};

/**
 * THE mapping of custom-role permissions to abilities (project and group). A member with a custom role
 * gets the abilities of its base level plus these.
 */
export const CUSTOM_PERMISSION_ABILITIES: Record<CustomPermission, { project: readonly ProjectAbility[]; group: readonly GroupAbility[] }> = {
  admin_cicd_variables: { project: ['admin_cicd_variables'], group: ['admin_cicd_variables'] },
  admin_compliance_framework: { project: ['admin_compliance_framework'], group: ['admin_compliance_framework'] },
  admin_group_member: { project: [], group: ['admin_group_member', 'read_group_member'] },
  admin_merge_request: { project: ['approve_merge_request', 'admin_merge_request', 'read_merge_request', 'read_code'], group: ['admin_merge_request'] },
  admin_push_rules: { project: ['admin_push_rules'], group: ['admin_push_rules'] },
  admin_infra_state: { project: ['admin_infra_state'], group: [] },
  admin_vulnerability: { project: ['admin_vulnerability', 'read_vulnerability'], group: ['admin_vulnerability', 'read_vulnerability'] },
  admin_web_hook: { project: ['admin_web_hook'], group: ['admin_web_hook'] },
  archive_project: { project: ['archive_project'], group: [] },
  manage_deploy_tokens: { project: ['manage_deploy_tokens'], group: ['manage_deploy_tokens'] },
  manage_group_access_tokens: { project: [], group: ['manage_group_access_tokens'] },
  manage_merge_request_settings: { project: ['manage_merge_request_settings'], group: [] },
  manage_project_access_tokens: { project: ['manage_project_access_tokens'], group: [] },
  manage_security_policy_link: { project: ['manage_security_policy_link'], group: ['manage_security_policy_link'] },
  read_code: { project: ['read_code'], group: ['read_code'] },
  read_runners: { project: ['read_runners'], group: ['read_runners'] },
  read_dependency: { project: ['read_dependency'], group: ['read_dependency'] },
  read_vulnerability: { project: ['read_vulnerability'], group: ['read_vulnerability'] },
  remove_group: { project: [], group: ['remove_group'] },
  remove_project: { project: ['remove_project'], group: [] },
};

/** Abilities that change things: taken away from everybody on an archived project. */
export const PROJECT_WRITE_ABILITIES: ReadonlySet<ProjectAbility> = new Set([
  'create_issue',
  'update_issue',
  'admin_issue',
  'admin_issue_link',
  'admin_issue_board',
  'destroy_issue',
  'push_code',
  'force_push',
  'create_merge_request',
  'approve_merge_request',
  'admin_merge_request',
  'admin_web_hook',
  'admin_cicd_variables',
  'admin_runners',
  'manage_project_access_tokens',
  'manage_deploy_tokens',
  'admin_push_rules',
  'admin_infra_state',
  'admin_vulnerability',
  'admin_job_artifacts',
]);

export function levelAbilities<A extends string>(table: Record<number, readonly A[]>, level: number): Set<A> {
  const out = new Set<A>();
  for (const [l, abilities] of Object.entries(table)) if (level >= Number(l)) for (const a of abilities) out.add(a);
  return out;
}
