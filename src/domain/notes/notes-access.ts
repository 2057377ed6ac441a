// Who may read and write what around a merge request or an issue (GitLab's NotePolicy, the noteable parts
// of ProjectPolicy and IssuablePolicy), as pure functions of the noteable found for the actor.
import type { NoteRow } from '../../db/schema.ts';
import type { Actor } from '../access/actor.ts';
import type { FoundNoteable } from './noteable.ts';

/** A member of the project (directly or through its groups), or an administrator. */
export function isMember(actor: Actor, f: FoundNoteable): boolean {
  return actor.isAdmin || f.access.level > 0;
}

/** read_internal_note: Reporter and above. */
export function canReadInternal(actor: Actor, f: FoundNoteable): boolean {
  return actor.isAdmin || f.access.level >= 20;
}

/** Whether the note is visible to the actor (internal notes only to Reporter and above). */
export function canReadNote(actor: Actor, f: FoundNoteable, note: Pick<NoteRow, 'internal'>): boolean {
  return note.internal !== 1 || canReadInternal(actor, f);
}

/**
 * Why the actor may not comment, or null when they may (create_note): signed in, the project not archived,
 * and on a locked discussion only members.
 */
export function createNoteRefusal(actor: Actor, f: FoundNoteable): string | null {
  if (!actor.user) return 'unauthenticated';
  if (f.project.archived) return 'archived';
  if (f.target.discussion_locked === 1 && !isMember(actor, f)) return 'locked';
  return null;
}

/** admin_note: the author or a Maintainer (or an administrator); system notes are never editable. */
export function canAdminNote(actor: Actor, f: FoundNoteable, note: Pick<NoteRow, 'author_id' | 'system'>): boolean {
  if (note.system === 1 || f.project.archived) return false;
  if (actor.isAdmin) return true;
  if (actor.user && note.author_id === actor.user.id) {
    return !(f.target.discussion_locked === 1 && !isMember(actor, f));
  }
  return f.access.abilities.has('admin_merge_request');
}

/** Discussion#can_resolve? / resolve_note: the noteable's author or a Developer and above. */
export function canResolve(actor: Actor, f: FoundNoteable): boolean {
  if (!actor.user || f.project.archived) return false;
  if (actor.isAdmin) return true;
  return f.target.author_id === actor.user.id || f.access.level >= 30;
}

/** set_note_created_at: administrators and project owners. */
export function canSetCreatedAt(actor: Actor, f: FoundNoteable): boolean {
  return actor.isAdmin || f.access.level >= 50;
}

/** award_emoji: anyone signed in who can read the noteable, on a project that is not archived. */
export function canAward(actor: Actor, f: FoundNoteable): boolean {
  return !!actor.user && !f.project.archived;
}
