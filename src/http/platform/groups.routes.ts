// Groups API (GitLab lib/api/groups.rb): lists with GroupsFinder's rules, single groups by id or
// URL-encoded full path, create/update/delete, subgroups and descendant groups. Projects of a group
// (GET /groups/:id/projects) live with the projects routes.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import type { Container } from '../../container.ts';
import { actorKey } from '../../domain/access/actor.ts';
import { MEMBER_ACCESS_LEVELS } from '../../domain/core/roles.ts';
import {
  BRANCH_PROTECTION_VALUES,
  GIT_ACCESS_PROTOCOLS,
  PROJECT_CREATION_LEVELS,
  SHARED_RUNNERS_SETTINGS,
  SUBGROUP_CREATION_LEVELS,
} from '../../domain/core/group-rules.ts';
import { GROUP_ORDER_COLUMNS, afterGroupCursor, failedToSave, groupCursor, type GroupListParams } from '../../domain/groups/groups.service.ts';
import type { NamespaceRow } from '../../db/schema.ts';
import { BRANCH_ACCESS_LEVELS } from '../../domain/core/settings-definitions.ts';
import { Errors } from '../../lib/errors.ts';
import { keysetHeaders, offsetPaginate, pageParams, type PageRequest } from '../../lib/pagination.ts';
import { send } from '../plugins/errors.ts';
import { GroupDetailSchema, GroupSchema, groupViewContext, toGroup, toGroupDetail, type GroupViewContext } from './entities/group.entity.ts';
import { Enum, IdParams, linkParams, PaginationProps } from './schemas/common.ts';
import { splitSkipGroups } from './schemas/skip-groups.ts';
import { avatarFile } from './schemas/avatar-file.ts';
import { avatarErrors } from '../../domain/avatars/avatars.service.ts';

const TAGS = ['groups'];
const GROUP = '/api/v4/groups/:id';
/** Offset pagination of groups stops here for the paginate-with-strategies path (reference §1.1). */
const OFFSET_LIMIT = { limit: 50_000, type: 'Group' };
/** Never echoed into Link headers. */
/** What a group list is made of (the response cache keys on their versions). */
const LIST_TABLES = ['namespaces', 'members', 'projects', 'users', 'application_settings'] as const;

const VISIBILITIES = ['private', 'internal', 'public'] as const;

const Bool = (def?: boolean) => Type.Optional(def === undefined ? Type.Boolean() : Type.Boolean({ default: def }));
/** Grape `values` of an integer, checked after the type ("abc" is only "<name> is invalid"). */
function checkValues(value: number | undefined, values: readonly number[], name: string): void {
  if (value !== undefined && !values.includes(value)) throw Errors.param(`${name} does not have a valid value`);
}

/** `group_list_params` (+ with_custom_attributes, keyset pagination). */
const ListQuery = Type.Object({
  statistics: Bool(false),
  skip_groups: Type.Optional(Type.Array(Type.Integer())),
  all_available: Bool(),
  visibility: Enum(VISIBILITIES),
  search: Type.Optional(Type.String()),
  owned: Bool(false),
  order_by: Enum(GROUP_ORDER_COLUMNS, 'name'),
  sort: Enum(['asc', 'desc'] as const, 'asc'),
  min_access_level: Type.Optional(Type.Integer()),
  top_level_only: Bool(),
  ...PaginationProps,
  with_custom_attributes: Bool(false),
  pagination: Type.Optional(Type.String()),
  cursor: Type.Optional(Type.String()),
});
type ListQueryT = Static<typeof ListQuery>;

const AccessLevels = (values: readonly number[]) => Type.Array(Type.Object({ access_level: Type.Unsafe<number>({ type: 'integer', enum: [...values] }) }));

/** `optional_params` of POST and PUT (lib/api/helpers/groups_helpers.rb), in Grape's order. */
const optionalProps = {
  description: Type.Optional(Type.String()),
  visibility: Enum(VISIBILITIES),
  share_with_group_lock: Bool(),
  require_two_factor_authentication: Bool(),
  two_factor_grace_period: Type.Optional(Type.Integer()),
  project_creation_level: Enum(PROJECT_CREATION_LEVELS),
  auto_devops_enabled: Bool(),
  subgroup_creation_level: Enum(SUBGROUP_CREATION_LEVELS),
  emails_disabled: Bool(),
  emails_enabled: Bool(),
  show_diff_preview_in_email: Bool(),
  mentions_disabled: Bool(),
  lfs_enabled: Bool(),
  request_access_enabled: Bool(),
  default_branch: Type.Optional(Type.String()),
  default_branch_protection: Type.Optional(Type.Integer()),
  default_branch_protection_defaults: Type.Optional(
    Type.Object({
      allowed_to_push: Type.Optional(AccessLevels(BRANCH_ACCESS_LEVELS)),
      allow_force_push: Bool(),
      allowed_to_merge: Type.Optional(AccessLevels(BRANCH_ACCESS_LEVELS.filter((l) => l !== 0))),
      code_owner_approval_required: Bool(),
      developer_can_initial_push: Bool(),
    }),
  ),
  shared_runners_setting: Enum(SHARED_RUNNERS_SETTINGS),
  enabled_git_access_protocol: Enum(GIT_ACCESS_PROTOCOLS),
  avatar: Type.Optional(Type.Unknown()),
};

const CreateBody = Type.Object({
  name: Type.String(),
  path: Type.String(),
  parent_id: Type.Optional(Type.Integer()),
  organization_id: Type.Optional(Type.Integer()),
  ...optionalProps,
});

const UpdateBody = Type.Object({
  name: Type.Optional(Type.String()),
  path: Type.Optional(Type.String()),
  ...optionalProps,
  prevent_sharing_groups_outside_hierarchy: Bool(),
  lock_math_rendering_limits_enabled: Bool(),
  math_rendering_limits_enabled: Bool(),
  max_artifacts_size: Type.Optional(Type.Integer()),
});

const ShowQuery = Type.Object({ with_custom_attributes: Bool(false), with_projects: Bool(true) });

/** The response cache's viewer: everything that changes which groups a list shows. */
export function groupsRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const groups = c.groups;
  const cfg = (auth: 'optional' | 'user') => ({ api: 'platform' as const, auth });

  const viewContext = async (rows: NamespaceRow[]): Promise<GroupViewContext> => {
    const [settings, fullNames] = await Promise.all([c.settings.get(), groups.fullNames(rows)]);
    return groupViewContext(c.config.externalUrl, settings, fullNames);
  };

  const detail = async (row: NamespaceRow, opts: { canAdmin: boolean; withProjects: boolean }) =>
    toGroupDetail(row, await viewContext([row]), {
      canAdmin: opts.canAdmin,
      // The projects of a group come with the projects API; the detail lists them empty for now.
      projects: opts.withProjects ? { own: [], shared: [] } : undefined,
    });

  /** One page of a group list: offset pagination, or cursor keyset for anonymous callers (GitLab's paginate_with_strategies). */
  async function listPage(req: FastifyRequest, reply: FastifyReply, q: ListQueryT, params: GroupListParams, pageReq: PageRequest) {
    const actor = req.actor;
    let query = await groups.listQuery(actor, params);
    let rows: NamespaceRow[];
    if (!actor.user && q.pagination === 'keyset') {
      if (params.order_by !== 'name' || params.sort !== 'asc')
        throw Errors.raw(405, { error: 'Keyset pagination is not yet available for this type of request' });
      const { perPage } = pageParams(pageReq);
      if (q.cursor !== undefined) {
        const after = afterGroupCursor(query, q.cursor);
        if (!after) throw Errors.param('cursor is invalid');
        query = after;
      }
      const found = await query.limit(perPage + 1).execute();
      rows = found.slice(0, perPage);
      reply.headers(keysetHeaders(c.config.externalUrl, pageReq, found.length > perPage ? groupCursor(rows[rows.length - 1]) : null));
    } else {
      const page = await offsetPaginate(c.db.kysely, c.config.externalUrl, pageReq, query, actor.user ? {} : { offsetLimit: OFFSET_LIMIT });
      reply.headers(page.headers);
      rows = page.items;
    }
    const ctx = await viewContext(rows);
    return rows.map((r) => toGroup(r, ctx));
  }

  const listParams = (q: ListQueryT, extra: Partial<GroupListParams> = {}): GroupListParams => {
    checkValues(q.min_access_level, MEMBER_ACCESS_LEVELS, 'min_access_level');
    return {
      search: q.search || undefined,
      owned: q.owned,
      min_access_level: q.min_access_level,
      all_available: q.all_available,
      top_level_only: q.top_level_only,
      visibility: q.visibility,
      skip_groups: q.skip_groups,
      order_by: q.order_by ?? 'name',
      sort: q.sort ?? 'asc',
      ...extra,
    };
  };

  app.get(
    '/api/v4/groups',
    { config: cfg('optional'), preValidation: splitSkipGroups, schema: { tags: TAGS, querystring: ListQuery, response: { 200: Type.Array(GroupSchema) } } },
    async (req, reply) => {
      const q = req.query;
      const params = listParams(q);
      const pageReq = { path: '/api/v4/groups', params: linkParams(q), page: q.page, per_page: q.per_page };
      return app.cachedResponse(req, reply, { tables: LIST_TABLES, viewer: actorKey(req.actor) }, () => listPage(req, reply, q, params, pageReq));
    },
  );

  const childrenRoute = (suffix: 'subgroups' | 'descendant_groups') =>
    app.get(
      `${GROUP}/${suffix}`,
      {
        config: cfg('optional'),
        preValidation: splitSkipGroups,
        schema: { tags: TAGS, params: IdParams, querystring: ListQuery, response: { 200: Type.Array(GroupSchema) } },
      },
      async (req, reply) => {
        const q = req.query;
        const { group } = await groups.find(req.actor, req.params.id);
        const pageReq = {
          path: `/api/v4/groups/${encodeURIComponent(req.params.id)}/${suffix}`,
          params: linkParams(q, { id: req.params.id }),
          page: q.page,
          per_page: q.per_page,
        };
        const params = listParams(q, { parent: group, descendants: suffix === 'descendant_groups' });
        return app.cachedResponse(req, reply, { tables: LIST_TABLES, viewer: `${actorKey(req.actor)}|${group.id}` }, () =>
          listPage(req, reply, q, params, pageReq),
        );
      },
    );
  childrenRoute('subgroups');
  childrenRoute('descendant_groups');

  app.post('/api/v4/groups', { config: cfg('user'), schema: { tags: TAGS, body: CreateBody, response: { 201: GroupDetailSchema } } }, async (req, reply) => {
    const { organization_id: _organization, avatar: avatarParam, ...input } = req.body;
    checkValues(input.default_branch_protection, BRANCH_PROTECTION_VALUES, 'default_branch_protection');
    const avatar = avatarFile(avatarParam);
    // Groups::CreateService renders the model's errors inside a string
    if (avatar) {
      const errors = avatarErrors(avatar);
      if (errors.length) throw failedToSave({ avatar: errors });
    }
    let group = await groups.create(req.actor, input);
    if (avatar) group = { ...group, avatar_url: await c.avatars.save('group', group.id, avatar) };
    // Created groups are presented without their projects and without the admin-only fields.
    return reply.code(201).send(toGroupDetail(group, await viewContext([group]), { canAdmin: false }));
  });

  app.get(
    GROUP,
    { config: cfg('optional'), schema: { tags: TAGS, params: IdParams, querystring: ShowQuery, response: { 200: GroupDetailSchema } } },
    async (req) => {
      const { group, access } = await groups.find(req.actor, req.params.id);
      return detail(group, { canAdmin: access.abilities.has('admin_group'), withProjects: req.query.with_projects !== false });
    },
  );

  app.put(GROUP, { config: cfg('user'), schema: { tags: TAGS, params: IdParams, body: UpdateBody, response: { 200: GroupDetailSchema } } }, async (req) => {
    const { avatar: avatarParam, ...input } = req.body;
    checkValues(input.default_branch_protection, BRANCH_PROTECTION_VALUES, 'default_branch_protection');
    const avatar = avatarFile(avatarParam);
    c.avatars.check(avatar);
    let { group, access } = await groups.update(req.actor, req.params.id, input);
    if (avatar) group = { ...group, avatar_url: await c.avatars.save('group', group.id, avatar) };
    return detail(group, { canAdmin: access.abilities.has('admin_group'), withProjects: true });
  });

  // POST /groups/:id/transfer (Groups::TransferService): under group_id, or to the top level without it
  app.post(
    `${GROUP}/transfer`,
    {
      config: cfg('user'),
      schema: {
        tags: TAGS,
        params: IdParams,
        body: Type.Optional(Type.Object({ group_id: Type.Optional(Type.Integer({ 'x-int32': false })) })),
        response: { 201: GroupDetailSchema },
      },
    },
    async (req, reply) => {
      const { group, access } = await groups.transfer(req.actor, req.params.id, req.body?.group_id);
      return reply.code(201).send(await detail(group, { canAdmin: access.abilities.has('admin_group'), withProjects: true }));
    },
  );

  app.delete(GROUP, { config: cfg('user'), schema: { tags: TAGS, params: IdParams } }, async (req, reply) => {
    await groups.remove(req.actor, req.params.id);
    return send(reply, 202, { message: '202 Accepted' });
  });
}
