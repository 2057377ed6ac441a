// Custom member roles (spec "Member roles", reference §11; GitLab EE MemberRoles::*Service and the
// MemberRole model): instance-wide roles for administrators, group roles for Owners of a top-level
// group. What a role grants is decided by the policy (domain/access), never here.
import type { Db } from '../../db/connect.ts';
import { isInt32 } from '../../db/sql.ts';
import type { MemberRoleRow, NamespaceRow } from '../../db/schema.ts';
import { Errors } from '../../lib/errors.ts';
import { nowIso } from '../../lib/time.ts';
import { Policy, traversalIds, type GroupAccess } from '../access/policy.ts';
import { CUSTOM_PERMISSIONS, type CustomPermission } from '../core/roles.ts';

export interface CreateMemberRoleInput {
  name: string;
  description?: string;
  base_access_level: number;
  permissions: Partial<Record<CustomPermission, boolean>>;
}

export interface UpdateMemberRoleInput {
  name?: string;
  description?: string;
}

/** Where a role lives: the instance (administrators) or a group (its Owners). */
export type RoleScope = { kind: 'instance' } | { kind: 'group'; group: NamespaceRow; access: GroupAccess };

/** The permissions switched on in a row's JSON. */
export function parsePermissions(json: string): Set<CustomPermission> {
  const out = new Set<CustomPermission>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return out;
  }
  if (parsed && typeof parsed === 'object') {
    for (const [k, v] of Object.entries(parsed)) if (v === true && (CUSTOM_PERMISSIONS as readonly string[]).includes(k)) out.add(k as CustomPermission);
  }
  return out;
}

/** The id of the top-level group of a group (itself when it is one). */
export const rootGroupId = (group: NamespaceRow): number => traversalIds(group)[0] ?? group.id;

// MemberRole model validation messages, rendered by the API as {"message": "<full messages>"}.
const serviceError = (message: string) => Errors.refused(message);

export class MemberRolesService {
  constructor(private readonly db: Db) {}

  /** admin_member_role on the group (Owner, or an administrator); the instance routes are admin-only already. */
  private authorize(scope: RoleScope): void {
    if (scope.kind === 'group') Policy.require(scope.access, 'admin_member_role', 'Group', 'read_group');
  }

  /** Roles of the scope; for a subgroup, those of its top-level group (the only place roles live). */
  async list(scope: RoleScope): Promise<MemberRoleRow[]> {
    this.authorize(scope);
    const q = this.db.kysely.selectFrom('member_roles').selectAll().orderBy('id');
    if (scope.kind === 'instance') return q.where('namespace_id', 'is', null).execute();
    return q.where('namespace_id', '=', rootGroupId(scope.group)).execute();
  }

  async create(scope: RoleScope, input: CreateMemberRoleInput): Promise<MemberRoleRow> {
    this.authorize(scope);
    // The reference's text for a subgroup (the service says :unauthorized, the API renders 400).
    if (scope.kind === 'group' && scope.group.parent_id !== null) throw serviceError('Creation of member role is allowed only for root groups');
    const namespaceId = scope.kind === 'group' ? scope.group.id : null;
    const name = input.name;
    if (name.trim() === '') throw serviceError("Name can't be blank");
    if (await this.nameTaken(namespaceId, name)) throw serviceError('Name has already been taken');
    const now = nowIso();
    const permissions = Object.fromEntries(CUSTOM_PERMISSIONS.filter((p) => input.permissions[p] === true).map((p) => [p, true]));
    return this.db.kysely
      .insertInto('member_roles')
      .values({
        namespace_id: namespaceId,
        name,
        description: input.description ?? null,
        base_access_level: input.base_access_level,
        permissions: JSON.stringify(permissions),
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** A role of the scope by id: 404 "Member Role Not Found" otherwise (a group's own roles only). */
  async find(scope: RoleScope, id: number): Promise<MemberRoleRow> {
    this.authorize(scope);
    if (!isInt32(id)) throw Errors.notFound('Member Role'); // beyond the id column: none
    const q = this.db.kysely.selectFrom('member_roles').selectAll().where('id', '=', id);
    const row =
      scope.kind === 'instance'
        ? await q.where('namespace_id', 'is', null).executeTakeFirst()
        : await q.where('namespace_id', '=', scope.group.id).executeTakeFirst();
    if (!row) throw Errors.notFound('Member Role');
    return row;
  }

  async update(scope: RoleScope, id: number, input: UpdateMemberRoleInput): Promise<MemberRoleRow> {
    const role = await this.find(scope, id);
    const changes: { name?: string; description?: string | null; updated_at: string } = { updated_at: nowIso() };
    if (input.name !== undefined) {
      if (input.name.trim() === '') throw serviceError("Name can't be blank");
      if (input.name !== role.name && (await this.nameTaken(role.namespace_id, input.name))) throw serviceError('Name has already been taken');
      changes.name = input.name;
    }
    if (input.description !== undefined) changes.description = input.description;
    return this.db.kysely.updateTable('member_roles').set(changes).where('id', '=', role.id).returningAll().executeTakeFirstOrThrow();
  }

  /** MemberRole#prevent_delete_if_member_associated: a role still assigned is kept. */
  async remove(scope: RoleScope, id: number): Promise<void> {
    const role = await this.find(scope, id);
    const used = await this.db.kysely.selectFrom('members').select('id').where('member_role_id', '=', role.id).limit(1).executeTakeFirst();
    if (used) throw serviceError('Role is assigned to one or more group members. Remove role from all group members, then delete role.');
    await this.db.kysely.deleteFrom('member_roles').where('id', '=', role.id).execute();
  }

  private async nameTaken(namespaceId: number | null, name: string): Promise<boolean> {
    const q = this.db.kysely.selectFrom('member_roles').select('id').where('name', '=', name);
    const row =
      namespaceId === null ? await q.where('namespace_id', 'is', null).executeTakeFirst() : await q.where('namespace_id', '=', namespaceId).executeTakeFirst();
    return !!row;
  }
}
