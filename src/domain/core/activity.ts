// User activity (GitLab's events table: GET /events, /users/:id/events, /projects/:id/events), written
// in the same transaction as the system event that describes the change (recordSystemEvent calls this).
//
// Which payloads make which events (GitLab's EventCreateService and where it is called):
// - project_create → created (author: meta.authorId, else the project's creator);
// - user_add_to_team → joined, user_remove_from_team → left (expired when the membership had expired),
//   authored by the member (ProjectMember#post_create_hook / post_destroy_hook); group memberships
//   make no event (GitLab's GroupMember has none);
// - push / tag_push → pushed, with its push_event_payloads row ("pushed new", "deleted", "pushed to");
//   refs of a push that got no push payload (more branches than push_event_hooks_limit) are recorded
//   from its repository_update payload, one bulk event per kind and action of more than 3 refs
//   (Git::ProcessRefChangesService#create_bulk_push_event);
// - merge_request → created / closed / reopened / merged / approved from object_attributes.action;
// - note (not system notes) → commented, the note as target.
// project_destroy makes none: the project's events go with it (GitLab has no such event either).
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { nowIso, todayDate } from '../../lib/time.ts';

export interface ActivityMeta {
  /** who caused the change, when the payload does not say it */
  authorId?: number;
}

/** Event.actions (the numbers stored in events.action). */
export const EVENT_ACTIONS = {
  created: 1,
  updated: 2,
  closed: 3,
  reopened: 4,
  pushed: 5,
  commented: 6,
  merged: 7,
  joined: 8,
  left: 9,
  destroyed: 10,
  expired: 11,
  approved: 12,
} as const;
export type EventActionName = keyof typeof EVENT_ACTIONS;

/** Gitlab::CurrentSettings.push_event_activities_limit: more refs of one kind and action make one bulk event. */
export const PUSH_EVENT_ACTIVITIES_LIMIT = 3;

/**
 * The target type of a comment on a commit: those live in `commit_notes` (their ids overlap the
 * `notes` table's), so their events name them apart; the API shows them as GitLab's `Note`.
 */
export const COMMIT_NOTE_TARGET = 'CommitNote';
/** Every target type of a comment (the API's `note` of an event). */
export const NOTE_TARGET_TYPES: ReadonlySet<string> = new Set(['Note', 'DiffNote', 'DiscussionNote', 'LegacyDiffNote', COMMIT_NOTE_TARGET]);

const ZERO_SHA = '0000000000000000000000000000000000000000';
const BRANCH_PREFIX = 'refs/heads/';
const TAG_PREFIX = 'refs/tags/';

const MR_ACTIONS: Record<string, EventActionName> = {
  open: 'created',
  close: 'closed',
  reopen: 'reopened',
  merge: 'merged',
  approved: 'approved',
};

const ISSUE_ACTIONS: Record<string, EventActionName> = { open: 'created', close: 'closed', reopen: 'reopened' };

/** Refs given a push event in this transaction (the repository_update that follows skips them). */
const recordedRefs = new WeakMap<object, Set<string>>();

type Payload = Record<string, unknown>;
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) ? v : null);
const obj = (v: unknown): Payload => (v && typeof v === 'object' ? (v as Payload) : {});

async function insertEvent(
  trx: Kysely<Database>,
  e: { projectId: number | null; authorId: number; action: EventActionName; targetType?: string | null; targetId?: number | null },
): Promise<number> {
  const now = nowIso();
  const row = await trx
    .insertInto('events')
    .values({
      project_id: e.projectId,
      author_id: e.authorId,
      action: EVENT_ACTIONS[e.action],
      target_type: e.targetType ?? null,
      target_id: e.targetId ?? null,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** PushEventPayloadService#commit_title: the first line of the newest commit's message, at most 70 characters. */
export function commitTitle(commits: unknown): string | null {
  if (!Array.isArray(commits) || !commits.length) return null;
  const message = obj(commits[commits.length - 1]).message;
  if (typeof message !== 'string') return null;
  const i = message.indexOf('\n');
  const first = (i >= 0 ? message.slice(0, i + 1) : message).trim();
  // ActiveSupport's truncate(70): 67 characters and "..."
  return first.length > 70 ? `${first.slice(0, 67)}...` : first;
}

const pushAction = (before: string, after: string) => (before === ZERO_SHA ? 'created' : after === ZERO_SHA ? 'removed' : 'pushed');
const refName = (ref: string) =>
  ref.startsWith(BRANCH_PREFIX) ? ref.slice(BRANCH_PREFIX.length) : ref.startsWith(TAG_PREFIX) ? ref.slice(TAG_PREFIX.length) : ref;

async function pushEvent(trx: Kysely<Database>, p: Payload): Promise<void> {
  const projectId = num(p.project_id);
  const authorId = num(p.user_id);
  const ref = typeof p.ref === 'string' ? p.ref : null;
  if (projectId === null || authorId === null || ref === null) return;
  const before = String(p.before ?? ZERO_SHA);
  const after = String(p.after ?? ZERO_SHA);
  const action = pushAction(before, after);
  const eventId = await insertEvent(trx, { projectId, authorId, action: 'pushed' });
  await trx
    .insertInto('push_event_payloads')
    .values({
      event_id: eventId,
      commit_count: num(p.total_commits_count) ?? 0,
      action,
      ref_type: ref.startsWith(TAG_PREFIX) ? 'tag' : 'branch',
      commit_from: action === 'created' ? null : before,
      commit_to: action === 'removed' ? null : after,
      ref: refName(ref),
      commit_title: commitTitle(p.commits),
      ref_count: null,
    })
    .execute();
  let refs = recordedRefs.get(trx);
  if (!refs) recordedRefs.set(trx, (refs = new Set()));
  refs.add(`${projectId}:${ref}`);
}

/** The refs of a change that no push / tag_push payload described: single events, or bulk ones. */
async function remainingPushEvents(trx: Kysely<Database>, p: Payload): Promise<void> {
  const projectId = num(p.project_id);
  const authorId = num(p.user_id);
  if (projectId === null || authorId === null || !Array.isArray(p.changes)) return;
  const seen = recordedRefs.get(trx);
  const groups = new Map<string, Payload[]>();
  for (const c of p.changes.map(obj)) {
    const ref = typeof c.ref === 'string' ? c.ref : '';
    if (!ref.startsWith(BRANCH_PREFIX) && !ref.startsWith(TAG_PREFIX)) continue;
    if (seen?.has(`${projectId}:${ref}`)) continue;
    const key = `${ref.startsWith(TAG_PREFIX) ? 'tag' : 'branch'}:${pushAction(String(c.before), String(c.after))}`;
    const list = groups.get(key);
    if (list) list.push(c);
    else groups.set(key, [c]);
  }
  for (const [key, changes] of groups) {
    if (changes.length <= PUSH_EVENT_ACTIVITIES_LIMIT) {
      for (const c of changes)
        await pushEvent(trx, { project_id: projectId, user_id: authorId, ref: c.ref, before: c.before, after: c.after, total_commits_count: 0 });
      continue;
    }
    const [refType, action] = key.split(':');
    const eventId = await insertEvent(trx, { projectId, authorId, action: 'pushed' });
    await trx
      .insertInto('push_event_payloads')
      .values({
        event_id: eventId,
        commit_count: 0,
        action,
        ref_type: refType,
        commit_from: null,
        commit_to: null,
        ref: null,
        commit_title: null,
        ref_count: changes.length,
      })
      .execute();
  }
  recordedRefs.delete(trx);
}

export async function recordActivity(trx: Kysely<Database>, payload: Record<string, unknown>, meta: ActivityMeta): Promise<void> {
  const kind = payload.event_name ?? payload.object_kind;
  switch (kind) {
    case 'project_create': {
      const projectId = num(payload.project_id);
      if (projectId === null) return;
      let authorId = meta.authorId ?? null;
      if (authorId === null) {
        const p = await trx.selectFrom('projects').select('creator_id').where('id', '=', projectId).executeTakeFirst();
        authorId = p?.creator_id ?? null;
      }
      if (authorId !== null) await insertEvent(trx, { projectId, authorId, action: 'created' });
      return;
    }
    case 'user_add_to_team':
    case 'user_remove_from_team': {
      const projectId = num(payload.project_id);
      const authorId = num(payload.user_id);
      if (projectId === null || authorId === null) return;
      const expiresAt = typeof payload.expires_at === 'string' ? payload.expires_at.slice(0, 10) : null;
      const action: EventActionName = kind === 'user_add_to_team' ? 'joined' : expiresAt !== null && expiresAt <= todayDate() ? 'expired' : 'left';
      await insertEvent(trx, { projectId, authorId, action });
      return;
    }
    case 'push':
    case 'tag_push':
      return pushEvent(trx, payload);
    case 'repository_update':
      return remainingPushEvents(trx, payload);
    case 'merge_request': {
      const attrs = obj(payload.object_attributes);
      const action = MR_ACTIONS[String(attrs.action)];
      const authorId = num(obj(payload.user).id) ?? meta.authorId ?? null;
      const projectId = num(attrs.target_project_id) ?? num(obj(payload.project).id);
      const id = num(attrs.id);
      if (!action || authorId === null || projectId === null || id === null) return;
      await insertEvent(trx, { projectId, authorId, action, targetType: 'MergeRequest', targetId: id });
      return;
    }
    case 'issue': {
      // EventCreateService#open_issue / close_issue / reopen_issue
      const attrs = obj(payload.object_attributes);
      const action = ISSUE_ACTIONS[String(attrs.action)];
      const authorId = num(obj(payload.user).id) ?? meta.authorId ?? null;
      const projectId = num(attrs.project_id) ?? num(obj(payload.project).id);
      const id = num(attrs.id);
      if (!action || authorId === null || projectId === null || id === null) return;
      await insertEvent(trx, { projectId, authorId, action, targetType: 'Issue', targetId: id });
      return;
    }
    case 'note': {
      const attrs = obj(payload.object_attributes);
      if (attrs.system === true || attrs.system === 1) return;
      if (attrs.action !== undefined && attrs.action !== 'create') return;
      const authorId = num(obj(payload.user).id) ?? num(attrs.author_id) ?? meta.authorId ?? null;
      const projectId = num(attrs.project_id) ?? num(payload.project_id) ?? num(obj(payload.project).id);
      const id = num(attrs.id);
      if (authorId === null || projectId === null || id === null) return;
      const type = attrs.noteable_type === 'Commit' ? COMMIT_NOTE_TARGET : typeof attrs.type === 'string' && attrs.type ? attrs.type : 'Note';
      await insertEvent(trx, { projectId, authorId, action: 'commented', targetType: type, targetId: id });
      return;
    }
    default:
      return;
  }
}
