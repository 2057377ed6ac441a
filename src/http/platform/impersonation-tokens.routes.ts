// Impersonation tokens (administrators): personal access tokens an administrator creates for a user,
// flagged impersonation=true (GitLab lib/api/users.rb, resource :impersonation_tokens).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import type { PatRow } from '../../db/schema.ts';
import { toView } from '../../domain/tokens/tokens.service.ts';
import { Errors } from '../../lib/errors.ts';
import { offsetPaginate } from '../../lib/pagination.ts';
import { ImpersonationTokenSchema, ImpersonationTokenWithTokenSchema, toTokenEntity, toTokenWithSecretEntity } from './entities/token.entity.ts';
import { IntegerUserIdParams, PaginationProps } from './schemas/common.ts';
import { normaliseTokenBody } from './schemas/token-body.ts';

const TAGS = ['impersonation_tokens'];
const TokenParams = Type.Object({ user_id: Type.Integer(), impersonation_token_id: Type.Integer() });
const ListQuery = Type.Object({ ...PaginationProps, state: Type.Optional(Type.Enum(['all', 'active', 'inactive'], { default: 'all' })) });
const CreateBody = Type.Object({
  name: Type.String(),
  description: Type.Optional(Type.String()),
  expires_at: Type.Optional(Type.String({ format: 'date' })),
  scopes: Type.Optional(Type.Array(Type.String())),
});

/** GitLab's destroy_conditionally!: 412 when the resource changed after If-Unmodified-Since. */
function checkUnmodifiedSince(req: FastifyRequest, row: PatRow): void {
  const header = req.headers['if-unmodified-since'];
  if (typeof header !== 'string') return;
  const since = Date.parse(header);
  if (!Number.isNaN(since) && Date.parse(row.updated_at) > since) throw Errors.preconditionFailed();
}

export function impersonationTokensRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const admin = { api: 'platform' as const, auth: 'admin' as const };

  app.get(
    '/api/v4/users/:user_id/impersonation_tokens',
    { config: admin, schema: { tags: TAGS, params: IntegerUserIdParams, querystring: ListQuery, response: { 200: Type.Array(ImpersonationTokenSchema) } } },
    async (req, reply) => {
      const user = await c.tokens.targetUser(req.params.user_id);
      const { page, per_page, state = 'all' } = req.query;
      const result = await offsetPaginate(
        c.db.kysely,
        c.config.externalUrl,
        {
          path: `/api/v4/users/${req.params.user_id}/impersonation_tokens`,
          params: { user_id: req.params.user_id, state, ...(page !== undefined ? { page } : {}), ...(per_page !== undefined ? { per_page } : {}) },
          page,
          per_page,
        },
        c.tokens.impersonationListQuery(user, state as 'all' | 'active' | 'inactive'),
      );
      reply.headers(result.headers);
      return result.items.map((row) => toTokenEntity(toView(row)));
    },
  );

  app.post(
    '/api/v4/users/:user_id/impersonation_tokens',
    {
      config: admin,
      preValidation: normaliseTokenBody,
      schema: { tags: TAGS, params: IntegerUserIdParams, body: CreateBody, response: { 201: ImpersonationTokenWithTokenSchema } },
    },
    async (req, reply) => {
      const user = await c.tokens.targetUser(req.params.user_id);
      const view = await c.tokens.createImpersonation(user, { ...req.body, scopes: req.body.scopes ?? [] });
      return reply.code(201).send(toTokenWithSecretEntity(view));
    },
  );

  app.get(
    '/api/v4/users/:user_id/impersonation_tokens/:impersonation_token_id',
    { config: admin, schema: { tags: TAGS, params: TokenParams, response: { 200: ImpersonationTokenSchema } } },
    async (req) => {
      const user = await c.tokens.targetUser(req.params.user_id);
      return toTokenEntity(toView(await c.tokens.impersonationToken(user, req.params.impersonation_token_id)));
    },
  );

  app.delete(
    '/api/v4/users/:user_id/impersonation_tokens/:impersonation_token_id',
    { config: admin, schema: { tags: TAGS, params: TokenParams } },
    async (req, reply) => {
      const user = await c.tokens.targetUser(req.params.user_id);
      const row = await c.tokens.impersonationToken(user, req.params.impersonation_token_id);
      checkUnmodifiedSince(req, row);
      await c.tokens.revoke(row);
      return reply.code(204).send();
    },
  );
}
