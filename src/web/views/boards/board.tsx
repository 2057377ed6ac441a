// An issue board (GitLab's /-/boards/:id): the board's lists side by side — the open issues in none of its
// lists, one list per label, milestone or assignee, the closed ones — each card an issue with its labels and
// assignees. Cards move between lists by dragging (the board's script posts the move) or, without JavaScript
// or a pointer, with each card's "Move to" form; the move changes the issue as GitLab's board does.
import type { BoardListView, BoardView } from '../../../domain/boards/boards.service.ts';
import type { IssueView } from '../../../domain/issues/present.ts';
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { Blankslate } from '../components.tsx';
import { ConfidentialMark, IssueLabel, issueHref } from '../issues/common.tsx';
import { Layout } from '../layout.tsx';
import { type ProjectRef, projectCrumbs } from '../merge-requests/common.tsx';
import { type ProjectTabsNav, ProjectTabs } from '../project-tabs.tsx';

export interface BoardColumn {
  list: BoardListView;
  issues: IssueView[];
  /** more issues than the column shows */
  more: boolean;
}

export interface BoardPageProps {
  ctx: WebCtx;
  project: ProjectRef;
  nav: ProjectTabsNav;
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

const boardHref = (p: ProjectRef, id: number) => `/${p.fullPath}/-/boards/${id}`;

function Card(p: { project: ProjectRef; view: IssueView; column: BoardColumn; columns: BoardColumn[]; formBase: string; csrf: string | null }): SafeHtml {
  const v = p.view;
  const others = p.columns.filter((c) => c.list.row.id !== p.column.list.row.id);
  return (
    <li class="Box-row board-card" draggable="true" data-board-card data-iid={String(v.row.iid)} data-list={String(p.column.list.row.id)}>
      <a class="Link--primary text-bold" href={issueHref(p.project, v.row.iid)}>
        {v.row.title}
      </a>
      <div class="f6 color-fg-muted mt-1">
        #{v.row.iid}
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
          <input type="hidden" name="iid" value={String(v.row.iid)} />
          <input type="hidden" name="from_list_id" value={String(p.column.list.row.id)} />
          <label class="sr-only" for={`move-${v.row.iid}`}>
            Move #{v.row.iid} to
          </label>
          <select class="form-select select-sm mr-1" id={`move-${v.row.iid}`} name="to_list_id">
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
  const formBase = `/-/p/${p.project.id}/boards/${p.board.board.id}`;
  return (
    <Layout ctx={p.ctx} title={`${p.board.board.name} · Boards · ${p.project.fullPath}`} crumbs={projectCrumbs(p.project, { text: 'Boards' })}>
      <ProjectTabs n={p.nav} current="boards" />
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
                <a class="btn btn-sm btn-invisible mr-1" href={boardHref(p.project, b.id)}>
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
                  <Card project={p.project} view={v} column={col} columns={p.columns} formBase={formBase} csrf={p.ctx.csrf} />
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
