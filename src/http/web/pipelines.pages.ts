// CI pages: `/-/pipelines` (a project's pipelines, Retry and Cancel where allowed), `/-/pipelines/new` (Run
// pipeline: a ref and variables, created as `POST /projects/:id/pipeline` creates it, source web),
// `/-/pipelines/:id` (stages and jobs), `/-/jobs` (the project's jobs), `/-/jobs/:id` (a job: status, runner,
// duration, Retry/Cancel, its artifacts and its log, which grows in place while the job runs by polling
// `/-/jobs/:id/trace.json`), `/-/jobs/:id/raw` (the log as text) and the artifacts archive. Forms post to
// /-/p/:project_id/…. The rights are the CI services' (PipelinesService.project / mayReadJobs / mayRunOn,
// JobsService.project, ArtifactsService.project), the API's own checks, with the viewer's actor.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { CiBuildRow, CiPipelineRow } from '../../db/schema.ts';
import type { Actor } from '../../domain/access/actor.ts';
import type { ResolvedProject } from '../../domain/access/resolve.ts';
import { CANCELABLE_STATUSES, COMPLETED_STATUSES } from '../../domain/ci/jobs/job-statuses.ts';
import { CREATE_MESSAGES } from '../../domain/ci/pipelines/pipelines.service.ts';
import { CANCELABLE } from '../../domain/ci/pipelines/status.ts';
import { DomainError, Errors } from '../../lib/errors.ts';
import { attachmentDisposition } from '../../storage/s3-store.ts';
import { raw, render } from '../../web/jsx/jsx-runtime.ts';
import { ansiLinesToHtml, decodeLogState, encodeLogState, LOG_START, type LogState } from '../../web/views/pipelines/ansi.ts';
import {
  type JobArtifacts,
  JobPage,
  JobsPage,
  JobSummary,
  type JobSummaryProps,
  NewPipelinePage,
  type NewPipelineValues,
  PipelinePage,
  PipelinesPage,
  jobHref,
  pipelineHref,
} from '../../web/views/pipelines/pages.tsx';
import { bodyOf, str as formStr } from '../../web/views/settings/form-input.ts';
import { idOf, pageOf, projectRef, str } from './page-params.ts';
import { HIDDEN, PAGE, type Web, type WebCtx } from './web.ts';

const PER_PAGE = 20;
/** the page shows the end of a long log; the raw log has all of it */
const LOG_PAGE_LIMIT = 512 * 1024;
/** the most one poll of the live log answers: the page script asks again at once while there is more */
export const LOG_POLL_LIMIT = 1024 * 1024;
const ID_RE = /^\d{1,10}$/;
const VARIABLE_KEY = /^[a-zA-Z0-9_]+$/;
const MAX_VARIABLES = 50;
/** a job still going: its log may grow (everything else is complete) */
const ACTIVE = new Set(['created', 'waiting_for_resource', 'preparing', 'waiting_for_callback', 'pending', 'running', 'canceling', 'scheduled']);

const isComplete = (status: string) => !ACTIVE.has(status);
const retryablePipeline = (p: CiPipelineRow) => p.status === 'failed' || p.status === 'canceled';
const cancelablePipeline = (p: CiPipelineRow) => CANCELABLE.includes(p.status);
const retryableJob = (j: CiBuildRow) => j.retried === 0 && (COMPLETED_STATUSES as readonly string[]).includes(j.status) && j.status !== 'skipped';
const cancelableJob = (j: CiBuildRow) => (CANCELABLE_STATUSES as readonly string[]).includes(j.status);

/** The end of the last whole UTF-8 character at or before byte `n`. */
function utf8Cut(b: Buffer, n: number): number {
  let i = n;
  let k = 0;
  while (i > 0 && k < 3 && (b[i - 1]! & 0xc0) === 0x80) {
    i--;
    k++;
  }
  if (i === 0) return n;
  const lead = b[i - 1]!;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return n - (i - 1) >= need ? n : i - 1;
}

/**
 * How much of a piece of log to render now: all of it at the end of a finished log, else whole lines only (a
 * line still being written waits for its end), or a whole window of one endless line cut at a character.
 */
function consumable(b: Buffer, final: boolean, window: number): number {
  if (final) return b.length;
  const nl = b.lastIndexOf(0x0a);
  if (nl >= 0) return nl + 1;
  return b.length >= window ? utf8Cut(b, b.length) : 0;
}

export function pipelinePages(app: FastifyInstance, c: Container, web: Web): void {
  /** The project of a form post and the viewer (404 when invisible or not an id). */
  const projectOf = async (req: FastifyRequest): Promise<{ ctx: WebCtx; resolved: ResolvedProject }> => {
    const ctx = await web.requireUser(req);
    const id = (req.params as { project_id: string }).project_id;
    if (!ID_RE.test(id)) throw Errors.notFound('Project');
    return { ctx, resolved: await c.resolve.project(ctx.actor, id) };
  };
  const param = (req: FastifyRequest, name: string): number => {
    const id = idOf((req.params as Record<string, string>)[name]);
    if (id === null) throw Errors.recordNotFound();
    return id;
  };
  /** whether the service grants `ability` (the buttons show when it does; the POST asks again) */
  const may = async (fn: () => Promise<unknown>): Promise<boolean> => {
    try {
      await fn();
      return true;
    } catch (e) {
      if (e instanceof DomainError && (e.status === 403 || e.status === 404)) return false;
      throw e;
    }
  };

  // ---- pipelines -----------------------------------------------------------------------------------

  web.projectPage('/-/pipelines', async (req, reply, { ctx, resolved }) => {
    const { project } = await c.ci.pipelines.project(ctx.actor, resolved.project.id, 'read');
    const page = pageOf((req.query as Record<string, unknown>).page);
    const rows = await c.ci.pipelines
      .list(project)
      .limit(PER_PAGE + 1)
      .offset((page - 1) * PER_PAGE)
      .execute();
    const hasNext = rows.length > PER_PAGE;
    const mayCreate = ctx.actor.user !== null && (await may(() => c.ci.pipelines.project(ctx.actor, resolved.project.id, 'create')));
    const mayUpdate = ctx.actor.user !== null && (await may(() => c.ci.pipelines.project(ctx.actor, resolved.project.id, 'update')));
    const pipelines = (hasNext ? rows.slice(0, PER_PAGE) : rows).map((row) => ({
      row,
      mayRetry: mayUpdate && retryablePipeline(row),
      mayCancel: mayUpdate && cancelablePipeline(row),
    }));
    return web.page(reply, PipelinesPage({ ctx, project: projectRef(resolved), pipelines, page, hasNext, mayCreate }));
  });

  /** The ref choices of the Run pipeline form: branches, then tags. */
  const refsOf = async (r: ResolvedProject) => {
    const repo = c.repos.repository(r.project);
    if (!repo.exists()) return { branches: [], tags: [] };
    return { branches: (await repo.branches()).map((b) => b.short).sort(), tags: (await repo.tags()).map((t) => t.short).sort() };
  };

  const newPipelinePage = async (reply: FastifyReply, ctx: WebCtx, r: ResolvedProject, values: NewPipelineValues, errors?: string[] | null, status?: number) =>
    web.page(reply, NewPipelinePage({ ctx, project: projectRef(r), refs: await refsOf(r), values, errors }), status);

  web.projectPage('/-/pipelines/new', async (req, reply, { ctx, resolved }) => {
    await web.requireUser(req);
    const r = await c.ci.pipelines.project(ctx.actor, resolved.project.id, 'create');
    const ref = str((req.query as Record<string, unknown>).ref) || r.project.default_branch || 'main';
    return newPipelinePage(reply, ctx, r, { ref, variables: [] });
  });

  /** The variable rows of the form (`variables[0][key]` …), empty rows left out. */
  const variablesOf = (raw: unknown): NewPipelineValues['variables'] => {
    const rows = Array.isArray(raw) ? raw : raw && typeof raw === 'object' ? Object.values(raw) : [];
    return rows
      .map((v) => bodyOf(v))
      .map((v) => ({ key: formStr(v.key).trim(), value: formStr(v.value), variable_type: formStr(v.variable_type) === 'file' ? 'file' : 'env_var' }))
      .filter((v) => v.key !== '' || v.value !== '');
  };

  app.post('/-/p/:project_id/pipelines', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    const r = await c.ci.pipelines.project(ctx.actor, resolved.project.id, 'create');
    const b = bodyOf(req.body);
    const values: NewPipelineValues = { ref: formStr(b.ref).trim(), variables: variablesOf(b.variables) };
    const errors: string[] = [];
    if (!values.ref) errors.push('Ref can\u2019t be blank');
    if (values.variables.length > MAX_VARIABLES) errors.push(`At most ${MAX_VARIABLES} variables can be given`);
    values.variables.forEach((v, i) => {
      if (!v.key) errors.push(`Variable ${i + 1}: the key can\u2019t be blank`);
      else if (v.key.length > 255 || !VARIABLE_KEY.test(v.key)) errors.push(`Variable ${v.key}: the key can contain only letters, digits and '_'`);
    });
    const seen = new Set<string>();
    for (const v of values.variables) {
      if (v.key && seen.has(v.key)) errors.push(`Variable ${v.key} is given twice`);
      seen.add(v.key);
    }
    if (errors.length) return newPipelinePage(reply, ctx, r, values, errors, 422);
    if (!(await c.ci.pipelines.mayRunOn(ctx.actor, r, values.ref))) {
      return newPipelinePage(reply, ctx, r, values, ['Insufficient permissions to create a new pipeline'], 422);
    }
    // Projects::PipelinesController#create: source web, save_on_errors false (an invalid file creates nothing)
    const result = await c.ci.pipelines.build(r.project, ctx.actor, { ref: values.ref, source: 'web', variables: values.variables, saveOnErrors: false });
    if ('failure' in result) return newPipelinePage(reply, ctx, r, values, result.errors ?? [CREATE_MESSAGES[result.failure]], 422);
    return web.redirect(reply, pipelineHref(projectRef(r), result.pipeline.id));
  });

  app.post('/-/p/:project_id/pipelines/:pipeline_id/retry', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    const r = await c.ci.pipelines.project(ctx.actor, resolved.project.id, 'update');
    const pl = await c.ci.pipelines.find(r.project, param(req, 'pipeline_id'));
    if (!retryablePipeline(pl)) throw Errors.forbidden();
    await c.ci.pipelines.retry(pl, ctx.actor);
    return web.redirect(reply, pipelineHref(projectRef(r), pl.id), { kind: 'notice', text: `Pipeline #${pl.id} is retried.` });
  });

  app.post('/-/p/:project_id/pipelines/:pipeline_id/cancel', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    const r = await c.ci.pipelines.project(ctx.actor, resolved.project.id, 'update');
    const pl = await c.ci.pipelines.find(r.project, param(req, 'pipeline_id'));
    await c.ci.pipelines.cancel(pl);
    return web.redirect(reply, pipelineHref(projectRef(r), pl.id), { kind: 'notice', text: `Pipeline #${pl.id} is canceled.` });
  });

  web.projectPage('/-/pipelines/:id', async (req, reply, { ctx, resolved, params }) => {
    const id = idOf(params.id);
    if (id === null) return web.notFound(req, reply);
    const { project, access } = await c.ci.pipelines.project(ctx.actor, resolved.project.id, 'read');
    const pipeline = await c.ci.pipelines.find(project, id);
    const jobs = c.ci.pipelines.mayReadJobs(ctx.actor, project, access) ? await c.ci.pipelines.jobsOf(pipeline) : null;
    const mayUpdate = ctx.actor.user !== null && (await may(() => c.ci.pipelines.project(ctx.actor, resolved.project.id, 'update')));
    return web.page(
      reply,
      PipelinePage({
        ctx,
        project: projectRef(resolved),
        pipeline,
        jobs,
        mayRetry: mayUpdate && retryablePipeline(pipeline),
        mayCancel: mayUpdate && cancelablePipeline(pipeline),
      }),
    );
  });

  // ---- jobs ----------------------------------------------------------------------------------------

  web.projectPage('/-/jobs', async (req, reply, { ctx, resolved }) => {
    const { project } = await c.ci.jobs.project(ctx.actor, String(resolved.project.id), 'read');
    const page = pageOf((req.query as Record<string, unknown>).page);
    const rows = await c.ci.jobs
      .list(project, {})
      .limit(PER_PAGE + 1)
      .offset((page - 1) * PER_PAGE)
      .execute();
    const hasNext = rows.length > PER_PAGE;
    return web.page(reply, JobsPage({ ctx, project: projectRef(resolved), jobs: hasNext ? rows.slice(0, PER_PAGE) : rows, page, hasNext }));
  });

  /** The job of a job page, with the API's read_build check (JobsService.project); bridges too when asked. */
  async function jobOf(actor: Actor, projectId: number, raw: string | undefined, types?: string[]) {
    const id = idOf(raw);
    if (id === null) throw Errors.recordNotFound();
    const { project } = await c.ci.jobs.project(actor, String(projectId), 'read');
    return c.ci.jobs.find(project, id, types);
  }

  /**
   * The log from `offset` as the page shows it: whole lines rendered with the state the last piece ended in,
   * the offset to ask from next and whether the log is complete (the job is finished and all of it was sent).
   */
  async function logPiece(job: CiBuildRow, offset: number, from: LogState, window: number) {
    const complete = isComplete(job.status);
    const { data, size } = await c.ci.jobs.traceSlice(job.id, offset, window);
    const final = complete && offset + data.length >= size;
    const n = consumable(data, final, window);
    const text = data.subarray(0, n).toString('utf8');
    const rendered = n ? ansiLinesToHtml(text, from) : { html: raw(''), state: from };
    const next = offset + n;
    return { html: rendered.html, state: rendered.state, next, size, complete: final && next >= size };
  }

  web.projectPage('/-/jobs/:id', async (_req, reply, { ctx, resolved, params }) => {
    const job = await jobOf(ctx.actor, resolved.project.id, params.id, ['build', 'bridge']);
    // a bridge (trigger job) has no log: its web_url shows the pipeline it belongs to
    if (job.type === 'bridge') return reply.redirect(`${pipelineHref(projectRef(resolved), job.pipeline_id)}`, 302);
    // a long log: its end, from the first whole line
    let start = 0;
    const truncated = job.trace_size > LOG_PAGE_LIMIT;
    if (truncated) {
      start = job.trace_size - LOG_PAGE_LIMIT;
      const head = await c.ci.jobs.traceSlice(job.id, start, 64 * 1024);
      const nl = head.data.indexOf(0x0a);
      if (nl >= 0) start += nl + 1;
    }
    const piece = await logPiece(job, start, LOG_START, LOG_PAGE_LIMIT);
    return web.page(
      reply,
      JobPage({
        ...(await summaryOf(ctx, resolved, job)),
        log: piece.html,
        truncated,
        empty: job.trace_size === 0,
        live: !piece.complete,
        state: encodeLogState(piece.next, piece.state),
      }),
    );
  });

  /** The top of the job page as the viewer sees it now: the buttons they may use, the runner, the stuck hint, the artifacts. */
  async function summaryOf(ctx: WebCtx, resolved: ResolvedProject, job: CiBuildRow): Promise<JobSummaryProps> {
    const mayUpdate = ctx.actor.user !== null && (await may(() => c.ci.jobs.project(ctx.actor, String(resolved.project.id), 'update')));
    const runner = job.runner_id ? await c.ci.runners.find(job.runner_id).catch(() => null) : null;
    // the "stuck" hint: pending and no online runner of the project could take it
    const stuck = job.status === 'pending' && !(await c.ci.runners.anyOnlineFor(resolved.project, resolved.namespace, job));
    return {
      ctx,
      project: projectRef(resolved),
      job,
      runner: runner ? { id: runner.id, description: runner.description ?? '' } : null,
      mayRetry: mayUpdate && retryableJob(job),
      mayCancel: mayUpdate && cancelableJob(job),
      stuck,
      artifacts: await artifactsOf(ctx.actor, resolved, job, mayUpdate),
      now: Date.now(),
    };
  }

  /** The artifacts box: the archive's files, whether it expires and whether the viewer may keep it. */
  async function artifactsOf(actor: Actor, r: ResolvedProject, job: CiBuildRow, mayUpdate: boolean): Promise<JobArtifacts | null> {
    if (!c.ci.artifacts.canReadBuild(actor, r) || job.erased_at) return null;
    const archive = await c.ci.artifacts.archiveOf(job.id);
    if (!archive) return null;
    const expireAt = archive.expire_at ?? job.artifacts_expire_at;
    if (expireAt !== null && expireAt <= new Date().toISOString()) return null;
    let listing: JobArtifacts['listing'] = null;
    try {
      listing = await c.ci.artifacts.entries(archive, 200);
    } catch (e) {
      logListingFailure(e);
    }
    return { fileName: archive.file_name, size: archive.size, expireAt, mayKeep: mayUpdate && expireAt !== null, listing };
  }
  const logListingFailure = (e: unknown) => app.log.warn({ err: e }, 'artifacts archive could not be listed');

  /**
   * The live log (GitLab's trace.json): `state` is where the page is (the offset read so far, the next line
   * number and the colours it ended in); the answer has the HTML of the whole lines after it, the next state,
   * and `complete` once the job finished and everything was sent. A state that does not parse starts over
   * (`append: false`: the page replaces its log). `status` is the status the page shows: when the job's is another,
   * the answer carries the page's new top (`summary`: its buttons, runner and artifacts as they are now).
   */
  web.projectPage('/-/jobs/:id/trace.json', async (req, reply, { ctx, resolved, params }) => {
    const job = await jobOf(ctx.actor, resolved.project.id, params.id);
    const query = req.query as Record<string, unknown>;
    const asked = decodeLogState(str(query.state) || '0');
    const from = asked ?? { offset: 0, state: LOG_START };
    const piece = await logPiece(job, from.offset, from.state, LOG_POLL_LIMIT);
    const known = str(query.status);
    const body = {
      id: job.id,
      status: job.status,
      complete: piece.complete,
      state: encodeLogState(piece.next, piece.state),
      append: asked !== null && from.offset > 0,
      offset: from.offset,
      size: piece.next - from.offset,
      total: piece.size,
      html: piece.html.html,
      // the status the page shows is not the job's any more: the new top of the page (buttons, runner, artifacts)
      ...(known && known !== job.status ? { summary: render(JobSummary(await summaryOf(ctx, resolved, job))) } : {}),
    };
    return reply.code(200).header('cache-control', 'no-store').header('x-content-type-options', 'nosniff').type('application/json').send(JSON.stringify(body));
  });

  web.projectPage('/-/jobs/:id/raw', async (_req, reply, { ctx, resolved, params }) => {
    const job = await jobOf(ctx.actor, resolved.project.id, params.id);
    const trace = await c.ci.jobs.trace(job.id);
    return reply
      .code(200)
      .header('cache-control', 'max-age=0, private, must-revalidate')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'; sandbox")
      .header('content-disposition', `inline; filename="${job.id}.log"`)
      .type('text/plain; charset=utf-8')
      .send(trace);
  });

  app.post('/-/p/:project_id/jobs/:job_id/retry', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    const { project } = await c.ci.jobs.project(ctx.actor, String(resolved.project.id), 'read');
    const job = await c.ci.jobs.find(project, param(req, 'job_id'));
    await c.ci.jobs.project(ctx.actor, String(resolved.project.id), 'update');
    const fresh = await c.ci.jobs.retry(job, ctx.actor);
    return web.redirect(reply, jobHref(projectRef(resolved), fresh.id), { kind: 'notice', text: `Job ${job.name} is retried.` });
  });

  app.post('/-/p/:project_id/jobs/:job_id/cancel', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    const { project } = await c.ci.jobs.project(ctx.actor, String(resolved.project.id), 'update');
    const job = await c.ci.jobs.find(project, param(req, 'job_id'));
    await c.ci.jobs.cancel(job);
    return web.redirect(reply, jobHref(projectRef(resolved), job.id), { kind: 'notice', text: `Job ${job.name} is canceled.` });
  });

  // keep the artifacts (POST …/jobs/:job_id/artifacts/keep: update_build, Developer and up)
  app.post('/-/p/:project_id/jobs/:job_id/artifacts/keep', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    const r = await c.ci.artifacts.project(ctx.actor, String(resolved.project.id));
    if (!ctx.actor.isAdmin && r.access.level < 30) throw Errors.forbidden();
    const job = await c.ci.artifacts.findBuild(r.project, param(req, 'job_id'));
    await c.ci.artifacts.keep(job);
    return web.redirect(reply, jobHref(projectRef(resolved), job.id), { kind: 'notice', text: 'The artifacts are kept.' });
  });

  // the artifacts archive (the download_url of the API's job entity), as GET …/jobs/:job_id/artifacts
  web.projectPage('/-/jobs/:id/artifacts/download', async (_req, reply, { ctx, resolved, params }) => {
    const id = idOf(params.id);
    if (id === null) throw Errors.recordNotFound();
    const r = await c.ci.artifacts.project(ctx.actor, String(resolved.project.id));
    const job = await c.ci.artifacts.findBuild(r.project, id);
    const d = await c.ci.artifacts.download(job, true);
    if (d.redirect) return reply.redirect(d.redirect, 302);
    const stream = await c.ci.artifacts.open(d.artifact);
    return reply
      .header('content-disposition', attachmentDisposition(d.artifact.file_name))
      .header('content-type', 'application/octet-stream')
      .header('content-length', String(d.artifact.size))
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'; sandbox")
      .send(stream);
  });
}
