// Settings → CI/CD of a project (`/<project>/-/settings/ci_cd`) and of a group (`/groups/<group>/-/settings/ci_cd`),
// with their variable edit pages (`…/settings/ci_cd/variables/edit`); forms post to /-/p/:project_id/… and
// /-/g/:group_id/…. Who may: the variables API's admin_cicd_variables (VariablesService.projectOwner / groupOwner:
// 404 invisible, 403 below Maintainer). Variables go through c.ci.variables as `/projects|groups/:id/variables` do
// (ci-forms.ts); the runners listed are those of `/projects/:id/runners` and `/groups/:id/runners` (the latter for
// Maintainers, as the API), and a runner is created as `POST /user/runners` creates it (RunnersService.createForUser,
// its token shown once with the command to start a runner). Editing a runner is runners.pages.ts'; the admin area's
// instance variables and runner list are admin.pages.ts'.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { ResolvedGroup, ResolvedProject } from '../../domain/access/resolve.ts';
import type { VariableOwner } from '../../domain/ci/variables/variables.service.ts';
import { DomainError, Errors } from '../../lib/errors.ts';
import { CiCdPage, VariableEditPage } from '../../web/views/settings/ci-cd.tsx';
import { EMPTY_VARIABLE, type VariableFormValues } from '../../web/views/settings/ci-variables.tsx';
import type { FieldErrors } from '../../web/views/settings/fields.tsx';
import { bodyOf, errorsOf, flag, str } from '../../web/views/settings/form-input.ts';
import { placeUrl, type SettingsPlace } from '../../web/views/settings/place.tsx';
import type { RunnerFormValues } from '../../web/views/settings/runners.tsx';
import { runnerCommand, runnerItems, type VariablePlace, variableEditPage, variableForms } from './ci-forms.ts';
import { groupSettingsPlace } from './group-ancestors.ts';
import { HIDDEN, PAGE, type Web, type WebCtx } from './web.ts';

const ID_RE = /^\d{1,10}$/;
const RUNNER_LIST_LIMIT = 100;
const EMPTY_RUNNER: RunnerFormValues = { description: '', tags: '', run_untagged: true };

/** A project's or group's CI/CD settings as the viewer may see them. */
interface CiPlace {
  ctx: WebCtx;
  place: SettingsPlace;
  owner: VariableOwner;
  resolved: { kind: 'project'; r: ResolvedProject } | { kind: 'group'; r: ResolvedGroup };
}

interface PageOpts {
  variable?: { values: VariableFormValues; errors: FieldErrors };
  runnerValues?: RunnerFormValues;
  runnerErrors?: string[] | null;
  created?: { id: number; token: string; command: string };
}

export function ciSettingsPages(app: FastifyInstance, c: Container, web: Web): void {
  const vars = c.ci.variables;
  const runners = c.ci.runners;

  const projectPlace = async (ctx: WebCtx, id: string | number): Promise<CiPlace> => {
    const owner = await vars.projectOwner(ctx.actor, String(id));
    const r = await c.resolve.project(ctx.actor, String(id));
    return { ctx, owner, place: { kind: 'project', ref: r }, resolved: { kind: 'project', r } };
  };
  const groupPlace = async (ctx: WebCtx, id: string | number): Promise<CiPlace> => {
    const owner = await vars.groupOwner(ctx.actor, String(id));
    const r = await c.resolve.group(ctx.actor, String(id));
    return { ctx, owner, place: await groupSettingsPlace(c, r), resolved: { kind: 'group', r } };
  };
  /** The place of a form post (`/-/p/:project_id/…`, `/-/g/:group_id/…`): 404 for what is not an id. */
  const postPlace = async (req: FastifyRequest): Promise<CiPlace> => {
    const ctx = await web.requireUser(req);
    const params = req.params as { project_id?: string; group_id?: string };
    const id = params.project_id ?? params.group_id ?? '';
    if (!ID_RE.test(id)) throw Errors.notFound(params.project_id !== undefined ? 'Project' : 'Group');
    return params.project_id !== undefined ? projectPlace(ctx, id) : groupPlace(ctx, id);
  };
  const back = (p: CiPlace) => `${placeUrl(p.place)}/-/settings/ci_cd`;

  /** The runners the place's jobs may use (a group's: for its Maintainers, as GET /groups/:id/runners). */
  const runnersOf = async (p: CiPlace) => {
    const { actor } = p.ctx;
    let q;
    if (p.resolved.kind === 'project') q = runners.projectRunners(p.resolved.r.project, p.resolved.r.namespace);
    else if (runners.mayListGroupRunners(actor, p.resolved.r.access)) q = runners.groupRunners(p.resolved.r.group);
    else return [];
    return runnerItems(c, actor, await q.orderBy('ci_runners.id').limit(RUNNER_LIST_LIMIT).execute());
  };

  const page = async (reply: FastifyReply, p: CiPlace, opts: PageOpts = {}, status = 200) =>
    web.page(
      reply,
      CiCdPage({
        ctx: p.ctx,
        place: p.place,
        variables: await vars.list(p.owner),
        variableValues: opts.variable?.values ?? EMPTY_VARIABLE,
        variableErrors: opts.variable?.errors ?? {},
        runners: await runnersOf(p),
        // createForUser asks again: project runners for Maintainers, group runners for Owners
        mayCreateRunner: p.resolved.r.access.abilities.has('admin_runners'),
        runnerValues: opts.runnerValues ?? EMPTY_RUNNER,
        runnerErrors: opts.runnerErrors ?? null,
        created: opts.created ?? null,
      }),
      status,
    );

  const variablePlace = (p: CiPlace): VariablePlace => ({
    owner: p.owner,
    scoped: true,
    back: back(p),
    page: (reply, form, status) => page(reply, p, { variable: form }, status),
    edit: (reply, original, form, status) => web.page(reply, VariableEditPage({ ctx: p.ctx, place: p.place, original, ...form }), status),
  });

  web.projectPage('/-/settings/ci_cd', async (req, reply, { resolved }) => page(reply, await projectPlace(await web.requireUser(req), resolved.project.id)));
  web.groupPage('/-/settings/ci_cd', async (req, reply, { resolved }) => page(reply, await groupPlace(await web.requireUser(req), resolved.group.id)));

  // ---- variables -------------------------------------------------------------------------------

  web.projectPage('/-/settings/ci_cd/variables/edit', async (req, reply, { resolved }) =>
    variableEditPage(reply, variablePlace(await projectPlace(await web.requireUser(req), resolved.project.id)), req.query, vars),
  );
  web.groupPage('/-/settings/ci_cd/variables/edit', async (req, reply, { resolved }) =>
    variableEditPage(reply, variablePlace(await groupPlace(await web.requireUser(req), resolved.group.id)), req.query, vars),
  );
  for (const base of ['/-/p/:project_id', '/-/g/:group_id']) variableForms(app, c, web, base, async (req) => variablePlace(await postPlace(req)));

  // ---- runners ---------------------------------------------------------------------------------

  for (const base of ['/-/p/:project_id', '/-/g/:group_id']) {
    app.post(`${base}/runners`, { config: PAGE, schema: HIDDEN }, async (req, reply) => {
      const p = await postPlace(req);
      const b = bodyOf(req.body);
      const values: RunnerFormValues = { description: str(b.description).trim(), tags: str(b.tag_list), run_untagged: flag(b.run_untagged) };
      const tags = values.tags
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean);
      try {
        const { runner, token } = await runners.createForUser(p.ctx.actor, {
          ...(p.resolved.kind === 'project'
            ? { runner_type: 'project_type', project_id: p.resolved.r.project.id }
            : { runner_type: 'group_type', group_id: p.resolved.r.group.id }),
          description: values.description,
          tag_list: tags,
          run_untagged: values.run_untagged,
        });
        return page(reply, p, { created: { id: runner.id, token, command: runnerCommand(c, token) } });
      } catch (e) {
        // someone who may not create one here (the form is not shown to them) gets the 403 page with the reason
        const msgs = e instanceof DomainError && e.status === 403 ? null : errorsOf(e);
        if (!msgs) throw e;
        return page(reply, p, { runnerValues: values, runnerErrors: msgs }, 422);
      }
    });
  }
}
