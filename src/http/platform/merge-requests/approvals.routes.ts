// Approvals of a merge request: …/approve, …/unapprove, …/approvals, …/approval_state
// (lib/api/merge_request_approvals.rb). Approvals are readable anonymously; approving needs a signed-in user.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../../container.ts';
import type { Actor } from '../../../domain/access/actor.ts';
import type { RecordEvent } from '../../../domain/merge-requests/approvals.ts';
import type { FoundMergeRequest } from '../../../domain/merge-requests/merge-requests.service.ts';
import { ApprovalStateSchema, ApprovalsSchema, toApprovals } from '../entities/approvals.entity.ts';
import { userViewContext } from '../entities/user.entity.ts';
import { MergeRequestParams } from '../schemas/common.ts';

const TAGS = ['merge_requests'];
const BASE = '/api/v4/projects/:id/merge_requests/:merge_request_iid';

const ApproveBody = Type.Object({
  sha: Type.Optional(Type.String()),
  approval_password: Type.Optional(Type.String()),
  publish_review: Type.Optional(Type.Boolean()),
});

export function approvalsRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const user = { api: 'platform' as const, auth: 'user' as const };
  const anyone = { api: 'platform' as const };
  const find = (actor: Actor, id: string, iid: number): Promise<FoundMergeRequest> => c.mergeRequests.find(actor, id, iid);
  const recordEvent =
    (actor: Actor): RecordEvent =>
    (trx, mr, action) =>
      c.mergeRequests.recordEvent(trx, actor, mr, action);

  // ---- approvals ------------------------------------------------------------------------------

  const approvalsEntity = async (actor: Actor, f: FoundMergeRequest) => {
    const state = await c.approvals.state(actor, f);
    const users = await c.users.basicByIds(state.approvals.map((a) => a.user_id));
    return toApprovals(f.mr, state, users, userViewContext(c.config.externalUrl, await c.settings.get()));
  };

  app.get(`${BASE}/approvals`, { config: anyone, schema: { tags: TAGS, params: MergeRequestParams, response: { 200: ApprovalsSchema } } }, async (req) =>
    approvalsEntity(req.actor, await find(req.actor, req.params.id, req.params.merge_request_iid)),
  );

  app.get(
    `${BASE}/approval_state`,
    { config: anyone, schema: { tags: TAGS, params: MergeRequestParams, response: { 200: ApprovalStateSchema } } },
    async (req) => {
      await find(req.actor, req.params.id, req.params.merge_request_iid);
      return { approval_rules_overwritten: false, rules: [] };
    },
  );

  app.post(
    `${BASE}/approve`,
    { config: user, schema: { tags: TAGS, params: MergeRequestParams, body: ApproveBody, response: { 201: ApprovalsSchema } } },
    async (req, reply) => {
      const f = await find(req.actor, req.params.id, req.params.merge_request_iid);
      await c.approvals.approve(req.actor, f, req.body.sha, recordEvent(req.actor));
      return reply.code(201).send(await approvalsEntity(req.actor, f));
    },
  );

  app.post(
    `${BASE}/unapprove`,
    { config: user, schema: { tags: TAGS, params: MergeRequestParams, response: { 201: ApprovalsSchema } } },
    async (req, reply) => {
      const f = await find(req.actor, req.params.id, req.params.merge_request_iid);
      await c.approvals.unapprove(req.actor, f, recordEvent(req.actor));
      return reply.code(201).send(await approvalsEntity(req.actor, f));
    },
  );
}
