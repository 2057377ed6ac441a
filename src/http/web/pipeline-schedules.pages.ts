// CI pages beside the pipelines: `/-/pipeline_schedules` (list, new, edit; forms post to
// /-/p/:project_id/pipeline_schedules…: create, update, play, take ownership, delete) and `/-/triggers`
// (Maintainers: the tokens, add, revoke). The services are the API's, with the viewer's actor, so the
// checks (404 invisible, 403 visible) and the validation messages are the API's.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { CiPipelineScheduleRow } from '../../db/schema.ts';
import type { Actor } from '../../domain/access/actor.ts';
import type { ResolvedProject } from '../../domain/access/resolve.ts';
import { Errors } from '../../lib/errors.ts';
import { type ScheduleFormValues, ScheduleFormPage, SchedulesPage, schedulesHref, TriggersPage, triggersHref } from '../../web/views/pipelines/schedules.tsx';
import { bodyOf, errorsOf, flag, str } from '../../web/views/settings/form-input.ts';
import { projectRef } from './page-params.ts';
import { HIDDEN, PAGE, type Web, type WebCtx } from './web.ts';

const ID_RE = /^\d{1,10}$/;
const LIST_LIMIT = 200;

export function pipelineSchedulesPages(app: FastifyInstance, c: Container, web: Web): void {
  const svc = () => c.ci.schedules;

  const idParam = (raw: string | undefined, what: string): number => {
    if (!raw || !ID_RE.test(raw) || Number(raw) > 2 ** 31 - 1) throw Errors.notFound(what);
    return Number(raw);
  };

  /** The project of a form post and the viewer (404 when invisible or not an id). */
  const projectOf = async (req: FastifyRequest): Promise<{ ctx: WebCtx; resolved: ResolvedProject }> => {
    const ctx = await web.requireUser(req);
    const id = (req.params as { project_id: string }).project_id;
    if (!ID_RE.test(id)) throw Errors.notFound('Project');
    return { ctx, resolved: await c.resolve.project(ctx.actor, id) };
  };
  const scheduleParam = (req: FastifyRequest) => idParam((req.params as { schedule_id?: string }).schedule_id, 'Pipeline Schedule');

  const names = async (ids: (number | null)[]) => {
    const users = await c.users.basicByIds(ids.filter((x): x is number => x !== null));
    return (id: number | null) => (id === null ? null : (users.get(id)?.name ?? null));
  };

  const formValues = (s: CiPipelineScheduleRow | null): ScheduleFormValues =>
    s
      ? { description: s.description, ref: s.ref, cron: s.cron, cron_timezone: s.cron_timezone, active: s.active === 1 }
      : { description: '', ref: '', cron: '', cron_timezone: 'UTC', active: true };

  // ---- schedules -------------------------------------------------------------------------------

  web.projectPage('/-/pipeline_schedules', async (_req, reply, { ctx, resolved }) => {
    const r = await svc().project(ctx.actor, String(resolved.project.id), 'read');
    const rows = await svc().list(r.project).limit(LIST_LIMIT).execute();
    const ownerName = await names(rows.map((s) => s.owner_id));
    const items = [];
    for (const row of rows) {
      const mayEdit = svc().mayUpdate(ctx.actor, r, row);
      items.push({
        row,
        owner: ownerName(row.owner_id),
        mayPlay: await svc().mayPlay(ctx.actor, r, row),
        mayEdit,
        mayTakeOwnership: mayEdit && row.owner_id !== (ctx.actor.user?.id ?? null),
      });
    }
    const mayCreate = ctx.actor.user !== null && (await canCreate(ctx.actor, r));
    return web.page(reply, SchedulesPage({ ctx, project: projectRef(resolved), schedules: items, mayCreate }));
  });

  const canCreate = async (actor: Actor, r: ResolvedProject) => {
    try {
      await svc().project(actor, String(r.project.id), 'create');
      return true;
    } catch {
      return false;
    }
  };

  web.projectPage('/-/pipeline_schedules/new', async (_req, reply, { ctx, resolved }) => {
    await svc().project(ctx.actor, String(resolved.project.id), 'create');
    const values = { ...formValues(null), ref: resolved.project.default_branch ?? 'main' };
    return web.page(reply, ScheduleFormPage({ ctx, project: projectRef(resolved), schedule: null, values }));
  });

  web.projectPage('/-/pipeline_schedules/:schedule_id/edit', async (_req, reply, { ctx, resolved, params }) => {
    const r = await svc().project(ctx.actor, String(resolved.project.id), 'read');
    const s = await svc().find(r.project, idParam(params.schedule_id, 'Pipeline Schedule'));
    if (!svc().mayUpdate(ctx.actor, r, s)) throw Errors.forbidden();
    return web.page(reply, ScheduleFormPage({ ctx, project: projectRef(resolved), schedule: s, values: formValues(s) }));
  });

  const valuesOf = (body: unknown): ScheduleFormValues => {
    const b = bodyOf(body);
    return { description: str(b.description), ref: str(b.ref), cron: str(b.cron), cron_timezone: str(b.cron_timezone) || 'UTC', active: flag(b.active) };
  };

  const formError = (reply: FastifyReply, ctx: WebCtx, r: ResolvedProject, s: CiPipelineScheduleRow | null, values: ScheduleFormValues, e: unknown) => {
    const errors = errorsOf(e);
    if (!errors) throw e;
    return web.page(reply, ScheduleFormPage({ ctx, project: projectRef(r), schedule: s, values, errors }), 422);
  };

  app.post('/-/p/:project_id/pipeline_schedules', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    const r = await svc().project(ctx.actor, String(resolved.project.id), 'create');
    const values = valuesOf(req.body);
    try {
      await svc().create(ctx.actor, r, values);
    } catch (e) {
      return formError(reply, ctx, r, null, values, e);
    }
    return web.redirect(reply, schedulesHref(projectRef(r)), { kind: 'notice', text: 'Pipeline schedule was successfully created.' });
  });

  app.post('/-/p/:project_id/pipeline_schedules/:schedule_id', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    const r = await svc().project(ctx.actor, String(resolved.project.id), 'read');
    const s = await svc().find(r.project, scheduleParam(req));
    const values = valuesOf(req.body);
    try {
      await svc().update(ctx.actor, r, s, values);
    } catch (e) {
      return formError(reply, ctx, r, s, values, e);
    }
    return web.redirect(reply, schedulesHref(projectRef(r)), { kind: 'notice', text: 'Pipeline schedule was successfully updated.' });
  });

  app.post('/-/p/:project_id/pipeline_schedules/:schedule_id/play', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    const r = await svc().project(ctx.actor, String(resolved.project.id), 'read');
    await svc().play(ctx.actor, r, await svc().find(r.project, scheduleParam(req)));
    return web.redirect(reply, schedulesHref(projectRef(r)), { kind: 'notice', text: 'Successfully scheduled a pipeline to run.' });
  });

  app.post('/-/p/:project_id/pipeline_schedules/:schedule_id/take_ownership', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    const r = await svc().project(ctx.actor, String(resolved.project.id), 'read');
    await svc().takeOwnership(ctx.actor, r, await svc().find(r.project, scheduleParam(req)));
    return web.redirect(reply, schedulesHref(projectRef(r)), { kind: 'notice', text: 'You are now the owner of the pipeline schedule.' });
  });

  app.post('/-/p/:project_id/pipeline_schedules/:schedule_id/delete', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    const r = await svc().project(ctx.actor, String(resolved.project.id), 'read');
    await svc().destroy(ctx.actor, r, await svc().find(r.project, scheduleParam(req)));
    return web.redirect(reply, schedulesHref(projectRef(r)), { kind: 'notice', text: 'The pipeline schedule was deleted.' });
  });

  // ---- triggers --------------------------------------------------------------------------------

  const triggersPage = async (reply: FastifyReply, ctx: WebCtx, r: ResolvedProject, errors?: string[] | null, status?: number) => {
    const rows = await c.ci.triggers.list(r.project).limit(LIST_LIMIT).execute();
    const ownerName = await names(rows.map((t) => t.owner_id));
    const triggers = rows.map((t) => ({
      id: t.id,
      description: t.description,
      token: c.ci.triggers.view(ctx.actor, r.access, t).token,
      owner: ownerName(t.owner_id),
      lastUsed: t.last_used,
      createdAt: t.created_at,
    }));
    return web.page(reply, TriggersPage({ ctx, project: projectRef(r), triggers, errors }), status);
  };

  web.projectPage('/-/triggers', async (_req, reply, { ctx, resolved }) => {
    const r = await c.ci.triggers.project(ctx.actor, String(resolved.project.id));
    return triggersPage(reply, ctx, r);
  });

  app.post('/-/p/:project_id/triggers', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    const r = await c.ci.triggers.project(ctx.actor, String(resolved.project.id));
    const description = str(bodyOf(req.body).description);
    if (!description.trim()) return triggersPage(reply, ctx, r, ["Description can't be blank"], 422);
    await c.ci.triggers.create(ctx.actor, r.project, description);
    return web.redirect(reply, triggersHref(projectRef(r)), { kind: 'notice', text: 'Trigger token was created.' });
  });

  app.post('/-/p/:project_id/triggers/:trigger_id/delete', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    const r = await c.ci.triggers.project(ctx.actor, String(resolved.project.id));
    const id = idParam((req.params as { trigger_id: string }).trigger_id, 'Trigger');
    await c.ci.triggers.destroy(await c.ci.triggers.find(r.project, id));
    return web.redirect(reply, triggersHref(projectRef(r)), { kind: 'notice', text: 'Trigger token was revoked.' });
  });
}
