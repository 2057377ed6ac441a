// A list of issues — a project's (GitLab's /<project>/-/issues), a group's projects' (/groups/<group>/-/issues) or the
// viewer's across projects (/dashboard/issues): Open / Closed / All tabs with their counts, the list's filters (search,
// author, assignee, labels, milestone, confidentiality) and order as query parameters, one row per issue and the pages
// of the list. One view for the three: the place says where the list's links go, which navigation it shows and from
// where each row's reference is written (`#12` in a project, `app#12` in its group, the full path on the dashboard).
// The "New issue" button shows on a project's list when the route says the viewer may create one.
import type { NamespaceRow } from '../../../db/schema.ts';
import type { IssueView } from '../../../domain/issues/present.ts';
import type { IssueFilters } from '../../../domain/issues/issues-query.ts';
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { Blankslate, Pagination, Tabs } from '../components.tsx';
import { groupHref } from '../dashboard/lists.tsx';
import { GroupTabs, groupCrumbs } from '../groups/group-tabs.tsx';
import { type Crumb, Layout } from '../layout.tsx';
import { type ProjectRef, projectCrumbs } from '../merge-requests/common.tsx';
import { IssueRow, issuesHref } from './common.tsx';
import { type ProjectTabsNav, ProjectTabs } from '../project-tabs.tsx';

export type IssueState = 'opened' | 'closed' | 'all';

/** The list's query parameters as the page read them (the API's names). */
export interface IssueListFilters {
  state: IssueState;
  search: string;
  author_username: string;
  assignee_username: string;
  /** comma-separated label titles, every one required */
  labels: string;
  /** a milestone title, or None / Any */
  milestone: string;
  /** '' any, 'yes' confidential only, 'no' the others */
  confidential: '' | 'yes' | 'no';
  sort: string;
}

export const ISSUE_STATE_TABS: [IssueState, string][] = [
  ['opened', 'Open'],
  ['closed', 'Closed'],
  ['all', 'All'],
];

/** GitLab's sort values of the issues list, and what each orders by. */
export const ISSUE_SORTS: { value: string; text: string; orderBy: NonNullable<IssueFilters['orderBy']>; sort: 'asc' | 'desc' }[] = [
  { value: 'created_date', text: 'Created date', orderBy: 'created_at', sort: 'desc' },
  { value: 'created_asc', text: 'Oldest created', orderBy: 'created_at', sort: 'asc' },
  { value: 'updated_desc', text: 'Updated date', orderBy: 'updated_at', sort: 'desc' },
  { value: 'updated_asc', text: 'Oldest updated', orderBy: 'updated_at', sort: 'asc' },
  { value: 'due_date', text: 'Due date', orderBy: 'due_date', sort: 'asc' },
  { value: 'due_date_desc', text: 'Due date, latest first', orderBy: 'due_date', sort: 'desc' },
  { value: 'milestone_due', text: 'Milestone due date', orderBy: 'milestone_due', sort: 'asc' },
  { value: 'priority', text: 'Label priority', orderBy: 'label_priority', sort: 'asc' },
  { value: 'popularity', text: 'Popularity', orderBy: 'popularity', sort: 'desc' },
  { value: 'title_asc', text: 'Title', orderBy: 'title', sort: 'asc' },
  { value: 'title_desc', text: 'Title, descending', orderBy: 'title', sort: 'desc' },
];

/** The dashboard's lists: the issues assigned to the viewer (GitLab's default) or those they opened. */
export type DashboardIssueScope = 'assigned_to_me' | 'created_by_me';
export const DASHBOARD_ISSUE_TABS: [DashboardIssueScope, string][] = [
  ['assigned_to_me', 'Assigned to you'],
  ['created_by_me', 'Created by you'],
];

/** Where a list of issues lives. */
export type IssueListPlace =
  | { kind: 'project'; project: ProjectRef; nav: ProjectTabsNav; canCreate: boolean }
  | { kind: 'group'; group: NamespaceRow; ancestors: NamespaceRow[]; settings?: string | null }
  | { kind: 'dashboard'; scope: DashboardIssueScope };

/** The address of a place's list. */
export function issueListHref(place: IssueListPlace): string {
  if (place.kind === 'project') return issuesHref(place.project);
  if (place.kind === 'group') return `${groupHref(place.group)}/-/issues`;
  return '/dashboard/issues';
}

/** What the place's list is called, its crumbs, its navigation, the path references are written from, and its empty text. */
function framing(place: IssueListPlace, f: IssueListFilters): { title: string; crumbs: Crumb[]; nav: SafeHtml; from: string | null; none: string } {
  if (place.kind === 'project') {
    return {
      title: `Issues · ${place.project.fullPath}`,
      crumbs: projectCrumbs(place.project, { text: 'Issues' }),
      nav: <ProjectTabs n={place.nav} current="issues" />,
      from: place.project.fullPath,
      none: 'There are no open issues in this project.',
    };
  }
  if (place.kind === 'group') {
    return {
      title: `Issues · ${place.group.full_path}`,
      crumbs: groupCrumbs(place.group, place.ancestors, { text: 'Issues' }),
      nav: <GroupTabs group={place.group} current="issues" settings={place.settings} />,
      from: place.group.full_path,
      none: 'There are no open issues in the projects of this group.',
    };
  }
  const base = issueListHref(place);
  return {
    title: 'Issues',
    crumbs: [{ text: 'Your work' }, { text: 'Issues' }],
    nav: (
      <Tabs
        label="Whose issues"
        tabs={DASHBOARD_ISSUE_TABS.map(([scope, text]) => ({
          href: listUrl(base, { scope: scope === DASHBOARD_ISSUE_TABS[0]![0] ? '' : scope, state: f.state === 'opened' ? '' : f.state }),
          text,
          current: place.scope === scope,
        }))}
      />
    ),
    from: null,
    none: place.scope === 'created_by_me' ? 'You have no open issues that you created.' : 'No open issues are assigned to you.',
  };
}

/** A link to the list with these parameters (empty ones left out). */
export function listUrl(base: string, f: Partial<Record<keyof IssueListFilters | 'scope', string>>): string {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(f)) if (v) u.set(k, v);
  const s = u.toString();
  return s ? `${base}?${s}` : base;
}

function Field(p: { id: string; label: string; name: string; value: string; placeholder?: string; type?: string }): SafeHtml {
  return (
    <div class="mr-2 mb-2">
      <label class="d-block f6 text-bold" for={p.id}>
        {p.label}
      </label>
      <input class="form-control input-sm" type={p.type ?? 'text'} id={p.id} name={p.name} value={p.value} placeholder={p.placeholder} />
    </div>
  );
}

export interface IssuesListProps {
  ctx: WebCtx;
  place: IssueListPlace;
  views: IssueView[];
  counts: { opened: number; closed: number; all: number };
  filters: IssueListFilters;
  page: number;
  hasNext: boolean;
}

export function IssuesListPage(p: IssuesListProps): SafeHtml {
  const base = issueListHref(p.place);
  const f = p.filters;
  const frame = framing(p.place, f);
  // the dashboard's scope goes with every link and the form (its default left out)
  const scope = p.place.kind === 'dashboard' && p.place.scope !== DASHBOARD_ISSUE_TABS[0]![0] ? p.place.scope : '';
  // the other tabs keep the filters (the default order is left out of their links)
  const keep = { ...f, sort: f.sort === ISSUE_SORTS[0]!.value ? '' : f.sort, scope };
  const filtered = !!(f.search || f.author_username || f.assignee_username || f.labels || f.milestone || f.confidential);
  return (
    <Layout ctx={p.ctx} title={frame.title} crumbs={frame.crumbs}>
      {frame.nav}
      <div class="d-flex flex-items-center mb-3">
        <h1 class="h2 flex-auto">Issues</h1>
        {p.place.kind === 'project' && p.place.canCreate ? (
          <a class="btn btn-primary" href={`${base}/new`}>
            New issue
          </a>
        ) : null}
      </div>
      <Tabs
        label="Issue states"
        tabs={ISSUE_STATE_TABS.map(([state, text]) => ({
          href: listUrl(base, { ...keep, state }),
          text,
          count: p.counts[state],
          current: f.state === state,
        }))}
      />
      <form method="get" action={base} class="d-flex flex-wrap flex-items-end mb-3" aria-label="Filter issues" id="issue-filters">
        <input type="hidden" name="state" value={f.state} />
        {scope ? <input type="hidden" name="scope" value={scope} /> : null}
        <Field id="issue-search" label="Search" name="search" value={f.search} type="search" />
        <Field id="issue-author" label="Author" name="author_username" value={f.author_username} placeholder="username" />
        <Field id="issue-assignee" label="Assignee" name="assignee_username" value={f.assignee_username} placeholder="username" />
        <Field id="issue-labels" label="Labels" name="labels" value={f.labels} placeholder="bug, ui" />
        <Field id="issue-milestone" label="Milestone" name="milestone" value={f.milestone} placeholder="title, None or Any" />
        <div class="mr-2 mb-2">
          <label class="d-block f6 text-bold" for="issue-confidential">
            Confidentiality
          </label>
          <select class="form-select select-sm" id="issue-confidential" name="confidential">
            <option value="" selected={f.confidential === ''}>
              Any
            </option>
            <option value="yes" selected={f.confidential === 'yes'}>
              Confidential
            </option>
            <option value="no" selected={f.confidential === 'no'}>
              Not confidential
            </option>
          </select>
        </div>
        <div class="mr-2 mb-2">
          <label class="d-block f6 text-bold" for="issue-sort">
            Sort by
          </label>
          <select class="form-select select-sm" id="issue-sort" name="sort">
            {ISSUE_SORTS.map((s) => (
              <option value={s.value} selected={s.value === f.sort}>
                {s.text}
              </option>
            ))}
          </select>
        </div>
        <div class="mb-2">
          <button type="submit" class="btn btn-sm">
            Filter
          </button>
          {filtered ? (
            <a class="btn btn-sm btn-invisible ml-1" href={listUrl(base, { state: f.state, scope })}>
              Clear
            </a>
          ) : null}
        </div>
      </form>
      {p.views.length ? (
        <ul class="Box" aria-label="Issues" id="issues-list">
          {p.views.map((v) => (
            <IssueRow view={v} from={frame.from} labelHref={(title) => listUrl(base, { state: f.state, labels: title, scope })} />
          ))}
        </ul>
      ) : (
        <Blankslate title={filtered ? 'No issues match' : f.state === 'closed' ? 'No closed issues' : 'No issues'}>
          <p>{filtered ? 'No issue matches these filters.' : f.state === 'opened' ? frame.none : 'There are no issues to show here.'}</p>
        </Blankslate>
      )}
      <Pagination url={p.ctx.url} page={p.page} hasNext={p.hasNext} />
    </Layout>
  );
}
