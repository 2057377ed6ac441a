// Issue board pages (GitLab's /-/boards and /-/boards/:id) of a project and of a group (/groups/<group>/-/boards,
// the issues of the group's projects): the parent's boards, each with its lists side by side, and the forms that
// move a card (from the drag of the board's script or the card's "Move to" form), add a label list and remove a
// list — one implementation for both parents. Every read and write goes through the boards service with the
// viewer's actor, the same code as the API's routes: a card moved changes the issue through the issues service.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { IssueRow } from '../../db/schema.ts';
import type { BoardParent } from '../../domain/boards/boards.service.ts';
import { canReadCode } from '../../domain/repository/read-access.ts';
import { DomainError, Errors } from '../../lib/errors.ts';
import { type BoardColumn, type BoardOwner, BoardPage, type BoardPlace, boardHref, listTitle } from '../../web/views/boards/board.tsx';
import { issueReference } from '../../web/views/issues/common.tsx';
import { groupSettingsHref, groupSettingsNav } from '../../web/views/groups/group-settings.tsx';
import { groupAncestors } from './group-ancestors.ts';
import { idOf, projectRef, str } from './page-params.ts';
import { HIDDEN, PAGE, type Web, type WebCtx } from './web.ts';

/** the cards a list shows (GitLab loads more as one scrolls; the count says when there are more) */
const CARDS = 50;
const OPTS = { config: PAGE, schema: HIDDEN };

/** Whose board it is, as the view's links name it. */
const ownerOf = (parent: BoardParent): BoardOwner =>
  parent.type === 'Project' ? { kind: 'project', project: projectRef(parent) } : { kind: 'group', group: parent.group };

/** The full path a board's references are written from: its project's or its group's. */
const fromOf = (parent: BoardParent): string => (parent.type === 'Project' ? `${parent.namespace.full_path}/${parent.project.path}` : parent.group.full_path);

export function boardPages(app: FastifyInstance, c: Container, web: Web): void {
  /** What the page knows of where the board lives: the project's tab bar, or the group's crumbs. */
  async function placeOf(ctx: WebCtx, parent: BoardParent): Promise<BoardPlace> {
    if (parent.type === 'Group') {
      const settings = groupSettingsHref(parent.group, groupSettingsNav(parent.access.abilities));
      return { kind: 'group', group: parent.group, ancestors: await groupAncestors(c, parent.group), settings };
    }
    return {
      kind: 'project',
      project: projectRef(parent),
      nav: {
        fullPath: fromOf(parent),
        defaultBranch: parent.project.default_branch || 'main',
        readCode: canReadCode(ctx.actor, parent.project, parent.access),
        openIssues: await c.issuesQuery.openCount(ctx.actor, parent),
      },
    };
  }

  /** `…/-/boards`: the parent's first board (made on the first visit of someone signed in). */
  async function firstBoard(reply: FastifyReply, ctx: WebCtx, parent: BoardParent) {
    const boards = await c.boards.list(ctx.actor, parent);
    if (!boards.length) throw Errors.notFound('Board');
    return web.redirect(reply, boardHref(ownerOf(parent), boards[0]!.board.id));
  }

  /** `…/-/boards/:id`: the board, each shown list with its first cards. */
  async function showBoard(reply: FastifyReply, ctx: WebCtx, parent: BoardParent, boardId: string | undefined) {
    const id = idOf(boardId);
    if (id === null) throw Errors.notFound('Board');
    const [boards, board] = await Promise.all([c.boards.list(ctx.actor, parent), c.boards.get(parent, id)]);
    const shown = board.lists.filter(
      (l) => !(l.row.list_type === 'backlog' && board.board.hide_backlog_list) && !(l.row.list_type === 'closed' && board.board.hide_closed_list),
    );
    const perList: IssueRow[][] = [];
    for (const list of shown) perList.push(await (await c.boards.listIssues(ctx.actor, parent, board, list.row.id)).limit(CARDS + 1).execute());
    // every card of the board presented at once (a group's cards come from many projects)
    const cards = perList.map((rows) => rows.slice(0, CARDS));
    const known = parent.type === 'Project' ? [parent] : [];
    const views = await c.issues.views(ctx.actor, cards.flat(), known);
    const columns: BoardColumn[] = [];
    let at = 0;
    for (const [i, list] of shown.entries()) {
      columns.push({ list, issues: views.slice(at, at + cards[i]!.length), more: perList[i]!.length > CARDS });
      at += cards[i]!.length;
    }
    const canAdmin = !!ctx.actor.user && c.boards.canAdmin(ctx.actor, parent);
    const taken = new Set(board.lists.map((l) => l.row.label_id).filter((x) => x !== null));
    // the labels a list may be made of: the project's and its groups', or the group's and its ancestors'
    const labels = !canAdmin
      ? []
      : parent.type === 'Project'
        ? await c.labels.availableForProject(parent.project)
        : await (await c.labels.listQuery(ctx.actor, parent, { include_ancestor_groups: true })).execute();
    return web.page(
      reply,
      BoardPage({
        ctx,
        place: await placeOf(ctx, parent),
        boards: boards.map((b) => ({ id: b.board.id, name: b.board.name })),
        board,
        columns,
        canAdmin,
        labelChoices: labels.filter((l) => !taken.has(l.id)).map((l) => ({ id: l.id, title: l.title })),
      }),
    );
  }

  web.projectPage('/-/boards', async (_req, reply, { ctx, resolved }) => firstBoard(reply, ctx, await c.boards.projectParent(ctx.actor, resolved.project.id)));
  web.projectPage('/-/boards/:board_id', async (_req, reply, { ctx, resolved, params }) =>
    showBoard(reply, ctx, await c.boards.projectParent(ctx.actor, resolved.project.id), params.board_id),
  );
  // the group was resolved with the viewer's access: a group they may not see is the 404 page
  web.groupPage('/-/boards', async (_req, reply, { ctx, resolved }) => firstBoard(reply, ctx, { type: 'Group', ...resolved }));
  web.groupPage('/-/boards/:board_id', async (_req, reply, { ctx, resolved, params }) =>
    showBoard(reply, ctx, { type: 'Group', ...resolved }, params.board_id),
  );

  // ---- forms: `/-/p/:project_id/boards/:board_id/…` and `/-/g/:group_id/boards/:board_id/…` --------------------

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

  for (const level of ['p', 'g'] as const) {
    const BASE = `/-/${level}/:parent_id/boards/:board_id`;

    /** The board of a form, as the viewer sees it (404/403 pages otherwise). */
    async function formTarget(req: FastifyRequest): Promise<{ ctx: WebCtx; parent: BoardParent; boardId: number; href: string } | null> {
      const ctx = await web.requireUser(req);
      const p = req.params as { parent_id: string; board_id: string };
      const parentId = idOf(p.parent_id);
      const boardId = idOf(p.board_id);
      if (parentId === null || boardId === null) return null;
      const parent = level === 'p' ? await c.boards.projectParent(ctx.actor, parentId) : await c.boards.groupParent(ctx.actor, parentId);
      await c.boards.get(parent, boardId);
      return { ctx, parent, boardId, href: boardHref(ownerOf(parent), boardId) };
    }

    app.post(`${BASE}/move`, OPTS, async (req, reply) => {
      const t = await formTarget(req);
      if (!t) return web.notFound(req, reply);
      const b = (req.body ?? {}) as Record<string, unknown>;
      // a group board's card names its project; a project board's cards are the project's
      const projectId = t.parent.type === 'Project' ? t.parent.project.id : idOf(str(b.project_id));
      const iid = idOf(str(b.iid));
      const from = idOf(str(b.from_list_id));
      const to = idOf(str(b.to_list_id));
      if (projectId === null || iid === null || from === null || to === null) {
        return web.redirect(reply, t.href, { kind: 'alert', text: 'Choose the list to move the issue to.' });
      }
      const found = await c.issues.find(t.ctx.actor, projectId, iid);
      if (!c.issues.canUpdate(t.ctx.actor, found)) throw Errors.forbidden();
      try {
        await c.boards.moveIssue(t.ctx.actor, t.parent, t.boardId, found, from, to);
      } catch (e) {
        return web.redirect(reply, t.href, { kind: 'alert', text: alertOf(e, 'The issue could not be moved.') });
      }
      const view = await c.boards.get(t.parent, t.boardId);
      const target = view.lists.find((l) => l.row.id === to);
      const reference = issueReference(`${found.namespace.full_path}/${found.project.path}`, iid, fromOf(t.parent));
      return web.redirect(reply, t.href, { kind: 'notice', text: `${reference} moved to ${target ? listTitle(target) : 'the list'}.` });
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
}
