// POST /projects/:id/star, /projects/:id/unstar and GET /projects/:id/starrers (GitLab lib/api/projects.rb,
// Entities::UserStarsProject). Starring answers 201 with the project (Entities::Project), or 304 with no
// body when nothing changed.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import { actorKey, type Actor } from '../../domain/access/actor.ts';
import { StarsService } from '../../domain/projects/stars.service.ts';
import type { ProjectRow } from '../../db/schema.ts';
import { offsetPaginate } from '../../lib/pagination.ts';
import { ProjectSchema, projectViewContext, toProject } from './entities/project.entity.ts';
import { toUserBasic, UserBasicSchema, userViewContext } from './entities/user.entity.ts';
import { IdParams, linkParams, PaginationProps } from './schemas/common.ts';

const TAGS = ['projects'];
const StarrersQuery = Type.Object({ search: Type.Optional(Type.String()), ...PaginationProps });
const UserStarsProjectSchema = Type.Object({ starred_since: Type.String(), user: UserBasicSchema });
const STARRER_TABLES = ['users_star_projects', 'users', 'projects', 'namespaces', 'members', 'member_roles', 'redirect_routes'] as const;

export function starsRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const write = { api: 'platform' as const, auth: 'user' as const };
  const read = { api: 'platform' as const, auth: 'optional' as const };
  const stars = new StarsService({ db: c.db, resolve: c.resolve });

  /** Entities::Project of the project after the change. */
  async function present(actor: Actor, project: ProjectRow) {
    const fresh = await stars.reread(project);
    const [view] = await c.projectsQuery.views(actor, [fresh]);
    const ctx = projectViewContext(userViewContext(c.config.externalUrl, await c.settings.get()), actor.isAdmin, (p) => c.repos.repository(p).isEmptySync());
    return toProject(view, 'full', ctx);
  }

  for (const action of ['star', 'unstar'] as const) {
    app.post(
      `/api/v4/projects/:id/${action}`,
      { config: write, schema: { tags: TAGS, params: IdParams, response: { 201: ProjectSchema, 304: Type.Null() } } },
      async (req, reply) => {
        const { project, changed } = await stars.toggle(req.actor, req.params.id, action === 'star');
        // not_modified!: 304 without a body
        if (!changed) return reply.code(304).send(null);
        return reply.code(201).send(await present(req.actor, project));
      },
    );
  }

  app.get(
    '/api/v4/projects/:id/starrers',
    { config: read, schema: { tags: TAGS, params: IdParams, querystring: StarrersQuery, response: { 200: Type.Array(UserStarsProjectSchema) } } },
    async (req, reply) =>
      app.cachedResponse(req, reply, { tables: STARRER_TABLES, viewer: `${actorKey(req.actor)}|starrers:${req.params.id}` }, async () => {
        const { project } = await c.resolve.project(req.actor, req.params.id);
        const q = req.query;
        const page = await offsetPaginate(
          c.db.kysely,
          c.config.externalUrl,
          { path: req.url.split('?')[0], params: linkParams(q, { id: req.params.id }), page: q.page, per_page: q.per_page },
          stars.starrers(req.actor, project, q.search),
        );
        reply.headers(page.headers);
        const ctx = userViewContext(c.config.externalUrl, await c.settings.get());
        return page.items.map((r) => ({ starred_since: r.starred_since, user: toUserBasic(r, ctx) }));
      }),
  );
}
