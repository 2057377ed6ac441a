// tree/project/protected_branches.ndjson and protected_tags.ndjson (GitLab's import_export.yml:
// protected_branches with merge_access_levels, push_access_levels and unprotect_access_levels;
// protected_tags with create_access_levels). On import (RelationFactory#setup_protected_ref_access_level)
// an importer who is neither an administrator nor the owner gets Maintainers for every role but
// "No one"; users map as members do (an unmapped user's access level is dropped), groups are dropped.
// After an import the default branch is protected when no rule of its name came (Project#after_import).
import type { Kysely } from 'kysely';
import type { Database, ProjectRow, ProtectedRefAccessLevelRow } from '../../../db/schema.ts';
import { nowIso } from '../../../lib/time.ts';
import type { FeatureDeps } from '../../deps.ts';
import { type AccessAction, MAINTAINER, NO_ONE, protectionDefaults, protectionDefaultsOf } from '../../repository/branch-protection.ts';
import { protectDefaultBranch } from '../../repository/default-branch.ts';
import type { NdjsonWriter } from './ndjson.ts';

type Json = Record<string, unknown>;

const BRANCH_ACTIONS: [AccessAction, string][] = [
  ['merge', 'merge_access_levels'],
  ['push', 'push_access_levels'],
  ['unprotect', 'unprotect_access_levels'],
];

function accessJson(a: ProtectedRefAccessLevelRow, owner: 'protected_branch_id' | 'protected_tag_id', withDeployKey: boolean) {
  return {
    id: a.id,
    [owner]: owner === 'protected_branch_id' ? a.protected_branch_id : a.protected_tag_id,
    access_level: a.access_level,
    created_at: a.created_at,
    updated_at: a.updated_at,
    user_id: a.user_id,
    group_id: a.group_id,
    ...(withDeployKey ? { deploy_key_id: null } : {}),
  };
}

export async function writeProtectedBranches(db: Kysely<Database>, project: ProjectRow, out: NdjsonWriter): Promise<void> {
  const rows = await db.selectFrom('protected_branches').selectAll().where('project_id', '=', project.id).orderBy('id').execute();
  if (!rows.length) return;
  const access = await db
    .selectFrom('protected_ref_access_levels')
    .selectAll()
    .where(
      'protected_branch_id',
      'in',
      rows.map((r) => r.id),
    )
    .orderBy('id')
    .execute();
  for (const r of rows) {
    const mine = access.filter((a) => a.protected_branch_id === r.id);
    const of = (action: AccessAction) => mine.filter((a) => a.action === action).map((a) => accessJson(a, 'protected_branch_id', action === 'push'));
    await out.write({
      id: r.id,
      project_id: r.project_id,
      name: r.name,
      created_at: r.created_at,
      updated_at: r.updated_at,
      code_owner_approval_required: r.code_owner_approval_required === 1,
      allow_force_push: r.allow_force_push === 1,
      namespace_id: null,
      merge_access_levels: of('merge'),
      push_access_levels: of('push'),
      unprotect_access_levels: of('unprotect'),
    });
  }
}

export async function writeProtectedTags(db: Kysely<Database>, project: ProjectRow, out: NdjsonWriter): Promise<void> {
  const rows = await db.selectFrom('protected_tags').selectAll().where('project_id', '=', project.id).orderBy('id').execute();
  if (!rows.length) return;
  const access = await db
    .selectFrom('protected_ref_access_levels')
    .selectAll()
    .where(
      'protected_tag_id',
      'in',
      rows.map((r) => r.id),
    )
    .orderBy('id')
    .execute();
  for (const r of rows) {
    await out.write({
      id: r.id,
      name: r.name,
      project_id: r.project_id,
      created_at: r.created_at,
      updated_at: r.updated_at,
      create_access_levels: access.filter((a) => a.protected_tag_id === r.id).map((a) => accessJson(a, 'protected_tag_id', true)),
    });
  }
}

/** What the import of protected refs needs of the tree import (TreeImport). */
export interface ProtectedRefsImport {
  readonly project: ProjectRow;
  readonly importer: { id: number };
  readonly admin: boolean;
  readonly users: Map<number, number>;
  relation(name: string, batchSize: number, handle: (trx: Kysely<Database>, items: { lineNumber: number; value: Json }[]) => Promise<number>): Promise<void>;
}

const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const int = (v: unknown): number | null => (typeof v === 'number' && Number.isSafeInteger(v) ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : null);
const time = (v: unknown): string | null => (typeof v === 'string' && !Number.isNaN(new Date(v).getTime()) ? new Date(v).toISOString() : null);

class RecordInvalid extends Error {
  override name = 'ActiveRecord::RecordInvalid';
  constructor(message: string) {
    super(`Validation failed: ${message}`);
  }
}

export async function importProtectedRefs(db: Kysely<Database>, run: ProtectedRefsImport): Promise<void> {
  const ns = await db.selectFrom('namespaces').select(['type', 'owner_id']).where('id', '=', run.project.namespace_id).executeTakeFirst();
  const keepLevels = run.admin || (ns?.type === 'User' && ns.owner_id === run.importer.id);
  const entriesOf = (list: unknown, action: AccessAction) => {
    const out: { action: AccessAction; access_level: number | null; user_id: number | null; group_id: number | null }[] = [];
    for (const a of Array.isArray(list) ? list.filter(isObj) : []) {
      const userId = int(a.user_id);
      if (userId !== null) {
        const mapped = run.users.get(userId);
        if (mapped) out.push({ action, access_level: null, user_id: mapped, group_id: null });
        continue;
      }
      if (int(a.group_id) !== null || int(a.deploy_key_id) !== null) continue;
      const level = int(a.access_level);
      if (level === null || ![0, 30, 40, 60].includes(level)) continue;
      out.push({ action, access_level: keepLevels || level === NO_ONE ? level : MAINTAINER, user_id: null, group_id: null });
    }
    const seen = new Set<string>();
    return out.filter((e) => {
      const k = `${e.access_level}|${e.user_id}`;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    });
  };
  const rule = async (
    table: 'protected_branches' | 'protected_tags',
    items: { value: Json }[],
    trx: Kysely<Database>,
    values: (v: Json) => Json,
    access: (v: Json) => ReturnType<typeof entriesOf>,
  ) => {
    let n = 0;
    const now = nowIso();
    for (const { value: v } of items) {
      const name = typeof v.name === 'string' ? v.name : '';
      if (!name.trim()) throw new RecordInvalid("Name can't be blank");
      const exists = await trx.selectFrom(table).select('id').where('project_id', '=', run.project.id).where('name', '=', name).executeTakeFirst();
      if (exists) continue;
      const { id } = await trx
        .insertInto(table)
        .values({ project_id: run.project.id, name, created_at: time(v.created_at) ?? now, updated_at: time(v.updated_at) ?? now, ...values(v) } as never)
        .returning('id')
        .executeTakeFirstOrThrow();
      const rows = access(v).map((e) => ({
        protected_branch_id: table === 'protected_branches' ? id : null,
        protected_tag_id: table === 'protected_tags' ? id : null,
        ...e,
        created_at: now,
        updated_at: now,
      }));
      if (rows.length) await trx.insertInto('protected_ref_access_levels').values(rows).execute();
      n++;
    }
    return n;
  };
  await run.relation('protected_branches', 100, (trx, items) =>
    rule(
      'protected_branches',
      items,
      trx,
      (v) => ({
        allow_force_push: v.allow_force_push === true ? 1 : 0,
        code_owner_approval_required: v.code_owner_approval_required === true ? 1 : 0,
      }),
      (v) => BRANCH_ACTIONS.flatMap(([action, key]) => entriesOf(v[key], action)),
    ),
  );
  await run.relation('protected_tags', 100, (trx, items) =>
    rule(
      'protected_tags',
      items,
      trx,
      () => ({}),
      (v) => entriesOf(v.create_access_levels, 'create'),
    ),
  );
}

/** Project#after_import's ProtectDefaultBranchService: the imported default branch, unless a rule of its name came. */
export async function protectImportedDefaultBranch(deps: FeatureDeps, project: ProjectRow): Promise<void> {
  const branch = project.default_branch ?? 'main';
  const exists = await deps.repos
    .repository(project)
    .branch(branch)
    .catch(() => null); // no repository (a tree imported alone)
  if (!exists) return;
  const namespace = await deps.db.kysely.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
  await protectDefaultBranch(deps.db.kysely, project, protectionDefaultsOf(namespace, protectionDefaults(await deps.settings.get())));
}
