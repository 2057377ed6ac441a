// Projects API (GitLab lib/api/projects.rb, and GET /groups/:id/projects from lib/api/groups.rb):
// lists with ProjectsFinder's filters, offset and keyset pagination; single projects by id or
// URL-encoded full path; create, update, transfer, archive, unarchive and delete.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static, type TSchema } from 'typebox';
import type { Container } from '../../container.ts';
import { actorKey, userActor, type Actor } from '../../domain/access/actor.ts';
import { MEMBER_ACCESS_LEVELS } from '../../domain/core/roles.ts';
import { FEATURES, LEGACY_FEATURE_FLAGS, PROJECT_SETTINGS, SETTING_ALIASES, type SettingDef } from '../../domain/core/project-settings.ts';
import { PROJECT_ORDERS, STATISTICS_ORDERS, type ProjectFilters, type ProjectScope } from '../../domain/projects/projects-query.ts';
import type { ProjectRow } from '../../db/schema.ts';
import { Errors } from '../../lib/errors.ts';
import { offsetPaginate, pageParams, toQuery, type PageRequest } from '../../lib/pagination.ts';
import { ProjectSchema, projectViewContext, toProject, type ProjectEntity, type ProjectShape, type ProjectViewContext } from './entities/project.entity.ts';
import { userViewContext } from './entities/user.entity.ts';
import { avatarFile } from './schemas/avatar-file.ts';
import type { AvatarFile } from '../../domain/avatars/avatars.service.ts';
import { dateTimeParam, Enum, IdParams, IntegerUserIdParams, linkParams, PaginationProps, TOKEN_PARAMS, UserIdParams } from './schemas/common.ts';

const TAGS = ['projects'];
const PROJECT = '/api/v4/projects/:id';
/** Offset pagination of projects stops here (reference §1.1); beyond it only keyset works. */
const OFFSET_LIMIT = { limit: 50_000, type: 'Project' };
/** Never echoed into Link headers. */
/** What a project list is made of (the response cache keys on their versions; project_imports: the import fields). */
const LIST_TABLES = ['projects', 'namespaces', 'members', 'member_roles', 'users', 'redirect_routes', 'project_imports', 'users_star_projects'] as const;

const VISIBILITIES = ['private', 'internal', 'public'] as const;

const Bool = (def?: boolean) => Type.Optional(def === undefined ? Type.Boolean() : Type.Boolean({ default: def }));
/** Array[String] with CommaSeparatedToArray: `a,b`, `x[]=a&x[]=b` or a JSON array. */
const StringList = () => Type.Optional(Type.Array(Type.String()));

// ---- parameters ------------------------------------------------------------------------------

const filterProps = {
  archived: Bool(),
  visibility: Enum(VISIBILITIES),
  search: Type.Optional(Type.String()),
  owned: Bool(false),
  starred: Bool(false),
  with_issues_enabled: Bool(false),
  with_merge_requests_enabled: Bool(false),
  min_access_level: Type.Optional(Type.Unsafe<number>({ type: 'integer', enum: [...MEMBER_ACCESS_LEVELS] })),
};

/** `collection_params` + statistics + with_custom_attributes of GET /projects and /users/:user_id/projects. */
const ListQuery = Type.Object({
  order_by: Enum([...PROJECT_ORDERS, ...STATISTICS_ORDERS], 'created_at'),
  sort: Enum(['asc', 'desc'] as const, 'desc'),
  ...filterProps,
  search_namespaces: Bool(),
  imported: Bool(false),
  membership: Bool(false),
  with_programming_language: Type.Optional(Type.String()),
  id_after: Type.Optional(Type.Integer()),
  id_before: Type.Optional(Type.Integer()),
  last_activity_after: Type.Optional(Type.String()),
  last_activity_before: Type.Optional(Type.String()),
  repository_storage: Type.Optional(Type.String()),
  topic: StringList(),
  topic_id: Type.Optional(Type.Integer()),
  updated_before: Type.Optional(Type.String()),
  updated_after: Type.Optional(Type.String()),
  include_pending_delete: Bool(),
  ...PaginationProps,
  simple: Bool(false),
  statistics: Bool(false),
  with_custom_attributes: Bool(false),
  pagination: Type.Optional(Type.String()),
});
type ListQueryT = Static<typeof ListQuery>;

/** GET /groups/:id/projects */
const GroupListQuery = Type.Object({
  ...filterProps,
  order_by: Enum(PROJECT_ORDERS, 'created_at'),
  sort: Enum(['asc', 'desc'] as const, 'desc'),
  simple: Bool(false),
  with_shared: Bool(true),
  include_subgroups: Bool(false),
  include_ancestor_groups: Bool(false),
  ...PaginationProps,
  with_custom_attributes: Bool(false),
  pagination: Type.Optional(Type.String()),
});

const SingleQuery = Type.Object({ statistics: Bool(false), with_custom_attributes: Bool(false), license: Bool(false) });

function settingSchema(d: SettingDef): TSchema {
  if (d.kind === 'boolean') return Type.Boolean();
  if (d.kind === 'integer') return Type.Integer();
  if (d.kind === 'string[]') return Type.Array(Type.String());
  return d.values ? Type.Unsafe<string>({ type: 'string', enum: [...d.values] }) : Type.String();
}

/** optional_project_params (+ create or update params): every attribute the API takes besides name and path. */
function attributeProps(on: 'create' | 'update'): Record<string, TSchema> {
  const props: Record<string, TSchema> = {
    description: Type.Optional(Type.String()),
    visibility: Enum(VISIBILITIES),
    topics: StringList(),
    tag_list: StringList(),
    repository_storage: Type.Optional(Type.String()),
    container_expiration_policy_attributes: Type.Optional(Type.Object({}, { additionalProperties: true })),
    avatar: Type.Optional(Type.Unknown()),
  };
  for (const flag of Object.keys(LEGACY_FEATURE_FLAGS)) props[flag] = Type.Optional(Type.Boolean());
  for (const [f, values] of Object.entries(FEATURES)) props[`${f}_access_level`] = Enum(values);
  for (const alias of Object.keys(SETTING_ALIASES)) props[alias] = Type.Optional(Type.Boolean());
  for (const [k, d] of Object.entries(PROJECT_SETTINGS)) if (!d.on || d.on === on) props[k] = Type.Optional(settingSchema(d));
  if (on === 'update') {
    // Accepted as GitLab's API does; they have no effect here.
    for (const k of ['merge_pipelines_enabled', 'merge_trains_enabled']) props[k] = Type.Optional(Type.Boolean());
    props.merge_requests_template = Type.Optional(Type.String());
  }
  return props;
}

const CreateBody = Type.Object({
  name: Type.Optional(Type.String()),
  path: Type.Optional(Type.String()),
  default_branch: Type.Optional(Type.String()),
  namespace_id: Type.Optional(Type.Integer()),
  ...attributeProps('create'),
});

/** POST /projects/user/:user_id: name is required there. */
const CreateForUserBody = Type.Object({ ...CreateBody.properties, name: Type.String() });

const UpdateBody = Type.Object({
  name: Type.Optional(Type.String()),
  default_branch: Type.Optional(Type.String()),
  path: Type.Optional(Type.String()),
  ...attributeProps('update'),
});

/** Helpers::ProjectsHelpers.update_params_at_least_one_of, in GitLab's order. */
const UPDATE_AT_LEAST_ONE_OF = [
  'allow_merge_on_skipped_pipeline',
  'analytics_access_level',
  'autoclose_referenced_issues',
  'auto_devops_enabled',
  'auto_devops_deploy_strategy',
  'auto_cancel_pending_pipelines',
  'build_git_strategy',
  'build_timeout',
  'builds_access_level',
  'ci_config_path',
  'ci_default_git_depth',
  'ci_allow_fork_pipelines_to_run_in_parent_project',
  'ci_id_token_sub_claim_components',
  'ci_forward_deployment_enabled',
  'ci_forward_deployment_rollback_allowed',
  'ci_separated_caches',
  'container_registry_access_level',
  'container_expiration_policy_attributes',
  'default_branch',
  'description',
  'emails_disabled',
  'emails_enabled',
  'forking_access_level',
  'issues_access_level',
  'lfs_enabled',
  'merge_pipelines_enabled',
  'merge_requests_access_level',
  'merge_requests_template',
  'merge_trains_enabled',
  'merge_method',
  'merge_request_title_regex',
  'merge_request_title_regex_description',
  'name',
  'only_allow_merge_if_all_discussions_are_resolved',
  'only_allow_merge_if_pipeline_succeeds',
  'package_registry_access_level',
  'pages_access_level',
  'path',
  'printing_merge_request_link_enabled',
  'public_builds',
  'public_jobs',
  'remove_source_branch_after_merge',
  'repository_access_level',
  'request_access_enabled',
  'resolve_outdated_diff_discussions',
  'restrict_user_defined_variables',
  'show_diff_preview_in_email',
  'security_and_compliance_access_level',
  'squash_option',
  'shared_runners_enabled',
  'group_runners_enabled',
  'resource_group_default_process_mode',
  'snippets_access_level',
  'tag_list',
  'topics',
  'visibility',
  'wiki_access_level',
  'avatar',
  'suggestion_commit_message',
  'merge_commit_template',
  'squash_commit_template',
  'issue_branch_template',
  'repository_storage',
  'packages_enabled',
  'service_desk_enabled',
  'keep_latest_artifact',
  'mr_default_target_self',
  'enforce_auth_checks_on_uploads',
  'releases_access_level',
  'environments_access_level',
  'feature_flags_access_level',
  'infrastructure_access_level',
  'monitor_access_level',
  'model_experiments_access_level',
  'model_registry_access_level',
  'warn_about_potentially_unwanted_characters',
  'ci_pipeline_variables_minimum_override_role',
  'ci_push_repository_for_job_token_allowed',
  'ci_delete_pipelines_in_seconds',
  'max_artifacts_size',
  'issues_enabled',
  'jobs_enabled',
  'merge_requests_enabled',
  'wiki_enabled',
  'snippets_enabled',
  'container_registry_enabled',
];

const TransferBody = Type.Object({ namespace: Type.String() });
const Accepted = Type.Object({ message: Type.String() });

// ---- helpers ---------------------------------------------------------------------------------

/** CommaSeparatedToArray: each element may itself be "a,b". */
const splitList = (v: string[] | undefined) =>
  v
    ?.flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter(Boolean);

/** Who sees which version of a list: per user (memberships differ), with the admin flag (admin mode). */
/** GitLab's Boolean presence for at_least_one_of: the key was given (null counts as absent). */
const given = (body: Record<string, unknown>, key: string) => body[key] !== undefined && body[key] !== null;

export function projectsRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const projects = c.projects;
  const query = c.projectsQuery;
  const read = { api: 'platform' as const, auth: 'optional' as const };
  const write = { api: 'platform' as const, auth: 'user' as const };

  const viewContext = async (actor: Actor): Promise<ProjectViewContext> =>
    projectViewContext(userViewContext(c.config.externalUrl, await c.settings.get()), actor.isAdmin, (p) => c.repos.repository(p).isEmptySync());

  /** The project with its uploaded avatar stored. */
  async function withAvatar(project: ProjectRow, avatar: AvatarFile): Promise<ProjectRow> {
    return { ...project, avatar_url: await c.avatars.save('project', project.id, avatar) };
  }

  /** One project in `shape` as `actor` sees it. */
  async function present(actor: Actor, project: ProjectRow, shape: ProjectShape, extra: Record<string, unknown> = {}) {
    const [view] = await query.views(actor, [project]);
    return { ...toProject(view, shape, await viewContext(actor)), ...extra } as ProjectEntity;
  }

  /** A page of a project list: filters, keyset or offset pagination, the viewer's shape. */
  async function listPage(
    req: FastifyRequest,
    reply: FastifyReply,
    scope: ProjectScope,
    q: ListQueryT,
    routeParams: Record<string, unknown>,
    shape: ProjectShape,
  ) {
    const actor = req.actor;
    if ((q.updated_before !== undefined || q.updated_after !== undefined) && q.order_by !== 'updated_at') {
      throw Errors.badRequest('`updated_at` filter and `updated_at` sorting must be paired');
    }
    const filters: ProjectFilters = {
      ...q,
      order_by: q.order_by ?? 'created_at',
      sort: q.sort ?? 'desc',
      topic: splitList(q.topic),
      last_activity_after: dateTimeParam(q.last_activity_after, 'last_activity_after'),
      last_activity_before: dateTimeParam(q.last_activity_before, 'last_activity_before'),
      updated_after: dateTimeParam(q.updated_after, 'updated_after'),
      updated_before: dateTimeParam(q.updated_before, 'updated_before'),
    };
    const path = req.url.split('?')[0];
    const pageReq: PageRequest = { path, params: linkParams(q as Record<string, unknown>, routeParams, TOKEN_PARAMS), page: q.page, per_page: q.per_page };
    let rows: ProjectRow[];
    if (q.pagination === 'keyset') {
      // Keyset pagination of projects: ordered by id only (Gitlab::Pagination::Keyset).
      if (filters.order_by !== 'id') throw Errors.raw(405, { error: 'Keyset pagination is not yet available for this type of request' });
      const { perPage } = pageParams(pageReq);
      rows = await (await query.list(actor, scope, filters)).limit(perPage).execute();
      if (rows.length === perPage) {
        const bound = filters.sort === 'asc' ? { id_after: rows[rows.length - 1].id } : { id_before: rows[rows.length - 1].id };
        const params = { ...pageReq.params, ...bound, per_page: pageReq.per_page ?? 20 };
        reply.header('link', `<${c.config.externalUrl}${path}?${toQuery(params)}>; rel="next"`);
      }
    } else {
      const page = await offsetPaginate(c.db.kysely, c.config.externalUrl, pageReq, await query.list(actor, scope, filters), { offsetLimit: OFFSET_LIMIT });
      reply.headers(page.headers);
      rows = page.items;
    }
    const ctx = await viewContext(actor);
    return (await query.views(actor, rows)).map((v) => toProject(v, shape, ctx));
  }

  /** ProjectWithAccess for signed-in callers, BasicProjectDetails for anonymous ones and simple=true. */
  const listShape = (actor: Actor, simple: boolean | undefined): ProjectShape => (simple || !actor.user ? 'basic' : 'with_access');

  // ---- lists ---------------------------------------------------------------------------------

  app.get(
    '/api/v4/projects',
    { config: read, schema: { tags: TAGS, querystring: ListQuery, response: { 200: Type.Array(ProjectSchema) } } },
    async (req, reply) =>
      app.cachedResponse(req, reply, { tables: LIST_TABLES, viewer: actorKey(req.actor) }, () =>
        listPage(req, reply, { kind: 'all' }, req.query, {}, listShape(req.actor, req.query.simple)),
      ),
  );

  app.get(
    '/api/v4/users/:user_id/projects',
    { config: read, schema: { tags: TAGS, params: UserIdParams, querystring: ListQuery, response: { 200: Type.Array(ProjectSchema) } } },
    async (req, reply) =>
      app.cachedResponse(req, reply, { tables: LIST_TABLES, viewer: `${actorKey(req.actor)}|user:${req.params.user_id}` }, async () => {
        const key = req.params.user_id;
        const user = /^\d+$/.test(key) ? await c.users.byId(Number(key)) : await c.users.byUsername(key);
        if (!user) throw Errors.notFound('User');
        const ns = await c.users.personalNamespaceId(user.id);
        const actor = req.actor;
        // PersonalProjectsFinder: nothing to show of a private profile (but to its owner and administrators).
        const hidden = ns === undefined || (user.private_profile === 1 && !actor.isAdmin && actor.user?.id !== user.id);
        const scope: ProjectScope = { kind: 'namespace', namespaceId: hidden ? -1 : ns };
        return listPage(req, reply, scope, req.query, { user_id: key }, listShape(actor, req.query.simple));
      }),
  );

  // StarredProjectsFinder: a user's starred projects, hidden with a private profile.
  app.get(
    '/api/v4/users/:user_id/starred_projects',
    { config: read, schema: { tags: TAGS, params: UserIdParams, querystring: ListQuery, response: { 200: Type.Array(ProjectSchema) } } },
    async (req, reply) =>
      app.cachedResponse(req, reply, { tables: LIST_TABLES, viewer: `${actorKey(req.actor)}|starred:${req.params.user_id}` }, async () => {
        const key = req.params.user_id;
        const user = /^\d+$/.test(key) ? await c.users.byId(Number(key)) : await c.users.byUsername(key);
        if (!user) throw Errors.notFound('User');
        const hidden = user.private_profile === 1 && !req.actor.isAdmin && req.actor.user?.id !== user.id;
        return listPage(req, reply, { kind: 'starred', userId: hidden ? 0 : user.id }, req.query, { user_id: key }, listShape(req.actor, req.query.simple));
      }),
  );

  app.get(
    '/api/v4/groups/:id/projects',
    { config: read, schema: { tags: ['groups'], params: IdParams, querystring: GroupListQuery, response: { 200: Type.Array(ProjectSchema) } } },
    async (req, reply) =>
      app.cachedResponse(req, reply, { tables: LIST_TABLES, viewer: `${actorKey(req.actor)}|group:${req.params.id}` }, async () => {
        const { group } = await c.resolve.group(req.actor, req.params.id);
        const q = req.query;
        const scope: ProjectScope = { kind: 'group', group, includeSubgroups: !!q.include_subgroups, includeAncestors: !!q.include_ancestor_groups };
        // Group project lists show the Project entity, without permissions (lib/api/groups.rb).
        return listPage(req, reply, scope, q as ListQueryT, { id: req.params.id }, q.simple ? 'basic' : 'full');
      }),
  );

  // ---- single project ------------------------------------------------------------------------

  app.get(PROJECT, { config: read, schema: { tags: TAGS, params: IdParams, querystring: SingleQuery, response: { 200: ProjectSchema } } }, async (req) => {
    const { project } = await c.resolve.project(req.actor, req.params.id);
    const extra = req.query.license ? { license_url: null, license: null } : {};
    return present(req.actor, project, req.actor.user ? 'with_access' : 'details', extra);
  });

  app.post('/api/v4/projects', { config: write, schema: { tags: TAGS, body: CreateBody, response: { 201: ProjectSchema } } }, async (req, reply) => {
    const b = req.body;
    if (!given(b, 'name') && !given(b, 'path')) throw Errors.param('name, path are missing, at least one parameter must be provided');
    const avatar = avatarFile((b as Record<string, unknown>).avatar);
    c.avatars.check(avatar);
    let project = await projects.create(req.actor, b);
    if (avatar) project = await withAvatar(project, avatar);
    return reply.code(201).send(await present(req.actor, project, 'full'));
  });

  // An administrator creates a project for a user: it is created as that user would (their namespace,
  // their limits and visibility rules), and shown as the administrator sees it.
  app.post(
    '/api/v4/projects/user/:user_id',
    {
      config: { api: 'platform', auth: 'admin' },
      schema: { tags: TAGS, params: IntegerUserIdParams, body: CreateForUserBody, response: { 201: ProjectSchema } },
    },
    async (req, reply) => {
      const user = await c.users.byId(req.params.user_id);
      if (!user) throw Errors.notFound('User');
      const project = await projects.create(userActor(user, { credential: 'personal_access_token' }), req.body);
      return reply.code(201).send(await present(req.actor, project, 'full'));
    },
  );

  app.put(PROJECT, { config: write, schema: { tags: TAGS, params: IdParams, body: UpdateBody, response: { 200: ProjectSchema } } }, async (req) => {
    const b = (req.body ?? {}) as Record<string, unknown>;
    if (!UPDATE_AT_LEAST_ONE_OF.some((k) => given(b, k)))
      throw Errors.param(`${UPDATE_AT_LEAST_ONE_OF.join(', ')} are missing, at least one parameter must be provided`);
    const avatar = avatarFile(b.avatar);
    c.avatars.check(avatar);
    let project = await projects.update(req.actor, req.params.id, req.body);
    if (avatar) project = await withAvatar(project, avatar);
    return present(req.actor, project, 'full');
  });

  app.put(
    `${PROJECT}/transfer`,
    { config: write, schema: { tags: TAGS, params: IdParams, body: TransferBody, response: { 200: ProjectSchema } } },
    async (req) => present(req.actor, await projects.transfer(req.actor, req.params.id, req.body.namespace), 'full'),
  );

  for (const [action, archived] of [
    ['archive', true],
    ['unarchive', false],
  ] as const) {
    app.post(`${PROJECT}/${action}`, { config: write, schema: { tags: TAGS, params: IdParams, response: { 201: ProjectSchema } } }, async (req, reply) =>
      reply.code(201).send(await present(req.actor, await projects.setArchived(req.actor, req.params.id, archived), 'full')),
    );
  }

  app.delete(PROJECT, { config: write, schema: { tags: TAGS, params: IdParams, response: { 202: Accepted } } }, async (req, reply) => {
    // destroy_conditionally!: If-Unmodified-Since older than the project's last change → 412.
    const header = req.headers['if-unmodified-since'];
    const since = typeof header === 'string' ? Date.parse(header) : NaN;
    await projects.remove(req.actor, req.params.id, Number.isNaN(since) ? undefined : since);
    return reply.code(202).send({ message: '202 Accepted' });
  });
}
