// Branches of a project's repository (GitLab lib/api/branches.rb, lib/api/entities/branch.rb): lists,
// the branch entity, and the writes (Branches::CreateService, DeleteService, DeleteMergedService),
// which the repository service makes.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../../container.ts';
import { actorKey, type Actor } from '../../../domain/access/actor.ts';
import { RESOLVE_TABLES } from '../../../domain/access/resolve.ts';
import { canPushBranch, developersCan, type RefRules } from '../../../domain/repository/branch-protection.ts';
import type { RepoContext } from '../../../domain/repository/context.ts';
import { isValidNewRefName, mergedBranchNames, mergedToDefault, regexRefs, searchRefs, sortBranches } from '../../../domain/repository/refs.ts';
import { BRANCH_PREFIX } from '../../../git/refs.ts';
import type { Ref } from '../../../git/repository.ts';
import { DomainError, Errors } from '../../../lib/errors.ts';
import { IdParams, PaginationProps } from '../schemas/common.ts';
import { checkUnmodifiedSince, commitBasic, contextHook, contextOf, escapePath, pageOfRefs, requirePush } from './context.ts';

const SORTS = ['name_asc', 'updated_asc', 'updated_desc'] as const;

const BranchParams = Type.Object({ id: Type.String(), branch: Type.String() });
const BranchListQuery = Type.Object({
  ...PaginationProps,
  search: Type.Optional(Type.String()),
  regex: Type.Optional(Type.String()),
  sort: Type.Optional(Type.Unsafe<(typeof SORTS)[number]>({ type: 'string', enum: [...SORTS] })),
  page_token: Type.Optional(Type.String()),
  pagination: Type.Optional(Type.String()),
});
const CreateBody = Type.Object({
  branch: Type.String({ minLength: 1 }),
  ref: Type.String({ minLength: 1 }),
});

/** API::Entities::Branch */
async function branchEntity(ctx: RepoContext, actor: Actor, rules: RefRules, ref: Ref, merged: boolean | null) {
  const commit = await ctx.repo.commit(ref.commit);
  const protection = rules.branch(ref.short);
  return {
    name: ref.short,
    commit: commit ? commitBasic(commit, ctx.webUrl) : null,
    merged,
    protected: protection !== null,
    developers_can_push: developersCan(protection, 'push'),
    developers_can_merge: developersCan(protection, 'merge'),
    can_push: !!actor.user && ctx.access.abilities.has('push_code') && canPushBranch(actor, ctx.access, protection),
    default: (ctx.project.default_branch ?? 'main') === ref.short,
    web_url: `${ctx.webUrl}/-/tree/${escapePath(ref.short)}`,
  };
}

const BRANCH_LIST_TABLES = [...RESOLVE_TABLES, 'application_settings', 'protected_branches', 'protected_ref_access_levels'] as const;

export function branchesRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // Writes are not `auth: 'user'`: GitLab answers anonymous callers 404 (invisible project) or 403.
  const config = { api: 'platform' as const, auth: 'optional' as const };
  const withContext = contextHook(c, true);
  const branchesPath = (id: string) => `/api/v4/projects/${encodeURIComponent(id)}/repository/branches`;

  app.get(
    '/api/v4/projects/:id/repository/branches',
    { config, preValidation: withContext, schema: { params: IdParams, querystring: BranchListQuery } },
    async (req, reply) => {
      const ctx = contextOf(req);
      const q = req.query;
      // Made of the refs, the project, the caller's access and the protected branches only.
      const viewer = `${actorKey(req.actor)}|${req.params.id}|${ctx.repo.refsVersion()}`;
      return app.cachedResponse(req, reply, { tables: BRANCH_LIST_TABLES, viewer }, async () => {
        let refs = await sortBranches(ctx, await ctx.repo.branches(), q.sort);
        refs = regexRefs(searchRefs(refs, q.search), q.regex);
        const page = pageOfRefs(c, req, reply, refs, (r) => r.short, BRANCH_PREFIX, branchesPath(req.params.id));
        const [rules, merged] = await Promise.all([c.repository.refRules(ctx, req.actor), page.length ? mergedBranchNames(ctx) : new Set<string>()]);
        const body = [];
        for (const r of page) body.push(await branchEntity(ctx, req.actor, rules, r, merged.has(r.short)));
        return body;
      });
    },
  );

  // Before GET: Fastify's automatic HEAD route would answer 200 with GET's headers.
  app.head('/api/v4/projects/:id/repository/branches/:branch', { config, schema: { params: BranchParams } }, async (req, reply) => {
    try {
      const ctx = await c.repository.refsContext(req.actor, req.params.id, true);
      return reply.code((await ctx.repo.branch(req.params.branch)) ? 204 : 404).send();
    } catch (e) {
      if (e instanceof DomainError) return reply.code(e.status).send();
      throw e;
    }
  });

  app.get('/api/v4/projects/:id/repository/branches/:branch', { config, preValidation: withContext, schema: { params: BranchParams } }, async (req) => {
    const ctx = contextOf(req);
    const name = req.params.branch;
    if (!isValidNewRefName(name)) throw Errors.raw(400, { message: 'The branch refname is invalid' });
    const ref = await ctx.repo.branch(name);
    if (!ref) throw Errors.notFound('Branch');
    return branchEntity(ctx, req.actor, await c.repository.refRules(ctx, req.actor), ref, await mergedToDefault(ctx, ref));
  });

  app.post(
    '/api/v4/projects/:id/repository/branches',
    { config, preValidation: withContext, schema: { params: IdParams, body: CreateBody } },
    async (req, reply) => {
      const ctx = contextOf(req);
      const actor = req.actor;
      requirePush(ctx, actor);
      const { branch, ref } = req.body;
      const created = await c.repository.createBranch(ctx, actor, branch, ref);
      reply.code(201);
      return branchEntity(ctx, actor, await c.repository.refRules(ctx, actor), created, await mergedToDefault(ctx, created));
    },
  );

  app.delete(
    '/api/v4/projects/:id/repository/branches/:branch',
    { config, preValidation: withContext, schema: { params: BranchParams } },
    async (req, reply) => {
      const ctx = contextOf(req);
      const actor = req.actor;
      requirePush(ctx, actor);
      const name = req.params.branch;
      if (!isValidNewRefName(name)) throw Errors.raw(400, { message: 'The branch refname is invalid' });
      const ref = await ctx.repo.branch(name);
      if (!ref) throw Errors.notFound('Branch');
      const commit = await ctx.repo.commit(ref.commit);
      if (commit) checkUnmodifiedSince(req, commit.author.time);
      await c.repository.deleteBranch(ctx, actor, ref);
      return reply.code(204).send();
    },
  );

  // Branches::DeleteMergedService, run at once rather than in a worker; the answer is still 202.
  app.delete('/api/v4/projects/:id/repository/merged_branches', { config, preValidation: withContext, schema: { params: IdParams } }, async (req, reply) => {
    const ctx = contextOf(req);
    const actor = req.actor;
    requirePush(ctx, actor);
    await c.repository.deleteMergedBranches(ctx, actor);
    reply.code(202);
    return { message: '202 Accepted' };
  });
}
