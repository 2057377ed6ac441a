// API::Entities::AwardEmoji. `url` is that of a custom emoji; every name here is a standard one (null).
import { Type } from 'typebox';
import type { AwardEmojiRow } from '../../../db/schema.ts';
import type { UserBasicRow } from '../../../domain/core/user-columns.ts';
import { toUserBasic, UserBasicSchema, type UserViewContext } from './user.entity.ts';

export const AwardEmojiSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  user: Type.Union([UserBasicSchema, Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
  awardable_id: Type.Integer(),
  awardable_type: Type.String(),
  url: Type.Null(),
});

export function toAwardEmoji(a: AwardEmojiRow, users: Map<number, UserBasicRow>, ctx: UserViewContext) {
  const u = users.get(a.user_id);
  return {
    id: a.id,
    name: a.name,
    user: u ? toUserBasic(u, ctx) : null,
    created_at: a.created_at,
    updated_at: a.updated_at,
    awardable_id: a.awardable_id,
    awardable_type: a.awardable_type,
    url: null,
  };
}
