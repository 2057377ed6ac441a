// The merge request lists (global, group, project) with every filter of the API: MergeRequestsFinder's
// parameters turned into one SQL query (Kysely, both dialects), ordered with GitLab's id tie-breaker.
// Lists never compute merge status: rows are read as stored; rechecks run in the background.
import { sql, type Expression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Database, MergeRequestRow, NamespaceRow, ProjectRow } from '../../db/schema.ts';
import { searchIndexIds, searchMatch } from '../../db/sql.ts';
import { todayDate } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import type { ProjectAccess } from '../access/policy.ts';
import { featureOpen, openLevels, openProjectsWhere, privateFeatureMinLevel } from '../access/visibility.ts';
import { ProjectsQuery, searchTerms } from '../projects/projects-query.ts';
import type { ResolvedProject } from '../access/resolve.ts';
import type { FeatureDeps } from '../deps.ts';

/** IssuableFinder's wildcards (compared case-insensitively). */
export const FILTER_NONE = 'none';
export const FILTER_ANY = 'any';
export type Wildcard = 'None' | 'Any';
/** An id filter: a user id, or None (nobody) / Any (somebody). */
export type IdOrWildcard = number | Wildcard;

export const MR_SCOPES = ['created_by_me', 'assigned_to_me', 'reviews_for_me', 'all'] as const;
export type MergeRequestScopeParam = (typeof MR_SCOPES)[number];
export const MR_STATES = ['opened', 'closed', 'locked', 'merged', 'all'] as const;
export type MergeRequestStateParam = (typeof MR_STATES)[number];
/** Helpers::MergeRequestsHelpers.sort_options */
export const MR_ORDERS = ['created_at', 'label_priority', 'milestone_due', 'popularity', 'priority', 'title', 'updated_at', 'merged_at'] as const;
export type MergeRequestOrder = (typeof MR_ORDERS)[number];

/** The negatable filters (`not[…]`). */
export interface NegatableFilters {
  authorId?: number;
  authorUsername?: string;
  assigneeId?: IdOrWildcard;
  assigneeUsernames?: string[];
  reviewerId?: IdOrWildcard;
  reviewerUsername?: string;
  labels?: string[];
  milestone?: string;
  myReactionEmoji?: string;
}

export interface MergeRequestFilters extends NegatableFilters {
  scope?: MergeRequestScopeParam;
  state?: MergeRequestStateParam;
  iids?: number[];
  mergeUserId?: number;
  mergeUserUsername?: string;
  /** approved by every listed user (the first 5), or None / Any */
  approvedByIds?: number[] | Wildcard;
  approverIds?: number[] | Wildcard;
  approved?: 'yes' | 'no';
  /** ISO 8601 instants, inclusive */
  createdAfter?: string;
  createdBefore?: string;
  updatedAfter?: string;
  updatedBefore?: string;
  deployedAfter?: string;
  deployedBefore?: string;
  environment?: string;
  search?: string;
  /** the columns `search` looks in (title, description); default both */
  in?: string;
  sourceBranch?: string;
  targetBranch?: string;
  sourceProjectId?: number;
  wip?: 'yes' | 'no';
  not?: NegatableFilters;
  orderBy?: MergeRequestOrder;
  sort?: 'asc' | 'desc';
}

/** Where the merge requests of a list live. */
export type MergeRequestListScope = { kind: 'all' } | { kind: 'project'; project: ProjectRow } | { kind: 'group'; group: NamespaceRow; nonArchived: boolean };

export type MergeRequestsQB = SelectQueryBuilder<Database, 'merge_requests', MergeRequestRow>;
type EB = ExpressionBuilder<Database, 'merge_requests'>;
type Cond = (eb: EB) => Expression<SqlBool>;
/** The most merge requests a search index may find for them to drive a search (SQLite; see `searchCondition`). */
const NARROW_SEARCH = 10_000;

// A literal condition (SQLite cannot bind booleans).
const NEVER = sql<SqlBool>`1 = 0`;
/** GitLab's filters take at most this many approved_by ids (MergeRequests::ByApprovalsFinder). */
export const MAX_APPROVED_BY = 5;

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (ch) => '\\' + ch);
const wildcard = (v: unknown): 'none' | 'any' | null => {
  if (typeof v !== 'string') return null;
  const l = v.toLowerCase();
  return l === FILTER_NONE ? 'none' : l === FILTER_ANY ? 'any' : null;
};

/** SQL: the project's merge_requests feature is not at this level (settings JSON as written by the projects service). */
const featureIsNot = (level: 'disabled' | 'private') => sql<SqlBool>`projects.settings not like ${`%"merge_requests_access_level":"${level}"%`}`;

/**
 * Whether `access` (the policy's answer for a project) lets its actor read the project's merge requests,
 * the merge_requests feature included: disabled for everyone, private for members of Reporter and up.
 */
export function canReadMergeRequests(actor: Actor, project: ProjectRow, access: ProjectAccess): boolean {
  return (actor.isAdmin || access.abilities.has('read_merge_request')) && featureOpen(actor, project, access, 'merge_requests');
}

/** Of these projects, those whose merge requests the actor reads (as `canReadMergeRequests` decides, once per project), resolved. */
export async function mergeRequestProjects(deps: FeatureDeps, actor: Actor, projectIds: Iterable<number>): Promise<Map<number, ResolvedProject>> {
  const out = new Map<number, ResolvedProject>();
  for (const id of new Set(projectIds)) {
    try {
      const found = await deps.resolve.project(actor, id);
      if (canReadMergeRequests(actor, found.project, found.access)) out.set(id, found);
    } catch {
      // a project the actor may not read (any more): left out
    }
  }
  return out;
}

export class MergeRequestsQuery {
  private readonly projectsQuery: ProjectsQuery;

  constructor(readonly deps: FeatureDeps) {
    this.projectsQuery = new ProjectsQuery(deps.db, deps.policy);
  }

  /**
   * SQL: the projects whose merge requests `actor` may read — the projects they may see (the same rules
   * as the project lists) whose merge_requests feature is open to them: `enabled` for everyone who sees
   * the project, `private` for members of Reporter and up, `disabled` for nobody.
   */
  async readableProjects(actor: Actor): Promise<(eb: ExpressionBuilder<Database, 'projects'>) => Expression<SqlBool>> {
    if (actor.isAdmin) return () => featureIsNot('disabled');
    const user = actor.user;
    const open = openProjectsWhere(actor);
    if (!user) return (eb) => eb.and([open(eb), featureIsNot('disabled'), featureIsNot('private')]);
    const members = await this.projectsQuery.memberProjects(user.id, privateFeatureMinLevel('merge_requests', 'private'));
    return (eb) => eb.and([featureIsNot('disabled'), eb.or([eb.and([open(eb), featureIsNot('private')]), members(eb)])]);
  }

  /**
   * SQL on the merge request row, for the global list: the same rule as `readableProjects`, read from the
   * row's `visibility` (its project's, narrowed by the feature; kept by triggers, migration 034) instead of
   * looking up each merge request's project — the list walks its order's index and counts up to 10,001 rows.
   * Members' projects are one set, built once per query (a hashed subplan on PostgreSQL).
   */
  private async readableHere(actor: Actor): Promise<Cond> {
    if (actor.isAdmin) return (eb) => eb('merge_requests.visibility', '<>', 'disabled');
    const open = openLevels(actor);
    const user = actor.user;
    if (!user) return (eb) => eb('merge_requests.visibility', 'in', open);
    const members = await this.projectsQuery.memberProjects(user.id, privateFeatureMinLevel('merge_requests', 'private'));
    const memberProjects = this.deps.db.kysely.selectFrom('projects').select('projects.id').where(members);
    return (eb) =>
      eb.or([
        eb('merge_requests.visibility', 'in', open),
        eb.and([eb('merge_requests.visibility', '<>', 'disabled'), eb('merge_requests.project_id', 'in', memberProjects)]),
      ]);
  }

  /**
   * MergeRequestsFinder: the merge requests of `where` that `actor` may read, filtered and ordered as
   * GitLab does (the order always ends with the id in the same direction, so pages are stable).
   * Scope checks (anonymous callers, project access) are the route's.
   */
  async list(actor: Actor, where: MergeRequestListScope, f: MergeRequestFilters): Promise<MergeRequestsQB> {
    const k = this.deps.db.kysely;
    let q: MergeRequestsQB = k.selectFrom('merge_requests').selectAll('merge_requests');
    const conds: Cond[] = [];
    const search = f.search && f.search.trim() ? await this.searchCondition(f.search, f.in) : null;

    if (where.kind === 'project') {
      conds.push((eb) => eb('merge_requests.project_id', '=', where.project.id));
    } else if (where.kind === 'group') {
      // A group's projects are few next to its merge requests: the set drives the query (each project's
      // merge requests by the project index), on both databases.
      const readable = await this.readableProjects(actor);
      let projects = k
        .selectFrom('projects')
        .select('projects.id')
        .where(readable)
        .where(await this.projectsQuery.inGroupSubtree(where.group));
      if (where.nonArchived) projects = projects.where('projects.archived', '=', 0);
      conds.push((eb) => eb('merge_requests.project_id', 'in', projects));
    } else {
      conds.push(await this.readableHere(actor));
    }

    // by_scope: the caller's own; nothing for anonymous callers
    const me = actor.user?.id;
    const scope = f.scope ?? 'all';
    if (scope !== 'all') {
      if (me === undefined) return q.where(NEVER);
      if (scope === 'created_by_me') conds.push((eb) => eb('merge_requests.author_id', '=', me));
      if (scope === 'assigned_to_me') conds.push(this.assignedTo(me));
      if (scope === 'reviews_for_me') conds.push(this.reviewedBy(me));
    }

    if (f.state && f.state !== 'all') conds.push((eb) => eb('merge_requests.state', '=', f.state!));
    if (f.iids?.length) conds.push((eb) => eb('merge_requests.iid', 'in', f.iids!));
    if (f.sourceBranch) conds.push((eb) => eb('merge_requests.source_branch', '=', f.sourceBranch!));
    if (f.targetBranch) conds.push((eb) => eb('merge_requests.target_branch', '=', f.targetBranch!));
    if (f.sourceProjectId !== undefined) conds.push((eb) => eb('merge_requests.source_project_id', '=', f.sourceProjectId!));
    if (f.wip) conds.push((eb) => eb('merge_requests.draft', '=', f.wip === 'yes' ? 1 : 0));
    if (f.createdAfter) conds.push((eb) => eb('merge_requests.created_at', '>=', f.createdAfter!));
    if (f.createdBefore) conds.push((eb) => eb('merge_requests.created_at', '<=', f.createdBefore!));
    if (f.updatedAfter) conds.push((eb) => eb('merge_requests.updated_at', '>=', f.updatedAfter!));
    if (f.updatedBefore) conds.push((eb) => eb('merge_requests.updated_at', '<=', f.updatedBefore!));

    // merge user
    if (f.mergeUserId !== undefined) conds.push((eb) => eb('merge_requests.merge_user_id', '=', f.mergeUserId!));
    if (f.mergeUserUsername !== undefined) {
      const id = await this.userId(f.mergeUserUsername);
      if (id === null) return q.where(NEVER);
      conds.push((eb) => eb('merge_requests.merge_user_id', '=', id));
    }

    // the negatable filters, then their negations
    const positive = await this.negatable(actor, f, false);
    if (positive === null) return q.where(NEVER);
    conds.push(...positive);
    if (f.not) {
      const negative = await this.negatable(actor, f.not, true);
      if (negative) conds.push(...negative);
    }

    // approvals
    const approvedBy = f.approvedByIds;
    if (approvedBy !== undefined) {
      const w = wildcard(approvedBy);
      if (w === 'none') conds.push((eb) => eb.not(eb.exists(this.approvals(eb))));
      else if (w === 'any') conds.push((eb) => eb.exists(this.approvals(eb)));
      else if (Array.isArray(approvedBy)) {
        for (const id of [...new Set(approvedBy)].slice(0, MAX_APPROVED_BY))
          conds.push((eb) => eb.exists(this.approvals(eb).where('approvals.user_id', '=', id)));
      }
    }
    // Individual approvers are approval rules' users, which do not exist here: no merge request has any.
    if (f.approverIds !== undefined) {
      const w = wildcard(f.approverIds);
      if (w !== 'none' && (w === 'any' || (Array.isArray(f.approverIds) && f.approverIds.length))) return q.where(NEVER);
    }
    if (f.approved === 'yes') conds.push((eb) => eb.exists(this.approvals(eb)));
    if (f.approved === 'no') conds.push((eb) => eb.not(eb.exists(this.approvals(eb))));

    // deployments: merged into a successful deployment finished in the window, to the environment
    if (f.environment !== undefined || f.deployedAfter || f.deployedBefore) {
      conds.push((eb) => {
        let d = eb
          .selectFrom('deployment_merge_requests as dmr')
          .innerJoin('deployments as d', 'd.id', 'dmr.deployment_id')
          .select(sql.lit(1).as('one'))
          .whereRef('dmr.merge_request_id', '=', 'merge_requests.id')
          .where('d.status', '=', 'success');
        if (f.deployedAfter) d = d.where('d.finished_at', '>', f.deployedAfter);
        if (f.deployedBefore) d = d.where('d.finished_at', '<', f.deployedBefore);
        if (f.environment !== undefined) {
          d = d.where('dmr.environment_id', 'in', eb.selectFrom('environments as env').select('env.id').where('env.name', '=', f.environment));
        }
        return eb.exists(d);
      });
    }

    // search: every term (of 3+ characters) in one of the columns
    if (search) conds.push(search);

    q = q.where((eb) => eb.and(conds.map((c) => c(eb))));
    return this.order(q, f);
  }

  // ---- pieces --------------------------------------------------------------------------------

  private async userId(username: string): Promise<number | null> {
    const u = await this.deps.users.byUsername(username);
    return u ? u.id : null;
  }

  private assignedTo(userId: number): Cond {
    return (eb) =>
      eb.exists(
        eb
          .selectFrom('merge_request_assignees as a')
          .select(sql.lit(1).as('one'))
          .whereRef('a.merge_request_id', '=', 'merge_requests.id')
          .where('a.user_id', '=', userId),
      );
  }

  private reviewedBy(userId: number): Cond {
    return (eb) =>
      eb.exists(
        eb
          .selectFrom('merge_request_reviewers as r')
          .select(sql.lit(1).as('one'))
          .whereRef('r.merge_request_id', '=', 'merge_requests.id')
          .where('r.user_id', '=', userId),
      );
  }

  private approvals(eb: EB) {
    return eb.selectFrom('approvals').select(sql.lit(1).as('one')).whereRef('approvals.merge_request_id', '=', 'merge_requests.id');
  }

  private anyRow(table: 'merge_request_assignees' | 'merge_request_reviewers' | 'merge_request_labels'): Cond {
    return (eb) =>
      eb.exists(
        eb
          .selectFrom(`${table} as x` as any)
          .select(sql.lit(1).as('one'))
          .whereRef('x.merge_request_id' as any, '=', 'merge_requests.id'),
      );
  }

  /**
   * The negatable filters as conditions; `negate` gives the `not[…]` forms (each condition negated, a
   * list of labels excluding any of them). For positive filters, null means "nothing can match" (an
   * unknown username); a negated unknown username excludes nothing.
   */
  private async negatable(actor: Actor, f: NegatableFilters, negate: boolean): Promise<Cond[] | null> {
    const out: Cond[] = [];
    const add = (c: Cond) => out.push(negate ? (eb) => eb.not(c(eb)) : c);

    if (f.authorId !== undefined) add((eb) => eb('merge_requests.author_id', '=', f.authorId!));
    if (f.authorUsername !== undefined) {
      const id = await this.userId(f.authorUsername);
      if (id === null) {
        if (!negate) return null;
      } else add((eb) => eb('merge_requests.author_id', '=', id));
    }

    if (f.assigneeId !== undefined) {
      const w = wildcard(f.assigneeId);
      const any = this.anyRow('merge_request_assignees');
      if (w === 'none') add((eb) => eb.not(any(eb)));
      else if (w === 'any') add(any);
      else add(this.assignedTo(f.assigneeId as number));
    }
    for (const username of f.assigneeUsernames ?? []) {
      const id = await this.userId(username);
      if (id === null) {
        if (!negate) return null;
      } else add(this.assignedTo(id));
    }

    if (f.reviewerId !== undefined || f.reviewerUsername !== undefined) {
      const value = f.reviewerId ?? f.reviewerUsername!;
      const w = wildcard(value);
      const any = this.anyRow('merge_request_reviewers');
      if (w === 'none') add((eb) => eb.not(any(eb)));
      else if (w === 'any') add(any);
      else if (typeof value === 'number') add(this.reviewedBy(value));
      else {
        const id = await this.userId(value);
        if (id === null) {
          if (!negate) return null;
        } else add(this.reviewedBy(id));
      }
    }

    if (f.labels?.length) {
      const names = f.labels;
      const lower = names.map((n) => n.toLowerCase());
      const any = this.anyRow('merge_request_labels');
      if (lower.includes(FILTER_NONE)) add((eb) => eb.not(any(eb)));
      else if (lower.includes(FILTER_ANY)) add(any);
      else if (negate) {
        // not[labels]: none of them
        out.push((eb) => eb('merge_requests.id', 'not in', this.labelled(eb, names)));
      } else {
        // labels: all of them
        for (const name of new Set(names)) out.push((eb) => eb('merge_requests.id', 'in', this.labelled(eb, [name])));
      }
    }

    if (f.milestone !== undefined) {
      const m = f.milestone;
      const w = wildcard(m);
      if (w === 'none') add((eb) => eb('merge_requests.milestone_id', 'is', null));
      else if (w === 'any') add((eb) => eb('merge_requests.milestone_id', 'is not', null));
      else if (negate) {
        // not[milestone]: merge requests without a milestone stay
        out.push((eb) => eb.or([eb('merge_requests.milestone_id', 'is', null), eb('merge_requests.milestone_id', 'not in', this.milestoneIds(eb, m))]));
      } else out.push((eb) => eb('merge_requests.milestone_id', 'in', this.milestoneIds(eb, m)));
    }

    // my_reaction_emoji: only for a signed-in caller (ignored otherwise, as GitLab does)
    const me = actor.user?.id;
    if (f.myReactionEmoji !== undefined && me !== undefined) {
      const name = f.myReactionEmoji;
      const w = wildcard(name);
      const mine = (eb: EB) => {
        let s = eb
          .selectFrom('award_emoji as ae')
          .select(sql.lit(1).as('one'))
          .where('ae.user_id', '=', me)
          .where('ae.awardable_type', '=', 'MergeRequest')
          .whereRef('ae.awardable_id', '=', 'merge_requests.id');
        if (w === null) s = s.where('ae.name', '=', name);
        return eb.exists(s);
      };
      if (w === 'none') add((eb) => eb.not(mine(eb)));
      else add(mine);
    }
    return out;
  }

  /**
   * SQL: the merge requests carrying a label of these titles (project or group labels alike). A set of
   * ids rather than a correlated test: both databases can then start from the label's rows (index
   * merge_request_labels_label) when the label is rarer than the order's index scan would be long.
   */
  private labelled(eb: EB, titles: string[]) {
    return eb
      .selectFrom('merge_request_labels as ml')
      .select('ml.merge_request_id')
      .where('ml.label_id', 'in', eb.selectFrom('labels as l').select('l.id').where('l.title', 'in', titles));
  }

  /** SQL: ids of the milestones `title` names (Upcoming and Started are Milestone's predefined ones). */
  private milestoneIds(eb: EB, title: string) {
    const today = todayDate();
    const base = eb.selectFrom('milestones as m').select('m.id');
    if (title === 'Upcoming' || title === '#upcoming') {
      // Milestone.upcoming_ids: the active milestone due next, of each project and group
      return base
        .where('m.state', '=', 'active')
        .where('m.due_date', '>', today)
        .where(
          sql<SqlBool>`m.due_date = (select min(m2.due_date) from milestones m2 where m2.state = 'active' and m2.due_date > ${today}
            and ((m.project_id is not null and m2.project_id = m.project_id) or (m.group_id is not null and m2.group_id = m.group_id)))`,
        );
    }
    if (title === 'Started' || title === '#started') {
      return base
        .where('m.state', '=', 'active')
        .where('m.start_date', '<=', today)
        .where((w) => w.or([w('m.due_date', 'is', null), w('m.due_date', '>=', today)]));
    }
    return base.where('m.title', '=', title);
  }

  /**
   * Issuable.full_search: in each column, every term (of 3+ characters); short queries match a whole column.
   * SQLite: when its search index finds at most NARROW_SEARCH merge requests (counted first, up to one more),
   * they drive the query and the LIKE tests each of them; a search that finds more reads the list's
   * order and stops after a page, as a search without the index does (its count stops at 10,001 rows).
   */
  private async searchCondition(search: string, inParam: string | undefined): Promise<Cond> {
    const allowed: ('title' | 'description')[] = ['title', 'description'];
    const asked = (inParam ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s): s is 'title' | 'description' => (allowed as string[]).includes(s));
    const columns = asked.length ? [...new Set(asked)] : allowed;
    const query = search.trim().replace(/\s+/g, ' ');
    const terms = searchTerms(query).filter((t) => t.length >= 3);
    // SQLite's LIKE already ignores ASCII case (and its lower() knows no more than ASCII): the column is
    // matched as is, which halves the cost of a scan; PostgreSQL's LIKE needs both sides lowered.
    const sqlite = this.deps.db.dialect === 'sqlite';
    const match = sqlite && terms.length ? searchMatch('merge_requests', columns, terms) : null;
    let indexed: Expression<SqlBool> | null = null;
    if (match !== null) {
      const found = searchIndexIds('merge_requests', match);
      const { n } = (await sql<{ n: number }>`select count(*) as n from (${found} limit ${NARROW_SEARCH + 1})`.execute(this.deps.db.kysely)).rows[0];
      if (n <= NARROW_SEARCH) indexed = sql<SqlBool>`merge_requests.id in (${found})`;
    }
    const cond: Cond = (eb) => {
      const like = eb.or(
        columns.map((col) => {
          const ref = sql.ref(`merge_requests.${col}`);
          const lowered = sqlite ? ref : sql`lower(${ref})`;
          if (!terms.length) return sql<SqlBool>`lower(${ref}) = ${query.toLowerCase()}`;
          return eb.and(terms.map((t) => sql<SqlBool>`${lowered} like ${'%' + likeEscape(t.toLowerCase()) + '%'} escape '\\'`));
        }),
      );
      return indexed ? eb.and([indexed, like]) : like;
    };
    return cond;
  }

  /** order_by + sort, then the id in the same direction; merged_at (and the due dates, priorities) put nulls last. */
  private order(q: MergeRequestsQB, f: MergeRequestFilters): MergeRequestsQB {
    const dir = f.sort ?? 'desc';
    const by = f.orderBy ?? 'created_at';
    switch (by) {
      case 'created_at':
      case 'updated_at':
      case 'title':
        return q.orderBy(`merge_requests.${by}`, dir).orderBy('merge_requests.id', dir);
      case 'merged_at':
        return q.orderBy(sql`merge_requests.merged_at is null`).orderBy('merge_requests.merged_at', dir).orderBy('merge_requests.id', dir);
      case 'popularity':
        // upvotes, most first for desc
        return q.orderBy('merge_requests.upvotes', dir).orderBy('merge_requests.id', dir);
      case 'milestone_due': {
        const due = sql`(select m.due_date from milestones m where m.id = merge_requests.milestone_id)`;
        return q.orderBy(sql`${due} is null`).orderBy(due, dir).orderBy('merge_requests.id', dir);
      }
      case 'priority':
      case 'label_priority': {
        // the highest-priority (lowest number) label's priority; without one, last
        const prio = sql`(select min(l.priority) from merge_request_labels ml join labels l on l.id = ml.label_id where ml.merge_request_id = merge_requests.id)`;
        return q.orderBy(sql`${prio} is null`).orderBy(prio, dir).orderBy('merge_requests.id', dir);
      }
    }
  }
}
