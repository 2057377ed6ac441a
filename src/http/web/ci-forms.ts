// What the CI/CD settings of a project, a group and the admin area share: the variable forms (add, update, delete
// through c.ci.variables, as `/projects|groups/:id/variables` and `/admin/ci/variables` do, the service's messages
// beside their fields and nothing written when it refuses) and the runner rows with what the viewer may do to each
// (RunnersService's rules, the API's).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { CiRunnerRow } from '../../db/schema.ts';
import type { Actor } from '../../domain/access/actor.ts';
import type { VariableInput, VariableOwner, VariableView } from '../../domain/ci/variables/variables.service.ts';
import { DomainError } from '../../lib/errors.ts';
import type { VariableFormValues } from '../../web/views/settings/ci-variables.tsx';
import type { FieldErrors } from '../../web/views/settings/fields.tsx';
import { bodyOf, errorsOf, flag, str } from '../../web/views/settings/form-input.ts';
import type { RunnerItem } from '../../web/views/settings/runners.tsx';
import { runnerStatus } from '../platform/entities/runner.entity.ts';
import { HIDDEN, PAGE, type Web } from './web.ts';

const VISIBILITIES = ['visible', 'masked', 'masked_and_hidden'];

/** A service's refusal as messages per field (`base` for the rest); null when it is no form problem. */
export function fieldErrorsOf(e: unknown): FieldErrors | null {
  if (e instanceof DomainError && e.kind === 'invalid' && e.detail && typeof e.detail === 'object' && !Array.isArray(e.detail)) {
    const out: FieldErrors = {};
    for (const [k, v] of Object.entries(e.detail as Record<string, unknown>)) out[k] = (Array.isArray(v) ? v : [v]).map(String);
    return out;
  }
  const msgs = errorsOf(e);
  return msgs ? { base: msgs } : null;
}

export function valuesOfView(v: VariableView): VariableFormValues {
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

/** The form as the service's input, and what it refuses before asking it (an unknown type or visibility). */
function variableForm(b: Record<string, unknown>, scoped: boolean): { values: VariableFormValues; errors: FieldErrors } {
  const values: VariableFormValues = {
    key: str(b.key).trim(),
    value: str(b.value),
    variable_type: str(b.variable_type) || 'env_var',
    protected: flag(b.protected),
    visibility: str(b.visibility) || 'visible',
    expand: flag(b.expand),
    environment_scope: (scoped && str(b.environment_scope).trim()) || '*',
    description: str(b.description),
  };
  const errors: FieldErrors = {};
  if (values.variable_type !== 'env_var' && values.variable_type !== 'file') errors.variable_type = ['is not a valid type'];
  // instance variables cannot be hidden
  if (!VISIBILITIES.includes(values.visibility) || (!scoped && values.visibility === 'masked_and_hidden')) errors.masked = ['is not a valid visibility'];
  if (values.description.length > 255) errors.description = ['is too long (maximum is 255 characters)'];
  return { values, errors };
}

/**
 * The service's errors for the form: GitLab's "Value is invalid" for a value that cannot be masked says why here
 * (Ci::Maskable's rule; the API keeps GitLab's words).
 */
function formErrorsOfVariable(e: unknown, v: VariableFormValues): FieldErrors | null {
  const errors = fieldErrorsOf(e);
  if (errors?.value && v.visibility !== 'visible') {
    const why = v.expand
      ? 'cannot be masked: a masked value is one line of at least 8 characters, only letters, digits and @ : . ~ - _ + = /'
      : 'cannot be masked: a masked value is at least 8 characters without spaces or line breaks';
    errors.value = errors.value.map((m) => (m === 'is invalid' ? why : m));
  }
  return errors;
}

const inputOf = (v: VariableFormValues): VariableInput => ({
  value: v.value,
  variable_type: v.variable_type,
  protected: v.protected,
  masked: v.visibility !== 'visible',
  raw: !v.expand,
  environment_scope: v.environment_scope,
  description: v.description || null,
});

/** One owner's variables as the forms see them: who, and how to show the page again with the form's state. */
export interface VariablePlace {
  owner: VariableOwner;
  /** project and group variables have environments and may be hidden */
  scoped: boolean;
  /** the page the forms go back to */
  back: string;
  /** the settings page with the add form's values and messages */
  page(reply: FastifyReply, form: { values: VariableFormValues; errors: FieldErrors }, status: number): Promise<FastifyReply>;
  /** the edit page */
  edit(reply: FastifyReply, original: VariableOriginal, form: { values: VariableFormValues; errors: FieldErrors }, status: number): Promise<FastifyReply>;
}

export interface VariableOriginal {
  key: string;
  environment_scope: string;
  hidden: boolean;
}

/** The edit page of `?key=&environment_scope=` (404 when the owner has no such variable). */
export async function variableEditPage(reply: FastifyReply, place: VariablePlace, query: unknown, vars: Container['ci']['variables']) {
  const q = bodyOf(query);
  const view = await vars.get(place.owner, str(q.key), str(q.environment_scope) || undefined);
  return place.edit(reply, { key: view.key, environment_scope: view.environment_scope, hidden: view.hidden }, { values: valuesOfView(view), errors: {} }, 200);
}

/** POST `<base>/variables`, `<base>/variables/update`, `<base>/variables/delete` for the place `placeOf` finds (its own 404/403). */
export function variableForms(app: FastifyInstance, c: Container, web: Web, base: string, placeOf: (req: FastifyRequest) => Promise<VariablePlace>): void {
  const vars = c.ci.variables;
  const route = { config: PAGE, schema: HIDDEN };

  app.post(`${base}/variables`, route, async (req, reply) => {
    const place = await placeOf(req);
    const { values, errors } = variableForm(bodyOf(req.body), place.scoped);
    if (!values.key && !errors.key) errors.key = ["can't be blank"];
    if (Object.keys(errors).length) return place.page(reply, { values, errors }, 422);
    try {
      await vars.create(place.owner, { ...inputOf(values), key: values.key, masked_and_hidden: values.visibility === 'masked_and_hidden' });
    } catch (e) {
      const fe = formErrorsOfVariable(e, values);
      if (!fe) throw e;
      return place.page(reply, { values, errors: fe }, 422);
    }
    return web.redirect(reply, place.back, { kind: 'notice', text: `Variable ${values.key} was added.` });
  });

  app.post(`${base}/variables/update`, route, async (req, reply) => {
    const place = await placeOf(req);
    const b = bodyOf(req.body);
    const current = await vars.get(place.owner, str(b.key), str(b.original_environment_scope) || undefined);
    const { values, errors } = variableForm(b, place.scoped);
    values.key = current.key;
    // a hidden variable's value is never shown: an empty field keeps it; its visibility stays
    if (current.hidden) values.visibility = 'masked_and_hidden';
    else if (values.visibility === 'masked_and_hidden') errors.masked = ['cannot be changed to masked and hidden'];
    const original = { key: current.key, environment_scope: current.environment_scope, hidden: current.hidden };
    if (Object.keys(errors).length) return place.edit(reply, original, { values, errors }, 422);
    const input = inputOf(values);
    if (current.hidden && values.value === '') input.value = undefined;
    try {
      await vars.update(place.owner, current.key, current.environment_scope, input);
    } catch (e) {
      const fe = formErrorsOfVariable(e, values);
      if (!fe) throw e;
      return place.edit(reply, original, { values, errors: fe }, 422);
    }
    return web.redirect(reply, place.back, { kind: 'notice', text: `Variable ${current.key} was updated.` });
  });

  app.post(`${base}/variables/delete`, route, async (req, reply) => {
    const place = await placeOf(req);
    const b = bodyOf(req.body);
    const key = str(b.key);
    await vars.remove(place.owner, key, str(b.environment_scope) || undefined);
    return web.redirect(reply, place.back, { kind: 'notice', text: `Variable ${key} was deleted.` });
  });
}

// ---- runners -------------------------------------------------------------------------------------

/** Runner rows as the tables show them, with what `actor` may do to each (edit, pause, resume; delete). */
export async function runnerItems(
  c: Container,
  actor: Actor,
  rows: CiRunnerRow[],
  owner?: (r: CiRunnerRow) => Promise<RunnerItem['owner']>,
): Promise<RunnerItem[]> {
  const now = Date.now();
  const svc = c.ci.runners;
  return Promise.all(
    rows.map(async (r) => {
      const access = await svc.access(actor, r);
      return {
        id: r.id,
        description: r.description,
        runner_type: r.runner_type,
        status: runnerStatus(r, now),
        paused: r.active !== 1,
        tags: JSON.parse(r.tag_list) as string[],
        contactedAt: r.contacted_at,
        version: r.version,
        createdAt: r.created_at,
        owner: owner ? await owner(r) : null,
        mayUpdate: access.update,
        mayDelete: svc.mayDestroy(actor, access),
      };
    }),
  );
}

/** The command that starts a runner with a new token: the token in the environment (not in the process list). */
export function runnerCommand(c: Container, token: string): string {
  return `HEARTH_RUNNER_URL=${c.config.externalUrl} HEARTH_RUNNER_TOKEN=${token} node bin/hearth.js runner register && node bin/hearth.js runner`;
}
