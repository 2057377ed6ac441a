// Forks (GitLab lib/api/projects.rb): POST /projects/:id/fork, GET /projects/:id/forks,
// DELETE /projects/:id/fork and POST /projects/:id/fork/:forked_from_id.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import { actorKey, type Actor } from '../../domain/access/actor.ts';
import { MEMBER_ACCESS_LEVELS } from '../../domain/core/roles.ts';
import { PROJECT_ORDERS, type ProjectFilters, type ProjectOrder } from '../../domain/projects/projects-query.ts';
import type { ProjectRow } from '../../db/schema.ts';
import { Errors } from '../../lib/errors.ts';
import { offsetPaginate } from '../../lib/pagination.ts';
import { ProjectSchema, projectViewContext, toProject, type ProjectShape } from './entities/project.entity.ts';
import { userViewContext } from './entities/user.entity.ts';
import { dateTimeParam, Enum, IdParams, linkParams, PaginationProps } from './schemas/common.ts';

const TAGS = ['projects'];
const PROJECT = '/api/v4/projects/:id';
const VISIBILITIES = ['private', 'internal', 'public'] as const;
/** What a list of forks is made of (the response cache keys on their versions). */
const LIST_TABLES = [
  'projects',
  'project_forks',
  'namespaces',
  'members',
  'member_roles',
  'users',
  'redirect_routes',
  'project_imports',
  'users_star_projects',
] as const;

const Bool = () => Type.Optional(Type.Boolean());

const LinkParams = Type.Object({ id: Type.String(), forked_from_id: Type.String() });

const ForkBody = Type.Object({
  namespace: Type.Optional(Type.Union([Type.Integer(), Type.String()])),
  namespace_id: Type.Optional(Type.Integer()),
  namespace_path: Type.Optional(Type.String()),
  path: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  visibility: Enum(VISIBILITIES),
  mr_default_target_self: Bool(),
  branches: Type.Optional(Type.String()),
});

/** collection_params (the ProjectsFinder filters that apply to forks) */
const ForksQuery = Type.Object({
  order_by: Enum(PROJECT_ORDERS, 'created_at'),
  sort: Enum(['asc', 'desc'] as const, 'desc'),
  archived: Bool(),
  visibility: Enum(VISIBILITIES),
  search: Type.Optional(Type.String()),
  search_namespaces: Bool(),
  owned: Bool(),
  starred: Bool(),
  membership: Bool(),
  simple: Bool(),
  statistics: Bool(),
  with_issues_enabled: Bool(),
  with_merge_requests_enabled: Bool(),
  min_access_level: Type.Optional(Type.Unsafe<number>({ type: 'integer', enum: [...MEMBER_ACCESS_LEVELS] })),
  id_after: Type.Optional(Type.Integer()),
  id_before: Type.Optional(Type.Integer()),
  updated_after: Type.Optional(Type.String()),
  updated_before: Type.Optional(Type.String()),
  with_custom_attributes: Bool(),
  ...PaginationProps,
});

export function forksRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const write = { api: 'platform' as const, auth: 'user' as const };
  const read = { api: 'platform' as const, auth: 'optional' as const };

  async function present(actor: Actor, rows: ProjectRow[], shape: ProjectShape) {
    const ctx = projectViewContext(userViewContext(c.config.externalUrl, await c.settings.get()), actor.isAdmin, (p) => c.repos.repository(p).isEmptySync());
    return (await c.projectsQuery.views(actor, rows)).map((v) => toProject(v, shape, ctx));
  }

  app.post(
    `${PROJECT}/fork`,
    { config: write, schema: { tags: TAGS, params: IdParams, body: ForkBody, response: { 201: ProjectSchema } } },
    async (req, reply) => {
      const b = req.body ?? {};
      const fork = await c.forks.fork(req.actor, req.params.id, { ...b, namespace: b.namespace === undefined ? undefined : String(b.namespace) });
      const [entity] = await present(req.actor, [fork], 'full');
      return reply.code(201).send(entity);
    },
  );

  app.get(
    `${PROJECT}/forks`,
    { config: read, schema: { tags: TAGS, params: IdParams, querystring: ForksQuery, response: { 200: Type.Array(ProjectSchema) } } },
    async (req, reply) =>
      app.cachedResponse(req, reply, { tables: LIST_TABLES, viewer: `${actorKey(req.actor)}|forks:${req.params.id}` }, async () => {
        const actor = req.actor;
        const { project } = await c.resolve.project(actor, req.params.id);
        const q = req.query;
        if ((q.updated_before !== undefined || q.updated_after !== undefined) && q.order_by !== 'updated_at') {
          throw Errors.badRequest('`updated_at` filter and `updated_at` sorting must be paired');
        }
        const filters: ProjectFilters = {
          ...q,
          order_by: (q.order_by ?? 'created_at') as ProjectOrder,
          sort: q.sort ?? 'desc',
          updated_after: dateTimeParam(q.updated_after, 'updated_after'),
          updated_before: dateTimeParam(q.updated_before, 'updated_before'),
        };
        const list = await c.projectsQuery.list(actor, { kind: 'forks', projectId: project.id }, filters);
        const page = await offsetPaginate(
          c.db.kysely,
          c.config.externalUrl,
          {
            path: req.url.split('?')[0],
            params: linkParams(q as Record<string, unknown>, { id: req.params.id }),
            page: q.page,
            per_page: q.per_page,
          },
          list,
        );
        reply.headers(page.headers);
        return present(actor, page.items, q.simple || !actor.user ? 'basic' : 'with_access');
      }),
  );

  app.delete(`${PROJECT}/fork`, { config: write, schema: { tags: TAGS, params: IdParams } }, async (req, reply) => {
    // destroy_conditionally!: If-Unmodified-Since older than the project's last change → 412.
    const header = req.headers['if-unmodified-since'];
    const since = typeof header === 'string' ? Date.parse(header) : NaN;
    const unlinked = await c.forks.unlink(req.actor, req.params.id, Number.isNaN(since) ? undefined : since);
    return reply.code(unlinked ? 204 : 304).send();
  });

  app.post(
    `${PROJECT}/fork/:forked_from_id`,
    { config: write, schema: { tags: TAGS, params: LinkParams, response: { 201: ProjectSchema } } },
    async (req, reply) => {
      const project = await c.forks.linkExisting(req.actor, req.params.id, req.params.forked_from_id);
      const [entity] = await present(req.actor, [project], 'full');
      return reply.code(201).send(entity);
    },
  );
}
