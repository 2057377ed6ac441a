// Users API (spec "Users", reference §9; GitLab lib/api/users.rb and custom_attributes_endpoints.rb):
// lists with every filter, offset and cursor pagination, single users, the current user, and the
// administrator's writes (create, update, delete, state changes, custom attributes).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import type { Container } from '../../container.ts';
import type { Actor } from '../../domain/access/actor.ts';
import type { SelectQueryBuilder } from 'kysely';
import type { Database, UserRow } from '../../db/schema.ts';
import { ADMIN_ONLY_LIST_PARAMS } from '../../domain/users/users.service.ts';
import { personalNamespaceIds } from '../../domain/users/personal-namespace.ts';
import { USER_ORDER_COLUMNS, afterCursor, parseUserCursor, userCursor, type UserOrder } from '../../domain/users/users-query.ts';
import { BASIC_COLUMNS, VIEW_COLUMNS, type UserViewRow } from '../../domain/core/user-columns.ts';
import { Errors } from '../../lib/errors.ts';
import { keysetHeaders, offsetPaginate, pageParams, type PageRequest } from '../../lib/pagination.ts';
import {
  UserAdminSchema,
  UserAnySchema,
  toUser,
  toUserAdmin,
  toUserBasic,
  toUserPublic,
  userViewContext,
  type UserAdminEntity,
  type UserViewContext,
} from './entities/user.entity.ts';
import { dateTimeParam, Enum, GRAPE_FALSE, GRAPE_TRUE, IntegerIdParams, linkParams, NullableBoolean, PaginationProps, TOKEN_PARAMS } from './schemas/common.ts';
import { avatarFile } from './schemas/avatar-file.ts';

const TAGS = ['users'];
/** GitLab's `requirements: { id: /[0-9]*\/ }`: any other id is an unknown route (404 {"error":"404 Not Found"}). */
const USER = '/api/v4/users/:id(^\\d+$)';
/** Offset pagination of users stops here (reference §1.1); beyond it only keyset works. */
const OFFSET_LIMIT = { limit: 50_000, type: 'User' };
/** Left out of a non-administrator's Link URLs with the tokens: the parameters GitLab removes for them. `sudo` stays. */
const NOT_FOR_NON_ADMINS: ReadonlySet<string> = new Set([...TOKEN_PARAMS, ...ADMIN_ONLY_LIST_PARAMS]);

const Bool = (def: boolean) => Type.Optional(Type.Boolean({ default: def }));

const ListQuery = Type.Object({
  ...PaginationProps,
  username: Type.Optional(Type.String()),
  extern_uid: Type.Optional(Type.String()),
  provider: Type.Optional(Type.String()),
  search: Type.Optional(Type.String()),
  active: Bool(false),
  external: Bool(false),
  exclude_external: Bool(false),
  blocked: Bool(false),
  created_after: Type.Optional(Type.String()),
  created_before: Type.Optional(Type.String()),
  without_projects: Bool(false),
  exclude_internal: Bool(false),
  without_project_bots: Bool(false),
  admins: Bool(false),
  two_factor: Type.Optional(Type.String()),
  order_by: Enum(USER_ORDER_COLUMNS, 'id'),
  sort: Enum(['asc', 'desc'] as const, 'desc'),
  with_custom_attributes: Bool(false),
  custom_attributes: Type.Optional(Type.Record(Type.String(), Type.String())),
  pagination: Type.Optional(Type.String()),
  cursor: Type.Optional(Type.String()),
});

const WithCustomAttributes = Type.Object({ with_custom_attributes: Bool(false) });

/** `optional_attributes` of POST and PUT /users. */
const attributeProps = {
  password: Type.Optional(Type.String()),
  admin: Type.Optional(Type.Boolean()),
  external: Type.Optional(Type.Boolean()),
  // null (or blank in a form) means "the instance default", user_defaults_to_private_profile.
  private_profile: Type.Optional(NullableBoolean),
  projects_limit: Type.Optional(Type.Integer({ 'x-int32': false })), // the model says "must be less than or equal to 2147483647"
  can_create_group: Type.Optional(Type.Boolean()),
  bio: Type.Optional(Type.String()),
  location: Type.Optional(Type.String()),
  public_email: Type.Optional(Type.String()),
  commit_email: Type.Optional(Type.String()),
  job_title: Type.Optional(Type.String()),
  pronouns: Type.Optional(Type.String()),
  website_url: Type.Optional(Type.String()),
  organization: Type.Optional(Type.String()),
  note: Type.Optional(Type.String()),
  theme_id: Type.Optional(Type.Integer()),
  color_scheme_id: Type.Optional(Type.Integer()),
  messenger_a: Type.Optional(Type.String()),
  network_a: Type.Optional(Type.String()),
  network_b: Type.Optional(Type.String()),
  chat_a: Type.Optional(Type.String()),
  extern_uid: Type.Optional(Type.String()),
  provider: Type.Optional(Type.String()),
  avatar: Type.Optional(Type.Unknown()),
};

// Declaration order is Grape's, so several missing fields are reported in GitLab's order.
const CreateBody = Type.Object({
  email: Type.String(),
  reset_password: Type.Optional(Type.Boolean()),
  skip_confirmation: Type.Optional(Type.Boolean()),
  name: Type.String(),
  username: Type.String(),
  force_random_password: Type.Optional(Type.Boolean()),
  ...attributeProps,
});

const UpdateBody = Type.Object({
  email: Type.Optional(Type.String()),
  skip_reconfirmation: Type.Optional(Type.Boolean()),
  name: Type.Optional(Type.String()),
  username: Type.Optional(Type.String()),
  ...attributeProps,
});

/** What a user list is made of (the response cache keys on their versions). */
const LIST_TABLES = ['users', 'identities', 'user_custom_attributes', 'application_settings'] as const;
const PROJECT_TABLES = ['projects', 'namespaces', 'members'] as const;

const DeleteQuery = Type.Object({ hard_delete: Type.Optional(Type.Boolean()) });
/** The state-change endpoints answer true, false or null (GitLab's `break`). */
const StateChangeResult = Type.Unsafe<boolean | null>({ type: ['boolean', 'null'] });

/**
 * private_profile is a nullable Boolean, which the shared Boolean coercion leaves alone: Grape's
 * words for true and false, and a blank form value for null (the instance default).
 */
async function coercePrivateProfile(req: FastifyRequest): Promise<void> {
  const body = req.body as Record<string, unknown> | undefined;
  const pp = body?.private_profile;
  if (typeof pp !== 'string') return;
  const l = pp.toLowerCase();
  body!.private_profile = l === '' ? null : GRAPE_TRUE.has(l) ? true : GRAPE_FALSE.has(l) ? false : pp;
}

function allOrNone(p: { extern_uid?: string; provider?: string }): void {
  if ((p.extern_uid === undefined) !== (p.provider === undefined)) throw Errors.param('extern_uid, provider provide all or none of parameters');
}

function sendJsonLiteral(reply: FastifyReply, status: number, value: boolean | null): FastifyReply {
  return reply.code(status).type('application/json').send(JSON.stringify(value));
}

export function usersRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // lib/api/users.rb: `allow_access_with_scope :read_user` for GET and HEAD.
  const read = (auth: 'optional' | 'user' | 'admin') => ({ api: 'platform' as const, auth, scopes: ['read_user'] });
  const admin = { api: 'platform' as const, auth: 'admin' as const };

  const viewContext = async (): Promise<UserViewContext> => userViewContext(c.config.externalUrl, await c.settings.get());

  /** Administrator shapes for a page of users: identities, creators and custom attributes in one query each. */
  async function adminEntities(rows: UserViewRow[], ctx: UserViewContext, withCustomAttributes: boolean): Promise<UserAdminEntity[]> {
    const ids = rows.map((r) => r.id);
    const creatorIds = rows.flatMap((r) => (r.created_by_id === null ? [] : [r.created_by_id]));
    // The personal namespace is created with the user and never changes, so the list cache need not track it.
    const [identities, creators, attributes, namespaceIds] = await Promise.all([
      c.users.identitiesOf(ids),
      c.users.basicByIds(creatorIds),
      withCustomAttributes ? c.customAttributes.listMany('user', ids) : null,
      personalNamespaceIds(c.db.kysely, ids),
    ]);
    return rows.map((r) =>
      toUserAdmin(r, ctx, {
        identities: identities.get(r.id) ?? [],
        namespaceId: namespaceIds.get(r.id) ?? null,
        createdBy: r.created_by_id === null ? null : (creators.get(r.created_by_id) ?? null),
        customAttributes: attributes ? (attributes.get(r.id) ?? []) : undefined,
      }),
    );
  }

  const adminEntity = async (row: UserViewRow, withCustomAttributes = false): Promise<UserAdminEntity> =>
    (await adminEntities([row], await viewContext(), withCustomAttributes))[0];

  // ---- reads -------------------------------------------------------------------------------

  app.get(
    '/api/v4/users',
    { config: read('optional'), schema: { tags: TAGS, querystring: ListQuery, response: { 200: Type.Array(UserAnySchema) } } },
    async (req, reply) => {
      const q = req.query;
      allOrNone(q);
      // Non-administrators all see the same list; administrators their own shape of it.
      const viewer = req.actor.isAdmin ? 'admin' : req.actor.user ? 'user' : 'anonymous';
      // without_projects reads memberships and projects too.
      const tables = q.without_projects && req.actor.isAdmin ? [...LIST_TABLES, ...PROJECT_TABLES] : LIST_TABLES;
      return app.cachedResponse(req, reply, { tables, viewer }, () => listUsers(req.actor, q, reply));
    },
  );

  const listUsers = async (actor: Actor, q: Static<typeof ListQuery>, reply: FastifyReply) => {
    {
      const list = c.users.list(actor, {
        ...q,
        created_after: dateTimeParam(q.created_after, 'created_after'),
        created_before: dateTimeParam(q.created_before, 'created_before'),
      });
      const params = linkParams(q, {}, list.admin ? TOKEN_PARAMS : NOT_FOR_NON_ADMINS);
      const pageReq = { path: '/api/v4/users', params, page: q.page, per_page: q.per_page };

      const ctx = await viewContext();
      if (q.pagination === 'keyset' && !list.order) throw Errors.raw(405, { error: 'Keyset pagination is not yet available for this type of request' });
      // Two paths so that non-administrators' lists read only the columns their shape shows.
      if (list.admin) {
        const rows = await fetchPage(list.query.select([...VIEW_COLUMNS]), list.order, q, pageReq, reply, c);
        return adminEntities(rows, ctx, list.withCustomAttributes);
      }
      const rows = await fetchPage(list.query.select([...BASIC_COLUMNS]), list.order, q, pageReq, reply, c);
      return rows.map((r) => toUserBasic(r, ctx));
    }
  };

  app.get(
    USER,
    { config: read('optional'), schema: { tags: TAGS, params: IntegerIdParams, querystring: WithCustomAttributes, response: { 200: UserAnySchema } } },
    async (req) => {
      const actor = req.actor;
      const user = await c.users.findForViewer(actor, req.params.id);
      if (actor.isAdmin) return adminEntity(user, !!req.query.with_custom_attributes);
      // read_user_profile: public profiles, and one's own.
      return toUser(user, await viewContext(), user.private_profile === 0 || user.id === actor.user!.id);
    },
  );

  app.get('/api/v4/user', { config: read('user'), schema: { tags: TAGS, response: { 200: UserAnySchema } } }, async (req) => {
    const me = req.actor.user!;
    // GitLab checks `current_user.admin?` here, not admin mode.
    if (me.is_admin === 1) return adminEntity(me);
    return toUserPublic(me, await viewContext(), (await c.users.identitiesOf([me.id])).get(me.id) ?? []);
  });

  // ---- administrator writes ----------------------------------------------------------------

  app.post(
    '/api/v4/users',
    { config: admin, preValidation: coercePrivateProfile, schema: { tags: TAGS, body: CreateBody, response: { 201: UserAdminSchema } } },
    async (req, reply) => {
      const b = req.body;
      if (b.password === undefined && b.reset_password === undefined && b.force_random_password === undefined) {
        throw Errors.param('password, reset_password, force_random_password are missing, at least one parameter must be provided');
      }
      allOrNone(b);
      const avatar = avatarFile(b.avatar);
      c.avatars.check(avatar);
      let user = await c.users.createByAdmin(req.actor, b);
      if (avatar) user = { ...user, avatar_url: await c.avatars.save('user', user.id, avatar) };
      return reply.code(201).send(await adminEntity(user));
    },
  );

  app.put(
    USER,
    {
      config: admin,
      preValidation: coercePrivateProfile,
      schema: { tags: TAGS, params: IntegerIdParams, body: UpdateBody, response: { 200: UserAdminSchema } },
    },
    async (req) => {
      const b = req.body;
      allOrNone(b);
      const avatar = avatarFile(b.avatar);
      c.avatars.check(avatar);
      let user = await c.users.update(req.actor, req.params.id, b);
      if (avatar) user = { ...user, avatar_url: await c.avatars.save('user', user.id, avatar) };
      return adminEntity(user);
    },
  );

  app.delete(USER, { config: admin, schema: { tags: TAGS, params: IntegerIdParams, querystring: DeleteQuery } }, async (req, reply) => {
    const user = await c.users.mustFind(req.params.id);
    checkUnmodifiedSince(req, user);
    await c.users.remove(req.actor, user);
    return reply.code(204).send();
  });

  const stateChange = (action: string, run: (actor: Actor, id: number) => Promise<boolean | null>) =>
    app.post(
      `${USER}/${action}`,
      { config: admin, schema: { tags: TAGS, params: IntegerIdParams, response: { 201: StateChangeResult } } },
      async (req, reply) => sendJsonLiteral(reply, 201, await run(req.actor, req.params.id)),
    );
  stateChange('block', (actor, id) => c.users.block(actor, id));
  stateChange('unblock', (actor, id) => c.users.unblock(actor, id));
  stateChange('deactivate', (actor, id) => c.users.deactivate(actor, id));
  stateChange('activate', (actor, id) => c.users.activate(actor, id));
  stateChange('ban', (actor, id) => c.users.ban(actor, id, 'ban'));
  stateChange('unban', (actor, id) => c.users.ban(actor, id, 'unban'));

  app.delete(
    `${USER}/identities/:provider`,
    { config: admin, schema: { tags: TAGS, params: Type.Object({ id: Type.Integer(), provider: Type.String() }) } },
    async (req, reply) => {
      await c.users.removeIdentity(req.actor, req.params.id, req.params.provider);
      return reply.code(204).send();
    },
  );
  // Custom attributes: custom-attributes.routes.ts (shared with projects and groups).
}

/** One page by cursor (pagination=keyset: Link rel="next" only) or by offset (X-* headers, 405 past 50,000). */
async function fetchPage<R extends Pick<UserRow, 'id' | 'username' | 'name' | 'created_at' | 'updated_at'>>(
  query: SelectQueryBuilder<Database, 'users', R>,
  order: UserOrder | null,
  q: { pagination?: string; cursor?: string },
  pageReq: PageRequest,
  reply: FastifyReply,
  c: Container,
): Promise<R[]> {
  if (q.pagination === 'keyset' && order) {
    const { perPage } = pageParams(pageReq);
    if (q.cursor !== undefined) {
      const at = parseUserCursor(q.cursor, order);
      if (!at) throw Errors.param('cursor is invalid');
      query = afterCursor(query, order, at);
    }
    const found = await query.limit(perPage + 1).execute();
    const rows = found.slice(0, perPage);
    const next = found.length > perPage ? userCursor(rows[rows.length - 1], order) : null;
    reply.headers(keysetHeaders(c.config.externalUrl, pageReq, next));
    return rows;
  }
  const page = await offsetPaginate(c.db.kysely, c.config.externalUrl, pageReq, query, { offsetLimit: OFFSET_LIMIT });
  reply.headers(page.headers);
  return page.items;
}

/** GitLab's check_unmodified_since!: a DELETE that names an older version of the record → 412. */
function checkUnmodifiedSince(req: FastifyRequest, user: UserRow): void {
  const header = req.headers['if-unmodified-since'];
  if (typeof header !== 'string') return;
  const since = Date.parse(header);
  if (!Number.isNaN(since) && Date.parse(user.updated_at) > since) throw Errors.preconditionFailed();
}
