// Members of projects and groups (GitLab lib/api/members.rb, app/services/members/*, the Member models
// and their policies): direct and inherited lists, adding (one user or a comma-separated list),
// changing and removing memberships, with GitLab's rules — who may manage whom, a project Maintainer
// cannot make Owners, a group keeps its last Owner, a membership is never below an inherited one,
// custom roles must match the level and belong to the hierarchy — and the system events of each change
// written in the same transaction.
import { sql, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../db/connect.ts';
import type { Database, MemberRoleRow, MemberRow, NamespaceRow, ProjectRow, UserRow } from '../../db/schema.ts';
import { ciEquals, inSubtree, isInt32, isUniqueViolation } from '../../db/sql.ts';
import { DomainError, Errors } from '../../lib/errors.ts';
import { isDate, nowIso, parseDateTime, todayDate } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import { Policy, traversalIds, type GroupAccess, type ProjectAccess } from '../access/policy.ts';
import { ACCESS_LEVEL_NAMES, MEMBER_ACCESS_LEVELS } from '../core/roles.ts';
import { groupMemberPayload, projectMemberPayload, recordSystemEvent } from '../core/system-events.ts';
import { rootGroupId } from '../member-roles/member-roles.service.ts';
import { BASIC_COLUMNS, type UserBasicRow } from '../core/user-columns.ts';

const OWNER = 50;

/** The project or group whose members are read or changed, already resolved for the actor. */
export type MemberSource =
  | { type: 'Project'; project: ProjectRow; namespace: NamespaceRow; access: ProjectAccess }
  | { type: 'Group'; group: NamespaceRow; access: GroupAccess };

/** One member as the API shows it. */
export interface MemberView {
  member: MemberRow;
  /** the level shown: the membership's own, or for `/all` the highest the user has in the hierarchy */
  accessLevel: number;
  user: UserBasicRow & { email: string };
  createdBy: UserBasicRow | null;
  role: MemberRoleRow | null;
}

export interface ListMembersInput {
  /** direct members only, or also those inherited from ancestor groups */
  deep: boolean;
  query?: string;
  user_ids?: number[];
  skip_users?: number[];
}

export interface AddMembersInput {
  access_level: number;
  user_id?: string;
  username?: string;
  expires_at?: string | null;
  member_role_id?: number | null;
}

export interface UpdateMemberInput {
  access_level: number;
  expires_at?: string | null;
  /** absent: keep the role; null: take it away */
  member_role_id?: number | null;
}

/** What POST answers: one member, or (for a list of users) GitLab's service result. */
export type AddResult = { kind: 'member'; view: MemberView } | { kind: 'bulk'; body: { status: 'success' } | { message: string; status: 'error' } };

/** A page of `listQuery` (the route paginates it). */
export type MemberTable = SelectQueryBuilder<any, any, MemberListRow>;
export interface MemberListRow extends MemberRow {
  effective_level: number;
  u_username: string;
  u_name: string;
  u_state: string;
  u_locked_at: string | null;
  u_avatar_url: string | null;
  u_email: string;
  u_created_at: string;
  u_updated_at: string;
}

const sourceKey = (s: MemberSource): { type: 'Project' | 'Namespace'; id: number } =>
  s.type === 'Project' ? { type: 'Project', id: s.project.id } : { type: 'Namespace', id: s.group.id };

/** Ids of the groups above the source: a project's group and its ancestors, a group's ancestors. */
function ancestorGroupIds(s: MemberSource): number[] {
  if (s.type === 'Project') return s.namespace.type === 'Group' ? traversalIds(s.namespace) : [];
  return traversalIds(s.group).filter((id) => id !== s.group.id);
}

/** ActiveSupport's Array#to_sentence. */
function toSentence(items: string[]): string {
  if (items.length <= 1) return items.join('');
  if (items.length === 2) return `${items[0]} and ${items[1]}`;
  return `${items.slice(0, -1).join(', ')}, and ${items[items.length - 1]}`;
}

/** Rails' full_messages for an errors hash: "Access level is not included in the list". */
function fullMessages(errors: Record<string, string[]>): string[] {
  return Object.entries(errors).flatMap(([field, msgs]) => msgs.map((m) => `${field.charAt(0).toUpperCase()}${field.slice(1).replace(/_/g, ' ')} ${m}`));
}

export class MembersService {
  constructor(private readonly db: Db) {}

  // ---- reads -------------------------------------------------------------------------------

  /** Whether the viewer may list the source's members (read_project_member / read_group_member): what pages ask. */
  canList(s: MemberSource): boolean {
    return s.type === 'Project' ? s.access.abilities.has('read_project_member') : s.access.abilities.has('read_group_member');
  }

  /** read_project_member / read_group_member, or 403 (the source itself is visible already). */
  private authorizeRead(s: MemberSource): void {
    if (s.type === 'Project') Policy.require(s.access, 'read_project_member', 'Project', 'read_project');
    else Policy.require(s.access, 'read_group_member', 'Group', 'read_group');
  }

  /**
   * The member rows with their users, one per user. Direct: the source's own live memberships.
   * Deep (GitLab's MembersFinder / GroupMembersFinder): also the ancestor groups'; a user's row is the
   * project's own when there is one, else the highest, and the level shown is the highest of all.
   */
  private listQuery(s: MemberSource, input: ListMembersInput): MemberTable {
    const k = this.db.kysely;
    const key = sourceKey(s);
    const today = todayDate();
    const groups = input.deep ? ancestorGroupIds(s) : [];
    const ranked = k
      .selectFrom('members as m')
      .selectAll('m')
      .select([
        sql<number>`row_number() over (partition by m.user_id order by case when m.source_type = ${key.type} and m.source_id = ${key.id} then 0 else 1 end, m.access_level desc, case when m.expires_at is null then 0 else 1 end, m.expires_at desc, m.id)`.as(
          'rn',
        ),
        sql<number>`max(m.access_level) over (partition by m.user_id)`.as('effective_level'),
      ])
      .where((eb) => {
        const own = eb.and([eb('m.source_type', '=', key.type), eb('m.source_id', '=', key.id)]);
        return groups.length ? eb.or([own, eb.and([eb('m.source_type', '=', 'Namespace'), eb('m.source_id', 'in', groups)])]) : own;
      })
      .where((eb) => eb.or([eb('m.expires_at', 'is', null), eb('m.expires_at', '>', today)]));
    let q = k
      .selectFrom(ranked.as('mm'))
      .innerJoin('users', 'users.id', 'mm.user_id')
      .select([
        'mm.id',
        'mm.source_type',
        'mm.source_id',
        'mm.user_id',
        'mm.access_level',
        'mm.expires_at',
        'mm.member_role_id',
        'mm.created_by_id',
        'mm.created_at',
        'mm.updated_at',
        'mm.effective_level',
        'users.username as u_username',
        'users.name as u_name',
        'users.state as u_state',
        'users.locked_at as u_locked_at',
        'users.avatar_url as u_avatar_url',
        'users.email as u_email',
        'users.created_at as u_created_at',
        'users.updated_at as u_updated_at',
      ])
      .where('mm.rn', '=', 1);
    // User.search: the whole primary email, or part of the name or username (no minimum length).
    const term = input.query?.trim();
    if (term) {
      const like = '%' + term.toLowerCase().replace(/[\\%_]/g, (ch) => '\\' + ch) + '%';
      q = q.where(
        sql<SqlBool>`(${ciEquals('users.email', term)} or lower(users.name) like ${like} escape '\\' or lower(users.username) like ${like} escape '\\')`,
      );
    }
    if (input.user_ids?.length) q = q.where('mm.user_id', 'in', input.user_ids);
    if (input.skip_users?.length) q = q.where('mm.user_id', 'not in', input.skip_users);
    return q.orderBy('mm.id') as unknown as MemberTable;
  }

  /** The list query after the read check; the route paginates it and turns the rows into views. */
  list(s: MemberSource, input: ListMembersInput): MemberTable {
    this.authorizeRead(s);
    return this.listQuery(s, input);
  }

  /** How many members `list` would give (the count a group page shows); the same read check. */
  async count(s: MemberSource, input: ListMembersInput): Promise<number> {
    const list = this.list(s, input);
    const row = await this.db.kysely.selectFrom(list.clearOrderBy().as('m')).select(sql<number>`count(*)`.as('n')).executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** GET …/members/:user_id and …/members/all/:user_id: 404 "Not found" like `find_by!`. */
  async get(s: MemberSource, userId: number, deep: boolean): Promise<MemberView> {
    this.authorizeRead(s);
    if (!deep) {
      // `source.members.find_by!`: the direct membership, expired or not.
      const row = await this.directMember(s, userId);
      if (!row) throw Errors.recordNotFound();
      return (await this.views([{ member: row, accessLevel: row.access_level }]))[0];
    }
    const rows = isInt32(userId) ? await this.listQuery(s, { deep, user_ids: [userId] }).execute() : [];
    if (!rows.length) throw Errors.recordNotFound();
    return (await this.viewsOfRows(rows))[0];
  }

  /** Views for a page of list rows: creators and custom roles in one query each. */
  async viewsOfRows(rows: MemberListRow[]): Promise<MemberView[]> {
    const views = rows.map((r) => ({
      member: {
        id: r.id,
        source_type: r.source_type,
        source_id: r.source_id,
        user_id: r.user_id,
        access_level: r.access_level,
        expires_at: r.expires_at,
        member_role_id: r.member_role_id,
        created_by_id: r.created_by_id,
        created_at: r.created_at,
        updated_at: r.updated_at,
      },
      accessLevel: r.effective_level,
      user: {
        id: r.user_id,
        username: r.u_username,
        name: r.u_name,
        state: r.u_state,
        locked_at: r.u_locked_at,
        avatar_url: r.u_avatar_url,
        email: r.u_email,
        created_at: r.u_created_at,
        updated_at: r.u_updated_at,
      },
    }));
    return this.complete(views);
  }

  private async views(items: { member: MemberRow; accessLevel: number }[]): Promise<MemberView[]> {
    const ids = [...new Set(items.map((i) => i.member.user_id))];
    const users = ids.length
      ? await this.db.kysely
          .selectFrom('users')
          .select([...BASIC_COLUMNS, 'users.email'])
          .where('id', 'in', ids)
          .execute()
      : [];
    const byId = new Map(users.map((u) => [u.id, u]));
    return this.complete(items.map((i) => ({ ...i, user: byId.get(i.member.user_id)! })));
  }

  private async complete(items: Omit<MemberView, 'createdBy' | 'role'>[]): Promise<MemberView[]> {
    const k = this.db.kysely;
    const creatorIds = [...new Set(items.flatMap((i) => (i.member.created_by_id === null ? [] : [i.member.created_by_id])))];
    const roleIds = [...new Set(items.flatMap((i) => (i.member.member_role_id === null ? [] : [i.member.member_role_id])))];
    const [creators, roles] = await Promise.all([
      creatorIds.length
        ? k
            .selectFrom('users')
            .select([...BASIC_COLUMNS])
            .where('id', 'in', creatorIds)
            .execute()
        : [],
      roleIds.length ? k.selectFrom('member_roles').selectAll().where('id', 'in', roleIds).execute() : [],
    ]);
    const creatorById = new Map(creators.map((u) => [u.id, u]));
    const roleById = new Map(roles.map((r) => [r.id, r]));
    return items.map((i) => ({
      ...i,
      createdBy: i.member.created_by_id === null ? null : (creatorById.get(i.member.created_by_id) ?? null),
      role: i.member.member_role_id === null ? null : (roleById.get(i.member.member_role_id) ?? null),
    }));
  }

  private async directMember(s: MemberSource, userId: number): Promise<MemberRow | undefined> {
    if (!isInt32(userId)) return undefined; // beyond the id column: nobody
    const key = sourceKey(s);
    return this.db.kysely
      .selectFrom('members')
      .selectAll()
      .where('source_type', '=', key.type)
      .where('source_id', '=', key.id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
  }

  // ---- who may manage whom -----------------------------------------------------------------

  private canManage(s: MemberSource): boolean {
    return s.type === 'Project' ? s.access.abilities.has('admin_project_member') : s.access.abilities.has('admin_group_member');
  }

  /**
   * Nobody hands out more than they have: a project Maintainer cannot make Owners (GitLab's
   * manage_owners), a custom role with admin_group_member assigns at most its base level.
   */
  private mayAssign(actor: Actor, s: MemberSource, level: number): boolean {
    // A level that is not one at all is the model's to refuse (400), not the policy's.
    if (!(MEMBER_ACCESS_LEVELS as readonly number[]).includes(level)) return true;
    return actor.isAdmin || s.access.level >= level;
  }

  /** GitLab's update_*_member / destroy_*_member on an existing membership (403 otherwise). */
  private async authorizeChange(actor: Actor, s: MemberSource, member: MemberRow, action: 'update' | 'destroy'): Promise<void> {
    const self = actor.user?.id === member.user_id;
    // The holder of a personal namespace owns its projects; that membership is not changed here.
    if (s.type === 'Project' && s.namespace.type === 'User' && s.namespace.owner_id === member.user_id) throw Errors.forbidden();
    if (s.type === 'Group' && (await this.isLastOwner(s.group, member))) throw Errors.forbidden();
    if (action === 'destroy' && self) return;
    if (!this.canManage(s)) throw Errors.forbidden();
    if (!this.mayAssign(actor, s, member.access_level)) throw Errors.forbidden();
  }

  /** Group#last_owner?: the only Owner of the group, counting Owners inherited from above. */
  private async isLastOwner(group: NamespaceRow, member: MemberRow): Promise<boolean> {
    if (member.access_level !== OWNER) return false;
    const today = todayDate();
    const other = await this.db.kysely
      .selectFrom('members')
      .select('id')
      .where('source_type', '=', 'Namespace')
      .where('source_id', 'in', traversalIds(group))
      .where('access_level', '=', OWNER)
      .where('user_id', '!=', member.user_id)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', today)]))
      .limit(1)
      .executeTakeFirst();
    return !other;
  }

  // ---- validation (the Member model) -------------------------------------------------------

  /**
   * Member validations in GitLab's order: access level, expiry date, not below an inherited
   * membership, and a custom role that matches the level and belongs to the hierarchy.
   */
  private async validate(
    s: MemberSource,
    userId: number,
    m: { access_level: number; expires_at: string | null; member_role: MemberRoleRow | null },
    locked?: { previous: MemberRow; roleGiven: boolean },
  ): Promise<Record<string, string[]>> {
    const errors: Record<string, string[]> = {};
    const add = (field: string, msg: string) => (errors[field] ??= []).push(msg);
    if (!(MEMBER_ACCESS_LEVELS as readonly number[]).includes(m.access_level)) add('access_level', 'is not included in the list');
    if (m.expires_at !== null && m.expires_at < todayDate()) add('expires_at', 'cannot be a date in the past');
    const ancestors = ancestorGroupIds(s);
    if (ancestors.length) {
      const highest = await this.db.kysely
        .selectFrom('members')
        .innerJoin('namespaces', 'namespaces.id', 'members.source_id')
        .select(['members.access_level', 'namespaces.name'])
        .where('members.source_type', '=', 'Namespace')
        .where('members.source_id', 'in', ancestors)
        .where('members.user_id', '=', userId)
        .orderBy('members.access_level', 'desc')
        .limit(1)
        .executeTakeFirst();
      if (highest && highest.access_level > m.access_level) {
        add('access_level', `should be greater than or equal to ${ACCESS_LEVEL_NAMES[highest.access_level]} inherited membership from group ${highest.name}`);
      }
    }
    if (locked?.previous.member_role_id && !locked.roleGiven && locked.previous.access_level !== m.access_level) {
      add('access_level', 'cannot be changed because of an existing association with a custom role');
    }
    if (m.member_role) {
      if (m.member_role.base_access_level !== m.access_level)
        add('member_role_id', "the custom role's base access level does not match the current access level");
      if (m.member_role.namespace_id !== null && m.member_role.namespace_id !== this.rootOf(s))
        add('member_namespace', "must be in same hierarchy as custom role's namespace");
    }
    return errors;
  }

  /** The top-level namespace of the source: a group id, or a personal namespace's id. */
  private rootOf(s: MemberSource): number {
    return s.type === 'Project' ? (s.namespace.type === 'Group' ? rootGroupId(s.namespace) : s.namespace.id) : rootGroupId(s.group);
  }

  private async memberRole(id: number | null | undefined): Promise<MemberRoleRow | null> {
    if (id === null || id === undefined) return null;
    const role = await this.db.kysely.selectFrom('member_roles').selectAll().where('id', '=', id).executeTakeFirst();
    if (!role) throw Errors.notFound('Member Role');
    return role;
  }

  // ---- writes ------------------------------------------------------------------------------

  /** POST …/members: one user (by id or username) → the member; a comma-separated list → a status. */
  async add(actor: Actor, s: MemberSource, input: AddMembersInput): Promise<AddResult> {
    if (input.user_id !== undefined && input.username !== undefined) throw Errors.param('user_id, username are mutually exclusive');
    if (input.user_id === undefined && input.username === undefined)
      throw Errors.param('user_id, username are missing, at least one parameter must be provided');
    const expiresAt = expiryDate(input.expires_at);
    if ((input.user_id ?? '').includes(',') || (input.username ?? '').includes(',')) return this.addMany(actor, s, input, expiresAt);

    // Members::CreateService order: the user, an existing membership, then the rights, then the model.
    const user = input.user_id !== undefined ? await this.userById(input.user_id) : await this.userByUsername(input.username!);
    if (!user) throw Errors.notFound('User');
    if (await this.directMember(s, user.id)) throw Errors.conflict('Member already exists');
    if (!this.canManage(s) || !this.mayAssign(actor, s, input.access_level)) throw Errors.forbidden();
    const role = await this.memberRole(input.member_role_id);
    const errors = await this.validate(s, user.id, { access_level: input.access_level, expires_at: expiresAt, member_role: role });
    if (Object.keys(errors).length) throw Errors.invalid(errors);
    try {
      const row = await this.db.kysely.transaction().execute((trx) => this.insert(trx, actor, s, user, input.access_level, expiresAt, role));
      return { kind: 'member', view: (await this.views([{ member: row, accessLevel: row.access_level }]))[0] };
    } catch (err) {
      if (isUniqueViolation(err)) throw Errors.conflict('Member already exists');
      throw err;
    }
  }

  /**
   * Members::CreateService with several users: unknown ids are skipped, existing members get the new
   * level, and the answer is GitLab's service result ({"status":"success"} or the per-user errors).
   */
  private async addMany(actor: Actor, s: MemberSource, input: AddMembersInput, expiresAt: string | null): Promise<AddResult> {
    if (!this.canManage(s) || !this.mayAssign(actor, s, input.access_level)) throw Errors.forbidden();
    const k = this.db.kysely;
    let users: UserRow[];
    if (input.username !== undefined) {
      const names = [
        ...new Set(
          input.username
            .split(',')
            .map((n) => n.trim().toLowerCase())
            .filter(Boolean),
        ),
      ];
      users = names.length ? await k.selectFrom('users').selectAll().where(sql<string>`lower(username)`, 'in', names).execute() : [];
      if (!users.length) return { kind: 'bulk', body: { message: 'No users specified.', status: 'error' } };
    } else {
      const ids = [
        ...new Set(
          input
            .user_id!.split(',')
            .map((v) => v.trim())
            .filter((v) => /^\d+$/.test(v))
            .map(Number),
        ),
      ].filter((n) => n <= 2147483647);
      users = ids.length ? await k.selectFrom('users').selectAll().where('id', 'in', ids).orderBy('id').execute() : [];
    }
    const role = await this.memberRole(input.member_role_id);
    // Checks first (reads), then one transaction for the writes: the users that pass are added even
    // when others fail, as GitLab saves each member on its own.
    const failures: string[] = [];
    const plan: { user: UserRow; existing: MemberRow | undefined }[] = [];
    for (const user of users) {
      const existing = await this.directMember(s, user.id);
      try {
        if (existing) await this.authorizeChange(actor, s, existing, 'update');
      } catch (err) {
        if (err instanceof DomainError && err.status === 403) {
          failures.push(`${user.username}: Not authorized to update member`);
          continue;
        }
        throw err;
      }
      const errors = await this.validate(s, user.id, { access_level: input.access_level, expires_at: expiresAt, member_role: role });
      if (Object.keys(errors).length) failures.push(`${user.username}: ${toSentence(fullMessages(errors))}`);
      else plan.push({ user, existing });
    }
    const set = { access_level: input.access_level, expires_at: expiresAt, member_role_id: role?.id ?? null };
    try {
      await k.transaction().execute(async (trx) => {
        for (const { user, existing } of plan) {
          if (existing) await this.change(trx, s, existing, user, set);
          else await this.insert(trx, actor, s, user, input.access_level, expiresAt, role);
        }
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw Errors.conflict('Member already exists');
      throw err;
    }
    if (failures.length) return { kind: 'bulk', body: { message: toSentence(failures), status: 'error' } };
    return { kind: 'bulk', body: { status: 'success' } };
  }

  /** A project or group access token's bot joins the resource, inside the token's transaction (no checks: the bot is new). */
  async addBot(trx: Kysely<Database>, actor: Actor, s: MemberSource, bot: UserRow, level: number): Promise<MemberRow> {
    return this.insert(trx, actor, s, bot, level, null, null);
  }

  private async insert(
    trx: Kysely<Database>,
    actor: Actor,
    s: MemberSource,
    user: UserRow,
    level: number,
    expiresAt: string | null,
    role: MemberRoleRow | null,
  ): Promise<MemberRow> {
    const key = sourceKey(s);
    const now = nowIso();
    const row = await trx
      .insertInto('members')
      .values({
        source_type: key.type,
        source_id: key.id,
        user_id: user.id,
        access_level: level,
        expires_at: expiresAt,
        member_role_id: role?.id ?? null,
        created_by_id: actor.user?.id ?? null,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordSystemEvent(
      trx,
      s.type === 'Project'
        ? projectMemberPayload('user_add_to_team', row, s.project, s.namespace, user)
        : groupMemberPayload('user_add_to_group', row, s.group, user),
    );
    return row;
  }

  private async change(
    trx: Kysely<Database>,
    s: MemberSource,
    member: MemberRow,
    user: UserRow,
    set: { access_level: number; expires_at: string | null; member_role_id: number | null },
  ): Promise<MemberRow> {
    const row = await trx
      .updateTable('members')
      .set({ ...set, updated_at: nowIso() })
      .where('id', '=', member.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordSystemEvent(
      trx,
      s.type === 'Project'
        ? projectMemberPayload('user_update_for_team', row, s.project, s.namespace, user)
        : groupMemberPayload('user_update_for_group', row, s.group, user),
    );
    return row;
  }

  /** PUT …/members/:user_id. */
  async update(actor: Actor, s: MemberSource, userId: number, input: UpdateMemberInput): Promise<MemberView> {
    const member = await this.directMember(s, userId);
    if (!member) throw Errors.recordNotFound();
    // Includes the last Owner of a group, who is neither demoted nor changed at all (GroupMemberPolicy).
    await this.authorizeChange(actor, s, member, 'update');
    if (!this.mayAssign(actor, s, input.access_level)) throw Errors.forbidden();
    const roleGiven = input.member_role_id !== undefined;
    const role = await this.memberRole(roleGiven ? input.member_role_id : member.member_role_id);
    // Only a new expiry date is checked against today (an old one may have passed).
    const expiresAt = input.expires_at === undefined ? member.expires_at : expiryDate(input.expires_at);
    const checkedExpiry = input.expires_at === undefined ? null : expiresAt;
    const errors = await this.validate(
      s,
      userId,
      { access_level: input.access_level, expires_at: checkedExpiry, member_role: role },
      { previous: member, roleGiven },
    );
    if (Object.keys(errors).length) throw Errors.invalid(errors);
    const user = (await this.db.kysely.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst())!;
    const row = await this.db.kysely
      .transaction()
      .execute((trx) => this.change(trx, s, member, user, { access_level: input.access_level, expires_at: expiresAt, member_role_id: role?.id ?? null }));
    return (await this.views([{ member: row, accessLevel: row.access_level }]))[0];
  }

  /**
   * DELETE …/members/:user_id. Members may leave; a group keeps its last Owner. For a group, the
   * user's memberships in its subgroups and their projects go too unless `skip_subresources`.
   */
  async remove(actor: Actor, s: MemberSource, userId: number, opts: { skipSubresources: boolean; unmodifiedSince?: number }): Promise<void> {
    const member = await this.directMember(s, userId);
    if (!member) throw Errors.recordNotFound();
    // destroy_conditionally!: the precondition before the destroy service's own checks.
    if (opts.unmodifiedSince !== undefined && Date.parse(member.updated_at) > opts.unmodifiedSince) throw Errors.preconditionFailed();
    await this.authorizeChange(actor, s, member, 'destroy');
    const user = (await this.db.kysely.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst())!;
    await this.db.kysely.transaction().execute(async (trx) => {
      await trx.deleteFrom('members').where('id', '=', member.id).execute();
      if (s.type === 'Project') {
        await recordSystemEvent(trx, projectMemberPayload('user_remove_from_team', member, s.project, s.namespace, user));
        return;
      }
      await recordSystemEvent(trx, groupMemberPayload('user_remove_from_group', member, s.group, user));
      if (!opts.skipSubresources) await this.removeFromDescendants(trx, s.group, user);
    });
  }

  /** Members::DestroyService#destroy_subresources: memberships in subgroups and their projects. */
  private async removeFromDescendants(trx: Kysely<Database>, group: NamespaceRow, user: UserRow): Promise<void> {
    const below = await trx.selectFrom('namespaces').selectAll().where(inSubtree('traversal_ids', group.traversal_ids)).execute();
    const byId = new Map(below.map((n) => [n.id, n]));
    const subgroups = below.filter((n) => n.id !== group.id && n.type === 'Group').map((n) => n.id);
    if (subgroups.length) {
      const rows = await trx
        .deleteFrom('members')
        .where('user_id', '=', user.id)
        .where('source_type', '=', 'Namespace')
        .where('source_id', 'in', subgroups)
        .returningAll()
        .execute();
      for (const r of rows.sort((a, b) => a.id - b.id))
        await recordSystemEvent(trx, groupMemberPayload('user_remove_from_group', r, byId.get(r.source_id)!, user));
    }
    const projects = await trx
      .selectFrom('projects')
      .selectAll()
      .where('namespace_id', 'in', [...byId.keys()])
      .execute();
    if (projects.length) {
      const projectById = new Map(projects.map((p) => [p.id, p]));
      const rows = await trx
        .deleteFrom('members')
        .where('user_id', '=', user.id)
        .where('source_type', '=', 'Project')
        .where('source_id', 'in', [...projectById.keys()])
        .returningAll()
        .execute();
      for (const r of rows.sort((a, b) => a.id - b.id)) {
        const p = projectById.get(r.source_id)!;
        await recordSystemEvent(trx, projectMemberPayload('user_remove_from_team', r, p, byId.get(p.namespace_id)!, user));
      }
    }
  }

  private async userById(value: string): Promise<UserRow | undefined> {
    if (!/^\d+$/.test(value.trim()) || Number(value) > 2147483647) return undefined;
    return this.db.kysely.selectFrom('users').selectAll().where('id', '=', Number(value)).executeTakeFirst();
  }

  private async userByUsername(username: string): Promise<UserRow | undefined> {
    return this.db.kysely.selectFrom('users').selectAll().where(ciEquals('username', username.trim())).executeTakeFirst();
  }
}

/** Grape's DateTime param stored as GitLab stores it, a date: "2030-01-31" (a time's date part). */
function expiryDate(value: string | null | undefined): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (isDate(value)) return value;
  const iso = parseDateTime(value);
  if (!iso) throw Errors.param('expires_at is invalid');
  return iso.slice(0, 10);
}
