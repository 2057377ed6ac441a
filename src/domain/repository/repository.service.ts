// The repository as a service: every write to a project's repository goes through here — commits and
// files through the API, changelog commits, branches, tags and pushes over smart HTTP — and so does
// every read a route cannot do with one call of the git layer. Gitea's services/repository/files
// (ChangeRepoFiles behind a thin router) and GitLab's Files::MultiService shared by the API and the web.
//
// The write path, in this order: the archived check and branch protection (canPushTo, pushRefusal,
// the hooks' environment), the per-repository lock (`exclusive`: the checks see the refs the write
// changes), the push journal (`journaled`: every ref move is journaled before git makes it, as a
// push's are), the commit builder (commitFiles) or the ref update, then the journal's completion: the
// default branch adopted when it is missing, and the push events. Routes keep parsing, guards, status
// codes and entities; they never repeat one of these steps.
import type { Duplex, Readable, Writable } from 'node:stream';
import { PassThrough } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { LogFn } from 'pino';
import type { Db } from '../../db/connect.ts';
import type { Kysely } from 'kysely';
import type { Database, ProjectRow, NamespaceRow } from '../../db/schema.ts';
import { annotatedTag, commitFiles } from '../../git/commit-builder.ts';
import { GitError } from '../../git/command.ts';
import { serveRefTransactions } from '../../git/hooks.ts';
import { isQuarantineOf, longPathComponent, receiveFsckArgs } from '../../git/object-checks.ts';
import { BRANCH_PREFIX, isValidRevision, TAG_PREFIX, ZERO_SHA } from '../../git/refs.ts';
import { type Ref, type Repository, withRefMoveGuard } from '../../git/repository.ts';
import type { RepositoryStore } from '../../git/storage.ts';
import { Errors } from '../../lib/errors.ts';
import { KeyedLock } from '../../lib/keyed-lock.ts';
import { traversalIds, type Policy, type ProjectAccess } from '../access/policy.ts';
import type { Actor } from '../access/actor.ts';
import type { Resolver } from '../access/resolve.ts';
import type { BranchProtectionDefaults } from '../core/group-settings.ts';
import type { SettingsService } from '../settings/settings.service.ts';
import {
  canCreateTag,
  canForcePushBranch,
  canMergeBranch,
  canPushBranch,
  checkPushUpdate,
  hookAnswer,
  loadRefRules,
  MAINTAINER,
  protectionDefaults,
  PUSH_MESSAGES,
  type BranchProtection,
  type RefRules,
} from './branch-protection.ts';
import { buildRelease, commitRelease, type ChangelogRequest, type CommitTarget } from './changelog/service.ts';
import type { Release } from './changelog/release.ts';
import {
  actionRefusal,
  committerOf,
  failure,
  identityRefusal,
  isStaleBranch,
  planCommit,
  planFileWrite,
  type CommitInput,
  type CommitPlan,
  type FileWriteInput,
  type FileWriteKind,
} from './commit-checks.ts';
import { archive, type ArchiveRequest } from './archive.ts';
import { gitTarget, type GitCaller, type GitCommand, type GitTarget } from './git-access.ts';
import { blobContent, blobInfo, rawBlob, type RawBlob } from './blobs.ts';
import { readableContext, refsContext, repositoryContext, type RepoContext } from './context.ts';
import { searchBlobs, searchCommits, type FoundBlob } from './search.ts';
import { contentOf, fileAt, type FileEntry } from './files.ts';
import type { JournaledMerge, JournaledPush, PushJournal } from './push-journal.ts';
import { conflictsWithHierarchy, defaultBranchName, isValidNewRefName, mergedBranchNames } from './refs.ts';
import { entriesOf, treeAt, type Listing } from './tree.ts';
import type { GitObject } from '../../git/cat-file.ts';
import type { Person } from '../../git/commit-builder.ts';
import type { Commit } from '../../git/objects.ts';
import { MergeConflict, mergeBase, mergeCommit, rebase, squashCommit } from '../../git/merge.ts';

export interface RepositoryDeps {
  db: Db;
  settings: SettingsService;
  policy: Policy;
  resolve: Resolver;
  repos: RepositoryStore;
  pushes: PushJournal;
  externalUrl: string;
}

/** What a push over smart HTTP or SSH is made for: the pusher, the project as the pusher sees it, its repository. */
export interface PushTarget {
  actor: Actor;
  project: ProjectRow;
  namespace: NamespaceRow;
  access: ProjectAccess;
  repo: Repository;
  /** a deploy key pushes (as `actor`, its user): protected refs refuse it (see checkPushUpdate) */
  deployKey?: unknown;
}

/** What MergeRequests::MergeService asks of the repository. */
export interface MergeRequestMergeInput {
  targetBranch: string;
  /** the source head (in this repository: refs/merge-requests/<iid>/head for a fork) */
  sourceSha: string;
  /** the target's value the caller checked against (optional) */
  expectedTargetSha?: string;
  /** the project's merge_method */
  method: 'merge' | 'rebase_merge' | 'ff';
  squash: boolean;
  mergeMessage: string;
  squashMessage: string;
  /** the squash commit's author (GitLab: the merge request's author); default the caller */
  squashAuthor?: Person;
  /** the merge request's lock and journal row */
  journal: MergeJournal;
}

/**
 * A merge's journal row (push-journal.ts beginMerge): written in the transaction where `lock` locks the
 * merge request (405 when it answers false); the settler writes the outcome with the row's deletion.
 */
export interface MergeJournal {
  merge: JournaledMerge;
  lock(trx: Kysely<Database>): Promise<boolean>;
}

export interface MergeRequestMergeResult {
  mergeCommitSha: string | null;
  squashCommitSha: string | null;
  targetBefore: string;
  targetAfter: string;
}

/** Files API writes retried when their branch moved meanwhile (update-ref's compare-and-swap). */
const FILE_WRITE_ATTEMPTS = 5;

class RetryCommit extends Error {}

export class RepositoryService {
  /**
   * API writes to one repository run one at a time in this process, checks included (commitFiles' own
   * lock covers only the commit); writers elsewhere are caught by update-ref's compare-and-swap.
   */
  private readonly locks = new KeyedLock();

  constructor(private readonly deps: RepositoryDeps) {}

  // ---- contexts ----------------------------------------------------------------------------------

  /** The project for a repository route: 404 when invisible, 403 without read_code. */
  context(actor: Actor, id: string | number): Promise<RepoContext> {
    return repositoryContext(this.deps, actor, id);
  }

  /** The context of the branches and tags APIs (see refsContext). */
  refsContext(actor: Actor, id: string, featureNotFound: boolean): Promise<RepoContext> {
    return refsContext(this.deps, actor, id, featureNotFound);
  }

  /** The repository of a project already resolved for the actor, or null without read_code. */
  readableContext(actor: Actor, found: { project: ProjectRow; namespace: NamespaceRow; access: ProjectAccess }): RepoContext | null {
    return readableContext(this.deps, actor, found);
  }

  // ---- reads -------------------------------------------------------------------------------------

  /** Files at `ref` found by path or content (a fixed string, any case; GitLab's filters), with a time limit. */
  searchBlobs(ctx: RepoContext, ref: string | undefined, query: string, limit: number): Promise<FoundBlob[]> {
    return searchBlobs(ctx, ref, query, limit);
  }

  /** Commits at `ref` whose message holds `term`, and the commit a SHA names, with a time limit. */
  searchCommits(ctx: RepoContext, ref: string | undefined, term: string, limit: number): Promise<Commit[]> {
    return searchCommits(ctx, ref, term, limit);
  }

  /** The object at `path` in the commit `ref` names, and the path as listed (see treeAt). */
  treeAt(ctx: RepoContext, ref: string | undefined, path: string | undefined): Promise<{ path: string; object: { sha: string; type: string } }> {
    return treeAt(ctx, ref, path);
  }

  /** The sorted listing of what treeAt found (cached by tree id). */
  treeEntries(ctx: RepoContext, object: { sha: string; type: string }, path: string, recursive: boolean): Promise<Listing> {
    return entriesOf(ctx.repo, object, path, recursive);
  }

  /** assign_file_vars!: the commit `ref` names (404 Commit Not Found) and the file at the path in it (404 File Not Found). */
  fileAt(ctx: RepoContext, ref: string | undefined, filePath: string): Promise<{ commit: string; entry: FileEntry }> {
    return fileAt(ctx, ref, filePath);
  }

  /** A file's bytes (a submodule reads as empty, as Gitlab::Git::Blob.find makes it). */
  fileContent(ctx: RepoContext, entry: FileEntry): Promise<Buffer> {
    return contentOf(ctx.repo, entry);
  }

  /** The blob a hex id names, or 404 Blob Not Found. */
  blob(ctx: RepoContext, sha: string): Promise<GitObject> {
    return blobInfo(ctx, sha);
  }

  blobContent(ctx: RepoContext, info: GitObject): Promise<Buffer> {
    return blobContent(ctx, info);
  }

  /** A blob with the headers Workhorse sends for it (streamed when big; nothing for HEAD). */
  rawBlob(ctx: RepoContext, info: GitObject, head: boolean): Promise<RawBlob> {
    return rawBlob(ctx, info, head);
  }

  /** An archive of a ref: headers and a stream (git stops when the stream is destroyed). */
  archive(ctx: RepoContext, q: ArchiveRequest, head: boolean): Promise<{ headers: Record<string, string>; body: Readable }> {
    return archive(ctx, q, head);
  }

  // ---- policy ------------------------------------------------------------------------------------

  /**
   * default_branch_protection_defaults of the instance; an unset value is GitLab's default, the full
   * protection (Maintainers push and merge, no force push, no initial push by Developers).
   */
  async protectionDefaults(): Promise<BranchProtectionDefaults> {
    return protectionDefaults(await this.deps.settings.get());
  }

  /** The project's protected branches and tags (one query; `actor`: for access levels of groups). */
  async refRules(ctx: Pick<RepoContext, 'project' | 'namespace'>, actor?: Actor | null): Promise<RefRules> {
    return loadRefRules(this.deps.db.kysely, ctx.project, ctx.namespace, await this.protectionDefaults(), actor);
  }

  /** The protection of `branch` (its protected branches), or null. `initial`: the repository is empty. */
  async protection(ctx: Pick<RepoContext, 'project' | 'namespace'>, branch: string, actor?: Actor | null, initial = false): Promise<BranchProtection | null> {
    return (await this.refRules(ctx, actor)).branch(branch, initial);
  }

  /**
   * Gitlab::UserAccess#can_push_to_branch?: not archived (not even for administrators), push_code,
   * and the branch's protection. `initial`: the repository has no branch yet.
   */
  async canPushTo(ctx: Pick<RepoContext, 'project' | 'namespace' | 'access'>, actor: Actor, branch: string, initial = false): Promise<boolean> {
    if (ctx.project.archived) return false;
    return canPushBranch(actor, ctx.access, await this.protection(ctx, branch, actor, initial), initial);
  }

  /** Commits::CreateService#validate_permissions!: a 400 when the caller may not push to the branch. */
  private async validatePermissions(ctx: RepoContext, actor: Actor, branch: string, initial: boolean): Promise<BranchProtection | null> {
    const protection = await this.protection(ctx, branch, actor, initial);
    if (ctx.project.archived || !canPushBranch(actor, ctx.access, protection, initial)) throw failure('You are not allowed to push into this branch');
    return protection;
  }

  // ---- the write path ----------------------------------------------------------------------------

  /** Runs a write alone for this repository within this process; archived projects take none. */
  private exclusive<T>(ctx: RepoContext, fn: () => Promise<T>): Promise<T> {
    if (ctx.project.archived) throw Errors.forbidden();
    return this.locks.run(ctx.repo.gitDir, fn);
  }

  /** The commit builder, with GitLab's answers to what it refuses (a moved branch stays a GitError: see isStaleBranch). */
  private async commitPlan(ctx: RepoContext, plan: CommitPlan): Promise<string> {
    try {
      return await commitFiles(ctx.repo, plan.request);
    } catch (e) {
      throw actionRefusal(e) ?? identityRefusal(e) ?? e;
    }
  }

  /**
   * The ref moves of an API write, journaled as a push's are (push-journal.ts): the journal row exists
   * before `fn` starts, each move is written to it before git makes it (so a backup's fence holds the
   * move off, and a process killed after the move is replayed), and when `fn` ends, however it ends,
   * the moves made get their events (the default branch adopted when it is missing: ctx.project
   * follows) with the row's deletion.
   */
  private async journaled<T>(ctx: RepoContext, actor: Actor, fn: (push: JournaledPush) => Promise<T>, merge?: MergeJournal): Promise<T> {
    const push = merge
      ? await this.deps.pushes.beginMerge(ctx.project, actor.user!, merge.merge, merge.lock)
      : await this.deps.pushes.begin(ctx.project, actor.user!);
    if (!push) throw Errors.notAllowed();
    let error: unknown;
    try {
      return await withRefMoveGuard(
        {
          moving: async (m) => {
            if (!(await push.prepare([m]))) throw new Error('the journal row of this write was taken over');
          },
          moved: (m) => push.committedUpdates([m]),
        },
        () => fn(push),
      );
    } catch (e) {
      error = e;
      throw e;
    } finally {
      ctx.project = (await push.complete({ namespace: ctx.namespace, repo: ctx.repo }, error)).project;
    }
  }

  /** exclusive() and journaled() together: the usual API write to a repository. */
  private write<T>(ctx: RepoContext, actor: Actor, fn: (push: JournaledPush) => Promise<T>, merge?: MergeJournal): Promise<T> {
    return this.exclusive(ctx, () => this.journaled(ctx, actor, fn, merge));
  }

  // ---- commits and files -------------------------------------------------------------------------

  /**
   * Files::MultiService (POST /repository/commits): several file actions as one commit on a branch,
   * optionally started from another branch or a commit, optionally replacing the branch (force).
   * Returns the new commit's SHA.
   */
  async commit(ctx: RepoContext, actor: Actor, input: CommitInput): Promise<string> {
    return this.write(ctx, actor, async () => {
      const empty = await ctx.repo.isEmpty();
      const protection = await this.validatePermissions(ctx, actor, input.branch, empty);
      const plan = await planCommit(ctx, actor, input, empty, protection);
      try {
        return await this.commitPlan(ctx, plan);
      } catch (e) {
        if (isStaleBranch(e)) throw failure(`Could not update ${BRANCH_PREFIX}${input.branch}. Please refresh and try again.`);
        throw e;
      }
    });
  }

  /**
   * Files::CreateService, UpdateService, DeleteService: one file as one commit on a branch. A branch
   * that moved meanwhile is checked and committed again (409 after 5 attempts, GitLab's answer to a
   * lock it could not get).
   */
  async writeFile(ctx: RepoContext, actor: Actor, kind: FileWriteKind, filePath: string, input: FileWriteInput): Promise<void> {
    await this.write(ctx, actor, async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          const empty = await ctx.repo.isEmpty();
          await this.validatePermissions(ctx, actor, input.branch, empty);
          const plan = await planFileWrite(ctx, actor, kind, filePath, input, empty);
          try {
            return await this.commitPlan(ctx, plan);
          } catch (e) {
            if (isStaleBranch(e)) throw new RetryCommit();
            throw e;
          }
        } catch (e) {
          if (!(e instanceof RetryCommit)) throw e;
          if (attempt >= FILE_WRITE_ATTEMPTS) throw Errors.conflict('409 Conflict: Resource lock');
        }
      }
    });
  }

  /**
   * A commit made from a branch's head (revert, cherry-pick: see commit-change.ts): under the lock, the
   * caller's push permission checked (400), `make(head)` builds the commit (null: a dry run, nothing
   * moves), the branch moved with compare-and-swap; then the push events. Returns the new SHA or null.
   */
  async commitOnBranch(ctx: RepoContext, actor: Actor, branch: string, make: (head: string) => Promise<string | null>): Promise<string | null> {
    return this.write(ctx, actor, async () => {
      await this.validatePermissions(ctx, actor, branch, false);
      const ref = await ctx.repo.branch(branch);
      if (!ref) throw Errors.notFound('Branch');
      const sha = await make(ref.commit);
      if (!sha) return null;
      try {
        await ctx.repo.updateRef(ref.name, sha, ref.commit);
      } catch (e) {
        if (e instanceof GitError) throw failure(`Could not update ${ref.name}. Please refresh and try again.`);
        throw e;
      }
      return sha;
    });
  }

  /** Runs `fn` alone among this process's writes to `repo` (housekeeping). */
  withRepositoryLock<T>(repo: Repository, fn: () => Promise<T>): Promise<T> {
    return this.locks.run(repo.gitDir, fn);
  }

  /** The start_project of a commit: this project only (no forks), else 403 with GitLab's message. */
  async checkStartProject(ctx: RepoContext, actor: Actor, startProject: string | number): Promise<void> {
    const start = await this.deps.resolve.project(actor, String(startProject));
    if (start.project.id === ctx.project.id) return;
    throw Errors.forbidden(`Project is not included in the fork network for ${await this.fullName(start.project, start.namespace)}`);
  }

  /** Project#full_name: "Group / Subgroup / Project" */
  private async fullName(project: ProjectRow, namespace: NamespaceRow): Promise<string> {
    if (namespace.type !== 'Group') return `${namespace.name} / ${project.name}`;
    const ids = traversalIds(namespace);
    const rows = await this.deps.db.kysely.selectFrom('namespaces').select(['id', 'name']).where('id', 'in', ids).execute();
    const names = new Map(rows.map((r) => [Number(r.id), r.name]));
    return [...ids.map((id) => names.get(id) ?? ''), project.name].join(' / ');
  }

  // ---- changelogs --------------------------------------------------------------------------------

  /** The release section of a changelog (ChangelogService up to the release); throws ChangelogError. */
  changelogRelease(ctx: RepoContext, actor: Actor, req: ChangelogRequest): Promise<Release> {
    return buildRelease(this.deps, ctx, actor, req);
  }

  /** Gitlab::Changelog::Committer: the release section committed into the changelog file on a branch. */
  async commitChangelog(ctx: RepoContext, actor: Actor, release: Release, target: CommitTarget): Promise<void> {
    await this.write(ctx, actor, async () => {
      await this.validatePermissions(ctx, actor, target.branch, false);
      await commitRelease(ctx, actor, release, target);
    });
  }

  // ---- branches ----------------------------------------------------------------------------------

  /**
   * Branches::CreateService: `name` at the commit `ref` names. An empty repository first gets an empty
   * README.md on its default branch (create_default_branch). Returns the new branch.
   */
  async createBranch(ctx: RepoContext, actor: Actor, name: string, ref: string): Promise<Ref> {
    const repo = ctx.repo;
    // two pushes, as GitLab makes them: the default branch's README.md, then the new branch
    return this.exclusive(ctx, async () => {
      if (await repo.isEmpty()) await this.journaled(ctx, actor, () => this.createDefaultBranch(ctx, actor));
      return this.journaled(ctx, actor, () => this.newBranch(ctx, actor, name, ref));
    });
  }

  /** Branches::CreateService's checks and the ref, in an exclusive and journaled write. */
  private async newBranch(ctx: RepoContext, actor: Actor, name: string, ref: string): Promise<Ref> {
    const repo = ctx.repo;
    if (!isValidNewRefName(name)) throw failure('Branch name is invalid');
    if (await repo.branch(name)) throw failure('Branch already exists');
    const sha = await repo.resolveCommit(ref);
    if (!sha) throw failure(`Failed to create branch '${name}': invalid reference name '${ref}'`);
    const hierarchyError = failure(`Failed to create branch '${name}': Branch name conflicts with existing branch hierarchy.`);
    if (conflictsWithHierarchy(await repo.branches(), name)) throw hierarchyError;
    const protection = await this.protection(ctx, name, actor);
    // Gitlab::Checks::BranchCheck#protected_branch_creation_checks (the API counts as the web)
    if (protection && !canPushBranch(actor, ctx.access, protection) && !canMergeBranch(actor, ctx.access, protection)) {
      throw failure('You are not allowed to create protected branches on this project.');
    }
    try {
      await repo.updateRef(BRANCH_PREFIX + name, sha, ZERO_SHA);
    } catch (e) {
      if (!(e instanceof GitError)) throw e;
      if (await repo.branch(name)) throw failure('Branch already exists');
      throw hierarchyError;
    }
    return (await repo.branch(name))!;
  }

  /** Branches::CreateService#create_default_branch: an empty README.md on the default branch of an empty repository. */
  private async createDefaultBranch(ctx: RepoContext, actor: Actor): Promise<void> {
    const branch = defaultBranchName(ctx);
    try {
      await commitFiles(ctx.repo, {
        branch,
        parent: null,
        expectedOld: ZERO_SHA,
        actions: [{ action: 'create', file_path: 'README.md', content: Buffer.alloc(0) }],
        message: 'Add README.md',
        author: committerOf(actor),
      });
    } catch (e) {
      if (e instanceof GitError) return; // someone else created it meanwhile
      throw e;
    }
  }

  /**
   * Branches::DeleteService with Gitlab::Checks::BranchCheck (run by the pre-receive hook in GitLab:
   * its refusals are 400s here): never the default branch, a protected one only by a Maintainer.
   */
  async deleteBranch(ctx: RepoContext, actor: Actor, ref: Ref): Promise<void> {
    await this.write(ctx, actor, async () => {
      if (ref.short === defaultBranchName(ctx)) throw failure(PUSH_MESSAGES.deleteDefault);
      const protection = await this.protection(ctx, ref.short, actor);
      if (protection && !actor.isAdmin && ctx.access.level < MAINTAINER) throw failure(PUSH_MESSAGES.deleteProtectedNonMaintainer);
      if (!(await this.deleteRef(ctx, ref))) throw failure('Failed to remove branch');
    });
  }

  /** Branches::DeleteMergedService, run at once: merged branches that are neither the default nor protected. */
  async deleteMergedBranches(ctx: RepoContext, actor: Actor): Promise<void> {
    await this.exclusive(ctx, async () => {
      const rules = await this.refRules(ctx, actor);
      const merged = await mergedBranchNames(ctx);
      for (const ref of await ctx.repo.branches()) {
        if (!merged.has(ref.short) || ref.short === defaultBranchName(ctx)) continue;
        if (rules.isProtectedBranch(ref.short)) continue;
        // one push per branch, as GitLab deletes them one by one
        await this.journaled(ctx, actor, () => this.deleteRef(ctx, ref));
      }
    });
  }

  /** Deletes a ref if it still has the value read; false when it does not (nothing happened). */
  private async deleteRef(ctx: RepoContext, ref: Ref): Promise<boolean> {
    try {
      await ctx.repo.deleteRef(ref.name, ref.sha);
    } catch (e) {
      if (e instanceof GitError) return false;
      throw e;
    }
    return true;
  }

  // ---- tags --------------------------------------------------------------------------------------

  /**
   * Tags::CreateService: a lightweight tag, or an annotated one by the caller when there is a message
   * (Gitaly keeps no trailing newlines of it). Returns the new tag.
   */
  async createTag(ctx: RepoContext, actor: Actor, input: { name: string; ref: string; message?: string }): Promise<Ref> {
    return this.write(ctx, actor, async () => {
      const { name, ref } = input;
      const repo = ctx.repo;
      if (ref.trim() === '') throw failure('Target is empty');
      if (!isValidNewRefName(name)) throw failure('Tag name invalid');
      const message = input.message?.trim() ?? '';
      const target = isValidRevision(ref) ? await repo.info(ref) : null;
      if (!target) throw failure(`Target ${ref} is invalid`);
      const exists = failure(`Tag ${name} already exists`);
      if (await repo.tag(name)) throw exists;
      // Gitlab::Checks::TagCheck#protected_tag_checks (run by the hooks in GitLab)
      if (!canCreateTag(actor, ctx.access, (await this.refRules(ctx, actor)).tag(name))) throw failure(PUSH_MESSAGES.createProtectedTag);
      const fullName = TAG_PREFIX + name;
      try {
        // an annotated tag by the caller (the tag object first, as `git tag -a --cleanup=verbatim` writes
        // it), or a lightweight one; the compare-and-swap refuses to replace an existing tag
        const sha = message ? await annotatedTag(repo, { name, target, tagger: committerOf(actor), message }) : target.sha;
        await repo.updateRef(fullName, sha, ZERO_SHA);
      } catch (e) {
        if (!(e instanceof GitError)) throw e;
        repo.touchRefs();
        if (await repo.tag(name)) throw exists;
        throw failure(`Failed to create a tag: ${name}`);
      }
      return (await repo.tag(name))!;
    });
  }

  /** Tags::DestroyService */
  async deleteTag(ctx: RepoContext, actor: Actor, tag: Ref): Promise<void> {
    await this.write(ctx, actor, async () => {
      // Gitlab::Checks::TagCheck: a protected tag is deleted by a Maintainer only
      if (!actor.isAdmin && ctx.access.level < MAINTAINER && (await this.refRules(ctx, actor)).tag(tag.short)) throw failure(PUSH_MESSAGES.deleteProtectedTag);
      try {
        await ctx.repo.deleteRef(tag.name, tag.sha);
      } catch (e) {
        if (!(e instanceof GitError)) throw e;
        throw failure('Failed to remove tag');
      }
    });
  }

  // ---- merge requests ----------------------------------------------------------------------------

  /**
   * MergeRequest#can_be_merged_by? (Gitlab::UserAccess#can_update_branch?): the caller may push to or
   * merge into the target branch; never in an archived project.
   */
  async canMergeInto(ctx: RepoContext, actor: Actor, branch: string): Promise<boolean> {
    if (ctx.project.archived || !actor.user) return false;
    const protection = await this.protection(ctx, branch, actor);
    return canPushBranch(actor, ctx.access, protection) || canMergeBranch(actor, ctx.access, protection);
  }

  /**
   * The source head of a merge request in the target repository as refs/merge-requests/<iid>/head
   * (GitLab keeps it for every merge request): set to `sha` when the source is this repository,
   * fetched from the source repository's branch when it is a fork. Returns the head's SHA, or null
   * when the source branch is gone.
   */
  async mergeRequestHead(
    ctx: Pick<RepoContext, 'repo'>,
    input: { iid: number; sourceRepo: Repository | null; sourceBranch: string; sha: string | null },
  ): Promise<string | null> {
    const ref = `refs/merge-requests/${input.iid}/head`;
    return this.locks.run(ctx.repo.gitDir, async () => {
      let sha = input.sha;
      if (input.sourceRepo && input.sourceRepo.gitDir !== ctx.repo.gitDir) {
        if (!isValidRevision(input.sourceBranch)) return null;
        const r = await ctx.repo.run(
          ['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', input.sourceRepo.gitDir, `+${BRANCH_PREFIX}${input.sourceBranch}:${ref}`],
          { okCodes: [0, 1, 128] },
        );
        if (r.code !== 0) return null;
        sha = (await ctx.repo.run(['rev-parse', '--verify', '--quiet', ref], { okCodes: [0, 1] })).stdout.toString().trim() || null;
      } else if (sha) {
        await ctx.repo.run(['update-ref', ref, sha]);
      }
      return sha;
    });
  }

  /**
   * MergeRequests::MergeToRefService: refs/merge-requests/<iid>/merge, the merge commit of the source
   * head into the target branch's head as merging would make it (nothing else moves). Returns its
   * SHA, or null when the merge has conflicts or a branch is missing.
   */
  async writeMergeRef(
    ctx: Pick<RepoContext, 'repo'>,
    input: { iid: number; targetBranch: string; sourceSha: string; message: string; author: Person },
  ): Promise<string | null> {
    return this.locks.run(ctx.repo.gitDir, async () => {
      const target = await ctx.repo.branch(input.targetBranch);
      if (!target || !(await ctx.repo.info(input.sourceSha))) return null;
      try {
        const sha = await mergeCommit(ctx.repo, { targetSha: target.commit, sourceSha: input.sourceSha, message: input.message, author: input.author });
        await ctx.repo.run(['update-ref', `refs/merge-requests/${input.iid}/merge`, sha]);
        return sha;
      } catch (e) {
        if (e instanceof MergeConflict) return null;
        throw e;
      }
    });
  }

  /**
   * MergeRequests::MergeService's git part (Gitaly's UserMergeBranch, UserSquash, UserFFBranch): the
   * target branch moves to a merge commit of the source head (`merge`), to the source head itself
   * (`ff`, the target being its ancestor) or, with `squash`, to the squash commit or a merge commit of
   * it. `rebase_merge` and `ff` need the target to be an ancestor of the source (else 422, as GitLab's
   * need_rebase). Under the repository lock, with update-ref's compare-and-swap against the target's
   * value read; then the push events. 401 when the caller may not merge into the target branch, 422
   * "Branch cannot be merged" for conflicts or a target that moved.
   */
  async mergeRequestMerge(ctx: RepoContext, actor: Actor, input: MergeRequestMergeInput): Promise<MergeRequestMergeResult> {
    const cannot = () => Errors.unprocessable('Branch cannot be merged');
    const result = await this.write(
      ctx,
      actor,
      async (push) => {
        if (!(await this.canMergeInto(ctx, actor, input.targetBranch))) throw Errors.unauthorized();
        const repo = ctx.repo;
        const target = await repo.branch(input.targetBranch);
        if (!target || !(await repo.info(input.sourceSha))) throw cannot();
        if (input.expectedTargetSha && target.commit !== input.expectedTargetSha) throw cannot();
        const me = { ...committerOf(actor), time: Math.floor(Date.now() / 1000) };
        const ffOnly = input.method !== 'merge';
        if (ffOnly && !(await repo.isAncestor(target.commit, input.sourceSha))) throw cannot();
        let after: string;
        let mergeCommitSha: string | null = null;
        let squashCommitSha: string | null = null;
        try {
          if (input.squash) {
            const s = await squashCommit(repo, {
              targetSha: target.commit,
              sourceSha: input.sourceSha,
              message: input.squashMessage,
              author: input.squashAuthor ?? me,
              committer: me,
              merge: input.method === 'ff' ? undefined : { message: input.mergeMessage, author: me },
            });
            squashCommitSha = s.squash;
            mergeCommitSha = s.merge;
            after = s.merge ?? s.squash;
          } else if (input.method === 'ff') {
            after = input.sourceSha;
          } else {
            mergeCommitSha = await mergeCommit(repo, { targetSha: target.commit, sourceSha: input.sourceSha, message: input.mergeMessage, author: me });
            after = mergeCommitSha;
          }
        } catch (e) {
          if (e instanceof MergeConflict) throw cannot();
          throw e;
        }
        push.mergeCommits({ mergeCommitSha, squashCommitSha });
        try {
          await repo.updateRef(target.name, after, target.commit);
        } catch (e) {
          if (e instanceof GitError) throw cannot();
          throw e;
        }
        return { before: target.commit, after, mergeCommitSha, squashCommitSha, ref: target.name };
      },
      input.journal,
    );
    return { mergeCommitSha: result.mergeCommitSha, squashCommitSha: result.squashCommitSha, targetBefore: result.before, targetAfter: result.after };
  }

  /**
   * MergeRequests::RebaseService#validate: GitLab's refusal of a rebase of the source branch (a 403
   * reason), or null when the caller may rebase it.
   */
  async rebaseRefusal(ctx: RepoContext, actor: Actor, sourceBranch: string): Promise<string | null> {
    if (!(await ctx.repo.branch(sourceBranch))) return 'Source branch does not exist';
    if (!(await this.canPushTo(ctx, actor, sourceBranch))) return 'Cannot push to source branch';
    const protection = await this.protection(ctx, sourceBranch, actor);
    if (protection && !canForcePushBranch(actor, ctx.access, protection)) return 'Source branch is protected from force push';
    return null;
  }

  /**
   * MergeRequests::RebaseService (Gitaly's UserRebaseConfirmable): the source branch's commits since
   * it left `ontoSha` replayed onto it (authors kept, the caller as committer), the branch moved with
   * compare-and-swap against `expectedSha`; then the push events. `ontoSha` may live in another
   * repository (a fork's target): its branch is fetched first. Throws RebaseConflict (nothing moves)
   * or a 403 with rebaseRefusal's reason. Returns the new head.
   */
  async mergeRequestRebase(
    ctx: RepoContext,
    actor: Actor,
    input: { sourceBranch: string; expectedSha: string; ontoSha: string; ontoRepo?: Repository; ontoBranch?: string },
  ): Promise<string> {
    const result = await this.write(ctx, actor, async () => {
      const refusal = await this.rebaseRefusal(ctx, actor, input.sourceBranch);
      if (refusal) throw Errors.forbidden(refusal);
      const repo = ctx.repo;
      const branch = (await repo.branch(input.sourceBranch))!;
      if (branch.commit !== input.expectedSha) throw Errors.conflict('Source branch moved');
      if (!(await repo.info(input.ontoSha)) && input.ontoRepo && input.ontoBranch && isValidRevision(input.ontoBranch)) {
        await repo.run(['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', input.ontoRepo.gitDir, `${BRANCH_PREFIX}${input.ontoBranch}`], {
          okCodes: [0, 1, 128],
        });
      }
      const base = await mergeBase(repo, input.ontoSha, branch.commit);
      if (!base) throw Errors.unprocessable('Rebase failed: Rebase locally, resolve all conflicts, then push the branch.');
      const me = { ...committerOf(actor), time: Math.floor(Date.now() / 1000) };
      const head = await rebase(repo, { ontoSha: input.ontoSha, baseSha: base, headSha: branch.commit, committer: me });
      if (head === branch.commit) return null;
      try {
        await repo.updateRef(branch.name, head, branch.commit);
      } catch (e) {
        if (e instanceof GitError) throw Errors.conflict('Source branch moved');
        throw e;
      }
      return { before: branch.commit, after: head, ref: branch.name };
    });
    return result ? result.after : input.expectedSha;
  }

  // ---- git over smart HTTP and SSH ---------------------------------------------------------------

  /**
   * The one authorisation of git transports (see git-access.ts): the project `fullPath` names for the
   * caller (a user or a deploy key), or GitAccessDenied with GitLab's reason.
   */
  gitTarget(caller: GitCaller, fullPath: string, command: GitCommand): Promise<GitTarget> {
    return gitTarget(this.deps, (a, p, acc) => this.pushRefusal(a, p, acc), caller, fullPath, command);
  }

  /** Gitlab::GitAccess#check_push_access! before git runs: GitLab's refusal, or null when the push may start. */
  pushRefusal(actor: Actor, project: ProjectRow, access: ProjectAccess): string | null {
    if (project.archived) return 'You are not allowed to push code to an archived project.';
    if (!access.abilities.has('push_code') && !actor.isAdmin) return PUSH_MESSAGES.noPermission;
    return null;
  }

  /**
   * A push (pushRefusal having answered null): journaled before git starts; receive-pack runs the
   * shared hooks: the pre-receive hook asks the server about the push's ref updates (protected
   * branches and tags, checkPushUpdate, with the rules read once for the push) and the
   * reference-transaction hook reports every ref update over fd 3 to the journal before the ref moves;
   * when git is done, the journal's completion writes the events. Returns git's output, which ends
   * once the events are in the outbox. `statelessRpc: false`: one full-duplex conversation (SSH)
   * instead of smart HTTP's request and response; `stderr`: where git's own messages go (else dropped).
   * A body that ends early (a client gone mid-push) ends git's input: git refuses the incomplete pack
   * and moves no ref.
   */
  async receivePack(
    t: PushTarget,
    body: Readable,
    opts: { env: Record<string, string>; log: { error: LogFn }; statelessRpc?: boolean; stderr?: Writable },
  ): Promise<Readable> {
    const defaultBranch = t.project.default_branch ?? 'main';
    const initial = await t.repo.isEmpty();
    const env: Record<string, string> = { ...opts.env, HEARTH_MSG_REF: 'You are not allowed to push to' };
    let rules: Promise<RefRules> | null = null;
    const onCheck = async (updates: { before: string; after: string; ref: string }[], quarantine: string | null): Promise<string[]> => {
      rules ??= this.refRules(t, t.actor);
      const r = await rules;
      // git checked the objects (receive.fsckObjects); the length of path components is ours
      const tooLong = quarantine && isQuarantineOf(t.repo, quarantine) ? await longPathComponent(t.repo, quarantine, { onlyNew: true }) : null;
      return updates.map((u) =>
        hookAnswer(
          tooLong
            ? { unlessFastForward: null, refusal: tooLong }
            : checkPushUpdate(r, t.actor, t.access, u, { defaultBranch, initial, deployKey: !!t.deployKey }),
        ),
      );
    };
    // journaled before git starts; the reference-transaction hook reports each ref update on fd 3
    const push = await this.deps.pushes.begin(t.project, t.actor.user!);
    const stateless = opts.statelessRpc === false ? [] : ['--stateless-rpc'];
    const child = t.repo.spawn(['-c', `core.hooksPath=${this.deps.repos.hooksDir}`, ...receiveFsckArgs(), 'receive-pack', ...stateless, t.repo.gitDir], {
      env,
      extraPipes: 1,
      pidEnv: 'HEARTH_PUSH_PID',
    });
    const hookSocket = child.stdio[3] as Duplex | null;
    if (hookSocket) serveRefTransactions(hookSocket, { onCheck, onPrepared: (u) => push.prepare(u), onCommitted: (u) => push.committedUpdates(u) });
    body.on('error', () => child.kill());
    body.pipe(child.stdin!);
    child.stdin!.on('error', () => {});
    if (opts.stderr) {
      const stderr = opts.stderr;
      child.stderr!.on('data', (chunk: Buffer) => {
        if (!stderr.destroyed && stderr.writable) stderr.write(chunk);
      });
    } else child.stderr!.resume();
    // The response ends once the push's events are in the outbox.
    const out = new PassThrough();
    child.stdout!.pipe(out, { end: false });
    const exited = new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.once('error', () => resolve());
    });
    void Promise.all([exited, finished(child.stdout!).catch(() => {})]).then(async () => {
      try {
        await push.complete({ namespace: t.namespace, repo: t.repo });
      } catch (e) {
        opts.log.error({ err: e }, 'recording push events failed (the push journal replays them)');
      } finally {
        // a detached auto maintenance may hold fd 3 open: it no longer concerns this push
        hookSocket?.destroy();
        out.end();
      }
    });
    return out;
  }
}
