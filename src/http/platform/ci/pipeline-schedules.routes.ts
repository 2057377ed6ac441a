// /projects/:id/pipeline_schedules… (GitLab lib/api/ci/pipeline_schedules.rb): every endpoint needs a
// signed-in user. Registered in src/http/platform/ci/index.ts.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Container } from '../../../container.ts';
import type { CiPipelineScheduleRow, CiPipelineScheduleVariableRow } from '../../../db/schema.ts';
import { Errors } from '../../../lib/errors.ts';
import { offsetPaginate } from '../../../lib/pagination.ts';
import { toPipelineBasic } from '../entities/pipeline.entity.ts';
import { toUserBasic, userViewContext } from '../entities/user.entity.ts';
import { Enum, IdParams, linkParams, pageRequestOf, PaginationProps } from '../schemas/common.ts';

const TAGS = ['pipeline_schedules'];
const BASE = '/api/v4/projects/:id/pipeline_schedules';

const ScheduleParams = Type.Object({ id: Type.String(), pipeline_schedule_id: Type.Integer() });
const VariableParams = Type.Object({ id: Type.String(), pipeline_schedule_id: Type.Integer(), key: Type.String() });
const ListQuery = Type.Object({ ...PaginationProps, scope: Enum(['active', 'inactive'] as const) });
const PipelinesQuery = Type.Object({ ...PaginationProps, sort: Enum(['asc', 'desc'] as const, 'asc') }, { additionalProperties: true });
const CreateBody = Type.Object({
  description: Type.String(),
  ref: Type.String({ minLength: 1 }),
  cron: Type.String(),
  cron_timezone: Type.Optional(Type.String()),
  active: Type.Optional(Type.Boolean()),
  inputs: Type.Optional(Type.Unknown()),
});
const UpdateBody = Type.Object({
  description: Type.Optional(Type.String()),
  ref: Type.Optional(Type.String()),
  cron: Type.Optional(Type.String()),
  cron_timezone: Type.Optional(Type.String()),
  active: Type.Optional(Type.Boolean()),
  inputs: Type.Optional(Type.Unknown()),
});
const VARIABLE_TYPES = ['env_var', 'file'] as const;
const VariableBody = Type.Object({ key: Type.String(), value: Type.String(), variable_type: Enum(VARIABLE_TYPES) });
const VariableUpdateBody = Type.Object({ value: Type.Optional(Type.String()), variable_type: Enum(VARIABLE_TYPES) });

/** Entities::Ci::Variable of a schedule variable. */
function toVariable(v: CiPipelineScheduleVariableRow) {
  return { variable_type: v.variable_type, key: v.key, value: v.value, raw: false };
}

export function pipelineSchedulesRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const config = { api: 'platform' as const, auth: 'user' as const };
  const svc = () => c.ci.schedules;
  const webUrl = async (_projectId: number, path: string, namespaceId: number) => {
    const ns = await c.resolve.namespaceById(namespaceId);
    return `${c.config.externalUrl}/${ns!.full_path}/${path}`;
  };

  /** Entities::Ci::PipelineSchedule; with `details`, PipelineScheduleDetails (last_pipeline, variables). */
  async function entities(rows: CiPipelineScheduleRow[], details: { projectWebUrl: string } | null) {
    const owners = await c.users.basicByIds(rows.map((r) => r.owner_id).filter((x): x is number => x !== null));
    const ctx = userViewContext(c.config.externalUrl, await c.settings.get());
    const out = [];
    for (const r of rows) {
      const owner = r.owner_id === null ? undefined : owners.get(r.owner_id);
      const base = {
        id: r.id,
        description: r.description,
        ref: r.ref,
        cron: r.cron,
        cron_timezone: r.cron_timezone,
        next_run_at: r.next_run_at,
        active: r.active === 1,
        created_at: r.created_at,
        updated_at: r.updated_at,
        owner: owner ? toUserBasic(owner, ctx) : null,
      };
      if (!details) {
        out.push(base);
        continue;
      }
      const last = await svc().lastPipeline(r.id);
      out.push({
        ...base,
        last_pipeline: last ? toPipelineBasic(last, details.projectWebUrl) : null,
        variables: (await svc().variables(r.id)).map(toVariable),
      });
    }
    return out;
  }

  /** The project (read_pipeline_schedule) and the schedule, with what the entity needs. */
  async function schedule(actor: Parameters<ReturnType<typeof svc>['project']>[0], id: string, scheduleId: number) {
    const ctx = await svc().project(actor, id, 'read');
    const row = await svc().find(ctx.project, scheduleId);
    return { ctx, row, projectWebUrl: await webUrl(ctx.project.id, ctx.project.path, ctx.project.namespace_id) };
  }

  app.get(BASE, { config, schema: { tags: TAGS, params: IdParams, querystring: ListQuery } }, async (req, reply) => {
    const ctx = await svc().project(req.actor, req.params.id, 'read');
    const page = await offsetPaginate(c.db.kysely, c.config.externalUrl, pageRequestOf(req), svc().list(ctx.project, req.query.scope));
    reply.headers(page.headers);
    return entities(page.items, null);
  });

  app.get(`${BASE}/:pipeline_schedule_id`, { config, schema: { tags: TAGS, params: ScheduleParams } }, async (req) => {
    const { row, projectWebUrl } = await schedule(req.actor, req.params.id, req.params.pipeline_schedule_id);
    return (await entities([row], { projectWebUrl }))[0];
  });

  app.get(
    `${BASE}/:pipeline_schedule_id/pipelines`,
    { config, schema: { tags: TAGS, params: ScheduleParams, querystring: PipelinesQuery } },
    async (req, reply) => {
      const { ctx, row, projectWebUrl } = await schedule(req.actor, req.params.id, req.params.pipeline_schedule_id);
      await c.ci.pipelines.project(req.actor, String(ctx.project.id), 'read');
      const q = req.query as { page?: number; per_page?: number; sort?: 'asc' | 'desc' };
      const page = await offsetPaginate(
        c.db.kysely,
        c.config.externalUrl,
        { path: req.url.split('?')[0], params: linkParams(req.query as Record<string, unknown>, { id: req.params.id }), page: q.page, per_page: q.per_page },
        svc().pipelines(row, q.sort),
      );
      reply.headers(page.headers);
      return page.items.map((p) => toPipelineBasic(p, projectWebUrl));
    },
  );

  app.post(BASE, { config, schema: { tags: TAGS, params: IdParams, body: CreateBody } }, async (req, reply) => {
    const ctx = await svc().project(req.actor, req.params.id, 'create');
    const row = await svc().create(req.actor, ctx, req.body);
    const projectWebUrl = await webUrl(ctx.project.id, ctx.project.path, ctx.project.namespace_id);
    return reply.code(201).send((await entities([row], { projectWebUrl }))[0]);
  });

  app.put(`${BASE}/:pipeline_schedule_id`, { config, schema: { tags: TAGS, params: ScheduleParams, body: UpdateBody } }, async (req) => {
    const { ctx, row, projectWebUrl } = await schedule(req.actor, req.params.id, req.params.pipeline_schedule_id);
    const updated = await svc().update(req.actor, ctx, row, req.body ?? {});
    return (await entities([updated], { projectWebUrl }))[0];
  });

  app.post(`${BASE}/:pipeline_schedule_id/take_ownership`, { config, schema: { tags: TAGS, params: ScheduleParams } }, async (req, reply) => {
    const { ctx, row, projectWebUrl } = await schedule(req.actor, req.params.id, req.params.pipeline_schedule_id);
    const r = await svc().takeOwnership(req.actor, ctx, row);
    return reply.code(r.changed ? 201 : 200).send((await entities([r.row], { projectWebUrl }))[0]);
  });

  app.delete(`${BASE}/:pipeline_schedule_id`, { config, schema: { tags: TAGS, params: ScheduleParams } }, async (req, reply) => {
    const { ctx, row } = await schedule(req.actor, req.params.id, req.params.pipeline_schedule_id);
    await svc().destroy(req.actor, ctx, row);
    return reply.code(204).send();
  });

  app.post(`${BASE}/:pipeline_schedule_id/play`, { config, schema: { tags: TAGS, params: ScheduleParams } }, async (req, reply) => {
    const { ctx, row } = await schedule(req.actor, req.params.id, req.params.pipeline_schedule_id);
    await svc().play(req.actor, ctx, row);
    // created!: Grape's render_api_error!('201 Created', 201)
    return reply.code(201).send({ message: '201 Created' });
  });

  app.post(`${BASE}/:pipeline_schedule_id/variables`, { config, schema: { tags: TAGS, params: ScheduleParams, body: VariableBody } }, async (req, reply) => {
    const { ctx, row } = await schedule(req.actor, req.params.id, req.params.pipeline_schedule_id);
    return reply.code(201).send(toVariable(await svc().createVariable(req.actor, ctx, row, req.body)));
  });

  app.get(`${BASE}/:pipeline_schedule_id/variables/:key`, { config, schema: { tags: TAGS, params: VariableParams } }, async (req) => {
    const { ctx, row } = await schedule(req.actor, req.params.id, req.params.pipeline_schedule_id);
    // read_pipeline_schedule_variables: who may update the schedule
    if (!svc().mayUpdate(req.actor, ctx, row)) throw Errors.forbidden();
    return toVariable(await svc().variable(row, req.params.key));
  });

  app.put(`${BASE}/:pipeline_schedule_id/variables/:key`, { config, schema: { tags: TAGS, params: VariableParams, body: VariableUpdateBody } }, async (req) => {
    const { ctx, row } = await schedule(req.actor, req.params.id, req.params.pipeline_schedule_id);
    return toVariable(await svc().updateVariable(req.actor, ctx, row, req.params.key, req.body ?? {}));
  });

  app.delete(`${BASE}/:pipeline_schedule_id/variables/:key`, { config, schema: { tags: TAGS, params: VariableParams } }, async (req, reply) => {
    const { ctx, row } = await schedule(req.actor, req.params.id, req.params.pipeline_schedule_id);
    return reply.code(202).send(toVariable(await svc().deleteVariable(req.actor, ctx, row, req.params.key)));
  });
}
