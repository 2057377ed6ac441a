// System hooks (spec "System hooks (admin)", reference §5): administrators only. GET and POST /hooks/:id
// answer the hook as a plain object (python-gitlab's gl.hooks.get/create read an object; the spec's
// examples wrap it in a one-element array). Beyond GitLab: every delivery attempt, and resending one.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import { isInt32 } from '../../db/sql.ts';
import { DeliveryBusy, MOCK_SYSTEM_EVENT } from '../../domain/hooks/deliveries.ts';
import type { HookInput } from '../../domain/hooks/system-hooks.service.ts';
import { Errors } from '../../lib/errors.ts';
import { offsetPaginate } from '../../lib/pagination.ts';
import { HookAttemptSchema, SystemHookSchema, toHookAttemptEntity, toSystemHookEntity } from './entities/system-hook.entity.ts';
import { PaginationProps } from './schemas/common.ts';

const TAGS = ['system_hooks'];
const ADMIN = { api: 'platform' as const, auth: 'admin' as const };

const HookParams = Type.Object({ hook_id: Type.Integer() });
const EventParams = Type.Object({ hook_id: Type.Integer(), event_id: Type.Integer() });

/** An id beyond the id column (or `1e999`) names no hook or attempt: `find` misses, as for any unknown id. */
function knownIds(req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  const { hook_id, event_id } = req.params as { hook_id?: number; event_id?: number };
  done([hook_id, event_id].some((id) => id !== undefined && !isInt32(id)) ? Errors.recordNotFound() : undefined);
}
const HookFields = {
  name: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  token: Type.Optional(Type.String()),
  push_events: Type.Optional(Type.Boolean()),
  tag_push_events: Type.Optional(Type.Boolean()),
  merge_requests_events: Type.Optional(Type.Boolean()),
  repository_update_events: Type.Optional(Type.Boolean()),
  enable_ssl_verification: Type.Optional(Type.Boolean()),
  push_events_branch_filter: Type.Optional(Type.String()),
  branch_filter_strategy: Type.Optional(Type.Enum(['wildcard', 'regex', 'all_branches'])),
};
const CreateBody = Type.Object({ url: Type.String(), ...HookFields });
const UpdateBody = Type.Object({ url: Type.Optional(Type.String()), ...HookFields });
const ListQuery = Type.Object(PaginationProps);

/** Only the declared parameters (Grape's declared_params(include_missing: false)). */
function declared(body: Record<string, unknown> | undefined, keys: string[]): HookInput {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (body?.[k] !== undefined && body[k] !== null) out[k] = body[k];
  return out as HookInput;
}

export function systemHooksRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const hookKeys = Object.keys(UpdateBody.properties);

  app.get(
    '/api/v4/hooks',
    { config: ADMIN, schema: { tags: TAGS, querystring: ListQuery, response: { 200: Type.Array(SystemHookSchema) } } },
    async (req, reply) => {
      const page = await offsetPaginate(
        c.db.kysely,
        c.config.externalUrl,
        { path: '/api/v4/hooks', params: {}, page: req.query.page, per_page: req.query.per_page },
        c.hooks.listQuery(),
      );
      reply.headers(page.headers);
      return page.items.map(toSystemHookEntity);
    },
  );

  app.get(
    '/api/v4/hooks/:hook_id',
    { config: ADMIN, preHandler: knownIds, schema: { tags: TAGS, params: HookParams, response: { 200: SystemHookSchema } } },
    async (req) => toSystemHookEntity(await c.hooks.get(req.params.hook_id)),
  );

  app.post('/api/v4/hooks', { config: ADMIN, schema: { tags: TAGS, body: CreateBody, response: { 201: SystemHookSchema } } }, async (req, reply) =>
    reply.code(201).send(toSystemHookEntity(await c.hooks.create(declared(req.body, Object.keys(CreateBody.properties))))),
  );

  app.put(
    '/api/v4/hooks/:hook_id',
    { config: ADMIN, preHandler: knownIds, schema: { tags: TAGS, params: HookParams, body: UpdateBody, response: { 200: SystemHookSchema } } },
    async (req) => toSystemHookEntity(await c.hooks.update(req.params.hook_id, declared(req.body, hookKeys))),
  );

  // The test: the mock event, delivered now; the answer is the mock whatever the receiver said.
  app.post('/api/v4/hooks/:hook_id', { config: ADMIN, preHandler: knownIds, schema: { tags: TAGS, params: HookParams } }, async (req, reply) => {
    const hook = await c.hooks.get(req.params.hook_id);
    await c.deliveries.deliverNow(hook, MOCK_SYSTEM_EVENT);
    return reply.code(201).send(MOCK_SYSTEM_EVENT);
  });

  app.delete('/api/v4/hooks/:hook_id', { config: ADMIN, preHandler: knownIds, schema: { tags: TAGS, params: HookParams } }, async (req, reply) => {
    await c.hooks.delete(req.params.hook_id);
    return reply.code(204).send();
  });

  // Every attempt of every delivery to this hook, newest first (GitLab's WebHookLog entity, plus the
  // delivery it belongs to, its Idempotency-Key, state and next try).
  app.get(
    '/api/v4/hooks/:hook_id/events',
    {
      config: ADMIN,
      preHandler: knownIds,
      schema: { tags: TAGS, params: HookParams, querystring: ListQuery, response: { 200: Type.Array(HookAttemptSchema) } },
    },
    async (req, reply) => {
      const hook = await c.hooks.get(req.params.hook_id);
      const page = await offsetPaginate(
        c.db.kysely,
        c.config.externalUrl,
        { path: `/api/v4/hooks/${hook.id}/events`, params: {}, page: req.query.page, per_page: req.query.per_page },
        c.deliveries.attemptsQuery(hook.id),
      );
      reply.headers(page.headers);
      return page.items.map(toHookAttemptEntity);
    },
  );

  // Sends the delivery of that attempt again, now, under the same Idempotency-Key.
  app.post(
    '/api/v4/hooks/:hook_id/events/:event_id/resend',
    { config: ADMIN, preHandler: knownIds, schema: { tags: TAGS, params: EventParams } },
    async (req, reply) => {
      const hook = await c.hooks.get(req.params.hook_id);
      const attempt = await c.deliveries.attemptOf(hook.id, req.params.event_id);
      if (!attempt) throw Errors.recordNotFound();
      try {
        const outcome = await c.deliveries.resend(hook, attempt.delivery_id);
        return reply.code(201).send({ response_status: outcome.status });
      } catch (e) {
        if (e instanceof DeliveryBusy) throw Errors.conflict('The event is being delivered');
        throw e;
      }
    },
  );
}
