// /deploy_tokens (administrators), /projects/:id/deploy_tokens and /groups/:id/deploy_tokens (GitLab
// lib/api/deploy_tokens.rb): listing, reading, creating (the secret only in that answer) and deleting. The project
// and group routes need manage_deploy_tokens (Maintainer+): 404 "Project Not Found" / "Group Not Found" unseen,
// 403 seen. A token the holder does not have is "404 Not found" (find). Scopes are validated as Grape's values
// (`scopes does not have a valid value`); the model's problems are 400 {"message": "<full messages>"}.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import { deployTokenScopesError, toDeployTokenView, type DeployTokenHolder, type DeployTokenQuery } from '../../domain/tokens/deploy-tokens.service.ts';
import { Errors } from '../../lib/errors.ts';
import { offsetPaginate } from '../../lib/pagination.ts';
import { DeployTokenSchema, DeployTokenWithTokenSchema, toDeployTokenEntity } from './entities/deploy-token.entity.ts';
import { dateTimeParam, IdParams, linkParams, PaginationProps } from './schemas/common.ts';
import { normaliseTokenBody } from './schemas/token-body.ts';

const TAGS = ['deploy_tokens'];
const config = { api: 'platform' as const, auth: 'user' as const };
const adminConfig = { api: 'platform' as const, auth: 'admin' as const };

const TokenParams = Type.Object({ id: Type.String(), token_id: Type.Integer() });
const ListQuery = Type.Object({ ...PaginationProps, active: Type.Optional(Type.Boolean()) });
const CreateBody = Type.Object({
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  expires_at: Type.Optional(Type.String()),
  username: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});

export function deployTokensRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const svc = c.deployTokens;

  async function page(req: FastifyRequest, query: DeployTokenQuery, q: { page?: number; per_page?: number }) {
    const p = await offsetPaginate(
      c.db.kysely,
      c.config.externalUrl,
      { path: req.url.split('?')[0], params: linkParams(req.query as Record<string, unknown>, {}), page: q.page, per_page: q.per_page },
      query,
    );
    return { headers: p.headers, items: p.items.map((row) => toDeployTokenEntity(toDeployTokenView(row))) };
  }

  app.get(
    '/api/v4/deploy_tokens',
    { config: adminConfig, schema: { tags: TAGS, querystring: ListQuery, response: { 200: Type.Array(DeployTokenSchema) } } },
    async (req, reply) => {
      const { headers, items } = await page(req, svc.listQuery(null, req.query.active), req.query);
      reply.headers(headers);
      return items;
    },
  );

  for (const kind of ['project', 'group'] as const) {
    const base = `/api/v4/${kind}s/:id/deploy_tokens`;
    const holder = async (req: { actor: FastifyRequest['actor']; params: { id: string } }): Promise<DeployTokenHolder> => {
      if (kind === 'project') {
        const { project, namespace } = await svc.project(req.actor, req.params.id);
        return { kind, project, namespace };
      }
      const { group } = await svc.group(req.actor, req.params.id);
      return { kind, group };
    };

    app.get(
      base,
      { config, schema: { tags: TAGS, params: IdParams, querystring: ListQuery, response: { 200: Type.Array(DeployTokenSchema) } } },
      async (req, reply) => {
        const h = await holder(req);
        const { headers, items } = await page(req, svc.listQuery(h, req.query.active), req.query);
        reply.headers(headers);
        return items;
      },
    );

    app.post(
      base,
      {
        config,
        preValidation: normaliseTokenBody,
        schema: { tags: TAGS, params: IdParams, body: CreateBody, response: { 201: DeployTokenWithTokenSchema } },
      },
      async (req, reply) => {
        const b = req.body;
        const refused = deployTokenScopesError(b.scopes);
        if (refused) throw Errors.param(refused);
        const expiresAt = b.expires_at === undefined ? null : dateTimeParam(b.expires_at, 'expires_at')!;
        const h = await holder(req);
        const view = await svc.create(req.actor, h, { name: b.name, scopes: b.scopes, expires_at: expiresAt, username: b.username ?? null });
        return reply.code(201).send({ ...toDeployTokenEntity(view), token: view.token! });
      },
    );

    app.get(`${base}/:token_id`, { config, schema: { tags: TAGS, params: TokenParams, response: { 200: DeployTokenSchema } } }, async (req) => {
      const h = await holder(req);
      return toDeployTokenEntity(toDeployTokenView(await svc.get(h, req.params.token_id)));
    });

    app.delete(`${base}/:token_id`, { config, schema: { tags: TAGS, params: TokenParams } }, async (req, reply) => {
      const h = await holder(req);
      await svc.destroy(h, req.params.token_id);
      return reply.code(204).send();
    });
  }
}
