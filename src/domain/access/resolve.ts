// `:id` of a project or group — an integer or a URL-encoded full path — to the row, checked against
// what the actor may see: invisible is a plain 404 with the resource name. Old paths of renamed or
// moved resources are reported as `moved` (the route answers 301 on GET, 405 otherwise).
import type { Db } from '../../db/connect.ts';
import type { NamespaceRow, ProjectRow } from '../../db/schema.ts';
import { ciEquals, isInt32 } from '../../db/sql.ts';
import { readVersions, stamp } from '../../db/versions.ts';
import { DomainError, Errors } from '../../lib/errors.ts';
import { VersionedCache } from '../../lib/versioned-cache.ts';
import { actorKey, type Actor } from './actor.ts';
import type { GroupAccess, Policy, ProjectAccess } from './policy.ts';

export interface ResolvedProject {
  project: ProjectRow;
  namespace: NamespaceRow;
  access: ProjectAccess;
}
export interface ResolvedGroup {
  group: NamespaceRow;
  access: GroupAccess;
}

/** Thrown when the path names a project or group that has moved; the route turns it into 301 / 405. */
export class MovedError extends DomainError {
  constructor(
    readonly fullPath: string,
    readonly resource: 'Project' | 'Group',
  ) {
    super('raw', 301, null);
  }
}

/** A numeric `:id` (one beyond the id column's range names nothing: GitLab's find_by gives nil). */
const isId = (s: string) => /^\d+$/.test(s);

/** Every table a resolution reads (rows, memberships, custom roles, the user's own flags, old paths). */
export const RESOLVE_TABLES = [
  'projects',
  'namespaces',
  'members',
  'member_roles',
  'users',
  'redirect_routes',
  // a job actor's access follows the target's job token scope
  'project_ci_cd_settings',
  'ci_job_token_project_scope_links',
  'ci_job_token_group_scope_links',
] as const;

/**
 * Successful resolutions are cached per actor and `:id`, valid for the table versions they were
 * read at (any write, on any node, makes them miss) and a few seconds (membership expiry is a date).
 * Entries are shared between requests, so they are frozen.
 */
export class Resolver {
  private readonly projects = new VersionedCache<ResolvedProject>(5000, 5000);
  private readonly groups = new VersionedCache<ResolvedGroup>(5000, 5000);

  constructor(
    private readonly db: Db,
    private readonly policy: Policy,
  ) {}

  async namespaceById(id: number): Promise<NamespaceRow | undefined> {
    return this.db.kysely.selectFrom('namespaces').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The project row by id or full path, without access checks (undefined when missing). */
  async findProjectRow(idOrPath: string | number): Promise<{ project: ProjectRow; namespace: NamespaceRow } | { moved: string } | undefined> {
    const key = String(idOrPath);
    if (isId(key)) {
      if (!isInt32(Number(key))) return undefined;
      const project = await this.db.kysely.selectFrom('projects').selectAll().where('id', '=', Number(key)).executeTakeFirst();
      if (!project) return undefined;
      return { project, namespace: (await this.namespaceById(project.namespace_id))! };
    }
    const slash = key.lastIndexOf('/');
    if (slash > 0) {
      const ns = await this.db.kysely
        .selectFrom('namespaces')
        .selectAll()
        .where(ciEquals('full_path', key.slice(0, slash)))
        .executeTakeFirst();
      if (ns) {
        const project = await this.db.kysely
          .selectFrom('projects')
          .selectAll()
          .where('namespace_id', '=', ns.id)
          .where(ciEquals('path', key.slice(slash + 1)))
          .executeTakeFirst();
        if (project) return { project, namespace: ns };
      }
    }
    const redirect = await this.db.kysely
      .selectFrom('redirect_routes')
      .selectAll()
      .where('source_type', '=', 'Project')
      .where(ciEquals('path', key))
      .executeTakeFirst();
    if (redirect) {
      const found = await this.findProjectRow(redirect.source_id);
      if (found && 'project' in found) return { moved: `${found.namespace.full_path}/${found.project.path}` };
    }
    return undefined;
  }

  /** The project the actor may see, or 404 Project Not Found; MovedError for an old path. */
  async project(actor: Actor, idOrPath: string | number): Promise<ResolvedProject> {
    return this.cached(this.projects, actor, idOrPath, () => this.resolveProject(actor, idOrPath));
  }

  private async cached<T extends object>(cache: VersionedCache<T>, actor: Actor, idOrPath: string | number, resolve: () => Promise<T>): Promise<T> {
    const key = `${actorKey(actor)}|${idOrPath}`;
    const st = stamp(await readVersions(this.db), RESOLVE_TABLES);
    const hit = cache.get(key, st);
    if (hit) return hit;
    const resolved = freeze(await resolve());
    cache.set(key, st, resolved);
    return resolved;
  }

  private async resolveProject(actor: Actor, idOrPath: string | number): Promise<ResolvedProject> {
    const found = await this.findProjectRow(idOrPath);
    if (!found) throw Errors.notFound('Project');
    if ('moved' in found) {
      // Only say it moved to someone who may see it.
      const target = await this.findProjectRow(found.moved);
      if (target && 'project' in target) {
        const access = await this.policy.project(actor, target.project, target.namespace);
        if (access.abilities.has('read_project')) throw new MovedError(found.moved, 'Project');
      }
      throw Errors.notFound('Project');
    }
    const access = await this.policy.project(actor, found.project, found.namespace);
    if (!access.abilities.has('read_project')) throw Errors.notFound('Project');
    return { ...found, access };
  }

  async findGroupRow(idOrPath: string | number): Promise<NamespaceRow | { moved: string } | undefined> {
    const key = String(idOrPath);
    if (isId(key) && !isInt32(Number(key))) return undefined;
    const q = this.db.kysely.selectFrom('namespaces').selectAll().where('type', '=', 'Group');
    const group = isId(key) ? await q.where('id', '=', Number(key)).executeTakeFirst() : await q.where(ciEquals('full_path', key)).executeTakeFirst();
    if (group) return group;
    if (isId(key)) return undefined;
    const redirect = await this.db.kysely
      .selectFrom('redirect_routes')
      .selectAll()
      .where('source_type', '=', 'Namespace')
      .where(ciEquals('path', key))
      .executeTakeFirst();
    if (redirect) {
      const target = await this.namespaceById(redirect.source_id);
      if (target && target.type === 'Group') return { moved: target.full_path };
    }
    return undefined;
  }

  /** The group the actor may see, or 404 Group Not Found. */
  async group(actor: Actor, idOrPath: string | number): Promise<ResolvedGroup> {
    return this.cached(this.groups, actor, idOrPath, () => this.resolveGroup(actor, idOrPath));
  }

  private async resolveGroup(actor: Actor, idOrPath: string | number): Promise<ResolvedGroup> {
    const found = await this.findGroupRow(idOrPath);
    if (!found) throw Errors.notFound('Group');
    if ('moved' in found) {
      const target = (await this.findGroupRow(found.moved)) as NamespaceRow;
      const access = await this.policy.group(actor, target);
      if (access.abilities.has('read_group')) throw new MovedError(found.moved, 'Group');
      throw Errors.notFound('Group');
    }
    const access = await this.policy.group(actor, found);
    if (!access.abilities.has('read_group')) throw Errors.notFound('Group');
    return { group: found, access };
  }
}

function freeze<T extends object>(resolved: T): T {
  for (const v of Object.values(resolved)) if (v && typeof v === 'object') Object.freeze(v);
  return Object.freeze(resolved);
}
