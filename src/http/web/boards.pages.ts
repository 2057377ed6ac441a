// Issue board pages (GitLab's /-/boards and /-/boards/:id): the project's boards, each with its lists side by
// side, and the forms that move a card (from the drag of the board's script or the card's "Move to" form), add
// a label list and remove a list. Every read and write goes through the boards service with the viewer's actor,
// the same code as the API's routes: a card moved changes the issue through the issues service.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { BoardParent } from '../../domain/boards/boards.service.ts';
import type { ResolvedProject } from '../../domain/access/resolve.ts';
import type { IssueRow } from '../../db/schema.ts';
import { canReadCode } from '../../domain/repository/read-access.ts';
import { DomainError, Errors } from '../../lib/errors.ts';
import { type BoardColumn, BoardPage, listTitle } from '../../web/views/boards/board.tsx';
import { idOf, projectRef, str } from './page-params.ts';
import { HIDDEN, PAGE, type Web, type WebCtx } from './web.ts';

/** the cards a list shows (GitLab loads more as one scrolls; the count says when there are more) */
const CARDS = 50;
const OPTS = { config: PAGE, schema: HIDDEN };

export function boardPages(app: FastifyInstance, c: Container, web: Web): void {
  const boardHref = (r: Pick<ResolvedProject, 'project' | 'namespace'>, id: number) => `/${r.namespace.full_path}/${r.project.path}/-/boards/${id}`;

  web.projectPage('/-/boards', async (_req, reply, { ctx, resolved }) => {
    const parent = await c.boards.projectParent(ctx.actor, resolved.project.id);
    const boards = await c.boards.list(ctx.actor, parent);
    if (!boards.length) throw Errors.notFound('Board');
    return web.redirect(reply, boardHref(resolved, boards[0]!.board.id));
  });

  web.projectPage('/-/boards/:board_id', async (_req, reply, { ctx, resolved, params }) => {
    const id = idOf(params.board_id);
    if (id === null) throw Errors.notFound('Board');
    const parent = await c.boards.projectParent(ctx.actor, resolved.project.id);
    const [boards, board] = await Promise.all([c.boards.list(ctx.actor, parent), c.boards.get(parent, id)]);
    const shown = board.lists.filter(
      (l) => !(l.row.list_type === 'backlog' && board.board.hide_backlog_list) && !(l.row.list_type === 'closed' && board.board.hide_closed_list),
    );
    const columns: BoardColumn[] = [];
    for (const list of shown) {
      const rows: IssueRow[] = await (await c.boards.listIssues(ctx.actor, parent, board, list.row.id)).limit(CARDS + 1).execute();
      const more = rows.length > CARDS;
      columns.push({ list, issues: await c.issues.views(more ? rows.slice(0, CARDS) : rows, [resolved]), more });
    }
    const canAdmin = !!ctx.actor.user && c.boards.canAdmin(ctx.actor, parent);
    const taken = new Set(board.lists.map((l) => l.row.label_id).filter((x) => x !== null));
    const labels = canAdmin ? await c.labels.availableForProject(resolved.project) : [];
    return web.page(
      reply,
      BoardPage({
        ctx,
        project: projectRef(resolved),
        nav: {
          fullPath: `${resolved.namespace.full_path}/${resolved.project.path}`,
          defaultBranch: resolved.project.default_branch || 'main',
          readCode: canReadCode(ctx.actor, resolved.project, resolved.access),
          openIssues: await c.issuesQuery.openCount(ctx.actor, resolved),
        },
        boards: boards.map((b) => ({ id: b.board.id, name: b.board.name })),
        board,
        columns,
        canAdmin,
        labelChoices: labels.filter((l) => !taken.has(l.id)).map((l) => ({ id: l.id, title: l.title })),
      }),
    );
  });

  // ---- forms ------------------------------------------------------------------------------------

  const BASE = '/-/p/:project_id/boards/:board_id';

  /** The board of a form, as the viewer sees it (404/403 pages otherwise). */
  async function formTarget(req: FastifyRequest): Promise<{ ctx: WebCtx; parent: BoardParent & { type: 'Project' }; boardId: number; href: string } | null> {
    const ctx = await web.requireUser(req);
    const p = req.params as { project_id: string; board_id: string };
    const projectId = idOf(p.project_id);
    const boardId = idOf(p.board_id);
    if (projectId === null || boardId === null) return null;
    const parent = (await c.boards.projectParent(ctx.actor, projectId)) as BoardParent & { type: 'Project' };
    await c.boards.get(parent, boardId);
    return { ctx, parent, boardId, href: boardHref(parent, boardId) };
  }

  /** A refusal as the flash says it; what the error page shows is thrown again. */
  function alertOf(e: unknown, fallback: string): string {
    if (!(e instanceof DomainError) || e.status >= 500) throw e;
    if (e.status === 401 || e.status === 403) throw Errors.forbidden();
    if (e.status === 404 && e.kind !== 'refused') throw e;
    const d = e.detail as unknown;
    if (typeof d === 'string') return d;
    if (d && typeof d === 'object' && 'error' in d) return ([] as unknown[]).concat((d as { error: unknown }).error).join(' ');
    return fallback;
  }

  app.post(`${BASE}/move`, OPTS, async (req, reply) => {
    const t = await formTarget(req);
    if (!t) return web.notFound(req, reply);
    const b = (req.body ?? {}) as Record<string, unknown>;
    const iid = idOf(str(b.iid));
    const from = idOf(str(b.from_list_id));
    const to = idOf(str(b.to_list_id));
    if (iid === null || from === null || to === null) return web.redirect(reply, t.href, { kind: 'alert', text: 'Choose the list to move the issue to.' });
    const found = await c.issues.find(t.ctx.actor, t.parent.project.id, iid);
    if (!c.issues.canUpdate(t.ctx.actor, found)) throw Errors.forbidden();
    try {
      await c.boards.moveIssue(t.ctx.actor, t.parent, t.boardId, found, from, to);
    } catch (e) {
      return web.redirect(reply, t.href, { kind: 'alert', text: alertOf(e, 'The issue could not be moved.') });
    }
    const view = await c.boards.get(t.parent, t.boardId);
    const target = view.lists.find((l) => l.row.id === to);
    return web.redirect(reply, t.href, { kind: 'notice', text: `#${iid} moved to ${target ? listTitle(target) : 'the list'}.` });
  });

  app.post(`${BASE}/lists`, OPTS, async (req, reply) => {
    const t = await formTarget(req);
    if (!t) return web.notFound(req, reply);
    const labelId = idOf(str(((req.body ?? {}) as Record<string, unknown>).label_id));
    if (labelId === null) return web.redirect(reply, t.href, { kind: 'alert', text: 'Choose a label.' });
    try {
      await c.boards.createList(t.ctx.actor, t.parent, t.boardId, { label_id: labelId });
    } catch (e) {
      return web.redirect(reply, t.href, { kind: 'alert', text: alertOf(e, 'The list could not be added.') });
    }
    return web.redirect(reply, t.href, { kind: 'notice', text: 'The list was added.' });
  });

  app.post(`${BASE}/lists/:list_id/remove`, OPTS, async (req, reply) => {
    const t = await formTarget(req);
    if (!t) return web.notFound(req, reply);
    const listId = idOf((req.params as { list_id: string }).list_id);
    if (listId === null) return web.notFound(req, reply);
    await c.boards.removeList(t.ctx.actor, t.parent, t.boardId, listId);
    return web.redirect(reply, t.href, { kind: 'notice', text: 'The list was removed.' });
  });
}
