// /projects/:id/access_tokens and /groups/:id/access_tokens (GitLab lib/api/resource_access_tokens.rb): a
// project's or group's access tokens, each the personal access token of its own bot member. Reading needs
// manage_project_access_tokens / manage_group_access_tokens (401 otherwise, as GitLab's `unauthorized!`); the
// services' refusals are 400 "Bad request - <message>"; scopes and access_level are Grape's values.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import { resourceTokenParamError, type ResourceTokenView } from '../../domain/tokens/resource-access-tokens.service.ts';
import { Errors } from '../../lib/errors.ts';
import { offsetPaginate } from '../../lib/pagination.ts';
import { ResourceAccessTokenSchema, ResourceAccessTokenWithTokenSchema, toTokenEntity, toTokenWithSecretEntity } from './entities/token.entity.ts';
import { dateParam, IdParams, linkParams, PaginationProps } from './schemas/common.ts';
import { normaliseTokenBody } from './schemas/token-body.ts';

const config = { api: 'platform' as const, auth: 'user' as const };

const TokenParams = Type.Object({ id: Type.String(), token_id: Type.String() });
const ListQuery = Type.Object({
  ...PaginationProps,
  state: Type.Optional(Type.Enum(['active', 'inactive'])),
  revoked: Type.Optional(Type.Boolean()),
});
const CreateBody = Type.Object({
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  description: Type.Optional(Type.String()),
  expires_at: Type.Optional(Type.String()),
  access_level: Type.Optional(Type.Integer()),
});
const RotateBody = Type.Object({ expires_at: Type.Optional(Type.String()) });

function entity(view: ResourceTokenView) {
  return { ...toTokenEntity(view), access_level: view.accessLevel };
}

/** The shape with the secret: right after creation or rotation. */
function entityWithToken(view: ResourceTokenView) {
  return { ...toTokenWithSecretEntity(view), access_level: view.accessLevel };
}

export function accessTokensRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const svc = c.resourceAccessTokens;

  for (const kind of ['project', 'group'] as const) {
    const base = `/api/v4/${kind}s/:id/access_tokens`;
    const tags = [`${kind}_access_tokens`];

    app.get(
      base,
      { config, schema: { tags, params: IdParams, querystring: ListQuery, response: { 200: Type.Array(ResourceAccessTokenSchema) } } },
      async (req, reply) => {
        const s = await svc.resource(req.actor, kind, req.params.id);
        if (!svc.mayManage(s)) throw Errors.unauthorized();
        const q = req.query;
        const page = await offsetPaginate(
          c.db.kysely,
          c.config.externalUrl,
          { path: req.url.split('?')[0], params: linkParams(q as Record<string, unknown>, {}), page: q.page, per_page: q.per_page },
          svc.listQuery(s, { state: q.state, revoked: q.revoked }),
        );
        reply.headers(page.headers);
        return (await svc.views(s, page.items)).map(entity);
      },
    );

    app.get(`${base}/:token_id`, { config, schema: { tags, params: TokenParams, response: { 200: ResourceAccessTokenSchema } } }, async (req) => {
      const s = await svc.resource(req.actor, kind, req.params.id);
      return entity(await svc.get(s, req.params.token_id));
    });

    app.post(
      base,
      {
        config,
        preValidation: normaliseTokenBody,
        schema: { tags, params: IdParams, body: CreateBody, response: { 201: ResourceAccessTokenWithTokenSchema } },
      },
      async (req, reply) => {
        const b = req.body;
        const refused = resourceTokenParamError(b);
        if (refused) throw Errors.param(refused);
        const expiresAt = dateParam(b.expires_at, 'expires_at');
        const s = await svc.resource(req.actor, kind, req.params.id);
        const view = await svc.create(req.actor, s, { ...b, expires_at: expiresAt });
        return reply.code(201).send(entityWithToken(view));
      },
    );

    app.post(
      `${base}/:token_id/rotate`,
      {
        config,
        preValidation: normaliseTokenBody,
        schema: { tags, params: TokenParams, body: RotateBody, response: { 200: ResourceAccessTokenWithTokenSchema } },
      },
      async (req) => {
        const expiresAt = dateParam(req.body.expires_at, 'expires_at');
        const s = await svc.resource(req.actor, kind, req.params.id);
        return entityWithToken(await svc.rotate(req.actor, s, req.params.token_id, expiresAt));
      },
    );

    app.delete(`${base}/:token_id`, { config, schema: { tags, params: TokenParams } }, async (req, reply) => {
      const s = await svc.resource(req.actor, kind, req.params.id);
      await svc.revoke(req.actor, s, req.params.token_id);
      return reply.code(204).send();
    });
  }
}
