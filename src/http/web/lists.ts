// The lists the forge's overview pages share (dashboard, explore, group and user pages): one page of
// projects, groups or events from the API's own queries with the viewer's actor, and the list's query
// string (page, search, sort) read leniently.
import type { FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { NamespaceRow, ProjectRow } from '../../db/schema.ts';
import type { Actor } from '../../domain/access/actor.ts';
import type { EventSource, EventsQuery, EventView } from '../../domain/events/events-query.ts';
import type { GroupListParams } from '../../domain/groups/groups.service.ts';
import type { ProjectFilters, ProjectScope, ProjectView } from '../../domain/projects/projects-query.ts';
import type { EventProjects, SortOption } from '../../web/views/dashboard/lists.tsx';
import { projectHref } from '../../web/views/dashboard/lists.tsx';

export const PER_PAGE = 20;

/** The query string of a list page, read leniently: bad values fall back to the defaults. */
export interface ListQuery {
  page: number;
  search: string;
  sort: string;
}

export function listQuery(req: FastifyRequest): ListQuery {
  const q = (req.query ?? {}) as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  const n = Number(str(q.page));
  // a page beyond 10,000 is a crawler's: the last reasonable page instead of a slow offset
  const page = Number.isInteger(n) && n >= 1 ? Math.min(n, 10_000) : 1;
  return { page, search: str(q.search).trim().slice(0, 255), sort: str(q.sort) };
}

/** The project orders GitLab's lists offer. */
export const PROJECT_SORTS: (SortOption & { order_by: ProjectFilters['order_by']; sort: 'asc' | 'desc' })[] = [
  { value: 'latest_activity_desc', text: 'Last updated', order_by: 'last_activity_at', sort: 'desc' },
  { value: 'created_desc', text: 'Created date', order_by: 'created_at', sort: 'desc' },
  { value: 'name_asc', text: 'Name', order_by: 'name', sort: 'asc' },
  { value: 'name_desc', text: 'Name, descending', order_by: 'name', sort: 'desc' },
  { value: 'stars_desc', text: 'Most stars', order_by: 'star_count', sort: 'desc' },
];

export function projectSort(value: string): (typeof PROJECT_SORTS)[number] {
  return PROJECT_SORTS.find((s) => s.value === value) ?? PROJECT_SORTS[0];
}

/** One page of a project list (the API's query and views). */
export async function projectPage(
  c: Container,
  actor: Actor,
  scope: ProjectScope,
  filters: Partial<ProjectFilters>,
  q: ListQuery,
): Promise<{ views: ProjectView[]; hasNext: boolean; sort: string }> {
  const sort = projectSort(q.sort);
  const qb = await c.projectsQuery.list(actor, scope, {
    order_by: sort.order_by,
    sort: sort.sort,
    ...(q.search ? { search: q.search } : {}),
    ...filters,
  });
  const rows = await qb
    .limit(PER_PAGE + 1)
    .offset((q.page - 1) * PER_PAGE)
    .execute();
  const views = await c.projectsQuery.views(actor, rows.slice(0, PER_PAGE));
  return { views, hasNext: rows.length > PER_PAGE, sort: sort.value };
}

/** One page of a group list (GroupsService.listQuery, the API's GroupsFinder). */
export async function groupPage(
  c: Container,
  actor: Actor,
  params: Partial<GroupListParams>,
  q: ListQuery,
): Promise<{ groups: NamespaceRow[]; fullNames: Map<number, string>; hasNext: boolean }> {
  const qb = await c.groups.listQuery(actor, { order_by: 'name', sort: 'asc', ...(q.search ? { search: q.search } : {}), ...params });
  const rows = await qb
    .limit(PER_PAGE + 1)
    .offset((q.page - 1) * PER_PAGE)
    .execute();
  const groups = rows.slice(0, PER_PAGE);
  return { groups, fullNames: await c.groups.fullNames(groups), hasNext: rows.length > PER_PAGE };
}

/**
 * One page of events (EventsFinder and Event#visible_to_user?, as GET /events), with links to their
 * projects. As in GitLab, a page is cut before the visibility check and may come out shorter.
 */
export async function eventPage(
  c: Container,
  events: EventsQuery,
  actor: Actor,
  source: EventSource,
  page: number,
  perPage = PER_PAGE,
): Promise<{ views: EventView[]; projects: EventProjects; hasNext: boolean }> {
  const rows = await (await events.list(actor, source, { sort: 'desc' }))
    .limit(perPage + 1)
    .offset((page - 1) * perPage)
    .execute();
  const { views } = await events.present(actor, rows.slice(0, perPage));
  const ids = [...new Set(views.flatMap((v) => (v.event.project_id === null ? [] : [v.event.project_id])))];
  const projects: EventProjects = new Map();
  if (ids.length) {
    const list = (await c.projectsQuery.list(actor, { kind: 'all' }, { order_by: 'id', sort: 'asc' })).where('projects.id', 'in', ids);
    const rowsOf: ProjectRow[] = await list.execute();
    for (const v of await c.projectsQuery.views(actor, rowsOf, { withSources: false }))
      projects.set(v.project.id, { href: projectHref(v), name: `${v.namespaceFullName} / ${v.project.name}` });
  }
  return { views, projects, hasNext: rows.length > perPage };
}
