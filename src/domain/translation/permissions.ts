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
    const role = await this.role(actor, scope);
    const perms = ROLE_PERMS[role];
    if (perm === 'unit.review' && !scope.project.translation_review) return REVIEWS_OFF_MESSAGE;
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
