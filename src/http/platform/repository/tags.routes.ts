// Tags of a project's repository (GitLab lib/api/tags.rb, app/finders/tags_finder.rb, lib/api/entities/tag.rb).
// Gitaly's tag messages lose their trailing newlines. Creating and deleting (Tags::CreateService,
// DestroyService) is the repository service's.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../../container.ts';
import type { RepoContext } from '../../../domain/repository/context.ts';
import { searchRefs, sortTags } from '../../../domain/repository/refs.ts';
import { TAG_PREFIX } from '../../../git/refs.ts';
import type { Ref } from '../../../git/repository.ts';
import { Errors } from '../../../lib/errors.ts';
import { IdParams, PaginationProps } from '../schemas/common.ts';
import { checkUnmodifiedSince, commitBasic, contextHook, contextOf, pageOfRefs, requirePush } from './context.ts';

const ORDERS = ['name', 'updated', 'version'] as const;
const DIRECTIONS = ['asc', 'desc'] as const;

const TagParams = Type.Object({ id: Type.String(), tag_name: Type.String() });
const TagListQuery = Type.Object({
  ...PaginationProps,
  sort: Type.Optional(Type.Unsafe<(typeof DIRECTIONS)[number]>({ type: 'string', enum: [...DIRECTIONS], default: 'desc' })),
  order_by: Type.Optional(Type.Unsafe<(typeof ORDERS)[number]>({ type: 'string', enum: [...ORDERS], default: 'updated' })),
  search: Type.Optional(Type.String()),
  page_token: Type.Optional(Type.String()),
  pagination: Type.Optional(Type.String()),
});
const CreateBody = Type.Object({
  tag_name: Type.String(),
  ref: Type.String(),
  message: Type.Optional(Type.String()),
});

/** API::Entities::Tag */
async function tagEntity(ctx: RepoContext, ref: Ref) {
  const commit = await ctx.repo.commit(ref.commit);
  return {
    name: ref.short,
    message: ref.tag ? ref.tag.message.replace(/\n+$/, '') : '',
    target: ref.sha,
    commit: commit ? commitBasic(commit, ctx.webUrl) : null,
    release: null,
    protected: false,
    // Gitlab::Git::Tag#date: the tagger's time in UTC; lightweight tags have none
    created_at: ref.tag?.tagger ? new Date(ref.tag.tagger.time * 1000).toISOString() : null,
  };
}

export function tagsRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // Writes are not `auth: 'user'`: GitLab answers anonymous callers 404 (invisible project) or 403.
  const config = { api: 'platform' as const, auth: 'optional' as const };
  const withContext = contextHook(c, false);

  app.get(
    '/api/v4/projects/:id/repository/tags',
    { config, preValidation: withContext, schema: { params: IdParams, querystring: TagListQuery } },
    async (req, reply) => {
      const ctx = contextOf(req);
      const q = req.query;
      const tags = searchRefs(await sortTags(ctx, await ctx.repo.tags(), q.order_by ?? 'updated', q.sort ?? 'desc'), q.search);
      const path = `/api/v4/projects/${encodeURIComponent(req.params.id)}/repository/tags`;
      const page = pageOfRefs(c, req, reply, tags, (t) => t.short, TAG_PREFIX, path);
      const body = [];
      for (const t of page) body.push(await tagEntity(ctx, t));
      return body;
    },
  );

  app.get('/api/v4/projects/:id/repository/tags/:tag_name', { config, preValidation: withContext, schema: { params: TagParams } }, async (req) => {
    const ctx = contextOf(req);
    const tag = await ctx.repo.tag(req.params.tag_name);
    if (!tag) throw Errors.notFound('Tag');
    return tagEntity(ctx, tag);
  });

  app.post(
    '/api/v4/projects/:id/repository/tags',
    { config, preValidation: withContext, schema: { params: IdParams, body: CreateBody } },
    async (req, reply) => {
      const ctx = contextOf(req);
      const actor = req.actor;
      requirePush(ctx, actor);
      const { tag_name: name, ref, message } = req.body;
      const created = await c.repository.createTag(ctx, actor, { name, ref, message });
      reply.code(201);
      return tagEntity(ctx, created);
    },
  );

  app.delete('/api/v4/projects/:id/repository/tags/:tag_name', { config, preValidation: withContext, schema: { params: TagParams } }, async (req, reply) => {
    const ctx = contextOf(req);
    const actor = req.actor;
    const tag = await ctx.repo.tag(req.params.tag_name);
    if (!tag) throw Errors.notFound('Tag');
    requirePush(ctx, actor);
    const commit = await ctx.repo.commit(tag.commit);
    if (commit) checkUnmodifiedSince(req, commit.author.time);
    await c.repository.deleteTag(ctx, actor, tag);
    return reply.code(204).send();
  });
}
