// Wire shape of a member (GitLab API::Entities::Member with its EE fields): the user's basic fields
// merged in, then the membership. `created_by` and `member_role` are left out when empty
// (`expose_nil: false`); `email` only for administrators (EE: can_admin_all_resources?).
import { Type, type Static } from 'typebox';
import type { MemberView } from '../../../domain/members/members.service.ts';
import { MemberRoleSchema, toMemberRole } from './member-role.entity.ts';
import { UserRefSchema, toUserRef, type UserViewContext } from './user.entity.ts';
import { NullableString } from '../schemas/common.ts';

export const MemberSchema = Type.Object({
  ...UserRefSchema.properties,
  access_level: Type.Integer(),
  created_at: Type.String(),
  created_by: Type.Optional(UserRefSchema),
  expires_at: NullableString,
  email: Type.Optional(Type.String()),
  membership_state: Type.String(),
  member_role: Type.Optional(MemberRoleSchema),
});

export type MemberEntity = Static<typeof MemberSchema>;

export interface MemberViewContext {
  user: UserViewContext;
  /** the viewer administers the instance: members' emails are shown */
  admin: boolean;
}

export function toMember(v: MemberView, ctx: MemberViewContext): MemberEntity {
  const out: MemberEntity = {
    ...toUserRef(v.user, ctx.user),
    access_level: v.accessLevel,
    created_at: v.member.created_at,
    expires_at: v.member.expires_at,
    membership_state: 'active',
  };
  if (v.createdBy) out.created_by = toUserRef(v.createdBy, ctx.user);
  if (ctx.admin) out.email = v.user.email;
  if (v.role) out.member_role = toMemberRole(v.role);
  return out;
}
