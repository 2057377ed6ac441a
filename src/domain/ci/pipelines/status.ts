// GitLab's composite status (Gitlab::Ci::Status::Composite): the status of a set of jobs, with jobs
// allowed to fail counted as passed with warnings (failed, canceled) or ignored (manual).
export const COMPLETED = ['success', 'failed', 'canceled', 'skipped'];
export const CANCELABLE = ['created', 'waiting_for_resource', 'preparing', 'pending', 'running', 'scheduled'];

export interface StatusItem {
  status: string;
  allow_failure: number | boolean;
}

/** null for an empty set; `dag`: a skipped prerequisite, or a manual one allowed to fail, skips (needs). */
export function compositeStatus(items: StatusItem[], dag = false): string | null {
  if (!items.length) return null;
  const set = new Set<string>();
  for (const i of items) {
    const allowed = i.allow_failure === true || i.allow_failure === 1;
    if (allowed && (i.status === 'failed' || i.status === 'canceled')) set.add('success_with_warnings');
    else if (allowed && i.status === 'manual') set.add('ignored');
    else set.add(i.status);
  }
  const only = (...s: string[]) => [...set].every((x) => s.includes(x));
  const any = (...s: string[]) => s.some((x) => set.has(x));
  // a DAG job is skipped when one of its needs does not run at all (a manual job not played included)
  if (dag && (set.has('skipped') || set.has('ignored'))) return 'skipped';
  if (only('skipped', 'ignored')) return 'skipped';
  if (only('success', 'skipped', 'success_with_warnings', 'ignored')) return 'success';
  if (only('created', 'success_with_warnings', 'ignored')) return 'created';
  if (only('preparing', 'success_with_warnings', 'ignored')) return 'preparing';
  if (only('canceled', 'success', 'skipped', 'success_with_warnings', 'ignored')) return 'canceled';
  if (only('pending', 'created', 'skipped', 'success_with_warnings', 'ignored')) return 'pending';
  if (any('running', 'pending')) return 'running';
  if (any('waiting_for_resource')) return 'waiting_for_resource';
  if (any('manual')) return 'manual';
  if (any('scheduled')) return 'scheduled';
  if (any('preparing')) return 'preparing';
  if (any('created')) return 'running';
  if (any('canceling')) return 'canceling';
  if (any('waiting_for_callback')) return 'waiting_for_callback';
  return 'failed';
}
