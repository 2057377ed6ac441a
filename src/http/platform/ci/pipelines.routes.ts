// /projects/:id/pipelines… and /projects/:id/pipeline (GitLab lib/api/ci/pipelines.rb) and
// /projects/:id/ci/lint (lib/api/lint.rb). GETs are open to whoever may read the project's pipelines;
// every write needs a signed-in user. Registered in src/http/platform/ci/index.ts.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Container } from '../../../container.ts';
import type { CiBuildRow, CiPipelineRow, NamespaceRow, ProjectRow } from '../../../db/schema.ts';
import type { Actor } from '../../../domain/access/actor.ts';
import type { ProjectAccess } from '../../../domain/access/policy.ts';
import { PIPELINE_ORDERS, PIPELINE_SCOPES } from '../../../domain/ci/pipelines-query.ts';
import { CREATE_MESSAGES, type PipelineAbility } from '../../../domain/ci/pipelines/pipelines.service.ts';
import { settingsOf } from '../../../domain/core/project-settings.ts';
import { Errors } from '../../../lib/errors.ts';
import { offsetPaginate } from '../../../lib/pagination.ts';
import { toJobViews, toJob, toJobBasic } from '../entities/job.entity.ts';
import { toPipeline, toPipelineBasic, toPipelineListItem } from '../entities/pipeline.entity.ts';
import { userViewContext } from '../entities/user.entity.ts';
import { JOB_STATUSES } from '../../../domain/ci/jobs/job-statuses.ts';
import { dateTimeParam, Enum, IdParams, linkParams, PaginationProps } from '../schemas/common.ts';

const TAGS = ['pipelines'];
const PROJECT = '/api/v4/projects/:id';
/** Ci::HasStatus::AVAILABLE_STATUSES: a pipeline's statuses are its jobs' */
const STATUSES = JOB_STATUSES;
const SOURCES = [
  'push',
  'web',
  'trigger',
  'schedule',
  'api',
  'external',
  'pipeline',
  'chat',
  'webide',
  'merge_request_event',
  'external_pull_request_event',
  'parent_pipeline',
  'ondemand_dast_scan',
  'ondemand_dast_validation',
  'security_orchestration_policy',
] as const;
/** the jobs list's scope[]: every status but waiting_for_callback (GitLab's Ci::HasStatus scopes) */
const JOB_SCOPES: readonly string[] = JOB_STATUSES.filter((x) => x !== 'waiting_for_callback');

const PipelineParams = Type.Object({ id: Type.String(), pipeline_id: Type.Integer() });
const ListQuery = Type.Object({
  ...PaginationProps,
  scope: Enum(PIPELINE_SCOPES),
  status: Enum(STATUSES),
  source: Enum(SOURCES),
  ref: Type.Optional(Type.String()),
  sha: Type.Optional(Type.String()),
  yaml_errors: Type.Optional(Type.Boolean()),
  username: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  updated_after: Type.Optional(Type.String()),
  updated_before: Type.Optional(Type.String()),
  created_after: Type.Optional(Type.String()),
  created_before: Type.Optional(Type.String()),
  order_by: Enum(PIPELINE_ORDERS, 'id'),
  sort: Enum(['asc', 'desc'] as const, 'desc'),
});
const JobsQuery = Type.Object({
  ...PaginationProps,
  scope: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
  'scope[]': Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
  include_retried: Type.Optional(Type.Boolean()),
});
const VariableItem = Type.Object({
  key: Type.String(),
  value: Type.String(),
  variable_type: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: ['env_var', 'file'] })),
});
const CreateQuery = Type.Object({ ref: Type.Optional(Type.String()) }, { additionalProperties: true });
const CreateBody = Type.Object({
  ref: Type.Optional(Type.String()),
  variables: Type.Optional(Type.Array(VariableItem)),
  inputs: Type.Optional(Type.Unknown()),
});
const LintBody = Type.Object({
  content: Type.String(),
  dry_run: Type.Optional(Type.Boolean()),
  include_jobs: Type.Optional(Type.Boolean()),
  ref: Type.Optional(Type.String()),
});
const LintQuery = Type.Object({
  sha: Type.Optional(Type.String()),
  content_ref: Type.Optional(Type.String()),
  dry_run: Type.Optional(Type.Boolean()),
  dry_run_ref: Type.Optional(Type.String()),
  include_jobs: Type.Optional(Type.Boolean()),
  ref: Type.Optional(Type.String()),
});

export function pipelinesRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const read = { api: 'platform' as const, auth: 'optional' as const };
  const write = { api: 'platform' as const, auth: 'user' as const };

  /** The project and the caller's right to its pipelines (PipelinesService.project), with its web URL. */
  async function project(
    actor: Actor,
    id: string,
    ability: PipelineAbility,
  ): Promise<{ project: ProjectRow; namespace: NamespaceRow; access: ProjectAccess; webUrl: string }> {
    const ctx = await c.ci.pipelines.project(actor, id, ability);
    return { ...ctx, webUrl: `${c.config.externalUrl}/${ctx.namespace.full_path}/${ctx.project.path}` };
  }

  const pipeline = (p: ProjectRow, id: number): Promise<CiPipelineRow> => c.ci.pipelines.find(p, id);

  /** Entities::Ci::PipelineWithMetadata (GETs), or Entities::Ci::Pipeline without the name (writes). */
  async function detail(row: CiPipelineRow, webUrl: string, withName = true) {
    const user = row.user_id ? (await c.users.basicByIds([row.user_id])).get(row.user_id) : undefined;
    const entity = toPipeline(row, webUrl, user, userViewContext(c.config.externalUrl, await c.settings.get()));
    if (withName) return entity;
    const { name: _name, ...rest } = entity;
    return rest;
  }

  // ---- lists -----------------------------------------------------------------------------------

  app.get(`${PROJECT}/pipelines`, { config: read, schema: { tags: TAGS, params: IdParams, querystring: ListQuery } }, async (req, reply) => {
    const q = req.query;
    const { project: p, webUrl } = await project(req.actor, req.params.id, 'read');
    const updatedAfter = dateTimeParam(q.updated_after, 'updated_after');
    const updatedBefore = dateTimeParam(q.updated_before, 'updated_before');
    const createdAfter = dateTimeParam(q.created_after, 'created_after');
    const createdBefore = dateTimeParam(q.created_before, 'created_before');
    const query = await c.ci.pipelinesQuery.list(p, {
      ...q,
      updated_after: updatedAfter,
      updated_before: updatedBefore,
      created_after: createdAfter,
      created_before: createdBefore,
    });
    const page = await offsetPaginate(
      c.db.kysely,
      c.config.externalUrl,
      { path: req.url.split('?')[0], params: linkParams(q as Record<string, unknown>, { id: req.params.id }), page: q.page, per_page: q.per_page },
      query,
    );
    reply.headers(page.headers);
    return page.items.map((r) => toPipelineListItem(r, webUrl));
  });

  app.get(
    `${PROJECT}/pipelines/latest`,
    { config: read, schema: { tags: TAGS, params: IdParams, querystring: Type.Object({ ref: Type.Optional(Type.String()) }) } },
    async (req) => {
      const { project: p, webUrl } = await project(req.actor, req.params.id, 'read');
      // Project#latest_pipeline: the newest pipeline of the ref at the ref's head commit
      const ref = req.query.ref || p.default_branch || 'main';
      const row = await c.ci.pipelinesQuery.latest(p, ref);
      // authorize! :read_pipeline on nil: GitLab answers 403 when there is none
      if (!row) throw Errors.forbidden();
      return detail(row, webUrl);
    },
  );

  app.get(`${PROJECT}/pipelines/:pipeline_id`, { config: read, schema: { tags: TAGS, params: PipelineParams } }, async (req) => {
    const { project: p, webUrl } = await project(req.actor, req.params.id, 'read');
    return detail(await pipeline(p, req.params.pipeline_id), webUrl);
  });

  async function pipelineJobs(
    req: { actor: Actor; url: string; params: { id: string; pipeline_id: number }; query: Record<string, unknown> },
    bridges: boolean,
  ) {
    const { project: p, access, webUrl } = await project(req.actor, req.params.id, 'read');
    // read_build: non-members see jobs only when the project's jobs are public
    if (!c.ci.pipelines.mayReadJobs(req.actor, p, access)) throw Errors.forbidden();
    const pl = await pipeline(p, req.params.pipeline_id);
    const raw = req.query.scope ?? req.query['scope[]'];
    const scopes = raw === undefined ? [] : Array.isArray(raw) ? (raw as string[]) : [String(raw)];
    if (scopes.some((s) => !JOB_SCOPES.includes(s))) throw Errors.param('scope does not have a valid value');
    const query = c.ci.pipelinesQuery.jobs(pl, { bridges, includeRetried: !!req.query.include_retried, scopes });
    return { query, webUrl };
  }

  /** One page of a pipeline's jobs (or bridges) and what their entities need. */
  async function jobsPage(
    req: { url: string; actor: Actor; params: { id: string }; query: { page?: number; per_page?: number } & Record<string, unknown> },
    query: Awaited<ReturnType<typeof pipelineJobs>>['query'],
  ) {
    const page = await offsetPaginate(
      c.db.kysely,
      c.config.externalUrl,
      { path: req.url.split('?')[0], params: linkParams(req.query, { id: req.params.id }), page: req.query.page, per_page: req.query.per_page },
      query,
    );
    const views = toJobViews(await c.ci.jobs.related(page.items), c.config.externalUrl, { id: req.actor.user?.id ?? null, isAdmin: req.actor.isAdmin });
    return { page, views };
  }

  app.get(
    `${PROJECT}/pipelines/:pipeline_id/jobs`,
    { config: { ...read, jobToken: true }, schema: { tags: TAGS, params: PipelineParams, querystring: JobsQuery } },
    async (req, reply) => {
      const { query } = await pipelineJobs(req as never, false);
      const { page, views } = await jobsPage(req as never, query);
      reply.headers(page.headers);
      return page.items.map((j) => toJob(j, views));
    },
  );

  app.get(
    `${PROJECT}/pipelines/:pipeline_id/bridges`,
    { config: read, schema: { tags: TAGS, params: PipelineParams, querystring: JobsQuery } },
    async (req, reply) => {
      const { query, webUrl } = await pipelineJobs(req as never, true);
      const { page, views } = await jobsPage(req as never, query);
      reply.headers(page.headers);
      const byJob = await c.ci.pipelinesQuery.downstreamOf(page.items);
      return page.items.map((b: CiBuildRow) => {
        const child = byJob.get(b.id);
        return { ...toJobBasic(b, views), downstream_pipeline: child ? toPipelineBasic(child, webUrl) : null };
      });
    },
  );

  app.get(`${PROJECT}/pipelines/:pipeline_id/variables`, { config: read, schema: { tags: TAGS, params: PipelineParams } }, async (req) => {
    const { project: p } = await project(req.actor, req.params.id, 'update');
    const pl = await pipeline(p, req.params.pipeline_id);
    const vars = JSON.parse(pl.variables) as { key: string; value: string; variable_type?: string }[];
    return vars.map((v) => ({ variable_type: v.variable_type ?? 'env_var', key: v.key, value: v.value }));
  });

  // ---- writes ----------------------------------------------------------------------------------

  app.post(
    `${PROJECT}/pipeline`,
    { config: write, schema: { tags: TAGS, params: IdParams, querystring: CreateQuery, body: CreateBody } },
    async (req, reply) => {
      const body = (req.body ?? {}) as { ref?: string; variables?: { key: string; value: string; variable_type?: string }[] };
      const ref = body.ref ?? (req.query.ref as string | undefined);
      if (ref === undefined) throw Errors.param('ref is missing');
      const ctx = await project(req.actor, req.params.id, 'create');
      if (!(await c.ci.pipelines.mayRunOn(req.actor, ctx, ref))) {
        throw Errors.raw(400, { message: { base: ['Insufficient permissions to create a new pipeline'] } });
      }
      // save_on_errors: false — an invalid file is a 400 with its errors, no pipeline
      const result = await c.ci.pipelines.build(ctx.project, req.actor, { ref, source: 'api', variables: body.variables, saveOnErrors: false });
      if ('failure' in result) throw Errors.raw(400, { message: { base: result.errors ?? [CREATE_MESSAGES[result.failure]] } });
      return reply.code(201).send(await detail(result.pipeline, ctx.webUrl, false));
    },
  );

  app.post(`${PROJECT}/pipelines/:pipeline_id/retry`, { config: write, schema: { tags: TAGS, params: PipelineParams } }, async (req, reply) => {
    const ctx = await project(req.actor, req.params.id, 'update');
    const pl = await pipeline(ctx.project, req.params.pipeline_id);
    await c.ci.pipelines.retry(pl, req.actor);
    return reply.code(201).send(await detail(await pipeline(ctx.project, pl.id), ctx.webUrl, false));
  });

  app.post(`${PROJECT}/pipelines/:pipeline_id/cancel`, { config: write, schema: { tags: TAGS, params: PipelineParams } }, async (req, reply) => {
    const ctx = await project(req.actor, req.params.id, 'update');
    const pl = await pipeline(ctx.project, req.params.pipeline_id);
    await c.ci.pipelines.cancel(pl);
    return reply.code(200).send(await detail(await pipeline(ctx.project, pl.id), ctx.webUrl, false));
  });

  app.delete(`${PROJECT}/pipelines/:pipeline_id`, { config: write, schema: { tags: TAGS, params: PipelineParams } }, async (req, reply) => {
    const ctx = await project(req.actor, req.params.id, 'destroy');
    const pl = await pipeline(ctx.project, req.params.pipeline_id);
    // destroy_conditionally!: If-Unmodified-Since
    const header = req.headers['if-unmodified-since'];
    const since = typeof header === 'string' ? Date.parse(header) : Number.NaN;
    if (!Number.isNaN(since) && Math.floor(Date.parse(pl.updated_at) / 1000) * 1000 > since) throw Errors.preconditionFailed();
    await c.ci.pipelines.destroy(pl);
    return reply.code(204).send();
  });

  // ---- lint ------------------------------------------------------------------------------------

  app.post(`${PROJECT}/ci/lint`, { config: write, schema: { tags: ['lint'], params: IdParams, body: LintBody } }, async (req) => {
    const ctx = await project(req.actor, req.params.id, 'create');
    const ref = req.body.ref || ctx.project.default_branch || 'main';
    const sha = await c.repos.repository(ctx.project).resolveCommit(ref);
    return c.ci.pipelines.lint(ctx, req.actor, req.body.content, sha, { includeJobs: req.body.include_jobs === true, dryRun: req.body.dry_run === true, ref });
  });

  app.get(`${PROJECT}/ci/lint`, { config: read, schema: { tags: ['lint'], params: IdParams, querystring: LintQuery } }, async (req) => {
    const q = req.query;
    if (q.sha !== undefined && q.content_ref !== undefined) throw Errors.param('sha, content_ref are mutually exclusive');
    if (q.ref !== undefined && q.dry_run_ref !== undefined) throw Errors.param('ref, dry_run_ref are mutually exclusive');
    const ctx = await c.resolve.project(req.actor, req.params.id);
    if (!ctx.access.abilities.has('read_code') && !req.actor.isAdmin) throw Errors.forbidden();
    const repo = c.repos.repository(ctx.project);
    if (await repo.isEmpty()) throw Errors.notFound('Repository');
    const rev = q.content_ref ?? q.sha ?? ctx.project.default_branch ?? 'main';
    const sha = await repo.resolveCommit(rev);
    if (!sha) throw Errors.notFound('Commit');
    const content = await c.ci.pipelines.ciFileContent(ctx.project, repo, sha);
    const ref = q.dry_run_ref ?? q.ref ?? ctx.project.default_branch ?? 'main';
    return c.ci.pipelines.lint(ctx, req.actor, content, sha, { includeJobs: q.include_jobs === true, dryRun: q.dry_run === true, ref });
  });
}
