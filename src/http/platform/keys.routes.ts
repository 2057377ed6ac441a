// /user/keys, /users/:id/keys, /keys/:id, /keys?fingerprint=: GitLab's lib/api/users.rb
// SSH key endpoints and lib/api/keys.rb.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import type { Actor } from '../../domain/access/actor.ts';
import { publicProfiles } from '../../domain/access/visibility.ts';
import type { KeyRow, UserRow } from '../../db/schema.ts';
import { KEY_USAGE_TYPES, parseKeyExpiry } from '../../domain/keys/key-validation.ts';
import { InvalidFingerprint, type KeyQuery } from '../../domain/keys/keys.service.ts';
import { Errors } from '../../lib/errors.ts';
import { offsetPaginate } from '../../lib/pagination.ts';
import {
  KeyLookupSchema,
  SshKeySchema,
  SshKeyWithUserSchema,
  toDeployKeysProjectEntity,
  toSshKeyEntity,
  toSshKeyWithUserEntity,
} from './entities/ssh-key.entity.ts';
import { toUserPublic, userViewContext } from './entities/user.entity.ts';
import { IdParams, IntegerUserIdParams, linkParams, PaginationProps, UserIdParams } from './schemas/common.ts';

const TAGS = ['keys'];
const INT_MAX = 2 ** 31 - 1;

const PageQuery = Type.Object(PaginationProps);
/** Grape DateTime: a date or an ISO 8601 time; checked again when parsed. */
const DateTime = Type.String({ pattern: '^\\s*\\d{4}-\\d{2}-\\d{2}([T ][0-9:.]+(Z|[+-]\\d{2}:?\\d{2})?)?\\s*$' });
const CreateBody = Type.Object({
  key: Type.String(),
  title: Type.String(),
  expires_at: Type.Optional(DateTime),
  usage_type: Type.Optional(Type.Unsafe<(typeof KEY_USAGE_TYPES)[number]>({ type: 'string', enum: [...KEY_USAGE_TYPES] })),
});
const KeyIdParams = Type.Object({ key_id: Type.Integer() });
const UserKeyParams = Type.Object({ id: Type.Integer(), key_id: Type.Integer() });

/** Grape: a blank optional DateTime is not given. */
async function normaliseKeyBody(req: FastifyRequest): Promise<void> {
  if (req.body === undefined || req.body === null) req.body = {};
  const b = req.body as Record<string, unknown>;
  if (typeof b !== 'object') return;
  if (b.expires_at === '' || b.expires_at === null) delete b.expires_at;
}

/** destroy_conditionally!: a DELETE that names an older version of the key → 412. */
function checkUnmodifiedSince(req: FastifyRequest, key: KeyRow): void {
  const header = req.headers['if-unmodified-since'];
  if (typeof header !== 'string') return;
  const since = Date.parse(header);
  if (!Number.isNaN(since) && Date.parse(key.updated_at) > since) throw Errors.preconditionFailed();
}

export function keysRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // lib/api/users.rb: `allow_access_with_scope :read_user` for GET and HEAD; writes need api.
  const read = (auth: 'optional' | 'user' | 'admin') => ({ api: 'platform' as const, auth, scopes: ['read_user'] });
  const user = { api: 'platform' as const, auth: 'user' as const };
  const admin = { api: 'platform' as const, auth: 'admin' as const };
  const host = () => c.keys.host;

  /** find_user: by id when the value is all digits, else by username. */
  async function findUser(idOrUsername: string | number): Promise<UserRow | undefined> {
    if (typeof idOrUsername === 'number' || /^\d+$/.test(idOrUsername)) {
      const id = Number(idOrUsername);
      return id >= 1 && id <= INT_MAX ? c.users.byId(id) : undefined;
    }
    return c.users.byUsername(idOrUsername);
  }

  /** can?(current_user, :read_user, user): anyone, unless the public level is restricted (then signed-in users). */
  async function readableUser(actor: Actor, idOrUsername: string | number): Promise<UserRow> {
    const found = await findUser(idOrUsername);
    if (!found) throw Errors.notFound('User');
    if (!publicProfiles(await c.settings.get(), actor)) throw Errors.notFound('User');
    return found;
  }

  /** An administrator's target user (User.find_by(id:) → 404 "User Not Found"). */
  async function targetUser(id: number): Promise<UserRow> {
    return c.users.mustFind(id);
  }

  async function page(reply: FastifyReply, path: string, q: { page?: number; per_page?: number }, query: KeyQuery) {
    const result = await offsetPaginate(
      c.db.kysely,
      c.config.externalUrl,
      { path, params: linkParams(q as Record<string, unknown>), page: q.page, per_page: q.per_page },
      query,
    );
    reply.headers(result.headers);
    return result.items;
  }

  /** Entities::UserPublic of a key's owner (SSHKeyWithUser). */
  async function ownerEntity(userId: number | null) {
    if (userId === null) return null;
    const owner = await c.users.byId(userId);
    if (!owner) return null;
    const ctx = userViewContext(c.config.externalUrl, await c.settings.get());
    return toUserPublic(owner, ctx, (await c.users.identitiesOf([owner.id])).get(owner.id) ?? []);
  }

  async function createFor(actor: Actor, owner: UserRow, body: Record<string, unknown>) {
    if (parseKeyExpiry(body.expires_at) === undefined) throw Errors.param('expires_at is invalid');
    const key = await c.keys.create(actor, owner, body);
    return toSshKeyEntity(key, owner.name, host());
  }

  // ---- the current user's keys -----------------------------------------------------------------

  app.get(
    '/api/v4/user/keys',
    { config: read('user'), schema: { tags: TAGS, querystring: PageQuery, response: { 200: Type.Array(SshKeySchema) } } },
    async (req, reply) => {
      const me = req.actor.user!;
      const rows = await page(reply, '/api/v4/user/keys', req.query, c.keys.listQuery(me.id));
      return rows.map((k) => toSshKeyEntity(k, me.name, host()));
    },
  );

  app.get('/api/v4/user/keys/:key_id', { config: read('user'), schema: { tags: TAGS, params: KeyIdParams, response: { 200: SshKeySchema } } }, async (req) => {
    const me = req.actor.user!;
    return toSshKeyEntity(await c.keys.mustFindOf(me.id, req.params.key_id), me.name, host());
  });

  app.post(
    '/api/v4/user/keys',
    { config: user, preValidation: normaliseKeyBody, schema: { tags: TAGS, body: CreateBody, response: { 201: SshKeySchema } } },
    async (req, reply) => reply.code(201).send(await createFor(req.actor, req.actor.user!, req.body)),
  );

  app.delete('/api/v4/user/keys/:key_id', { config: user, schema: { tags: TAGS, params: KeyIdParams } }, async (req, reply) => {
    const key = await c.keys.mustFindOf(req.actor.user!.id, req.params.key_id);
    checkUnmodifiedSince(req, key);
    await c.keys.remove(req.actor, key);
    return reply.code(204).send();
  });

  // ---- a given user's keys ---------------------------------------------------------------------

  app.get(
    '/api/v4/users/:user_id/keys',
    { config: read('optional'), schema: { tags: TAGS, params: UserIdParams, querystring: PageQuery, response: { 200: Type.Array(SshKeySchema) } } },
    async (req, reply) => {
      const owner = await readableUser(req.actor, req.params.user_id);
      const path = `/api/v4/users/${encodeURIComponent(req.params.user_id)}/keys`;
      const rows = await page(reply, path, req.query, c.keys.listQuery(owner.id));
      return rows.map((k) => toSshKeyEntity(k, owner.name, host()));
    },
  );

  app.get(
    '/api/v4/users/:id/keys/:key_id',
    { config: read('optional'), schema: { tags: TAGS, params: UserKeyParams, response: { 200: SshKeySchema } } },
    async (req) => {
      const owner = await readableUser(req.actor, req.params.id);
      return toSshKeyEntity(await c.keys.mustFindOf(owner.id, req.params.key_id), owner.name, host());
    },
  );

  app.post(
    '/api/v4/users/:user_id/keys',
    {
      config: admin,
      preValidation: normaliseKeyBody,
      schema: { tags: TAGS, params: IntegerUserIdParams, body: CreateBody, response: { 201: SshKeySchema } },
    },
    async (req, reply) => {
      const owner = await targetUser(req.params.user_id);
      return reply.code(201).send(await createFor(req.actor, owner, req.body));
    },
  );

  app.delete('/api/v4/users/:id/keys/:key_id', { config: admin, schema: { tags: TAGS, params: UserKeyParams } }, async (req, reply) => {
    const owner = await targetUser(req.params.id);
    const key = await c.keys.mustFindOf(owner.id, req.params.key_id);
    checkUnmodifiedSince(req, key);
    await c.keys.remove(req.actor, key);
    return reply.code(204).send();
  });

  // ---- lib/api/keys.rb (administrators) --------------------------------------------------------

  app.get('/api/v4/keys/:id', { config: admin, schema: { tags: TAGS, params: IdParams, response: { 200: SshKeyWithUserSchema } } }, async (req) => {
    // Key.find: any key, a deploy key too; ActiveRecord::RecordNotFound → 404 "Not found"
    const key = /^\d+$/.test(req.params.id) ? await c.keys.byId(Number(req.params.id)) : undefined;
    if (!key) throw Errors.recordNotFound();
    return toSshKeyWithUserEntity(key, await ownerEntity(key.user_id), host());
  });

  app.get(
    '/api/v4/keys',
    { config: admin, schema: { tags: TAGS, querystring: Type.Object({ fingerprint: Type.String() }), response: { 200: KeyLookupSchema } } },
    async (req) => {
      let key: KeyRow | undefined;
      try {
        key = await c.keys.byFingerprint(req.query.fingerprint);
      } catch (err) {
        if (err instanceof InvalidFingerprint) throw Errors.raw(400, { message: 'Failed to return the key' });
        throw err;
      }
      if (!key) throw Errors.notFound('Key');
      const entity = toSshKeyWithUserEntity(key, await ownerEntity(key.user_id), host());
      if (key.type !== 'deploy') return entity;
      return { ...entity, deploy_keys_projects: (await c.keys.deployKeyProjects(key.id)).map(toDeployKeysProjectEntity) };
    },
  );
}
