// Award emoji on a merge request or an issue, or on one of its notes (GitLab lib/api/award_emoji.rb,
// AwardEmojis::AddService/DestroyService): a name from the emoji list, once per user and awardable.
// upvotes/downvotes ("thumbsup"/"thumbsdown" on the merge request or issue itself) move in the same
// transaction as the award.
import type { Kysely } from 'kysely';
import type { AwardEmojiRow, Database } from '../../db/schema.ts';
import { isUniqueViolation } from '../../db/sql.ts';
import { Errors } from '../../lib/errors.ts';
import { nowIso } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import type { FeatureDeps } from '../deps.ts';
import { DOWNVOTE, normalizeEmojiName, UPVOTE } from './emoji-names.ts';
import { canAward, canReadNote } from './notes-access.ts';
import { type FoundNoteable, NOTEABLE_TABLE, type NoteableType } from './noteable.ts';

/** What is awarded: the merge request or issue, or a note of it. */
export interface Awardable {
  type: NoteableType | 'Note';
  id: number;
}

const taken = () => Errors.notFound('Award Emoji Name has already been taken');

export class AwardEmojiService {
  constructor(readonly deps: FeatureDeps) {}

  private get db(): Kysely<Database> {
    return this.deps.db.kysely;
  }

  /** The awardable of a route: the merge request or issue, or its note `noteId` ("404 Not found" when it is not one, or hidden). */
  async awardable(actor: Actor, f: FoundNoteable, noteId?: number): Promise<Awardable> {
    if (noteId === undefined) return { type: f.type, id: f.target.id };
    const note = await this.db
      .selectFrom('notes')
      .select(['id', 'internal'])
      .where('id', '=', noteId)
      .where('noteable_type', '=', f.type)
      .where('noteable_id', '=', f.target.id)
      .executeTakeFirst();
    if (!note || !canReadNote(actor, f, note)) throw Errors.recordNotFound();
    return { type: 'Note', id: note.id };
  }

  /** The awards, oldest first (for pagination). */
  list(target: Awardable) {
    return this.db.selectFrom('award_emoji').selectAll().where('awardable_type', '=', target.type).where('awardable_id', '=', target.id).orderBy('id');
  }

  async get(target: Awardable, awardId: number): Promise<AwardEmojiRow> {
    const row = await this.list(target).where('id', '=', awardId).executeTakeFirst();
    if (!row) throw Errors.recordNotFound();
    return row;
  }

  /** POST: 404 "Award Emoji …" for whoever may not award, an unknown name or a second award of the same name. */
  async award(actor: Actor, f: FoundNoteable, target: Awardable, name: string): Promise<AwardEmojiRow> {
    if (!canAward(actor, f)) throw Errors.notFound('Award Emoji');
    if (name.trim() === '') throw Errors.notFound("Award Emoji Name can't be blank");
    const normal = normalizeEmojiName(name);
    if (!normal) throw Errors.notFound('Award Emoji Name is not a valid emoji name');
    const user = actor.user!;
    const existing = await this.list(target).where('user_id', '=', user.id).where('name', '=', normal).executeTakeFirst();
    if (existing) throw taken();
    const at = nowIso();
    try {
      return await this.db.transaction().execute(async (trx) => {
        const row = await trx
          .insertInto('award_emoji')
          .values({ awardable_type: target.type, awardable_id: target.id, user_id: user.id, name: normal, created_at: at, updated_at: at })
          .returningAll()
          .executeTakeFirstOrThrow();
        await this.count(trx, target, normal, 1);
        return row;
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw taken();
      throw e;
    }
  }

  /** DELETE: one's own award (or any, for an administrator); 401 otherwise, as GitLab answers. */
  async remove(actor: Actor, target: Awardable, awardId: number): Promise<void> {
    const row = await this.get(target, awardId);
    if (!actor.isAdmin && row.user_id !== actor.user?.id) throw Errors.unauthorized();
    await this.db.transaction().execute(async (trx) => {
      const gone = await trx.deleteFrom('award_emoji').where('id', '=', row.id).executeTakeFirst();
      if (gone.numDeletedRows) await this.count(trx, target, row.name, -1);
    });
  }

  /** upvotes/downvotes of the merge request or issue itself. */
  private async count(trx: Kysely<Database>, target: Awardable, name: string, delta: 1 | -1): Promise<void> {
    if (target.type === 'Note') return;
    const column = name === UPVOTE ? 'upvotes' : name === DOWNVOTE ? 'downvotes' : null;
    if (!column) return;
    await trx
      .updateTable(NOTEABLE_TABLE[target.type])
      .set((eb) => ({ [column]: delta > 0 ? eb(column, '+', 1) : eb(column, '-', 1) }))
      .where('id', '=', target.id)
      .execute();
  }
}
