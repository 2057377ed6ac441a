// Members of projects and groups (GitLab lib/api/members.rb and its helpers): the same endpoints under
// /projects/:id and /groups/:id. Every endpoint needs a signed-in user (`before { authenticate! }`).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import type { Actor } from '../../domain/access/actor.ts';
import type { MemberSource, MemberView } from '../../domain/members/members.service.ts';
import { Errors } from '../../lib/errors.ts';
import { offsetPaginate } from '../../lib/pagination.ts';
import { MemberSchema, toMember, type MemberEntity } from './entities/member.entity.ts';
import { userViewContext } from './entities/user.entity.ts';
import { send } from '../plugins/errors.ts';
import { IdParams, linkParams, NullableInteger, PaginationProps } from './schemas/common.ts';

const TAGS = ['members'];
const INTEGER_LISTS = ['user_ids', 'skip_users'];

const MemberParams = Type.Object({ id: Type.String(), user_id: Type.Integer() });

const ListQuery = Type.Object({
  query: Type.Optional(Type.String()),
  user_ids: Type.Optional(Type.Array(Type.Integer())),
  skip_users: Type.Optional(Type.Array(Type.Integer())),
  show_seat_info: Type.Optional(Type.Boolean()),
  ...PaginationProps,
});
const AllQuery = Type.Object({
  query: Type.Optional(Type.String()),
  user_ids: Type.Optional(Type.Array(Type.Integer())),
  show_seat_info: Type.Optional(Type.Boolean()),
  ...PaginationProps,
});

// Declared in Grape's order, so that several problems are reported as GitLab lists them.
const CreateBody = Type.Object({
  access_level: Type.Integer(),
  user_id: Type.Optional(Type.Union([Type.Integer(), Type.String()])),
  username: Type.Optional(Type.String()),
  expires_at: Type.Optional(Type.Unsafe<string | null>({ type: ['string', 'null'] })),
  invite_source: Type.Optional(Type.String()),
  member_role_id: Type.Optional(NullableInteger),
});
const UpdateBody = Type.Object({
  access_level: Type.Integer(),
  expires_at: Type.Optional(Type.Unsafe<string | null>({ type: ['string', 'null'] })),
  member_role_id: Type.Optional(NullableInteger),
});
const DeleteQuery = Type.Object({
  skip_subresources: Type.Optional(Type.Boolean({ default: false })),
  unassign_issuables: Type.Optional(Type.Boolean({ default: false })),
});

/** Grape's CommaSeparatedToIntegerArray: `user_ids=1,2` as well as `user_ids[]=1&user_ids[]=2`. */
async function splitIntegerLists(req: FastifyRequest): Promise<void> {
  const q = req.query as Record<string, unknown>;
  for (const key of INTEGER_LISTS) {
    const v = q[key];
    if (v === undefined) continue;
    const items = (Array.isArray(v) ? v : [v]).flatMap((x) => (typeof x === 'string' ? (x === '' ? [] : x.split(',')) : [x]));
    if (!items.every((x) => typeof x === 'string' && /^\s*-?\d+\s*$/.test(x))) throw Errors.param(`${key} is invalid`);
    q[key] = items;
  }
}

export function membersRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const members = c.members;
  const config = { api: 'platform' as const, auth: 'user' as const };

  const entities = async (actor: Actor, views: MemberView[]): Promise<MemberEntity[]> => {
    const ctx = { user: userViewContext(c.config.externalUrl, await c.settings.get()), admin: actor.isAdmin };
    return views.map((v) => toMember(v, ctx));
  };
  const entity = async (actor: Actor, view: MemberView): Promise<MemberEntity> => (await entities(actor, [view]))[0];

  for (const kind of ['projects', 'groups'] as const) {
    const base = `/api/v4/${kind}/:id/members`;
    const source = async (actor: Actor, id: string): Promise<MemberSource> =>
      kind === 'projects' ? { type: 'Project', ...(await c.resolve.project(actor, id)) } : { type: 'Group', ...(await c.resolve.group(actor, id)) };

    for (const deep of [false, true]) {
      app.get(
        deep ? `${base}/all` : base,
        {
          config,
          preValidation: splitIntegerLists,
          schema: { tags: TAGS, params: IdParams, querystring: deep ? AllQuery : ListQuery, response: { 200: Type.Array(MemberSchema) } },
        },
        async (req, reply) => {
          const q = req.query as { query?: string; user_ids?: number[]; skip_users?: number[]; page?: number; per_page?: number };
          const query = members.list(await source(req.actor, req.params.id), { deep, query: q.query, user_ids: q.user_ids, skip_users: q.skip_users });
          const page = await offsetPaginate(
            c.db.kysely,
            c.config.externalUrl,
            { path: req.url.split('?')[0], params: linkParams(req.query, { id: req.params.id }), page: q.page, per_page: q.per_page },
            query,
          );
          reply.headers(page.headers);
          return entities(req.actor, await members.viewsOfRows(page.items));
        },
      );
      app.get(
        deep ? `${base}/all/:user_id` : `${base}/:user_id`,
        { config, schema: { tags: TAGS, params: MemberParams, response: { 200: MemberSchema } } },
        async (req) => entity(req.actor, await members.get(await source(req.actor, req.params.id), req.params.user_id, deep)),
      );
    }

    app.post(base, { config, schema: { tags: TAGS, params: IdParams, body: CreateBody, response: { 201: MemberSchema } } }, async (req, reply) => {
      const b = req.body;
      const result = await members.add(req.actor, await source(req.actor, req.params.id), {
        access_level: b.access_level,
        user_id: b.user_id === undefined ? undefined : String(b.user_id),
        username: b.username,
        expires_at: b.expires_at,
        member_role_id: b.member_role_id,
      });
      // Several users: GitLab answers with the service's own result, still 201.
      if (result.kind === 'bulk') return send(reply, 201, result.body);
      return reply.code(201).send(await entity(req.actor, result.view));
    });

    app.put(`${base}/:user_id`, { config, schema: { tags: TAGS, params: MemberParams, body: UpdateBody, response: { 200: MemberSchema } } }, async (req) => {
      const view = await members.update(req.actor, await source(req.actor, req.params.id), req.params.user_id, req.body);
      return entity(req.actor, view);
    });

    app.delete(`${base}/:user_id`, { config, schema: { tags: TAGS, params: MemberParams, querystring: DeleteQuery } }, async (req, reply) => {
      const header = req.headers['if-unmodified-since'];
      const since = typeof header === 'string' ? Date.parse(header) : NaN;
      await members.remove(req.actor, await source(req.actor, req.params.id), req.params.user_id, {
        skipSubresources: req.query.skip_subresources === true,
        unmodifiedSince: Number.isNaN(since) ? undefined : since,
      });
      return reply.code(204).send();
    });
  }
}
