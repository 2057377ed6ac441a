// The issue lists (global, group, project) with the filters of the API: IssuesFinder's parameters turned into
// one SQL query (Kysely, both dialects), ordered with GitLab's id tie-breaker. Who may read an issue is one
// condition on the row: `issues.visibility` (its project's visibility narrowed by the issues feature, kept by
// triggers: migration 035) or a membership of the project, and a confidential issue only for Reporters and
// up, its author and its assignees (IssuesFinder#with_confidentiality_access_check).
import { sql, type Expression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { ISSUE_COLUMNS, type Database, type IssueRow, type NamespaceRow, type ProjectRow } from '../../db/schema.ts';
import { searchIndexIds, searchMatch } from '../../db/sql.ts';
import { todayDate } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import type { ProjectAccess } from '../access/policy.ts';
import { openLevels } from '../access/visibility.ts';
import type { FeatureDeps } from '../deps.ts';
import { FILTER_ANY, FILTER_NONE, type IdOrWildcard } from '../merge-requests/merge-requests-query.ts';
import { ProjectsQuery, searchTerms } from '../projects/projects-query.ts';
import { canReadConfidential, canReadIssues } from './issue-access.ts';

export const ISSUE_SCOPES = ['created_by_me', 'assigned_to_me', 'all'] as const;
export const ISSUE_STATES = ['opened', 'closed', 'all'] as const;
/** Helpers::IssuesHelpers.sort_options */
export const ISSUE_ORDERS = [
  'created_at',
  'due_date',
  'label_priority',
  'milestone_due',
  'popularity',
  'priority',
  'relative_position',
  'title',
  'updated_at',
] as const;

/** The negatable filters (`not[…]`). */
export interface IssueNegatableFilters {
  authorId?: number;
  authorUsername?: string;
  assigneeId?: IdOrWildcard;
  assigneeUsernames?: string[];
  labels?: string[];
  milestone?: string;
  iids?: number[];
  issueType?: string;
}

export interface IssueFilters extends IssueNegatableFilters {
  scope?: (typeof ISSUE_SCOPES)[number];
  state?: (typeof ISSUE_STATES)[number];
  /** the issues of one milestone (a milestone's issues list) */
  milestoneId?: number;
  confidential?: boolean;
  createdAfter?: string;
  createdBefore?: string;
  updatedAfter?: string;
  updatedBefore?: string;
  dueDate?: string;
  search?: string;
  in?: string;
  not?: IssueNegatableFilters;
  orderBy?: (typeof ISSUE_ORDERS)[number];
  sort?: 'asc' | 'desc';
}

/** Where the issues of a list live. */
export type IssueListScope =
  | { kind: 'all' }
  | { kind: 'project'; project: ProjectRow; namespace: NamespaceRow; access: ProjectAccess }
  | { kind: 'group'; group: NamespaceRow; nonArchived: boolean };

/**
 * The owners of the labels a project's list filters by (LabelsFinder for a project): the project and its
 * namespace's groups. A title names one label there, where across every project it names as many labels as
 * projects use it (`bug`), and the issue ids of all of them would be read to filter one project's list.
 */
interface LabelOwners {
  projectId: number;
  groupIds: number[];
}

export type IssuesQB = SelectQueryBuilder<Database, 'issues', IssueRow>;
type EB = ExpressionBuilder<Database, 'issues'>;
type Cond = (eb: EB) => Expression<SqlBool>;
const NEVER = sql<SqlBool>`1 = 0`;
const NARROW_SEARCH = 10_000;
/** SQLite: the most issues a word search finds for them to drive the query */
const NARROW_WORDS = 1_000;
/** how far a label's issues are counted to find the rarest of a list's labels */
const LABEL_COUNT = 10_001;
/** PostgreSQL: the most issues of a list's rarest label for them to drive the query (each then read by key) */
const LABEL_DRIVE = 2_000;

/** IssuableFinder::FULL_TEXT_SEARCH_TERM_REGEX: a query of ASCII and Latin letters is searched by words */
const FULL_TEXT_QUERY = /^[\p{ASCII}\p{Script=Latin}]+$/u;
/** PgFullTextSearchable: a URL's scheme goes (its words stay), and every character a tsquery could read as an operator */
const URL_SCHEME = /(?<=^|\W)\w+:\/\/(?=\w+)/g;
const TSQUERY_DISALLOWED = /[^a-zA-Z0-9 .@/\-"]/g;
const likeEscape = (s: string) => s.replace(/[\\%_]/g, (ch) => '\\' + ch);
const wildcard = (v: unknown): 'none' | 'any' | null => {
  if (typeof v !== 'string') return null;
  const l = v.toLowerCase();
  return l === FILTER_NONE ? 'none' : l === FILTER_ANY ? 'any' : null;
};

export class IssuesQuery {
  private readonly projectsQuery: ProjectsQuery;
  private readonly narrowLists = new WeakSet<object>();
  private readonly byIdLists = new WeakSet<object>();

  constructor(readonly deps: FeatureDeps) {
    this.projectsQuery = new ProjectsQuery(deps.db, deps.policy);
  }

  private get k() {
    return this.deps.db.kysely;
  }

  /**
   * SQL on the issue row: the issues `actor` may read across projects (global and group lists). Administrators
   * read every issue of an enabled feature; others the open levels, or `private` ones of projects they are a
   * member of (any level: Guests read issues); confidential ones only as Reporter and up, author or assignee.
   */
  async readable(actor: Actor): Promise<Cond> {
    if (actor.isAdmin) return (eb) => eb('issues.visibility', '<>', 'disabled');
    const open = openLevels(actor);
    const user = actor.user;
    if (!user) return (eb) => eb.and([eb('issues.visibility', 'in', open), eb('issues.confidential', '=', 0)]);
    const members = await this.projectsQuery.memberProjects(user.id, 10);
    const reporters = await this.projectsQuery.memberProjects(user.id, 20);
    const memberProjects = this.k.selectFrom('projects').select('projects.id').where(members);
    const reporterProjects = this.k.selectFrom('projects').select('projects.id').where(reporters);
    return (eb) =>
      eb.and([
        eb.or([eb('issues.visibility', 'in', open), eb.and([eb('issues.visibility', '=', 'private'), eb('issues.project_id', 'in', memberProjects)])]),
        eb.or([
          eb('issues.confidential', '=', 0),
          eb('issues.author_id', '=', user.id),
          eb('issues.id', 'in', eb.selectFrom('issue_assignees').select('issue_assignees.issue_id').where('issue_assignees.user_id', '=', user.id)),
          eb('issues.project_id', 'in', reporterProjects),
        ]),
      ]);
  }

  /** One project's readable issues (the caller checked the project and its feature). */
  private projectReadable(actor: Actor, project: ProjectRow, access: ProjectAccess): Cond {
    if (canReadConfidential(actor, access)) return (eb) => eb('issues.project_id', '=', project.id);
    const user = actor.user;
    return (eb) =>
      eb.and([
        eb('issues.project_id', '=', project.id),
        user
          ? eb.or([
              eb('issues.confidential', '=', 0),
              eb('issues.author_id', '=', user.id),
              eb('issues.id', 'in', eb.selectFrom('issue_assignees').select('issue_assignees.issue_id').where('issue_assignees.user_id', '=', user.id)),
            ])
          : eb('issues.confidential', '=', 0),
      ]);
  }

  /** The list query: filters, access and order; the caller paginates. */
  async list(actor: Actor, where: IssueListScope, f: IssueFilters): Promise<IssuesQB> {
    const conds: Cond[] = [];
    if (where.kind === 'project') conds.push(this.projectReadable(actor, where.project, where.access));
    else {
      conds.push(await this.readable(actor));
      if (where.kind === 'group') {
        const inGroup = await this.projectsQuery.inGroupSubtree(where.group);
        let projects = this.k.selectFrom('projects').select('projects.id').where(inGroup);
        if (where.nonArchived) projects = projects.where('projects.archived', '=', 0);
        conds.push((eb) => eb('issues.project_id', 'in', projects));
      }
    }
    const user = actor.user;
    if (f.scope === 'created_by_me') conds.push(user ? (eb) => eb('issues.author_id', '=', user.id) : () => NEVER);
    // an assignee's issues drive the list by id (each read by key): its page reads their ids first (see isById)
    const byAssignee = f.scope === 'assigned_to_me' && !!user;
    if (f.scope === 'assigned_to_me') conds.push(user ? this.assignedTo(user.id) : () => NEVER);
    if (f.state && f.state !== 'all') conds.push((eb) => eb('issues.state', '=', f.state!));
    if (f.milestoneId !== undefined) conds.push((eb) => eb('issues.milestone_id', '=', f.milestoneId!));
    if (f.confidential !== undefined) conds.push((eb) => eb('issues.confidential', '=', f.confidential ? 1 : 0));
    if (f.createdAfter) conds.push((eb) => eb('issues.created_at', '>=', f.createdAfter!));
    if (f.createdBefore) conds.push((eb) => eb('issues.created_at', '<=', f.createdBefore!));
    if (f.updatedAfter) conds.push((eb) => eb('issues.updated_at', '>=', f.updatedAfter!));
    if (f.updatedBefore) conds.push((eb) => eb('issues.updated_at', '<=', f.updatedBefore!));
    if (f.dueDate) conds.push(dueDate(f.dueDate));
    const owners: LabelOwners | null =
      where.kind === 'project' ? { projectId: where.project.id, groupIds: where.namespace.traversal_ids.split('/').filter(Boolean).map(Number) } : null;
    const hints = { narrow: false, byAssignee: false };
    const positive = await this.negatable(f, false, owners, hints);
    const negative = f.not ? await this.negatable(f.not, true, owners, hints) : [];
    if (positive === null || negative === null) conds.push(() => NEVER);
    else conds.push(...positive, ...negative);
    if (f.search?.trim()) conds.push(await this.searchCondition(f.search, f.in));
    const q = this.k
      .selectFrom('issues')
      .select(ISSUE_COLUMNS)
      .where((eb) => eb.and(conds.map((c) => c(eb))));
    const ordered = this.order(q, f);
    if (hints.narrow) this.narrowLists.add(ordered);
    if ((byAssignee || hints.byAssignee) && this.deps.db.dialect === 'postgres') this.byIdLists.add(ordered);
    return ordered;
  }

  /**
   * Whether the list is known to match few issues (at most LABEL_DRIVE), or reads every issue it matches to sort
   * them (an assignee's, by id): its page can count them in the same statement (`count(*) over ()`) where a
   * separate count would read them again.
   */
  isNarrow(q: IssuesQB): boolean {
    return this.narrowLists.has(q) || this.byIdLists.has(q);
  }

  /**
   * Whether the list's page should read its issues' ids before their rows (PostgreSQL): an assignee's issues are
   * read by id and sorted, each whole row (its tsvector too) where the ids and the order's columns would do (the
   * page of `assigned_to_me`: 16 ms for 1,896 rows, 8 for their ids and 21 rows by key).
   */
  isById(q: IssuesQB): boolean {
    return this.byIdLists.has(q);
  }

  /** The issues of these ids, in the order given. */
  async rowsByIds(ids: readonly number[]): Promise<IssueRow[]> {
    if (!ids.length) return [];
    const rows = await this.k
      .selectFrom('issues')
      .select(ISSUE_COLUMNS)
      .where('issues.id', 'in', [...ids])
      .execute();
    const byId = new Map(rows.map((r) => [r.id, r as IssueRow]));
    return ids.map((id) => byId.get(id)).filter((r): r is IssueRow => !!r);
  }

  /** GET …/issues_statistics: the counts of the list's issues by state (every state, whatever `state` asks). */
  async statistics(actor: Actor, where: IssueListScope, f: IssueFilters): Promise<{ all: number; closed: number; opened: number }> {
    const q = await this.list(actor, where, { ...f, state: 'all' });
    const rows = await q
      .clearSelect()
      .clearOrderBy()
      .select(['issues.state', (eb) => eb.fn.countAll<number | string>().as('n')])
      .groupBy('issues.state')
      .execute();
    const count = (state: string) => Number(rows.find((r) => r.state === state)?.n ?? 0);
    return { all: count('opened') + count('closed'), closed: count('closed'), opened: count('opened') };
  }

  /**
   * open_issues_count and closed_issues_count of labels (LabelEntity: IssuesFinder by the label): the issues the
   * actor reads carrying each label, in a project's list those of that project, in a group's those it reads anywhere.
   */
  async countsByLabel(
    actor: Actor,
    labelIds: readonly number[],
    project?: { project: ProjectRow; access: ProjectAccess },
  ): Promise<Map<number, { opened: number; closed: number }>> {
    const out = new Map<number, { opened: number; closed: number }>();
    if (!labelIds.length || (project && !canReadIssues(actor, project.project, project.access))) return out;
    const readable = project ? this.projectReadable(actor, project.project, project.access) : await this.readable(actor);
    const rows = await this.k
      .selectFrom('issues')
      .innerJoin('issue_labels as il', 'il.issue_id', 'issues.id')
      .select(['il.label_id', 'issues.state', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('il.label_id', 'in', [...labelIds])
      .where((eb) => readable(eb))
      .groupBy(['il.label_id', 'issues.state'])
      .execute();
    for (const r of rows) {
      const c = out.get(r.label_id) ?? { opened: 0, closed: 0 };
      if (r.state === 'opened') c.opened += Number(r.n);
      else if (r.state === 'closed') c.closed += Number(r.n);
      out.set(r.label_id, c);
    }
    return out;
  }

  /** The open issues of a project the actor reads (the count beside a project's Issues tab); null when its issues are closed to them. */
  async openCount(actor: Actor, r: { project: ProjectRow; namespace: NamespaceRow; access: ProjectAccess }): Promise<number | null> {
    if (!canReadIssues(actor, r.project, r.access)) return null;
    const q = await this.list(actor, { kind: 'project', ...r }, { state: 'opened' });
    const row = await q
      .clearSelect()
      .clearOrderBy()
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /**
   * SQL: the issues assigned to the user, a set of ids from `issue_assignees_user`. PostgreSQL reads the set first
   * (`= any(array(…))`, each issue then by its key): as a semi-join it hashed the set and read every issue.
   */
  private assignedTo(userId: number): Cond {
    return (eb) => {
      const ids = eb.selectFrom('issue_assignees').select('issue_assignees.issue_id').where('issue_assignees.user_id', '=', userId);
      return this.deps.db.dialect === 'postgres' ? sql<SqlBool>`issues.id = any(array(${ids}))` : eb('issues.id', 'in', ids);
    };
  }

  private async userId(username: string): Promise<number | null> {
    const row = await this.k.selectFrom('users').select('id').where(sql`lower(username)`, '=', username.toLowerCase()).executeTakeFirst();
    return row?.id ?? null;
  }

  /**
   * The filters `not[…]` also takes. Positive: each must hold (null: nothing can match, an unknown user).
   * Negated: none of them holds (an unknown user excludes nothing).
   */
  private async negatable(
    f: IssueNegatableFilters,
    negate: boolean,
    owners: LabelOwners | null,
    hints: { narrow: boolean; byAssignee: boolean },
  ): Promise<Cond[] | null> {
    const out: Cond[] = [];
    const add = (c: Cond) => out.push(negate ? (eb) => eb.not(c(eb)) : c);
    if (f.authorId !== undefined) add((eb) => eb('issues.author_id', '=', f.authorId!));
    if (f.authorUsername !== undefined) {
      const id = await this.userId(f.authorUsername);
      if (id === null) {
        if (!negate) return null;
      } else add((eb) => eb('issues.author_id', '=', id));
    }
    const anyAssignee: Cond = (eb) =>
      eb.exists(eb.selectFrom('issue_assignees').select('issue_assignees.issue_id').whereRef('issue_assignees.issue_id', '=', 'issues.id'));
    if (f.assigneeId !== undefined) {
      const w = wildcard(f.assigneeId);
      if (w === 'none') add((eb) => eb.not(anyAssignee(eb)));
      else if (w === 'any') add(anyAssignee);
      else {
        add(this.assignedTo(Number(f.assigneeId)));
        if (!negate) hints.byAssignee = true;
      }
    }
    if (f.assigneeUsernames?.length) {
      for (const name of f.assigneeUsernames) {
        const id = await this.userId(name);
        if (id === null) {
          if (!negate) return null;
        } else {
          add(this.assignedTo(id));
          if (!negate) hints.byAssignee = true;
        }
      }
    }
    if (f.labels?.length) {
      const w = f.labels.length === 1 ? wildcard(f.labels[0]) : null;
      const anyLabel: Cond = (eb) =>
        eb.exists(eb.selectFrom('issue_labels').select('issue_labels.issue_id').whereRef('issue_labels.issue_id', '=', 'issues.id'));
      if (w === 'none') add((eb) => eb.not(anyLabel(eb)));
      else if (w === 'any') add(anyLabel);
      else if (negate) out.push((eb) => eb('issues.id', 'not in', this.labelled(f.labels!, owners)));
      else {
        const all = await this.allLabelled(f.labels, owners, hints);
        if (all === null) return null;
        out.push(all);
      }
    }
    if (f.milestone !== undefined) {
      const m = f.milestone;
      const w = wildcard(m);
      if (w === 'none') add((eb) => eb('issues.milestone_id', 'is', null));
      else if (w === 'any') add((eb) => eb('issues.milestone_id', 'is not', null));
      else if (negate) out.push((eb) => eb.or([eb('issues.milestone_id', 'is', null), eb('issues.milestone_id', 'not in', this.milestoneIds(eb, m))]));
      else out.push((eb) => eb('issues.milestone_id', 'in', this.milestoneIds(eb, m)));
    }
    if (f.iids?.length) {
      add((eb) => eb('issues.iid', 'in', f.iids!));
      if (!negate && f.iids.length <= LABEL_DRIVE) hints.narrow = true;
    }
    if (f.issueType !== undefined) add((eb) => eb('issues.issue_type', '=', f.issueType!));
    return out;
  }

  /** SQL: the ids of the labels of these titles (project or group labels alike; of `owners` only, for a project's list). */
  private labelIds(titles: string[], owners: LabelOwners | null) {
    const k = this.k;
    if (!owners) return k.selectFrom('labels as l').select('l.id').where('l.title', 'in', titles);
    // by the (owner, lower(title)) indexes of the labels' scopes; the exact title as before
    const lowered = [...new Set(titles.map((t) => t.toLowerCase()))];
    return k
      .selectFrom('labels as l')
      .select('l.id')
      .where('l.project_id', '=', owners.projectId)
      .where(sql`lower(l.title)`, 'in', lowered)
      .where('l.title', 'in', titles)
      .unionAll(
        k
          .selectFrom('labels as l')
          .select('l.id')
          .where('l.group_id', 'in', owners.groupIds.length ? owners.groupIds : [0])
          .where(sql`lower(l.title)`, 'in', lowered)
          .where('l.title', 'in', titles),
      );
  }

  /**
   * SQL: the issues carrying a label of these titles: a set of ids from `issue_labels_label`, or in a project's list
   * from `issue_labels_project` (that project's links only: a group's label is on the issues of all its projects).
   */
  private labelled(titles: string[], owners: LabelOwners | null) {
    const set = this.k.selectFrom('issue_labels as il').select('il.issue_id').where('il.label_id', 'in', this.labelIds(titles, owners));
    return owners ? set.where('il.project_id', '=', owners.projectId) : set;
  }

  /**
   * The issues carrying every one of these labels, as one set of ids (null: none can). In a project's list, the
   * intersection of the labels' links in the project. Across projects (group and global lists) the labels are read
   * first (ids by title) and each one's issues counted (from `issue_labels_label`, up to LABEL_COUNT); the rarest
   * label's rows drive the set and each of them is tested for the others by the key of `issue_labels`, the
   * labels named by id (so that PostgreSQL's statistics know a common label from a rare one) — where a set per
   * label read every row of a common label (a group's, on thousands of issues) to filter the few of a rare one.
   */
  private async allLabelled(titles: string[], owners: LabelOwners | null, hints: { narrow: boolean }): Promise<Cond | null> {
    const distinct = [...new Set(titles)];
    if (distinct.length === 1) return (eb) => eb('issues.id', 'in', this.labelled(distinct, owners));
    if (owners) {
      // a project's list: the intersection of each label's links in the project (at most the project's issues each,
      // read from `issue_labels_project` and hashed), with no statement before it to count and rank the labels
      const [first, ...rest] = distinct.map((title) => this.labelled([title], owners));
      const set = rest.reduce((acc, next) => acc.intersect(next), first);
      return (eb) => eb('issues.id', 'in', set);
    }
    // the labels and how many issues each carries, in one statement: up to LABEL_COUNT on SQLite, where the rarest
    // drives; PostgreSQL only tells whether the rarest is under LABEL_DRIVE
    const postgres = this.deps.db.dialect === 'postgres';
    const cap = postgres ? LABEL_DRIVE + 1 : LABEL_COUNT;
    const labels = await this.k
      .selectFrom(this.labelIds(distinct, owners).as('found'))
      .innerJoin('labels', 'labels.id', 'found.id')
      .select(['labels.id', 'labels.title'])
      .select((eb) =>
        eb
          .selectFrom(eb.selectFrom('issue_labels as il').select(sql.lit(1).as('one')).whereRef('il.label_id', '=', 'labels.id').limit(cap).as('rows'))
          .select((e) => e.fn.countAll<number | string>().as('n'))
          .as('n'),
      )
      .execute();
    const counted = distinct.map((title) => {
      const of = labels.filter((l) => l.title === title);
      return { ids: of.map((l) => l.id), n: of.reduce((sum, l) => sum + Number(l.n ?? 0), 0) };
    });
    if (counted.some((c) => c.n === 0)) return null;
    counted.sort((a, b) => a.n - b.n);
    const [first, ...rest] = counted;
    if (first.n <= LABEL_DRIVE) hints.narrow = true;
    if (postgres) {
      // PostgreSQL turns the set's tests into a join and hashes the rare label's rows to read every row of the
      // common one: the rare label's issues are read first (an array) and each is probed for the others by key
      // (`offset 0` keeps the probe a subplan); a list whose rarest label is common keeps a set per label.
      const sets = (ids: number[]) => this.k.selectFrom('issue_labels as il').select('il.issue_id').where('il.label_id', 'in', ids);
      if (first.n > LABEL_DRIVE) return (eb) => eb.and(counted.map(({ ids }) => eb('issues.id', 'in', sets(ids))));
      return (eb) =>
        eb.and([
          sql<SqlBool>`issues.id = any(array(${sets(first.ids)}))`,
          ...rest.map(({ ids }) =>
            eb.exists(
              eb
                .selectFrom('issue_labels as other')
                .select(sql.lit(1).as('one'))
                .whereRef('other.issue_id', '=', 'issues.id')
                .where('other.label_id', 'in', ids)
                .offset(0),
            ),
          ),
        ]);
    }
    let set = this.k.selectFrom('issue_labels as il').select('il.issue_id').where('il.label_id', 'in', first.ids);
    for (const { ids } of rest) {
      set = set.where((eb) =>
        eb.exists(
          eb.selectFrom('issue_labels as other').select(sql.lit(1).as('one')).whereRef('other.issue_id', '=', 'il.issue_id').where('other.label_id', 'in', ids),
        ),
      );
    }
    return (eb) => eb('issues.id', 'in', set);
  }

  /** SQL: ids of the milestones `title` names (Upcoming and Started are Milestone's predefined ones). */
  private milestoneIds(eb: EB, title: string) {
    const today = todayDate();
    const base = eb.selectFrom('milestones as m').select('m.id');
    const lower = title.toLowerCase();
    if (lower === 'upcoming') {
      // Milestone.upcoming_ids: the active milestone due next, of each project and group
      return base
        .where('m.state', '=', 'active')
        .where('m.due_date', '>', today)
        .where(
          sql<SqlBool>`m.due_date = (select min(m2.due_date) from milestones m2 where m2.state = 'active' and m2.due_date > ${today}
            and ((m2.project_id is not null and m2.project_id = m.project_id) or (m2.group_id is not null and m2.group_id = m.group_id)))`,
        );
    }
    if (lower === 'started') return base.where('m.state', '=', 'active').where('m.start_date', '<=', today);
    return base.where('m.title', '=', title);
  }

  /**
   * search= in the title and description (or those `in` names). A query in Latin script is searched by words, as
   * GitLab's IssuableFinder does (`fullText`); any other (Cyrillic, CJK…) by substrings: every term (of 3+
   * characters) in one column. There SQLite reads its trigram index first; when it finds at most NARROW_SEARCH
   * issues they drive the query and the LIKE tests each of them (the exact test); a broader search reads the
   * list's order, as without the index.
   */
  private async searchCondition(search: string, inParam: string | undefined): Promise<Cond> {
    const allowed: ('title' | 'description')[] = ['title', 'description'];
    const asked = (inParam ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s): s is 'title' | 'description' => (allowed as string[]).includes(s));
    const columns = asked.length ? [...new Set(asked)] : allowed;
    const query = search.trim().replace(/\s+/g, ' ');
    if (FULL_TEXT_QUERY.test(query)) return await this.fullText(query, columns);
    const terms = searchTerms(query).filter((t) => t.length >= 3);
    const sqlite = this.deps.db.dialect === 'sqlite';
    const match = sqlite && terms.length ? searchMatch('issues', columns, terms) : null;
    let indexed: Expression<SqlBool> | null = null;
    if (match !== null) {
      // The index is read once: the ids it finds (up to one more than NARROW_SEARCH) are handed to the page and
      // its count as one JSON array, where a subquery evaluated the match again in each of them.
      const found = searchIndexIds('issues', match);
      const ids = (await sql<{ rowid: number }>`${found} limit ${NARROW_SEARCH + 1}`.execute(this.k)).rows.map((r) => r.rowid);
      if (ids.length === 0) indexed = NEVER;
      else if (ids.length <= NARROW_SEARCH) indexed = sql<SqlBool>`issues.id in (select value from json_each(${JSON.stringify(ids)}))`;
    }
    return (eb) => {
      const like = eb.or(
        columns.map((col) => {
          const ref = sql.ref(`issues.${col}`);
          const lowered = sqlite ? ref : sql`lower(${ref})`;
          if (!terms.length) return sql<SqlBool>`lower(${ref}) = ${query.toLowerCase()}`;
          return eb.and(terms.map((t) => sql<SqlBool>`${lowered} like ${'%' + likeEscape(t.toLowerCase()) + '%'} escape '\\'`));
        }),
      );
      return indexed ? eb.and([indexed, like]) : like;
    };
  }

  /**
   * PgFullTextSearchable#pg_full_text_search: each word a prefix (`updat:*`, English stems: "updates" finds
   * "updated"), numbers also negative (`(12:* | -12:*)`), "quoted phrases" word after word, all of them; `in`
   * one column (weight A title, B description). PostgreSQL reads the issues' tsvector (its GIN index for a rare
   * word), SQLite its FTS5 index of words (Porter's stemmer, the same prefixes and phrases). A query left without
   * a letter or digit finds nothing, as GitLab's (an empty tsquery).
   */
  private async fullText(query: string, columns: ('title' | 'description')[]): Promise<Cond> {
    const cleaned = query
      .normalize('NFD')
      .replace(/\p{M}/gu, '') // ActiveSupport::Inflector.transliterate: é → e
      .replace(URL_SCHEME, '')
      .replace(TSQUERY_DISALLOWED, ' ');
    const terms = searchTerms(cleaned).filter((t) => /[a-zA-Z0-9]/.test(t));
    if (!terms.length) return () => NEVER;
    const one = columns.length === 1 ? columns[0] : null;
    if (this.deps.db.dialect === 'postgres') {
      const w = one === 'title' ? 'A' : one === 'description' ? 'B' : '';
      const tsquery = terms
        .map((t) => {
          if (/^\d+$/.test(t)) return `(${t}:*${w} | -${t}:*${w})`;
          if (/\s/.test(t))
            return t
              .split(' ')
              .filter((x) => /[a-zA-Z0-9]/.test(x))
              .map((x) => `${x}:${w}`)
              .join(' <-> ');
          return `${t}:*${w}`;
        })
        .join(' & ');
      return () => sql<SqlBool>`issues.search_vector @@ to_tsquery('english', ${tsquery})`;
    }
    const quote = (t: string) => `"${t.replace(/"/g, '""')}"`;
    const all = terms.map((t) => (/\s/.test(t) ? quote(t) : `${quote(t)}*`)).join(' AND ');
    const match = one ? `{${one}} : (${all})` : all;
    const found = sql<number>`(select rowid from issues_words where issues_words match ${match})`;
    // SQLite's planner cannot tell a rare word from a common one: the index is asked how many it finds (up to
    // NARROW_WORDS). A few drive the query, each issue read by its id; more are a set the list's order is tested
    // against (`+` keeps the id's key out of the plan), where reading each of 38,000 issues to sort them cost 50 ms.
    const { n } = (
      await sql<{ n: number }>`select count(*) as n from (select 1 from issues_words where issues_words match ${match} limit ${NARROW_WORDS + 1})`.execute(
        this.k,
      )
    ).rows[0];
    if (n === 0) return () => NEVER;
    if (n <= NARROW_WORDS) return (eb) => eb('issues.id', 'in', found);
    return () => sql<SqlBool>`+issues.id in ${found}`;
  }

  private order(q: IssuesQB, f: IssueFilters): IssuesQB {
    const dir = f.sort ?? 'desc';
    const by = f.orderBy ?? 'created_at';
    switch (by) {
      case 'created_at':
      case 'updated_at':
      case 'title':
        return q.orderBy(`issues.${by}`, dir).orderBy('issues.id', dir);
      case 'due_date':
        return q.orderBy(sql`issues.due_date is null`).orderBy('issues.due_date', dir).orderBy('issues.id', dir);
      case 'relative_position':
        return q.orderBy(sql`issues.relative_position is null`).orderBy('issues.relative_position', dir).orderBy('issues.id', dir);
      case 'popularity':
        return q.orderBy('issues.upvotes', dir).orderBy('issues.id', dir);
      case 'milestone_due': {
        const due = sql`(select m.due_date from milestones m where m.id = issues.milestone_id)`;
        return q.orderBy(sql`${due} is null`).orderBy(due, dir).orderBy('issues.id', dir);
      }
      default: {
        // priority, label_priority: the highest priority of the issue's labels first
        const prio = sql`(select min(l.priority) from issue_labels il join labels l on l.id = il.label_id where il.issue_id = issues.id)`;
        return q.orderBy(sql`${prio} is null`).orderBy(prio, dir).orderBy('issues.id', dir);
      }
    }
  }
}

/** IssuesFinder's due_date filter: 0 (none), any, overdue, week, month, next_month_and_previous_two_weeks. */
function dueDate(v: string): Cond {
  const today = todayDate();
  const plus = (days: number) => new Date(Date.parse(`${today}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
  switch (v) {
    case '0':
    case 'none':
      return (eb) => eb('issues.due_date', 'is', null);
    case 'any':
      return (eb) => eb('issues.due_date', 'is not', null);
    case 'overdue':
      return (eb) => eb('issues.due_date', '<', today);
    case 'week':
      return (eb) => eb.and([eb('issues.due_date', '>=', today), eb('issues.due_date', '<=', plus(7))]);
    case 'month':
      return (eb) => eb.and([eb('issues.due_date', '>=', today), eb('issues.due_date', '<=', plus(30))]);
    default:
      return (eb) => eb.and([eb('issues.due_date', '>=', plus(-14)), eb('issues.due_date', '<=', plus(60))]);
  }
}
