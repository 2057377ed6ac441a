// Namespaces API (GitLab lib/api/namespaces.rb) and GET /projects/:id/groups (lib/api/projects.rb).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import { MEMBER_ACCESS_LEVELS } from '../../domain/core/roles.ts';
import { Errors } from '../../lib/errors.ts';
import { offsetPaginate } from '../../lib/pagination.ts';
import { NamespaceSchema, PublicGroupDetailsSchema, toNamespace, toPublicGroupDetails } from './entities/namespace.entity.ts';
import { IdParams, linkParams, PaginationProps } from './schemas/common.ts';
import { splitSkipGroups } from './schemas/skip-groups.ts';

const TAGS = ['namespaces'];
/** Never echoed into Link headers. */

const ListQuery = Type.Object({
  search: Type.Optional(Type.String()),
  owned_only: Type.Optional(Type.Boolean()),
  top_level_only: Type.Optional(Type.Boolean({ default: false })),
  full_path_search: Type.Optional(Type.Boolean({ default: false })),
  ...PaginationProps,
});

const ExistsQuery = Type.Object({ parent_id: Type.Optional(Type.Integer({ 'x-int32': false })) });
const ExistsSchema = Type.Object({ exists: Type.Boolean(), suggests: Type.Array(Type.String()) });

const ProjectGroupsQuery = Type.Object({
  search: Type.Optional(Type.String()),
  skip_groups: Type.Optional(Type.Array(Type.Integer({ 'x-int32': false }))),
  with_shared: Type.Optional(Type.Boolean({ default: false })),
  shared_visible_only: Type.Optional(Type.Boolean({ default: false })),
  shared_min_access_level: Type.Optional(Type.Integer()),
  ...PaginationProps,
});

export function namespacesRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const cfg = { api: 'platform' as const, auth: 'user' as const };
  const url = c.config.externalUrl;

  app.get(
    '/api/v4/namespaces',
    { config: cfg, schema: { tags: TAGS, querystring: ListQuery, response: { 200: Type.Array(NamespaceSchema) } } },
    async (req, reply) => {
      const q = req.query;
      const query = c.namespaces.listQuery(req.actor, {
        search: q.search,
        owned_only: q.owned_only === true,
        top_level_only: q.top_level_only,
        full_path_search: q.full_path_search,
      });
      const page = await offsetPaginate(c.db.kysely, url, { path: '/api/v4/namespaces', params: linkParams(q), page: q.page, per_page: q.per_page }, query);
      reply.headers(page.headers);
      return (await c.namespaces.views(req.actor, page.items)).map((v) => toNamespace(v, url));
    },
  );

  app.get('/api/v4/namespaces/:id', { config: cfg, schema: { tags: TAGS, params: IdParams, response: { 200: NamespaceSchema } } }, async (req) => {
    const ns = await c.namespaces.find(req.actor, req.params.id);
    return toNamespace((await c.namespaces.views(req.actor, [ns]))[0], url);
  });

  app.get(
    '/api/v4/namespaces/:id/exists',
    { config: cfg, schema: { tags: TAGS, params: IdParams, querystring: ExistsQuery, response: { 200: ExistsSchema } } },
    async (req) => c.namespaces.exists(req.params.id, req.query.parent_id),
  );

  app.get(
    '/api/v4/projects/:id/groups',
    {
      config: { api: 'platform' as const, auth: 'optional' as const },
      preValidation: splitSkipGroups,
      schema: { tags: ['projects'], params: IdParams, querystring: ProjectGroupsQuery, response: { 200: Type.Array(PublicGroupDetailsSchema) } },
    },
    async (req, reply) => {
      const q = req.query;
      if (q.shared_min_access_level !== undefined && !(MEMBER_ACCESS_LEVELS as readonly number[]).includes(q.shared_min_access_level))
        throw Errors.param('shared_min_access_level does not have a valid value');
      const { project, namespace } = await c.resolve.project(req.actor, req.params.id);
      const query = c.namespaces.projectGroupsQuery(project, namespace, q);
      const pageReq = {
        path: `/api/v4/projects/${encodeURIComponent(req.params.id)}/groups`,
        params: linkParams(q, { id: req.params.id }),
        page: q.page,
        per_page: q.per_page,
      };
      const page = await offsetPaginate(c.db.kysely, url, pageReq, query);
      reply.headers(page.headers);
      const names = await c.groups.fullNames(page.items);
      return page.items.map((g) => toPublicGroupDetails(g, names.get(g.id) ?? g.name, url));
    },
  );
}
