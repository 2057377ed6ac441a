// CI pages: a project's pipelines (Run pipeline, Retry, Cancel), the Run pipeline form, one pipeline with its
// stages and jobs, the project's jobs, one job with its live log, its runner and its artifacts.
import type { CiBuildRow, CiPipelineRow } from '../../../db/schema.ts';
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { Blankslate, ButtonForm, FormErrors, Pagination, PostForm, TimeAgo } from '../components.tsx';
import { Layout } from '../layout.tsx';
import { CiNav } from './schedules.tsx';
import { type ProjectRef, projectCrumbs, projectHref } from '../merge-requests/common.tsx';

const STATUS_CLASS: Record<string, string> = {
  success: 'Label--success',
  passed: 'Label--success',
  failed: 'Label--danger',
  canceled: 'Label--secondary',
  skipped: 'Label--secondary',
  running: 'Label--accent',
  pending: 'Label--attention',
  created: 'Label--secondary',
  manual: 'Label--secondary',
  scheduled: 'Label--attention',
  preparing: 'Label--attention',
  waiting_for_resource: 'Label--attention',
};

/** A status as its word in a label (the word is the meaning; the colour repeats it). */
export function CiStatus(p: { status: string }): SafeHtml {
  const text = p.status === 'success' ? 'passed' : p.status.replace(/_/g, ' ');
  return <span class={`Label ${STATUS_CLASS[p.status] ?? 'Label--secondary'} ci-status ci-status-${p.status}`}>{text}</span>;
}

const pipelinesHref = (p: ProjectRef) => `${projectHref(p)}/-/pipelines`;
export const pipelineHref = (p: ProjectRef, id: number) => `${pipelinesHref(p)}/${id}`;
export const jobHref = (p: ProjectRef, id: number) => `${projectHref(p)}/-/jobs/${id}`;
const commitHref = (p: ProjectRef, sha: string) => `${projectHref(p)}/-/commit/${sha}`;
const action = (p: ProjectRef, rest: string) => `/-/p/${p.id}/${rest}`;
const refHref = (p: ProjectRef, ref: string) => `${projectHref(p)}/-/tree/${ref.split('/').map(encodeURIComponent).join('/')}`;

export interface PipelineItem {
  row: CiPipelineRow;
  mayRetry: boolean;
  mayCancel: boolean;
}

/** Retry and Cancel of a pipeline, each a POST form (shown when the page says they are allowed). */
function PipelineActions(p: { ctx: WebCtx; project: ProjectRef; pipeline: CiPipelineRow; mayRetry: boolean; mayCancel: boolean }): SafeHtml {
  return (
    <div class="d-flex flex-wrap ci-actions">
      {p.mayRetry ? (
        <ButtonForm ctx={p.ctx} action={action(p.project, `pipelines/${p.pipeline.id}/retry`)} label="Retry" aria={`Retry pipeline #${p.pipeline.id}`} />
      ) : null}
      {p.mayCancel ? (
        <ButtonForm
          ctx={p.ctx}
          action={action(p.project, `pipelines/${p.pipeline.id}/cancel`)}
          label="Cancel"
          aria={`Cancel pipeline #${p.pipeline.id}`}
          danger
        />
      ) : null}
    </div>
  );
}

export function PipelinesPage(p: {
  ctx: WebCtx;
  project: ProjectRef;
  pipelines: PipelineItem[];
  page: number;
  hasNext: boolean;
  mayCreate: boolean;
}): SafeHtml {
  return (
    <Layout ctx={p.ctx} title={`Pipelines · ${p.project.fullPath}`} crumbs={projectCrumbs(p.project, { text: 'Pipelines' })}>
      <div class="d-flex flex-items-center mb-3">
        <h1 class="h2 flex-auto">Pipelines</h1>
        {p.mayCreate ? (
          <a class="btn btn-primary" href={`${pipelinesHref(p.project)}/new`}>
            Run pipeline
          </a>
        ) : null}
      </div>
      <CiNav project={p.project} />
      {p.pipelines.length ? (
        <table class="width-full ci-table">
          <caption class="sr-only">Pipelines, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Status</th>
              <th scope="col">Pipeline</th>
              <th scope="col">Ref</th>
              <th scope="col">Commit</th>
              <th scope="col">Created</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {p.pipelines.map(({ row: pl, mayRetry, mayCancel }) => (
              <tr id={`pipeline_${pl.id}`}>
                <td>
                  <CiStatus status={pl.status} />
                </td>
                <td>
                  <a href={pipelineHref(p.project, pl.id)}>#{pl.id}</a>
                </td>
                <td>
                  <a class="text-mono" href={refHref(p.project, pl.ref)}>
                    {pl.ref}
                  </a>
                </td>
                <td>
                  <a class="text-mono" href={commitHref(p.project, pl.sha)} title={pl.sha}>
                    {pl.sha.slice(0, 8)}
                  </a>
                </td>
                <td>
                  <TimeAgo at={pl.created_at} />
                </td>
                <td>
                  <PipelineActions ctx={p.ctx} project={p.project} pipeline={pl} mayRetry={mayRetry} mayCancel={mayCancel} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <Blankslate title="No pipelines">
          <p>Pipelines run when a commit with a CI file is pushed, or when you run one.</p>
        </Blankslate>
      )}
      <Pagination url={p.ctx.url} page={p.page} hasNext={p.hasNext} />
    </Layout>
  );
}

export function PipelinePage(p: {
  ctx: WebCtx;
  project: ProjectRef;
  pipeline: CiPipelineRow;
  jobs: CiBuildRow[] | null;
  mayRetry: boolean;
  mayCancel: boolean;
}): SafeHtml {
  const pl = p.pipeline;
  const stages = new Map<string, CiBuildRow[]>();
  for (const j of p.jobs ?? []) {
    const list = stages.get(j.stage) ?? [];
    list.push(j);
    stages.set(j.stage, list);
  }
  return (
    <Layout
      ctx={p.ctx}
      title={`Pipeline #${pl.id} · ${p.project.fullPath}`}
      crumbs={projectCrumbs(p.project, { text: 'Pipelines', href: pipelinesHref(p.project) }, { text: `#${pl.id}` })}
    >
      <h1 class="h2 mb-2">Pipeline #{pl.id}</h1>
      <p class="mb-3 mr-inline-links">
        <CiStatus status={pl.status} /> for{' '}
        <a class="text-mono" href={refHref(p.project, pl.ref)}>
          {pl.ref}
        </a>{' '}
        at{' '}
        <a class="text-mono" href={commitHref(p.project, pl.sha)} title={pl.sha}>
          {pl.sha.slice(0, 8)}
        </a>
        , created <TimeAgo at={pl.created_at} />
      </p>
      <PipelineActions ctx={p.ctx} project={p.project} pipeline={pl} mayRetry={p.mayRetry} mayCancel={p.mayCancel} />
      {pl.yaml_errors ? (
        <div class="flash flash-error mb-3" role="alert">
          {pl.yaml_errors}
        </div>
      ) : null}
      {p.jobs === null ? (
        <p class="color-fg-muted">The jobs of this pipeline are visible to project members only.</p>
      ) : stages.size ? (
        <div class="d-flex flex-wrap ci-stages">
          {[...stages].map(([stage, jobs]) => (
            <section class="Box mr-3 mb-3 ci-stage" aria-label={`Stage ${stage}`}>
              <div class="Box-header">
                <h2 class="Box-title">{stage}</h2>
              </div>
              <ul class="list-style-none">
                {jobs.map((j) => (
                  <li class="Box-row d-flex flex-items-center" id={`job_${j.id}`}>
                    <CiStatus status={j.status} />
                    {j.type === 'bridge' ? (
                      <span class="ml-2">{j.name} (trigger)</span>
                    ) : (
                      <a class="ml-2" href={jobHref(p.project, j.id)}>
                        {j.name}
                      </a>
                    )}
                    {j.allow_failure ? <span class="ml-2 f6 color-fg-muted">(allowed to fail)</span> : null}
                  </li>
                ))}
              </ul>
            </section>
          ))}
        </div>
      ) : (
        <Blankslate title="No jobs" />
      )}
    </Layout>
  );
}

export interface JobArtifacts {
  fileName: string;
  size: number;
  /** null: kept for ever */
  expireAt: string | null;
  mayKeep: boolean;
  /** the archive's files (null when it could not be read) */
  listing: { files: { path: string; size: number }[]; more: boolean } | null;
}

/** Bytes as people read them (1.5 KiB). */
export function byteSize(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(1)} ${units[u]}`;
}

/** A duration in seconds as "1 minute 5 seconds". */
export function durationText(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const parts: string[] = [];
  if (h) parts.push(`${h} hour${h === 1 ? '' : 's'}`);
  if (m) parts.push(`${m} minute${m === 1 ? '' : 's'}`);
  if (!h && (s % 60 || !m)) parts.push(`${s % 60} second${s % 60 === 1 ? '' : 's'}`);
  return parts.join(' ');
}

/** What the top of a job page shows: its heading and buttons, status, facts, the stuck hint and the artifacts box. */
export interface JobSummaryProps {
  ctx: WebCtx;
  project: ProjectRef;
  job: CiBuildRow;
  runner: { id: number; description: string } | null;
  mayRetry: boolean;
  mayCancel: boolean;
  /** pending with no online runner that could take it */
  stuck: boolean;
  artifacts: JobArtifacts | null;
  now: number;
}

export interface JobPageProps extends JobSummaryProps {
  log: SafeHtml;
  truncated: boolean;
  empty: boolean;
  /** the log may still grow: the page script polls trace.json from `state` */
  live: boolean;
  state: string;
}

/**
 * The top of a job page, one fragment: the page script swaps it for the one trace.json sends when the job's status
 * changed (`data-status` is the status it shows), so Retry, Cancel, the runner and the artifacts follow the job.
 */
export function JobSummary(p: JobSummaryProps): SafeHtml {
  const j = p.job;
  const href = jobHref(p.project, j.id);
  const seconds = j.started_at ? ((j.finished_at ? Date.parse(j.finished_at) : p.now) - Date.parse(j.started_at)) / 1000 : null;
  return (
    <div id="job-summary" data-status={j.status}>
      <div class="d-flex flex-items-center mb-2">
        <h1 class="h2 flex-auto">
          Job {j.name} <span class="color-fg-muted text-normal">#{j.id}</span>
        </h1>
        <div class="d-flex ci-actions" data-job-actions>
          {p.mayRetry ? <ButtonForm ctx={p.ctx} action={action(p.project, `jobs/${j.id}/retry`)} label="Retry" aria={`Retry job ${j.name}`} /> : null}
          {p.mayCancel ? (
            <ButtonForm ctx={p.ctx} action={action(p.project, `jobs/${j.id}/cancel`)} label="Cancel" aria={`Cancel job ${j.name}`} danger />
          ) : null}
        </div>
      </div>
      <p class="mb-2 mr-inline-links">
        <span data-job-status>
          <CiStatus status={j.status} />
        </span>{' '}
        in stage <span class="text-bold">{j.stage}</span> of <a href={pipelineHref(p.project, j.pipeline_id)}>pipeline #{j.pipeline_id}</a> for{' '}
        <span class="text-mono">{j.ref}</span>
        {j.finished_at ? (
          <span>
            , finished <TimeAgo at={j.finished_at} />
          </span>
        ) : j.started_at ? (
          <span>
            , started <TimeAgo at={j.started_at} />
          </span>
        ) : null}
        {' · '}
        <a href={`${href}/raw`}>View raw log</a>
      </p>
      <dl class="ci-job-facts mb-3">
        <div>
          <dt>Duration</dt>
          <dd>{seconds === null ? 'not started' : `${durationText(seconds)}${j.finished_at ? '' : ' so far'}`}</dd>
        </div>
        <div>
          <dt>Runner</dt>
          <dd>{p.runner ? `#${p.runner.id}${p.runner.description ? ` (${p.runner.description})` : ''}` : 'none yet'}</dd>
        </div>
        {j.failure_reason ? (
          <div>
            <dt>Failure reason</dt>
            <dd>{j.failure_reason.replace(/_/g, ' ')}</dd>
          </div>
        ) : null}
      </dl>
      {p.stuck ? (
        <div class="flash flash-warn mb-3" role="status" id="job-stuck">
          This job is stuck because the project doesn't have any runners online assigned to it. Go to{' '}
          <a href={`${projectHref(p.project)}/-/settings/ci_cd`}>CI/CD settings</a> to register one.
        </div>
      ) : null}
      {p.artifacts ? <ArtifactsBox ctx={p.ctx} project={p.project} job={j} a={p.artifacts} /> : null}
    </div>
  );
}

export function JobPage(p: JobPageProps): SafeHtml {
  const j = p.job;
  const href = jobHref(p.project, j.id);
  return (
    <Layout
      ctx={p.ctx}
      title={`${j.name} (#${j.id}) · ${p.project.fullPath}`}
      wide
      crumbs={projectCrumbs(
        p.project,
        { text: 'Pipelines', href: pipelinesHref(p.project) },
        { text: `#${j.pipeline_id}`, href: pipelineHref(p.project, j.pipeline_id) },
        { text: j.name },
      )}
    >
      <JobSummary {...p} />
      <section aria-label="Job log">
        {p.truncated ? <p class="f6 color-fg-muted mb-1">The log is long: only its end is shown here. The raw log has all of it.</p> : null}
        {p.empty ? (
          <p class="color-fg-muted" data-log-empty>
            This job has no log yet.
          </p>
        ) : null}
        {p.empty && !p.live ? null : (
          <pre
            class="job-log"
            tabindex="0"
            hidden={p.empty}
            id="job-log"
            data-trace-url={p.live ? `${href}/trace.json` : undefined}
            data-trace-state={p.live ? p.state : undefined}
            aria-live={p.live ? 'polite' : undefined}
          >
            <code>{p.log}</code>
          </pre>
        )}
        {p.live ? (
          <p class="f6 color-fg-muted mt-1" data-log-live>
            The log is updated while the job runs.
          </p>
        ) : null}
      </section>
    </Layout>
  );
}

function ArtifactsBox(p: { ctx: WebCtx; project: ProjectRef; job: CiBuildRow; a: JobArtifacts }): SafeHtml {
  const a = p.a;
  return (
    <section class="Box mb-3 ci-artifacts" aria-labelledby="job-artifacts">
      <div class="Box-header d-flex flex-items-center">
        <h2 class="Box-title flex-auto" id="job-artifacts">
          Job artifacts
        </h2>
        <a class="btn btn-sm mr-2" href={`${jobHref(p.project, p.job.id)}/artifacts/download`} download={a.fileName}>
          Download
        </a>
        {a.mayKeep ? <ButtonForm ctx={p.ctx} action={action(p.project, `jobs/${p.job.id}/artifacts/keep`)} label="Keep" aria="Keep the artifacts" /> : null}
      </div>
      <div class="Box-row f6 color-fg-muted">
        {a.fileName}, {byteSize(a.size)}
        {a.expireAt ? (
          <span>
            {' · '}expire <time datetime={a.expireAt}>{`${a.expireAt.slice(0, 16).replace('T', ' ')} UTC`}</time>
          </span>
        ) : (
          <span>{' · '}kept</span>
        )}
      </div>
      {a.listing ? (
        <details class="Box-row">
          <summary>{`Browse (${a.listing.files.length}${a.listing.more ? '+' : ''} file${a.listing.files.length === 1 && !a.listing.more ? '' : 's'})`}</summary>
          <ul class="list-style-none mt-2 text-mono f6" aria-label="Files in the artifacts archive">
            {a.listing.files.map((f) => (
              <li>
                {f.path} <span class="color-fg-muted">({byteSize(f.size)})</span>
              </li>
            ))}
          </ul>
          {a.listing.more ? <p class="f6 color-fg-muted">More files are in the archive.</p> : null}
        </details>
      ) : (
        <div class="Box-row f6 color-fg-muted">The archive's files could not be listed.</div>
      )}
    </section>
  );
}

export function JobsPage(p: { ctx: WebCtx; project: ProjectRef; jobs: CiBuildRow[]; page: number; hasNext: boolean }): SafeHtml {
  return (
    <Layout
      ctx={p.ctx}
      title={`Jobs · ${p.project.fullPath}`}
      crumbs={projectCrumbs(p.project, { text: 'Pipelines', href: pipelinesHref(p.project) }, { text: 'Jobs' })}
    >
      <h1 class="h2 mb-3">Jobs</h1>
      <CiNav project={p.project} />
      {p.jobs.length ? (
        <table class="width-full ci-table">
          <caption class="sr-only">Jobs, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Status</th>
              <th scope="col">Job</th>
              <th scope="col">Pipeline</th>
              <th scope="col">Stage</th>
              <th scope="col">Ref</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {p.jobs.map((j) => (
              <tr id={`job_${j.id}`}>
                <td>
                  <CiStatus status={j.status} />
                  {j.retried ? <span class="ml-1 f6 color-fg-muted">(retried)</span> : null}
                </td>
                <td>
                  <a href={jobHref(p.project, j.id)}>
                    {j.name} #{j.id}
                  </a>
                </td>
                <td>
                  <a href={pipelineHref(p.project, j.pipeline_id)}>#{j.pipeline_id}</a>
                </td>
                <td>{j.stage}</td>
                <td class="text-mono">{j.ref}</td>
                <td>
                  <TimeAgo at={j.created_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <Blankslate title="No jobs" />
      )}
      <Pagination url={p.ctx.url} page={p.page} hasNext={p.hasNext} />
    </Layout>
  );
}

export interface NewPipelineValues {
  ref: string;
  variables: { key: string; value: string; variable_type: string }[];
}

/** GitLab's Run pipeline form: the ref, then variable rows (type, key, value); one empty row is always there. */
export function NewPipelinePage(p: {
  ctx: WebCtx;
  project: ProjectRef;
  refs: { branches: string[]; tags: string[] };
  values: NewPipelineValues;
  errors?: string[] | null;
}): SafeHtml {
  const rows = [...p.values.variables, { key: '', value: '', variable_type: 'env_var' }];
  const known = p.refs.branches.includes(p.values.ref) || p.refs.tags.includes(p.values.ref);
  return (
    <Layout
      ctx={p.ctx}
      title={`Run pipeline · ${p.project.fullPath}`}
      crumbs={projectCrumbs(p.project, { text: 'Pipelines', href: pipelinesHref(p.project) }, { text: 'Run pipeline' })}
    >
      <h1 class="h2 mb-3">Run pipeline</h1>
      <FormErrors errors={p.errors} />
      <PostForm ctx={p.ctx} action={action(p.project, 'pipelines')} class="settings-form" id="new-pipeline-form">
        <div class="FormControl mb-3">
          <label class="FormControl-label" for="pipeline_ref">
            Run for branch name or tag
          </label>
          <select class="form-select" id="pipeline_ref" name="ref" required>
            {known || !p.values.ref ? null : (
              <option value={p.values.ref} selected>
                {p.values.ref}
              </option>
            )}
            <optgroup label="Branches">
              {p.refs.branches.map((b) => (
                <option value={b} selected={b === p.values.ref}>
                  {b}
                </option>
              ))}
            </optgroup>
            {p.refs.tags.length ? (
              <optgroup label="Tags">
                {p.refs.tags.map((t) => (
                  <option value={t} selected={t === p.values.ref}>
                    {t}
                  </option>
                ))}
              </optgroup>
            ) : null}
          </select>
        </div>
        <fieldset class="mb-3">
          <legend class="text-bold mb-1">Variables</legend>
          <p class="note mb-2">Specify variable values to be used in this run. The values are used only for this pipeline.</p>
          <div data-variable-rows>
            {rows.map((v, i) => (
              <div class="d-flex flex-wrap flex-items-end mb-2 ci-variable-row" data-variable-row>
                <div class="FormControl mr-2">
                  <label class="FormControl-label" for={`variable_type_${i}`}>
                    Type
                  </label>
                  <select class="form-select" id={`variable_type_${i}`} name={`variables[${i}][variable_type]`}>
                    <option value="env_var" selected={v.variable_type !== 'file'}>
                      Variable
                    </option>
                    <option value="file" selected={v.variable_type === 'file'}>
                      File
                    </option>
                  </select>
                </div>
                <div class="FormControl mr-2">
                  <label class="FormControl-label" for={`variable_key_${i}`}>
                    Key
                  </label>
                  <input class="form-control text-mono" id={`variable_key_${i}`} name={`variables[${i}][key]`} value={v.key} autocomplete="off" />
                </div>
                <div class="FormControl flex-auto">
                  <label class="FormControl-label" for={`variable_value_${i}`}>
                    Value
                  </label>
                  <input
                    class="form-control width-full text-mono"
                    id={`variable_value_${i}`}
                    name={`variables[${i}][value]`}
                    value={v.value}
                    autocomplete="off"
                  />
                </div>
              </div>
            ))}
          </div>
          <button type="button" class="btn btn-sm" data-add-variable-row hidden>
            Add variable
          </button>
        </fieldset>
        <button type="submit" class="btn btn-primary">
          Run pipeline
        </button>
      </PostForm>
    </Layout>
  );
}
