// The views of issues that the API entities and the web pages are built from: what a page of issues shows
// besides its rows, loaded with one query per relation (never one per row): projects and namespaces
// (references, URLs), users (author, assignees, closed by), labels, milestones and the count of merge
// requests that close each issue (with their projects, for the reader's count) and of the open issues each blocks.
import { sql, type Kysely } from 'kysely';
import type { Database, IssueRow, LabelRow, NamespaceRow, ProjectRow } from '../../db/schema.ts';
import { BASIC_COLUMNS, type UserBasicRow } from '../core/user-columns.ts';
import { milestoneRefs, type ProjectRef, projectRef } from '../merge-requests/present.ts';
import type { MilestoneWithUrl } from '../milestones/milestones.service.ts';

/** One issue with everything its entity shows, loaded for a page at once. */
export interface IssueView {
  row: IssueRow;
  project: ProjectRef;
  author: UserBasicRow | null;
  assignees: UserBasicRow[];
  closedBy: UserBasicRow | null;
  /** sorted by title */
  labels: LabelRow[];
  milestone: MilestoneWithUrl | null;
  /** merge_requests_count: the merge requests closing the issue that the reader may read */
  mergeRequestsCount: number;
  /** the open issues this one blocks (IssueLink.blocking_issues_for_collection) */
  blockingIssuesCount: number;
}

const unique = <T>(xs: Iterable<T>): T[] => [...new Set(xs)];

/**
 * The views of a page of issues, in the order of `rows`. `known` projects save their lookup; `readsMergeRequestsOf`
 * tells which of the projects of the merge requests closing them the reader may read the merge requests of.
 */
export async function loadIssueViews(
  db: Kysely<Database>,
  externalUrl: string,
  rows: IssueRow[],
  known: { project: ProjectRow; namespace: NamespaceRow }[],
  readsMergeRequestsOf: (projectIds: number[]) => Promise<Set<number>>,
): Promise<IssueView[]> {
  if (!rows.length) return [];
  const ids = rows.map((r) => r.id);
  const projects = new Map<number, ProjectRef>();
  for (const k of known) projects.set(k.project.id, projectRef(k.project, k.namespace));
  const projectIds = unique(rows.map((r) => r.project_id)).filter((id) => !projects.has(id));
  const milestoneIds = unique(rows.map((r) => r.milestone_id).filter((m): m is number => m !== null));
  // one round of statements at once: the authors' and assignees' users in one (the assignees by a subquery)
  const userIds = new Set<number>();
  for (const r of rows) for (const id of [r.author_id, r.closed_by_id]) if (id !== null) userIds.add(id);
  // the assignees' ids and the others' as one set (an OR of the two made PostgreSQL read every user)
  let wantedUsers = db.selectFrom('issue_assignees').select('issue_assignees.user_id as id').where('issue_assignees.issue_id', 'in', ids);
  if (userIds.size)
    wantedUsers = wantedUsers.unionAll(
      db
        .selectFrom('users as u')
        .select('u.id')
        .where('u.id', 'in', [...userIds]),
    );
  const [projectRows, assigneeLinks, labelLinks, userRows, milestones, counted] = await Promise.all([
    projectIds.length
      ? db
          .selectFrom('projects')
          .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
          .selectAll('projects')
          .select('namespaces.full_path as ns_full_path')
          .where('projects.id', 'in', projectIds)
          .execute()
      : Promise.resolve([]),
    db.selectFrom('issue_assignees').select(['issue_id', 'user_id']).where('issue_id', 'in', ids).orderBy('created_at').orderBy('user_id').execute(),
    db
      .selectFrom('issue_labels')
      .innerJoin('labels', 'labels.id', 'issue_labels.label_id')
      .selectAll('labels')
      .select('issue_labels.issue_id')
      .where('issue_labels.issue_id', 'in', ids)
      .execute(),
    db
      .selectFrom('users')
      .select([...BASIC_COLUMNS])
      .where('users.id', 'in', wantedUsers)
      .execute(),
    milestoneRefs(db, externalUrl, milestoneIds, projects),
    // in one statement: a row per merge request closing an issue (with its project), and one per open issue it blocks
    db
      .selectFrom('merge_requests_closing_issues as mc')
      .innerJoin('merge_requests as mr', 'mr.id', 'mc.merge_request_id')
      .select(['mc.issue_id', (eb) => eb.ref('mr.project_id').$castTo<number | null>().as('project_id')])
      .where('mc.issue_id', 'in', ids)
      .unionAll(
        db
          .selectFrom('issue_links as l')
          .innerJoin('issues as blocked', 'blocked.id', 'l.target_id')
          .select(['l.source_id as issue_id', sql<number | null>`null`.as('project_id')])
          .where('l.link_type', '=', 'blocks')
          .where('l.source_id', 'in', ids)
          .where('blocked.state', '=', 'opened'),
      )
      .execute(),
  ]);
  const closing = counted.filter((c): c is { issue_id: number; project_id: number } => c.project_id !== null);
  const blocks = new Map<number, number>();
  for (const c of counted) if (c.project_id === null) blocks.set(c.issue_id, (blocks.get(c.issue_id) ?? 0) + 1);
  const readable = closing.length ? await readsMergeRequestsOf(unique(closing.map((c) => c.project_id))) : new Set<number>();
  for (const p of projectRows) projects.set(p.id, projectRef(p, { full_path: p.ns_full_path }));
  const users = new Map(userRows.map((u) => [u.id, u]));
  const user = (id: number | null) => (id === null ? null : (users.get(id) ?? null));
  return rows.map((row) => ({
    row,
    project: projects.get(row.project_id)!,
    author: user(row.author_id),
    assignees: assigneeLinks
      .filter((l) => l.issue_id === row.id)
      .map((l) => users.get(l.user_id))
      .filter((u): u is UserBasicRow => !!u),
    closedBy: user(row.closed_by_id),
    labels: labelLinks
      .filter((l) => l.issue_id === row.id)
      .map(({ issue_id: _, ...l }) => l as LabelRow)
      .sort((a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : 0)),
    milestone: row.milestone_id !== null ? (milestones.get(row.milestone_id) ?? null) : null,
    mergeRequestsCount: closing.filter((c) => c.issue_id === row.id && readable.has(c.project_id)).length,
    blockingIssuesCount: blocks.get(row.id) ?? 0,
  }));
}
