// The issues API (lib/api/issues.rb): GET /issues, /groups/:id/issues, /projects/:id/issues (IssuesFinder's
// filters, offset pagination, the Issue entity), one issue (by iid, or by global id for administrators), create,
// edit (close and reopen with state_event), delete, subscribe/unsubscribe, participants, closed_by,
// related_merge_requests and time_stats. Notes, discussions and award emoji of issues are the notes routes'
// (notes.routes.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import type { IssueRow } from '../../db/schema.ts';
import { actorKey, type Actor } from '../../domain/access/actor.ts';
import type { IssueListScope } from '../../domain/issues/issues-query.ts';
import type { FoundIssue, IssueInput } from '../../domain/issues/issues.service.ts';
import { ISSUE_TYPES } from '../../domain/issues/rules.ts';
import { Errors } from '../../lib/errors.ts';
import { offsetPaginateWith, paginateArray } from '../../lib/pagination.ts';
import { IssueBasicSchema, IssueLinkSchema, IssueSchema, RelatedIssueSchema, toIssue, type IssueEntityContext } from './entities/issue.entity.ts';
import { presentMergeRequest, presentMergeRequests } from './merge-requests/present.ts';
import { LINK_TYPES } from '../../domain/issues/issue-links.service.ts';
import { type MergeRequestBasicEntity, MergeRequestBasicSchema, MergeRequestUnsubscribedSchema } from './entities/merge-request.entity.ts';
import { toUserRef, UserRefSchema, userViewContext } from './entities/user.entity.ts';
import { dateOf, Enum, IdParams, linkParams, PaginationProps } from './schemas/common.ts';
import { normaliseIssuableParams } from './schemas/issuable-params.ts';
import { GlobalIssueListQuery, GroupIssueListQuery, type IssueListQuery, ProjectIssueListQuery, toIssueFilters } from './schemas/issue-list.ts';

const TAGS = ['issues'];
/** What an issue list is made of (the response cache keys on their versions). */
export const ISSUE_LIST_TABLES = [
  'projects',
  'namespaces',
  'members',
  'member_roles',
  'users',
  'redirect_routes',
  'issues',
  'issue_assignees',
  'issue_labels',
  'labels',
  'milestones',
] as const;
const IssueParams = Type.Object({ id: Type.String(), issue_iid: Type.Integer() });
const StringList = () => Type.Optional(Type.Array(Type.String()));
const IntList = () => Type.Optional(Type.Array(Type.Integer()));

/** issue_params of create and update (lib/api/issues.rb). */
const optionalParams = {
  description: Type.Optional(Type.String()),
  assignee_id: Type.Optional(Type.Integer()),
  assignee_ids: IntList(),
  milestone_id: Type.Optional(Type.Integer()),
  labels: StringList(),
  add_labels: StringList(),
  remove_labels: StringList(),
  due_date: Type.Optional(Type.String()),
  confidential: Type.Optional(Type.Boolean()),
  discussion_locked: Type.Optional(Type.Boolean()),
  issue_type: Enum(ISSUE_TYPES),
  created_at: Type.Optional(Type.String()),
};
const CreateBody = Type.Object({ title: Type.String(), iid: Type.Optional(Type.Integer()), ...optionalParams });
const UpdateBody = Type.Object({
  title: Type.Optional(Type.String()),
  state_event: Enum(['close', 'reopen'] as const),
  updated_at: Type.Optional(Type.String()),
  ...optionalParams,
});
/** update's at_least_one_of, in Grape's order. */
const UPDATE_KEYS = [
  'assignee_id',
  'assignee_ids',
  'confidential',
  'created_at',
  'description',
  'discussion_locked',
  'due_date',
  'labels',
  'add_labels',
  'remove_labels',
  'milestone_id',
  'state_event',
  'title',
  'issue_type',
] as const;

/** A String cast into the date column: YYYY-MM-DD, or a date-time whose date is kept as written (an empty value clears). */
function dueDate(v: string | undefined): string | null | undefined {
  if (v === undefined) return undefined;
  if (v === '') return null;
  const date = dateOf(v);
  if (date === null) throw Errors.param('due_date is invalid');
  return date;
}

export function issuesRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const read = { api: 'platform' as const, auth: 'optional' as const };
  const write = { api: 'platform' as const, auth: 'user' as const };
  const Page = { 200: Type.Array(IssueSchema) };

  const context = async (from: IssueEntityContext['from'], withLabelsDetails = false): Promise<IssueEntityContext> => ({
    externalUrl: c.config.externalUrl,
    users: userViewContext(c.config.externalUrl, await c.settings.get()),
    from,
    withLabelsDetails,
  });
  const one = async (actor: Actor, f: FoundIssue) => {
    const [view] = await c.issues.views(actor, [f.issue], [f]);
    const from = { project: { id: f.project.id, namespace_id: f.project.namespace_id } };
    return toIssue(view, await context(from), await c.issues.isSubscribed(actor, f));
  };
  const find = (req: { actor: Actor; params: { id: string; issue_iid: number } }) => c.issues.find(req.actor, req.params.id, req.params.issue_iid);

  async function listPage(req: FastifyRequest, reply: FastifyReply, where: IssueListScope, q: IssueListQuery, route: Record<string, unknown>) {
    const filters = toIssueFilters(q);
    const from =
      where.kind === 'project'
        ? { project: { id: where.project.id, namespace_id: where.project.namespace_id } }
        : where.kind === 'group'
          ? { group: { id: where.group.id } }
          : null;
    const known = where.kind === 'project' ? [{ project: where.project, namespace: where.namespace }] : [];
    // the page's rows are presented while the count behind X-Total still runs
    const list = await c.issuesQuery.list(req.actor, where, filters);
    const { result, headers } = await offsetPaginateWith(
      c.db.kysely,
      c.config.externalUrl,
      { path: req.url.split('?')[0], params: linkParams(q as Record<string, unknown>, route), page: q.page, per_page: q.per_page },
      list,
      async (rows) => {
        const [views, ctx] = await Promise.all([c.issues.views(req.actor, rows as IssueRow[], known), context(from, !!q.with_labels_details)]);
        return views.map((v) => toIssue(v, ctx));
      },
      { narrow: c.issuesQuery.isNarrow(list), byIds: c.issuesQuery.isById(list) ? (ids) => c.issuesQuery.rowsByIds(ids) : undefined },
    );
    reply.headers(headers);
    return result;
  }

  // ---- lists --------------------------------------------------------------------------------------

  /** the lists are served from the response cache while the tables they are made of keep their versions */
  const cacheOpts = (req: FastifyRequest, extra = '') => ({ tables: ISSUE_LIST_TABLES, viewer: `${actorKey(req.actor)}${extra}` });

  app.get('/api/v4/issues', { config: read, schema: { tags: TAGS, querystring: GlobalIssueListQuery, response: Page } }, async (req, reply) => {
    // authenticate! unless params[:scope] == 'all'
    if (!req.actor.user && req.query.scope !== 'all') throw Errors.unauthorized();
    return app.cachedResponse(req, reply, cacheOpts(req), () => listPage(req, reply, { kind: 'all' }, req.query, {}));
  });

  app.get(
    '/api/v4/groups/:id/issues',
    { config: read, schema: { tags: ['groups', ...TAGS], params: IdParams, querystring: GroupIssueListQuery, response: Page } },
    async (req, reply) =>
      app.cachedResponse(req, reply, cacheOpts(req, `|group:${req.params.id}`), async () => {
        const { group } = await c.resolve.group(req.actor, req.params.id);
        return listPage(req, reply, { kind: 'group', group, nonArchived: req.query.non_archived !== false }, req.query, { id: req.params.id });
      }),
  );

  app.get(
    '/api/v4/projects/:id/issues',
    { config: read, schema: { tags: TAGS, params: IdParams, querystring: ProjectIssueListQuery, response: Page } },
    async (req, reply) =>
      app.cachedResponse(req, reply, cacheOpts(req, `|project:${req.params.id}`), async () => {
        const { project, namespace, access } = await c.issues.project(req.actor, req.params.id);
        return listPage(req, reply, { kind: 'project', project, namespace, access }, req.query, { id: req.params.id });
      }),
  );

  // ---- statistics (GET …/issues_statistics: the lists' filters, counts by state) ---------------------

  const Statistics = {
    200: Type.Object({ statistics: Type.Object({ counts: Type.Object({ all: Type.Integer(), closed: Type.Integer(), opened: Type.Integer() }) }) }),
  };
  const statistics = async (actor: Actor, where: IssueListScope, q: IssueListQuery) => ({
    statistics: { counts: await c.issuesQuery.statistics(actor, where, toIssueFilters(q)) },
  });
  app.get('/api/v4/issues_statistics', { config: read, schema: { tags: TAGS, querystring: GlobalIssueListQuery, response: Statistics } }, async (req) => {
    if (!req.actor.user && req.query.scope !== 'all') throw Errors.unauthorized();
    return statistics(req.actor, { kind: 'all' }, req.query);
  });
  app.get(
    '/api/v4/groups/:id/issues_statistics',
    { config: read, schema: { tags: ['groups', ...TAGS], params: IdParams, querystring: GroupIssueListQuery, response: Statistics } },
    async (req) => {
      const { group } = await c.resolve.group(req.actor, req.params.id);
      return statistics(req.actor, { kind: 'group', group, nonArchived: req.query.non_archived !== false }, req.query);
    },
  );
  app.get(
    '/api/v4/projects/:id/issues_statistics',
    { config: read, schema: { tags: TAGS, params: IdParams, querystring: ProjectIssueListQuery, response: Statistics } },
    async (req) => {
      const { project, namespace, access } = await c.issues.project(req.actor, req.params.id);
      return statistics(req.actor, { kind: 'project', project, namespace, access }, req.query);
    },
  );

  // ---- one issue --------------------------------------------------------------------------------

  // an issue by its global id, for administrators (lib/api/issues.rb: "Get specified issue (admin only)")
  app.get(
    '/api/v4/issues/:id',
    { config: { api: 'platform', auth: 'admin' }, schema: { tags: TAGS, params: Type.Object({ id: Type.String() }), response: { 200: IssueSchema } } },
    async (req) => one(req.actor, await c.issues.findByIdAsAdmin(req.actor, req.params.id)),
  );

  app.get(
    '/api/v4/projects/:id/issues/:issue_iid',
    { config: read, schema: { tags: TAGS, params: IssueParams, response: { 200: IssueSchema } } },
    async (req) => one(req.actor, await find(req)),
  );

  app.post(
    '/api/v4/projects/:id/issues',
    { config: write, preValidation: normaliseIssuableParams, schema: { tags: TAGS, params: IdParams, body: CreateBody, response: { 201: IssueSchema } } },
    async (req, reply) => {
      const b = req.body;
      const input: IssueInput = { ...b, due_date: dueDate(b.due_date), milestone_id: b.milestone_id || undefined };
      const f = await c.issues.create(req.actor, req.params.id, input);
      return reply.code(201).send(await one(req.actor, f));
    },
  );

  app.put(
    '/api/v4/projects/:id/issues/:issue_iid',
    { config: write, preValidation: normaliseIssuableParams, schema: { tags: TAGS, params: IssueParams, body: UpdateBody, response: { 200: IssueSchema } } },
    async (req) => {
      const b = req.body as Record<string, unknown> & typeof req.body;
      if (!UPDATE_KEYS.some((k) => b[k] !== undefined)) {
        throw Errors.param(`${UPDATE_KEYS.join(', ')} are missing, at least one parameter must be provided`);
      }
      const f = await find(req);
      const input: IssueInput = {
        ...req.body,
        due_date: dueDate(req.body.due_date),
        milestone_id: req.body.milestone_id === 0 ? null : req.body.milestone_id,
      };
      return one(req.actor, await c.issues.update(req.actor, f, input));
    },
  );

  app.delete('/api/v4/projects/:id/issues/:issue_iid', { config: write, schema: { tags: TAGS, params: IssueParams } }, async (req, reply) => {
    await c.issues.remove(req.actor, await find(req));
    return reply.code(204).send();
  });

  app.put(
    '/api/v4/projects/:id/issues/:issue_iid/reorder',
    {
      config: write,
      schema: {
        tags: TAGS,
        params: IssueParams,
        body: Type.Object({ move_after_id: Type.Optional(Type.Integer()), move_before_id: Type.Optional(Type.Integer()) }),
        response: { 200: IssueSchema },
      },
    },
    async (req) => one(req.actor, await c.issues.reorder(req.actor, await find(req), req.body.move_after_id, req.body.move_before_id)),
  );

  app.post(
    '/api/v4/projects/:id/issues/:issue_iid/move',
    {
      config: write,
      schema: {
        tags: TAGS,
        params: IssueParams,
        body: Type.Object({ to_project_id: Type.Union([Type.Integer(), Type.String()]) }),
        response: { 201: IssueSchema },
      },
    },
    async (req, reply) => {
      const moved = await c.issues.move(req.actor, await find(req), req.body.to_project_id);
      return reply.code(201).send(await one(req.actor, moved));
    },
  );

  for (const [path, on] of [
    ['subscribe', true],
    ['unsubscribe', false],
  ] as const) {
    app.post(
      `/api/v4/projects/:id/issues/:issue_iid/${path}`,
      { config: write, schema: { tags: TAGS, params: IssueParams, response: { 201: IssueSchema, 304: Type.Null() } } },
      async (req, reply) => {
        const f = await find(req);
        if (!(await c.issues.setSubscription(req.actor, f, on))) return reply.code(304).send(null);
        return reply.code(201).send(await one(req.actor, f));
      },
    );
  }

  app.get(
    '/api/v4/projects/:id/issues/:issue_iid/participants',
    { config: read, schema: { tags: TAGS, params: IssueParams, response: { 200: Type.Array(UserRefSchema) } } },
    async (req) => {
      const users = await c.issues.participants(req.actor, await find(req));
      const ctx = userViewContext(c.config.externalUrl, await c.settings.get());
      return users.map((u) => toUserRef(u, ctx));
    },
  );

  // the merge requests whose description closes the issue
  app.get(
    '/api/v4/projects/:id/issues/:issue_iid/closed_by',
    { config: read, schema: { tags: TAGS, params: IssueParams, response: { 200: Type.Array(MergeRequestBasicSchema) } } },
    async (req) => {
      const f = await find(req);
      const mrs = await c.mergeRequests.readableByIds(req.actor, await c.issues.closingMergeRequestIds(f.issue.id));
      return (await presentMergeRequests(
        c,
        mrs.map((m) => m.mr),
        { from: { project: f.project } },
      )) as MergeRequestBasicEntity[];
    },
  );

  // the merge requests mentioning or closing the issue (Issues::ReferencedMergeRequestsService), a page of
  // Entities::MergeRequest without `subscribed`
  app.get(
    '/api/v4/projects/:id/issues/:issue_iid/related_merge_requests',
    {
      config: read,
      schema: { tags: TAGS, params: IssueParams, querystring: Type.Object(PaginationProps), response: { 200: Type.Array(MergeRequestUnsubscribedSchema) } },
    },
    async (req, reply) => {
      const f = await find(req);
      const mrs = await c.issueMentions.related(req.actor, f);
      const q = req.query;
      const page = paginateArray(c.config.externalUrl, { path: req.url.split('?')[0], params: linkParams(q, req.params), ...q }, mrs);
      reply.headers(page.headers);
      const from = { project: f.project };
      return Promise.all(page.items.map((m) => presentMergeRequest(c, req.actor, m, { from })));
    },
  );

  app.get(
    '/api/v4/projects/:id/merge_requests/:merge_request_iid/closes_issues',
    {
      config: read,
      schema: {
        tags: ['merge_requests'],
        params: Type.Object({ id: Type.String(), merge_request_iid: Type.Integer() }),
        querystring: Type.Object(PaginationProps),
        response: { 200: Type.Array(IssueBasicSchema) },
      },
    },
    async (req, reply) => {
      const f = await c.mergeRequests.find(req.actor, req.params.id, req.params.merge_request_iid);
      const issues = await c.issues.closedByMergeRequest(req.actor, f.mr.id);
      const q = req.query;
      const page = paginateArray(c.config.externalUrl, { path: req.url.split('?')[0], params: linkParams(q, req.params), ...q }, issues);
      reply.headers(page.headers);
      const ctx = await context({ project: { id: f.project.id, namespace_id: f.project.namespace_id } });
      return (
        await c.issues.views(
          req.actor,
          page.items.map((i) => i.issue),
        )
      ).map((v) => toIssue(v, ctx));
    },
  );

  // ---- links (lib/api/issue_links.rb) ------------------------------------------------------------

  const LinkParams = Type.Object({ id: Type.String(), issue_iid: Type.Integer(), issue_link_id: Type.Integer() });
  const LinkBody = Type.Object({
    target_project_id: Type.Union([Type.String(), Type.Integer()]),
    target_issue_iid: Type.Union([Type.Integer(), Type.String({ pattern: '^[0-9]+$' })]),
    link_type: Enum(LINK_TYPES),
  });
  const views = async (actor: Actor, rows: IssueRow[], from: IssueEntityContext['from'] = null) => {
    const ctx = await context(from);
    const vs = await c.issues.views(actor, rows);
    return new Map(vs.map((v) => [v.row.id, toIssue(v, ctx)]));
  };
  const linkEntity = async (actor: Actor, l: { link: { link_type: string }; source: IssueRow; target: IssueRow }) => {
    const m = await views(actor, [l.source, l.target]);
    return { source_issue: m.get(l.source.id)!, target_issue: m.get(l.target.id)!, link_type: l.link.link_type };
  };

  app.get(
    '/api/v4/projects/:id/issues/:issue_iid/links',
    { config: write, schema: { tags: ['issue_links'], params: IssueParams, response: { 200: Type.Array(RelatedIssueSchema) } } },
    async (req) => {
      const f = await find(req);
      const related = await c.issueLinks.related(req.actor, f);
      const m = await views(
        req.actor,
        related.map((r) => r.issue),
        { project: { id: f.project.id, namespace_id: f.project.namespace_id } },
      );
      return related.map((r) => ({
        ...m.get(r.issue.id)!,
        issue_link_id: r.link.id,
        link_type: r.linkType,
        link_created_at: r.link.created_at,
        link_updated_at: r.link.updated_at,
      }));
    },
  );
  app.get(
    '/api/v4/projects/:id/issues/:issue_iid/links/:issue_link_id',
    { config: write, schema: { tags: ['issue_links'], params: LinkParams, response: { 200: IssueLinkSchema } } },
    async (req) => linkEntity(req.actor, await c.issueLinks.get(req.actor, await find(req), req.params.issue_link_id)),
  );
  app.post(
    '/api/v4/projects/:id/issues/:issue_iid/links',
    { config: write, schema: { tags: ['issue_links'], params: IssueParams, body: LinkBody, response: { 201: IssueLinkSchema } } },
    async (req, reply) => {
      const b = req.body;
      const created = await c.issueLinks.create(req.actor, await find(req), String(b.target_project_id), Number(b.target_issue_iid), b.link_type);
      return reply.code(201).send(await linkEntity(req.actor, created));
    },
  );
  app.delete(
    '/api/v4/projects/:id/issues/:issue_iid/links/:issue_link_id',
    { config: write, schema: { tags: ['issue_links'], params: LinkParams, response: { 200: IssueLinkSchema } } },
    async (req) => linkEntity(req.actor, await c.issueLinks.remove(req.actor, await find(req), req.params.issue_link_id)),
  );
}
