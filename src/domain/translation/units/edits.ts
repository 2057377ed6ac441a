// Unit edits: a new target and state for units of one translation, as Weblate's Unit.translate does it.
// One transaction (or the caller's): each unit that really changes is updated and marked pending (its
// author kept for the commit), gets its checks run again, and one change record (5 New translation,
// 2 Translation changed, 36 Translation approved, 37 Marked for edit, or the caller's action, with the
// author, the new target, the old one and details {state, old_state, source}); the first change of a user
// in a translation is preceded by 45 New contributor. The translation's counters move by the difference
// each unit makes (never a recount), with last_change / last_author_id / recent_changes. Editing the
// template of a monolingual component changes the source of the other translations' units (Weblate's
// update_source_units: translated ones become "needs editing", change 30). No permission checks: callers check.
import { sql, type Transaction } from 'kysely';
import type { ComponentRow, Database, TranslationRow, UnitRow } from '../../../db/schema.ts';
import type { UnitState } from '../../../formats/types.ts';
import { nowIso } from '../../../lib/time.ts';
import type { Actor } from '../../access/actor.ts';
import { parseEnforcedChecks, parseFlags, runChecks } from '../checks/index.ts';
import type { TranslationDeps } from '../deps.ts';
import { COUNTERS, type Counter } from '../stats/stats.ts';
import { contentHash, PLURAL_SEPARATOR } from './hash.ts';
import { countWords } from './words.ts';

export interface EditAuthor {
  userId: number | null;
  name: string;
  email: string;
}
export interface UnitEdit {
  unit: UnitRow;
  target: string[];
  state: UnitState;
  explanation?: string;
  extraFlags?: string;
}

type Trx = Transaction<Database>;

export const ACTION_CHANGE = 2;
export const ACTION_NEW = 5;
export const ACTION_SOURCE_CHANGE = 30;
export const ACTION_APPROVE = 36;
export const ACTION_MARKED_EDIT = 37;
export const ACTION_NEW_CONTRIBUTOR = 45;

/** Settable states (100 is never settable, 11/12 are not manual). */
export const SETTABLE_STATES: readonly number[] = [0, 10, 20, 30];

/** How many forms a unit's target has in this translation: the language's plural count for plural strings, else 1. */
export function expectedForms(unit: Pick<UnitRow, 'source'>, pluralCount: number): number {
  return unit.source.includes(PLURAL_SEPARATOR) ? Math.max(1, pluralCount) : 1;
}

/** Weblate's author of an actor: the user's name and public (or commit) e-mail. */
export function actorAuthor(actor: Actor): EditAuthor {
  const u = actor.user;
  if (!u) return { userId: null, name: 'Anonymous', email: 'noreply@weblate.org' };
  const rec = u as unknown as Record<string, unknown>;
  const email = (typeof rec.commit_email === 'string' && rec.commit_email) || (typeof rec.public_email === 'string' && rec.public_email) || u.email;
  return { userId: u.id, name: u.name || u.username, email };
}

/** "Name <email>" as kept in units.pending_author. */
export function formatAuthor(a: EditAuthor): string {
  return `${a.name} <${a.email}>`;
}

/** One unit's share of its translation's counters. */
function contribution(u: Pick<UnitRow, 'state' | 'num_words' | 'source_chars' | 'has_failing_check' | 'has_suggestion' | 'has_comment'>) {
  const c: Partial<Record<Counter, number>> = {};
  const add = (k: string, on: boolean) => {
    if (!on) return;
    c[k as Counter] = (c[k as Counter] ?? 0) + 1;
    c[`${k}_words` as Counter] = (c[`${k}_words` as Counter] ?? 0) + u.num_words;
    c[`${k}_chars` as Counter] = (c[`${k}_chars` as Counter] ?? 0) + u.source_chars;
  };
  add('total', true);
  add('translated', u.state >= 20);
  add('fuzzy', u.state >= 10 && u.state < 20);
  add('approved', u.state === 30);
  add('readonly', u.state === 100);
  add('failing', u.has_failing_check === 1);
  if (u.has_suggestion) c.suggestions = 1;
  if (u.has_comment) c.comments = 1;
  return c;
}

class Delta {
  readonly by = new Map<number, Partial<Record<Counter, number>>>();
  move(translationId: number, before: Parameters<typeof contribution>[0] | null, after: Parameters<typeof contribution>[0] | null) {
    const d = this.by.get(translationId) ?? {};
    if (before) for (const [k, v] of Object.entries(contribution(before))) d[k as Counter] = (d[k as Counter] ?? 0) - v;
    if (after) for (const [k, v] of Object.entries(contribution(after))) d[k as Counter] = (d[k as Counter] ?? 0) + v;
    this.by.set(translationId, d);
  }
}

/** Adds counter deltas to translation rows, and the changes' time and author (recent_changes: within 6 hours of the last). */
export async function applyStatsDelta(
  trx: Trx,
  deltas: Map<number, Partial<Record<Counter, number>>>,
  changes: Map<number, { count: number; at: string; authorId: number | null }>,
): Promise<void> {
  const ids = new Set([...deltas.keys(), ...changes.keys()]);
  for (const id of ids) {
    const d = deltas.get(id) ?? {};
    const set: Record<string, unknown> = {};
    for (const k of COUNTERS) {
      if (k === 'recent_changes') continue;
      const v = d[k];
      if (v) set[k] = sql`${sql.ref(k)} + ${v}`;
    }
    const ch = changes.get(id);
    if (ch && ch.count > 0) {
      const since = new Date(Date.parse(ch.at) - 6 * 3600_000).toISOString();
      set.recent_changes = sql`case when last_change is not null and last_change > ${since} then recent_changes + ${ch.count} else ${ch.count} end`;
      set.last_change = ch.at;
      set.last_author_id = ch.authorId;
    }
    if (Object.keys(set).length) await trx.updateTable('translations').set(set).where('id', '=', id).execute();
  }
}

interface Context {
  component: ComponentRow;
  projectName: string;
  sourceLanguage: string;
  targetLanguage: string;
  pluralCount: number;
  pluralFormula: string;
  sourcePlural: { number: number; formula: string };
  componentFlags: Set<string>;
  enforced: string[];
}

export class UnitEdits {
  constructor(private readonly deps: TranslationDeps) {}

  /** The number of plural forms of a translation's language. */
  async pluralCount(translation: TranslationRow): Promise<number> {
    const p = await this.deps.db.kysely.selectFrom('language_plurals').select('number').where('id', '=', translation.plural_id).executeTakeFirst();
    return p?.number ?? 2;
  }

  /**
   * Weblate's message when target/state break a rule, else null. `pluralCount` is the language's
   * number of forms (see pluralCount()); when omitted, 2 is assumed for plural strings.
   */
  check(translation: TranslationRow, unit: UnitRow, target: string[], state: UnitState | number, pluralCount?: number): string | null {
    if (unit.state === 100) return 'The string is read only.';
    if (state === 11 || state === 12) return 'This state cannot be set manually.';
    if (!SETTABLE_STATES.includes(state)) return 'Invalid state';
    const empty = target.every((t) => t === '');
    if (state === 0 && !empty) return 'Can not use empty state with non empty target';
    if (state !== 0 && empty) return 'Can not use non empty state with empty target';
    const forms = expectedForms(unit, pluralCount ?? 2);
    if (target.length !== forms) return 'Number of plurals does not match';
    if (translation.is_source && !translation.is_template) return 'The string is read only.';
    return null;
  }

  private async context(db: Trx, translation: TranslationRow): Promise<Context> {
    const component = await db.selectFrom('components').selectAll().where('id', '=', translation.component_id).executeTakeFirstOrThrow();
    const project = await db.selectFrom('translation_projects').select('name').where('id', '=', component.project_id).executeTakeFirstOrThrow();
    const langs = await db.selectFrom('languages').select(['id', 'code']).where('id', 'in', [component.source_language_id, translation.language_id]).execute();
    const plurals = await db
      .selectFrom('language_plurals')
      .select(['id', 'language_id', 'number', 'formula', 'source'])
      .where((eb) => eb.or([eb('id', '=', translation.plural_id), eb.and([eb('language_id', '=', component.source_language_id), eb('source', '=', 0)])]))
      .execute();
    const own = plurals.find((p) => p.id === translation.plural_id) ?? { number: 2, formula: 'n != 1' };
    const sp = plurals.find((p) => p.language_id === component.source_language_id && p.source === 0) ?? { number: 2, formula: 'n != 1' };
    let enforced: string[] = [];
    try {
      enforced = parseEnforcedChecks(component.enforced_checks);
    } catch {
      enforced = [];
    }
    return {
      component,
      projectName: project.name,
      sourceLanguage: langs.find((l) => l.id === component.source_language_id)?.code ?? 'en',
      targetLanguage: langs.find((l) => l.id === translation.language_id)?.code ?? translation.language_code,
      pluralCount: own.number,
      pluralFormula: own.formula,
      sourcePlural: { number: sp.number, formula: sp.formula },
      componentFlags: parseFlags(component.check_flags),
      enforced,
    };
  }

  /** See the head comment. Returns the units as they are now (unchanged ones as they were). */
  async apply(
    actor: Actor,
    translation: TranslationRow,
    edits: UnitEdit[],
    opts: { author?: EditAuthor; action?: number; trx?: Transaction<Database> } = {},
  ): Promise<UnitRow[]> {
    if (!edits.length) return [];
    const run = (trx: Trx) => this.run(trx, actor, translation, edits, opts);
    return opts.trx ? run(opts.trx) : this.deps.db.kysely.transaction().execute(run);
  }

  private async run(
    trx: Trx,
    actor: Actor,
    translation: TranslationRow,
    edits: UnitEdit[],
    opts: { author?: EditAuthor; action?: number },
  ): Promise<UnitRow[]> {
    const ctx = await this.context(trx, translation);
    const author = opts.author ?? actorAuthor(actor);
    const userId = actor.user?.id ?? author.userId;
    const now = nowIso();
    const pendingAuthor = formatAuthor(author);

    // the current rows (locked on PostgreSQL), in chunks
    const ids = [...new Set(edits.map((e) => e.unit.id))];
    const current = new Map<number, UnitRow>();
    for (let i = 0; i < ids.length; i += 500) {
      let q = trx
        .selectFrom('units')
        .selectAll()
        .where('id', 'in', ids.slice(i, i + 500));
      if (this.deps.db.dialect === 'postgres') q = q.forUpdate();
      for (const u of await q.execute()) current.set(u.id, u);
    }

    const delta = new Delta();
    const changeRows: Record<string, unknown>[] = [];
    const result = new Map<number, UnitRow>();
    const templateEdits: { before: UnitRow; after: UnitRow }[] = [];
    let contributorChecked = false;

    for (const e of edits) {
      const old = current.get(e.unit.id);
      if (!old || old.translation_id !== translation.id) continue;
      const forms = e.target.length ? e.target : [''];
      const target = forms.join(PLURAL_SEPARATOR);
      const nonEmpty = forms.some((t) => t !== '');
      let state: number = nonEmpty ? e.state : 0;
      if (state === 0 && nonEmpty) state = 20;
      const explanation = e.explanation ?? old.explanation;
      const extraFlags = e.extraFlags ?? old.extra_flags;
      const contentChanged = target !== old.target || state !== old.state;
      if (!contentChanged && explanation === old.explanation && extraFlags === old.extra_flags) {
        result.set(old.id, old);
        continue;
      }
      let next: UnitRow = { ...old, explanation, extra_flags: extraFlags };
      if (contentChanged) {
        const isTemplateEdit = translation.is_template === 1 && translation.is_source === 1;
        const source = isTemplateEdit ? target : old.source;
        const flags = parseFlags(old.flags);
        for (const f of parseFlags(extraFlags)) flags.add(f);
        for (const f of ctx.componentFlags) flags.add(f);
        if (flags.has('read-only')) continue;
        const failing = translation.is_source
          ? []
          : runChecks({
              sources: source.split(PLURAL_SEPARATOR),
              targets: forms,
              state,
              flags,
              sourceLanguage: ctx.sourceLanguage,
              targetLanguage: ctx.targetLanguage,
              pluralCount: ctx.pluralCount,
              pluralFormula: ctx.pluralFormula,
              sourcePlural: ctx.sourcePlural,
              note: old.note,
              isSource: false,
              projectName: ctx.projectName,
              componentName: ctx.component.name,
            });
        if (state >= 20 && state < 100 && failing.some((c) => ctx.enforced.includes(c))) state = 10;
        next = {
          ...next,
          target,
          state,
          source,
          pending: 1,
          pending_author: pendingAuthor,
          pending_author_id: author.userId,
          has_failing_check: failing.length ? 1 : 0,
          failing_checks: failing.join(','),
          last_updated: now,
        };
        if (isTemplateEdit && source !== old.source) {
          next.num_words = countWords(source.split(PLURAL_SEPARATOR));
          next.source_chars = [...source].length;
          next.content_hash = contentHash(source.split(PLURAL_SEPARATOR), old.context).toString();
          templateEdits.push({ before: old, after: next });
        }
        if (!contributorChecked && userId !== null) {
          contributorChecked = true;
          const seen = await trx
            .selectFrom('translation_changes')
            .select('id')
            .where('translation_id', '=', translation.id)
            .where('user_id', '=', userId)
            .limit(1)
            .executeTakeFirst();
          if (!seen) changeRows.push(this.change(ctx.component, translation, old.id, userId, author.userId, ACTION_NEW_CONTRIBUTOR, '', '', {}, now));
        }
        const action = opts.action ?? (state === 10 ? ACTION_MARKED_EDIT : old.state >= 20 ? (state === 30 ? ACTION_APPROVE : ACTION_CHANGE) : ACTION_NEW);
        changeRows.push(
          this.change(
            ctx.component,
            translation,
            old.id,
            userId,
            author.userId,
            action,
            target,
            old.target,
            { state, old_state: old.state, source: old.source },
            now,
          ),
        );
      } else {
        next.last_updated = now;
      }
      await trx
        .updateTable('units')
        .set({
          target: next.target,
          state: next.state,
          source: next.source,
          num_words: next.num_words,
          source_chars: next.source_chars,
          content_hash: next.content_hash,
          explanation: next.explanation,
          extra_flags: next.extra_flags,
          pending: next.pending,
          pending_author: next.pending_author,
          pending_author_id: next.pending_author_id,
          has_failing_check: next.has_failing_check,
          failing_checks: next.failing_checks,
          last_updated: next.last_updated,
        })
        .where('id', '=', old.id)
        .execute();
      delta.move(translation.id, old, next);
      current.set(old.id, next);
      result.set(old.id, next);
    }

    const changes = new Map<number, { count: number; at: string; authorId: number | null }>();
    const contentCount = changeRows.filter((r) => r.action !== ACTION_NEW_CONTRIBUTOR).length;
    if (contentCount) changes.set(translation.id, { count: contentCount, at: now, authorId: author.userId });

    for (const t of templateEdits) await this.updateSourceUnits(trx, ctx, t.before, t.after, userId, author, now, delta, changeRows, changes);

    for (let i = 0; i < changeRows.length; i += 500)
      await trx
        .insertInto('translation_changes')
        .values(changeRows.slice(i, i + 500) as never)
        .execute();
    await applyStatsDelta(trx, delta.by, changes);
    return edits.map((e) => result.get(e.unit.id) ?? current.get(e.unit.id) ?? e.unit);
  }

  /** Weblate's update_source_units: the other translations' units of an edited template string. */
  private async updateSourceUnits(
    trx: Trx,
    ctx: Context,
    before: UnitRow,
    after: UnitRow,
    userId: number | null,
    author: EditAuthor,
    now: string,
    delta: Delta,
    changeRows: Record<string, unknown>[],
    changes: Map<number, { count: number; at: string; authorId: number | null }>,
  ): Promise<void> {
    const others = await trx
      .selectFrom('units')
      .selectAll()
      .where('component_id', '=', ctx.component.id)
      .where('id_hash', '=', before.id_hash)
      .where('id', '!=', before.id)
      .execute();
    for (const u of others) {
      let state = u.state;
      let previous = u.previous_source;
      if (u.state === 10 && u.previous_source === after.source) {
        state = 20;
        previous = '';
      } else if (u.state >= 20 && u.state < 100) {
        state = 10;
        previous = before.source;
      }
      const next: UnitRow = {
        ...u,
        source: after.source,
        num_words: after.num_words,
        source_chars: after.source_chars,
        content_hash: after.content_hash,
        state,
        previous_source: previous,
        last_updated: now,
      };
      await trx
        .updateTable('units')
        .set({
          source: next.source,
          num_words: next.num_words,
          source_chars: next.source_chars,
          content_hash: next.content_hash,
          state: next.state,
          previous_source: next.previous_source,
          last_updated: now,
        })
        .where('id', '=', u.id)
        .execute();
      delta.move(u.translation_id, u, next);
      const t = { id: u.translation_id, language_id: u.language_id } as TranslationRow;
      changeRows.push(this.change(ctx.component, t, u.id, userId, author.userId, ACTION_SOURCE_CHANGE, after.source, before.source, {}, now));
      const c = changes.get(u.translation_id) ?? { count: 0, at: now, authorId: author.userId };
      c.count++;
      changes.set(u.translation_id, c);
    }
  }

  private change(
    component: ComponentRow,
    translation: Pick<TranslationRow, 'id' | 'language_id'>,
    unitId: number,
    userId: number | null,
    authorId: number | null,
    action: number,
    target: string,
    old: string,
    details: Record<string, unknown>,
    now: string,
  ) {
    return {
      project_id: component.project_id,
      component_id: component.id,
      translation_id: translation.id,
      unit_id: unitId,
      language_id: translation.language_id,
      user_id: userId,
      author_id: authorId,
      action,
      target,
      old,
      details: JSON.stringify(details),
      timestamp: now,
    };
  }
}
