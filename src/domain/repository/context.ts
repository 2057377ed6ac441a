// What every repository operation starts from: the project as the caller sees it and its repository.
import type { NamespaceRow, ProjectRow } from '../../db/schema.ts';
import type { RepositoryStore } from '../../git/storage.ts';
import type { Repository } from '../../git/repository.ts';
import { Errors } from '../../lib/errors.ts';
import type { Actor } from '../access/actor.ts';
import type { ProjectAccess } from '../access/policy.ts';
import { featureOpen } from '../access/visibility.ts';
import type { Resolver } from '../access/resolve.ts';
import { canReadCode } from './read-access.ts';

export interface RepoContext {
  project: ProjectRow;
  namespace: NamespaceRow;
  access: ProjectAccess;
  repo: Repository;
  /** "group/project" */
  fullPath: string;
  /** "http://host/group/project" */
  webUrl: string;
}

/** What a context is made of: the resolver, the repositories, the external URL. */
export interface ContextDeps {
  resolve: Resolver;
  repos: RepositoryStore;
  externalUrl: string;
}

function contextOf(deps: ContextDeps, project: ProjectRow, namespace: NamespaceRow, access: ProjectAccess, repo: Repository): RepoContext {
  const fullPath = `${namespace.full_path}/${project.path}`;
  return { project, namespace, access, repo, fullPath, webUrl: `${deps.externalUrl}/${fullPath}` };
}

/**
 * The project (404 when invisible), with read_code checked (403 without it, GitLab's
 * authorize_read_code!). The repository feature's access level narrows read_code.
 */
export async function repositoryContext(deps: ContextDeps, actor: Actor, id: string | number): Promise<RepoContext> {
  const { project, namespace, access } = await deps.resolve.project(actor, id);
  if (!canReadCode(actor, project, access)) throw Errors.forbidden();
  return contextOf(deps, project, namespace, access, deps.repos.repository(project));
}

/**
 * The context of a project already resolved for the actor, or null when the actor may not read its code
 * (what a search of the project's code or commits finds then: nothing).
 */
export function readableContext(
  deps: ContextDeps,
  actor: Actor,
  found: { project: ProjectRow; namespace: NamespaceRow; access: ProjectAccess },
): RepoContext | null {
  if (!canReadCode(actor, found.project, found.access)) return null;
  return contextOf(deps, found.project, found.namespace, found.access, deps.repos.repository(found.project));
}

/**
 * The context of the branches and tags APIs. `featureNotFound` (the branches API's
 * require_repository_enabled!): a repository feature the caller cannot use is 404 "404 Not Found"
 * rather than 403. A project without a repository on disk is 404 "404 Not Found" (repo_exists? /
 * NoRepository).
 */
export async function refsContext(deps: ContextDeps, actor: Actor, id: string, featureNotFound: boolean): Promise<RepoContext> {
  const { project, namespace, access } = await deps.resolve.project(actor, id);
  // administrators pass here even where the repository feature is disabled
  if (featureNotFound && !actor.isAdmin && !featureOpen(actor, project, access, 'repository')) throw Errors.notFound();
  if (!canReadCode(actor, project, access)) throw Errors.forbidden();
  const repo = deps.repos.repository(project);
  if (!repo.exists()) throw Errors.notFound();
  return contextOf(deps, project, namespace, access, repo);
}

/** The commit `ref` names (default: the project's default branch), or null. */
export async function resolveRef(ctx: RepoContext, ref: string | undefined): Promise<string | null> {
  return ctx.repo.resolveCommit(ref || ctx.project.default_branch || 'main');
}
