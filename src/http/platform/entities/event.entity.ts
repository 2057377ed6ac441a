// API::Entities::Event (and PushEventPayload): GitLab's field order; `note` only on comments, `push_data`
// only on pushes.
import { Type, type Static } from 'typebox';
import { actionName } from '../../../domain/events/action-name.ts';
import { COMMIT_NOTE_TARGET, EVENT_ACTIONS, NOTE_TARGET_TYPES } from '../../../domain/core/activity.ts';
import type { EventView } from '../../../domain/events/events-query.ts';
import type { UserBasicRow } from '../../../domain/core/user-columns.ts';
import { NullableInteger, NullableString } from '../schemas/common.ts';
import { NoteSchema, toNote } from './note.entity.ts';
import { toUserBasic, UserBasicSchema, type UserViewContext } from './user.entity.ts';

export const PushEventPayloadSchema = Type.Object({
  commit_count: Type.Integer(),
  action: Type.String(),
  ref_type: Type.String(),
  commit_from: NullableString,
  commit_to: NullableString,
  ref: NullableString,
  commit_title: NullableString,
  ref_count: NullableInteger,
});

export const EventSchema = Type.Object({
  id: Type.Integer(),
  project_id: NullableInteger,
  action_name: Type.String(),
  target_id: NullableInteger,
  target_iid: NullableInteger,
  target_type: NullableString,
  author_id: Type.Integer(),
  target_title: NullableString,
  created_at: Type.String(),
  note: Type.Optional(NoteSchema),
  author: Type.Optional(UserBasicSchema),
  imported: Type.Boolean(),
  imported_from: Type.String(),
  push_data: Type.Optional(PushEventPayloadSchema),
  author_username: NullableString,
});
export type EventEntity = Static<typeof EventSchema>;

export function toEvent(v: EventView, users: Map<number, UserBasicRow>, ctx: UserViewContext): EventEntity {
  const e = v.event;
  const isNote = e.target_type !== null && NOTE_TARGET_TYPES.has(e.target_type) && v.note !== null;
  const out: Record<string, unknown> = {
    id: e.id,
    project_id: e.project_id,
    action_name: actionName(v),
    target_id: e.target_id,
    target_iid: v.mergeRequest ? v.mergeRequest.iid : e.target_id,
    target_type: e.target_type === COMMIT_NOTE_TARGET ? 'Note' : e.target_type,
    author_id: e.author_id,
    target_title: v.mergeRequest?.title ?? (isNote ? (v.noteMergeRequest?.title ?? null) : null),
    created_at: e.created_at,
  };
  if (isNote) out.note = toNote(v.note!, { users, user: ctx, noteable: v.noteMergeRequest ?? { id: -1, iid: 0 } });
  if (v.author) out.author = toUserBasic(v.author, ctx);
  out.imported = false;
  out.imported_from = 'none';
  if (e.action === EVENT_ACTIONS.pushed && v.push) {
    const p = v.push;
    out.push_data = {
      commit_count: p.commit_count,
      action: p.action,
      ref_type: p.ref_type,
      commit_from: p.commit_from,
      commit_to: p.commit_to,
      ref: p.ref,
      commit_title: p.commit_title,
      ref_count: p.ref_count,
    };
  }
  out.author_username = v.author?.username ?? null;
  return out as EventEntity;
}
