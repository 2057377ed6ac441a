// The parameters of the issue lists (Helpers::IssuesHelpers issues_params, optional_scope_param, iids[],
// non_archived) as TypeBox querystring schemas, and their translation to the domain's filters with Grape's
// checks and messages — the same coercions as the merge request lists.
import { Type, type Static } from 'typebox';
import { ISSUE_ORDERS, ISSUE_STATES, type IssueFilters, type IssueNegatableFilters } from '../../../domain/issues/issues-query.ts';
import { ISSUE_TYPES } from '../../../domain/issues/rules.ts';
import { Errors } from '../../../lib/errors.ts';
import { Enum, PaginationProps } from './common.ts';
import { assigneeUsernames, Bool, dateTime, Int, integerNoneAny, Loose, mutuallyExclusive, splitList, Str, StringList } from './merge-request-list.ts';

const SCOPES = ['created-by-me', 'assigned-to-me', 'created_by_me', 'assigned_to_me', 'all'] as const;

/** issues_negatable_params */
const negatableProps = {
  author_id: Int(),
  author_username: Str(),
  assignee_id: Loose(),
  assignee_username: StringList(),
  labels: StringList(),
  milestone: Str(),
  my_reaction_emoji: Str(),
  iids: Type.Optional(Type.Array(Type.Integer())),
  issue_type: Enum(ISSUE_TYPES),
};

const baseProps = {
  ...negatableProps,
  state: Enum(ISSUE_STATES, 'all'),
  order_by: Enum(ISSUE_ORDERS, 'created_at'),
  sort: Enum(['asc', 'desc'] as const, 'desc'),
  with_labels_details: Bool(false),
  created_after: Str(),
  created_before: Str(),
  updated_after: Str(),
  updated_before: Str(),
  due_date: Enum(['0', 'any', 'today', 'tomorrow', 'overdue', 'week', 'month', 'next_month_and_previous_two_weeks'] as const),
  confidential: Type.Optional(Type.Boolean()),
  search: Str(),
  in: Str(),
  not: Type.Optional(Type.Object(negatableProps)),
  ...PaginationProps,
};

/** GET /issues: scope defaults to created_by_me. */
export const GlobalIssueListQuery = Type.Object({ ...baseProps, scope: Enum(SCOPES, 'created_by_me') });
/** GET /groups/:id/issues: all visible issues of the group and its subgroups, unarchived projects by default. */
export const GroupIssueListQuery = Type.Object({ ...baseProps, scope: Enum(SCOPES, 'all'), non_archived: Bool(true) });
/** GET /projects/:id/issues */
export const ProjectIssueListQuery = Type.Object({ ...baseProps, scope: Enum(SCOPES, 'all') });

export type IssueListQuery = Static<typeof GlobalIssueListQuery> & { non_archived?: boolean };

function negatable(q: Record<string, any>, prefix: string | null, errors: string[]): IssueNegatableFilters {
  const name = (k: string) => (prefix ? `${prefix}[${k}]` : k);
  return {
    authorId: q.author_id,
    authorUsername: q.author_username,
    assigneeId: integerNoneAny(q.assignee_id, name('assignee_id'), errors),
    assigneeUsernames: assigneeUsernames(q.assignee_username, name('assignee_username'), errors),
    labels: splitList(q.labels),
    milestone: q.milestone,
    iids: q.iids,
    issueType: q.issue_type,
  };
}

/** The request's parameters as the domain's filters, or GitLab's 400 for what Grape refuses beyond the schema. */
export function toIssueFilters(q: IssueListQuery): IssueFilters {
  const errors: string[] = [];
  const raw = q as Record<string, any>;
  mutuallyExclusive(raw, 'author_id', 'author_username', null, errors);
  mutuallyExclusive(raw, 'assignee_id', 'assignee_username', null, errors);
  const not = raw.not as Record<string, any> | undefined;
  mutuallyExclusive(not, 'author_id', 'author_username', 'not', errors);
  mutuallyExclusive(not, 'assignee_id', 'assignee_username', 'not', errors);
  const f: IssueFilters = {
    ...negatable(raw, null, errors),
    scope: q.scope ? (q.scope.replace(/-/g, '_') as IssueFilters['scope']) : undefined,
    state: q.state,
    confidential: q.confidential,
    createdAfter: dateTime(q.created_after, 'created_after', errors),
    createdBefore: dateTime(q.created_before, 'created_before', errors),
    updatedAfter: dateTime(q.updated_after, 'updated_after', errors),
    updatedBefore: dateTime(q.updated_before, 'updated_before', errors),
    dueDate: q.due_date,
    search: q.search,
    in: q.in,
    not: not ? negatable(not, 'not', errors) : undefined,
    orderBy: q.order_by,
    sort: q.sort,
  };
  if (errors.length) throw Errors.param(errors.join(', '));
  return f;
}
