// API::Entities::Discussion: a thread's id, whether it is an individual note, and its notes oldest first.
import { Type } from 'typebox';
import type { NoteRow } from '../../../db/schema.ts';
import { NoteSchema, toNote, type NoteContext } from './note.entity.ts';

export const DiscussionSchema = Type.Object({
  id: Type.String(),
  individual_note: Type.Boolean(),
  notes: Type.Array(NoteSchema),
});

/** `notes`: one discussion's notes, oldest first (never empty). */
export function toDiscussion(notes: NoteRow[], ctx: NoteContext) {
  return {
    id: notes[0].discussion_id,
    // IndividualNoteDiscussion: a note that is not a DiscussionNote/DiffNote (system notes included)
    individual_note: notes[0].type === null,
    notes: notes.map((n) => toNote(n, ctx)),
  };
}
