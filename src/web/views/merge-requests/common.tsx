// Pieces the merge request pages share: the state badge, a row of a list, the project's crumbs.
import type { MergeRequestView } from '../../../domain/merge-requests/present.ts';
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { TimeAgo } from '../components.tsx';
import type { Crumb } from '../layout.tsx';

/** The project a page belongs to: its path for links and its names for crumbs. */
export interface ProjectRef {
  id: number;
  /** "group/sub/project" */
  fullPath: string;
  name: string;
  defaultBranch: string;
}

export const projectHref = (p: Pick<ProjectRef, 'fullPath'>): string => `/${p.fullPath.split('/').map(encodeURIComponent).join('/')}`;
export const mrHref = (p: Pick<ProjectRef, 'fullPath'>, iid: number): string => `${projectHref(p)}/-/merge_requests/${iid}`;

export function projectCrumbs(p: ProjectRef, ...more: Crumb[]): Crumb[] {
  return [{ text: p.fullPath.split('/').slice(0, -1).join(' / ') }, { text: p.name, href: projectHref(p) }, ...more];
}

const STATES: Record<string, [string, string]> = {
  opened: ['Open', 'Label--success'],
  merged: ['Merged', 'Label--done'],
  closed: ['Closed', 'Label--danger'],
  locked: ['Locked', 'Label--attention'],
};

/** The state as a word in a coloured label (the word carries the meaning, the colour only repeats it). */
export function StateBadge(p: { state: string; large?: boolean }): SafeHtml {
  const [text, cls] = STATES[p.state] ?? [p.state, 'Label--secondary'];
  return <span class={`Label ${cls}${p.large ? ' Label--large' : ''} mr-2`}>{text}</span>;
}

/** One merge request in a list. */
export function MergeRequestRow(p: { view: MergeRequestView; ctx: WebCtx; showProject?: boolean }): SafeHtml {
  const r = p.view.row;
  const project = { fullPath: p.view.project.fullPath };
  return (
    <li class="Box-row d-flex flex-items-start" id={`merge_request_${r.id}`}>
      <div class="flex-auto">
        <a class="Link--primary text-bold" href={mrHref(project, r.iid)}>
          {r.title}
        </a>
        {p.view.labels.map((l) => (
          <span class="Label ml-1" style={/^#[0-9a-f]{3,8}$/i.test(l.color) ? `border-color:${l.color}` : undefined}>
            {l.title}
          </span>
        ))}
        <div class="f6 color-fg-muted mt-1 mr-inline-links">
          {p.showProject ? `${p.view.project.fullPath}!${r.iid}` : `!${r.iid}`} · opened <TimeAgo at={r.created_at} /> by{' '}
          {p.view.author ? <a href={`/${encodeURIComponent(p.view.author.username)}`}>{p.view.author.name}</a> : 'a deleted user'} ·{' '}
          <span class="text-mono">{r.source_branch}</span> → <span class="text-mono">{r.target_branch}</span>
        </div>
      </div>
      <StateBadge state={r.state} />
    </li>
  );
}
