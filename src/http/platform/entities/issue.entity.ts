// Wire shapes of issues: GitLab's Entities::IssueBasic (lists) and Entities::Issue (one issue, and the lists
// of the issues API, which show the full entity). Pure mappings from the views IssuesService loads for a whole
// page; the schemas are the allow-list of what leaves.
import { Type, type Static } from 'typebox';
import type { IssueView } from '../../../domain/issues/present.ts';
import { issueWebUrl } from '../../../domain/issues/rules.ts';
import { humanTime, type ReferenceFrom, referenceTo, taskCompletionStatus } from '../../../domain/merge-requests/rules.ts';
import { NullableBoolean, NullableInteger, NullableString } from '../schemas/common.ts';
import { LabelBasicSchema, toLabelDetails } from './label.entity.ts';
import { MilestoneSchema, toMilestoneBasic } from './milestone.entity.ts';
import { TimeStatsSchema } from './merge-request.entity.ts';
import { toUserRef, UserRefSchema, type UserRef, type UserViewContext } from './user.entity.ts';

const NullableUserRef = Type.Unsafe<UserRef | null>({ type: ['object', 'null'], properties: UserRefSchema.properties, required: UserRefSchema.required });

export const IssueSchema = Type.Object({
  id: Type.Integer(),
  iid: Type.Integer(),
  project_id: Type.Integer(),
  title: Type.String(),
  description: NullableString,
  state: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
  closed_at: NullableString,
  closed_by: NullableUserRef,
  labels: Type.Array(Type.Union([Type.String(), LabelBasicSchema])),
  milestone: Type.Union([MilestoneSchema, Type.Null()]),
  assignees: Type.Array(UserRefSchema),
  author: NullableUserRef,
  type: Type.String(),
  assignee: NullableUserRef,
  user_notes_count: Type.Integer(),
  merge_requests_count: Type.Integer(),
  upvotes: Type.Integer(),
  downvotes: Type.Integer(),
  due_date: NullableString,
  confidential: Type.Boolean(),
  discussion_locked: NullableBoolean,
  issue_type: Type.String(),
  web_url: Type.String(),
  time_stats: TimeStatsSchema,
  task_completion_status: Type.Object({ count: Type.Integer(), completed_count: Type.Integer() }),
  blocking_issues_count: Type.Integer(),
  has_tasks: Type.Boolean(),
  task_status: Type.Optional(Type.String()),
  _links: Type.Object({
    self: Type.String(),
    notes: Type.String(),
    award_emoji: Type.String(),
    project: Type.String(),
    closed_as_duplicate_of: NullableString,
  }),
  references: Type.Object({ short: Type.String(), relative: Type.String(), full: Type.String() }),
  severity: Type.String(),
  subscribed: Type.Optional(Type.Boolean()),
  moved_to_id: NullableInteger,
  imported: Type.Boolean(),
  imported_from: Type.String(),
  service_desk_reply_to: NullableString,
});
export type IssueEntity = Static<typeof IssueSchema>;

/** Entities::IssueBasic: the issue without what only Entities::Issue adds (milestone and board lists). */
export const IssueBasicSchema = Type.Omit(IssueSchema, [
  'has_tasks',
  'task_status',
  '_links',
  'references',
  'severity',
  'subscribed',
  'moved_to_id',
  'imported',
  'imported_from',
  'service_desk_reply_to',
]);

export interface IssueEntityContext {
  externalUrl: string;
  users: UserViewContext;
  /** what references are written relative to */
  from: ReferenceFrom;
  withLabelsDetails?: boolean;
}

export function toIssue(v: IssueView, ctx: IssueEntityContext, subscribed?: boolean): IssueEntity {
  const r = v.row;
  const user = (u: IssueView['author']) => (u ? toUserRef(u, ctx.users) : null);
  const assignees = v.assignees.map((u) => toUserRef(u, ctx.users));
  const tasks = taskCompletionStatus(r.description);
  const api = `${ctx.externalUrl}/api/v4/projects/${r.project_id}`;
  return {
    id: r.id,
    iid: r.iid,
    project_id: r.project_id,
    title: r.title,
    description: r.description,
    state: r.state,
    created_at: r.created_at,
    updated_at: r.updated_at,
    closed_at: r.closed_at,
    closed_by: user(v.closedBy),
    labels: ctx.withLabelsDetails ? v.labels.map(toLabelDetails) : v.labels.map((l) => l.title),
    milestone: v.milestone ? toMilestoneBasic(v.milestone) : null,
    assignees,
    author: user(v.author),
    type: r.issue_type.toUpperCase(),
    assignee: assignees[0] ?? null,
    user_notes_count: r.user_notes_count,
    merge_requests_count: v.mergeRequestsCount,
    upvotes: r.upvotes,
    downvotes: r.downvotes,
    due_date: r.due_date,
    confidential: r.confidential === 1,
    discussion_locked: r.discussion_locked === null ? null : r.discussion_locked === 1,
    issue_type: r.issue_type,
    web_url: issueWebUrl(ctx.externalUrl, v.project.fullPath, r.iid),
    time_stats: {
      time_estimate: r.time_estimate,
      total_time_spent: r.total_time_spent,
      human_time_estimate: humanTime(r.time_estimate),
      human_total_time_spent: humanTime(r.total_time_spent),
    },
    task_completion_status: tasks,
    blocking_issues_count: v.blockingIssuesCount,
    has_tasks: tasks.count > 0,
    ...(tasks.count > 0 ? { task_status: `${tasks.completed_count} of ${tasks.count} ${tasks.count === 1 ? 'task' : 'tasks'} completed` } : {}),
    _links: {
      self: `${api}/issues/${r.iid}`,
      notes: `${api}/issues/${r.iid}/notes`,
      award_emoji: `${api}/issues/${r.iid}/award_emoji`,
      project: api,
      closed_as_duplicate_of: null,
    },
    references: {
      short: `#${r.iid}`,
      relative: referenceTo(r.iid, v.project, ctx.from, false, '#'),
      full: referenceTo(r.iid, v.project, null, true, '#'),
    },
    severity: 'UNKNOWN',
    ...(subscribed !== undefined ? { subscribed } : {}),
    moved_to_id: r.moved_to_id,
    imported: r.imported_from !== 'none',
    imported_from: r.imported_from,
    service_desk_reply_to: null,
  };
}

/**
 * Entities::RelatedIssue (< Entities::Issue, presented with include_subscribed: false): a linked issue as the listed
 * issue sees it, its references relative to that issue's project.
 */
export const RelatedIssueSchema = Type.Object({
  ...Type.Omit(IssueSchema, ['subscribed']).properties,
  issue_link_id: Type.Integer(),
  link_type: Type.String(),
  link_created_at: Type.String(),
  link_updated_at: Type.String(),
});

/** Entities::IssueLink */
export const IssueLinkSchema = Type.Object({
  source_issue: IssueBasicSchema,
  target_issue: IssueBasicSchema,
  link_type: Type.String(),
});

/** Entities::IssueBasic of one issue (search results, milestone lists): the issue without Entities::Issue's own fields. */
export function toIssueBasic(v: IssueView, ctx: IssueEntityContext) {
  const {
    has_tasks: _1,
    task_status: _2,
    _links: _3,
    references: _4,
    severity: _5,
    subscribed: _6,
    moved_to_id: _7,
    imported: _8,
    imported_from: _9,
    service_desk_reply_to: _10,
    ...basic
  } = toIssue(v, ctx);
  return basic;
}
