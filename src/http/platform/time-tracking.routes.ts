// Time tracking of merge requests and issues (lib/api/time_tracking_endpoints.rb): …/time_stats,
// …/time_estimate, …/reset_time_estimate, …/add_spent_time, …/reset_spent_time. Durations are GitLab's
// (Gitlab::TimeTrackingFormatter: 8-hour days, 5-day weeks, a bare number counts hours).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import type { Actor } from '../../domain/access/actor.ts';
import { parseDuration } from '../../domain/merge-requests/merge-requests.service.ts';
import { humanTime } from '../../domain/merge-requests/rules.ts';
import { Errors } from '../../lib/errors.ts';
import { TimeStatsSchema } from './entities/merge-request.entity.ts';

type Times = { time_estimate: number; total_time_spent: number };
type TimeChange = { estimate?: number; spent?: number | 'reset' };

/** One kind of issuable whose time is tracked: its path, its finder and its writer. */
interface Trackable<F> {
  tags: string[];
  segment: 'merge_requests' | 'issues';
  iidParam: 'merge_request_iid' | 'issue_iid';
  find: (c: Container, actor: Actor, id: string, iid: number) => Promise<F>;
  times: (f: F) => Times;
  track: (c: Container, actor: Actor, f: F, change: TimeChange) => Promise<F>;
}

const timeStats = (t: Times) => ({
  time_estimate: t.time_estimate,
  total_time_spent: t.total_time_spent,
  human_time_estimate: humanTime(t.time_estimate),
  human_total_time_spent: humanTime(t.total_time_spent),
});
const DurationBody = Type.Object({ duration: Type.String(), summary: Type.Optional(Type.String()) });

export function timeTrackingRoutes(fastify: FastifyInstance, c: Container): void {
  trackable(fastify, c, {
    tags: ['merge_requests'],
    segment: 'merge_requests',
    iidParam: 'merge_request_iid',
    find: (c, a, id, iid) => c.mergeRequests.find(a, id, iid),
    times: (f) => f.mr,
    track: (c, a, f, change) => c.mergeRequests.trackTime(a, f, change),
  });
  trackable(fastify, c, {
    tags: ['issues'],
    segment: 'issues',
    iidParam: 'issue_iid',
    find: (c, a, id, iid) => c.issues.find(a, id, iid),
    times: (f) => f.issue,
    track: (c, a, f, change) => c.issues.trackTime(a, f, change),
  });
}

function trackable<F>(fastify: FastifyInstance, c: Container, t: Trackable<F>): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const read = { api: 'platform' as const, auth: 'optional' as const };
  const write = { api: 'platform' as const, auth: 'user' as const };
  const one = `/api/v4/projects/:id/${t.segment}/:${t.iidParam}`;
  const Params = Type.Object({ id: Type.String(), [t.iidParam]: Type.Integer() });
  const find = (req: { actor: Actor; params: unknown }) => {
    const p = req.params as Record<string, unknown> & { id: string };
    return t.find(c, req.actor, p.id, p[t.iidParam] as number);
  };

  app.get(`${one}/time_stats`, { config: read, schema: { tags: t.tags, params: Params, response: { 200: TimeStatsSchema } } }, async (req) =>
    timeStats(t.times(await find(req))),
  );

  app.post(
    `${one}/time_estimate`,
    { config: write, schema: { tags: t.tags, params: Params, body: DurationBody, response: { 200: TimeStatsSchema } } },
    async (req, reply) => {
      const seconds = parseDuration(req.body.duration);
      if (seconds === null || seconds < 0) throw Errors.invalid({ time_estimate: ['must have a valid format and be greater than or equal to zero.'] });
      const f = await t.track(c, req.actor, await find(req), { estimate: seconds });
      reply.code(200);
      return timeStats(t.times(f));
    },
  );
  app.post(
    `${one}/reset_time_estimate`,
    { config: write, schema: { tags: t.tags, params: Params, response: { 200: TimeStatsSchema } } },
    async (req, reply) => {
      const f = await t.track(c, req.actor, await find(req), { estimate: 0 });
      reply.code(200);
      return timeStats(t.times(f));
    },
  );
  app.post(
    `${one}/add_spent_time`,
    { config: write, schema: { tags: t.tags, params: Params, body: DurationBody, response: { 201: TimeStatsSchema } } },
    async (req, reply) => {
      const seconds = parseDuration(req.body.duration);
      if (seconds === null || seconds === 0) throw Errors.invalid({ time_spent: ['must have a valid format'] });
      const found = await find(req);
      if (t.times(found).total_time_spent + seconds < 0) throw Errors.invalid({ time_spent: ['Time to subtract exceeds the total time spent'] });
      const f = await t.track(c, req.actor, found, { spent: seconds });
      reply.code(201);
      return timeStats(t.times(f));
    },
  );
  app.post(`${one}/reset_spent_time`, { config: write, schema: { tags: t.tags, params: Params, response: { 200: TimeStatsSchema } } }, async (req, reply) => {
    const f = await t.track(c, req.actor, await find(req), { spent: 'reset' });
    reply.code(200);
    return timeStats(t.times(f));
  });
}
