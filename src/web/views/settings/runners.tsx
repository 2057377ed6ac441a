// Runners as the CI/CD settings of a project or group and the admin area list them: one table (status, runner,
// type, tags, last contact; the admin area adds owner, version and created) with Edit, Pause/Resume and Delete for
// those who may, the "New … runner" form with the token shown once, and the runner edit form (GitLab's: description,
// maintenance note, paused, protected, run untagged, locked, maximum job timeout, tags).
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { ButtonForm, FormErrors, PostForm, TimeAgo } from '../components.tsx';
import { Checkbox, ErrorsOf, Field, type FieldErrors, fieldSummary } from './fields.tsx';
import { OneTimeSecret } from './token-form.tsx';

export interface RunnerItem {
  id: number;
  description: string;
  runner_type: string;
  /** online | offline | stale | never_contacted */
  status: string;
  paused: boolean;
  tags: string[];
  contactedAt: string | null;
  version?: string | null;
  createdAt?: string;
  /** the project or group it belongs to, for project and group runners */
  owner?: { text: string; href: string } | null;
  /** may the viewer edit, pause and resume it; delete it (RunnersService's rules) */
  mayUpdate: boolean;
  mayDelete: boolean;
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

/** Where a runner's buttons post: `/-/runners/:id/<action>`, with the place the list is on (to come back to). */
export const runnerAction = (id: number, action: string): string => `/-/runners/${id}/${action}`;

function RunnerActions(p: { ctx: WebCtx; r: RunnerItem; place: string; editBase: string }): SafeHtml | null {
  const r = p.r;
  if (!r.mayUpdate && !r.mayDelete) return null;
  const name = `runner #${r.id}`;
  return (
    <div class="d-flex ci-actions">
      {r.mayUpdate ? (
        <>
          <a class="btn btn-sm" href={`${p.editBase}/${r.id}/edit`} aria-label={`Edit ${name}`}>
            Edit
          </a>
          <ButtonForm
            ctx={p.ctx}
            action={runnerAction(r.id, r.paused ? 'resume' : 'pause')}
            fields={{ place: p.place }}
            label={r.paused ? 'Resume' : 'Pause'}
            aria={`${r.paused ? 'Resume' : 'Pause'} ${name}`}
          />
        </>
      ) : null}
      {r.mayDelete ? (
        <ButtonForm ctx={p.ctx} action={runnerAction(r.id, 'delete')} fields={{ place: p.place }} label="Delete" aria={`Delete ${name}`} danger />
      ) : null}
    </div>
  );
}

export interface RunnerTableProps {
  ctx: WebCtx;
  runners: RunnerItem[];
  caption: string;
  /** the admin area's columns: owner, version, created */
  detailed?: boolean;
  /** the place the list is on (`project:12`, `group:5`, `admin`) */
  place: string;
  /** the edit pages are `<editBase>/<id>/edit` */
  editBase: string;
}

export function RunnerTable(p: RunnerTableProps): SafeHtml {
  const actions = p.runners.some((r) => r.mayUpdate || r.mayDelete);
  return (
    <table class="width-full ci-table mb-3">
      <caption class="sr-only">{p.caption}</caption>
      <thead>
        <tr>
          <th scope="col">Status</th>
          <th scope="col">Runner</th>
          <th scope="col">Type</th>
          {p.detailed ? <th scope="col">Owner</th> : null}
          <th scope="col">Tags</th>
          {p.detailed ? <th scope="col">Version</th> : null}
          <th scope="col">Last contact</th>
          {p.detailed ? <th scope="col">Created</th> : null}
          {actions ? <th scope="col">Actions</th> : null}
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
            {p.detailed ? <td>{r.owner ? <a href={r.owner.href}>{r.owner.text}</a> : '—'}</td> : null}
            <td class="text-mono">{r.tags.join(', ') || '—'}</td>
            {p.detailed ? <td>{r.version ?? '—'}</td> : null}
            <td>
              <TimeAgo at={r.contactedAt} />
            </td>
            {p.detailed ? (
              <td>
                <TimeAgo at={r.createdAt} />
              </td>
            ) : null}
            {actions ? (
              <td>
                <RunnerActions ctx={p.ctx} r={r} place={p.place} editBase={p.editBase} />
              </td>
            ) : null}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export interface RunnerFormValues {
  description: string;
  tags: string;
  run_untagged: boolean;
}

/** "New project runner" / "New group runner": the form, and the runner just made with its token (shown on that answer only). */
export function NewRunnerForm(p: {
  ctx: WebCtx;
  title: string;
  action: string;
  values: RunnerFormValues;
  errors: string[] | null;
  created: { id: number; token: string; command: string } | null;
}): SafeHtml {
  return (
    <>
      {p.created ? (
        <div class="flash flash-success mb-3" role="status">
          <p class="text-bold">{`Runner #${p.created.id} created.`}</p>
          <OneTimeSecret id="runner_token" label="Runner authentication token" value={p.created.token} />
          <p class="mt-2">Start a runner with it on a machine with git and a shell:</p>
          <pre class="text-mono p-2 color-bg-subtle" id="runner_command">
            <code>{p.created.command}</code>
          </pre>
          <p class="note">The token is shown only now; save it.</p>
        </div>
      ) : null}
      <h3 class="h4 mb-2">{p.title}</h3>
      <FormErrors errors={p.errors} />
      <PostForm ctx={p.ctx} action={p.action} class="settings-form">
        <Field autocomplete="off" id="runner_description" name="description" label="Runner description (optional)" value={p.values.description} />
        <Field
          autocomplete="off"
          id="runner_tags"
          name="tag_list"
          label="Tags (optional)"
          value={p.values.tags}
          hint="Separated by commas, e.g. linux, docker. Jobs with these tags run on this runner."
        />
        <Checkbox id="runner_run_untagged" name="run_untagged" label="Run untagged jobs" checked={p.values.run_untagged} />
        <button type="submit" class="btn btn-primary">
          Create runner
        </button>
      </PostForm>
    </>
  );
}

export interface RunnerEditValues {
  description: string;
  maintenance_note: string;
  paused: boolean;
  protected: boolean;
  run_untagged: boolean;
  locked: boolean;
  maximum_timeout: string;
  tags: string;
}

const RUNNER_LABELS = { maximum_timeout: 'Maximum job timeout', tags_list: 'Tags', maintenance_note: 'Maintenance note' };

/** The runner edit form (GitLab's runner edit page); Lock to current projects is a project runner's only. */
export function RunnerEditForm(p: {
  ctx: WebCtx;
  runner: { id: number; runner_type: string };
  values: RunnerEditValues;
  errors: FieldErrors;
  place: string;
  back: string;
}): SafeHtml {
  const v = p.values;
  const e = p.errors;
  return (
    <>
      <h1 class="h2 mb-3">{`Edit runner #${p.runner.id}`}</h1>
      <p class="color-fg-muted mb-3">{`${runnerTypeText(p.runner.runner_type)} runner`}</p>
      <FormErrors errors={fieldSummary(e, RUNNER_LABELS)} />
      <PostForm ctx={p.ctx} action={runnerAction(p.runner.id, 'update')} class="settings-form">
        <input type="hidden" name="place" value={p.place} />
        <Field autocomplete="off" id="runner_description" name="description" label="Runner description" value={v.description} errors={e.description} />
        <div class="FormControl mb-3">
          <label class="FormControl-label" for="runner_maintenance_note">
            Maintenance note (optional)
          </label>
          <textarea
            class="form-control width-full"
            id="runner_maintenance_note"
            name="maintenance_note"
            rows={3}
            aria-invalid={e.maintenance_note?.length ? 'true' : undefined}
            aria-describedby={e.maintenance_note?.length ? 'runner_maintenance_note_error' : undefined}
          >
            {v.maintenance_note}
          </textarea>
          <ErrorsOf id="runner_maintenance_note" errors={e.maintenance_note} />
        </div>
        <fieldset class="mb-3">
          <legend class="text-bold mb-1">Configuration</legend>
          <Checkbox id="runner_paused" name="paused" label="Paused" checked={v.paused} hint="Stop the runner from accepting new jobs." />
          <Checkbox
            id="runner_protected"
            name="protected"
            label="Protected"
            checked={v.protected}
            hint="Use the runner on pipelines for protected branches only."
          />
          <Checkbox
            id="runner_run_untagged"
            name="run_untagged"
            label="Run untagged jobs"
            checked={v.run_untagged}
            hint="Use the runner for jobs without tags, in addition to jobs with tags."
          />
          {p.runner.runner_type === 'project_type' ? (
            <Checkbox
              id="runner_locked"
              name="locked"
              label="Lock to current projects"
              checked={v.locked}
              hint="Use the runner for the currently assigned projects only."
            />
          ) : null}
        </fieldset>
        <Field
          autocomplete="off"
          id="runner_maximum_timeout"
          name="maximum_timeout"
          label="Maximum job timeout (seconds, optional)"
          type="number"
          min={600}
          value={v.maximum_timeout}
          errors={e.maximum_timeout}
          hint="At least 600 (10 minutes). Jobs that take longer are stopped; empty: the project's timeout alone."
        />
        <Field
          autocomplete="off"
          id="runner_tags"
          name="tag_list"
          label="Tags"
          value={v.tags}
          errors={e.tags_list}
          hint="Separated by commas, e.g. linux, docker. Jobs with these tags run on this runner."
        />
        <button type="submit" class="btn btn-primary">
          Save changes
        </button>{' '}
        <a class="btn" href={p.back}>
          Cancel
        </a>
      </PostForm>
    </>
  );
}
