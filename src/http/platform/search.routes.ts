// The search API (GitLab lib/api/search.rb, basic search): GET /search, /groups/:id/search and
// /projects/:id/search. Signed-in callers only; `search` and `scope` are required (Grape's 400s), the scopes are
// those basic search offers at each level. Answers use GitLab's search pagination: no X-Total, X-Total-Pages or
// last link for the lists read from the database (a relation without count), a total for the project's notes
// and users and for what git found (code, commits: at most 100 past the page's offset).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type TSchema } from 'typebox';
import type { Container } from '../../container.ts';
import {
  GLOBAL_SCOPES,
  GROUP_SCOPES,
  PROJECT_SCOPES,
  SEARCH_STATES,
  type SearchInput,
  type SearchScope,
  type SearchTarget,
} from '../../domain/search/search.service.ts';
import { Errors } from '../../lib/errors.ts';
import { FixedWindowLimiter } from '../plugins/rate-limit.ts';
import { offsetHeaders, pageParams } from '../../lib/pagination.ts';
import { Enum, IdParams, linkParams, PaginationProps } from './schemas/common.ts';
import { checkSearchRate, presentSearch } from './search-present.ts';

const TAGS = ['search'];
const config = { api: 'platform' as const, auth: 'user' as const };
/** EE's search_type; basic search is what Hearth has. */
const SEARCH_TYPES = ['basic', 'advanced', 'zoekt'] as const;

/** The parameters in Grape's order: search, scope, (ref), state, confidential, then the rest. */
function queryOf(scopes: readonly string[], project: boolean) {
  return Type.Object({
    search: Type.String(),
    scope: Type.Unsafe<SearchScope>({ type: 'string', enum: [...scopes] }),
    ...(project ? { ref: Type.Optional(Type.String()) } : {}),
    state: Enum(SEARCH_STATES),
    confidential: Type.Optional(Type.Boolean()),
    search_type: Enum(SEARCH_TYPES),
    order_by: Type.Optional(Type.String()),
    sort: Type.Optional(Type.String()),
    include_archived: Type.Optional(Type.Boolean()),
    ...PaginationProps,
  } as Record<string, TSchema>);
}

type Query = {
  search: string;
  scope: SearchScope;
  ref?: string;
  state?: SearchInput['state'];
  confidential?: boolean;
  search_type?: (typeof SEARCH_TYPES)[number];
  order_by?: string;
  sort?: string;
  include_archived?: boolean;
  page?: number;
  per_page?: number;
};

/** SearchService#search_type_errors (EE): only basic search is available. */
function checkSearchType(q: Query): void {
  if (q.search_type === 'advanced') throw Errors.badRequest('Elasticsearch is not available');
  if (q.search_type === 'zoekt') {
    throw Errors.badRequest(['Zoekt is not available', ...(q.scope === 'blobs' ? [] : ['Zoekt can only be used for blobs'])].join(', '));
  }
}

export function searchRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const limiter = new FixedWindowLimiter();

  async function answer(req: FastifyRequest, reply: FastifyReply, target: SearchTarget, route: Record<string, unknown>) {
    const q = req.query as Query;
    await checkSearchRate(c, limiter, `user:${req.actor.user!.id}`, 'search_rate_limit');
    checkSearchType(q);
    const pageReq = { path: req.url.split('?')[0], params: linkParams(q as Record<string, unknown>, route), page: q.page, per_page: q.per_page };
    const { page, perPage } = pageParams(pageReq);
    const found = await c.search.search(req.actor, target, {
      scope: q.scope,
      search: q.search,
      state: q.state,
      confidential: q.confidential,
      order_by: q.order_by,
      sort: q.sort,
      ref: q.ref,
      include_archived: q.include_archived,
      page,
      perPage,
    });
    reply.headers(offsetHeaders(c.config.externalUrl, pageReq, page, perPage, found.total, found.hasNext));
    reply.header('x-search-type', 'basic');
    return presentSearch(c, req.actor, target, found.hits);
  }

  app.get('/api/v4/search', { config, schema: { tags: TAGS, querystring: queryOf(GLOBAL_SCOPES, false) } }, async (req, reply) => {
    reply.header('content-transfer-encoding', 'binary');
    return answer(req, reply, { level: 'global' }, {});
  });

  for (const path of ['/api/v4/groups/:id/search', '/api/v4/groups/:id/-/search']) {
    app.get(path, { config, schema: { tags: TAGS, params: IdParams, querystring: queryOf(GROUP_SCOPES, false) } }, async (req, reply) =>
      answer(req, reply, await c.search.groupTarget(req.actor, req.params.id), { id: req.params.id }),
    );
  }

  for (const path of ['/api/v4/projects/:id/search', '/api/v4/projects/:id/-/search']) {
    app.get(path, { config, schema: { tags: TAGS, params: IdParams, querystring: queryOf(PROJECT_SCOPES, true) } }, async (req, reply) =>
      answer(req, reply, await c.search.projectTarget(req.actor, req.params.id), { id: req.params.id }),
    );
  }
}
