// Member roles (spec "Member roles", reference §11; GitLab ee/lib/api/member_roles.rb): instance roles
// for administrators, group roles for the Owners of a top-level group, and the update of a role's
// name and description (`PUT`, GitLab's naming; the spec says it exists without showing it).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type TOptional, type TBoolean } from 'typebox';
import type { Container } from '../../container.ts';
import type { Actor } from '../../domain/access/actor.ts';
import { CUSTOM_PERMISSIONS, MEMBER_ACCESS_LEVELS, type CustomPermission } from '../../domain/core/roles.ts';
import type { RoleScope } from '../../domain/member-roles/member-roles.service.ts';
import { Errors } from '../../lib/errors.ts';
import { MemberRoleSchema, toMemberRole } from './entities/member-role.entity.ts';
import { IdParams } from './schemas/common.ts';

const TAGS = ['member_roles'];

const permissionProps = Object.fromEntries(CUSTOM_PERMISSIONS.map((p) => [p, Type.Optional(Type.Boolean({ default: false }))])) as Record<
  CustomPermission,
  TOptional<TBoolean>
>;

// Grape: `requires 'base_access_level', type: Integer, values: Gitlab::Access.all_values` — missing →
// "is missing", not an integer → "is invalid", another integer → "does not have a valid value".
const CreateBody = Type.Object({
  name: Type.String(),
  description: Type.Optional(Type.String()),
  base_access_level: Type.Unsafe<number>({ type: 'integer', enum: [...MEMBER_ACCESS_LEVELS] }),
  ...permissionProps,
});
const UpdateBody = Type.Object({ name: Type.Optional(Type.String()), description: Type.Optional(Type.String()) });
const RoleParams = Type.Object({ member_role_id: Type.Integer() });
const GroupRoleParams = Type.Object({ id: Type.String(), member_role_id: Type.Integer() });

export function memberRolesRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const roles = c.memberRoles;
  const admin = { api: 'platform' as const, auth: 'admin' as const };
  const user = { api: 'platform' as const, auth: 'user' as const };
  const instance: RoleScope = { kind: 'instance' };
  const groupScope = async (actor: Actor, id: string): Promise<RoleScope> => ({ kind: 'group', ...(await c.resolve.group(actor, id)) });

  const createInput = (b: Record<string, unknown> & { name: string; description?: string; base_access_level: number }) => ({
    name: b.name,
    description: b.description,
    base_access_level: b.base_access_level,
    permissions: Object.fromEntries(CUSTOM_PERMISSIONS.map((p) => [p, b[p] === true])),
  });
  const updateInput = (b: { name?: string; description?: string }) => {
    if (b.name === undefined && b.description === undefined) throw Errors.param('name, description are missing, at least one parameter must be provided');
    return b;
  };

  // ---- instance ----------------------------------------------------------------------------

  app.get('/api/v4/member_roles', { config: admin, schema: { tags: TAGS, response: { 200: Type.Array(MemberRoleSchema) } } }, async () =>
    (await roles.list(instance)).map(toMemberRole),
  );

  app.post('/api/v4/member_roles', { config: admin, schema: { tags: TAGS, body: CreateBody, response: { 201: MemberRoleSchema } } }, async (req, reply) =>
    reply.code(201).send(toMemberRole(await roles.create(instance, createInput(req.body)))),
  );

  app.put(
    '/api/v4/member_roles/:member_role_id',
    { config: admin, schema: { tags: TAGS, params: RoleParams, body: UpdateBody, response: { 200: MemberRoleSchema } } },
    async (req) => toMemberRole(await roles.update(instance, req.params.member_role_id, updateInput(req.body))),
  );

  app.delete('/api/v4/member_roles/:member_role_id', { config: admin, schema: { tags: TAGS, params: RoleParams } }, async (req, reply) => {
    await roles.remove(instance, req.params.member_role_id);
    return reply.code(204).send();
  });

  // ---- group -------------------------------------------------------------------------------

  app.get(
    '/api/v4/groups/:id/member_roles',
    { config: user, schema: { tags: TAGS, params: IdParams, response: { 200: Type.Array(MemberRoleSchema) } } },
    async (req) => (await roles.list(await groupScope(req.actor, req.params.id))).map(toMemberRole),
  );

  app.post(
    '/api/v4/groups/:id/member_roles',
    { config: user, schema: { tags: TAGS, params: IdParams, body: CreateBody, response: { 201: MemberRoleSchema } } },
    async (req, reply) => reply.code(201).send(toMemberRole(await roles.create(await groupScope(req.actor, req.params.id), createInput(req.body)))),
  );

  app.put(
    '/api/v4/groups/:id/member_roles/:member_role_id',
    { config: user, schema: { tags: TAGS, params: GroupRoleParams, body: UpdateBody, response: { 200: MemberRoleSchema } } },
    async (req) => toMemberRole(await roles.update(await groupScope(req.actor, req.params.id), req.params.member_role_id, updateInput(req.body))),
  );

  app.delete('/api/v4/groups/:id/member_roles/:member_role_id', { config: user, schema: { tags: TAGS, params: GroupRoleParams } }, async (req, reply) => {
    await roles.remove(await groupScope(req.actor, req.params.id), req.params.member_role_id);
    return reply.code(204).send();
  });
}
