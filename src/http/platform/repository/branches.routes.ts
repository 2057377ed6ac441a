// Branches of a project's repository (GitLab lib/api/branches.rb, app/services/branches/*,
// app/finders/branches_finder.rb, lib/api/entities/branch.rb). The helpers shared with the tags API
// (search, regex, keyset pages, If-Unmodified-Since, the route context) are exported from here.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../../container.ts';
import { actorKey, type Actor } from '../../../domain/access/actor.ts';
import { RESOLVE_TABLES } from '../../../domain/access/resolve.ts';
import type { BranchProtectionDefaults } from '../../../domain/groups/group-settings.ts';
import { branchProtection, canMergeBranch, canPushBranch, PUSH_MESSAGES, type BranchProtection } from '../../../domain/repository/branch-protection.ts';
import { GitError } from '../../../git/command.ts';
import { commitFiles } from '../../../git/commit-builder.ts';
import { BRANCH_PREFIX, isValidRefName, ZERO_SHA } from '../../../git/refs.ts';
import type { Ref } from '../../../git/repository.ts';
import { DomainError, Errors } from '../../../lib/errors.ts';
import { matchAll, PatternTimeout, untrustedRegexp } from '../../../lib/untrusted-regexp.ts';
import { DEFAULT_PER_PAGE, pageParams, paginateArray, toQuery } from '../../../lib/pagination.ts';
import { linkParams, PaginationProps } from '../schemas/common.ts';
import { refsContext, type RepoContext } from '../../../domain/repository/context.ts';
import { commitBasic, recordRefChanges } from './context.ts';

// ---- shared with tags.routes.ts ---------------------------------------------------------------

/** render_api_error!(message, status): `{"message":"<message>"}` verbatim. */
export function apiError(status: number, message: string): DomainError {
  return Errors.raw(status, { message });
}

/**
 * Gitlab::GitRefValidator.validate: a name `git check-ref-format` accepts under refs/heads/, not
 * HEAD, not starting with `-` or with an expanded prefix.
 */
export function isValidNewRefName(name: string): boolean {
  return isValidRefName(name) && !name.startsWith('refs/heads/') && !name.startsWith('refs/remotes/');
}

/** authorize_push_project / authorize_admin_tag: 403 without push_code (archived projects have none). */
export function requirePush(ctx: RepoContext, actor: Actor): void {
  if (!actor.user || !ctx.access.abilities.has('push_code')) throw Errors.forbidden();
}

/** The context a route's preValidation hook resolved (before parameter validation, as Grape's `before`). */
const contexts = new WeakMap<FastifyRequest, RepoContext>();

export function contextHook(c: Container, featureNotFound: boolean) {
  return async (req: FastifyRequest): Promise<void> => {
    const id = String((req.params as { id?: string }).id ?? '');
    contexts.set(req, await refsContext(c, req.actor, id, featureNotFound));
  };
}

export function contextOf(req: FastifyRequest): RepoContext {
  const ctx = contexts.get(req);
  if (!ctx) throw new Error('repository context was not resolved');
  return ctx;
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * GitRefsFinder#by_search: case-insensitive substring match; `^` anchors the start, `$` the end and
 * `*` is a wildcard (then the order is kept), otherwise an exact match (any case) comes first.
 */
export function searchRefs(refs: Ref[], search: string | undefined): Ref[] {
  if (!search) return refs;
  const regexSearch = /[\^$*]/.test(search);
  let pattern = escapeRegex(search.toLowerCase());
  if (regexSearch) pattern = pattern.replace('\\^', '^').replace(/\\\*/g, '.*?').replace('\\$', '$');
  let hits: boolean[];
  try {
    hits = matchAll(new RegExp(pattern), refs.map((r) => r.short.toLowerCase()));
  } catch (e) {
    if (e instanceof PatternTimeout) throw apiError(400, 'Search is too complex');
    throw e;
  }
  const matches = refs.filter((_, i) => hits[i]);
  if (regexSearch) return matches;
  const exact = matches.findIndex((r) => r.short.toLowerCase() === search.toLowerCase());
  if (exact > 0) matches.unshift(...matches.splice(exact, 1));
  return matches;
}

/**
 * BranchesFinder#by_regex: Gitlab::UntrustedRegexp (RE2), unanchored, case-sensitive. RE2 has no
 * look-around and no back-references; a leading `(?i)` is its case-insensitive flag.
 */
export function regexRefs(refs: Ref[], regex: string | undefined): Ref[] {
  if (!regex) return refs;
  const re = untrustedRegexp(regex);
  if (!re) throw apiError(400, 'Regex is invalid');
  try {
    const hits = matchAll(re, refs.map((r) => r.short));
    return refs.filter((_, i) => hits[i]);
  } catch (e) {
    if (e instanceof PatternTimeout) throw apiError(400, 'Regex is invalid');
    throw e;
  }
}

export interface ListQuery {
  page?: number;
  per_page?: number;
  page_token?: string;
  pagination?: string;
}

/**
 * Gitlab::Pagination::GitalyKeysetPager: `pagination=keyset` pages after the ref named by
 * page_token (Link rel="next" only); otherwise offset pagination with GitLab's headers.
 */
export function pageOfRefs<T>(
  c: Container,
  req: FastifyRequest,
  reply: FastifyReply,
  all: T[],
  nameOf: (t: T) => string,
  refPrefix: string,
  path: string,
): T[] {
  const q = req.query as ListQuery & Record<string, unknown>;
  const params = linkParams(q, { id: (req.params as { id: string }).id });
  if (q.pagination === 'keyset') {
    const { perPage } = pageParams({ path, params, page: q.page, per_page: q.per_page });
    let start = 0;
    if (q.page_token !== undefined) {
      const i = all.findIndex((x) => nameOf(x) === q.page_token);
      if (i < 0) throw Errors.unprocessable(`Invalid page token: ${refPrefix}${q.page_token}`);
      start = i + 1;
    }
    const items = all.slice(start, start + perPage);
    if (items.length === perPage && start + perPage < all.length) {
      const next = { ...params, page: q.page ?? 1, per_page: q.per_page ?? DEFAULT_PER_PAGE, page_token: nameOf(items[items.length - 1]) };
      reply.header('link', `<${c.config.externalUrl}${path}?${toQuery(next)}>; rel="next"`);
    }
    return items;
  }
  const page = paginateArray(c.config.externalUrl, { path, params, page: q.page, per_page: q.per_page }, all);
  reply.headers(page.headers);
  return page.items;
}

/** check_unmodified_since!: 412 when the resource changed after If-Unmodified-Since. */
export function checkUnmodifiedSince(req: FastifyRequest, lastModifiedSeconds: number): void {
  const header = req.headers['if-unmodified-since'];
  if (typeof header !== 'string' || !header) return;
  const since = Date.parse(header);
  if (Number.isNaN(since)) return;
  if (lastModifiedSeconds * 1000 > since) throw Errors.preconditionFailed();
}

/** Rails' path escaping of a glob segment (`/-/tree/*id`): slashes and pchar stay. */
export function escapePath(name: string): string {
  return name.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@/]/gu, (ch) => encodeURIComponent(ch));
}

// ---- branches ---------------------------------------------------------------------------------

const SORTS = ['name_asc', 'updated_asc', 'updated_desc'] as const;

const IdParams = Type.Object({ id: Type.String() });
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

type Defaults = BranchProtectionDefaults;

async function protectionDefaults(c: Container): Promise<Defaults> {
  return ((await c.settings.get()).default_branch_protection_defaults ?? {}) as Defaults;
}

function protectionOf(ctx: RepoContext, defaults: Defaults, branch: string): BranchProtection | null {
  return branchProtection(ctx.project, ctx.namespace, defaults, branch);
}

/** API::Entities::Branch */
async function branchEntity(ctx: RepoContext, actor: Actor, defaults: Defaults, ref: Ref, merged: boolean | null) {
  const commit = await ctx.repo.commit(ref.commit);
  const protection = protectionOf(ctx, defaults, ref.short);
  return {
    name: ref.short,
    commit: commit ? commitBasic(commit, ctx.webUrl) : null,
    merged,
    protected: protection !== null,
    developers_can_push: protection !== null && protection.pushLevels.includes(30),
    developers_can_merge: protection !== null && protection.mergeLevels.includes(30),
    can_push: !!actor.user && ctx.access.abilities.has('push_code') && canPushBranch(actor, ctx.access, protection),
    default: (ctx.project.default_branch ?? 'main') === ref.short,
    web_url: `${ctx.webUrl}/-/tree/${escapePath(ref.short)}`,
  };
}

function defaultBranchName(ctx: RepoContext): string {
  return ctx.project.default_branch ?? 'main';
}

/**
 * Repository#merged_branch_names: branches whose tip the default branch contains, except those at
 * the very same commit (the default branch itself included).
 */
async function mergedBranchNames(ctx: RepoContext): Promise<Set<string>> {
  const head = await ctx.repo.branch(defaultBranchName(ctx));
  if (!head) return new Set();
  return ctx.repo.whileRefs(`merged:${head.commit}`, () => branchesMergedInto(ctx, head.commit));
}

async function branchesMergedInto(ctx: RepoContext, commit: string): Promise<Set<string>> {
  const { stdout } = await ctx.repo.run(['for-each-ref', `--merged=${commit}`, '--format=%(objectname) %(refname)', BRANCH_PREFIX]);
  const out = new Set<string>();
  for (const line of stdout.toString('utf8').split('\n')) {
    if (!line) continue;
    const sp = line.indexOf(' ');
    if (line.slice(0, sp) === commit) continue;
    out.add(line.slice(sp + 1 + BRANCH_PREFIX.length));
  }
  return out;
}

/** Repository#merged_to_root_ref? for one branch (null when the default branch has no commit). */
async function mergedToDefault(ctx: RepoContext, ref: Ref): Promise<boolean | null> {
  const head = await ctx.repo.branch(defaultBranchName(ctx));
  if (!head) return null;
  if (ref.commit === head.commit) return false;
  return ctx.repo.isAncestor(ref.commit, head.commit);
}

/** Gitaly's FindLocalBranches order: refname, or the tip's committer date with refname breaking ties. */
async function sortBranches(ctx: RepoContext, refs: Ref[], sort: string | undefined): Promise<Ref[]> {
  if (sort !== 'updated_asc' && sort !== 'updated_desc') return refs;
  const times = new Map<string, number>();
  for (const r of refs) times.set(r.name, (await ctx.repo.commit(r.commit))?.committer.time ?? 0);
  const dir = sort === 'updated_asc' ? 1 : -1;
  // refs come sorted by name and the sort is stable: equal dates stay in name order
  return [...refs].sort((a, b) => dir * (times.get(a.name)! - times.get(b.name)!));
}

async function deleteBranchRef(c: Container, ctx: RepoContext, actor: Actor, ref: Ref): Promise<boolean> {
  try {
    await ctx.repo.deleteRef(ref.name, ref.sha);
  } catch (e) {
    if (e instanceof GitError) return false;
    throw e;
  }
  await recordRefChanges(c, ctx, actor, [{ before: ref.sha, after: ZERO_SHA, ref: ref.name }]);
  return true;
}

/** Branches::CreateService#create_default_branch: an empty README.md on the default branch of an empty repository. */
async function createDefaultBranch(c: Container, ctx: RepoContext, actor: Actor): Promise<void> {
  const user = actor.user!;
  const branch = defaultBranchName(ctx);
  let sha: string;
  try {
    sha = await commitFiles(ctx.repo, {
      branch,
      parent: null,
      expectedOld: ZERO_SHA,
      actions: [{ action: 'create', file_path: 'README.md', content: Buffer.alloc(0) }],
      message: 'Add README.md',
      author: { name: user.name, email: user.email },
    });
  } catch (e) {
    if (e instanceof GitError) return; // someone else created it meanwhile
    throw e;
  }
  await recordRefChanges(c, ctx, actor, [{ before: ZERO_SHA, after: sha, ref: BRANCH_PREFIX + branch }]);
}

/** A branch that is a directory of another or the other way round ("a" and "a/b"). */
function conflictsWithHierarchy(existing: Ref[], name: string): boolean {
  return existing.some((r) => r.short.startsWith(name + '/') || name.startsWith(r.short + '/'));
}

const BRANCH_LIST_TABLES = [...RESOLVE_TABLES, 'application_settings'] as const;

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
      // Made of the refs, the project, the caller's access and the protection defaults only.
      const viewer = `${actorKey(req.actor)}|${req.params.id}|${ctx.repo.refsVersion()}`;
      return app.cachedResponse(req, reply, { tables: BRANCH_LIST_TABLES, viewer }, async () => {
        let refs = await sortBranches(ctx, await ctx.repo.branches(), q.sort);
        refs = regexRefs(searchRefs(refs, q.search), q.regex);
        const page = pageOfRefs(c, req, reply, refs, (r) => r.short, BRANCH_PREFIX, branchesPath(req.params.id));
        const [defaults, merged] = await Promise.all([protectionDefaults(c), page.length ? mergedBranchNames(ctx) : new Set<string>()]);
        const body = [];
        for (const r of page) body.push(await branchEntity(ctx, req.actor, defaults, r, merged.has(r.short)));
        return body;
      });
    },
  );

  // Before GET: Fastify's automatic HEAD route would answer 200 with GET's headers.
  app.head('/api/v4/projects/:id/repository/branches/:branch', { config, schema: { params: BranchParams } }, async (req, reply) => {
    try {
      const ctx = await refsContext(c, req.actor, req.params.id, true);
      return reply.code((await ctx.repo.branch(req.params.branch)) ? 204 : 404).send();
    } catch (e) {
      if (e instanceof DomainError) return reply.code(e.status).send();
      throw e;
    }
  });

  app.get(
    '/api/v4/projects/:id/repository/branches/:branch',
    { config, preValidation: withContext, schema: { params: BranchParams } },
    async (req) => {
      const ctx = contextOf(req);
      const name = req.params.branch;
      if (!isValidNewRefName(name)) throw apiError(400, 'The branch refname is invalid');
      const ref = await ctx.repo.branch(name);
      if (!ref) throw Errors.notFound('Branch');
      return branchEntity(ctx, req.actor, await protectionDefaults(c), ref, await mergedToDefault(ctx, ref));
    },
  );

  app.post(
    '/api/v4/projects/:id/repository/branches',
    { config, preValidation: withContext, schema: { params: IdParams, body: CreateBody } },
    async (req, reply) => {
      const ctx = contextOf(req);
      const actor = req.actor;
      requirePush(ctx, actor);
      const { branch, ref } = req.body;
      if (await ctx.repo.isEmpty()) await createDefaultBranch(c, ctx, actor);
      if (!isValidNewRefName(branch)) throw apiError(400, 'Branch name is invalid');
      if (await ctx.repo.branch(branch)) throw apiError(400, 'Branch already exists');
      const sha = await ctx.repo.resolveCommit(ref);
      if (!sha) throw apiError(400, `Failed to create branch '${branch}': invalid reference name '${ref}'`);
      const hierarchyError = apiError(400, `Failed to create branch '${branch}': Branch name conflicts with existing branch hierarchy.`);
      if (conflictsWithHierarchy(await ctx.repo.branches(), branch)) throw hierarchyError;
      const defaults = await protectionDefaults(c);
      const protection = protectionOf(ctx, defaults, branch);
      // Gitlab::Checks::BranchCheck#protected_branch_creation_checks (the API counts as the web)
      if (protection && !canPushBranch(actor, ctx.access, protection) && !canMergeBranch(actor, ctx.access, protection)) {
        throw apiError(400, 'You are not allowed to create protected branches on this project.');
      }
      try {
        await ctx.repo.updateRef(BRANCH_PREFIX + branch, sha, ZERO_SHA);
      } catch (e) {
        if (!(e instanceof GitError)) throw e;
        if (await ctx.repo.branch(branch)) throw apiError(400, 'Branch already exists');
        throw hierarchyError;
      }
      await recordRefChanges(c, ctx, actor, [{ before: ZERO_SHA, after: sha, ref: BRANCH_PREFIX + branch }]);
      const created = await ctx.repo.branch(branch);
      reply.code(201);
      return branchEntity(ctx, actor, defaults, created!, await mergedToDefault(ctx, created!));
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
      if (!isValidNewRefName(name)) throw apiError(400, 'The branch refname is invalid');
      const ref = await ctx.repo.branch(name);
      if (!ref) throw Errors.notFound('Branch');
      const commit = await ctx.repo.commit(ref.commit);
      if (commit) checkUnmodifiedSince(req, commit.author.time);
      // Gitlab::Checks::BranchCheck, run by the pre-receive hook: its refusals are 400s here
      if (name === defaultBranchName(ctx)) throw apiError(400, PUSH_MESSAGES.deleteDefault);
      const protection = protectionOf(ctx, await protectionDefaults(c), name);
      if (protection && !actor.isAdmin && ctx.access.level < 40) {
        throw apiError(400, 'You are not allowed to delete protected branches from this project. Only a project maintainer or owner can delete a protected branch.');
      }
      if (!(await deleteBranchRef(c, ctx, actor, ref))) throw apiError(400, 'Failed to remove branch');
      return reply.code(204).send();
    },
  );

  // Branches::DeleteMergedService, run at once rather than in a worker; the answer is still 202.
  app.delete(
    '/api/v4/projects/:id/repository/merged_branches',
    { config, preValidation: withContext, schema: { params: IdParams } },
    async (req, reply) => {
      const ctx = contextOf(req);
      const actor = req.actor;
      requirePush(ctx, actor);
      const defaults = await protectionDefaults(c);
      const merged = await mergedBranchNames(ctx);
      for (const ref of await ctx.repo.branches()) {
        if (!merged.has(ref.short) || ref.short === defaultBranchName(ctx)) continue;
        if (protectionOf(ctx, defaults, ref.short)) continue;
        // one push per branch, as GitLab deletes them one by one
        await deleteBranchRef(c, ctx, actor, ref);
      }
      reply.code(202);
      return { message: '202 Accepted' };
    },
  );
}
