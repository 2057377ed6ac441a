// CI pages: a project's pipeline schedules (list, new, edit, play, take ownership, delete) and its pipeline
// trigger tokens (list, add, revoke), reached from the pipelines page. What may be done is decided by the
// page (the API's checks); the view shows the buttons it is told to.
import type { CiPipelineScheduleRow } from '../../../db/schema.ts';
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { Blankslate, ButtonForm, FormErrors, PostForm, TimeAgo } from '../components.tsx';
import { Layout } from '../layout.tsx';
import { type ProjectRef, projectCrumbs, projectHref } from '../merge-requests/common.tsx';
import { Checkbox, Field } from '../settings/fields.tsx';

const pipelinesHref = (p: ProjectRef) => `${projectHref(p)}/-/pipelines`;
export const schedulesHref = (p: ProjectRef) => `${projectHref(p)}/-/pipeline_schedules`;
export const triggersHref = (p: ProjectRef) => `${projectHref(p)}/-/triggers`;
const action = (p: ProjectRef, rest: string) => `/-/p/${p.id}/${rest}`;

/** The links from the pipelines page to the CI/CD pages beside it. */
export function CiNav(p: { project: ProjectRef }): SafeHtml {
  return (
    <nav aria-label="CI/CD" class="mb-3 mr-inline-links">
      <a href={`${projectHref(p.project)}/-/jobs`}>Jobs</a> · <a href={schedulesHref(p.project)}>Pipeline schedules</a> ·{' '}
      <a href={triggersHref(p.project)}>Pipeline triggers</a>
    </nav>
  );
}

export interface ScheduleItem {
  row: CiPipelineScheduleRow;
  owner: string | null;
  mayPlay: boolean;
  mayEdit: boolean;
  mayTakeOwnership: boolean;
}

export function SchedulesPage(p: { ctx: WebCtx; project: ProjectRef; schedules: ScheduleItem[]; mayCreate: boolean }): SafeHtml {
  return (
    <Layout
      ctx={p.ctx}
      title={`Pipeline schedules · ${p.project.fullPath}`}
      crumbs={projectCrumbs(p.project, { text: 'Pipelines', href: pipelinesHref(p.project) }, { text: 'Schedules' })}
    >
      <div class="d-flex flex-items-center mb-3">
        <h1 class="h2 flex-auto">Pipeline schedules</h1>
        {p.mayCreate ? (
          <a class="btn btn-primary" href={`${schedulesHref(p.project)}/new`}>
            New schedule
          </a>
        ) : null}
      </div>
      {p.schedules.length ? (
        <table class="width-full ci-table">
          <caption class="sr-only">Pipeline schedules</caption>
          <thead>
            <tr>
              <th scope="col">Description</th>
              <th scope="col">Target</th>
              <th scope="col">Interval</th>
              <th scope="col">Next run</th>
              <th scope="col">Owner</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {p.schedules.map((s) => (
              <tr id={`schedule_${s.row.id}`}>
                <td>
                  {s.row.description}
                  {s.row.active ? null : <span class="Label ml-2">Inactive</span>}
                </td>
                <td class="text-mono">{s.row.ref}</td>
                <td>
                  <span class="text-mono">{s.row.cron}</span> <span class="color-fg-muted">({s.row.cron_timezone})</span>
                </td>
                <td>
                  {s.row.active && s.row.next_run_at ? (
                    <time datetime={s.row.next_run_at}>{`${s.row.next_run_at.slice(0, 16).replace('T', ' ')} UTC`}</time>
                  ) : (
                    'Inactive'
                  )}
                </td>
                <td>{s.owner ?? '—'}</td>
                <td>
                  <div class="d-flex flex-wrap">
                    {s.mayPlay ? (
                      <ButtonForm ctx={p.ctx} action={action(p.project, `pipeline_schedules/${s.row.id}/play`)} label="Run" aria={`Run ${s.row.description}`} />
                    ) : null}
                    {s.mayTakeOwnership ? (
                      <ButtonForm
                        ctx={p.ctx}
                        action={action(p.project, `pipeline_schedules/${s.row.id}/take_ownership`)}
                        label="Take ownership"
                        aria={`Take ownership of ${s.row.description}`}
                      />
                    ) : null}
                    {s.mayEdit ? (
                      <a class="btn btn-sm" href={`${schedulesHref(p.project)}/${s.row.id}/edit`} aria-label={`Edit ${s.row.description}`}>
                        Edit
                      </a>
                    ) : null}
                    {s.mayEdit ? (
                      <ButtonForm
                        ctx={p.ctx}
                        action={action(p.project, `pipeline_schedules/${s.row.id}/delete`)}
                        label="Delete"
                        aria={`Delete ${s.row.description}`}
                        danger
                      />
                    ) : null}
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <Blankslate title="No pipeline schedules">
          <p>A schedule runs a branch's pipeline at the times a cron line names.</p>
        </Blankslate>
      )}
    </Layout>
  );
}

export interface ScheduleFormValues {
  description: string;
  ref: string;
  cron: string;
  cron_timezone: string;
  active: boolean;
}

export function ScheduleFormPage(p: {
  ctx: WebCtx;
  project: ProjectRef;
  schedule: CiPipelineScheduleRow | null;
  values: ScheduleFormValues;
  errors?: string[] | null;
}): SafeHtml {
  const title = p.schedule ? 'Edit pipeline schedule' : 'New pipeline schedule';
  return (
    <Layout
      ctx={p.ctx}
      title={`${title} · ${p.project.fullPath}`}
      crumbs={projectCrumbs(
        p.project,
        { text: 'Pipelines', href: pipelinesHref(p.project) },
        { text: 'Schedules', href: schedulesHref(p.project) },
        { text: p.schedule ? 'Edit' : 'New' },
      )}
    >
      <h1 class="h2 mb-3">{title}</h1>
      <FormErrors errors={p.errors} />
      <PostForm ctx={p.ctx} action={action(p.project, p.schedule ? `pipeline_schedules/${p.schedule.id}` : 'pipeline_schedules')} class="settings-form">
        <Field id="schedule_description" name="description" label="Description" value={p.values.description} required />
        <Field
          id="schedule_cron"
          name="cron"
          label="Interval pattern"
          value={p.values.cron}
          required
          hint="A cron line of five fields, e.g. 0 1 * * * (every day at 01:00)."
        />
        <Field
          id="schedule_cron_timezone"
          name="cron_timezone"
          label="Cron timezone"
          value={p.values.cron_timezone}
          hint="An IANA time zone, e.g. UTC or Europe/Berlin."
        />
        <Field id="schedule_ref" name="ref" label="Target branch or tag" value={p.values.ref} required />
        <Checkbox id="schedule_active" name="active" label="Activated" checked={p.values.active} />
        <button type="submit" class="btn btn-primary">
          {p.schedule ? 'Save changes' : 'Create pipeline schedule'}
        </button>
      </PostForm>
    </Layout>
  );
}

export interface TriggerItem {
  id: number;
  description: string;
  token: string;
  owner: string | null;
  lastUsed: string | null;
  createdAt: string;
}

export function TriggersPage(p: { ctx: WebCtx; project: ProjectRef; triggers: TriggerItem[]; errors?: string[] | null }): SafeHtml {
  return (
    <Layout
      ctx={p.ctx}
      title={`Pipeline triggers · ${p.project.fullPath}`}
      crumbs={projectCrumbs(p.project, { text: 'Pipelines', href: pipelinesHref(p.project) }, { text: 'Triggers' })}
    >
      <h1 class="h2 mb-3">Pipeline trigger tokens</h1>
      <p class="color-fg-muted mb-3">
        A trigger token runs a pipeline for a branch or tag: <code>POST /api/v4/projects/{String(p.project.id)}/trigger/pipeline</code> with <code>token</code>,{' '}
        <code>ref</code> and optional <code>variables[KEY]=value</code>.
      </p>
      {p.triggers.length ? (
        <table class="width-full ci-table mb-4">
          <caption class="sr-only">Trigger tokens</caption>
          <thead>
            <tr>
              <th scope="col">Description</th>
              <th scope="col">Token</th>
              <th scope="col">Owner</th>
              <th scope="col">Last used</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {p.triggers.map((t) => (
              <tr id={`trigger_${t.id}`}>
                <td>{t.description}</td>
                <td class="text-mono">{t.token}</td>
                <td>{t.owner ?? '—'}</td>
                <td>{t.lastUsed ? <TimeAgo at={t.lastUsed} /> : 'Never'}</td>
                <td>
                  <ButtonForm ctx={p.ctx} action={action(p.project, `triggers/${t.id}/delete`)} label="Revoke" aria={`Revoke ${t.description}`} danger />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="color-fg-muted mb-4">No trigger tokens yet.</p>
      )}
      <section aria-labelledby="trigger-add">
        <h2 id="trigger-add" class="h3 mb-2">
          Add new token
        </h2>
        <FormErrors errors={p.errors} />
        <PostForm ctx={p.ctx} action={action(p.project, 'triggers')} class="settings-form">
          <Field id="trigger_description" name="description" label="Description" value="" required />
          <button type="submit" class="btn btn-primary">
            Create pipeline trigger token
          </button>
        </PostForm>
      </section>
    </Layout>
  );
}
