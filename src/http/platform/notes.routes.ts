// What people say and do around a merge request or an issue: …/notes (lib/api/notes.rb), …/discussions
// (lib/api/discussions.rb), …/award_emoji on the noteable and on its notes (lib/api/award_emoji.rb), and the
// resource events (lib/api/resource_label_events.rb & co.). One set of routes per noteable, over one notes
// service. Notes, discussions and award emoji need a signed-in user; resource events are readable by anyone who
// may read the noteable.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import type { NoteRow } from '../../db/schema.ts';
import type { Actor } from '../../domain/access/actor.ts';
import type { FoundNoteable, NoteableType } from '../../domain/notes/noteable.ts';
import { DomainError, Errors } from '../../lib/errors.ts';
import { offsetPaginate, paginateArray } from '../../lib/pagination.ts';
import { AwardEmojiSchema, toAwardEmoji } from './entities/award-emoji.entity.ts';
import { DiscussionSchema, toDiscussion } from './entities/discussion.entity.ts';
import { NoteSchema, noteUserIds, toNote, type NoteContext } from './entities/note.entity.ts';
import { userViewContext } from './entities/user.entity.ts';
import { LabelEventSchema, MilestoneEventSchema, StateEventSchema, toLabelEvent, toMilestoneEvent, toStateEvent } from './entities/resource-event.entity.ts';
import { linkParams, PaginationProps } from './schemas/common.ts';

/** The routes of one kind of noteable: its path segment, its iid parameter and its finder. */
interface NoteableRoutes {
  type: NoteableType;
  tags: string[];
  segment: 'merge_requests' | 'issues';
  iidParam: 'merge_request_iid' | 'issue_iid';
  /** the noteable as the actor may read it (404 Project Not Found, 404 Not found, 403 without the read ability) */
  find: (c: Container, actor: Actor, id: string, iid: number) => Promise<FoundNoteable>;
}

const NOTEABLES: NoteableRoutes[] = [
  {
    type: 'MergeRequest',
    tags: ['merge_requests'],
    segment: 'merge_requests',
    iidParam: 'merge_request_iid',
    find: (c, a, id, iid) => c.mergeRequests.findNoteable(a, id, iid),
  },
  { type: 'Issue', tags: ['issues'], segment: 'issues', iidParam: 'issue_iid', find: (c, a, id, iid) => c.issues.findNoteable(a, id, iid) },
];

const NotesQuery = Type.Object({
  order_by: Type.Optional(Type.Enum(['created_at', 'updated_at'])),
  sort: Type.Optional(Type.Enum(['asc', 'desc'])),
  activity_filter: Type.Optional(Type.Enum(['all_notes', 'only_comments', 'only_activity'])),
  ...PaginationProps,
});
const CreateNoteBody = Type.Object({
  body: Type.String(),
  confidential: Type.Optional(Type.Boolean()),
  internal: Type.Optional(Type.Boolean()),
  created_at: Type.Optional(Type.String()),
  merge_request_diff_head_sha: Type.Optional(Type.String()),
});
const UpdateNoteBody = Type.Object({ body: Type.Optional(Type.String()), confidential: Type.Optional(Type.Boolean()) });

const LineEnd = Type.Object({
  line_code: Type.Optional(Type.String()),
  type: Type.Optional(Type.String()),
  old_line: Type.Optional(Type.Union([Type.String(), Type.Integer()])),
  new_line: Type.Optional(Type.Union([Type.String(), Type.Integer()])),
});
/** The position of a diff thread, as Grape declares it. */
const Position = Type.Object({
  base_sha: Type.String(),
  start_sha: Type.String(),
  head_sha: Type.String(),
  position_type: Type.Enum(['text', 'image', 'file']),
  new_path: Type.Optional(Type.String()),
  new_line: Type.Optional(Type.Integer()),
  old_path: Type.Optional(Type.String()),
  old_line: Type.Optional(Type.Integer()),
  width: Type.Optional(Type.Integer()),
  height: Type.Optional(Type.Integer()),
  x: Type.Optional(Type.Integer()),
  y: Type.Optional(Type.Integer()),
  line_range: Type.Optional(Type.Object({ start: Type.Optional(LineEnd), end: Type.Optional(LineEnd) })),
});
const CreateDiscussionBody = Type.Object({
  body: Type.String(),
  created_at: Type.Optional(Type.String()),
  internal: Type.Optional(Type.Boolean()),
  commit_id: Type.Optional(Type.String()),
  position: Type.Optional(Position),
});
const ReplyBody = Type.Object({ body: Type.String(), created_at: Type.Optional(Type.String()) });
const ResolveBody = Type.Object({ resolved: Type.Boolean() });
const DiscussionNoteBody = Type.Object({ body: Type.Optional(Type.String()), resolved: Type.Optional(Type.Boolean()) });
const AwardBody = Type.Object({ name: Type.String() });

export function notesRoutes(fastify: FastifyInstance, c: Container): void {
  for (const n of NOTEABLES) noteableRoutes(fastify, c, n);
}

function noteableRoutes(fastify: FastifyInstance, c: Container, n: NoteableRoutes): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const user = { api: 'platform' as const, auth: 'user' as const };
  const TAGS = n.tags;
  const BASE = `/api/v4/projects/:id/${n.segment}/:${n.iidParam}`;
  const iid = Type.Integer();
  const NoteableParams = Type.Object({ id: Type.String(), [n.iidParam]: iid });
  const NoteParams = Type.Object({ id: Type.String(), [n.iidParam]: iid, note_id: Type.Integer() });
  const DiscussionParams = Type.Object({ id: Type.String(), [n.iidParam]: iid, discussion_id: Type.String() });
  const DiscussionNoteParams = Type.Object({ id: Type.String(), [n.iidParam]: iid, discussion_id: Type.String(), note_id: Type.Integer() });
  const AwardParams = Type.Object({ id: Type.String(), [n.iidParam]: iid, award_id: Type.Integer() });
  const NoteAwardParams = Type.Object({ id: Type.String(), [n.iidParam]: iid, note_id: Type.Integer(), award_id: Type.Integer() });
  type P = { id: string; note_id: number; award_id: number; discussion_id: string } & Record<string, unknown>;
  const iidOf = (p: P) => p[n.iidParam] as number;

  /**
   * Notes, discussions and award emoji find their noteable through NotesFinder (MergeRequestsFinder,
   * IssuesFinder): one the actor may not read is not found either, ActiveRecord's "404 Not found" (the project
   * keeps "404 Project Not Found").
   */
  const noteable = async (actor: Actor, p: P): Promise<FoundNoteable> => {
    try {
      return await n.find(c, actor, p.id, iidOf(p));
    } catch (e) {
      if (e instanceof DomainError && e.kind === 'forbidden') throw Errors.recordNotFound();
      throw e;
    }
  };

  const noteContext = async (f: FoundNoteable, notes: NoteRow[]): Promise<NoteContext> => ({
    users: await c.users.basicByIds(noteUserIds(notes)),
    user: userViewContext(c.config.externalUrl, await c.settings.get()),
    noteable: f.target,
  });
  const noteEntity = async (f: FoundNoteable, note: NoteRow) => toNote(note, await noteContext(f, [note]));
  const discussionEntity = async (f: FoundNoteable, notes: NoteRow[]) => toDiscussion(notes, await noteContext(f, notes));

  const page = (req: FastifyRequest, params: Record<string, unknown>) => {
    const q = req.query as { page?: number; per_page?: number } & Record<string, unknown>;
    return { path: req.url.split('?')[0], params: linkParams(q, params), page: q.page, per_page: q.per_page };
  };

  // ---- notes ----------------------------------------------------------------------------------

  app.get(
    `${BASE}/notes`,
    { config: user, schema: { tags: TAGS, params: NoteableParams, querystring: NotesQuery, response: { 200: Type.Array(NoteSchema) } } },
    async (req, reply) => {
      const f = await noteable(req.actor, req.params as P);
      const q = req.query;
      const query = await c.notes.list(req.actor, f, { orderBy: q.order_by, sort: q.sort, activity: q.activity_filter });
      const result = await offsetPaginate(c.db.kysely, c.config.externalUrl, page(req, { id: req.params.id, noteable_id: iidOf(req.params as P) }), query);
      reply.headers(result.headers);
      const ctx = await noteContext(f, result.items);
      return result.items.map((n) => toNote(n, ctx));
    },
  );

  app.get(`${BASE}/notes/:note_id`, { config: user, schema: { tags: TAGS, params: NoteParams, response: { 200: NoteSchema } } }, async (req) => {
    const f = await noteable(req.actor, req.params as P);
    return noteEntity(f, await c.notes.get(req.actor, f, (req.params as P).note_id));
  });

  app.post(
    `${BASE}/notes`,
    { config: user, schema: { tags: TAGS, params: NoteableParams, body: CreateNoteBody, response: { 201: NoteSchema } } },
    async (req, reply) => {
      const f = await noteable(req.actor, req.params as P);
      const b = req.body;
      const note = await c.notes.create(req.actor, f, { body: b.body, internal: b.internal ?? b.confidential, created_at: b.created_at });
      return reply.code(201).send(await noteEntity(f, note));
    },
  );

  app.put(
    `${BASE}/notes/:note_id`,
    { config: user, schema: { tags: TAGS, params: NoteParams, body: UpdateNoteBody, response: { 200: NoteSchema } } },
    async (req) => {
      const f = await noteable(req.actor, req.params as P);
      const body = req.body.body;
      if (body !== undefined && body.trim() === '') throw Errors.param('body is empty');
      const note =
        body === undefined ? await c.notes.get(req.actor, f, (req.params as P).note_id) : await c.notes.update(req.actor, f, (req.params as P).note_id, body);
      return noteEntity(f, note);
    },
  );

  app.delete(`${BASE}/notes/:note_id`, { config: user, schema: { tags: TAGS, params: NoteParams } }, async (req, reply) => {
    const f = await noteable(req.actor, req.params as P);
    await c.notes.remove(req.actor, f, (req.params as P).note_id);
    return reply.code(204).send();
  });

  // ---- discussions ----------------------------------------------------------------------------

  app.get(
    `${BASE}/discussions`,
    {
      config: user,
      schema: { tags: TAGS, params: NoteableParams, querystring: Type.Object(PaginationProps), response: { 200: Type.Array(DiscussionSchema) } },
    },
    async (req, reply) => {
      const f = await noteable(req.actor, req.params as P);
      const result = await offsetPaginate(
        c.db.kysely,
        c.config.externalUrl,
        page(req, { id: req.params.id, noteable_id: iidOf(req.params as P) }),
        await c.notes.discussionIds(req.actor, f),
      );
      reply.headers(result.headers);
      const threads = await c.notes.discussionNotes(
        req.actor,
        f,
        result.items.map((r) => r.discussion_id),
      );
      const ctx = await noteContext(f, threads.flat());
      return threads.map((notes) => toDiscussion(notes, ctx));
    },
  );

  app.get(
    `${BASE}/discussions/:discussion_id`,
    { config: user, schema: { tags: TAGS, params: DiscussionParams, response: { 200: DiscussionSchema } } },
    async (req) => {
      const f = await noteable(req.actor, req.params as P);
      return discussionEntity(f, await c.notes.discussion(req.actor, f, (req.params as P).discussion_id));
    },
  );

  app.post(
    `${BASE}/discussions`,
    { config: user, schema: { tags: TAGS, params: NoteableParams, body: CreateDiscussionBody, response: { 201: DiscussionSchema } } },
    async (req, reply) => {
      const f = await noteable(req.actor, req.params as P);
      const b = req.body;
      const notes = await c.notes.createDiscussion(req.actor, f, { body: b.body, created_at: b.created_at, internal: b.internal, position: b.position });
      return reply.code(201).send(await discussionEntity(f, notes));
    },
  );

  app.put(
    `${BASE}/discussions/:discussion_id`,
    { config: user, schema: { tags: TAGS, params: DiscussionParams, body: ResolveBody, response: { 200: DiscussionSchema } } },
    async (req) => {
      const f = await noteable(req.actor, req.params as P);
      return discussionEntity(f, await c.notes.resolveDiscussion(req.actor, f, (req.params as P).discussion_id, req.body.resolved));
    },
  );

  app.get(
    `${BASE}/discussions/:discussion_id/notes`,
    { config: user, schema: { tags: TAGS, params: DiscussionParams, response: { 200: Type.Array(NoteSchema) } } },
    async (req) => {
      const f = await noteable(req.actor, req.params as P);
      const notes = await c.notes.discussion(req.actor, f, (req.params as P).discussion_id, 'Notes');
      const ctx = await noteContext(f, notes);
      return notes.map((n) => toNote(n, ctx));
    },
  );

  app.post(
    `${BASE}/discussions/:discussion_id/notes`,
    { config: user, schema: { tags: TAGS, params: DiscussionParams, body: ReplyBody, response: { 201: NoteSchema } } },
    async (req, reply) => {
      const f = await noteable(req.actor, req.params as P);
      const note = await c.notes.reply(req.actor, f, (req.params as P).discussion_id, { body: req.body.body, created_at: req.body.created_at });
      return reply.code(201).send(await noteEntity(f, note));
    },
  );

  app.get(
    `${BASE}/discussions/:discussion_id/notes/:note_id`,
    { config: user, schema: { tags: TAGS, params: DiscussionNoteParams, response: { 200: NoteSchema } } },
    async (req) => {
      const f = await noteable(req.actor, req.params as P);
      return noteEntity(f, await c.notes.get(req.actor, f, (req.params as P).note_id));
    },
  );

  app.put(
    `${BASE}/discussions/:discussion_id/notes/:note_id`,
    { config: user, schema: { tags: TAGS, params: DiscussionNoteParams, body: DiscussionNoteBody, response: { 200: NoteSchema } } },
    async (req) => {
      const { body, resolved } = req.body;
      if (body === undefined && resolved === undefined) throw Errors.param('body, resolved are missing, exactly one parameter must be provided');
      if (body !== undefined && resolved !== undefined) throw Errors.param('body, resolved are mutually exclusive');
      const f = await noteable(req.actor, req.params as P);
      const note =
        resolved !== undefined
          ? await c.notes.resolveNote(req.actor, f, (req.params as P).note_id, resolved)
          : await c.notes.update(req.actor, f, (req.params as P).note_id, body!);
      return noteEntity(f, note);
    },
  );

  app.delete(
    `${BASE}/discussions/:discussion_id/notes/:note_id`,
    { config: user, schema: { tags: TAGS, params: DiscussionNoteParams } },
    async (req, reply) => {
      const f = await noteable(req.actor, req.params as P);
      await c.notes.remove(req.actor, f, (req.params as P).note_id);
      return reply.code(204).send();
    },
  );

  // ---- award emoji (on the merge request and on its notes) --------------------------------------

  for (const onNote of [false, true]) {
    const base = onNote ? `${BASE}/notes/:note_id/award_emoji` : `${BASE}/award_emoji`;
    const Params = onNote ? NoteParams : NoteableParams;
    const OneParams = onNote ? NoteAwardParams : AwardParams;
    const target = async (actor: Actor, p: P) => {
      const f = await noteable(actor, p);
      return { f, awardable: await c.notes.awards.awardable(actor, f, onNote ? p.note_id : undefined) };
    };
    const entities = async (rows: Parameters<typeof toAwardEmoji>[0][]) => {
      const users = await c.users.basicByIds(rows.map((r) => r.user_id));
      const ctx = userViewContext(c.config.externalUrl, await c.settings.get());
      return rows.map((r) => toAwardEmoji(r, users, ctx));
    };

    app.get(
      base,
      { config: user, schema: { tags: TAGS, params: Params, querystring: Type.Object(PaginationProps), response: { 200: Type.Array(AwardEmojiSchema) } } },
      async (req, reply) => {
        const p = req.params as P;
        const { awardable } = await target(req.actor, p);
        const routeParams: Record<string, unknown> = { id: p.id, [n.iidParam]: iidOf(p) };
        if (onNote) routeParams.note_id = p.note_id;
        const result = await offsetPaginate(c.db.kysely, c.config.externalUrl, page(req, routeParams), c.notes.awards.list(awardable));
        reply.headers(result.headers);
        return entities(result.items);
      },
    );

    app.get(`${base}/:award_id`, { config: user, schema: { tags: TAGS, params: OneParams, response: { 200: AwardEmojiSchema } } }, async (req) => {
      const p = req.params as P;
      const { awardable } = await target(req.actor, p);
      return (await entities([await c.notes.awards.get(awardable, p.award_id)]))[0];
    });

    app.post(base, { config: user, schema: { tags: TAGS, params: Params, body: AwardBody, response: { 201: AwardEmojiSchema } } }, async (req, reply) => {
      const p = req.params as P;
      const { f, awardable } = await target(req.actor, p);
      const row = await c.notes.awards.award(req.actor, f, awardable, req.body.name);
      return reply.code(201).send((await entities([row]))[0]);
    });

    app.delete(`${base}/:award_id`, { config: user, schema: { tags: TAGS, params: OneParams } }, async (req, reply) => {
      const p = req.params as P;
      const { awardable } = await target(req.actor, p);
      await c.notes.awards.remove(req.actor, awardable, p.award_id);
      return reply.code(204).send();
    });
  }

  // ---- resource events --------------------------------------------------------------------------

  const read = { api: 'platform' as const, auth: 'optional' as const };
  const EventParams = (name: string) => Type.Object({ id: Type.String(), [n.iidParam]: iid, [name]: Type.Integer() });
  const resource = (f: FoundNoteable) => ({ type: f.type, id: f.target.id });
  const users = async () => userViewContext(c.config.externalUrl, await c.settings.get());
  const labelEvents = async (f: FoundNoteable) => {
    const ctx = await users();
    return (await c.notes.events.labels(f)).map((e) => toLabelEvent(resource(f), e, ctx));
  };
  const milestoneEvents = async (f: FoundNoteable) => {
    const ctx = await users();
    const out = [];
    for (const e of await c.notes.events.milestones(f)) {
      const m = e.milestone;
      const url = !m
        ? ''
        : m.project_id !== null
          ? `${c.config.externalUrl}/${f.namespace.full_path}/${f.project.path}/-/milestones/${m.iid}`
          : `${c.config.externalUrl}/groups/${(await c.resolve.namespaceById(m.group_id!))?.full_path ?? ''}/-/milestones/${m.iid}`;
      out.push(toMilestoneEvent(resource(f), e, m ? { row: m, url } : null, ctx));
    }
    return out;
  };
  const stateEvents = async (f: FoundNoteable) => {
    const ctx = await users();
    return (await c.notes.events.states(f)).map((e) => toStateEvent(resource(f), e, ctx));
  };
  /** Resource events find their noteable as the noteable's own routes do (403 stays 403, as GitLab's). */
  const findEvents = (actor: Actor, p: P) => n.find(c, actor, p.id, iidOf(p));

  for (const [path, param, schema, load] of [
    ['resource_label_events', 'resource_label_event_id', LabelEventSchema, labelEvents],
    ['resource_milestone_events', 'resource_milestone_event_id', MilestoneEventSchema, milestoneEvents],
    ['resource_state_events', 'resource_state_event_id', StateEventSchema, stateEvents],
  ] as const) {
    app.get(
      `${BASE}/${path}`,
      { config: read, schema: { tags: TAGS, params: NoteableParams, querystring: Type.Object(PaginationProps), response: { 200: Type.Array(schema) } } },
      async (req, reply) => {
        const f = await findEvents(req.actor, req.params as P);
        const all: { id: number }[] = await load(f);
        const q = req.query as { page?: number; per_page?: number };
        const page = paginateArray(
          c.config.externalUrl,
          { path: req.url.split('?')[0], params: linkParams(q, req.params as Record<string, unknown>), ...q },
          all,
        );
        reply.headers(page.headers);
        return page.items as never[];
      },
    );
    app.get(`${BASE}/${path}/:${param}`, { config: read, schema: { tags: TAGS, params: EventParams(param), response: { 200: schema } } }, async (req) => {
      const params = req.params as P;
      const f = await findEvents(req.actor, params);
      const event = (await load(f)).find((e: { id: number }) => e.id === params[param]);
      if (!event) throw Errors.recordNotFound();
      return event as never;
    });
  }
}
