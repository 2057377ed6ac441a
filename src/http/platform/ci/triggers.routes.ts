// /projects/:id/triggers and /projects/:id/(ref/:ref/)trigger/pipeline (GitLab lib/api/ci/triggers.rb).
// Trigger tokens are a Maintainer's; the pipeline endpoint takes no credential but the token it is given.
// Registered in src/http/platform/ci/index.ts.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Container } from '../../../container.ts';
import type { CiPipelineRow, CiTriggerRow } from '../../../db/schema.ts';
import type { Actor } from '../../../domain/access/actor.ts';
import type { ProjectAccess } from '../../../domain/access/policy.ts';
import { TRIGGER_MESSAGES } from '../../../domain/ci/triggers/triggers.service.ts';
import { Errors } from '../../../lib/errors.ts';
import { offsetPaginate } from '../../../lib/pagination.ts';
import { toPipeline } from '../entities/pipeline.entity.ts';
import { toUserBasic, userViewContext } from '../entities/user.entity.ts';
import { IdParams, pageRequestOf, PaginationProps } from '../schemas/common.ts';

const TAGS = ['triggers'];
const PROJECT = '/api/v4/projects/:id';

const TriggerParams = Type.Object({ id: Type.String(), trigger_id: Type.Integer() });
const CreateBody = Type.Object({ description: Type.String() });
const UpdateBody = Type.Object({ description: Type.Optional(Type.String()) });
const Loose = Type.Object({}, { additionalProperties: true });
const LegacyParams = Type.Object({ id: Type.String(), '*': Type.String() });

/** The one place a Grape-style list of missing parameters is built ("ref is missing, token is missing"). */
function required(params: Record<string, unknown>, names: string[]): void {
  const missing = names.filter((n) => params[n] === undefined || params[n] === null);
  if (missing.length) throw Errors.param(missing.map((n) => `${n} is missing`).join(', '));
  const empty = names.filter((n) => typeof params[n] === 'string' && (params[n] as string).trim() === '');
  if (empty.length) throw Errors.param(empty.map((n) => `${n} is empty`).join(', '));
  for (const n of names) if (typeof params[n] !== 'string') throw Errors.param(`${n} is invalid`);
}

export function triggersRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const user = { api: 'platform' as const, auth: 'user' as const };
  const open = { api: 'platform' as const, auth: 'optional' as const };
  const svc = () => c.ci.triggers;

  /** Entities::Trigger through Ci::TriggerPresenter: the full token for those who may administer it. */
  async function entities(actor: Actor, access: ProjectAccess, rows: CiTriggerRow[]) {
    const owners = await c.users.basicByIds(rows.map((r) => r.owner_id).filter((x): x is number => x !== null));
    const ctx = userViewContext(c.config.externalUrl, await c.settings.get());
    return rows.map((r) => {
      const v = svc().view(actor, access, r);
      const owner = r.owner_id === null ? undefined : owners.get(r.owner_id);
      return {
        id: r.id,
        token: v.token,
        description: r.description,
        created_at: r.created_at,
        updated_at: r.updated_at,
        last_used: r.last_used,
        expires_at: r.expires_at,
        owner: owner ? toUserBasic(owner, ctx) : null,
      };
    });
  }

  app.get(`${PROJECT}/triggers`, { config: user, schema: { tags: TAGS, params: IdParams, querystring: Type.Object(PaginationProps) } }, async (req, reply) => {
    const { project, access } = await svc().project(req.actor, req.params.id);
    const page = await offsetPaginate(c.db.kysely, c.config.externalUrl, pageRequestOf(req), svc().list(project));
    reply.headers(page.headers);
    return entities(req.actor, access, page.items);
  });

  app.get(`${PROJECT}/triggers/:trigger_id`, { config: user, schema: { tags: TAGS, params: TriggerParams } }, async (req) => {
    const { project, access } = await svc().project(req.actor, req.params.id);
    const [entity] = await entities(req.actor, access, [await svc().find(project, req.params.trigger_id)]);
    return entity;
  });

  app.post(`${PROJECT}/triggers`, { config: user, schema: { tags: TAGS, params: IdParams, body: CreateBody } }, async (req, reply) => {
    const { project, access } = await svc().project(req.actor, req.params.id);
    const row = await svc().create(req.actor, project, req.body.description);
    const [entity] = await entities(req.actor, access, [row]);
    return reply.code(201).send(entity);
  });

  app.put(`${PROJECT}/triggers/:trigger_id`, { config: user, schema: { tags: TAGS, params: TriggerParams, body: UpdateBody } }, async (req) => {
    const { project, access } = await svc().visible(req.actor, req.params.id);
    const trigger = await svc().find(project, req.params.trigger_id);
    const row = await svc().update(req.actor, access, trigger, req.body?.description);
    const [entity] = await entities(req.actor, access, [row]);
    return entity;
  });

  app.delete(`${PROJECT}/triggers/:trigger_id`, { config: user, schema: { tags: TAGS, params: TriggerParams } }, async (req, reply) => {
    const { project } = await svc().project(req.actor, req.params.id);
    const trigger = await svc().find(project, req.params.trigger_id);
    // destroy_conditionally!: If-Unmodified-Since
    const header = req.headers['if-unmodified-since'];
    const since = typeof header === 'string' ? Date.parse(header) : Number.NaN;
    if (!Number.isNaN(since) && Math.floor(Date.parse(trigger.updated_at) / 1000) * 1000 > since) throw Errors.preconditionFailed();
    await svc().destroy(trigger);
    return reply.code(204).send();
  });

  /** Entities::Ci::Pipeline (a write's answer: PipelineWithMetadata without the name). */
  async function pipelineEntity(row: CiPipelineRow, webUrl: string) {
    const u = row.user_id ? (await c.users.basicByIds([row.user_id])).get(row.user_id) : undefined;
    const { name: _name, ...rest } = toPipeline(row, webUrl, u, userViewContext(c.config.externalUrl, await c.settings.get()));
    return rest;
  }

  /** POST …/trigger/pipeline: params from the query and the body (form or JSON), the ref from the path in the legacy form. */
  async function trigger(
    req: { id: string; params: Record<string, unknown>; headers: Record<string, string | string[] | undefined> },
    reply: { code(n: number): { send(b: unknown): unknown } },
  ) {
    const params = req.params;
    required(params, ['ref', 'token']);
    if (params.variables !== undefined && (params.variables === null || typeof params.variables !== 'object' || Array.isArray(params.variables))) {
      throw Errors.param('variables is invalid');
    }
    // forbidden! if gitlab_pipeline_hook_request?: a pipeline hook pointed back at this endpoint would loop
    if (req.headers['x-gitlab-event'] === 'Pipeline Hook') throw Errors.forbidden();
    const variables = (params.variables ?? {}) as Record<string, unknown>;
    if (!Object.values(variables).every((v) => typeof v === 'string')) throw Errors.refused(TRIGGER_MESSAGES.variables);
    const { token: _token, ...payload } = params;
    const { pipeline, project } = await svc().triggerPipeline(req.id, {
      ref: params.ref as string,
      token: params.token as string,
      variables: variables as Record<string, string>,
      payload: { ...payload, variables, id: req.id },
    });
    const ns = await c.resolve.namespaceById(project.namespace_id);
    return reply.code(201).send(await pipelineEntity(pipeline, `${c.config.externalUrl}/${ns!.full_path}/${project.path}`));
  }

  app.post(
    `${PROJECT}/trigger/pipeline`,
    { config: open, schema: { tags: TAGS, params: IdParams, querystring: Loose, body: Type.Optional(Loose) } },
    async (req, reply) =>
      trigger({ id: req.params.id, params: { ...(req.query as object), ...((req.body as object | undefined) ?? {}) }, headers: req.headers }, reply),
  );

  // the webhook form: POST /projects/:id/ref/:ref/trigger/pipeline?token=… (a ref may hold slashes)
  app.post(
    `${PROJECT}/ref/*`,
    { config: open, schema: { tags: TAGS, params: LegacyParams, querystring: Loose, body: Type.Optional(Loose) } },
    async (req, reply) => {
      const rest = req.params['*'];
      const suffix = '/trigger/pipeline';
      if (!rest.endsWith(suffix) || rest.length === suffix.length) throw Errors.notFound();
      const ref = rest.slice(0, -suffix.length);
      return trigger(
        { id: req.params.id, params: { ...(req.query as object), ...((req.body as object | undefined) ?? {}), ref }, headers: req.headers },
        reply,
      );
    },
  );
}
