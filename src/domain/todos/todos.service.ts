// To-do items (GitLab's Todo and TodoService, lib/api/todos.rb): a user's pending items on issues and merge
// requests — "marked" by the user (POST …/todo), "assigned" when someone else assigns them — done one by one or
// all at once. A to-do of something the user can no longer read is not listed.
import type { Kysely } from 'kysely';
import type { Database, TodoRow } from '../../db/schema.ts';
import { isInt32 } from '../../db/sql.ts';
import { Errors } from '../../lib/errors.ts';
import { nowIso } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import type { FeatureDeps } from '../deps.ts';

/** Todo::ACTION_NAMES */
export const TODO_ACTIONS: Record<number, string> = {
  1: 'assigned',
  2: 'mentioned',
  3: 'build_failed',
  4: 'marked',
  5: 'approval_required',
  6: 'unmergeable',
  7: 'directly_addressed',
  8: 'merge_train_removed',
  9: 'review_requested',
  10: 'member_access_requested',
  11: 'review_submitted',
};
export const MARKED = 4;
export const ASSIGNED = 1;

export type TodoTargetType = 'Issue' | 'MergeRequest';

export interface TodoFilters {
  action?: string;
  authorId?: number;
  projectId?: number;
  groupId?: number;
  state?: 'pending' | 'done';
  type?: TodoTargetType;
}

export class TodosService {
  constructor(readonly deps: FeatureDeps) {}

  private get db(): Kysely<Database> {
    return this.deps.db.kysely;
  }

  /**
   * POST …/issues/:iid/todo and …/merge_requests/:iid/todo (TodoService#mark_todo): a new "marked" to-do for the
   * caller, or null when one is pending already (the route answers 304).
   */
  async mark(actor: Actor, target: { type: TodoTargetType; id: number; project_id: number; author_id: number | null; title: string }): Promise<TodoRow | null> {
    const user = actor.user;
    if (!user) throw Errors.unauthorized();
    const pending = await this.db
      .selectFrom('todos')
      .select('id')
      .where('user_id', '=', user.id)
      .where('target_type', '=', target.type)
      .where('target_id', '=', target.id)
      .where('action', '=', MARKED)
      .where('state', '=', 'pending')
      .executeTakeFirst();
    if (pending) return null;
    const at = nowIso();
    return this.db
      .insertInto('todos')
      .values({
        user_id: user.id,
        project_id: target.project_id,
        group_id: null,
        target_type: target.type,
        target_id: target.id,
        author_id: user.id,
        action: MARKED,
        state: 'pending',
        note_id: null,
        body: target.title,
        created_at: at,
        updated_at: at,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** TodoService#new_issue / reassigned_assignable: a pending "assigned" to-do for each new assignee but the author of the change. */
  async assigned(
    trx: Kysely<Database>,
    authorId: number,
    target: { type: TodoTargetType; id: number; project_id: number; title: string },
    userIds: number[],
  ): Promise<void> {
    const at = nowIso();
    for (const user_id of userIds) {
      if (user_id === authorId) continue;
      await trx
        .insertInto('todos')
        .values({
          user_id,
          project_id: target.project_id,
          group_id: null,
          target_type: target.type,
          target_id: target.id,
          author_id: authorId,
          action: ASSIGNED,
          state: 'pending',
          note_id: null,
          body: target.title,
          created_at: at,
          updated_at: at,
        })
        .execute();
    }
  }

  /** GET /todos: the caller's to-dos (pending unless asked), newest first; the caller checks each target's access. */
  list(actor: Actor, f: TodoFilters) {
    const user = actor.user;
    if (!user) throw Errors.unauthorized();
    let q = this.db
      .selectFrom('todos')
      .selectAll()
      .where('user_id', '=', user.id)
      .where('state', '=', f.state ?? 'pending');
    if (f.action !== undefined) {
      const action = Number(Object.entries(TODO_ACTIONS).find(([, name]) => name === f.action)?.[0] ?? -1);
      q = q.where('action', '=', action);
    }
    if (f.authorId !== undefined) q = q.where('author_id', '=', f.authorId);
    if (f.projectId !== undefined) q = q.where('project_id', '=', f.projectId);
    if (f.groupId !== undefined) q = q.where('group_id', '=', f.groupId);
    if (f.type !== undefined) q = q.where('target_type', '=', f.type);
    return q.orderBy('id', 'desc');
  }

  /** POST /todos/:id/mark_as_done: one of the caller's own ("404 Todo Not Found" otherwise). */
  async markDone(actor: Actor, id: number): Promise<TodoRow> {
    const user = actor.user;
    if (!user) throw Errors.unauthorized();
    const todo = isInt32(id) ? await this.db.selectFrom('todos').selectAll().where('id', '=', id).where('user_id', '=', user.id).executeTakeFirst() : undefined;
    if (!todo) throw Errors.notFound('Todo');
    if (todo.state === 'done') return todo;
    return this.db.updateTable('todos').set({ state: 'done', updated_at: nowIso() }).where('id', '=', todo.id).returningAll().executeTakeFirstOrThrow();
  }

  /** POST /todos/mark_as_done: every pending one of the caller. */
  async markAllDone(actor: Actor): Promise<void> {
    const user = actor.user;
    if (!user) throw Errors.unauthorized();
    await this.db.updateTable('todos').set({ state: 'done', updated_at: nowIso() }).where('user_id', '=', user.id).where('state', '=', 'pending').execute();
  }
}
