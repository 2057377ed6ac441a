// Wire shape of a custom member role (spec "Member role"; GitLab EE API::Entities::MemberRole): the
// fields of the spec, then one boolean per customizable permission, every one always present.
import { Type, type Static, type TBoolean } from 'typebox';
import type { MemberRoleRow } from '../../../db/schema.ts';
import { CUSTOM_PERMISSIONS, type CustomPermission } from '../../../domain/core/roles.ts';
import { parsePermissions } from '../../../domain/member-roles/member-roles.service.ts';
import { NullableInteger, NullableString } from '../schemas/common.ts';

const permissionProps = Object.fromEntries(CUSTOM_PERMISSIONS.map((p) => [p, Type.Boolean()])) as Record<CustomPermission, TBoolean>;

export const MemberRoleSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  description: NullableString,
  group_id: NullableInteger,
  base_access_level: Type.Integer(),
  ...permissionProps,
});

export type MemberRoleEntity = Static<typeof MemberRoleSchema>;

export function toMemberRole(row: MemberRoleRow): MemberRoleEntity {
  const on = parsePermissions(row.permissions);
  const out: Record<string, unknown> = {
    id: row.id,
    name: row.name,
    description: row.description,
    group_id: row.namespace_id,
    base_access_level: row.base_access_level,
  };
  for (const p of CUSTOM_PERMISSIONS) out[p] = on.has(p);
  return out as MemberRoleEntity;
}
