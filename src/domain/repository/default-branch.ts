// GitLab's HEAD fallback: when a project's default branch does not exist (the first push or commit of
// another branch into an empty repository), that branch becomes the default branch. When the default
// branch is created, it is protected as the group's or the instance's default_branch_protection_defaults
// say (Projects::ProtectDefaultBranchService), unless a rule of that name exists.
import type { Kysely } from 'kysely';
import type { Db } from '../../db/connect.ts';
import type { Database, NamespaceRow, ProjectRow } from '../../db/schema.ts';
import { BRANCH_PREFIX, ZERO_SHA } from '../../git/refs.ts';
import type { Repository } from '../../git/repository.ts';
import { nowIso } from '../../lib/time.ts';
import type { BranchProtectionDefaults } from '../core/group-settings.ts';
import type { Settings } from '../core/settings-definitions.ts';
import { defaultBranchRule, protectionDefaults, protectionDefaultsOf } from './branch-protection.ts';

export async function adoptDefaultBranch(
  db: Db,
  target: { project: ProjectRow; namespace: NamespaceRow; repo: Repository },
  changes: { before: string; after: string; ref: string }[],
  settings: Pick<Settings, 'default_branch_protection_defaults'>,
): Promise<ProjectRow> {
  let { project } = target;
  const moved = changes.find((x) => x.ref.startsWith(BRANCH_PREFIX) && x.after !== ZERO_SHA);
  const created = moved ? moved.ref.slice(BRANCH_PREFIX.length) : null;
  const current = project.default_branch ?? 'main';
  if (created && current !== created && !(await target.repo.branch(current))) {
    await target.repo.setHead(created);
    project =
      (await db.kysely.updateTable('projects').set({ default_branch: created }).where('id', '=', project.id).returningAll().executeTakeFirst()) ?? project;
  }
  const defaultRef = BRANCH_PREFIX + (project.default_branch ?? 'main');
  if (changes.some((c) => c.ref === defaultRef && c.before === ZERO_SHA && c.after !== ZERO_SHA)) {
    await protectDefaultBranch(db.kysely, project, protectionDefaultsOf(target.namespace, protectionDefaults(settings)));
  }
  return project;
}

/** ProtectDefaultBranchService#create_protected_branch: the default branch's rule, unless one of its name exists. */
export async function protectDefaultBranch(
  db: Kysely<Database>,
  project: Pick<ProjectRow, 'id' | 'default_branch'>,
  defaults: BranchProtectionDefaults,
): Promise<void> {
  const rule = defaultBranchRule(defaults);
  if (!rule) return;
  const name = project.default_branch ?? 'main';
  const now = nowIso();
  const run = <T>(fn: (trx: Kysely<Database>) => Promise<T>) => (db.isTransaction ? fn(db) : db.transaction().execute(fn));
  await run(async (trx) => {
    const row = await trx
      .insertInto('protected_branches')
      .values({
        project_id: project.id,
        name,
        allow_force_push: rule.allowForcePush ? 1 : 0,
        code_owner_approval_required: rule.codeOwnerApprovalRequired ? 1 : 0,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.columns(['project_id', 'name']).doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!row) return;
    const access = [...rule.push.map((l) => ['push', l] as const), ...rule.merge.map((l) => ['merge', l] as const)];
    await trx
      .insertInto('protected_ref_access_levels')
      .values(
        access.map(([action, level]) => ({
          protected_branch_id: row.id,
          protected_tag_id: null,
          action,
          access_level: level,
          user_id: null,
          group_id: null,
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();
  });
}
