// Commit statuses (GitLab lib/api/commit_statuses.rb): POST /projects/:id/statuses/:sha and
// GET /projects/:id/repository/commits/:sha/statuses; every endpoint needs a signed-in user.
// Registered in src/http/platform/ci/index.ts.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import type { Container } from '../../../container.ts';
import type { CiBuildRow } from '../../../db/schema.ts';
import { STATUS_ORDERS, STATUS_STATES, type StatusState } from '../../../domain/ci/statuses.service.ts';
import type { UserBasicRow } from '../../../domain/core/user-columns.ts';
import { isInt32 } from '../../../db/sql.ts';
import { Errors } from '../../../lib/errors.ts';
import { offsetPaginate } from '../../../lib/pagination.ts';
import { toUserRef, UserRefSchema, userViewContext, type UserViewContext } from '../entities/user.entity.ts';
import { Enum, linkParams, NullableString, PaginationProps, ShaParams } from '../schemas/common.ts';

const TAGS = ['commit_statuses'];

/** Entities::CommitStatus */
export const CommitStatusSchema = Type.Object({
  id: Type.Integer(),
  sha: Type.String(),
  ref: Type.String(),
  status: Type.String(),
  name: Type.String(),
  target_url: NullableString,
  description: NullableString,
  created_at: Type.String(),
  started_at: NullableString,
  finished_at: NullableString,
  allow_failure: Type.Boolean(),
  coverage: Type.Unsafe<number | null>({ type: ['number', 'null'] }),
  pipeline_id: Type.Integer(),
  author: Type.Unsafe<Static<typeof UserRefSchema> | null>({ ...UserRefSchema, type: ['object', 'null'] }),
});
export type CommitStatusEntity = Static<typeof CommitStatusSchema>;

export function toCommitStatus(b: CiBuildRow, author: UserBasicRow | undefined, users: UserViewContext): CommitStatusEntity {
  return {
    id: b.id,
    sha: b.sha,
    ref: b.ref,
    status: b.status,
    name: b.name,
    target_url: b.target_url,
    description: b.description,
    created_at: b.created_at,
    started_at: b.started_at,
    finished_at: b.finished_at,
    allow_failure: b.allow_failure === 1,
    coverage: b.coverage,
    pipeline_id: b.pipeline_id,
    author: author ? toUserRef(author, users) : null,
  };
}

const ListQuery = Type.Object({
  ref: Type.Optional(Type.String()),
  stage: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  pipeline_id: Type.Optional(Type.Integer()),
  all: Type.Optional(Type.Boolean()),
  order_by: Enum(STATUS_ORDERS, 'id'),
  sort: Enum(['asc', 'desc'] as const, 'asc'),
  ...PaginationProps,
});
const CreateBody = Type.Object({
  state: Type.Unsafe<StatusState>({ type: 'string', enum: [...STATUS_STATES] }),
  ref: Type.Optional(Type.String()),
  target_url: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  context: Type.Optional(Type.String()),
  coverage: Type.Optional(Type.Number()),
  pipeline_id: Type.Optional(Type.Integer()),
});

export function statusesRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const config = { api: 'platform' as const, auth: 'user' as const };
  const svc = c.ci.statuses;

  async function entities(rows: CiBuildRow[]): Promise<CommitStatusEntity[]> {
    const byId = await c.users.basicByIds(rows.map((r) => r.user_id));
    const ctx = userViewContext(c.config.externalUrl, await c.settings.get());
    return rows.map((r) => toCommitStatus(r, byId.get(r.user_id ?? -1), ctx));
  }

  app.get(
    '/api/v4/projects/:id/repository/commits/:sha/statuses',
    { config, schema: { tags: TAGS, params: ShaParams, querystring: ListQuery, response: { 200: Type.Array(CommitStatusSchema) } } },
    async (req, reply) => {
      const q = req.query;
      const project = await svc.project(req.actor, req.params.id, 'read');
      await svc.commit(project, req.params.sha);
      const query = await svc.list(project, req.params.sha, {
        ref: q.ref,
        stage: q.stage,
        name: q.name,
        pipeline_id: q.pipeline_id !== undefined && !isInt32(q.pipeline_id) ? -1 : q.pipeline_id,
        all: q.all,
        order_by: q.order_by ?? 'id',
        sort: q.sort ?? 'asc',
      });
      const page = await offsetPaginate(
        c.db.kysely,
        c.config.externalUrl,
        {
          path: req.url.split('?')[0],
          params: linkParams(q as Record<string, unknown>, { id: req.params.id, sha: req.params.sha }),
          page: q.page,
          per_page: q.per_page,
        },
        query as never,
      );
      reply.headers(page.headers);
      return entities(page.items as CiBuildRow[]);
    },
  );

  app.post(
    '/api/v4/projects/:id/statuses/:sha',
    { config, schema: { tags: TAGS, params: ShaParams, body: CreateBody, response: { 201: CommitStatusSchema } } },
    async (req, reply) => {
      const b = req.body;
      const project = await svc.project(req.actor, req.params.id, 'create');
      if (b.pipeline_id !== undefined && !isInt32(b.pipeline_id)) throw Errors.notFound('Pipeline for pipeline_id, sha and ref');
      const row = await svc.create(req.actor, project, req.params.sha, b);
      const [entity] = await entities([row]);
      return reply.code(201).send(entity);
    },
  );
}
