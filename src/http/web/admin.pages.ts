// The admin area (administrators; the anonymous are sent to sign in, everyone else gets the 404 page):
// /admin, /admin/users, /admin/users/:username (block, unblock), /admin/hooks (system hooks, their
// deliveries, resend), /admin/runners (every runner: type, status, last contact; editing one is runners.pages.ts'),
// /admin/ci/variables (the instance's CI/CD variables, the forms of ci-forms.ts), /admin/application_settings/general.
// Each write calls the service of the matching API endpoint (c.users.block/unblock, c.hooks, c.deliveries,
// c.ci.variables, c.settings.update).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SelectQueryBuilder } from 'kysely';
import type { Container } from '../../container.ts';
import type { SystemHookRow, UserRow } from '../../db/schema.ts';
import { DeliveryBusy, MOCK_SYSTEM_EVENT } from '../../domain/hooks/deliveries.ts';
import type { HookInput } from '../../domain/hooks/system-hooks.service.ts';
import type { ListUsersInput } from '../../domain/users/users.service.ts';
import { VIEW_COLUMNS } from '../../domain/core/user-columns.ts';
import { DomainError, Errors } from '../../lib/errors.ts';
import { offsetPaginate } from '../../lib/pagination.ts';
import {
  AdminHook,
  AdminHooks,
  AdminOverview,
  AdminRunners,
  AdminSettings,
  AdminUser,
  AdminUsers,
  AdminVariableEdit,
  AdminVariables,
  GENERAL_SETTINGS,
  type SettingField,
  SYSTEM_HOOK_FLAGS,
  type SystemHookValues,
} from '../../web/views/admin/admin.tsx';
import { bodyOf, errorsOf, flag, str } from '../../web/views/settings/form-input.ts';
import { EMPTY_VARIABLE } from '../../web/views/settings/ci-variables.tsx';
import type { RunnerItem } from '../../web/views/settings/runners.tsx';
import { runnerItems, type VariablePlace, variableEditPage, variableForms } from './ci-forms.ts';
import { encodePath, HIDDEN, PAGE, type Web, type WebCtx } from './web.ts';

const PER_PAGE = 20;
const RECENT_ATTEMPTS = 20;
const ID_RE = /^\d{1,10}$/;

/** A stored setting as its form field shows it (lists one entry per line). */
function shown(f: SettingField, v: unknown): string | boolean {
  if (f.kind === 'bool') return v === true;
  if (f.kind === 'list') return Array.isArray(v) ? v.join('\n') : '';
  return v === null || v === undefined ? '' : String(v);
}

/** Settings errors name the key as the API does: `default_projects_limit must be …`. */
function settingsErrors(e: unknown): string[] | null {
  if (e instanceof DomainError && e.kind === 'invalid' && e.detail && typeof e.detail === 'object') {
    return Object.entries(e.detail as Record<string, unknown>).flatMap(([k, msgs]) => (Array.isArray(msgs) ? msgs : [msgs]).map((m) => `${k} ${String(m)}`));
  }
  return errorsOf(e);
}

export function adminPages(app: FastifyInstance, c: Container, web: Web): void {
  const admin = (req: FastifyRequest): Promise<WebCtx & { user: UserRow }> => web.requireAdmin(req);
  const route = { config: PAGE, schema: HIDDEN };
  const count = async (query: SelectQueryBuilder<any, any, any>): Promise<number | null> => {
    const page = await offsetPaginate(c.db.kysely, c.config.externalUrl, { path: '/admin', params: {}, page: 1, per_page: 1 }, query);
    const total = page.headers['x-total'];
    return total === undefined || total === '' ? null : Number(total);
  };

  // ---- overview ----

  app.get('/admin', route, async (req, reply) => {
    const ctx = await admin(req);
    const actor = ctx.actor;
    const [users, blocked, projects, groups, hooks] = await Promise.all([
      count(c.users.list(actor, {}).query.select('users.id')),
      count(c.users.list(actor, { blocked: true }).query.select('users.id')),
      c.projectsQuery.list(actor, { kind: 'all' }, { order_by: 'id', sort: 'asc' }).then(count),
      c.groups.listQuery(actor, { all_available: true, order_by: 'id', sort: 'asc' } as Parameters<typeof c.groups.listQuery>[1]).then(count),
      count(c.hooks.listQuery()),
    ]);
    return web.page(reply, AdminOverview({ ctx, counts: { users, blocked, projects, groups, hooks } }));
  });

  // ---- users ----

  app.get('/admin/users', route, async (req, reply) => {
    const ctx = await admin(req);
    const q = bodyOf(req.query);
    const search = str(q.search).trim();
    const state = str(q.state);
    const page = /^\d{1,6}$/.test(str(q.page)) && Number(q.page) > 0 ? Number(q.page) : 1;
    const filters: ListUsersInput = { order_by: 'id', sort: 'desc' };
    if (search) filters.search = search;
    if (state === 'active') filters.active = true;
    if (state === 'blocked') filters.blocked = true;
    if (state === 'admins') filters.admins = true;
    if (state === 'external') filters.external = true;
    const list = c.users.list(ctx.actor, filters);
    const result = await offsetPaginate(
      c.db.kysely,
      c.config.externalUrl,
      { path: '/admin/users', params: {}, page, per_page: PER_PAGE },
      list.query.select([...VIEW_COLUMNS]),
    );
    return web.page(reply, AdminUsers({ ctx, users: result.items, search, state, page, hasNext: !!result.headers['x-next-page'] }));
  });

  const userOf = async (req: FastifyRequest) => {
    const username = (req.params as { username: string }).username;
    const user = await c.users.byUsername(username);
    if (!user) throw Errors.notFound('User');
    return user;
  };

  app.get('/admin/users/:username', route, async (req, reply) => {
    const ctx = await admin(req);
    return web.page(reply, AdminUser({ ctx, user: await userOf(req) }));
  });

  for (const action of ['block', 'unblock'] as const) {
    app.post(`/admin/users/:username/${action}`, route, async (req, reply) => {
      const ctx = await admin(req);
      const user = await userOf(req);
      const to = `/admin/users/${encodeURIComponent(user.username)}`;
      try {
        const changed = action === 'block' ? await c.users.block(ctx.actor, user.id) : await c.users.unblock(ctx.actor, user.id);
        if (!changed) return web.redirect(reply, to, { kind: 'alert', text: action === 'block' ? 'The user is already blocked.' : 'The user is not blocked.' });
      } catch (e) {
        const errors = errorsOf(e);
        if (!errors) throw e;
        return web.redirect(reply, to, { kind: 'alert', text: errors.join(' ') });
      }
      return web.redirect(reply, to, { kind: 'notice', text: action === 'block' ? 'Successfully blocked' : 'Successfully unblocked' });
    });
  }

  // ---- system hooks ----

  const emptyHook = (): SystemHookValues => ({ url: '', name: '', token: '', flags: { enable_ssl_verification: true } });
  const hooksPage = async (reply: FastifyReply, ctx: WebCtx, opts: { values?: SystemHookValues; errors?: string[] | null; status?: number } = {}) => {
    const hooks = await c.hooks.listQuery().limit(100).execute();
    return web.page(reply, AdminHooks({ ctx, hooks, values: opts.values ?? emptyHook(), errors: opts.errors }), opts.status);
  };
  const hookOf = async (req: FastifyRequest): Promise<SystemHookRow> => {
    const id = (req.params as { hook_id: string }).hook_id;
    if (!ID_RE.test(id) || Number(id) > 2 ** 31 - 1) throw Errors.recordNotFound();
    return c.hooks.get(Number(id));
  };

  // every runner (GET /runners/all's list), newest first, with its owner project or group
  app.get('/admin/runners', route, async (req, reply) => {
    const ctx = await admin(req);
    const page = Math.max(1, Number(/^\d{1,5}$/.exec(String((req.query as Record<string, unknown>).page ?? ''))?.[0] ?? 1));
    const rows = await c.ci.runners
      .allRunners()
      .orderBy('ci_runners.id', 'desc')
      .limit(PER_PAGE + 1)
      .offset((page - 1) * PER_PAGE)
      .execute();
    const hasNext = rows.length > PER_PAGE;
    const runners = await runnerItems(c, ctx.actor, hasNext ? rows.slice(0, PER_PAGE) : rows, async (r): Promise<RunnerItem['owner']> => {
      if (r.runner_type === 'project_type') {
        const p = (await c.ci.runners.runnerProjects(r.id))[0];
        if (p) return { text: `${p.namespace.full_path}/${p.project.path}`, href: `/${encodePath(`${p.namespace.full_path}/${p.project.path}`)}` };
      } else if (r.runner_type === 'group_type') {
        const g = (await c.ci.runners.runnerGroups(r.id))[0];
        if (g) return { text: g.full_path, href: `/groups/${encodePath(g.full_path)}` };
      }
      return null;
    });
    const counts: Record<string, number> = {};
    for (const status of ['online', 'offline', 'stale', 'never_contacted']) {
      counts[status] = (await count(c.ci.runners.filterScope(c.ci.runners.allRunners(), status, [status], Date.now()))) ?? 0;
    }
    return web.page(reply, AdminRunners({ ctx, runners, page, hasNext, counts }));
  });

  // ---- instance CI/CD variables (GET/POST /admin/ci/variables: the administrators' owner of VariablesService) ----

  const variablePlace = (ctx: WebCtx): VariablePlace => ({
    owner: c.ci.variables.instanceOwner(ctx.actor),
    scoped: false,
    back: '/admin/ci/variables',
    page: async (reply, form, status) => web.page(reply, AdminVariables({ ctx, variables: await c.ci.variables.list({ kind: 'instance' }), ...form }), status),
    edit: (reply, original, form, status) => web.page(reply, AdminVariableEdit({ ctx, original, ...form }), status),
  });

  app.get('/admin/ci/variables', route, async (req, reply) => variablePlace(await admin(req)).page(reply, { values: EMPTY_VARIABLE, errors: {} }, 200));
  app.get('/admin/ci/variables/edit', route, async (req, reply) => variableEditPage(reply, variablePlace(await admin(req)), req.query, c.ci.variables));
  variableForms(app, c, web, '/admin/ci', async (req) => variablePlace(await admin(req)));

  app.get('/admin/hooks', route, async (req, reply) => hooksPage(reply, await admin(req)));

  app.post('/admin/hooks', route, async (req, reply) => {
    const ctx = await admin(req);
    const b = bodyOf(req.body);
    const values: SystemHookValues = {
      url: str(b.url).trim(),
      name: str(b.name),
      token: '',
      flags: Object.fromEntries(SYSTEM_HOOK_FLAGS.map((f) => [f, flag(b[f])])),
    };
    const input: HookInput = { url: values.url, ...values.flags };
    if (values.name) input.name = values.name;
    if (str(b.token)) input.token = str(b.token);
    try {
      await c.hooks.create(input);
    } catch (e) {
      const errors = errorsOf(e);
      if (!errors) throw e;
      return hooksPage(reply, ctx, { values, errors, status: 422 });
    }
    return web.redirect(reply, '/admin/hooks', { kind: 'notice', text: 'System hook was successfully created.' });
  });

  app.get('/admin/hooks/:hook_id', route, async (req, reply) => {
    const ctx = await admin(req);
    const hook = await hookOf(req);
    const attempts = await c.deliveries.attemptsQuery(hook.id).limit(RECENT_ATTEMPTS).execute();
    return web.page(reply, AdminHook({ ctx, hook, attempts }));
  });

  app.post('/admin/hooks/:hook_id/delete', route, async (req, reply) => {
    await admin(req);
    await c.hooks.delete((await hookOf(req)).id);
    return web.redirect(reply, '/admin/hooks', { kind: 'notice', text: 'System hook was successfully deleted.' });
  });

  // the API's test: the mock event, delivered now
  app.post('/admin/hooks/:hook_id/test', route, async (req, reply) => {
    await admin(req);
    const hook = await hookOf(req);
    const outcome = await c.deliveries.deliverNow(hook, MOCK_SYSTEM_EVENT);
    const status = Number(outcome.status);
    const to = `/admin/hooks/${hook.id}`;
    if (status >= 200 && status < 300) return web.redirect(reply, to, { kind: 'notice', text: `Hook executed successfully: HTTP ${status}` });
    return web.redirect(reply, to, { kind: 'alert', text: `Hook execution failed: ${outcome.error ?? `HTTP ${outcome.status}`}` });
  });

  app.post('/admin/hooks/:hook_id/events/:event_id/resend', route, async (req, reply) => {
    await admin(req);
    const hook = await hookOf(req);
    const eventId = (req.params as { event_id: string }).event_id;
    const attempt = ID_RE.test(eventId) && Number(eventId) <= 2 ** 31 - 1 ? await c.deliveries.attemptOf(hook.id, Number(eventId)) : undefined;
    if (!attempt) throw Errors.recordNotFound();
    const to = `/admin/hooks/${hook.id}`;
    try {
      const outcome = await c.deliveries.resend(hook, attempt.delivery_id);
      return web.redirect(reply, to, { kind: 'notice', text: `Delivery sent again: HTTP ${outcome.status}` });
    } catch (e) {
      if (e instanceof DeliveryBusy) return web.redirect(reply, to, { kind: 'alert', text: 'The event is being delivered' });
      throw e;
    }
  });

  // ---- application settings ----

  const fields = GENERAL_SETTINGS.flatMap((s) => s.fields);
  const settingsPage = async (
    reply: FastifyReply,
    ctx: WebCtx,
    opts: { values?: Record<string, string | boolean>; errors?: string[] | null; status?: number } = {},
  ) => {
    let values = opts.values;
    if (!values) {
      const s = (await c.settings.fresh()).values as unknown as Record<string, unknown>;
      values = Object.fromEntries(fields.map((f) => [f.key, shown(f, s[f.key])]));
    }
    return web.page(reply, AdminSettings({ ctx, values, errors: opts.errors }), opts.status);
  };

  app.get('/admin/application_settings/general', route, async (req, reply) => settingsPage(reply, await admin(req)));

  app.post('/admin/application_settings/general', route, async (req, reply) => {
    const ctx = await admin(req);
    const posted = bodyOf(bodyOf(req.body).application_setting);
    const values: Record<string, string | boolean> = {};
    const params: Record<string, unknown> = {};
    for (const f of fields) {
      if (!(f.key in posted)) continue;
      if (f.kind === 'bool') values[f.key] = params[f.key] = flag(posted[f.key]);
      else if (f.kind === 'list') {
        values[f.key] = str(posted[f.key]);
        // one entry per line or separated by commas, as the API's CommaSeparatedToArray
        params[f.key] = str(posted[f.key])
          .split(/[\r\n,]+/)
          .map((x) => x.trim())
          .filter(Boolean);
      } else {
        const v = str(posted[f.key]).trim();
        values[f.key] = v;
        // an empty number is "no value" (null) as PUT /application/settings takes it
        params[f.key] = v === '' && f.kind === 'int' ? null : v;
      }
    }
    try {
      await c.settings.update(params, { storages: c.repos.storageNames() });
    } catch (e) {
      const errors = settingsErrors(e);
      if (!errors) throw e;
      // what was not posted shows its stored value
      const s = (await c.settings.fresh()).values as unknown as Record<string, unknown>;
      for (const f of fields) if (!(f.key in values)) values[f.key] = shown(f, s[f.key]);
      return settingsPage(reply, ctx, { values, errors, status: 422 });
    }
    return web.redirect(reply, '/admin/application_settings/general', { kind: 'notice', text: 'Application settings saved successfully' });
  });
}
