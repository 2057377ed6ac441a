// Wire shapes of issue boards (Entities::Board, Entities::List, Entities::BoardSimple for the project): pure
// mappings from the views BoardsService loads.
import { Type, type Static } from 'typebox';
import type { MilestoneRow } from '../../../db/schema.ts';
import type { BoardListView, BoardView } from '../../../domain/boards/boards.service.ts';
import { NullableInteger, NullableString } from '../schemas/common.ts';
import { LabelBasicSchema, toLabelDetails } from './label.entity.ts';
import { MilestoneRefSchema, toMilestoneRef } from './merge-request.entity.ts';
import { toUserRef, UserRefSchema, type UserViewContext } from './user.entity.ts';

const Nullable = <T extends { properties: object; required?: string[] }>(s: T) =>
  Type.Unsafe({ type: ['object', 'null'], properties: s.properties, required: s.required ?? [] });

export const BoardListSchema = Type.Object({
  id: Type.Integer(),
  label: Nullable(LabelBasicSchema),
  position: NullableInteger,
  list_type: Type.String(),
  max_issue_count: Type.Integer(),
  max_issue_weight: Type.Integer(),
  limit_metric: NullableString,
  assignee: Nullable(UserRefSchema),
  milestone: Nullable(MilestoneRefSchema),
});
export type BoardListEntity = Static<typeof BoardListSchema>;

export const BoardSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  hide_backlog_list: Type.Boolean(),
  hide_closed_list: Type.Boolean(),
  project: Type.Union([
    Type.Object({
      id: Type.Integer(),
      name: Type.String(),
      name_with_namespace: Type.String(),
      path: Type.String(),
      path_with_namespace: Type.String(),
      http_url_to_repo: Type.String(),
      web_url: Type.String(),
    }),
    Type.Null(),
  ]),
  group: Type.Union([Type.Object({ id: Type.Integer(), name: Type.String(), web_url: Type.String() }), Type.Null()]),
  milestone: Type.Null(),
  assignee: Type.Null(),
  labels: Type.Array(LabelBasicSchema),
  weight: Type.Null(),
  lists: Type.Array(BoardListSchema),
});

export interface BoardEntityContext {
  externalUrl: string;
  users: UserViewContext;
  project: { id: number; name: string; path: string; fullPath: string; namespaceName: string } | null;
  group: { id: number; name: string; fullPath: string } | null;
  /** the web URL of a milestone the lists name */
  milestoneUrl: (m: MilestoneRow) => string;
}

export function toBoardList(l: BoardListView, ctx: BoardEntityContext): BoardListEntity {
  return {
    id: l.row.id,
    label: l.label ? toLabelDetails(l.label) : null,
    position: l.row.position,
    list_type: l.row.list_type,
    max_issue_count: 0,
    max_issue_weight: 0,
    limit_metric: null,
    assignee: l.user ? toUserRef(l.user, ctx.users) : null,
    milestone: l.milestone ? toMilestoneRef(l.milestone, ctx.milestoneUrl(l.milestone)) : null,
  };
}

export function toBoard(v: BoardView, movable: BoardListView[], ctx: BoardEntityContext) {
  const p = ctx.project;
  return {
    id: v.board.id,
    name: v.board.name,
    hide_backlog_list: v.board.hide_backlog_list === 1,
    hide_closed_list: v.board.hide_closed_list === 1,
    project: p
      ? {
          id: p.id,
          name: p.name,
          name_with_namespace: `${p.namespaceName} / ${p.name}`,
          path: p.path,
          path_with_namespace: p.fullPath,
          http_url_to_repo: `${ctx.externalUrl}/${p.fullPath}.git`,
          web_url: `${ctx.externalUrl}/${p.fullPath}`,
        }
      : null,
    group: ctx.group ? { id: ctx.group.id, name: ctx.group.name, web_url: `${ctx.externalUrl}/groups/${ctx.group.fullPath}` } : null,
    milestone: null,
    assignee: null,
    labels: [],
    weight: null,
    lists: movable.map((l) => toBoardList(l, ctx)),
  };
}
