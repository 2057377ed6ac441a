// Forks (GitLab's Projects::ForkService, UnlinkForkService, ForkTargetsFinder): a new project made by the
// one project-creation path (ProjectsService.create) whose repository borrows its source's objects (git
// alternates: refs are copied, objects are not), and the fork links of project_forks.
import type { Kysely } from 'kysely';
import type { Database, NamespaceRow, ProjectRow } from '../../db/schema.ts';
import { ciEquals } from '../../db/sql.ts';
import { DomainError, Errors } from '../../lib/errors.ts';
import { nowIso } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import type { ProjectAccess } from '../access/policy.ts';
import { featureOpen, restrictedFor } from '../access/visibility.ts';
import { aboveNamespace, clampToNamespace, levelOf } from '../core/visibility-levels.ts';
import type { FeatureDeps } from '../deps.ts';
import { VISIBILITY_LEVELS, type VisibilityName } from '../core/settings-definitions.ts';
import { FEATURES, settingsOf } from '../core/project-settings.ts';
import { notAllowedInGroup, ProjectsService } from './projects.service.ts';

export interface ForkInput {
  namespace_id?: number;
  namespace_path?: string;
  /** deprecated: an id or a full path */
  namespace?: string;
  path?: string;
  name?: string;
  description?: string;
  visibility?: VisibilityName;
  /** one branch: the fork gets only it */
  branches?: string;
  mr_default_target_self?: boolean;
}

export interface ForkLink {
  project_id: number;
  forked_from_project_id: number | null;
  root_project_id: number | null;
}

/** ActiveModel's errors.full_messages: "Project namespace name has already been taken". */
export function fullMessages(errors: Record<string, string[]>): string[] {
  return Object.entries(errors).flatMap(([key, msgs]) => {
    const human = key.replace(/[._]/g, ' ');
    return msgs.map((m) => `${human.charAt(0).toUpperCase()}${human.slice(1)} ${m}`);
  });
}

const VISIBILITIES = Object.keys(VISIBILITY_LEVELS) as VisibilityName[];

export class ForksService {
  /** project creation is ProjectsService's (stateless: built on the same dependencies) */
  private readonly projects: ProjectsService;

  constructor(readonly deps: FeatureDeps) {
    this.projects = new ProjectsService(deps.db, deps.settings, deps.policy, deps.resolve, deps.repos);
  }

  /** The link of a fork to its source (null: not a fork). `forked_from_project_id` is null once the source is gone. */
  async forkedFrom(projectId: number): Promise<ForkLink | null> {
    const row = await this.deps.db.kysely
      .selectFrom('project_forks')
      .select(['project_id', 'forked_from_project_id', 'root_project_id'])
      .where('project_id', '=', projectId)
      .executeTakeFirst();
    return row ?? null;
  }

  /** ProjectPolicy's fork_project: a signed-in user who may read the code, while forking is open to them. */
  canFork(actor: Actor, project: ProjectRow, access: ProjectAccess): boolean {
    if (!actor.user || !access.abilities.has('read_code')) return false;
    // administrators fork even where forking is disabled
    return actor.isAdmin || featureOpen(actor, project, access, 'forking');
  }

  /** POST /projects/:id/fork */
  async fork(actor: Actor, idOrPath: string, input: ForkInput): Promise<ProjectRow> {
    const { project: source, access } = await this.deps.resolve.project(actor, idOrPath);
    if (!this.canFork(actor, source, access)) throw Errors.notFound();
    const me = actor.user!;
    const k = this.deps.db.kysely;

    let target: NamespaceRow | undefined;
    if (input.namespace_id !== undefined) target = await this.findNamespace(actor, String(input.namespace_id), true);
    else if (input.namespace_path) target = await this.findNamespace(actor, input.namespace_path, false);
    else if (input.namespace) target = await this.findNamespace(actor, input.namespace, /^\d+$/.test(input.namespace));
    target ??= await k.selectFrom('namespaces').selectAll().where('owner_id', '=', me.id).where('type', '=', 'User').executeTakeFirst();

    const repo = this.deps.repos.repository(source);
    let branches: string[] | undefined;
    if (input.branches) {
      if (!repo.exists() || !(await repo.branch(input.branches))) throw Errors.notFound('Source Branch');
      branches = [input.branches];
    }
    if (!target || !(await this.validTarget(actor, target))) throw Errors.notFound('Target Namespace');

    const visibility = await this.visibility(actor, source, target, input.visibility);
    const s = settingsOf(source);
    const features: Record<string, unknown> = {};
    for (const f of Object.keys(FEATURES)) features[`${f}_access_level`] = s[`${f}_access_level`];
    const defaultBranch = branches?.[0] ?? source.default_branch ?? 'main';
    const root = (await this.forkedFrom(source.id))?.root_project_id ?? source.id;
    try {
      return await this.projects.create(
        actor,
        {
          namespace_id: target.id,
          name: input.name ?? source.name,
          path: input.path ?? source.path,
          description: input.description ?? source.description ?? undefined,
          visibility,
          default_branch: defaultBranch,
          ...features,
          shared_runners_enabled: s.shared_runners_enabled,
          ci_config_path: s.ci_config_path,
          ci_default_git_depth: s.ci_default_git_depth ?? 0,
          ...(input.mr_default_target_self !== undefined ? { mr_default_target_self: input.mr_default_target_self } : {}),
        },
        {
          inTransaction: (trx, fork) => this.link(trx, fork.id, source.id, root),
          repository: async (fork) => {
            await this.deps.repos.createFork(fork, source, { defaultBranch, branches });
          },
        },
      );
    } catch (e) {
      // The model's errors (a taken name or path, an invalid one): conflict!(errors.full_messages) — 409.
      if (e instanceof DomainError && e.kind === 'invalid') throw Errors.conflict(fullMessages(e.detail as Record<string, string[]>));
      throw e;
    }
  }

  /**
   * POST /projects/:id/fork/:forked_from_id: marks an existing project as a fork (link_forked_project:
   * Owners and administrators; the caller must be allowed to fork the source into the project's namespace).
   */
  async linkExisting(actor: Actor, idOrPath: string, forkedFromId: string): Promise<ProjectRow> {
    const { project, namespace, access } = await this.deps.resolve.project(actor, idOrPath);
    if (!(actor.isAdmin || access.level >= 50)) throw Errors.forbidden();
    const { project: source, access: sourceAccess } = await this.deps.resolve.project(actor, forkedFromId);
    if (!this.canFork(actor, source, sourceAccess)) throw Errors.forbidden();
    if (!(await this.validTarget(actor, namespace))) throw Errors.unauthorized('Target Namespace');
    if (await this.forkedFrom(project.id)) throw Errors.conflict('Project already forked');
    const root = (await this.forkedFrom(source.id))?.root_project_id ?? source.id;
    if (source.id === project.id) throw Errors.refused('Target project cannot be equal to source project');
    // nor of one of its own forks
    if (root === project.id) throw Errors.refused(['Forked from project is forbidden']);
    return this.deps.db.kysely.transaction().execute(async (trx) => {
      await this.link(trx, project.id, source.id, root);
      return trx.updateTable('projects').set({ updated_at: nowIso() }).where('id', '=', project.id).returningAll().executeTakeFirstOrThrow();
    });
  }

  /**
   * DELETE /projects/:id/fork (Projects::UnlinkForkService): false when the project is not a fork
   * (304). The fork keeps its history: its repository gets its own objects and stops borrowing.
   */
  async unlink(actor: Actor, idOrPath: string, unmodifiedSince?: number): Promise<boolean> {
    const { project, access } = await this.deps.resolve.project(actor, idOrPath);
    // remove_fork_project: Owners and administrators.
    if (!(actor.isAdmin || access.level >= 50)) throw Errors.forbidden();
    if (unmodifiedSince !== undefined && Date.parse(project.updated_at) > unmodifiedSince) throw Errors.preconditionFailed();
    const link = await this.forkedFrom(project.id);
    if (!link) return false;
    await this.deps.repos.disconnect(project);
    // Forks of this fork stay forks of it; this one leaves the network.
    await this.deps.db.kysely.transaction().execute(async (trx) => {
      await trx.deleteFrom('project_forks').where('project_id', '=', project.id).execute();
      await trx.updateTable('project_forks').set({ root_project_id: project.id }).where('forked_from_project_id', '=', project.id).execute();
      await trx.updateTable('projects').set({ updated_at: nowIso() }).where('id', '=', project.id).execute();
    });
    return true;
  }

  private async link(trx: Kysely<Database>, projectId: number, sourceId: number, rootId: number): Promise<void> {
    await trx
      .insertInto('project_forks')
      .values({ project_id: projectId, forked_from_project_id: sourceId, root_project_id: rootId, created_at: nowIso() })
      .execute();
  }

  /** find_namespace! / find_namespace_by_path!: a namespace the caller may see, or 404 Namespace. */
  private async findNamespace(actor: Actor, key: string, byId: boolean): Promise<NamespaceRow> {
    const q = this.deps.db.kysely.selectFrom('namespaces').selectAll();
    const ns = byId ? await q.where('id', '=', Number(key)).executeTakeFirst() : await q.where(ciEquals('full_path', key)).executeTakeFirst();
    if (ns) {
      if (ns.type === 'User') {
        if (actor.isAdmin || ns.owner_id === actor.user?.id) return ns;
      } else if ((await this.deps.policy.group(actor, ns)).abilities.has('read_group')) return ns;
    }
    throw Errors.notFound('Namespace');
  }

  /** ForkTargetsFinder: the caller's own namespace and the groups where they may create projects. */
  private async validTarget(actor: Actor, ns: NamespaceRow): Promise<boolean> {
    if (actor.isAdmin) return true;
    if (ns.type === 'User') return ns.owner_id === actor.user!.id;
    return (await this.deps.policy.group(actor, ns)).abilities.has('create_projects');
  }

  /**
   * Nothing asked: the least open of the source and the target group, then the closest level allowed.
   * An asked visibility above the source's or the target group's is refused with the model's messages
   * (Project#visibility_level_allowed_as_fork, #visibility_level_allowed_by_group), not lowered.
   */
  private async visibility(actor: Actor, source: ProjectRow, target: NamespaceRow, asked?: VisibilityName): Promise<VisibilityName> {
    const level = levelOf(clampToNamespace(source.visibility, target));
    if (asked) {
      const errors: string[] = [];
      if (levelOf(asked) > levelOf(source.visibility)) errors.push(`${asked} is not allowed since the fork source project has lower visibility.`);
      if (aboveNamespace(asked, target)) errors.push(notAllowedInGroup(asked, target.visibility));
      if (errors.length) throw Errors.conflict(fullMessages({ visibility_level: errors }));
      // a restricted level is refused by the creation (409 "… has been restricted by your GitLab administrator")
      return asked;
    }
    const settings = await this.deps.settings.get();
    // Gitlab::VisibilityLevel.closest_allowed_level: the highest allowed level not above it.
    const allowed = VISIBILITIES.filter((v) => levelOf(v) <= level && !restrictedFor(settings, actor, v)).sort((a, b) => levelOf(b) - levelOf(a));
    return allowed[0] ?? (VISIBILITIES.find((v) => levelOf(v) === level) as VisibilityName);
  }
}
