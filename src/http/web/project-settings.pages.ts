// Project settings pages (Maintainers and up; invisible projects are 404, visible ones 403):
// /-/edit, /-/project_members, /-/settings/repository, /-/hooks and /-/hooks/:id/edit below a
// project's path; their forms post to /-/p/:project_id/…. Every write goes through the service the
// API uses (c.projects, c.members, c.protectedRefs, c.webHooks, c.deliveries) with the viewer's actor.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { WebHookRow } from '../../db/schema.ts';
import type { Actor } from '../../domain/access/actor.ts';
import { restrictedLevels } from '../../domain/access/visibility.ts';
import type { ResolvedProject } from '../../domain/access/resolve.ts';
import type { ProjectAbility } from '../../domain/core/roles.ts';
import { DeliveryBusy } from '../../domain/hooks/deliveries.ts';
import { testHookData } from '../../domain/hooks/test-hooks.ts';
import { type HookParent, PROJECT_HOOK_FLAGS, type WebHookInput } from '../../domain/hooks/web-hooks.service.ts';
import type { MemberSource } from '../../domain/members/members.service.ts';
import { isOwner } from '../../domain/projects/projects.service.ts';
import { ALLOWED_ACCESS_LEVELS, humanAccessLevel } from '../../domain/repository/branch-protection.ts';
import { DomainError, Errors } from '../../lib/errors.ts';
import { visibilityLimits } from '../../web/views/dashboard/new-project.tsx';
import { bodyOf, errorsOf, flag, str } from '../../web/views/settings/form-input.ts';
import {
  GeneralPage,
  type GeneralValues,
  HookEditPage,
  type HookFormValues,
  HooksPage,
  hookValues,
  MembersPage,
  projectUrl,
  RepositoryPage,
  type RepositoryPageProps,
} from '../../web/views/settings/project.tsx';
import { HIDDEN, PAGE, type Web, type WebCtx } from './web.ts';

const MEMBER_LIST_LIMIT = 500;
const RECENT_ATTEMPTS = 20;
const ID_RE = /^\d{1,10}$/;
const VISIBILITIES = ['private', 'internal', 'public'];

/** 403 for a visible project the viewer may not administer (invisible ones were 404 already). */
function require(resolved: ResolvedProject, ability: ProjectAbility): void {
  if (!resolved.access.abilities.has(ability)) throw Errors.forbidden();
}

const LEVELS = ALLOWED_ACCESS_LEVELS.map((l) => ({ value: String(l), text: humanAccessLevel(l) }));

function emptyHook(): HookFormValues {
  return { url: '', name: '', token: '', push_events_branch_filter: '', flags: { push_events: true, enable_ssl_verification: true } };
}

/** The hook form as the API's parameters: every flag given (a checkbox's hidden 0 or its 1). */
function hookInput(b: Record<string, unknown>, editing: boolean): { values: HookFormValues; input: WebHookInput } {
  const values: HookFormValues = {
    url: str(b.url).trim(),
    name: str(b.name),
    token: str(b.token),
    push_events_branch_filter: str(b.push_events_branch_filter),
    flags: Object.fromEntries(PROJECT_HOOK_FLAGS.map((f) => [f, flag(b[f])])),
  };
  const input: WebHookInput = { url: values.url, name: values.name, push_events_branch_filter: values.push_events_branch_filter, ...values.flags };
  // editing: an empty token keeps the stored one
  if (values.token || !editing) input.token = values.token;
  return { values: { ...values, token: '' }, input };
}

export function projectSettingsPages(app: FastifyInstance, c: Container, web: Web): void {
  /** The project of a form post, as the viewer sees it (404 when invisible or not an id). */
  const projectOf = async (req: FastifyRequest): Promise<{ ctx: WebCtx; resolved: ResolvedProject }> => {
    const ctx = await web.requireUser(req);
    const id = (req.params as { project_id: string }).project_id;
    if (!ID_RE.test(id)) throw Errors.notFound('Project');
    return { ctx, resolved: await c.resolve.project(ctx.actor, id) };
  };
  const back = (r: ResolvedProject, page: string) => `${projectUrl(r)}/-/${page}`;
  const post = (path: string, handler: (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>) =>
    app.post(`/-/p/:project_id/${path}`, { config: PAGE, schema: HIDDEN }, handler);

  // ---- general ----

  const generalPage = async (
    reply: FastifyReply,
    ctx: WebCtx,
    r: ResolvedProject,
    opts: { values?: GeneralValues; errors?: string[] | null; deleteErrors?: string[] | null; status?: number } = {},
  ) => {
    const repo = c.repos.repository(r.project);
    const branches = repo.exists() ? (await repo.branches()).map((b) => b.short) : [];
    const p = r.project;
    return web.page(
      reply,
      GeneralPage({
        ctx,
        ref: r,
        values: opts.values ?? { name: p.name, description: p.description ?? '', visibility: p.visibility, default_branch: p.default_branch ?? '' },
        branches,
        owner: isOwner(ctx.actor, r.access),
        visibilityDisabled: await visibilityDisabled(ctx, r),
        canArchive: r.access.abilities.has('archive_project'),
        canRemove: r.access.abilities.has('remove_project'),
        errors: opts.errors,
        deleteErrors: opts.deleteErrors,
      }),
      opts.status,
    );
  };

  /** What ProjectsService.update refuses: levels above the group's, restricted ones (the current level stays allowed). */
  const visibilityDisabled = async (ctx: WebCtx, r: ResolvedProject): Promise<Record<string, string>> => {
    const restricted = restrictedLevels(await c.settings.get(), ctx.actor);
    const limits = visibilityLimits({
      group: r.namespace.type === 'Group' ? { visibility: r.namespace.visibility, kind: 'project' } : undefined,
      restricted: restricted.filter((v) => v !== r.project.visibility),
    });
    return limits;
  };

  web.projectPage('/-/edit', async (_req, reply, { ctx, resolved }) => {
    require(resolved, 'admin_project');
    return generalPage(reply, ctx, resolved);
  });

  post('edit', async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    require(resolved, 'admin_project');
    const b = bodyOf(req.body);
    const p = resolved.project;
    const values: GeneralValues = {
      name: 'name' in b ? str(b.name) : p.name,
      description: str(b.description),
      visibility: 'visibility' in b ? str(b.visibility) : p.visibility,
      default_branch: 'default_branch' in b ? str(b.default_branch) : (p.default_branch ?? ''),
    };
    // only what changed: renaming and visibility are Owners' (the API answers 403 to others even for the same value)
    const input: Record<string, string> = { description: values.description };
    if (values.name !== p.name) input.name = values.name;
    if (values.visibility !== p.visibility) input.visibility = values.visibility;
    if (values.default_branch && values.default_branch !== p.default_branch) input.default_branch = values.default_branch;
    try {
      // the API's schema allows these three only (the service trusts its callers)
      if (input.visibility !== undefined && !VISIBILITIES.includes(input.visibility)) throw Errors.param('visibility does not have a valid value');
      const updated = await c.projects.update(ctx.actor, String(p.id), input);
      return web.redirect(reply, back({ project: updated, namespace: resolved.namespace } as ResolvedProject, 'edit'), {
        kind: 'notice',
        text: `Project '${updated.name}' was successfully updated.`,
      });
    } catch (e) {
      const errors = errorsOf(e) ?? (e instanceof DomainError && e.status === 403 ? ['You are not allowed to change this.'] : null);
      if (!errors) throw e;
      return generalPage(reply, ctx, resolved, { values, errors, status: 422 });
    }
  });

  for (const [action, archived] of [
    ['archive', true],
    ['unarchive', false],
  ] as const) {
    post(action, async (req, reply) => {
      const { ctx, resolved } = await projectOf(req);
      await c.projects.setArchived(ctx.actor, String(resolved.project.id), archived);
      return web.redirect(reply, back(resolved, 'edit'), { kind: 'notice', text: archived ? 'Project archived.' : 'Project unarchived.' });
    });
  }

  post('delete', async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    require(resolved, 'remove_project');
    const fullPath = `${resolved.namespace.full_path}/${resolved.project.path}`;
    if (str(bodyOf(req.body).confirm_path).trim() !== fullPath) {
      return generalPage(reply, ctx, resolved, { deleteErrors: [`Type ${fullPath} to confirm the deletion.`], status: 422 });
    }
    await c.projects.remove(ctx.actor, String(resolved.project.id));
    return web.redirect(reply, '/', { kind: 'notice', text: `Project '${fullPath}' was deleted.` });
  });

  // ---- members ----

  const sourceOf = (r: ResolvedProject): MemberSource => ({ type: 'Project', project: r.project, namespace: r.namespace, access: r.access });
  const membersPage = async (
    reply: FastifyReply,
    ctx: WebCtx,
    r: ResolvedProject,
    opts: { values?: { username: string; access_level: string; expires_at: string }; errors?: string[] | null; status?: number } = {},
  ) => {
    const rows = await c.members.list(sourceOf(r), { deep: false }).limit(MEMBER_LIST_LIMIT).execute();
    return web.page(
      reply,
      MembersPage({
        ctx,
        ref: r,
        members: await c.members.viewsOfRows(rows),
        canManage: r.access.abilities.has('admin_project_member'),
        values: opts.values ?? { username: '', access_level: '30', expires_at: '' },
        errors: opts.errors,
      }),
      opts.status,
    );
  };

  web.projectPage('/-/project_members', async (_req, reply, { ctx, resolved }) => {
    require(resolved, 'admin_project');
    return membersPage(reply, ctx, resolved);
  });

  /** The level of a role select: a number, or 0 which the service refuses with its own message. */
  const level = (v: unknown) => (/^\d{1,3}$/.test(str(v)) ? Number(str(v)) : 0);

  post('members', async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    require(resolved, 'admin_project');
    const b = bodyOf(req.body);
    const values = { username: str(b.username).trim(), access_level: str(b.access_level), expires_at: str(b.expires_at).trim() };
    try {
      if (!values.username) throw Errors.invalid({ username: ["can't be blank"] });
      await c.members.add(ctx.actor, sourceOf(resolved), {
        username: values.username,
        access_level: level(values.access_level),
        expires_at: values.expires_at || undefined,
      });
    } catch (e) {
      // the project is resolved already: a 404 here is the user
      const errors = e instanceof DomainError && e.status === 404 ? [`User '${values.username}' was not found.`] : errorsOf(e);
      if (!errors) throw e;
      return membersPage(reply, ctx, resolved, { values, errors, status: 422 });
    }
    return web.redirect(reply, back(resolved, 'project_members'), { kind: 'notice', text: `${values.username} was added to the project.` });
  });

  const memberId = (req: FastifyRequest): number => {
    const id = (req.params as { user_id: string }).user_id;
    if (!ID_RE.test(id)) throw Errors.notFound('Member');
    return Number(id);
  };

  app.post('/-/p/:project_id/members/:user_id', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    require(resolved, 'admin_project');
    try {
      await c.members.update(ctx.actor, sourceOf(resolved), memberId(req), { access_level: level(bodyOf(req.body).access_level) });
    } catch (e) {
      const errors = errorsOf(e);
      if (!errors) throw e;
      return web.redirect(reply, back(resolved, 'project_members'), { kind: 'alert', text: errors.join(' ') });
    }
    return web.redirect(reply, back(resolved, 'project_members'), { kind: 'notice', text: 'Role updated.' });
  });

  app.post('/-/p/:project_id/members/:user_id/delete', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    require(resolved, 'admin_project');
    try {
      await c.members.remove(ctx.actor, sourceOf(resolved), memberId(req), { skipSubresources: false });
    } catch (e) {
      const errors = errorsOf(e);
      if (!errors) throw e;
      return web.redirect(reply, back(resolved, 'project_members'), { kind: 'alert', text: errors.join(' ') });
    }
    return web.redirect(reply, back(resolved, 'project_members'), { kind: 'notice', text: 'Member removed from the project.' });
  });

  // ---- protected branches and tags ----

  const repositoryPage = async (
    reply: FastifyReply,
    ctx: WebCtx,
    r: ResolvedProject,
    opts: Partial<Pick<RepositoryPageProps, 'branchValues' | 'tagValues' | 'branchErrors' | 'tagErrors'>> & { status?: number } = {},
  ) => {
    const [branchRows, tagRows] = await Promise.all([c.protectedRefs.branchesQuery(r).limit(500).execute(), c.protectedRefs.tagsQuery(r).limit(500).execute()]);
    const [branches, tags] = await Promise.all([c.protectedRefs.branchViews(branchRows), c.protectedRefs.tagViews(tagRows)]);
    return web.page(
      reply,
      RepositoryPage({
        ctx,
        ref: r,
        branches,
        tags,
        levels: LEVELS,
        describe: humanAccessLevel,
        branchValues: opts.branchValues ?? { name: '', push_access_level: '40', merge_access_level: '40', allow_force_push: false },
        tagValues: opts.tagValues ?? { name: '', create_access_level: '40' },
        branchErrors: opts.branchErrors,
        tagErrors: opts.tagErrors,
      }),
      opts.status,
    );
  };
  /** c.protectedRefs.project: the API's own check (admin_project; 404 invisible, 403 visible). */
  const refsProject = (actor: Actor, id: number) => c.protectedRefs.project(actor, String(id));

  web.projectPage('/-/settings/repository', async (_req, reply, { ctx, resolved }) => {
    const r = await refsProject(ctx.actor, resolved.project.id);
    return repositoryPage(reply, ctx, r);
  });

  post('protected_branches', async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    const r = await refsProject(ctx.actor, resolved.project.id);
    const b = bodyOf(req.body);
    const branchValues = {
      name: str(b.name).trim(),
      push_access_level: str(b.push_access_level),
      merge_access_level: str(b.merge_access_level),
      allow_force_push: flag(b.allow_force_push),
    };
    const lv = (v: string) => (LEVELS.some((l) => l.value === v) ? Number(v) : undefined);
    try {
      if (lv(branchValues.push_access_level) === undefined || lv(branchValues.merge_access_level) === undefined)
        throw Errors.unprocessable(['Choose an access level']);
      await c.protectedRefs.createBranch(r, {
        name: branchValues.name,
        push_access_level: lv(branchValues.push_access_level),
        merge_access_level: lv(branchValues.merge_access_level),
        allow_force_push: branchValues.allow_force_push,
      });
    } catch (e) {
      const errors = errorsOf(e);
      if (!errors) throw e;
      return repositoryPage(reply, ctx, r, { branchValues, branchErrors: errors, status: 422 });
    }
    return web.redirect(reply, back(r, 'settings/repository'), { kind: 'notice', text: `Branch ${branchValues.name} is protected.` });
  });

  post('protected_branches/delete', async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    const r = await refsProject(ctx.actor, resolved.project.id);
    const name = str(bodyOf(req.body).name);
    try {
      await c.protectedRefs.deleteBranch(ctx.actor, r, name);
    } catch (e) {
      const errors = e instanceof DomainError && e.status === 404 ? [`Branch ${name} is not protected.`] : errorsOf(e);
      if (!errors) throw e;
      return web.redirect(reply, back(r, 'settings/repository'), { kind: 'alert', text: errors.join(' ') });
    }
    return web.redirect(reply, back(r, 'settings/repository'), { kind: 'notice', text: `Branch ${name} is unprotected.` });
  });

  post('protected_tags', async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    const r = await refsProject(ctx.actor, resolved.project.id);
    const b = bodyOf(req.body);
    const tagValues = { name: str(b.name).trim(), create_access_level: str(b.create_access_level) };
    const known = LEVELS.some((l) => l.value === tagValues.create_access_level);
    try {
      if (!known) throw Errors.unprocessable(['Choose an access level']);
      await c.protectedRefs.createTag(r, { name: tagValues.name, create_access_level: Number(tagValues.create_access_level) });
    } catch (e) {
      const errors = errorsOf(e);
      if (!errors) throw e;
      return repositoryPage(reply, ctx, r, { tagValues, tagErrors: errors, status: 422 });
    }
    return web.redirect(reply, back(r, 'settings/repository'), { kind: 'notice', text: `Tag ${tagValues.name} is protected.` });
  });

  post('protected_tags/delete', async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    const r = await refsProject(ctx.actor, resolved.project.id);
    const name = str(bodyOf(req.body).name);
    try {
      await c.protectedRefs.deleteTag(r, name);
    } catch (e) {
      const errors = e instanceof DomainError && e.status === 404 ? [`Tag ${name} is not protected.`] : errorsOf(e);
      if (!errors) throw e;
      return web.redirect(reply, back(r, 'settings/repository'), { kind: 'alert', text: errors.join(' ') });
    }
    return web.redirect(reply, back(r, 'settings/repository'), { kind: 'notice', text: `Tag ${name} is unprotected.` });
  });

  // ---- webhooks ----

  /** c.webHooks.projectParent: the API's check (admin_web_hook; 404 invisible, 403 visible). */
  const parentOf = (actor: Actor, r: ResolvedProject): Promise<HookParent> => c.webHooks.projectParent(actor, String(r.project.id));
  const hooksPage = async (
    reply: FastifyReply,
    ctx: WebCtx,
    r: ResolvedProject,
    parent: HookParent,
    opts: { values?: HookFormValues; errors?: string[] | null; status?: number } = {},
  ) => {
    const hooks = await c.webHooks.listQuery(parent).limit(100).execute();
    return web.page(reply, HooksPage({ ctx, ref: r, hooks, flags: PROJECT_HOOK_FLAGS, values: opts.values ?? emptyHook(), errors: opts.errors }), opts.status);
  };
  const editPage = async (
    reply: FastifyReply,
    ctx: WebCtx,
    r: ResolvedProject,
    hook: WebHookRow,
    opts: { values?: HookFormValues; errors?: string[] | null; status?: number } = {},
  ) => {
    const attempts = await c.deliveries.attemptsQuery(hook.id, 'web').limit(RECENT_ATTEMPTS).execute();
    return web.page(
      reply,
      HookEditPage({
        ctx,
        ref: r,
        hook,
        flags: PROJECT_HOOK_FLAGS,
        values: opts.values ?? hookValues(hook, PROJECT_HOOK_FLAGS),
        attempts,
        errors: opts.errors,
      }),
      opts.status,
    );
  };
  const hookId = (req: FastifyRequest): number => {
    const id = (req.params as { hook_id: string }).hook_id;
    if (!ID_RE.test(id) || Number(id) > 2 ** 31 - 1) throw Errors.recordNotFound();
    return Number(id);
  };

  web.projectPage('/-/hooks', async (_req, reply, { ctx, resolved }) => hooksPage(reply, ctx, resolved, await parentOf(ctx.actor, resolved)));

  web.projectPage('/-/hooks/:hook_id/edit', async (req, reply, { ctx, resolved, params }) => {
    const parent = await parentOf(ctx.actor, resolved);
    const id = params.hook_id ?? '';
    if (!ID_RE.test(id) || Number(id) > 2 ** 31 - 1) return web.notFound(req, reply);
    return editPage(reply, ctx, resolved, await c.webHooks.get(parent, Number(id)));
  });

  post('hooks', async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    const parent = await parentOf(ctx.actor, resolved);
    const { values, input } = hookInput(bodyOf(req.body), false);
    try {
      await c.webHooks.create(parent, input);
    } catch (e) {
      const errors = errorsOf(e);
      if (!errors) throw e;
      return hooksPage(reply, ctx, resolved, parent, { values, errors, status: 422 });
    }
    return web.redirect(reply, back(resolved, 'hooks'), { kind: 'notice', text: 'Webhook was created.' });
  });

  app.post('/-/p/:project_id/hooks/:hook_id', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    const parent = await parentOf(ctx.actor, resolved);
    const hook = await c.webHooks.get(parent, hookId(req));
    const { values, input } = hookInput(bodyOf(req.body), true);
    try {
      await c.webHooks.update(parent, hook.id, input);
    } catch (e) {
      const errors = errorsOf(e);
      if (!errors) throw e;
      return editPage(reply, ctx, resolved, hook, { values, errors, status: 422 });
    }
    return web.redirect(reply, back(resolved, 'hooks'), { kind: 'notice', text: 'Webhook was updated.' });
  });

  app.post('/-/p/:project_id/hooks/:hook_id/delete', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    await c.webHooks.delete(await parentOf(ctx.actor, resolved), hookId(req));
    return web.redirect(reply, back(resolved, 'hooks'), { kind: 'notice', text: 'Webhook was deleted.' });
  });

  // the API's test: the push trigger's sample data, sent now
  app.post('/-/p/:project_id/hooks/:hook_id/test', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    const parent = await parentOf(ctx.actor, resolved);
    const hook = await c.webHooks.get(parent, hookId(req));
    const data = await testHookData({ kysely: c.db.kysely, repos: c.repos, externalUrl: c.config.externalUrl }, ctx.actor, parent, 'push_events');
    if ('error' in data) return web.redirect(reply, back(resolved, 'hooks'), { kind: 'alert', text: `Hook execution failed: ${data.error}` });
    const outcome = await c.deliveries.deliverNow(hook, data.payload);
    const status = Number(outcome.status);
    if (status >= 200 && status < 300)
      return web.redirect(reply, back(resolved, 'hooks'), { kind: 'notice', text: `Hook executed successfully: HTTP ${status}` });
    return web.redirect(reply, back(resolved, 'hooks'), { kind: 'alert', text: `Hook execution failed: ${outcome.error ?? `HTTP ${outcome.status}`}` });
  });

  app.post('/-/p/:project_id/hooks/:hook_id/events/:event_id/resend', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    const hook = await c.webHooks.get(await parentOf(ctx.actor, resolved), hookId(req));
    const eventId = (req.params as { event_id: string }).event_id;
    const attempt = ID_RE.test(eventId) && Number(eventId) <= 2 ** 31 - 1 ? await c.deliveries.attemptOf(hook.id, Number(eventId), 'web') : undefined;
    if (!attempt) throw Errors.recordNotFound();
    const to = `${back(resolved, 'hooks')}/${hook.id}/edit`;
    try {
      const outcome = await c.deliveries.resend(hook, attempt.delivery_id);
      return web.redirect(reply, to, { kind: 'notice', text: `Delivery sent again: HTTP ${outcome.status}` });
    } catch (e) {
      if (e instanceof DeliveryBusy) return web.redirect(reply, to, { kind: 'alert', text: 'The event is being delivered' });
      throw e;
    }
  });
}
