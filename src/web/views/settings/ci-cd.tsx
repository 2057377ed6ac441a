// Project settings → CI/CD (Maintainers and up), as GitLab's page: the CI/CD variables (values of masked and
// hidden ones shown as *****; add, edit, delete, errors beside their fields), the project's runners with their
// status and "New project runner" (its glrt- token shown once with the command that starts a runner with it),
// and links to the pipeline schedules and trigger tokens.
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { ButtonForm, FormErrors, PostForm, TimeAgo } from '../components.tsx';
import { Checkbox } from './fields.tsx';
import { actionUrl, Frame, type ProjectRef, projectUrl } from './project.tsx';

export interface VariableItem {
  key: string;
  /** null for a hidden variable */
  value: string | null;
  variable_type: string;
  protected: boolean;
  masked: boolean;
  hidden: boolean;
  raw: boolean;
  environment_scope: string;
  description: string | null;
}

export interface VariableFormValues {
  key: string;
  value: string;
  variable_type: string;
  protected: boolean;
  /** visible | masked | masked_and_hidden */
  visibility: string;
  /** expand $VARIABLE references (not raw) */
  expand: boolean;
  environment_scope: string;
  description: string;
}

export const EMPTY_VARIABLE: VariableFormValues = {
  key: '',
  value: '',
  variable_type: 'env_var',
  protected: false,
  visibility: 'visible',
  expand: true,
  environment_scope: '*',
  description: '',
};

export interface RunnerItem {
  id: number;
  description: string;
  runner_type: string;
  /** online | offline | stale | never_contacted */
  status: string;
  paused: boolean;
  tags: string[];
  contactedAt: string | null;
}

export interface RunnerFormValues {
  description: string;
  tags: string;
  run_untagged: boolean;
}

/** Messages of the service per field (`base` for the form as a whole). */
export type FieldErrors = Record<string, string[]>;

const MASK = '*****';

function ErrorsOf(p: { id: string; errors?: string[] }): SafeHtml | null {
  if (!p.errors?.length) return null;
  return (
    <p class="note color-fg-danger" id={`${p.id}_error`}>
      {p.errors.join('; ')}
    </p>
  );
}

/** A labelled input with its errors under it (aria-invalid, described by them). */
function Input(p: { id: string; name: string; label: string; value: string; errors?: string[]; hint?: string; required?: boolean; mono?: boolean }): SafeHtml {
  const described = [p.hint ? `${p.id}_hint` : '', p.errors?.length ? `${p.id}_error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class="FormControl mb-3">
      <label class="FormControl-label" for={p.id}>
        {p.label}
      </label>
      <input
        class={`form-control width-full${p.mono ? ' text-mono' : ''}`}
        id={p.id}
        name={p.name}
        value={p.value}
        required={p.required}
        autocomplete="off"
        aria-invalid={p.errors?.length ? 'true' : undefined}
        aria-describedby={described}
      />
      {p.hint ? (
        <p class="note" id={`${p.id}_hint`}>
          {p.hint}
        </p>
      ) : null}
      <ErrorsOf id={p.id} errors={p.errors} />
    </div>
  );
}

/** The variable form's fields (add and edit). */
function VariableFields(p: { v: VariableFormValues; errors: FieldErrors; editing: { hidden: boolean } | null }): SafeHtml {
  const v = p.v;
  const e = p.errors;
  return (
    <>
      <div class="FormControl mb-3">
        <label class="FormControl-label" for="variable_variable_type">
          Type
        </label>
        <select class="form-select" id="variable_variable_type" name="variable_type">
          <option value="env_var" selected={v.variable_type !== 'file'}>
            Variable (default)
          </option>
          <option value="file" selected={v.variable_type === 'file'}>
            File
          </option>
        </select>
        <ErrorsOf id="variable_variable_type" errors={e.variable_type} />
      </div>
      <Input
        id="variable_environment_scope"
        name="environment_scope"
        label="Environments"
        value={v.environment_scope}
        errors={e.environment_scope}
        hint="* for all environments, or an environment's name (wildcards allowed, e.g. review/*)."
      />
      <Checkbox
        id="variable_protected"
        name="protected"
        label="Protect variable (export it to pipelines of protected branches and tags only)"
        checked={v.protected}
      />
      <Checkbox id="variable_expand" name="expand" label="Expand variable reference ($ is a reference to another variable)" checked={v.expand} />
      {p.editing?.hidden ? (
        <p class="mb-3">
          Visibility: masked and hidden (cannot be changed)
          <input type="hidden" name="visibility" value="masked_and_hidden" />
        </p>
      ) : (
        <fieldset class="mb-3">
          <legend class="text-bold mb-1">Visibility</legend>
          {[
            ['visible', 'Visible', 'Can be seen in job logs.'],
            ['masked', 'Masked', 'Masked in job logs but value can be revealed in CI/CD settings. Requires values to meet regular expression requirements.'],
            ...(p.editing
              ? []
              : [
                  [
                    'masked_and_hidden',
                    'Masked and hidden',
                    'Masked in job logs, and can never be revealed in the CI/CD settings after the variable is saved.',
                  ],
                ]),
          ].map(([value, label, hint]) => (
            <div class="form-checkbox my-1">
              <label for={`variable_visibility_${value}`}>
                <input type="radio" id={`variable_visibility_${value}`} name="visibility" value={value} checked={v.visibility === value} /> {label}
              </label>
              <p class="note">{hint}</p>
            </div>
          ))}
          <ErrorsOf id="variable_masked" errors={e.masked} />
        </fieldset>
      )}
      <Input id="variable_description" name="description" label="Description (optional)" value={v.description} errors={e.description} />
      {p.editing ? null : <Input id="variable_key" name="key" label="Key" value={v.key} errors={e.key} required mono />}
      <div class="FormControl mb-3">
        <label class="FormControl-label" for="variable_value">
          Value
        </label>
        <textarea
          class="form-control width-full text-mono"
          id="variable_value"
          name="value"
          rows={3}
          aria-invalid={e.value?.length ? 'true' : undefined}
          aria-describedby={
            [p.editing?.hidden ? 'variable_value_hint' : '', e.value?.length ? 'variable_value_error' : ''].filter(Boolean).join(' ') || undefined
          }
        >
          {v.value}
        </textarea>
        {p.editing?.hidden ? (
          <p class="note" id="variable_value_hint">
            The value is hidden. Leave the field empty to keep it.
          </p>
        ) : null}
        <ErrorsOf id="variable_value" errors={e.value} />
      </div>
    </>
  );
}

/** The form's messages that belong to no field shown (those of fields are beside them), as a summary. */
function summary(errors: FieldErrors): string[] {
  const out: string[] = [];
  for (const [field, msgs] of Object.entries(errors)) {
    const label = field === 'base' ? '' : `${field.charAt(0).toUpperCase()}${field.slice(1).replace(/_/g, ' ')} `;
    for (const m of msgs) out.push(`${label}${m}`);
  }
  return out;
}

export interface CiCdPageProps {
  ctx: WebCtx;
  ref: ProjectRef;
  variables: VariableItem[];
  variableValues: VariableFormValues;
  variableErrors: FieldErrors;
  runners: RunnerItem[];
  runnerValues: RunnerFormValues;
  runnerErrors: string[] | null;
  /** the runner just created: its token, shown on this answer only, and the command to run */
  created: { id: number; token: string; command: string } | null;
}

export function CiCdPage(p: CiCdPageProps): SafeHtml {
  const base = projectUrl(p.ref);
  return (
    <Frame ctx={p.ctx} ref={p.ref} title="CI/CD settings" tab="ci_cd">
      <h1 class="h2 mb-3">CI/CD settings</h1>
      <nav aria-label="Pipelines settings" class="mb-4 mr-inline-links">
        <a href={`${base}/-/pipeline_schedules`}>Pipeline schedules</a> · <a href={`${base}/-/triggers`}>Pipeline trigger tokens</a> ·{' '}
        <a href={`${base}/-/pipelines`}>Pipelines</a>
      </nav>

      <section class="mb-5" aria-labelledby="ci-variables">
        <h2 class="h3 mb-2" id="ci-variables">
          Variables
        </h2>
        <p class="color-fg-muted mb-2">Variables store information, like passwords and secret keys, that you can use in job scripts.</p>
        {p.variables.length ? (
          <table class="width-full ci-table mb-3">
            <caption class="sr-only">CI/CD variables</caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Value</th>
                <th scope="col">Type</th>
                <th scope="col">Environments</th>
                <th scope="col">Attributes</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {p.variables.map((v) => {
                const id = `${v.key}:${v.environment_scope}`;
                const attrs = [v.protected ? 'Protected' : '', v.hidden ? 'Masked and hidden' : v.masked ? 'Masked' : '', v.raw ? '' : 'Expanded'].filter(
                  Boolean,
                );
                return (
                  <tr id={`variable_${v.key}`} data-variable={id}>
                    <td class="text-mono">
                      {v.key}
                      {v.description ? <div class="f6 color-fg-muted">{v.description}</div> : null}
                    </td>
                    <td class="text-mono">{v.masked || v.hidden || v.value === null ? MASK : v.value}</td>
                    <td>{v.variable_type === 'file' ? 'File' : 'Variable'}</td>
                    <td class="text-mono">{v.environment_scope === '*' ? 'All (default)' : v.environment_scope}</td>
                    <td>{attrs.join(', ') || '—'}</td>
                    <td>
                      <div class="d-flex ci-actions">
                        <a
                          class="btn btn-sm"
                          href={`${base}/-/settings/ci_cd/variables/edit?${new URLSearchParams({ key: v.key, environment_scope: v.environment_scope })}`}
                          aria-label={`Edit ${v.key}`}
                        >
                          Edit
                        </a>
                        <ButtonForm
                          ctx={p.ctx}
                          action={actionUrl(p.ref, 'variables/delete')}
                          fields={{ key: v.key, environment_scope: v.environment_scope }}
                          label="Delete"
                          aria={`Delete ${v.key}`}
                          danger
                        />
                      </div>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        ) : (
          <p class="color-fg-muted mb-3">There are no variables yet.</p>
        )}
        <h3 class="h4 mb-2" id="ci-variable-add">
          Add variable
        </h3>
        <FormErrors errors={summary(p.variableErrors)} />
        <PostForm ctx={p.ctx} action={actionUrl(p.ref, 'variables')} class="settings-form">
          <VariableFields v={p.variableValues} errors={p.variableErrors} editing={null} />
          <button type="submit" class="btn btn-primary">
            Add variable
          </button>
        </PostForm>
      </section>

      <section class="mb-5" aria-labelledby="ci-runners">
        <h2 class="h3 mb-2" id="ci-runners">
          Runners
        </h2>
        <p class="color-fg-muted mb-2">Runners are processes that pick up and execute CI/CD jobs for this project.</p>
        {p.created ? (
          <div class="flash flash-success mb-3" role="status">
            <p class="text-bold">{`Runner #${p.created.id} created.`}</p>
            <div class="d-flex flex-items-end mt-2">
              <div class="FormControl flex-1">
                <label class="FormControl-label" for="runner_token">
                  Runner authentication token
                </label>
                <input class="form-control width-full text-mono" id="runner_token" type="text" readonly value={p.created.token} />
              </div>
              <button type="button" class="btn ml-2" data-copy-target="runner_token">
                Copy token
              </button>
            </div>
            <p class="mt-2">Start a runner with it on a machine with git and a shell:</p>
            <pre class="text-mono p-2 color-bg-subtle" id="runner_command">
              <code>{p.created.command}</code>
            </pre>
            <p class="note">The token is shown only now; save it.</p>
          </div>
        ) : null}
        {p.runners.length ? (
          <table class="width-full ci-table mb-3">
            <caption class="sr-only">Runners available to this project</caption>
            <thead>
              <tr>
                <th scope="col">Status</th>
                <th scope="col">Runner</th>
                <th scope="col">Type</th>
                <th scope="col">Tags</th>
                <th scope="col">Last contact</th>
              </tr>
            </thead>
            <tbody>
              {p.runners.map((r) => (
                <tr id={`runner_${r.id}`}>
                  <td>
                    <RunnerStatus status={r.status} paused={r.paused} />
                  </td>
                  <td>
                    #{r.id} {r.description}
                  </td>
                  <td>{runnerTypeText(r.runner_type)}</td>
                  <td class="text-mono">{r.tags.join(', ') || '—'}</td>
                  <td>
                    <TimeAgo at={r.contactedAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p class="color-fg-muted mb-3">No runners are available to this project yet.</p>
        )}
        <h3 class="h4 mb-2">New project runner</h3>
        <FormErrors errors={p.runnerErrors} />
        <PostForm ctx={p.ctx} action={actionUrl(p.ref, 'runners')} class="settings-form">
          <Input id="runner_description" name="description" label="Runner description (optional)" value={p.runnerValues.description} />
          <Input
            id="runner_tags"
            name="tag_list"
            label="Tags (optional)"
            value={p.runnerValues.tags}
            hint="Separated by commas, e.g. linux, docker. Jobs with these tags run on this runner."
          />
          <Checkbox id="runner_run_untagged" name="run_untagged" label="Run untagged jobs" checked={p.runnerValues.run_untagged} />
          <button type="submit" class="btn btn-primary">
            Create runner
          </button>
        </PostForm>
      </section>
    </Frame>
  );
}

export function runnerTypeText(t: string): string {
  return t === 'instance_type' ? 'Instance' : t === 'group_type' ? 'Group' : 'Project';
}

const RUNNER_STATUS_CLASS: Record<string, string> = {
  online: 'Label--success',
  offline: 'Label--secondary',
  stale: 'Label--attention',
  never_contacted: 'Label--secondary',
};

/** A runner's status as its word (the colour repeats it). */
export function RunnerStatus(p: { status: string; paused: boolean }): SafeHtml {
  return (
    <span>
      <span class={`Label ${RUNNER_STATUS_CLASS[p.status] ?? 'Label--secondary'} runner-status-${p.status}`}>{p.status.replace(/_/g, ' ')}</span>
      {p.paused ? <span class="Label ml-1">paused</span> : null}
    </span>
  );
}

export function VariableEditPage(p: {
  ctx: WebCtx;
  ref: ProjectRef;
  original: { key: string; environment_scope: string; hidden: boolean };
  values: VariableFormValues;
  errors: FieldErrors;
}): SafeHtml {
  return (
    <Frame ctx={p.ctx} ref={p.ref} title="Edit variable" tab="ci_cd">
      <h1 class="h2 mb-3">
        Edit variable <span class="text-mono">{p.original.key}</span>
      </h1>
      <FormErrors errors={summary(p.errors)} />
      <PostForm ctx={p.ctx} action={actionUrl(p.ref, 'variables/update')} class="settings-form">
        <input type="hidden" name="key" value={p.original.key} />
        <input type="hidden" name="original_environment_scope" value={p.original.environment_scope} />
        <VariableFields v={p.values} errors={p.errors} editing={{ hidden: p.original.hidden }} />
        <button type="submit" class="btn btn-primary">
          Update variable
        </button>{' '}
        <a class="btn" href={`${projectUrl(p.ref)}/-/settings/ci_cd`}>
          Cancel
        </a>
      </PostForm>
    </Frame>
  );
}
