// The checks of the two ways the API commits files, against the refs as they are when the write holds
// the repository: the commits API (Commits::CreateService#validate! with Files::MultiService's actions)
// and the files API (Files::CreateService, UpdateService, DeleteService). They answer with GitLab's
// messages; the write path (repository.service.ts) runs them and commits what they return.
import { CommitActionError, type CommitRequest, type FileAction, type Person } from '../../git/commit-builder.ts';
import { GitError, isSafePath } from '../../git/command.ts';
import { isWritablePath } from '../../git/object-checks.ts';
import { isValidRefName, isValidRevision, ZERO_SHA } from '../../git/refs.ts';
import type { Repository } from '../../git/repository.ts';
import { type DomainError, Errors } from '../../lib/errors.ts';
import type { Actor } from '../access/actor.ts';
import { canForcePushBranch, PUSH_MESSAGES, type BranchProtection } from './branch-protection.ts';
import type { RepoContext } from './context.ts';
import { lastCommitFor } from './files.ts';

/** render_api_error!(message, 400) */
export const failure = (message: string): DomainError => Errors.refused(message);

/** A commit the write path makes, and the branch's value it replaces (ZERO_SHA: a new branch). */
export interface CommitPlan {
  request: CommitRequest;
  before: string;
}

/** The user's identity for commits: the commit e-mail when set (Gitlab::Git::User.from_gitlab), else the e-mail. */
export function committerOf(actor: Actor): { name: string; email: string } {
  const user = actor.user!;
  return { name: user.name, email: user.commit_email || user.email };
}

/** The user commits; the author is author_name / author_email when given (not blank), else the user too. One time for both. */
export function people(actor: Actor, name: string | undefined, email: string | undefined): { author: Person; committer: Person } {
  const time = Math.floor(Date.now() / 1000);
  const committer = { ...committerOf(actor), time };
  return { author: { name: name?.trim() ? name : committer.name, email: email?.trim() ? email : committer.email, time }, committer };
}

/** commit-tree refusing an identity ("name consists only of disallowed characters"): a 400 with git's words. */
export function identityRefusal(e: unknown): DomainError | null {
  return e instanceof GitError && /^git commit-tree/.test(e.message) ? failure(e.stderr.trim().replace(/^fatal: /, '')) : null;
}

/** The branch moved since it was read (update-ref's compare-and-swap). */
export function isStaleBranch(e: unknown): boolean {
  return e instanceof GitError && e.message.startsWith('git update-ref');
}

/** A file action that cannot be applied: 400 with its message. */
export function actionRefusal(e: unknown): DomainError | null {
  return e instanceof CommitActionError ? failure(e.message) : null;
}

// ---- the commits API --------------------------------------------------------------------------

export const COMMIT_ACTIONS = ['create', 'update', 'move', 'delete', 'chmod'] as const;
type ActionName = (typeof COMMIT_ACTIONS)[number];

export interface CommitActionInput {
  action: string;
  file_path: string;
  previous_path?: string;
  content?: string | null;
  encoding?: 'text' | 'base64';
  last_commit_id?: string | null;
  execute_filemode?: boolean;
}

/** POST /projects/:id/repository/commits, its parameters checked. */
export interface CommitInput {
  branch: string;
  message: string;
  actions: CommitActionInput[];
  startBranch?: string;
  startSha?: string;
  authorName?: string;
  authorEmail?: string;
  force?: boolean;
}

/**
 * Gitaly's index errors for a path of a file action (GitLab renders them with status 400). A path the
 * commit adds follows git's rules for index paths (isWritablePath); one it only removes needs to be safe.
 */
function pathError(p: string, added: boolean): string | null {
  if (p === '') return 'You must provide a file path';
  if (p.split('/').includes('..')) return 'Path cannot include directory traversal';
  if (!isSafePath(p) || /[\n\r]/.test(p) || (added && !isWritablePath(p))) return `invalid path: '${p}'`;
  return null;
}

/** Commits::CreateService#validate! and Files::MultiService's actions: the commit to make. */
export async function planCommit(ctx: RepoContext, actor: Actor, input: CommitInput, empty: boolean, protection: BranchProtection | null): Promise<CommitPlan> {
  const repo = ctx.repo;
  const branch = input.branch;
  const force = input.force === true;
  const startSha = input.startSha;
  const startBranch = input.startBranch ?? (startSha === undefined ? branch : undefined);
  const different = startBranch !== branch || startSha !== undefined;
  let parent: string | null = null;
  if (startSha !== undefined) {
    if (!/^[0-9a-fA-F]{40}(?:[0-9a-fA-F]{24})?$/.test(startSha)) throw failure(`Invalid start_sha '${startSha}'`);
    parent = (await repo.info(`${startSha.toLowerCase()}^{commit}`))?.sha ?? null;
    if (!parent) throw failure(`Cannot find start_sha '${startSha}'`);
  }
  if (startBranch !== undefined && !empty) {
    const start = await repo.branch(startBranch);
    if (!start) throw failure('You can only create or edit files when you are on a branch');
    parent = start.commit;
  }
  const current = empty ? undefined : await repo.branch(branch);
  if (!empty && different && current && !force) {
    throw failure(`A branch called '${branch}' already exists. Switch to that branch in order to make changes`);
  }
  if (!isValidRefName(branch)) throw failure(`Something went wrong when we tried to create '${branch}' for you: Branch name is invalid`);
  if (empty) parent = null;
  if (input.message === '') throw failure('empty CommitMessage');

  // the actions: paths (Gitaly's index errors), contents, last_commit_id (Files::MultiService)
  const actions: FileAction[] = [];
  for (const a of input.actions) {
    const error = pathError(a.file_path, a.action !== 'delete') ?? (a.action === 'move' ? pathError(a.previous_path!, false) : null);
    if (error) throw failure(error);
    const content = a.content === undefined || a.content === null ? undefined : Buffer.from(a.content, a.encoding === 'base64' ? 'base64' : 'utf8');
    const last = a.action === 'chmod' || a.action === 'create' ? undefined : a.last_commit_id || undefined;
    if (last && parent) {
      const checked = a.action === 'move' ? a.previous_path! : a.file_path;
      const { stdout } = await repo.run(['log', '-1', '--format=%H', parent, '--', checked], { env: { GIT_LITERAL_PATHSPECS: '1' } });
      const lastCommit = stdout.toString().trim();
      if (lastCommit && lastCommit !== last) throw failure(`The file has changed since you started editing it: ${checked}`);
    }
    switch (a.action as ActionName) {
      case 'create':
        actions.push({ action: 'create', file_path: a.file_path, content: content ?? Buffer.alloc(0), executable: a.execute_filemode === true });
        break;
      case 'update':
        actions.push({ action: 'update', file_path: a.file_path, content: content ?? Buffer.alloc(0) });
        break;
      case 'delete':
        actions.push({ action: 'delete', file_path: a.file_path });
        break;
      case 'move':
        actions.push({ action: 'move', file_path: a.file_path, previous_path: a.previous_path!, content });
        break;
      case 'chmod':
        actions.push({ action: 'chmod', file_path: a.file_path, executable: a.execute_filemode === true });
        break;
    }
  }
  const conflict = await treeConflict(repo, parent, actions);
  if (conflict) throw failure(conflict);

  // a force push: the branch exists and the new commit does not descend from it
  const before = current?.commit ?? ZERO_SHA;
  if (force && current && different && !(parent && (parent === current.commit || (await repo.isAncestor(current.commit, parent))))) {
    if (!canForcePushBranch(actor, ctx.access, protection)) throw failure(PUSH_MESSAGES.forcePush);
  }

  const { author, committer } = people(actor, input.authorName, input.authorEmail);
  return { before, request: { branch, parent, expectedOld: before, actions, message: input.message, author, committer } };
}

/**
 * Conflicts of files and directories the commit builder would not see: a file created (or moved)
 * below an existing file (git would silently replace that file by a directory), or over an existing
 * directory. Gitaly's messages.
 */
async function treeConflict(repo: Repository, parent: string | null, actions: FileAction[]): Promise<string | null> {
  const removed = new Set<string>();
  const added = new Set<string>();
  for (const a of actions) {
    if (a.action === 'create' || a.action === 'move') {
      const parts = a.file_path.split('/');
      for (let i = 1; i < parts.length; i++) {
        const prefix = parts.slice(0, i).join('/');
        if (added.has(prefix)) return 'A file with this name already exists';
        if (parent && !removed.has(prefix)) {
          const entry = await repo.entryAt(parent, prefix);
          if (entry && entry.type !== 'tree') return 'A file with this name already exists';
        }
      }
      if (parent && !added.has(a.file_path) && ![...removed].some((r) => r.startsWith(a.file_path + '/'))) {
        const entry = await repo.entryAt(parent, a.file_path);
        if (entry?.type === 'tree') return 'A directory with this name already exists';
      }
    }
    if (a.action === 'delete') {
      removed.add(a.file_path);
      added.delete(a.file_path);
    }
    if (a.action === 'move') {
      removed.add(a.previous_path);
      added.delete(a.previous_path);
    }
    if (a.action === 'create' || a.action === 'move') {
      added.add(a.file_path);
      removed.delete(a.file_path);
    }
  }
  return null;
}

// ---- the files API ----------------------------------------------------------------------------

export type FileWriteKind = 'create' | 'update' | 'delete';

/** POST / PUT / DELETE /projects/:id/repository/files/:file_path, its parameters checked. */
export interface FileWriteInput {
  branch: string;
  commit_message: string;
  start_branch?: string;
  author_email?: string;
  author_name?: string;
  content?: string;
  encoding?: 'base64' | 'text';
  last_commit_id?: string;
  execute_filemode?: boolean;
}

const CHANGED_MESSAGES: Record<'update' | 'delete', string> = {
  update: 'You are attempting to update a file that has changed since you started editing it.',
  delete: 'You are attempting to delete a file that has been previously updated.',
};

/** Gitlab::GitRefValidator.validate for a branch the commit would create. */
function isValidNewBranchName(name: string): boolean {
  if (name.startsWith('refs/heads/') || name.startsWith('refs/remotes/')) return false;
  if (/^[0-9a-f]{40}$/i.test(name) || /^[0-9a-f]{64}$/i.test(name)) return false;
  return isValidRefName(name);
}

/** A user-given revision's commit, or null (never an error: GitLab reads "not found" as "no information"). */
async function commitOrNull(repo: Repository, rev: string): Promise<string | null> {
  if (!isValidRevision(rev)) return null;
  return repo.resolveCommit(rev);
}

/**
 * Files::BaseService#file_has_changed?: the file's last commit on the start branch differs from its
 * last commit as of `last_commit_id` (either unknown → not changed).
 */
async function fileHasChanged(repo: Repository, startTip: string | null, filePath: string, lastCommitId: string | undefined): Promise<boolean> {
  if (!lastCommitId || !startTip) return false;
  const fromBranch = await lastCommitFor(repo, startTip, filePath);
  if (!fromBranch) return false;
  const given = await commitOrNull(repo, lastCommitId);
  if (!given) return false;
  const fromGiven = await lastCommitFor(repo, given, filePath);
  if (!fromGiven) return false;
  return fromBranch !== fromGiven;
}

/** Commits::CreateService's checks (after validate_permissions!) and the file service's own: the commit to make. */
export async function planFileWrite(
  ctx: RepoContext,
  actor: Actor,
  kind: FileWriteKind,
  filePath: string,
  input: FileWriteInput,
  empty: boolean,
): Promise<CommitPlan> {
  const repo = ctx.repo;
  const branch = input.branch;
  const startBranch = input.start_branch || branch;
  const differentBranch = startBranch !== branch;

  // validate_on_branch!
  const start = empty ? undefined : await repo.branch(startBranch);
  if (!empty && !start) throw failure('You can only create or edit files when you are on a branch');
  // validate_branch_existence!
  const target = empty ? undefined : await repo.branch(branch);
  if (!empty && differentBranch && target) {
    throw failure(`A branch called '${branch}' already exists. Switch to that branch in order to make changes`);
  }
  // validate_new_branch_name! (and a first branch in an empty repository)
  if ((differentBranch || empty) && !isValidNewBranchName(branch)) {
    throw failure(`Something went wrong when we tried to create '${branch}' for you: Branch name is invalid`);
  }
  const parent = start?.commit ?? null;
  if (kind !== 'create' && (await fileHasChanged(repo, parent, filePath, input.last_commit_id))) {
    throw failure(CHANGED_MESSAGES[kind]);
  }

  // Gitaly's index rules for a path under an existing file (commitFiles checks the path itself).
  if (kind !== 'delete' && parent) {
    const segments = filePath.split('/');
    for (let i = 1; i < segments.length; i++) {
      const o = await repo.entryAt(parent, segments.slice(0, i).join('/'));
      if (!o) break;
      if (o.type !== 'tree') throw failure(kind === 'create' ? 'A file with this name already exists' : "A file with this name doesn't exist");
    }
  }

  let action: FileAction;
  if (kind === 'delete') action = { action: 'delete', file_path: filePath };
  else {
    const content = input.encoding === 'base64' ? Buffer.from(input.content ?? '', 'base64') : Buffer.from(input.content ?? '', 'utf8');
    action =
      kind === 'create'
        ? { action: 'create', file_path: filePath, content, executable: input.execute_filemode === true }
        : { action: 'update', file_path: filePath, content, executable: input.execute_filemode };
  }
  const before = target?.commit ?? ZERO_SHA;
  const { author, committer } = people(actor, input.author_name, input.author_email);
  return { before, request: { branch, parent, expectedOld: before, actions: [action], message: input.commit_message, author, committer } };
}
