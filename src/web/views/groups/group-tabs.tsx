// A group's navigation (GitLab's group sidebar, as a tab bar): the group's overview, the issues of its projects,
// its issue boards and, for those who may open one of its settings pages, Settings; and the breadcrumbs of a group's
// pages (its ancestors, root first, then the group).
import type { NamespaceRow } from '../../../db/schema.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { Tabs } from '../components.tsx';
import { groupHref } from '../dashboard/lists.tsx';
import type { Crumb } from '../layout.tsx';

export type GroupSection = 'overview' | 'issues' | 'boards' | 'settings';

/** `settings`: the address of the first settings page the viewer may open (no Settings tab when null or absent). */
export function GroupTabs(p: { group: Pick<NamespaceRow, 'full_path'>; current: GroupSection; settings?: string | null }): SafeHtml {
  const base = groupHref(p.group);
  const tabs = [
    { href: base, text: 'Overview', current: p.current === 'overview' },
    { href: `${base}/-/issues`, text: 'Issues', current: p.current === 'issues' },
    { href: `${base}/-/boards`, text: 'Boards', current: p.current === 'boards' },
  ];
  if (p.settings) tabs.push({ href: p.settings, text: 'Settings', current: p.current === 'settings' });
  return <Tabs label="Group" tabs={tabs} />;
}

/** The crumbs of a group's page: its ancestors and itself, each linked, then what the page adds. */
export function groupCrumbs(group: NamespaceRow, ancestors: NamespaceRow[], ...more: Crumb[]): Crumb[] {
  return [...ancestors.map((a) => ({ text: a.name, href: groupHref(a) })), { text: group.name, href: groupHref(group) }, ...more];
}
