// CI/CD variables: /projects/:id/variables, /groups/:id/variables (GitLab lib/api/ci/variables.rb,
// group_variables.rb) and /admin/ci/variables (instance_variables.rb). The same five endpoints on each owner;
// only those who administer the owner's variables reach them (Maintainers of the project or group,
// administrators for the instance). Bodies never reach the log (the logger writes no bodies).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Container } from '../../../container.ts';
import type { Actor } from '../../../domain/access/actor.ts';
import { VARIABLE_TYPES, type VariableOwner, type VariableView } from '../../../domain/ci/variables/variables.service.ts';
import { paginateArray } from '../../../lib/pagination.ts';
import { Enum, IdParams, linkParams, NullableString, PaginationProps } from '../schemas/common.ts';

const TAGS = ['variables'];

const VariableSchema = Type.Object({
  variable_type: Type.String(),
  key: Type.String(),
  value: NullableString,
  hidden: Type.Boolean(),
  protected: Type.Boolean(),
  masked: Type.Boolean(),
  raw: Type.Boolean(),
  environment_scope: Type.String(),
  description: NullableString,
});
/** Entities::Ci::Variable of an instance variable: no scope, never hidden */
const InstanceVariableSchema = Type.Object({
  variable_type: Type.String(),
  key: Type.String(),
  value: NullableString,
  protected: Type.Boolean(),
  masked: Type.Boolean(),
  raw: Type.Boolean(),
  description: NullableString,
});

const Attributes = {
  value: Type.Optional(Type.String()),
  protected: Type.Optional(Type.Boolean()),
  masked: Type.Optional(Type.Boolean()),
  raw: Type.Optional(Type.Boolean()),
  variable_type: Type.Optional(Enum(VARIABLE_TYPES)),
  environment_scope: Type.Optional(Type.String()),
  description: Type.Optional(Type.Union([Type.Null(), Type.String()])),
};
const CreateBody = Type.Object({ ...Attributes, key: Type.String(), value: Type.String(), masked_and_hidden: Type.Optional(Type.Boolean()) });
const Filter = Type.Optional(Type.Object({ environment_scope: Type.Optional(Type.String()) }));
// a client that read a hidden variable sends its value back as null: no new value
const UpdateBody = Type.Object({
  ...Attributes,
  value: Type.Optional(Type.Union([Type.Null(), Type.String()])),
  key: Type.Optional(Type.String()),
  filter: Filter,
});
const KeyParams = Type.Object({ id: Type.String(), key: Type.String() });
const AdminKeyParams = Type.Object({ key: Type.String() });
const FilterQuery = Type.Object({ filter: Filter, 'filter[environment_scope]': Type.Optional(Type.String()) });

/** `filter[environment_scope]` as a nested parameter of the query or the body */
function scopeFilter(req: FastifyRequest): string | undefined {
  const q = req.query as Record<string, unknown> | undefined;
  const b = (req.body ?? {}) as Record<string, unknown>;
  const nested = (v: unknown) => (v && typeof v === 'object' ? (v as { environment_scope?: unknown }).environment_scope : undefined);
  const found = nested(b.filter) ?? b['filter[environment_scope]'] ?? nested(q?.filter) ?? q?.['filter[environment_scope]'];
  return typeof found === 'string' ? found : undefined;
}

const instanceEntity = ({ hidden: _h, environment_scope: _s, ...v }: VariableView) => v;

export function variablesRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const svc = c.ci.variables;
  const user = { api: 'platform' as const, auth: 'user' as const };
  const admin = { api: 'platform' as const, auth: 'admin' as const };

  /** the same five endpoints under `base`, the owner found per request */
  function ownerRoutes(base: string, owner: (actor: Actor, id: string) => Promise<VariableOwner>): void {
    app.get(
      `${base}/variables`,
      { config: user, schema: { tags: TAGS, params: IdParams, querystring: Type.Object(PaginationProps), response: { 200: Type.Array(VariableSchema) } } },
      async (req, reply) => {
        const all = await svc.list(await owner(req.actor, req.params.id));
        const q = req.query;
        const page = paginateArray(c.config.externalUrl, { path: req.url.split('?')[0], params: linkParams(q, req.params), ...q }, all);
        reply.headers(page.headers);
        return page.items;
      },
    );
    app.get(
      `${base}/variables/:key`,
      { config: user, schema: { tags: TAGS, params: KeyParams, querystring: FilterQuery, response: { 200: VariableSchema } } },
      async (req) => svc.get(await owner(req.actor, req.params.id), req.params.key, scopeFilter(req)),
    );
    app.post(
      `${base}/variables`,
      { config: user, schema: { tags: TAGS, params: IdParams, body: CreateBody, response: { 201: VariableSchema } } },
      async (req, reply) => reply.code(201).send(await svc.create(await owner(req.actor, req.params.id), req.body)),
    );
    app.put(
      `${base}/variables/:key`,
      { config: user, schema: { tags: TAGS, params: KeyParams, body: UpdateBody, response: { 200: VariableSchema } } },
      async (req) => {
        const { key: _key, filter: _filter, value, ...input } = req.body;
        return svc.update(await owner(req.actor, req.params.id), req.params.key, scopeFilter(req), { ...input, value: value ?? undefined });
      },
    );
    app.delete(`${base}/variables/:key`, { config: user, schema: { tags: TAGS, params: KeyParams, querystring: FilterQuery } }, async (req, reply) => {
      await svc.remove(await owner(req.actor, req.params.id), req.params.key, scopeFilter(req));
      return reply.code(204).send();
    });
  }

  ownerRoutes('/api/v4/projects/:id', (actor, id) => svc.projectOwner(actor, id));
  ownerRoutes('/api/v4/groups/:id', (actor, id) => svc.groupOwner(actor, id));

  // ---- the instance's ------------------------------------------------------------------------
  const base = '/api/v4/admin/ci/variables';
  app.get(
    base,
    { config: admin, schema: { tags: TAGS, querystring: Type.Object(PaginationProps), response: { 200: Type.Array(InstanceVariableSchema) } } },
    async (req, reply) => {
      const all = await svc.list(svc.instanceOwner(req.actor));
      const q = req.query;
      const page = paginateArray(c.config.externalUrl, { path: req.url.split('?')[0], params: linkParams(q, {}), ...q }, all);
      reply.headers(page.headers);
      return page.items.map(instanceEntity);
    },
  );
  app.get(`${base}/:key`, { config: admin, schema: { tags: TAGS, params: AdminKeyParams, response: { 200: InstanceVariableSchema } } }, async (req) =>
    instanceEntity(await svc.get(svc.instanceOwner(req.actor), req.params.key)),
  );
  app.post(
    base,
    { config: admin, schema: { tags: TAGS, body: Type.Omit(CreateBody, ['environment_scope']), response: { 201: InstanceVariableSchema } } },
    async (req, reply) => reply.code(201).send(instanceEntity(await svc.create(svc.instanceOwner(req.actor), { ...req.body, masked_and_hidden: false }))),
  );
  app.put(
    `${base}/:key`,
    {
      config: admin,
      schema: { tags: TAGS, params: AdminKeyParams, body: Type.Omit(UpdateBody, ['environment_scope', 'filter']), response: { 200: InstanceVariableSchema } },
    },
    async (req) => {
      const { key: _key, value, ...input } = req.body;
      return instanceEntity(await svc.update(svc.instanceOwner(req.actor), req.params.key, undefined, { ...input, value: value ?? undefined }));
    },
  );
  app.delete(`${base}/:key`, { config: admin, schema: { tags: TAGS, params: AdminKeyParams } }, async (req, reply) => {
    await svc.remove(svc.instanceOwner(req.actor), req.params.key, undefined);
    return reply.code(204).send();
  });
}
