// Notes and discussions of merge requests and issues (GitLab's Notes::CreateService/UpdateService/
// DestroyService, Discussions::ResolveService, lib/api/notes.rb and discussions.rb): every note belongs to a
// discussion (40 hex); an individual note (type null) is a discussion of one; DiscussionNote and DiffNote
// threads are resolvable. The noteable's user_notes_count (non-system notes) is kept in the writer's
// transaction. Award emoji hang off the same service (c.notes.awards).
import crypto from 'node:crypto';
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { Database, NoteRow, UserRow } from '../../db/schema.ts';
import { type DomainError, Errors } from '../../lib/errors.ts';
import { nowIso, parseDateTime } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import type { FeatureDeps } from '../deps.ts';
import { AwardEmojiService } from './award-emoji.ts';
import { ResourceEvents } from './resource-events.ts';
import { recordSystemEvent } from '../core/system-events.ts';
import { noteHookData } from './note-hook-data.ts';
import { canAdminNote, canReadInternal, canReadNote, canResolve, canSetCreatedAt, createNoteRefusal } from './notes-access.ts';
import { type FoundNoteable, NOTEABLE_TABLE, type NoteableHookAttrs, type NoteableType } from './noteable.ts';

/** Note#note: at most 1,000,000 characters. */
export const NOTE_MAX_LENGTH = 1_000_000;

export type NotesOrder = 'created_at' | 'updated_at';
/** UserPreference::NOTES_FILTERS */
export type ActivityFilter = 'all_notes' | 'only_comments' | 'only_activity';

export interface PositionInput {
  base_sha: string;
  start_sha: string;
  head_sha: string;
  position_type: string;
  [k: string]: unknown;
}

export interface NoteInput {
  body: string;
  internal?: boolean;
  created_at?: string;
}

/** A new discussion id: 40 hex characters, as GitLab's. */
export function newDiscussionId(): string {
  return crypto.randomBytes(20).toString('hex');
}

/** GitLab's `bad_request!("Note #{note.errors.messages}")` for a body the model refuses (Ruby's Hash#inspect). */
function noteErrors(messages: string[]): DomainError {
  return Errors.badRequest(`Note {:note=>[${messages.map((m) => JSON.stringify(m)).join(', ')}]}`);
}

/** Note validations: presence and length of the body. */
export function validateBody(body: string): void {
  if (body.trim() === '') throw noteErrors(["can't be blank"]);
  if ([...body].length > NOTE_MAX_LENGTH) throw noteErrors([`is too long (maximum is ${NOTE_MAX_LENGTH} characters)`]);
}

/**
 * What a noteable's feature does with the text of a note written or edited on it (a merge request's cross
 * references to the issues it mentions): read before the note's transaction, kept in it. Given by the
 * features, since notes stand below them.
 */
export interface NoteTextListener<T = unknown> {
  read(actor: Actor, f: FoundNoteable, body: string): Promise<T>;
  keep(trx: Kysely<Database>, f: FoundNoteable, read: T, authorId: number): Promise<void>;
}

/** The notes of a noteable that `actor` may not see beyond the internal ones (an issue's cross references to merge requests they may not read). */
export type HiddenNotes = (actor: Actor, f: FoundNoteable) => Promise<number[]>;

export class NotesService {
  readonly awards: AwardEmojiService;
  /** the label, milestone and state events of merge requests and issues */
  readonly events: ResourceEvents;
  private readonly textListeners: Partial<Record<NoteableType, NoteTextListener>> = {};
  private readonly hidden: Partial<Record<NoteableType, HiddenNotes>> = {};

  /** `hookAttrs`: each noteable's hook attributes, which note hooks embed (given by the features). */
  constructor(
    readonly deps: FeatureDeps,
    private readonly hookAttrs: Partial<Record<NoteableType, NoteableHookAttrs>> = {},
  ) {
    this.awards = new AwardEmojiService(deps);
    this.events = new ResourceEvents(deps.db.kysely);
  }

  private get db(): Kysely<Database> {
    return this.deps.db.kysely;
  }

  /** What the notes written on a kind of noteable lead to (wired by the container). */
  onNoteText<T>(type: NoteableType, listener: NoteTextListener<T>): void {
    this.textListeners[type] = listener as NoteTextListener;
  }

  /** Which notes of a kind of noteable a viewer may not see (wired by the container). */
  hideNotes(type: NoteableType, hidden: HiddenNotes): void {
    this.hidden[type] = hidden;
  }

  private readText(actor: Actor, f: FoundNoteable, body: string): Promise<unknown> {
    return this.textListeners[f.type]?.read(actor, f, body) ?? Promise.resolve(undefined);
  }

  private async keepText(trx: Kysely<Database>, f: FoundNoteable, read: unknown, authorId: number): Promise<void> {
    await this.textListeners[f.type]?.keep(trx, f, read, authorId);
  }

  private hiddenOf(actor: Actor, f: FoundNoteable): Promise<number[]> {
    return this.hidden[f.type]?.(actor, f) ?? Promise.resolve([]);
  }

  // ---- reading --------------------------------------------------------------------------------

  /** The notes of the noteable the actor may read, ordered (GitLab's default: created_at desc). */
  async list(actor: Actor, f: FoundNoteable, o: { orderBy?: NotesOrder; sort?: 'asc' | 'desc'; activity?: ActivityFilter } = {}) {
    const orderBy = o.orderBy ?? 'created_at';
    const sort = o.sort ?? 'desc';
    let q = await this.notesOf(actor, f);
    if (o.activity === 'only_comments') q = q.where('notes.system', '=', 0);
    if (o.activity === 'only_activity') q = q.where('notes.system', '=', 1);
    return q.orderBy(`notes.${orderBy}`, sort).orderBy('notes.id', sort);
  }

  private async notesOf(actor: Actor, f: FoundNoteable): Promise<SelectQueryBuilder<Database, 'notes', NoteRow>> {
    let q = this.db.selectFrom('notes').selectAll().where('notes.noteable_type', '=', f.type).where('notes.noteable_id', '=', f.target.id);
    if (!canReadInternal(actor, f)) q = q.where('notes.internal', '=', 0);
    const hidden = await this.hiddenOf(actor, f);
    if (hidden.length) q = q.where('notes.id', 'not in', hidden);
    return q;
  }

  /** One note of the noteable: "404 Not found" when it is not one, "404 Note Not Found" when it is hidden. */
  async get(actor: Actor, f: FoundNoteable, noteId: number): Promise<NoteRow> {
    const note = await this.noteOf(f, noteId);
    if (!canReadNote(actor, f, note) || (note.system === 1 && (await this.hiddenOf(actor, f)).includes(note.id))) throw Errors.notFound('Note');
    return note;
  }

  private async noteOf(f: FoundNoteable, noteId: number, db: Kysely<Database> = this.db): Promise<NoteRow> {
    const note = await db
      .selectFrom('notes')
      .selectAll()
      .where('id', '=', noteId)
      .where('noteable_type', '=', f.type)
      .where('noteable_id', '=', f.target.id)
      .executeTakeFirst();
    if (!note) throw Errors.recordNotFound();
    return note;
  }

  // ---- writing notes --------------------------------------------------------------------------

  private checkCreate(actor: Actor, f: FoundNoteable, input: NoteInput): void {
    const refusal = createNoteRefusal(actor, f);
    if (refusal === 'unauthenticated') throw Errors.unauthorized();
    if (refusal) throw Errors.forbidden();
    if (input.internal && !canReadInternal(actor, f)) throw Errors.forbidden();
    validateBody(input.body);
  }

  private createdAt(actor: Actor, f: FoundNoteable, given: string | undefined): string {
    if (given !== undefined && canSetCreatedAt(actor, f)) {
      const parsed = parseDateTime(given);
      if (parsed) return parsed;
    }
    return nowIso();
  }

  /** POST …/notes: an individual note (a discussion of one). */
  async create(actor: Actor, f: FoundNoteable, input: NoteInput): Promise<NoteRow> {
    this.checkCreate(actor, f, input);
    const at = this.createdAt(actor, f, input.created_at);
    const read = await this.readText(actor, f, input.body);
    return this.db.transaction().execute(async (trx) => {
      const note = await this.insertNote(trx, f, {
        author_id: actor.user!.id,
        body: input.body,
        discussion_id: newDiscussionId(),
        type: null,
        internal: input.internal ? 1 : 0,
        at,
      });
      await this.keepText(trx, f, read, actor.user!.id);
      return note;
    });
  }

  /** Inserts a user's note, counts it on the noteable and touches it (Note belongs_to :noteable, touch: true). */
  private async insertNote(
    trx: Kysely<Database>,
    f: FoundNoteable,
    n: { author_id: number; body: string; discussion_id: string; type: string | null; internal: number; at: string; position?: string | null },
  ): Promise<NoteRow> {
    const note = await trx
      .insertInto('notes')
      .values({
        project_id: f.target.project_id,
        noteable_type: f.type,
        noteable_id: f.target.id,
        discussion_id: n.discussion_id,
        type: n.type,
        author_id: n.author_id,
        body: n.body,
        system: 0,
        internal: n.internal,
        resolvable: n.type === null ? 0 : 1,
        resolved_at: null,
        resolved_by_id: null,
        position: n.position ?? null,
        created_at: n.at,
        updated_at: n.at,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await trx
      .updateTable(NOTEABLE_TABLE[f.type])
      .set((eb) => ({ user_notes_count: eb('user_notes_count', '+', 1), updated_at: nowIso() }))
      .where('id', '=', f.target.id)
      .execute();
    // the note hook (project and group webhooks; user activity), in the note's transaction
    const author = await trx.selectFrom('users').selectAll().where('id', '=', n.author_id).executeTakeFirstOrThrow();
    const hookData = await this.hookData(trx, author, note, 'create');
    if (hookData) await recordSystemEvent(trx, hookData);
    return note;
  }

  /** The note hook payload of a note (Gitlab::DataBuilder::Note), with its noteable's attributes. */
  hookData(trx: Kysely<Database>, user: UserRow, note: NoteRow, action: 'create' | 'update' = 'create') {
    const attrs = this.hookAttrs[note.noteable_type as NoteableType];
    return noteHookData(trx, this.deps, user, note, action, attrs);
  }

  /**
   * A system note ("approved this merge request", "closed" …) in the caller's transaction: an individual note
   * with system true, not counted in user_notes_count. The features' services call this.
   */
  async addSystemNote(
    trx: Kysely<Database>,
    type: NoteableType,
    target: { id: number; project_id: number },
    authorId: number | null,
    body: string,
  ): Promise<NoteRow> {
    const at = nowIso();
    return trx
      .insertInto('notes')
      .values({
        project_id: target.project_id,
        noteable_type: type,
        noteable_id: target.id,
        discussion_id: newDiscussionId(),
        type: null,
        author_id: authorId,
        body,
        system: 1,
        internal: 0,
        resolvable: 0,
        resolved_at: null,
        resolved_by_id: null,
        position: null,
        created_at: at,
        updated_at: at,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** PUT …/notes/:note_id: a new body (admin_note: the author, a Maintainer or an administrator). */
  async update(actor: Actor, f: FoundNoteable, noteId: number, body: string): Promise<NoteRow> {
    const note = await this.get(actor, f, noteId);
    if (!canAdminNote(actor, f, note)) throw Errors.forbidden();
    validateBody(body);
    if (body === note.body) return note;
    const at = nowIso();
    const read = await this.readText(actor, f, body);
    return this.db.transaction().execute(async (trx) => {
      const updated = await trx.updateTable('notes').set({ body, updated_at: at }).where('id', '=', note.id).returningAll().executeTakeFirstOrThrow();
      await trx.updateTable(NOTEABLE_TABLE[f.type]).set({ updated_at: at }).where('id', '=', f.target.id).execute();
      await this.keepText(trx, f, read, actor.user!.id);
      return updated;
    });
  }

  /** DELETE …/notes/:note_id: the note and its award emoji; the count of user notes goes down. */
  async remove(actor: Actor, f: FoundNoteable, noteId: number): Promise<void> {
    const note = await this.get(actor, f, noteId);
    if (!canAdminNote(actor, f, note)) throw Errors.forbidden();
    await this.db.transaction().execute(async (trx) => {
      const gone = await trx.deleteFrom('notes').where('id', '=', note.id).executeTakeFirst();
      if (!gone.numDeletedRows) return;
      await trx.deleteFrom('award_emoji').where('awardable_type', '=', 'Note').where('awardable_id', '=', note.id).execute();
      await trx
        .updateTable(NOTEABLE_TABLE[f.type])
        .set((eb) => ({
          user_notes_count: note.system ? eb.ref('user_notes_count') : sql<number>`case when user_notes_count > 0 then user_notes_count - 1 else 0 end`,
          updated_at: nowIso(),
        }))
        .where('id', '=', f.target.id)
        .execute();
    });
  }

  // ---- discussions ----------------------------------------------------------------------------

  /** The discussion ids of the noteable, in the order of their first note (for pagination). */
  async discussionIds(actor: Actor, f: FoundNoteable) {
    return (await this.notesOf(actor, f))
      .clearSelect()
      .select(['notes.discussion_id', sql<number>`min(notes.id)`.as('first_id')])
      .groupBy('notes.discussion_id')
      .orderBy(sql`min(notes.created_at)`)
      .orderBy(sql`min(notes.id)`);
  }

  /** The readable notes of these discussions, grouped by discussion in the order given, each oldest first. */
  async discussionNotes(actor: Actor, f: FoundNoteable, ids: string[]): Promise<NoteRow[][]> {
    if (!ids.length) return [];
    const rows = await (await this.notesOf(actor, f)).where('notes.discussion_id', 'in', ids).orderBy('notes.created_at').orderBy('notes.id').execute();
    const by = new Map<string, NoteRow[]>(ids.map((id) => [id, []]));
    for (const r of rows) by.get(r.discussion_id)?.push(r);
    return ids.map((id) => by.get(id)!).filter((notes) => notes.length > 0);
  }

  /** One discussion's readable notes; "404 Discussion Not Found" when there are none. */
  async discussion(actor: Actor, f: FoundNoteable, discussionId: string, resource = 'Discussion'): Promise<NoteRow[]> {
    const [notes] = await this.discussionNotes(actor, f, [discussionId]);
    if (!notes) throw Errors.notFound(resource);
    return notes;
  }

  /** POST …/discussions: a thread (DiscussionNote), or a diff thread (DiffNote) with a position. */
  async createDiscussion(actor: Actor, f: FoundNoteable, input: NoteInput & { position?: PositionInput }): Promise<NoteRow[]> {
    this.checkCreate(actor, f, input);
    const at = this.createdAt(actor, f, input.created_at);
    const read = await this.readText(actor, f, input.body);
    const note = await this.db.transaction().execute(async (trx) => {
      const note = await this.insertNote(trx, f, {
        author_id: actor.user!.id,
        body: input.body,
        discussion_id: newDiscussionId(),
        type: input.position ? 'DiffNote' : 'DiscussionNote',
        internal: input.internal ? 1 : 0,
        at,
        position: input.position ? JSON.stringify(input.position) : null,
      });
      await this.keepText(trx, f, read, actor.user!.id);
      return note;
    });
    return [note];
  }

  /**
   * POST …/discussions/:discussion_id/notes: a reply. An individual user note becomes a thread first
   * (convert_to_discussion!); a system note cannot be replied to (400).
   */
  async reply(actor: Actor, f: FoundNoteable, discussionId: string, input: NoteInput): Promise<NoteRow> {
    const notes = await this.discussion(actor, f, discussionId);
    const first = notes[0];
    if (first.type === null && first.system === 1) throw Errors.badRequest('Discussion can not be replied to.');
    this.checkCreate(actor, f, input);
    const at = this.createdAt(actor, f, input.created_at);
    const read = await this.readText(actor, f, input.body);
    return this.db.transaction().execute(async (trx) => {
      if (first.type === null) {
        await trx.updateTable('notes').set({ type: 'DiscussionNote', resolvable: 1 }).where('id', '=', first.id).execute();
      }
      const note = await this.insertNote(trx, f, {
        author_id: actor.user!.id,
        body: input.body,
        discussion_id: discussionId,
        type: first.type === 'DiffNote' ? 'DiffNote' : 'DiscussionNote',
        internal: first.internal,
        at,
        position: first.type === 'DiffNote' ? first.position : null,
      });
      await this.keepText(trx, f, read, actor.user!.id);
      return note;
    });
  }

  /** PUT …/discussions/:discussion_id?resolved=: every resolvable note of the thread (403 when not allowed or not resolvable). */
  async resolveDiscussion(actor: Actor, f: FoundNoteable, discussionId: string, resolved: boolean): Promise<NoteRow[]> {
    const notes = await this.discussion(actor, f, discussionId);
    const resolvable = notes.some((n) => n.resolvable === 1 && n.system === 0);
    if (!resolvable || !canResolve(actor, f)) throw Errors.forbidden();
    const at = nowIso();
    await this.db.transaction().execute(async (trx) => {
      let q = trx
        .updateTable('notes')
        .set(resolved ? { resolved_at: at, resolved_by_id: actor.user!.id } : { resolved_at: null, resolved_by_id: null })
        .where('discussion_id', '=', discussionId)
        .where('noteable_type', '=', f.type)
        .where('noteable_id', '=', f.target.id)
        .where('resolvable', '=', 1)
        .where('system', '=', 0);
      q = resolved ? q.where('resolved_at', 'is', null) : q.where('resolved_at', 'is not', null);
      await q.execute();
      await trx.updateTable(NOTEABLE_TABLE[f.type]).set({ updated_at: at }).where('id', '=', f.target.id).execute();
    });
    return this.discussion(actor, f, discussionId);
  }

  /** PUT …/discussions/:discussion_id/notes/:note_id with resolved: one note (400 "Note is not resolvable"). */
  async resolveNote(actor: Actor, f: FoundNoteable, noteId: number, resolved: boolean): Promise<NoteRow> {
    const note = await this.get(actor, f, noteId);
    if (!canResolve(actor, f)) throw Errors.forbidden();
    if (note.resolvable !== 1 || note.system === 1) throw Errors.badRequest('Note is not resolvable');
    if (resolved === (note.resolved_at !== null)) return note;
    const at = nowIso();
    return this.db
      .updateTable('notes')
      .set(resolved ? { resolved_at: at, resolved_by_id: actor.user!.id } : { resolved_at: null, resolved_by_id: null })
      .where('id', '=', note.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /**
   * Unresolved threads per merge request (discussions_not_resolved): threads with a resolvable note not
   * resolved yet. One query for any number of merge requests; those without any are absent (0).
   */
  async unresolvedDiscussionCounts(mergeRequestIds: readonly number[]): Promise<Map<number, number>> {
    const out = new Map<number, number>();
    if (!mergeRequestIds.length) return out;
    const rows = await this.db
      .selectFrom('notes')
      .select(['noteable_id', sql<number>`count(distinct discussion_id)`.as('n')])
      .where('noteable_type', '=', 'MergeRequest')
      .where('noteable_id', 'in', [...mergeRequestIds])
      .where('resolvable', '=', 1)
      .where('system', '=', 0)
      .where('resolved_at', 'is', null)
      .groupBy('noteable_id')
      .execute();
    for (const r of rows) out.set(r.noteable_id, Number(r.n));
    return out;
  }
}
