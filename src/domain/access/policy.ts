// The one place that decides who may see or do what: from the actor (anonymous, user, admin, job,
// runner), its memberships with inheritance, custom roles, visibility and external users. Token scopes
// are checked per route by the auth plugin; blocked users never get this far (403 at authentication).
import { inSubtree, inSubtreeOf } from '../../db/sql.ts';
import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../db/connect.ts';
import type { Database, NamespaceRow, ProjectRow } from '../../db/schema.ts';
import { Errors } from '../../lib/errors.ts';
import { todayDate } from '../../lib/time.ts';
import type { Actor } from './actor.ts';
import {
  CUSTOM_PERMISSION_ABILITIES,
  GROUP_LEVEL_ABILITIES,
  PROJECT_LEVEL_ABILITIES,
  PROJECT_WRITE_ABILITIES,
  levelAbilities,
  type CustomPermission,
  type GroupAbility,
  type ProjectAbility,
} from '../core/roles.ts';
import { openLevels, openTo, visibleProjectsWhere, type ProjectsWhere } from './visibility.ts';
import { jobProjectId, jobTokenAllows } from './job-token-scope.ts';

export interface Membership {
  /** highest effective level (0 = none) */
  level: number;
  /** level from a membership in this very resource (0 = none) */
  directLevel: number;
  /** custom permissions from the member roles of the memberships that apply */
  permissions: Set<CustomPermission>;
}

export interface ProjectAccess extends Membership {
  abilities: Set<ProjectAbility>;
}
export interface GroupAccess extends Membership {
  abilities: Set<GroupAbility>;
}

/** "/1/5/9/" → [1, 5, 9] */
export function traversalIds(ns: Pick<NamespaceRow, 'traversal_ids'>): number[] {
  return ns.traversal_ids.split('/').filter(Boolean).map(Number);
}

const NONE: Membership = { level: 0, directLevel: 0, permissions: new Set() };

/** A membership row as the policy reads it: where, at which level, with which custom role's permissions (JSON). */
export interface MembershipRow {
  source_type: string;
  source_id: number;
  access_level: number;
  permissions: string | null;
}

/** SQL: the membership has not expired (no `expires_at`, or one after today: it ends on that day). */
export function unexpired(eb: ExpressionBuilder<Database, 'members'>, today = todayDate()): Expression<SqlBool> {
  return eb.or([eb('members.expires_at', 'is', null), eb('members.expires_at', '>', today)]);
}

export class Policy {
  constructor(private readonly db: Db) {}

  /** Memberships of `userId` in the project (direct) and every ancestor group (inherited). */
  async membership(userId: number, target: { project?: ProjectRow; namespace: NamespaceRow }): Promise<Membership> {
    const ns = target.namespace;
    if (ns.type === 'User') {
      // Personal namespace: its owner owns everything in it; others only by project membership.
      if (ns.owner_id === userId) return { level: 50, directLevel: target.project ? 0 : 50, permissions: new Set() };
    }
    const groupIds = ns.type === 'Group' ? traversalIds(ns) : [];
    const rows = await this.memberships(userId, { projectIds: target.project ? [target.project.id] : [], groupIds });
    if (!rows.length) return NONE;
    const m: Membership = { level: 0, directLevel: 0, permissions: new Set() };
    const directType = target.project ? 'Project' : 'Namespace';
    const directId = target.project ? target.project.id : ns.id;
    for (const r of rows) {
      m.level = Math.max(m.level, r.access_level);
      if (r.source_type === directType && r.source_id === directId) m.directLevel = Math.max(m.directLevel, r.access_level);
      if (r.permissions) for (const [p, on] of Object.entries(JSON.parse(r.permissions))) if (on) m.permissions.add(p as CustomPermission);
    }
    return m;
  }

  /**
   * The unexpired memberships of `userId` in these projects and groups, with their custom roles'
   * permissions: one query, for one resource (membership) or for a page of projects (ProjectsQuery.views).
   * `groupIds: 'all'`: every group membership of the user (when the groups are not known yet).
   */
  async memberships(userId: number, on: { projectIds: readonly number[]; groupIds: readonly number[] | 'all' }): Promise<MembershipRow[]> {
    if (!on.projectIds.length && !on.groupIds.length) return [];
    const groupIds = on.groupIds;
    const today = todayDate();
    return this.db.kysely
      .selectFrom('members')
      .leftJoin('member_roles', 'member_roles.id', 'members.member_role_id')
      .select(['members.source_type', 'members.source_id', 'members.access_level', 'member_roles.permissions'])
      .where('members.user_id', '=', userId)
      .where((eb) => unexpired(eb, today))
      .where((eb) => {
        const ors: Expression<SqlBool>[] = [];
        if (on.projectIds.length) ors.push(eb.and([eb('members.source_type', '=', 'Project'), eb('members.source_id', 'in', on.projectIds)]));
        if (groupIds === 'all') ors.push(eb('members.source_type', '=', 'Namespace'));
        else if (groupIds.length) ors.push(eb.and([eb('members.source_type', '=', 'Namespace'), eb('members.source_id', 'in', groupIds)]));
        return eb.or(ors);
      })
      .execute();
  }

  /** Everything `actor` may do in `project` (an empty set: the project is invisible to them). */
  async project(actor: Actor, project: ProjectRow, namespace: NamespaceRow): Promise<ProjectAccess> {
    const user = actor.user;
    // a job token outside the project's inbound scope gets nothing there (ProjectPolicy prevents every
    // ability, public projects included: public_access and public_user_access are prevented too)
    if (actor.kind === 'job' && actor.jobId !== null) {
      const origin = await jobProjectId(this.db, actor.jobId);
      if (origin === undefined || !(await jobTokenAllows(this.db, origin, project))) return { ...NONE, permissions: new Set(), abilities: new Set() };
    }
    const m = user ? await this.membership(user.id, { project, namespace }) : NONE;
    const abilities = new Set<ProjectAbility>();
    if (actor.isAdmin) {
      for (const l of Object.values(PROJECT_LEVEL_ABILITIES)) for (const a of l) abilities.add(a);
    } else {
      for (const a of levelAbilities(PROJECT_LEVEL_ABILITIES, m.level)) abilities.add(a);
      for (const p of m.permissions) for (const a of CUSTOM_PERMISSION_ABILITIES[p].project) abilities.add(a);
      if (m.permissions.size && m.level > 0) abilities.add('read_project');
      // Visibility: public projects to everyone, internal ones to signed-in people who are not external.
      if (openTo(actor, project.visibility)) {
        abilities.add('read_project');
        abilities.add('read_code');
        abilities.add('read_merge_request');
        abilities.add('read_issue');
        if (user) abilities.add('read_project_member');
        // anyone signed in may open an issue where they can read the issues (GuestPolicy of public projects)
        if (user) abilities.add('create_issue');
      }
    }
    if (project.archived) for (const a of PROJECT_WRITE_ABILITIES) abilities.delete(a);
    return { ...m, abilities };
  }

  async group(actor: Actor, group: NamespaceRow): Promise<GroupAccess> {
    const user = actor.user;
    const m = user ? await this.membership(user.id, { namespace: group }) : NONE;
    const abilities = new Set<GroupAbility>();
    if (actor.isAdmin) {
      for (const l of Object.values(GROUP_LEVEL_ABILITIES)) for (const a of l) abilities.add(a);
      abilities.add('create_subgroup');
      abilities.add('create_projects');
    } else {
      for (const a of levelAbilities(GROUP_LEVEL_ABILITIES, m.level)) abilities.add(a);
      for (const p of m.permissions) for (const a of CUSTOM_PERMISSION_ABILITIES[p].group) abilities.add(a);
      if (m.level >= (group.subgroup_creation_level === 'owner' ? 50 : 40)) abilities.add('create_subgroup');
      const projectLevel = { noone: Infinity, administrator: Infinity, owner: 50, maintainer: 40, developer: 30 }[group.project_creation_level] ?? 40;
      if (m.level >= projectLevel) abilities.add('create_projects');
      if (openTo(actor, group.visibility)) {
        abilities.add('read_group');
        if (user) abilities.add('read_group_member');
      } else if (!abilities.has('read_group') && user && (await this.hasDescendantAccess(user.id, group))) {
        // A member of a subgroup or project can see the groups above it.
        abilities.add('read_group');
      }
    }
    // admin_member_role stays on subgroups: custom roles live on top-level groups, and the member-roles
    // service answers a subgroup with GitLab's message rather than a bare 403.
    return { ...m, abilities };
  }

  private async hasDescendantAccess(userId: number, group: NamespaceRow): Promise<boolean> {
    const prefix = group.traversal_ids;
    const row = await this.db.kysely
      .selectFrom('members')
      .select('members.id')
      .where('members.user_id', '=', userId)
      .where((eb) =>
        eb.or([
          eb.and([
            eb('members.source_type', '=', 'Namespace'),
            eb('members.source_id', 'in', eb.selectFrom('namespaces').select('id').where(inSubtree('traversal_ids', prefix))),
          ]),
          eb.and([
            eb('members.source_type', '=', 'Project'),
            eb(
              'members.source_id',
              'in',
              eb
                .selectFrom('projects')
                .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
                .select('projects.id')
                .where(inSubtree('namespaces.traversal_ids', prefix)),
            ),
          ]),
        ]),
      )
      .limit(1)
      .executeTakeFirst();
    return !!row;
  }

  /** Throws the API's answer when `ability` is missing: 404 when it cannot even see the resource. */
  static require<A extends string>(access: { abilities: Set<A> }, ability: A, resource: string, readAbility: A, reason?: string): void {
    if (access.abilities.has(ability)) return;
    if (!access.abilities.has(readAbility)) throw Errors.notFound(resource);
    throw Errors.forbidden(reason);
  }

  /** SQL: the projects `actor` may see (for lists): visibleProjectsWhere with memberProjectIds as the membership set. */
  visibleProjects(actor: Actor): ProjectsWhere {
    const user = actor.user;
    return visibleProjectsWhere(actor, (eb) => (user ? eb('projects.id', 'in', this.memberProjectIds(user.id)) : sql<SqlBool>`1 = 0`));
  }

  /** SQL subquery: ids of projects where `userId` has any membership (direct, inherited or personal). */
  memberProjectIds(userId: number, minLevel = 10) {
    const today = todayDate();
    const k = this.db.kysely;
    const live = (eb: ExpressionBuilder<Database, 'members'>) =>
      eb.and([eb('members.user_id', '=', userId), eb('members.access_level', '>=', minLevel), unexpired(eb, today)]);
    const direct = k.selectFrom('members').select('members.source_id as id').where('members.source_type', '=', 'Project').where(live);
    const viaGroups = k
      .selectFrom('projects')
      .innerJoin('namespaces as pn', 'pn.id', 'projects.namespace_id')
      .innerJoin('members', (j) => j.on('members.source_type', '=', 'Namespace'))
      .innerJoin('namespaces as gn', 'gn.id', 'members.source_id')
      .select('projects.id as id')
      .where(live)
      .where(inSubtreeOf('pn.traversal_ids', 'gn.traversal_ids'));
    const personal = k
      .selectFrom('projects')
      .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
      .select('projects.id as id')
      .where('namespaces.owner_id', '=', userId);
    return direct.union(viaGroups).union(personal);
  }

  /** Of these group ids, those `actor` may see, in their order. */
  async visibleGroupIdsAmong(actor: Actor, ids: number[]): Promise<number[]> {
    if (!ids.length || actor.isAdmin) return ids;
    const rows = await this.db.kysely
      .selectFrom('namespaces')
      .select('id')
      .where('id', 'in', ids)
      .where(await this.visibleGroups(actor))
      .execute();
    const ok = new Set(rows.map((r) => r.id));
    return ids.filter((id) => ok.has(id));
  }

  /** SQL: the groups `actor` may see. */
  async visibleGroups(actor: Actor): Promise<(eb: ExpressionBuilder<Database, 'namespaces'>) => Expression<SqlBool>> {
    if (actor.isAdmin) return (eb) => eb('namespaces.type', '=', 'Group');
    const user = actor.user;
    if (!user) return (eb) => eb.and([eb('namespaces.type', '=', 'Group'), eb('namespaces.visibility', '=', 'public')]);
    const levels = openLevels(actor);
    const mine = await this.memberGroups(user.id);
    return (eb) => eb.and([eb('namespaces.type', '=', 'Group'), eb.or([eb('namespaces.visibility', 'in', levels), mine(eb)])]);
  }

  /**
   * SQL: the groups (rows of `namespaces`) where `userId` is a member, their descendants, and the ancestors
   * of the groups and projects they belong to. The user's memberships are read first (a handful of rows):
   * ancestors are then ids and descendants ranges of the traversal index, rather than every group matched
   * against every membership.
   */
  async memberGroups(userId: number, minLevel = 10): Promise<(eb: ExpressionBuilder<Database, 'namespaces'>) => Expression<SqlBool>> {
    const today = todayDate();
    const k = this.db.kysely;
    const [mine, viaProjects] = await Promise.all([
      k
        .selectFrom('members')
        .innerJoin('namespaces as m', (j) => j.onRef('m.id', '=', 'members.source_id').on('members.source_type', '=', 'Namespace'))
        .select('m.traversal_ids')
        .where('members.user_id', '=', userId)
        .where('members.access_level', '>=', minLevel)
        .where((eb) => unexpired(eb, today))
        .execute(),
      k
        .selectFrom('members')
        .innerJoin('projects', (j) => j.onRef('projects.id', '=', 'members.source_id').on('members.source_type', '=', 'Project'))
        .innerJoin('namespaces as pn', 'pn.id', 'projects.namespace_id')
        .select('pn.traversal_ids')
        .where('members.user_id', '=', userId)
        .where('pn.type', '=', 'Group')
        .where((eb) => unexpired(eb, today))
        .execute(),
    ]);
    const ancestors = new Set<number>();
    for (const row of [...mine, ...viaProjects]) for (const id of traversalIds(row)) ancestors.add(id);
    const subtrees = outermost(mine.map((m) => m.traversal_ids));
    if (!ancestors.size) return () => sql<SqlBool>`1 = 0`;
    return (eb) => eb.or([eb('namespaces.id', 'in', [...ancestors]), ...subtrees.map((p) => inSubtree('namespaces.traversal_ids', p))]);
  }
}

/** The traversal paths not inside another of them ('/1/' covers '/1/5/'), each once. */
export function outermost(paths: string[]): string[] {
  const sorted = [...new Set(paths)].sort();
  const out: string[] = [];
  for (const p of sorted) if (!out.length || !p.startsWith(out[out.length - 1])) out.push(p);
  return out;
}
