// Scanning a component: the files of its repository at a commit become translations and units.
// Files whose blob did not change since the last scan are skipped (a rescan after a one-file change
// reads one file); units are matched by id_hash, so unchanged units keep their ids. Everything is
// written in one transaction with its change records, and the statistics of every touched translation
// are recomputed before it commits.
import type { Kysely, Transaction } from 'kysely';
import type { Database, ComponentRow, TranslationRow } from '../../../db/schema.ts';
import { getFormat } from '../../../formats/registry.ts';
import type { ParsedUnit } from '../../../formats/types.ts';
import { nowIso } from '../../../lib/time.ts';
import { ACTION } from '../changes/actions.ts';
import { type Change, recordChange } from '../changes/record.ts';
import { runChecks, parseFlags, parseEnforcedChecks } from '../checks/index.ts';
import { refreshTranslationStats } from '../stats/stats.ts';
import { contentHash, idHash } from '../units/hash.ts';
import { countWords } from '../units/words.ts';
import { discover, LanguageLookup, type LanguageRef } from './discovery.ts';
import type { ComponentVcs, TreeFile } from './vcs.ts';
import { timedScan } from '../../../metrics/registry.ts';

export const PLURAL_SEPARATOR = '\u001e';

export class ScanError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

export interface ScanResult {
  translations: number;
  units: number;
  /** files read (others were unchanged) */
  parsed: number;
  /** files whose language code is not known */
  unknown: string[];
}

interface FileUnits {
  language: LanguageRef;
  languageCode: string;
  filename: string;
  revision: string;
  isSource: boolean;
  isTemplate: boolean;
  /** null: unchanged since the last scan */
  units: ParsedUnit[] | null;
}

type Trx = Transaction<Database>;

/** Hashes of a scan, computed once per distinct (source, context): they repeat across languages. */
class HashCache {
  private readonly ids = new Map<string, string>();
  private readonly contents = new Map<string, string>();
  constructor(private readonly monolingual: boolean) {}
  id(source: string, context: string): string {
    const k = this.monolingual ? context : source + '\0' + context;
    let v = this.ids.get(k);
    if (v === undefined) this.ids.set(k, (v = idHash(source, context, this.monolingual).toString()));
    return v;
  }
  content(source: string, context: string): string {
    const k = source + '\0' + context;
    let v = this.contents.get(k);
    if (v === undefined) this.contents.set(k, (v = contentHash(source, context).toString()));
    return v;
  }
}

export function scanComponent(
  db: Kysely<Database>,
  vcs: ComponentVcs,
  component: ComponentRow,
  head: string,
  opts: { userId: number | null; full?: boolean; trx?: Trx; dir?: string },
): Promise<ScanResult> {
  return timedScan(() => scan(db, vcs, component, head, opts));
}

async function scan(
  db: Kysely<Database>,
  vcs: ComponentVcs,
  component: ComponentRow,
  head: string,
  opts: { userId: number | null; full?: boolean; trx?: Trx; dir?: string },
): Promise<ScanResult> {
  const dir = opts.dir ?? vcs.mirrorDir(component.id);
  const format = getFormat(component.file_format);
  if (!format) throw new ScanError('file_format', `Unknown file format: ${component.file_format}`);
  const monolingual = Boolean(component.template) && format.monolingual !== false;
  const files = await vcs.files(dir, head);
  const [languages, aliases] = await Promise.all([
    db.selectFrom('languages').select(['id', 'code']).execute(),
    db.selectFrom('language_aliases').selectAll().execute(),
  ]);
  const lookup = new LanguageLookup(languages, aliases);
  const sourceLanguage = languages.find((l) => l.id === component.source_language_id);
  if (!sourceLanguage) throw new ScanError('source_language', 'The source language does not exist.');
  const { found, unknown } = discover(files, {
    filemask: component.filemask,
    template: component.template,
    languageRegex: component.language_regex,
    languages: lookup,
  });

  const existing = await db.selectFrom('translations').selectAll().where('component_id', '=', component.id).execute();
  const byLanguage = new Map(existing.map((t) => [t.language_id, t]));
  const sourceRow = byLanguage.get(sourceLanguage.id);

  // what to read: a file whose blob changed, or every file when the template changed or when asked to
  let templateFile: TreeFile | undefined;
  let templateBytes: Buffer | undefined;
  if (monolingual) {
    templateFile = files.find((f) => f.path === component.template);
    if (!templateFile) throw new ScanError('template', `The template file ${component.template} was not found in the repository.`);
    templateBytes = await vcs.blob(dir, templateFile.sha);
  }
  const full = Boolean(opts.full) || (monolingual && sourceRow?.revision !== templateFile!.sha);
  const parse = (bytes: Buffer, what: string, isTemplate: boolean, language: string): ParsedUnit[] => {
    try {
      return format.parse(bytes, { template: monolingual && !isTemplate ? templateBytes : undefined, isTemplate, language }).units;
    } catch (e) {
      throw new ScanError('filemask', `Could not parse ${what}: ${(e as Error).message}`);
    }
  };

  const translationFiles: FileUnits[] = [];
  let parsed = 0;
  for (const f of found) {
    if (f.language.id === sourceLanguage.id) continue; // the source is the template (monolingual) or the strings themselves
    const row = byLanguage.get(f.language.id);
    const unchanged = !full && row && row.revision === f.sha && row.filename === f.path;
    let units: ParsedUnit[] | null = null;
    if (!unchanged) {
      units = parse(await vcs.blob(dir, f.sha), f.path, false, f.languageCode);
      parsed++;
    }
    translationFiles.push({ language: f.language, languageCode: f.languageCode, filename: f.path, revision: f.sha, isSource: false, isTemplate: false, units });
  }
  if (!found.length && !monolingual) throw new ScanError('filemask', 'The file mask did not match any files.');

  let sourceFile: FileUnits;
  if (monolingual) {
    sourceFile = {
      language: sourceLanguage,
      languageCode: sourceRow?.language_code ?? sourceLanguage.code,
      filename: component.template,
      revision: templateFile!.sha,
      isSource: true,
      isTemplate: true,
      units: full ? parse(templateBytes!, component.template, true, sourceLanguage.code) : null,
    };
    if (full) parsed++;
  } else {
    // bilingual: the source translation holds every source string met in the files (first occurrence wins)
    sourceFile = { language: sourceLanguage, languageCode: sourceLanguage.code, filename: '', revision: '', isSource: true, isTemplate: false, units: null };
  }

  const hashes = new HashCache(monolingual);
  const plurals = await db
    .selectFrom('language_plurals')
    .select(['id', 'language_id', 'number', 'formula'])
    .where('source', '=', 0)
    .where('language_id', 'in', [sourceLanguage.id, ...translationFiles.map((t) => t.language.id)])
    .execute();
  const pluralOf = (languageId: number) => plurals.find((p) => p.language_id === languageId) ?? { id: 0, number: 2, formula: 'n != 1' };
  const componentFlags = parseFlags(component.check_flags);
  const sp = pluralOf(sourceLanguage.id);
  const sourcePlural = { number: sp.number, formula: sp.formula };
  const enforced = parseEnforcedChecks(component.enforced_checks);

  const run = async (trx: Trx): Promise<ScanResult> => {
    const now = nowIso();
    const touched: number[] = [];
    const ensureTranslation = async (f: FileUnits): Promise<TranslationRow> => {
      const row = byLanguage.get(f.language.id);
      const values = {
        language_code: f.languageCode,
        filename: f.filename,
        revision: f.revision,
        is_source: f.isSource ? 1 : 0,
        is_template: f.isTemplate ? 1 : 0,
        plural_id: pluralOf(f.language.id).id,
      };
      if (row) {
        if (Object.entries(values).some(([k, v]) => row[k as keyof TranslationRow] !== v))
          await trx.updateTable('translations').set(values).where('id', '=', row.id).execute();
        return { ...row, ...values };
      }
      const created = await trx
        .insertInto('translations')
        .values({ component_id: component.id, language_id: f.language.id, created_at: now, ...values })
        .returningAll()
        .executeTakeFirstOrThrow();
      byLanguage.set(f.language.id, created);
      return created;
    };

    const unitRows = (f: FileUnits, t: TranslationRow, units: ParsedUnit[]) => {
      const plural = pluralOf(f.language.id);
      return units.map((u, i) => {
        const source = u.source.join(PLURAL_SEPARATOR);
        let state: number = u.state;
        // a plural string has as many forms as the language has (Weblate's adjust_plurals pads them)
        const forms = u.source.length > 1 && u.target.length < plural.number ? [...u.target, ...Array(plural.number - u.target.length).fill('')] : u.target;
        let target = forms.join(PLURAL_SEPARATOR);
        if (f.isSource) {
          target = source;
          state = !monolingual || !component.edit_template ? 100 : source ? 20 : 0;
        }
        const flags = parseFlags(u.flags);
        if (flags.has('read-only')) state = 100;
        for (const fl of componentFlags) flags.add(fl);
        const failing = f.isSource
          ? []
          : runChecks({
              sources: u.source,
              targets: u.target,
              state,
              flags,
              sourceLanguage: sourceLanguage.code,
              targetLanguage: f.language.code,
              pluralCount: plural.number,
              pluralFormula: plural.formula,
              sourcePlural: sourcePlural,
              note: u.note,
              isSource: false,
            });
        // a failing enforced check marks the string as needing editing (Weblate's Unit.run_checks)
        if (state >= 20 && state < 100 && failing.some((c) => enforced.includes(c))) state = 10;
        return {
          translation_id: t.id,
          component_id: component.id,
          language_id: f.language.id,
          position: i + 1,
          id_hash: hashes.id(source, u.context),
          content_hash: hashes.content(source, u.context),
          source,
          target,
          previous_source: u.previousSource,
          context: u.context,
          note: u.note,
          location: u.location,
          flags: u.flags,
          state,
          num_words: countWords(source),
          source_chars: [...source].length,
          has_failing_check: failing.length ? 1 : 0,
          failing_checks: failing.join(','),
          timestamp: now,
          last_updated: now,
        };
      });
    };
    type NewUnit = ReturnType<typeof unitRows>[number];

    /** Makes a translation's units what the file says; returns the ids of units added (by id_hash). */
    const syncUnits = async (_f: FileUnits, t: TranslationRow, rows: NewUnit[], fresh: boolean) => {
      const added: { id: number; id_hash: string }[] = [];
      const updated: number[] = [];
      if (fresh) {
        for (let i = 0; i < rows.length; i += 400) {
          added.push(
            ...(await trx
              .insertInto('units')
              .values(rows.slice(i, i + 400))
              .returning(['id', 'id_hash'])
              .execute()),
          );
        }
        return { added, updated };
      }
      const old = await trx.selectFrom('units').selectAll().where('translation_id', '=', t.id).execute();
      const oldByHash = new Map(old.map((u) => [u.id_hash, u]));
      const keep = new Set<number>();
      const inserts: NewUnit[] = [];
      const fields = [
        'position',
        'content_hash',
        'source',
        'target',
        'previous_source',
        'context',
        'note',
        'location',
        'flags',
        'state',
        'num_words',
        'source_chars',
        'has_failing_check',
        'failing_checks',
      ] as const;
      for (const r of rows) {
        const o = oldByHash.get(r.id_hash);
        if (!o || keep.has(o.id)) {
          inserts.push(r);
          continue;
        }
        keep.add(o.id);
        const changes = Object.fromEntries(fields.filter((k) => o[k] !== r[k]).map((k) => [k, r[k]]));
        if (Object.keys(changes).length) {
          await trx
            .updateTable('units')
            .set({ ...changes, last_updated: now })
            .where('id', '=', o.id)
            .execute();
          if (o.target !== r.target || o.state !== r.state) updated.push(o.id);
        }
      }
      const gone = old.filter((u) => !keep.has(u.id)).map((u) => u.id);
      for (let i = 0; i < gone.length; i += 500)
        await trx
          .deleteFrom('units')
          .where('id', 'in', gone.slice(i, i + 500))
          .execute();
      for (let i = 0; i < inserts.length; i += 400) {
        added.push(
          ...(await trx
            .insertInto('units')
            .values(inserts.slice(i, i + 400))
            .returning(['id', 'id_hash'])
            .execute()),
        );
      }
      return { added, updated };
    };

    const change = (t: TranslationRow, action: number, unitId: number | null, target = ''): Change => ({
      projectId: component.project_id,
      componentId: component.id,
      translationId: t.id,
      unitId,
      languageId: t.language_id,
      userId: opts.userId,
      authorId: opts.userId,
      action,
      target,
      timestamp: now,
    });

    // the source translation first (its new units are the "New source string" changes)
    const sourceT = await ensureTranslation(sourceFile);
    let sourceRows: NewUnit[] | null = null;
    if (monolingual && sourceFile.units) sourceRows = unitRows(sourceFile, sourceT, sourceFile.units);
    if (!monolingual && translationFiles.some((f) => f.units)) {
      sourceRows = await bilingualSources(trx, sourceT, translationFiles, (units) => unitRows(sourceFile, sourceT, units));
    }
    if (sourceRows) {
      const { added } = await syncUnits(sourceFile, sourceT, sourceRows, !sourceRow);
      const sourceByHash = new Map(sourceRows.map((r) => [r.id_hash, r]));
      await recordChange(
        trx,
        added.map((a) => change(sourceT, ACTION.NEW_SOURCE, a.id, sourceByHash.get(a.id_hash)?.source ?? '')),
      );
      touched.push(sourceT.id);
    }

    for (const f of translationFiles) {
      const t = await ensureTranslation(f);
      if (!f.units) continue;
      const fresh = !existing.some((e) => e.id === t.id);
      const rows = unitRows(f, t, f.units);
      const { updated } = await syncUnits(f, t, rows, fresh);
      if (!fresh)
        await recordChange(
          trx,
          updated.map((id) => change(t, ACTION.STRING_REPO_UPDATE, id)),
        );
      touched.push(t.id);
    }

    // translations whose file is gone
    const present = new Set([sourceFile, ...translationFiles].map((f) => f.language.id));
    for (const t of existing) {
      if (present.has(t.language_id)) continue;
      await trx.deleteFrom('units').where('translation_id', '=', t.id).execute();
      await trx.deleteFrom('translations').where('id', '=', t.id).execute();
      await recordChange(trx, { ...change(t, ACTION.REMOVE_TRANSLATION, null, t.filename), translationId: null });
    }

    for (const id of new Set(touched)) await refreshTranslationStats(trx, id);
    await trx.updateTable('components').set({ head, scan_state: 'done', scan_error: null }).where('id', '=', component.id).execute();
    // every unit belongs to one translation, whose counters were just brought up to date
    const n = await trx
      .selectFrom('translations')
      .select((eb) => eb.fn.sum<number>('total').as('n'))
      .where('component_id', '=', component.id)
      .executeTakeFirstOrThrow();
    return { translations: present.size, units: Number(n.n ?? 0), parsed, unknown };
  };
  return opts.trx ? run(opts.trx) : db.transaction().execute(run);
}

/**
 * The source strings of a bilingual component: those already known, plus the strings of the files read
 * now (first occurrence wins); a string no file has any more is dropped once no translation holds it.
 */
async function bilingualSources<R extends { id_hash: string }>(
  trx: Trx,
  sourceT: TranslationRow,
  files: FileUnits[],
  toRows: (units: ParsedUnit[]) => R[],
): Promise<R[]> {
  const merged = new Map<string, ParsedUnit>();
  const order: ParsedUnit[] = [];
  const read = files.filter((f) => f.units);
  for (const f of read) {
    for (const u of f.units!) {
      const k = u.source.join(PLURAL_SEPARATOR) + '\0' + u.context;
      if (merged.has(k)) continue;
      const src: ParsedUnit = { ...u, target: u.source, state: 100 };
      merged.set(k, src);
      order.push(src);
    }
  }
  let rows = toRows(order);
  const known = await trx
    .selectFrom('units')
    .select(['id_hash', 'source', 'context', 'previous_source', 'note', 'location', 'flags', 'position'])
    .where('translation_id', '=', sourceT.id)
    .orderBy('position')
    .execute();
  if (!known.length) return rows;
  // strings of files not read now stay while another translation still has them
  const fresh = new Set(rows.map((r) => r.id_hash));
  const unreadIds = files.filter((f) => !f.units).map((f) => f.language.id);
  const stale = known.filter((k) => !fresh.has(k.id_hash));
  let stillUsed = new Set<string>();
  if (stale.length && unreadIds.length) {
    for (let i = 0; i < stale.length; i += 500) {
      const hits = await trx
        .selectFrom('units')
        .select('id_hash')
        .where('component_id', '=', sourceT.component_id)
        .where('language_id', 'in', unreadIds)
        .where(
          'id_hash',
          'in',
          stale.slice(i, i + 500).map((s) => s.id_hash),
        )
        .execute();
      stillUsed = new Set([...stillUsed, ...hits.map((h) => h.id_hash)]);
    }
  }
  const keptOld: ParsedUnit[] = stale
    .filter((k) => stillUsed.has(k.id_hash))
    .map((k) => ({
      id: k.id_hash,
      context: k.context,
      source: k.source.split(PLURAL_SEPARATOR),
      target: k.source.split(PLURAL_SEPARATOR),
      previousSource: k.previous_source,
      note: k.note,
      location: k.location,
      flags: k.flags,
      state: 100,
      plural: k.source.includes(PLURAL_SEPARATOR),
    }));
  // known strings keep their place; new ones follow
  const knownOrder = new Map(known.map((k, i) => [k.id_hash, i]));
  const all = [...order, ...keptOld];
  rows = toRows(all);
  const idx = rows.map((_r, i) => i).sort((a, b) => (knownOrder.get(rows[a].id_hash) ?? 1e9 + a) - (knownOrder.get(rows[b].id_hash) ?? 1e9 + b));
  return toRows(idx.map((i) => all[i]));
}
