// /projects/:id/deploy_keys and /deploy_keys (GitLab lib/api/deploy_keys.rb): the project routes need
// admin_project (Maintainer+; 404 "Project Not Found" unseen, 403 seen); the instance-wide list and
// public keys are for administrators. A key not enabled on the project is "404 Not found" (find_by!)
// for GET and PUT, "404 Deploy key Not Found" for DELETE and enable, as GitLab's.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import type { NamespaceRow } from '../../db/schema.ts';
import { isInt32 } from '../../db/sql.ts';
import { parseKeyExpiry } from '../../domain/keys/key-validation.ts';
import { Errors } from '../../lib/errors.ts';
import { offsetPaginate } from '../../lib/pagination.ts';
import {
  DeployKeySchema,
  DeployKeysProjectSchema,
  DeployKeyWithProjectsSchema,
  toDeployKeyEntity,
  toDeployKeysProjectEntity,
} from './entities/deploy-key.entity.ts';
import { toProjectIdentity } from './entities/job.entity.ts';
import { IdParams, linkParams, PaginationProps, UserIdParams } from './schemas/common.ts';

const TAGS = ['deploy_keys'];
const config = { api: 'platform' as const, auth: 'user' as const };
const adminConfig = { api: 'platform' as const, auth: 'admin' as const };
/** lib/api/users.rb lets read_user tokens read too */
const usersConfig = { api: 'platform' as const, auth: 'user' as const, scopes: ['read_user'] };

const KeyParams = Type.Object({ id: Type.String(), key_id: Type.Integer() });
const CreateBody = Type.Object({
  key: Type.String(),
  title: Type.String(),
  can_push: Type.Optional(Type.Boolean()),
  expires_at: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
const PublicCreateBody = Type.Object({
  key: Type.String(),
  title: Type.String(),
  expires_at: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
const UpdateBody = Type.Object({ title: Type.Optional(Type.String()), can_push: Type.Optional(Type.Boolean()) });
const AllQuery = Type.Object({ ...PaginationProps, public: Type.Optional(Type.Boolean()) });

/** No body is no parameters. */
async function emptyBody(req: FastifyRequest): Promise<void> {
  if (req.body === undefined || req.body === null) req.body = {};
}

/** Grape's DateTime coercion of expires_at: "expires_at is invalid" before anything else. */
function expiry(v: string | null | undefined): string | null {
  const parsed = parseKeyExpiry(v);
  if (parsed === undefined) throw Errors.param('expires_at is invalid');
  return parsed;
}

/** destroy_conditionally!: If-Unmodified-Since (ms), when given and readable. */
function unmodifiedSince(req: FastifyRequest): number | undefined {
  const header = req.headers['if-unmodified-since'];
  const since = typeof header === 'string' ? Date.parse(header) : Number.NaN;
  return Number.isNaN(since) ? undefined : since;
}

export function deployKeysRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const svc = c.deployKeys;
  const base = '/api/v4/projects/:id/deploy_keys';

  // ---- administrators -------------------------------------------------------------------

  app.get(
    '/api/v4/deploy_keys',
    { config: adminConfig, schema: { tags: TAGS, querystring: AllQuery, response: { 200: Type.Array(DeployKeyWithProjectsSchema) } } },
    async (req, reply) => {
      const page = await offsetPaginate(
        c.db.kysely,
        c.config.externalUrl,
        { path: req.url.split('?')[0], params: linkParams(req.query, {}), page: req.query.page, per_page: req.query.per_page },
        svc.allQuery(req.query.public === true),
      );
      const projects = await svc.projectsOf(page.items.map((k) => k.id));
      const namespaces = new Map<number, NamespaceRow>();
      for (const refs of projects.values()) for (const r of refs) namespaces.set(r.namespace.id, r.namespace);
      const names = await c.groups.fullNames([...namespaces.values()]);
      reply.headers(page.headers);
      return page.items.map((k) => {
        const refs = projects.get(k.id) ?? [];
        const identity = (r: (typeof refs)[number]) => toProjectIdentity(r.project, r.namespace, names.get(r.namespace.id) ?? r.namespace.name);
        return {
          ...toDeployKeyEntity(k),
          projects_with_write_access: refs.filter((r) => r.can_push).map(identity),
          projects_with_readonly_access: refs.filter((r) => !r.can_push).map(identity),
        };
      });
    },
  );

  app.post(
    '/api/v4/deploy_keys',
    { config: adminConfig, preValidation: emptyBody, schema: { tags: TAGS, body: PublicCreateBody, response: { 201: DeployKeySchema } } },
    async (req, reply) => {
      const key = await svc.createPublic(req.actor, { title: req.body.title, key: req.body.key, expires_at: expiry(req.body.expires_at) });
      return reply.code(201).send(toDeployKeyEntity(key));
    },
  );

  // GitLab 15.1's list of the deploy keys of the projects the caller and that user both maintain.
  app.get(
    '/api/v4/users/:user_id/project_deploy_keys',
    {
      config: usersConfig,
      schema: { tags: TAGS, params: UserIdParams, querystring: Type.Object(PaginationProps), response: { 200: Type.Array(DeployKeySchema) } },
    },
    async (req, reply) => {
      const idOrName = req.params.user_id;
      const user = /^\d+$/.test(idOrName) ? (isInt32(Number(idOrName)) ? await c.users.byId(Number(idOrName)) : undefined) : await c.users.byUsername(idOrName);
      if (!user) throw Errors.notFound('User');
      const page = await offsetPaginate(
        c.db.kysely,
        c.config.externalUrl,
        { path: req.url.split('?')[0], params: linkParams(req.query, {}), page: req.query.page, per_page: req.query.per_page },
        await svc.commonQuery(req.actor, user.id),
      );
      reply.headers(page.headers);
      return page.items.map(toDeployKeyEntity);
    },
  );

  // ---- a project's keys -----------------------------------------------------------------

  app.get(
    base,
    { config, schema: { tags: TAGS, params: IdParams, querystring: Type.Object(PaginationProps), response: { 200: Type.Array(DeployKeysProjectSchema) } } },
    async (req, reply) => {
      const { project } = await svc.project(req.actor, req.params.id);
      const page = await offsetPaginate(
        c.db.kysely,
        c.config.externalUrl,
        { path: req.url.split('?')[0], params: linkParams(req.query, {}), page: req.query.page, per_page: req.query.per_page },
        svc.listQuery(project.id),
      );
      reply.headers(page.headers);
      return page.items.map(({ link_can_push, ...key }) => toDeployKeysProjectEntity(key, link_can_push));
    },
  );

  app.get(`${base}/:key_id`, { config, schema: { tags: TAGS, params: KeyParams, response: { 200: DeployKeysProjectSchema } } }, async (req) => {
    const { project } = await svc.project(req.actor, req.params.id);
    const { key, link } = await svc.get(project, req.params.key_id);
    return toDeployKeysProjectEntity(key, link.can_push);
  });

  app.post(
    base,
    { config, preValidation: emptyBody, schema: { tags: TAGS, params: IdParams, body: CreateBody, response: { 201: DeployKeysProjectSchema } } },
    async (req, reply) => {
      const expiresAt = expiry(req.body.expires_at);
      const { project } = await svc.project(req.actor, req.params.id);
      const { result } = await svc.create(req.actor, project, { title: req.body.title, key: req.body.key, can_push: req.body.can_push, expires_at: expiresAt });
      return reply.code(201).send(toDeployKeysProjectEntity(result.key, result.link.can_push));
    },
  );

  app.put(
    `${base}/:key_id`,
    { config, preValidation: emptyBody, schema: { tags: TAGS, params: KeyParams, body: UpdateBody, response: { 200: DeployKeysProjectSchema } } },
    async (req) => {
      const { project } = await svc.project(req.actor, req.params.id);
      const { key, link } = await svc.update(req.actor, project, req.params.key_id, { title: req.body.title, can_push: req.body.can_push });
      return toDeployKeysProjectEntity(key, link.can_push);
    },
  );

  app.post(`${base}/:key_id/enable`, { config, schema: { tags: TAGS, params: KeyParams, response: { 201: DeployKeySchema } } }, async (req, reply) => {
    const { project } = await svc.project(req.actor, req.params.id);
    const key = await svc.enable(req.actor, project, req.params.key_id);
    return reply.code(201).send(toDeployKeyEntity(key));
  });

  app.delete(`${base}/:key_id`, { config, schema: { tags: TAGS, params: KeyParams } }, async (req, reply) => {
    const { project } = await svc.project(req.actor, req.params.id);
    await svc.disable(project, req.params.key_id, unmodifiedSince(req));
    return reply.code(204).send();
  });
}
