// Merge request pipelines (GitLab's MergeRequests::CreatePipelineService, detached pipelines): a pipeline of
// source merge_request_event at the merge request's head, created when the merge request opens, when its source
// branch moves (as the user who opened or pushed), and on POST …/merge_requests/:iid/pipelines (as the caller). Where
// it runs is GitLab's pipeline_project_and_ref: in the target project on refs/merge-requests/<iid>/head when that user
// may create pipelines there (and, from a fork, the target lets fork pipelines run in it:
// ci_allow_fork_pipelines_to_run_in_parent_project; from the same project, may update the source branch); otherwise,
// for a merge request from a fork, in the fork on its source branch, when the user may run pipelines on that branch
// there; otherwise none. Only jobs whose rules or only/except allow merge request events are in it (none: no
// pipeline). "Merge when pipeline succeeds" is settled when its head pipeline finishes: merged after a success,
// aborted (with GitLab's system note) after a failure or a cancel.
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { CiPipelineRow, Database, MergeRequestRow, NamespaceRow, ProjectRow } from '../../db/schema.ts';
import { defineJob, jobKind } from '../../jobs/registry.ts';
import { Errors } from '../../lib/errors.ts';
import { nowIso } from '../../lib/time.ts';
import { VersionedCache } from '../../lib/versioned-cache.ts';
import { readVersions, stamp, type Versions } from '../../db/versions.ts';
import type { Actor } from '../access/actor.ts';
import { userActor } from '../access/actor.ts';
import type { ProjectAccess } from '../access/policy.ts';
import { settingsOf } from '../core/project-settings.ts';
import { CREATE_MESSAGES, pipelineAllowed, type PipelinesService } from '../ci/pipelines/pipelines.service.ts';
import { mergeRequestRef } from '../ci/merge-request-variables.ts';
import type { FeatureDeps } from '../deps.ts';
import type { NotesService } from '../notes/notes.service.ts';
import { headPipeline, pipelinesOf } from './head-pipeline.ts';
import type { FoundMergeRequest, MergeService } from './merge.service.ts';

export const MR_PIPELINE_JOB = 'merge_request_pipeline';
/** a merge request pipeline to create: the merge request's head now, as the user who opened or pushed */
export const MergeRequestPipelineJob = jobKind(MR_PIPELINE_JOB, Type.Object({ mergeRequestId: Type.Number(), userId: Type.Number() }));

const COMPLETED_BAD = ['failed', 'canceled'];

interface ProjectOf {
  project: ProjectRow;
  namespace: NamespaceRow;
}

/** Where a merge request pipeline runs and on which ref. */
interface Placement extends ProjectOf {
  /** refs/merge-requests/<iid>/head in the target project; the source branch in a fork */
  ref: string;
  inTarget: boolean;
}

/** A merge request pipeline made through the API, and the project it runs in. */
export interface CreatedPipeline extends ProjectOf {
  pipeline: CiPipelineRow;
}

export class MergeRequestPipelines {
  readonly job = defineJob({
    kind: MergeRequestPipelineJob,
    what: 'merge request pipeline',
    leaseMs: 120_000,
    concurrency: 5,
    run: async ({ mergeRequestId, userId }) => {
      await this.createFor(mergeRequestId, userId);
    },
  });

  /** waitingIn's answers, by project */
  private readonly waiting = new VersionedCache<MergeRequestRow[]>(2000, 60_000);

  constructor(
    private readonly deps: FeatureDeps,
    private readonly pipelines: PipelinesService,
    private readonly merges: MergeService,
    private readonly notes: NotesService,
  ) {}

  private get k(): Kysely<Database> {
    return this.deps.db.kysely;
  }

  /**
   * POST …/merge_requests/:iid/pipelines: 403 unless the caller may run the pipeline in the target project or, for
   * a merge request from a fork, in the fork; 400 with the reason when no pipeline comes of it (GitLab's
   * `{"message": {"base": […]}}`).
   */
  async create(actor: Actor, found: FoundMergeRequest): Promise<CreatedPipeline> {
    const placement = await this.placement(actor, found.mr, found);
    if (!placement) throw Errors.forbidden();
    const r = await this.build(actor, found.mr, placement, false);
    if ('pipeline' in r) return { pipeline: r.pipeline, project: placement.project, namespace: placement.namespace };
    throw Errors.refused({ base: r.errors });
  }

  /**
   * POST …/pipelines with `async`: the same pipeline, created by a job (MergeRequests::CreatePipelineWorker). The
   * caller must be one who may run it now (403 otherwise, where GitLab answers 202 and the job makes nothing).
   */
  async createLater(actor: Actor, found: FoundMergeRequest): Promise<void> {
    if (actor.user === null || !(await this.placement(actor, found.mr, found))) throw Errors.forbidden();
    await MergeRequestPipelineJob.queue(this.k, { mergeRequestId: found.mr.id, userId: actor.user.id });
  }

  /** the worker's side: the merge request's head now, if it is still open and the user may run its pipeline */
  private async createFor(mergeRequestId: number, userId: number): Promise<void> {
    const mr = await this.k.selectFrom('merge_requests').selectAll().where('id', '=', mergeRequestId).executeTakeFirst();
    const user = await this.k.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
    if (!mr || mr.state !== 'opened' || !user) return;
    // an administrator is one here unless admin mode is on (then the job, carrying no session, runs without it)
    const isAdmin = user.is_admin === 1 && !(await this.deps.settings.get()).admin_mode;
    const actor = userActor(user, { isAdmin, credential: 'none' });
    const placement = await this.placement(actor, mr);
    if (placement) await this.build(actor, mr, placement, true);
  }

  private async projectOf(id: number): Promise<ProjectOf | null> {
    const project = await this.k.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
    const namespace = project && (await this.k.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).executeTakeFirst());
    return project && namespace ? { project, namespace } : null;
  }

  /**
   * MergeRequests::CreatePipelineService#pipeline_project_and_ref, with the checks Ci::CreatePipelineService makes of
   * the project it picks (Chain::Validate::Abilities): create_pipeline, and for a branch the right to update it.
   * From the same project the fallback would ask the same questions again, so none is a refusal.
   */
  private async placement(actor: Actor, mr: MergeRequestRow, target?: FoundMergeRequest): Promise<Placement | null> {
    const t = target ?? (await this.projectOf(mr.project_id));
    if (!t) return null;
    const access = target?.access ?? (await this.deps.policy.project(actor, t.project, t.namespace));
    const fork = mr.source_project_id !== mr.project_id;
    if (
      mayCreateIn(actor, t.project, access) &&
      (fork
        ? settingsOf(t.project).ci_allow_fork_pipelines_to_run_in_parent_project !== false
        : await this.pipelines.mayRunOn(actor, { ...t, access }, mr.source_branch))
    ) {
      return { ...t, ref: mergeRequestRef(mr.iid), inTarget: true };
    }
    if (!fork) return null;
    const s = await this.projectOf(mr.source_project_id);
    if (!s) return null;
    const sourceAccess = await this.deps.policy.project(actor, s.project, s.namespace);
    if (!mayCreateIn(actor, s.project, sourceAccess) || !(await this.pipelines.mayRunOn(actor, { ...s, access: sourceAccess }, mr.source_branch))) {
      return null;
    }
    return { ...s, ref: mr.source_branch, inTarget: false };
  }

  private async build(actor: Actor, mr: MergeRequestRow, at: Placement, saveOnErrors: boolean): Promise<{ pipeline: CiPipelineRow } | { errors: string[] }> {
    const fork = mr.source_project_id !== mr.project_id;
    const [target, source] = fork
      ? await Promise.all([at.inTarget ? at : this.projectOf(mr.project_id), at.inTarget ? this.projectOf(mr.source_project_id) : at])
      : [at, at];
    if (!target || !source) return { errors: ['Reference not found'] };
    const repo = this.deps.repos.repository(at.project);
    const sourceRepo = this.deps.repos.repository(source.project);
    let head = sourceRepo.exists() ? ((await sourceRepo.branch(mr.source_branch))?.commit ?? null) : null;
    if (head && at.inTarget) {
      // the runner fetches refs/merge-requests/<iid>/head of the target: it must name the head before the pipeline
      // exists (a fork's branch is fetched into it)
      head = await this.deps.repository.mergeRequestHead(
        { repo },
        { iid: mr.iid, sourceRepo: fork ? sourceRepo : null, sourceBranch: mr.source_branch, sha: fork ? null : head },
      );
    }
    if (!head) return { errors: ['Reference not found'] };
    const r = await this.pipelines.build(at.project, actor, {
      ref: at.ref,
      tag: false,
      sha: head,
      source: 'merge_request_event',
      saveOnErrors,
      mergeRequest: { row: mr, projectPath: fullPath(target), sourceProjectPath: fullPath(source) },
    });
    if ('pipeline' in r) return r;
    return { errors: r.errors?.length ? r.errors : [CREATE_MESSAGES[r.failure]] };
  }

  /**
   * Ci::PipelinesForMergeRequestFinder#execute: the merge request's pipelines (head-pipeline.ts) in the projects
   * whose pipelines the caller may read — the target's, and a fork's — newest merge request pipelines first,
   * with the path of the project each runs in.
   */
  async list(actor: Actor, found: FoundMergeRequest): Promise<{ pipeline: CiPipelineRow; projectPath: string }[]> {
    const { mr } = found;
    const readable = new Map<number, string>();
    if (pipelineAllowed(actor, found.project, found.access, 'read')) readable.set(found.project.id, fullPath(found));
    if (mr.source_project_id !== mr.project_id) {
      const s = await this.projectOf(mr.source_project_id);
      if (s && pipelineAllowed(actor, s.project, await this.deps.policy.project(actor, s.project, s.namespace), 'read')) {
        readable.set(s.project.id, fullPath(s));
      }
    }
    const out: { pipeline: CiPipelineRow; projectPath: string }[] = [];
    for (const pipeline of await pipelinesOf(this.k, mr)) {
      const projectPath = readable.get(pipeline.project_id);
      if (projectPath !== undefined) out.push({ pipeline, projectPath });
    }
    return out;
  }

  /**
   * A pipeline finished: the open merge requests with "merge when pipeline succeeds" whose head pipeline it is
   * are merged after a success (as the user who set it; a check that still refuses leaves it waiting), and their
   * auto-merge is aborted after a failure or a cancel.
   */
  async pipelineFinished(p: CiPipelineRow, versions?: Versions): Promise<void> {
    // a merge request pipeline is its merge request's (in the target project or a fork); another, the source branch's
    const mrId = p.source === 'merge_request_event' ? p.merge_request_id : undefined;
    if (mrId === null) return;
    const waiting = (await this.waitingIn(p.project_id, versions)).filter((mr) =>
      mrId !== undefined ? mr.id === mrId : mr.source_project_id === p.project_id && mr.source_branch === p.ref,
    );
    for (const mr of waiting.filter((m) => m.sha === p.sha)) {
      if ((await headPipeline(this.k, mr))?.id !== p.id) continue;
      if (p.status === 'success') await this.merges.autoMergeIfSet(mr.id);
      else if (COMPLETED_BAD.includes(p.status)) await this.abortAutoMerge(mr, p.status === 'failed' ? 'the pipeline failed' : 'the pipeline was canceled');
    }
  }

  /**
   * The open merge requests set to merge when their pipeline succeeds whose pipelines can run in `projectId` (as
   * source project, or as the target of a merge request pipeline). A pipeline finishes often and such merge requests
   * are few: the answer is kept until the merge requests' table version moves (`versions`, when given, were read
   * before the caller's writes, which never touch merge requests).
   */
  private async waitingIn(projectId: number, versions?: Versions): Promise<MergeRequestRow[]> {
    const at = stamp(versions ?? (await readVersions(this.deps.db)), ['merge_requests']);
    const key = String(projectId);
    const known = this.waiting.get(key, at);
    if (known) return known;
    const rows = await this.k
      .selectFrom('merge_requests')
      .selectAll()
      .where((eb) => eb.or([eb('source_project_id', '=', projectId), eb('project_id', '=', projectId)]))
      .where('state', '=', 'opened')
      .where('merge_when_pipeline_succeeds', '=', 1)
      .execute();
    this.waiting.set(key, at, rows);
    return rows;
  }

  /** AutoMerge::BaseService#abort: auto-merge off, and the system note that says why */
  private async abortAutoMerge(mr: MergeRequestRow, reason: string): Promise<void> {
    await this.k.transaction().execute(async (trx) => {
      const r = await trx
        .updateTable('merge_requests')
        .set({ merge_when_pipeline_succeeds: 0, updated_at: nowIso() })
        .where('id', '=', mr.id)
        .where('merge_when_pipeline_succeeds', '=', 1)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) !== 1) return;
      await this.notes.addSystemNote(trx, 'MergeRequest', mr, mr.merge_user_id, `aborted the automatic merge because ${reason}`);
    });
  }
}

/** Ci::CreatePipelineService's first checks of a project: its pipelines are on (Pipelines are disabled!) and the caller has create_pipeline. */
function mayCreateIn(actor: Actor, project: ProjectRow, access: ProjectAccess): boolean {
  return settingsOf(project).builds_access_level !== 'disabled' && pipelineAllowed(actor, project, access, 'create');
}

const fullPath = (p: ProjectOf) => `${p.namespace.full_path}/${p.project.path}`;
