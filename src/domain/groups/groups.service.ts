// Groups with subgroups (GitLab's lib/api/groups.rb, app/finders/groups_finder.rb and
// app/services/groups/{create,update,destroy}_service.rb): who sees which groups, and the writes with
// their model validation, path history (redirect_routes) and system events, each in one transaction.
import { sql, type Kysely, type SelectQueryBuilder, type SqlBool, type ExpressionBuilder, type Expression } from 'kysely';
import type { Db } from '../../db/connect.ts';
import type { Database, NamespaceRow, ProjectRow } from '../../db/schema.ts';
import { ciContains, ciEquals, inSearchIndex, inSubtree, inSubtreeOf, isUniqueViolation } from '../../db/sql.ts';
import { DomainError, Errors } from '../../lib/errors.ts';
import { decodeCursor, encodeCursor } from '../../lib/pagination.ts';
import { nowIso, todayDate } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import { Policy, type GroupAccess } from '../access/policy.ts';
import type { Resolver } from '../access/resolve.ts';
import { openLevels, restrictedFor } from '../access/visibility.ts';
import { levelOf } from '../core/visibility-levels.ts';
import { groupPayload, groupMemberPayload, projectPayload, recordSystemEvent } from '../core/system-events.ts';
import { deleteWebHooksOf } from '../core/web-hook-rows.ts';
import type { SettingsService } from '../settings/settings.service.ts';
import { rubyInspect, validateDescription, validateName, validatePath, type FieldErrors } from '../core/group-rules.ts';
import { GROUP_SETTING_KEYS, type GroupSettings } from '../core/group-settings.ts';
import { projectOwners } from '../projects/project-owners.ts';
import { deleteProjectRows, removeRepositories } from '../projects/project-destroy.ts';
import { deleteResourceBots } from '../core/resource-bots.ts';
import type { RepositoryStore } from '../../git/storage.ts';

export const GROUP_ORDER_COLUMNS = ['name', 'path', 'id', 'similarity'] as const;
export type GroupOrderColumn = (typeof GROUP_ORDER_COLUMNS)[number];

export interface GroupListParams {
  search?: string;
  owned?: boolean;
  min_access_level?: number;
  all_available?: boolean;
  top_level_only?: boolean;
  visibility?: string;
  skip_groups?: number[];
  order_by: GroupOrderColumn;
  sort: 'asc' | 'desc';
  /** subgroups of this group (direct children, or every descendant with `descendants`) */
  parent?: NamespaceRow;
  descendants?: boolean;
  /** Explore's list: no private groups, not even the viewer's own */
  explore?: boolean;
}

/** Attributes of POST and PUT /groups (Grape has validated their types and values). */
export interface GroupInput extends Partial<GroupSettings> {
  name?: string;
  path?: string;
  parent_id?: number;
  description?: string;
  visibility?: string;
  project_creation_level?: string;
  subgroup_creation_level?: string;
  request_access_enabled?: boolean;
  share_with_group_lock?: boolean;
  emails_disabled?: boolean;
}

type GroupQuery = SelectQueryBuilder<Database, 'namespaces', NamespaceRow>;

const OWNER = 50;

/** Columns of the namespaces table a write may set (the rest of GroupInput goes to settings). */
const COLUMN_KEYS = ['name', 'path', 'description', 'visibility', 'project_creation_level', 'subgroup_creation_level'] as const;

export class GroupsService {
  constructor(
    private readonly db: Db,
    private readonly settings: SettingsService,
    private readonly policy: Policy,
    private readonly resolve: Resolver,
    private readonly repos: RepositoryStore,
  ) {}

  /** The group `actor` may see (404 Group Not Found otherwise; MovedError for an old path). */
  find(actor: Actor, idOrPath: string | number) {
    return this.resolve.group(actor, idOrPath);
  }

  // ---- lists -------------------------------------------------------------------------------

  /**
   * GroupsFinder as lib/api/groups.rb calls it: `all_available` defaults to true only for
   * administrators, so signed-in users list the groups they belong to (with the ancestors and
   * descendants that membership makes visible) unless they ask for all_available; anonymous callers
   * always get the public groups.
   */
  async listQuery(actor: Actor, p: GroupListParams): Promise<GroupQuery> {
    const user = actor.user;
    const allAvailable = p.all_available ?? actor.isAdmin;
    let q: GroupQuery = this.db.kysely.selectFrom('namespaces').selectAll().where('namespaces.type', '=', 'Group');

    if (p.owned) {
      q = user ? q.where('namespaces.id', 'in', this.directGroupIds(user.id, OWNER, true)) : q.where(sql<SqlBool>`1 = 0`);
    } else if (p.min_access_level !== undefined && user) {
      // groups where the user's own membership reaches the level, and their descendants
      const mine = this.directGroupIds(user.id, p.min_access_level, false);
      q = q.where((eb) =>
        eb.exists(eb.selectFrom('namespaces as m').select('m.id').where('m.id', 'in', mine).where(inSubtreeOf('namespaces.traversal_ids', 'm.traversal_ids'))),
      );
    } else if (!(actor.isAdmin && allAvailable)) {
      const mine = user ? await this.policy.memberGroups(user.id) : null;
      q = q.where((eb) => {
        const ors: Expression<SqlBool>[] = [];
        if (mine) ors.push(mine(eb));
        // Group.public_to_user: internal groups for signed-in users who are not external
        if (!user || allAvailable) ors.push(eb('namespaces.visibility', 'in', openLevels(actor)));
        return eb.or(ors);
      });
    }

    if (p.top_level_only) q = q.where('namespaces.parent_id', 'is', null);
    else if (p.parent && p.descendants) {
      q = q.where(inSubtree('namespaces.traversal_ids', p.parent.traversal_ids)).where('namespaces.id', '!=', p.parent.id);
    } else if (p.parent) q = q.where('namespaces.parent_id', '=', p.parent.id);

    if (p.search) {
      const s = p.search;
      const d = this.db.dialect;
      const like = (eb: ExpressionBuilder<Database, 'namespaces'>) =>
        eb.or([ciContains(d, 'namespaces.name', s), ciContains(d, 'namespaces.path', s), ciContains(d, 'namespaces.full_path', s)]);
      // SQLite: the groups its search index finds (3 characters or more), each tested by the LIKE
      const indexed = d === 'sqlite' ? inSearchIndex('namespaces.id', 'namespaces', ['name', 'path', 'full_path'], [s]) : null;
      q = q.where((eb) => (indexed ? eb.and([indexed, like(eb)]) : like(eb)));
    }
    if (p.visibility) q = q.where('namespaces.visibility', '=', p.visibility);
    if (p.explore) q = q.where('namespaces.visibility', '!=', 'private');
    if (p.skip_groups?.length) q = q.where('namespaces.id', 'not in', p.skip_groups);
    return orderGroups(q, p.order_by, p.sort);
  }

  /** Ids of groups where `userId` is a direct, unexpired member at `level` (`exact`) or above it. */
  private directGroupIds(userId: number, level: number, exact: boolean) {
    const today = todayDate();
    return this.db.kysely
      .selectFrom('members')
      .select('members.source_id')
      .where('members.source_type', '=', 'Namespace')
      .where('members.user_id', '=', userId)
      .where('members.access_level', exact ? '=' : '>=', level)
      .where((eb) => eb.or([eb('members.expires_at', 'is', null), eb('members.expires_at', '>', today)]));
  }

  /** `full_name` of each group ("Top / Sub"): the names of its ancestors, one query for a whole page. */
  async fullNames(groups: NamespaceRow[]): Promise<Map<number, string>> {
    const names = new Map<number, string>(groups.map((g) => [g.id, g.name]));
    const missing = new Set<number>();
    for (const g of groups) for (const id of ancestorIds(g)) if (!names.has(id)) missing.add(id);
    if (missing.size) {
      const rows = await this.db.kysely
        .selectFrom('namespaces')
        .select(['id', 'name'])
        .where('id', 'in', [...missing])
        .execute();
      for (const r of rows) names.set(r.id, r.name);
    }
    const out = new Map<number, string>();
    for (const g of groups) out.set(g.id, [...ancestorIds(g), g.id].map((id) => names.get(id) ?? '').join(' / '));
    return out;
  }

  // ---- create ------------------------------------------------------------------------------

  async create(actor: Actor, input: GroupInput & { name: string; path: string }): Promise<NamespaceRow> {
    const user = actor.user!;
    const settings = await this.settings.get();
    let parent: NamespaceRow | null = null;
    if (input.parent_id !== undefined) {
      const found = await this.resolve.group(actor, input.parent_id);
      Policy.require(found.access, 'create_subgroup', 'Group', 'read_group');
      parent = found.group;
    } else if (!actor.isAdmin && !(settings.can_create_group && user.can_create_group === 1)) {
      throw Errors.forbidden();
    }

    // Groups::CreateService#valid?: the restricted levels come before the model's validation.
    const visibility = input.visibility ?? settings.default_group_visibility;
    if (restrictedFor(settings, actor, visibility)) {
      throw failedToSave({ visibility_level: [`${visibility} has been restricted by your GitLab administrator`] });
    }

    const errors: FieldErrors = {};
    validateName(input.name, errors);
    if (parent && (await this.siblingNameTaken(parent.id, input.name))) (errors.name ??= []).push('has already been taken');
    validateDescription(input.description ?? '', errors);
    validatePath(input.path, !parent, errors);
    const fullPath = parent ? `${parent.full_path}/${input.path}` : input.path;
    if (!errors.path && (await this.pathTaken(fullPath, parent, null))) (errors.path ??= []).push('has already been taken');
    if (parent && levelOf(visibility) > levelOf(parent.visibility)) {
      (errors.visibility_level ??= []).push(`${visibility} is not allowed since the parent group has a ${parent.visibility} visibility.`);
    }
    if (Object.keys(errors).length) throw failedToSave(errors);

    const extra = this.settingsFrom(input, actor, settings.group_owners_can_manage_default_branch_protection, true);
    const now = nowIso();
    try {
      return await this.db.kysely.transaction().execute(async (trx) => {
        const inserted = await trx
          .insertInto('namespaces')
          .values({
            type: 'Group',
            name: input.name,
            path: input.path,
            full_path: fullPath,
            parent_id: parent?.id ?? null,
            traversal_ids: '',
            owner_id: null,
            visibility,
            description: input.description ?? '',
            avatar_url: null,
            request_access_enabled: input.request_access_enabled === false ? 0 : 1,
            project_creation_level: input.project_creation_level ?? 'developer',
            subgroup_creation_level: input.subgroup_creation_level ?? 'maintainer',
            share_with_group_lock: input.share_with_group_lock ? 1 : 0,
            settings: JSON.stringify(extra),
            created_by_id: user.id,
            created_at: now,
            updated_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        const group = await trx
          .updateTable('namespaces')
          .set({ traversal_ids: `${parent ? parent.traversal_ids : '/'}${inserted.id}/` })
          .where('id', '=', inserted.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        // The new path wins over old paths that redirected elsewhere.
        await deleteRedirectsUnder(trx, fullPath);
        const member = await trx
          .insertInto('members')
          .values({
            source_type: 'Namespace',
            source_id: group.id,
            user_id: user.id,
            access_level: OWNER,
            expires_at: null,
            member_role_id: null,
            created_by_id: null,
            created_at: now,
            updated_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        await recordSystemEvent(trx, groupPayload('group_create', group));
        await recordSystemEvent(trx, groupMemberPayload('user_add_to_group', member, group, user));
        return group;
      });
    } catch (err) {
      // Another request took the path between the check and the insert.
      if (isUniqueViolation(err)) throw failedToSave({ path: ['has already been taken'] });
      throw err;
    }
  }

  // ---- update ------------------------------------------------------------------------------

  async update(actor: Actor, idOrPath: string | number, input: GroupInput): Promise<{ group: NamespaceRow; access: GroupAccess }> {
    const { group, access } = await this.resolve.group(actor, idOrPath);
    Policy.require(access, 'admin_group', 'Group', 'read_group');
    const settings = await this.settings.get();

    // Groups::UpdateService#valid_visibility_level_change?
    const visibility = input.visibility;
    if (visibility !== undefined && visibility !== group.visibility && restrictedFor(settings, actor, visibility)) {
      throw Errors.invalid({ visibility_level: [`${visibility} has been restricted by your GitLab administrator`] });
    }

    const parent = group.parent_id === null ? null : (await this.resolve.namespaceById(group.parent_id))!;
    const errors: FieldErrors = {};
    if (input.name !== undefined && input.name !== group.name) {
      validateName(input.name, errors);
      if (parent && (await this.siblingNameTaken(parent.id, input.name, group.id))) (errors.name ??= []).push('has already been taken');
    }
    if (input.description !== undefined) validateDescription(input.description, errors);
    const path = input.path ?? group.path;
    const fullPath = parent ? `${parent.full_path}/${path}` : path;
    if (path !== group.path) {
      validatePath(path, !parent, errors);
      if (!errors.path && (await this.pathTaken(fullPath, parent, group.id))) (errors.path ??= []).push('has already been taken');
    }
    if (visibility !== undefined && visibility !== group.visibility) {
      const level = levelOf(visibility);
      const msgs: string[] = [];
      if (await this.hasMoreOpen('projects', group.id, level))
        msgs.push(`${visibility} is not allowed since this group contains projects with higher visibility.`);
      if (await this.hasMoreOpen('namespaces', group.id, level)) msgs.push(`${visibility} is not allowed since there are sub-groups with higher visibility.`);
      if (parent && level > levelOf(parent.visibility)) msgs.push(`${visibility} is not allowed since the parent group has a ${parent.visibility} visibility.`);
      if (msgs.length) errors.visibility_level = msgs;
    }
    if (Object.keys(errors).length) throw Errors.invalid(errors);

    const changes: Record<string, unknown> = {};
    for (const k of COLUMN_KEYS) if (input[k] !== undefined) changes[k] = input[k];
    if (input.request_access_enabled !== undefined) changes.request_access_enabled = input.request_access_enabled ? 1 : 0;
    if (input.share_with_group_lock !== undefined) changes.share_with_group_lock = input.share_with_group_lock ? 1 : 0;
    const extra = this.settingsFrom(input, actor, settings.group_owners_can_manage_default_branch_protection, false);
    if (Object.keys(extra).length) changes.settings = JSON.stringify({ ...JSON.parse(group.settings || '{}'), ...extra });
    const renamed = path !== group.path;
    if (renamed) changes.full_path = fullPath;
    const now = nowIso();
    changes.updated_at = now;

    try {
      const updated = await this.db.kysely.transaction().execute(async (trx) => {
        if (renamed) await movePaths(trx, group, fullPath, now);
        const row = await trx.updateTable('namespaces').set(changes).where('id', '=', group.id).returningAll().executeTakeFirstOrThrow();
        if (renamed) await recordSystemEvent(trx, groupPayload('group_rename', row, { path: group.path, full_path: group.full_path }));
        return row;
      });
      return { group: updated, access };
    } catch (err) {
      if (isUniqueViolation(err)) throw Errors.invalid({ path: ['has already been taken'] });
      throw err;
    }
  }

  // ---- transfer ----------------------------------------------------------------------------

  /**
   * POST /groups/:id/transfer (Groups::TransferService): under `parentIdOrPath`, or to the top level
   * without one. Paths of the group, its subgroups and their projects change and the old ones keep
   * redirecting; repositories are addressed by id, so nothing moves on disk. Refusals are 400
   * "Transfer failed: …" with GitLab's messages, checked in GitLab's order. GitLab sends no system
   * hook for a transfer (the group's own `path` does not change).
   */
  async transfer(actor: Actor, idOrPath: string | number, parentIdOrPath: number | undefined): Promise<{ group: NamespaceRow; access: GroupAccess }> {
    const { group, access } = await this.resolve.group(actor, idOrPath);
    Policy.require(access, 'admin_group', 'Group', 'read_group');
    const found = parentIdOrPath === undefined ? null : await this.resolve.group(actor, parentIdOrPath);
    const parent = found?.group ?? null;
    const fail = (message: string) => Errors.refused(`Transfer failed: ${message}`);

    if (!parent && group.parent_id === null) throw fail('Group is already a root group.');
    if (parent && parent.id === group.parent_id) throw fail('Group is already associated to the parent group.');
    const settings = await this.settings.get();
    const allowed = parent
      ? found!.access.abilities.has('create_subgroup')
      : actor.isAdmin || (settings.can_create_group && actor.user!.can_create_group === 1);
    if (!allowed) throw fail("You don't have enough permissions.");
    if (await this.pathTakenIn(parent, group)) throw fail('The parent group already has a subgroup or a project with the same path.');
    if (parent && parent.traversal_ids.startsWith(group.traversal_ids)) throw fail('Cannot transfer group to one of its subgroup.');
    if (parent && (await this.siblingNameTaken(parent.id, group.name))) throw fail('Validation failed: Name has already been taken');

    const now = nowIso();
    const newFullPath = parent ? `${parent.full_path}/${group.path}` : group.path;
    const newTraversal = `${parent ? parent.traversal_ids : '/'}${group.id}/`;
    const lower = parent && levelOf(parent.visibility) < levelOf(group.visibility) ? parent.visibility : null;
    try {
      const moved = await this.db.kysely.transaction().execute(async (trx) => {
        const below = group.traversal_ids;
        if (lower) {
          // update_children_and_projects_visibility: nothing below stays more open than the new parent
          const more = (['internal', 'public'] as const).filter((v) => levelOf(v) > levelOf(lower));
          await trx
            .updateTable('namespaces')
            .set({ visibility: lower, updated_at: now })
            .where(inSubtree('traversal_ids', below))
            .where('visibility', 'in', more)
            .execute();
          await trx
            .updateTable('projects')
            .set({ visibility: lower, updated_at: now })
            .where('namespace_id', 'in', (eb) => eb.selectFrom('namespaces').select('id').where(inSubtree('traversal_ids', below)))
            .where('visibility', 'in', more)
            .execute();
        }
        await movePaths(trx, group, newFullPath, now);
        await trx
          .updateTable('namespaces')
          .set({ traversal_ids: sql<string>`${newTraversal} || substr(traversal_ids, ${group.traversal_ids.length + 1})` })
          .where(inSubtree('traversal_ids', below))
          .execute();
        const row = await trx
          .updateTable('namespaces')
          .set({ parent_id: parent?.id ?? null, full_path: newFullPath, updated_at: now })
          .where('id', '=', group.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        // ensure_ownership: a group made top level without an Owner gets the one who moved it
        if (!parent) {
          const owner = await trx
            .selectFrom('members')
            .select('id')
            .where('source_type', '=', 'Namespace')
            .where('source_id', '=', group.id)
            .where('access_level', '=', OWNER)
            .executeTakeFirst();
          if (!owner)
            await trx
              .insertInto('members')
              .values({
                source_type: 'Namespace',
                source_id: group.id,
                user_id: actor.user!.id,
                access_level: OWNER,
                expires_at: null,
                member_role_id: null,
                created_by_id: actor.user!.id,
                created_at: now,
                updated_at: now,
              })
              .execute();
        }
        return row;
      });
      return { group: moved, access: await this.policy.group(actor, moved) };
    } catch (err) {
      if (isUniqueViolation(err)) throw fail('The parent group already has a subgroup or a project with the same path.');
      throw err;
    }
  }

  /** namespace_with_same_path?: a namespace (or, below a group, a project) with the group's path where it goes. */
  private async pathTakenIn(parent: NamespaceRow | null, group: NamespaceRow): Promise<boolean> {
    const k = this.db.kysely;
    let q = k.selectFrom('namespaces').select('id').where(ciEquals('path', group.path)).where('id', '!=', group.id);
    q = parent ? q.where('parent_id', '=', parent.id) : q.where('parent_id', 'is', null);
    if (await q.executeTakeFirst()) return true;
    if (!parent) return false;
    return !!(await k.selectFrom('projects').select('id').where('namespace_id', '=', parent.id).where(ciEquals('path', group.path)).executeTakeFirst());
  }

  // ---- delete ------------------------------------------------------------------------------

  /** Groups::DestroyService: the projects, the subgroups (depth first), then the group; events for each. */
  async remove(actor: Actor, idOrPath: string | number): Promise<void> {
    const { group, access } = await this.resolve.group(actor, idOrPath);
    Policy.require(access, 'remove_group', 'Group', 'read_group');

    let deleted: ProjectRow[] = [];
    await this.db.kysely.transaction().execute(async (trx) => {
      const groups = await trx.selectFrom('namespaces').selectAll().where(inSubtree('traversal_ids', group.traversal_ids)).orderBy('id').execute();
      const groupIds = groups.map((g) => g.id);
      const projects = await trx.selectFrom('projects').selectAll().where('namespace_id', 'in', groupIds).orderBy('id').execute();

      const children = new Map<number, NamespaceRow[]>();
      for (const g of groups) if (g.parent_id !== null) children.set(g.parent_id, [...(children.get(g.parent_id) ?? []), g]);
      const projectsOf = new Map<number, ProjectRow[]>();
      for (const p of projects) projectsOf.set(p.namespace_id, [...(projectsOf.get(p.namespace_id) ?? []), p]);
      const visit = async (g: NamespaceRow): Promise<void> => {
        for (const p of projectsOf.get(g.id) ?? []) await recordSystemEvent(trx, projectPayload('project_destroy', p, g, await projectOwners(trx, p, g)));
        for (const child of children.get(g.id) ?? []) await visit(child);
        await recordSystemEvent(trx, groupPayload('group_destroy', g));
      };
      await visit(groups.find((g) => g.id === group.id)!);

      await deleteProjectRows(trx, projects);
      deleted = projects;
      await deleteResourceBots(trx, 'Namespace', groupIds);
      await trx.deleteFrom('members').where('source_type', '=', 'Namespace').where('source_id', 'in', groupIds).execute();
      await trx.deleteFrom('redirect_routes').where('source_type', '=', 'Namespace').where('source_id', 'in', groupIds).execute();
      await trx.deleteFrom('member_roles').where('namespace_id', 'in', groupIds).execute();
      await deleteWebHooksOf(trx, { groupIds });
      await trx.deleteFrom('namespaces').where('id', 'in', groupIds).execute();
    });
    removeRepositories(this.repos, deleted);
  }

  // ---- validation helpers ------------------------------------------------------------------

  /** A namespace (group or user) or, below a group, a project already has this path. */
  private async pathTaken(fullPath: string, parent: NamespaceRow | null, selfId: number | null): Promise<boolean> {
    let q = this.db.kysely.selectFrom('namespaces').select('id').where(ciEquals('full_path', fullPath));
    if (selfId !== null) q = q.where('id', '!=', selfId);
    if (await q.executeTakeFirst()) return true;
    if (!parent) return false;
    const path = fullPath.slice(parent.full_path.length + 1);
    return !!(await this.db.kysely.selectFrom('projects').select('id').where('namespace_id', '=', parent.id).where(ciEquals('path', path)).executeTakeFirst());
  }

  /** Subgroup names are unique within their parent. */
  private async siblingNameTaken(parentId: number, name: string, selfId?: number): Promise<boolean> {
    let q = this.db.kysely.selectFrom('namespaces').select('id').where('parent_id', '=', parentId).where('name', '=', name);
    if (selfId !== undefined) q = q.where('id', '!=', selfId);
    return !!(await q.executeTakeFirst());
  }

  /** A direct project or subgroup more open than `level`. */
  private async hasMoreOpen(table: 'projects' | 'namespaces', groupId: number, level: number): Promise<boolean> {
    const more = (['internal', 'public'] as const).filter((v) => levelOf(v) > level);
    if (!more.length) return false;
    const row =
      table === 'projects'
        ? await this.db.kysely.selectFrom('projects').select('id').where('namespace_id', '=', groupId).where('visibility', 'in', more).executeTakeFirst()
        : await this.db.kysely.selectFrom('namespaces').select('id').where('parent_id', '=', groupId).where('visibility', 'in', more).executeTakeFirst();
    return !!row;
  }

  /**
   * The settings-JSON part of the input. Like the services: default branch protection only when the
   * caller may set it, math rendering limits and the update-only settings not on create.
   */
  private settingsFrom(input: GroupInput, actor: Actor, ownersManageProtection: boolean, creating: boolean): Partial<GroupSettings> {
    const out: Record<string, unknown> = {};
    for (const k of GROUP_SETTING_KEYS) if (input[k] !== undefined) out[k] = input[k];
    if (input.emails_disabled !== undefined && input.emails_enabled === undefined) out.emails_enabled = !input.emails_disabled;
    if (!actor.isAdmin && !ownersManageProtection) {
      delete out.default_branch_protection;
      delete out.default_branch_protection_defaults;
    }
    if (creating) {
      for (const k of ['math_rendering_limits_enabled', 'lock_math_rendering_limits_enabled', 'prevent_sharing_groups_outside_hierarchy', 'max_artifacts_size'])
        delete out[k];
    }
    return out as Partial<GroupSettings>;
  }
}

// ---- helpers -----------------------------------------------------------------------------------

/** "/1/5/9/" of group 9 → [1, 5] */
export function ancestorIds(g: Pick<NamespaceRow, 'traversal_ids' | 'id'>): number[] {
  return g.traversal_ids
    .split('/')
    .filter(Boolean)
    .map(Number)
    .filter((id) => id !== g.id);
}

/**
 * POST /groups renders the model's errors inside a string (lib/api/groups.rb): a refusal with that message.
 * The field errors stay on the error (`fields`, not rendered by the API) for the web form to list them.
 */
export class GroupSaveError extends DomainError {
  readonly fields: FieldErrors;
  constructor(fields: FieldErrors) {
    super('refused', 400, `Failed to save group ${rubyInspect(fields)}`);
    this.fields = fields;
  }
}

export function failedToSave(errors: FieldErrors): GroupSaveError {
  return new GroupSaveError(errors);
}

/** order_by (similarity orders by name, as without a search) with `id asc` as the tie-breaker. */
export function orderGroups(q: GroupQuery, orderBy: GroupOrderColumn, sort: 'asc' | 'desc'): GroupQuery {
  const column = orderBy === 'similarity' ? 'name' : orderBy;
  q = q.orderBy(`namespaces.${column}`, sort);
  return column === 'id' ? q : q.orderBy('namespaces.id', 'asc');
}

/** Redirects at `path` or below it: a real path now lives there (Route#delete_conflicting_redirects). */
async function deleteRedirectsUnder(trx: Kysely<Database>, path: string): Promise<void> {
  const lower = path.toLowerCase();
  const below = `${lower.replace(/[\\%_]/g, (ch) => '\\' + ch)}/%`;
  await trx.deleteFrom('redirect_routes').where(sql<SqlBool>`(lower(path) = ${lower} or lower(path) like ${below} escape '\\')`).execute();
}

/**
 * A rename: every namespace below the group takes the new prefix, and the old full paths of the group,
 * its subgroups and their projects keep redirecting (Route#rename_descendants, #create_redirect).
 */
async function movePaths(trx: Kysely<Database>, group: NamespaceRow, newFullPath: string, now: string): Promise<void> {
  const oldFullPath = group.full_path;
  const namespaces = await trx.selectFrom('namespaces').select(['id', 'full_path']).where(inSubtree('traversal_ids', group.traversal_ids)).execute();
  const projects = await trx
    .selectFrom('projects')
    .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
    .select(['projects.id', 'projects.path', 'namespaces.full_path'])
    .where(inSubtree('namespaces.traversal_ids', group.traversal_ids))
    .execute();

  await deleteRedirectsUnder(trx, newFullPath);
  await trx
    .updateTable('namespaces')
    .set({ full_path: sql<string>`${newFullPath} || substr(full_path, ${oldFullPath.length + 1})`, updated_at: now })
    .where(inSubtree('traversal_ids', group.traversal_ids))
    .where('id', '!=', group.id)
    .execute();

  // A change of case only: the old path is still the group's own.
  if (oldFullPath.toLowerCase() === newFullPath.toLowerCase()) return;
  const redirects = [
    ...namespaces.map((n) => ({ source_type: 'Namespace' as const, source_id: n.id, path: n.full_path, created_at: now })),
    ...projects.map((p) => ({ source_type: 'Project' as const, source_id: p.id, path: `${p.full_path}/${p.path}`, created_at: now })),
  ];
  for (let i = 0; i < redirects.length; i += 500) {
    const lower = redirects.slice(i, i + 500).map((r) => r.path.toLowerCase());
    await trx
      .deleteFrom('redirect_routes')
      .where((eb) => eb(eb.fn('lower', ['path']), 'in', lower))
      .execute();
  }
  for (let i = 0; i < redirects.length; i += 500)
    await trx
      .insertInto('redirect_routes')
      .values(redirects.slice(i, i + 500))
      .execute();
}

// ---- keyset cursors (order_by=name, sort=asc: reference §1.3) -----------------------------------

export function groupCursor(row: Pick<NamespaceRow, 'name' | 'id'>): string {
  return encodeCursor({ name: row.name, id: row.id });
}

export function afterGroupCursor(q: GroupQuery, cursor: string): GroupQuery | null {
  const at = decodeCursor(cursor);
  if (!at || typeof at.name !== 'string' || typeof at.id !== 'number') return null;
  const { name, id } = at as { name: string; id: number };
  return q.where((eb: ExpressionBuilder<Database, 'namespaces'>) =>
    eb.or([eb('namespaces.name', '>', name), eb.and([eb('namespaces.name', '=', name), eb('namespaces.id', '>', id)])]),
  );
}
