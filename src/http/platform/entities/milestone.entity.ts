// Wire shape of a milestone (GitLab API::Entities::Milestone): project_id or group_id (only the one
// that is set), `expired` when the due date is past (false without one), web_url to its page.
import { Type, type Static } from 'typebox';
import type { MilestoneWithUrl } from '../../../domain/milestones/milestones.service.ts';
import { currentDate } from '../../../lib/time.ts';
import { NullableString } from '../schemas/common.ts';

export const MilestoneSchema = Type.Object({
  id: Type.Integer(),
  iid: Type.Integer(),
  project_id: Type.Optional(Type.Integer()),
  group_id: Type.Optional(Type.Integer()),
  title: Type.String(),
  description: NullableString,
  state: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
  due_date: NullableString,
  start_date: NullableString,
  expired: Type.Boolean(),
  web_url: Type.String(),
});
export type MilestoneEntity = Static<typeof MilestoneSchema>;

/** The milestone entity; also the `milestone` hash of a merge request. */
export function toMilestoneBasic(row: MilestoneWithUrl): MilestoneEntity {
  const out: Record<string, unknown> = { id: row.id, iid: row.iid };
  if (row.project_id !== null) out.project_id = row.project_id;
  if (row.group_id !== null) out.group_id = row.group_id;
  out.title = row.title;
  out.description = row.description;
  out.state = row.state;
  out.created_at = row.created_at;
  out.updated_at = row.updated_at;
  out.due_date = row.due_date;
  out.start_date = row.start_date;
  out.expired = row.due_date !== null && row.due_date < currentDate();
  out.web_url = row.web_url;
  return out as MilestoneEntity;
}

export const toMilestone = toMilestoneBasic;
