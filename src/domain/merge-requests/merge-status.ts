// detailed_merge_status and merge_status of a merge request, from its stored state and the facts the
// caller loaded (MergeRequests::Mergeability::DetailedMergeStatusService). Pure: no queries, no git.
// The list never recomputes mergeability; a recheck runs in the background (MergeService).
//
// GitLab's order: preparing, checking, unchecked (the stored state machine), then the first failing
// check of MergeRequest.all_mergeability_checks — open, draft, commits (source branch missing),
// discussions (only when the project requires them resolved), approvals (EE's check, after the state
// checks), conflict, rebase (fast-forward and semi-linear merge methods), and when all of those pass
// the CI check (only_allow_merge_if_pipeline_succeeds: ci_still_running while the head pipeline is
// active, else ci_must_pass unless it succeeded or was skipped where skipped pipelines are allowed) —
// else mergeable. One
// deliberate difference: a merge request that is not open answers not_open before the stored state
// (GitLab's would show the status of its last check, which is never rechecked once closed).
import type { MergeRequestRow } from '../../db/schema.ts';

/** What the merge status depends on beyond the row (loaded in one query per page by the caller). */
export interface MergeFacts {
  /** unresolved resolvable discussions */
  unresolvedDiscussions: number;
  /** approvals required by the project and given */
  approvalsRequired: number;
  approvalsGiven: number;
  /** the project's only_allow_merge_if_all_discussions_are_resolved (default false) */
  discussionsMustBeResolved?: boolean;
  /**
   * the project's merge_method is ff or rebase_merge; when not given, the last check's verdict stands
   * (it stores fast_forward_possible = 0 only when the merge method needs a fast-forward)
   */
  fastForwardOnly?: boolean;
  /** the source branch is gone (commits_status) */
  sourceBranchMissing?: boolean;
  /** the project's only_allow_merge_if_pipeline_succeeds */
  pipelineMustSucceed?: boolean;
  /** the project's allow_merge_on_skipped_pipeline */
  skippedPipelineAllowed?: boolean;
  /** the head pipeline's status (head-pipeline.ts), null without one */
  headPipelineStatus?: string | null;
}

/** HasStatus::ACTIVE_STATUSES: a pipeline that may still succeed */
export const ACTIVE_PIPELINE = new Set(['waiting_for_resource', 'preparing', 'waiting_for_callback', 'pending', 'running', 'canceling']);

/** CheckCiStatusService (with DetailedMergeStatusService's running case): the CI check's failure, or null. */
export function ciCheckFailure(facts: MergeFacts): 'ci_must_pass' | 'ci_still_running' | null {
  if (!facts.pipelineMustSucceed) return null;
  const status = facts.headPipelineStatus ?? null;
  if (status === 'success' || (status === 'skipped' && facts.skippedPipelineAllowed)) return null;
  return status !== null && ACTIVE_PIPELINE.has(status) ? 'ci_still_running' : 'ci_must_pass';
}

export const NO_FACTS: MergeFacts = { unresolvedDiscussions: 0, approvalsRequired: 0, approvalsGiven: 0 };

type StatusRow = Pick<MergeRequestRow, 'state' | 'draft' | 'merge_status'> & Partial<Pick<MergeRequestRow, 'fast_forward_possible'>>;

/** The merge_status values that mean "the last check found conflicts". */
export function hasConflicts(mergeStatus: string): boolean {
  return mergeStatus === 'cannot_be_merged' || mergeStatus === 'cannot_be_merged_rechecked';
}

/** The first failing check that does not need git (GitLab's mergeable_state?), or null. */
export function stateCheckFailure(mr: StatusRow, facts: MergeFacts = NO_FACTS): string | null {
  if (mr.state !== 'opened') return 'not_open';
  if (mr.draft) return 'draft_status';
  if (facts.sourceBranchMissing) return 'commits_status';
  if (facts.discussionsMustBeResolved && facts.unresolvedDiscussions > 0) return 'discussions_not_resolved';
  if (facts.approvalsRequired > facts.approvalsGiven) return 'not_approved';
  return null;
}

export function detailedMergeStatus(mr: StatusRow, facts: MergeFacts = NO_FACTS): string {
  if (mr.state !== 'opened') return 'not_open';
  if (mr.merge_status === 'preparing') return 'preparing';
  if (mr.merge_status === 'checking' || mr.merge_status === 'cannot_be_merged_rechecking') return 'checking';
  if (mr.merge_status === 'unchecked' || mr.merge_status === 'cannot_be_merged_recheck') return 'unchecked';
  const failed = stateCheckFailure(mr, facts);
  if (failed) return failed;
  if (hasConflicts(mr.merge_status)) return 'conflict';
  if (facts.fastForwardOnly !== false && mr.fast_forward_possible === 0) return 'need_rebase';
  return ciCheckFailure(facts) ?? 'mergeable';
}

/** The deprecated merge_status field: GitLab's stored value, with the transitional ones shown as checking. */
export function publicMergeStatus(mr: Pick<MergeRequestRow, 'merge_status'>): string {
  if (mr.merge_status === 'preparing') return 'checking';
  return mr.merge_status;
}
