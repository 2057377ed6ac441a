// The CI/CD job token scope (GitLab's Ci::JobToken::Scope, inbound direction): a job token of project A
// reaches project B only when B is A itself, B's inbound restriction is off, or B's allowlist names A or a
// group A lies under. The policy asks it for every job actor (ProjectPolicy#project_allowed_for_job_token_by_scope),
// so API routes that take job tokens and git over HTTP follow it without a check of their own.
import type { Db } from '../../db/connect.ts';
import type { ProjectRow } from '../../db/schema.ts';

/** GitLab 17: a project without a stored setting (every project created since) restricts inbound job tokens. */
export const INBOUND_SCOPE_DEFAULT = true;

/** Whether the project's inbound job token scope is on (project_ci_cd_settings, on when absent). */
export async function inboundScopeEnabled(db: Db, projectId: number): Promise<boolean> {
  const row = await db.kysely
    .selectFrom('project_ci_cd_settings')
    .select('inbound_job_token_scope_enabled')
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  return row ? row.inbound_job_token_scope_enabled === 1 : INBOUND_SCOPE_DEFAULT;
}

/** The project of a job (undefined when the job is gone). */
export async function jobProjectId(db: Db, jobId: number): Promise<number | undefined> {
  return (await db.kysely.selectFrom('ci_builds').select('project_id').where('id', '=', jobId).executeTakeFirst())?.project_id;
}

/** Ci::JobToken::Scope#accessible?: may a job token of `originProjectId` act on `target`? */
export async function jobTokenAllows(db: Db, originProjectId: number, target: Pick<ProjectRow, 'id'>): Promise<boolean> {
  if (originProjectId === target.id) return true;
  if (!(await inboundScopeEnabled(db, target.id))) return true;
  const k = db.kysely;
  const link = await k
    .selectFrom('ci_job_token_project_scope_links')
    .select('id')
    .where('source_project_id', '=', target.id)
    .where('target_project_id', '=', originProjectId)
    .where('direction', '=', 'inbound')
    .executeTakeFirst();
  if (link) return true;
  // a group on the allowlist lets in every project below it (its subtree)
  const groups = await k
    .selectFrom('ci_job_token_group_scope_links')
    .innerJoin('namespaces', 'namespaces.id', 'ci_job_token_group_scope_links.target_group_id')
    .select('namespaces.id')
    .where('ci_job_token_group_scope_links.source_project_id', '=', target.id)
    .execute();
  if (!groups.length) return false;
  const origin = await k
    .selectFrom('projects')
    .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
    .select('namespaces.traversal_ids')
    .where('projects.id', '=', originProjectId)
    .executeTakeFirst();
  if (!origin) return false;
  const ancestors = new Set(origin.traversal_ids.split('/').filter(Boolean).map(Number));
  return groups.some((g) => ancestors.has(g.id));
}
