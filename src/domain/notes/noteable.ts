// What notes, discussions and award emoji hang on: a merge request or an issue, as the caller found it
// (its project and the caller's access to it). One implementation of notes serves both
// (GitLab's Noteable); the table each keeps its counters in is named here.
import type { Kysely } from 'kysely';
import type { Database, NamespaceRow, ProjectRow, UserRow } from '../../db/schema.ts';
import type { ProjectAccess } from '../access/policy.ts';

export type NoteableType = 'MergeRequest' | 'Issue';

/** The noteable's columns notes read. */
export interface NoteableRow {
  id: number;
  iid: number;
  project_id: number;
  author_id: number | null;
  discussion_locked: number | null;
}

/** A merge request or an issue as the caller found it. */
export interface FoundNoteable {
  type: NoteableType;
  target: NoteableRow;
  project: ProjectRow;
  namespace: NamespaceRow;
  access: ProjectAccess;
  /** Issue: the caller may read the issue as an assignee or its author only (a confidential one): no internal notes */
}

/** The table of each noteable (user_notes_count, upvotes, downvotes, updated_at). */
export const NOTEABLE_TABLE = { MergeRequest: 'merge_requests', Issue: 'issues' } as const satisfies Record<NoteableType, keyof Database>;

/** The web path of each noteable under its project. */
export const NOTEABLE_PATH: Record<NoteableType, string> = { MergeRequest: 'merge_requests', Issue: 'issues' };

/** A merge request or issue found by a feature's finder, as a noteable. */
export function noteableOf(type: NoteableType, f: { project: ProjectRow; namespace: NamespaceRow; access: ProjectAccess }, target: NoteableRow): FoundNoteable {
  return { type, target, project: f.project, namespace: f.namespace, access: f.access };
}

/**
 * The hook attributes of a noteable, which a note hook payload embeds (`merge_request`, `issue`): given by
 * each feature when the container builds the notes service, since notes stand below the features.
 */
export type NoteableHookAttrs = (trx: Kysely<Database>, user: UserRow, noteableId: number) => Promise<Record<string, unknown> | null>;
