// The merge_request system-hook payload (GitLab's Gitlab::HookData::IssuableBuilder with
// MergeRequestBuilder): object_kind, event_type, user, project, object_attributes (with the action),
// labels, changes {key: {previous, current}} limited to the builder's safe keys, the deprecated
// repository, and assignees/reviewers when there are any. Built inside the writer's transaction, so it
// shows the merge request as that transaction leaves it.
import type { Kysely } from 'kysely';
import type { Database, LabelRow, MergeRequestRow, NamespaceRow, ProjectRow, UserRow } from '../../db/schema.ts';
import type { RepositoryStore } from '../../git/storage.ts';
import { commitTitle, isoTime } from '../../git/objects.ts';
import { projectHookAttrs, projectWithNamespace, userHookAttrs } from '../core/hook-attrs.ts';
import { recordSystemEvent } from '../core/system-events.ts';
import type { NoteableHookAttrs } from '../notes/noteable.ts';
import { settingsOf } from '../core/project-settings.ts';
import { headPipeline } from './head-pipeline.ts';
import { detailedMergeStatus, NO_FACTS, publicMergeStatus } from './merge-status.ts';
import { humanTime, mergeParamsOf, mergeRequestWebUrl } from './rules.ts';

export type MergeRequestAction = 'open' | 'update' | 'close' | 'reopen' | 'merge' | 'approved' | 'unapproved' | 'approval' | 'unapproval';

/** A change of one attribute as the hook shows it. */
export type HookChanges = Record<string, { previous: unknown; current: unknown }>;

/** MergeRequestBuilder::SAFE_HOOK_ATTRIBUTES + SAFE_HOOK_RELATIONS: the keys `changes` may show. */
export const SAFE_CHANGE_KEYS = new Set([
  'assignee_id',
  'author_id',
  'created_at',
  'description',
  'draft',
  'head_pipeline_id',
  'id',
  'iid',
  'last_edited_at',
  'last_edited_by_id',
  'merge_commit_sha',
  'merge_error',
  'merge_params',
  'merge_status',
  'merge_user_id',
  'merge_when_pipeline_succeeds',
  'milestone_id',
  'source_branch',
  'source_project_id',
  'state_id',
  'target_branch',
  'target_project_id',
  'time_estimate',
  'title',
  'updated_at',
  'updated_by_id',
  'prepared_at',
  'assignees',
  'labels',
  'total_time_spent',
  'time_change',
  'reviewers',
]);

/** MergeRequest.available_states */
export const STATE_IDS: Record<string, number> = { opened: 1, closed: 2, merged: 3, locked: 4 };

/** Label#hook_attrs */
export function labelHookAttrs(l: LabelRow) {
  return {
    id: l.id,
    title: l.title,
    color: l.color,
    project_id: l.project_id,
    created_at: l.created_at,
    updated_at: l.updated_at,
    template: false,
    description: l.description,
    type: l.project_id !== null ? 'ProjectLabel' : 'GroupLabel',
    group_id: l.group_id,
  };
}

export interface HookDeps {
  repos: RepositoryStore;
  externalUrl: string;
}

/** A merge request's hook attributes as a note hook embeds them (`merge_request`). */
export function mergeRequestNoteableAttrs(deps: HookDeps): NoteableHookAttrs {
  return async (trx, user, id) => {
    const mr = await trx.selectFrom('merge_requests').selectAll().where('id', '=', id).executeTakeFirst();
    return mr ? (await mergeRequestHookPayload(trx, deps, user, mr, 'update')).object_attributes : null;
  };
}

/** The labels of a merge request (hook attributes), sorted by title. */
export async function mergeRequestLabels(trx: Kysely<Database>, mergeRequestId: number): Promise<LabelRow[]> {
  return trx
    .selectFrom('merge_request_labels')
    .innerJoin('labels', 'labels.id', 'merge_request_labels.label_id')
    .selectAll('labels')
    .where('merge_request_labels.merge_request_id', '=', mergeRequestId)
    .orderBy('labels.title')
    .execute();
}

async function linkedUsers(trx: Kysely<Database>, table: 'merge_request_assignees' | 'merge_request_reviewers', mergeRequestId: number) {
  return trx
    .selectFrom(table)
    .innerJoin('users', 'users.id', `${table}.user_id`)
    .select(['users.id', 'users.name', 'users.username', 'users.avatar_url', 'users.public_email'])
    .where(`${table}.merge_request_id`, '=', mergeRequestId)
    .orderBy(`${table}.created_at`)
    .orderBy('users.id')
    .execute();
}

/** Commit#hook_attrs of the source branch head, or null. */
async function lastCommit(deps: HookDeps, source: { project: ProjectRow; namespace: NamespaceRow } | null, webUrl: string, sha: string | null) {
  if (!sha || !source) return null;
  const repo = deps.repos.repository(source.project);
  if (!repo.exists()) return null;
  const commit = await repo.commit(sha);
  if (!commit) return null;
  return {
    id: commit.sha,
    message: commit.message,
    title: commitTitle(commit.message),
    // Time#xmlschema: seconds, no fraction
    timestamp: isoTime(commit.committer.time, commit.committer.tz).replace(/\.\d+(?=[+-]|Z$)/, ''),
    url: `${webUrl}/-/commit/${commit.sha}`,
    author: { name: commit.author.name, email: commit.author.email },
  };
}

/** The payload of one merge_request event (built in `trx`, after the write). */
export async function mergeRequestHookPayload(
  trx: Kysely<Database>,
  deps: HookDeps,
  user: UserRow,
  mr: MergeRequestRow,
  action: MergeRequestAction,
  changes: HookChanges = {},
  extra: Record<string, unknown> = {},
) {
  const target = await projectWithNamespace(trx, mr.project_id);
  if (!target) throw new Error(`merge request ${mr.id} has no project`);
  const source = mr.source_project_id === mr.project_id ? target : await projectWithNamespace(trx, mr.source_project_id);
  const targetAttrs = projectHookAttrs(deps.externalUrl, target.project, target.namespace);
  const sourceAttrs = source ? projectHookAttrs(deps.externalUrl, source.project, source.namespace) : null;
  const [labels, assignees, reviewers, unresolved] = await Promise.all([
    mergeRequestLabels(trx, mr.id),
    linkedUsers(trx, 'merge_request_assignees', mr.id),
    linkedUsers(trx, 'merge_request_reviewers', mr.id),
    trx
      .selectFrom('notes')
      .select((eb) => eb.fn.count<number | string>('discussion_id').distinct().as('n'))
      .where('noteable_type', '=', 'MergeRequest')
      .where('noteable_id', '=', mr.id)
      .where('resolvable', '=', 1)
      .where('resolved_at', 'is', null)
      .executeTakeFirst(),
  ]);
  const unresolvedCount = Number(unresolved?.n ?? 0);
  const settings = settingsOf(target.project) as Record<string, unknown>;
  const onlyResolved = settings.only_allow_merge_if_all_discussions_are_resolved === true;
  const approvals = await trx
    .selectFrom('approvals')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('merge_request_id', '=', mr.id)
    .executeTakeFirst();
  const pipeline = await headPipeline(trx, mr);
  const labelAttrs = labels.map(labelHookAttrs);
  const draft = mr.draft === 1;
  const params = mergeParamsOf(mr);
  const objectAttributes = {
    assignee_id: assignees[0]?.id ?? null,
    author_id: mr.author_id,
    created_at: mr.created_at,
    description: mr.description,
    draft,
    head_pipeline_id: pipeline?.id ?? null,
    id: mr.id,
    iid: mr.iid,
    last_edited_at: null,
    last_edited_by_id: null,
    merge_commit_sha: mr.merge_commit_sha,
    merge_error: mr.merge_error,
    merge_params: params,
    merge_status: publicMergeStatus(mr),
    merge_user_id: mr.merge_user_id,
    merge_when_pipeline_succeeds: mr.merge_when_pipeline_succeeds === 1,
    milestone_id: mr.milestone_id,
    source_branch: mr.source_branch,
    source_project_id: mr.source_project_id,
    state_id: STATE_IDS[mr.state] ?? 1,
    target_branch: mr.target_branch,
    target_project_id: mr.project_id,
    time_estimate: mr.time_estimate,
    title: mr.title,
    updated_at: mr.updated_at,
    updated_by_id: null,
    prepared_at: mr.prepared_at,
    url: mergeRequestWebUrl(deps.externalUrl, targetAttrs.path_with_namespace, mr.iid),
    source: sourceAttrs,
    target: targetAttrs,
    last_commit: await lastCommit(deps, source, sourceAttrs?.web_url ?? targetAttrs.web_url, mr.sha),
    work_in_progress: draft,
    total_time_spent: mr.total_time_spent,
    time_change: 0,
    human_total_time_spent: humanTime(mr.total_time_spent),
    human_time_change: null,
    human_time_estimate: humanTime(mr.time_estimate),
    assignee_ids: assignees.map((a) => a.id),
    reviewer_ids: reviewers.map((r) => r.id),
    labels: labelAttrs,
    state: mr.state,
    blocking_discussions_resolved: !onlyResolved || unresolvedCount === 0,
    first_contribution: false,
    detailed_merge_status: detailedMergeStatus(mr, {
      ...NO_FACTS,
      unresolvedDiscussions: unresolvedCount,
      discussionsMustBeResolved: onlyResolved,
      approvalsRequired: Number(settings.approvals_before_merge ?? 0) || 0,
      approvalsGiven: Number(approvals?.n ?? 0),
      fastForwardOnly: settings.merge_method === 'ff' || settings.merge_method === 'rebase_merge',
      pipelineMustSucceed: settings.only_allow_merge_if_pipeline_succeeds === true,
      skippedPipelineAllowed: settings.allow_merge_on_skipped_pipeline === true,
      headPipelineStatus: pipeline?.status ?? null,
    }),
    action,
    ...extra,
  };
  const safeChanges: HookChanges = {};
  for (const [k, v] of Object.entries(changes)) if (SAFE_CHANGE_KEYS.has(k)) safeChanges[k] = v;
  return {
    object_kind: 'merge_request' as const,
    event_type: 'merge_request',
    user: userHookAttrs(user),
    project: targetAttrs,
    object_attributes: objectAttributes,
    labels: labelAttrs,
    changes: safeChanges,
    repository: { name: targetAttrs.name, url: targetAttrs.url, description: targetAttrs.description, homepage: targetAttrs.homepage },
    ...(assignees.length ? { assignees: assignees.map(userHookAttrs) } : {}),
    ...(reviewers.length ? { reviewers: reviewers.map(userHookAttrs) } : {}),
  };
}

/** Writes the merge_request event to the outbox in the writer's transaction. */
export async function recordMergeRequestEvent(
  trx: Kysely<Database>,
  deps: HookDeps,
  user: UserRow,
  mr: MergeRequestRow,
  action: MergeRequestAction,
  changes: HookChanges = {},
  extra: Record<string, unknown> = {},
): Promise<void> {
  await recordSystemEvent(trx, await mergeRequestHookPayload(trx, deps, user, mr, action, changes, extra));
}
