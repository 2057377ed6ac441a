// Who may push, force-push and merge on a branch. The default branch is protected per
// default_branch_protection_defaults (the project's group's value, else the instance's).
import type { NamespaceRow, ProjectRow } from '../../db/schema.ts';
import type { Actor } from '../access/actor.ts';
import type { ProjectAccess } from '../access/policy.ts';
import { groupSettings, type BranchProtectionDefaults } from '../groups/group-settings.ts';

export interface BranchProtection {
  /** lowest access levels allowed to push (0 = no one) */
  pushLevels: number[];
  mergeLevels: number[];
  allowForcePush: boolean;
  developerCanInitialPush: boolean;
}

export const NO_ONE = 0;

function levels(list: { access_level: number }[] | undefined, fallback: number[]): number[] {
  return Array.isArray(list) && list.length ? list.map((e) => Number(e.access_level)) : fallback;
}

/** The protection of `branch` in the project, or null when it is not protected. */
export function branchProtection(
  project: Pick<ProjectRow, 'default_branch'>,
  namespace: Pick<NamespaceRow, 'type' | 'settings'>,
  instanceDefaults: BranchProtectionDefaults,
  branch: string,
): BranchProtection | null {
  if (branch !== (project.default_branch ?? 'main')) return null;
  const d = (namespace.type === 'Group' ? groupSettings(namespace).default_branch_protection_defaults : null) ?? instanceDefaults;
  const p: BranchProtection = {
    pushLevels: levels(d.allowed_to_push, [40]),
    mergeLevels: levels(d.allowed_to_merge, [40]),
    allowForcePush: d.allow_force_push === true,
    developerCanInitialPush: d.developer_can_initial_push === true,
  };
  // "Not protected": developers may push and force-push (GitLab's PROTECTION_NONE creates no rule).
  if (p.pushLevels.includes(30) && p.allowForcePush) return null;
  return p;
}

function actorLevel(actor: Actor, access: ProjectAccess): number {
  return actor.isAdmin ? 60 : access.level;
}

function allowed(actor: Actor, access: ProjectAccess, list: number[]): boolean {
  const level = actorLevel(actor, access);
  return list.some((l) => l !== NO_ONE && level >= l);
}

/** May `actor` push (create or fast-forward) this branch? `initial`: the repository has no branch yet. */
export function canPushBranch(actor: Actor, access: ProjectAccess, protection: BranchProtection | null, initial = false): boolean {
  if (!access.abilities.has('push_code') && !actor.isAdmin) return false;
  if (!protection) return true;
  if (initial && protection.developerCanInitialPush && actorLevel(actor, access) >= 30) return true;
  return allowed(actor, access, protection.pushLevels);
}

export function canForcePushBranch(actor: Actor, access: ProjectAccess, protection: BranchProtection | null): boolean {
  if (!protection) return access.abilities.has('push_code') || actor.isAdmin;
  return protection.allowForcePush && canPushBranch(actor, access, protection);
}

export function canMergeBranch(actor: Actor, access: ProjectAccess, protection: BranchProtection | null): boolean {
  if (!access.abilities.has('push_code') && !actor.isAdmin) return false;
  return !protection || allowed(actor, access, protection.mergeLevels);
}

/** GitLab's messages for refused pushes (lib/gitlab/checks/*). */
export const PUSH_MESSAGES = {
  noPermission: 'You are not allowed to push code to this project.',
  protectedBranch: 'You are not allowed to push code to protected branches on this project.',
  forcePush: 'You are not allowed to force push code to a protected branch on this project.',
  deleteProtected: 'You can only delete protected branches using the web interface.',
  deleteDefault: 'The default branch of a project cannot be deleted.',
  createTag: 'You are not allowed to create tags on this project.',
  download: 'You are not allowed to download code from this project.',
} as const;
