// /projects/:id/protected_branches and /projects/:id/protected_tags (GitLab lib/api/protected_branches.rb,
// protected_tags.rb): Maintainers list, protect, update (branches) and unprotect; `:name` is a branch or
// tag name or a wildcard (`*-stable`), URL-encoded.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import { ALLOWED_ACCESS_LEVELS } from '../../domain/repository/branch-protection.ts';
import { offsetPaginate } from '../../lib/pagination.ts';
import { ProtectedBranchSchema, ProtectedTagSchema, toProtectedBranch, toProtectedTag } from './entities/protected-ref.entity.ts';
import { IdParams, linkParams, PaginationProps } from './schemas/common.ts';

const config = { api: 'platform' as const, auth: 'optional' as const };
const BRANCH_TAGS = ['protected_branches'];
const TAG_TAGS = ['protected_tags'];

const NameParams = Type.Object({ id: Type.String(), name: Type.String() });
const Level = Type.Unsafe<number>({ type: 'integer', enum: [...ALLOWED_ACCESS_LEVELS] });
const Access = Type.Array(
  Type.Object({
    id: Type.Optional(Type.Integer()),
    access_level: Type.Optional(Level),
    user_id: Type.Optional(Type.Integer()),
    group_id: Type.Optional(Type.Integer()),
    _destroy: Type.Optional(Type.Boolean()),
  }),
);

const BranchListQuery = Type.Object({ search: Type.Optional(Type.String()), ...PaginationProps });
const TagListQuery = Type.Object(PaginationProps);
const CreateBranchBody = Type.Object({
  name: Type.String(),
  push_access_level: Type.Optional(Level),
  merge_access_level: Type.Optional(Level),
  unprotect_access_level: Type.Optional(Level),
  allow_force_push: Type.Optional(Type.Boolean()),
  code_owner_approval_required: Type.Optional(Type.Boolean()),
  allowed_to_push: Type.Optional(Access),
  allowed_to_merge: Type.Optional(Access),
  allowed_to_unprotect: Type.Optional(Access),
});
const UpdateBranchBody = Type.Object({
  allow_force_push: Type.Optional(Type.Boolean()),
  code_owner_approval_required: Type.Optional(Type.Boolean()),
  allowed_to_push: Type.Optional(Access),
  allowed_to_merge: Type.Optional(Access),
  allowed_to_unprotect: Type.Optional(Access),
});
const CreateTagBody = Type.Object({
  name: Type.String(),
  create_access_level: Type.Optional(Level),
  allowed_to_create: Type.Optional(Access),
});

export function protectedRefsRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const refs = c.protectedRefs;
  const pageRequest = (req: { url: string; params: { id: string } }, q: Record<string, unknown>) => ({
    path: req.url.split('?')[0],
    params: linkParams(q, { id: req.params.id }),
    page: q.page as number | undefined,
    per_page: q.per_page as number | undefined,
  });

  // ---- protected branches ----

  app.get(
    '/api/v4/projects/:id/protected_branches',
    { config, schema: { tags: BRANCH_TAGS, params: IdParams, querystring: BranchListQuery, response: { 200: Type.Array(ProtectedBranchSchema) } } },
    async (req, reply) => {
      const p = await refs.project(req.actor, req.params.id);
      const page = await offsetPaginate(c.db.kysely, c.config.externalUrl, pageRequest(req, req.query), refs.branchesQuery(p, req.query.search));
      reply.headers(page.headers);
      return (await refs.branchViews(page.items)).map(toProtectedBranch);
    },
  );

  app.get(
    '/api/v4/projects/:id/protected_branches/:name',
    { config, schema: { tags: BRANCH_TAGS, params: NameParams, response: { 200: ProtectedBranchSchema } } },
    async (req) => {
      const p = await refs.project(req.actor, req.params.id);
      return toProtectedBranch(await refs.branch(p, req.params.name));
    },
  );

  app.post(
    '/api/v4/projects/:id/protected_branches',
    { config, schema: { tags: BRANCH_TAGS, params: IdParams, body: CreateBranchBody, response: { 201: ProtectedBranchSchema } } },
    async (req, reply) => {
      const p = await refs.project(req.actor, req.params.id);
      const created = await refs.createBranch(p, req.body);
      reply.code(201);
      return toProtectedBranch(created);
    },
  );

  app.patch(
    '/api/v4/projects/:id/protected_branches/:name',
    { config, schema: { tags: BRANCH_TAGS, params: NameParams, body: Type.Optional(UpdateBranchBody), response: { 200: ProtectedBranchSchema } } },
    async (req) => {
      const p = await refs.project(req.actor, req.params.id);
      return toProtectedBranch(await refs.updateBranch(req.actor, p, req.params.name, req.body ?? {}));
    },
  );

  app.delete('/api/v4/projects/:id/protected_branches/:name', { config, schema: { tags: BRANCH_TAGS, params: NameParams } }, async (req, reply) => {
    const p = await refs.project(req.actor, req.params.id);
    await refs.deleteBranch(req.actor, p, req.params.name);
    return reply.code(204).send();
  });

  // ---- protected tags ----

  app.get(
    '/api/v4/projects/:id/protected_tags',
    { config, schema: { tags: TAG_TAGS, params: IdParams, querystring: TagListQuery, response: { 200: Type.Array(ProtectedTagSchema) } } },
    async (req, reply) => {
      const p = await refs.project(req.actor, req.params.id);
      const page = await offsetPaginate(c.db.kysely, c.config.externalUrl, pageRequest(req, req.query), refs.tagsQuery(p));
      reply.headers(page.headers);
      return (await refs.tagViews(page.items)).map(toProtectedTag);
    },
  );

  app.get(
    '/api/v4/projects/:id/protected_tags/:name',
    { config, schema: { tags: TAG_TAGS, params: NameParams, response: { 200: ProtectedTagSchema } } },
    async (req) => {
      const p = await refs.project(req.actor, req.params.id);
      return toProtectedTag(await refs.tag(p, req.params.name));
    },
  );

  app.post(
    '/api/v4/projects/:id/protected_tags',
    { config, schema: { tags: TAG_TAGS, params: IdParams, body: CreateTagBody, response: { 201: ProtectedTagSchema } } },
    async (req, reply) => {
      const p = await refs.project(req.actor, req.params.id);
      const created = await refs.createTag(p, req.body);
      reply.code(201);
      return toProtectedTag(created);
    },
  );

  app.delete('/api/v4/projects/:id/protected_tags/:name', { config, schema: { tags: TAG_TAGS, params: NameParams } }, async (req, reply) => {
    const p = await refs.project(req.actor, req.params.id);
    await refs.deleteTag(p, req.params.name);
    return reply.code(204).send();
  });
}
