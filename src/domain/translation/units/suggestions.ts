// Suggestions and comments on units (Weblate's Suggestion and Comment, weblate/trans/models/suggestion.py
// and comment.py): records of their own (migration 018), each write with its change record and, in the
// same transaction, the unit's has_suggestion / has_comment flag and the translation's suggestions /
// comments counter moved by one when the flag flips (never a recount).
//
// - A suggestion equal to the unit's translation, or to a suggestion already made on the unit, is not
//   added (Weblate's SuggestionManager.add without voting): `add` answers null, the upload counts it skipped.
// - A comment with scope `global` or `report` is kept on the source string (Weblate's comment view:
//   `unit = unit.source_unit`), so every language sees it; `translation` stays on the unit. A unit's
//   has_comment (and `has:comment`) is about its own unresolved comments; a unit's comment list also shows
//   the comments of its source string (Weblate's Unit.all_comments).
// - Accepting a suggestion is a unit edit (writes.edits.apply, action 7 "Suggestion accepted", the
//   suggestion's author as the author), then the suggestion goes; removing one records 26.
//
// The row-level methods check no permissions (the upload checks its own); `suggest`, `deleteAs`, `acceptAs`
// and `commentAs` are the API's and the editor's writes with their permission checks, in DRF's order.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { CommentRow, Database, SuggestionRow, TranslationRow, UnitRow } from '../../../db/schema.ts';
import { Errors } from '../../../lib/errors.ts';
import { nowIso } from '../../../lib/time.ts';
import type { Actor } from '../../access/actor.ts';
import { ACTION } from '../changes/actions.ts';
import { recordChange } from '../changes/record.ts';
import type { TranslationDeps } from '../deps.ts';
import { READONLY_MESSAGE } from '../permissions.ts';
import type { Paged, Pager, Slice } from '../reads.ts';
import { TranslationVisibility } from '../visibility.ts';

/** Who a suggestion is credited to (structurally the edits' EditAuthor). */
export interface SuggestionAuthor {
  userId: number | null;
  name: string;
  email: string;
}

export const COMMENT_SCOPES = ['global', 'translation', 'report'] as const;
export type CommentScope = (typeof COMMENT_SCOPES)[number];

const SEP = '\u001e';
type Trx = Transaction<Database>;
const COMMENT_MAX = 1000;

/** The plural forms of a `target`: a U+001E-joined string or a list of strings (form fields repeat). */
export function targetForms(raw: unknown): string[] {
  if (raw === undefined || raw === null) throw Errors.invalid({ target: ['This field is required.'] });
  const forms = typeof raw === 'string' ? raw.split(SEP) : Array.isArray(raw) ? raw : null;
  if (!forms) throw Errors.invalid({ target: [`Expected a list of items but got type "${typeof raw === 'object' ? 'dict' : typeof raw}".`] });
  if (!forms.length) throw Errors.invalid({ target: ['This list may not be empty.'] });
  if (forms.some((f) => typeof f !== 'string')) throw Errors.invalid({ target: ['Not a valid string.'] });
  if (forms.every((f) => f === '')) throw Errors.invalid({ target: ['This field may not be blank.'] });
  return forms as string[];
}

export class SuggestionsService {
  private readonly visible: TranslationVisibility;

  constructor(private readonly deps: TranslationDeps) {
    this.visible = new TranslationVisibility(deps.db);
  }

  private get k() {
    return this.deps.db.kysely;
  }

  private async inTrx<T>(trx: Trx | undefined, work: (trx: Trx) => Promise<T>): Promise<T> {
    return trx ? work(trx) : this.k.transaction().execute(work);
  }

  /**
   * A suggestion of `target` (plural forms) on `unit`: the row, or null when it is not added (the unit is
   * translated with exactly that text, or the same suggestion is already there). One transaction (or the caller's).
   */
  async add(actor: Actor, unit: UnitRow, target: string[], opts: { author?: SuggestionAuthor; trx?: Trx } = {}): Promise<SuggestionRow | null> {
    const [row] = await this.addMany(actor, [{ unit, target }], opts);
    return row ?? null;
  }

  /**
   * Many suggestions at once (an upload with method=suggest): the same rules as `add`, in batched
   * statements. Returns the rows added, in input order (skipped items have no row).
   */
  async addMany(actor: Actor, items: { unit: UnitRow; target: string[] }[], opts: { author?: SuggestionAuthor; trx?: Trx } = {}): Promise<SuggestionRow[]> {
    if (!items.length) return [];
    return this.inTrx(opts.trx, async (trx) => {
      const unitIds = [...new Set(items.map((i) => i.unit.id))];
      const existing = new Set<string>();
      for (let i = 0; i < unitIds.length; i += 500) {
        const rows = await trx
          .selectFrom('suggestions')
          .select(['unit_id', 'target'])
          .where('unit_id', 'in', unitIds.slice(i, i + 500))
          .execute();
        for (const r of rows) existing.add(`${r.unit_id}\u0000${r.target}`);
      }
      const now = nowIso();
      const userId = actor.user?.id ?? null;
      const author = opts.author ?? { userId, name: actor.user?.name ?? '', email: actor.user?.email ?? '' };
      const fresh: { unit: UnitRow; target: string }[] = [];
      for (const { unit, target } of items) {
        const joined = target.join(SEP);
        const key = `${unit.id}\u0000${joined}`;
        if (unit.state >= 20 && unit.target === joined) continue;
        if (existing.has(key)) continue;
        existing.add(key);
        fresh.push({ unit, target: joined });
      }
      const added: SuggestionRow[] = [];
      for (let i = 0; i < fresh.length; i += 400) {
        added.push(
          ...(await trx
            .insertInto('suggestions')
            .values(
              fresh.slice(i, i + 400).map((f) => ({
                unit_id: f.unit.id,
                translation_id: f.unit.translation_id,
                user_id: author.userId,
                author_name: author.name,
                author_email: author.email,
                target: f.target,
                timestamp: now,
              })),
            )
            .returningAll()
            .execute()),
        );
      }
      if (!added.length) return [];
      const units = new Map(fresh.map((f) => [f.unit.id, f.unit]));
      await this.flag(trx, 'has_suggestion', 'suggestions', [...new Set(added.map((s) => s.unit_id))], 1, units);
      await this.changes(
        trx,
        added.map((s) => ({ unit: units.get(s.unit_id)!, action: ACTION.SUGGESTION, target: s.target, userId, authorId: author.userId, timestamp: now })),
      );
      return added;
    });
  }

  /**
   * Sets a unit flag (has_suggestion / has_comment) to `value` on the units where it differs, and moves
   * their translations' counter by the number of units that flipped.
   */
  private async flag(
    trx: Trx,
    column: 'has_suggestion' | 'has_comment',
    counter: 'suggestions' | 'comments',
    ids: number[],
    value: 0 | 1,
    units: Map<number, UnitRow>,
  ) {
    const byTranslation = new Map<number, number[]>();
    for (const id of ids) {
      const t = units.get(id)!.translation_id;
      byTranslation.set(t, [...(byTranslation.get(t) ?? []), id]);
    }
    for (const [translationId, list] of byTranslation) {
      let flipped = 0;
      for (let i = 0; i < list.length; i += 500) {
        const r = await trx
          .updateTable('units')
          .set({ [column]: value })
          .where('id', 'in', list.slice(i, i + 500))
          .where(column, '=', value ? 0 : 1)
          .executeTakeFirst();
        flipped += Number(r.numUpdatedRows);
      }
      if (flipped) {
        await trx
          .updateTable('translations')
          .set({ [counter]: sql`${sql.ref(counter)} + ${value ? flipped : -flipped}` })
          .where('id', '=', translationId)
          .execute();
      }
    }
  }

  private async changes(
    trx: Trx,
    rows: { unit: UnitRow; action: number; target: string; userId: number | null; authorId: number | null; timestamp: string }[],
  ): Promise<void> {
    if (!rows.length) return;
    const components = new Map<number, number>();
    for (const r of rows) {
      if (!components.has(r.unit.component_id)) {
        const c = await trx.selectFrom('components').select('project_id').where('id', '=', r.unit.component_id).executeTakeFirstOrThrow();
        components.set(r.unit.component_id, c.project_id);
      }
    }
    await recordChange(
      trx,
      rows.map((r) => ({
        projectId: components.get(r.unit.component_id)!,
        componentId: r.unit.component_id,
        translationId: r.unit.translation_id,
        unitId: r.unit.id,
        languageId: r.unit.language_id,
        userId: r.userId,
        authorId: r.authorId,
        action: r.action,
        target: r.target,
        timestamp: r.timestamp,
      })),
    );
    // the translations' rows are written (unchanged) so their version moves: the editor's cached pages are keyed on it
    const translationIds = [...new Set(rows.map((r) => r.unit.translation_id))];
    for (let i = 0; i < translationIds.length; i += 500)
      await trx
        .updateTable('translations')
        .set({ total: sql`total` })
        .where('id', 'in', translationIds.slice(i, i + 500))
        .execute();
  }

  /** The number of plural forms the unit's translation takes (its language's plural). */
  async pluralNumber(unit: UnitRow): Promise<number> {
    const r = await this.k
      .selectFrom('translations')
      .leftJoin('language_plurals', 'language_plurals.id', 'translations.plural_id')
      .select('language_plurals.number')
      .where('translations.id', '=', unit.translation_id)
      .executeTakeFirst();
    return r?.number ?? 2;
  }

  /** The translation a unit belongs to. */
  async translationOf(unit: UnitRow): Promise<TranslationRow> {
    return this.k.selectFrom('translations').selectAll().where('id', '=', unit.translation_id).executeTakeFirstOrThrow();
  }

  /** Every suggestion on a unit the actor may see, oldest first (GET /api/suggestions/). */
  async list<P extends Slice>(actor: Actor, pager: Pager<P>): Promise<Paged<P, SuggestionRow>> {
    const visible = this.visible.translations(actor).select('translations.id');
    const base = this.k.selectFrom('suggestions').where('suggestions.translation_id', 'in', visible);
    const { n } = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const page = pager(Number(n));
    const rows = await base.selectAll().orderBy('suggestions.id').limit(page.size).offset(page.offset).execute();
    return { total: Number(n), page, rows };
  }

  /** The suggestions on a unit, oldest first. */
  async forUnit(unitId: number): Promise<SuggestionRow[]> {
    return this.k.selectFrom('suggestions').selectAll().where('unit_id', '=', unitId).orderBy('id').execute();
  }

  /** One suggestion as the actor may see it (its unit visible), else 404. */
  async find(actor: Actor, id: number) {
    if (!Number.isSafeInteger(id) || id < 1 || id > 2147483647) throw Errors.notFound();
    const s = await this.k.selectFrom('suggestions').selectAll().where('id', '=', id).executeTakeFirst();
    if (!s) throw Errors.notFound();
    const path = await this.deps.queries.unit(actor, s.unit_id);
    return { suggestion: s, ...path };
  }

  /** Removes a suggestion: change 26 "Suggestion removed", the unit's flag and the counter when it was the last. */
  async remove(actor: Actor, suggestion: SuggestionRow, opts: { trx?: Trx; record?: boolean } = {}): Promise<void> {
    await this.inTrx(opts.trx, async (trx) => {
      const gone = await trx.deleteFrom('suggestions').where('id', '=', suggestion.id).executeTakeFirst();
      if (!Number(gone.numDeletedRows)) return;
      const unit = await trx.selectFrom('units').selectAll().where('id', '=', suggestion.unit_id).executeTakeFirst();
      if (!unit) return;
      const left = await trx.selectFrom('suggestions').select('id').where('unit_id', '=', unit.id).limit(1).executeTakeFirst();
      if (!left) await this.flag(trx, 'has_suggestion', 'suggestions', [unit.id], 0, new Map([[unit.id, unit]]));
      if (opts.record !== false) {
        const userId = actor.user?.id ?? null;
        await this.changes(trx, [{ unit, action: ACTION.SUGGESTION_DELETE, target: suggestion.target, userId, authorId: userId, timestamp: nowIso() }]);
      }
    });
  }

  /**
   * Accepts a suggestion: the unit gets its target as translated (20) through the unit edits (change 7,
   * the suggestion's author), and the suggestion goes. 400 {"target": …} when the edit breaks a rule.
   * Returns the unit as it is now.
   */
  async accept(actor: Actor, translation: TranslationRow, unit: UnitRow, suggestion: SuggestionRow): Promise<UnitRow> {
    const target = suggestion.target.split(SEP);
    const problem = this.deps.writes.edits.check(translation, unit, target, 20);
    if (problem) throw Errors.invalid({ target: [problem] });
    return this.k.transaction().execute(async (trx) => {
      const author = { userId: suggestion.user_id, name: suggestion.author_name, email: suggestion.author_email };
      const [now] = await this.deps.writes.edits.apply(actor, translation, [{ unit, target, state: 20 }], { author, action: ACTION.ACCEPT, trx });
      await this.remove(actor, suggestion, { trx, record: false });
      return (await trx.selectFrom('units').selectAll().where('id', '=', unit.id).executeTakeFirst()) ?? now ?? unit;
    });
  }

  // ---- the writes of the API and the editor, with their permission checks ------------------------

  /**
   * POST /api/units/:id/suggestions/ (and the editor's Suggest): suggestion.add, not on a read-only
   * string, the right number of plural forms, not a duplicate (400 {"target": …}). Returns the row.
   */
  async suggest(actor: Actor, unitId: number, rawTarget: unknown): Promise<SuggestionRow> {
    if (!actor.user) throw Errors.unauthorized();
    const { unit, project, component } = await this.deps.queries.unit(actor, unitId);
    await this.deps.writes.permissions.require(actor, 'suggestion.add', { project, component });
    if (unit.state === 100) throw Errors.forbidden(READONLY_MESSAGE);
    const forms = targetForms(rawTarget);
    const count = unit.source.includes(SEP) ? await this.pluralNumber(unit) : 1;
    if (forms.length !== count) throw Errors.invalid({ target: ['Number of plurals does not match'] });
    const row = await this.add(actor, unit, forms);
    if (!row) throw Errors.invalid({ target: ['This translation is already suggested or is the current translation.'] });
    return row;
  }

  /** DELETE /api/suggestions/:id/: the suggestion's author, or suggestion.delete (Weblate's check_suggestion_delete). */
  async deleteAs(actor: Actor, id: number): Promise<void> {
    if (!actor.user) throw Errors.unauthorized();
    const { suggestion, project, component } = await this.find(actor, id);
    if (suggestion.user_id !== actor.user.id)
      await this.deps.writes.permissions.require(actor, 'suggestion.delete', { project, component }, 'Can not delete suggestion');
    await this.remove(actor, suggestion);
  }

  /**
   * POST /api/suggestions/:id/accept/: suggestion.accept, and unit.edit since accepting is an edit
   * (Weblate's check_can_edit: locks, read-only and approved strings refuse it). Returns the unit now, with its path.
   */
  async acceptAs(actor: Actor, id: number) {
    if (!actor.user) throw Errors.unauthorized();
    const { suggestion, unit, project, component, languageCode } = await this.find(actor, id);
    const perms = this.deps.writes.permissions;
    await perms.require(actor, 'suggestion.accept', { project, component, unit });
    await perms.require(actor, 'unit.edit', { project, component, unit });
    const translation = await this.translationOf(unit);
    const now = await this.accept(actor, translation, unit, suggestion);
    return { unit: now, project, component, languageCode };
  }

  /**
   * POST /api/units/:id/comments/: comment.add, then the fields as Weblate's CommentForm checks them
   * (400 with field errors); a `timestamp` of its own needs project.edit. Returns the row.
   */
  async commentAs(actor: Actor, unitId: number, b: Record<string, unknown>): Promise<CommentRow> {
    if (!actor.user) throw Errors.unauthorized();
    const { unit, project, component } = await this.deps.queries.unit(actor, unitId);
    const perms = this.deps.writes.permissions;
    await perms.require(actor, 'comment.add', { project, component }, 'You do not have permission to perform this action.');
    const errors: Record<string, string[]> = {};
    const text = b.comment;
    if (text === undefined || text === null) errors.comment = ['This field is required.'];
    else if (typeof text !== 'string') errors.comment = ['Not a valid string.'];
    else if (text.trim() === '') errors.comment = ['This field may not be blank.'];
    else if (text.length > COMMENT_MAX) errors.comment = [`Ensure this field has no more than ${COMMENT_MAX} characters.`];
    // "report" needs source reviews, which Hearth does not have: it is not a choice here (Weblate's CommentForm)
    const scope = b.scope === undefined || b.scope === null || b.scope === '' ? 'global' : b.scope;
    if (typeof scope !== 'string' || scope === 'report' || !(COMMENT_SCOPES as readonly string[]).includes(scope))
      errors.scope = [`"${String(scope)}" is not a valid choice.`];
    let timestamp: string | undefined;
    if (b.timestamp !== undefined && b.timestamp !== null && b.timestamp !== '') {
      const t =
        typeof b.timestamp === 'string' && /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(b.timestamp) ? Date.parse(b.timestamp.replace(' ', 'T')) : Number.NaN;
      if (Number.isNaN(t)) errors.timestamp = ['Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].'];
      else timestamp = new Date(t).toISOString();
    }
    if (Object.keys(errors).length) throw Errors.invalid(errors);
    // importing comments with their own time is for those who manage the project (Weblate: project.edit)
    if (timestamp !== undefined) await perms.require(actor, 'project.edit', { project, component }, 'You do not have permission to perform this action.');
    return this.comment(actor, unit, text as string, scope as CommentScope, { timestamp });
  }

  // ---- comments ---------------------------------------------------------------------------------

  /** The source-language unit of a unit (itself when it is one); null when there is none. */
  async sourceUnit(db: Kysely<Database> | Trx, unit: UnitRow): Promise<UnitRow | null> {
    return (
      (await db
        .selectFrom('units')
        .innerJoin('translations', 'translations.id', 'units.translation_id')
        .selectAll('units')
        .where('translations.component_id', '=', unit.component_id)
        .where('translations.is_source', '=', 1)
        .where('units.id_hash', '=', unit.id_hash)
        .orderBy('units.id')
        .limit(1)
        .executeTakeFirst()) ?? null
    );
  }

  /**
   * A comment on `unit` (on its source string for the global and report scopes): change 3 "Comment
   * added", the flag and the counter of the unit that carries it. Returns the row.
   */
  async comment(actor: Actor, unit: UnitRow, text: string, scope: CommentScope, opts: { timestamp?: string; trx?: Trx } = {}): Promise<CommentRow> {
    return this.inTrx(opts.trx, async (trx) => {
      const on = scope === 'translation' ? unit : ((await this.sourceUnit(trx, unit)) ?? unit);
      const now = opts.timestamp ?? nowIso();
      const userId = actor.user?.id ?? null;
      const row = await trx
        .insertInto('comments')
        .values({ unit_id: on.id, translation_id: on.translation_id, user_id: userId, comment: text, scope, timestamp: now })
        .returningAll()
        .executeTakeFirstOrThrow();
      await this.flag(trx, 'has_comment', 'comments', [on.id], 1, new Map([[on.id, on]]));
      await this.changes(trx, [{ unit: on, action: ACTION.COMMENT, target: text, userId, authorId: userId, timestamp: nowIso() }]);
      return row;
    });
  }

  /**
   * The comments a unit shows, oldest first: its own and its source string's (for a source string: its
   * own and those on every translation of it) — Weblate's Unit.all_comments.
   */
  async commentsFor(unit: UnitRow): Promise<CommentRow[]> {
    const source = await this.sourceUnit(this.k, unit);
    const isSource = source?.id === unit.id;
    let q = this.k.selectFrom('comments').innerJoin('units', 'units.id', 'comments.unit_id').selectAll('comments');
    if (isSource) {
      q = q.where('units.component_id', '=', unit.component_id).where('units.id_hash', '=', unit.id_hash);
    } else {
      const ids = source ? [unit.id, source.id] : [unit.id];
      q = q.where('comments.unit_id', 'in', ids);
    }
    return q.orderBy('comments.id').execute();
  }
}
