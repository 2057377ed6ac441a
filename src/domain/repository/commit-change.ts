// Commits::RevertService and Commits::CherryPickService (Gitaly's UserRevert / UserCherryPick): a
// commit's change undone or applied on top of a branch as a new commit, without a working copy. The
// tree is a three-way merge (git merge-tree through replayTrees): for a cherry-pick the commit's
// change (first parent → commit) applied to the branch head; for a revert the reverse change (commit →
// first parent). Merge commits are taken against their first parent (Gitaly's mainline 1), a root
// commit against the empty tree. The branch moves through RepositoryService.commitOnBranch (the lock,
// the permission check, compare-and-swap, the push events).
import type { Repository } from '../../git/repository.ts';
import type { Commit } from '../../git/objects.ts';
import { commitTitle } from '../../git/objects.ts';
import { replayTrees } from '../../git/merge.ts';
import type { Actor } from '../access/actor.ts';
import { committerOf } from './commit-checks.ts';
import type { RepoContext } from './context.ts';

export type ChangeAction = 'revert' | 'cherry_pick';

/** Gitlab::Git::Repository::CreateTreeError: the change does not apply (`conflict`) or changes nothing (`empty`). */
export class CommitChangeRefused extends Error {
  constructor(
    message: string,
    readonly errorCode: 'conflict' | 'empty',
  ) {
    super(message);
  }
}

/** ChangeService's message for a change that cannot be made ("revert" / "cherry-pick"). */
export function changeRefusalMessage(action: ChangeAction): string {
  const verb = action === 'revert' ? 'revert' : 'cherry-pick';
  return `Sorry, we cannot ${verb} this commit automatically. This commit may already have been ${verb}ed, or a more recent commit may have updated some of its content.`;
}

/** The merge request whose merge commit `sha` is (Commit#merged_merge_request), with its commits' titles. */
export interface MergedMergeRequest {
  iid: number;
  /** "short_id title" of its commits, oldest first */
  commitLines: string[];
}

/** Commit#revert_message */
export function revertMessage(commit: Commit, merged: MergedMergeRequest | null): string {
  const description = merged ? `This reverts merge request !${merged.iid}` : `This reverts commit ${commit.sha}`;
  return `Revert "${commitTitle(commit.message).trim()}"\n\n${description}`;
}

/** Commit#cherry_pick_message (the original message without its trailing newlines, then the description). */
export function cherryPickMessage(commit: Commit, merged: MergedMergeRequest | null): string {
  const body = [`(cherry picked from commit ${commit.sha})`];
  if (merged && merged.commitLines.length) body.push('', ...merged.commitLines);
  return `${commit.message.replace(/\n+$/, '')}\n\n${body.join('\n')}`;
}

async function treeOf(repo: Repository, sha: string): Promise<string> {
  return (await repo.run(['rev-parse', '--verify', `${sha}^{tree}`])).stdout.toString().trim();
}

/** The empty tree (written, so that merge-tree can read it). */
async function emptyTree(repo: Repository): Promise<string> {
  return (await repo.run(['mktree'], { input: '' })).stdout.toString().trim();
}

/**
 * The tree of `commit`'s change applied (cherry_pick) or undone (revert) on `ontoSha`. Throws
 * CommitChangeRefused: `conflict` when the merge has conflicts, `empty` when the result is the tree
 * of `ontoSha` (the change is already there, or already undone).
 */
export async function changedTree(repo: Repository, action: ChangeAction, commit: Commit, ontoSha: string): Promise<string> {
  const [ontoTree, parentTree] = await Promise.all([treeOf(repo, ontoSha), commit.parents.length ? treeOf(repo, commit.parents[0]) : emptyTree(repo)]);
  const [from, to] = action === 'cherry_pick' ? [parentTree, commit.tree] : [commit.tree, parentTree];
  const m = await replayTrees(repo, ontoTree, from, to);
  if (!m.clean || !m.tree) throw new CommitChangeRefused(changeRefusalMessage(action), 'conflict');
  if (m.tree === ontoTree) throw new CommitChangeRefused(changeRefusalMessage(action), 'empty');
  return m.tree;
}

export interface ChangeRequest {
  action: ChangeAction;
  commit: Commit;
  /** the commit message (default: revertMessage / cherryPickMessage) */
  message: string;
  dryRun: boolean;
}

/**
 * Makes the new commit on top of `head` (the branch's head, read under the lock): the revert by the
 * caller, or the cherry-pick with the original author and the caller as committer. Returns its SHA,
 * or null for a dry run (nothing is written but the merge's objects).
 */
export async function makeChangeCommit(ctx: RepoContext, actor: Actor, req: ChangeRequest, head: string): Promise<string | null> {
  const repo = ctx.repo;
  const tree = await changedTree(repo, req.action, req.commit, head);
  if (req.dryRun) return null;
  const now = Math.floor(Date.now() / 1000);
  const me = committerOf(actor);
  const author = req.action === 'cherry_pick' ? req.commit.author : { ...me, time: now, tz: '+0000' };
  const env = {
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    GIT_AUTHOR_DATE: `@${author.time} ${author.tz}`,
    GIT_COMMITTER_NAME: me.name,
    GIT_COMMITTER_EMAIL: me.email,
    GIT_COMMITTER_DATE: `@${now} +0000`,
  };
  const message = req.message.endsWith('\n') ? req.message : `${req.message}\n`;
  return (await repo.run(['commit-tree', tree, '-p', head], { env, input: message })).stdout.toString().trim();
}
