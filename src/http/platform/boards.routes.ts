// Issue boards (lib/api/boards.rb and group_boards.rb through boards_responses.rb): a project's or a group's
// boards and their lists. The lists here are the movable ones (label, milestone, assignee); the backlog and
// closed lists are the board's own.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import type { Actor } from '../../domain/access/actor.ts';
import type { BoardParent, BoardView, ListKind } from '../../domain/boards/boards.service.ts';
import { Errors } from '../../lib/errors.ts';
import { paginateArray } from '../../lib/pagination.ts';
import { type BoardEntityContext, BoardListSchema, BoardSchema, toBoard, toBoardList } from './entities/board.entity.ts';
import { userViewContext } from './entities/user.entity.ts';
import { IdParams, linkParams, PaginationProps } from './schemas/common.ts';

const BoardParams = Type.Object({ id: Type.String(), board_id: Type.Integer() });
const ListParams = Type.Object({ id: Type.String(), board_id: Type.Integer(), list_id: Type.Integer() });
const BoardBody = Type.Object({
  name: Type.Optional(Type.String()),
  hide_backlog_list: Type.Optional(Type.Boolean()),
  hide_closed_list: Type.Optional(Type.Boolean()),
});
const ListBody = Type.Object({
  label_id: Type.Optional(Type.Integer()),
  milestone_id: Type.Optional(Type.Integer()),
  assignee_id: Type.Optional(Type.Integer()),
  iteration_id: Type.Optional(Type.Integer()),
});

export function boardsRoutes(fastify: FastifyInstance, c: Container): void {
  for (const level of ['projects', 'groups'] as const) boardRoutes(fastify, c, level);
}

function boardRoutes(fastify: FastifyInstance, c: Container, level: 'projects' | 'groups'): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const read = { api: 'platform' as const, auth: 'optional' as const };
  const write = { api: 'platform' as const, auth: 'user' as const };
  const TAGS = level === 'projects' ? ['boards'] : ['group_boards'];
  const base = `/api/v4/${level}/:id/boards`;
  const parentOf = (actor: Actor, id: string): Promise<BoardParent> =>
    level === 'projects' ? c.boards.projectParent(actor, id) : c.boards.groupParent(actor, id);

  const context = async (parent: BoardParent): Promise<BoardEntityContext> => {
    const ns = parent.type === 'Project' ? parent.namespace : parent.group;
    return {
      externalUrl: c.config.externalUrl,
      users: userViewContext(c.config.externalUrl, await c.settings.get()),
      project:
        parent.type === 'Project'
          ? {
              id: parent.project.id,
              name: parent.project.name,
              path: parent.project.path,
              fullPath: `${ns.full_path}/${parent.project.path}`,
              namespaceName: ns.name,
            }
          : null,
      group: parent.type === 'Group' ? { id: parent.group.id, name: parent.group.name, fullPath: parent.group.full_path } : null,
      milestoneUrl: (m) =>
        m.project_id !== null
          ? `${c.config.externalUrl}/${ns.full_path}/${parent.type === 'Project' ? parent.project.path : ''}/-/milestones/${m.iid}`
          : `${c.config.externalUrl}/groups/${ns.full_path}/-/milestones/${m.iid}`,
    };
  };
  const board = async (parent: BoardParent, v: BoardView) => toBoard(v, c.boards.movable(v), await context(parent));
  const page = <T>(req: FastifyRequest, items: T[], reply: { headers: (h: Record<string, string>) => unknown }) => {
    const q = req.query as { page?: number; per_page?: number };
    const p = paginateArray(c.config.externalUrl, { path: req.url.split('?')[0], params: linkParams(q, req.params as Record<string, unknown>), ...q }, items);
    reply.headers(p.headers);
    return p.items;
  };

  app.get(
    base,
    { config: read, schema: { tags: TAGS, params: IdParams, querystring: Type.Object(PaginationProps), response: { 200: Type.Array(BoardSchema) } } },
    async (req, reply) => {
      const parent = await parentOf(req.actor, req.params.id);
      const views = await c.boards.list(req.actor, parent);
      return page(req, await Promise.all(views.map((v) => board(parent, v))), reply);
    },
  );
  app.get(`${base}/:board_id`, { config: read, schema: { tags: TAGS, params: BoardParams, response: { 200: BoardSchema } } }, async (req) => {
    const parent = await parentOf(req.actor, req.params.id);
    return board(parent, await c.boards.get(parent, req.params.board_id));
  });
  app.post(
    base,
    { config: write, schema: { tags: TAGS, params: IdParams, body: Type.Object({ name: Type.String() }), response: { 201: BoardSchema } } },
    async (req, reply) => {
      const parent = await parentOf(req.actor, req.params.id);
      return reply.code(201).send(await board(parent, await c.boards.create(req.actor, parent, { name: req.body.name })));
    },
  );
  app.put(`${base}/:board_id`, { config: write, schema: { tags: TAGS, params: BoardParams, body: BoardBody, response: { 200: BoardSchema } } }, async (req) => {
    const parent = await parentOf(req.actor, req.params.id);
    return board(parent, await c.boards.update(req.actor, parent, req.params.board_id, req.body));
  });
  app.delete(`${base}/:board_id`, { config: write, schema: { tags: TAGS, params: BoardParams } }, async (req, reply) => {
    const parent = await parentOf(req.actor, req.params.id);
    await c.boards.remove(req.actor, parent, req.params.board_id);
    return reply.code(204).send();
  });

  // ---- lists ----------------------------------------------------------------------------------------

  app.get(
    `${base}/:board_id/lists`,
    { config: read, schema: { tags: TAGS, params: BoardParams, querystring: Type.Object(PaginationProps), response: { 200: Type.Array(BoardListSchema) } } },
    async (req, reply) => {
      const parent = await parentOf(req.actor, req.params.id);
      const v = await c.boards.get(parent, req.params.board_id);
      const ctx = await context(parent);
      return page(
        req,
        c.boards.movable(v).map((l) => toBoardList(l, ctx)),
        reply,
      );
    },
  );
  app.get(`${base}/:board_id/lists/:list_id`, { config: read, schema: { tags: TAGS, params: ListParams, response: { 200: BoardListSchema } } }, async (req) => {
    const parent = await parentOf(req.actor, req.params.id);
    return toBoardList(await c.boards.getList(parent, req.params.board_id, req.params.list_id), await context(parent));
  });
  app.post(
    `${base}/:board_id/lists`,
    { config: write, schema: { tags: TAGS, params: BoardParams, body: ListBody, response: { 201: BoardListSchema } } },
    async (req, reply) => {
      const b = req.body;
      const given = (['label_id', 'milestone_id', 'assignee_id', 'iteration_id'] as const).filter((k) => b[k] !== undefined);
      if (given.length === 0) throw Errors.param('label_id, milestone_id, iteration_id, assignee_id are missing, exactly one parameter must be provided');
      if (given.length > 1) throw Errors.param(`${given.join(', ')} are mutually exclusive`);
      if (b.iteration_id !== undefined) throw Errors.refused({ error: 'Iteration not found' } as never);
      const kind: ListKind =
        b.label_id !== undefined ? { label_id: b.label_id } : b.milestone_id !== undefined ? { milestone_id: b.milestone_id } : { assignee_id: b.assignee_id! };
      const parent = await parentOf(req.actor, req.params.id);
      const list = await c.boards.createList(req.actor, parent, req.params.board_id, kind);
      return reply.code(201).send(toBoardList(list, await context(parent)));
    },
  );
  app.put(
    `${base}/:board_id/lists/:list_id`,
    { config: write, schema: { tags: TAGS, params: ListParams, body: Type.Object({ position: Type.Integer() }), response: { 200: BoardListSchema } } },
    async (req) => {
      const parent = await parentOf(req.actor, req.params.id);
      const list = await c.boards.moveList(req.actor, parent, req.params.board_id, req.params.list_id, req.body.position);
      return toBoardList(list, await context(parent));
    },
  );
  app.delete(`${base}/:board_id/lists/:list_id`, { config: write, schema: { tags: TAGS, params: ListParams } }, async (req, reply) => {
    const parent = await parentOf(req.actor, req.params.id);
    await c.boards.removeList(req.actor, parent, req.params.board_id, req.params.list_id);
    return reply.code(204).send();
  });
}
