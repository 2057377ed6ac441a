// CI pages: `/-/pipelines` (a project's pipelines), `/-/pipelines/:id` (stages and jobs),
// `/-/jobs/:id` (a job and its log) and `/-/jobs/:id/raw` (the log as text). The rights are the
// CI services' (PipelinesService.project / mayReadJobs, JobsService.project), the API's own checks.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';
import { Errors } from '../../lib/errors.ts';
import { ansiToHtml } from '../../web/views/pipelines/ansi.ts';
import { attachmentDisposition } from '../../storage/s3-store.ts';
import { JobPage, PipelinePage, PipelinesPage, pipelineHref } from '../../web/views/pipelines/pages.tsx';
import { idOf, pageOf, projectRef } from './page-params.ts';
import type { Web } from './web.ts';

const PER_PAGE = 20;
/** the page shows the end of a long log; the raw log has all of it */
const LOG_PAGE_LIMIT = 512 * 1024;

export function pipelinePages(_app: FastifyInstance, c: Container, web: Web): void {
  web.projectPage('/-/pipelines', async (req, reply, { ctx, resolved }) => {
    const { project } = await c.ci.pipelines.project(ctx.actor, resolved.project.id, 'read');
    const page = pageOf((req.query as Record<string, unknown>).page);
    const rows = await c.ci.pipelines
      .list(project)
      .limit(PER_PAGE + 1)
      .offset((page - 1) * PER_PAGE)
      .execute();
    const hasNext = rows.length > PER_PAGE;
    return web.page(reply, PipelinesPage({ ctx, project: projectRef(resolved), pipelines: hasNext ? rows.slice(0, PER_PAGE) : rows, page, hasNext }));
  });

  web.projectPage('/-/pipelines/:id', async (req, reply, { ctx, resolved, params }) => {
    const id = idOf(params.id);
    if (id === null) return web.notFound(req, reply);
    const { project, access } = await c.ci.pipelines.project(ctx.actor, resolved.project.id, 'read');
    const pipeline = await c.ci.pipelines.find(project, id);
    const jobs = c.ci.pipelines.mayReadJobs(ctx.actor, project, access) ? await c.ci.pipelines.jobsOf(pipeline) : null;
    return web.page(reply, PipelinePage({ ctx, project: projectRef(resolved), pipeline, jobs }));
  });

  /** The job of a job page, with the API's read_build check (JobsService.project); bridges too when asked. */
  async function jobOf(actor: Parameters<typeof c.ci.jobs.project>[0], projectId: number, raw: string | undefined, types?: string[]) {
    const id = idOf(raw);
    if (id === null) throw Errors.recordNotFound();
    const { project } = await c.ci.jobs.project(actor, String(projectId), 'read');
    return c.ci.jobs.find(project, id, types);
  }

  web.projectPage('/-/jobs/:id', async (_req, reply, { ctx, resolved, params }) => {
    const job = await jobOf(ctx.actor, resolved.project.id, params.id, ['build', 'bridge']);
    // a bridge (trigger job) has no log: its web_url shows the pipeline it belongs to
    if (job.type === 'bridge') return reply.redirect(`${pipelineHref(projectRef(resolved), job.pipeline_id)}`, 302);
    const trace = await c.ci.jobs.trace(job.id);
    const truncated = trace.length > LOG_PAGE_LIMIT;
    let text = (truncated ? trace.subarray(trace.length - LOG_PAGE_LIMIT) : trace).toString('utf8');
    // a cut log starts at its next whole line
    if (truncated) text = text.slice(text.indexOf('\n') + 1);
    return web.page(reply, JobPage({ ctx, project: projectRef(resolved), job, log: ansiToHtml(text), truncated, empty: trace.length === 0 }));
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
