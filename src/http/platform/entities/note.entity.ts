// API::Entities::Note for notes of merge requests: the fields GitLab shows, position and commit_id only
// on diff notes, resolved/resolved_by/resolved_at only on resolvable notes.
import { Type, type Static } from 'typebox';
import type { NoteRow } from '../../../db/schema.ts';
import type { UserBasicRow } from '../../../domain/core/user-columns.ts';
import { NullableInteger, NullableString } from '../schemas/common.ts';
import { toUserBasic, UserBasicSchema, type UserRef, type UserViewContext } from './user.entity.ts';

const NullableUser = Type.Union([UserBasicSchema, Type.Null()]);
const AnyObject = Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true });

export const NoteSchema = Type.Object({
  id: Type.Integer(),
  type: NullableString,
  body: Type.String(),
  attachment: Type.Null(),
  author: NullableUser,
  created_at: Type.String(),
  updated_at: Type.String(),
  system: Type.Boolean(),
  noteable_id: NullableInteger, // null on a commit
  noteable_type: Type.String(),
  project_id: Type.Integer(),
  commit_id: Type.Optional(NullableString),
  position: Type.Optional(AnyObject),
  resolvable: Type.Boolean(),
  resolved: Type.Optional(Type.Boolean()),
  resolved_by: Type.Optional(NullableUser),
  resolved_at: Type.Optional(NullableString),
  confidential: Type.Boolean(),
  internal: Type.Boolean(),
  imported: Type.Boolean(),
  imported_from: Type.String(),
  noteable_iid: NullableInteger,
  commands_changes: AnyObject,
});

/** What an entity needs besides the note: the users it shows and the merge request's iid. */
export interface NoteContext {
  users: Map<number, UserBasicRow>;
  user: UserViewContext;
  /** the merge request or issue the notes are on */
  noteable: { id: number; iid: number };
}

const TEXT_POSITION_KEYS = ['base_sha', 'start_sha', 'head_sha', 'old_path', 'new_path', 'position_type', 'old_line', 'new_line', 'line_range'];
const IMAGE_POSITION_KEYS = ['base_sha', 'start_sha', 'head_sha', 'old_path', 'new_path', 'position_type', 'width', 'height', 'x', 'y'];

/** Gitlab::Diff::Position#to_h: the keys of its type, null when not given. */
function positionHash(json: string | null): Record<string, unknown> {
  const p = json ? (JSON.parse(json) as Record<string, unknown>) : {};
  const keys = p.position_type === 'image' ? IMAGE_POSITION_KEYS : TEXT_POSITION_KEYS;
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = p[k] ?? null;
  return out;
}

function userOf(id: number | null, ctx: NoteContext): UserRef | null {
  const row = id === null ? undefined : ctx.users.get(id);
  return row ? toUserBasic(row, ctx.user) : null;
}

export type NoteEntity = Static<typeof NoteSchema>;

export function toNote(n: NoteRow, ctx: NoteContext): NoteEntity {
  const out: Record<string, unknown> = {
    id: n.id,
    type: n.type,
    body: n.body,
    attachment: null,
    author: userOf(n.author_id, ctx),
    created_at: n.created_at,
    updated_at: n.updated_at,
    system: n.system === 1,
    noteable_id: n.noteable_id,
    noteable_type: n.noteable_type,
    project_id: n.project_id,
  };
  if (n.type === 'DiffNote') {
    out.commit_id = null;
    out.position = positionHash(n.position);
  }
  const resolvable = n.resolvable === 1 && n.system === 0;
  out.resolvable = resolvable;
  if (resolvable) {
    out.resolved = n.resolved_at !== null;
    out.resolved_by = userOf(n.resolved_by_id, ctx);
    out.resolved_at = n.resolved_at;
  }
  out.confidential = n.internal === 1;
  out.internal = n.internal === 1;
  out.imported = false;
  out.imported_from = 'none';
  out.noteable_iid = n.noteable_id === ctx.noteable.id ? ctx.noteable.iid : null;
  out.commands_changes = {};
  return out as NoteEntity;
}

/** Every user a page of notes shows (authors, resolvers). */
export function noteUserIds(notes: NoteRow[]): number[] {
  const ids: number[] = [];
  for (const n of notes) {
    if (n.author_id !== null) ids.push(n.author_id);
    if (n.resolved_by_id !== null) ids.push(n.resolved_by_id);
  }
  return ids;
}
