// Unit edits: a new target and state for units of one translation, as Weblate's Unit.translate does it.
// One transaction (or the caller's): each unit that really changes is updated and marked pending (its
// author kept for the commit), gets its checks run again, and one change record (5 New translation,
// 2 Translation changed, 36 Translation approved, 37 Marked for edit, or the caller's action, with the
// author, the new target, the old one and details {state, old_state, source}); the first content change of a user
// in a translation is preceded by 45 New contributor. The translation's counters move by the difference
// each unit makes (never a recount), with last_change / last_author_id / recent_changes. Editing the
// template of a monolingual component changes the source of the other translations' units (Weblate's
// update_source_units: translated ones become "needs editing", change 30). No permission checks: callers check.
import { type Kysely, sql, type Transaction } from 'kysely';
import type { ComponentRow, Database, TranslationProjectRow, TranslationRow, UnitRow } from '../../../db/schema.ts';
import { getFormat } from '../../../formats/registry.ts';
import type { ParsedUnit, UnitState } from '../../../formats/types.ts';
import { Errors, type FieldErrors } from '../../../lib/errors.ts';
import { nowIso } from '../../../lib/time.ts';
import { VersionedCache } from '../../../lib/versioned-cache.ts';
import { readVersions, stamp } from '../../../db/versions.ts';
import type { Actor } from '../../access/actor.ts';
import { ACTION, CONTENT_ACTIONS } from '../changes/actions.ts';
import { type Change, recordChange } from '../changes/record.ts';
import { parseEnforcedChecks, parseFlags, runChecks } from '../checks/index.ts';
import type { TranslationDeps } from '../deps.ts';
import { contentChangesSet, COUNTERS, type Counter } from '../stats/stats.ts';
import { contentHash, idHash, PLURAL_SEPARATOR } from './hash.ts';
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
  const email = u.commit_email || u.email;
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
    // last_change, last_author_id and recent_changes exactly (the 6-hour window moved, stats.ts)
    if (ch && ch.count > 0) Object.assign(set, await contentChangesSet(trx, id, ch));
    // always written: the row's version is what cached unit reads are keyed on
    if (!Object.keys(set).length) set.total = sql`total`;
    await trx.updateTable('translations').set(set).where('id', '=', id).execute();
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

const LANGUAGE_TABLES = ['languages', 'language_plurals'] as const;
type LanguageRows = {
  langs: { id: number; code: string }[];
  plurals: { id: number; language_id: number; number: number; formula: string; source: number }[];
};

export class UnitEdits {
  private readonly languageCache = new VersionedCache<LanguageRows>(500, 60_000);

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

  private async context(
    db: Trx | Kysely<Database>,
    translation: TranslationRow,
    known?: { component: ComponentRow; project: Pick<TranslationProjectRow, 'name'> },
  ): Promise<Context> {
    const component = known?.component ?? (await db.selectFrom('components').selectAll().where('id', '=', translation.component_id).executeTakeFirstOrThrow());
    const project =
      known?.project ?? (await db.selectFrom('translation_projects').select('name').where('id', '=', component.project_id).executeTakeFirstOrThrow());
    // languages and plurals are reference data: cached per process for the table versions they were read at
    const key = `${component.source_language_id}:${translation.language_id}:${translation.plural_id}`;
    const version = stamp(await readVersions(this.deps.db), LANGUAGE_TABLES);
    let found = this.languageCache.get(key, version);
    if (!found) {
      const languageIds = [component.source_language_id, translation.language_id];
      const [langs, plurals] = await Promise.all([
        db.selectFrom('languages').select(['id', 'code']).where('id', 'in', languageIds).execute(),
        db
          .selectFrom('language_plurals')
          .select(['id', 'language_id', 'number', 'formula', 'source'])
          .where((eb) => eb.or([eb('id', '=', translation.plural_id), eb.and([eb('language_id', '=', component.source_language_id), eb('source', '=', 0)])]))
          .execute(),
      ]);
      found = { langs, plurals };
      this.languageCache.set(key, version, found);
    }
    const { langs, plurals } = found;
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

  /**
   * PUT/PATCH /api/units/:id/ in Weblate's order, after the serializer (the API's edge) read `write`:
   * authentication, the unit (404), then perform_update's checks (source properties, plural count,
   * read-only, both fields, state, unit.edit, unit.review), then the edit.
   */
  async update(actor: Actor, id: number, write: UnitWrite): Promise<UnitWriteBody> {
    if (!actor.user) throw Errors.unauthorized();
    const { unit, project, component } = await this.deps.queries.unit(actor, id, { sourceUnit: false });
    const translation = await this.deps.db.kysely.selectFrom('translations').selectAll().where('id', '=', unit.translation_id).executeTakeFirstOrThrow();
    let ctx: Context | undefined;
    const { target, state, explanation, extraFlags } = write;

    // perform_update
    const perms = this.deps.writes.permissions;
    const scope = { project, component, translation, unit };
    const doTranslate = target !== undefined || state !== undefined;
    const doSource = extraFlags !== undefined || explanation !== undefined || write.labels !== undefined;
    if (doSource && (!translation.is_source || !(await perms.can(actor, 'source.edit', scope))))
      throw Errors.forbidden('Source strings properties can be set only on source strings');
    const newTarget = target ?? [];
    if (doTranslate) {
      const pluralCount = (ctx ??= await this.context(this.deps.db.kysely, translation, { component, project })).pluralCount;
      const adjusted = adjustPlurals(unit, newTarget, pluralCount);
      if (adjusted.length !== newTarget.length || adjusted.some((t, i) => t !== newTarget[i]))
        throw Errors.invalid({ target: ['Number of plurals does not match'] });
      if (unit.state === 100) throw Errors.forbidden('The string is read-only.');
      if (!newTarget.length || state === undefined) {
        const msg = 'Please provide both state and target for a partial update';
        throw Errors.invalid({ state: [msg], target: [msg] });
      }
      if (!SETTABLE_STATES.includes(state)) throw Errors.invalid({ state: ['Invalid state'] });
      const any = newTarget.some((t) => t !== '');
      if (state === 0 && any) throw Errors.invalid({ state: ['Can not use empty state with non empty target'] });
      if (state !== 0 && !any) throw Errors.invalid({ state: ['Can not use non empty state with empty target'] });
      const denied = await perms.check(actor, 'unit.edit', scope);
      if (denied) throw Errors.forbidden(denied);
      if (state === 30) {
        const review = await perms.check(actor, 'unit.review', { project, component, translation });
        if (review) throw Errors.invalid({ state: [review] });
      }
    }
    // Weblate's save_backend: a unit pending by someone else is committed first, under their name
    if (doTranslate && unit.pending && unit.pending_author !== formatAuthor(actorAuthor(actor)))
      await this.deps.writes.repository.commitPending(actor, component, { translationId: translation.id });
    const edit: UnitEdit = {
      unit,
      target: doTranslate ? newTarget : unit.target.split(PLURAL_SEPARATOR),
      state: (doTranslate ? state : unit.state) as UnitState,
      ...(explanation !== undefined ? { explanation } : {}),
      ...(extraFlags !== undefined ? { extraFlags } : {}),
    };
    const [after] = await this.deps.db.kysely.transaction().execute((trx) => this.run(trx, actor, translation, [edit], {}, ctx));
    const row = after ?? unit;
    return {
      target: row.target.split(PLURAL_SEPARATOR),
      state: row.state,
      explanation: row.explanation,
      extra_flags: row.extra_flags,
      labels: [],
    };
  }

  /**
   * Weblate's check_manage_units and the format's support: null when strings may be added/removed here.
   * Hearth has no `manage_units` setting: bilingual components allow it, monolingual ones on their source
   * (template) translation when the template is editable.
   */
  private manageUnits(component: ComponentRow, translation: TranslationRow, op: 'add' | 'delete'): string | null {
    const monolingual = Boolean(component.template);
    if (!translation.is_source && monolingual) return 'Add the string to the source language instead.';
    if (monolingual && !component.edit_template) return 'Adding strings is disabled in the component configuration.';
    const format = getFormat(component.file_format);
    if (!format) return 'File format does not support this.';
    if (op === 'delete' && !format.remove) return 'File format does not support this.';
    if (op === 'add' && !format.append) return 'File format does not support this.';
    return null;
  }

  /**
   * DELETE /api/units/:id/: as Weblate's Translation.delete_unit, at once — pending edits are committed
   * first, then one commit removes the string's entry from every file that has it (the template and
   * the translations of a monolingual component, the translation files of a bilingual one), and the
   * rescan of that commit removes the rows. No pending deletion exists, so rendering never meets one.
   */
  async remove(actor: Actor, id: number): Promise<void> {
    if (!actor.user) throw Errors.unauthorized();
    const { unit, project, component } = await this.deps.queries.unit(actor, id, { sourceUnit: false });
    const translation = await this.deps.db.kysely.selectFrom('translations').selectAll().where('id', '=', unit.translation_id).executeTakeFirstOrThrow();
    const manage = this.manageUnits(component, translation, 'delete');
    if (manage) throw Errors.forbidden(manage);
    await this.deps.writes.permissions.require(actor, 'unit.delete', { project, component, translation });
    const { writes } = this.deps;
    await writes.repository.commitPending(actor, component);
    const fresh = await this.deps.db.kysely.selectFrom('components').selectAll().where('id', '=', component.id).executeTakeFirstOrThrow();
    const format = getFormat(fresh.file_format)!;
    const monolingual = writes.files.monolingual(fresh);
    const translations = await this.deps.db.kysely
      .selectFrom('translations')
      .selectAll()
      .where('component_id', '=', fresh.id)
      .where('filename', '!=', '')
      .orderBy('id')
      .execute();
    const files: { path: string; content: Buffer }[] = [];
    const seen = new Set<string>();
    for (const tr of translations) {
      if (seen.has(tr.filename)) continue;
      seen.add(tr.filename);
      let bytes: Buffer;
      try {
        bytes = await writes.files.storedBytes(fresh, tr);
      } catch {
        continue;
      }
      const own = { isTemplate: monolingual, language: tr.language_code };
      let entries: ParsedUnit[];
      try {
        entries = format.parse(bytes, own).units;
      } catch (e) {
        throw Errors.rejected(`Could not remove the string: ${e instanceof Error ? e.message : String(e)}`, 500);
      }
      const hit = entries.find((u) => idHash(u.source, u.context, monolingual).toString() === unit.id_hash);
      if (!hit) continue;
      const removed = format.remove!(bytes, hit.id, own, entries);
      if (!removed) throw Errors.rejected('Could not remove the string: the file format can not remove this entry.', 500);
      files.push({ path: tr.filename, content: removed });
    }
    if (!files.length) throw Errors.rejected('Could not remove the string: it is not in any file.', 500);
    const author = actorAuthor(actor);
    const key = unit.context || unit.source.split(PLURAL_SEPARATOR)[0];
    await writes.repository.commitFiles(fresh, files, author, `Removed string "${key.slice(0, 60)}"\n\nRemoved through the translation API.\n`);
    await recordChange(this.deps.db.kysely, {
      projectId: fresh.project_id,
      componentId: fresh.id,
      translationId: translation.id,
      unitId: null,
      languageId: translation.language_id,
      userId: actor.user.id,
      authorId: actor.user.id,
      action: ACTION.STRING_REMOVE,
      target: unit.source,
    });
  }

  /**
   * POST /api/translations/:p/:c/:lang/units/ (reference §1.6): a monolingual `key` + `value`, or a
   * bilingual `context`, `source`, `target`; the entry is written into the file(s) by one commit at once
   * (as Weblate's add_unit), whose rescan creates the rows. Returns the new unit with its path.
   * `request` is the serializer of the API's edge, asked once the translation (which says which
   * serializer reads the request) was found and unit.add granted; approving needs unit.review, which
   * Weblate's serializer reports as a field error with the others.
   */
  async add(
    actor: Actor,
    path: { project: string; component: string; language: string },
    request: NewUnitRequest,
  ): Promise<{ unit: UnitRow; project: TranslationProjectRow; component: ComponentRow; languageCode: string }> {
    if (!actor.user) throw Errors.unauthorized();
    const { project, component, translation, languageCode } = await this.deps.queries.translation(actor, path.project, path.component, path.language);
    const perms = this.deps.writes.permissions;
    const scope = { project, component, translation };
    const manage = this.manageUnits(component, translation, 'add');
    if (manage) throw Errors.forbidden(manage);
    await perms.require(actor, 'unit.add', scope);

    const monolingual = Boolean(component.template);
    const read = request({ monolingual, isSource: Boolean(translation.is_source) });
    const asked = 'unit' in read ? read.unit.state : read.state;
    const denied = asked === 30 && project.translation_review ? await perms.check(actor, 'unit.review', scope) : null;
    if ('errors' in read || denied)
      throw Errors.invalid({ ...('errors' in read ? read.errors : {}), ...(denied ? { state: ['You do not have permission to approve strings.'] } : {}) });
    const { context, source, target } = read.unit;
    let state = read.unit.state;

    // the model's checks (non-field errors)
    const nonField = (msg: string) => Errors.invalid({ non_field_errors: [msg] });
    const values = monolingual ? target : translation.is_source ? source : target;
    const anyValue = values.some((v) => v !== '');
    if ((source.length > 1 || target.length > 1) && !getFormat(component.file_format)?.appendsPlurals)
      throw nonField('Plurals are not supported by the file format.');
    if (state === undefined) state = anyValue ? 20 : 0;
    if (state === 0 && anyValue) throw nonField('Empty state is supported for blank strings only.');
    if (state !== 0 && !anyValue) throw nonField('Blank strings require an empty state.');
    if (state === 30 && !project.translation_review) throw nonField('Approved state is not available as reviews are not enabled.');
    for (const v of [context, ...source, ...target]) {
      const bad = [...v].find((ch) => ch.charCodeAt(0) < 32 && !'\t\n\r'.includes(ch));
      if (bad) throw nonField(`String contains control character: ${JSON.stringify(bad).slice(1, -1)}`);
    }
    const id = idHash(monolingual ? [context] : source, context, monolingual).toString();
    const exists = await this.deps.db.kysely
      .selectFrom('units')
      .select('id')
      .where('translation_id', '=', translation.id)
      .where('id_hash', '=', id)
      .executeTakeFirst();
    if (exists) throw nonField('This string seems to already exist.');

    // the file(s): the template (monolingual) or this translation's file (bilingual; every translation file from the source)
    const { writes } = this.deps;
    await writes.repository.commitPending(actor, component);
    const fresh = await this.deps.db.kysely.selectFrom('components').selectAll().where('id', '=', component.id).executeTakeFirstOrThrow();
    const format = getFormat(fresh.file_format)!;
    const targets = monolingual
      ? [{ filename: fresh.template, target: target }]
      : translation.is_source
        ? (
            await this.deps.db.kysely
              .selectFrom('translations')
              .select('filename')
              .where('component_id', '=', fresh.id)
              .where('is_source', '=', 0)
              .where('filename', '!=', '')
              .execute()
          ).map((t) => ({ filename: t.filename, target: source.map(() => '') }))
        : [{ filename: translation.filename, target }];
    const files: { path: string; content: Buffer }[] = [];
    for (const f of targets) {
      const bytes = (await writes.files.fileAt(fresh, f.filename)) ?? Buffer.alloc(0);
      const ftarget = f.target.length ? f.target : [''];
      const fstate = ftarget.some((t) => t !== '') ? state : 0;
      files.push({ path: f.filename, content: format.append!(bytes, { context, source, target: ftarget, state: fstate, monolingual }) });
    }
    if (!files.length) throw nonField('Could not add the string: no file to add it to.');
    const author = actorAuthor(actor);
    await writes.repository.commitFiles(
      fresh,
      files,
      author,
      `Added string "${(context || source[0] || '').slice(0, 60)}"\n\nAdded through the translation API.\n`,
    );
    const unit = await this.deps.db.kysely
      .selectFrom('units')
      .selectAll()
      .where('translation_id', '=', translation.id)
      .where('id_hash', '=', id)
      .executeTakeFirst();
    if (!unit) throw nonField('Could not add the string.');
    await recordChange(this.deps.db.kysely, {
      projectId: fresh.project_id,
      componentId: fresh.id,
      translationId: translation.id,
      unitId: unit.id,
      languageId: translation.language_id,
      userId: actor.user.id,
      authorId: actor.user.id,
      action: ACTION.NEW_UNIT,
      target: unit.target,
    });
    return { unit, project, component: fresh, languageCode };
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
    known?: Context,
  ): Promise<UnitRow[]> {
    const ctx = known ?? (await this.context(trx, translation));
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
    const changeRows: Change[] = [];
    const result = new Map<number, UnitRow>();
    const templateEdits: { before: UnitRow; after: UnitRow }[] = [];
    let contributorChecked = false;
    const written: UnitRow[] = [];

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
          // the translation's last author has made changes in it already
          const seen =
            translation.last_author_id === userId ||
            (await trx
              .selectFrom('translation_changes')
              .select('id')
              .where('translation_id', '=', translation.id)
              .where('user_id', '=', userId)
              .where('action', 'in', [...CONTENT_ACTIONS])
              .limit(1)
              .executeTakeFirst());
          if (!seen) changeRows.push(this.change(ctx.component, translation, old.id, userId, author.userId, ACTION.NEW_CONTRIBUTOR, '', '', {}, now));
        }
        const action = opts.action ?? (state === 10 ? ACTION.MARKED_EDIT : old.state >= 10 ? (state === 30 ? ACTION.APPROVE : ACTION.CHANGE) : ACTION.NEW);
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
      written.push(next);
      delta.move(translation.id, old, next);
      current.set(old.id, next);
      result.set(old.id, next);
    }

    const changes = new Map<number, { count: number; at: string; authorId: number | null }>();
    const contentCount = changeRows.filter((r) => r.action !== ACTION.NEW_CONTRIBUTOR).length;
    if (contentCount) changes.set(translation.id, { count: contentCount, at: now, authorId: author.userId });

    await this.writeUnits(trx, written);
    for (const t of templateEdits) await this.updateSourceUnits(trx, ctx, t.before, t.after, userId, author, now, delta, changeRows, changes);

    await recordChange(trx, changeRows);
    await applyStatsDelta(trx, delta.by, changes);
    return edits.map((e) => result.get(e.unit.id) ?? current.get(e.unit.id) ?? e.unit);
  }

  /** The edited rows written back: one UPDATE each on SQLite, one UPDATE … FROM (VALUES …) per 500 on PostgreSQL. */
  private async writeUnits(trx: Trx, edited: UnitRow[]): Promise<void> {
    // a unit edited twice in one call: its last state
    const rows = [...new Map(edited.map((r) => [r.id, r])).values()];
    if (this.deps.db.dialect !== 'postgres') {
      for (const n of rows)
        await trx
          .updateTable('units')
          .set({
            target: n.target,
            state: n.state,
            source: n.source,
            num_words: n.num_words,
            source_chars: n.source_chars,
            content_hash: n.content_hash,
            explanation: n.explanation,
            extra_flags: n.extra_flags,
            pending: n.pending,
            pending_author: n.pending_author,
            pending_author_id: n.pending_author_id,
            has_failing_check: n.has_failing_check,
            failing_checks: n.failing_checks,
            last_updated: n.last_updated,
          })
          .where('id', '=', n.id)
          .execute();
      return;
    }
    for (let i = 0; i < rows.length; i += 500) {
      const values = rows
        .slice(i, i + 500)
        .map(
          (n) =>
            sql`(${n.id}::int, ${n.target}::text, ${n.state}::int, ${n.source}::text, ${n.num_words}::int, ${n.source_chars}::int, ${n.content_hash}::text, ${n.explanation}::text, ${n.extra_flags}::text, ${n.pending}::int, ${n.pending_author}::text, ${n.pending_author_id}::int, ${n.has_failing_check}::int, ${n.failing_checks}::text, ${n.last_updated}::text)`,
        );
      await sql`update units set target = v.target, state = v.state, source = v.source, num_words = v.num_words, source_chars = v.source_chars,
        content_hash = v.content_hash, explanation = v.explanation, extra_flags = v.extra_flags, pending = v.pending, pending_author = v.pending_author,
        pending_author_id = v.pending_author_id, has_failing_check = v.has_failing_check, failing_checks = v.failing_checks, last_updated = v.last_updated
        from (values ${sql.join(values)}) as v(id, target, state, source, num_words, source_chars, content_hash, explanation, extra_flags, pending,
          pending_author, pending_author_id, has_failing_check, failing_checks, last_updated)
        where units.id = v.id`.execute(trx);
    }
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
    changeRows: Change[],
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
      changeRows.push(this.change(ctx.component, t, u.id, userId, author.userId, ACTION.SOURCE_CHANGE, after.source, before.source, {}, now));
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
  ): Change {
    return {
      projectId: component.project_id,
      componentId: component.id,
      translationId: translation.id,
      unitId,
      languageId: translation.language_id,
      userId,
      authorId,
      action,
      target,
      old,
      details,
      timestamp: now,
    };
  }
}

// ---- the unit API's writes (reference §3.7, views.py UnitViewSet.perform_update) -------------------

/** PUT/PATCH /api/units/:id/ as Weblate's UnitWriteSerializer read it: a field is set when the request had it. */
export interface UnitWrite {
  target?: string[];
  /** a choice of StringState that may be asked for (not 11 or 12; 100 is refused by perform_update) */
  state?: number;
  explanation?: string;
  extraFlags?: string;
  /** always empty: no label exists, so any id is unknown */
  labels?: number[];
}

/** What picks the serializer of a new string: a monolingual component's `key`/`value`, or `context`/`source`/`target` (optional on the source). */
export interface NewUnitShape {
  monolingual: boolean;
  isSource: boolean;
}

/** A new string as its serializer read it (a monolingual one's source is its value). */
export interface NewUnit {
  context: string;
  source: string[];
  target: string[];
  /** a settable state, when asked for */
  state?: number;
}

/** The request of a new string read for a shape: the string, or DRF's field errors (with the state, when it was a valid one). */
export type NewUnitRequest = (shape: NewUnitShape) => { unit: NewUnit } | { errors: FieldErrors; state?: number };

/** What PUT/PATCH answer: the UnitWriteSerializer representation. */
export interface UnitWriteBody {
  target: string[];
  state: number;
  explanation: string;
  extra_flags: string;
  labels: number[];
}

/** Weblate's Unit.adjust_plurals: one form for a singular string, the language's count for a plural one. */
export function adjustPlurals(unit: Pick<UnitRow, 'source'>, values: string[], pluralCount: number): string[] {
  if (!unit.source.includes(PLURAL_SEPARATOR)) return values.slice(0, 1);
  const out = values.slice(0, pluralCount);
  while (out.length < pluralCount) out.push('');
  return out;
}
