// The parameters of the merge request lists (Helpers::MergeRequestsHelpers merge_requests_base_params,
// optional_scope_param, iids[], non_archived) as TypeBox querystring schemas, and their translation to the
// domain's filters with Grape's checks and messages (reference §2, §8).
import { isInt32 } from '../../../db/sql.ts';
import { Type, type Static } from 'typebox';
import {
  MAX_APPROVED_BY,
  MR_ORDERS,
  MR_STATES,
  type IdOrWildcard,
  type MergeRequestFilters,
  type MergeRequestScopeParam,
  type NegatableFilters,
  type Wildcard,
} from '../../../domain/merge-requests/merge-requests-query.ts';
import { Errors } from '../../../lib/errors.ts';
import { parseDateTime } from '../../../lib/time.ts';
import { Enum, PaginationProps } from './common.ts';

/** Array[String] with CommaSeparatedToArray: `a,b`, `x[]=a&x[]=b`. */
export const StringList = () => Type.Optional(Type.Array(Type.String()));
export const Str = () => Type.Optional(Type.String());
export const Int = () => Type.Optional(Type.Integer());
export const Bool = (def: boolean) => Type.Optional(Type.Boolean({ default: def }));
/** Validated by hand (integer_none_any, array_none_any): any value reaches the route. */
export const Loose = () => Type.Optional(Type.Unsafe<unknown>({}));

export const SCOPE_VALUES = ['created-by-me', 'assigned-to-me', 'created_by_me', 'assigned_to_me', 'reviews_for_me', 'all'] as const;

/** merge_requests_negatable_params */
const negatableProps = {
  author_id: Int(),
  author_username: Str(),
  assignee_id: Loose(),
  assignee_username: StringList(),
  reviewer_username: Str(),
  labels: StringList(),
  milestone: Str(),
  my_reaction_emoji: Str(),
};

const NotHash = Type.Optional(Type.Object({ ...negatableProps, reviewer_id: Int() }));

const baseProps = {
  ...negatableProps,
  reviewer_id: Loose(),
  state: Enum(MR_STATES, 'all'),
  order_by: Enum(MR_ORDERS, 'created_at'),
  sort: Enum(['asc', 'desc'] as const, 'desc'),
  with_labels_details: Bool(false),
  with_merge_status_recheck: Bool(false),
  created_after: Str(),
  created_before: Str(),
  updated_after: Str(),
  updated_before: Str(),
  view: Enum(['simple'] as const),
  source_branch: Str(),
  source_project_id: Int(),
  target_branch: Str(),
  search: Str(),
  in: Str(),
  wip: Enum(['yes', 'no'] as const),
  not: NotHash,
  deployed_before: Str(),
  deployed_after: Str(),
  environment: Str(),
  approved: Enum(['yes', 'no'] as const),
  merge_user_id: Int(),
  merge_user_username: Str(),
  approved_by_ids: Loose(),
  approver_ids: Loose(),
  ...PaginationProps,
};

/** GET /merge_requests: scope defaults to created_by_me. */
export const GlobalListQuery = Type.Object({ ...baseProps, scope: Enum(SCOPE_VALUES, 'created_by_me') });
/** GET /groups/:id/merge_requests: all visible merge requests of the group and its subgroups, unarchived projects by default. */
export const GroupListQuery = Type.Object({ ...baseProps, scope: Enum(SCOPE_VALUES), non_archived: Bool(true) });
/** GET /projects/:id/merge_requests: adds iids[]. */
export const ProjectListQuery = Type.Object({ ...baseProps, scope: Enum(SCOPE_VALUES), iids: Type.Optional(Type.Array(Type.Integer())) });

export type MergeRequestListQuery = Static<typeof GlobalListQuery> & { iids?: number[]; non_archived?: boolean };

/** CommaSeparatedToArray */
export const splitList = (v: string[] | undefined) =>
  v
    ?.flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter(Boolean);

/** Grape's DateTime coercion: ISO 8601 or a date, else "<name> is invalid". */
export function dateTime(value: string | undefined, name: string, errors: string[]): string | undefined {
  if (value === undefined || value === '') return undefined;
  const iso = parseDateTime(value);
  if (!iso) errors.push(`${name} is invalid`);
  return iso ?? undefined;
}

const isWildcard = (v: string): Wildcard | null => {
  const l = v.toLowerCase();
  return l === 'none' ? 'None' : l === 'any' ? 'Any' : null;
};

/** IntegerNoneAny: an integer, None or Any (any case). */
export function integerNoneAny(value: unknown, name: string, errors: string[]): IdOrWildcard | undefined {
  if (value === undefined) return undefined;
  // an integer beyond the id columns names nobody: "<param> is invalid", as every integer parameter here
  const tooBig = (n: number) => (isInt32(n) ? false : (errors.push(`${name} is invalid`), true));
  if (typeof value === 'number' && Number.isInteger(value)) return tooBig(value) ? undefined : value;
  if (typeof value === 'string') {
    if (/^-?\d+$/.test(value.trim())) return tooBig(Number(value)) ? undefined : Number(value);
    const w = isWildcard(value);
    if (w) return w;
  }
  errors.push(`${name} should be an integer, none, or any, however got ${Array.isArray(value) ? JSON.stringify(value) : String(value)}`);
  return undefined;
}

/** ArrayNoneAny: None, Any, or integers (a list or comma-separated). */
function arrayNoneAny(value: unknown, name: string, errors: string[]): number[] | Wildcard | undefined {
  if (value === undefined) return undefined;
  const list = (Array.isArray(value) ? value : [value]).map(String);
  if (list.length === 1) {
    const w = isWildcard(list[0].trim());
    if (w) return w;
  }
  const parts = list.flatMap((s) => s.split(',')).map((s) => s.trim());
  if (parts.length && parts.every((p) => /^\d+$/.test(p) && Number(p) <= 2_147_483_647)) return parts.map(Number);
  errors.push(`${name} should be an array, 'None' or 'Any'`);
  return undefined;
}

/** CheckAssigneesCount: one assignee username at most (GitLab's free tier). */
export function assigneeUsernames(value: string[] | undefined, name: string, errors: string[]): string[] | undefined {
  const list = splitList(value);
  if (list && list.length > 1) errors.push(`${name} allows one value, but found ${list.length}: ${list.join(', ')}`);
  return list;
}

const given = (o: Record<string, unknown> | undefined, k: string) => o !== undefined && o[k] !== undefined;

export function mutuallyExclusive(o: Record<string, unknown> | undefined, a: string, b: string, prefix: string | null, errors: string[]): void {
  if (given(o, a) && given(o, b)) errors.push(prefix ? `${prefix}[${a}], ${prefix}[${b}] are mutually exclusive` : `${a}, ${b} are mutually exclusive`);
}

function negatable(q: Record<string, any>, prefix: string | null, errors: string[]): NegatableFilters {
  const name = (k: string) => (prefix ? `${prefix}[${k}]` : k);
  return {
    authorId: q.author_id,
    authorUsername: q.author_username,
    assigneeId: integerNoneAny(q.assignee_id, name('assignee_id'), errors),
    assigneeUsernames: assigneeUsernames(q.assignee_username, name('assignee_username'), errors),
    reviewerId: prefix ? q.reviewer_id : integerNoneAny(q.reviewer_id, name('reviewer_id'), errors),
    reviewerUsername: q.reviewer_username,
    labels: splitList(q.labels),
    milestone: q.milestone,
    myReactionEmoji: q.my_reaction_emoji,
  };
}

/**
 * The request's parameters as the domain's filters, or GitLab's 400 for what Grape refuses beyond the
 * schema: mutually exclusive pairs (also inside `not`), integer_none_any / array_none_any values,
 * datetimes. Dashed scopes are underscored.
 */
export function toFilters(q: MergeRequestListQuery): MergeRequestFilters {
  const errors: string[] = [];
  const raw = q as Record<string, any>;
  mutuallyExclusive(raw, 'author_id', 'author_username', null, errors);
  mutuallyExclusive(raw, 'assignee_id', 'assignee_username', null, errors);
  const not = raw.not as Record<string, any> | undefined;
  mutuallyExclusive(not, 'author_id', 'author_username', 'not', errors);
  mutuallyExclusive(not, 'assignee_id', 'assignee_username', 'not', errors);
  mutuallyExclusive(not, 'reviewer_id', 'reviewer_username', 'not', errors);
  mutuallyExclusive(raw, 'reviewer_id', 'reviewer_username', null, errors);
  mutuallyExclusive(raw, 'merge_user_id', 'merge_user_username', null, errors);

  const f: MergeRequestFilters = {
    ...negatable(raw, null, errors),
    scope: q.scope ? (q.scope.replace(/-/g, '_') as MergeRequestScopeParam) : undefined,
    state: q.state,
    iids: q.iids,
    mergeUserId: q.merge_user_id,
    mergeUserUsername: q.merge_user_username,
    approvedByIds: arrayNoneAny(raw.approved_by_ids, 'approved_by_ids', errors),
    approverIds: arrayNoneAny(raw.approver_ids, 'approver_ids', errors),
    approved: q.approved,
    createdAfter: dateTime(q.created_after, 'created_after', errors),
    createdBefore: dateTime(q.created_before, 'created_before', errors),
    updatedAfter: dateTime(q.updated_after, 'updated_after', errors),
    updatedBefore: dateTime(q.updated_before, 'updated_before', errors),
    deployedAfter: dateTime(q.deployed_after, 'deployed_after', errors),
    deployedBefore: dateTime(q.deployed_before, 'deployed_before', errors),
    environment: q.environment,
    search: q.search,
    in: q.in,
    sourceBranch: q.source_branch || undefined,
    targetBranch: q.target_branch || undefined,
    sourceProjectId: q.source_project_id,
    wip: q.wip,
    not: not ? negatable(not, 'not', errors) : undefined,
    orderBy: q.order_by,
    sort: q.sort,
  };
  if (Array.isArray(f.approvedByIds) && f.approvedByIds.length > MAX_APPROVED_BY) f.approvedByIds = f.approvedByIds.slice(0, MAX_APPROVED_BY);
  if (errors.length) throw Errors.param(errors.join(', '));
  return f;
}
