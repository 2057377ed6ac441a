// GET /events, /users/:id/events, /projects/:id/events (GitLab lib/api/events.rb, project_events.rb,
// helpers/events_helpers.rb): EventsFinder's filters, offset pagination counted before the per-event
// visibility check (as GitLab's pages may come out shorter than per_page), the Event entity, served
// from the response cache.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import type { Container } from '../../container.ts';
import { actorKey } from '../../domain/access/actor.ts';
import { EVENT_ACTION_NAMES, EVENT_TARGET_TYPES, EventsQuery, type EventFilters, type EventSource } from '../../domain/events/events-query.ts';
import type { EventRow } from '../../db/schema.ts';
import { isInt32 } from '../../db/sql.ts';
import { Errors } from '../../lib/errors.ts';
import { offsetPaginateWith } from '../../lib/pagination.ts';
import { EventSchema, toEvent } from './entities/event.entity.ts';
import { userViewContext } from './entities/user.entity.ts';
import { dateParam, Enum, IdParams, linkParams, PaginationProps } from './schemas/common.ts';

const TAGS = ['events'];
/** What an events page is made of (the response cache keys on their versions). */
export const EVENT_LIST_TABLES = [
  'events',
  'push_event_payloads',
  'projects',
  'namespaces',
  'members',
  'member_roles',
  'users',
  'redirect_routes',
  'merge_requests',
  'notes',
] as const;

/** event_filter_params + sort_params + pagination, in Grape's order. */
const FilterProps = {
  ...PaginationProps,
  action: Enum(EVENT_ACTION_NAMES),
  target_type: Enum(Object.keys(EVENT_TARGET_TYPES) as (keyof typeof EVENT_TARGET_TYPES)[]),
  before: Type.Optional(Type.String()),
  after: Type.Optional(Type.String()),
  sort: Enum(['asc', 'desc'] as const, 'desc'),
};
const MineQuery = Type.Object({ scope: Type.Optional(Type.String()), ...FilterProps });
const ListQuery = Type.Object(FilterProps);
type ListQueryT = Static<typeof MineQuery>;
const Page = { 200: Type.Array(EventSchema) };

function filtersOf(q: ListQueryT): EventFilters {
  return { action: q.action, targetType: q.target_type, before: dateParam(q.before, 'before'), after: dateParam(q.after, 'after'), sort: q.sort ?? 'desc' };
}

export function eventsRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // GET requests of /events and /users/:id/events also take read_user tokens (allow_access_with_scope)
  const readUser = { api: 'platform' as const, auth: 'optional' as const, scopes: ['read_user'] };
  const read = { api: 'platform' as const, auth: 'optional' as const };
  const query = new EventsQuery(c.db, c.policy);

  async function listPage(req: FastifyRequest, reply: FastifyReply, source: EventSource, q: ListQueryT, route: Record<string, unknown>) {
    const filters = filtersOf(q);
    // the page's events are presented (their projects, authors, payloads, visibility) while the count runs
    const { result, headers } = await offsetPaginateWith(
      c.db.kysely,
      c.config.externalUrl,
      { path: req.url.split('?')[0], params: linkParams(q as Record<string, unknown>, route), page: q.page, per_page: q.per_page },
      await query.list(req.actor, source, filters),
      (items) => query.present(req.actor, items as EventRow[]),
    );
    reply.headers(headers);
    const ctx = userViewContext(c.config.externalUrl, await c.settings.get());
    return result.views.map((v) => toEvent(v, result.users, ctx));
  }

  const cacheOpts = (req: FastifyRequest, extra: string) => ({ tables: EVENT_LIST_TABLES, viewer: `${actorKey(req.actor)}|${extra}` });

  app.get('/api/v4/events', { config: readUser, schema: { tags: TAGS, querystring: MineQuery, response: Page } }, async (req, reply) => {
    const me = req.actor.user;
    if (!me) throw Errors.unauthorized();
    return app.cachedResponse(req, reply, cacheOpts(req, 'events'), () => {
      // scope=all: the events of every project the caller is a member of; otherwise their own
      const source: EventSource = req.query.scope === 'all' ? { kind: 'authorized', userId: me.id } : { kind: 'user', user: me };
      return listPage(req, reply, source, req.query, {});
    });
  });

  app.get(
    '/api/v4/users/:id/events',
    { config: readUser, schema: { tags: TAGS, params: IdParams, querystring: ListQuery, response: Page } },
    async (req, reply) =>
      app.cachedResponse(req, reply, cacheOpts(req, `user:${req.params.id}`), async () => {
        const key = req.params.id;
        query.prepare(req.actor); // the viewer's projects, read while the user is looked up
        const numeric = /^\d+$/.test(key);
        const user = numeric ? (isInt32(Number(key)) ? await c.users.byId(Number(key)) : undefined) : await c.users.byUsername(key);
        if (!user) throw Errors.notFound('User');
        return listPage(req, reply, { kind: 'user', user }, req.query, { id: key });
      }),
  );

  app.get(
    '/api/v4/projects/:id/events',
    { config: read, schema: { tags: TAGS, params: IdParams, querystring: ListQuery, response: Page } },
    async (req, reply) =>
      app.cachedResponse(req, reply, cacheOpts(req, `project:${req.params.id}`), async () => {
        const { project } = await c.resolve.project(req.actor, req.params.id);
        return listPage(req, reply, { kind: 'project', project }, req.query, { id: req.params.id });
      }),
  );
}
