// Group pages: `/groups/<full path>` (the groups' web_url: name, description, projects and subgroups,
// members count), `/<group path>` → 302 there, and the "New group" form (GET /groups/new, POST
// /groups). Groups are found through GroupsService.find (the Resolver and the policy, as the API):
// a group the viewer may not see is the 404 page; an old path redirects to the new one.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { NamespaceRow } from '../../db/schema.ts';
import { MovedError, type ResolvedGroup } from '../../domain/access/resolve.ts';
import { restrictedLevels } from '../../domain/access/visibility.ts';
import { GroupSaveError } from '../../domain/groups/groups.service.ts';
import { DomainError, Errors } from '../../lib/errors.ts';
import { formErrorsOf } from '../../web/views/components.tsx';
import { allowedValue, NewGroupPage, type NewGroupValues, visibilityLimits } from '../../web/views/dashboard/new-project.tsx';
import { GroupPage } from '../../web/views/groups/group-page.tsx';
import { groupSettingsHref, groupSettingsNav } from '../../web/views/groups/group-settings.tsx';
import { groupAncestors } from './group-ancestors.ts';
import { groupPage, listQuery, projectPage } from './lists.ts';
import { encodePath, HIDDEN, PAGE, type Web, type WebCtx } from './web.ts';

const VISIBILITIES = ['private', 'internal', 'public'];

/** A group path made from its name, as GitLab's form fills it in (letters, digits, '_', '-', '.'). */
export function pathFromName(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .replace(/\.(git|atom)$/, '');
}

function field(body: Record<string, unknown>, name: string): string {
  const v = body[name];
  return typeof v === 'string' ? v : '';
}

/** The group of a web path, or null when the viewer may not see it (or there is none). */
async function findGroup(c: Container, ctx: WebCtx, path: string): Promise<ResolvedGroup | { moved: string } | null> {
  try {
    return await c.groups.find(ctx.actor, path);
  } catch (e) {
    if (e instanceof MovedError) return { moved: e.fullPath };
    if (e instanceof DomainError && e.status === 404) return null;
    throw e;
  }
}

export function groupPages(app: FastifyInstance, c: Container, web: Web): void {
  /** The members count the group's member list shows (null: the viewer may not list them). */
  async function membersCount(found: ResolvedGroup): Promise<number | null> {
    const source = { type: 'Group' as const, group: found.group, access: found.access };
    return c.members.canList(source) ? c.members.count(source, { deep: true }) : null;
  }

  /** The form; a subgroup's URL prefix is its parent's path (when the viewer may see the parent). */
  async function renderNew(reply: FastifyReply, ctx: WebCtx, values: NewGroupValues & { parent_id: string }, errors: string[] | null, status = 200) {
    const found = /^\d{1,10}$/.test(values.parent_id) ? await findGroup(c, ctx, values.parent_id) : null;
    const parent = found && 'group' in found ? found.group : undefined;
    const restricted = restrictedLevels(await c.settings.get(), ctx.actor);
    return web.page(
      reply,
      NewGroupPage({
        ctx,
        values,
        errors,
        parentId: values.parent_id || undefined,
        parentPath: parent?.full_path,
        parentVisibility: parent?.visibility,
        restricted,
      }),
      status,
    );
  }

  // GitLab: /groups is your groups (the signed in) or the public ones (everybody else)
  app.get('/groups', { config: PAGE, schema: HIDDEN }, async (req, reply) =>
    reply.redirect((await web.context(req)).user ? '/dashboard/groups' : '/explore/groups', 302),
  );

  app.get('/groups/new', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const s = await c.settings.get();
    const wanted = String((req.query as Record<string, unknown>).parent_id ?? '');
    const parentId = /^\d{1,10}$/.test(wanted) ? wanted : '';
    // the default, or the most open level the parent and the restrictions allow below it
    const found = parentId ? await findGroup(c, ctx, parentId) : null;
    const parentVisibility = found && 'group' in found ? found.group.visibility : undefined;
    const limits = visibilityLimits({
      group: parentVisibility ? { visibility: parentVisibility, kind: 'group' } : undefined,
      restricted: restrictedLevels(s, ctx.actor),
    });
    return renderNew(reply, ctx, { name: '', path: '', visibility: allowedValue(s.default_group_visibility, limits), parent_id: parentId }, null);
  });

  app.post('/groups', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
    const values = {
      name: field(body, 'name').trim(),
      path: field(body, 'path').trim(),
      visibility: field(body, 'visibility'),
      parent_id: field(body, 'parent_id'),
    };
    const errors: string[] = [];
    if (!VISIBILITIES.includes(values.visibility)) errors.push('Visibility level must be Private, Internal or Public');
    if (values.parent_id && !/^\d{1,10}$/.test(values.parent_id)) errors.push('Parent group is not valid');
    if (errors.length) return renderNew(reply, ctx, values, errors, 422);
    try {
      const group = await c.groups.create(ctx.actor, {
        name: values.name,
        path: values.path || pathFromName(values.name),
        visibility: values.visibility,
        ...(values.parent_id ? { parent_id: Number(values.parent_id) } : {}),
      });
      return web.redirect(reply, `/groups/${encodePath(group.full_path)}`, { kind: 'notice', text: `Group '${group.name}' was successfully created.` });
    } catch (e) {
      if (e instanceof GroupSaveError) return renderNew(reply, ctx, values, formErrorsOf(Errors.invalid(e.fields)), 422);
      if (e instanceof DomainError && e.status === 404) return renderNew(reply, ctx, values, ['Parent group is not valid'], 422);
      if (e instanceof DomainError && e.status === 403) return renderNew(reply, ctx, values, ['You are not allowed to create a group here.'], 422);
      const messages = formErrorsOf(e);
      if (messages) return renderNew(reply, ctx, values, messages, 422);
      throw e;
    }
  });

  async function show(req: FastifyRequest, reply: FastifyReply, path: string) {
    const ctx = await web.context(req);
    const found = await findGroup(c, ctx, path);
    if (!found) return web.notFound(req, reply);
    const query = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
    if ('moved' in found) return reply.redirect(`/groups/${encodePath(found.moved)}${query}`, 301);
    const { group, access } = found;
    const q = listQuery(req);
    const tab = (req.query as Record<string, unknown>).tab === 'subgroups' ? 'subgroups' : 'projects';
    const [list, count, ancestors] = await Promise.all([
      tab === 'projects'
        ? projectPage(c, ctx.actor, { kind: 'group', group, includeSubgroups: false, includeAncestors: false }, {}, q).then((r) => ({
            ...r,
            groups: [] as NamespaceRow[],
            fullNames: new Map<number, string>(),
          }))
        : groupPage(c, ctx.actor, { parent: group, all_available: true }, q).then((r) => ({ ...r, views: [] })),
      membersCount(found),
      groupAncestors(c, group),
    ]);
    return web.page(
      reply,
      GroupPage({
        ctx,
        group,
        ancestors,
        tab,
        subgroups: list.groups,
        subgroupNames: list.fullNames,
        projects: list.views,
        membersCount: count,
        canCreateProject: !!ctx.user && access.abilities.has('create_projects'),
        canCreateSubgroup: !!ctx.user && access.abilities.has('create_subgroup'),
        settings: groupSettingsHref(group, groupSettingsNav(access.abilities)),
        page: q.page,
        hasNext: list.hasNext,
      }),
    );
  }

  // `/groups/<full path>`; `/groups/new` above wins (a static segment). Group sub-pages (`/-/…`) go to web.groupPage's.
  app.get('/groups/*', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    // find-my-way has decoded the wildcard already
    const path = ((req.params as Record<string, string>)['*'] ?? '').replace(/\/+$/, '');
    if (!path || path.split('/').some((s) => s === '' || s === '.' || s === '..')) return web.notFound(req, reply);
    const cut = path.indexOf('/-/');
    if (cut >= 0) return web.dispatchGroup(req, reply, path.slice(0, cut), path.slice(cut));
    return show(req, reply, path);
  });

  // `/<group path>` (no project there): GitLab serves the group page at both; we send it to one URL.
  web.namespacePage(async (_req, reply, ctx, path) => {
    if (path.includes('/-/')) return null;
    const found = await findGroup(c, ctx, path.replace(/^\//, ''));
    if (!found) return null;
    const full = 'moved' in found ? found.moved : found.group.full_path;
    return reply.redirect(`/groups/${encodePath(full)}`, 302);
  });
}
