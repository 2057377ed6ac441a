// Who may push, force-push, merge and unprotect on a branch, and create a tag: the project's protected
// branches and protected tags (GitLab's ProtectedBranch, ProtectedTag and their access levels) are the
// truth. A rule's name is a branch name or a wildcard (GitLab's RefMatcher: `*` matches anything); when
// several rules match, the most permissive access wins (ProtectedRef.protected_ref_accessible_to?: any
// access level of any matching rule; allow_force_push: any matching rule). An empty repository's
// default branch is protected as default_branch_protection_defaults say until its first push creates
// the rule (ProtectedBranch.protected? with empty_repo?, then ProtectDefaultBranchService).
import type { Kysely } from 'kysely';
import type { Database, NamespaceRow, ProjectRow } from '../../db/schema.ts';
import type { Actor } from '../access/actor.ts';
import { traversalIds, unexpired, type ProjectAccess } from '../access/policy.ts';
import { groupSettings, type BranchProtectionDefaults } from '../core/group-settings.ts';
import type { Settings } from '../core/settings-definitions.ts';

export type AccessAction = 'push' | 'merge' | 'unprotect' | 'create';

/** One access level: a role (access_level), a user or a group. */
export interface AccessEntry {
  id: number;
  action: AccessAction;
  access_level: number | null;
  user_id: number | null;
  group_id: number | null;
}

/** What the matching protected branches allow, together. */
export interface BranchProtection {
  push: AccessEntry[];
  merge: AccessEntry[];
  unprotect: AccessEntry[];
  allowForcePush: boolean;
  developerCanInitialPush: boolean;
  /** the groups of the actor the rules were loaded for, among the rules' group entries */
  groups: ReadonlySet<number>;
}

/** What the matching protected tags allow, together. */
export interface TagProtection {
  create: AccessEntry[];
  groups: ReadonlySet<number>;
}

export const NO_ONE = 0;
export const DEVELOPER = 30;
export const MAINTAINER = 40;
export const ADMIN = 60;
/** ProtectedRefAccess::ALLOWED_ACCESS_LEVELS */
export const ALLOWED_ACCESS_LEVELS = [MAINTAINER, DEVELOPER, NO_ONE, ADMIN];

/** ProtectedRefAccess.human_access_levels */
export function humanAccessLevel(level: number | null): string {
  switch (level) {
    case DEVELOPER:
      return 'Developers + Maintainers';
    case MAINTAINER:
      return 'Maintainers';
    case ADMIN:
      return 'Instance admins';
    case NO_ONE:
      return 'No one';
    default:
      return '';
  }
}

/** RefMatcher#matches?: the exact name, or a wildcard whose `*` match anything (`.*?`, anchored). */
export function refMatches(pattern: string, name: string): boolean {
  if (!pattern) return false;
  if (pattern === name) return true;
  if (!pattern.includes('*')) return false;
  return wildcardRegex(pattern).test(name);
}

const regexes = new Map<string, RegExp>();
function wildcardRegex(pattern: string): RegExp {
  let re = regexes.get(pattern);
  if (!re) {
    const source = pattern
      .split('*')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'))
      .join('.*?');
    re = new RegExp(`^${source}$`, 's');
    if (regexes.size > 1000) regexes.clear();
    regexes.set(pattern, re);
  }
  return re;
}

/** The instance's default_branch_protection_defaults; none stored: none of its own. */
export function protectionDefaults(settings: Pick<Settings, 'default_branch_protection_defaults'>): BranchProtectionDefaults {
  return settings.default_branch_protection_defaults ?? {};
}

/** The protection defaults of a project's namespace: the group's, else the instance's. */
export function protectionDefaultsOf(
  namespace: Pick<NamespaceRow, 'type' | 'settings'>,
  instanceDefaults: BranchProtectionDefaults | null | undefined,
): BranchProtectionDefaults {
  return (namespace.type === 'Group' ? groupSettings(namespace).default_branch_protection_defaults : null) ?? instanceDefaults ?? {};
}

/** The rule ProtectDefaultBranchService makes of the defaults, or null for GitLab's "not protected". */
export interface DefaultRule {
  push: number[];
  merge: number[];
  allowForcePush: boolean;
  codeOwnerApprovalRequired: boolean;
}

function levels(list: { access_level: number }[] | undefined): number[] {
  return Array.isArray(list) && list.length ? [...new Set(list.map((e) => Number(e.access_level)))] : [MAINTAINER];
}

export function defaultBranchRule(d: BranchProtectionDefaults): DefaultRule | null {
  const rule = {
    push: levels(d.allowed_to_push),
    merge: levels(d.allowed_to_merge),
    allowForcePush: d.allow_force_push === true,
    codeOwnerApprovalRequired: d.code_owner_approval_required === true,
  };
  // "Not protected": developers may push and force-push (GitLab's PROTECTION_NONE creates no rule).
  if (rule.push.includes(DEVELOPER) && rule.allowForcePush) return null;
  return rule;
}

/** A protected branch or tag with its access levels. */
export interface ProtectedRefRule {
  id: number;
  name: string;
  allowForcePush: boolean;
  access: AccessEntry[];
}

/** The protected branches and tags of one project, as loaded for one actor. */
export class RefRules {
  constructor(
    readonly branches: ProtectedRefRule[],
    readonly tags: ProtectedRefRule[],
    private readonly opts: { defaultBranch: string; defaults: BranchProtectionDefaults; groups: ReadonlySet<number> },
  ) {}

  /** ProtectedBranch.protected?: some rule matches the branch (`initial`: the repository is empty, see above). */
  isProtectedBranch(name: string, initial = false): boolean {
    return this.branch(name, initial) !== null;
  }

  /** The protection of `name`, or null when it is not protected. */
  branch(name: string, initial = false): BranchProtection | null {
    const matching = this.branches.filter((r) => refMatches(r.name, name));
    const developerCanInitialPush = this.opts.defaults.developer_can_initial_push === true;
    if (!matching.length) {
      if (!initial || name !== this.opts.defaultBranch) return null;
      const rule = defaultBranchRule(this.opts.defaults);
      if (!rule) return null;
      const role = (action: AccessAction) => (l: number) => ({ id: 0, action, access_level: l, user_id: null, group_id: null });
      return {
        push: rule.push.map(role('push')),
        merge: rule.merge.map(role('merge')),
        unprotect: [],
        allowForcePush: rule.allowForcePush,
        developerCanInitialPush,
        groups: this.opts.groups,
      };
    }
    const access = matching.flatMap((r) => r.access);
    return {
      push: access.filter((a) => a.action === 'push'),
      merge: access.filter((a) => a.action === 'merge'),
      unprotect: access.filter((a) => a.action === 'unprotect'),
      allowForcePush: matching.some((r) => r.allowForcePush),
      developerCanInitialPush,
      groups: this.opts.groups,
    };
  }

  /** ProtectedTag.protected? and the create access levels of the matching rules. */
  tag(name: string): TagProtection | null {
    const matching = this.tags.filter((r) => refMatches(r.name, name));
    if (!matching.length) return null;
    return { create: matching.flatMap((r) => r.access.filter((a) => a.action === 'create')), groups: this.opts.groups };
  }
}

/**
 * The protected branches and tags of a project with their access levels, in one query; when some
 * access level names a group and an actor is given, the actor's memberships of those groups (or
 * their ancestors) in one more.
 */
export async function loadRefRules(
  db: Kysely<Database>,
  project: Pick<ProjectRow, 'id' | 'default_branch'>,
  namespace: Pick<NamespaceRow, 'type' | 'settings'>,
  instanceDefaults: BranchProtectionDefaults | null | undefined,
  actor?: Pick<Actor, 'user'> | null,
): Promise<RefRules> {
  const branchRows = db
    .selectFrom('protected_branches as r')
    .leftJoin('protected_ref_access_levels as a', 'a.protected_branch_id', 'r.id')
    .select((eb) => [
      eb.val('branch').as('kind'),
      'r.id as rule_id',
      'r.name',
      'r.allow_force_push',
      'a.id as access_id',
      'a.action',
      'a.access_level',
      'a.user_id',
      'a.group_id',
    ])
    .where('r.project_id', '=', project.id);
  const tagRows = db
    .selectFrom('protected_tags as r')
    .leftJoin('protected_ref_access_levels as a', 'a.protected_tag_id', 'r.id')
    .select((eb) => [
      eb.val('tag').as('kind'),
      'r.id as rule_id',
      'r.name',
      eb.val(0).as('allow_force_push'),
      'a.id as access_id',
      'a.action',
      'a.access_level',
      'a.user_id',
      'a.group_id',
    ])
    .where('r.project_id', '=', project.id);
  const rows = await branchRows.unionAll(tagRows).orderBy('rule_id').orderBy('access_id').execute();
  const branches = new Map<number, ProtectedRefRule>();
  const tags = new Map<number, ProtectedRefRule>();
  const groupIds = new Set<number>();
  for (const r of rows) {
    const map = r.kind === 'branch' ? branches : tags;
    const id = Number(r.rule_id);
    let rule = map.get(id);
    if (!rule) {
      rule = { id, name: r.name, allowForcePush: Number(r.allow_force_push) === 1, access: [] };
      map.set(id, rule);
    }
    if (r.access_id !== null && r.action) {
      const groupId = r.group_id === null ? null : Number(r.group_id);
      if (groupId !== null) groupIds.add(groupId);
      rule.access.push({
        id: Number(r.access_id),
        action: r.action as AccessAction,
        access_level: r.access_level === null ? null : Number(r.access_level),
        user_id: r.user_id === null ? null : Number(r.user_id),
        group_id: groupId,
      });
    }
  }
  const groups = actor?.user && groupIds.size ? await memberGroups(db, actor.user.id, [...groupIds]) : new Set<number>();
  return new RefRules([...branches.values()], [...tags.values()], {
    defaultBranch: project.default_branch ?? 'main',
    defaults: protectionDefaultsOf(namespace, instanceDefaults),
    groups,
  });
}

/** Which of `groupIds` the user is a member of, directly or through an ancestor group. */
async function memberGroups(db: Kysely<Database>, userId: number, groupIds: number[]): Promise<Set<number>> {
  const groups = await db.selectFrom('namespaces').select(['id', 'traversal_ids']).where('id', 'in', groupIds).execute();
  const all = [...new Set(groups.flatMap((g) => traversalIds(g)))];
  if (!all.length) return new Set();
  const rows = await db
    .selectFrom('members')
    .select('source_id')
    .where('user_id', '=', userId)
    .where('source_type', '=', 'Namespace')
    .where('source_id', 'in', all)
    .where((eb) => unexpired(eb))
    .execute();
  const mine = new Set(rows.map((r) => Number(r.source_id)));
  return new Set(groups.filter((g) => traversalIds(g).some((id) => mine.has(id))).map((g) => Number(g.id)));
}

// ---- checks ----------------------------------------------------------------------------------------

function actorLevel(actor: Actor, access: ProjectAccess): number {
  return actor.isAdmin ? ADMIN : access.level;
}

/** ProtectedRefAccess#check_access for any of `entries`. */
function allowed(actor: Actor, access: ProjectAccess, entries: AccessEntry[], groups: ReadonlySet<number>): boolean {
  const level = actorLevel(actor, access);
  return entries.some((e) => {
    if (e.user_id !== null) return actor.user?.id === e.user_id;
    if (e.group_id !== null) return groups.has(e.group_id);
    const l = e.access_level ?? NO_ONE;
    if (l === NO_ONE) return false;
    if (l === ADMIN) return actor.isAdmin;
    return level >= l;
  });
}

function canWrite(actor: Actor, access: ProjectAccess): boolean {
  return access.abilities.has('push_code') || actor.isAdmin;
}

/** May `actor` push (create or fast-forward) this branch? `initial`: the repository has no branch yet. */
export function canPushBranch(actor: Actor, access: ProjectAccess, protection: BranchProtection | null, initial = false): boolean {
  if (!canWrite(actor, access)) return false;
  if (!protection) return true;
  if (initial && protection.developerCanInitialPush && actorLevel(actor, access) >= DEVELOPER) return true;
  return allowed(actor, access, protection.push, protection.groups);
}

export function canForcePushBranch(actor: Actor, access: ProjectAccess, protection: BranchProtection | null): boolean {
  if (!protection) return canWrite(actor, access);
  return protection.allowForcePush && canPushBranch(actor, access, protection);
}

export function canMergeBranch(actor: Actor, access: ProjectAccess, protection: BranchProtection | null): boolean {
  if (!canWrite(actor, access)) return false;
  return !protection || allowed(actor, access, protection.merge, protection.groups);
}

/** Gitlab::UserAccess#can_create_tag? for a protected tag (an unprotected one needs push_code only). */
export function canCreateTag(actor: Actor, access: ProjectAccess, protection: TagProtection | null): boolean {
  if (!canWrite(actor, access)) return false;
  return !protection || allowed(actor, access, protection.create, protection.groups);
}

/** May `actor` unprotect (update or delete) a rule with these unprotect access levels? None: Maintainers. */
export function canUnprotect(actor: Actor, access: ProjectAccess, unprotect: AccessEntry[], groups: ReadonlySet<number>): boolean {
  if (actor.isAdmin) return true;
  if (!unprotect.length) return access.level >= MAINTAINER;
  return allowed(actor, access, unprotect, groups);
}

/** ProtectedBranch.developers_can?: a role entry of Developers among the matching rules' `action` levels. */
export function developersCan(protection: BranchProtection | null, action: 'push' | 'merge'): boolean {
  return !!protection && protection[action].some((e) => e.user_id === null && e.group_id === null && e.access_level === DEVELOPER);
}

/** GitLab's messages for refused pushes (lib/gitlab/checks/*). */
export const PUSH_MESSAGES = {
  noPermission: 'You are not allowed to push code to this project.',
  protectedBranch: 'You are not allowed to push code to protected branches on this project.',
  forcePush: 'You are not allowed to force push code to a protected branch on this project.',
  deleteProtected: 'You can only delete protected branches using the web interface.',
  deleteProtectedNonMaintainer:
    'You are not allowed to delete protected branches from this project. Only a project maintainer or owner can delete a protected branch.',
  deleteDefault: 'The default branch of a project cannot be deleted.',
  createProtectedBranch: 'You are not allowed to create protected branches on this project.',
  createProtectedBranchNonWeb: 'You can only create protected branches using the web interface and API.',
  createTag: 'You are not allowed to create tags on this project.',
  createProtectedTag: 'You are not allowed to create this tag as it is protected.',
  updateProtectedTag: 'Protected tags cannot be updated.',
  deleteProtectedTag: 'You are not allowed to delete protected tags from this project. Only a project maintainer or owner can delete a protected tag.',
  deleteProtectedTagNonWeb: 'You can only delete protected tags using the web interface.',
  download: 'You are not allowed to download code from this project.',
} as const;

// ---- pushes ---------------------------------------------------------------------------------------

export interface PushCheckUpdate {
  before: string;
  after: string;
  /** full ref name */
  ref: string;
}

export interface PushCheck {
  /** the refusal when the update is not a fast-forward (a force push), or null */
  unlessFastForward: string | null;
  /** the refusal of the update, or null */
  refusal: string | null;
}

const ZERO = /^0+$/;

/**
 * Gitlab::Checks::BranchCheck and TagCheck for one ref update of a push (not from the web):
 * `initial`: the repository had no branch before the push. `deployKey`: a deploy key pushes
 * (Gitlab::DeployKeyAccess): it passes a protected branch or tag only through an access level of
 * that deploy key, and Hearth's protected refs have none, so every protected ref refuses it.
 */
export function checkPushUpdate(
  rules: RefRules,
  actor: Actor,
  access: ProjectAccess,
  u: PushCheckUpdate,
  opts: { defaultBranch: string; initial: boolean; deployKey?: boolean },
): PushCheck {
  const creation = ZERO.test(u.before);
  const deletion = ZERO.test(u.after);
  const ok: PushCheck = { unlessFastForward: null, refusal: null };
  const dk = opts.deployKey === true;
  const maintainer = !dk && (actor.isAdmin || access.level >= MAINTAINER);
  const canPush = (p: BranchProtection, initial = false) => !dk && canPushBranch(actor, access, p, initial);
  if (u.ref.startsWith('refs/heads/')) {
    const name = u.ref.slice('refs/heads/'.length);
    if (deletion && name === opts.defaultBranch) return { ...ok, refusal: PUSH_MESSAGES.deleteDefault };
    const protection = rules.branch(name, opts.initial && creation);
    if (!protection) return ok;
    const force = !creation && !deletion && !protection.allowForcePush ? PUSH_MESSAGES.forcePush : null;
    if (deletion) return { unlessFastForward: null, refusal: maintainer ? PUSH_MESSAGES.deleteProtected : PUSH_MESSAGES.deleteProtectedNonMaintainer };
    if (creation && opts.initial) return { ...ok, refusal: canPush(protection, true) ? null : PUSH_MESSAGES.protectedBranch };
    if (creation) {
      if (canPush(protection, opts.initial)) return ok;
      if (dk || !canMergeBranch(actor, access, protection)) return { ...ok, refusal: PUSH_MESSAGES.createProtectedBranch };
      return { ...ok, refusal: PUSH_MESSAGES.createProtectedBranchNonWeb };
    }
    return { unlessFastForward: force, refusal: canPush(protection) ? null : PUSH_MESSAGES.protectedBranch };
  }
  if (u.ref.startsWith('refs/tags/')) {
    const protection = rules.tag(u.ref.slice('refs/tags/'.length));
    if (!protection) return ok;
    if (deletion) return { ...ok, refusal: maintainer ? PUSH_MESSAGES.deleteProtectedTagNonWeb : PUSH_MESSAGES.deleteProtectedTag };
    if (!creation) return { ...ok, refusal: PUSH_MESSAGES.updateProtectedTag };
    return { ...ok, refusal: !dk && canCreateTag(actor, access, protection) ? null : PUSH_MESSAGES.createProtectedTag };
  }
  return ok;
}

/** The pre-receive hook's answer line for a check. */
export function hookAnswer(c: PushCheck): string {
  return `${c.unlessFastForward ?? '-'}|${c.refusal ?? '-'}`;
}

// ---- events ---------------------------------------------------------------------------------------

const namesByContext = new WeakMap<object, Promise<{ branches: string[]; tags: string[] }>>();

/**
 * ProtectedBranch.protected? / ProtectedTag.protected? for the `ref_protected` of push and tag push
 * payloads: the rule names are read once per `ctx` (one change of refs) however many refs it moved.
 */
export async function isProtectedRef(
  ctx: { db: { kysely: Kysely<Database> }; project: Pick<ProjectRow, 'id'> },
  kind: 'branch' | 'tag',
  name: string,
): Promise<boolean> {
  let names = namesByContext.get(ctx);
  if (!names) {
    names = (async () => {
      const rows = await ctx.db.kysely
        .selectFrom('protected_branches')
        .select((eb) => ['name', eb.val('branch').as('kind')])
        .where('project_id', '=', ctx.project.id)
        .unionAll((eb) =>
          eb
            .selectFrom('protected_tags')
            .select((e) => ['name', e.val('tag').as('kind')])
            .where('project_id', '=', ctx.project.id),
        )
        .execute();
      return { branches: rows.filter((r) => r.kind === 'branch').map((r) => r.name), tags: rows.filter((r) => r.kind === 'tag').map((r) => r.name) };
    })();
    namesByContext.set(ctx, names);
  }
  const n = await names;
  return (kind === 'branch' ? n.branches : n.tags).some((p) => refMatches(p, name));
}
