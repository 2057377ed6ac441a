// What the translation editor reads about one unit of a translation the caller has already found
// (queries.translation: visibility decided there): the unit by checksum or by its place in a filtered
// set, the neighbours in that set, its history, the other languages' translations of the same string
// and the plural definitions that label the forms.
//
// The filtered set is the API's (`GET /api/translations/…/units/?q=`, reads.translationUnits): the same
// `q` compiled by reads.search, ordered by position without `q` and by id with it (ties by id), and a
// `q` with a regular expression runs under the same time limit.
import type { Expression, SqlBool } from 'kysely';
import type { Db } from '../../../db/connect.ts';
import type { LanguagePluralRow, TranslationChangeRow, TranslationRow, UnitRow } from '../../../db/schema.ts';
import type { Read } from '../../../db/limited-reads.ts';
import { compilePlural, pluralFormNames } from '../languages/plural.ts';
import type { TranslationReads } from '../reads.ts';
import { checksumToHash } from './hash.ts';

/** A filtered set of a translation's units. */
export interface UnitFilter {
  translation: TranslationRow;
  /** the `q` as typed (empty: every unit) */
  q: string;
}

/** Another language's translation of the same string. */
export interface OtherTranslation {
  languageCode: string;
  languageName: string;
  target: string;
  state: number;
  unitId: number;
  rtl: boolean;
}

/** One plural form's label: "One (1, 21, 31, …)" or "Translation". */
export interface FormLabel {
  name: string;
  examples: number[];
}

type Runner = <T>(work: (read: Read) => Promise<T>) => Promise<T>;

export class EditorReads {
  private readonly labels = new Map<string, FormLabel[]>();

  constructor(
    private readonly db: Db,
    private readonly reads: TranslationReads,
    private readonly searchTimeoutMs: number,
  ) {}

  private get k() {
    return this.db.kysely;
  }

  /** The compiled filter (throws QueryParseError for a `q` that does not parse) and how its queries run. */
  private prepare(f: UnitFilter): { where: Expression<SqlBool> | null; key: 'id' | 'position'; run: Runner } {
    const search = this.reads.search(f.q);
    const run: Runner = search?.regex
      ? (work) => this.db.limited.run(this.searchTimeoutMs, work)
      : (work) => work((async (query) => (await this.k.executeQuery(query)).rows) as Read);
    return { where: search?.where ?? null, key: search ? 'id' : 'position', run };
  }

  private base(f: UnitFilter, where: Expression<SqlBool> | null) {
    const s = this.k.selectFrom('units').where('translation_id', '=', f.translation.id);
    return where ? s.where(where) : s;
  }

  /** A unit of the translation by Weblate's checksum of its id_hash; null when there is none (or it is not a checksum). */
  async byChecksum(translation: TranslationRow, checksum: string): Promise<UnitRow | null> {
    let hash: bigint;
    try {
      hash = checksumToHash(checksum);
    } catch {
      return null;
    }
    return (
      (await this.k
        .selectFrom('units')
        .selectAll()
        .where('translation_id', '=', translation.id)
        .where('id_hash', '=', hash.toString())
        .orderBy('id')
        .limit(1)
        .executeTakeFirst()) ?? null
    );
  }

  /** The number of units in the set and the one at `offset` (1-based; clamped to the last). */
  async at(f: UnitFilter, offset: number): Promise<{ total: number; offset: number; unit: UnitRow | null }> {
    const { where, key, run } = this.prepare(f);
    return run(async (read) => {
      const s = this.base(f, where);
      const total = where ? Number((await read(s.select((eb) => eb.fn.countAll<number>().as('n')).compile()))[0]?.n ?? 0) : f.translation.total;
      const at = Math.min(Math.max(1, offset), Math.max(1, total));
      const rows = await read(
        s
          .selectAll()
          .orderBy(key)
          .orderBy('id')
          .limit(1)
          .offset(at - 1)
          .compile(),
      );
      return { total, offset: at, unit: rows[0] ?? null };
    });
  }

  /** The size of the set and the 1-based place of `unit` in it (null when the unit is not in the set). */
  async placeOf(f: UnitFilter, unit: UnitRow): Promise<{ total: number; offset: number | null }> {
    const { where, key, run } = this.prepare(f);
    return run(async (read) => {
      const s = this.base(f, where);
      const count = async (q: typeof s) => Number((await read(q.select((eb) => eb.fn.countAll<number>().as('n')).compile()))[0]?.n ?? 0);
      const total = where ? await count(s) : f.translation.total;
      if (where && !(await read(s.select('id').where('id', '=', unit.id).compile())).length) return { total, offset: null };
      const before = await count(s.where((eb) => eb.or([eb(key, '<', unit[key]), eb.and([eb(key, '=', unit[key]), eb('id', '<', unit.id)])])));
      return { total, offset: before + 1 };
    });
  }

  /** The unit after `unit` in the set (whether or not `unit` itself still matches), or null at the end. */
  async after(f: UnitFilter, unit: UnitRow): Promise<UnitRow | null> {
    const { where, key, run } = this.prepare(f);
    return run(async (read) => {
      const rows = await read(
        this.base(f, where)
          .selectAll()
          .where((eb) => eb.or([eb(key, '>', unit[key]), eb.and([eb(key, '=', unit[key]), eb('id', '>', unit.id)])]))
          .orderBy(key)
          .orderBy('id')
          .limit(1)
          .compile(),
      );
      return rows[0] ?? null;
    });
  }

  /** The unit's change records, newest first (at most `limit`). */
  history(unit: UnitRow, limit = 20): Promise<TranslationChangeRow[]> {
    return this.k
      .selectFrom('translation_changes')
      .selectAll()
      .where('unit_id', '=', unit.id)
      .orderBy('timestamp', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }

  /** The same string in the component's other translations (the source translation included), by language name. */
  async otherLanguages(unit: UnitRow): Promise<OtherTranslation[]> {
    const rows = await this.k
      .selectFrom('units')
      .innerJoin('languages', 'languages.id', 'units.language_id')
      .select(['units.id', 'units.target', 'units.state', 'languages.code', 'languages.name', 'languages.direction'])
      .where('units.component_id', '=', unit.component_id)
      .where('units.id_hash', '=', unit.id_hash)
      .where('units.id', '!=', unit.id)
      .orderBy('languages.name')
      .limit(200)
      .execute();
    return rows.map((r) => ({ languageCode: r.code, languageName: r.name, target: r.target, state: r.state, unitId: r.id, rtl: r.direction === 'rtl' }));
  }

  /** Plural definitions by id (the translation's own and the source language's). */
  async plurals(ids: number[]): Promise<Map<number, LanguagePluralRow>> {
    const rows = ids.length ? await this.k.selectFrom('language_plurals').selectAll().where('id', 'in', ids).execute() : [];
    return new Map(rows.map((r) => [r.id, r]));
  }

  /** The source language's default plural (source 0). */
  async defaultPlural(languageId: number): Promise<LanguagePluralRow | null> {
    return (
      (await this.k
        .selectFrom('language_plurals')
        .selectAll()
        .where('language_id', '=', languageId)
        .where('source', '=', 0)
        .orderBy('id')
        .limit(1)
        .executeTakeFirst()) ?? null
    );
  }

  /** The labels of a plural's forms (Weblate's get_plural_label): the form's name and a few counts it takes. */
  formLabels(plural: Pick<LanguagePluralRow, 'type' | 'number' | 'formula'> | null, forms: number): FormLabel[] {
    const number = plural?.number ?? forms;
    const key = `${plural?.type}|${number}|${plural?.formula}|${forms}`;
    let out = this.labels.get(key);
    if (out) return out;
    const names = (plural && pluralFormNames(plural.type)) ?? null;
    const examples: number[][] = Array.from({ length: forms }, () => []);
    if (plural) {
      try {
        const fn = compilePlural(plural.formula);
        for (let n = 0; n <= 1000; n++) {
          const r = fn(n);
          if (r >= 0 && r < forms && examples[r].length < 6) examples[r].push(n);
        }
      } catch {
        // an unusable formula: labels without examples
      }
    }
    out = Array.from({ length: forms }, (_, i) => {
      const name = names && names.length === forms ? names[i] : `plural form ${i}`;
      return { name: name ? name.charAt(0).toUpperCase() + name.slice(1) : `Plural form ${i}`, examples: examples[i] };
    });
    if (this.labels.size > 500) this.labels.clear();
    this.labels.set(key, out);
    return out;
  }
}
