// Tags of a project's repository (GitLab lib/api/tags.rb, app/services/tags/*, app/finders/tags_finder.rb,
// lib/api/entities/tag.rb). Gitaly's tag messages lose their trailing newlines; annotated tags get
// the caller as tagger, lightweight ones are a ref only.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../../container.ts';
import type { Actor } from '../../../domain/access/actor.ts';
import { GitError } from '../../../git/command.ts';
import { isValidRevision, TAG_PREFIX, ZERO_SHA } from '../../../git/refs.ts';
import type { Ref } from '../../../git/repository.ts';
import { Errors } from '../../../lib/errors.ts';
import { PaginationProps } from '../schemas/common.ts';
import { type RepoContext } from '../../../domain/repository/context.ts';
import { commitBasic, recordRefChanges } from './context.ts';
import { apiError, checkUnmodifiedSince, contextHook, contextOf, isValidNewRefName, pageOfRefs, requirePush, searchRefs } from './branches.routes.ts';

const ORDERS = ['name', 'updated', 'version'] as const;
const DIRECTIONS = ['asc', 'desc'] as const;

const IdParams = Type.Object({ id: Type.String() });
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

/**
 * Gitaly's FindAllTags order: `git for-each-ref --sort=[-](refname|creatordate|version:refname)`
 * (refname breaks ties, ascending either way).
 */
async function sortTags(ctx: RepoContext, tags: Ref[], orderBy: string, sort: string): Promise<Ref[]> {
  const key = orderBy === 'name' ? 'refname' : orderBy === 'version' ? 'version:refname' : 'creatordate';
  const { stdout } = await ctx.repo.run(['for-each-ref', `--sort=${sort === 'asc' ? '' : '-'}${key}`, '--format=%(refname)', TAG_PREFIX]);
  const byName = new Map(tags.map((t) => [t.name, t]));
  const out: Ref[] = [];
  for (const name of stdout.toString('utf8').split('\n')) {
    const t = byName.get(name);
    if (t) out.push(t);
  }
  return out;
}

function actorEnv(actor: Actor): Record<string, string> {
  const u = actor.user!;
  return {
    GIT_COMMITTER_NAME: u.name,
    GIT_COMMITTER_EMAIL: u.email,
    GIT_COMMITTER_DATE: `@${Math.floor(Date.now() / 1000)} +0000`,
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

  app.get(
    '/api/v4/projects/:id/repository/tags/:tag_name',
    { config, preValidation: withContext, schema: { params: TagParams } },
    async (req) => {
      const ctx = contextOf(req);
      const tag = await ctx.repo.tag(req.params.tag_name);
      if (!tag) throw Errors.notFound('Tag');
      return tagEntity(ctx, tag);
    },
  );

  app.post(
    '/api/v4/projects/:id/repository/tags',
    { config, preValidation: withContext, schema: { params: IdParams, body: CreateBody } },
    async (req, reply) => {
      const ctx = contextOf(req);
      const actor = req.actor;
      requirePush(ctx, actor);
      const { tag_name: name, ref } = req.body;
      // Tags::CreateService
      if (ref.trim() === '') throw apiError(400, 'Target is empty');
      if (!isValidNewRefName(name)) throw apiError(400, 'Tag name invalid');
      const message = req.body.message?.trim() ?? '';
      const target = isValidRevision(ref) ? await ctx.repo.info(ref) : null;
      if (!target) throw apiError(400, `Target ${ref} is invalid`);
      const exists = apiError(400, `Tag ${name} already exists`);
      if (await ctx.repo.tag(name)) throw exists;
      const fullName = TAG_PREFIX + name;
      try {
        if (message) {
          // an annotated tag by the caller; git refuses to replace an existing tag
          await ctx.repo.run(['tag', '-a', '--cleanup=verbatim', '-F', '-', name, target.sha], { input: message, env: actorEnv(actor) });
          ctx.repo.touchRefs();
        } else {
          await ctx.repo.updateRef(fullName, target.sha, ZERO_SHA);
        }
      } catch (e) {
        if (!(e instanceof GitError)) throw e;
        ctx.repo.touchRefs();
        if (await ctx.repo.tag(name)) throw exists;
        throw apiError(400, `Failed to create a tag: ${name}`);
      }
      const created = await ctx.repo.tag(name);
      await recordRefChanges(c, ctx, actor, [{ before: ZERO_SHA, after: created!.sha, ref: fullName }]);
      reply.code(201);
      return tagEntity(ctx, created!);
    },
  );

  app.delete(
    '/api/v4/projects/:id/repository/tags/:tag_name',
    { config, preValidation: withContext, schema: { params: TagParams } },
    async (req, reply) => {
      const ctx = contextOf(req);
      const actor = req.actor;
      const tag = await ctx.repo.tag(req.params.tag_name);
      if (!tag) throw Errors.notFound('Tag');
      requirePush(ctx, actor);
      const commit = await ctx.repo.commit(tag.commit);
      if (commit) checkUnmodifiedSince(req, commit.author.time);
      try {
        await ctx.repo.deleteRef(tag.name, tag.sha);
      } catch (e) {
        if (!(e instanceof GitError)) throw e;
        throw apiError(400, 'Failed to remove tag');
      }
      await recordRefChanges(c, ctx, actor, [{ before: tag.sha, after: ZERO_SHA, ref: tag.name }]);
      return reply.code(204).send();
    },
  );
}
