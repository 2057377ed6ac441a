// The merge request lists: a project's (tabs by state with counts, the author/label filters, search)
// and the viewer's own on the dashboard (authored, assigned, review requested).
import type { MergeRequestView } from '../../../domain/merge-requests/present.ts';
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { Blankslate, Pagination, Tabs } from '../components.tsx';
import { Layout } from '../layout.tsx';
import { MergeRequestRow, type ProjectRef, projectCrumbs, projectHref } from './common.tsx';

export interface ListFilters {
  state: 'opened' | 'merged' | 'closed' | 'all';
  label_name: string;
  author_username: string;
  search: string;
}

export const STATE_TABS: [ListFilters['state'], string][] = [
  ['opened', 'Open'],
  ['merged', 'Merged'],
  ['closed', 'Closed'],
  ['all', 'All'],
];

function withQuery(base: string, q: Record<string, string>): string {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v) u.set(k, v);
  const s = u.toString();
  return s ? `${base}?${s}` : base;
}

export function ProjectMergeRequestsPage(p: {
  ctx: WebCtx;
  project: ProjectRef;
  views: MergeRequestView[];
  counts: Record<ListFilters['state'], number>;
  filters: ListFilters;
  page: number;
  hasNext: boolean;
  canCreate: boolean;
}): SafeHtml {
  const base = `${projectHref(p.project)}/-/merge_requests`;
  const f = p.filters;
  return (
    <Layout ctx={p.ctx} title={`Merge requests · ${p.project.fullPath}`} crumbs={projectCrumbs(p.project, { text: 'Merge requests' })}>
      <div class="d-flex flex-items-center mb-3">
        <h1 class="h2 flex-auto">Merge requests</h1>
        {p.canCreate ? (
          <a class="btn btn-primary" href={`${base}/new`}>
            New merge request
          </a>
        ) : null}
      </div>
      <Tabs
        label="Merge request states"
        tabs={STATE_TABS.map(([state, text]) => ({
          href: withQuery(base, { state, label_name: f.label_name, author_username: f.author_username, search: f.search }),
          text,
          count: p.counts[state],
          current: f.state === state,
        }))}
      />
      <form method="get" action={base} class="d-flex flex-wrap flex-items-end mb-3" aria-label="Filter merge requests">
        <input type="hidden" name="state" value={f.state} />
        <div class="mr-2 mb-2">
          <label class="d-block f6 text-bold" for="mr-search">
            Search
          </label>
          <input class="form-control" type="search" id="mr-search" name="search" value={f.search} />
        </div>
        <div class="mr-2 mb-2">
          <label class="d-block f6 text-bold" for="mr-author">
            Author
          </label>
          <input class="form-control" type="text" id="mr-author" name="author_username" value={f.author_username} placeholder="username" />
        </div>
        <div class="mr-2 mb-2">
          <label class="d-block f6 text-bold" for="mr-label">
            Label
          </label>
          <input class="form-control" type="text" id="mr-label" name="label_name" value={f.label_name} />
        </div>
        <div class="mb-2">
          <button type="submit" class="btn">
            Filter
          </button>
        </div>
      </form>
      {p.views.length ? (
        <ul class="Box" aria-label="Merge requests">
          {p.views.map((v) => (
            <MergeRequestRow view={v} ctx={p.ctx} />
          ))}
        </ul>
      ) : (
        <Blankslate title="No merge requests">
          <p>There are no merge requests to show here.</p>
        </Blankslate>
      )}
      <Pagination url={p.ctx.url} page={p.page} hasNext={p.hasNext} />
    </Layout>
  );
}

export type DashboardScope = 'authored' | 'assigned' | 'review_requested';
export const DASHBOARD_TABS: [DashboardScope, string][] = [
  ['assigned', 'Assigned'],
  ['review_requested', 'Review requests'],
  ['authored', 'Authored'],
];

export function DashboardMergeRequestsPage(p: {
  ctx: WebCtx;
  scope: DashboardScope;
  state: ListFilters['state'];
  views: MergeRequestView[];
  page: number;
  hasNext: boolean;
}): SafeHtml {
  const base = '/dashboard/merge_requests';
  return (
    <Layout ctx={p.ctx} title="Merge requests" crumbs={[{ text: 'Your work' }, { text: 'Merge requests' }]}>
      <h1 class="h2 mb-3">Merge requests</h1>
      <Tabs
        label="Whose merge requests"
        tabs={DASHBOARD_TABS.map(([scope, text]) => ({ href: withQuery(base, { scope, state: p.state }), text, current: p.scope === scope }))}
      />
      <nav class="mb-3 f6" aria-label="Merge request states">
        {STATE_TABS.map(([state, text]) => (
          <a class="mr-3" href={withQuery(base, { scope: p.scope, state })} aria-current={p.state === state ? 'page' : undefined}>
            {text}
          </a>
        ))}
      </nav>
      {p.views.length ? (
        <ul class="Box" aria-label="Merge requests">
          {p.views.map((v) => (
            <MergeRequestRow view={v} ctx={p.ctx} showProject />
          ))}
        </ul>
      ) : (
        <Blankslate title="No merge requests">
          <p>Merge requests you take part in show up here.</p>
        </Blankslate>
      )}
      <Pagination url={p.ctx.url} page={p.page} hasNext={p.hasNext} />
    </Layout>
  );
}
