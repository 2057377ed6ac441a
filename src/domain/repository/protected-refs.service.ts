// Protected branches and protected tags of a project (GitLab lib/api/protected_branches.rb,
// protected_tags.rb, ProtectedBranches::ApiService / CreateService / UpdateService / DestroyService,
// ProtectedTags::CreateService, ProtectedRefs::AccessLevelParams). Every endpoint needs admin_project
// (Maintainers): invisible projects are 404, visible ones 403. A rule's access levels are roles
// (`*_access_level`, `allowed_to_*: [{access_level}]`), users or groups (`allowed_to_*: [{user_id}]`,
// `[{group_id}]`, as GitLab Premium accepts them); a user must be a member of the project, a group
// the project's group or one of its ancestors. Updating or removing a rule with unprotect access
// levels needs one of them (ProtectedBranchPolicy#destroy_protected_branch).
import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { Database, ProtectedBranchRow, ProtectedTagRow } from '../../db/schema.ts';
import { ciContains, isUniqueViolation } from '../../db/sql.ts';
import { Errors } from '../../lib/errors.ts';
import { nowIso } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import { Policy, traversalIds } from '../access/policy.ts';
import type { ResolvedProject } from '../access/resolve.ts';
import type { FeatureDeps } from '../deps.ts';
import { canUnprotect, MAINTAINER, type AccessAction, type AccessEntry } from './branch-protection.ts';

/** One entry of allowed_to_push / allowed_to_merge / allowed_to_unprotect / allowed_to_create. */
export interface AccessInput {
  id?: number;
  access_level?: number;
  user_id?: number;
  group_id?: number;
  _destroy?: boolean;
}

export interface ProtectedBranchInput {
  name: string;
  push_access_level?: number;
  merge_access_level?: number;
  unprotect_access_level?: number;
  allow_force_push?: boolean;
  code_owner_approval_required?: boolean;
  allowed_to_push?: AccessInput[];
  allowed_to_merge?: AccessInput[];
  allowed_to_unprotect?: AccessInput[];
}

export interface ProtectedBranchUpdate {
  allow_force_push?: boolean;
  code_owner_approval_required?: boolean;
  allowed_to_push?: AccessInput[];
  allowed_to_merge?: AccessInput[];
  allowed_to_unprotect?: AccessInput[];
}

export interface ProtectedTagInput {
  name: string;
  create_access_level?: number;
  allowed_to_create?: AccessInput[];
}

/** An access level as the entity shows it: the user's or group's name describes it. */
export interface AccessView extends AccessEntry {
  description: string | null;
}

export interface ProtectedBranchView {
  row: ProtectedBranchRow;
  access: AccessView[];
}

export interface ProtectedTagView {
  row: ProtectedTagRow;
  access: AccessView[];
}

const ACTION_LABEL: Record<AccessAction, string> = {
  push: 'Push access levels',
  merge: 'Merge access levels',
  unprotect: 'Unprotect access levels',
  create: 'Create access levels',
};

type Owner = { protected_branch_id: number } | { protected_tag_id: number };

export class ProtectedRefsService {
  constructor(private readonly deps: FeatureDeps) {}

  private get db(): Kysely<Database> {
    return this.deps.db.kysely;
  }

  /** user_project with authorize_admin_project. */
  async project(actor: Actor, id: string): Promise<ResolvedProject> {
    const resolved = await this.deps.resolve.project(actor, id);
    if (!actor.isAdmin) Policy.require(resolved.access, 'admin_project', 'Project', 'read_project');
    return resolved;
  }

  // ---- protected branches ------------------------------------------------------------------------

  /** ProtectedBranchesFinder: the project's rules by id, `search` a part of the name (any case). */
  branchesQuery(p: ResolvedProject, search?: string): SelectQueryBuilder<Database, 'protected_branches', ProtectedBranchRow> {
    let q = this.db.selectFrom('protected_branches').selectAll().where('project_id', '=', p.project.id);
    if (search) q = q.where(ciContains(this.deps.db.dialect, 'name', search));
    return q.orderBy('id');
  }

  async branchViews(rows: ProtectedBranchRow[]): Promise<ProtectedBranchView[]> {
    const access = await this.accessOf(
      'protected_branch_id',
      rows.map((r) => r.id),
    );
    return rows.map((row) => ({ row, access: access.get(row.id) ?? [] }));
  }

  /** find_by!(name:): 404 "404 Not found" */
  async branch(p: ResolvedProject, name: string): Promise<ProtectedBranchView> {
    const row = await this.db.selectFrom('protected_branches').selectAll().where('project_id', '=', p.project.id).where('name', '=', name).executeTakeFirst();
    if (!row) throw Errors.recordNotFound();
    return (await this.branchViews([row]))[0];
  }

  /** ProtectedBranches::ApiService#create: 409 when the name is protected, 422 for invalid access levels. */
  async createBranch(p: ResolvedProject, input: ProtectedBranchInput): Promise<ProtectedBranchView> {
    const existing = await this.db
      .selectFrom('protected_branches')
      .select('id')
      .where('project_id', '=', p.project.id)
      .where('name', '=', input.name)
      .executeTakeFirst();
    if (existing) throw Errors.conflict(`Protected branch '${input.name}' already exists`);
    const errors: string[] = [];
    if (input.name.trim() === '') errors.push("Name can't be blank");
    const entries = [
      ...(await this.newEntries(p, 'push', input.push_access_level, input.allowed_to_push, true, errors)),
      ...(await this.newEntries(p, 'merge', input.merge_access_level, input.allowed_to_merge, true, errors)),
      ...(await this.newEntries(p, 'unprotect', input.unprotect_access_level, input.allowed_to_unprotect, true, errors)),
    ];
    if (errors.length) throw Errors.unprocessable(errors);
    const now = nowIso();
    let id: number;
    try {
      id = await this.db.transaction().execute(async (trx) => {
        const row = await trx
          .insertInto('protected_branches')
          .values({
            project_id: p.project.id,
            name: input.name,
            allow_force_push: input.allow_force_push ? 1 : 0,
            code_owner_approval_required: input.code_owner_approval_required ? 1 : 0,
            created_at: now,
            updated_at: now,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        await insertEntries(trx, { protected_branch_id: row.id }, entries, now);
        return row.id;
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw Errors.conflict(`Protected branch '${input.name}' already exists`);
      throw e;
    }
    return this.branchById(id);
  }

  /** ProtectedBranches::ApiService#update: flags, and access levels added, changed ({id, …}) or removed ({id, _destroy}). */
  async updateBranch(actor: Actor, p: ResolvedProject, name: string, input: ProtectedBranchUpdate): Promise<ProtectedBranchView> {
    const current = await this.branch(p, name);
    await this.checkUnprotect(actor, p, current.access);
    const errors: string[] = [];
    const changes = [
      ...(await this.accessChanges(p, 'push', input.allowed_to_push, current.access, errors)),
      ...(await this.accessChanges(p, 'merge', input.allowed_to_merge, current.access, errors)),
      ...(await this.accessChanges(p, 'unprotect', input.allowed_to_unprotect, current.access, errors)),
    ];
    if (errors.length) throw Errors.unprocessable(errors);
    const now = nowIso();
    await this.db.transaction().execute(async (trx) => {
      const set: Record<string, unknown> = { updated_at: now };
      if (input.allow_force_push !== undefined) set.allow_force_push = input.allow_force_push ? 1 : 0;
      if (input.code_owner_approval_required !== undefined) set.code_owner_approval_required = input.code_owner_approval_required ? 1 : 0;
      await trx.updateTable('protected_branches').set(set).where('id', '=', current.row.id).execute();
      await applyChanges(trx, { protected_branch_id: current.row.id }, changes, now);
    });
    return this.branchById(current.row.id);
  }

  /** ProtectedBranches::DestroyService */
  async deleteBranch(actor: Actor, p: ResolvedProject, name: string): Promise<void> {
    const current = await this.branch(p, name);
    await this.checkUnprotect(actor, p, current.access);
    await this.db.deleteFrom('protected_branches').where('id', '=', current.row.id).execute();
  }

  private async branchById(id: number): Promise<ProtectedBranchView> {
    const row = await this.db.selectFrom('protected_branches').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    return (await this.branchViews([row]))[0];
  }

  private async checkUnprotect(actor: Actor, p: ResolvedProject, access: AccessEntry[]): Promise<void> {
    const unprotect = access.filter((a) => a.action === 'unprotect');
    const groupIds = unprotect.flatMap((a) => (a.group_id === null ? [] : [a.group_id]));
    const groups = new Set<number>();
    if (groupIds.length && actor.user) {
      for (const g of groupIds) if ((await this.groupLevel(actor.user.id, g)) > 0) groups.add(g);
    }
    if (!canUnprotect(actor, p.access, unprotect, groups)) throw Errors.forbidden();
  }

  private async groupLevel(userId: number, groupId: number): Promise<number> {
    const group = await this.db.selectFrom('namespaces').selectAll().where('id', '=', groupId).executeTakeFirst();
    if (!group) return 0;
    return (await this.deps.policy.membership(userId, { namespace: group })).level;
  }

  // ---- protected tags ----------------------------------------------------------------------------

  tagsQuery(p: ResolvedProject): SelectQueryBuilder<Database, 'protected_tags', ProtectedTagRow> {
    return this.db.selectFrom('protected_tags').selectAll().where('project_id', '=', p.project.id).orderBy('id');
  }

  async tagViews(rows: ProtectedTagRow[]): Promise<ProtectedTagView[]> {
    const access = await this.accessOf(
      'protected_tag_id',
      rows.map((r) => r.id),
    );
    return rows.map((row) => ({ row, access: access.get(row.id) ?? [] }));
  }

  async tag(p: ResolvedProject, name: string): Promise<ProtectedTagView> {
    const row = await this.db.selectFrom('protected_tags').selectAll().where('project_id', '=', p.project.id).where('name', '=', name).executeTakeFirst();
    if (!row) throw Errors.recordNotFound();
    return (await this.tagViews([row]))[0];
  }

  /** ProtectedTags::CreateService */
  async createTag(p: ResolvedProject, input: ProtectedTagInput): Promise<ProtectedTagView> {
    const conflict = () => Errors.conflict(`Protected tag '${input.name}' already exists`);
    const existing = await this.db
      .selectFrom('protected_tags')
      .select('id')
      .where('project_id', '=', p.project.id)
      .where('name', '=', input.name)
      .executeTakeFirst();
    if (existing) throw conflict();
    const errors: string[] = [];
    if (input.name.trim() === '') errors.push("Name can't be blank");
    const entries = await this.newEntries(p, 'create', input.create_access_level, input.allowed_to_create, true, errors);
    if (errors.length) throw Errors.unprocessable(errors);
    const now = nowIso();
    let id: number;
    try {
      id = await this.db.transaction().execute(async (trx) => {
        const row = await trx
          .insertInto('protected_tags')
          .values({ project_id: p.project.id, name: input.name, created_at: now, updated_at: now })
          .returning('id')
          .executeTakeFirstOrThrow();
        await insertEntries(trx, { protected_tag_id: row.id }, entries, now);
        return row.id;
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw conflict();
      throw e;
    }
    const row = await this.db.selectFrom('protected_tags').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    return (await this.tagViews([row]))[0];
  }

  async deleteTag(p: ResolvedProject, name: string): Promise<void> {
    const current = await this.tag(p, name);
    await this.db.deleteFrom('protected_tags').where('id', '=', current.row.id).execute();
  }

  // ---- access levels -----------------------------------------------------------------------------

  /** The access levels of the rules, with the names of their users and groups. */
  private async accessOf(column: 'protected_branch_id' | 'protected_tag_id', ids: number[]): Promise<Map<number, AccessView[]>> {
    const out = new Map<number, AccessView[]>();
    if (!ids.length) return out;
    const rows = await this.db
      .selectFrom('protected_ref_access_levels as a')
      .leftJoin('users as u', 'u.id', 'a.user_id')
      .leftJoin('namespaces as n', 'n.id', 'a.group_id')
      .select([
        'a.id',
        'a.protected_branch_id',
        'a.protected_tag_id',
        'a.action',
        'a.access_level',
        'a.user_id',
        'a.group_id',
        'u.name as user_name',
        'n.name as group_name',
      ])
      .where(`a.${column}`, 'in', ids)
      .orderBy('a.id')
      .execute();
    for (const r of rows) {
      const owner = Number(column === 'protected_branch_id' ? r.protected_branch_id : r.protected_tag_id);
      const list = out.get(owner) ?? [];
      list.push({
        id: Number(r.id),
        action: r.action,
        access_level: r.access_level === null ? null : Number(r.access_level),
        user_id: r.user_id === null ? null : Number(r.user_id),
        group_id: r.group_id === null ? null : Number(r.group_id),
        description: r.user_id !== null ? (r.user_name ?? null) : r.group_id !== null ? (r.group_name ?? null) : null,
      });
      out.set(owner, list);
    }
    return out;
  }

  /**
   * ProtectedRefs::AccessLevelParams for a new rule: `<action>_access_level` and `allowed_to_<action>`;
   * Maintainers when neither is given. Duplicates are one entry.
   */
  private async newEntries(
    p: ResolvedProject,
    action: AccessAction,
    level: number | undefined,
    allowed: AccessInput[] | undefined,
    withDefault: boolean,
    errors: string[],
  ): Promise<NewEntry[]> {
    const list: AccessInput[] = [];
    if (level !== undefined) list.push({ access_level: level });
    list.push(...(allowed ?? []).filter((a) => !a._destroy));
    if (!list.length && withDefault) list.push({ access_level: MAINTAINER });
    const out: NewEntry[] = [];
    const seen = new Set<string>();
    for (const a of list) {
      const entry = await this.entryOf(p, action, a, errors);
      if (!entry) continue;
      const key = `${entry.access_level}|${entry.user_id}|${entry.group_id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(entry);
    }
    return out;
  }

  /** An access level from an input entry (a user, else a group, else a role), or null with the error noted. */
  private async entryOf(p: ResolvedProject, action: AccessAction, a: AccessInput, errors: string[]): Promise<NewEntry | null> {
    const label = ACTION_LABEL[action];
    if (a.user_id !== undefined && a.user_id !== null) {
      const level = (await this.deps.policy.membership(a.user_id, { project: p.project, namespace: p.namespace })).level;
      const exists = await this.db.selectFrom('users').select('id').where('id', '=', a.user_id).executeTakeFirst();
      if (!exists || level <= 0) {
        errors.push(`${label} user is not a member of the project`);
        return null;
      }
      return { action, access_level: null, user_id: a.user_id, group_id: null };
    }
    if (a.group_id !== undefined && a.group_id !== null) {
      const ancestors = p.namespace.type === 'Group' ? traversalIds(p.namespace) : [];
      if (!ancestors.includes(a.group_id)) {
        errors.push(`${label} group does not have access to the project`);
        return null;
      }
      return { action, access_level: null, user_id: null, group_id: a.group_id };
    }
    if (a.access_level === undefined || a.access_level === null) {
      errors.push(`${label} access level can't be blank`);
      return null;
    }
    if (action === 'unprotect' && a.access_level === 0) {
      errors.push(`${label} access level is not included in the list`);
      return null;
    }
    return { action, access_level: a.access_level, user_id: null, group_id: null };
  }

  /** Nested attributes of an update: new entries, changed ones ({id, …}), removed ones ({id, _destroy}). */
  private async accessChanges(
    p: ResolvedProject,
    action: AccessAction,
    allowed: AccessInput[] | undefined,
    current: AccessEntry[],
    errors: string[],
  ): Promise<Change[]> {
    const out: Change[] = [];
    const mine = current.filter((c) => c.action === action);
    const key = (e: { access_level: number | null; user_id: number | null; group_id: number | null }) => `${e.access_level}|${e.user_id}|${e.group_id}`;
    const keys = new Set(mine.map(key));
    for (const a of allowed ?? []) {
      if (a.id !== undefined && a.id !== null) {
        const target = mine.find((c) => c.id === a.id);
        if (!target) {
          errors.push(`${ACTION_LABEL[action]} is invalid`);
          continue;
        }
        if (a._destroy) {
          out.push({ kind: 'delete', id: target.id });
          keys.delete(key(target));
          continue;
        }
        const entry = await this.entryOf(p, action, a, errors);
        if (entry) out.push({ kind: 'update', id: target.id, entry });
        continue;
      }
      if (a._destroy) continue;
      const entry = await this.entryOf(p, action, a, errors);
      if (!entry) continue;
      if (keys.has(key(entry))) {
        errors.push(`${ACTION_LABEL[action]} ${entry.user_id !== null ? 'user' : entry.group_id !== null ? 'group' : 'access level'} has already been taken`);
        continue;
      }
      keys.add(key(entry));
      out.push({ kind: 'insert', entry });
    }
    return out;
  }
}

interface NewEntry {
  action: AccessAction;
  access_level: number | null;
  user_id: number | null;
  group_id: number | null;
}

type Change = { kind: 'insert'; entry: NewEntry } | { kind: 'update'; id: number; entry: NewEntry } | { kind: 'delete'; id: number };

async function insertEntries(trx: Kysely<Database>, owner: Owner, entries: NewEntry[], now: string): Promise<void> {
  if (!entries.length) return;
  await trx
    .insertInto('protected_ref_access_levels')
    .values(
      entries.map((e) => ({
        protected_branch_id: 'protected_branch_id' in owner ? owner.protected_branch_id : null,
        protected_tag_id: 'protected_tag_id' in owner ? owner.protected_tag_id : null,
        ...e,
        created_at: now,
        updated_at: now,
      })),
    )
    .execute();
}

async function applyChanges(trx: Kysely<Database>, owner: Owner, changes: Change[], now: string): Promise<void> {
  for (const c of changes) {
    if (c.kind === 'delete') await trx.deleteFrom('protected_ref_access_levels').where('id', '=', c.id).execute();
    else if (c.kind === 'update') {
      const { access_level, user_id, group_id } = c.entry;
      await trx.updateTable('protected_ref_access_levels').set({ access_level, user_id, group_id, updated_at: now }).where('id', '=', c.id).execute();
    }
  }
  await insertEntries(
    trx,
    owner,
    changes.flatMap((c) => (c.kind === 'insert' ? [c.entry] : [])),
    now,
  );
}
