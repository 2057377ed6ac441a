// A group's navigation (GitLab's group sidebar, as a tab bar): the group's overview, the issues of its projects
// and its issue boards; and the breadcrumbs of a group's pages (its ancestors, root first, then the group).
import type { NamespaceRow } from '../../../db/schema.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { Tabs } from '../components.tsx';
import { groupHref } from '../dashboard/lists.tsx';
import type { Crumb } from '../layout.tsx';

export type GroupSection = 'overview' | 'issues' | 'boards';

export function GroupTabs(p: { group: Pick<NamespaceRow, 'full_path'>; current: GroupSection }): SafeHtml {
  const base = groupHref(p.group);
  return (
    <Tabs
      label="Group"
      tabs={[
        { href: base, text: 'Overview', current: p.current === 'overview' },
        { href: `${base}/-/issues`, text: 'Issues', current: p.current === 'issues' },
        { href: `${base}/-/boards`, text: 'Boards', current: p.current === 'boards' },
      ]}
    />
  );
}

/** The crumbs of a group's page: its ancestors and itself, each linked, then what the page adds. */
export function groupCrumbs(group: NamespaceRow, ancestors: NamespaceRow[], ...more: Crumb[]): Crumb[] {
  return [...ancestors.map((a) => ({ text: a.name, href: groupHref(a) })), { text: group.name, href: groupHref(group) }, ...more];
}
