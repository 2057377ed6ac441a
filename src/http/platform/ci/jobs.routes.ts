// /projects/:id/jobs (GitLab's lib/api/ci/jobs.rb): the jobs of a project, one job, its log, and
// cancel, retry, play, erase. Every endpoint needs a signed-in user (`before { authenticate! }`); the
// list also takes a job token (of a job of the same project).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../../container.ts';
import type { Actor } from '../../../domain/access/actor.ts';
import { JOB_STATUSES } from '../../../domain/ci/jobs/job-statuses.ts';
import type { CiBuildRow } from '../../../db/schema.ts';
import { Errors } from '../../../lib/errors.ts';
import { offsetHeaders, pageParams } from '../../../lib/pagination.ts';
import { FixedWindowLimiter } from '../../plugins/rate-limit.ts';
import { JobSchema, toJobViews, toJob } from '../entities/job.entity.ts';
import { IdParams, linkParams, PaginationProps } from '../schemas/common.ts';

const TAGS = ['jobs'];
const PROJECT = '/api/v4/projects/:id';

const JobParams = Type.Object({ id: Type.String(), job_id: Type.Integer() });
const ListQuery = Type.Object(
  {
    scope: Type.Optional(Type.Unknown()),
    include_retried: Type.Optional(Type.Boolean()),
    ...PaginationProps,
  },
  { additionalProperties: true },
);
const CancelBody = Type.Object({ force: Type.Optional(Type.Boolean()) }, { additionalProperties: true });
const PlayBody = Type.Object(
  {
    job_variables_attributes: Type.Optional(Type.Array(Type.Object({ key: Type.String(), value: Type.String() }))),
  },
  { additionalProperties: true },
);

/** Grape's coerce_with for scope: a string, a list, or a hash's values; anything else is unknown. */
function scopeParam(raw: unknown): string[] | undefined {
  if (raw === undefined) return undefined;
  const list = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? raw : raw && typeof raw === 'object' ? Object.values(raw) : ['unknown'];
  if (!list.every((s) => typeof s === 'string' && (JOB_STATUSES as readonly string[]).includes(s))) {
    throw Errors.param('scope does not have a valid value');
  }
  return list as string[];
}

export function jobsRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const config = { api: 'platform' as const, auth: 'user' as const };
  const svc = () => c.ci.jobs;

  // Gitlab::ApplicationRateLimiter :jobs_index — project_jobs_api_rate_limit a minute per user (per node)
  const listLimiter = new FixedWindowLimiter();

  const viewer = (actor: Actor) => ({ id: actor.user?.id ?? null, isAdmin: actor.isAdmin });

  async function entities(actor: Actor, rows: CiBuildRow[]) {
    const views = toJobViews(await c.ci.jobs.related(rows), c.config.externalUrl, viewer(actor));
    return rows.map((r) => toJob(r, views));
  }

  /** The project for a job-token caller must be the job's own (no other project is in its scope). */
  async function project(req: FastifyRequest, id: string, ability: 'read' | 'update' | 'erase') {
    const ctx = await svc().project(req.actor, id, ability);
    if (req.actor.jobId !== null) {
      const job = await svc().reload(req.actor.jobId);
      if (job.project_id !== ctx.project.id) throw Errors.notFound('Project');
    }
    return ctx;
  }

  app.get(
    `${PROJECT}/jobs`,
    {
      config: { ...config, jobToken: true },
      schema: { tags: TAGS, params: IdParams, querystring: ListQuery, response: { 200: Type.Array(JobSchema) } },
    },
    async (req, reply) => {
      const limit = (await c.settings.get()).project_jobs_api_rate_limit;
      if (typeof limit === 'number' && limit > 0 && !listLimiter.hit(`user:${req.actor.user?.id}`, limit, 60).allowed) {
        throw Errors.raw(429, { message: { error: 'This endpoint has been requested too many times. Try again later.' } });
      }
      const q = req.query;
      const scope = scopeParam(q.scope);
      const { project: p } = await project(req, req.params.id, 'read');
      const { page, perPage } = pageParams({ path: '', params: {}, page: q.page, per_page: q.per_page });
      const rows = await svc()
        .list(p, { scope, includeRetried: q.include_retried })
        .limit(perPage + 1)
        .offset((page - 1) * perPage)
        .execute();
      const hasNext = rows.length > perPage;
      const items = hasNext ? rows.slice(0, perPage) : rows;
      // paginate_with_strategies(without_count: true): no totals
      reply.headers(
        offsetHeaders(
          c.config.externalUrl,
          { path: req.url.split('?')[0], params: linkParams(q as Record<string, unknown>, { id: req.params.id }), page: q.page, per_page: q.per_page },
          page,
          perPage,
          null,
          hasNext,
        ),
      );
      return entities(req.actor, items);
    },
  );

  app.get(`${PROJECT}/jobs/:job_id`, { config, schema: { tags: TAGS, params: JobParams, response: { 200: JobSchema } } }, async (req) => {
    const { project: p } = await project(req, req.params.id, 'read');
    const job = await svc().find(p, req.params.job_id);
    return (await entities(req.actor, [job]))[0];
  });

  app.get(`${PROJECT}/jobs/:job_id/trace`, { config, schema: { tags: TAGS, params: JobParams } }, async (req, reply) => {
    const { project: p } = await project(req, req.params.id, 'read');
    const job = await svc().find(p, req.params.job_id);
    const log = await svc().trace(job.id);
    reply.header('content-disposition', `infile; filename="${job.id}.log"`);
    return reply.code(200).type('text/plain').send(log);
  });

  app.post(
    `${PROJECT}/jobs/:job_id/cancel`,
    { config, schema: { tags: TAGS, params: JobParams, body: CancelBody, response: { 201: JobSchema } } },
    async (req, reply) => {
      const { project: p, level } = await project(req, req.params.id, 'update');
      const job = await svc().find(p, req.params.job_id);
      if (req.body?.force && level < 40) throw Errors.forbidden();
      const after = await svc().cancel(job);
      return reply.code(201).send((await entities(req.actor, [after]))[0]);
    },
  );

  app.post(`${PROJECT}/jobs/:job_id/retry`, { config, schema: { tags: TAGS, params: JobParams, response: { 201: JobSchema } } }, async (req, reply) => {
    const { project: p } = await project(req, req.params.id, 'read');
    const job = await svc().find(p, req.params.job_id, ['build', 'bridge']);
    await project(req, req.params.id, 'update');
    const fresh = await svc().retry(job, req.actor);
    return reply.code(201).send((await entities(req.actor, [fresh]))[0]);
  });

  app.post(`${PROJECT}/jobs/:job_id/erase`, { config, schema: { tags: TAGS, params: JobParams, response: { 201: JobSchema } } }, async (req, reply) => {
    const { project: p, level } = await project(req, req.params.id, 'read');
    const job = await svc().find(p, req.params.job_id);
    // erase_build: Maintainers, or Developers who own the job
    const owner = job.user_id !== null && job.user_id === req.actor.user?.id;
    if (!(level >= 40 || (level >= 30 && owner))) throw Errors.forbidden();
    const after = await svc().erase(job);
    return reply.code(201).send((await entities(req.actor, [after]))[0]);
  });

  app.post(
    `${PROJECT}/jobs/:job_id/play`,
    { config, schema: { tags: TAGS, params: JobParams, body: PlayBody, response: { 200: JobSchema } } },
    async (req, reply) => {
      const { project: p } = await project(req, req.params.id, 'read');
      const job = await svc().find(p, req.params.job_id, ['build', 'bridge']);
      await project(req, req.params.id, 'update');
      const after = await svc().play(job, req.actor, req.body?.job_variables_attributes ?? []);
      return reply.code(200).send((await entities(req.actor, [after]))[0]);
    },
  );
}
