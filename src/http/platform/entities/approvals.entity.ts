// The approvals of a merge request (GET …/approvals, and the answer of approve/unapprove): GitLab's
// MergeRequestApprovals shape with the merge request's summary fields, as clients read it. No approval
// rules exist here: approvals_required 0, approved when anyone approved (CE's Approvable), the rule lists empty.
import { Type } from 'typebox';
import type { MergeRequestRow } from '../../../db/schema.ts';
import type { ApprovalState } from '../../../domain/merge-requests/approvals.ts';
import type { UserBasicRow } from '../../../domain/core/user-columns.ts';
import { NullableString } from '../schemas/common.ts';
import { toUserBasic, UserBasicSchema, type UserViewContext } from './user.entity.ts';

const Empty = Type.Array(Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true }));

export const ApprovalsSchema = Type.Object({
  id: Type.Integer(),
  iid: Type.Integer(),
  project_id: Type.Integer(),
  title: Type.String(),
  description: NullableString,
  state: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
  merge_status: Type.String(),
  approved: Type.Boolean(),
  approvals_required: Type.Integer(),
  approvals_left: Type.Integer(),
  require_password_to_approve: Type.Boolean(),
  approved_by: Type.Array(Type.Object({ user: UserBasicSchema, approved_at: Type.String() })),
  suggested_approvers: Empty,
  approvers: Empty,
  approver_groups: Empty,
  user_has_approved: Type.Boolean(),
  user_can_approve: Type.Boolean(),
  approval_rules_left: Empty,
  has_approval_rules: Type.Boolean(),
  merge_request_approvers_available: Type.Boolean(),
  multiple_approval_rules_available: Type.Boolean(),
  invalid_approvers_rules: Empty,
});

export const ApprovalStateSchema = Type.Object({ approval_rules_overwritten: Type.Boolean(), rules: Empty });

/** MergeRequest#public_merge_status: the transitional states read as "checking". */
export function publicMergeStatus(status: string): string {
  return status === 'preparing' || status === 'cannot_be_merged_rechecked' ? 'checking' : status;
}

export function toApprovals(mr: MergeRequestRow, s: ApprovalState, users: Map<number, UserBasicRow>, ctx: UserViewContext) {
  const approvedBy = s.approvals.flatMap((a) => {
    const u = users.get(a.user_id);
    return u ? [{ user: toUserBasic(u, ctx), approved_at: a.created_at }] : [];
  });
  return {
    id: mr.id,
    iid: mr.iid,
    project_id: mr.project_id,
    title: mr.title,
    description: mr.description,
    state: mr.state,
    created_at: mr.created_at,
    updated_at: mr.updated_at,
    merge_status: publicMergeStatus(mr.merge_status),
    approved: s.approvals.length > 0,
    approvals_required: 0,
    approvals_left: 0,
    require_password_to_approve: false,
    approved_by: approvedBy,
    suggested_approvers: [],
    approvers: [],
    approver_groups: [],
    user_has_approved: s.userHasApproved,
    user_can_approve: s.userCanApprove,
    approval_rules_left: [],
    has_approval_rules: false,
    merge_request_approvers_available: false,
    multiple_approval_rules_available: false,
    invalid_approvers_rules: [],
  };
}
