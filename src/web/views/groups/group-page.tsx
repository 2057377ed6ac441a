// A group's page (GitLab's /groups/<full path>): the group's navigation, its name, description, subgroups and projects.
import type { NamespaceRow } from '../../../db/schema.ts';
import type { ProjectView } from '../../../domain/projects/projects-query.ts';
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { GroupList, groupHref, ProjectList, VisibilityLabel } from '../dashboard/lists.tsx';
import { Avatar, Markdown, Pagination, Tabs } from '../components.tsx';
import { Layout } from '../layout.tsx';
import { GroupTabs, groupCrumbs } from './group-tabs.tsx';

export interface GroupPageProps {
  ctx: WebCtx;
  group: NamespaceRow;
  /** the group and its ancestors, root first, for the breadcrumbs */
  ancestors: NamespaceRow[];
  tab: 'projects' | 'subgroups';
  subgroups: NamespaceRow[];
  subgroupNames: Map<number, string>;
  projects: ProjectView[];
  /** null: the viewer may not list the members */
  membersCount: number | null;
  canCreateProject: boolean;
  canCreateSubgroup: boolean;
  /** the first settings page the viewer may open (the Settings tab), or null */
  settings: string | null;
  page: number;
  hasNext: boolean;
}

export function GroupPage(p: GroupPageProps): SafeHtml {
  const g = p.group;
  const href = groupHref(g);
  return (
    <Layout ctx={p.ctx} title={g.name} crumbs={groupCrumbs(g, p.ancestors)}>
      <GroupTabs group={g} current="overview" settings={p.settings} />
      <div class="d-flex flex-items-center flex-wrap mb-3">
        <Avatar url={g.avatar_url} name={g.name} size={48} />
        <div class="flex-auto ml-2">
          <h1 class="h2 d-flex flex-items-center">
            {g.name}
            <VisibilityLabel visibility={g.visibility} />
          </h1>
          <p class="color-fg-muted mb-0">
            Group ID: {g.id}
            {p.membersCount !== null ? (
              <span>
                {' · '}
                {p.membersCount} {p.membersCount === 1 ? 'member' : 'members'}
              </span>
            ) : null}
          </p>
        </div>
        <div>
          {p.canCreateSubgroup ? (
            <a class="btn btn-sm mr-2" href={`/groups/new?parent_id=${g.id}`}>
              New subgroup
            </a>
          ) : null}
          {p.canCreateProject ? (
            <a class="btn btn-sm btn-primary" href={`/projects/new?namespace_id=${g.id}`}>
              New project
            </a>
          ) : null}
        </div>
      </div>
      {g.description ? (
        <section class="mb-3" aria-label="Description">
          <Markdown text={g.description} ctx={p.ctx} />
        </section>
      ) : null}
      <Tabs
        label="Group contents"
        tabs={[
          { href, text: 'Projects', current: p.tab === 'projects' },
          { href: `${href}?tab=subgroups`, text: 'Subgroups', current: p.tab === 'subgroups' },
        ]}
      />
      <h2 class="sr-only">{p.tab === 'projects' ? 'Projects' : 'Subgroups'}</h2>
      {p.tab === 'projects' ? (
        <ProjectList views={p.projects} empty="This group has no projects yet" />
      ) : (
        <GroupList groups={p.subgroups} fullNames={p.subgroupNames} empty="This group has no subgroups yet" />
      )}
      <Pagination url={p.ctx.url} page={p.page} hasNext={p.hasNext} />
    </Layout>
  );
}
