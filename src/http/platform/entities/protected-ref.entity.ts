// API::Entities::ProtectedBranch, ProtectedTag and ProtectedRefAccess (with the user_id and group_id
// GitLab Premium adds, and the unprotect access levels and code owner flag of its ProtectedBranch).
import { Type, type Static } from 'typebox';
import { humanAccessLevel } from '../../../domain/repository/branch-protection.ts';
import type { AccessView, ProtectedBranchView, ProtectedTagView } from '../../../domain/repository/protected-refs.service.ts';
import { NullableInteger } from '../schemas/common.ts';

export const ProtectedRefAccessSchema = Type.Object({
  id: Type.Integer(),
  access_level: NullableInteger,
  access_level_description: Type.String(),
  user_id: NullableInteger,
  group_id: NullableInteger,
});

export const ProtectedBranchSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  push_access_levels: Type.Array(ProtectedRefAccessSchema),
  merge_access_levels: Type.Array(ProtectedRefAccessSchema),
  allow_force_push: Type.Boolean(),
  unprotect_access_levels: Type.Array(ProtectedRefAccessSchema),
  code_owner_approval_required: Type.Boolean(),
});

export const ProtectedTagSchema = Type.Object({
  name: Type.String(),
  create_access_levels: Type.Array(ProtectedRefAccessSchema),
});

export type ProtectedRefAccessEntity = Static<typeof ProtectedRefAccessSchema>;

/** ProtectedRefAccess#humanize: the user's or group's name, else the role's. */
export function toProtectedRefAccess(a: AccessView): ProtectedRefAccessEntity {
  return {
    id: a.id,
    access_level: a.access_level,
    access_level_description: a.user_id !== null || a.group_id !== null ? (a.description ?? '') : humanAccessLevel(a.access_level),
    user_id: a.user_id,
    group_id: a.group_id,
  };
}

export function toProtectedBranch(v: ProtectedBranchView): Static<typeof ProtectedBranchSchema> {
  const of = (action: string) => v.access.filter((a) => a.action === action).map(toProtectedRefAccess);
  return {
    id: v.row.id,
    name: v.row.name,
    push_access_levels: of('push'),
    merge_access_levels: of('merge'),
    allow_force_push: v.row.allow_force_push === 1,
    unprotect_access_levels: of('unprotect'),
    code_owner_approval_required: v.row.code_owner_approval_required === 1,
  };
}

export function toProtectedTag(v: ProtectedTagView): Static<typeof ProtectedTagSchema> {
  return { name: v.row.name, create_access_levels: v.access.filter((a) => a.action === 'create').map(toProtectedRefAccess) };
}
