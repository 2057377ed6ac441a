// Custom attributes of users, projects and groups (GitLab lib/api/custom_attributes_endpoints.rb):
// the same four endpoints on each. The owner is found first (a bare 404 when there is none, whoever
// asks), then only administrators may go on (403).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import type { Actor } from '../../domain/access/actor.ts';
import type { AttributeOwnerKind } from '../../domain/custom-attributes/custom-attributes.service.ts';
import { isInt32 } from '../../db/sql.ts';
import { Errors } from '../../lib/errors.ts';
import { CustomAttributeSchema } from './entities/user.entity.ts';
import { IdParams } from './schemas/common.ts';

const SetBody = Type.Object({ value: Type.String() });

/** find_user / find_project / find_group of lib/api/helpers.rb: no visibility check, a bare 404 when missing. */
async function findOwner(c: Container, kind: AttributeOwnerKind, id: string): Promise<number> {
  if (kind === 'user') {
    const user = /^\d+$/.test(id) && isInt32(Number(id)) ? await c.users.byId(Number(id)) : undefined;
    if (user) return user.id;
  } else if (kind === 'project') {
    let found = await c.resolve.findProjectRow(id);
    if (found && 'moved' in found) found = await c.resolve.findProjectRow(found.moved);
    if (found && 'project' in found) return found.project.id;
  } else {
    let found = await c.resolve.findGroupRow(id);
    if (found && 'moved' in found) found = await c.resolve.findGroupRow(found.moved);
    if (found && 'id' in found) return found.id;
  }
  throw Errors.notFound();
}

function requireAdmin(actor: Actor): void {
  if (!actor.isAdmin) throw Errors.forbidden();
}

/** The four endpoints under `base` (`/api/v4/users/:id(^\\d+$)`, `/api/v4/projects/:id`, `/api/v4/groups/:id`). */
function attributeRoutes(fastify: FastifyInstance, c: Container, kind: AttributeOwnerKind, base: string, readScopes: string[]): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['custom_attributes'];
  const read = { api: 'platform' as const, auth: 'user' as const, scopes: readScopes };
  const write = { api: 'platform' as const, auth: 'user' as const };
  const KeyParams = Type.Object({ id: Type.String(), key: Type.String() });
  const attrs = c.customAttributes;

  app.get(
    `${base}/custom_attributes`,
    { config: read, schema: { tags, params: IdParams, response: { 200: Type.Array(CustomAttributeSchema) } } },
    async (req) => {
      const owner = await findOwner(c, kind, req.params.id);
      requireAdmin(req.actor);
      return attrs.list(kind, owner);
    },
  );
  app.get(`${base}/custom_attributes/:key`, { config: read, schema: { tags, params: KeyParams, response: { 200: CustomAttributeSchema } } }, async (req) => {
    const owner = await findOwner(c, kind, req.params.id);
    requireAdmin(req.actor);
    return attrs.get(kind, owner, req.params.key);
  });
  app.put(
    `${base}/custom_attributes/:key`,
    { config: write, schema: { tags, params: KeyParams, body: SetBody, response: { 200: CustomAttributeSchema } } },
    async (req) => {
      const owner = await findOwner(c, kind, req.params.id);
      requireAdmin(req.actor);
      return attrs.set(kind, owner, req.params.key, req.body.value);
    },
  );
  app.delete(`${base}/custom_attributes/:key`, { config: write, schema: { tags, params: KeyParams } }, async (req, reply) => {
    const owner = await findOwner(c, kind, req.params.id);
    requireAdmin(req.actor);
    await attrs.remove(kind, owner, req.params.key);
    return reply.code(204).send();
  });
}

export function customAttributesRoutes(fastify: FastifyInstance, c: Container): void {
  // lib/api/users.rb allows read_user for GET and HEAD
  attributeRoutes(fastify, c, 'user', '/api/v4/users/:id(^\\d+$)', ['read_user']);
  attributeRoutes(fastify, c, 'project', '/api/v4/projects/:id', []);
  attributeRoutes(fastify, c, 'group', '/api/v4/groups/:id', []);
}
