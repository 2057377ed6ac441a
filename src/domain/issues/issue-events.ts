// The issue hook payload (Gitlab::HookData::IssueBuilder through IssuableBuilder): object_kind "issue",
// event_type "issue" or "confidential_issue" (which only hooks with confidential_issues_events hear),
// user, project, object_attributes with the action, labels, changes {key: {previous, current}} limited to
// the builder's safe keys, repository, and assignees when there are any. Built inside the writer's
// transaction, so it shows the issue as that transaction leaves it.
import type { Kysely } from 'kysely';
import { ISSUE_COLUMNS, type Database, type IssueRow, type LabelRow, type UserRow } from '../../db/schema.ts';
import { projectHookAttrs, projectWithNamespace, userHookAttrs } from '../core/hook-attrs.ts';
import { recordSystemEvent } from '../core/system-events.ts';
import type { NoteableHookAttrs } from '../notes/noteable.ts';
import { humanTime } from '../merge-requests/rules.ts';
import { labelHookAttrs, type HookChanges } from '../merge-requests/mr-events.ts';
import { issueWebUrl } from './rules.ts';

export type IssueAction = 'open' | 'update' | 'close' | 'reopen';

/** IssueBuilder::SAFE_HOOK_ATTRIBUTES + SAFE_HOOK_RELATIONS: the keys `changes` may show. */
const SAFE_CHANGE_KEYS = new Set([
  'assignee_id',
  'author_id',
  'closed_at',
  'confidential',
  'created_at',
  'description',
  'discussion_locked',
  'due_date',
  'id',
  'iid',
  'last_edited_at',
  'last_edited_by_id',
  'milestone_id',
  'moved_to_id',
  'duplicated_to_id',
  'project_id',
  'relative_position',
  'state_id',
  'time_estimate',
  'title',
  'updated_at',
  'updated_by_id',
  'assignees',
  'labels',
  'total_time_spent',
  'time_change',
  'severity',
  'escalation_status',
  'customer_relations_contacts',
  'type',
]);

/** Issue.available_states */
export const ISSUE_STATE_IDS: Record<string, number> = { opened: 1, closed: 2 };

async function issueLabels(trx: Kysely<Database>, issueId: number): Promise<LabelRow[]> {
  return trx
    .selectFrom('issue_labels')
    .innerJoin('labels', 'labels.id', 'issue_labels.label_id')
    .selectAll('labels')
    .where('issue_labels.issue_id', '=', issueId)
    .orderBy('labels.title')
    .execute();
}

async function issueAssignees(trx: Kysely<Database>, issueId: number): Promise<UserRow[]> {
  return trx
    .selectFrom('issue_assignees')
    .innerJoin('users', 'users.id', 'issue_assignees.user_id')
    .selectAll('users')
    .where('issue_assignees.issue_id', '=', issueId)
    .orderBy('issue_assignees.created_at')
    .orderBy('users.id')
    .execute();
}

/** The payload of one issue event (built in `trx`, after the write). */
export async function issueHookPayload(
  trx: Kysely<Database>,
  deps: { externalUrl: string },
  user: UserRow,
  issue: IssueRow,
  action: IssueAction,
  changes: HookChanges = {},
) {
  const target = await projectWithNamespace(trx, issue.project_id);
  if (!target) throw new Error(`issue ${issue.id} has no project`);
  const project = projectHookAttrs(deps.externalUrl, target.project, target.namespace);
  const [labels, assignees] = await Promise.all([issueLabels(trx, issue.id), issueAssignees(trx, issue.id)]);
  const labelAttrs = labels.map(labelHookAttrs);
  const objectAttributes = {
    author_id: issue.author_id,
    closed_at: issue.closed_at,
    confidential: issue.confidential === 1,
    created_at: issue.created_at,
    description: issue.description,
    discussion_locked: issue.discussion_locked === null ? null : issue.discussion_locked === 1,
    due_date: issue.due_date,
    id: issue.id,
    iid: issue.iid,
    last_edited_at: issue.last_edited_at,
    last_edited_by_id: issue.last_edited_by_id,
    milestone_id: issue.milestone_id,
    moved_to_id: issue.moved_to_id,
    duplicated_to_id: issue.duplicated_to_id,
    project_id: issue.project_id,
    relative_position: issue.relative_position,
    state_id: ISSUE_STATE_IDS[issue.state] ?? 1,
    time_estimate: issue.time_estimate,
    title: issue.title,
    updated_at: issue.updated_at,
    updated_by_id: issue.updated_by_id,
    type: issue.issue_type === 'incident' ? 'Incident' : 'Issue',
    url: issueWebUrl(deps.externalUrl, project.path_with_namespace, issue.iid),
    total_time_spent: issue.total_time_spent,
    time_change: 0,
    human_total_time_spent: humanTime(issue.total_time_spent),
    human_time_change: null,
    human_time_estimate: humanTime(issue.time_estimate),
    assignee_ids: assignees.map((a) => a.id),
    assignee_id: assignees[0]?.id ?? null,
    labels: labelAttrs,
    state: issue.state,
    severity: 'unknown',
    customer_relations_contacts: [],
    action,
  };
  const safeChanges: HookChanges = {};
  for (const [k, v] of Object.entries(changes)) if (SAFE_CHANGE_KEYS.has(k)) safeChanges[k] = v;
  return {
    object_kind: 'issue' as const,
    event_type: issue.confidential === 1 ? 'confidential_issue' : 'issue',
    user: userHookAttrs(user),
    project,
    object_attributes: objectAttributes,
    labels: labelAttrs,
    changes: safeChanges,
    repository: { name: project.name, url: project.url, description: project.description, homepage: project.homepage },
    ...(assignees.length ? { assignees: assignees.map(userHookAttrs) } : {}),
  };
}

/** Writes the issue event to the outbox (project and group hooks, user activity) in the writer's transaction. */
export async function recordIssueEvent(
  trx: Kysely<Database>,
  deps: { externalUrl: string },
  user: UserRow,
  issue: IssueRow,
  action: IssueAction,
  changes: HookChanges = {},
): Promise<void> {
  await recordSystemEvent(trx, await issueHookPayload(trx, deps, user, issue, action, changes));
}

/** An issue's hook attributes as a note hook embeds them (`issue`). */
export function issueNoteableAttrs(deps: { externalUrl: string }): NoteableHookAttrs {
  return async (trx, user, id) => {
    const issue = await trx.selectFrom('issues').select(ISSUE_COLUMNS).where('id', '=', id).executeTakeFirst();
    return issue ? (await issueHookPayload(trx, deps, user, issue, 'update')).object_attributes : null;
  };
}
