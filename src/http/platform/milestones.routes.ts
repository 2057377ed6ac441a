// /projects/:id/milestones and /groups/:id/milestones (GitLab lib/api/milestones.rb, group_milestones.rb,
// milestone_responses.rb), and a project milestone's promotion to its group (project_milestones.rb). Every
// endpoint needs a signed-in user (`before { authenticate! }`).
// `:milestone_id` is the milestone's id (not its iid); a milestone of another project or group is
// "404 Not found" (ActiveRecord's find). Dates are YYYY-MM-DD (a date-time keeps its date, as the date column's
// cast does); an unreadable date is refused (400 "due_date is invalid") where GitLab would silently drop it.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import type { Actor } from '../../domain/access/actor.ts';
import type { ListMilestonesInput, MilestoneInput, MilestoneParent } from '../../domain/milestones/milestones.service.ts';
import type { IssueRow, MergeRequestRow, MilestoneRow } from '../../db/schema.ts';
import { canReadIssues } from '../../domain/issues/issue-access.ts';
import { canReadMergeRequests } from '../../domain/merge-requests/merge-requests-query.ts';
import { Errors } from '../../lib/errors.ts';
import { offsetPaginate, paginateArray } from '../../lib/pagination.ts';
import { MergeRequestBasicSchema, type MergeRequestBasicEntity } from './entities/merge-request.entity.ts';
import { presentMergeRequests } from './merge-requests/present.ts';
import { MilestoneSchema, toMilestoneBasic } from './entities/milestone.entity.ts';
import { IssueBasicSchema, toIssue } from './entities/issue.entity.ts';
import { userViewContext } from './entities/user.entity.ts';
import { dateOf, dateTimeParam, IdParams, linkParams, PaginationProps } from './schemas/common.ts';

const TAGS = ['milestones'];
const config = { api: 'platform' as const, auth: 'user' as const };

const MilestoneParams = Type.Object({ id: Type.String(), milestone_id: Type.Integer() });
const NullableStr = Type.Unsafe<string | null>({ type: ['string', 'null'] });

const ListProps = {
  state: Type.Optional(Type.Enum(['active', 'closed', 'all'])),
  iids: Type.Optional(Type.Array(Type.Integer())),
  title: Type.Optional(Type.String()),
  search: Type.Optional(Type.String()),
  search_title: Type.Optional(Type.String()),
  include_parent_milestones: Type.Optional(Type.Boolean()),
  include_ancestors: Type.Optional(Type.Boolean()),
  updated_before: Type.Optional(Type.String()),
  updated_after: Type.Optional(Type.String()),
  ...PaginationProps,
};
const ProjectListQuery = Type.Object(ListProps);
const GroupListQuery = Type.Object({ ...ListProps, include_descendants: Type.Optional(Type.Boolean()) });

const OptionalFields = {
  description: Type.Optional(NullableStr),
  due_date: Type.Optional(NullableStr),
  start_date: Type.Optional(NullableStr),
};
const CreateBody = Type.Object({ title: Type.String(), ...OptionalFields });
const UpdateBody = Type.Object({ title: Type.Optional(Type.String()), state_event: Type.Optional(Type.Enum(['close', 'activate'])), ...OptionalFields });
const UPDATE_AT_LEAST_ONE_OF = ['title', 'description', 'start_date', 'due_date', 'state_event'];

/** Grape's CommaSeparatedToIntegerArray for `iids` (`iids=1,2` as well as `iids[]=1&iids[]=2`). */
async function listParams(req: FastifyRequest): Promise<void> {
  const q = req.query as Record<string, unknown>;
  const v = q.iids;
  if (v !== undefined) {
    const items = (Array.isArray(v) ? v : [v]).flatMap((x) => (typeof x === 'string' ? (x === '' ? [] : x.split(',')) : [x]));
    if (!items.every((x) => typeof x === 'string' && /^\s*-?\d+\s*$/.test(x))) throw Errors.param('iids is invalid');
    q.iids = items;
  }
  if (q.include_ancestors !== undefined && q.include_parent_milestones !== undefined) {
    throw Errors.param('include_ancestors, include_parent_milestones are mutually exclusive');
  }
}

async function normaliseBody(req: FastifyRequest): Promise<void> {
  if (req.body === undefined || req.body === null) req.body = {};
}

/**
 * A date parameter (a String cast into the date column): YYYY-MM-DD, or a date-time whose date is kept as written
 * (python-gitlab's own test sends "2020-01-01T00:00:00Z"), or blank/null to clear.
 */
function checkDates(b: Record<string, unknown>): void {
  const keys = ['due_date', 'start_date'].filter((k) => typeof b[k] === 'string' && (b[k] as string).trim() !== '');
  const bad = keys.filter((k) => dateOf(b[k] as string) === null);
  if (bad.length) throw Errors.param(bad.map((k) => `${k} is invalid`).join(', '));
  for (const k of ['due_date', 'start_date']) if (typeof b[k] === 'string') b[k] = dateOf(b[k] as string) ?? '';
}

export function milestonesRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const milestones = c.milestones;

  const present = async (rows: MilestoneRow[]) => (await milestones.withUrls(rows)).map(toMilestoneBasic);
  const presentOne = async (row: MilestoneRow) => (await present([row]))[0];

  for (const kind of ['projects', 'groups'] as const) {
    const isProject = kind === 'projects';
    const base = `/api/v4/${kind}/:id/milestones`;
    const parentOf = (actor: Actor, id: string): Promise<MilestoneParent> =>
      isProject ? milestones.projectParent(actor, id) : milestones.groupParent(actor, id);

    app.get(
      base,
      {
        config,
        preValidation: listParams,
        schema: { tags: TAGS, params: IdParams, querystring: isProject ? ProjectListQuery : GroupListQuery, response: { 200: Type.Array(MilestoneSchema) } },
      },
      async (req, reply) => {
        const q = req.query as Record<string, any>;
        const input: ListMilestonesInput = { ...q };
        for (const k of ['updated_before', 'updated_after'] as const) if (q[k] !== undefined) input[k] = dateTimeParam(String(q[k]), k);
        const parent = await parentOf(req.actor, req.params.id);
        const page = await offsetPaginate(
          c.db.kysely,
          c.config.externalUrl,
          { path: req.url.split('?')[0], params: linkParams(q, { id: req.params.id }), page: q.page, per_page: q.per_page },
          await milestones.listQuery(req.actor, parent, input),
        );
        reply.headers(page.headers);
        return present(page.items);
      },
    );

    app.get(`${base}/:milestone_id`, { config, schema: { tags: TAGS, params: MilestoneParams, response: { 200: MilestoneSchema } } }, async (req) => {
      const parent = await parentOf(req.actor, req.params.id);
      return presentOne(await milestones.get(parent, req.params.milestone_id));
    });

    app.post(
      base,
      { config, preValidation: normaliseBody, schema: { tags: TAGS, params: IdParams, body: CreateBody, response: { 201: MilestoneSchema } } },
      async (req, reply) => {
        const b = req.body as Record<string, unknown>;
        checkDates(b);
        const parent = await parentOf(req.actor, req.params.id);
        const row = await milestones.create(req.actor, parent, b as unknown as MilestoneInput & { title: string });
        return reply.code(201).send(await presentOne(row));
      },
    );

    app.put(
      `${base}/:milestone_id`,
      { config, preValidation: normaliseBody, schema: { tags: TAGS, params: MilestoneParams, body: UpdateBody, response: { 200: MilestoneSchema } } },
      async (req) => {
        const b = req.body as Record<string, unknown>;
        if (!UPDATE_AT_LEAST_ONE_OF.some((k) => b[k] !== undefined)) {
          throw Errors.param(`${UPDATE_AT_LEAST_ONE_OF.join(', ')} are missing, at least one parameter must be provided`);
        }
        checkDates(b);
        const parent = await parentOf(req.actor, req.params.id);
        const input: MilestoneInput = {};
        for (const k of UPDATE_AT_LEAST_ONE_OF) if (b[k] !== undefined) (input as Record<string, unknown>)[k] = b[k];
        if (input.title === null) delete input.title;
        return presentOne(await milestones.update(req.actor, parent, req.params.milestone_id, input));
      },
    );

    app.delete(`${base}/:milestone_id`, { config, schema: { tags: TAGS, params: MilestoneParams } }, async (req, reply) => {
      const parent = await parentOf(req.actor, req.params.id);
      const actor = req.actor;
      // Each merge request that loses the milestone is updated as MergeRequests::UpdateService would: its hook event.
      await milestones.remove(actor, parent, req.params.milestone_id, (trx, before, after) =>
        c.mergeRequests.recordEvent(trx, actor, after, 'update', {
          milestone_id: { previous: before.milestone_id, current: null },
          updated_at: { previous: before.updated_at, current: after.updated_at },
        }),
      );
      return reply.code(204).send();
    });

    // milestone_issuables_for(:merge_request): the merge requests with this milestone's title the
    // caller may read, by label priority (MergeRequestBasic). A group's include its subgroups' projects.
    app.get(
      `${base}/:milestone_id/merge_requests`,
      {
        config,
        schema: { tags: TAGS, params: MilestoneParams, querystring: Type.Object(PaginationProps), response: { 200: Type.Array(MergeRequestBasicSchema) } },
      },
      async (req, reply) => {
        const parent = await parentOf(req.actor, req.params.id);
        const milestone = await milestones.get(parent, req.params.milestone_id);
        const readable = parent.type === 'Group' || canReadMergeRequests(req.actor, parent.project, parent.access);
        const list = await c.mergeRequestsQuery.list(
          req.actor,
          parent.type === 'Project' ? { kind: 'project', project: parent.project } : { kind: 'group', group: parent.group, nonArchived: false },
          { scope: 'all', state: 'all', orderBy: 'label_priority', sort: 'desc' },
        );
        const query = milestones.mergeRequests(list, milestone, readable);
        const page = await offsetPaginate(
          c.db.kysely,
          c.config.externalUrl,
          {
            path: req.url.split('?')[0],
            params: linkParams(req.query, { id: req.params.id, milestone_id: req.params.milestone_id }),
            page: req.query.page,
            per_page: req.query.per_page,
          },
          query,
        );
        reply.headers(page.headers);
        const from = parent.type === 'Project' ? { project: parent.project } : { group: parent.group };
        return (await presentMergeRequests(c, page.items as MergeRequestRow[], { from })) as MergeRequestBasicEntity[];
      },
    );

    app.get(
      `${base}/:milestone_id/issues`,
      {
        config,
        schema: { tags: TAGS, params: MilestoneParams, querystring: Type.Object(PaginationProps), response: { 200: Type.Array(IssueBasicSchema) } },
      },
      async (req, reply) => {
        const parent = await parentOf(req.actor, req.params.id);
        const milestone = await milestones.get(parent, req.params.milestone_id);
        const pageReq = {
          path: req.url.split('?')[0],
          params: linkParams(req.query, { id: req.params.id, milestone_id: req.params.milestone_id }),
          page: req.query.page,
          per_page: req.query.per_page,
        };
        if (parent.type === 'Project' && !canReadIssues(req.actor, parent.project, parent.access)) {
          reply.headers(paginateArray(c.config.externalUrl, pageReq, []).headers);
          return [];
        }
        const list = await c.issuesQuery.list(
          req.actor,
          parent.type === 'Project'
            ? { kind: 'project', project: parent.project, namespace: parent.namespace, access: parent.access }
            : { kind: 'group', group: parent.group, nonArchived: false },
          { scope: 'all', state: 'all', milestoneId: milestone.id, orderBy: 'label_priority', sort: 'desc' },
        );
        const page = await offsetPaginate(c.db.kysely, c.config.externalUrl, pageReq, list);
        reply.headers(page.headers);
        const from = parent.type === 'Project' ? { project: parent.project } : { group: parent.group };
        const ctx = { externalUrl: c.config.externalUrl, users: userViewContext(c.config.externalUrl, await c.settings.get()), from };
        return (await c.issues.views(req.actor, page.items as IssueRow[])).map((v) => toIssue(v, ctx));
      },
    );
  }

  // promote a project milestone to its group (lib/api/project_milestones.rb): Grape answers the endpoint's value, `status(200)`
  app.post(
    '/api/v4/projects/:id/milestones/:milestone_id/promote',
    { config, schema: { tags: TAGS, params: MilestoneParams, response: { 200: Type.Literal(200) } } },
    async (req) => {
      await milestones.promote(req.actor, await milestones.projectParent(req.actor, req.params.id), req.params.milestone_id);
      return 200 as const;
    },
  );
}
