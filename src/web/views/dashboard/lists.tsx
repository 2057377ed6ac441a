// The lists the forge's overview pages share: projects, groups and activity events, and the search
// and sort bar above a list. Rows come from the domain's list queries and views (one query per kind
// of row); these components only render them.
import type { NamespaceRow } from '../../../db/schema.ts';
import { actionName } from '../../../domain/events/action-name.ts';
import type { EventView } from '../../../domain/events/events-query.ts';
import type { ProjectView } from '../../../domain/projects/projects-query.ts';
import { encodePath } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { Avatar, Blankslate, TimeAgo } from '../components.tsx';

/** GitLab's visibility names, with a text label (never colour alone). */
const VISIBILITY_TEXT: Record<string, string> = { private: 'Private', internal: 'Internal', public: 'Public' };

export function VisibilityLabel(p: { visibility: string }): SafeHtml {
  return <span class="Label Label--secondary ml-1">{VISIBILITY_TEXT[p.visibility] ?? p.visibility}</span>;
}

export const projectHref = (v: Pick<ProjectView, 'namespace' | 'project'>): string => `/${encodePath(`${v.namespace.full_path}/${v.project.path}`)}`;
export const groupHref = (g: Pick<NamespaceRow, 'full_path'>): string => `/groups/${encodePath(g.full_path)}`;

export interface SortOption {
  value: string;
  text: string;
}

/** A GET form: the search box and the sort select (works without JavaScript: a Search button). */
export function SearchBar(p: { action: string; search: string; sort?: string; sorts?: SortOption[]; label: string }): SafeHtml {
  return (
    <form method="get" action={p.action} class="d-flex flex-wrap flex-items-end mb-3" aria-label={p.label}>
      <div class="mr-2 mb-2">
        <label for="list-search" class="d-block f6 mb-1">
          {p.label}
        </label>
        <input id="list-search" class="form-control" type="search" name="search" value={p.search} placeholder="Filter by name" />
      </div>
      {p.sorts?.length ? (
        <div class="mr-2 mb-2">
          <label for="list-sort" class="d-block f6 mb-1">
            Sort by
          </label>
          <select id="list-sort" class="form-select" name="sort">
            {p.sorts.map((s) => (
              <option value={s.value} selected={s.value === p.sort}>
                {s.text}
              </option>
            ))}
          </select>
        </div>
      ) : null}
      <div class="mb-2">
        <button type="submit" class="btn">
          Search
        </button>
      </div>
    </form>
  );
}

/** A list of projects: name with namespace, visibility, description, stars and last activity. */
export function ProjectList(p: { views: ProjectView[]; empty: string; emptyText?: string; now?: number }): SafeHtml {
  if (!p.views.length) return <Blankslate title={p.empty}>{p.emptyText ? <p>{p.emptyText}</p> : null}</Blankslate>;
  return (
    <ul class="Box list-style-none project-list" aria-label="Projects">
      {p.views.map((v) => (
        <li class="Box-row d-flex flex-items-start">
          <Avatar url={v.project.avatar_url} name={v.project.name} size={32} />
          <div class="flex-auto min-width-0 ml-2">
            <div class="d-flex flex-items-center flex-wrap">
              <a class="text-bold f4" href={projectHref(v)}>
                <span class="color-fg-muted text-normal">{v.namespaceFullName} / </span>
                {v.project.name}
              </a>
              <VisibilityLabel visibility={v.project.visibility} />
              {v.project.archived ? <span class="Label Label--attention ml-1">Archived</span> : null}
              {v.isFork ? <span class="Label ml-1">Fork</span> : null}
            </div>
            {v.project.description ? <p class="color-fg-muted mb-0 mt-1 text-small">{v.project.description}</p> : null}
          </div>
          <div class="text-right f6 color-fg-muted ml-3 no-wrap">
            <div>
              <span class="sr-only">Stars: </span>
              <span aria-hidden="true">★ </span>
              {v.starCount ?? 0}
            </div>
            <div>
              Updated <TimeAgo at={v.project.last_activity_at ?? v.project.updated_at} now={p.now} />
            </div>
          </div>
        </li>
      ))}
    </ul>
  );
}

/** A list of groups with their full names and visibility. */
export function GroupList(p: { groups: NamespaceRow[]; fullNames: Map<number, string>; empty: string; emptyText?: string }): SafeHtml {
  if (!p.groups.length) return <Blankslate title={p.empty}>{p.emptyText ? <p>{p.emptyText}</p> : null}</Blankslate>;
  return (
    <ul class="Box list-style-none group-list" aria-label="Groups">
      {p.groups.map((g) => (
        <li class="Box-row d-flex flex-items-start">
          <Avatar url={g.avatar_url} name={g.name} size={32} />
          <div class="flex-auto min-width-0 ml-2">
            <div class="d-flex flex-items-center flex-wrap">
              <a class="text-bold f4" href={groupHref(g)}>
                {p.fullNames.get(g.id) ?? g.name}
              </a>
              <VisibilityLabel visibility={g.visibility} />
            </div>
            {g.description ? <p class="color-fg-muted mb-0 mt-1 text-small">{g.description}</p> : null}
          </div>
        </li>
      ))}
    </ul>
  );
}

/** Where an event's project lives, for links (events carry only the project id). */
export type EventProjects = Map<number, { href: string; name: string }>;

/** Activity: "<author> pushed to branch main at <project>" with the time. */
export function EventList(p: { views: EventView[]; projects: EventProjects; empty: string; now?: number }): SafeHtml {
  if (!p.views.length) return <Blankslate title={p.empty} />;
  return (
    <ol class="Box list-style-none event-list" aria-label="Activity">
      {p.views.map((v) => {
        const project = v.event.project_id === null ? undefined : p.projects.get(v.event.project_id);
        const author = v.author;
        const push = v.push;
        const title = v.mergeRequest?.title ?? v.noteMergeRequest?.title ?? null;
        return (
          <li class="Box-row d-flex flex-items-start">
            <Avatar url={author?.avatar_url} name={author?.name ?? '?'} size={24} />
            <div class="flex-auto ml-2">
              {author ? <a href={`/${encodeURIComponent(author.username)}`}>{author.name}</a> : <span>A deleted user</span>} <span>{actionName(v)}</span>{' '}
              {push?.ref ? (
                <span>
                  {push.ref_type === 'tag' ? 'tag' : 'branch'} <code>{push.ref}</code>
                  {' at '}
                </span>
              ) : v.mergeRequest ? (
                <span>
                  merge request <span class="text-bold">!{v.mergeRequest.iid}</span> <span>“{v.mergeRequest.title}”</span>
                  {' at '}
                </span>
              ) : v.note ? (
                <span>{title ? <span>“{title}” at </span> : 'a comment at '}</span>
              ) : null}
              {project ? <a href={project.href}>{project.name}</a> : null}
              {push?.commit_title ? <p class="color-fg-muted f6 mb-0 mt-1">{push.commit_title}</p> : null}
              {v.note ? <p class="color-fg-muted f6 mb-0 mt-1">{v.note.body.slice(0, 200)}</p> : null}
            </div>
            <div class="f6 color-fg-muted ml-3 no-wrap">
              <TimeAgo at={v.event.created_at} now={p.now} />
            </div>
          </li>
        );
      })}
    </ol>
  );
}
