// /projects/:id/job_token_scope… (GitLab lib/api/project_job_token_scope.rb): a Maintainer's view and edit of
// which other projects' CI/CD job tokens may reach this project. Registered in src/http/platform/ci/index.ts.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Container } from '../../../container.ts';
import { offsetPaginate } from '../../../lib/pagination.ts';
import { projectViewContext, toProject } from '../entities/project.entity.ts';
import { userViewContext } from '../entities/user.entity.ts';
import { IdParams, pageRequestOf, PaginationProps } from '../schemas/common.ts';

const TAGS = ['projects_job_token_scope'];
const BASE = '/api/v4/projects/:id/job_token_scope';

const PatchBody = Type.Object({ enabled: Type.Boolean() });
const ProjectBody = Type.Object({ target_project_id: Type.Integer() });
const GroupBody = Type.Object({ target_group_id: Type.Integer() });
const ProjectParams = Type.Object({ id: Type.String(), target_project_id: Type.Integer() });
const GroupParams = Type.Object({ id: Type.String(), target_group_id: Type.Integer() });
const Page = Type.Object(PaginationProps);

export function jobTokenScopeRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const config = { api: 'platform' as const, auth: 'user' as const };
  const svc = () => c.ci.jobTokenScope;

  app.get(BASE, { config, schema: { tags: TAGS, params: IdParams } }, async (req) => {
    const { project } = await svc().project(req.actor, req.params.id);
    return { inbound_enabled: await svc().inboundEnabled(project), outbound_enabled: false };
  });

  app.patch(BASE, { config, schema: { tags: TAGS, params: IdParams, body: PatchBody } }, async (req, reply) => {
    const { project } = await svc().project(req.actor, req.params.id);
    await svc().setInbound(project, req.body.enabled);
    return reply.code(204).send();
  });

  app.get(`${BASE}/allowlist`, { config, schema: { tags: TAGS, params: IdParams, querystring: Page } }, async (req, reply) => {
    const { project } = await svc().project(req.actor, req.params.id);
    const page = await offsetPaginate(c.db.kysely, c.config.externalUrl, pageRequestOf(req), svc().allowedProjects(project));
    reply.headers(page.headers);
    const ctx = projectViewContext(userViewContext(c.config.externalUrl, await c.settings.get()), req.actor.isAdmin, (p) =>
      c.repos.repository(p).isEmptySync(),
    );
    // Entities::BasicProjectDetails
    return (await c.projectsQuery.views(req.actor, page.items)).map((v) => toProject(v, 'basic', ctx));
  });

  app.get(`${BASE}/groups_allowlist`, { config, schema: { tags: TAGS, params: IdParams, querystring: Page } }, async (req, reply) => {
    const { project } = await svc().project(req.actor, req.params.id);
    const page = await offsetPaginate(c.db.kysely, c.config.externalUrl, pageRequestOf(req), svc().allowedGroups(project));
    reply.headers(page.headers);
    // Entities::BasicGroupDetails
    return page.items.map((g) => ({ id: g.id, web_url: `${c.config.externalUrl}/groups/${g.full_path}`, name: g.name }));
  });

  app.post(`${BASE}/allowlist`, { config, schema: { tags: TAGS, params: IdParams, body: ProjectBody } }, async (req, reply) => {
    const ctx = await svc().project(req.actor, req.params.id);
    return reply.code(201).send(await svc().addProject(req.actor, ctx, req.body.target_project_id));
  });

  app.delete(`${BASE}/allowlist/:target_project_id`, { config, schema: { tags: TAGS, params: ProjectParams } }, async (req, reply) => {
    const ctx = await svc().visible(req.actor, req.params.id);
    // find_project!: the target as the caller sees it
    const target = await c.resolve.project(req.actor, String(req.params.target_project_id));
    await svc().removeProject(req.actor, ctx, target.project);
    return reply.code(204).send();
  });

  app.post(`${BASE}/groups_allowlist`, { config, schema: { tags: TAGS, params: IdParams, body: GroupBody } }, async (req, reply) => {
    const ctx = await svc().project(req.actor, req.params.id);
    return reply.code(201).send(await svc().addGroup(req.actor, ctx, req.body.target_group_id));
  });

  app.delete(`${BASE}/groups_allowlist/:target_group_id`, { config, schema: { tags: TAGS, params: GroupParams } }, async (req, reply) => {
    const ctx = await svc().visible(req.actor, req.params.id);
    await svc().removeGroup(req.actor, ctx, req.params.target_group_id);
    return reply.code(204).send();
  });
}
