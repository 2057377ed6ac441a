// Who may do what on the translation API, under Weblate's permission names (weblate/auth/permissions.py).
//
// Roles. What an actor may do on a component comes from one of three places:
// - administrators: everything (Weblate's superuser);
// - a component whose repository is a project of this server (`platform_project_id`) follows the forge:
//   Developer (30) and up of that project translates, Maintainer (40) and up manages. The level comes
//   from the forge's own policy (`deps.resolve.project`): a project the actor cannot see gives nothing,
//   an archived one is read-only;
// - any other component (and a project without a component in scope): the translation project's own
//   members (`translation_project_members`, role translate | review | manage), which an administrator
//   manages through GET/POST /api/projects/:slug/members/ and DELETE …/members/:username/.
// Besides, any signed-in user may suggest and comment on a public project (Weblate's default "Users" group).
//
// Gates that apply on top of the role, in Weblate's order (check_can_edit): a locked component or project
// refuses unit.edit, unit.add, unit.delete, upload.perform and translation.add ("This translation is currently
// locked.") — administrators included, as in Weblate; unit.review needs the project's reviews to be on
// ("Translation reviews are not enabled."); editing a read-only unit or, without review rights, an approved one
// is refused with Weblate's messages when the unit is in scope.
import type { TranslationProjectRow, ComponentRow, TranslationRow, UnitRow } from '../../db/schema.ts';
import { DomainError, Errors } from '../../lib/errors.ts';
import type { Actor } from '../access/actor.ts';
import type { TranslationDeps } from './deps.ts';

export type TranslationPerm =
  | 'unit.edit'
  | 'unit.review'
  | 'unit.add'
  | 'unit.delete'
  | 'suggestion.add'
  | 'suggestion.accept'
  | 'suggestion.delete'
  | 'comment.add'
  | 'comment.delete'
  | 'upload.perform'
  | 'upload.overwrite'
  | 'translation.add'
  | 'translation.delete'
  | 'source.edit'
  | 'component.edit'
  | 'component.lock'
  | 'project.edit'
  | 'vcs.view'
  | 'vcs.commit'
  | 'vcs.push'
  | 'vcs.update'
  | 'vcs.reset';

export interface PermScope {
  project: TranslationProjectRow;
  component?: ComponentRow;
  /** optional: the translation (source/template gates) */
  translation?: TranslationRow;
  /** optional: the unit (read-only and approved gates of unit.edit) */
  unit?: UnitRow;
}

/** A translation project member's role (migration 017). */
export type MemberRole = 'translate' | 'review' | 'manage';
export const MEMBER_ROLES: readonly MemberRole[] = ['translate', 'review', 'manage'];

/** What an actor is on a component or project: from nothing to everything. */
export type Role = 'none' | 'contributor' | MemberRole | 'admin';

/** Signed-in users on a public project: Weblate's "Users" group as far as this API goes. */
const CONTRIBUTOR: ReadonlySet<TranslationPerm> = new Set(['suggestion.add', 'comment.add']);
/** Developer (30)+ of the forge project, or a `translate` member. */
const TRANSLATE: ReadonlySet<TranslationPerm> = new Set([
  ...CONTRIBUTOR,
  'unit.edit',
  'unit.add',
  'suggestion.accept',
  'upload.perform',
  'translation.add',
  'vcs.view',
  'vcs.commit',
]);
/** a `review` member: translate + approve and overwrite by upload */
const REVIEW: ReadonlySet<TranslationPerm> = new Set([...TRANSLATE, 'unit.review', 'upload.overwrite', 'suggestion.delete', 'comment.delete']);
/** Maintainer (40)+ of the forge project, a `manage` member, an administrator: everything */
const ALL: ReadonlySet<TranslationPerm> = new Set([
  ...REVIEW,
  'unit.delete',
  'translation.delete',
  'source.edit',
  'component.edit',
  'component.lock',
  'project.edit',
  'vcs.push',
  'vcs.update',
  'vcs.reset',
]);
const ROLE_PERMS: Record<Role, ReadonlySet<TranslationPerm>> = {
  none: new Set(),
  contributor: CONTRIBUTOR,
  translate: TRANSLATE,
  review: REVIEW,
  manage: ALL,
  admin: ALL,
};
const RANK: Record<Role, number> = { none: 0, contributor: 1, translate: 2, review: 3, manage: 4, admin: 5 };

/** Permissions a lock refuses (Weblate's check_can_edit and check_translation_add). */
const LOCK_GATED: ReadonlySet<TranslationPerm> = new Set(['unit.edit', 'unit.add', 'unit.delete', 'upload.perform', 'translation.add']);

export const LOCKED_MESSAGE = 'This translation is currently locked.';
export const REVIEWS_OFF_MESSAGE = 'Translation reviews are not enabled.';
export const READONLY_MESSAGE = 'The string is read only.';
export const APPROVED_MESSAGE = 'Only reviewers can change approved strings, please add a suggestion if you think the string should be changed.';
export const DEFAULT_DENIED = 'You do not have permission to perform this action.';
/** What Weblate says when the role lacks an edit permission (check_can_edit). */
const EDIT_DENIED = 'Insufficient privileges for saving translations.';
const EDIT_PERMS: ReadonlySet<TranslationPerm> = new Set(['unit.edit', 'unit.review', 'unit.add', 'unit.delete', 'upload.perform']);

export class TranslationPermissions {
  constructor(private readonly deps: TranslationDeps) {}

  private membersService?: TranslationMembers;
  /** the translation project members (GET/POST /api/projects/:slug/members/) */
  get members(): TranslationMembers {
    this.membersService ??= new TranslationMembers(this.deps, this);
    return this.membersService;
  }

  /** The actor's role on the component (or, without one, the project). */
  async role(actor: Actor, scope: PermScope): Promise<Role> {
    if (!actor.user) return 'none';
    if (actor.isAdmin) return 'admin';
    let role: Role = 'none';
    const forgeId = scope.component?.platform_project_id ?? null;
    if (forgeId !== null) {
      role = await this.forgeRole(actor, forgeId);
    } else {
      const member = await this.deps.db.kysely
        .selectFrom('translation_project_members')
        .select('role')
        .where('project_id', '=', scope.project.id)
        .where('user_id', '=', actor.user.id)
        .executeTakeFirst();
      if (member && MEMBER_ROLES.includes(member.role as MemberRole)) role = member.role as MemberRole;
    }
    if (RANK[role] < RANK.contributor && scope.project.access_control === 0) role = 'contributor';
    return role;
  }

  private async forgeRole(actor: Actor, projectId: number): Promise<Role> {
    try {
      const resolved = await this.deps.resolve.project(actor, projectId);
      if (resolved.project.archived) return 'none';
      const level = resolved.access.level;
      if (level >= 40) return 'manage';
      if (level >= 30) return 'translate';
      return 'none';
    } catch (e) {
      if (e instanceof DomainError && (e.status === 404 || e.status === 301)) return 'none';
      throw e;
    }
  }

  /** null when allowed, otherwise Weblate's reason. */
  async check(actor: Actor, perm: TranslationPerm, scope: PermScope, reason?: string): Promise<string | null> {
    const locked = scope.project.locked === 1 || scope.component?.locked === 1;
    if (locked && LOCK_GATED.has(perm)) return LOCKED_MESSAGE;
    return this.checkAs(await this.role(actor, scope), perm, scope, reason);
  }

  /** Several permissions on one scope with one role lookup (the editor's buttons): perm → null or the reason. */
  async checkMany<P extends TranslationPerm>(actor: Actor, perms: readonly P[], scope: PermScope): Promise<Record<P, string | null>> {
    const locked = scope.project.locked === 1 || scope.component?.locked === 1;
    const role = await this.role(actor, scope);
    const out = {} as Record<P, string | null>;
    for (const perm of perms) out[perm] = locked && LOCK_GATED.has(perm) ? LOCKED_MESSAGE : this.checkAs(role, perm, scope);
    return out;
  }

  private checkAs(role: Role, perm: TranslationPerm, scope: PermScope, reason?: string): string | null {
    const perms = ROLE_PERMS[role];
    if (perm === 'unit.review' && !scope.project.translation_review) return REVIEWS_OFF_MESSAGE;
    if (perm === 'unit.edit' && scope.translation?.is_template === 1 && !perms.has('source.edit') && perms.has('unit.edit'))
      return 'Insufficient privileges for editing source strings.';
    if (perm === 'unit.edit' && scope.unit) {
      if (scope.unit.state === 100) return READONLY_MESSAGE;
      if (scope.unit.state === 30 && !perms.has('unit.review') && perms.has('unit.edit')) return APPROVED_MESSAGE;
    }
    if (perms.has(perm)) return null;
    return reason ?? (EDIT_PERMS.has(perm) ? EDIT_DENIED : DEFAULT_DENIED);
  }

  async can(actor: Actor, perm: TranslationPerm, scope: PermScope): Promise<boolean> {
    return (await this.check(actor, perm, scope)) === null;
  }

  /** anonymous → 401 (the translation API's, WWW-Authenticate: Token); otherwise 403 {"detail": reason} */
  async require(actor: Actor, perm: TranslationPerm, scope: PermScope, reason?: string): Promise<void> {
    if (!actor.user) throw Errors.unauthorized();
    const denied = await this.check(actor, perm, scope, reason);
    if (denied !== null) throw Errors.forbidden(denied);
  }
}

export interface MemberView {
  username: string;
  role: MemberRole;
  created_at: string;
}

/**
 * Members of a translation project (Hearth's own addition: Weblate has teams instead). Administrators
 * and `manage` members list and change them; the role applies to every component of the project that
 * is not a project of this server.
 */
export class TranslationMembers {
  constructor(
    private readonly deps: TranslationDeps,
    private readonly permissions: TranslationPermissions,
  ) {}

  private async requireManage(actor: Actor, project: TranslationProjectRow): Promise<void> {
    if (!actor.user) throw Errors.unauthorized();
    const role = await this.permissions.role(actor, { project });
    if (role !== 'admin' && role !== 'manage') throw Errors.forbidden('Can not manage project members');
  }

  async list(actor: Actor, project: TranslationProjectRow): Promise<MemberView[]> {
    await this.requireManage(actor, project);
    const rows = await this.deps.db.kysely
      .selectFrom('translation_project_members')
      .innerJoin('users', 'users.id', 'translation_project_members.user_id')
      .select(['users.username', 'translation_project_members.role', 'translation_project_members.created_at'])
      .where('translation_project_members.project_id', '=', project.id)
      .orderBy('users.username')
      .execute();
    return rows.map((r) => ({ username: r.username, role: r.role as MemberRole, created_at: r.created_at }));
  }

  /** Adds the user or changes their role; `created` tells which. */
  async put(actor: Actor, project: TranslationProjectRow, input: { username?: unknown; role?: unknown }): Promise<{ member: MemberView; created: boolean }> {
    await this.requireManage(actor, project);
    const errs: Record<string, string[]> = {};
    let user: { id: number; username: string } | undefined;
    if (input.username === undefined || input.username === null) errs.username = ['This field is required.'];
    else if (typeof input.username !== 'string' || input.username === '') errs.username = ['This field may not be blank.'];
    else {
      user = await this.deps.db.kysely.selectFrom('users').select(['id', 'username']).where('username', '=', input.username).executeTakeFirst();
      if (!user) errs.username = [`Object with username=${input.username} does not exist.`];
    }
    if (input.role === undefined || input.role === null) errs.role = ['This field is required.'];
    else if (!MEMBER_ROLES.includes(String(input.role) as MemberRole)) errs.role = [`"${String(input.role)}" is not a valid choice.`];
    if (Object.keys(errs).length || !user) throw Errors.invalid(errs);
    const role = String(input.role) as MemberRole;
    const now = new Date().toISOString();
    return this.deps.db.kysely.transaction().execute(async (trx) => {
      const existing = await trx
        .selectFrom('translation_project_members')
        .selectAll()
        .where('project_id', '=', project.id)
        .where('user_id', '=', user.id)
        .executeTakeFirst();
      if (existing) {
        await trx.updateTable('translation_project_members').set({ role }).where('id', '=', existing.id).execute();
        return { member: { username: user.username, role, created_at: existing.created_at }, created: false };
      }
      await trx.insertInto('translation_project_members').values({ project_id: project.id, user_id: user.id, role, created_at: now }).execute();
      return { member: { username: user.username, role, created_at: now }, created: true };
    });
  }

  async remove(actor: Actor, project: TranslationProjectRow, username: string): Promise<void> {
    await this.requireManage(actor, project);
    const user = await this.deps.db.kysely.selectFrom('users').select('id').where('username', '=', username).executeTakeFirst();
    if (!user) throw Errors.notFound();
    const r = await this.deps.db.kysely
      .deleteFrom('translation_project_members')
      .where('project_id', '=', project.id)
      .where('user_id', '=', user.id)
      .executeTakeFirst();
    if (!Number(r.numDeletedRows)) throw Errors.notFound();
  }
}
