// Wire shapes of groups: GitLab's Entities::Group (lists) and Entities::GroupDetail (single group,
// create, update), fields in GitLab's order. The schemas are the allow-list of what may leave.
import { Type, type Static } from 'typebox';
import type { NamespaceRow } from '../../../db/schema.ts';
import { type BranchProtectionDefaults, groupSettings } from '../../../domain/core/group-settings.ts';
import type { Settings } from '../../../domain/core/settings-definitions.ts';
import { NullableBoolean, NullableInteger, NullableString } from '../schemas/common.ts';

/** What the entity functions need besides the row; built once per request. */
export interface GroupViewContext {
  externalUrl: string;
  /** "Top / Sub" for each group id of the response */
  fullNames: Map<number, string>;
  /** the instance's defaults for groups that have no value of their own */
  defaultBranchProtection: number;
  defaultBranchProtectionDefaults: BranchProtectionDefaults;
}

export function groupViewContext(externalUrl: string, settings: Settings, fullNames: Map<number, string>): GroupViewContext {
  return {
    externalUrl,
    fullNames,
    defaultBranchProtection: settings.default_branch_protection,
    defaultBranchProtectionDefaults: settings.default_branch_protection_defaults,
  };
}

/** GitLab has one organization on a self-managed instance; every group belongs to it. */
const DEFAULT_ORGANIZATION_ID = 1;

const AccessLevelList = Type.Array(Type.Object({ access_level: Type.Integer() }));
const BranchProtectionDefaultsSchema = Type.Object({
  allowed_to_push: Type.Optional(AccessLevelList),
  allow_force_push: Type.Optional(Type.Boolean()),
  allowed_to_merge: Type.Optional(AccessLevelList),
  code_owner_approval_required: Type.Optional(Type.Boolean()),
  developer_can_initial_push: Type.Optional(Type.Boolean()),
});

const groupProps = {
  id: Type.Integer(),
  web_url: Type.String(),
  name: Type.String(),
  path: Type.String(),
  description: Type.String(),
  visibility: Type.String(),
  share_with_group_lock: Type.Boolean(),
  require_two_factor_authentication: Type.Boolean(),
  two_factor_grace_period: Type.Integer(),
  project_creation_level: Type.String(),
  auto_devops_enabled: NullableBoolean,
  subgroup_creation_level: Type.String(),
  emails_disabled: Type.Boolean(),
  emails_enabled: Type.Boolean(),
  mentions_disabled: NullableBoolean,
  lfs_enabled: Type.Boolean(),
  math_rendering_limits_enabled: Type.Boolean(),
  lock_math_rendering_limits_enabled: Type.Boolean(),
  default_branch: NullableString,
  default_branch_protection: Type.Integer(),
  default_branch_protection_defaults: BranchProtectionDefaultsSchema,
  avatar_url: NullableString,
  request_access_enabled: Type.Boolean(),
  full_name: Type.String(),
  full_path: Type.String(),
  created_at: Type.String(),
  parent_id: NullableInteger,
  organization_id: Type.Integer(),
  shared_runners_setting: Type.String(),
  max_artifacts_size: NullableInteger,
};

export const GroupSchema = Type.Object(groupProps);

/** Projects in a group detail: the project entity's own schema decides their fields. */
const AnyObject = Type.Object({}, { additionalProperties: true });

export const GroupDetailSchema = Type.Object({
  ...groupProps,
  shared_with_groups: Type.Array(AnyObject),
  enabled_git_access_protocol: Type.Optional(Type.String()),
  prevent_sharing_groups_outside_hierarchy: Type.Optional(Type.Boolean()),
  projects: Type.Optional(Type.Array(AnyObject)),
  shared_projects: Type.Optional(Type.Array(AnyObject)),
});

export type GroupEntity = Static<typeof GroupSchema>;
export type GroupDetailEntity = Static<typeof GroupDetailSchema>;

export function toGroup(row: NamespaceRow, ctx: GroupViewContext): GroupEntity {
  const s = groupSettings(row);
  return {
    id: row.id,
    web_url: `${ctx.externalUrl}/groups/${row.full_path}`,
    name: row.name,
    path: row.path,
    description: row.description,
    visibility: row.visibility,
    share_with_group_lock: row.share_with_group_lock === 1,
    require_two_factor_authentication: s.require_two_factor_authentication,
    two_factor_grace_period: s.two_factor_grace_period,
    project_creation_level: row.project_creation_level,
    auto_devops_enabled: s.auto_devops_enabled,
    subgroup_creation_level: row.subgroup_creation_level,
    emails_disabled: !s.emails_enabled,
    emails_enabled: s.emails_enabled,
    mentions_disabled: s.mentions_disabled,
    lfs_enabled: s.lfs_enabled,
    math_rendering_limits_enabled: s.math_rendering_limits_enabled,
    lock_math_rendering_limits_enabled: s.lock_math_rendering_limits_enabled,
    default_branch: s.default_branch,
    default_branch_protection: s.default_branch_protection ?? ctx.defaultBranchProtection,
    default_branch_protection_defaults: (s.default_branch_protection_defaults ??
      ctx.defaultBranchProtectionDefaults) as GroupEntity['default_branch_protection_defaults'],
    avatar_url: row.avatar_url,
    request_access_enabled: row.request_access_enabled === 1,
    full_name: ctx.fullNames.get(row.id) ?? row.name,
    full_path: row.full_path,
    created_at: row.created_at,
    parent_id: row.parent_id,
    organization_id: DEFAULT_ORGANIZATION_ID,
    shared_runners_setting: s.shared_runners_setting,
    max_artifacts_size: s.max_artifacts_size,
  };
}

export interface GroupDetailOptions {
  /** admin_group on this group: the root group's Git access protocol is shown */
  canAdmin: boolean;
  /** with_projects (default true): the group's projects, and the projects shared with it */
  projects?: { own: Record<string, unknown>[]; shared: Record<string, unknown>[] };
}

export function toGroupDetail(row: NamespaceRow, ctx: GroupViewContext, opts: GroupDetailOptions): GroupDetailEntity {
  const s = groupSettings(row);
  const root = row.parent_id === null;
  const out: GroupDetailEntity = { ...toGroup(row, ctx), shared_with_groups: [] };
  if (root && opts.canAdmin) out.enabled_git_access_protocol = s.enabled_git_access_protocol;
  if (root) out.prevent_sharing_groups_outside_hierarchy = s.prevent_sharing_groups_outside_hierarchy;
  if (opts.projects) {
    out.projects = opts.projects.own;
    out.shared_projects = opts.projects.shared;
  }
  return out;
}
