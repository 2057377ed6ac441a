// What every repository route starts from: the project as the caller sees it, its repository, and
// the commit entities GitLab returns.
import type { Container } from '../../../container.ts';
import type { NamespaceRow, ProjectRow } from '../../../db/schema.ts';
import type { Actor } from '../../../domain/access/actor.ts';
import type { ProjectAccess } from '../../../domain/access/policy.ts';
import { canReadCode } from '../../../domain/repository/read-access.ts';
import { commitTitle, commitTrailers, isoTime, type Commit } from '../../../git/objects.ts';
import type { Repository } from '../../../git/repository.ts';
import { Errors } from '../../../lib/errors.ts';
import { recordPushEvents, type RefChange } from '../../../domain/repository/push-events.ts';

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

/**
 * The project (404 when invisible), with read_code checked (403 without it, GitLab's
 * authorize_read_code!). The repository feature's access level narrows read_code.
 */
export async function repositoryContext(c: Container, actor: Actor, id: string | number): Promise<RepoContext> {
  const { project, namespace, access } = await c.resolve.project(actor, id);
  if (!canReadCode(actor, project, access)) throw Errors.forbidden();
  const fullPath = `${namespace.full_path}/${project.path}`;
  return { project, namespace, access, repo: c.repos.repository(project), fullPath, webUrl: `${c.config.externalUrl}/${fullPath}` };
}

export { canReadCode };

/** The commit `ref` names (default: the project's default branch), or null. */
export async function resolveRef(ctx: RepoContext, ref: string | undefined): Promise<string | null> {
  return ctx.repo.resolveCommit(ref || ctx.project.default_branch || 'main');
}

/** API::Entities::CommitBasic */
export function commitBasic(commit: Commit, webUrl: string) {
  const { trailers, extended } = commitTrailers(commit.message);
  return {
    id: commit.sha,
    short_id: commit.sha.slice(0, 8),
    created_at: isoTime(commit.committer.time, commit.committer.tz),
    parent_ids: commit.parents,
    title: commitTitle(commit.message),
    message: commit.message,
    author_name: commit.author.name,
    author_email: commit.author.email,
    authored_date: isoTime(commit.author.time, commit.author.tz),
    committer_name: commit.committer.name,
    committer_email: commit.committer.email,
    committed_date: isoTime(commit.committer.time, commit.committer.tz),
    trailers,
    extended_trailers: extended,
    web_url: `${webUrl}/-/commit/${commit.sha}`,
  };
}

export type CommitEntity = ReturnType<typeof commitBasic>;

/** After refs changed through the API (commits, branches, tags): the push events, as for a git push. */
export async function recordRefChanges(c: Container, ctx: RepoContext, actor: Actor, changes: RefChange[]): Promise<void> {
  const settings = await c.settings.get();
  await recordPushEvents({ db: c.db, externalUrl: c.config.externalUrl, settings, project: ctx.project, namespace: ctx.namespace, user: actor.user!, repo: ctx.repo }, changes);
}
