// Wire shapes of labels (GitLab API::Entities::LabelBasic, Label, ProjectLabel, GroupLabel). The colour
// is stored as written ("#abc", "#FF0000"); text_color is computed from it (Gitlab::Color#contrast).
// description_html: labels render their description with GitLab's single-line pipeline (no paragraph);
// here it is the escaped text (Markdown rendering is not done).
import { Type, type Static } from 'typebox';
import type { LabelRow } from '../../../db/schema.ts';
import { NullableInteger, NullableString } from '../schemas/common.ts';
import { isLightColor } from '../../../domain/labels/label-color.ts';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** Gitlab::Color#contrast (LabelsHelper.text_color_for_bg): dark text on light colours, white on dark. */
export function textColorFor(color: string): string {
  return isLightColor(color) ? '#333333' : '#FFFFFF';
}

export function labelDescriptionHtml(description: string | null): string {
  return description ? escapeHtml(description) : '';
}

export const LabelBasicSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  color: Type.String(),
  description: NullableString,
  description_html: Type.String(),
  text_color: Type.String(),
});
export type LabelBasicEntity = Static<typeof LabelBasicSchema>;

/** The object form of a label in a merge request with `with_labels_details=true` (LabelBasic). */
export function toLabelDetails(row: Pick<LabelRow, 'id' | 'title' | 'color' | 'description'>): LabelBasicEntity {
  return {
    id: row.id,
    name: row.title,
    color: row.color,
    description: row.description,
    description_html: labelDescriptionHtml(row.description),
    text_color: textColorFor(row.color),
  };
}

const CountFields = {
  open_issues_count: Type.Optional(Type.Integer()),
  closed_issues_count: Type.Optional(Type.Integer()),
  open_merge_requests_count: Type.Optional(Type.Integer()),
};

/** Entities::GroupLabel (= Label): counts only with `with_counts`. */
export const GroupLabelSchema = Type.Object({
  ...LabelBasicSchema.properties,
  ...CountFields,
  subscribed: Type.Boolean(),
});
export type GroupLabelEntity = Static<typeof GroupLabelSchema>;

/** Entities::ProjectLabel: adds the label's priority in the project and whether it is the project's own. */
export const ProjectLabelSchema = Type.Object({
  ...GroupLabelSchema.properties,
  priority: NullableInteger,
  is_project_label: Type.Boolean(),
});
export type ProjectLabelEntity = Static<typeof ProjectLabelSchema>;

export interface LabelCounts {
  open_issues_count: number;
  closed_issues_count: number;
  open_merge_requests_count: number;
}

/** `subscribed`: the viewer follows the label everywhere, or (seen from a project) within that project. */
export function toGroupLabel(row: LabelRow, counts?: LabelCounts, subscribed = false): GroupLabelEntity {
  const out: GroupLabelEntity = toLabelDetails(row) as GroupLabelEntity;
  if (counts) Object.assign(out, counts);
  out.subscribed = subscribed;
  return out;
}

/** A label as a project shows it: a group label has no priority in the project (priorities are kept on project labels). */
export function toProjectLabel(row: LabelRow, counts?: LabelCounts, subscribed = false): ProjectLabelEntity {
  const out = toGroupLabel(row, counts, subscribed) as ProjectLabelEntity;
  out.priority = row.project_id !== null ? row.priority : null;
  out.is_project_label = row.project_id !== null;
  return out;
}
