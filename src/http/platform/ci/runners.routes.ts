// Runners (GitLab lib/api/ci/runners.rb, the registration side of lib/api/ci/runner.rb, and
// POST /user/runners of lib/api/users.rb): registration and runner tokens, the runner API's lists,
// details, updates and deletion, a runner's jobs, project and group runner lists, and the
// registration-token resets.
//
// Response cache: GET /runners/all and GET /runners/:id/jobs are served from it. Runner status
// depends on the clock as well as on the rows, and cache entries live at most 5 seconds
// (responseCache's TTL), so a runner that goes offline by the passage of time is shown online for at
// most 5 seconds more — well inside contacted_at's own one-minute granularity.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../../container.ts';
import { actorKey, type Actor } from '../../../domain/access/actor.ts';
import {
  ACCESS_LEVELS,
  JOB_STATUSES,
  RUNNER_SCOPES,
  RUNNER_STATUSES,
  RUNNER_TYPES,
  type RunnerAttributes,
  type RunnerFilters,
  type RunnerQuery,
} from '../../../domain/ci/runners/runners.service.ts';
import type { CiRunnerRow, NamespaceRow, ProjectRow } from '../../../db/schema.ts';
import { Errors } from '../../../lib/errors.ts';
import { offsetPaginate } from '../../../lib/pagination.ts';
import { JobBasicWithProjectSchema, toJobViews, toJobBasicWithProject } from '../entities/job.entity.ts';
import { RunnerDetailsSchema, RunnerSchema, toRunner, toRunnerDetails, type RunnerGroup, type RunnerProject } from '../entities/runner.entity.ts';
import { toUserRef, userViewContext } from '../entities/user.entity.ts';
import { Enum, IdParams, IntegerIdParams, linkParams, PaginationProps } from '../schemas/common.ts';

const TAGS = ['runners'];

const ProjectRunnerParams = Type.Object({ id: Type.String(), runner_id: Type.Integer() });

/** Grape `regexp: /^[\d+.]+/` on version_prefix. */
const VERSION_PREFIX = '^[\\d+.]+';

const filterProps = {
  type: Enum(RUNNER_TYPES),
  paused: Type.Optional(Type.Boolean()),
  status: Enum(RUNNER_STATUSES),
  tag_list: Type.Optional(Type.Array(Type.String())),
  version_prefix: Type.Optional(Type.String({ pattern: VERSION_PREFIX })),
  ...PaginationProps,
};
const ListQuery = Type.Object({ scope: Enum(RUNNER_SCOPES), ...filterProps });
const GroupListQuery = Type.Object(filterProps);

const JobsQuery = Type.Object({
  system_id: Type.Optional(Type.String()),
  status: Enum(JOB_STATUSES),
  order_by: Enum(['id'] as const),
  sort: Enum(['asc', 'desc'] as const, 'desc'),
  cursor: Type.Optional(Type.String()),
  ...PaginationProps,
});

const attributeProps = {
  description: Type.Optional(Type.String()),
  active: Type.Optional(Type.Boolean()),
  paused: Type.Optional(Type.Boolean()),
  tag_list: Type.Optional(Type.Array(Type.String())),
  run_untagged: Type.Optional(Type.Boolean()),
  locked: Type.Optional(Type.Boolean()),
  access_level: Enum(ACCESS_LEVELS),
  maximum_timeout: Type.Optional(Type.Integer()),
  maintenance_note: Type.Optional(Type.String()),
};
const UpdateBody = Type.Object(attributeProps);
const UPDATE_FIELDS = ['description', 'active', 'paused', 'tag_list', 'run_untagged', 'locked', 'access_level', 'maximum_timeout', 'maintenance_note'] as const;

const InfoSchema = Type.Object(
  {
    name: Type.Optional(Type.String()),
    version: Type.Optional(Type.String()),
    revision: Type.Optional(Type.String()),
    platform: Type.Optional(Type.String()),
    architecture: Type.Optional(Type.String()),
    executor: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

const RegisterBody = Type.Object({
  token: Type.Optional(Type.String()),
  maintainer_note: Type.Optional(Type.String()),
  info: Type.Optional(InfoSchema),
  ...attributeProps,
});
const TokenBody = Type.Object({ token: Type.Optional(Type.String()), system_id: Type.Optional(Type.String()) });
const UserRunnerBody = Type.Object({
  runner_type: Type.Optional(Type.String()),
  group_id: Type.Optional(Type.Integer()),
  project_id: Type.Optional(Type.Integer()),
  ...attributeProps,
});
const AssignBody = Type.Object({ runner_id: Type.Optional(Type.Integer()) });

const RegistrationSchema = Type.Object({
  id: Type.Integer(),
  token: Type.String(),
  token_expires_at: Type.Unsafe<string | null>({ type: ['string', 'null'] }),
});
const TokenSchema = Type.Object({ token: Type.String(), token_expires_at: Type.Unsafe<string | null>({ type: ['string', 'null'] }) });

/** Grape's CommaSeparatedToArray: "a,b" and ["a", "b,c"] both become lists of tags. */
function splitTags(list: string[] | undefined): string[] | undefined {
  if (list === undefined) return undefined;
  return list
    .flatMap((t) => String(t).split(','))
    .map((t) => t.trim())
    .filter(Boolean);
}

/** mutually_exclusive :active, :paused; paused wins over active as `!paused`. */
function activeOf(b: { active?: boolean; paused?: boolean }): boolean | undefined {
  if (b.active !== undefined && b.paused !== undefined) throw Errors.param('active, paused are mutually exclusive');
  if (b.paused !== undefined) return !b.paused;
  return b.active;
}

function attributesOf(b: Record<string, unknown> & { active?: boolean; paused?: boolean; tag_list?: string[] }): RunnerAttributes {
  const a: RunnerAttributes = {};
  if (b.description !== undefined) a.description = b.description as string;
  const active = activeOf(b);
  if (active !== undefined) a.active = active;
  if (b.tag_list !== undefined) a.tag_list = splitTags(b.tag_list);
  if (b.run_untagged !== undefined) a.run_untagged = b.run_untagged as boolean;
  if (b.locked !== undefined) a.locked = b.locked as boolean;
  if (b.access_level !== undefined) a.access_level = b.access_level as string;
  if (b.maximum_timeout !== undefined) a.maximum_timeout = b.maximum_timeout as number;
  if (b.maintenance_note !== undefined) a.maintenance_note = b.maintenance_note as string;
  return a;
}

export function runnersRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const user = { api: 'platform' as const, auth: 'user' as const };
  /** /runners/:id… also accept a token with only the manage_runner scope (allow_access_with_scope). */
  const manage = { ...user, scopes: ['manage_runner'] };
  const anyone = { api: 'platform' as const, auth: 'optional' as const };
  const svc = () => c.ci.runners;
  // created_by (users) and the application settings its rendering reads
  const LIST_TABLES = ['ci_runners', 'users', 'application_settings'];
  const JOB_TABLES = [
    'ci_builds',
    'ci_pipelines',
    'ci_runners',
    'ci_job_artifacts',
    'ci_runner_projects',
    'ci_runner_namespaces',
    'users',
    'members',
    'namespaces',
    'projects',
    'member_roles',
    'application_settings',
  ];

  // ---- rendering ---------------------------------------------------------------------------------

  /** A page of runners in the list view, with their creators (one query). */
  async function runnerEntities(rows: CiRunnerRow[]) {
    const now = Date.now();
    const byId = await c.users.basicByIds(rows.map((r) => r.creator_id));
    const ctx = byId.size ? userViewContext(c.config.externalUrl, await c.settings.get()) : null;
    return rows.map((r) => {
      const creator = r.creator_id !== null ? byId.get(r.creator_id) : undefined;
      return toRunner(r, { now, createdBy: creator && ctx ? toUserRef(creator, ctx) : null });
    });
  }

  async function detailEntity(actor: Actor, runner: CiRunnerRow) {
    const access = await svc().access(actor, runner);
    const projects = access.projects.filter((p) => actor.isAdmin || p.level > 0);
    const groups = access.groups.filter((g) => actor.isAdmin || g.level > 0);
    const names = await svc().namespaceNames([...projects.map((p) => p.namespace), ...groups.map((g) => g.group)]);
    const projectEntities: RunnerProject[] = projects.map(({ project, namespace }) => ({
      id: project.id,
      name: project.name,
      name_with_namespace: `${names.get(namespace.id) ?? namespace.name} / ${project.name}`,
      path: project.path,
      path_with_namespace: `${namespace.full_path}/${project.path}`,
    }));
    const groupEntities: RunnerGroup[] = groups.map(({ group }) => ({
      id: group.id,
      web_url: `${c.config.externalUrl}/groups/${group.full_path}`,
      name: group.name,
    }));
    const [list] = await runnerEntities([runner]);
    return toRunnerDetails(runner, {
      createdBy: list.created_by ?? null,
      projects: projectEntities,
      groups: groupEntities,
      canUpdate: access.update,
    });
  }

  async function listPage(
    req: FastifyRequest,
    reply: FastifyReply,
    q: RunnerQuery,
    query: { page?: number; per_page?: number },
    route: Record<string, unknown> = {},
  ) {
    const page = await offsetPaginate(
      c.db.kysely,
      c.config.externalUrl,
      { path: req.url.split('?')[0], params: linkParams(query as Record<string, unknown>, route), page: query.page, per_page: query.per_page },
      q.orderBy('ci_runners.id'),
    );
    reply.headers(page.headers);
    return runnerEntities(page.items);
  }

  function filtersOf(q: { type?: string; status?: string; paused?: boolean; tag_list?: string[]; version_prefix?: string }): RunnerFilters {
    return { type: q.type, status: q.status, paused: q.paused, tag_list: splitTags(q.tag_list), version_prefix: q.version_prefix };
  }

  /** A project the caller may see, with the Maintainer check of admin_project_runners (403 otherwise). */
  async function maintainedProject(actor: Actor, id: string): Promise<{ project: ProjectRow; namespace: NamespaceRow }> {
    const { project, namespace, access } = await c.resolve.project(actor, id);
    if (!actor.isAdmin && access.level < 40) throw Errors.forbidden();
    return { project, namespace };
  }

  // ---- the runner's own endpoints (registration token / authentication token) ---------------------

  app.post('/api/v4/runners', { config: anyone, schema: { tags: TAGS, body: RegisterBody, response: { 201: RegistrationSchema } } }, async (req, reply) => {
    const b = req.body ?? {};
    if (b.token === undefined) throw Errors.param('token is missing');
    const attrs = attributesOf(b as Record<string, unknown>);
    if (attrs.maintenance_note === undefined && b.maintainer_note !== undefined) attrs.maintenance_note = b.maintainer_note;
    svc().validate(attrs);
    const result = await svc().register(b.token, { ...attrs, info: b.info, ip: req.ip });
    if (!result) throw Errors.forbidden();
    return reply.code(201).send({ id: result.runner.id, token: result.token, token_expires_at: result.runner.token_expires_at });
  });

  app.delete('/api/v4/runners', { config: anyone, schema: { tags: TAGS, body: TokenBody } }, async (req, reply) => {
    const token = req.body?.token;
    if (token === undefined) throw Errors.param('token is missing');
    const runner = await svc().authenticate(token);
    if (!runner) throw Errors.forbidden();
    await svc().destroy(runner);
    return reply.code(204).send();
  });

  app.post('/api/v4/runners/verify', { config: anyone, schema: { tags: TAGS, body: TokenBody, response: { 200: RegistrationSchema } } }, async (req, reply) => {
    const b = req.body ?? {};
    if (b.token === undefined) throw Errors.param('token is missing');
    const runner = await svc().authenticate(b.token, { ip: req.ip });
    if (!runner) throw Errors.forbidden();
    // The runner proves it holds the token; the token is echoed as given (never read back from storage).
    return reply.code(200).send({ id: runner.id, token: b.token, token_expires_at: runner.token_expires_at });
  });

  app.post(
    '/api/v4/runners/reset_authentication_token',
    { config: anyone, schema: { tags: TAGS, body: TokenBody, response: { 201: TokenSchema } } },
    async (req, reply) => {
      const token = req.body?.token;
      if (token === undefined) throw Errors.param('token is missing');
      const runner = await svc().authenticate(token, { ip: req.ip });
      if (!runner) throw Errors.forbidden();
      return reply.code(201).send(await svc().resetToken(runner));
    },
  );

  // ---- runners created by a user ------------------------------------------------------------------

  app.post(
    '/api/v4/user/runners',
    { config: { ...user, scopes: ['create_runner'] }, schema: { tags: TAGS, body: UserRunnerBody, response: { 201: RegistrationSchema } } },
    async (req, reply) => {
      const b = req.body ?? {};
      if (b.runner_type === undefined) throw Errors.param('runner_type is missing');
      if (!(RUNNER_TYPES as readonly string[]).includes(b.runner_type)) throw Errors.param('runner_type does not have a valid value');
      if (b.runner_type === 'group_type' && b.group_id === undefined) throw Errors.param('group_id is missing');
      if (b.runner_type === 'project_type' && b.project_id === undefined) throw Errors.param('project_id is missing');
      const attrs = attributesOf(b as Record<string, unknown>);
      const { runner, token } = await svc().createForUser(req.actor, { ...attrs, runner_type: b.runner_type, group_id: b.group_id, project_id: b.project_id });
      return reply.code(201).send({ id: runner.id, token, token_expires_at: runner.token_expires_at });
    },
  );

  // ---- registration tokens ------------------------------------------------------------------------

  app.post('/api/v4/runners/reset_registration_token', { config: user, schema: { tags: TAGS, response: { 201: TokenSchema } } }, async (req, reply) => {
    if (!req.actor.isAdmin) throw Errors.forbidden();
    return reply.code(201).send(await svc().resetRegistrationToken('instance', 0));
  });

  app.post(
    '/api/v4/projects/:id/runners/reset_registration_token',
    { config: user, schema: { tags: TAGS, params: IdParams, response: { 201: TokenSchema } } },
    async (req, reply) => {
      const { project } = await maintainedProject(req.actor, req.params.id);
      return reply.code(201).send(await svc().resetRegistrationToken('project', project.id));
    },
  );

  app.post(
    '/api/v4/groups/:id/runners/reset_registration_token',
    { config: user, schema: { tags: TAGS, params: IdParams, response: { 201: TokenSchema } } },
    async (req, reply) => {
      const { group, access } = await c.resolve.group(req.actor, req.params.id);
      if (!req.actor.isAdmin && access.level < 50) throw Errors.forbidden();
      return reply.code(201).send(await svc().resetRegistrationToken('group', group.id));
    },
  );

  // ---- lists --------------------------------------------------------------------------------------

  app.get(
    '/api/v4/runners',
    { config: user, schema: { tags: TAGS, querystring: ListQuery, response: { 200: Type.Array(RunnerSchema) } } },
    async (req, reply) => {
      const q = req.query;
      const now = Date.now();
      let runners = svc().ownedRunners(req.actor.user!.id);
      runners = svc().filterScope(runners, q.scope, RUNNER_STATUSES, now);
      runners = svc().applyFilters(runners, filtersOf(q), now);
      return listPage(req, reply, runners, q);
    },
  );

  app.get(
    '/api/v4/runners/all',
    { config: user, schema: { tags: TAGS, querystring: ListQuery, response: { 200: Type.Array(RunnerSchema) } } },
    async (req, reply) => {
      if (!req.actor.isAdmin) throw Errors.forbidden();
      const q = req.query;
      const now = Date.now();
      let runners = svc().filterScope(svc().allRunners(), q.scope, RUNNER_SCOPES, now);
      runners = svc().applyFilters(runners, filtersOf(q), now);
      return app.cachedResponse(req, reply, { tables: LIST_TABLES, viewer: 'admin' }, () => listPage(req, reply, runners, q));
    },
  );

  app.get(
    '/api/v4/projects/:id/runners',
    { config: user, schema: { tags: TAGS, params: IdParams, querystring: ListQuery, response: { 200: Type.Array(RunnerSchema) } } },
    async (req, reply) => {
      const q = req.query;
      const { project, namespace } = await maintainedProject(req.actor, req.params.id);
      const now = Date.now();
      let runners = svc().filterScope(svc().projectRunners(project, namespace), q.scope, RUNNER_SCOPES, now);
      runners = svc().applyFilters(runners, filtersOf(q), now);
      return listPage(req, reply, runners, q, { id: req.params.id });
    },
  );

  app.get(
    '/api/v4/groups/:id/runners',
    { config: user, schema: { tags: TAGS, params: IdParams, querystring: GroupListQuery, response: { 200: Type.Array(RunnerSchema) } } },
    async (req, reply) => {
      const q = req.query;
      const { group, access } = await c.resolve.group(req.actor, req.params.id);
      if (!svc().mayListGroupRunners(req.actor, access)) throw Errors.forbidden();
      const runners = svc().applyFilters(svc().groupRunners(group), filtersOf(q), Date.now());
      return listPage(req, reply, runners, q, { id: req.params.id });
    },
  );

  // ---- one runner ---------------------------------------------------------------------------------

  app.get('/api/v4/runners/:id', { config: manage, schema: { tags: TAGS, params: IntegerIdParams, response: { 200: RunnerDetailsSchema } } }, async (req) => {
    const runner = await svc().find(req.params.id);
    if (runner.runner_type !== 'instance_type' && !req.actor.isAdmin) {
      const access = await svc().access(req.actor, runner);
      if (!access.read) throw Errors.forbidden('No access granted');
    }
    return detailEntity(req.actor, runner);
  });

  app.put(
    '/api/v4/runners/:id',
    { config: manage, schema: { tags: TAGS, params: IntegerIdParams, body: UpdateBody, response: { 200: RunnerDetailsSchema } } },
    async (req) => {
      const b = (req.body ?? {}) as Record<string, unknown> & { active?: boolean; paused?: boolean; tag_list?: string[] };
      if (!UPDATE_FIELDS.some((f) => b[f] !== undefined)) {
        throw Errors.param(`${UPDATE_FIELDS.join(', ')} are missing, at least one parameter must be provided`);
      }
      const runner = await svc().find(req.params.id);
      await svc().assertMayUpdate(req.actor, runner);
      const updated = await svc().update(runner, attributesOf(b));
      return detailEntity(req.actor, updated);
    },
  );

  app.delete('/api/v4/runners/:id', { config: manage, schema: { tags: TAGS, params: IntegerIdParams } }, async (req, reply) => {
    const runner = await svc().find(req.params.id);
    await svc().assertMayDestroy(req.actor, runner);
    const since = req.headers['if-unmodified-since'];
    if (typeof since === 'string' && !Number.isNaN(Date.parse(since)) && Date.parse(runner.updated_at) > Date.parse(since)) throw Errors.preconditionFailed();
    await svc().destroy(runner);
    return reply.code(204).send();
  });

  app.post(
    '/api/v4/runners/:id/reset_authentication_token',
    { config: manage, schema: { tags: TAGS, params: IntegerIdParams, response: { 201: TokenSchema } } },
    async (req, reply) => {
      const runner = await svc().find(req.params.id);
      await svc().assertMayUpdate(req.actor, runner);
      return reply.code(201).send(await svc().resetToken(runner));
    },
  );

  app.get(
    '/api/v4/runners/:id/jobs',
    { config: manage, schema: { tags: TAGS, params: IntegerIdParams, querystring: JobsQuery, response: { 200: Type.Array(JobBasicWithProjectSchema) } } },
    async (req, reply) => {
      const q = req.query;
      // The lookup and the access check are inside the cached computation: an entry exists only for a
      // viewer who passed them, and is valid only while the runner, membership and job tables are unchanged.
      return app.cachedResponse(req, reply, { tables: JOB_TABLES, viewer: `${actorKey(req.actor)}|runner:${req.params.id}` }, async () => {
        const runner = await svc().find(req.params.id);
        if (!req.actor.isAdmin) {
          const access = await svc().access(req.actor, runner);
          if (!access.readBuilds) throw Errors.forbidden('No access granted');
        }
        const page = await offsetPaginate(
          c.db.kysely,
          c.config.externalUrl,
          { path: req.url.split('?')[0], params: linkParams(q as Record<string, unknown>, { id: req.params.id }), page: q.page, per_page: q.per_page },
          svc().jobs(req.actor, runner, { status: q.status, system_id: q.system_id, sort: q.sort ?? 'desc' }),
        );
        reply.headers(page.headers);
        const views = toJobViews(await c.ci.jobs.related(page.items), c.config.externalUrl, { id: req.actor.user?.id ?? null, isAdmin: req.actor.isAdmin });
        return page.items.map((j) => toJobBasicWithProject(j, views));
      });
    },
  );

  // ---- a project's runners ------------------------------------------------------------------------

  app.post(
    '/api/v4/projects/:id/runners',
    { config: user, schema: { tags: TAGS, params: IdParams, body: AssignBody, response: { 201: RunnerSchema } } },
    async (req, reply) => {
      const runnerId = req.body?.runner_id;
      if (runnerId === undefined) throw Errors.param('runner_id is missing');
      const { project } = await maintainedProject(req.actor, req.params.id);
      const runner = await svc().find(runnerId);
      if (runner.runner_type === 'group_type') throw Errors.forbidden('Runner is a group runner');
      if (!req.actor.isAdmin) {
        if (runner.locked) throw Errors.forbidden('Runner is locked');
        const access = await svc().access(req.actor, runner);
        if (!access.assign) throw Errors.forbidden('No access granted');
      }
      await svc().assign(runner, project);
      const [entity] = await runnerEntities([runner]);
      return reply.code(201).send(entity);
    },
  );

  app.delete('/api/v4/projects/:id/runners/:runner_id', { config: user, schema: { tags: TAGS, params: ProjectRunnerParams } }, async (req, reply) => {
    const { project } = await maintainedProject(req.actor, req.params.id);
    const runnerId = req.params.runner_id;
    if (!(await svc().isAssigned(runnerId, project.id))) throw Errors.notFound('Runner');
    const runner = await svc().find(runnerId);
    const access = await svc().access(req.actor, runner);
    // UnassignRunnerService: assign_runner on the runner (refused for a locked runner but to administrators)
    if (!access.assign) throw Errors.forbidden('User not allowed to assign runner');
    if ((await svc().projectCount(runner.id)) <= 1) throw Errors.forbidden('Only one project associated with the runner. Please remove the runner instead');
    await svc().unassign(runner, project);
    return reply.code(204).send();
  });
}
