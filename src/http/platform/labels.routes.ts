// /projects/:id/labels and /groups/:id/labels (GitLab lib/api/labels.rb, group_labels.rb and
// helpers/label_helpers.rb). Every endpoint needs a signed-in user (`before { authenticate! }`).
// `:label_id` is a label id or its URL-encoded title. The deprecated PUT/DELETE on the collection
// (label_id or name in the body) are kept for old clients.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import type { Actor } from '../../domain/access/actor.ts';
import type { LabelParent, UpdateLabelInput } from '../../domain/labels/labels.service.ts';
import type { LabelRow } from '../../db/schema.ts';
import { Errors } from '../../lib/errors.ts';
import { offsetPaginate } from '../../lib/pagination.ts';
import { GroupLabelSchema, type LabelCounts, ProjectLabelSchema, toGroupLabel, toProjectLabel } from './entities/label.entity.ts';
import { IdParams, linkParams, NullableInteger, PaginationProps } from './schemas/common.ts';

const TAGS = ['labels'];
const config = { api: 'platform' as const, auth: 'user' as const };

const LabelParams = Type.Object({ id: Type.String(), label_id: Type.String() });

const InheritanceProps = {
  include_ancestor_groups: Type.Optional(Type.Boolean()),
};
const GroupInheritanceProps = {
  include_ancestor_groups: Type.Optional(Type.Boolean()),
  include_descendant_groups: Type.Optional(Type.Boolean()),
  only_group_labels: Type.Optional(Type.Boolean()),
};
const ProjectListQuery = Type.Object({
  with_counts: Type.Optional(Type.Boolean()),
  ...InheritanceProps,
  search: Type.Optional(Type.String()),
  ...PaginationProps,
});
const GroupListQuery = Type.Object({
  with_counts: Type.Optional(Type.Boolean()),
  ...GroupInheritanceProps,
  search: Type.Optional(Type.String()),
  ...PaginationProps,
});

// Declared in Grape's order (label_create_params), so that several problems are reported as GitLab lists them.
const CreateFields = {
  name: Type.String(),
  color: Type.String(),
  description: Type.Optional(Type.Unsafe<string | null>({ type: ['string', 'null'] })),
};
const ProjectCreateBody = Type.Object({ ...CreateFields, priority: Type.Optional(NullableInteger) });
const GroupCreateBody = Type.Object(CreateFields);
const UpdateFields = {
  new_name: Type.Optional(Type.String()),
  color: Type.Optional(Type.String()),
  description: Type.Optional(Type.Unsafe<string | null>({ type: ['string', 'null'] })),
};
const ProjectUpdateBody = Type.Object({ ...UpdateFields, priority: Type.Optional(NullableInteger) });
const GroupUpdateBody = Type.Object(UpdateFields);
const DeprecatedUpdateProject = Type.Object({ label_id: Type.Optional(Type.Integer()), name: Type.Optional(Type.String()), ...ProjectUpdateBody.properties });
const DeprecatedUpdateGroup = Type.Object({ label_id: Type.Optional(Type.Integer()), name: Type.Optional(Type.String()), ...GroupUpdateBody.properties });
const DeprecatedDelete = Type.Object({ label_id: Type.Optional(Type.Integer()), name: Type.Optional(Type.String()) });

const PROJECT_UPDATE_KEYS = ['new_name', 'color', 'description', 'priority'];
const GROUP_UPDATE_KEYS = ['new_name', 'color', 'description'];

/** No body is no parameters; `priority` may be blank (allow_blank: true): "" is no priority. */
async function normaliseBody(req: FastifyRequest): Promise<void> {
  if (req.body === undefined || req.body === null) req.body = {};
  const b = req.body as Record<string, unknown>;
  if (b && typeof b === 'object' && b.priority === '') b.priority = null;
}

function atLeastOneOf(body: Record<string, unknown>, keys: string[]): void {
  if (!keys.some((k) => body[k] !== undefined)) throw Errors.param(`${keys.join(', ')} are missing, at least one parameter must be provided`);
}

function exactlyOneOf(body: Record<string, unknown>, keys: string[]): void {
  const given = keys.filter((k) => body[k] !== undefined);
  if (given.length === 0) throw Errors.param(`${keys.join(', ')} are missing, exactly one parameter must be provided`);
  if (given.length > 1) throw Errors.param(`${given.join(', ')} are mutually exclusive`);
}

function updateInput(body: Record<string, unknown>, project: boolean): UpdateLabelInput {
  const out: UpdateLabelInput = {};
  if (body.new_name !== undefined && body.new_name !== null) out.new_name = body.new_name as string;
  if (body.color !== undefined && body.color !== null) out.color = body.color as string;
  if (body.description !== undefined) out.description = body.description as string | null;
  if (project && body.priority !== undefined) out.priority = body.priority as number | null;
  return out;
}

export function labelsRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const labels = c.labels;

  for (const kind of ['projects', 'groups'] as const) {
    const isProject = kind === 'projects';
    const base = `/api/v4/${kind}/:id/labels`;
    const Schema = isProject ? ProjectLabelSchema : GroupLabelSchema;
    const presentRows = async (actor: Actor, parent: LabelParent, rows: LabelRow[], counts?: Map<number, LabelCounts>) => {
      const subscribed = await labels.subscribedIds(
        actor,
        rows.map((r) => r.id),
        parent.type === 'Project' ? parent.project : undefined,
      );
      return rows.map((r) => (isProject ? toProjectLabel : toGroupLabel)(r, counts?.get(r.id), subscribed.has(r.id)));
    };
    const present = async (actor: Actor, parent: LabelParent, row: LabelRow) => (await presentRows(actor, parent, [row]))[0];
    const parentOf = (actor: Actor, id: string): Promise<LabelParent> => (isProject ? labels.projectParent(actor, id) : labels.groupParent(actor, id));
    const updateKeys = isProject ? PROJECT_UPDATE_KEYS : GROUP_UPDATE_KEYS;

    app.get(
      base,
      { config, schema: { tags: TAGS, params: IdParams, querystring: isProject ? ProjectListQuery : GroupListQuery, response: { 200: Type.Array(Schema) } } },
      async (req, reply) => {
        const q = req.query as Record<string, any>;
        const parent = await parentOf(req.actor, req.params.id);
        const query = await labels.listQuery(req.actor, parent, q);
        const page = await offsetPaginate(
          c.db.kysely,
          c.config.externalUrl,
          { path: req.url.split('?')[0], params: linkParams(q, { id: req.params.id }), page: q.page, per_page: q.per_page },
          query,
        );
        reply.headers(page.headers);
        const issueCounts = async () =>
          c.issuesQuery.countsByLabel(
            req.actor,
            page.items.map((l) => l.id),
            parent.type === 'Project' ? parent : undefined,
          );
        const counts = q.with_counts ? await labels.counts(req.actor, page.items, await issueCounts()) : undefined;
        return presentRows(req.actor, parent, page.items, counts);
      },
    );

    app.get(
      `${base}/:label_id`,
      {
        config,
        schema: {
          tags: TAGS,
          params: LabelParams,
          querystring: Type.Object(isProject ? InheritanceProps : GroupInheritanceProps),
          response: { 200: Schema },
        },
      },
      async (req) => {
        const parent = await parentOf(req.actor, req.params.id);
        return present(req.actor, parent, await labels.find(req.actor, parent, req.params.label_id, req.query as Record<string, boolean>));
      },
    );

    app.post(
      base,
      {
        config,
        preValidation: normaliseBody,
        schema: { tags: TAGS, params: IdParams, body: isProject ? ProjectCreateBody : GroupCreateBody, response: { 201: Schema } },
      },
      async (req, reply) => {
        const b = req.body as { name: string; color: string; description?: string | null; priority?: number | null };
        const parent = await parentOf(req.actor, req.params.id);
        const label = await labels.create(req.actor, parent, b);
        return reply.code(201).send(await present(req.actor, parent, label));
      },
    );

    app.put(
      `${base}/:label_id`,
      {
        config,
        preValidation: normaliseBody,
        schema: { tags: TAGS, params: LabelParams, body: isProject ? ProjectUpdateBody : GroupUpdateBody, response: { 200: Schema } },
      },
      async (req) => {
        const b = req.body as Record<string, unknown>;
        atLeastOneOf(b, updateKeys);
        const parent = await parentOf(req.actor, req.params.id);
        return present(req.actor, parent, await labels.update(req.actor, parent, req.params.label_id, updateInput(b, isProject)));
      },
    );

    app.delete(`${base}/:label_id`, { config, schema: { tags: TAGS, params: LabelParams } }, async (req, reply) => {
      const parent = await parentOf(req.actor, req.params.id);
      await labels.remove(req.actor, parent, req.params.label_id, unmodifiedSince(req));
      return reply.code(204).send();
    });

    // lib/api/subscriptions.rb: 201 with the label, 304 when already (un)subscribed.
    for (const action of ['subscribe', 'unsubscribe'] as const) {
      app.post(
        `${base}/:label_id/${action}`,
        { config, schema: { tags: TAGS, params: LabelParams, response: { 201: Schema, 304: Type.Null() } } },
        async (req, reply) => {
          const parent = await parentOf(req.actor, req.params.id);
          const label = await labels.setSubscription(req.actor, parent, req.params.label_id, action === 'subscribe');
          if (!label) return reply.code(304).send(null);
          return reply.code(201).send(await present(req.actor, parent, label));
        },
      );
    }

    // Deprecated (GitLab 12.4): the label named in the body.
    app.put(
      base,
      {
        config,
        preValidation: normaliseBody,
        schema: { tags: TAGS, params: IdParams, body: isProject ? DeprecatedUpdateProject : DeprecatedUpdateGroup, response: { 200: Schema } },
      },
      async (req) => {
        const b = req.body as Record<string, unknown>;
        exactlyOneOf(b, ['label_id', 'name']);
        atLeastOneOf(b, updateKeys);
        const parent = await parentOf(req.actor, req.params.id);
        return present(req.actor, parent, await labels.update(req.actor, parent, String(b.label_id ?? b.name), updateInput(b, isProject)));
      },
    );
    app.delete(base, { config, preValidation: normaliseBody, schema: { tags: TAGS, params: IdParams, body: DeprecatedDelete } }, async (req, reply) => {
      const b = req.body as Record<string, unknown>;
      if (isProject) exactlyOneOf(b, ['label_id', 'name']);
      else if (b.name === undefined) throw Errors.param('name is missing');
      const parent = await parentOf(req.actor, req.params.id);
      await labels.remove(req.actor, parent, String(b.label_id ?? b.name), unmodifiedSince(req));
      return reply.code(204).send();
    });
  }

  app.put(
    '/api/v4/projects/:id/labels/:label_id/promote',
    { config, schema: { tags: TAGS, params: LabelParams, response: { 200: GroupLabelSchema } } },
    async (req) => {
      const parent = await labels.projectParent(req.actor, req.params.id);
      const { label } = await labels.promote(req.actor, parent, req.params.label_id);
      return toGroupLabel(label);
    },
  );
}

/** If-Unmodified-Since (destroy_conditionally!): milliseconds, or undefined. */
function unmodifiedSince(req: FastifyRequest): number | undefined {
  const header = req.headers['if-unmodified-since'];
  const since = typeof header === 'string' ? Date.parse(header) : Number.NaN;
  return Number.isNaN(since) ? undefined : since;
}
