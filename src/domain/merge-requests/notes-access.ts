// Who may read and write what around a merge request (GitLab's NotePolicy, the merge request parts of
// ProjectPolicy and IssuablePolicy), as pure functions of the merge request found for the actor.
import type { MergeRequestRow, NamespaceRow, NoteRow, ProjectRow } from '../../db/schema.ts';
import type { Actor } from '../access/actor.ts';
import type { ProjectAccess } from '../access/policy.ts';

/** A merge request as the actor found it (what c.mergeRequests.find returns). */
export interface FoundMergeRequest {
  mr: MergeRequestRow;
  project: ProjectRow;
  namespace: NamespaceRow;
  access: ProjectAccess;
}

/** A member of the project (directly or through its groups), or an administrator. */
export function isMember(actor: Actor, f: FoundMergeRequest): boolean {
  return actor.isAdmin || f.access.level > 0;
}

/** read_internal_note: Reporter and above. */
export function canReadInternal(actor: Actor, f: FoundMergeRequest): boolean {
  return actor.isAdmin || f.access.level >= 20;
}

/** Whether the note is visible to the actor (internal notes only to Reporter and above). */
export function canReadNote(actor: Actor, f: FoundMergeRequest, note: Pick<NoteRow, 'internal'>): boolean {
  return note.internal !== 1 || canReadInternal(actor, f);
}

/**
 * Why the actor may not comment, or null when they may (create_note): signed in, the project not archived,
 * and on a locked discussion only members.
 */
export function createNoteRefusal(actor: Actor, f: FoundMergeRequest): string | null {
  if (!actor.user) return 'unauthenticated';
  if (f.project.archived) return 'archived';
  if (f.mr.discussion_locked === 1 && !isMember(actor, f)) return 'locked';
  return null;
}

/** admin_note: the author or a Maintainer (or an administrator); system notes are never editable. */
export function canAdminNote(actor: Actor, f: FoundMergeRequest, note: Pick<NoteRow, 'author_id' | 'system'>): boolean {
  if (note.system === 1 || f.project.archived) return false;
  if (actor.isAdmin) return true;
  if (actor.user && note.author_id === actor.user.id) {
    return !(f.mr.discussion_locked === 1 && !isMember(actor, f));
  }
  return f.access.abilities.has('admin_merge_request');
}

/** Discussion#can_resolve? / resolve_note: the merge request's author or a Developer and above. */
export function canResolve(actor: Actor, f: FoundMergeRequest): boolean {
  if (!actor.user || f.project.archived) return false;
  if (actor.isAdmin) return true;
  return f.mr.author_id === actor.user.id || f.access.level >= 30;
}

/** set_note_created_at: administrators and project owners. */
export function canSetCreatedAt(actor: Actor, f: FoundMergeRequest): boolean {
  return actor.isAdmin || f.access.level >= 50;
}

/** award_emoji: anyone signed in who can read the merge request, on a project that is not archived. */
export function canAward(actor: Actor, f: FoundMergeRequest): boolean {
  return !!actor.user && !f.project.archived;
}
