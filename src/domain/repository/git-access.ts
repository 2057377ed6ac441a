// Who may fetch from or push to a project's repository, whatever the transport (GitLab's
// Gitlab::GitAccess, shared by Workhorse's smart HTTP and gitlab-shell): the project resolved from the
// path the client asked for (an old path after a rename or a transfer leads to the project, as GitLab's
// redirect routes), read access, the push refusals that come before git runs (archived, no push_code,
// a deploy key without write access) and the repository existing. Smart HTTP renders a refusal as
// 401/403/404 with the text git prints; SSH as gitlab-shell's "ERROR: …" on stderr. What comes after
// (protected branches, the push journal, events, hooks) is RepositoryService#receivePack for both.
import type { KeyRow, ProjectRow, UserRow } from '../../db/schema.ts';
import { DomainError } from '../../lib/errors.ts';
import { ANONYMOUS, userActor, type Actor } from '../access/actor.ts';
import type { ProjectAccess } from '../access/policy.ts';
import { MovedError } from '../access/resolve.ts';
import { PUSH_MESSAGES } from './branch-protection.ts';
import { canReadCode } from './read-access.ts';
import type { PushTarget, RepositoryDeps } from './repository.service.ts';

/** The git services a client may run. */
export type GitCommand = 'git-upload-pack' | 'git-receive-pack' | 'git-upload-archive';

/** GitLab's messages of Gitlab::GitAccess (ERROR_MESSAGES). */
export const GIT_ACCESS_MESSAGES = {
  projectNotFound: "The project you were looking for could not be found or you don't have permission to view it.",
  download: PUSH_MESSAGES.download,
  noPermission: PUSH_MESSAGES.noPermission,
  archived: 'You are not allowed to push code to an archived project.',
  deployKeyUpload: 'This deploy key does not have write access to this project.',
  authDownload: 'You are not allowed to download code.',
  authUpload: 'You are not allowed to upload code.',
} as const;

/**
 * Why git may not run: `unauthenticated` (no credentials where some would help: HTTP asks for them),
 * `not_found` (the project is missing or invisible, or has no repository), `forbidden` with GitLab's
 * message.
 */
export type GitRefusal = { kind: 'unauthenticated' } | { kind: 'not_found'; message: string } | { kind: 'forbidden'; message: string };

export class GitAccessDenied extends Error {
  constructor(readonly refusal: GitRefusal) {
    super(refusal.kind === 'unauthenticated' ? 'unauthenticated' : refusal.message);
  }
}

/** A deploy key acting on a project: it reads the projects it is enabled on, pushes with can_push. */
export interface DeployKeyActor {
  key: KeyRow;
  /** the key's user (its creator), to whom pushes are attributed; null once that user is gone */
  user: UserRow | null;
}

/** A deploy token (HTTP basic with its username): what git needs of its row. */
export interface DeployTokenCaller {
  id: number;
  scopes: string[];
  /** the holder: a project, or a group whose projects it reads (subgroups included) */
  project_id: number | null;
  group_id: number | null;
}

/** Who asks: an actor (HTTP credentials, a user's SSH key), a deploy key or a deploy token. */
export type GitCaller =
  | { actor: Actor; deployKey?: undefined; deployToken?: undefined }
  | { deployKey: DeployKeyActor; actor?: undefined; deployToken?: undefined }
  | { deployToken: DeployTokenCaller; actor?: undefined; deployKey?: undefined };

/** What git runs for: the project as the caller sees it and its repository (see PushTarget). */
export interface GitTarget extends PushTarget {
  deployKey: DeployKeyActor | null;
}

/** A full path git may ask for (no `..`, no option-like or absolute path). */
const FULL_PATH = /^[A-Za-z0-9_.][A-Za-z0-9_.\-/]*$/;

export function isGitFullPath(fullPath: string): boolean {
  return FULL_PATH.test(fullPath) && !fullPath.includes('..');
}

const notFound = (): GitAccessDenied => new GitAccessDenied({ kind: 'not_found', message: GIT_ACCESS_MESSAGES.projectNotFound });
const forbidden = (message: string): GitAccessDenied => new GitAccessDenied({ kind: 'forbidden', message });
const unauthenticated = (): GitAccessDenied => new GitAccessDenied({ kind: 'unauthenticated' });

/** What a deploy key may do in the projects it is enabled on: read code, push (can_push permitting). */
function deployKeyAccess(): ProjectAccess {
  return { level: 0, directLevel: 0, permissions: new Set(), abilities: new Set(['read_project', 'read_code', 'push_code']) };
}

/**
 * The target of `command` on `fullPath` for `caller`, or GitAccessDenied. `pushRefusal` is the
 * repository service's check before a push (archived, push_code).
 */
export async function gitTarget(
  deps: Pick<RepositoryDeps, 'db' | 'resolve' | 'repos' | 'policy'>,
  pushRefusal: (actor: Actor, project: ProjectRow, access: ProjectAccess) => string | null,
  caller: GitCaller,
  fullPath: string,
  command: GitCommand,
): Promise<GitTarget> {
  const write = command === 'git-receive-pack';
  if (caller.deployKey) return deployKeyTarget(deps, caller.deployKey, fullPath, write);
  if (caller.deployToken) return deployTokenTarget(deps, caller.deployToken, fullPath, write);
  const actor = caller.actor;
  const hidden = () => (actor.user ? notFound() : unauthenticated());
  if (!isGitFullPath(fullPath)) throw hidden();
  let resolved;
  try {
    resolved = await resolveFor(deps, actor, fullPath);
  } catch (e) {
    if (!(e instanceof DomainError && e.status === 404)) throw e;
    // a job token outside the project's scope reads what anyone may (Gitlab::GitAccess's Guest fallback)
    if (actor.kind !== 'job' || write) throw hidden();
    try {
      resolved = await resolveFor(deps, ANONYMOUS, fullPath);
    } catch (e2) {
      if (e2 instanceof DomainError && e2.status === 404) throw hidden();
      throw e2;
    }
  }
  const { project, namespace, access } = resolved;
  if (!canReadCode(actor, project, access)) {
    if (!actor.user) throw unauthenticated();
    throw forbidden(GIT_ACCESS_MESSAGES.download);
  }
  if (write) {
    if (!actor.user) throw unauthenticated();
    const refusal = pushRefusal(actor, project, access);
    if (refusal) throw forbidden(refusal);
  }
  const repo = deps.repos.repository(project);
  if (!repo.exists()) throw notFound();
  return { actor, project, namespace, access, repo, deployKey: null };
}

/** The project at `fullPath` (or where it moved) as `actor` sees it. */
async function resolveFor(deps: Pick<RepositoryDeps, 'resolve'>, actor: Actor, fullPath: string) {
  try {
    return await deps.resolve.project(actor, fullPath);
  } catch (e) {
    if (e instanceof MovedError) return deps.resolve.project(actor, e.fullPath);
    throw e;
  }
}

/**
 * Gitlab::GitAccess for a DeployKey: any project the key is enabled on, whatever its visibility;
 * a push needs the key's can_push there, a project that is not archived, and a key user who may
 * still see the project (DeployKeyAccess#can_collaborate?).
 */
async function deployKeyTarget(
  deps: Pick<RepositoryDeps, 'db' | 'resolve' | 'repos' | 'policy'>,
  dk: DeployKeyActor,
  fullPath: string,
  write: boolean,
): Promise<GitTarget> {
  if (!isGitFullPath(fullPath)) throw notFound();
  let found = await deps.resolve.findProjectRow(fullPath);
  if (found && 'moved' in found) found = await deps.resolve.findProjectRow(found.moved);
  if (!found || 'moved' in found) throw notFound();
  const { project, namespace } = found;
  const link = await deps.db.kysely
    .selectFrom('deploy_keys_projects')
    .select('can_push')
    .where('deploy_key_id', '=', dk.key.id)
    .where('project_id', '=', project.id)
    .executeTakeFirst();
  if (!link) throw notFound();
  // the key acts as its user (pushes are theirs), never with administrator rights
  const actor: Actor = dk.user ? userActor(dk.user, { isAdmin: false }) : ANONYMOUS;
  if (write) {
    if (project.archived) throw forbidden(GIT_ACCESS_MESSAGES.archived);
    if (Number(link.can_push) !== 1 || !dk.user) throw forbidden(GIT_ACCESS_MESSAGES.deployKeyUpload);
    const userAccess = await deps.policy.project(actor, project, namespace);
    if (!userAccess.abilities.has('read_project')) throw forbidden(GIT_ACCESS_MESSAGES.noPermission);
  }
  const repo = deps.repos.repository(project);
  if (!repo.exists()) throw notFound();
  return { actor, project, namespace, access: deployKeyAccess(), repo, deployKey: dk };
}

/**
 * Gitlab::Auth#deploy_token_check and GitAccess for a DeployToken: the token authenticates only for a project
 * it holds (its project, or any project under its group) — elsewhere git is asked for credentials again (401);
 * it downloads with read_repository and never pushes (deploy tokens have no write_repository scope).
 */
async function deployTokenTarget(
  deps: Pick<RepositoryDeps, 'db' | 'resolve' | 'repos' | 'policy'>,
  dt: DeployTokenCaller,
  fullPath: string,
  write: boolean,
): Promise<GitTarget> {
  if (!isGitFullPath(fullPath)) throw unauthenticated();
  let found = await deps.resolve.findProjectRow(fullPath);
  if (found && 'moved' in found) found = await deps.resolve.findProjectRow(found.moved);
  if (!found || 'moved' in found) throw unauthenticated();
  const { project, namespace } = found;
  let holds = dt.project_id === project.id;
  if (!holds && dt.group_id !== null) {
    const group = await deps.resolve.namespaceById(dt.group_id);
    holds = !!group && namespace.traversal_ids.startsWith(group.traversal_ids);
  }
  if (!holds) throw unauthenticated();
  if (!dt.scopes.includes('read_repository')) throw forbidden(GIT_ACCESS_MESSAGES.authDownload);
  if (write) throw forbidden(GIT_ACCESS_MESSAGES.authUpload);
  const repo = deps.repos.repository(project);
  if (!repo.exists()) throw notFound();
  return {
    actor: ANONYMOUS,
    project,
    namespace,
    access: { level: 0, directLevel: 0, permissions: new Set(), abilities: new Set(['read_project', 'read_code']) },
    repo,
    deployKey: null,
  };
}
