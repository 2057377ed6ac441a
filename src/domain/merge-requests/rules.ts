// The rules of a merge request that every shape of it shares (the API entities, the system hook, the web
// pages): a draft title, the task list of the description, tracked time as GitLab writes it, references
// between projects, the merge params and the merge request's URL.
import type { MergeRequestRow } from '../../db/schema.ts';

/** Gitlab::Regex.merge_request_draft: a title starting with "[Draft]", "(Draft)" or "Draft:", any case. */
export const DRAFT_REGEX = /^(\[draft\]|\(draft\)|draft:)/i;

export function isDraftTitle(title: string): boolean {
  return DRAFT_REGEX.test(title);
}

/**
 * Taskable::ITEM_PATTERN: list items (optionally quoted) with a checkbox followed by text;
 * "[x]"/"[X]" counts as completed.
 */
const TASK_ITEM = /^(?:(?:>\s{0,4})*)((?:[ \t]*(?:[-+*]|(?:\d+\.)))+)\s+(\[\s\]|\[[xX]\])(\s.+)/gm;

export function taskCompletionStatus(description: string | null): { count: number; completed_count: number } {
  let count = 0;
  let completed = 0;
  if (description) {
    for (const m of description.matchAll(TASK_ITEM)) {
      count++;
      if (/\[[xX]\]/.test(m[2])) completed++;
    }
  }
  return { count, completed_count: completed };
}

/**
 * Gitlab::TimeTrackingFormatter.output: ChronicDuration's short format with GitLab's 8-hour days,
 * 5-day weeks and 20-day months ("1w 2d 3h 30m"); null for no time.
 */
export function humanTime(seconds: number): string | null {
  if (!seconds) return null;
  const units: [string, number][] = [
    ['mo', 20 * 8 * 3600],
    ['w', 5 * 8 * 3600],
    ['d', 8 * 3600],
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ];
  let rest = Math.abs(seconds);
  const parts: string[] = [];
  for (const [name, size] of units) {
    const n = Math.floor(rest / size);
    if (n) parts.push(`${n}${name}`);
    rest -= n * size;
  }
  return (seconds < 0 ? '-' : '') + parts.join(' ');
}

/** What a reference is written relative to (options[:project] / options[:group] of the request). */
export type ReferenceFrom = { project: { id: number; namespace_id: number } } | { group: { id: number } } | null;

/** Project#to_reference_base: the full path across namespaces, the path across projects of one namespace (`!` merge requests, `#` issues). */
export function referenceTo(
  iid: number,
  target: { id: number; namespace_id: number; path: string; fullPath: string },
  from: ReferenceFrom,
  full = false,
  sigil: '!' | '#' = '!',
): string {
  const ref = `${sigil}${iid}`;
  if (full) return target.fullPath + ref;
  if (!from) return ref;
  if ('project' in from) {
    if (from.project.namespace_id !== target.namespace_id) return target.fullPath + ref;
    return from.project.id !== target.id ? target.path + ref : ref;
  }
  // from a group: another group's projects by full path, its own by path (cross_project_reference? of a Namespace)
  return (from.group.id !== target.namespace_id ? target.fullPath : target.path) + ref;
}

export interface MergeParams {
  force_remove_source_branch?: boolean | string | null;
  should_remove_source_branch?: boolean | string | null;
  [k: string]: unknown;
}

export function mergeParamsOf(row: Pick<MergeRequestRow, 'merge_params'>): MergeParams {
  try {
    const v = JSON.parse(row.merge_params || '{}');
    return v && typeof v === 'object' ? v : {};
  } catch {
    return {};
  }
}

export function mergeRequestWebUrl(externalUrl: string, fullPath: string, iid: number): string {
  return `${externalUrl}/${fullPath}/-/merge_requests/${iid}`;
}
