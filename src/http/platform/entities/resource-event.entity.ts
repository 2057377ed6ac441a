// Wire shapes of resource events (Entities::ResourceLabelEvent, ResourceMilestoneEvent, ResourceStateEvent)
// of a merge request or an issue: the event, its user, and the label or milestone it names.
import { Type } from 'typebox';
import type { LabelRow, MilestoneRow } from '../../../db/schema.ts';
import type { UserBasicRow } from '../../../domain/core/user-columns.ts';
import { NullableString } from '../schemas/common.ts';
import { toLabelDetails } from './label.entity.ts';
import { MilestoneRefSchema, toMilestoneRef } from './merge-request.entity.ts';
import { toUserRef, UserRefSchema, type UserViewContext } from './user.entity.ts';

const NullableUser = Type.Unsafe({ type: ['object', 'null'], properties: UserRefSchema.properties, required: UserRefSchema.required });
const LabelSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  description: NullableString,
  description_html: Type.String(),
  text_color: Type.String(),
  color: Type.String(),
});
const eventBase = {
  id: Type.Integer(),
  user: NullableUser,
  created_at: Type.String(),
  resource_type: Type.String(),
  resource_id: Type.Integer(),
};
export const LabelEventSchema = Type.Object({
  ...eventBase,
  label: Type.Unsafe({ type: ['object', 'null'], properties: LabelSchema.properties, required: LabelSchema.required }),
  action: Type.String(),
});
export const MilestoneEventSchema = Type.Object({
  ...eventBase,
  milestone: Type.Unsafe({ type: ['object', 'null'], properties: MilestoneRefSchema.properties, required: MilestoneRefSchema.required }),
  action: Type.String(),
  state: Type.String(),
});
export const StateEventSchema = Type.Object({ ...eventBase, state: Type.String() });

/** What every event shows: its id, user, time and the noteable it happened to. */
export function eventCommon(resource: { type: string; id: number }, id: number, created_at: string, user: UserBasicRow | null, ctx: UserViewContext) {
  return { id, user: user ? toUserRef(user, ctx) : null, created_at, resource_type: resource.type, resource_id: resource.id };
}

export function toLabelEvent(
  resource: { type: string; id: number },
  e: { id: number; created_at: string; user: UserBasicRow | null; action: string; label: LabelRow | null },
  ctx: UserViewContext,
) {
  return { ...eventCommon(resource, e.id, e.created_at, e.user, ctx), label: e.label ? toLabelDetails(e.label) : null, action: e.action };
}

export function toMilestoneEvent(
  resource: { type: string; id: number },
  e: { row: { id: number; created_at: string; action: string; state: string }; user: UserBasicRow | null },
  milestone: { row: MilestoneRow; url: string } | null,
  ctx: UserViewContext,
) {
  return {
    ...eventCommon(resource, e.row.id, e.row.created_at, e.user, ctx),
    milestone: milestone ? toMilestoneRef(milestone.row, milestone.url) : null,
    action: e.row.action,
    state: e.row.state,
  };
}

export function toStateEvent(
  resource: { type: string; id: number },
  e: { row: { id: number; created_at: string; state: string }; user: UserBasicRow | null },
  ctx: UserViewContext,
) {
  return { ...eventCommon(resource, e.row.id, e.row.created_at, e.user, ctx), state: e.row.state };
}
