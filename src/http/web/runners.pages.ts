// A runner's edit page from the three lists that show it — `/<project>/-/runners/:id/edit`,
// `/groups/<group>/-/runners/:id/edit`, `/admin/runners/:id/edit` — and its buttons: POST
// /-/runners/:runner_id/{update,pause,resume,delete}, each with the place it came from (`place`: project:<id>,
// group:<id> or admin) to go back to. Who may is the API's `/runners/:id` rule (RunnersService.assertMayUpdate,
// assertMayDestroy: 403 with its words); a runner that the place's list does not show is the 404 page there. The
// attributes are those of `PUT /runners/:id`, validated by RunnersService.update (its messages beside their fields,
// nothing written when it refuses).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { CiRunnerRow } from '../../db/schema.ts';
import type { RunnerAttributes } from '../../domain/ci/runners/runners.service.ts';
import { Errors } from '../../lib/errors.ts';
import type { FieldErrors } from '../../web/views/settings/fields.tsx';
import { bodyOf, errorsOf, flag, str } from '../../web/views/settings/form-input.ts';
import { type RunnerPlace, RunnerEditPage, runnerPlaceBack } from '../../web/views/settings/runner-edit.tsx';
import type { RunnerEditValues } from '../../web/views/settings/runners.tsx';
import { fieldErrorsOf } from './ci-forms.ts';
import { groupSettingsPlace } from './group-ancestors.ts';
import { idOf } from './page-params.ts';
import { HIDDEN, PAGE, type Web, type WebCtx } from './web.ts';

const PLACE_RE = /^(project|group):(\d{1,10})$/;
const TIMEOUT_RE = /^\d{1,9}$/;

function valuesOf(r: CiRunnerRow): RunnerEditValues {
  return {
    description: r.description,
    maintenance_note: r.maintenance_note ?? '',
    paused: r.active !== 1,
    protected: r.access_level === 'ref_protected',
    run_untagged: r.run_untagged === 1,
    locked: r.locked === 1,
    maximum_timeout: r.maximum_timeout === null ? '' : String(r.maximum_timeout),
    tags: (JSON.parse(r.tag_list) as string[]).join(', '),
  };
}

/** The form as PUT /runners/:id's attributes, and what it refuses before the service is asked. */
function formOf(b: Record<string, unknown>, runner: CiRunnerRow): { values: RunnerEditValues; attrs: RunnerAttributes; errors: FieldErrors } {
  const values: RunnerEditValues = {
    description: str(b.description).trim(),
    maintenance_note: str(b.maintenance_note),
    paused: flag(b.paused),
    protected: flag(b.protected),
    run_untagged: flag(b.run_untagged),
    locked: flag(b.locked),
    maximum_timeout: str(b.maximum_timeout).trim(),
    tags: str(b.tag_list),
  };
  const errors: FieldErrors = {};
  if (values.maximum_timeout && !TIMEOUT_RE.test(values.maximum_timeout)) errors.maximum_timeout = ['must be a whole number of seconds'];
  const attrs: RunnerAttributes = {
    description: values.description,
    maintenance_note: values.maintenance_note || null,
    active: !values.paused,
    access_level: values.protected ? 'ref_protected' : 'not_protected',
    run_untagged: values.run_untagged,
    maximum_timeout: values.maximum_timeout && !errors.maximum_timeout ? Number(values.maximum_timeout) : null,
    tag_list: values.tags.split(','),
  };
  // only a project runner can be locked to its projects (the form shows the box to them alone)
  if (runner.runner_type === 'project_type') attrs.locked = values.locked;
  return { values, attrs, errors };
}

export function runnerPages(app: FastifyInstance, c: Container, web: Web): void {
  const runners = c.ci.runners;

  /** The runner of `raw` if the place's list shows it (the 404 page otherwise). */
  const runnerIn = async (place: RunnerPlace, raw: string | undefined): Promise<CiRunnerRow> => {
    const id = idOf(raw);
    if (id === null) throw Errors.recordNotFound();
    const q =
      place.kind === 'admin'
        ? runners.allRunners()
        : place.kind === 'project'
          ? runners.projectRunners(place.ref.project, place.ref.namespace)
          : runners.groupRunners(place.group);
    const row = await q.where('ci_runners.id', '=', id).executeTakeFirst();
    if (!row) throw Errors.recordNotFound();
    return row;
  };

  /** The place a form names (the viewer's 404s and the admin area's rule apply). */
  const placeOf = async (ctx: WebCtx, key: string): Promise<RunnerPlace> => {
    if (key === 'admin') {
      if (!ctx.actor.isAdmin) throw Errors.notFound();
      return { kind: 'admin' };
    }
    const m = PLACE_RE.exec(key);
    if (!m) throw Errors.notFound();
    if (m[1] === 'project') return { kind: 'project', ref: await c.resolve.project(ctx.actor, m[2]!) };
    return groupPlace(await c.resolve.group(ctx.actor, m[2]!));
  };
  const groupPlace = (r: Parameters<typeof groupSettingsPlace>[1]) => groupSettingsPlace(c, r);

  const editPage = async (reply: FastifyReply, ctx: WebCtx, place: RunnerPlace, raw: string | undefined) => {
    const runner = await runnerIn(place, raw);
    await runners.assertMayUpdate(ctx.actor, runner);
    return web.page(reply, RunnerEditPage({ ctx, place, runner, values: valuesOf(runner), errors: {} }));
  };

  web.projectPage('/-/runners/:id/edit', async (req, reply, { resolved, params }) =>
    editPage(reply, await web.requireUser(req), { kind: 'project', ref: resolved }, params.id),
  );
  web.groupPage('/-/runners/:id/edit', async (req, reply, { resolved, params }) =>
    editPage(reply, await web.requireUser(req), await groupPlace(resolved), params.id),
  );
  app.get('/admin/runners/:id/edit', { config: PAGE, schema: HIDDEN }, async (req, reply) =>
    editPage(reply, await web.requireAdmin(req), { kind: 'admin' }, (req.params as { id: string }).id),
  );

  /** A form post's viewer, place and runner (`place` in the body; the runner's id in the path). */
  const posted = async (req: FastifyRequest) => {
    const ctx = await web.requireUser(req);
    const b = bodyOf(req.body);
    const place = await placeOf(ctx, str(b.place));
    const runner = await runnerIn(place, (req.params as { runner_id: string }).runner_id);
    return { ctx, b, place, runner };
  };
  const route = { config: PAGE, schema: HIDDEN };

  app.post('/-/runners/:runner_id/update', route, async (req, reply) => {
    const { ctx, b, place, runner } = await posted(req);
    await runners.assertMayUpdate(ctx.actor, runner);
    const { values, attrs, errors } = formOf(b, runner);
    const again = (errs: FieldErrors) => web.page(reply, RunnerEditPage({ ctx, place, runner, values, errors: errs }), 422);
    if (Object.keys(errors).length) return again(errors);
    try {
      await runners.update(runner, attrs);
    } catch (e) {
      const fe = fieldErrorsOf(e);
      if (!fe) throw e;
      return again(fe);
    }
    return web.redirect(reply, runnerPlaceBack(place), { kind: 'notice', text: `Runner #${runner.id} was updated.` });
  });

  for (const [action, active] of [
    ['pause', false],
    ['resume', true],
  ] as const) {
    app.post(`/-/runners/:runner_id/${action}`, route, async (req, reply) => {
      const { ctx, place, runner } = await posted(req);
      await runners.assertMayUpdate(ctx.actor, runner);
      try {
        await runners.update(runner, { active });
      } catch (e) {
        const msgs = errorsOf(e);
        if (!msgs) throw e;
        return web.redirect(reply, runnerPlaceBack(place), { kind: 'alert', text: `Runner #${runner.id}: ${msgs.join(' ')}` });
      }
      return web.redirect(reply, runnerPlaceBack(place), { kind: 'notice', text: `Runner #${runner.id} was ${active ? 'resumed' : 'paused'}.` });
    });
  }

  app.post('/-/runners/:runner_id/delete', route, async (req, reply) => {
    const { ctx, place, runner } = await posted(req);
    await runners.assertMayDestroy(ctx.actor, runner);
    await runners.destroy(runner);
    return web.redirect(reply, runnerPlaceBack(place), { kind: 'notice', text: `Runner #${runner.id} was deleted.` });
  });
}
