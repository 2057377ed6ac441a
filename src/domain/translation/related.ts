// The rows that translation objects link to or embed (source languages with their plural and aliases,
// authors, projects, components, the targets of change records), loaded with one query per kind for a
// whole page, never one per row. The serializer (http/translation/serializers.ts) reads them and queries
// nothing. Access is decided before: these are rows of objects already found through visibility.ts.
import type { Kysely } from 'kysely';
import type { Db } from '../../db/connect.ts';
import type { ComponentRow, Database, LanguageRow, TranslationChangeRow, TranslationProjectRow, UnitRow } from '../../db/schema.ts';

export interface LanguagePlural {
  id: number;
  source: number;
  number: number;
  formula: string;
  type: number;
}
export interface LanguageView {
  language: LanguageRow;
  /** the default plural (source 0), or null */
  plural: LanguagePlural | null;
  aliases: string[];
}
export interface UserName {
  username: string;
  name: string;
}

export interface Related {
  languages: Map<number, LanguageView>;
  users: Map<number, UserName>;
  projects: Map<number, TranslationProjectRow>;
  components: Map<number, ComponentRow>;
}

export interface RelatedWanted {
  /** components by id, with their projects and the source languages of both */
  components?: Iterable<number>;
  /** projects by id, with their source languages */
  projects?: Iterable<number>;
  languages?: Iterable<number>;
  /** languages already read: only their plurals and aliases are loaded */
  languageRows?: LanguageRow[];
  users?: Iterable<number | null>;
}

/** What change records link to (reference §3.8): component and translation paths, units that still exist. */
export interface ChangeLinks {
  components: Map<number, { project: string; slug: string }>;
  translations: Map<number, string>;
  units: Set<number>;
}

/** What a page of units links to: each component with its project, and the language codes. */
export interface UnitLinks {
  components: Map<number, { project: TranslationProjectRow; component: ComponentRow }>;
  languageCodes: Map<number, string>;
}

/**
 * A unit as the API shows it: with the id of its source unit (Weblate's `source_unit`: the unit of the
 * component's source translation with the same id_hash; a source unit is its own).
 */
export type UnitView = UnitRow & { source_unit_id?: number };

/** `rows` with their source units' ids (one query for any number of them). */
export async function withSourceUnits<R extends Pick<UnitRow, 'id' | 'component_id' | 'id_hash'>>(
  k: Kysely<Database>,
  rows: R[],
): Promise<(R & { source_unit_id: number })[]> {
  if (!rows.length) return [];
  const found = new Map<string, number>();
  const componentIds = [...new Set(rows.map((r) => r.component_id))];
  const hashes = [...new Set(rows.map((r) => r.id_hash))];
  for (let i = 0; i < hashes.length; i += 500) {
    const sources = await k
      .selectFrom('units')
      .innerJoin('translations', 'translations.id', 'units.translation_id')
      .select(['units.id', 'units.component_id', 'units.id_hash'])
      .where('translations.is_source', '=', 1)
      .where('units.component_id', 'in', componentIds)
      .where('units.id_hash', 'in', hashes.slice(i, i + 500))
      .execute();
    for (const s of sources) found.set(`${s.component_id}:${s.id_hash}`, s.id);
  }
  return rows.map((r) => ({ ...r, source_unit_id: found.get(`${r.component_id}:${r.id_hash}`) ?? r.id }));
}

const ids = <T>(values: Iterable<T | null> | undefined): T[] => [...new Set(values ?? [])].filter((v): v is T => v !== null);

export class RelatedRows {
  constructor(private readonly db: Db) {}

  async load(want: RelatedWanted): Promise<Related> {
    const k = this.db.kysely;
    const out: Related = { languages: new Map(), users: new Map(), projects: new Map(), components: new Map() };
    const componentIds = ids(want.components);
    if (componentIds.length)
      for (const r of await k.selectFrom('components').selectAll().where('id', 'in', componentIds).execute()) out.components.set(r.id, r);
    const projectIds = ids([...(want.projects ?? []), ...[...out.components.values()].map((r) => r.project_id)]);
    if (projectIds.length)
      for (const r of await k.selectFrom('translation_projects').selectAll().where('id', 'in', projectIds).execute()) out.projects.set(r.id, r);
    const given = want.languageRows ?? [];
    const languageIds = ids([
      ...(want.languages ?? []),
      ...[...out.components.values()].map((r) => r.source_language_id),
      ...[...out.projects.values()].map((r) => r.source_language_id),
    ]).filter((id) => !given.some((l) => l.id === id));
    const rows = languageIds.length ? [...given, ...(await k.selectFrom('languages').selectAll().where('id', 'in', languageIds).execute())] : given;
    for (const v of await this.languageViews(rows)) out.languages.set(v.language.id, v);
    const userIds = ids(want.users);
    if (userIds.length)
      for (const u of await k.selectFrom('users').select(['id', 'username', 'name']).where('id', 'in', userIds).execute())
        out.users.set(u.id, { username: u.username, name: u.name });
    return out;
  }

  /** Languages with their default plural and their aliases (two queries for any number of them). */
  private async languageViews(rows: LanguageRow[]): Promise<LanguageView[]> {
    if (!rows.length) return [];
    const k = this.db.kysely;
    const plurals = await k
      .selectFrom('language_plurals')
      .selectAll()
      .where(
        'language_id',
        'in',
        rows.map((r) => r.id),
      )
      .where('source', '=', 0)
      .execute();
    const aliases = await k
      .selectFrom('language_aliases')
      .selectAll()
      .where(
        'code',
        'in',
        rows.map((r) => r.code),
      )
      .orderBy('alias')
      .execute();
    return rows.map((language) => {
      const p = plurals.find((x) => x.language_id === language.id);
      return {
        language,
        plural: p ? { id: p.id, source: p.source, number: p.number, formula: p.formula, type: p.type } : null,
        aliases: aliases.filter((a) => a.code === language.code).map((a) => a.alias),
      };
    });
  }

  async changeLinks(rows: TranslationChangeRow[]): Promise<ChangeLinks> {
    const k = this.db.kysely;
    const componentIds = ids(rows.map((r) => r.component_id));
    const translationIds = ids(rows.map((r) => r.translation_id));
    const unitIds = ids(rows.map((r) => r.unit_id));
    const components = componentIds.length
      ? await k
          .selectFrom('components')
          .innerJoin('translation_projects', 'translation_projects.id', 'components.project_id')
          .select(['components.id', 'components.slug', 'translation_projects.slug as project'])
          .where('components.id', 'in', componentIds)
          .execute()
      : [];
    const translations = translationIds.length
      ? await k
          .selectFrom('translations')
          .innerJoin('languages', 'languages.id', 'translations.language_id')
          .select(['translations.id', 'languages.code'])
          .where('translations.id', 'in', translationIds)
          .execute()
      : [];
    const units = unitIds.length ? await k.selectFrom('units').select('id').where('id', 'in', unitIds).execute() : [];
    return {
      components: new Map(components.map((r) => [r.id, { project: r.project, slug: r.slug }])),
      translations: new Map(translations.map((r) => [r.id, r.code])),
      units: new Set(units.map((u) => u.id)),
    };
  }

  async unitLinks(keys: { component_id: number; language_id: number }[]): Promise<UnitLinks> {
    const out: UnitLinks = { components: new Map(), languageCodes: new Map() };
    if (!keys.length) return out;
    const k = this.db.kysely;
    const components = await k
      .selectFrom('components')
      .selectAll()
      .where('id', 'in', [...new Set(keys.map((x) => x.component_id))])
      .execute();
    const projects = await k
      .selectFrom('translation_projects')
      .selectAll()
      .where('id', 'in', [...new Set(components.map((x) => x.project_id))])
      .execute();
    const languages = await k
      .selectFrom('languages')
      .select(['id', 'code'])
      .where('id', 'in', [...new Set(keys.map((x) => x.language_id))])
      .execute();
    for (const l of languages) out.languageCodes.set(l.id, l.code);
    for (const component of components) out.components.set(component.id, { component, project: projects.find((p) => p.id === component.project_id)! });
    return out;
  }
}
