// To-do items (lib/api/todos.rb): GET /todos (action, author_id, project_id, group_id, state, type), POST
// /todos/:id/mark_as_done, POST /todos/mark_as_done, and POST …/issues/:issue_iid/todo and
// …/merge_requests/:merge_request_iid/todo (201 with the to-do, 304 when one is pending already). The target is
// shown with its own entity (Issue, MergeRequestBasic); a to-do of something the caller can no longer read is
// left out of the list.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import type { TodoRow } from '../../db/schema.ts';
import type { Actor } from '../../domain/access/actor.ts';
import { TODO_ACTIONS } from '../../domain/todos/todos.service.ts';
import { offsetPaginate } from '../../lib/pagination.ts';
import { toIssue } from './entities/issue.entity.ts';
import { toUserRef, UserRefSchema, userViewContext } from './entities/user.entity.ts';
import { presentMergeRequests } from './merge-requests/present.ts';
import { Enum, linkParams, NullableString, PaginationProps } from './schemas/common.ts';

const TAGS = ['todos'];
const NullableUser = Type.Unsafe({ type: ['object', 'null'], properties: UserRefSchema.properties, required: UserRefSchema.required });
const TodoSchema = Type.Object({
  id: Type.Integer(),
  project: Type.Optional(
    Type.Object({
      id: Type.Integer(),
      description: NullableString,
      name: Type.String(),
      name_with_namespace: Type.String(),
      path: Type.String(),
      path_with_namespace: Type.String(),
      created_at: Type.String(),
    }),
  ),
  author: NullableUser,
  action_name: Type.String(),
  target_type: Type.String(),
  target: Type.Unsafe<unknown>({}),
  target_url: Type.String(),
  body: Type.String(),
  state: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
});
const ListQuery = Type.Object({
  action: Enum(Object.values(TODO_ACTIONS) as [string, ...string[]]),
  author_id: Type.Optional(Type.Integer()),
  project_id: Type.Optional(Type.Integer()),
  group_id: Type.Optional(Type.Integer()),
  state: Enum(['pending', 'done'] as const),
  type: Enum(['Issue', 'MergeRequest'] as const),
  ...PaginationProps,
});

export function todosRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const write = { api: 'platform' as const, auth: 'user' as const };

  /** The entities of these to-dos whose targets the actor may read, in their order. */
  async function entities(actor: Actor, todos: TodoRow[]) {
    const users = userViewContext(c.config.externalUrl, await c.settings.get());
    const [issues, mrs, authors] = await Promise.all([
      c.issues.readableByIds(
        actor,
        todos.filter((t) => t.target_type === 'Issue').map((t) => t.target_id),
      ),
      c.mergeRequests.readableByIds(
        actor,
        todos.filter((t) => t.target_type === 'MergeRequest').map((t) => t.target_id),
      ),
      c.users.basicByIds(todos.map((t) => t.author_id)),
    ]);
    const issueViews = new Map(
      (
        await c.issues.views(
          actor,
          issues.map((f) => f.issue),
        )
      ).map((v) => [v.row.id, v]),
    );
    const mrEntities = new Map(
      (
        await presentMergeRequests(
          c,
          mrs.map((f) => f.mr),
        )
      ).map((e) => [e.id, e]),
    );
    type Where = { project: (typeof issues)[number]['project']; namespace: (typeof issues)[number]['namespace'] };
    const projects = new Map<number, Where>([...issues, ...mrs].map((f) => [f.project.id, { project: f.project, namespace: f.namespace }]));
    const out = [];
    for (const t of todos) {
      const p = t.project_id !== null ? projects.get(t.project_id) : undefined;
      let target: { web_url: string } | undefined;
      if (t.target_type === 'Issue') {
        const v = issueViews.get(t.target_id);
        if (v) target = toIssue(v, { externalUrl: c.config.externalUrl, users, from: null });
      } else target = mrEntities.get(t.target_id) as { web_url: string } | undefined;
      if (!target || !p) continue;
      const author = t.author_id !== null ? authors.get(t.author_id) : undefined;
      out.push({
        id: t.id,
        project: {
          id: p.project.id,
          description: p.project.description,
          name: p.project.name,
          name_with_namespace: `${p.namespace.name} / ${p.project.name}`,
          path: p.project.path,
          path_with_namespace: `${p.namespace.full_path}/${p.project.path}`,
          created_at: p.project.created_at,
        },
        author: author ? toUserRef(author, users) : null,
        action_name: TODO_ACTIONS[t.action] ?? 'marked',
        target_type: t.target_type,
        target,
        target_url: target.web_url,
        body: t.body ?? '',
        state: t.state,
        created_at: t.created_at,
        updated_at: t.updated_at,
      });
    }
    return out;
  }

  app.get('/api/v4/todos', { config: write, schema: { tags: TAGS, querystring: ListQuery, response: { 200: Type.Array(TodoSchema) } } }, async (req, reply) => {
    const q = req.query;
    const page = await offsetPaginate(
      c.db.kysely,
      c.config.externalUrl,
      { path: req.url.split('?')[0], params: linkParams(q, {}), page: q.page, per_page: q.per_page },
      c.todos.list(req.actor, { action: q.action, authorId: q.author_id, projectId: q.project_id, groupId: q.group_id, state: q.state, type: q.type }),
    );
    reply.headers(page.headers);
    return entities(req.actor, page.items as TodoRow[]);
  });

  app.post(
    '/api/v4/todos/:id/mark_as_done',
    { config: write, schema: { tags: TAGS, params: Type.Object({ id: Type.Integer() }), response: { 201: TodoSchema } } },
    async (req, reply) => {
      const todo = await c.todos.markDone(req.actor, req.params.id);
      const [entity] = await entities(req.actor, [todo]);
      return reply.code(201).send(entity ?? null);
    },
  );

  app.post('/api/v4/todos/mark_as_done', { config: write, schema: { tags: TAGS } }, async (req, reply) => {
    await c.todos.markAllDone(req.actor);
    return reply.code(204).send();
  });

  const Created = { 201: TodoSchema, 304: Type.Null() };
  app.post(
    '/api/v4/projects/:id/issues/:issue_iid/todo',
    { config: write, schema: { tags: ['issues'], params: Type.Object({ id: Type.String(), issue_iid: Type.Integer() }), response: Created } },
    async (req, reply) => {
      const f = await c.issues.find(req.actor, req.params.id, req.params.issue_iid);
      const todo = await c.todos.mark(req.actor, { type: 'Issue', ...f.issue });
      if (!todo) return reply.code(304).send(null);
      return reply.code(201).send((await entities(req.actor, [todo]))[0]);
    },
  );
  app.post(
    '/api/v4/projects/:id/merge_requests/:merge_request_iid/todo',
    { config: write, schema: { tags: ['merge_requests'], params: Type.Object({ id: Type.String(), merge_request_iid: Type.Integer() }), response: Created } },
    async (req, reply) => {
      const f = await c.mergeRequests.find(req.actor, req.params.id, req.params.merge_request_iid);
      const todo = await c.todos.mark(req.actor, { type: 'MergeRequest', ...f.mr });
      if (!todo) return reply.code(304).send(null);
      return reply.code(201).send((await entities(req.actor, [todo]))[0]);
    },
  );
}
