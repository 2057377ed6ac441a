// Personal access tokens API (spec "Personal access tokens", reference §4) and token creation for a user
// (POST /users/:user_id/personal_access_tokens, administrators) or for oneself (POST /user/personal_access_tokens).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import { ALL_SCOPES } from '../../domain/tokens/scopes.ts';
import { toView, type TokenListFilters } from '../../domain/tokens/tokens.service.ts';
import { offsetPaginate } from '../../lib/pagination.ts';
import { todayDate } from '../../lib/time.ts';
import {
  PersonalAccessTokenSchema,
  PersonalAccessTokenWithLastUsedIpsSchema,
  PersonalAccessTokenWithTokenSchema,
  toTokenEntity,
  toTokenWithSecretEntity,
} from './entities/token.entity.ts';
import { dateTimeParam, IdParams, IntegerUserIdParams, PaginationProps } from './schemas/common.ts';
import { normaliseTokenBody } from './schemas/token-body.ts';

const TAGS = ['personal_access_tokens'];
/** Grape DateTime: a date or an ISO 8601 time; the value is checked again when parsed. */
const DateTime = Type.String({ pattern: '^\\s*\\d{4}-\\d{2}-\\d{2}([T ][0-9:.]+(Z|[+-]\\d{2}:?\\d{2})?)?\\s*$' });
const DateOnly = Type.String({ format: 'date' });
const DATETIME_FILTERS = ['created_before', 'created_after', 'last_used_before', 'last_used_after'] as const;

/** What a token list is made of (the response cache keys on their versions). */
const LIST_TABLES = ['personal_access_tokens', 'users'] as const;

const ListQuery = Type.Object({
  ...PaginationProps,
  user_id: Type.Optional(Type.String({ pattern: '^[0-9]*$' })),
  revoked: Type.Optional(Type.Boolean()),
  state: Type.Optional(Type.Enum(['active', 'inactive'])),
  created_before: Type.Optional(DateTime),
  created_after: Type.Optional(DateTime),
  last_used_before: Type.Optional(DateTime),
  last_used_after: Type.Optional(DateTime),
  expires_before: Type.Optional(DateOnly),
  expires_after: Type.Optional(DateOnly),
  search: Type.Optional(Type.String()),
  sort: Type.Optional(Type.String()),
});

const RotateBody = Type.Object({ expires_at: Type.Optional(DateOnly) });
const CreateBody = Type.Object({
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  description: Type.Optional(Type.String()),
  expires_at: Type.Optional(DateOnly),
});

/** Only declared parameters go into Link headers (never credentials such as private_token). */
function declared(query: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (query[k] !== undefined) out[k] = query[k];
  return out;
}

export function tokensRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const user = { api: 'platform' as const, auth: 'user' as const };
  // Any token may read or revoke itself, whatever its scopes.
  const anyScope = { ...user, onlyScopes: [...ALL_SCOPES] };

  app.get(
    '/api/v4/personal_access_tokens',
    { config: user, schema: { tags: TAGS, querystring: ListQuery, response: { 200: Type.Array(PersonalAccessTokenSchema) } } },
    async (req, reply) => {
      // `active` depends on the date; non-administrators see their own tokens only.
      const viewer = `${req.actor.isAdmin ? 'admin' : `user:${req.actor.user!.id}`}|${todayDate()}`;
      return app.cachedResponse(req, reply, { tables: LIST_TABLES, viewer }, async () => {
        const q = req.query;
        const filters: TokenListFilters = { ...q };
        for (const k of DATETIME_FILTERS) if (q[k] !== undefined) filters[k] = dateTimeParam(q[k], k);
        const query = await c.tokens.listQuery(req.actor, filters);
        const page = await offsetPaginate(
          c.db.kysely,
          c.config.externalUrl,
          { path: '/api/v4/personal_access_tokens', params: declared(q, Object.keys(ListQuery.properties)), page: q.page, per_page: q.per_page },
          query,
        );
        reply.headers(page.headers);
        return page.items.map((row) => toTokenEntity(toView(row)));
      });
    },
  );

  app.get(
    '/api/v4/personal_access_tokens/self',
    { config: anyScope, schema: { tags: TAGS, response: { 200: PersonalAccessTokenWithLastUsedIpsSchema } } },
    async (req) => toTokenEntity(toView(await c.tokens.current(req.actor))),
  );

  app.get(
    '/api/v4/personal_access_tokens/:id',
    { config: user, schema: { tags: TAGS, params: IdParams, response: { 200: PersonalAccessTokenWithLastUsedIpsSchema } } },
    async (req) => toTokenEntity(toView(await c.tokens.findAccessible(req.actor, req.params.id))),
  );

  app.post(
    '/api/v4/personal_access_tokens/self/rotate',
    {
      config: { ...user, scopes: ['self_rotate'] },
      preValidation: normaliseTokenBody,
      schema: { tags: TAGS, body: RotateBody, response: { 200: PersonalAccessTokenWithTokenSchema } },
    },
    async (req) => toTokenWithSecretEntity(await c.tokens.rotateSelf(req.actor, req.body.expires_at)),
  );

  app.post(
    '/api/v4/personal_access_tokens/:id/rotate',
    {
      config: user,
      preValidation: normaliseTokenBody,
      schema: { tags: TAGS, params: IdParams, body: RotateBody, response: { 200: PersonalAccessTokenWithTokenSchema } },
    },
    async (req) => toTokenWithSecretEntity(await c.tokens.rotateById(req.actor, req.params.id, req.body.expires_at)),
  );

  app.delete('/api/v4/personal_access_tokens/self', { config: anyScope, schema: { tags: TAGS } }, async (req, reply) => {
    await c.tokens.revokeSelf(req.actor);
    return reply.code(204).send();
  });

  app.delete('/api/v4/personal_access_tokens/:id', { config: user, schema: { tags: TAGS, params: IdParams } }, async (req, reply) => {
    await c.tokens.revokeById(req.actor, req.params.id);
    return reply.code(204).send();
  });

  app.post(
    '/api/v4/users/:user_id/personal_access_tokens',
    {
      config: { api: 'platform', auth: 'admin' },
      preValidation: normaliseTokenBody,
      schema: { tags: TAGS, params: IntegerUserIdParams, body: CreateBody, response: { 201: PersonalAccessTokenWithTokenSchema } },
    },
    async (req, reply) => {
      const target = await c.tokens.targetUser(req.params.user_id);
      const view = await c.tokens.createForUser(target, req.body);
      return reply.code(201).send(toTokenWithSecretEntity(view));
    },
  );

  app.post(
    '/api/v4/user/personal_access_tokens',
    {
      config: user,
      preValidation: normaliseTokenBody,
      schema: { tags: TAGS, body: CreateBody, response: { 201: PersonalAccessTokenWithTokenSchema } },
    },
    async (req, reply) => reply.code(201).send(toTokenWithSecretEntity(await c.tokens.createForSelf(req.actor, req.body))),
  );
}
