// The CI/CD job token scope of a project (GitLab's API::ProjectJobTokenScope, Ci::JobTokenScope::
// {Add,Remove}{Project,Group}Service): the inbound restriction and its allowlists of projects and groups.
// What a job token may do with it is decided in domain/access/job-token-scope.ts, for every caller.
import type { NamespaceRow, ProjectRow } from '../../db/schema.ts';
import { isUniqueViolation } from '../../db/sql.ts';
import { Errors } from '../../lib/errors.ts';
import { nowIso } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import { inboundScopeEnabled } from '../access/job-token-scope.ts';
import type { ResolvedProject } from '../access/resolve.ts';
import type { CiDeps } from './deps.ts';

export const SCOPE_MESSAGES = {
  insufficient: 'Insufficient permissions to modify the job token scope',
  targetProject: "The target_project that you are attempting to access does not exist or you don't have permission to perform this action",
  targetGroup: "The target_group that you are attempting to access does not exist or you don't have permission to perform this action",
  projectTaken: 'Target project is already in the job token scope',
  groupTaken: 'Target group is already in the job token scope',
  sameProject: "Validation failed: Target project can't be the same as the source project",
  projectMissing: 'Target project is not in the job token scope',
  groupMissing: 'Target group is not in the job token scope',
} as const;

export class JobTokenScopeService {
  constructor(private readonly deps: CiDeps) {}

  private get k() {
    return this.deps.db.kysely;
  }

  private mayAdmin(actor: Actor, ctx: ResolvedProject): boolean {
    return actor.isAdmin || ctx.access.abilities.has('admin_project');
  }

  /** authorize_admin_project: 404 for a project the caller may not see, 403 below Maintainer. */
  async project(actor: Actor, idOrPath: string): Promise<ResolvedProject> {
    const ctx = await this.deps.resolve.project(actor, idOrPath);
    if (!this.mayAdmin(actor, ctx)) throw Errors.forbidden();
    return ctx;
  }

  /** The project as the caller sees it (DELETE checks admin_project in the service, with its message). */
  visible(actor: Actor, idOrPath: string): Promise<ResolvedProject> {
    return this.deps.resolve.project(actor, idOrPath);
  }

  inboundEnabled(project: ProjectRow): Promise<boolean> {
    return inboundScopeEnabled(this.deps.db, project.id);
  }

  async setInbound(project: ProjectRow, enabled: boolean): Promise<void> {
    const value = enabled ? 1 : 0;
    await this.k
      .insertInto('project_ci_cd_settings')
      .values({ project_id: project.id, inbound_job_token_scope_enabled: value })
      .onConflict((oc) => oc.column('project_id').doUpdateSet({ inbound_job_token_scope_enabled: value }))
      .execute();
  }

  /** Ci::JobToken::Scope#inbound_projects: the projects on the allowlist, by id. */
  allowedProjects(project: ProjectRow) {
    return this.k
      .selectFrom('projects')
      .selectAll('projects')
      .where('projects.id', 'in', (eb) =>
        eb
          .selectFrom('ci_job_token_project_scope_links')
          .select('target_project_id')
          .where('source_project_id', '=', project.id)
          .where('direction', '=', 'inbound'),
      )
      .orderBy('projects.id');
  }

  /** Ci::JobToken::Scope#groups: the groups on the allowlist, by id. */
  allowedGroups(project: ProjectRow) {
    return this.k
      .selectFrom('namespaces')
      .selectAll('namespaces')
      .where('namespaces.id', 'in', (eb) =>
        eb.selectFrom('ci_job_token_group_scope_links').select('target_group_id').where('source_project_id', '=', project.id),
      )
      .orderBy('namespaces.id');
  }

  /** AddProjectService (inbound): the target must be a project the caller sees, not the project itself, not listed yet. */
  async addProject(actor: Actor, ctx: ResolvedProject, targetId: number): Promise<{ source_project_id: number; target_project_id: number }> {
    const target = await this.k.selectFrom('projects').selectAll().where('id', '=', targetId).executeTakeFirst();
    if (!target) throw Errors.notFound('target_project_id not found');
    if (!this.mayAdmin(actor, ctx)) throw Errors.badRequest(SCOPE_MESSAGES.insufficient);
    const ns = await this.deps.resolve.namespaceById(target.namespace_id);
    const access = ns ? await this.deps.policy.project(actor, target, ns) : null;
    if (!access?.abilities.has('read_project') && !actor.isAdmin) throw Errors.badRequest(SCOPE_MESSAGES.targetProject);
    if (target.id === ctx.project.id) throw Errors.badRequest(SCOPE_MESSAGES.sameProject);
    try {
      await this.k
        .insertInto('ci_job_token_project_scope_links')
        .values({
          source_project_id: ctx.project.id,
          target_project_id: target.id,
          direction: 'inbound',
          added_by_id: actor.user?.id ?? null,
          created_at: nowIso(),
        })
        .execute();
    } catch (e) {
      if (isUniqueViolation(e)) throw Errors.badRequest(SCOPE_MESSAGES.projectTaken);
      throw e;
    }
    return { source_project_id: ctx.project.id, target_project_id: target.id };
  }

  /** RemoveProjectService: 403 with its message below Maintainer, 400 when the project is not listed. */
  async removeProject(actor: Actor, ctx: ResolvedProject, target: ProjectRow): Promise<void> {
    if (!this.mayAdmin(actor, ctx)) throw Errors.forbidden(SCOPE_MESSAGES.insufficient);
    const r = await this.k
      .deleteFrom('ci_job_token_project_scope_links')
      .where('source_project_id', '=', ctx.project.id)
      .where('target_project_id', '=', target.id)
      .where('direction', '=', 'inbound')
      .executeTakeFirst();
    if (Number(r.numDeletedRows) === 0) throw Errors.badRequest(SCOPE_MESSAGES.projectMissing);
  }

  private async group(targetId: number): Promise<NamespaceRow> {
    const g = await this.k.selectFrom('namespaces').selectAll().where('id', '=', targetId).where('type', '=', 'Group').executeTakeFirst();
    if (!g) throw Errors.notFound('target_group_id not found');
    return g;
  }

  /** AddGroupService: the target must be a group the caller sees, not listed yet. */
  async addGroup(actor: Actor, ctx: ResolvedProject, targetId: number): Promise<{ source_project_id: number; target_group_id: number }> {
    const target = await this.group(targetId);
    if (!this.mayAdmin(actor, ctx)) throw Errors.badRequest(SCOPE_MESSAGES.insufficient);
    const access = await this.deps.policy.group(actor, target);
    if (!access.abilities.has('read_group') && !actor.isAdmin) throw Errors.badRequest(SCOPE_MESSAGES.targetGroup);
    try {
      await this.k
        .insertInto('ci_job_token_group_scope_links')
        .values({ source_project_id: ctx.project.id, target_group_id: target.id, added_by_id: actor.user?.id ?? null, created_at: nowIso() })
        .execute();
    } catch (e) {
      if (isUniqueViolation(e)) throw Errors.badRequest(SCOPE_MESSAGES.groupTaken);
      throw e;
    }
    return { source_project_id: ctx.project.id, target_group_id: target.id };
  }

  async removeGroup(actor: Actor, ctx: ResolvedProject, targetId: number): Promise<void> {
    const target = await this.group(targetId);
    if (!this.mayAdmin(actor, ctx)) throw Errors.forbidden(SCOPE_MESSAGES.insufficient);
    const r = await this.k
      .deleteFrom('ci_job_token_group_scope_links')
      .where('source_project_id', '=', ctx.project.id)
      .where('target_group_id', '=', target.id)
      .executeTakeFirst();
    if (Number(r.numDeletedRows) === 0) throw Errors.badRequest(SCOPE_MESSAGES.groupMissing);
  }
}
