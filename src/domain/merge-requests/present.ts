// The views of merge requests that the API entities and the web pages are built from: what a page of
// merge requests shows besides its rows, loaded with one query per relation (never one per row):
// projects and namespaces (references, URLs), users (author, assignees, reviewers, merge user, closed
// by), labels, milestones, unresolved discussions, approvals and head pipelines (merge status facts).
import type { Kysely } from 'kysely';
import type { CiPipelineRow, Database, LabelRow, MergeRequestRow, MilestoneRow, NamespaceRow, ProjectRow } from '../../db/schema.ts';
import type { MilestoneWithUrl } from '../milestones/milestones.service.ts';
import { basicByIds, type UserBasicRow } from '../core/user-columns.ts';
import { settingsOf } from '../core/project-settings.ts';
import { headPipelines } from './head-pipeline.ts';
import { type MergeFacts, NO_FACTS } from './merge-status.ts';

/** The target project as references and URLs need it. */
export interface ProjectRef {
  id: number;
  namespace_id: number;
  path: string;
  /** "group/project" */
  fullPath: string;
  /** projects.settings: squash_option, only_allow_merge_if_all_discussions_are_resolved */
  squashOption: string;
  onlyIfDiscussionsResolved: boolean;
  /** approvals_before_merge */
  approvalsRequired: number;
  /** merge_method ff or rebase_merge */
  fastForwardOnly: boolean;
  /** only_allow_merge_if_pipeline_succeeds, allow_merge_on_skipped_pipeline */
  pipelineMustSucceed: boolean;
  skippedPipelineAllowed: boolean;
}

/** One merge request with everything its entity shows, loaded for a page at once. */
export interface MergeRequestView {
  row: MergeRequestRow;
  project: ProjectRef;
  author: UserBasicRow | null;
  assignees: UserBasicRow[];
  reviewers: UserBasicRow[];
  mergeUser: UserBasicRow | null;
  closedBy: UserBasicRow | null;
  /** sorted by title */
  labels: LabelRow[];
  milestone: MilestoneWithUrl | null;
  /** the head pipeline (head-pipeline.ts), whoever may see it */
  headPipeline: CiPipelineRow | null;
  facts: MergeFacts;
}

/** A merge request of view=simple: the row and what its web_url needs. */
export interface MergeRequestSimpleView {
  row: MergeRequestRow;
  project: Pick<ProjectRef, 'fullPath'>;
}

/** The head pipeline as a viewer with read_pipeline sees it on one merge request. */
export interface HeadPipelineView {
  pipeline: CiPipelineRow;
  /** the web URL of the pipeline's (source) project */
  projectWebUrl: string;
  user: UserBasicRow | undefined;
}

/** What one merge request shows besides its view, computed from git and the viewer. */
export interface MergeRequestDetail {
  subscribed: boolean;
  changesCount: string | null;
  diffRefs: { base_sha: string | null; head_sha: string | null; start_sha: string | null } | null;
  canMerge: boolean;
  rebaseInProgress?: boolean;
  divergedCommitsCount?: number;
  headPipeline: HeadPipelineView | null;
}

const unique = <T>(xs: Iterable<T>): T[] => [...new Set(xs)];

export function projectRef(project: ProjectRow, namespace: Pick<NamespaceRow, 'full_path'>): ProjectRef {
  const s = settingsOf(project) as Record<string, unknown>;
  return {
    id: project.id,
    namespace_id: project.namespace_id,
    path: project.path,
    fullPath: `${namespace.full_path}/${project.path}`,
    squashOption: String(s.squash_option ?? 'default_off'),
    onlyIfDiscussionsResolved: s.only_allow_merge_if_all_discussions_are_resolved === true,
    approvalsRequired: Number(s.approvals_before_merge ?? 0) || 0,
    fastForwardOnly: s.merge_method === 'ff' || s.merge_method === 'rebase_merge',
    pipelineMustSucceed: s.only_allow_merge_if_pipeline_succeeds === true,
    skippedPipelineAllowed: s.allow_merge_on_skipped_pipeline === true,
  };
}

/** Web URL of a project or group milestone (Gitlab::UrlBuilder). */
export async function milestoneRefs(
  db: Kysely<Database>,
  externalUrl: string,
  ids: number[],
  projects: Map<number, ProjectRef>,
): Promise<Map<number, MilestoneWithUrl>> {
  if (!ids.length) return new Map();
  // one statement: each milestone with the path of its group, or of its project where `projects` lacks it
  const rows = await db
    .selectFrom('milestones')
    .leftJoin('namespaces as g', 'g.id', 'milestones.group_id')
    .leftJoin('projects as p', 'p.id', 'milestones.project_id')
    .leftJoin('namespaces as pns', 'pns.id', 'p.namespace_id')
    .selectAll('milestones')
    .select(['g.full_path as group_path', 'p.path as project_path', 'pns.full_path as project_ns_path'])
    .where('milestones.id', 'in', ids)
    .execute();
  const out = new Map<number, MilestoneWithUrl>();
  for (const { group_path, project_path, project_ns_path, ...m } of rows) {
    const url =
      m.project_id !== null
        ? `${externalUrl}/${projects.get(m.project_id)?.fullPath ?? `${project_ns_path ?? ''}/${project_path ?? ''}`}/-/milestones/${m.iid}`
        : `${externalUrl}/groups/${group_path ?? ''}/-/milestones/${m.iid}`;
    out.set(m.id, { ...(m as MilestoneRow), web_url: url });
  }
  return out;
}

/** The views of a page of merge requests, in the order of `rows`. `known` projects save their lookup. */
export async function loadViews(
  db: Kysely<Database>,
  externalUrl: string,
  rows: MergeRequestRow[],
  known: { project: ProjectRow; namespace: NamespaceRow }[] = [],
): Promise<MergeRequestView[]> {
  if (!rows.length) return [];
  const ids = rows.map((r) => r.id);
  const projects = new Map<number, ProjectRef>();
  for (const k of known) projects.set(k.project.id, projectRef(k.project, k.namespace));
  const projectIds = unique(rows.map((r) => r.project_id)).filter((id) => !projects.has(id));

  const [projectRows, assigneeLinks, reviewerLinks, labelLinks, unresolved, approvals, pipelines] = await Promise.all([
    projectIds.length
      ? db
          .selectFrom('projects')
          .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
          .selectAll('projects')
          .select('namespaces.full_path as ns_full_path')
          .where('projects.id', 'in', projectIds)
          .execute()
      : Promise.resolve([]),
    db
      .selectFrom('merge_request_assignees')
      .select(['merge_request_id', 'user_id'])
      .where('merge_request_id', 'in', ids)
      .orderBy('created_at')
      .orderBy('user_id')
      .execute(),
    db
      .selectFrom('merge_request_reviewers')
      .select(['merge_request_id', 'user_id'])
      .where('merge_request_id', 'in', ids)
      .orderBy('created_at')
      .orderBy('user_id')
      .execute(),
    db
      .selectFrom('merge_request_labels')
      .innerJoin('labels', 'labels.id', 'merge_request_labels.label_id')
      .selectAll('labels')
      .select('merge_request_labels.merge_request_id')
      .where('merge_request_labels.merge_request_id', 'in', ids)
      .execute(),
    db
      .selectFrom('notes')
      .select(['noteable_id'])
      .select((eb) => eb.fn.count<number | string>('discussion_id').distinct().as('n'))
      .where('noteable_type', '=', 'MergeRequest')
      .where('noteable_id', 'in', ids)
      .where('resolvable', '=', 1)
      .where('resolved_at', 'is', null)
      .groupBy('noteable_id')
      .execute(),
    db
      .selectFrom('approvals')
      .select('merge_request_id')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('merge_request_id', 'in', ids)
      .groupBy('merge_request_id')
      .execute(),
    headPipelines(db, rows),
  ]);
  for (const p of projectRows) projects.set(p.id, projectRef(p, { full_path: p.ns_full_path }));

  const userIds: (number | null)[] = [];
  for (const r of rows) userIds.push(r.author_id, r.merge_user_id, r.closed_by_id);
  for (const l of assigneeLinks) userIds.push(l.user_id);
  for (const l of reviewerLinks) userIds.push(l.user_id);
  const milestoneIds = unique(rows.map((r) => r.milestone_id).filter((m): m is number => m !== null));
  const [users, milestones] = await Promise.all([basicByIds(db, userIds), milestoneRefs(db, externalUrl, milestoneIds, projects)]);

  const group = <L extends { merge_request_id: number }>(links: L[]) => {
    const m = new Map<number, L[]>();
    for (const l of links) {
      const list = m.get(l.merge_request_id);
      if (list) list.push(l);
      else m.set(l.merge_request_id, [l]);
    }
    return m;
  };
  const assignees = group(assigneeLinks);
  const reviewers = group(reviewerLinks);
  const labels = group(labelLinks);
  const unresolvedBy = new Map(unresolved.map((u) => [u.noteable_id, Number(u.n)]));
  const approvalsBy = new Map(approvals.map((a) => [a.merge_request_id, Number(a.n)]));
  const userOf = (id: number | null) => (id === null ? null : (users.get(id) ?? null));
  const usersOf = (links: { user_id: number }[] | undefined) => (links ?? []).map((l) => users.get(l.user_id)).filter((u): u is UserBasicRow => !!u);

  return rows.map((row) => {
    const project = projects.get(row.project_id)!;
    const labelRows: LabelRow[] = (labels.get(row.id) ?? []).map(({ merge_request_id: _, ...l }) => l);
    labelRows.sort((a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : 0));
    return {
      row,
      project,
      author: userOf(row.author_id),
      assignees: usersOf(assignees.get(row.id)),
      reviewers: usersOf(reviewers.get(row.id)),
      mergeUser: userOf(row.merge_user_id),
      closedBy: userOf(row.closed_by_id),
      labels: labelRows,
      milestone: row.milestone_id === null ? null : (milestones.get(row.milestone_id) ?? null),
      headPipeline: pipelines.get(row.id) ?? null,
      facts: {
        ...NO_FACTS,
        unresolvedDiscussions: unresolvedBy.get(row.id) ?? 0,
        approvalsGiven: approvalsBy.get(row.id) ?? 0,
        approvalsRequired: project.approvalsRequired,
        discussionsMustBeResolved: project.onlyIfDiscussionsResolved,
        fastForwardOnly: project.fastForwardOnly,
        pipelineMustSucceed: project.pipelineMustSucceed,
        skippedPipelineAllowed: project.skippedPipelineAllowed,
        headPipelineStatus: pipelines.get(row.id)?.status ?? null,
      },
    };
  });
}

/** The views of view=simple (the rows and the paths their web_url needs), in the order of `rows`. */
export async function loadSimpleViews(db: Kysely<Database>, rows: MergeRequestRow[]): Promise<MergeRequestSimpleView[]> {
  const ids = unique(rows.map((r) => r.project_id));
  const projects = ids.length
    ? await db
        .selectFrom('projects')
        .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
        .select(['projects.id', 'projects.path', 'namespaces.full_path'])
        .where('projects.id', 'in', ids)
        .execute()
    : [];
  const paths = new Map(projects.map((p) => [p.id, `${p.full_path}/${p.path}`]));
  return rows.map((row) => ({ row, project: { fullPath: paths.get(row.project_id) ?? '' } }));
}
