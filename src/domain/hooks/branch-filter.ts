// Which pushes a hook hears (GitLab's ActiveHookFilter, RefMatcher and the branch-filter validators).
// Only push events are filtered; tag pushes and every other event pass.
import type { SystemHookRow } from '../../db/schema.ts';
import { BRANCH_PREFIX, isValidRefName } from '../../git/refs.ts';
import { matchAll, untrustedRegexp } from '../../lib/untrusted-regexp.ts';

export const BRANCH_FILTER_STRATEGIES = ['wildcard', 'regex', 'all_branches'] as const;
export type BranchFilterStrategy = (typeof BRANCH_FILTER_STRATEGIES)[number];

/** Why a filter cannot be saved (null: it can). A blank filter matches every branch. */
export function branchFilterError(strategy: string, filter: string | null): string | null {
  if (!filter) return null;
  if (strategy === 'regex') return untrustedRegexp(filter) ? null : 'is not a valid regular expression';
  if (strategy === 'wildcard') return isValidRefName(filter.replaceAll('*', 'x')) ? null : 'must be a valid branch name';
  return null;
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

type Filter = Pick<SystemHookRow, 'push_events_branch_filter' | 'branch_filter_strategy'>;

/** Whether a push to `ref` reaches a hook with this filter. */
export function pushMatches(hook: Filter, ref: string): boolean {
  const filter = hook.push_events_branch_filter;
  if (!filter || hook.branch_filter_strategy === 'all_branches') return true;
  if (!ref.startsWith(BRANCH_PREFIX)) return true; // not a branch: nothing to filter by
  const branch = ref.slice(BRANCH_PREFIX.length);
  if (hook.branch_filter_strategy === 'regex') {
    const re = untrustedRegexp(filter);
    if (!re) return false;
    try {
      return matchAll(re, [branch])[0];
    } catch {
      return false; // too slow to decide: no match, as an invalid pattern
    }
  }
  if (filter === branch) return true;
  if (!filter.includes('*')) return false;
  return new RegExp(`^${escapeRegex(filter).replaceAll('\\*', '.*?')}$`).test(branch);
}
