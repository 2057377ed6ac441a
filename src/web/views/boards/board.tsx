// An issue board of a project (GitLab's /<project>/-/boards/:id) or of a group (/groups/<group>/-/boards/:id, the
// issues of the group's projects): the board's lists side by side — the open issues in none of its lists, one list
// per label, milestone or assignee, the closed ones — each card an issue with its reference, labels and assignees.
// Cards move between lists by dragging (the board's script posts the move) or, without JavaScript or a pointer,
// with each card's "Move to" form; the move changes the issue as GitLab's board does. One view for both: the
// place says where links and forms go, which navigation the page has and from where references are written.
import type { NamespaceRow } from '../../../db/schema.ts';
import type { BoardListView, BoardView } from '../../../domain/boards/boards.service.ts';
import type { IssueView } from '../../../domain/issues/present.ts';
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { Blankslate } from '../components.tsx';
import { groupHref } from '../dashboard/lists.tsx';
import { GroupTabs, groupCrumbs } from '../groups/group-tabs.tsx';
import { ConfidentialMark, IssueLabel, issueHref, issueReference } from '../issues/common.tsx';
import { Layout } from '../layout.tsx';
import { type ProjectRef, projectCrumbs, projectHref } from '../merge-requests/common.tsx';
import { type ProjectTabsNav, ProjectTabs } from '../project-tabs.tsx';

export interface BoardColumn {
  list: BoardListView;
  issues: IssueView[];
  /** more issues than the column shows */
  more: boolean;
}

/** Where a board lives: a project (with its tab bar) or a group. */
export type BoardPlace =
  | { kind: 'project'; project: ProjectRef; nav: ProjectTabsNav }
  | { kind: 'group'; group: NamespaceRow; ancestors: NamespaceRow[]; settings?: string | null };

/** Whose board it is (a place is one). */
export type BoardOwner = { kind: 'project'; project: Pick<ProjectRef, 'id' | 'fullPath'> } | { kind: 'group'; group: Pick<NamespaceRow, 'id' | 'full_path'> };

/** A board's address. */
export function boardHref(owner: BoardOwner, id: number): string {
  return `${owner.kind === 'project' ? projectHref(owner.project) : groupHref(owner.group)}/-/boards/${id}`;
}

/** Where a board's forms post (`/-/p/:project_id/boards/:id`, `/-/g/:group_id/boards/:id`). */
export function boardFormBase(owner: BoardOwner, id: number): string {
  return owner.kind === 'project' ? `/-/p/${owner.project.id}/boards/${id}` : `/-/g/${owner.group.id}/boards/${id}`;
}

/** The full path references on the board are written from. */
const fromOf = (place: BoardPlace): string => (place.kind === 'project' ? place.project.fullPath : place.group.full_path);

export interface BoardPageProps {
  ctx: WebCtx;
  place: BoardPlace;
  boards: { id: number; name: string }[];
  board: BoardView;
  columns: BoardColumn[];
  /** may the viewer add and remove lists */
  canAdmin: boolean;
  /** labels that have no list yet, offered by "Add list" */
  labelChoices: { id: number; title: string }[];
}

export function listTitle(l: BoardListView): string {
  switch (l.row.list_type) {
    case 'backlog':
      return 'Open';
    case 'closed':
      return 'Closed';
    case 'label':
      return l.label?.title ?? 'Label';
    case 'milestone':
      return l.milestone?.title ?? 'Milestone';
    default:
      return l.user ? `@${l.user.username}` : 'Assignee';
  }
}

function Card(p: { from: string; view: IssueView; column: BoardColumn; columns: BoardColumn[]; formBase: string; csrf: string | null }): SafeHtml {
  const v = p.view;
  const others = p.columns.filter((c) => c.list.row.id !== p.column.list.row.id);
  const reference = issueReference(v.project.fullPath, v.row.iid, p.from);
  return (
    <li
      class="Box-row board-card"
      draggable="true"
      data-board-card
      data-project={String(v.row.project_id)}
      data-iid={String(v.row.iid)}
      data-list={String(p.column.list.row.id)}
    >
      <a class="Link--primary text-bold" href={issueHref(v.project, v.row.iid)}>
        {v.row.title}
      </a>
      <div class="f6 color-fg-muted mt-1">
        {reference}
        {v.row.confidential === 1 ? <span class="ml-1">{ConfidentialMark()}</span> : null}
      </div>
      {v.labels.length ? (
        <div class="mt-1">
          {v.labels.map((l) => (
            <IssueLabel label={l} />
          ))}
        </div>
      ) : null}
      {v.assignees.length ? <div class="f6 color-fg-muted mt-1">Assigned to {v.assignees.map((a) => `@${a.username}`).join(', ')}</div> : null}
      {p.csrf && others.length ? (
        <form method="post" action={`${p.formBase}/move`} class="d-flex flex-items-center mt-2 board-move">
          <input type="hidden" name="authenticity_token" value={p.csrf} />
          <input type="hidden" name="project_id" value={String(v.row.project_id)} />
          <input type="hidden" name="iid" value={String(v.row.iid)} />
          <input type="hidden" name="from_list_id" value={String(p.column.list.row.id)} />
          <label class="sr-only" for={`move-${v.row.id}`}>
            Move {reference} to
          </label>
          <select class="form-select select-sm mr-1" id={`move-${v.row.id}`} name="to_list_id">
            {others.map((c) => (
              <option value={String(c.list.row.id)}>{listTitle(c.list)}</option>
            ))}
          </select>
          <button class="btn btn-sm" type="submit">
            Move
          </button>
        </form>
      ) : null}
    </li>
  );
}

export function BoardPage(p: BoardPageProps): SafeHtml {
  const place = p.place;
  const formBase = boardFormBase(place, p.board.board.id);
  const from = fromOf(place);
  return (
    <Layout
      ctx={p.ctx}
      title={`${p.board.board.name} · Boards · ${from}`}
      crumbs={place.kind === 'project' ? projectCrumbs(place.project, { text: 'Boards' }) : groupCrumbs(place.group, place.ancestors, { text: 'Boards' })}
    >
      {place.kind === 'project' ? <ProjectTabs n={place.nav} current="boards" /> : <GroupTabs group={place.group} current="boards" settings={place.settings} />}
      <div class="d-flex flex-items-center flex-wrap mb-3">
        <h1 class="h2 flex-auto">{p.board.board.name}</h1>
        {p.boards.length > 1 ? (
          <nav aria-label="Boards" class="mr-2">
            {p.boards.map((b) =>
              b.id === p.board.board.id ? (
                <span class="btn btn-sm mr-1" aria-current="page">
                  {b.name}
                </span>
              ) : (
                <a class="btn btn-sm btn-invisible mr-1" href={boardHref(place, b.id)}>
                  {b.name}
                </a>
              ),
            )}
          </nav>
        ) : null}
        {p.canAdmin && p.labelChoices.length ? (
          <form method="post" action={`${formBase}/lists`} class="d-flex flex-items-center" aria-label="Add a list">
            <input type="hidden" name="authenticity_token" value={p.ctx.csrf ?? ''} />
            <label class="mr-1 f6 text-bold" for="board-add-label">
              Add a list of the label
            </label>
            <select class="form-select select-sm mr-1" id="board-add-label" name="label_id">
              {p.labelChoices.map((l) => (
                <option value={String(l.id)}>{l.title}</option>
              ))}
            </select>
            <button class="btn btn-sm" type="submit">
              Add list
            </button>
          </form>
        ) : null}
      </div>
      {p.columns.length ? (
        <div class="board d-flex" data-board data-move={`${formBase}/move`}>
          {p.columns.map((col) => (
            <section class="board-list Box mr-3" aria-label={listTitle(col.list)} data-board-list={String(col.list.row.id)}>
              <header class="Box-header d-flex flex-items-center">
                <h2 class="Box-title flex-auto">{col.list.label ? <IssueLabel label={col.list.label} /> : listTitle(col.list)}</h2>
                <span class="Counter">
                  {col.issues.length}
                  {col.more ? '+' : ''}
                </span>
                {p.canAdmin && !['backlog', 'closed'].includes(col.list.row.list_type) ? (
                  <form method="post" action={`${formBase}/lists/${col.list.row.id}/remove`} class="ml-2">
                    <input type="hidden" name="authenticity_token" value={p.ctx.csrf ?? ''} />
                    <button class="btn-octicon" type="submit" aria-label={`Remove the list ${listTitle(col.list)}`}>
                      ×
                    </button>
                  </form>
                ) : null}
              </header>
              <ul class="board-cards" data-board-cards>
                {col.issues.map((v) => (
                  <Card from={from} view={v} column={col} columns={p.columns} formBase={formBase} csrf={p.ctx.csrf} />
                ))}
              </ul>
            </section>
          ))}
        </div>
      ) : (
        <Blankslate title="No lists">
          <p>Every list of this board is hidden.</p>
        </Blankslate>
      )}
    </Layout>
  );
}
