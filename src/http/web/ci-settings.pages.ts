// Project settings → CI/CD (/-/settings/ci_cd, Maintainers: the admin_cicd_variables ability the variables API
// asks for) and the variable edit page; forms post to /-/p/:project_id/variables… and /-/p/:project_id/runners.
// Variables go through c.ci.variables as `/projects/:id/variables` does (its messages shown beside their
// fields); a project runner is created as `POST /user/runners` creates it (RunnersService.createForUser, its
// token shown once with the command to start a runner). The admin area's runner list is in admin.pages.ts.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { ResolvedProject } from '../../domain/access/resolve.ts';
import type { VariableInput, VariableOwner, VariableView } from '../../domain/ci/variables/variables.service.ts';
import { DomainError, Errors } from '../../lib/errors.ts';
import {
  CiCdPage,
  EMPTY_VARIABLE,
  type FieldErrors,
  type RunnerFormValues,
  type RunnerItem,
  type VariableFormValues,
  VariableEditPage,
} from '../../web/views/settings/ci-cd.tsx';
import { bodyOf, errorsOf, flag, str } from '../../web/views/settings/form-input.ts';
import { projectUrl } from '../../web/views/settings/project.tsx';
import { runnerStatus } from '../platform/entities/runner.entity.ts';
import { HIDDEN, PAGE, type Web, type WebCtx } from './web.ts';

const ID_RE = /^\d{1,10}$/;
const RUNNER_LIST_LIMIT = 100;
const VISIBILITIES = ['visible', 'masked', 'masked_and_hidden'];
const EMPTY_RUNNER: RunnerFormValues = { description: '', tags: '', run_untagged: true };

/** A service's refusal as messages per field (`base` for the rest); null when it is no form problem. */
function fieldErrorsOf(e: unknown): FieldErrors | null {
  if (e instanceof DomainError && e.kind === 'invalid' && e.detail && typeof e.detail === 'object' && !Array.isArray(e.detail)) {
    const out: FieldErrors = {};
    for (const [k, v] of Object.entries(e.detail as Record<string, unknown>)) out[k] = (Array.isArray(v) ? v : [v]).map(String);
    return out;
  }
  const msgs = errorsOf(e);
  return msgs ? { base: msgs } : null;
}

function valuesOfView(v: VariableView): VariableFormValues {
  return {
    key: v.key,
    value: v.value ?? '',
    variable_type: v.variable_type,
    protected: v.protected,
    visibility: v.hidden ? 'masked_and_hidden' : v.masked ? 'masked' : 'visible',
    expand: !v.raw,
    environment_scope: v.environment_scope,
    description: v.description ?? '',
  };
}

export function ciSettingsPages(app: FastifyInstance, c: Container, web: Web): void {
  const vars = c.ci.variables;

  /** The project's variables owner for the viewer (404 invisible, 403 below Maintainer) and the project. */
  const ownerOf = async (ctx: WebCtx, id: string | number): Promise<{ owner: VariableOwner; r: ResolvedProject }> => {
    const owner = await vars.projectOwner(ctx.actor, String(id));
    return { owner, r: await c.resolve.project(ctx.actor, String(id)) };
  };
  const postOwner = async (req: FastifyRequest) => {
    const ctx = await web.requireUser(req);
    const id = (req.params as { project_id: string }).project_id;
    if (!ID_RE.test(id)) throw Errors.notFound('Project');
    return { ctx, ...(await ownerOf(ctx, id)) };
  };
  const back = (r: ResolvedProject) => `${projectUrl(r)}/-/settings/ci_cd`;

  const runnersOf = async (r: ResolvedProject): Promise<RunnerItem[]> => {
    const now = Date.now();
    const rows = await c.ci.runners.projectRunners(r.project, r.namespace).orderBy('ci_runners.id').limit(RUNNER_LIST_LIMIT).execute();
    return rows.map((x) => ({
      id: x.id,
      description: x.description,
      runner_type: x.runner_type,
      status: runnerStatus(x, now),
      paused: x.active !== 1,
      tags: JSON.parse(x.tag_list) as string[],
      contactedAt: x.contacted_at,
    }));
  };

  const page = async (
    reply: FastifyReply,
    ctx: WebCtx,
    owner: VariableOwner,
    r: ResolvedProject,
    opts: {
      variableValues?: VariableFormValues;
      variableErrors?: FieldErrors;
      runnerValues?: RunnerFormValues;
      runnerErrors?: string[] | null;
      created?: { id: number; token: string; command: string };
      status?: number;
    } = {},
  ) =>
    web.page(
      reply,
      CiCdPage({
        ctx,
        ref: r,
        variables: await vars.list(owner),
        variableValues: opts.variableValues ?? EMPTY_VARIABLE,
        variableErrors: opts.variableErrors ?? {},
        runners: await runnersOf(r),
        runnerValues: opts.runnerValues ?? EMPTY_RUNNER,
        runnerErrors: opts.runnerErrors ?? null,
        created: opts.created ?? null,
      }),
      opts.status,
    );

  web.projectPage('/-/settings/ci_cd', async (req, reply, { ctx, resolved }) => {
    await web.requireUser(req);
    const { owner, r } = await ownerOf(ctx, resolved.project.id);
    return page(reply, ctx, owner, r);
  });

  // ---- variables -------------------------------------------------------------------------------

  /** The form as the service's input, and what it refuses before asking it (an unknown type or visibility). */
  const variableForm = (b: Record<string, unknown>): { values: VariableFormValues; errors: FieldErrors } => {
    const values: VariableFormValues = {
      key: str(b.key).trim(),
      value: str(b.value),
      variable_type: str(b.variable_type) || 'env_var',
      protected: flag(b.protected),
      visibility: str(b.visibility) || 'visible',
      expand: flag(b.expand),
      environment_scope: str(b.environment_scope).trim() || '*',
      description: str(b.description),
    };
    const errors: FieldErrors = {};
    if (values.variable_type !== 'env_var' && values.variable_type !== 'file') errors.variable_type = ['is not a valid type'];
    if (!VISIBILITIES.includes(values.visibility)) errors.masked = ['is not a valid visibility'];
    if (values.description.length > 255) errors.description = ['is too long (maximum is 255 characters)'];
    return { values, errors };
  };
  const inputOf = (v: VariableFormValues): VariableInput => ({
    value: v.value,
    variable_type: v.variable_type,
    protected: v.protected,
    masked: v.visibility !== 'visible',
    raw: !v.expand,
    environment_scope: v.environment_scope,
    description: v.description || null,
  });

  app.post('/-/p/:project_id/variables', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { ctx, owner, r } = await postOwner(req);
    const { values, errors } = variableForm(bodyOf(req.body));
    if (!values.key && !errors.key) errors.key = ["can't be blank"];
    if (Object.keys(errors).length) return page(reply, ctx, owner, r, { variableValues: values, variableErrors: errors, status: 422 });
    try {
      await vars.create(owner, { ...inputOf(values), key: values.key, masked_and_hidden: values.visibility === 'masked_and_hidden' });
    } catch (e) {
      const fe = fieldErrorsOf(e);
      if (!fe) throw e;
      return page(reply, ctx, owner, r, { variableValues: values, variableErrors: fe, status: 422 });
    }
    return web.redirect(reply, back(r), { kind: 'notice', text: `Variable ${values.key} was added.` });
  });

  web.projectPage('/-/settings/ci_cd/variables/edit', async (req, reply, { ctx, resolved }) => {
    await web.requireUser(req);
    const { owner, r } = await ownerOf(ctx, resolved.project.id);
    const q = req.query as Record<string, unknown>;
    const view = await vars.get(owner, str(q.key), str(q.environment_scope) || undefined);
    return web.page(
      reply,
      VariableEditPage({
        ctx,
        ref: r,
        original: { key: view.key, environment_scope: view.environment_scope, hidden: view.hidden },
        values: valuesOfView(view),
        errors: {},
      }),
    );
  });

  app.post('/-/p/:project_id/variables/update', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { ctx, owner, r } = await postOwner(req);
    const b = bodyOf(req.body);
    const key = str(b.key);
    const scope = str(b.original_environment_scope) || undefined;
    const current = await vars.get(owner, key, scope);
    const { values, errors } = variableForm(b);
    values.key = current.key;
    // a hidden variable's value is never shown: an empty field keeps it; its visibility stays
    if (current.hidden) values.visibility = 'masked_and_hidden';
    else if (values.visibility === 'masked_and_hidden') errors.masked = ['cannot be changed to masked and hidden'];
    const original = { key: current.key, environment_scope: current.environment_scope, hidden: current.hidden };
    if (Object.keys(errors).length) return web.page(reply, VariableEditPage({ ctx, ref: r, original, values, errors }), 422);
    const input = inputOf(values);
    if (current.hidden && values.value === '') input.value = undefined;
    try {
      await vars.update(owner, current.key, current.environment_scope, input);
    } catch (e) {
      const fe = fieldErrorsOf(e);
      if (!fe) throw e;
      return web.page(reply, VariableEditPage({ ctx, ref: r, original, values, errors: fe }), 422);
    }
    return web.redirect(reply, back(r), { kind: 'notice', text: `Variable ${current.key} was updated.` });
  });

  app.post('/-/p/:project_id/variables/delete', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { owner, r } = await postOwner(req);
    const b = bodyOf(req.body);
    const key = str(b.key);
    await vars.remove(owner, key, str(b.environment_scope) || undefined);
    return web.redirect(reply, back(r), { kind: 'notice', text: `Variable ${key} was deleted.` });
  });

  // ---- runners ---------------------------------------------------------------------------------

  app.post('/-/p/:project_id/runners', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { ctx, owner, r } = await postOwner(req);
    const b = bodyOf(req.body);
    const values: RunnerFormValues = { description: str(b.description).trim(), tags: str(b.tag_list), run_untagged: flag(b.run_untagged) };
    const tags = values.tags
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
    try {
      const { runner, token } = await c.ci.runners.createForUser(ctx.actor, {
        runner_type: 'project_type',
        project_id: r.project.id,
        description: values.description,
        tag_list: tags,
        run_untagged: values.run_untagged,
      });
      // the token in the environment (not in the process list); register keeps it for a bare `hearth runner`
      const command = `HEARTH_RUNNER_URL=${c.config.externalUrl} HEARTH_RUNNER_TOKEN=${token} node bin/hearth.js runner register && node bin/hearth.js runner`;
      return page(reply, ctx, owner, r, { created: { id: runner.id, token, command } });
    } catch (e) {
      const msgs = errorsOf(e);
      if (!msgs) throw e;
      return page(reply, ctx, owner, r, { runnerValues: values, runnerErrors: msgs, status: 422 });
    }
  });
}
