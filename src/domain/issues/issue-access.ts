// Who may read and change an issue (GitLab's IssuePolicy and the issue parts of ProjectPolicy), as pure
// functions of the project access the policy answered: read_issue narrowed by the issues feature, a
// confidential issue only for Reporters and up (read_confidential_issues), its author and its assignees.
import type { IssueRow, ProjectRow } from '../../db/schema.ts';
import type { Actor } from '../access/actor.ts';
import type { ProjectAccess } from '../access/policy.ts';
import { featureOpen } from '../access/visibility.ts';

/** read_issue on the project, with its issues feature open to the actor. */
export function canReadIssues(actor: Actor, project: ProjectRow, access: ProjectAccess): boolean {
  return (actor.isAdmin || access.abilities.has('read_issue')) && featureOpen(actor, project, access, 'issues');
}

/** read_confidential_issues: Reporters and up (and administrators). */
export function canReadConfidential(actor: Actor, access: ProjectAccess): boolean {
  return actor.isAdmin || access.abilities.has('read_confidential_issues');
}

/** Whether the actor may read this issue (IssuePolicy: a confidential one for Reporters, its author and assignees). */
export function canReadIssue(
  actor: Actor,
  access: ProjectAccess,
  issue: Pick<IssueRow, 'confidential' | 'author_id'>,
  assigneeIds: readonly number[],
): boolean {
  if (issue.confidential !== 1 || canReadConfidential(actor, access)) return true;
  const id = actor.user?.id;
  return id !== undefined && (issue.author_id === id || assigneeIds.includes(id));
}

/** update_issue: Reporters and up, the author and the assignees (the project not archived). */
export function canUpdateIssue(actor: Actor, access: ProjectAccess, issue: Pick<IssueRow, 'author_id'>, assigneeIds: readonly number[]): boolean {
  if (!actor.user) return false;
  if (actor.isAdmin || access.abilities.has('update_issue')) return true;
  if (!access.abilities.has('create_issue')) return false; // archived: no writes at all
  return issue.author_id === actor.user.id || assigneeIds.includes(actor.user.id);
}

/** set_issue_metadata (labels, milestone, assignees, due date, confidential on create): Reporters and up. */
export function canSetMetadata(actor: Actor, access: ProjectAccess): boolean {
  return actor.isAdmin || access.abilities.has('admin_issue');
}
