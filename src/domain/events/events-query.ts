// Reading user activity: GitLab's EventsFinder (source, by_current_user_access, action, target_type,
// before/after, sort) as one SQL query, then Event#visible_to_user? on the page and the rows a page
// shows (authors, push payloads, merge requests, notes) loaded with one query per kind.
import { sql, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../db/connect.ts';
import type { CommitNoteRow, Database, EventRow, MergeRequestRow, NamespaceRow, NoteRow, ProjectRow, PushEventPayloadRow, UserRow } from '../../db/schema.ts';
import { addDays } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import { traversalIds, type Membership, type Policy, type ProjectAccess } from '../access/policy.ts';
import type { CustomPermission } from '../core/roles.ts';
import { featureOpen } from '../access/visibility.ts';
import { canReadMergeRequests } from '../merge-requests/merge-requests-query.ts';
import { ProjectsQuery } from '../projects/projects-query.ts';
import { basicByIds, type UserBasicRow } from '../core/user-columns.ts';
import { COMMIT_NOTE_TARGET, EVENT_ACTIONS, type EventActionName, NOTE_TARGET_TYPES } from '../core/activity.ts';

/** Event.target_types and the class names they filter on (EventsFinder#by_target_type). */
export const EVENT_TARGET_TYPES = {
  issue: 'Issue',
  milestone: 'Milestone',
  merge_request: 'MergeRequest',
  note: 'Note',
  project: 'Project',
  snippet: 'Snippet',
  user: 'User',
  wiki: 'WikiPage::Meta',
  design: 'DesignManagement::Design',
} as const;
export type EventTargetTypeParam = keyof typeof EVENT_TARGET_TYPES;
export const EVENT_ACTION_NAMES = Object.keys(EVENT_ACTIONS) as EventActionName[];

/** Whose events: a user's (their contributions), a project's, or those of the projects a user is a member of (scope=all). */
export type EventSource = { kind: 'user'; user: UserRow } | { kind: 'project'; project: ProjectRow } | { kind: 'authorized'; userId: number };

export interface EventFilters {
  action?: EventActionName;
  targetType?: EventTargetTypeParam;
  /** YYYY-MM-DD: events created before that day began */
  before?: string;
  /** YYYY-MM-DD: events created after that day ended */
  after?: string;
  sort: 'asc' | 'desc';
}

/** One event as a page shows it. */
export interface EventView {
  event: EventRow;
  author: UserBasicRow | null;
  push: PushEventPayloadRow | null;
  mergeRequest: Pick<MergeRequestRow, 'id' | 'iid' | 'title'> | null;
  note: NoteRow | null;
  /** the note's merge request (its title is the event's target_title) */
  noteMergeRequest: Pick<MergeRequestRow, 'id' | 'iid' | 'title'> | null;
}

type EventsQB = SelectQueryBuilder<Database, 'events', EventRow>;

export class EventsQuery {
  private readonly projectsQuery: ProjectsQuery;

  constructor(
    private readonly db: Db,
    private readonly policy: Policy,
  ) {
    this.projectsQuery = new ProjectsQuery(db, policy);
  }

  /** the projects `actor` may see (one query), once per request: `prepare` may start it before the list is built */
  private readonly visibleOf = new WeakMap<Actor, ReturnType<ProjectsQuery['visible']>>();

  private visibleProjects(actor: Actor): ReturnType<ProjectsQuery['visible']> {
    let v = this.visibleOf.get(actor);
    if (!v) this.visibleOf.set(actor, (v = this.projectsQuery.visible(actor)));
    return v;
  }

  /** Starts what `list` will need of the viewer (their projects), so that it overlaps another lookup. */
  prepare(actor: Actor): void {
    this.visibleProjects(actor).catch(() => {}); // a failure surfaces when `list` awaits it
  }

  /** EventsFinder#cannot_access_private_profile?: a private profile's events are for its owner and administrators. */
  static hidesProfile(actor: Actor, user: UserRow): boolean {
    return user.private_profile === 1 && !actor.isAdmin && actor.user?.id !== user.id;
  }

  /** The events of `source` in projects `actor` may see, filtered and ordered by id as GitLab does. */
  async list(actor: Actor, source: EventSource, f: EventFilters): Promise<EventsQB> {
    const k = this.db.kysely;
    let q: EventsQB = k.selectFrom('events').selectAll('events');
    // SQLite: the project filters test `+project_id`, so that a page walks the (author_id, id) index or
    // the ids in the list's order rather than collecting every event of the projects and sorting them
    // all; its count (at most 10,001) reads events_author_project or events_project_action alone.
    const projectColumn = this.db.dialect === 'sqlite' ? sql<number>`+events.project_id` : sql.ref<number>('events.project_id');
    if (source.kind === 'user') {
      if (EventsQuery.hidesProfile(actor, source.user)) return q.where(sql<SqlBool>`1 = 0`);
      q = q.where('events.author_id', '=', source.user.id);
    } else if (source.kind === 'project') {
      q = q.where('events.project_id', '=', source.project.id);
    } else {
      const authorized = await this.projectsQuery.memberProjects(source.userId);
      q = q.where((eb) => eb(projectColumn, 'in', k.selectFrom('projects').select('projects.id').where(authorized)));
    }
    // by_current_user_access: events of projects the viewer may see (none without a project)
    if (source.kind !== 'project') {
      if (actor.isAdmin) q = q.where((eb) => eb(projectColumn, 'is not', null));
      else {
        const visible = await this.visibleProjects(actor);
        q = q.where((eb) => eb(projectColumn, 'in', k.selectFrom('projects').select('projects.id').where(visible)));
      }
    }
    if (f.action) q = q.where('events.action', '=', EVENT_ACTIONS[f.action]);
    if (f.targetType === 'note') q = q.where('events.target_type', 'in', ['Note', COMMIT_NOTE_TARGET]);
    else if (f.targetType) q = q.where('events.target_type', '=', EVENT_TARGET_TYPES[f.targetType]);
    if (f.before) q = q.where('events.created_at', '<', `${f.before}T00:00:00.000Z`);
    if (f.after) q = q.where('events.created_at', '>=', `${addDays(f.after, 1)}T00:00:00.000Z`);
    return q.orderBy('events.id', f.sort);
  }

  /**
   * Event#visible_to_user? for each event of a page, and what the visible ones show. The page's
   * projects are read once and the policy asked once per project.
   */
  async present(actor: Actor, rows: EventRow[]): Promise<{ views: EventView[]; users: Map<number, UserBasicRow> }> {
    if (!rows.length) return { views: [], users: new Map() };
    const k = this.db.kysely;
    const ids = rows.map((r) => r.id);
    const projectIds = [...new Set(rows.flatMap((r) => (r.project_id === null ? [] : [r.project_id])))];
    const mrIds = rows.filter((r) => r.target_type === 'MergeRequest' && r.target_id !== null).map((r) => r.target_id!);
    const isNote = (r: EventRow) =>
      r.target_type !== null && r.target_type !== COMMIT_NOTE_TARGET && NOTE_TARGET_TYPES.has(r.target_type) && r.target_id !== null;
    const noteIds = rows.filter(isNote).map((r) => r.target_id!);
    const commitNoteIds = rows.filter((r) => r.target_type === COMMIT_NOTE_TARGET && r.target_id !== null).map((r) => r.target_id!);
    // Two rounds of queries run side by side: what the rows name (projects and their namespaces, push
    // payloads, notes, event authors, the viewer's memberships), then what those name (merge requests of
    // notes, note authors not loaded yet; a page of pushes needs no second round).
    const users = async (ids: number[]) => [...(await basicByIds(k, ids)).values()];
    const userId = actor.user?.id;
    // the viewer's memberships: in the page's projects and in every group (the groups above them are not known yet)
    const [projects, namespaces, pushes, notes, commitNotes, eventAuthors, rowsOf] = await Promise.all([
      projectIds.length ? k.selectFrom('projects').selectAll().where('id', 'in', projectIds).execute() : [],
      projectIds.length
        ? k
            .selectFrom('namespaces')
            .selectAll()
            .where('id', 'in', k.selectFrom('projects').select('namespace_id').where('id', 'in', projectIds))
            .execute()
        : [],
      rows.some((r) => r.action === EVENT_ACTIONS.pushed) ? k.selectFrom('push_event_payloads').selectAll().where('event_id', 'in', ids).execute() : [],
      noteIds.length ? k.selectFrom('notes').selectAll().where('id', 'in', noteIds).execute() : [],
      commitNoteIds.length ? k.selectFrom('commit_notes').selectAll().where('id', 'in', commitNoteIds).execute() : [],
      users([...new Set(rows.map((r) => r.author_id))]),
      userId === undefined ? [] : this.policy.memberships(userId, { projectIds, groupIds: 'all' }),
    ]);
    for (const n of notes) if (n.noteable_type === 'MergeRequest') mrIds.push(n.noteable_id);
    const loaded = new Set(eventAuthors.map((u) => u.id));
    const noteUsers = new Set<number>();
    for (const n of [...notes, ...commitNotes])
      for (const id of [n.author_id, 'resolved_by_id' in n ? n.resolved_by_id : null]) if (id != null && !loaded.has(id)) noteUsers.add(id);
    const [mrs, noteAuthors] = await Promise.all([
      mrIds.length
        ? k
            .selectFrom('merge_requests')
            .select(['id', 'iid', 'title'])
            .where('id', 'in', [...new Set(mrIds)])
            .execute()
        : [],
      users([...noteUsers]),
    ]);
    const nsById = new Map<number, NamespaceRow>(namespaces.map((n) => [n.id, n]));
    // The policy's answer per project from the viewer's memberships (memoised per level, visibility and archived state).
    const answers = new Map<string, Promise<ProjectAccess>>();
    const access = new Map<number, { project: ProjectRow; access: ProjectAccess }>();
    for (const p of projects) {
      const ns = nsById.get(p.namespace_id);
      if (!ns) continue;
      const m: Membership = { level: 0, directLevel: 0, permissions: new Set() };
      if (userId !== undefined && ns.type === 'User' && ns.owner_id === userId) m.level = 50;
      for (const r of rowsOf) {
        const mine =
          (r.source_type === 'Project' && r.source_id === p.id) ||
          (r.source_type === 'Namespace' && ns.type === 'Group' && traversalIds(ns).includes(r.source_id));
        if (!mine) continue;
        m.level = Math.max(m.level, r.access_level);
        if (r.source_type === 'Project') m.directLevel = Math.max(m.directLevel, r.access_level);
        if (r.permissions) for (const [perm, on] of Object.entries(JSON.parse(r.permissions))) if (on) m.permissions.add(perm as CustomPermission);
      }
      const key = `${m.level}:${m.directLevel}:${[...m.permissions].sort().join(',')}:${p.visibility}:${p.archived}`;
      let answer = answers.get(key);
      if (!answer) {
        // the policy asked through a view of itself that knows this membership already
        const known: Policy = Object.create(this.policy, { membership: { value: async () => m } });
        answers.set(key, (answer = known.project(actor, p, ns)));
      }
      access.set(p.id, { project: p, access: await answer });
    }
    const pushById = new Map(pushes.map((p) => [p.event_id, p]));
    const noteById = new Map(notes.map((n) => [n.id, n]));
    const commitNoteById = new Map(commitNotes.map((n) => [n.id, asNote(n)]));
    const mrById = new Map(mrs.map((m) => [m.id, m]));

    const visible: EventView[] = [];
    for (const event of rows) {
      const target = event.project_id === null ? undefined : access.get(event.project_id);
      if (!target) continue;
      const note =
        event.target_id === null
          ? null
          : event.target_type === COMMIT_NOTE_TARGET
            ? (commitNoteById.get(event.target_id) ?? null)
            : isNote(event)
              ? (noteById.get(event.target_id) ?? null)
              : null;
      const mergeRequest = event.target_type === 'MergeRequest' && event.target_id !== null ? (mrById.get(event.target_id) ?? null) : null;
      if (!this.visibleTo(actor, event, target.project, target.access, { note, mergeRequest })) continue;
      visible.push({
        event,
        author: null,
        push: pushById.get(event.id) ?? null,
        mergeRequest,
        note,
        noteMergeRequest: note && note.noteable_type === 'MergeRequest' ? (mrById.get(note.noteable_id) ?? null) : null,
      });
    }
    const usersById = new Map([...eventAuthors, ...noteAuthors].map((u) => [u.id, u]));
    for (const v of visible) v.author = usersById.get(v.event.author_id) ?? null;
    return { views: visible, users: usersById };
  }

  /** Event#visible_to_user?: the capability its kind needs, on its target or its project. */
  private visibleTo(
    actor: Actor,
    e: EventRow,
    project: ProjectRow,
    access: ProjectAccess,
    t: { note: NoteRow | null; mergeRequest: Pick<MergeRequestRow, 'id'> | null },
  ): boolean {
    const readProject = actor.isAdmin || access.abilities.has('read_project');
    if (!readProject) return false;
    if (e.action === EVENT_ACTIONS.pushed) return canDownloadCode(actor, project, access);
    if (e.target_type === null) {
      // membership changes and created projects: read_project; other target-less events: none
      const a = e.action;
      return a === EVENT_ACTIONS.joined || a === EVENT_ACTIONS.left || a === EVENT_ACTIONS.expired || a === EVENT_ACTIONS.created;
    }
    if (e.target_type === 'MergeRequest') return t.mergeRequest !== null && canReadMergeRequests(actor, project, access);
    if (NOTE_TARGET_TYPES.has(e.target_type)) {
      const n = t.note;
      if (!n) return false;
      // internal notes: read_internal_note (Reporter and up)
      if (n.internal === 1 && !actor.isAdmin && access.level < 20) return false;
      if (n.noteable_type === 'MergeRequest') return canReadMergeRequests(actor, project, access);
      if (n.noteable_type === 'Commit') return canDownloadCode(actor, project, access);
      return true;
    }
    return false;
  }
}

/** download_code: the repository feature open to the viewer (private: members of its minimum level). */
export function canDownloadCode(actor: Actor, project: ProjectRow, access: ProjectAccess): boolean {
  return featureOpen(actor, project, access, 'repository') && (actor.isAdmin || access.abilities.has('read_code'));
}

/** A comment on a commit as the note a page of events shows (noteable_type Commit, no noteable id). */
function asNote(n: CommitNoteRow): NoteRow {
  return {
    id: n.id,
    project_id: n.project_id,
    noteable_type: 'Commit',
    noteable_id: null as unknown as number,
    discussion_id: '',
    type: null,
    author_id: n.author_id,
    body: n.note,
    system: 0,
    internal: 0,
    resolvable: 0,
    resolved_at: null,
    resolved_by_id: null,
    position: null,
    created_at: n.created_at,
    updated_at: n.updated_at,
  };
}
