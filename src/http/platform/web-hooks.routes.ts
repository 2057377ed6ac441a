// /projects/:id/hooks and /groups/:id/hooks (GitLab lib/api/project_hooks.rb, ee/lib/api/group_hooks.rb,
// lib/api/hooks/{custom_headers,url_variables,events,trigger_test,resend_hook}.rb): Maintainer+ of the
// project, Owner of the group (admin_web_hook). Lists leave out url_variables and custom_headers, as
// GitLab's (with_url_variables: false, with_custom_headers: false).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import { isInt32 } from '../../db/sql.ts';
import type { WebHookRow } from '../../db/schema.ts';
import type { Actor } from '../../domain/access/actor.ts';
import { DeliveryBusy } from '../../domain/hooks/deliveries.ts';
import { testHookData } from '../../domain/hooks/test-hooks.ts';
import { GROUP_HOOK_FLAGS, type HookParent, PROJECT_HOOK_FLAGS, TEST_TRIGGERS, type WebHookInput } from '../../domain/hooks/web-hooks.service.ts';
import { Errors } from '../../lib/errors.ts';
import { offsetPaginate } from '../../lib/pagination.ts';
import { HookAttemptSchema, toHookAttemptEntity } from './entities/system-hook.entity.ts';
import {
  GroupHookListSchema,
  GroupHookSchema,
  ProjectHookListSchema,
  ProjectHookSchema,
  toGroupHookEntity,
  toProjectHookEntity,
} from './entities/web-hook.entity.ts';
import { IdParams, linkParams, PaginationProps } from './schemas/common.ts';

const TAGS = ['hooks'];
const config = { api: 'platform' as const, auth: 'user' as const };

const HookParams = Type.Object({ id: Type.String(), hook_id: Type.Integer() });
const KeyParams = Type.Object({ id: Type.String(), hook_id: Type.Integer(), key: Type.String() });
const EventParams = Type.Object({ id: Type.String(), hook_id: Type.Integer(), hook_event_id: Type.Integer() });
const TestParams = Type.Object({ id: Type.String(), hook_id: Type.Integer(), trigger: Type.Enum([...TEST_TRIGGERS]) });
const KeyValueList = Type.Array(Type.Object({ key: Type.String(), value: Type.String() }));

const common = (flags: readonly string[]) => ({
  name: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  ...Object.fromEntries(flags.map((f) => [f, Type.Optional(Type.Boolean())])),
  token: Type.Optional(Type.String()),
  push_events_branch_filter: Type.Optional(Type.String()),
  custom_webhook_template: Type.Optional(Type.String()),
  branch_filter_strategy: Type.Optional(Type.Enum(['wildcard', 'regex', 'all_branches'])),
  url_variables: Type.Optional(KeyValueList),
  custom_headers: Type.Optional(KeyValueList),
});
const STATUS_VALUE = /^(?:[1-5]\d\d|successful|client_failure|server_failure)$/;
const EventsQuery = Type.Object({
  status: Type.Optional(Type.String()),
  page: PaginationProps.page,
  per_page: Type.Optional(Type.Integer()),
});
const ValueBody = Type.Object({ value: Type.String() });

/** An id beyond the id column names no hook: `find` misses, as for any unknown id. */
function knownIds(req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  const { hook_id, hook_event_id } = req.params as { hook_id?: number; hook_event_id?: number };
  done([hook_id, hook_event_id].some((id) => id !== undefined && !isInt32(id)) ? Errors.recordNotFound() : undefined);
}

/** Only the declared parameters (Grape's declared_params(include_missing: false)). */
function declared(body: Record<string, unknown> | undefined, keys: string[]): WebHookInput {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (body?.[k] !== undefined && body[k] !== null) out[k] = body[k];
  return out as WebHookInput;
}

/** No body is no parameters. */
async function emptyBody(req: FastifyRequest): Promise<void> {
  if (req.body === undefined || req.body === null) req.body = {};
}

export function webHooksRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const svc = c.webHooks;

  for (const kind of ['projects', 'groups'] as const) {
    const isProject = kind === 'projects';
    const base = `/api/v4/${kind}/:id/hooks`;
    const Schema = isProject ? ProjectHookSchema : GroupHookSchema;
    const ListSchema = isProject ? ProjectHookListSchema : GroupHookListSchema;
    const flags = isProject ? PROJECT_HOOK_FLAGS : GROUP_HOOK_FLAGS;
    const CreateBody = Type.Object({ url: Type.String(), ...common(flags) });
    const UpdateBody = Type.Object({ url: Type.Optional(Type.String()), ...common(flags) });
    const keys = Object.keys(UpdateBody.properties);
    const parentOf = (actor: Actor, id: string): Promise<HookParent> => (isProject ? svc.projectParent(actor, id) : svc.groupParent(actor, id));
    // the serializer drops url_variables and custom_headers from lists (not in the list schema)
    const entity = (h: WebHookRow, full: boolean): any => {
      const secrets = full ? { urlVariables: Object.keys(svc.urlVariablesOf(h)), customHeaders: Object.keys(svc.customHeadersOf(h)) } : undefined;
      return isProject ? toProjectHookEntity(h, secrets) : toGroupHookEntity(h, secrets);
    };

    app.get(
      base,
      { config, schema: { tags: TAGS, params: IdParams, querystring: Type.Object(PaginationProps), response: { 200: Type.Array(ListSchema) } } },
      async (req, reply) => {
        const parent = await parentOf(req.actor, req.params.id);
        const page = await offsetPaginate(
          c.db.kysely,
          c.config.externalUrl,
          { path: req.url.split('?')[0], params: linkParams(req.query, {}), page: req.query.page, per_page: req.query.per_page },
          svc.listQuery(parent),
        );
        reply.headers(page.headers);
        return page.items.map((h) => entity(h, false));
      },
    );

    app.get(`${base}/:hook_id`, { config, preHandler: knownIds, schema: { tags: TAGS, params: HookParams, response: { 200: Schema } } }, async (req) =>
      entity(await svc.get(await parentOf(req.actor, req.params.id), req.params.hook_id), true),
    );

    app.post(
      base,
      { config, preValidation: emptyBody, schema: { tags: TAGS, params: IdParams, body: CreateBody, response: { 201: Schema } } },
      async (req, reply) => {
        const parent = await parentOf(req.actor, req.params.id);
        const hook = await svc.create(parent, declared(req.body as Record<string, unknown>, ['url', ...keys]));
        return reply.code(201).send(entity(hook, true));
      },
    );

    app.put(
      `${base}/:hook_id`,
      { config, preValidation: emptyBody, preHandler: knownIds, schema: { tags: TAGS, params: HookParams, body: UpdateBody, response: { 200: Schema } } },
      async (req) => {
        const parent = await parentOf(req.actor, req.params.id);
        return entity(await svc.update(parent, req.params.hook_id, declared(req.body as Record<string, unknown>, keys)), true);
      },
    );

    app.delete(`${base}/:hook_id`, { config, preHandler: knownIds, schema: { tags: TAGS, params: HookParams } }, async (req, reply) => {
      await svc.delete(await parentOf(req.actor, req.params.id), req.params.hook_id);
      return reply.code(204).send();
    });

    // POST …/hooks/:hook_id/test/:trigger: the trigger's sample data, sent now (even to a disabled
    // hook; a success re-enables it). 201 on a 2xx answer, 422 with the answer or the reason otherwise.
    app.post(`${base}/:hook_id/test/:trigger`, { config, preHandler: knownIds, schema: { tags: TAGS, params: TestParams } }, async (req, reply) => {
      const parent = await parentOf(req.actor, req.params.id);
      const hook = await svc.get(parent, req.params.hook_id);
      const data = await testHookData({ kysely: c.db.kysely, repos: c.repos, externalUrl: c.config.externalUrl }, req.actor, parent, req.params.trigger);
      if ('error' in data) throw Errors.raw(422, { message: data.error });
      const outcome = await c.deliveries.deliverNow(hook, data.payload);
      const status = Number(outcome.status);
      if (status >= 200 && status < 300) return reply.code(201).send({ message: '201 Created' });
      throw Errors.raw(422, { message: outcome.error ?? outcome.body });
    });

    // GitLab's hook logs: every attempt, newest first, of the last 7 days; `status` by code or class.
    app.get(
      `${base}/:hook_id/events`,
      {
        config,
        preHandler: knownIds,
        schema: { tags: TAGS, params: HookParams, querystring: EventsQuery, response: { 200: Type.Array(HookAttemptSchema) } },
      },
      async (req, reply) => {
        const q = req.query;
        const statuses = q.status === undefined ? [] : q.status.split(',').map((s) => s.trim());
        if (statuses.some((s) => !STATUS_VALUE.test(s))) throw Errors.param('status does not have a valid value');
        if (q.per_page !== undefined && (q.per_page < 1 || q.per_page > 20)) throw Errors.param('per_page does not have a valid value');
        const hook = await svc.get(await parentOf(req.actor, req.params.id), req.params.hook_id);
        let query = c.deliveries.attemptsQuery(hook.id, 'web').where('hook_attempts.created_at', '>=', new Date(Date.now() - 7 * 86400_000).toISOString());
        if (statuses.length)
          query = query.where((eb) =>
            eb.or(
              statuses.map((s) =>
                s === 'successful'
                  ? eb.between('hook_attempts.response_status', '200', '299')
                  : s === 'client_failure'
                    ? eb.between('hook_attempts.response_status', '400', '499')
                    : s === 'server_failure'
                      ? eb.between('hook_attempts.response_status', '500', '599')
                      : eb('hook_attempts.response_status', '=', s),
              ),
            ),
          );
        const page = await offsetPaginate(
          c.db.kysely,
          c.config.externalUrl,
          { path: req.url.split('?')[0], params: linkParams(q, {}), page: q.page, per_page: q.per_page ?? 20 },
          query,
        );
        reply.headers(page.headers);
        return page.items.map(toHookAttemptEntity);
      },
    );

    // Sends the delivery of that event again, now, under the same Idempotency-Key.
    app.post(
      `${base}/:hook_id/events/:hook_event_id/resend`,
      { config, preHandler: knownIds, schema: { tags: TAGS, params: EventParams } },
      async (req, reply) => {
        const hook = await svc.get(await parentOf(req.actor, req.params.id), req.params.hook_id);
        const attempt = await c.deliveries.attemptOf(hook.id, req.params.hook_event_id, 'web');
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

    for (const entry of ['custom_headers', 'url_variables'] as const) {
      app.put(
        `${base}/:hook_id/${entry}/:key`,
        { config, preValidation: emptyBody, preHandler: knownIds, schema: { tags: TAGS, params: KeyParams, body: ValueBody } },
        async (req, reply) => {
          await svc.setEntry(await parentOf(req.actor, req.params.id), req.params.hook_id, entry, req.params.key, req.body.value);
          return reply.code(204).send();
        },
      );
      app.delete(`${base}/:hook_id/${entry}/:key`, { config, preHandler: knownIds, schema: { tags: TAGS, params: KeyParams } }, async (req, reply) => {
        await svc.unsetEntry(await parentOf(req.actor, req.params.id), req.params.hook_id, entry, req.params.key);
        return reply.code(204).send();
      });
    }
  }
}
