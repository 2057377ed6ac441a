// The group attributes kept in namespaces.settings (JSON): GitLab's namespace_settings and the Group
// columns that have no column of their own here. Absent keys take GitLab's defaults for a new group.
import type { NamespaceRow } from '../../db/schema.ts';

export interface BranchProtectionDefaults {
  allowed_to_push?: { access_level: number }[];
  allow_force_push?: boolean;
  allowed_to_merge?: { access_level: number }[];
  code_owner_approval_required?: boolean;
  developer_can_initial_push?: boolean;
}

export interface GroupSettings {
  require_two_factor_authentication: boolean;
  two_factor_grace_period: number;
  auto_devops_enabled: boolean | null;
  emails_enabled: boolean;
  show_diff_preview_in_email: boolean;
  mentions_disabled: boolean | null;
  lfs_enabled: boolean;
  math_rendering_limits_enabled: boolean;
  lock_math_rendering_limits_enabled: boolean;
  default_branch: string | null;
  /** null: the instance's default_branch_protection */
  default_branch_protection: number | null;
  /** null: the instance's default_branch_protection_defaults */
  default_branch_protection_defaults: BranchProtectionDefaults | null;
  shared_runners_setting: string;
  max_artifacts_size: number | null;
  enabled_git_access_protocol: string;
  prevent_sharing_groups_outside_hierarchy: boolean;
}

export const GROUP_SETTING_DEFAULTS: GroupSettings = {
  require_two_factor_authentication: false,
  two_factor_grace_period: 48,
  auto_devops_enabled: null,
  emails_enabled: true,
  show_diff_preview_in_email: true,
  mentions_disabled: null,
  lfs_enabled: true,
  math_rendering_limits_enabled: true,
  lock_math_rendering_limits_enabled: false,
  default_branch: null,
  default_branch_protection: null,
  default_branch_protection_defaults: null,
  shared_runners_setting: 'enabled',
  max_artifacts_size: null,
  enabled_git_access_protocol: 'all',
  prevent_sharing_groups_outside_hierarchy: false,
};

export const GROUP_SETTING_KEYS = Object.keys(GROUP_SETTING_DEFAULTS) as (keyof GroupSettings)[];

export function groupSettings(row: Pick<NamespaceRow, 'settings'>): GroupSettings {
  const stored = row.settings && row.settings !== '{}' ? (JSON.parse(row.settings) as Partial<GroupSettings>) : {};
  return { ...GROUP_SETTING_DEFAULTS, ...stored };
}
