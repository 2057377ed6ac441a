// Namespaces (GitLab lib/api/namespaces.rb): the personal namespaces and groups a user belongs to (all
// of them for administrators), one namespace by id or path, and whether a path is free with a
// suggestion when it is not. Also the groups of a project (Projects::GroupsFinder).
import { sql, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../db/connect.ts';
import type { Database, NamespaceRow, ProjectRow } from '../../db/schema.ts';
import { ciEquals, inSubtree, isInt32 } from '../../db/sql.ts';
import { Errors } from '../../lib/errors.ts';
import { todayDate } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import { type Policy, traversalIds, unexpired } from '../access/policy.ts';
import { fuzzyAny } from '../users/users-query.ts';

type NamespaceQuery = SelectQueryBuilder<Database, 'namespaces', NamespaceRow>;

export interface NamespaceListParams {
  search?: string;
  owned_only?: boolean;
  top_level_only?: boolean;
  full_path_search?: boolean;
}

/** What the Namespace entity adds for a group its viewer administers (members_count_with_descendants …). */
export interface NamespaceAdminCounts {
  membersCountWithDescendants: number;
  projectsCount: number;
}

export interface NamespaceView {
  namespace: NamespaceRow;
  /** the owner's avatar for a personal namespace */
  ownerAvatarUrl: string | null;
  /** present for groups the viewer may administer */
  admin?: NamespaceAdminCounts;
}

export interface ProjectGroupsParams {
  search?: string;
  skip_groups?: number[];
  with_shared?: boolean;
  shared_visible_only?: boolean;
  shared_min_access_level?: number;
}

const OWNER = 50;

/** Gitlab::Slug::Path#generate */
export function slugPath(input: string): string {
  let slug = input.replace(/@.*$/s, '').replace(/[^a-zA-Z0-9_\-.]/g, '');
  for (;;) {
    const orig = slug;
    for (const ext of ['.git', '.atom', '.']) if (slug.endsWith(ext)) slug = slug.slice(0, -ext.length);
    if (orig === slug) break;
  }
  slug = slug.replace(/^-+/, '');
  return slug.trim() ? slug : 'blank';
}

export class NamespacesService {
  constructor(
    private readonly db: Db,
    private readonly policy: Policy,
  ) {}

  /**
   * GET /namespaces: administrators see every namespace; others their personal namespace and the
   * groups they are a direct member of (owned_only: as Owner). Ordered by id.
   */
  listQuery(actor: Actor, p: NamespaceListParams): NamespaceQuery {
    const user = actor.user!;
    let q: NamespaceQuery = this.db.kysely.selectFrom('namespaces').selectAll();
    if (!actor.isAdmin) {
      const today = todayDate();
      const groups = this.db.kysely
        .selectFrom('members')
        .select('members.source_id')
        .where('members.source_type', '=', 'Namespace')
        .where('members.user_id', '=', user.id)
        .where('members.access_level', p.owned_only ? '=' : '>=', p.owned_only ? OWNER : 10)
        .where((eb) => unexpired(eb, today));
      q = q.where((eb) =>
        eb.or([
          eb.and([eb('namespaces.type', '=', 'User'), eb('namespaces.owner_id', '=', user.id)]),
          eb.and([eb('namespaces.type', '=', 'Group'), eb('namespaces.id', 'in', groups)]),
        ]),
      );
    }
    if (p.top_level_only) q = q.where('namespaces.parent_id', 'is', null);
    const search = p.search?.trim();
    if (search) {
      // Namespace.search: name or path; with full_path_search the route's path and name (full path, full name).
      q = p.full_path_search
        ? q.where(sql<SqlBool>`(${fuzzyAny(this.db.dialect, 'namespaces', ['full_path', 'name'], search)})`)
        : q.where(sql<SqlBool>`(${fuzzyAny(this.db.dialect, 'namespaces', ['name', 'path'], search)})`);
    }
    return q.orderBy('namespaces.id', 'asc');
  }

  /** find_namespace!: an id or a full path; only what the caller reaches through membership (404 Namespace Not Found). */
  async find(actor: Actor, idOrPath: string): Promise<NamespaceRow> {
    const k = this.db.kysely.selectFrom('namespaces').selectAll();
    const isId = /^\d+$/.test(idOrPath);
    const ns = isId
      ? isInt32(Number(idOrPath))
        ? await k.where('id', '=', Number(idOrPath)).executeTakeFirst()
        : undefined
      : await k.where(ciEquals('full_path', idOrPath)).executeTakeFirst();
    if (ns && (await this.readableViaMembership(actor, ns))) return ns;
    throw Errors.notFound('Namespace');
  }

  /** read_namespace_via_membership: administrators, the owner of a personal namespace, members of a group (inherited too). */
  private async readableViaMembership(actor: Actor, ns: NamespaceRow): Promise<boolean> {
    if (actor.isAdmin) return true;
    const user = actor.user;
    if (!user) return false;
    if (ns.type === 'User') return ns.owner_id === user.id;
    return (await this.policy.membership(user.id, { namespace: ns })).level >= 10;
  }

  /** The entity's inputs for a page of namespaces: owners' avatars, and the counts of groups the viewer administers. */
  async views(actor: Actor, rows: NamespaceRow[]): Promise<NamespaceView[]> {
    const k = this.db.kysely;
    const ownerIds = rows.flatMap((r) => (r.type === 'User' && r.owner_id !== null ? [r.owner_id] : []));
    const avatars = new Map<number, string | null>();
    if (ownerIds.length) {
      for (const u of await k.selectFrom('users').select(['id', 'avatar_url']).where('id', 'in', ownerIds).execute()) avatars.set(u.id, u.avatar_url);
    }
    const out: NamespaceView[] = [];
    for (const ns of rows) {
      const view: NamespaceView = { namespace: ns, ownerAvatarUrl: ns.owner_id !== null ? (avatars.get(ns.owner_id) ?? null) : null };
      if (ns.type === 'Group' && (await this.policy.group(actor, ns)).abilities.has('admin_group')) view.admin = await this.adminCounts(ns);
      out.push(view);
    }
    return out;
  }

  /** users_with_descendants.count and all_projects.count of a group. */
  private async adminCounts(group: NamespaceRow): Promise<NamespaceAdminCounts> {
    const k = this.db.kysely;
    const below = (eb: any) => eb.selectFrom('namespaces').select('id').where(inSubtree('traversal_ids', group.traversal_ids));
    const today = todayDate();
    const [members, projects] = await Promise.all([
      k
        .selectFrom('members')
        .select((eb) => eb.fn.count<number>('members.user_id').distinct().as('n'))
        .where('members.source_type', '=', 'Namespace')
        .where('members.source_id', 'in', below)
        .where((eb) => unexpired(eb, today))
        .executeTakeFirstOrThrow(),
      k
        .selectFrom('projects')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('projects.namespace_id', 'in', below)
        .executeTakeFirstOrThrow(),
    ]);
    return { membersCountWithDescendants: Number(members.n), projectsCount: Number(projects.n) };
  }

  /**
   * GET /namespaces/:id/exists: a namespace with this path (any case) under `parentId` (top level
   * without one); when taken, GitLab's suggestion — the path cleaned, then a number appended until it
   * is neither the path nor the name of a namespace there.
   */
  async exists(path: string, parentId: number | undefined): Promise<{ exists: boolean; suggests: string[] }> {
    const scope = () => {
      const q = this.db.kysely.selectFrom('namespaces').select('id');
      if (parentId === undefined) return q.where('parent_id', 'is', null);
      return isInt32(parentId) ? q.where('parent_id', '=', parentId) : q.where(sql<SqlBool>`1 = 0`);
    };
    const exists = !!(await scope().where(ciEquals('path', path)).executeTakeFirst());
    if (!exists) return { exists, suggests: [] };
    const base = slugPath(path);
    const taken = async (s: string) =>
      !!(await scope()
        .where((eb) => eb.or([ciEquals('path', s), ciEquals('name', s)]))
        .executeTakeFirst());
    let candidate = base;
    for (let n = 1; await taken(candidate); n++) candidate = `${base}${n}`;
    return { exists, suggests: [candidate] };
  }

  /**
   * GET /projects/:id/groups (Projects::GroupsFinder): the project's group and its ancestors, newest
   * id first. Hearth has no project–group sharing, so with_shared adds nothing.
   */
  projectGroupsQuery(project: ProjectRow, namespace: NamespaceRow, p: ProjectGroupsParams): NamespaceQuery {
    void project;
    const ids = namespace.type === 'Group' ? traversalIds(namespace) : [];
    let q: NamespaceQuery = this.db.kysely.selectFrom('namespaces').selectAll().where('namespaces.type', '=', 'Group');
    q = ids.length ? q.where('namespaces.id', 'in', ids) : q.where(sql<SqlBool>`1 = 0`);
    const skip = (p.skip_groups ?? []).filter(isInt32);
    if (skip.length) q = q.where('namespaces.id', 'not in', skip);
    const search = p.search?.trim();
    if (search) q = q.where(sql<SqlBool>`(${fuzzyAny(this.db.dialect, 'namespaces', ['name', 'path'], search)})`);
    return q.orderBy('namespaces.id', 'desc');
  }
}
