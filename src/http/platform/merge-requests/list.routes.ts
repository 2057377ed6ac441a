// GET /merge_requests, /projects/:id/merge_requests, /groups/:id/merge_requests (lib/api/merge_requests.rb
// find_merge_requests): MergeRequestsFinder's filters (merge-requests-query.ts), offset pagination, the
// MergeRequestBasic entity (or MergeRequestSimple with view=simple), served from the response cache.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../../container.ts';
import { actorKey } from '../../../domain/access/actor.ts';
import { canReadMergeRequests, type MergeRequestListScope } from '../../../domain/merge-requests/merge-requests-query.ts';
import type { MergeRequestRow } from '../../../db/schema.ts';
import { Errors } from '../../../lib/errors.ts';
import { offsetPaginate, type PageRequest } from '../../../lib/pagination.ts';
import { MergeRequestBasicSchema } from '../entities/merge-request.entity.ts';
import { presentMergeRequests } from './present.ts';
import { IdParams, linkParams } from '../schemas/common.ts';
import { GlobalListQuery, GroupListQuery, ProjectListQuery, toFilters, type MergeRequestListQuery } from '../schemas/merge-request-list.ts';

const TAGS = ['merge_requests'];
/** What a merge request list is made of (the response cache keys on their versions). */
export const MR_LIST_TABLES = [
  'projects',
  'namespaces',
  'members',
  'member_roles',
  'users',
  'redirect_routes',
  'project_forks',
  'merge_requests',
  'merge_request_assignees',
  'merge_request_reviewers',
  'merge_request_labels',
  'labels',
  'milestones',
  'approvals',
  'award_emoji',
  'notes',
  'environments',
  'deployments',
  'deployment_merge_requests',
] as const;

/** MergeRequestBasic; view=simple pages are serialised apart (see `serialize`) */
const Page = { 200: Type.Array(MergeRequestBasicSchema) };

type Recheck = (ids: number[]) => unknown;

export function mergeRequestListRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const read = { api: 'platform' as const, auth: 'optional' as const };
  const query = c.mergeRequestsQuery;

  /** One page of `where` for the request: filters, pagination headers, entities; a recheck queued when asked. */
  async function listPage(req: FastifyRequest, reply: FastifyReply, where: MergeRequestListScope, q: MergeRequestListQuery, route: Record<string, unknown>) {
    const actor = req.actor;
    const filters = toFilters(q);
    const pageReq: PageRequest = {
      path: req.url.split('?')[0],
      params: linkParams(q as Record<string, unknown>, route),
      page: q.page,
      per_page: q.per_page,
    };
    const page = await offsetPaginate(c.db.kysely, c.config.externalUrl, pageReq, await query.list(actor, where, filters));
    reply.headers(page.headers);
    const rows = page.items as MergeRequestRow[];
    if (q.with_merge_status_recheck && rows.length) queueRecheck(rows.map((r) => r.id));
    // references.relative: relative to the project or group listed (GitLab's `from` of the list)
    const from =
      where.kind === 'project'
        ? { project: { id: where.project.id, namespace_id: where.project.namespace_id } }
        : where.kind === 'group'
          ? { group: { id: where.group.id } }
          : null;
    return presentMergeRequests(c, rows, { view: q.view, withLabelsDetails: !!q.with_labels_details, from });
  }

  /** with_merge_status_recheck: asks the merge service for an asynchronous recheck; never waits, never fails the list. */
  function queueRecheck(ids: number[]): void {
    const recheck = (c.merges as unknown as { queueRecheck?: Recheck }).queueRecheck;
    if (typeof recheck !== 'function') return;
    try {
      const r = recheck.call(c.merges, ids) as Promise<unknown> | undefined;
      if (r && typeof r.catch === 'function') r.catch((err: unknown) => c.log.warn({ err }, 'merge status recheck failed'));
    } catch (err) {
      c.log.warn({ err }, 'merge status recheck failed');
    }
  }

  /** view=simple has its own (small) shape: serialised as is rather than by the basic entity's schema. */
  const serialize = (q: MergeRequestListQuery) => (q.view === 'simple' ? (v: unknown) => JSON.stringify(v) : undefined);
  const cacheOpts = (req: FastifyRequest, q: MergeRequestListQuery, extra = '') => ({
    tables: MR_LIST_TABLES,
    viewer: `${actorKey(req.actor)}${extra}`,
    serialize: serialize(q),
  });

  app.get('/api/v4/merge_requests', { config: read, schema: { tags: TAGS, querystring: GlobalListQuery, response: Page } }, async (req, reply) => {
    // authenticate! unless params[:scope] == 'all'
    if (!req.actor.user && req.query.scope !== 'all') throw Errors.unauthorized();
    return app.cachedResponse(req, reply, cacheOpts(req, req.query), () => listPage(req, reply, { kind: 'all' }, req.query, {}));
  });

  app.get(
    '/api/v4/projects/:id/merge_requests',
    { config: read, schema: { tags: TAGS, params: IdParams, querystring: ProjectListQuery, response: Page } },
    async (req, reply) =>
      app.cachedResponse(req, reply, cacheOpts(req, req.query, `|project:${req.params.id}`), async () => {
        const { project, access } = await c.resolve.project(req.actor, req.params.id);
        // authorize! :read_merge_request, user_project
        if (!canReadMergeRequests(req.actor, project, access)) throw Errors.forbidden();
        return listPage(req, reply, { kind: 'project', project }, req.query, { id: req.params.id });
      }),
  );

  app.get(
    '/api/v4/groups/:id/merge_requests',
    { config: read, schema: { tags: ['groups', ...TAGS], params: IdParams, querystring: GroupListQuery, response: Page } },
    async (req, reply) =>
      app.cachedResponse(req, reply, cacheOpts(req, req.query, `|group:${req.params.id}`), async () => {
        const { group } = await c.resolve.group(req.actor, req.params.id);
        return listPage(req, reply, { kind: 'group', group, nonArchived: req.query.non_archived !== false }, req.query, { id: req.params.id });
      }),
  );
}
