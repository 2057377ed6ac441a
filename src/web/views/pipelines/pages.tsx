// CI pages: a project's pipelines, one pipeline with its stages and jobs, one job with its log.
import type { CiBuildRow, CiPipelineRow } from '../../../db/schema.ts';
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { Blankslate, Pagination, TimeAgo } from '../components.tsx';
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
const refHref = (p: ProjectRef, ref: string) => `${projectHref(p)}/-/tree/${ref.split('/').map(encodeURIComponent).join('/')}`;

export function PipelinesPage(p: { ctx: WebCtx; project: ProjectRef; pipelines: CiPipelineRow[]; page: number; hasNext: boolean }): SafeHtml {
  return (
    <Layout ctx={p.ctx} title={`Pipelines · ${p.project.fullPath}`} crumbs={projectCrumbs(p.project, { text: 'Pipelines' })}>
      <h1 class="h2 mb-3">Pipelines</h1>
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
            </tr>
          </thead>
          <tbody>
            {p.pipelines.map((pl) => (
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
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <Blankslate title="No pipelines">
          <p>Pipelines run when a commit with a CI file is pushed.</p>
        </Blankslate>
      )}
      <Pagination url={p.ctx.url} page={p.page} hasNext={p.hasNext} />
    </Layout>
  );
}

export function PipelinePage(p: { ctx: WebCtx; project: ProjectRef; pipeline: CiPipelineRow; jobs: CiBuildRow[] | null }): SafeHtml {
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

export function JobPage(p: { ctx: WebCtx; project: ProjectRef; job: CiBuildRow; log: SafeHtml; truncated: boolean; empty: boolean }): SafeHtml {
  const j = p.job;
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
      <h1 class="h2 mb-2">
        Job {j.name} <span class="color-fg-muted text-normal">#{j.id}</span>
      </h1>
      <p class="mb-3 mr-inline-links">
        <CiStatus status={j.status} /> in stage <span class="text-bold">{j.stage}</span> of{' '}
        <a href={pipelineHref(p.project, j.pipeline_id)}>pipeline #{j.pipeline_id}</a> for <span class="text-mono">{j.ref}</span>
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
        <a href={`${jobHref(p.project, j.id)}/raw`}>View raw log</a>
      </p>
      <section aria-label="Job log">
        {p.truncated ? <p class="f6 color-fg-muted mb-1">The log is long: only its end is shown here. The raw log has all of it.</p> : null}
        {p.empty ? (
          <p class="color-fg-muted">This job has no log yet.</p>
        ) : (
          <pre class="job-log" tabindex="0">
            <code>{p.log}</code>
          </pre>
        )}
      </section>
    </Layout>
  );
}
