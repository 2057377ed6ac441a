// The settings pages a project and a group both have (CI/CD, access tokens, deploy tokens) are one view each with a
// *place*: it decides the frame (the project's settings tabs or the group's), the address of the pages and where the
// forms post (`/-/p/:project_id/…` or `/-/g/:group_id/…`).
import type { NamespaceRow } from '../../../db/schema.ts';
import type { WebCtx } from '../../context.ts';
import type { Child, SafeHtml } from '../../jsx/jsx-runtime.ts';
import { groupHref } from '../dashboard/lists.tsx';
import { type GroupSettingsNav, GroupSettingsFrame } from '../groups/group-settings.tsx';
import { Frame, type ProjectRef, projectUrl } from './project.tsx';

export type SettingsPlace = { kind: 'project'; ref: ProjectRef } | { kind: 'group'; group: NamespaceRow; ancestors: NamespaceRow[]; nav: GroupSettingsNav };

export type PlaceTab = 'ci_cd' | 'access_tokens' | 'deploy_tokens';

/** "project" or "group", as the pages' texts name it. */
export const placeNoun = (p: SettingsPlace): 'project' | 'group' => p.kind;

/** The place's own address (`/group/project`, `/groups/group`): its pages are below it at `/-/…`. */
export const placeUrl = (p: SettingsPlace): string => (p.kind === 'project' ? projectUrl(p.ref) : groupHref(p.group));

/** Where the place's forms post. */
export const placeAction = (p: SettingsPlace, rest: string): string =>
  p.kind === 'project' ? `/-/p/${p.ref.project.id}/${rest}` : `/-/g/${p.group.id}/${rest}`;

/** The place as a form field (`project:12`, `group:5`): a form shared by places says where to go back to. */
export const placeKey = (p: SettingsPlace): string => (p.kind === 'project' ? `project:${p.ref.project.id}` : `group:${p.group.id}`);

export function PlaceFrame(p: { ctx: WebCtx; place: SettingsPlace; title: string; tab: PlaceTab; children?: Child }): SafeHtml {
  const pl = p.place;
  if (pl.kind === 'project') {
    return (
      <Frame ctx={p.ctx} ref={pl.ref} title={p.title} tab={p.tab}>
        {p.children}
      </Frame>
    );
  }
  return (
    <GroupSettingsFrame ctx={p.ctx} group={pl.group} ancestors={pl.ancestors} nav={pl.nav} title={p.title} tab={p.tab}>
      {p.children}
    </GroupSettingsFrame>
  );
}
