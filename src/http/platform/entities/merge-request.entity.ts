// Wire shapes of merge requests: GitLab's Entities::MergeRequestBasic (lists), Entities::MergeRequest
// (one merge request) and Entities::MergeRequestSimple (`view=simple`). Pure mappings from the views
// that MergeRequestsService loads for a whole page (one query per relation); the schemas are the
// allow-list of what leaves.
import { Type, type Static } from 'typebox';
import type { MilestoneRow } from '../../../db/schema.ts';
import { detailedMergeStatus, hasConflicts, publicMergeStatus } from '../../../domain/merge-requests/merge-status.ts';
import type { HeadPipelineView, MergeRequestDetail, MergeRequestSimpleView, MergeRequestView } from '../../../domain/merge-requests/present.ts';
import { humanTime, mergeParamsOf, mergeRequestWebUrl, type ReferenceFrom, referenceTo, taskCompletionStatus } from '../../../domain/merge-requests/rules.ts';
import type { UserBasicRow } from '../../../domain/core/user-columns.ts';
import { NullableBoolean, NullableInteger, NullableString } from '../schemas/common.ts';
import { LabelBasicSchema, toLabelDetails } from './label.entity.ts';
import { MilestoneSchema, toMilestoneBasic, type MilestoneEntity } from './milestone.entity.ts';
import { PipelineBasicSchema, PipelineSchema, toPipeline, toPipelineBasic, type PipelineBasicEntity, type PipelineEntity } from './pipeline.entity.ts';
import { toUserRef, UserRefSchema, type UserRef, type UserViewContext } from './user.entity.ts';

/** Gitlab::Utils.to_boolean as the entity shows it (an unset flag shows false). */
const flag = (v: unknown): boolean => v === true || v === 1 || v === '1' || v === 'true';

// ---- schemas ------------------------------------------------------------------------------------

const NullableUserRef = Type.Unsafe<UserRef | null>({ type: ['object', 'null'], properties: UserRefSchema.properties, required: UserRefSchema.required });

const LabelDetailsSchema = LabelBasicSchema;

/** Entities::Milestone as the merge request shows it. */
export const MilestoneRefSchema = MilestoneSchema;
export type MilestoneRef = MilestoneEntity;

const ReferencesSchema = Type.Object({ short: Type.String(), relative: Type.String(), full: Type.String() });
const TimeStatsSchema = Type.Object({
  time_estimate: Type.Integer(),
  total_time_spent: Type.Integer(),
  human_time_estimate: NullableString,
  human_total_time_spent: NullableString,
});
export { TimeStatsSchema };

const basicProps = {
  id: Type.Integer(),
  iid: Type.Integer(),
  project_id: Type.Integer(),
  title: Type.String(),
  description: NullableString,
  state: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
  merged_by: NullableUserRef,
  merge_user: NullableUserRef,
  merged_at: NullableString,
  closed_by: NullableUserRef,
  closed_at: NullableString,
  title_html: Type.Optional(Type.String()),
  description_html: Type.Optional(Type.String()),
  target_branch: Type.String(),
  source_branch: Type.String(),
  user_notes_count: Type.Integer(),
  upvotes: Type.Integer(),
  downvotes: Type.Integer(),
  author: NullableUserRef,
  assignees: Type.Array(UserRefSchema),
  assignee: NullableUserRef,
  reviewers: Type.Array(UserRefSchema),
  source_project_id: Type.Integer(),
  target_project_id: Type.Integer(),
  // names, or label objects with with_labels_details (an untyped item keeps both)
  labels: Type.Array(Type.Unsafe<string | Static<typeof LabelDetailsSchema>>({})),
  draft: Type.Boolean(),
  imported: Type.Boolean(),
  imported_from: Type.String(),
  work_in_progress: Type.Boolean(),
  milestone: Type.Unsafe<MilestoneRef | null>({ type: ['object', 'null'], properties: MilestoneRefSchema.properties, required: MilestoneRefSchema.required }),
  merge_when_pipeline_succeeds: Type.Boolean(),
  merge_status: Type.String(),
  detailed_merge_status: Type.String(),
  merge_after: NullableString,
  sha: NullableString,
  merge_commit_sha: NullableString,
  squash_commit_sha: NullableString,
  discussion_locked: NullableBoolean,
  should_remove_source_branch: Type.Boolean(),
  force_remove_source_branch: Type.Boolean(),
  prepared_at: NullableString,
  allow_collaboration: Type.Boolean(),
  allow_maintainer_to_push: Type.Boolean(),
  reference: Type.String(),
  references: ReferencesSchema,
  web_url: Type.String(),
  time_stats: TimeStatsSchema,
  squash: Type.Boolean(),
  squash_on_merge: Type.Boolean(),
  task_completion_status: Type.Object({ count: Type.Integer(), completed_count: Type.Integer() }),
  has_conflicts: Type.Boolean(),
  blocking_discussions_resolved: Type.Boolean(),
  approvals_before_merge: NullableInteger,
};

export const MergeRequestBasicSchema = Type.Object(basicProps);

const DiffRefsSchema = Type.Object({ base_sha: NullableString, head_sha: NullableString, start_sha: NullableString });

const detailProps = {
  subscribed: Type.Boolean(),
  changes_count: NullableString,
  latest_build_started_at: NullableString,
  latest_build_finished_at: NullableString,
  first_deployed_to_production_at: NullableString,
  pipeline: Type.Unsafe<PipelineBasicEntity | null>({ ...PipelineBasicSchema, type: ['object', 'null'] }),
  head_pipeline: Type.Unsafe<PipelineEntity | null>({ ...PipelineSchema, type: ['object', 'null'] }),
  diff_refs: Type.Unsafe<Static<typeof DiffRefsSchema> | null>({
    type: ['object', 'null'],
    properties: DiffRefsSchema.properties,
    required: DiffRefsSchema.required,
  }),
  merge_error: NullableString,
  rebase_in_progress: Type.Optional(Type.Boolean()),
  diverged_commits_count: Type.Optional(Type.Integer()),
  first_contribution: Type.Optional(Type.Boolean()),
  user: Type.Object({ can_merge: Type.Boolean() }),
};

export const MergeRequestSchema = Type.Object({ ...basicProps, ...detailProps });

/** Entities::MergeRequest presented with include_subscribed: false (an issue's related merge requests). */
const { subscribed: _subscribed, ...unsubscribedDetailProps } = detailProps;
export const MergeRequestUnsubscribedSchema = Type.Object({ ...basicProps, ...unsubscribedDetailProps });

export const MergeRequestSimpleSchema = Type.Object({
  id: Type.Integer(),
  iid: Type.Integer(),
  project_id: Type.Integer(),
  title: Type.String(),
  description: NullableString,
  state: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
  web_url: Type.String(),
});

export type MergeRequestBasicEntity = Static<typeof MergeRequestBasicSchema>;
export type MergeRequestEntity = Static<typeof MergeRequestSchema>;
export type MergeRequestUnsubscribedEntity = Static<typeof MergeRequestUnsubscribedSchema>;
export type MergeRequestSimpleEntity = Static<typeof MergeRequestSimpleSchema>;

// ---- views and mapping --------------------------------------------------------------------------

export interface MergeRequestEntityContext {
  externalUrl: string;
  users: UserViewContext;
  from: ReferenceFrom;
  withLabelsDetails: boolean;
  renderHtml?: boolean;
}

/** Entities::Milestone of a project or group milestone with its web URL (the milestones module's mapping). */
export function toMilestoneRef(m: MilestoneRow, webUrl: string): MilestoneRef {
  return toMilestoneBasic({ ...m, web_url: webUrl });
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** A plain paragraph rendering (no Markdown renderer in the platform yet). */
export function renderParagraph(text: string | null): string {
  if (!text) return '';
  return `<p data-sourcepos="1:1-1:${text.length}" dir="auto">${escapeHtml(text)}</p>`;
}

export function toMergeRequestSimple(v: MergeRequestSimpleView, externalUrl: string): MergeRequestSimpleEntity {
  const r = v.row;
  return {
    id: r.id,
    iid: r.iid,
    project_id: r.project_id,
    title: r.title,
    description: r.description,
    state: r.state,
    created_at: r.created_at,
    updated_at: r.updated_at,
    web_url: mergeRequestWebUrl(externalUrl, v.project.fullPath, r.iid),
  };
}

export function toMergeRequestBasic(v: MergeRequestView, ctx: MergeRequestEntityContext): MergeRequestBasicEntity {
  const r = v.row;
  const user = (u: UserBasicRow | null) => (u ? toUserRef(u, ctx.users) : null);
  const params = mergeParamsOf(r);
  const draft = r.draft === 1;
  const merged = r.state === 'merged';
  const mergeUser = user(v.mergeUser);
  const assignees = v.assignees.map((u) => toUserRef(u, ctx.users));
  const relative = referenceTo(r.iid, v.project, ctx.from);
  const projectOnly: ReferenceFrom = ctx.from && 'project' in ctx.from ? ctx.from : null;
  const squashOnMerge = v.project.squashOption === 'always' ? true : v.project.squashOption === 'never' ? false : r.squash === 1;
  return {
    id: r.id,
    iid: r.iid,
    project_id: r.project_id,
    title: r.title,
    description: r.description,
    state: r.state,
    created_at: r.created_at,
    updated_at: r.updated_at,
    merged_by: merged ? mergeUser : null,
    merge_user: mergeUser,
    merged_at: r.merged_at,
    closed_by: user(v.closedBy),
    closed_at: r.closed_at,
    ...(ctx.renderHtml ? { title_html: escapeHtml(r.title), description_html: renderParagraph(r.description) } : {}),
    target_branch: r.target_branch,
    source_branch: r.source_branch,
    user_notes_count: r.user_notes_count,
    upvotes: r.upvotes,
    downvotes: r.downvotes,
    author: user(v.author),
    assignees,
    assignee: assignees[0] ?? null,
    reviewers: v.reviewers.map((u) => toUserRef(u, ctx.users)),
    source_project_id: r.source_project_id,
    target_project_id: r.project_id,
    labels: ctx.withLabelsDetails ? v.labels.map(toLabelDetails) : v.labels.map((l) => l.title),
    draft,
    imported: r.imported_from !== 'none',
    imported_from: r.imported_from,
    work_in_progress: draft,
    milestone: v.milestone ? toMilestoneBasic(v.milestone) : null,
    merge_when_pipeline_succeeds: r.merge_when_pipeline_succeeds === 1,
    merge_status: publicMergeStatus(r),
    detailed_merge_status: detailedMergeStatus(r, v.facts),
    merge_after: null,
    sha: r.sha,
    merge_commit_sha: r.merge_commit_sha,
    squash_commit_sha: r.squash_commit_sha,
    discussion_locked: r.discussion_locked === null ? null : r.discussion_locked === 1,
    should_remove_source_branch: flag(params.should_remove_source_branch),
    force_remove_source_branch: flag(params.force_remove_source_branch),
    prepared_at: r.prepared_at,
    allow_collaboration: r.allow_collaboration === 1,
    allow_maintainer_to_push: r.allow_collaboration === 1,
    reference: referenceTo(r.iid, v.project, projectOnly),
    references: { short: `!${r.iid}`, relative, full: referenceTo(r.iid, v.project, null, true) },
    web_url: mergeRequestWebUrl(ctx.externalUrl, v.project.fullPath, r.iid),
    time_stats: {
      time_estimate: r.time_estimate,
      total_time_spent: r.total_time_spent,
      human_time_estimate: humanTime(r.time_estimate),
      human_total_time_spent: humanTime(r.total_time_spent),
    },
    squash: r.squash === 1,
    squash_on_merge: squashOnMerge,
    task_completion_status: taskCompletionStatus(r.description),
    has_conflicts: hasConflicts(r.merge_status),
    blocking_discussions_resolved: !v.project.onlyIfDiscussionsResolved || v.facts.unresolvedDiscussions === 0,
    approvals_before_merge: null,
  };
}

/** head_pipeline (Entities::Ci::Pipeline) and pipeline (PipelineBasic), with URLs of the pipeline's project. */
function headPipelineEntities(h: HeadPipelineView, users: UserViewContext): { detail: PipelineEntity; basic: PipelineBasicEntity } {
  return { detail: toPipeline(h.pipeline, h.projectWebUrl, h.user, users), basic: toPipelineBasic(h.pipeline, h.projectWebUrl) };
}

export function toMergeRequest(v: MergeRequestView, ctx: MergeRequestEntityContext, d: MergeRequestDetail): MergeRequestEntity {
  const headPipeline = d.headPipeline ? headPipelineEntities(d.headPipeline, ctx.users) : null;
  return {
    ...toMergeRequestBasic(v, ctx),
    subscribed: d.subscribed,
    changes_count: d.changesCount,
    latest_build_started_at: null,
    latest_build_finished_at: null,
    first_deployed_to_production_at: null,
    pipeline: headPipeline?.basic ?? null,
    head_pipeline: headPipeline?.detail ?? null,
    diff_refs: d.diffRefs,
    merge_error: v.row.merge_error,
    ...(d.rebaseInProgress !== undefined ? { rebase_in_progress: d.rebaseInProgress } : {}),
    ...(d.divergedCommitsCount !== undefined ? { diverged_commits_count: d.divergedCommitsCount } : {}),
    user: { can_merge: d.canMerge },
  };
}
