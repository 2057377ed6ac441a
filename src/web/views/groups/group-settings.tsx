// A group's settings pages (GitLab's group Settings menu): CI/CD (variables and runners, Maintainers), Access tokens
// (Owners) and Deploy tokens (Maintainers), each a tab shown to those who may open it.
import type { NamespaceRow } from '../../../db/schema.ts';
import type { WebCtx } from '../../context.ts';
import type { Child, SafeHtml } from '../../jsx/jsx-runtime.ts';
import { Tabs } from '../components.tsx';
import { groupHref } from '../dashboard/lists.tsx';
import { Layout } from '../layout.tsx';
import { GroupTabs, groupCrumbs } from './group-tabs.tsx';

export type GroupSettingsTab = 'ci_cd' | 'access_tokens' | 'deploy_tokens';

/** Which settings pages the viewer may open (the abilities the pages' services ask for). */
export interface GroupSettingsNav {
  ciCd: boolean;
  accessTokens: boolean;
  deployTokens: boolean;
}

export function groupSettingsNav(abilities: ReadonlySet<string>): GroupSettingsNav {
  return {
    ciCd: abilities.has('admin_cicd_variables'),
    accessTokens: abilities.has('manage_group_access_tokens'),
    deployTokens: abilities.has('manage_deploy_tokens'),
  };
}

const PAGES: { tab: GroupSettingsTab; text: string; may: keyof GroupSettingsNav }[] = [
  { tab: 'ci_cd', text: 'CI/CD', may: 'ciCd' },
  { tab: 'access_tokens', text: 'Access tokens', may: 'accessTokens' },
  { tab: 'deploy_tokens', text: 'Deploy tokens', may: 'deployTokens' },
];

/** The first settings page the viewer may open (the group's Settings tab), or null. */
export function groupSettingsHref(group: Pick<NamespaceRow, 'full_path'>, nav: GroupSettingsNav): string | null {
  const first = PAGES.find((p) => nav[p.may]);
  return first ? `${groupHref(group)}/-/settings/${first.tab}` : null;
}

export function GroupSettingsFrame(p: {
  ctx: WebCtx;
  group: NamespaceRow;
  ancestors: NamespaceRow[];
  nav: GroupSettingsNav;
  title: string;
  tab: GroupSettingsTab;
  children?: Child;
}): SafeHtml {
  const base = `${groupHref(p.group)}/-/settings`;
  return (
    <Layout ctx={p.ctx} title={`${p.title} · ${p.group.name}`} crumbs={groupCrumbs(p.group, p.ancestors, { text: 'Settings' }, { text: p.title })}>
      <GroupTabs group={p.group} current="settings" settings={groupSettingsHref(p.group, p.nav)} />
      <Tabs
        label="Group settings"
        tabs={PAGES.filter((x) => p.nav[x.may] || x.tab === p.tab).map((x) => ({ href: `${base}/${x.tab}`, text: x.text, current: x.tab === p.tab }))}
      />
      {p.children}
    </Layout>
  );
}
