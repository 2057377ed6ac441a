// PUT …/merge, …/rebase, GET …/merge_ref, POST …/cancel_merge_when_pipeline_succeeds
// (lib/api/merge_requests.rb). The checks, status codes and git work are MergeService's.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../../container.ts';
import type { Actor } from '../../../domain/access/actor.ts';
import { MergeRequestSchema } from '../entities/merge-request.entity.ts';
import { presentMergeRequest } from './present.ts';
import { MergeRequestParams } from '../schemas/common.ts';

const TAGS = ['merge_requests'];

const MergeBody = Type.Object({
  merge_commit_message: Type.Optional(Type.String()),
  squash_commit_message: Type.Optional(Type.String()),
  squash: Type.Optional(Type.Boolean()),
  should_remove_source_branch: Type.Optional(Type.Boolean()),
  merge_when_pipeline_succeeds: Type.Optional(Type.Boolean()),
  auto_merge: Type.Optional(Type.Boolean()),
  sha: Type.Optional(Type.String()),
});
const RebaseBody = Type.Object({ skip_ci: Type.Optional(Type.Boolean()) });

export function mergeRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const read = { api: 'platform' as const, auth: 'optional' as const };
  const write = { api: 'platform' as const, auth: 'user' as const };
  const one = '/api/v4/projects/:id/merge_requests/:merge_request_iid';
  const find = (req: { actor: Actor; params: { id: string; merge_request_iid: number } }) =>
    c.mergeRequests.find(req.actor, req.params.id, req.params.merge_request_iid);

  app.put(
    `${one}/merge`,
    { config: write, schema: { tags: TAGS, params: MergeRequestParams, body: Type.Optional(MergeBody), response: { 200: MergeRequestSchema } } },
    async (req) => {
      const found = await find(req);
      const mr = await c.merges.merge(req.actor, found, req.body ?? {});
      return presentMergeRequest(c, req.actor, { ...found, mr });
    },
  );

  app.put(
    `${one}/rebase`,
    {
      config: write,
      schema: {
        tags: TAGS,
        params: MergeRequestParams,
        body: Type.Optional(RebaseBody),
        response: { 202: Type.Object({ rebase_in_progress: Type.Boolean() }) },
      },
    },
    async (req, reply) => {
      const found = await find(req);
      const result = await c.merges.rebase(req.actor, found);
      reply.code(202);
      return result;
    },
  );

  app.get(
    `${one}/merge_ref`,
    { config: read, schema: { tags: TAGS, params: MergeRequestParams, response: { 200: Type.Object({ commit_id: Type.String() }) } } },
    async (req) => {
      const found = await find(req);
      return { commit_id: await c.merges.mergeRef(found) };
    },
  );

  app.post(
    `${one}/cancel_merge_when_pipeline_succeeds`,
    { config: write, schema: { tags: TAGS, params: MergeRequestParams, response: { 201: MergeRequestSchema } } },
    async (req, reply) => {
      const found = await find(req);
      const mr = await c.merges.cancelAutoMerge(req.actor, found);
      reply.code(201);
      return presentMergeRequest(c, req.actor, { ...found, mr });
    },
  );
}
