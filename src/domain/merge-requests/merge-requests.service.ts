// The life of a merge request: create, find, update, close/reopen, delete; the views its entities and
// pages are built from (present.ts, one query per relation for a page); its events (system hook,
// resource events). GitLab's MergeRequests::CreateService / UpdateService / CloseService /
// ReopenService and the API helpers of lib/api/merge_requests.rb.
import { isInt32 } from '../../db/sql.ts';
import type { Kysely } from 'kysely';
import type { Database, LabelRow, MergeRequestRow, MilestoneRow, NamespaceRow, ProjectRow, UserRow } from '../../db/schema.ts';
import { nextIid } from '../../db/internal-ids.ts';
import { emptyTree } from '../../git/diff.ts';
import type { Commit } from '../../git/objects.ts';
import type { Repository } from '../../git/repository.ts';
import { Errors } from '../../lib/errors.ts';
import { nowIso } from '../../lib/time.ts';
import { type Actor, userActor } from '../access/actor.ts';
import type { ProjectAccess } from '../access/policy.ts';
import type { FeatureDeps } from '../deps.ts';
import { LabelsService } from '../labels/labels.service.ts';
import { MilestonesService } from '../milestones/milestones.service.ts';
import { canMergeBranch, loadRefRules, protectionDefaults } from '../repository/branch-protection.ts';
import { isValidNewRefName } from '../repository/refs.ts';
import { keptRevList } from '../repository/compare.ts';
import type { BranchProtectionDefaults } from '../core/group-settings.ts';
import { type HookChanges, labelHookAttrs, type MergeRequestAction, recordMergeRequestEvent, STATE_IDS } from './mr-events.ts';
import { userHookAttrs } from '../core/hook-attrs.ts';
import { type HeadPipelineView, loadSimpleViews, loadViews, type MergeRequestDetail, type MergeRequestSimpleView, type MergeRequestView } from './present.ts';
import { basicByIds } from '../core/user-columns.ts';
import { isDraftTitle, mergeParamsOf } from './rules.ts';
import { pipelineAllowed } from '../ci/pipelines/pipelines.service.ts';
import { MergeRequestPipelineJob } from './mr-pipelines.ts';
import { type FoundNoteable, noteableOf } from '../notes/noteable.ts';
import { canReadMergeRequests, mergeRequestProjects } from './merge-requests-query.ts';

/** A merge request as the caller found it, with its target project. */
export interface FoundMergeRequest {
  mr: MergeRequestRow;
  project: ProjectRow;
  namespace: NamespaceRow;
  access: ProjectAccess;
}

export interface DetailOptions {
  includeDivergedCommitsCount?: boolean;
  includeRebaseInProgress?: boolean;
}

export interface CreateInput {
  title?: string;
  source_branch?: string;
  target_branch?: string;
  target_project_id?: number;
  description?: string;
  assignee_id?: number;
  assignee_ids?: number[];
  reviewer_ids?: number[];
  labels?: string[];
  milestone_id?: number;
  remove_source_branch?: boolean;
  squash?: boolean;
  allow_collaboration?: boolean;
  allow_maintainer_to_push?: boolean;
}

export interface UpdateInput {
  title?: string;
  description?: string;
  state_event?: 'close' | 'reopen';
  labels?: string[];
  add_labels?: string[];
  remove_labels?: string[];
  assignee_id?: number;
  assignee_ids?: number[];
  reviewer_ids?: number[];
  /** null removes */
  milestone_id?: number | null;
  target_branch?: string;
  discussion_locked?: boolean;
  squash?: boolean;
  remove_source_branch?: boolean;
  allow_collaboration?: boolean;
  allow_maintainer_to_push?: boolean;
}

/** Merge request diffs count their files up to this (MergeRequestDiff#real_size shows "1000+" beyond). */
const CHANGES_COUNT_LIMIT = 1000;
/** changes_count by repository, base and head sha (content-addressed: never stale), oldest dropped first */
const changesCounts = new Map<string, string>();
const CHANGES_COUNT_CACHE = 5000;

const unique = <T>(xs: Iterable<T>): T[] => [...new Set(xs)];
const sameSet = (a: number[], b: number[]) => a.length === b.length && a.every((x) => b.includes(x));

/** What keeps the issues a merge request's description closes (the issue tracker's, wired by the container). */
export interface ClosingIssuesKeeper {
  closingIssueIds(project: ProjectRow, fullPath: string, mr: { description: string | null }): Promise<number[]>;
  keepClosingIssues(trx: Kysely<Database>, mergeRequestId: number, issueIds: number[]): Promise<void>;
}

/**
 * What keeps the issues a merge request's title and description mention (the issue tracker's cross references,
 * wired by the container): read as the writer before the transaction, kept in it.
 */
export interface MentionsKeeper<T = unknown> {
  mentioned(author: Actor, from: { project: ProjectRow; namespace: NamespaceRow }, texts: readonly (string | null | undefined)[]): Promise<T>;
  keep(trx: Kysely<Database>, mr: MergeRequestRow, from: { project: ProjectRow; namespace: NamespaceRow }, mentioned: T, authorId: number): Promise<void>;
}

export class MergeRequestsService {
  private closing: ClosingIssuesKeeper | null = null;
  private mentions: MentionsKeeper | null = null;

  /** The keeper of closing issues (wired by the container). */
  useClosingIssues(keeper: ClosingIssuesKeeper): void {
    this.closing = keeper;
  }

  /** The keeper of mentioned issues (wired by the container). */
  useMentions<T>(keeper: MentionsKeeper<T>): void {
    this.mentions = keeper as MentionsKeeper;
  }

  /** the labels and milestones modules' contracts (stateless services over the same deps) */
  private readonly labels: LabelsService;
  private readonly milestones: MilestonesService;

  constructor(readonly deps: FeatureDeps) {
    this.labels = new LabelsService(deps);
    this.milestones = new MilestonesService(deps);
  }

  private get db(): Kysely<Database> {
    return this.deps.db.kysely;
  }

  // ---- finding and presenting -------------------------------------------------------------------

  /**
   * The project as the caller sees it (404 Project Not Found) and the merge request with that iid
   * (find_by! → 404 "404 Not found"); authorize! read_merge_request (403), which the merge request
   * feature's access level narrows.
   */
  async find(actor: Actor, projectIdOrPath: string | number, iid: number): Promise<FoundMergeRequest> {
    const { project, namespace, access } = await this.deps.resolve.project(actor, projectIdOrPath);
    const mr = isInt32(iid)
      ? await this.db.selectFrom('merge_requests').selectAll().where('project_id', '=', project.id).where('iid', '=', iid).executeTakeFirst()
      : undefined;
    if (!mr) throw Errors.recordNotFound();
    if (!canReadMergeRequests(actor, project, access)) throw Errors.forbidden();
    return { mr, project, namespace, access };
  }

  /** The merge requests of these ids the actor may read, each with its project (to-do targets, an issue's related merge requests), in the order of `ids`. */
  async readableByIds(actor: Actor, ids: readonly number[]): Promise<FoundMergeRequest[]> {
    if (!ids.length) return [];
    const rows = await this.db
      .selectFrom('merge_requests')
      .selectAll()
      .where('id', 'in', [...new Set(ids)])
      .execute();
    // as `find` decides, once per project
    const projects = await mergeRequestProjects(
      this.deps,
      actor,
      rows.map((r) => r.project_id),
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    const out: FoundMergeRequest[] = [];
    for (const id of new Set(ids)) {
      const mr = byId.get(id);
      const p = mr ? projects.get(mr.project_id) : null;
      if (mr && p) out.push({ mr, project: p.project, namespace: p.namespace, access: p.access });
    }
    return out;
  }

  /** The merge request as a noteable (notes, discussions, award emoji). */
  async findNoteable(actor: Actor, projectIdOrPath: string | number, iid: number): Promise<FoundNoteable> {
    const f = await this.find(actor, projectIdOrPath, iid);
    return noteableOf('MergeRequest', f, f.mr);
  }

  /** The project of a merge request route, with read_merge_request checked (403). */
  async project(actor: Actor, projectIdOrPath: string | number): Promise<{ project: ProjectRow; namespace: NamespaceRow; access: ProjectAccess }> {
    const found = await this.deps.resolve.project(actor, projectIdOrPath);
    if (!canReadMergeRequests(actor, found.project, found.access)) throw Errors.forbidden();
    return found;
  }

  /** The views a page of merge requests shows, in the order of `rows`. */
  views(rows: MergeRequestRow[]): Promise<MergeRequestView[]> {
    return loadViews(this.db, this.deps.externalUrl, rows);
  }

  /** The views of view=simple: the rows and the paths of their projects. */
  simpleViews(rows: MergeRequestRow[]): Promise<MergeRequestSimpleView[]> {
    return loadSimpleViews(this.db, rows);
  }

  /** One merge request the caller found, with what only a single merge request shows (git, the viewer). */
  async detail(actor: Actor, found: FoundMergeRequest, opts: DetailOptions = {}): Promise<{ view: MergeRequestView; detail: MergeRequestDetail }> {
    const { mr, project, namespace, access } = found;
    const [[view], defaults] = await Promise.all([loadViews(this.db, this.deps.externalUrl, [mr], [{ project, namespace }]), this.protectionDefaults()]);
    const git = await this.gitOf(found);
    const [changesCount, startSha, subscribed, diverged] = await Promise.all([
      this.changesCount(git, mr),
      git.target ? git.target.resolveCommit(mr.target_branch).catch(() => null) : Promise.resolve(null),
      this.isParticipant(actor, view),
      opts.includeDivergedCommitsCount ? this.divergedCommitsCount(git, mr) : Promise.resolve(undefined),
    ]);
    const protection = (await loadRefRules(this.db, project, namespace, defaults, actor)).branch(mr.target_branch);
    const detail: MergeRequestDetail = {
      headPipeline: pipelineAllowed(actor, project, access, 'read') ? await this.headPipelineView(view) : null,
      subscribed,
      changesCount,
      diffRefs: mr.sha
        ? { base_sha: mr.diff_base_sha, head_sha: mr.sha, start_sha: mr.state === 'opened' ? (startSha ?? mr.diff_base_sha) : mr.diff_base_sha }
        : null,
      canMerge: !!actor.user && canMergeBranch(actor, access, protection),
      ...(opts.includeRebaseInProgress ? { rebaseInProgress: mr.rebase_in_progress === 1 } : {}),
      ...(diverged !== undefined ? { divergedCommitsCount: diverged } : {}),
    };
    return { view, detail };
  }

  /** The head pipeline (loadViews found it) with the web URL of its source project and its user. */
  private async headPipelineView(view: MergeRequestView): Promise<HeadPipelineView | null> {
    const p = view.headPipeline;
    if (!p) return null;
    const source = await this.db
      .selectFrom('projects')
      .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
      .select(['projects.path', 'namespaces.full_path'])
      .where('projects.id', '=', p.project_id)
      .executeTakeFirst();
    if (!source) return null;
    const projectWebUrl = `${this.deps.externalUrl}/${source.full_path}/${source.path}`;
    const user = (await basicByIds(this.db, [p.user_id])).get(p.user_id ?? 0);
    return { pipeline: p, projectWebUrl, user };
  }

  private async protectionDefaults(): Promise<BranchProtectionDefaults> {
    return protectionDefaults(await this.deps.settings.get());
  }

  /** Subscribable#subscribed? without explicit subscriptions: the caller takes part (author, assignee, reviewer, commenter). */
  private async isParticipant(actor: Actor, view: MergeRequestView): Promise<boolean> {
    const id = actor.user?.id;
    if (id === undefined) return false;
    const explicit = await this.subscription(id, view.row);
    if (explicit !== null) return explicit;
    if (view.row.author_id === id || view.assignees.some((u) => u.id === id) || view.reviewers.some((u) => u.id === id)) return true;
    const note = await this.db
      .selectFrom('notes')
      .select('id')
      .where('noteable_type', '=', 'MergeRequest')
      .where('noteable_id', '=', view.row.id)
      .where('author_id', '=', id)
      .limit(1)
      .executeTakeFirst();
    return !!note;
  }

  /** The caller's own choice for this merge request in its project (subscriptions), or null. */
  private async subscription(userId: number, mr: Pick<MergeRequestRow, 'id' | 'project_id'>, db: Kysely<Database> = this.db): Promise<boolean | null> {
    const row = await db
      .selectFrom('subscriptions')
      .select('subscribed')
      .where('subscribable_type', '=', 'MergeRequest')
      .where('subscribable_id', '=', mr.id)
      .where('user_id', '=', userId)
      .where((eb) => eb.or([eb('project_id', '=', mr.project_id), eb('project_id', 'is', null)]))
      .orderBy('project_id', 'desc')
      .executeTakeFirst();
    return row ? row.subscribed === 1 : null;
  }

  /**
   * POST …/subscribe and …/unsubscribe (Subscribable#subscribe / #unsubscribe): false when the caller
   * already is (or is not) subscribed — the route answers 304.
   */
  async setSubscription(actor: Actor, found: FoundMergeRequest, on: boolean): Promise<boolean> {
    const user = actor.user;
    if (!user) throw Errors.unauthorized();
    const [view] = await loadViews(this.db, this.deps.externalUrl, [found.mr], [found]);
    if ((await this.isParticipant(actor, view)) === on) return false;
    const now = nowIso();
    await this.db.transaction().execute(async (trx) => {
      const existing = await trx
        .selectFrom('subscriptions')
        .select('id')
        .where('subscribable_type', '=', 'MergeRequest')
        .where('subscribable_id', '=', found.mr.id)
        .where('user_id', '=', user.id)
        .where('project_id', '=', found.mr.project_id)
        .executeTakeFirst();
      if (existing)
        await trx
          .updateTable('subscriptions')
          .set({ subscribed: on ? 1 : 0, updated_at: now })
          .where('id', '=', existing.id)
          .execute();
      else {
        await trx
          .insertInto('subscriptions')
          .values({
            user_id: user.id,
            subscribable_type: 'MergeRequest',
            subscribable_id: found.mr.id,
            project_id: found.mr.project_id,
            subscribed: on ? 1 : 0,
            created_at: now,
            updated_at: now,
          })
          .execute();
      }
    });
    return true;
  }

  // ---- git reads --------------------------------------------------------------------------------

  /**
   * The repositories a merge request reads: the source project's (which sees the target's objects
   * through alternates when it is a fork) and the target's.
   */
  async gitOf(found: Pick<FoundMergeRequest, 'mr' | 'project'>): Promise<{ source: Repository | null; target: Repository | null }> {
    const target = this.deps.repos.repository(found.project);
    let source: Repository | null = target;
    if (found.mr.source_project_id !== found.project.id) {
      const p = await this.db.selectFrom('projects').selectAll().where('id', '=', found.mr.source_project_id).executeTakeFirst();
      source = p ? this.deps.repos.repository(p) : null;
    }
    return { source: source?.exists() ? source : null, target: target.exists() ? target : null };
  }

  /** The repository that holds both the head and the base of the merge request's diff. */
  private diffRepo(git: { source: Repository | null; target: Repository | null }): Repository | null {
    return git.source ?? git.target;
  }

  /** changes_count of one merge request (its diff's files, "1000+" past the limit). */
  async changesCountOf(found: Pick<FoundMergeRequest, 'mr' | 'project'>): Promise<string | null> {
    return this.changesCount(await this.gitOf(found), found.mr);
  }

  /** MergeRequestDiff#real_size: the number of changed files, "1000+" past the limit; null without a diff. */
  private async changesCount(git: { source: Repository | null; target: Repository | null }, mr: MergeRequestRow): Promise<string | null> {
    const repo = this.diffRepo(git);
    if (!repo || !mr.sha) return null;
    const base = mr.diff_base_sha ?? emptyTree(mr.sha);
    // the count of two commits never changes: kept by (repository, base, head), so a page view spawns no git
    const key = `${repo.gitDir}\0${base}\0${mr.sha}`;
    const known = changesCounts.get(key);
    if (known !== undefined) return known;
    const r = await repo.run(['diff', '--name-only', '-z', '--no-renames', base, mr.sha, '--'], { okCodes: [0, 128], maxBytes: 64 << 20 });
    if (r.code !== 0) return null;
    const n = r.stdout.toString('utf8').split('\0').filter(Boolean).length;
    const count = n > CHANGES_COUNT_LIMIT ? `${CHANGES_COUNT_LIMIT}+` : String(n);
    if (changesCounts.size >= CHANGES_COUNT_CACHE) changesCounts.delete(changesCounts.keys().next().value as string);
    changesCounts.set(key, count);
    return count;
  }

  /** MergeRequest#diverged_commits_count: commits of the target branch the source lacks. */
  private async divergedCommitsCount(git: { source: Repository | null; target: Repository | null }, mr: MergeRequestRow): Promise<number> {
    const repo = this.diffRepo(git);
    if (!repo || !git.target || !mr.sha || mr.state !== 'opened') return 0;
    const targetSha = await git.target.resolveCommit(mr.target_branch);
    if (!targetSha) return 0;
    const r = await repo.run(['rev-list', '--count', targetSha, `^${mr.sha}`, '--'], { okCodes: [0, 128] });
    return r.code === 0 ? Number(r.stdout.toString().trim()) || 0 : 0;
  }

  /** The commits of the merge request, newest first (head not in the diff base), as git reads them. */
  async commits(found: FoundMergeRequest): Promise<Commit[]> {
    const { mr } = found;
    const repo = this.diffRepo(await this.gitOf(found));
    if (!repo || !mr.sha) return [];
    // the commits between two commit ids never change: kept (compare.ts), so a read spawns no git
    const shas = (await keptRevList(repo, mr.diff_base_sha, mr.sha)) ?? [];
    const out: Commit[] = [];
    for (const sha of shas) {
      const c = await repo.commit(sha);
      if (c) out.push(c);
    }
    return out;
  }

  /** The repository, base and head of the merge request's diff (null when it has none). */
  async diffSource(found: FoundMergeRequest): Promise<{ repo: Repository; base: string; head: string } | null> {
    const { mr } = found;
    const repo = this.diffRepo(await this.gitOf(found));
    if (!repo || !mr.sha) return null;
    return { repo, base: mr.diff_base_sha ?? emptyTree(mr.sha), head: mr.sha };
  }

  /** The branch heads and merge base of source and target: what sha and diff_base_sha record. */
  private async branchState(
    sourceRepo: Repository,
    targetRepo: Repository,
    sourceBranch: string,
    targetBranch: string,
  ): Promise<{ sourceSha: string | null; targetSha: string | null; base: string | null }> {
    const [sourceRef, targetRef] = await Promise.all([sourceRepo.branch(sourceBranch), targetRepo.branch(targetBranch)]);
    const sourceSha = sourceRef?.commit ?? null;
    const targetSha = targetRef?.commit ?? null;
    let base: string | null = null;
    if (sourceSha && targetSha) {
      const r = await sourceRepo.run(['merge-base', sourceSha, targetSha], { okCodes: [0, 1, 128] });
      if (r.code === 0) base = r.stdout.toString().trim() || null;
    }
    return { sourceSha, targetSha, base };
  }

  // ---- events -----------------------------------------------------------------------------------

  /** The merge_request system-hook event for `action`, in the writer's transaction. */
  async recordEvent(
    trx: Kysely<Database>,
    actor: Actor | UserRow,
    mr: MergeRequestRow,
    action: MergeRequestAction,
    changes?: HookChanges,
    extra?: Record<string, unknown>,
  ): Promise<void> {
    const user = 'kind' in actor ? actor.user : actor;
    if (!user) throw new Error('a merge request event needs a user');
    await recordMergeRequestEvent(trx, { repos: this.deps.repos, externalUrl: this.deps.externalUrl }, user, mr, action, changes, extra);
  }

  // ---- who may --------------------------------------------------------------------------------------

  /** can?(:create_merge_request_from, source): a Developer of the source project with its feature on. */
  canCreateFrom(actor: Actor, source: { project: ProjectRow; access: ProjectAccess }): boolean {
    return (actor.isAdmin || source.access.abilities.has('create_merge_request')) && canReadMergeRequests(actor, source.project, source.access);
  }

  /** Whether the actor may update (close, reopen, edit) the merge request: requireUpdate without the throw. */
  async canUpdate(actor: Actor, found: FoundMergeRequest): Promise<boolean> {
    try {
      await this.requireUpdate(actor, found);
      return true;
    } catch {
      return false;
    }
  }

  /** update_merge_request: the author, an assignee, or a Developer of the target project. */
  private async requireUpdate(actor: Actor, found: FoundMergeRequest): Promise<void> {
    const user = actor.user;
    if (!user) throw Errors.unauthorized();
    if (actor.isAdmin || found.access.abilities.has('push_code')) return;
    if (found.project.archived) throw Errors.forbidden();
    if (found.mr.author_id === user.id) return;
    const assigned = await this.db
      .selectFrom('merge_request_assignees')
      .select('user_id')
      .where('merge_request_id', '=', found.mr.id)
      .where('user_id', '=', user.id)
      .executeTakeFirst();
    if (!assigned) throw Errors.forbidden();
  }

  /** set_merge_request_metadata (labels, milestone, assignees, reviewers): Reporter and above in the target. */
  private canSetMetadata(actor: Actor, access: ProjectAccess): boolean {
    return actor.isAdmin || access.level >= 20;
  }

  // ---- labels, milestones, users ------------------------------------------------------------

  /**
   * Labels::FindOrCreateService for each title (the labels module): an available label of that title,
   * else a new project label when the caller may manage labels. In the writer's transaction.
   */
  private labelsByTitles(trx: Kysely<Database>, actor: Actor, found: Omit<FoundMergeRequest, 'mr'>, titles: string[]): Promise<LabelRow[]> {
    return this.labels.findOrCreateByTitles(actor, found.project, titles, { db: trx, access: found.access });
  }

  /** A milestone of the project or one of its ancestor groups (else null: GitLab drops the parameter). */
  private async availableMilestone(trx: Kysely<Database>, project: ProjectRow, id: number): Promise<MilestoneRow | null> {
    if (!Number.isSafeInteger(id) || id <= 0) return null;
    return (await this.milestones.findForProject(project, id, trx)) ?? null;
  }

  /** Users who may be assigned or asked to review: existing users who can read the project's merge requests (unknown ids are dropped). */
  private async assignableUsers(ids: number[], project: ProjectRow, namespace: NamespaceRow): Promise<number[]> {
    const wanted = unique(ids.filter((id) => Number.isSafeInteger(id) && id > 0));
    if (!wanted.length) return [];
    const rows = await this.db.selectFrom('users').selectAll().where('id', 'in', wanted).execute();
    const out: number[] = [];
    for (const id of wanted) {
      const user = rows.find((u) => u.id === id);
      if (!user || user.state !== 'active') continue;
      const as = userActor(user, { isAdmin: user.is_admin === 1 });
      if (canReadMergeRequests(as, project, await this.deps.policy.project(as, project, namespace))) out.push(id);
    }
    return out;
  }

  // ---- create ---------------------------------------------------------------------------------

  /** MergeRequests::CreateService through POST /projects/:id/merge_requests (the :id project is the source). */
  async create(actor: Actor, projectIdOrPath: string, input: CreateInput): Promise<FoundMergeRequest> {
    const user = actor.user;
    if (!user) throw Errors.unauthorized();
    const source = await this.deps.resolve.project(actor, projectIdOrPath);
    let target: { project: ProjectRow; namespace: NamespaceRow; access: ProjectAccess } = source;
    if (input.target_project_id !== undefined && input.target_project_id !== source.project.id) {
      const row = await this.deps.resolve.findProjectRow(input.target_project_id);
      if (!row || !('project' in row)) throw Errors.recordNotFound();
      const access = await this.deps.policy.project(actor, row.project, row.namespace);
      // can?(:create_merge_request_in, target): whoever can read its merge requests
      if (!canReadMergeRequests(actor, row.project, access)) throw Errors.forbidden();
      target = { ...row, access };
    }
    // can?(:create_merge_request_from, source): a Developer of the source project with its feature on
    if (!this.canCreateFrom(actor, source)) throw Errors.forbidden();
    const title = input.title!.trim();
    const sourceBranch = input.source_branch!;
    const targetBranch = input.target_branch!;
    if (!title) throw Errors.invalid({ title: ["can't be blank"] });
    if (target.project.id === source.project.id && sourceBranch === targetBranch) {
      throw Errors.unprocessable(["You can't use same project/branch for source and target"]);
    }
    if (target.project.id !== source.project.id && !(await this.sameForkNetwork(source.project.id, target.project.id))) {
      throw Errors.unprocessable(['Source project is not a fork of the target project']);
    }
    const badNames: Record<string, string[]> = {};
    if (!isValidNewRefName(sourceBranch)) badNames.source_branch = ['is invalid'];
    if (!isValidNewRefName(targetBranch)) badNames.target_branch = ['is invalid'];
    if (Object.keys(badNames).length) throw Errors.invalid(badNames);

    const sourceRepo = this.deps.repos.repository(source.project);
    const targetRepo = this.deps.repos.repository(target.project);
    const state = sourceRepo.exists() && targetRepo.exists() ? await this.branchState(sourceRepo, targetRepo, sourceBranch, targetBranch) : null;
    const missing: string[] = [];
    if (!state?.sourceSha) missing.push(`Source branch "${sourceBranch}" does not exist`);
    if (!state?.targetSha) missing.push(`Target branch "${targetBranch}" does not exist`);
    if (missing.length) throw Errors.unprocessable(missing);

    const metadata = this.canSetMetadata(actor, target.access);
    const assigneeIds = metadata
      ? await this.assignableUsers(
          input.assignee_ids ?? (input.assignee_id !== undefined && input.assignee_id !== 0 ? [input.assignee_id] : []),
          target.project,
          target.namespace,
        )
      : [];
    const reviewerIds = metadata ? await this.assignableUsers(input.reviewer_ids ?? [], target.project, target.namespace) : [];
    const collaboration = input.allow_collaboration ?? input.allow_maintainer_to_push ?? false;

    const closingIds = this.closing
      ? await this.closing.closingIssueIds(target.project, `${target.namespace.full_path}/${target.project.path}`, { description: input.description ?? null })
      : [];
    const mentioned = this.mentions ? await this.mentions.mentioned(actor, target, [title, input.description]) : undefined;
    const created = await this.db.transaction().execute(async (trx) => {
      const conflict = await this.openDuplicate(trx, target.project.id, source.project.id, sourceBranch, targetBranch, null);
      if (conflict) throw duplicateError(conflict.iid);
      const labels = metadata && input.labels ? await this.labelsByTitles(trx, actor, target, input.labels) : [];
      const milestone = metadata && input.milestone_id ? await this.availableMilestone(trx, target.project, input.milestone_id) : null;
      const now = nowIso();
      const iid = await nextIid(trx, 'merge_requests', 'Project', target.project.id);
      const mergeParams: Record<string, unknown> = {};
      if (input.remove_source_branch !== undefined) mergeParams.force_remove_source_branch = input.remove_source_branch;
      const mr = await trx
        .insertInto('merge_requests')
        .values({
          iid,
          project_id: target.project.id,
          source_project_id: source.project.id,
          source_branch: sourceBranch,
          target_branch: targetBranch,
          title,
          description: input.description ?? null,
          state: 'opened',
          draft: isDraftTitle(title) ? 1 : 0,
          author_id: user.id,
          milestone_id: milestone?.id ?? null,
          merge_user_id: null,
          closed_by_id: null,
          sha: state!.sourceSha,
          diff_base_sha: state!.base,
          merge_commit_sha: null,
          squash_commit_sha: null,
          merge_status: 'unchecked',
          merge_error: null,
          squash: input.squash ? 1 : 0,
          merge_params: JSON.stringify(mergeParams),
          allow_collaboration: collaboration && target.project.id !== source.project.id ? 1 : 0,
          discussion_locked: null,
          merged_at: null,
          closed_at: null,
          prepared_at: now,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await this.linkUsers(trx, 'merge_request_assignees', mr.id, assigneeIds, now);
      await this.linkUsers(trx, 'merge_request_reviewers', mr.id, reviewerIds, now);
      if (labels.length) {
        await trx
          .insertInto('merge_request_labels')
          .values(labels.map((l) => ({ merge_request_id: mr.id, label_id: l.id, created_at: now })))
          .execute();
        await this.labelEvents(trx, user.id, mr.id, labels, 'add', now);
      }
      if (milestone) await this.milestoneEvent(trx, user.id, mr, milestone.id, 'add', now);
      if (closingIds.length) await this.closing!.keepClosingIssues(trx, mr.id, closingIds);
      if (this.mentions) await this.mentions.keep(trx, mr, target, mentioned, user.id);
      await this.recordEvent(trx, user, mr, 'open');
      // its merge request pipeline (the worker's; none when no job runs for merge request events)
      await MergeRequestPipelineJob.queue(trx, { mergeRequestId: mr.id, userId: user.id });
      return mr;
    });
    return { mr: created, project: target.project, namespace: target.namespace, access: target.access };
  }

  /** Project#in_fork_network_of?: both projects share the root of their fork network. */
  private async sameForkNetwork(a: number, b: number): Promise<boolean> {
    const rows = await this.db
      .selectFrom('project_forks')
      .select(['project_id', 'root_project_id', 'forked_from_project_id'])
      .where('project_id', 'in', [a, b])
      .execute();
    const root = (id: number) => {
      const r = rows.find((x) => x.project_id === id);
      return r ? (r.root_project_id ?? r.forked_from_project_id ?? id) : id;
    };
    return root(a) === root(b);
  }

  /** An open merge request for the same source and target (validate_branches), other than `exceptId`. */
  private async openDuplicate(
    trx: Kysely<Database>,
    projectId: number,
    sourceProjectId: number,
    sourceBranch: string,
    targetBranch: string,
    exceptId: number | null,
  ) {
    let q = trx
      .selectFrom('merge_requests')
      .select(['id', 'iid'])
      .where('project_id', '=', projectId)
      .where('source_project_id', '=', sourceProjectId)
      .where('source_branch', '=', sourceBranch)
      .where('target_branch', '=', targetBranch)
      .where('state', '=', 'opened');
    if (exceptId !== null) q = q.where('id', '!=', exceptId);
    return q.orderBy('id').executeTakeFirst();
  }

  private async linkUsers(
    trx: Kysely<Database>,
    table: 'merge_request_assignees' | 'merge_request_reviewers',
    mrId: number,
    ids: number[],
    now: string,
  ): Promise<void> {
    if (!ids.length) return;
    await trx
      .insertInto(table)
      .values(ids.map((user_id) => ({ merge_request_id: mrId, user_id, created_at: now })))
      .execute();
  }

  private async labelEvents(trx: Kysely<Database>, userId: number, mrId: number, labels: LabelRow[], action: 'add' | 'remove', now: string): Promise<void> {
    if (!labels.length) return;
    await trx
      .insertInto('resource_label_events')
      .values(labels.map((l) => ({ merge_request_id: mrId, label_id: l.id, user_id: userId, action, created_at: now })))
      .execute();
  }

  private async milestoneEvent(
    trx: Kysely<Database>,
    userId: number,
    mr: MergeRequestRow,
    milestoneId: number,
    action: 'add' | 'remove',
    now: string,
  ): Promise<void> {
    await trx
      .insertInto('resource_milestone_events')
      .values({ merge_request_id: mr.id, milestone_id: milestoneId, user_id: userId, action, state: mr.state, created_at: now })
      .execute();
  }

  // ---- update ---------------------------------------------------------------------------------

  /** MergeRequests::UpdateService (with Close/ReopenService for state_event) through PUT …/:iid. */
  async update(actor: Actor, found: FoundMergeRequest, input: UpdateInput): Promise<FoundMergeRequest> {
    await this.requireUpdate(actor, found);
    const user = actor.user!;
    const before = found.mr;
    const metadata = this.canSetMetadata(actor, found.access);

    const changes: Partial<MergeRequestRow> = {};
    if (input.title !== undefined) {
      const title = input.title.trim();
      if (!title) throw Errors.invalid({ title: ["can't be blank"] });
      if (title !== before.title) {
        changes.title = title;
        const draft = isDraftTitle(title) ? 1 : 0;
        if (draft !== before.draft) changes.draft = draft;
      }
    }
    if (input.description !== undefined && input.description !== before.description) changes.description = input.description;
    if (input.discussion_locked !== undefined) changes.discussion_locked = input.discussion_locked ? 1 : 0;
    if (input.squash !== undefined) changes.squash = input.squash ? 1 : 0;
    const collaboration = input.allow_collaboration ?? input.allow_maintainer_to_push;
    if (collaboration !== undefined && before.source_project_id !== before.project_id) changes.allow_collaboration = collaboration ? 1 : 0;
    if (input.remove_source_branch !== undefined) {
      changes.merge_params = JSON.stringify({ ...mergeParamsOf(before), force_remove_source_branch: input.remove_source_branch });
    }
    if (input.target_branch !== undefined && input.target_branch !== before.target_branch) {
      const branch = input.target_branch;
      if (before.project_id === before.source_project_id && branch === before.source_branch) {
        throw Errors.unprocessable(["You can't use same project/branch for source and target"]);
      }
      if (!isValidNewRefName(branch)) throw Errors.invalid({ target_branch: ['is invalid'] });
      const repo = this.deps.repos.repository(found.project);
      if (!repo.exists() || !(await repo.branch(branch))) throw Errors.unprocessable([`Target branch "${branch}" does not exist`]);
      changes.target_branch = branch;
      // a new target: mergeability and the diff are checked again
      changes.merge_status = 'unchecked';
      const git = await this.gitOf(found);
      const sourceRepo = git.source ?? repo;
      const state = await this.branchState(sourceRepo, repo, before.source_branch, branch);
      if (state.sourceSha) {
        changes.sha = state.sourceSha;
        changes.diff_base_sha = state.base;
      }
    }

    // read before the transaction (SQLite has one connection: no reads beside the writer's)
    const assigneeInput = input.assignee_ids ?? (input.assignee_id !== undefined ? (input.assignee_id === 0 ? [] : [input.assignee_id]) : undefined);
    const wantedAssignees = metadata && assigneeInput ? await this.assignableUsers(assigneeInput, found.project, found.namespace) : undefined;
    const wantedReviewers = metadata && input.reviewer_ids ? await this.assignableUsers(input.reviewer_ids, found.project, found.namespace) : undefined;

    const closingIds =
      this.closing && input.description !== undefined && input.description !== before.description
        ? await this.closing.closingIssueIds(found.project, `${found.namespace.full_path}/${found.project.path}`, { description: input.description })
        : null;
    // a new title or description: the issues it mentions that were not mentioned yet (create_new_cross_references!)
    const mentioned =
      this.mentions && (changes.title !== undefined || changes.description !== undefined)
        ? await this.mentions.mentioned(actor, found, [changes.title ?? before.title, changes.description ?? before.description])
        : undefined;
    const stateEvent = input.state_event;
    const closing = stateEvent === 'close' && (before.state === 'opened' || before.state === 'locked');
    const reopening = stateEvent === 'reopen' && before.state === 'closed';

    const after = await this.db.transaction().execute(async (trx) => {
      const now = nowIso();
      let current = before;
      if (closingIds) await this.closing!.keepClosingIssues(trx, before.id, closingIds);
      if (mentioned !== undefined) await this.mentions!.keep(trx, before, found, mentioned, user.id);
      // close/reopen first, as GitLab's UpdateService hands state events to Close/ReopenService
      if (closing || reopening) {
        if (reopening) {
          const conflict = await this.openDuplicate(
            trx,
            before.project_id,
            before.source_project_id,
            before.source_branch,
            changes.target_branch ?? before.target_branch,
            before.id,
          );
          if (conflict) throw duplicateError(conflict.iid);
        }
        const set: Partial<MergeRequestRow> = closing
          ? { state: 'closed', closed_at: now, closed_by_id: user.id, updated_at: now }
          : { state: 'opened', closed_at: null, closed_by_id: null, merge_status: 'unchecked', updated_at: now };
        current = await trx.updateTable('merge_requests').set(set).where('id', '=', before.id).returningAll().executeTakeFirstOrThrow();
        await trx
          .insertInto('resource_state_events')
          .values({ merge_request_id: before.id, user_id: user.id, state: closing ? 'closed' : 'reopened', source_commit: null, created_at: now })
          .execute();
        await this.recordEvent(trx, user, current, closing ? 'close' : 'reopen', {
          state_id: { previous: STATE_IDS[before.state], current: STATE_IDS[current.state] },
          updated_at: { previous: before.updated_at, current: now },
        });
      }

      const hook: HookChanges = {};
      for (const key of ['title', 'description', 'draft', 'target_branch', 'merge_params'] as const) {
        if (changes[key] !== undefined) {
          const prev = key === 'merge_params' ? mergeParamsOf(before) : key === 'draft' ? before.draft === 1 : before[key];
          const cur = key === 'merge_params' ? JSON.parse(changes.merge_params!) : key === 'draft' ? changes.draft === 1 : changes[key];
          if (JSON.stringify(prev) !== JSON.stringify(cur)) hook[key] = { previous: prev, current: cur };
        }
      }

      // labels
      if (metadata && (input.labels !== undefined || input.add_labels !== undefined || input.remove_labels !== undefined)) {
        const old = await trx
          .selectFrom('merge_request_labels')
          .innerJoin('labels', 'labels.id', 'merge_request_labels.label_id')
          .selectAll('labels')
          .where('merge_request_labels.merge_request_id', '=', before.id)
          .orderBy('labels.title')
          .execute();
        let next: LabelRow[] = input.labels !== undefined ? await this.labelsByTitles(trx, actor, found, input.labels) : [...old];
        if (input.add_labels)
          for (const l of await this.labelsByTitles(trx, actor, found, input.add_labels)) if (!next.some((x) => x.id === l.id)) next.push(l);
        if (input.remove_labels) {
          const lower = new Set(input.remove_labels.map((t) => t.trim().toLowerCase()));
          next = next.filter((l) => !lower.has(l.title.toLowerCase()));
        }
        const added = next.filter((l) => !old.some((o) => o.id === l.id));
        const removed = old.filter((o) => !next.some((l) => l.id === o.id));
        if (added.length || removed.length) {
          if (removed.length) {
            await trx
              .deleteFrom('merge_request_labels')
              .where('merge_request_id', '=', before.id)
              .where(
                'label_id',
                'in',
                removed.map((l) => l.id),
              )
              .execute();
          }
          if (added.length) {
            await trx
              .insertInto('merge_request_labels')
              .values(added.map((l) => ({ merge_request_id: before.id, label_id: l.id, created_at: now })))
              .execute();
          }
          await this.labelEvents(trx, user.id, before.id, added, 'add', now);
          await this.labelEvents(trx, user.id, before.id, removed, 'remove', now);
          const sorted = [...next].sort((a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : 0));
          hook.labels = { previous: old.map(labelHookAttrs), current: sorted.map(labelHookAttrs) };
        }
      }

      // assignees and reviewers
      for (const [table, key, wanted] of [
        ['merge_request_assignees', 'assignees', wantedAssignees],
        ['merge_request_reviewers', 'reviewers', wantedReviewers],
      ] as const) {
        if (wanted === undefined) continue;
        const old = (
          await trx.selectFrom(table).select('user_id').where('merge_request_id', '=', before.id).orderBy('created_at').orderBy('user_id').execute()
        ).map((r) => r.user_id);
        if (sameSet(old, wanted)) continue;
        await trx.deleteFrom(table).where('merge_request_id', '=', before.id).execute();
        await this.linkUsers(trx, table, before.id, wanted, now);
        const users = await usersHook(trx, [...old, ...wanted]);
        hook[key] = { previous: old.map((id) => users.get(id)).filter(Boolean), current: wanted.map((id) => users.get(id)).filter(Boolean) };
      }

      // milestone (0, "" or null removes; one the project cannot use is ignored)
      if (metadata && input.milestone_id !== undefined) {
        const milestone = input.milestone_id ? await this.availableMilestone(trx, found.project, input.milestone_id) : null;
        const removing = !input.milestone_id;
        if ((milestone || removing) && (milestone?.id ?? null) !== before.milestone_id) {
          changes.milestone_id = milestone?.id ?? null;
          hook.milestone_id = { previous: before.milestone_id, current: changes.milestone_id };
          if (before.milestone_id !== null) await this.milestoneEvent(trx, user.id, current, before.milestone_id, 'remove', now);
          if (milestone) await this.milestoneEvent(trx, user.id, current, milestone.id, 'add', now);
        }
      }

      const rowChanged = Object.keys(changes).length > 0;
      if (rowChanged || Object.keys(hook).length) {
        current = await trx
          .updateTable('merge_requests')
          .set({ ...changes, updated_at: now })
          .where('id', '=', before.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        hook.updated_at = { previous: before.updated_at, current: now };
        await this.recordEvent(trx, user, current, 'update', hook);
      }
      return current;
    });
    return { ...found, mr: after };
  }

  // ---- time tracking (TimeTrackingEndpoints) --------------------------------------------------

  /**
   * time_estimate / reset_time_estimate / add_spent_time / reset_spent_time: admin_merge_request
   * (a Developer; the author or an assignee as for updates). An update event with the changed times.
   */
  async trackTime(actor: Actor, found: FoundMergeRequest, change: { estimate?: number; spent?: number | 'reset' }): Promise<FoundMergeRequest> {
    await this.requireUpdate(actor, found);
    const user = actor.user!;
    const before = found.mr;
    const set: Partial<MergeRequestRow> = {};
    if (change.estimate !== undefined) set.time_estimate = change.estimate;
    if (change.spent === 'reset') set.total_time_spent = 0;
    else if (change.spent !== undefined) set.total_time_spent = Math.max(0, before.total_time_spent + change.spent);
    const after = await this.db.transaction().execute(async (trx) => {
      const now = nowIso();
      const row = await trx
        .updateTable('merge_requests')
        .set({ ...set, updated_at: now })
        .where('id', '=', before.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      const hook: HookChanges = {};
      if (set.time_estimate !== undefined && set.time_estimate !== before.time_estimate)
        hook.time_estimate = { previous: before.time_estimate, current: set.time_estimate };
      if (set.total_time_spent !== undefined && set.total_time_spent !== before.total_time_spent) {
        hook.total_time_spent = { previous: before.total_time_spent, current: set.total_time_spent };
        hook.time_change = { previous: 0, current: set.total_time_spent - before.total_time_spent };
      }
      hook.updated_at = { previous: before.updated_at, current: now };
      await this.recordEvent(trx, user, row, 'update', hook);
      return row;
    });
    return { ...found, mr: after };
  }

  // ---- delete ---------------------------------------------------------------------------------

  /** destroy_merge_request: an Owner of the project or an administrator. */
  async destroy(actor: Actor, found: FoundMergeRequest): Promise<void> {
    if (!actor.user) throw Errors.unauthorized();
    if (!actor.isAdmin && found.access.level < 50) throw Errors.forbidden();
    await this.db.transaction().execute(async (trx) => {
      const noteIds = trx.selectFrom('notes').select('id').where('noteable_type', '=', 'MergeRequest').where('noteable_id', '=', found.mr.id);
      await trx.deleteFrom('award_emoji').where('awardable_type', '=', 'Note').where('awardable_id', 'in', noteIds).execute();
      await trx.deleteFrom('award_emoji').where('awardable_type', '=', 'MergeRequest').where('awardable_id', '=', found.mr.id).execute();
      await trx.deleteFrom('notes').where('noteable_type', '=', 'MergeRequest').where('noteable_id', '=', found.mr.id).execute();
      await trx.deleteFrom('subscriptions').where('subscribable_type', '=', 'MergeRequest').where('subscribable_id', '=', found.mr.id).execute();
      await trx.deleteFrom('merge_requests').where('id', '=', found.mr.id).execute();
    });
  }

  // ---- related lists --------------------------------------------------------------------------

  /** MergeRequest#participants: the author, assignees, reviewers and note authors, in that order, each once. */
  async participants(found: FoundMergeRequest) {
    const { mr } = found;
    const [assignees, reviewers, notes] = await Promise.all([
      this.db.selectFrom('merge_request_assignees').select('user_id').where('merge_request_id', '=', mr.id).orderBy('created_at').orderBy('user_id').execute(),
      this.db.selectFrom('merge_request_reviewers').select('user_id').where('merge_request_id', '=', mr.id).orderBy('created_at').orderBy('user_id').execute(),
      this.db
        .selectFrom('notes')
        .select('author_id')
        .where('noteable_type', '=', 'MergeRequest')
        .where('noteable_id', '=', mr.id)
        .where('system', '=', 0)
        .where('internal', '=', 0)
        .orderBy('id')
        .execute(),
    ]);
    const ids = unique(
      [mr.author_id, ...assignees.map((a) => a.user_id), ...reviewers.map((r) => r.user_id), ...notes.map((n) => n.author_id)].filter(
        (x): x is number => x !== null,
      ),
    );
    const users = await basicByIds(this.db, ids);
    return ids.map((id) => users.get(id)).filter((u) => !!u);
  }

  /** The reviewers with their review state (API::Entities::MergeRequestReviewer). */
  async reviewers(found: FoundMergeRequest) {
    const links = await this.db
      .selectFrom('merge_request_reviewers')
      .select(['user_id', 'state', 'created_at'])
      .where('merge_request_id', '=', found.mr.id)
      .orderBy('created_at')
      .orderBy('user_id')
      .execute();
    const users = await basicByIds(
      this.db,
      links.map((l) => l.user_id),
    );
    return links.flatMap((l) => {
      const u = users.get(l.user_id);
      return u ? [{ user: u, state: l.state, created_at: l.created_at }] : [];
    });
  }
}

/** validate_branches → conflict!(errors[:validate_branches]): 409 {"message":["…"]}. */
function duplicateError(iid: number) {
  return Errors.conflict([`Another open merge request already exists for this source branch: !${iid}`]);
}

/** User hook attributes of these ids (for `changes` of assignees and reviewers). */
async function usersHook(trx: Kysely<Database>, ids: number[]) {
  const list = unique(ids);
  const out = new Map<number, ReturnType<typeof userHookAttrs>>();
  if (!list.length) return out;
  const rows = await trx.selectFrom('users').select(['id', 'name', 'username', 'avatar_url', 'public_email']).where('id', 'in', list).execute();
  for (const r of rows) out.set(r.id, userHookAttrs(r));
  return out;
}

const DURATION_UNITS: Record<string, number> = {
  mo: 20 * 8 * 3600,
  w: 5 * 8 * 3600,
  d: 8 * 3600,
  h: 3600,
  m: 60,
  s: 1,
};
const UNIT_ALIASES: Record<string, string> = {
  mo: 'mo',
  mos: 'mo',
  month: 'mo',
  months: 'mo',
  w: 'w',
  wk: 'w',
  wks: 'w',
  week: 'w',
  weeks: 'w',
  d: 'd',
  day: 'd',
  days: 'd',
  h: 'h',
  hr: 'h',
  hrs: 'h',
  hour: 'h',
  hours: 'h',
  m: 'm',
  min: 'm',
  mins: 'm',
  minute: 'm',
  minutes: 'm',
  s: 's',
  sec: 's',
  secs: 's',
  second: 's',
  seconds: 's',
};

/**
 * Gitlab::TimeTrackingFormatter.parse: ChronicDuration with 8-hour days, 5-day weeks and 20-day months;
 * a bare number counts hours; a leading "-" subtracts (spent time). null when it cannot be read.
 */
export function parseDuration(input: string): number | null {
  let text = input.trim().toLowerCase();
  if (!text) return null;
  let sign = 1;
  if (text.startsWith('-')) {
    sign = -1;
    text = text.slice(1).trim();
  }
  if (/^\d+(\.\d+)?$/.test(text)) return sign * Math.round(Number(text) * 3600);
  const re = /(\d+(?:\.\d+)?)\s*([a-z]+)/g;
  let total = 0;
  let consumed = '';
  for (const m of text.matchAll(re)) {
    const unit = UNIT_ALIASES[m[2]];
    if (!unit) return null;
    total += Number(m[1]) * DURATION_UNITS[unit];
    consumed += m[0];
  }
  if (consumed.replace(/\s+/g, '') !== text.replace(/\s+/g, '')) return null;
  return sign * Math.round(total);
}
