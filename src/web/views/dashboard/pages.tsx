// The dashboard (your projects, starred projects, your groups, activity) and explore pages
// (public and internal projects and groups). GitLab's /dashboard/* and /explore/*.
import type { NamespaceRow } from '../../../db/schema.ts';
import type { EventView } from '../../../domain/events/events-query.ts';
import type { ProjectView } from '../../../domain/projects/projects-query.ts';
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { Pagination, Tabs } from '../components.tsx';
import { Layout } from '../layout.tsx';
import { type EventProjects, EventList, GroupList, ProjectList, SearchBar, type SortOption } from './lists.tsx';

export interface ListPage {
  page: number;
  hasNext: boolean;
  search: string;
  sort?: string;
}

function Header(p: { title: string; action?: { href: string; text: string } }): SafeHtml {
  return (
    <div class="Subhead">
      <h1 class="Subhead-heading">{p.title}</h1>
      {p.action ? (
        <div class="Subhead-actions">
          <a class="btn btn-primary btn-sm" href={p.action.href}>
            {p.action.text}
          </a>
        </div>
      ) : null}
    </div>
  );
}

const dashboardTabs = (here: 'projects' | 'starred') => [
  { href: '/dashboard/projects', text: 'Your projects', current: here === 'projects' },
  { href: '/dashboard/projects/starred', text: 'Starred projects', current: here === 'starred' },
];

export function DashboardProjectsPage(p: { ctx: WebCtx; tab: 'projects' | 'starred'; views: ProjectView[]; list: ListPage; sorts: SortOption[] }): SafeHtml {
  const action = p.tab === 'starred' ? '/dashboard/projects/starred' : '/dashboard/projects';
  return (
    <Layout ctx={p.ctx} title="Projects" crumbs={[{ text: 'Your work' }, { text: 'Projects' }]}>
      <Header title="Projects" action={{ href: '/projects/new', text: 'New project' }} />
      <Tabs label="Project lists" tabs={dashboardTabs(p.tab)} />
      <SearchBar action={action} search={p.list.search} sort={p.list.sort} sorts={p.sorts} label="Search your projects" />
      <ProjectList
        views={p.views}
        empty={p.list.search ? 'No projects match your search' : p.tab === 'starred' ? 'You have not starred any projects yet' : 'You have no projects yet'}
        emptyText={p.tab === 'projects' && !p.list.search ? 'Create a project, or explore the public ones.' : undefined}
      />
      <Pagination url={p.ctx.url} page={p.list.page} hasNext={p.list.hasNext} />
    </Layout>
  );
}

export function DashboardGroupsPage(p: { ctx: WebCtx; groups: NamespaceRow[]; fullNames: Map<number, string>; list: ListPage }): SafeHtml {
  return (
    <Layout ctx={p.ctx} title="Groups" crumbs={[{ text: 'Your work' }, { text: 'Groups' }]}>
      <Header title="Groups" action={{ href: '/groups/new', text: 'New group' }} />
      <SearchBar action="/dashboard/groups" search={p.list.search} label="Search your groups" />
      <GroupList groups={p.groups} fullNames={p.fullNames} empty={p.list.search ? 'No groups match your search' : 'You are not a member of any group yet'} />
      <Pagination url={p.ctx.url} page={p.list.page} hasNext={p.list.hasNext} />
    </Layout>
  );
}

export function ActivityPage(p: { ctx: WebCtx; views: EventView[]; projects: EventProjects; list: ListPage; own: boolean }): SafeHtml {
  return (
    <Layout ctx={p.ctx} title="Activity" crumbs={[{ text: 'Your work' }, { text: 'Activity' }]}>
      <Header title="Activity" />
      <Tabs
        label="Activity filters"
        tabs={[
          { href: '/dashboard/activity', text: 'Your projects', current: !p.own },
          { href: '/dashboard/activity?filter=own', text: 'Your activity', current: p.own },
        ]}
      />
      <EventList views={p.views} projects={p.projects} empty="No activity yet" />
      <Pagination url={p.ctx.url} page={p.list.page} hasNext={p.list.hasNext} />
    </Layout>
  );
}

const exploreTabs = (here: 'projects' | 'groups') => [
  { href: '/explore/projects', text: 'Projects', current: here === 'projects' },
  { href: '/explore/groups', text: 'Groups', current: here === 'groups' },
];

export function ExploreProjectsPage(p: { ctx: WebCtx; views: ProjectView[]; list: ListPage; sorts: SortOption[] }): SafeHtml {
  return (
    <Layout ctx={p.ctx} title="Explore projects" crumbs={[{ text: 'Explore' }, { text: 'Projects' }]}>
      <Header title="Explore projects" action={p.ctx.user ? { href: '/projects/new', text: 'New project' } : undefined} />
      <Tabs label="Explore" tabs={exploreTabs('projects')} />
      <SearchBar action="/explore/projects" search={p.list.search} sort={p.list.sort} sorts={p.sorts} label="Search projects" />
      <ProjectList views={p.views} empty={p.list.search ? 'No projects match your search' : 'There are no public projects yet'} />
      <Pagination url={p.ctx.url} page={p.list.page} hasNext={p.list.hasNext} />
    </Layout>
  );
}

export function ExploreGroupsPage(p: { ctx: WebCtx; groups: NamespaceRow[]; fullNames: Map<number, string>; list: ListPage }): SafeHtml {
  return (
    <Layout ctx={p.ctx} title="Explore groups" crumbs={[{ text: 'Explore' }, { text: 'Groups' }]}>
      <Header title="Explore groups" action={p.ctx.user ? { href: '/groups/new', text: 'New group' } : undefined} />
      <Tabs label="Explore" tabs={exploreTabs('groups')} />
      <SearchBar action="/explore/groups" search={p.list.search} label="Search groups" />
      <GroupList groups={p.groups} fullNames={p.fullNames} empty={p.list.search ? 'No groups match your search' : 'There are no public groups yet'} />
      <Pagination url={p.ctx.url} page={p.list.page} hasNext={p.list.hasNext} />
    </Layout>
  );
}
