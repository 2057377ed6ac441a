// Merging, rebasing, the merge ref and mergeability (detailed_merge_status), through the repository
// service (the one write path: protection, lock, compare-and-swap, push events).
//
// GitLab's MergeRequests::MergeService, RebaseService, MergeabilityCheckService, MergeToRefService,
// AutoMergeService and RefreshService, cut to what Hearth has.
// Mergeability is computed in the background (jobs of kind merge_request_mergeability, run at once in
// this process and by the worker for what a dead process left): queueRecheck never waits for git. What a
// push leaves (merged-by-push, checks) is one merge_request_refresh job, whatever the open merge requests.
import { Background } from '../../jobs/background.ts';
import { defineJob, jobKind } from '../../jobs/registry.ts';
import type { ExpressionBuilder, Kysely } from 'kysely';
import { Type } from 'typebox';
import type { Database, MergeRequestRow, NamespaceRow, ProjectRow, UserRow } from '../../db/schema.ts';
import type { Person } from '../../git/commit-builder.ts';
import { mergeability, RebaseConflict } from '../../git/merge.ts';
import { BRANCH_PREFIX, ZERO_SHA } from '../../git/refs.ts';
import type { Repository } from '../../git/repository.ts';
import { DomainError, Errors } from '../../lib/errors.ts';
import { nowIso } from '../../lib/time.ts';
import { type Actor, userActor } from '../access/actor.ts';
import type { ProjectAccess } from '../access/policy.ts';
import type { FeatureDeps } from '../deps.ts';
import { settingsOf } from '../core/project-settings.ts';
import type { RepoContext } from '../repository/context.ts';
import { onRefsChanged, type RefChange } from '../repository/push-events.ts';
import type { MergeOutcome } from '../repository/push-journal.ts';
import { STATE_IDS } from './mr-events.ts';
import { headPipeline } from './head-pipeline.ts';
import { MergeRequestPipelineJob } from './mr-pipelines.ts';
import { ACTIVE_PIPELINE, ciCheckFailure, hasConflicts, type MergeFacts, stateCheckFailure } from './merge-status.ts';

export const MERGEABILITY_JOB = 'merge_request_mergeability';
const MergeabilityJob = jobKind(MERGEABILITY_JOB, Type.Object({ ids: Type.Array(Type.Number()) }));
export const REFRESH_JOB = 'merge_request_refresh';
const RefreshJob = jobKind(
  REFRESH_JOB,
  Type.Object({
    projectId: Type.Number(),
    userId: Type.Number(),
    changes: Type.Array(Type.Object({ ref: Type.String(), before: Type.String(), after: Type.String() })),
  }),
);
/**
 * Open merge requests into a moved branch that a refresh checks at once, most recently updated first
 * (per push and project); the others stay unchecked until someone asks (a GET of one, its page,
 * with_merge_status_recheck, a merge).
 */
export const REFRESH_CHECKS = 50;
/** The commits of a push the merged-by-push detection looks at (GitLab bounds its push commits too). */
const PUSH_COMMIT_LIMIT = 100_000;
const LEASE_MS = 120_000;
export const REBASE_ERROR = 'Rebase failed: Rebase locally, resolve all conflicts, then push the branch.';

/** What c.mergeRequests.find answers (core's contract). */
export interface FoundMergeRequest {
  mr: MergeRequestRow;
  project: ProjectRow;
  namespace: NamespaceRow;
  access: ProjectAccess;
}

/** Core's event writer (c.mergeRequests.recordEvent), attached by the container. */
export interface MergeRequestEvents {
  recordEvent(
    trx: Kysely<Database>,
    actor: Actor,
    mr: MergeRequestRow,
    action: 'merge',
    changes?: Record<string, { previous: unknown; current: unknown }>,
  ): Promise<void>;
}

/** PUT …/merge parameters (already validated by the route). */
export interface MergeParams {
  merge_commit_message?: string;
  squash_commit_message?: string;
  squash?: boolean;
  should_remove_source_branch?: boolean;
  merge_when_pipeline_succeeds?: boolean;
  auto_merge?: boolean;
  sha?: string;
}

type Json = Record<string, unknown>;

function paramsOf(mr: Pick<MergeRequestRow, 'merge_params'>): Json {
  try {
    const v = JSON.parse(mr.merge_params || '{}');
    return v && typeof v === 'object' ? v : {};
  } catch {
    return {};
  }
}

const truthy = (v: unknown) => v === true || v === 'true' || v === 1 || v === '1';

/** Gitlab::MergeRequests::MessageGenerator's placeholders we can fill (others stay as written). */
function fillTemplate(template: string, vars: Record<string, string>): string {
  return template.replace(/%\{(\w+)\}/g, (all, name: string) => (name in vars ? vars[name] : all));
}

export class MergeService {
  private events: MergeRequestEvents | null = null;
  /** what else a merge writes in its settling transaction, and wakes once it committed (issues it closes) */
  private readonly mergedListeners: { inTransaction: (trx: Kysely<Database>, mr: MergeRequestRow, userId: number) => Promise<void>; committed: () => void }[] =
    [];
  private readonly background = new Background(
    async () => (await this.deps.jobs.round(REFRESH_JOB)) + (await this.runQueuedChecks()),
    (e) => this.deps.log.error({ err: e }, 'mergeability checks failed'),
  );
  /** checks of merge requests by id, 20 a round, not retried (the next read or push queues one again) */
  readonly job = defineJob({
    kind: MergeabilityJob,
    what: 'mergeability check',
    leaseMs: LEASE_MS,
    concurrency: 20,
    // a rebase whose process died is found by the clock
    sweep: { everyMs: 60_000, run: () => this.clearStuckRebases().catch((e) => this.deps.log.error({ err: e }, 'clearing stuck rebases failed')) },
    run: async ({ ids }) => {
      for (const id of ids) await this.checkOne(id);
    },
  });
  /** what a push leaves to do: merged-by-push detection and the checks of the moved branches' merge requests */
  readonly refreshJob = defineJob({
    kind: RefreshJob,
    what: 'merge request refresh',
    leaseMs: LEASE_MS,
    concurrency: 5,
    run: ({ projectId, userId, changes }) => this.refresh(projectId, userId, changes),
  });

  /** REFRESH_CHECKS, lowered by tests */
  checksPerRefresh = REFRESH_CHECKS;

  constructor(readonly deps: FeatureDeps) {
    onRefsChanged(deps.db, (target, changes) =>
      this.refreshAfterPush(target.project, target.user, target.repo, changes).catch((e) =>
        deps.log.error({ err: e, project: target.project.id }, 'refreshing merge requests after a push failed'),
      ),
    );
  }

  /** Core's recordEvent for the 'merge' event (wired by the container). */
  /** A listener of merges (wired by the container): its writes join the merge's settling transaction. */
  onMerged(listener: { inTransaction: (trx: Kysely<Database>, mr: MergeRequestRow, userId: number) => Promise<void>; committed: () => void }): void {
    this.mergedListeners.push(listener);
  }

  attach(mergeRequests: object): void {
    if (typeof (mergeRequests as Partial<MergeRequestEvents>).recordEvent === 'function') this.events = mergeRequests as MergeRequestEvents;
  }

  // ---- contexts ----------------------------------------------------------------------------------

  private ctxOf(project: ProjectRow, namespace: NamespaceRow, access: ProjectAccess): RepoContext {
    const fullPath = `${namespace.full_path}/${project.path}`;
    return { project, namespace, access, repo: this.deps.repos.repository(project), fullPath, webUrl: `${this.deps.externalUrl}/${fullPath}` };
  }

  /** The source project as the actor sees it (the target itself unless the merge request comes from a fork). */
  private async sourceCtx(actor: Actor, found: FoundMergeRequest): Promise<RepoContext | null> {
    if (found.mr.source_project_id === found.project.id) return this.ctxOf(found.project, found.namespace, found.access);
    try {
      const r = await this.deps.resolve.project(actor, found.mr.source_project_id);
      return this.ctxOf(r.project, r.namespace, r.access);
    } catch (e) {
      if (e instanceof DomainError) return null;
      throw e;
    }
  }

  private async projectRows(projectId: number): Promise<{ project: ProjectRow; namespace: NamespaceRow } | null> {
    const k = this.deps.db.kysely;
    const project = await k.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirst();
    if (!project) return null;
    const namespace = await k.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
    return { project, namespace };
  }

  /** The source repository of a merge request (null when the source project is gone). */
  private async sourceRepo(mr: MergeRequestRow, target: ProjectRow): Promise<Repository | null> {
    if (mr.source_project_id === target.id) return this.deps.repos.repository(target);
    const rows = await this.projectRows(mr.source_project_id);
    return rows ? this.deps.repos.repository(rows.project) : null;
  }

  /** The source branch's head now (null when it is gone). */
  private async sourceHead(mr: MergeRequestRow, target: ProjectRow): Promise<string | null> {
    const repo = await this.sourceRepo(mr, target);
    if (!repo?.exists()) return null;
    return (await repo.branch(mr.source_branch))?.commit ?? null;
  }

  private async fullPath(project: ProjectRow): Promise<string> {
    const ns = await this.deps.db.kysely.selectFrom('namespaces').select('full_path').where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
    return `${ns.full_path}/${project.path}`;
  }

  private async user(id: number | null): Promise<UserRow | null> {
    if (id === null) return null;
    return (await this.deps.db.kysely.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
  }

  private static person(u: Pick<UserRow, 'name' | 'email' | 'commit_email'>): Person {
    return { name: u.name, email: u.commit_email || u.email, time: Math.floor(Date.now() / 1000) };
  }

  // ---- messages ----------------------------------------------------------------------------------

  /** MergeRequest#default_merge_commit_message (or the project's merge_commit_template). */
  async defaultMergeMessage(mr: MergeRequestRow, project: ProjectRow): Promise<string> {
    const full = await this.fullPath(project);
    const reference = `${full}!${mr.iid}`;
    const template = (settingsOf(project) as Json).merge_commit_template;
    if (typeof template === 'string' && template.trim()) return fillTemplate(template, this.templateVars(mr, reference));
    return [`Merge branch '${mr.source_branch}' into '${mr.target_branch}'`, mr.title, `See merge request ${reference}`].join('\n\n');
  }

  /** MergeRequest#default_squash_commit_message: the title (or the project's squash_commit_template). */
  async defaultSquashMessage(mr: MergeRequestRow, project: ProjectRow): Promise<string> {
    const template = (settingsOf(project) as Json).squash_commit_template;
    if (typeof template === 'string' && template.trim()) return fillTemplate(template, this.templateVars(mr, `${await this.fullPath(project)}!${mr.iid}`));
    return mr.title;
  }

  private templateVars(mr: MergeRequestRow, reference: string): Record<string, string> {
    return {
      source_branch: mr.source_branch,
      target_branch: mr.target_branch,
      title: mr.title,
      description: mr.description ?? '',
      reference,
      url: `${this.deps.externalUrl}/${reference.replace(/!(\d+)$/, '/-/merge_requests/$1')}`,
    };
  }

  // ---- checks ------------------------------------------------------------------------------------

  /** The facts of one merge request (unresolved discussions, approvals, the head pipeline, project settings). */
  async facts(mr: MergeRequestRow, project: ProjectRow): Promise<MergeFacts> {
    const k = this.deps.db.kysely;
    const s = settingsOf(project) as Json;
    const [unresolved, approvals, pipeline] = await Promise.all([
      k
        .selectFrom('notes')
        .select((eb) => eb.fn.count<number | string>('discussion_id').distinct().as('n'))
        .where('noteable_type', '=', 'MergeRequest')
        .where('noteable_id', '=', mr.id)
        .where('resolvable', '=', 1)
        .where('resolved_at', 'is', null)
        .executeTakeFirst(),
      k
        .selectFrom('approvals')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('merge_request_id', '=', mr.id)
        .executeTakeFirst(),
      headPipeline(k, mr),
    ]);
    return {
      unresolvedDiscussions: Number(unresolved?.n ?? 0),
      approvalsRequired: Number(s.approvals_before_merge ?? 0) || 0,
      approvalsGiven: Number(approvals?.n ?? 0),
      discussionsMustBeResolved: s.only_allow_merge_if_all_discussions_are_resolved === true,
      fastForwardOnly: s.merge_method === 'ff' || s.merge_method === 'rebase_merge',
      pipelineMustSucceed: s.only_allow_merge_if_pipeline_succeeds === true,
      skippedPipelineAllowed: s.allow_merge_on_skipped_pipeline === true,
      headPipelineStatus: pipeline?.status ?? null,
    };
  }

  // ---- merge -------------------------------------------------------------------------------------

  /**
   * PUT …/merge (API::MergeRequests + MergeRequests::MergeService): 401 when the caller may not merge
   * into the target branch, 405 when the merge request is not in a mergeable state (not open, draft,
   * source branch gone, discussions, approvals, a head pipeline that must succeed and did not), 422
   * "Branch cannot be merged" for conflicts or a needed rebase, 409 when `sha` is not the source head.
   * merge_when_pipeline_succeeds / auto_merge: a merge request that can be merged now is merged now
   * (GitLab's merge_when_checks_pass); one waiting on its checks or a running pipeline that must
   * succeed keeps auto-merge set. Returns the merge request afterwards.
   */
  async merge(actor: Actor, found: FoundMergeRequest, params: MergeParams): Promise<MergeRequestRow> {
    const { project, namespace, access } = found;
    let mr = found.mr;
    const k = this.deps.db.kysely;
    const ctx = this.ctxOf(project, namespace, access);
    if (!(await this.deps.repository.canMergeInto(ctx, actor, mr.target_branch))) throw Errors.unauthorized();
    const auto = params.merge_when_pipeline_succeeds === true || params.auto_merge === true;
    const head = await this.sourceHead(mr, project);
    const facts = { ...(await this.facts(mr, project)), sourceBranchMissing: head === null };
    const failing = stateCheckFailure(mr, facts);
    if (failing) {
      // auto-merge waits for checks that can still pass; the others are refused
      if (auto && mr.state === 'opened' && head && failing !== 'commits_status') return this.setAutoMerge(actor, mr, params);
      throw Errors.notAllowed();
    }
    // CheckCiStatusService: a pipeline that must succeed and is running waits (auto-merge); one that failed refuses
    const ci = ciCheckFailure(facts);
    if (ci) {
      if (auto && ci === 'ci_still_running') return this.setAutoMerge(actor, mr, params);
      throw Errors.notAllowed();
    }
    // "merge when pipeline succeeds" waits for a head pipeline still running, required or not (its end settles it)
    if (auto && facts.headPipelineStatus && ACTIVE_PIPELINE.has(facts.headPipelineStatus)) return this.setAutoMerge(actor, mr, params);
    // the source head in the target repository (fetched from a fork), and a fresh git check
    const sourceRepo = await this.sourceRepo(mr, project);
    const sourceSha = await this.deps.repository.mergeRequestHead(ctx, {
      iid: mr.iid,
      sourceRepo: sourceRepo && sourceRepo.gitDir !== ctx.repo.gitDir ? sourceRepo : null,
      sourceBranch: mr.source_branch,
      sha: head,
    });
    if (!sourceSha) throw Errors.notAllowed();
    const target = await ctx.repo.branch(mr.target_branch);
    if (!target) throw Errors.unprocessable('Branch cannot be merged');
    const check = await mergeability(ctx.repo, target.commit, sourceSha);
    const ffPossible = await ctx.repo.isAncestor(target.commit, sourceSha);
    if (!check.clean || (facts.fastForwardOnly && !ffPossible)) {
      await this.storeCheck(mr.id, sourceSha, check.clean, ffPossible ? 1 : facts.fastForwardOnly ? 0 : null, null);
      throw Errors.unprocessable('Branch cannot be merged');
    }
    if (params.sha !== undefined && params.sha !== sourceSha) throw Errors.conflict(`SHA does not match HEAD of source branch: ${sourceSha}`);

    const s = settingsOf(project) as Json;
    const squashOption = String(s.squash_option ?? 'default_off');
    const requested = params.squash === true ? true : mr.squash === 1;
    const squash = squashOption === 'always' ? true : squashOption === 'never' ? false : requested;
    const method = (['merge', 'rebase_merge', 'ff'].includes(String(s.merge_method)) ? s.merge_method : 'merge') as 'merge' | 'rebase_merge' | 'ff';
    const mergeMessage = params.merge_commit_message?.trim() ? params.merge_commit_message : await this.defaultMergeMessage(mr, project);
    const squashMessage = params.squash_commit_message?.trim() ? params.squash_commit_message : await this.defaultSquashMessage(mr, project);
    const author = await this.user(mr.author_id);
    const mergeParams: Json = { ...paramsOf(mr), sha: sourceSha };
    if (params.should_remove_source_branch !== undefined) mergeParams.should_remove_source_branch = params.should_remove_source_branch;
    if (params.merge_commit_message !== undefined) mergeParams.commit_message = params.merge_commit_message;
    if (params.squash_commit_message !== undefined) mergeParams.squash_commit_message = params.squash_commit_message;

    // locked while merging (only one merge of an open merge request gets past this), in the transaction
    // that writes the merge's journal row; the journal settles it in the transaction that deletes the
    // row: merged with its events when the target moved, open again (with the error) when not
    const now = nowIso();
    const lock = async (trx: Kysely<Database>) => {
      const locked = await trx
        .updateTable('merge_requests')
        .set({
          state: 'locked',
          squash: squash ? 1 : 0,
          merge_params: JSON.stringify(mergeParams),
          sha: sourceSha,
          merge_user_id: actor.user!.id,
          merge_error: null,
          updated_at: now,
        })
        .where('id', '=', mr.id)
        .where('state', '=', 'opened')
        .executeTakeFirst();
      return Number(locked.numUpdatedRows) === 1;
    };
    await this.deps.repository.mergeRequestMerge(ctx, actor, {
      targetBranch: mr.target_branch,
      sourceSha,
      expectedTargetSha: target.commit,
      method,
      squash,
      mergeMessage,
      squashMessage,
      squashAuthor: author ? MergeService.person(author) : undefined,
      journal: { merge: { mergeRequestId: mr.id, previousMergeUserId: mr.merge_user_id }, lock },
    });
    mr = await k.selectFrom('merge_requests').selectAll().where('id', '=', mr.id).executeTakeFirstOrThrow();
    if (mr.state === 'merged') for (const l of this.mergedListeners) l.committed();

    // the source branch, when asked (MergeRequests::PostMergeService → DeleteSourceBranchWorker)
    if (
      truthy(mergeParams.should_remove_source_branch) ||
      (mergeParams.should_remove_source_branch === undefined && truthy(mergeParams.force_remove_source_branch))
    ) {
      await this.removeSourceBranch(actor, found, sourceSha);
    }
    // merge requests into the same branch see a new target (the push refresh marked them unchecked)
    return mr;
  }

  /** MergeRequests::DeleteSourceBranchWorker: only the head that was merged, only when the caller may delete it. */
  private async removeSourceBranch(actor: Actor, found: FoundMergeRequest, mergedSha: string): Promise<void> {
    const src = await this.sourceCtx(actor, found);
    if (!src) return;
    const ref = await src.repo.branch(found.mr.source_branch);
    if (!ref || ref.commit !== mergedSha) return;
    try {
      if (!(await this.deps.repository.canPushTo(src, actor, ref.short))) return;
      await this.deps.repository.deleteBranch(src, actor, ref);
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      this.deps.log.info({ mergeRequest: found.mr.id, reason: e.message }, 'source branch kept after merge');
    }
  }

  /**
   * How a journaled merge ended (push-journal.ts), in the transaction that deletes its journal row, so
   * it is written once whether the merging process or a replay ends it: merged (MergeRequest#mark_as_merged)
   * with the merge and squash commits, its state event and the `merge` hook and activity event when the
   * target branch moved; else open again (unlock_mr) with the merge error of what the merge threw.
   */
  async settleMerge(trx: Kysely<Database>, o: MergeOutcome): Promise<void> {
    const before = await trx.selectFrom('merge_requests').selectAll().where('id', '=', o.merge.mergeRequestId).executeTakeFirst();
    if (!before || before.state !== 'locked') return;
    const now = nowIso();
    if (!o.merged) {
      const message =
        o.error === undefined
          ? before.merge_error
          : o.error instanceof DomainError && typeof o.error.detail === 'string'
            ? o.error.detail
            : 'Something went wrong during merge';
      await trx
        .updateTable('merge_requests')
        .set({ state: 'opened', merge_user_id: o.merge.previousMergeUserId, merge_error: message, updated_at: now })
        .where('id', '=', before.id)
        .execute();
      return;
    }
    await trx
      .updateTable('merge_requests')
      .set({
        state: 'merged',
        merge_commit_sha: o.merge.mergeCommitSha ?? null,
        squash_commit_sha: o.merge.squashCommitSha ?? null,
        merge_user_id: o.userId,
        merged_at: now,
        merge_when_pipeline_succeeds: 0,
        merge_error: null,
        updated_at: now,
      })
      .where('id', '=', before.id)
      .execute();
    await trx
      .insertInto('resource_state_events')
      .values({ merge_request_id: before.id, user_id: o.userId, state: 'merged', source_commit: null, created_at: now })
      .execute();
    const after = await trx.selectFrom('merge_requests').selectAll().where('id', '=', before.id).executeTakeFirstOrThrow();
    for (const l of this.mergedListeners) await l.inTransaction(trx, after, o.userId);
    const user = await trx.selectFrom('users').selectAll().where('id', '=', o.userId).executeTakeFirst();
    if (!user) return;
    await this.events?.recordEvent(trx, userActor(user), after, 'merge', {
      state_id: { previous: STATE_IDS.locked, current: STATE_IDS.merged },
      updated_at: { previous: before.updated_at, current: after.updated_at },
    });
  }

  /** AutoMergeService#execute: merge_when_pipeline_succeeds stored with the strategy, the caller as merge user. */
  private async setAutoMerge(actor: Actor, mr: MergeRequestRow, params: MergeParams): Promise<MergeRequestRow> {
    const mergeParams: Json = { ...paramsOf(mr), auto_merge_strategy: 'merge_when_checks_pass' };
    if (params.should_remove_source_branch !== undefined) mergeParams.should_remove_source_branch = params.should_remove_source_branch;
    if (params.merge_commit_message !== undefined) mergeParams.commit_message = params.merge_commit_message;
    if (params.squash_commit_message !== undefined) mergeParams.squash_commit_message = params.squash_commit_message;
    if (params.sha !== undefined) mergeParams.sha = params.sha;
    const k = this.deps.db.kysely;
    await k
      .updateTable('merge_requests')
      .set({
        merge_when_pipeline_succeeds: 1,
        merge_user_id: actor.user!.id,
        merge_params: JSON.stringify(mergeParams),
        ...(params.squash ? { squash: 1 } : {}),
        updated_at: nowIso(),
      })
      .where('id', '=', mr.id)
      .execute();
    return k.selectFrom('merge_requests').selectAll().where('id', '=', mr.id).executeTakeFirstOrThrow();
  }

  /**
   * POST …/cancel_merge_when_pipeline_succeeds: 401 unless the caller may merge or set the auto-merge,
   * 405 when not open, 406 when no auto-merge is set; the merge request afterwards.
   */
  async cancelAutoMerge(actor: Actor, found: FoundMergeRequest): Promise<MergeRequestRow> {
    const { mr, project, namespace, access } = found;
    const ctx = this.ctxOf(project, namespace, access);
    const mayMerge = await this.deps.repository.canMergeInto(ctx, actor, mr.target_branch);
    if (!mayMerge && !(mr.merge_when_pipeline_succeeds && mr.merge_user_id === actor.user?.id)) throw Errors.unauthorized();
    if (mr.state !== 'opened') throw Errors.notAllowed();
    if (!mr.merge_when_pipeline_succeeds) throw Errors.refused('406 Not Acceptable', 406);
    const params = paramsOf(mr);
    delete params.auto_merge_strategy;
    delete params.should_remove_source_branch;
    const k = this.deps.db.kysely;
    await k
      .updateTable('merge_requests')
      .set({ merge_when_pipeline_succeeds: 0, merge_user_id: null, merge_params: JSON.stringify(params), updated_at: nowIso() })
      .where('id', '=', mr.id)
      .execute();
    return k.selectFrom('merge_requests').selectAll().where('id', '=', mr.id).executeTakeFirstOrThrow();
  }

  // ---- rebase ------------------------------------------------------------------------------------

  /**
   * PUT …/rebase: RebaseService#validate (403 with its reason), 409 while a rebase runs, then the
   * rebase in the background (rebase_in_progress until it ends; a conflict leaves merge_error).
   */
  async rebase(actor: Actor, found: FoundMergeRequest): Promise<{ rebase_in_progress: boolean }> {
    const { mr, project } = found;
    const src = await this.sourceCtx(actor, found);
    if (!src) throw Errors.forbidden('Cannot push to source branch');
    const refusal = await this.deps.repository.rebaseRefusal(src, actor, mr.source_branch);
    if (refusal) throw Errors.forbidden(refusal);
    const k = this.deps.db.kysely;
    const taken = await k
      .updateTable('merge_requests')
      .set({ rebase_in_progress: 1, merge_error: null, updated_at: nowIso() })
      .where('id', '=', mr.id)
      .where('rebase_in_progress', '=', 0)
      .executeTakeFirst();
    if (Number(taken.numUpdatedRows) !== 1) throw Errors.conflict('Failed to lock merge request for rebase');
    this.background.track(
      this.runRebase(actor, found, src, project).catch((e) => this.deps.log.error({ err: e, mergeRequest: mr.id }, 'rebase failed unexpectedly')),
    );
    return { rebase_in_progress: true };
  }

  private async runRebase(actor: Actor, found: FoundMergeRequest, src: RepoContext, target: ProjectRow): Promise<void> {
    const { mr } = found;
    const k = this.deps.db.kysely;
    let error: string | null = null;
    try {
      const targetRepo = this.deps.repos.repository(target);
      const onto = (await targetRepo.branch(mr.target_branch))?.commit;
      const head = (await src.repo.branch(mr.source_branch))?.commit;
      if (!onto || !head) throw new RebaseConflict(head ?? ZERO_SHA, []);
      await this.deps.repository.mergeRequestRebase(src, actor, {
        sourceBranch: mr.source_branch,
        expectedSha: head,
        ontoSha: onto,
        ontoRepo: targetRepo,
        ontoBranch: mr.target_branch,
      });
    } catch (e) {
      if (e instanceof RebaseConflict) error = REBASE_ERROR;
      else if (e instanceof DomainError) error = `Rebase failed: ${typeof e.detail === 'string' ? e.detail : e.message}`;
      else {
        error = 'Rebase failed. Please try again.';
        this.deps.log.error({ err: e, mergeRequest: mr.id }, 'rebase failed');
      }
    } finally {
      await k.updateTable('merge_requests').set({ rebase_in_progress: 0, merge_error: error, updated_at: nowIso() }).where('id', '=', mr.id).execute();
    }
  }

  // ---- merge ref ---------------------------------------------------------------------------------

  /**
   * GET …/merge_ref (MergeabilityCheckService#execute(recheck: true)): the merge request's status
   * checked now and refs/merge-requests/<iid>/merge written; its commit, or 400 "Merge request is not
   * mergeable" (not open, draft, source gone, conflicts).
   */
  async mergeRef(found: FoundMergeRequest): Promise<string> {
    const { mr } = found;
    const notMergeable = Errors.refused('Merge request is not mergeable');
    if (mr.state !== 'opened' || mr.draft) throw notMergeable;
    const sha = await this.checkOne(mr.id);
    if (!sha) throw notMergeable;
    return sha;
  }

  // ---- mergeability in the background ------------------------------------------------------------

  /** Queues a mergeability check of these merge requests; never waits for it (nor for the queueing). */
  queueRecheck(mergeRequestIds: number[]): void {
    const ids = [...new Set(mergeRequestIds)];
    if (!ids.length) return;
    const job = MergeabilityJob.row({ ids });
    this.background.track(
      this.deps.db.kysely
        .insertInto('jobs')
        .values(job)
        .execute()
        .then(() => this.background.kick())
        .catch((e) => this.deps.log.error({ err: e }, 'queueing a mergeability check failed')),
    );
  }

  /** GET of one merge request: an unchecked one is checked in the background (check_mergeability(async: true)). */
  checkIfUnchecked(mr: Pick<MergeRequestRow, 'id' | 'state' | 'merge_status'>): void {
    if (mr.state === 'opened' && (mr.merge_status === 'unchecked' || mr.merge_status === 'cannot_be_merged_recheck')) this.queueRecheck([mr.id]);
  }

  /** One round of queued checks (also the worker's, for what another process left): the number of jobs done. */
  runQueuedChecks(limit?: number): Promise<number> {
    return this.deps.jobs.round(MERGEABILITY_JOB, limit);
  }

  /**
   * MergeabilityCheckService for one open merge request: the source head fetched into the target as
   * refs/merge-requests/<iid>/head, a merge attempt without a working copy, merge_status
   * can_be_merged / cannot_be_merged, whether a fast-forward is possible, and the merge ref. Returns
   * the merge ref's commit (null when it cannot be merged).
   */
  async checkOne(mergeRequestId: number): Promise<string | null> {
    const k = this.deps.db.kysely;
    const mr = await k.selectFrom('merge_requests').selectAll().where('id', '=', mergeRequestId).executeTakeFirst();
    if (!mr || mr.state !== 'opened') return null;
    const rows = await this.projectRows(mr.project_id);
    if (!rows) return null;
    const repo = this.deps.repos.repository(rows.project);
    if (!repo.exists()) return null;
    await k
      .updateTable('merge_requests')
      .set({ merge_status: 'checking' })
      .where('id', '=', mr.id)
      .where('merge_status', 'in', ['unchecked', 'cannot_be_merged_recheck', 'can_be_merged', 'cannot_be_merged'])
      .execute();
    const head = await this.sourceHead(mr, rows.project);
    const sourceRepo = await this.sourceRepo(mr, rows.project);
    const sha = head
      ? await this.deps.repository.mergeRequestHead(
          { repo },
          { iid: mr.iid, sourceRepo: sourceRepo && sourceRepo.gitDir !== repo.gitDir ? sourceRepo : null, sourceBranch: mr.source_branch, sha: head },
        )
      : null;
    const target = await repo.branch(mr.target_branch);
    if (!sha || !target) {
      await this.storeCheck(mr.id, sha ?? mr.sha, false, null, 'checking');
      return null;
    }
    const check = await mergeability(repo, target.commit, sha);
    const ff = await repo.isAncestor(target.commit, sha);
    let ref: string | null = null;
    if (check.clean) {
      const author = await this.user(mr.author_id);
      ref = await this.deps.repository.writeMergeRef(
        { repo },
        {
          iid: mr.iid,
          targetBranch: mr.target_branch,
          sourceSha: sha,
          message: await this.defaultMergeMessage(mr, rows.project),
          author: author ? MergeService.person(author) : { name: 'Hearth', email: 'noreply@localhost' },
        },
      );
    }
    const method = (settingsOf(rows.project) as Json).merge_method;
    await this.storeCheck(mr.id, sha, check.clean, ff ? 1 : method === 'ff' || method === 'rebase_merge' ? 0 : null, 'checking');
    if (check.clean && mr.merge_when_pipeline_succeeds && mr.merge_user_id !== null) await this.autoMergeIfSet(mr.id);
    return ref;
  }

  /**
   * AutoMerge::MergeWhenChecksPassService#process: a merge request with auto-merge set is merged by
   * the user who set it once a check finds it mergeable (each refusal leaves it waiting).
   */
  async autoMergeIfSet(mergeRequestId: number): Promise<void> {
    const k = this.deps.db.kysely;
    const mr = await k.selectFrom('merge_requests').selectAll().where('id', '=', mergeRequestId).executeTakeFirst();
    if (!mr || mr.state !== 'opened' || !mr.merge_when_pipeline_succeeds) return;
    const user = await this.user(mr.merge_user_id);
    if (!user || user.state !== 'active') return;
    const actor = userActor(user);
    try {
      const { project, namespace, access } = await this.deps.resolve.project(actor, mr.project_id);
      const p = paramsOf(mr);
      await this.merge(
        actor,
        { mr, project, namespace, access },
        {
          merge_commit_message: typeof p.commit_message === 'string' ? p.commit_message : undefined,
          squash_commit_message: typeof p.squash_commit_message === 'string' ? p.squash_commit_message : undefined,
          should_remove_source_branch: p.should_remove_source_branch === undefined ? undefined : truthy(p.should_remove_source_branch),
          sha: typeof p.sha === 'string' ? p.sha : undefined,
          // still waiting while a head pipeline runs (a check after a push comes here before it ends)
          merge_when_pipeline_succeeds: true,
        },
      );
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      this.deps.log.info({ mergeRequest: mr.id, reason: e.message }, 'auto-merge waits');
    }
  }

  /**
   * The result of a check, unless the merge request changed meanwhile (`from`: the status it must
   * still have). `ff`: 1 when a fast-forward is possible, 0 when it is not and the project's merge
   * method needs one (need_rebase), null when it does not matter.
   */
  private async storeCheck(id: number, sha: string | null, clean: boolean, ff: 0 | 1 | null, from: string | null): Promise<void> {
    let q = this.deps.db.kysely
      .updateTable('merge_requests')
      .set({ merge_status: clean ? 'can_be_merged' : 'cannot_be_merged', fast_forward_possible: ff, sha })
      .where('id', '=', id)
      .where('state', '=', 'opened');
    if (from) q = q.where('merge_status', '=', from);
    await q.execute();
  }

  /**
   * A rebase flagged in progress by a process that died would answer 409 forever: the flag is cleared
   * after 10 minutes. (Merges left locked are the push journal's: see push-journal.ts.) Returns how
   * many were cleared.
   */
  async clearStuckRebases(olderThanMs = 10 * 60_000): Promise<number> {
    const cutoff = new Date(Date.now() - olderThanMs).toISOString();
    const r = await this.deps.db.kysely
      .updateTable('merge_requests')
      .set({ rebase_in_progress: 0 })
      .where('rebase_in_progress', '=', 1)
      .where('updated_at', '<', cutoff)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  // ---- after pushes ------------------------------------------------------------------------------

  /**
   * MergeRequests::RefreshService, in the request of the push: whatever the number of open merge
   * requests, two statements per moved branch and one queued job. The merge requests from a branch that
   * moved get its new head and become unchecked, those into it become unchecked; the job (refresh)
   * does the rest.
   */
  async refreshAfterPush(project: ProjectRow, user: UserRow, _repo: Repository, changes: RefChange[]): Promise<void> {
    const k = this.deps.db.kysely;
    const branches = changes.filter((c) => c.ref.startsWith(BRANCH_PREFIX));
    if (!branches.length) return;
    const now = nowIso();
    let touched = 0;
    for (const c of branches) {
      const branch = c.ref.slice(BRANCH_PREFIX.length);
      const moved = c.after !== ZERO_SHA;
      const from = await k
        .updateTable('merge_requests')
        .set(moved ? { sha: c.after, merge_status: 'unchecked', fast_forward_possible: null, updated_at: now } : { merge_status: 'unchecked', updated_at: now })
        .where('source_project_id', '=', project.id)
        .where('source_branch', '=', branch)
        .where('state', '=', 'opened')
        .executeTakeFirst();
      touched += Number(from.numUpdatedRows);
      if (!moved) continue;
      // those already unchecked are left as they are: with thousands of open merge requests into a busy
      // branch, rewriting each on every push cost PostgreSQL a new version of every row and index entry
      // (5,000 rows: 90 ms, and 330 ms once 40 pushes had bloated the table)
      const intoBranch = (eb: ExpressionBuilder<Database, 'merge_requests'>) =>
        eb.and([eb('project_id', '=', project.id), eb('target_branch', '=', branch), eb('state', '=', 'opened')]);
      const into = await k
        .updateTable('merge_requests')
        .set({ merge_status: 'unchecked', fast_forward_possible: null })
        .where(intoBranch)
        .where((eb) => eb.or([eb('merge_status', '<>', 'unchecked'), eb('fast_forward_possible', 'is not', null)]))
        .executeTakeFirst();
      touched += Number(into.numUpdatedRows);
      // all of them unchecked already: the job still looks for those the push merged
      if (!touched && (await k.selectFrom('merge_requests').select('id').where(intoBranch).limit(1).executeTakeFirst())) touched++;
    }
    // no open merge request from or into a moved branch (a new branch, most pushes): nothing left to do
    if (!touched) return;
    const payload = { projectId: project.id, userId: user.id, changes: branches.map(({ ref, before, after }) => ({ ref, before, after })) };
    await RefreshJob.queue(k, payload);
    this.background.kick();
  }

  /**
   * The refresh job of a push: open merge requests into a moved branch whose head the push brought
   * (`git rev-list after ^before`: one git call, whatever their number) are marked merged by the
   * pusher; those from a moved branch are checked, and up to REFRESH_CHECKS of those into it.
   */
  async refresh(projectId: number, userId: number, changes: RefChange[]): Promise<void> {
    const k = this.deps.db.kysely;
    const rows = await this.projectRows(projectId);
    const user = await this.user(userId);
    if (!rows || !user) return;
    const repo = this.deps.repos.repository(rows.project);
    if (!repo.exists()) return;
    const recheck: number[] = [];
    for (const c of changes) {
      const branch = c.ref.slice(BRANCH_PREFIX.length);
      const fromHere = await k
        .selectFrom('merge_requests')
        .select('id')
        .where('source_project_id', '=', projectId)
        .where('source_branch', '=', branch)
        .where('state', '=', 'opened')
        .execute();
      recheck.push(...fromHere.map((r) => r.id));
      if (c.after === ZERO_SHA) continue;
      // their merge request pipelines, at the new head (none when no job runs for merge request events)
      for (const r of fromHere) await MergeRequestPipelineJob.queue(k, { mergeRequestId: r.id, userId });
      const into = await k
        .selectFrom('merge_requests')
        .select(['id', 'sha'])
        .where('project_id', '=', projectId)
        .where('target_branch', '=', branch)
        .where('state', '=', 'opened')
        .orderBy('updated_at', 'desc')
        .orderBy('id', 'desc')
        .execute();
      if (!into.length) continue;
      const pushed = await this.pushedCommits(repo, c.before, c.after);
      let checks = 0;
      for (const mr of into) {
        if (mr.sha && pushed.has(mr.sha)) {
          const row = await k.selectFrom('merge_requests').selectAll().where('id', '=', mr.id).executeTakeFirst();
          if (row) await this.markMergedByPush(row, user);
        } else if (checks < this.checksPerRefresh) {
          checks++;
          recheck.push(mr.id);
        }
      }
    }
    this.queueRecheck(recheck);
  }

  /** The commits `after` brings over `before` (all of `after`'s for a new branch), at most PUSH_COMMIT_LIMIT. */
  private async pushedCommits(repo: Repository, before: string, after: string): Promise<Set<string>> {
    const sha = /^[0-9a-f]{40,64}$/;
    if (!sha.test(after) || !sha.test(before)) return new Set();
    const args = ['rev-list', `--max-count=${PUSH_COMMIT_LIMIT}`, after];
    if (before !== ZERO_SHA) args.push(`^${before}`);
    // 128: a commit of the push is gone meanwhile (a force push and gc): nothing is merged by it
    const r = await repo.run(args, { okCodes: [0, 128] });
    return new Set(r.code === 0 ? r.stdout.toString('latin1').split('\n').filter(Boolean) : []);
  }

  /** RefreshService#post_merge_manually_merged: merged by the pusher (no merge commit of ours). */
  private async markMergedByPush(mr: MergeRequestRow, user: UserRow): Promise<void> {
    const k = this.deps.db.kysely;
    const now = nowIso();
    await k.transaction().execute(async (trx) => {
      const r = await trx
        .updateTable('merge_requests')
        .set({ state: 'merged', merge_user_id: user.id, merged_at: now, merge_when_pipeline_succeeds: 0, updated_at: now })
        .where('id', '=', mr.id)
        .where('state', '=', 'opened')
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) !== 1) return;
      await trx
        .insertInto('resource_state_events')
        .values({ merge_request_id: mr.id, user_id: user.id, state: 'merged', source_commit: null, created_at: now })
        .execute();
      const after = await trx.selectFrom('merge_requests').selectAll().where('id', '=', mr.id).executeTakeFirstOrThrow();
      const actor = userActor(user);
      await this.events?.recordEvent(trx, actor, after, 'merge', {
        state_id: { previous: 1, current: 3 },
        updated_at: { previous: mr.updated_at, current: now },
      });
    });
  }

  // ---- background work ---------------------------------------------------------------------------

  /** Resolves when the background work this process started (checks, rebases) is done (tests, shutdown). */
  async idle(): Promise<void> {
    await this.background.idle();
  }

  /** hasConflicts for callers that only have a status. */
  static conflicting(mr: Pick<MergeRequestRow, 'merge_status'>): boolean {
    return hasConflicts(mr.merge_status);
  }
}
