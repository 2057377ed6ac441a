// /projects/:id/environments and /projects/:id/deployments (GitLab lib/api/environments.rb and
// lib/api/deployments.rb). Every endpoint needs a signed-in user (`before { authenticate! }`).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import type { Actor } from '../../domain/access/actor.ts';
import {
  DEPLOYMENT_ORDERS,
  DEPLOYMENT_STATUSES,
  ENVIRONMENT_STATES,
  TIERS,
  WRITABLE_STATUSES,
  type DeploymentStatus,
} from '../../domain/deployments/deployments.service.ts';
import type { DeploymentRow, EnvironmentRow, ProjectRow } from '../../db/schema.ts';
import { Errors } from '../../lib/errors.ts';
import { offsetPaginate } from '../../lib/pagination.ts';
import { DeploymentSchema, toDeployment } from './entities/deployment.entity.ts';
import { EnvironmentSchema, toEnvironment } from './entities/environment.entity.ts';
import { MergeRequestBasicSchema, type MergeRequestBasicEntity } from './entities/merge-request.entity.ts';
import { presentMergeRequests } from './merge-requests/present.ts';
import { projectViewContext, toProject } from './entities/project.entity.ts';
import { userViewContext } from './entities/user.entity.ts';
import { dateTimeParam, Enum, IdParams, linkParams, PaginationProps } from './schemas/common.ts';

const ENV_TAGS = ['environments'];
const DEP_TAGS = ['deployments'];
const PROJECT = '/api/v4/projects/:id';
const MIN_SEARCH_LENGTH = 3;

const EnvParams = Type.Object({ id: Type.String(), environment_id: Type.Integer() });
const DepParams = Type.Object({ id: Type.String(), deployment_id: Type.Integer() });

const EnvListQuery = Type.Object({
  name: Type.Optional(Type.String()),
  search: Type.Optional(Type.String()),
  states: Enum(ENVIRONMENT_STATES),
  ...PaginationProps,
});
const EnvCreateBody = Type.Object({
  name: Type.String(),
  external_url: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  slug: Type.Optional(Type.Unknown()),
  tier: Enum(TIERS),
});
const EnvUpdateBody = Type.Object({
  name: Type.Optional(Type.String()),
  external_url: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  slug: Type.Optional(Type.Unknown()),
  tier: Enum(TIERS),
});
const StopBody = Type.Object({ force: Type.Optional(Type.Boolean()) });

const DepListQuery = Type.Object({
  ...PaginationProps,
  order_by: Enum(DEPLOYMENT_ORDERS, 'id'),
  sort: Enum(['asc', 'desc'] as const, 'asc'),
  updated_after: Type.Optional(Type.String()),
  updated_before: Type.Optional(Type.String()),
  finished_after: Type.Optional(Type.String()),
  finished_before: Type.Optional(Type.String()),
  environment: Type.Optional(Type.String()),
  status: Enum(DEPLOYMENT_STATUSES),
});
const DepCreateBody = Type.Object({
  environment: Type.String(),
  sha: Type.String(),
  ref: Type.String(),
  tag: Type.Boolean(),
  status: Enum(WRITABLE_STATUSES),
});
const DepUpdateBody = Type.Object({ status: Enum(WRITABLE_STATUSES) });
const MrListQuery = Type.Object({ ...PaginationProps }, { additionalProperties: true });

/** destroy_conditionally!: If-Unmodified-Since, when given and readable. */
function unmodifiedSince(req: FastifyRequest): number | undefined {
  const header = req.headers['if-unmodified-since'];
  const since = typeof header === 'string' ? Date.parse(header) : NaN;
  return Number.isNaN(since) ? undefined : since;
}

export function deploymentsRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const config = { api: 'platform' as const, auth: 'user' as const };
  const svc = c.deployments;

  const usersCtx = async () => userViewContext(c.config.externalUrl, await c.settings.get());

  /** Deployments of a page with their environments and users: two queries. */
  async function deploymentEntities(rows: DeploymentRow[]) {
    const byId = await svc.environmentsOf(rows);
    const users = await c.users.basicByIds(rows.map((d) => d.user_id));
    const ctx = await usersCtx();
    return rows.map((d) => toDeployment(d, byId.get(d.environment_id)!, users.get(d.user_id ?? -1), ctx));
  }

  /** Environments of a page: with their project (lists), or with the last deployment (one environment). */
  async function environmentEntities(actor: Actor, project: ProjectRow, rows: EnvironmentRow[], single: boolean) {
    if (single) {
      const last = await svc.lastDeployments(rows.map((e) => e.id));
      const users = await c.users.basicByIds([...last.values()].map((d) => d.user_id));
      const ctx = await usersCtx();
      return rows.map((e) => {
        const d = last.get(e.id);
        return toEnvironment(e, { lastDeployment: d ? toDeployment(d, null, users.get(d.user_id ?? -1), ctx) : null });
      });
    }
    const [view] = await c.projectsQuery.views(actor, [project], { withSources: false });
    const pctx = projectViewContext(await usersCtx(), actor.isAdmin, (p) => c.repos.repository(p).isEmptySync());
    const entity = toProject(view, 'basic', pctx);
    return rows.map((e) => toEnvironment(e, { project: entity }));
  }

  // ---- environments --------------------------------------------------------------------------

  app.get(
    `${PROJECT}/environments`,
    { config, schema: { tags: ENV_TAGS, params: IdParams, querystring: EnvListQuery, response: { 200: Type.Array(EnvironmentSchema) } } },
    async (req, reply) => {
      const q = req.query;
      if (q.name !== undefined && q.search !== undefined) throw Errors.param('name, search cannot be used together');
      const { project } = await svc.project(req.actor, req.params.id, 'read');
      if (q.search !== undefined && q.search.length > 0 && q.search.length < MIN_SEARCH_LENGTH) {
        throw Errors.badRequest(`Search query is less than ${MIN_SEARCH_LENGTH} characters`);
      }
      const page = await offsetPaginate(
        c.db.kysely,
        c.config.externalUrl,
        { path: req.url.split('?')[0], params: linkParams(q as Record<string, unknown>, { id: req.params.id }), page: q.page, per_page: q.per_page },
        await svc.listEnvironments(project, q),
      );
      reply.headers(page.headers);
      return environmentEntities(req.actor, project, page.items, false);
    },
  );

  app.post(
    `${PROJECT}/environments`,
    { config, schema: { tags: ENV_TAGS, params: IdParams, body: EnvCreateBody, response: { 201: EnvironmentSchema } } },
    async (req, reply) => {
      const b = req.body;
      if (b.slug !== undefined) throw Errors.param('slug is automatically generated and cannot be changed');
      const { project } = await svc.project(req.actor, req.params.id, 'create');
      const env = await svc.createEnvironment(project, { name: b.name, external_url: b.external_url, tier: b.tier });
      const [entity] = await environmentEntities(req.actor, project, [env], false);
      return reply.code(201).send(entity);
    },
  );

  app.get(
    `${PROJECT}/environments/:environment_id`,
    { config, schema: { tags: ENV_TAGS, params: EnvParams, response: { 200: EnvironmentSchema } } },
    async (req) => {
      const { project } = await svc.project(req.actor, req.params.id, 'read');
      const env = await svc.environment(project, req.params.environment_id);
      return (await environmentEntities(req.actor, project, [env], true))[0];
    },
  );

  app.put(
    `${PROJECT}/environments/:environment_id`,
    { config, schema: { tags: ENV_TAGS, params: EnvParams, body: EnvUpdateBody, response: { 200: EnvironmentSchema } } },
    async (req) => {
      const b = req.body ?? {};
      if (b.slug !== undefined) throw Errors.param('slug is automatically generated and cannot be changed');
      const { project } = await svc.project(req.actor, req.params.id, 'update');
      const env = await svc.updateEnvironment(project, req.params.environment_id, { name: b.name, external_url: b.external_url, tier: b.tier });
      return (await environmentEntities(req.actor, project, [env], false))[0];
    },
  );

  app.delete(`${PROJECT}/environments/:environment_id`, { config, schema: { tags: ENV_TAGS, params: EnvParams } }, async (req, reply) => {
    const { project } = await svc.project(req.actor, req.params.id, 'read');
    await svc.environment(project, req.params.environment_id);
    await svc.project(req.actor, req.params.id, 'update');
    await svc.deleteEnvironment(project, req.params.environment_id, unmodifiedSince(req));
    return reply.code(204).send();
  });

  app.post(
    `${PROJECT}/environments/:environment_id/stop`,
    { config, schema: { tags: ENV_TAGS, params: EnvParams, body: Type.Optional(StopBody), response: { 200: EnvironmentSchema } } },
    async (req, reply) => {
      const { project } = await svc.project(req.actor, req.params.id, 'read');
      await svc.environment(project, req.params.environment_id);
      // stop_environment: Developers
      await svc.project(req.actor, req.params.id, 'update');
      const env = await svc.stopEnvironment(project, req.params.environment_id);
      return reply.code(200).send((await environmentEntities(req.actor, project, [env], false))[0]);
    },
  );

  // ---- deployments ---------------------------------------------------------------------------

  app.get(
    `${PROJECT}/deployments`,
    { config, schema: { tags: DEP_TAGS, params: IdParams, querystring: DepListQuery, response: { 200: Type.Array(DeploymentSchema) } } },
    async (req, reply) => {
      const q = req.query;
      const { project } = await svc.project(req.actor, req.params.id, 'read');
      const list = svc.listDeployments(project, {
        order_by: q.order_by ?? 'id',
        sort: q.sort ?? 'asc',
        updated_after: dateTimeParam(q.updated_after, 'updated_after'),
        updated_before: dateTimeParam(q.updated_before, 'updated_before'),
        finished_after: dateTimeParam(q.finished_after, 'finished_after'),
        finished_before: dateTimeParam(q.finished_before, 'finished_before'),
        environment: q.environment,
        status: q.status,
      });
      const page = await offsetPaginate(
        c.db.kysely,
        c.config.externalUrl,
        { path: req.url.split('?')[0], params: linkParams(q as Record<string, unknown>, { id: req.params.id }), page: q.page, per_page: q.per_page },
        list,
      );
      reply.headers(page.headers);
      return deploymentEntities(page.items);
    },
  );

  app.get(
    `${PROJECT}/deployments/:deployment_id`,
    { config, schema: { tags: DEP_TAGS, params: DepParams, response: { 200: DeploymentSchema } } },
    async (req) => {
      const { project } = await svc.project(req.actor, req.params.id, 'read');
      return (await deploymentEntities([await svc.deployment(project, req.params.deployment_id)]))[0];
    },
  );

  app.post(
    `${PROJECT}/deployments`,
    { config, schema: { tags: DEP_TAGS, params: IdParams, body: DepCreateBody, response: { 201: DeploymentSchema } } },
    async (req, reply) => {
      const b = req.body;
      if (b.status === undefined) throw Errors.param('status is missing');
      const { project } = await svc.project(req.actor, req.params.id, 'create');
      const d = await svc.createDeployment(req.actor, project, { ...b, status: b.status as DeploymentStatus });
      return reply.code(201).send((await deploymentEntities([d]))[0]);
    },
  );

  app.put(
    `${PROJECT}/deployments/:deployment_id`,
    { config, schema: { tags: DEP_TAGS, params: DepParams, body: DepUpdateBody, response: { 200: DeploymentSchema } } },
    async (req) => {
      const status = req.body?.status;
      if (status === undefined) throw Errors.param('status is missing');
      const { project } = await svc.project(req.actor, req.params.id, 'read');
      await svc.deployment(project, req.params.deployment_id);
      await svc.project(req.actor, req.params.id, 'update');
      return (await deploymentEntities([await svc.updateDeployment(project, req.params.deployment_id, status)]))[0];
    },
  );

  app.delete(`${PROJECT}/deployments/:deployment_id`, { config, schema: { tags: DEP_TAGS, params: DepParams } }, async (req, reply) => {
    const { project } = await svc.project(req.actor, req.params.id, 'read');
    await svc.deployment(project, req.params.deployment_id);
    await svc.project(req.actor, req.params.id, 'destroy_deployment');
    await svc.deleteDeployment(project, req.params.deployment_id, unmodifiedSince(req));
    return reply.code(204).send();
  });

  app.get(
    `${PROJECT}/deployments/:deployment_id/merge_requests`,
    { config, schema: { tags: DEP_TAGS, params: DepParams, querystring: MrListQuery, response: { 200: Type.Array(MergeRequestBasicSchema) } } },
    async (req, reply) => {
      const q = req.query as { page?: number; per_page?: number };
      const { project, access } = await svc.project(req.actor, req.params.id, 'read');
      const d = await svc.deployment(project, req.params.deployment_id);
      const list = svc.mergeRequests(req.actor, project, access, d);
      const page = await offsetPaginate(
        c.db.kysely,
        c.config.externalUrl,
        { path: req.url.split('?')[0], params: linkParams(req.query as Record<string, unknown>, { id: req.params.id }), page: q.page, per_page: q.per_page },
        list,
      );
      reply.headers(page.headers);
      return (await presentMergeRequests(c, page.items)) as MergeRequestBasicEntity[];
    },
  );
}
