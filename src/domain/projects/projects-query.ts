// Reading projects: the SQL of project lists (which projects a viewer may see, GitLab's filters and
// orders, membership sets) and the views of a page of rows (namespaces, owners, the viewer's access and
// memberships) loaded with one query per kind of row, never one per project.
import { inSearchIndex, inSubtree, searchIndexIds, searchMatch } from '../../db/sql.ts';
import { sql, type Expression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../db/connect.ts';
import type { Database, NamespaceRow, ProjectRow } from '../../db/schema.ts';
import { todayDate } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import { outermost, traversalIds, unexpired, type Membership, type Policy, type ProjectAccess } from '../access/policy.ts';
import { readVersions, stamp } from '../../db/versions.ts';
import { VersionedCache } from '../../lib/versioned-cache.ts';
import type { CustomPermission } from '../core/roles.ts';
import { openFeatures, visibleProjectsWhere, type ProjectsWhere } from '../access/visibility.ts';
import { BASIC_COLUMNS, type UserBasicRow } from '../core/user-columns.ts';
import type { Feature } from '../core/project-settings.ts';

export interface ProjectView {
  project: ProjectRow;
  namespace: NamespaceRow;
  /** "Group / Subgroup", or the owner's name for a personal namespace */
  namespaceFullName: string;
  /** the owner of a personal namespace */
  owner: UserBasicRow | null;
  /** what the viewer may do */
  access: ProjectAccess;
  /** the viewer's own membership in the project (permissions.project_access) */
  projectMemberLevel: number | null;
  /** the viewer's highest membership in the project's group or its ancestors (permissions.group_access) */
  groupMemberLevel: number | null;
  /** how many projects were forked from this one */
  forksCount: number;
  /** a fork (its source may be gone) */
  isFork: boolean;
  /** a fork's source when the viewer may see it (forked_from_project); views of sources leave it out */
  forkedFrom?: ProjectView;
  /** the project's features open to the viewer (ProjectFeature#feature_available?) */
  openFeatures: ReadonlySet<Feature>;
  /** how many users starred it (star_count) */
  starCount?: number;
  /** the project's import (import_status, import_type, import_error); null when it was not imported */
  importState?: { status: string; import_type: string; import_error: string | null } | null;
}

export const PROJECT_ORDERS = ['id', 'name', 'path', 'created_at', 'updated_at', 'last_activity_at', 'similarity', 'star_count'] as const;
/** Orders by repository statistics: administrators only (there are no statistics yet: all sizes are 0). */
export const STATISTICS_ORDERS = ['storage_size', 'repository_size', 'wiki_size', 'packages_size'] as const;
export type ProjectOrder = (typeof PROJECT_ORDERS)[number] | (typeof STATISTICS_ORDERS)[number];

export interface ProjectFilters {
  archived?: boolean;
  visibility?: string;
  search?: string;
  search_namespaces?: boolean;
  owned?: boolean;
  starred?: boolean;
  imported?: boolean;
  membership?: boolean;
  with_issues_enabled?: boolean;
  with_merge_requests_enabled?: boolean;
  with_programming_language?: string;
  min_access_level?: number;
  id_after?: number;
  id_before?: number;
  last_activity_after?: string;
  last_activity_before?: string;
  updated_after?: string;
  updated_before?: string;
  repository_storage?: string;
  topic?: string[];
  topic_id?: number;
  order_by: ProjectOrder;
  sort: 'asc' | 'desc';
}

/** Where the projects of a list live: everywhere, some namespaces (a group's), or one namespace. */
export type ProjectScope =
  | { kind: 'all' }
  /** everywhere but the private projects: Explore leaves them out even for their members */
  | { kind: 'explore' }
  | { kind: 'group'; group: NamespaceRow; includeSubgroups: boolean; includeAncestors: boolean }
  | { kind: 'namespace'; namespaceId: number }
  /** the direct forks of a project (ForkProjectsFinder) */
  | { kind: 'forks'; projectId: number }
  /** the projects a user starred (StarredProjectsFinder) */
  | { kind: 'starred'; userId: number };

type ProjectsQB = SelectQueryBuilder<Database, 'projects', ProjectRow>;
type EB = ExpressionBuilder<Database, 'projects'>;

// Literal conditions (SQLite cannot bind booleans).
const NEVER = sql<SqlBool>`1 = 0`;

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (ch) => '\\' + ch);
/** case-insensitive "contains" on any SQL expression */
const ciLike = (expr: Expression<unknown>, needle: string) => sql<SqlBool>`lower(${expr}) like ${'%' + likeEscape(needle.toLowerCase()) + '%'} escape '\\'`;
const ciIs = (expr: Expression<unknown>, value: string) => sql<SqlBool>`lower(${expr}) = ${value.toLowerCase()}`;

/**
 * SQLite: the projects that may match a search of `terms` (each of 3+ characters) from the search indexes
 * (migration 033), null where they cannot answer. With the namespaces, the first column searched is the
 * namespace's full path, '/' and the project's path: a term lies in the full path, in the path (which holds no
 * '/'), or across the '/' between them — then its part after its last '/' begins the path and its part before
 * it ends the full path. One term suffices to name the candidates (every term must match); the first that the
 * indexes can answer for is taken.
 */
function projectsSearchIndex(terms: string[], withNamespaces: boolean): Expression<SqlBool> | null {
  if (!withNamespaces) return inSearchIndex('projects.id', 'projects', ['path', 'name', 'description'], terms);
  const others = searchMatch('projects', ['name', 'description'], terms);
  if (others === null) return null;
  const long = (s: string) => [...s].length >= 3;
  for (const t of terms) {
    // the term in the full path; or in the path or across the '/', found by its part after its last '/' in the
    // path (the whole term when it has no '/') or else by its part before it in the full path
    const slash = t.lastIndexOf('/');
    const after = t.slice(slash + 1);
    const before = t.slice(0, Math.max(0, slash));
    const fullPaths = [t];
    const paths: string[] = [];
    if (long(after)) paths.push(after);
    else if (slash >= 0 && long(before)) fullPaths.push(before);
    else continue;
    const inProjects = [others, ...paths.map((p) => searchMatch('projects', ['path'], [p]))].join(' OR ');
    const inNamespaces = fullPaths.map((p) => searchMatch('namespaces', ['full_path'], [p])).join(' OR ');
    return sql<SqlBool>`projects.id in (${searchIndexIds('projects', inProjects)}
      union select p.id from "projects" as "p" where p.namespace_id in (${searchIndexIds('namespaces', inNamespaces)}))`;
  }
  return null;
}

/** Gitlab::SQL::Pattern.split_query_to_search_terms: words, and "quoted phrases" as one term. */
export function searchTerms(query: string): string[] {
  const quoted: string[] = [];
  const rest = query.replace(/"(.*?)"/g, (_m, phrase: string) => {
    quoted.push(phrase);
    return '';
  });
  return [...rest.split(/\s+/).filter(Boolean), ...quoted];
}

/** The tables a membership set is read from: a write to any of them reads the set anew. */
const MEMBER_SET_TABLES = ['members', 'namespaces', 'projects'] as const;
/** Ids a membership condition names inline before it becomes a subquery */
const INLINE_IDS = 2_000;
interface MemberSet {
  projectIds: number[];
  namespaceIds: number[];
  namespaceQuery: (db: Db['kysely']) => SelectQueryBuilder<Database, 'namespaces', { id: number }>;
}
/** Per database, user and level, for the table versions read (shared by every list of every request; a few seconds at most). */
const memberSets = new WeakMap<Db, VersionedCache<MemberSet>>();

/** SQL: a membership of `userId` of at least `minLevel` that has not expired. */
const liveMembership =
  (userId: number, minLevel: number) =>
  (eb: ExpressionBuilder<Database, 'members'>): Expression<SqlBool> =>
    eb.and([eb('members.user_id', '=', userId), eb('members.access_level', '>=', minLevel), unexpired(eb, todayDate())]);

export class ProjectsQuery {
  constructor(
    private readonly db: Db,
    private readonly policy: Policy,
  ) {}

  /**
   * SQL: the projects where `userId` is a member of at least `minLevel` — directly, through a group
   * or one of its ancestors, or as the owner of the personal namespace. The memberships are read first
   * (a handful of rows): the condition then names the projects and the namespaces (the personal one and
   * every group under a membership, found by ranges of the traversal index) by id, so that no list joins
   * memberships for each row it reads. The sets are kept per user and level while the tables they come
   * from do not change (`MEMBER_SET_TABLES`); past `INLINE_IDS` ids the condition is a subquery instead.
   */
  async memberProjects(userId: number, minLevel = 10): Promise<(eb: EB) => Expression<SqlBool>> {
    const key = `${userId}:${minLevel}`;
    const st = stamp(await readVersions(this.db), MEMBER_SET_TABLES);
    let cache = memberSets.get(this.db);
    if (!cache) memberSets.set(this.db, (cache = new VersionedCache<MemberSet>(5000, 5000)));
    let set = cache.get(key, st);
    if (!set) {
      set = await this.readMemberSet(userId, minLevel);
      cache.set(key, st, set);
    }
    const { projectIds, namespaceIds } = set;
    if (projectIds.length > INLINE_IDS || namespaceIds.length > INLINE_IDS) {
      const k = this.db.kysely;
      const direct = k
        .selectFrom('members')
        .select('members.source_id as id')
        .where('members.source_type', '=', 'Project')
        .where(liveMembership(userId, minLevel));
      const inNamespaces = k.selectFrom('projects as gp').select('gp.id as id').where('gp.namespace_id', 'in', set.namespaceQuery(k));
      return (eb) => eb('projects.id', 'in', direct.union(inNamespaces));
    }
    return (eb) => {
      const ors: Expression<SqlBool>[] = [];
      if (projectIds.length) ors.push(eb('projects.id', 'in', projectIds));
      if (namespaceIds.length) ors.push(eb('projects.namespace_id', 'in', namespaceIds));
      return ors.length ? eb.or(ors) : NEVER;
    };
  }

  /**
   * SQL: the project is in `group` or one of its subgroups. The subtree's namespaces are read first (an
   * index range) and named by id: the planners estimate a range of paths at thousands of namespaces and
   * would read every project; past `INLINE_IDS` the range is a subquery.
   */
  async inGroupSubtree(group: Pick<NamespaceRow, 'traversal_ids'>): Promise<(eb: EB) => Expression<SqlBool>> {
    const subtree = this.db.kysely.selectFrom('namespaces as sub').select('sub.id').where(inSubtree('sub.traversal_ids', group.traversal_ids));
    const ids = (await subtree.limit(INLINE_IDS + 1).execute()).map((r) => r.id);
    if (ids.length > INLINE_IDS) return (eb) => eb('projects.namespace_id', 'in', subtree);
    return (eb) => eb('projects.namespace_id', 'in', ids);
  }

  private async readMemberSet(userId: number, minLevel: number): Promise<MemberSet> {
    const k = this.db.kysely;
    const live = liveMembership(userId, minLevel);
    const [groups, direct] = await Promise.all([
      k
        .selectFrom('members')
        .innerJoin('namespaces', 'namespaces.id', 'members.source_id')
        .select('namespaces.traversal_ids')
        .where('members.source_type', '=', 'Namespace')
        .where(live)
        .execute(),
      k.selectFrom('members').select('members.source_id as id').where('members.source_type', '=', 'Project').where(live).orderBy('members.source_id').execute(),
    ]);
    const prefixes = outermost(groups.map((g) => g.traversal_ids));
    const namespaceQuery = (db: typeof k) =>
      db
        .selectFrom('namespaces')
        .select('namespaces.id')
        .where((eb) =>
          eb.or([
            eb.and([eb('namespaces.owner_id', '=', userId), eb('namespaces.type', '=', 'User')]),
            ...prefixes.map((p) => inSubtree('namespaces.traversal_ids', p)),
          ]),
        );
    const namespaces = await namespaceQuery(k)
      .orderBy('namespaces.id')
      .limit(INLINE_IDS + 1)
      .execute();
    return { projectIds: [...new Set(direct.map((d) => d.id))], namespaceIds: namespaces.map((n) => n.id), namespaceQuery };
  }

  /**
   * SQL: what `actor` may see: visibleProjectsWhere, as Policy.visibleProjects, with the faster
   * membership set (read only for a signed-in non-administrator, the one caller that uses it).
   */
  async visible(actor: Actor): Promise<ProjectsWhere> {
    const user = actor.user;
    const mine = user && !actor.isAdmin ? await this.memberProjects(user.id) : () => NEVER;
    return visibleProjectsWhere(actor, mine);
  }

  /**
   * ProjectsFinder / GroupProjectsFinder: the projects of `scope` that `actor` may see, filtered and
   * ordered as GitLab does (the order always ends with the id, so pages are stable).
   */
  async list(actor: Actor, scope: ProjectScope, f: ProjectFilters): Promise<ProjectsQB> {
    const k = this.db.kysely;
    let q: ProjectsQB = k.selectFrom('projects').selectAll('projects');
    const user = actor.user;

    if (scope.kind === 'namespace') q = q.where('projects.namespace_id', '=', scope.namespaceId);
    if (scope.kind === 'explore') q = q.where('projects.visibility', '!=', 'private');
    if (scope.kind === 'forks') {
      const forks = k.selectFrom('project_forks').select('project_forks.project_id').where('project_forks.forked_from_project_id', '=', scope.projectId);
      q = q.where('projects.id', 'in', forks);
    }
    if (scope.kind === 'group') {
      const g = scope.group;
      const ids = scope.includeAncestors ? traversalIds(g) : [g.id];
      if (scope.includeSubgroups) {
        const subtree = await this.inGroupSubtree(g);
        q = q.where((eb) => eb.or([eb('projects.namespace_id', 'in', ids), subtree(eb)]));
      } else {
        q = q.where('projects.namespace_id', 'in', ids);
      }
    }

    // Who: owned, min_access_level and membership narrow to the viewer's memberships (nothing for
    // anonymous callers); otherwise everything the viewer may see.
    const similarity = f.order_by === 'similarity' && !!f.search && !!user;
    if (f.owned || f.min_access_level !== undefined || f.membership || similarity) {
      if (!user) return q.where(NEVER);
      const min = f.owned ? 50 : (f.min_access_level ?? 10);
      q = q.where(await this.memberProjects(user.id, min));
    } else {
      q = q.where(await this.visible(actor));
    }

    if (f.archived !== undefined) q = q.where('projects.archived', '=', f.archived ? 1 : 0);
    if (f.visibility) q = q.where('projects.visibility', '=', f.visibility);
    if (f.search && f.search.trim()) q = q.where(this.searchCondition(f.search, !!f.search_namespaces));
    // Stars: the caller's own with starred=true, a user's with the 'starred' scope.
    for (const starrer of [f.starred && user ? user.id : undefined, scope.kind === 'starred' ? scope.userId : undefined])
      if (starrer !== undefined)
        q = q.where(
          'projects.id',
          'in',
          k.selectFrom('users_star_projects').select('users_star_projects.project_id').where('users_star_projects.user_id', '=', starrer),
        );
    // Imports, repository languages and topic ids do not exist here yet: those filters match nothing.
    if ((f.imported && user) || f.with_programming_language || f.topic_id !== undefined) q = q.where(NEVER);
    if (f.with_issues_enabled) {
      q = q.where(sql<SqlBool>`projects.settings not like '%"issues_access_level":"disabled"%'`);
      // Private issues are for members (and administrators).
      if (!actor.isAdmin) {
        const mine = user ? await this.memberProjects(user.id) : () => NEVER;
        q = q.where((eb) => eb.or([sql<SqlBool>`projects.settings not like '%"issues_access_level":"private"%'`, mine(eb)]));
      }
    }
    if (f.with_merge_requests_enabled) q = q.where(sql<SqlBool>`projects.settings not like '%"merge_requests_access_level":"disabled"%'`);
    if (f.id_after !== undefined) q = q.where('projects.id', '>', f.id_after);
    if (f.id_before !== undefined) q = q.where('projects.id', '<', f.id_before);
    if (f.last_activity_after) q = q.where('projects.last_activity_at', '>', f.last_activity_after);
    if (f.last_activity_before) q = q.where('projects.last_activity_at', '<', f.last_activity_before);
    if (f.updated_after) q = q.where('projects.updated_at', '>', f.updated_after);
    if (f.updated_before) q = q.where('projects.updated_at', '<', f.updated_before);
    if (f.repository_storage && actor.isAdmin) q = q.where('projects.repository_storage', '=', f.repository_storage);
    for (const topic of f.topic ?? []) {
      const t = topic.trim();
      if (t) q = q.where(sql<SqlBool>`lower(projects.topics) like ${'%' + likeEscape(JSON.stringify(t.toLowerCase())) + '%'} escape '\\'`);
    }
    return this.order(q, actor, f);
  }

  /**
   * Project.search: every term (of 3+ characters) in the path, the name or the description. On SQLite the
   * projects come from the search indexes first when they can answer, and the LIKE tests each of them.
   */
  private searchCondition(search: string, withNamespaces: boolean): (eb: EB) => Expression<SqlBool> {
    const terms = searchTerms(search.trim()).filter((t) => t.length >= 3);
    const indexed = this.db.dialect === 'sqlite' && terms.length ? projectsSearchIndex(terms, withNamespaces) : null;
    return (eb) => {
      const fullPath = sql`(select n.full_path from namespaces n where n.id = projects.namespace_id) || '/' || projects.path`;
      const columns: Expression<unknown>[] = [withNamespaces ? fullPath : sql.ref('projects.path'), sql.ref('projects.name'), sql.ref('projects.description')];
      // No term is long enough for a partial match: the whole query must match exactly (any case).
      if (!terms.length) return eb.or(columns.map((col) => ciIs(col, search.trim())));
      const like = eb.or(columns.map((col) => eb.and(terms.map((t) => ciLike(col, t)))));
      return indexed ? eb.and([indexed, like]) : like;
    };
  }

  private order(q: ProjectsQB, actor: Actor, f: ProjectFilters): ProjectsQB {
    const dir = f.sort;
    const statistics = (STATISTICS_ORDERS as readonly string[]).includes(f.order_by);
    let by = (statistics ? (actor.isAdmin ? 'id' : 'created_at') : f.order_by) as (typeof PROJECT_ORDERS)[number];
    if (by === 'similarity') {
      if (f.search && actor.user) {
        const s = f.search.trim().toLowerCase();
        const score = sql<number>`(case when lower(projects.path) = ${s} then 10 when lower(projects.name) = ${s} then 7
          when lower(projects.path) like ${likeEscape(s) + '%'} escape '\\' then 5 when lower(projects.name) like ${likeEscape(s) + '%'} escape '\\' then 3 else 0 end)`;
        return q.orderBy(score, 'desc').orderBy('projects.id', 'desc');
      }
      by = 'created_at';
    }
    if (by === 'id') return q.orderBy('projects.id', dir);
    if (by === 'star_count') {
      const stars = sql<number>`(select count(*) from users_star_projects s where s.project_id = projects.id)`;
      return q.orderBy(stars, dir).orderBy('projects.id', dir);
    }
    return q.orderBy(`projects.${by}`, dir).orderBy('projects.id', dir);
  }

  /**
   * The views of a page of projects: a fixed number of queries whatever the page size (namespaces,
   * owners, memberships, fork links and counts, then the same for the sources of the forks).
   * `withSources: false` leaves out the forks' sources (the views of those sources themselves).
   */
  async views(actor: Actor, projects: ProjectRow[], opts: { withSources?: boolean } = {}): Promise<ProjectView[]> {
    if (!projects.length) return [];
    const k = this.db.kysely;
    const ids = projects.map((p) => p.id);
    const withSources = opts.withSources ?? true;
    const [links, counts] = await Promise.all([
      withSources ? k.selectFrom('project_forks').select(['project_id', 'forked_from_project_id']).where('project_id', 'in', ids).execute() : [],
      k
        .selectFrom('project_forks')
        .select(['forked_from_project_id', (eb) => eb.fn.countAll<number>().as('n')])
        .where('forked_from_project_id', 'in', ids)
        .groupBy('forked_from_project_id')
        .execute(),
    ]);
    const forksCount = new Map(counts.map((c) => [c.forked_from_project_id!, Number(c.n)]));
    const stars = new Map(
      (
        await k
          .selectFrom('users_star_projects')
          .select(['project_id', (eb) => eb.fn.countAll<number>().as('n')])
          .where('project_id', 'in', ids)
          .groupBy('project_id')
          .execute()
      ).map((r) => [r.project_id, Number(r.n)]),
    );
    const imports = new Map(
      (await k.selectFrom('project_imports').select(['project_id', 'status', 'import_type', 'import_error']).where('project_id', 'in', ids).execute()).map(
        ({ project_id, ...state }) => [project_id, state],
      ),
    );
    const sourceOf = new Map(links.map((l) => [l.project_id, l.forked_from_project_id]));
    const sourceIds = [...new Set(links.flatMap((l) => (l.forked_from_project_id === null ? [] : [l.forked_from_project_id])))];
    const sources = new Map<number, ProjectView>();
    if (sourceIds.length) {
      const rows = await k.selectFrom('projects').selectAll().where('id', 'in', sourceIds).execute();
      for (const v of await this.views(actor, rows, { withSources: false })) if (v.access.abilities.has('read_project')) sources.set(v.project.id, v);
    }
    const namespaces = new Map<number, NamespaceRow>();
    for (const ns of await k
      .selectFrom('namespaces')
      .selectAll()
      .where('id', 'in', [...new Set(projects.map((p) => p.namespace_id))])
      .execute())
      namespaces.set(ns.id, ns);
    const names = new Map<number, string>();
    for (const ns of namespaces.values()) names.set(ns.id, ns.name);
    const groupIds = new Set<number>();
    for (const ns of namespaces.values()) if (ns.type === 'Group') for (const id of traversalIds(ns)) groupIds.add(id);
    const missing = [...groupIds].filter((id) => !names.has(id));
    const ownerIds = [...namespaces.values()].flatMap((ns) => (ns.type === 'User' && ns.owner_id !== null ? [ns.owner_id] : []));
    const userId = actor.user?.id;
    const [ancestors, owners, memberships] = await Promise.all([
      missing.length ? k.selectFrom('namespaces').select(['id', 'name']).where('id', 'in', missing).execute() : [],
      ownerIds.length
        ? k
            .selectFrom('users')
            .select([...BASIC_COLUMNS])
            .where('users.id', 'in', [...new Set(ownerIds)])
            .execute()
        : [],
      userId === undefined ? [] : this.policy.memberships(userId, { projectIds: projects.map((p) => p.id), groupIds: [...groupIds] }),
    ]);
    for (const a of ancestors) names.set(a.id, a.name);
    const ownersById = new Map(owners.map((u) => [u.id, u]));
    const memberOf = new Map<string, { level: number; permissions: string | null }>();
    for (const m of memberships) memberOf.set(`${m.source_type}:${m.source_id}`, { level: m.access_level, permissions: m.permissions });

    // Projects with the same membership, visibility and archived state give the same answer.
    const answers = new Map<string, Promise<ProjectAccess>>();
    const out: ProjectView[] = [];
    for (const project of projects) {
      const namespace = namespaces.get(project.namespace_id)!;
      const owner = namespace.type === 'User' && namespace.owner_id !== null ? (ownersById.get(namespace.owner_id) ?? null) : null;
      const projectMember = memberOf.get(`Project:${project.id}`);
      const groupMembers = namespace.type === 'Group' ? traversalIds(namespace).flatMap((id) => memberOf.get(`Namespace:${id}`) ?? []) : [];
      const membership: Membership = { level: 0, directLevel: projectMember?.level ?? 0, permissions: new Set() };
      for (const m of projectMember ? [projectMember, ...groupMembers] : groupMembers) {
        membership.level = Math.max(membership.level, m.level);
        if (m.permissions) for (const [perm, on] of Object.entries(JSON.parse(m.permissions))) if (on) membership.permissions.add(perm as CustomPermission);
      }
      // A personal namespace's owner owns its projects (as Policy.membership says).
      const resolved =
        userId !== undefined && namespace.type === 'User' && namespace.owner_id === userId
          ? { level: 50, directLevel: 0, permissions: new Set<CustomPermission>() }
          : membership;
      const groupLevel = groupMembers.length ? Math.max(...groupMembers.map((m) => m.level)) : null;
      const access = await this.memoAccess(answers, actor, project, namespace, resolved);
      out.push({
        project,
        namespace,
        namespaceFullName:
          namespace.type === 'User'
            ? (owner?.name ?? namespace.name)
            : traversalIds(namespace)
                .map((id) => names.get(id) ?? '')
                .join(' / '),
        owner,
        access,
        openFeatures: openFeatures(actor, project, access),
        projectMemberLevel: projectMember?.level ?? null,
        groupMemberLevel: groupLevel,
        forksCount: forksCount.get(project.id) ?? 0,
        starCount: stars.get(project.id) ?? 0,
        isFork: sourceOf.has(project.id),
        importState: imports.get(project.id) ?? null,
        ...(withSources && sources.has(sourceOf.get(project.id) ?? -1) ? { forkedFrom: sources.get(sourceOf.get(project.id)!)! } : {}),
      });
    }
    return out;
  }

  private memoAccess(
    answers: Map<string, Promise<ProjectAccess>>,
    actor: Actor,
    project: ProjectRow,
    namespace: NamespaceRow,
    m: Membership,
  ): Promise<ProjectAccess> {
    const key = `${m.level}:${m.directLevel}:${[...m.permissions].sort().join(',')}:${project.visibility}:${project.archived}`;
    let answer = answers.get(key);
    if (!answer) answers.set(key, (answer = this.accessWith(actor, project, namespace, m)));
    return answer;
  }

  /**
   * The policy's answer for a membership already loaded: the policy decides abilities from the
   * membership it looks up, so it is asked through a view of itself that returns this one instead
   * (one members query for a whole page rather than one per project).
   */
  private accessWith(actor: Actor, project: ProjectRow, namespace: NamespaceRow, membership: Membership): Promise<ProjectAccess> {
    const known: Policy = Object.create(this.policy, { membership: { value: async () => membership } });
    return known.project(actor, project, namespace);
  }
}
