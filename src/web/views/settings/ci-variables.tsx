// CI/CD variables as GitLab's settings show them, one component for the three owners (a project's and a group's
// CI/CD settings, the admin area's instance variables): the list (values of masked and hidden ones shown as *****;
// Edit and Delete per row), the "Add variable" form and the edit form, the service's messages beside their fields.
// Instance variables have no environments and cannot be hidden: `scoped` is false for them.
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { ButtonForm, FormErrors, PostForm } from '../components.tsx';
import { Checkbox, Field, ErrorsOf, type FieldErrors, fieldSummary } from './fields.tsx';

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

/** Where a variables section's forms go. */
export interface VariableUrls {
  add: string;
  update: string;
  remove: string;
  /** the edit page (its key and scope follow as query parameters) */
  edit: string;
  /** the page the section is on (the edit form's Cancel) */
  back: string;
}

const MASK = '*****';
/** the visibility radios name the service's `masked` messages */
const LABELS = { masked: 'Visibility', variable_type: 'Type', environment_scope: 'Environments' };

/** The variable form's fields (add and edit). */
function VariableFields(p: { v: VariableFormValues; errors: FieldErrors; editing: { hidden: boolean } | null; scoped: boolean }): SafeHtml {
  const v = p.v;
  const e = p.errors;
  const visibilities: [string, string, string][] = [
    ['visible', 'Visible', 'Can be seen in job logs.'],
    ['masked', 'Masked', 'Masked in job logs but value can be revealed in CI/CD settings. Requires values to meet regular expression requirements.'],
  ];
  if (!p.editing && p.scoped) {
    visibilities.push([
      'masked_and_hidden',
      'Masked and hidden',
      'Masked in job logs, and can never be revealed in the CI/CD settings after the variable is saved.',
    ]);
  }
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
      {p.scoped ? (
        <Field
          autocomplete="off"
          id="variable_environment_scope"
          name="environment_scope"
          label="Environments"
          value={v.environment_scope}
          errors={e.environment_scope}
          hint="* for all environments, or an environment's name (wildcards allowed, e.g. review/*)."
        />
      ) : null}
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
          {visibilities.map(([value, label, hint]) => (
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
      <Field autocomplete="off" id="variable_description" name="description" label="Description (optional)" value={v.description} errors={e.description} />
      {p.editing ? null : <Field autocomplete="off" id="variable_key" name="key" label="Key" value={v.key} errors={e.key} required mono />}
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

/** The form's messages, each naming its field, above it. */
export function variableErrorSummary(errors: FieldErrors): string[] {
  return fieldSummary(errors, LABELS);
}

export interface VariablesSectionProps {
  ctx: WebCtx;
  variables: VariableItem[];
  values: VariableFormValues;
  errors: FieldErrors;
  urls: VariableUrls;
  scoped: boolean;
  /** what the variables are for, under the heading */
  intro: string;
}

/** The list of an owner's variables and the "Add variable" form. */
export function VariablesSection(p: VariablesSectionProps): SafeHtml {
  return (
    <section class="mb-5" aria-labelledby="ci-variables">
      <h2 class="h3 mb-2" id="ci-variables">
        Variables
      </h2>
      <p class="color-fg-muted mb-2">{p.intro}</p>
      {p.variables.length ? (
        <table class="width-full ci-table mb-3">
          <caption class="sr-only">CI/CD variables</caption>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Value</th>
              <th scope="col">Type</th>
              {p.scoped ? <th scope="col">Environments</th> : null}
              <th scope="col">Attributes</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {p.variables.map((v) => {
              const attrs = [v.protected ? 'Protected' : '', v.hidden ? 'Masked and hidden' : v.masked ? 'Masked' : '', v.raw ? '' : 'Expanded'].filter(
                Boolean,
              );
              const which: Record<string, string> = p.scoped ? { key: v.key, environment_scope: v.environment_scope } : { key: v.key };
              return (
                <tr id={`variable_${v.key}`} data-variable={`${v.key}:${v.environment_scope}`}>
                  <td class="text-mono">
                    {v.key}
                    {v.description ? <div class="f6 color-fg-muted">{v.description}</div> : null}
                  </td>
                  <td class="text-mono">{v.masked || v.hidden || v.value === null ? MASK : v.value}</td>
                  <td>{v.variable_type === 'file' ? 'File' : 'Variable'}</td>
                  {p.scoped ? <td class="text-mono">{v.environment_scope === '*' ? 'All (default)' : v.environment_scope}</td> : null}
                  <td>{attrs.join(', ') || '—'}</td>
                  <td>
                    <div class="d-flex ci-actions">
                      <a class="btn btn-sm" href={`${p.urls.edit}?${new URLSearchParams(which)}`} aria-label={`Edit ${v.key}`}>
                        Edit
                      </a>
                      <ButtonForm ctx={p.ctx} action={p.urls.remove} fields={which} label="Delete" aria={`Delete ${v.key}`} danger />
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
      <FormErrors errors={variableErrorSummary(p.errors)} />
      <PostForm ctx={p.ctx} action={p.urls.add} class="settings-form">
        <VariableFields v={p.values} errors={p.errors} editing={null} scoped={p.scoped} />
        <button type="submit" class="btn btn-primary">
          Add variable
        </button>
      </PostForm>
    </section>
  );
}

export interface VariableEditProps {
  ctx: WebCtx;
  original: { key: string; environment_scope: string; hidden: boolean };
  values: VariableFormValues;
  errors: FieldErrors;
  urls: VariableUrls;
  scoped: boolean;
}

/** The edit page's heading and form (the key and "masked and hidden" stay as they are). */
export function VariableEditForm(p: VariableEditProps): SafeHtml {
  return (
    <>
      <h1 class="h2 mb-3">
        Edit variable <span class="text-mono">{p.original.key}</span>
      </h1>
      <FormErrors errors={variableErrorSummary(p.errors)} />
      <PostForm ctx={p.ctx} action={p.urls.update} class="settings-form">
        <input type="hidden" name="key" value={p.original.key} />
        <input type="hidden" name="original_environment_scope" value={p.original.environment_scope} />
        <VariableFields v={p.values} errors={p.errors} editing={{ hidden: p.original.hidden }} scoped={p.scoped} />
        <button type="submit" class="btn btn-primary">
          Update variable
        </button>{' '}
        <a class="btn" href={p.urls.back}>
          Cancel
        </a>
      </PostForm>
    </>
  );
}
