// Issue boards of a project or a group (lib/api/boards.rb, group_boards.rb, boards_responses.rb;
// Boards::CreateService, Boards::Lists::CreateService / MoveService / DestroyService, Boards::Issues::MoveService):
// a board has a backlog and a closed list (hidden on request) and movable lists by label, milestone or assignee,
// ordered by position. A board's lists show issues: a label list the open issues with its label, a milestone or
// assignee list those of the milestone or the assignee, the backlog the open issues in none of the board's
// lists, the closed list the closed ones. Moving an issue between lists changes what the lists are made of, as
// GitLab does: the label of the list left goes and the one of the list entered comes, the closed list closes it
// and leaving it reopens it — all through the issues service, so hooks, notes and events follow.
import type { Kysely } from 'kysely';
import type { BoardListRow, BoardRow, Database, LabelRow, MilestoneRow, NamespaceRow, ProjectRow, UserRow } from '../../db/schema.ts';
import { isInt32 } from '../../db/sql.ts';
import { Errors } from '../../lib/errors.ts';
import { nowIso } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import type { GroupAccess, ProjectAccess } from '../access/policy.ts';
import type { FeatureDeps } from '../deps.ts';
import { canReadIssues } from '../issues/issue-access.ts';
import type { IssueListScope, IssuesQB, IssuesQuery } from '../issues/issues-query.ts';
import type { FoundIssue, IssueInput, IssuesService } from '../issues/issues.service.ts';

/** Where a board lives: a project or a group, as the caller found it. */
export type BoardParent =
  | { type: 'Project'; project: ProjectRow; namespace: NamespaceRow; access: ProjectAccess }
  | { type: 'Group'; group: NamespaceRow; access: GroupAccess };

export interface BoardInput {
  name?: string;
  hide_backlog_list?: boolean;
  hide_closed_list?: boolean;
}

/** A list with what it names (its label, milestone or user). */
export interface BoardListView {
  row: BoardListRow;
  label: LabelRow | null;
  milestone: MilestoneRow | null;
  user: UserRow | null;
}

export interface BoardView {
  board: BoardRow;
  lists: BoardListView[];
}

export type ListKind = { label_id: number } | { milestone_id: number } | { assignee_id: number };

const MOVABLE = ['label', 'milestone', 'assignee'];

/** BoardsResponses#create_list: render_api_error!({ error: … }, 400). */
const listError = (error: string | string[]) => Errors.refused({ error } as never);

export class BoardsService {
  constructor(
    readonly deps: FeatureDeps,
    private readonly issues: IssuesService,
    private readonly issuesQuery: IssuesQuery,
  ) {}

  private get db(): Kysely<Database> {
    return this.deps.db.kysely;
  }

  // ---- parents ----------------------------------------------------------------------------------

  /** A project's boards: the project as the caller sees it, its issues readable (403 otherwise). */
  async projectParent(actor: Actor, id: string | number): Promise<BoardParent> {
    const found = await this.deps.resolve.project(actor, id);
    if (!canReadIssues(actor, found.project, found.access)) throw Errors.forbidden();
    return { type: 'Project', ...found };
  }

  async groupParent(actor: Actor, id: string | number): Promise<BoardParent> {
    return { type: 'Group', ...(await this.deps.resolve.group(actor, id)) };
  }

  /** admin_issue_board: Reporters and up (of the project, or of the group). */
  canAdmin(actor: Actor, parent: BoardParent): boolean {
    if (actor.isAdmin) return true;
    return parent.type === 'Project' ? parent.access.abilities.has('admin_issue_board') : parent.access.abilities.has('admin_issue_board');
  }

  private requireAdmin(actor: Actor, parent: BoardParent): void {
    if (!actor.user) throw Errors.unauthorized();
    if (!this.canAdmin(actor, parent)) throw Errors.forbidden();
  }

  private owner(parent: BoardParent) {
    return parent.type === 'Project' ? { project_id: parent.project.id, group_id: null } : { project_id: null, group_id: parent.group.id };
  }

  // ---- boards -----------------------------------------------------------------------------------

  /**
   * The boards of the parent, oldest first. A project or group without one gets its first board ("Development")
   * when someone signed in lists them, as Boards::ListService does (the caller found the parent readable; the board
   * is written once).
   */
  async list(actor: Actor, parent: BoardParent): Promise<BoardView[]> {
    let rows = await this.boardsOf(parent);
    if (!rows.length && actor.user) {
      await this.insertBoard(parent, { name: 'Development' });
      rows = await this.boardsOf(parent);
    }
    return Promise.all(rows.map((b) => this.view(b)));
  }

  private boardsOf(parent: BoardParent): Promise<BoardRow[]> {
    const q = this.db.selectFrom('boards').selectAll().orderBy('id');
    return (parent.type === 'Project' ? q.where('project_id', '=', parent.project.id) : q.where('group_id', '=', parent.group.id)).execute();
  }

  /** One board of the parent ("404 Board Not Found"). */
  async get(parent: BoardParent, boardId: number): Promise<BoardView> {
    const board = isInt32(boardId) ? (await this.boardsOf(parent)).find((b) => b.id === boardId) : undefined;
    if (!board) throw Errors.notFound('Board');
    return this.view(board);
  }

  async create(actor: Actor, parent: BoardParent, input: BoardInput): Promise<BoardView> {
    this.requireAdmin(actor, parent);
    const name = (input.name ?? '').trim();
    if (!name) throw Errors.invalid({ name: ["can't be blank"] });
    if (name.length > 255) throw Errors.invalid({ name: ['is too long (maximum is 255 characters)'] });
    return this.view(await this.insertBoard(parent, { ...input, name }));
  }

  /** A new board with its backlog and closed lists (Boards::CreateService), in one transaction. */
  private insertBoard(parent: BoardParent, input: BoardInput & { name: string }): Promise<BoardRow> {
    return this.db.transaction().execute(async (trx) => {
      const at = nowIso();
      const board = await trx
        .insertInto('boards')
        .values({
          ...this.owner(parent),
          name: input.name,
          hide_backlog_list: input.hide_backlog_list ? 1 : 0,
          hide_closed_list: input.hide_closed_list ? 1 : 0,
          created_at: at,
          updated_at: at,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      for (const list_type of ['backlog', 'closed']) {
        await trx
          .insertInto('board_lists')
          .values({ board_id: board.id, list_type, label_id: null, milestone_id: null, user_id: null, position: null, created_at: at, updated_at: at })
          .execute();
      }
      return board;
    });
  }

  async update(actor: Actor, parent: BoardParent, boardId: number, input: BoardInput): Promise<BoardView> {
    this.requireAdmin(actor, parent);
    const { board } = await this.get(parent, boardId);
    const set: Partial<BoardRow> = {};
    if (input.name !== undefined) {
      const name = input.name.trim();
      if (!name) throw Errors.invalid({ name: ["can't be blank"] });
      if (name.length > 255) throw Errors.invalid({ name: ['is too long (maximum is 255 characters)'] });
      set.name = name;
    }
    if (input.hide_backlog_list !== undefined) set.hide_backlog_list = input.hide_backlog_list ? 1 : 0;
    if (input.hide_closed_list !== undefined) set.hide_closed_list = input.hide_closed_list ? 1 : 0;
    const row = await this.db
      .updateTable('boards')
      .set({ ...set, updated_at: nowIso() })
      .where('id', '=', board.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return this.view(row);
  }

  async remove(actor: Actor, parent: BoardParent, boardId: number): Promise<void> {
    this.requireAdmin(actor, parent);
    const { board } = await this.get(parent, boardId);
    await this.db.deleteFrom('boards').where('id', '=', board.id).execute();
  }

  private async view(board: BoardRow): Promise<BoardView> {
    const rows = await this.db.selectFrom('board_lists').selectAll().where('board_id', '=', board.id).execute();
    const labelIds = rows.map((r) => r.label_id).filter((x): x is number => x !== null);
    const milestoneIds = rows.map((r) => r.milestone_id).filter((x): x is number => x !== null);
    const userIds = rows.map((r) => r.user_id).filter((x): x is number => x !== null);
    const [labels, milestones, users] = await Promise.all([
      labelIds.length ? this.db.selectFrom('labels').selectAll().where('id', 'in', labelIds).execute() : Promise.resolve([] as LabelRow[]),
      milestoneIds.length ? this.db.selectFrom('milestones').selectAll().where('id', 'in', milestoneIds).execute() : Promise.resolve([] as MilestoneRow[]),
      userIds.length ? this.db.selectFrom('users').selectAll().where('id', 'in', userIds).execute() : Promise.resolve([] as UserRow[]),
    ]);
    // backlog first, the movable lists by position, closed last (the order of a board on the page)
    const rank = (r: BoardListRow) => (r.list_type === 'backlog' ? -1 : r.list_type === 'closed' ? Number.MAX_SAFE_INTEGER : (r.position ?? 0));
    rows.sort((a, b) => rank(a) - rank(b) || a.id - b.id);
    return {
      board,
      lists: rows.map((row) => ({
        row,
        label: labels.find((l) => l.id === row.label_id) ?? null,
        milestone: milestones.find((m) => m.id === row.milestone_id) ?? null,
        user: users.find((u) => u.id === row.user_id) ?? null,
      })),
    };
  }

  // ---- lists ------------------------------------------------------------------------------------

  /** The movable lists of a board (GET …/lists: label, milestone and assignee lists, by position). */
  movable(view: BoardView): BoardListView[] {
    return view.lists.filter((l) => MOVABLE.includes(l.row.list_type));
  }

  async getList(parent: BoardParent, boardId: number, listId: number): Promise<BoardListView> {
    const view = await this.get(parent, boardId);
    const list = this.movable(view).find((l) => l.row.id === listId);
    if (!list) throw Errors.notFound('List');
    return list;
  }

  /**
   * POST …/lists: a list of a label the board's parent can use (its own or an ancestor group's), a milestone of
   * it, or a member as assignee; exactly one of them (400 otherwise); a second list of the same is refused.
   */
  async createList(actor: Actor, parent: BoardParent, boardId: number, kind: ListKind): Promise<BoardListView> {
    this.requireAdmin(actor, parent);
    const view = await this.get(parent, boardId);
    const groups = await this.groupIds(parent);
    let values: Pick<BoardListRow, 'list_type' | 'label_id' | 'milestone_id' | 'user_id'>;
    if ('label_id' in kind) {
      const label = isInt32(kind.label_id) ? await this.db.selectFrom('labels').selectAll().where('id', '=', kind.label_id).executeTakeFirst() : undefined;
      const usable =
        label && ((parent.type === 'Project' && label.project_id === parent.project.id) || (label.group_id !== null && groups.includes(label.group_id)));
      if (!usable) throw listError('Label not found');
      values = { list_type: 'label', label_id: label.id, milestone_id: null, user_id: null };
    } else if ('milestone_id' in kind) {
      const m = isInt32(kind.milestone_id)
        ? await this.db.selectFrom('milestones').selectAll().where('id', '=', kind.milestone_id).executeTakeFirst()
        : undefined;
      const usable = m && ((parent.type === 'Project' && m.project_id === parent.project.id) || (m.group_id !== null && groups.includes(m.group_id)));
      if (!usable) throw listError('Milestone not found');
      values = { list_type: 'milestone', label_id: null, milestone_id: m.id, user_id: null };
    } else {
      const u = isInt32(kind.assignee_id) ? await this.db.selectFrom('users').selectAll().where('id', '=', kind.assignee_id).executeTakeFirst() : undefined;
      if (!u) throw listError('Assignee not found');
      values = { list_type: 'assignee', label_id: null, milestone_id: null, user_id: u.id };
    }
    const same = this.movable(view).find(
      (l) =>
        l.row.list_type === values.list_type &&
        l.row.label_id === values.label_id &&
        l.row.milestone_id === values.milestone_id &&
        l.row.user_id === values.user_id,
    );
    if (same) throw listError([`${values.list_type === 'label' ? 'Label' : values.list_type === 'milestone' ? 'Milestone' : 'User'} has already been taken`]);
    const at = nowIso();
    const position = this.movable(view).length;
    const row = await this.db
      .insertInto('board_lists')
      .values({ board_id: view.board.id, ...values, position, created_at: at, updated_at: at })
      .returningAll()
      .executeTakeFirstOrThrow();
    return (await this.get(parent, boardId)).lists.find((l) => l.row.id === row.id)!;
  }

  /** PUT …/lists/:list_id with position: the list moves there, the others shift (Boards::Lists::MoveService). */
  async moveList(actor: Actor, parent: BoardParent, boardId: number, listId: number, position: number): Promise<BoardListView> {
    this.requireAdmin(actor, parent);
    const view = await this.get(parent, boardId);
    const lists = this.movable(view);
    const list = lists.find((l) => l.row.id === listId);
    if (!list) throw Errors.notFound('List');
    if (!Number.isInteger(position) || position < 0 || position >= lists.length) throw Errors.param('position is invalid');
    const order = lists.filter((l) => l.row.id !== listId);
    order.splice(position, 0, list);
    await this.db.transaction().execute(async (trx) => {
      for (const [i, l] of order.entries()) {
        if (l.row.position !== i) await trx.updateTable('board_lists').set({ position: i, updated_at: nowIso() }).where('id', '=', l.row.id).execute();
      }
    });
    return this.getList(parent, boardId, listId);
  }

  async removeList(actor: Actor, parent: BoardParent, boardId: number, listId: number): Promise<void> {
    this.requireAdmin(actor, parent);
    const view = await this.get(parent, boardId);
    const lists = this.movable(view);
    if (!lists.some((l) => l.row.id === listId)) throw Errors.notFound('List');
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('board_lists').where('id', '=', listId).execute();
      for (const [i, l] of lists.filter((x) => x.row.id !== listId).entries()) {
        if (l.row.position !== i) await trx.updateTable('board_lists').set({ position: i }).where('id', '=', l.row.id).execute();
      }
    });
  }

  // ---- issues on a board ----------------------------------------------------------------------------

  /** The issues of one list of the board as the caller may read them (the caller pages and orders). */
  async listIssues(actor: Actor, parent: BoardParent, view: BoardView, listId: number): Promise<IssuesQB> {
    const list = view.lists.find((l) => l.row.id === listId);
    if (!list) throw Errors.notFound('List');
    const where: IssueListScope =
      parent.type === 'Project'
        ? { kind: 'project', project: parent.project, namespace: parent.namespace, access: parent.access }
        : { kind: 'group', group: parent.group, nonArchived: true };
    const q = await this.issuesQuery.list(actor, where, {
      scope: 'all',
      state: list.row.list_type === 'closed' ? 'closed' : 'opened',
      orderBy: 'relative_position',
      sort: 'asc',
      ...(list.label ? { labels: [list.label.title] } : {}),
      ...(list.milestone ? { milestoneId: list.milestone.id } : {}),
    });
    if (list.user) return q.where('issues.id', 'in', this.db.selectFrom('issue_assignees').select('issue_id').where('user_id', '=', list.user.id));
    if (list.row.list_type !== 'backlog') return q;
    // the backlog: open issues in none of the board's label lists
    const labelIds = this.movable(view)
      .map((l) => l.row.label_id)
      .filter((x): x is number => x !== null);
    return labelIds.length ? q.where('issues.id', 'not in', this.db.selectFrom('issue_labels').select('issue_id').where('label_id', 'in', labelIds)) : q;
  }

  /**
   * Boards::Issues::MoveService: the issue leaves `fromListId` for `toListId` of the board. Label lists swap the
   * labels, the closed list closes (and leaving it reopens), milestone lists set the milestone, assignee lists
   * swap the assignee. Whoever may update the issue may move it.
   */
  async moveIssue(actor: Actor, parent: BoardParent, boardId: number, f: FoundIssue, fromListId: number, toListId: number): Promise<FoundIssue> {
    const view = await this.get(parent, boardId);
    // only an issue the board shows: of the board's project, or of a project in the board's group or below it
    const onBoard = parent.type === 'Project' ? f.project.id === parent.project.id : f.namespace.traversal_ids.startsWith(parent.group.traversal_ids);
    if (!onBoard) throw Errors.notFound('Issue');
    const from = view.lists.find((l) => l.row.id === fromListId);
    const to = view.lists.find((l) => l.row.id === toListId);
    if (!from || !to) throw Errors.notFound('List');
    if (from.row.id === to.row.id) return f;
    const input: IssueInput = {};
    const removeLabels = from.label ? [from.label.title] : [];
    const addLabels = to.label ? [to.label.title] : [];
    if (removeLabels.length) input.remove_labels = removeLabels;
    if (addLabels.length) input.add_labels = addLabels;
    if (to.row.list_type === 'closed') input.state_event = 'close';
    else if (from.row.list_type === 'closed') input.state_event = 'reopen';
    if (to.milestone) input.milestone_id = to.milestone.id;
    else if (from.milestone) input.milestone_id = null;
    if (to.user || from.user) {
      const ids = f.assigneeIds.filter((id) => id !== from.user?.id);
      if (to.user && !ids.includes(to.user.id)) ids.push(to.user.id);
      input.assignee_ids = ids;
    }
    return this.issues.update(actor, f, input);
  }

  /** The groups whose labels and milestones a board of the parent may use: the group itself and its ancestors. */
  private async groupIds(parent: BoardParent): Promise<number[]> {
    const ns = parent.type === 'Project' ? parent.namespace : parent.group;
    return String(ns.traversal_ids ?? '')
      .split('/')
      .filter(Boolean)
      .map(Number);
  }
}
