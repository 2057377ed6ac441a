// The life of an issue: find, create, update (edit, close, reopen, labels, milestone, assignees), delete,
// subscriptions, time tracking and the views its entities and pages are built from. GitLab's
// Issues::CreateService / UpdateService / CloseService / ReopenService / DestroyService and the API helpers
// of lib/api/issues.rb. Every change writes, in its transaction, the issue hook and activity event, the
// resource events (label, milestone, state) and the system notes the issue's discussion shows.
import type { Kysely } from 'kysely';
import { nextIid } from '../../db/internal-ids.ts';
import {
  ISSUE_COLUMNS,
  type Database,
  type IssueRow,
  type LabelRow,
  type MilestoneRow,
  type NamespaceRow,
  type ProjectRow,
  type UserRow,
} from '../../db/schema.ts';
import { isInt32 } from '../../db/sql.ts';
import { Errors } from '../../lib/errors.ts';
import { nowIso, parseDateTime } from '../../lib/time.ts';
import { type Actor, userActor } from '../access/actor.ts';
import type { ProjectAccess } from '../access/policy.ts';
import type { FeatureDeps } from '../deps.ts';
import { LabelsService } from '../labels/labels.service.ts';
import { mergeRequestProjects } from '../merge-requests/merge-requests-query.ts';
import type { HookChanges } from '../merge-requests/mr-events.ts';
import { MilestonesService } from '../milestones/milestones.service.ts';
import { type FoundNoteable, noteableOf } from '../notes/noteable.ts';
import { newDiscussionId, type NotesService } from '../notes/notes.service.ts';
import { canReadIssue, canReadIssues, canSetMetadata, canUpdateIssue } from './issue-access.ts';
import { type IssueAction, recordIssueEvent } from './issue-events.ts';
import { loadIssueViews, type IssueView } from './present.ts';
import type { TodosService } from '../todos/todos.service.ts';
import { DESCRIPTION_MAX, type IssueType, TITLE_MAX } from './rules.ts';

/** An issue as the caller found it, with its project. */
export interface FoundIssue {
  issue: IssueRow;
  assigneeIds: number[];
  project: ProjectRow;
  namespace: NamespaceRow;
  access: ProjectAccess;
}

export interface IssueInput {
  title?: string;
  description?: string | null;
  confidential?: boolean;
  assignee_ids?: number[];
  assignee_id?: number;
  milestone_id?: number | null;
  labels?: string[];
  add_labels?: string[];
  remove_labels?: string[];
  due_date?: string | null;
  issue_type?: IssueType;
  discussion_locked?: boolean;
  created_at?: string;
  updated_at?: string;
  iid?: number;
  state_event?: 'close' | 'reopen';
}

const unique = <T>(xs: Iterable<T>): T[] => [...new Set(xs)];
const sameSet = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((x) => b.includes(x));

export class IssuesService {
  private readonly labels: LabelsService;
  private readonly milestones: MilestonesService;

  constructor(
    readonly deps: FeatureDeps,
    private readonly notes: NotesService,
    private readonly todos: TodosService,
  ) {
    this.labels = new LabelsService(deps);
    this.milestones = new MilestonesService(deps);
  }

  private get db(): Kysely<Database> {
    return this.deps.db.kysely;
  }

  // ---- finding ----------------------------------------------------------------------------------

  /** The project of an issue route, with its issues readable (403 otherwise). */
  async project(actor: Actor, projectIdOrPath: string | number): Promise<{ project: ProjectRow; namespace: NamespaceRow; access: ProjectAccess }> {
    const found = await this.deps.resolve.project(actor, projectIdOrPath);
    if (!canReadIssues(actor, found.project, found.access)) throw Errors.forbidden();
    return found;
  }

  /**
   * The project as the caller sees it (404 Project Not Found), then the issue with that iid as IssuesFinder
   * finds it: one the caller may not read (the feature closed to them, a confidential issue) is "404 Not found".
   */
  async find(actor: Actor, projectIdOrPath: string | number, iid: number): Promise<FoundIssue> {
    const { project, namespace, access } = await this.deps.resolve.project(actor, projectIdOrPath);
    const issue = isInt32(iid)
      ? await this.db.selectFrom('issues').select(ISSUE_COLUMNS).where('project_id', '=', project.id).where('iid', '=', iid).executeTakeFirst()
      : undefined;
    if (!issue || !canReadIssues(actor, project, access)) throw Errors.recordNotFound();
    const assigneeIds = await this.assigneeIdsOf(issue.id);
    if (!canReadIssue(actor, access, issue, assigneeIds)) throw Errors.recordNotFound();
    return { issue, assigneeIds, project, namespace, access };
  }

  /**
   * An issue by its global id, for administrators only (GET /issues/:id, GitLab's `authenticated_as_admin!`:
   * 403 for anyone else); an id that names no issue is "404 Not found".
   */
  async findByIdAsAdmin(actor: Actor, id: string): Promise<FoundIssue> {
    if (!actor.isAdmin) throw Errors.forbidden();
    const n = /^[0-9]+$/.test(id) ? Number(id) : Number.NaN;
    const row = isInt32(n) ? await this.db.selectFrom('issues').select(['project_id', 'iid']).where('id', '=', n).executeTakeFirst() : undefined;
    if (!row) throw Errors.recordNotFound();
    return this.find(actor, row.project_id, row.iid);
  }

  /** The issues of these ids the actor may read, each with its project (to-do targets). */
  async readableByIds(actor: Actor, ids: number[]): Promise<FoundIssue[]> {
    if (!ids.length) return [];
    const rows = await this.db.selectFrom('issues').select(ISSUE_COLUMNS).where('id', 'in', ids).execute();
    const out: FoundIssue[] = [];
    for (const issue of rows) {
      try {
        out.push(await this.find(actor, issue.project_id, issue.iid));
      } catch {
        // not readable (any more): left out
      }
    }
    return out;
  }

  /** The merge requests whose description closes the issue (merge_requests_closing_issues), oldest first. */
  async closingMergeRequestIds(issueId: number): Promise<number[]> {
    const rows = await this.db
      .selectFrom('merge_requests_closing_issues')
      .select('merge_request_id')
      .where('issue_id', '=', issueId)
      .orderBy('merge_request_id')
      .execute();
    return rows.map((r) => r.merge_request_id);
  }

  /** The issues a merge request's description closes, as the actor may read them. */
  async closedByMergeRequest(actor: Actor, mergeRequestId: number): Promise<FoundIssue[]> {
    const rows = await this.db.selectFrom('merge_requests_closing_issues').select('issue_id').where('merge_request_id', '=', mergeRequestId).execute();
    return this.readableByIds(
      actor,
      rows.map((r) => r.issue_id),
    );
  }

  /** The issue as a noteable (notes, discussions, award emoji). */
  async findNoteable(actor: Actor, projectIdOrPath: string | number, iid: number): Promise<FoundNoteable> {
    const f = await this.find(actor, projectIdOrPath, iid);
    return noteableOf('Issue', f, f.issue);
  }

  private async assigneeIdsOf(issueId: number, db: Kysely<Database> = this.db): Promise<number[]> {
    const rows = await db.selectFrom('issue_assignees').select('user_id').where('issue_id', '=', issueId).orderBy('created_at').orderBy('user_id').execute();
    return rows.map((r) => r.user_id);
  }

  /** The views a page of issues shows to `actor`, in the order of `rows`. */
  views(actor: Actor, rows: IssueRow[], known: { project: ProjectRow; namespace: NamespaceRow }[] = []): Promise<IssueView[]> {
    return loadIssueViews(
      this.db,
      this.deps.externalUrl,
      rows,
      known,
      async (projectIds) => new Set((await mergeRequestProjects(this.deps, actor, projectIds)).keys()),
    );
  }

  canUpdate(actor: Actor, f: FoundIssue): boolean {
    return canUpdateIssue(actor, f.access, f.issue, f.assigneeIds);
  }

  /** create_issue on a project whose issues the actor reads (what `create` asks; pages show their button on it). */
  canCreate(actor: Actor, r: { project: ProjectRow; access: ProjectAccess }): boolean {
    return !!actor.user && canReadIssues(actor, r.project, r.access) && (actor.isAdmin || r.access.abilities.has('create_issue'));
  }

  /** set_issue_metadata: labels, milestone, assignees and due date are taken from this actor (else dropped). */
  canSetMetadata(actor: Actor, r: { access: ProjectAccess }): boolean {
    return canSetMetadata(actor, r.access);
  }

  // ---- validation -------------------------------------------------------------------------------

  private validate(input: IssueInput, creating: boolean): void {
    const errors: Record<string, string[]> = {};
    if (input.title !== undefined || creating) {
      const title = (input.title ?? '').trim();
      if (!title) errors.title = ["can't be blank"];
      else if ([...title].length > TITLE_MAX) errors.title = [`is too long (maximum is ${TITLE_MAX} characters)`];
    }
    if (input.description && [...input.description].length > DESCRIPTION_MAX) {
      errors.description = [`is too long (maximum is ${DESCRIPTION_MAX} characters)`];
    }
    if (Object.keys(errors).length) throw Errors.invalid(errors);
  }

  /** Users who may be assigned: existing active users who can read the project's issues (unknown ids are dropped). */
  private async assignableUsers(ids: number[], project: ProjectRow, namespace: NamespaceRow): Promise<number[]> {
    const wanted = unique(ids.filter((id) => Number.isSafeInteger(id) && id > 0));
    if (!wanted.length) return [];
    const rows = await this.db.selectFrom('users').selectAll().where('id', 'in', wanted).execute();
    const out: number[] = [];
    for (const id of wanted) {
      const user = rows.find((u) => u.id === id);
      if (!user || user.state !== 'active') continue;
      const as = userActor(user, { isAdmin: user.is_admin === 1 });
      if (canReadIssues(as, project, await this.deps.policy.project(as, project, namespace))) out.push(id);
    }
    return out;
  }

  /** A milestone of the project or one of its ancestor groups (else null: GitLab drops the parameter). */
  private async availableMilestone(trx: Kysely<Database>, project: ProjectRow, id: number): Promise<MilestoneRow | null> {
    if (!Number.isSafeInteger(id) || id <= 0) return null;
    return (await this.milestones.findForProject(project, id, trx)) ?? null;
  }

  private labelsByTitles(trx: Kysely<Database>, actor: Actor, f: { project: ProjectRow; access: ProjectAccess }, titles: string[]): Promise<LabelRow[]> {
    return this.labels.findOrCreateByTitles(actor, f.project, titles, { db: trx, access: f.access });
  }

  private async labelRows(trx: Kysely<Database>, issueId: number): Promise<LabelRow[]> {
    return trx
      .selectFrom('issue_labels')
      .innerJoin('labels', 'labels.id', 'issue_labels.label_id')
      .selectAll('labels')
      .where('issue_labels.issue_id', '=', issueId)
      .orderBy('labels.title')
      .execute();
  }

  // ---- create -----------------------------------------------------------------------------------

  /** Issues::CreateService through POST /projects/:id/issues. */
  async create(actor: Actor, projectIdOrPath: string | number, input: IssueInput): Promise<FoundIssue> {
    const user = actor.user;
    if (!user) throw Errors.unauthorized();
    const found = await this.deps.resolve.project(actor, projectIdOrPath);
    if (!this.canCreate(actor, found)) throw Errors.forbidden();
    this.validate(input, true);
    const metadata = canSetMetadata(actor, found.access);
    const owner = actor.isAdmin || found.access.level >= 50;
    const assigneeIds = metadata
      ? await this.assignableUsers(
          input.assignee_ids ?? (input.assignee_id !== undefined && input.assignee_id !== 0 ? [input.assignee_id] : []),
          found.project,
          found.namespace,
        )
      : [];
    const createdAt = owner && input.created_at ? parseDateTime(input.created_at) : null;
    if (input.iid !== undefined && owner) {
      const taken = await this.db.selectFrom('issues').select('id').where('project_id', '=', found.project.id).where('iid', '=', input.iid).executeTakeFirst();
      if (taken) throw Errors.conflict('Issue already exists');
    }
    const issue = await this.db.transaction().execute(async (trx) => {
      const labels = metadata && input.labels?.length ? await this.labelsByTitles(trx, actor, found, input.labels) : [];
      const milestone = metadata && input.milestone_id ? await this.availableMilestone(trx, found.project, input.milestone_id) : null;
      const at = createdAt ?? nowIso();
      const iid =
        input.iid !== undefined && owner ? await this.claimIid(trx, found.project.id, input.iid) : await nextIid(trx, 'issues', 'Project', found.project.id);
      const row = await trx
        .insertInto('issues')
        .values({
          project_id: found.project.id,
          iid,
          title: input.title!.trim(),
          description: input.description ?? null,
          state: 'opened',
          author_id: user.id,
          milestone_id: milestone?.id ?? null,
          confidential: input.confidential ? 1 : 0,
          discussion_locked: input.discussion_locked === undefined ? null : input.discussion_locked ? 1 : 0,
          due_date: metadata ? (input.due_date ?? null) : null,
          weight: null,
          closed_by_id: null,
          closed_at: null,
          issue_type: input.issue_type ?? 'issue',
          created_at: at,
          updated_at: at,
        })
        .returning(ISSUE_COLUMNS)
        .executeTakeFirstOrThrow();
      for (const user_id of assigneeIds) await trx.insertInto('issue_assignees').values({ issue_id: row.id, user_id, created_at: at }).execute();
      await this.todos.assigned(trx, user.id, { type: 'Issue', id: row.id, project_id: row.project_id, title: row.title }, assigneeIds);
      for (const l of labels) {
        await trx.insertInto('issue_labels').values({ issue_id: row.id, label_id: l.id, project_id: row.project_id, created_at: at }).execute();
        await trx
          .insertInto('resource_label_events')
          .values({ issue_id: row.id, merge_request_id: null, label_id: l.id, user_id: user.id, action: 'add', created_at: at })
          .execute();
      }
      if (milestone) {
        await trx
          .insertInto('resource_milestone_events')
          .values({ issue_id: row.id, merge_request_id: null, milestone_id: milestone.id, user_id: user.id, action: 'add', state: 'opened', created_at: at })
          .execute();
      }
      const fresh = await trx.selectFrom('issues').select(ISSUE_COLUMNS).where('id', '=', row.id).executeTakeFirstOrThrow();
      await recordIssueEvent(trx, this.deps, user, fresh, 'open');
      return fresh;
    });
    return { issue, assigneeIds, project: found.project, namespace: found.namespace, access: found.access };
  }

  /** An iid given by an administrator or owner (the import of issues keeps theirs): the counter moves past it. */
  private async claimIid(trx: Kysely<Database>, projectId: number, iid: number): Promise<number> {
    let next = await nextIid(trx, 'issues', 'Project', projectId);
    while (next < iid) next = await nextIid(trx, 'issues', 'Project', projectId);
    return iid;
  }

  // ---- update -----------------------------------------------------------------------------------

  /** Issues::UpdateService through PUT /projects/:id/issues/:issue_iid (close and reopen with state_event). */
  async update(actor: Actor, f: FoundIssue, input: IssueInput, opts: { closedVia?: string } = {}): Promise<FoundIssue> {
    const user = actor.user;
    if (!user) throw Errors.unauthorized();
    if (!this.canUpdate(actor, f)) throw Errors.forbidden();
    this.validate(input, false);
    const metadata = canSetMetadata(actor, f.access);
    const wantedAssignees =
      metadata && (input.assignee_ids !== undefined || input.assignee_id !== undefined)
        ? await this.assignableUsers(input.assignee_ids ?? (input.assignee_id ? [input.assignee_id] : []), f.project, f.namespace)
        : null;
    const issue = await this.db.transaction().execute(async (trx) => {
      const before = await trx.selectFrom('issues').select(ISSUE_COLUMNS).where('id', '=', f.issue.id).executeTakeFirstOrThrow();
      const at = nowIso();
      const changes: HookChanges = {};
      const set: Partial<IssueRow> = {};
      const notes: string[] = [];
      const change = <K extends keyof IssueRow>(key: K, value: IssueRow[K]) => {
        if (before[key] === value) return;
        set[key] = value;
        changes[key as string] = { previous: before[key], current: value };
      };
      if (input.title !== undefined && input.title.trim() !== before.title) {
        change('title', input.title.trim());
        notes.push(`changed title from **${before.title}** to **${input.title.trim()}**`);
      }
      if (input.description !== undefined && (input.description ?? null) !== before.description) {
        change('description', input.description ?? null);
        notes.push('changed the description');
      }
      if (input.confidential !== undefined) {
        const v = input.confidential ? 1 : 0;
        if (v !== before.confidential) {
          change('confidential', v);
          notes.push(v ? 'made the issue confidential' : 'made the issue visible to everyone');
        }
      }
      if (input.discussion_locked !== undefined) {
        const v = input.discussion_locked ? 1 : 0;
        if (v !== before.discussion_locked) {
          change('discussion_locked', v);
          notes.push(v ? 'locked the discussion in this issue' : 'unlocked the discussion in this issue');
        }
      }
      if (input.issue_type !== undefined) change('issue_type', input.issue_type);
      if (metadata && input.due_date !== undefined) {
        const v = input.due_date ?? null;
        if (v !== before.due_date) {
          change('due_date', v);
          notes.push(v ? `changed due date to ${v}` : 'removed due date');
        }
      }
      if (metadata && input.milestone_id !== undefined) {
        const milestone = input.milestone_id ? await this.availableMilestone(trx, f.project, input.milestone_id) : null;
        const next = input.milestone_id === null || input.milestone_id === 0 ? null : (milestone?.id ?? before.milestone_id);
        if (next !== before.milestone_id) {
          change('milestone_id', next);
          await trx
            .insertInto('resource_milestone_events')
            .values({
              issue_id: before.id,
              merge_request_id: null,
              milestone_id: next ?? before.milestone_id,
              user_id: user.id,
              action: next ? 'add' : 'remove',
              state: before.state,
              created_at: at,
            })
            .execute();
          notes.push(milestone ? `changed milestone to %${milestone.iid}` : 'removed milestone');
        }
      }
      // labels
      if (metadata && (input.labels !== undefined || input.add_labels !== undefined || input.remove_labels !== undefined)) {
        const current = await this.labelRows(trx, before.id);
        let wanted: LabelRow[];
        if (input.labels !== undefined) wanted = input.labels.length ? await this.labelsByTitles(trx, actor, f, input.labels) : [];
        else {
          const added = input.add_labels?.length ? await this.labelsByTitles(trx, actor, f, input.add_labels) : [];
          const removed = new Set((input.remove_labels ?? []).map((t) => t.trim().toLowerCase()));
          wanted = [...current.filter((l) => !removed.has(l.title.toLowerCase())), ...added.filter((l) => !current.some((c) => c.id === l.id))];
        }
        const add = wanted.filter((l) => !current.some((c) => c.id === l.id));
        const remove = current.filter((c) => !wanted.some((l) => l.id === c.id));
        for (const l of add) {
          await trx.insertInto('issue_labels').values({ issue_id: before.id, label_id: l.id, project_id: before.project_id, created_at: at }).execute();
          await trx
            .insertInto('resource_label_events')
            .values({ issue_id: before.id, merge_request_id: null, label_id: l.id, user_id: user.id, action: 'add', created_at: at })
            .execute();
        }
        for (const l of remove) {
          await trx.deleteFrom('issue_labels').where('issue_id', '=', before.id).where('label_id', '=', l.id).execute();
          await trx
            .insertInto('resource_label_events')
            .values({ issue_id: before.id, merge_request_id: null, label_id: l.id, user_id: user.id, action: 'remove', created_at: at })
            .execute();
        }
        if (add.length || remove.length) {
          changes.labels = { previous: current.map((l) => l.title), current: wanted.map((l) => l.title).sort() };
          notes.push(labelNote(add, remove));
        }
      }
      // assignees
      if (wantedAssignees !== null && !sameSet(wantedAssignees, f.assigneeIds)) {
        await trx.deleteFrom('issue_assignees').where('issue_id', '=', before.id).execute();
        for (const user_id of wantedAssignees) await trx.insertInto('issue_assignees').values({ issue_id: before.id, user_id, created_at: at }).execute();
        changes.assignees = { previous: f.assigneeIds, current: wantedAssignees };
        const added = wantedAssignees.filter((id) => !f.assigneeIds.includes(id));
        await this.todos.assigned(trx, user.id, { type: 'Issue', id: before.id, project_id: before.project_id, title: before.title }, added);
        notes.push(await this.assigneeNote(trx, f.assigneeIds, wantedAssignees));
      }
      // state
      let action: IssueAction = 'update';
      if (input.state_event === 'close' && before.state === 'opened') {
        Object.assign(set, { state: 'closed', closed_at: at, closed_by_id: user.id });
        changes.state_id = { previous: 1, current: 2 };
        changes.closed_at = { previous: null, current: at };
        action = 'close';
      } else if (input.state_event === 'reopen' && before.state === 'closed') {
        Object.assign(set, { state: 'opened', closed_at: null, closed_by_id: null });
        changes.state_id = { previous: 2, current: 1 };
        changes.closed_at = { previous: before.closed_at, current: null };
        action = 'reopen';
      }
      const edited = set.title !== undefined || set.description !== undefined;
      if (!Object.keys(set).length && !Object.keys(changes).length) return before;
      const updated = await trx
        .updateTable('issues')
        .set({ ...set, updated_at: at, updated_by_id: user.id, ...(edited ? { last_edited_at: at, last_edited_by_id: user.id } : {}) })
        .where('id', '=', before.id)
        .returning(ISSUE_COLUMNS)
        .executeTakeFirstOrThrow();
      changes.updated_at = { previous: before.updated_at, current: at };
      for (const body of notes) await this.notes.addSystemNote(trx, 'Issue', updated, user.id, body);
      if (action !== 'update') {
        await trx
          .insertInto('resource_state_events')
          .values({
            issue_id: updated.id,
            merge_request_id: null,
            user_id: user.id,
            state: action === 'close' ? 'closed' : 'reopened',
            source_commit: null,
            created_at: at,
          })
          .execute();
        const note = action === 'close' ? (opts.closedVia ? `closed via ${opts.closedVia}` : 'closed') : 'reopened';
        await this.notes.addSystemNote(trx, 'Issue', updated, user.id, note);
      }
      await recordIssueEvent(trx, this.deps, user, updated, action, changes);
      return updated;
    });
    return { ...f, issue, assigneeIds: await this.assigneeIdsOf(issue.id) };
  }

  /** Time tracking (TimeTrackable): an estimate, spent time added or reset; the issue hook shows the change. */
  async trackTime(actor: Actor, f: FoundIssue, change: { estimate?: number; spent?: number | 'reset' }): Promise<FoundIssue> {
    if (!actor.user) throw Errors.unauthorized();
    if (!this.canUpdate(actor, f)) throw Errors.forbidden();
    const user = actor.user;
    const before = f.issue;
    const set: Partial<IssueRow> = {};
    if (change.estimate !== undefined) set.time_estimate = change.estimate;
    if (change.spent === 'reset') set.total_time_spent = 0;
    else if (change.spent !== undefined) set.total_time_spent = Math.max(0, before.total_time_spent + change.spent);
    const issue = await this.db.transaction().execute(async (trx) => {
      const now = nowIso();
      const row = await trx
        .updateTable('issues')
        .set({ ...set, updated_at: now })
        .where('id', '=', before.id)
        .returning(ISSUE_COLUMNS)
        .executeTakeFirstOrThrow();
      const changes: HookChanges = {};
      if (set.time_estimate !== undefined && set.time_estimate !== before.time_estimate) {
        changes.time_estimate = { previous: before.time_estimate, current: set.time_estimate };
      }
      if (set.total_time_spent !== undefined && set.total_time_spent !== before.total_time_spent) {
        changes.total_time_spent = { previous: before.total_time_spent, current: set.total_time_spent };
        changes.time_change = { previous: 0, current: set.total_time_spent - before.total_time_spent };
      }
      changes.updated_at = { previous: before.updated_at, current: now };
      await recordIssueEvent(trx, this.deps, user, row, 'update', changes);
      return row;
    });
    return { ...f, issue };
  }

  /**
   * Issues::CloseService on behalf of a merge or a commit (`via`: "merge request !3", "commit 1a2b3c4d"): the
   * issue closes when the user may update it and it is open; false otherwise (nothing written).
   */
  async closeVia(user: UserRow, issueId: number, via: string): Promise<boolean> {
    const row = await this.db.selectFrom('issues').select(['project_id', 'iid', 'state']).where('id', '=', issueId).executeTakeFirst();
    if (!row || row.state !== 'opened' || user.state !== 'active') return false;
    const actor = userActor(user, { isAdmin: user.is_admin === 1 });
    let f: FoundIssue;
    try {
      f = await this.find(actor, row.project_id, row.iid);
    } catch {
      return false;
    }
    if (!this.canUpdate(actor, f)) return false;
    await this.update(actor, f, { state_event: 'close' }, { closedVia: via });
    return true;
  }

  private async assigneeNote(trx: Kysely<Database>, before: number[], after: number[]): Promise<string> {
    const ids = unique([...before, ...after]);
    const users = new Map(
      (ids.length ? await trx.selectFrom('users').select(['id', 'username']).where('id', 'in', ids).execute() : []).map((u) => [u.id, u.username]),
    );
    const names = (xs: number[]) => xs.map((id) => `@${users.get(id) ?? 'ghost'}`).join(', ');
    const added = after.filter((id) => !before.includes(id));
    const removed = before.filter((id) => !after.includes(id));
    const parts: string[] = [];
    if (added.length) parts.push(`assigned to ${names(added)}`);
    if (removed.length) parts.push(`unassigned ${names(removed)}`);
    return parts.join(' and ');
  }

  // ---- reorder ------------------------------------------------------------------------------------

  /**
   * PUT …/reorder (Issues::ReorderService, RelativePositioning): the issue goes after `afterId` and/or before
   * `beforeId` (issue ids of the same project) in relative_position; positions are spaced by a gap and the
   * project's positioned issues are spread again when two neighbours leave no room. 422 when a neighbour is not
   * an issue of the project.
   */
  async reorder(actor: Actor, f: FoundIssue, afterId: number | undefined, beforeId: number | undefined): Promise<FoundIssue> {
    if (!actor.user) throw Errors.unauthorized();
    if (!this.canUpdate(actor, f)) throw Errors.forbidden();
    const GAP = 1024;
    const issue = await this.db.transaction().execute(async (trx) => {
      const neighbour = async (id: number | undefined) => {
        if (id === undefined) return undefined;
        const row = isInt32(id)
          ? await trx.selectFrom('issues').select(ISSUE_COLUMNS).where('id', '=', id).where('project_id', '=', f.project.id).executeTakeFirst()
          : undefined;
        if (!row || row.id === f.issue.id) throw Errors.refused({ error: 'Unprocessable Entity' } as never, 422);
        return row;
      };
      const positioned = async (row: IssueRow | undefined) => {
        if (!row || row.relative_position !== null) return row;
        const max = await trx
          .selectFrom('issues')
          .select((eb) => eb.fn.max('relative_position').as('m'))
          .where('project_id', '=', f.project.id)
          .executeTakeFirst();
        const pos = Number(max?.m ?? 0) + GAP;
        return trx.updateTable('issues').set({ relative_position: pos }).where('id', '=', row.id).returning(ISSUE_COLUMNS).executeTakeFirstOrThrow();
      };
      let after = await positioned(await neighbour(afterId));
      let before = await positioned(await neighbour(beforeId));
      if (after && before && before.relative_position! - after.relative_position! < 2) {
        // no room between them: spread the project's positioned issues again, keeping their order
        const rows = await trx
          .selectFrom('issues')
          .select(['id'])
          .where('project_id', '=', f.project.id)
          .where('relative_position', 'is not', null)
          .where('id', '<>', f.issue.id)
          .orderBy('relative_position')
          .orderBy('id')
          .execute();
        for (const [i, r] of rows.entries())
          await trx
            .updateTable('issues')
            .set({ relative_position: (i + 1) * GAP })
            .where('id', '=', r.id)
            .execute();
        after = await trx.selectFrom('issues').select(ISSUE_COLUMNS).where('id', '=', after.id).executeTakeFirstOrThrow();
        before = await trx.selectFrom('issues').select(ISSUE_COLUMNS).where('id', '=', before.id).executeTakeFirstOrThrow();
      }
      const position =
        after && before
          ? Math.floor((after.relative_position! + before.relative_position!) / 2)
          : after
            ? after.relative_position! + GAP
            : before
              ? before.relative_position! - GAP
              : f.issue.relative_position;
      return trx
        .updateTable('issues')
        .set({ relative_position: position, updated_at: nowIso() })
        .where('id', '=', f.issue.id)
        .returning(ISSUE_COLUMNS)
        .executeTakeFirstOrThrow();
    });
    return { ...f, issue };
  }

  // ---- move --------------------------------------------------------------------------------------

  /**
   * Issues::MoveService through POST …/move: a new issue in the target project with the title, description,
   * confidentiality, due date, assignees, the labels and milestone the target knows by title, the notes and award
   * emoji; the original is closed with moved_to_id, and each side says where the other is. Needs admin_issue in
   * both projects (400 as GitLab's MoveError otherwise).
   */
  async move(actor: Actor, f: FoundIssue, toProject: string | number): Promise<FoundIssue> {
    const user = actor.user;
    if (!user) throw Errors.unauthorized();
    const target = await this.deps.resolve.project(actor, toProject);
    if (target.project.id === f.project.id) throw Errors.refused('Cannot move issue to project it originates from!');
    const may = (access: ProjectAccess, project: ProjectRow) => (actor.isAdmin || access.abilities.has('admin_issue')) && canReadIssues(actor, project, access);
    if (f.issue.moved_to_id !== null || !may(f.access, f.project) || !may(target.access, target.project)) {
      throw Errors.refused('Cannot move issue due to insufficient permissions!');
    }
    const oldLabels = await this.labelRows(this.db, f.issue.id);
    const oldMilestone =
      f.issue.milestone_id !== null ? await this.db.selectFrom('milestones').selectAll().where('id', '=', f.issue.milestone_id).executeTakeFirst() : undefined;
    const assignees = await this.assignableUsers(f.assigneeIds, target.project, target.namespace);
    const moved = await this.db.transaction().execute(async (trx) => {
      const at = nowIso();
      const labels = oldLabels.length
        ? await this.labels.findOrCreateByTitles(
            actor,
            target.project,
            oldLabels.map((l) => l.title),
            { db: trx, access: target.access, findOnly: true },
          )
        : [];
      const milestone = oldMilestone ? await this.milestones.findForProjectByTitle(target.project, oldMilestone.title, trx) : undefined;
      const iid = await nextIid(trx, 'issues', 'Project', target.project.id);
      const old = f.issue;
      const row = await trx
        .insertInto('issues')
        .values({
          project_id: target.project.id,
          iid,
          title: old.title,
          description: old.description,
          state: 'opened',
          author_id: old.author_id,
          milestone_id: milestone?.id ?? null,
          confidential: old.confidential,
          discussion_locked: old.discussion_locked,
          due_date: old.due_date,
          weight: null,
          closed_by_id: null,
          closed_at: null,
          issue_type: old.issue_type,
          time_estimate: old.time_estimate,
          total_time_spent: old.total_time_spent,
          upvotes: old.upvotes,
          downvotes: old.downvotes,
          user_notes_count: old.user_notes_count,
          created_at: old.created_at,
          updated_at: at,
        })
        .returning(ISSUE_COLUMNS)
        .executeTakeFirstOrThrow();
      for (const user_id of assignees) await trx.insertInto('issue_assignees').values({ issue_id: row.id, user_id, created_at: at }).execute();
      for (const l of labels)
        await trx.insertInto('issue_labels').values({ issue_id: row.id, label_id: l.id, project_id: row.project_id, created_at: at }).execute();
      await this.copyNotes(trx, old.id, row);
      await trx
        .insertInto('award_emoji')
        .columns(['awardable_type', 'awardable_id', 'user_id', 'name', 'created_at', 'updated_at'])
        .expression((eb) =>
          eb
            .selectFrom('award_emoji')
            .select([eb.val('Issue').as('awardable_type'), eb.val(row.id).as('awardable_id'), 'user_id', 'name', 'created_at', 'updated_at'])
            .where('awardable_type', '=', 'Issue')
            .where('awardable_id', '=', old.id),
        )
        .execute();
      const closed = await trx
        .updateTable('issues')
        .set({ state: 'closed', closed_at: at, closed_by_id: user.id, moved_to_id: row.id, updated_at: at, updated_by_id: user.id })
        .where('id', '=', old.id)
        .returning(ISSUE_COLUMNS)
        .executeTakeFirstOrThrow();
      const full = (p: ProjectRow, ns: NamespaceRow, i: IssueRow) => `${ns.full_path}/${p.path}#${i.iid}`;
      await this.notes.addSystemNote(trx, 'Issue', row, user.id, `moved from ${full(f.project, f.namespace, old)}`);
      await this.notes.addSystemNote(trx, 'Issue', closed, user.id, `moved to ${full(target.project, target.namespace, row)}`);
      await trx
        .insertInto('resource_state_events')
        .values({ issue_id: old.id, merge_request_id: null, user_id: user.id, state: 'closed', source_commit: null, created_at: at })
        .execute();
      await recordIssueEvent(trx, this.deps, user, row, 'open');
      await recordIssueEvent(trx, this.deps, user, closed, 'close', {
        state_id: { previous: 1, current: 2 },
        moved_to_id: { previous: null, current: row.id },
      });
      return row;
    });
    return { issue: moved, assigneeIds: assignees, project: target.project, namespace: target.namespace, access: target.access };
  }

  /**
   * The notes of an issue, copied onto its moved copy (Notes::CopyService): the same discussions, authors and
   * times; the merge requests that mentioned it mention the copy, with the copied notes.
   */
  private async copyNotes(trx: Kysely<Database>, fromId: number, to: IssueRow): Promise<void> {
    const notes = await trx.selectFrom('notes').selectAll().where('noteable_type', '=', 'Issue').where('noteable_id', '=', fromId).orderBy('id').execute();
    const discussions = new Map<string, string>();
    const copies = new Map<number, number>();
    for (const n of notes) {
      let discussion = discussions.get(n.discussion_id);
      if (!discussion) discussions.set(n.discussion_id, (discussion = newDiscussionId()));
      const { id, ...rest } = n;
      const copy = await trx
        .insertInto('notes')
        .values({ ...rest, project_id: to.project_id, noteable_id: to.id, discussion_id: discussion })
        .returning('id')
        .executeTakeFirstOrThrow();
      copies.set(id, copy.id);
    }
    const mentions = await trx.selectFrom('merge_requests_mentioning_issues').selectAll().where('issue_id', '=', fromId).execute();
    for (const m of mentions) {
      await trx
        .insertInto('merge_requests_mentioning_issues')
        .values({ ...m, issue_id: to.id, note_id: m.note_id === null ? null : (copies.get(m.note_id) ?? null) })
        .execute();
    }
  }

  // ---- delete -------------------------------------------------------------------------------------

  /** DELETE: destroy_issue (project owners and administrators); its notes and awards go with it. */
  async remove(actor: Actor, f: FoundIssue): Promise<void> {
    if (!actor.user) throw Errors.unauthorized();
    if (!(actor.isAdmin || f.access.abilities.has('destroy_issue'))) throw Errors.forbidden();
    await this.db.transaction().execute(async (trx) => {
      const notes = trx.selectFrom('notes').select('id').where('noteable_type', '=', 'Issue').where('noteable_id', '=', f.issue.id);
      await trx.deleteFrom('award_emoji').where('awardable_type', '=', 'Note').where('awardable_id', 'in', notes).execute();
      await trx.deleteFrom('notes').where('noteable_type', '=', 'Issue').where('noteable_id', '=', f.issue.id).execute();
      await trx.deleteFrom('award_emoji').where('awardable_type', '=', 'Issue').where('awardable_id', '=', f.issue.id).execute();
      await trx.deleteFrom('subscriptions').where('subscribable_type', '=', 'Issue').where('subscribable_id', '=', f.issue.id).execute();
      await trx.deleteFrom('todos').where('target_type', '=', 'Issue').where('target_id', '=', f.issue.id).execute();
      await trx.deleteFrom('issues').where('id', '=', f.issue.id).execute();
    });
  }

  // ---- people -------------------------------------------------------------------------------------

  /** Participants (Participable): the author, the assignees and the authors of notes the caller may read. */
  async participants(actor: Actor, f: FoundIssue): Promise<UserRow[]> {
    const noteable = noteableOf('Issue', f, f.issue);
    const notes = await (await this.notes.list(actor, noteable, { sort: 'asc', activity: 'only_comments' })).execute();
    const ids = unique([f.issue.author_id, ...f.assigneeIds, ...notes.map((n) => n.author_id)].filter((x): x is number => x !== null));
    if (!ids.length) return [];
    const rows = await this.db.selectFrom('users').selectAll().where('id', 'in', ids).execute();
    return ids.map((id) => rows.find((u) => u.id === id)).filter((u): u is UserRow => !!u);
  }

  /** Subscribable#subscribed?: an explicit choice, else taking part (author, assignee, commenter). */
  async isSubscribed(actor: Actor, f: FoundIssue): Promise<boolean> {
    const id = actor.user?.id;
    if (id === undefined) return false;
    const explicit = await this.db
      .selectFrom('subscriptions')
      .select('subscribed')
      .where('subscribable_type', '=', 'Issue')
      .where('subscribable_id', '=', f.issue.id)
      .where('user_id', '=', id)
      .executeTakeFirst();
    if (explicit) return explicit.subscribed === 1;
    if (f.issue.author_id === id || f.assigneeIds.includes(id)) return true;
    const note = await this.db
      .selectFrom('notes')
      .select('id')
      .where('noteable_type', '=', 'Issue')
      .where('noteable_id', '=', f.issue.id)
      .where('author_id', '=', id)
      .limit(1)
      .executeTakeFirst();
    return !!note;
  }

  /** POST …/subscribe and …/unsubscribe: false when the caller already is (or is not) subscribed — 304. */
  async setSubscription(actor: Actor, f: FoundIssue, on: boolean): Promise<boolean> {
    const user = actor.user;
    if (!user) throw Errors.unauthorized();
    if ((await this.isSubscribed(actor, f)) === on) return false;
    const now = nowIso();
    await this.db.transaction().execute(async (trx) => {
      const existing = await trx
        .selectFrom('subscriptions')
        .select('id')
        .where('subscribable_type', '=', 'Issue')
        .where('subscribable_id', '=', f.issue.id)
        .where('user_id', '=', user.id)
        .executeTakeFirst();
      if (existing) {
        await trx
          .updateTable('subscriptions')
          .set({ subscribed: on ? 1 : 0, updated_at: now })
          .where('id', '=', existing.id)
          .execute();
      } else {
        await trx
          .insertInto('subscriptions')
          .values({
            user_id: user.id,
            subscribable_type: 'Issue',
            subscribable_id: f.issue.id,
            project_id: f.issue.project_id,
            subscribed: on ? 1 : 0,
            created_at: now,
            updated_at: now,
          })
          .execute();
      }
    });
    return true;
  }
}

/** The system note of a label change (SystemNotes::IssuablesService#change_label_note, with label references). */
function labelNote(added: LabelRow[], removed: LabelRow[]): string {
  const refs = (ls: LabelRow[]) => ls.map((l) => `~${l.id}`).join(' ');
  const parts: string[] = [];
  if (added.length) parts.push(`added ${refs(added)} label${added.length > 1 ? 's' : ''}`);
  if (removed.length) parts.push(`removed ${refs(removed)} label${removed.length > 1 ? 's' : ''}`);
  return parts.join(' and ');
}
