// The lists and sums of the translation API (Weblate's viewsets' querysets), each with the rows its
// objects link to (related.ts). A list whose rows could belong to objects the actor may not see starts
// from visibility.ts; a list inside one object already found (a component's translations, a
// translation's units) is that object's own rows, as Weblate's `obj.translation_set` is.
// Pages: the caller's `pager` turns the count into the page it asked for (and refuses pages out of range).
import { sql, type CompiledQuery, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../../db/connect.ts';
import type { ComponentRow, LanguageRow, TranslationChangeRow, TranslationProjectRow, TranslationRow } from '../../db/schema.ts';
import type { Actor } from '../access/actor.ts';
import { compileQuery, parseQuery, usesRegex } from './search/query.ts';
import { sumCounts, sumSelect, type Counts } from './stats/stats.ts';
import { withSourceUnits, type ChangeLinks, type Related, type RelatedRows, type UnitLinks, type UnitView } from './related.ts';
import type { ComponentPath } from './queries.ts';
import type { TranslationVisibility } from './visibility.ts';

export interface Slice {
  size: number;
  offset: number;
}
/** total → the requested page */
export type Pager<P extends Slice> = (total: number) => P;
export interface Paged<P, R> {
  total: number;
  page: P;
  rows: R[];
}

/** The filters of a changes list (reference §7.1), validated by the caller. */
export interface ChangesFilter {
  /** any of these actions */
  actions: number[];
  /** username of the change's user */
  user?: string;
  /** ISO times, inclusive */
  after?: string;
  before?: string;
}
export type ChangesScope = { all: true } | { project: TranslationProjectRow } | { component: ComponentRow } | { translation: TranslationRow };

/**
 * What an aggregate sums: every translation (`all`: Weblate's ComponentStats and ProjectStats, the API's
 * figures, the source translation included) or the target languages only (`targets`: the progress the web
 * pages show for a component or a project, where the source translation's strings would count as done).
 */
export type StatsSum = 'all' | 'targets';

/** A parsed `q` of a units search. */
export interface UnitsSearch {
  where: Expression<SqlBool>;
  /** it runs a user's regular expression: its queries run under the time limit (db/limited-reads.ts) */
  regex: boolean;
}

/** Runs a query: `read(k.selectFrom(…)…)` gives its rows. */
type UnitsRead = <R>(query: { compile(): CompiledQuery<R>; execute(): Promise<R[]> }) => Promise<R[]>;

export interface LanguageStatisticsRow extends Counts {
  code: string;
  name: string;
}

export class TranslationReads {
  constructor(
    private readonly db: Db,
    private readonly visible: TranslationVisibility,
    private readonly related: RelatedRows,
    /** HEARTH_SEARCH_TIMEOUT_MS */
    private readonly searchTimeoutMs: number,
  ) {}

  async projects<P extends Slice>(actor: Actor, pager: Pager<P>): Promise<Paged<P, TranslationProjectRow> & { related: Related }> {
    const s = this.visible.projects(actor);
    const { n } = await s.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const page = pager(Number(n));
    const rows = await s.selectAll().orderBy('id').limit(page.size).offset(page.offset).execute();
    return { total: Number(n), page, rows, related: await this.related.load({ languages: rows.map((r) => r.source_language_id) }) };
  }

  async components<P extends Slice>(actor: Actor, pager: Pager<P>): Promise<Paged<P, ComponentRow> & { related: Related }> {
    const s = this.visible.components(actor);
    const { n } = await s.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const page = pager(Number(n));
    const rows = await s.selectAll().orderBy('id').limit(page.size).offset(page.offset).execute();
    return {
      total: Number(n),
      page,
      rows,
      related: await this.related.load({ projects: rows.map((r) => r.project_id), languages: rows.map((r) => r.source_language_id) }),
    };
  }

  /** The components of a project the actor may see. */
  async projectComponents<P extends Slice>(
    actor: Actor,
    project: TranslationProjectRow,
    pager: Pager<P>,
  ): Promise<Paged<P, ComponentRow> & { related: Related }> {
    const s = this.visible.components(actor, project);
    const { n } = await s.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const page = pager(Number(n));
    const rows = await s.selectAll().orderBy('id').limit(page.size).offset(page.offset).execute();
    return { total: Number(n), page, rows, related: await this.related.load({ languages: rows.map((r) => r.source_language_id) }) };
  }

  /** The components a project's repository operations act on. */
  repositoryComponents(actor: Actor, project: TranslationProjectRow): Promise<ComponentRow[]> {
    return this.visible.components(actor, project).selectAll().orderBy('id').execute();
  }

  /** The translations of a component (its translations list and its statistics). */
  async componentTranslations<P extends Slice>(
    { project, component }: ComponentPath,
    pager: Pager<P>,
  ): Promise<Paged<P, TranslationRow> & { related: Related }> {
    const s = this.db.kysely.selectFrom('translations').where('component_id', '=', component.id);
    const { n } = await s.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const page = pager(Number(n));
    const rows = await s.selectAll().orderBy('id').limit(page.size).offset(page.offset).execute();
    const related = await this.related.load({
      languages: [...rows.map((r) => r.language_id), component.source_language_id, project.source_language_id],
      users: rows.map((r) => r.last_author_id),
    });
    return { total: Number(n), page, rows, related };
  }

  async translations<P extends Slice>(actor: Actor, pager: Pager<P>): Promise<Paged<P, TranslationRow> & { related: Related }> {
    const s = this.visible.translations(actor);
    const { n } = await s.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const page = pager(Number(n));
    const rows = await s.selectAll().orderBy('id').limit(page.size).offset(page.offset).execute();
    const related = await this.related.load({
      components: rows.map((r) => r.component_id),
      languages: rows.map((r) => r.language_id),
      users: rows.map((r) => r.last_author_id),
    });
    return { total: Number(n), page, rows, related };
  }

  /** What one translation embeds: its language, the source languages of its component and project, its last author. */
  translationRelated({ project, component, translation }: ComponentPath & { translation: TranslationRow }): Promise<Related> {
    return this.related.load({
      languages: [translation.language_id, component.source_language_id, project.source_language_id],
      users: [translation.last_author_id],
    });
  }

  /** What the statistics of one translation name: its language and its last author. */
  translationStatisticsRelated(translation: TranslationRow): Promise<Related> {
    return this.related.load({ languages: [translation.language_id], users: [translation.last_author_id] });
  }

  /** The visible translations of a project's components: what its statistics sum. */
  private projectTranslations(actor: Actor, project: TranslationProjectRow) {
    return this.visible
      .translations(actor)
      .innerJoin('components', 'components.id', 'translations.component_id')
      .where('components.project_id', '=', project.id);
  }

  /**
   * A project's statistics. The API's (Weblate's ProjectStats) sum every translation, the source
   * translations included; the web pages' progress (`targets`) sums the target languages only.
   */
  async projectStatistics(actor: Actor, project: TranslationProjectRow, sum: StatsSum = 'all'): Promise<Counts> {
    let s = this.projectTranslations(actor, project);
    if (sum === 'targets') s = s.where('translations.is_source', '=', 0);
    return sumCounts([await s.select(sumSelect()).executeTakeFirstOrThrow()]);
  }

  /** A project's statistics per language, by language name. */
  async projectLanguages(actor: Actor, project: TranslationProjectRow): Promise<LanguageStatisticsRow[]> {
    const rows = await this.projectTranslations(actor, project)
      .innerJoin('languages', 'languages.id', 'translations.language_id')
      .select([...sumSelect(), 'languages.code', 'languages.name'])
      .groupBy(['languages.code', 'languages.name'])
      .orderBy('languages.name')
      .execute();
    return rows.map((r) => ({ ...sumCounts([r]), code: r.code, name: r.name }));
  }

  /** Every translation of a component with its language's name, by name (one query: the component's web overview). */
  async componentLanguages(component: ComponentRow): Promise<(TranslationRow & { language_name: string })[]> {
    return (await this.db.kysely
      .selectFrom('translations')
      .innerJoin('languages', 'languages.id', 'translations.language_id')
      .selectAll('translations')
      .select('languages.name as language_name')
      .where('translations.component_id', '=', component.id)
      .orderBy('translations.is_source', 'desc')
      .orderBy('languages.name')
      .execute()) as (TranslationRow & { language_name: string })[];
  }

  /** The statistics of components already found, by component id (one grouped query; the web overviews). */
  async componentsStatistics(componentIds: number[], sum: StatsSum = 'all'): Promise<Map<number, Counts>> {
    const out = new Map<number, Counts>();
    if (!componentIds.length) return out;
    let s = this.db.kysely.selectFrom('translations').where('translations.component_id', 'in', componentIds);
    if (sum === 'targets') s = s.where('translations.is_source', '=', 0);
    const rows = await s
      .select([...sumSelect(), 'translations.component_id'])
      .groupBy('translations.component_id')
      .execute();
    for (const r of rows) out.set(r.component_id, sumCounts([r]));
    return out;
  }

  /** The statistics of projects already found, over the components the actor may see, by project id. */
  async projectsStatistics(actor: Actor, projectIds: number[], sum: StatsSum = 'all'): Promise<Map<number, Counts>> {
    const out = new Map<number, Counts>();
    if (!projectIds.length) return out;
    let s = this.visible
      .translations(actor)
      .innerJoin('components', 'components.id', 'translations.component_id')
      .where('components.project_id', 'in', projectIds);
    if (sum === 'targets') s = s.where('translations.is_source', '=', 0);
    const rows = await s
      .select([...sumSelect(), 'components.project_id'])
      .groupBy('components.project_id')
      .execute();
    for (const r of rows) out.set(r.project_id, sumCounts([r]));
    return out;
  }

  /** The statistics of languages already found, over the translations the actor may see, by language id. */
  async languagesStatistics(actor: Actor, languageIds: number[]): Promise<Map<number, Counts>> {
    const out = new Map<number, Counts>();
    if (!languageIds.length) return out;
    const rows = await this.visible
      .translations(actor)
      .select([...sumSelect(), 'translations.language_id'])
      .where('translations.language_id', 'in', languageIds)
      .groupBy('translations.language_id')
      .execute();
    for (const r of rows) out.set(r.language_id, sumCounts([r]));
    return out;
  }

  /**
   * The translations into a language the actor may see (of one project when given), with their components
   * and projects: the language page and the project-language page.
   */
  async languageTranslations(actor: Actor, language: LanguageRow, project?: TranslationProjectRow): Promise<{ rows: TranslationRow[]; related: Related }> {
    let s = this.visible.translations(actor).where('translations.language_id', '=', language.id);
    if (project) s = s.where('translations.component_id', 'in', this.visible.components(actor, project).select('components.id'));
    const rows = (await s.selectAll('translations').orderBy('translations.component_id').execute()) as TranslationRow[];
    return { rows, related: await this.related.load({ components: rows.map((r) => r.component_id) }) };
  }

  async languages<P extends Slice>(actor: Actor, pager: Pager<P>): Promise<Paged<P, LanguageRow> & { related: Related }> {
    const { n } = await this.visible
      .languages(actor)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const page = pager(Number(n));
    const rows = await this.visible.languages(actor).selectAll().orderBy('id').limit(page.size).offset(page.offset).execute();
    return { total: Number(n), page, rows, related: await this.related.load({ languageRows: rows }) };
  }

  /** A language with its plural and aliases. */
  languageRelated(language: LanguageRow): Promise<Related> {
    return this.related.load({ languageRows: [language] });
  }

  async languageStatistics(actor: Actor, language: LanguageRow): Promise<Counts> {
    return sumCounts([
      await this.visible.translations(actor).select(sumSelect()).where('translations.language_id', '=', language.id).executeTakeFirstOrThrow(),
    ]);
  }

  /** Change records, newest first: every visible one, or those of one project (its visible components), component or translation. */
  async changes<P extends Slice>(
    actor: Actor,
    scope: ChangesScope,
    f: ChangesFilter,
    pager: Pager<P>,
  ): Promise<Paged<P, TranslationChangeRow> & { related: Related; links: ChangeLinks }> {
    const k = this.db.kysely;
    let s =
      'project' in scope
        ? this.visible.changes(actor, scope.project)
        : 'component' in scope
          ? k.selectFrom('translation_changes').where('translation_changes.component_id', '=', scope.component.id)
          : 'translation' in scope
            ? k.selectFrom('translation_changes').where('translation_changes.translation_id', '=', scope.translation.id)
            : this.visible.changes(actor);
    if (f.actions.length) s = s.where('translation_changes.action', 'in', f.actions);
    if (f.user) s = s.where('translation_changes.user_id', '=', sql<number>`(select id from users where username = ${f.user})`);
    if (f.after) s = s.where('translation_changes.timestamp', '>=', f.after);
    if (f.before) s = s.where('translation_changes.timestamp', '<=', f.before);
    const { n } = await s.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const page = pager(Number(n));
    const rows = (await s
      .selectAll('translation_changes')
      .orderBy('translation_changes.timestamp', 'desc')
      .orderBy('translation_changes.id', 'desc')
      .limit(page.size)
      .offset(page.offset)
      .execute()) as TranslationChangeRow[];
    return { total: Number(n), page, rows, ...(await this.changesRelated(rows)) };
  }

  /** What change records link to: their users, components, translations and units. */
  async changesRelated(rows: TranslationChangeRow[]): Promise<{ related: Related; links: ChangeLinks }> {
    const related = await this.related.load({ users: rows.flatMap((r) => [r.user_id, r.author_id]) });
    return { related, links: await this.related.changeLinks(rows) };
  }

  /** The last repository operation of a component among `actions` (its merge failure, if any). */
  lastChange(component: ComponentRow, actions: Iterable<number>): Promise<Pick<TranslationChangeRow, 'action' | 'target'> | undefined> {
    return this.db.kysely
      .selectFrom('translation_changes')
      .select(['action', 'target'])
      .where('component_id', '=', component.id)
      .where('action', 'in', [...actions])
      .orderBy('timestamp', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  /**
   * The `q` of a units search (null without one); throws QueryParseError when it does not parse.
   * A `q` with a regular expression runs its queries under the time limit: they throw ReadTimeout,
   * ReadsBusy or InvalidPattern (db/limited-reads.ts).
   */
  search(q: string | undefined): UnitsSearch | null {
    if (q === undefined || q.trim() === '') return null;
    const node = parseQuery(q);
    return { where: compileQuery(node, this.db.dialect), regex: usesRegex(node) };
  }

  /** Every unit the actor may see matching `q`, by id (Weblate's large pages are the caller's pager). */
  async units<P extends Slice>(actor: Actor, q: string | undefined, pager: Pager<P>): Promise<Paged<P, UnitView> & { links: UnitLinks }> {
    const search = this.search(q);
    const { units, componentIds } = await this.visible.units(actor);
    const s = search ? units.where(search.where) : units;
    // without a query the count is the sum of the translations' counters
    let totals = this.db.kysely.selectFrom('translations').select(sql<number>`coalesce(sum(total), 0)`.as('n'));
    if (componentIds) totals = totals.where('translations.component_id', 'in', componentIds.length ? componentIds : [0]);
    const { n, page, rows } = await this.searchReads(search, async (read) => {
      const [{ n }] = search ? await read(s.select((eb) => eb.fn.countAll<number>().as('n'))) : await read(totals);
      const page = pager(Number(n));
      return { n, page, rows: await read(s.selectAll().orderBy('id').limit(page.size).offset(page.offset)) };
    });
    return {
      total: Number(n),
      page,
      rows: await withSourceUnits(this.db.kysely, rows),
      links: await this.related.unitLinks(rows.map((r) => ({ component_id: r.component_id, language_id: r.language_id }))),
    };
  }

  /** The units of a translation matching `q`: by position without `q`, by id with it. */
  async translationUnits<P extends Slice>(translation: TranslationRow, q: string | undefined, pager: Pager<P>): Promise<Paged<P, UnitView>> {
    const search = this.search(q);
    let s = this.db.kysely.selectFrom('units').where('translation_id', '=', translation.id);
    if (search) s = s.where(search.where);
    const found = await this.searchReads(search, async (read) => {
      const total = search ? Number((await read(s.select((eb) => eb.fn.countAll<number>().as('n'))))[0].n) : translation.total;
      const page = pager(total);
      return {
        total,
        page,
        rows: await read(
          s
            .selectAll()
            .orderBy(search ? 'id' : 'position')
            .limit(page.size)
            .offset(page.offset),
        ),
      };
    });
    // a source translation's units are their own source units
    return {
      ...found,
      rows: translation.is_source ? found.rows.map((r) => ({ ...r, source_unit_id: r.id })) : await withSourceUnits(this.db.kysely, found.rows),
    };
  }

  /** Runs the queries of a units search: with a user's regular expression, under the time limit. */
  private searchReads<T>(search: UnitsSearch | null, work: (read: UnitsRead) => Promise<T>): Promise<T> {
    if (!search?.regex) return work((query) => query.execute());
    return this.db.limited.run(this.searchTimeoutMs, (read) => work((query) => read(query.compile())));
  }
}
