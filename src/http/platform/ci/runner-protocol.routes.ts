// The runner protocol for jobs (GitLab's lib/api/ci/runner.rb `resource :jobs`, as gitlab-runner's
// network/gitlab.go calls it): POST /jobs/request (long poll), PUT /jobs/:id (state), PATCH
// /jobs/:id/trace (the log, Content-Range), and GET /job (the job of a job token).
// Runner and job tokens are checked here (authenticate_runner! / authenticate_job!), not by the auth
// plugin: config.runnerApi.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../../container.ts';
import { JobNotRunning, TRACE_UPDATE_INTERVAL } from '../../../domain/ci/jobs/jobs.service.ts';
import type { RunnerInfo } from '../../../domain/ci/runners/runners.service.ts';
import { DomainError, Errors } from '../../../lib/errors.ts';
import { JobSchema, toJobViews, toJob } from '../entities/job.entity.ts';
import { IntegerIdParams } from '../schemas/common.ts';

const TAGS = ['jobs'];
const Hash = Type.Object({}, { additionalProperties: true });

const RequestBody = Type.Object(
  {
    token: Type.Optional(Type.String()),
    last_update: Type.Optional(Type.String()),
    info: Type.Optional(Hash),
    session: Type.Optional(Hash),
    system_id: Type.Optional(Type.String()),
    job_age: Type.Optional(Type.Integer()),
  },
  { additionalProperties: true },
);
const UpdateBody = Type.Object(
  {
    token: Type.Optional(Type.String()),
    state: Type.Optional(Type.String()),
    checksum: Type.Optional(Type.String()),
    failure_reason: Type.Optional(Type.String()),
    output: Type.Optional(Type.Object({ checksum: Type.Optional(Type.String()), bytesize: Type.Optional(Type.Integer()) }, { additionalProperties: true })),
    exit_code: Type.Optional(Type.Integer()),
  },
  { additionalProperties: true },
);

function first(v: unknown): string | undefined {
  if (Array.isArray(v)) v = v[0];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** job_token: the `token` parameter, else the JOB-TOKEN header. */
function jobTokenOf(req: { headers: Record<string, unknown>; query: unknown }, body?: Record<string, unknown>): string | undefined {
  return first(body?.token) ?? first((req.query as Record<string, unknown> | undefined)?.token) ?? first(req.headers['job-token']);
}

export function runnerProtocolRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const config = { api: 'platform' as const, auth: 'optional' as const, runnerApi: true };
  const jobs = () => c.ci.jobs;

  // Workhorse's long poll ends with the app: no request waits past close, no timer stays behind.
  fastify.addHook('preClose', (done) => {
    jobs().close();
    done();
  });

  /** authenticate_job! as a route answer: 403, or 403 with Job-Status when the job no longer runs. */
  async function jobOf(id: number, token: string | undefined) {
    try {
      return await jobs().authenticateJob(id, token);
    } catch (e) {
      if (e instanceof JobNotRunning) throw new DomainError('forbidden', 403, 'Job is not running', { 'job-status': e.status });
      throw e;
    }
  }

  app.post('/api/v4/jobs/request', { config: { ...config, longPoll: true }, schema: { tags: TAGS, body: RequestBody } }, async (req, reply) => {
    const b = req.body ?? {};
    if (b.token === undefined) throw Errors.param('token is missing');
    const info = (b.info ?? {}) as RunnerInfo & Record<string, unknown>;
    // read once, before the contact's write: the runner and the claim's caches are checked against them
    const versions = await req.versions();
    const runner = await c.ci.runners.authenticate(b.token, { info, ip: req.ip }, versions);
    if (!runner) throw Errors.forbidden();
    const lastUpdate = async () => String((await jobs().waiters.version()) ?? 0);
    if (runner.active !== 1) {
      reply.header('x-gitlab-last-update', await lastUpdate());
      return reply.code(204).send();
    }
    const session = (b.session ?? {}) as { url?: unknown };
    const abort = new AbortController();
    const onClose = () => {
      if (!reply.raw.writableFinished) abort.abort();
    };
    reply.raw.on('close', onClose);
    try {
      const claimed = await jobs().request(
        runner,
        {
          systemId: typeof b.system_id === 'string' ? b.system_id : null,
          sessionUrl: typeof session.url === 'string' ? session.url : null,
          jobAge: b.job_age ?? null,
        },
        c.config.jobRequestTimeoutMs,
        abort.signal,
        versions,
      );
      if (!claimed) {
        // the server closes: this connection must not stay open for another request
        if (jobs().waiters.isClosed) reply.header('connection', 'close');
        reply.header('x-gitlab-last-update', await lastUpdate());
        return reply.code(204).send();
      }
      if (abort.signal.aborted) {
        await jobs().requeue(claimed.job);
        return reply.code(204).send();
      }
      return reply.code(201).type('application/json').send(JSON.stringify(claimed.payload));
    } finally {
      reply.raw.off('close', onClose);
    }
  });

  app.put('/api/v4/jobs/:id', { config, schema: { tags: TAGS, params: IntegerIdParams, body: UpdateBody } }, async (req, reply) => {
    const b = (req.body ?? {}) as Record<string, unknown>;
    if (b.token === undefined) throw Errors.param('token is missing');
    const job = await jobOf(req.params.id, jobTokenOf(req, b));
    await jobs().runnerContact(job, req.ip);
    const status = await jobs().updateFromRunner(job, {
      state: req.body.state,
      failure_reason: req.body.failure_reason,
      exit_code: req.body.exit_code,
    });
    return reply
      .code(status)
      .type('application/json')
      .send(JSON.stringify(String(status)));
  });

  // The log arrives as raw bytes (gitlab-runner sends text/plain): a scope of its own parses any body so.
  fastify.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 16 * 1024 * 1024 }, (_req, body, done) => done(null, body));
    scope
      .withTypeProvider<TypeBoxTypeProvider>()
      .patch('/api/v4/jobs/:id/trace', { config, schema: { tags: TAGS, params: IntegerIdParams } }, async (req, reply) => {
        const job = await jobOf(req.params.id, jobTokenOf(req));
        const range = first(req.headers['content-range']);
        if (range === undefined) throw Errors.raw(400, { message: '400 Missing header Content-Range' });
        // AppendBuildTraceService: only the start counts (gitlab-runner's end is one past the last byte)
        const start = Number.parseInt(range.split('-')[0] ?? '', 10);
        const data = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        const result = await jobs().appendTrace(job, Number.isNaN(start) ? 0 : start, data);
        if (result.status === 403) throw Errors.forbidden();
        if (result.status === 416) throw Errors.raw(416, { message: '416 Range Not Satisfiable' }, { range: `0-${result.size}` });
        const after = await jobs().reload(job.id);
        reply.header('job-status', after.status);
        reply.header('range', `0-${result.size}`);
        reply.header('x-gitlab-trace-update-interval', String(TRACE_UPDATE_INTERVAL));
        return reply.code(202).send();
      });
  });

  app.get(
    '/api/v4/job',
    { config: { api: 'platform' as const, auth: 'user' as const, jobToken: true }, schema: { tags: TAGS, response: { 200: JobSchema } } },
    async (req) => {
      if (req.actor.jobId === null) throw Errors.notFound('Job');
      const job = await jobs().reload(req.actor.jobId);
      const views = toJobViews(await c.ci.jobs.related([job]), c.config.externalUrl, { id: req.actor.user?.id ?? null, isAdmin: req.actor.isAdmin });
      return toJob(job, views);
    },
  );
}
