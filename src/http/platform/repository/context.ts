// What the repository routes share: the context a preValidation hook resolves, the guard of writes to
// branches and tags, their pages (offset or keyset), If-Unmodified-Since, and the commit entities.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../../container.ts';
import type { Actor } from '../../../domain/access/actor.ts';
import type { RepoContext } from '../../../domain/repository/context.ts';
import { commitTitle, commitTrailers, isoTime, type Commit } from '../../../git/objects.ts';
import { Errors } from '../../../lib/errors.ts';
import { DEFAULT_PER_PAGE, pageParams, paginateArray, toQuery } from '../../../lib/pagination.ts';
import { linkParams } from '../schemas/common.ts';

/** authorize_push_project / authorize_admin_tag: 403 without push_code (archived projects have none). */
export function requirePush(ctx: RepoContext, actor: Actor): void {
  if (!actor.user || !ctx.access.abilities.has('push_code')) throw Errors.forbidden();
}

/** The context a route's preValidation hook resolved (before parameter validation, as Grape's `before`). */
const contexts = new WeakMap<FastifyRequest, RepoContext>();

export function contextHook(c: Container, featureNotFound: boolean) {
  return async (req: FastifyRequest): Promise<void> => {
    const id = String((req.params as { id?: string }).id ?? '');
    contexts.set(req, await c.repository.refsContext(req.actor, id, featureNotFound));
  };
}

export function contextOf(req: FastifyRequest): RepoContext {
  const ctx = contexts.get(req);
  if (!ctx) throw new Error('repository context was not resolved');
  return ctx;
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

/** API::Entities::CommitBasic */
export function commitBasic(commit: Commit, webUrl: string) {
  const { trailers, extended } = commitTrailers(commit.message);
  return {
    id: commit.sha,
    short_id: commit.sha.slice(0, 8),
    created_at: isoTime(commit.committer.time, commit.committer.tz),
    parent_ids: commit.parents,
    title: commitTitle(commit.message),
    message: commit.message,
    author_name: commit.author.name,
    author_email: commit.author.email,
    authored_date: isoTime(commit.author.time, commit.author.tz),
    committer_name: commit.committer.name,
    committer_email: commit.committer.email,
    committed_date: isoTime(commit.committer.time, commit.committer.tz),
    trailers,
    extended_trailers: extended,
    web_url: `${webUrl}/-/commit/${commit.sha}`,
  };
}

export type CommitEntity = ReturnType<typeof commitBasic>;

/** A commit's line counts (Entities::CommitStats). */
export interface Stats {
  additions: number;
  deletions: number;
  total: number;
}

/**
 * API::Entities::CommitDetail (no pipelines: status and last_pipeline are null). GitLab reads the
 * commit with Gitaly's FindCommit, which parses no trailers: they are empty here as there.
 */
export function commitDetail(ctx: RepoContext, commit: Commit, stats: Stats | null) {
  return {
    ...commitBasic(commit, ctx.webUrl),
    trailers: {},
    extended_trailers: {},
    ...(stats ? { stats } : {}),
    status: null,
    project_id: ctx.project.id,
    last_pipeline: null,
  };
}
