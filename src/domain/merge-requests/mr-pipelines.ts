// Merge request pipelines (GitLab's MergeRequests::CreatePipelineService, detached pipelines): a pipeline of
// source merge_request_event on refs/merge-requests/<iid>/head at the merge request's head, created when the merge
// request opens, when its source branch moves, and on POST …/merge_requests/:iid/pipelines. Only jobs whose
// rules or only/except allow merge request events are in it (none: no pipeline). A merge request's pipelines are
// its source branch's and these; "merge when pipeline succeeds" is settled when its head pipeline finishes:
// merged after a success, aborted (with GitLab's system note) after a failure or a cancel.
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { CiPipelineRow, Database, MergeRequestRow } from '../../db/schema.ts';
import { defineJob, jobKind } from '../../jobs/registry.ts';
import { Errors } from '../../lib/errors.ts';
import { nowIso } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import { userActor } from '../access/actor.ts';
import { CREATE_MESSAGES, type PipelinesService } from '../ci/pipelines/pipelines.service.ts';
import { mergeRequestRef } from '../ci/merge-request-variables.ts';
import type { FeatureDeps } from '../deps.ts';
import type { NotesService } from '../notes/notes.service.ts';
import { headPipeline } from './head-pipeline.ts';
import type { FoundMergeRequest, MergeService } from './merge.service.ts';

export const MR_PIPELINE_JOB = 'merge_request_pipeline';
/** a merge request pipeline to create: the merge request's head now, as the user who opened or pushed */
export const MergeRequestPipelineJob = jobKind(MR_PIPELINE_JOB, Type.Object({ mergeRequestId: Type.Number(), userId: Type.Number() }));

const COMPLETED_BAD = ['failed', 'canceled'];

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
   * POST …/merge_requests/:iid/pipelines: 403 unless the caller may run pipelines on the source branch; 400 with
   * the reason when no pipeline comes of it (GitLab's `{"message": {"base": […]}}`).
   */
  async create(actor: Actor, found: FoundMergeRequest): Promise<CiPipelineRow> {
    const { mr, project, namespace, access } = found;
    if (mr.source_project_id !== project.id) throw Errors.refused({ base: ['Merge request pipelines of forks are not supported'] });
    if (!(await this.pipelines.mayRunOn(actor, { project, namespace, access }, mr.source_branch))) throw Errors.forbidden();
    const r = await this.build(actor, mr, false);
    if ('pipeline' in r) return r.pipeline;
    throw Errors.refused({ base: r.errors });
  }

  /** the worker's side: the merge request's head now, if it is still open */
  private async createFor(mergeRequestId: number, userId: number): Promise<void> {
    const mr = await this.k.selectFrom('merge_requests').selectAll().where('id', '=', mergeRequestId).executeTakeFirst();
    const user = await this.k.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
    if (!mr || mr.state !== 'opened' || !user || mr.source_project_id !== mr.project_id) return;
    await this.build(userActor(user, { isAdmin: false, credential: 'none' }), mr, true);
  }

  private async build(actor: Actor, mr: MergeRequestRow, saveOnErrors: boolean): Promise<{ pipeline: CiPipelineRow } | { errors: string[] }> {
    const project = await this.k.selectFrom('projects').selectAll().where('id', '=', mr.project_id).executeTakeFirstOrThrow();
    const namespace = await this.k.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
    const repo = this.deps.repos.repository(project);
    const head = repo.exists() ? (await repo.branch(mr.source_branch))?.commit : undefined;
    if (!head) return { errors: ['Reference not found'] };
    // the runner fetches refs/merge-requests/<iid>/head: it must name the head before the pipeline exists
    await this.deps.repository.mergeRequestHead({ repo }, { iid: mr.iid, sourceRepo: null, sourceBranch: mr.source_branch, sha: head });
    const path = `${namespace.full_path}/${project.path}`;
    const r = await this.pipelines.build(project, actor, {
      ref: mergeRequestRef(mr.iid),
      tag: false,
      sha: head,
      source: 'merge_request_event',
      saveOnErrors,
      mergeRequest: { row: mr, projectPath: path, sourceProjectPath: path },
    });
    if ('pipeline' in r) return r;
    return { errors: r.errors?.length ? r.errors : [CREATE_MESSAGES[r.failure]] };
  }

  /** MergeRequest#all_pipelines: the source branch's pipelines and the merge request's own, newest first. */
  list(mr: MergeRequestRow): Promise<CiPipelineRow[]> {
    return this.k
      .selectFrom('ci_pipelines')
      .selectAll()
      .where((eb) =>
        eb.or([eb.and([eb('project_id', '=', mr.source_project_id), eb('ref', '=', mr.source_branch), eb('tag', '=', 0)]), eb('merge_request_id', '=', mr.id)]),
      )
      .where('source', '!=', 'parent_pipeline')
      .orderBy('id', 'desc')
      .limit(1000)
      .execute();
  }

  /**
   * A pipeline finished: the open merge requests with "merge when pipeline succeeds" whose head pipeline it is
   * are merged after a success (as the user who set it; a check that still refuses leaves it waiting), and their
   * auto-merge is aborted after a failure or a cancel.
   */
  async pipelineFinished(p: CiPipelineRow): Promise<void> {
    const waiting = await this.k
      .selectFrom('merge_requests')
      .selectAll()
      .where('source_project_id', '=', p.project_id)
      .where('sha', '=', p.sha)
      .where('state', '=', 'opened')
      .where('merge_when_pipeline_succeeds', '=', 1)
      .execute();
    for (const mr of waiting) {
      if (mr.source_branch !== p.ref && mr.id !== p.merge_request_id) continue;
      if ((await headPipeline(this.k, mr))?.id !== p.id) continue;
      if (p.status === 'success') await this.merges.autoMergeIfSet(mr.id);
      else if (COMPLETED_BAD.includes(p.status)) await this.abortAutoMerge(mr, p.status === 'failed' ? 'the pipeline failed' : 'the pipeline was canceled');
    }
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
