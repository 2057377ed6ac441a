// Weblate's `filter_access(user)`, once per table: the rows of each translation table an actor may see,
// as a query to narrow further. Every list of the translation API whose rows could belong to an object
// the actor may not see, and every lookup of one object, starts here (TranslationQueries, TranslationReads),
// so what is invisible is never counted and is a plain 404. The rules are those of access.ts — a private
// project (access_control 100) and a restricted component are for administrators only — written once
// below as SQL on a table alias, and every table's visibility is built from them.
import { sql, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../db/connect.ts';
import type { Database, TranslationProjectRow } from '../../db/schema.ts';
import type { Actor } from '../access/actor.ts';
import { ACCESS_PRIVATE } from './access.ts';

/** A project anyone may see: not private. */
const projectRule = (p: string) => sql<SqlBool>`${sql.ref(`${p}.access_control`)} < ${ACCESS_PRIVATE}`;
/** A component anyone may see: not restricted (its own rule), in a project anyone may see (tested per row). */
const ownComponentRule = (c: string) => sql<SqlBool>`${sql.ref(`${c}.restricted`)} = 0`;
const componentRule = (c: string) =>
  sql<SqlBool>`${ownComponentRule(c)} and exists (select 1 from translation_projects vp where vp.id = ${sql.ref(`${c}.project_id`)} and ${projectRule('vp')})`;
const visibleProjectIds = sql`select vp.id from translation_projects vp where ${projectRule('vp')}`;
const visibleComponentIds = sql`select vc.id from components vc where ${componentRule('vc')}`;

/** The visible units, and the components they may belong to (null: every component). */
export interface VisibleUnits {
  units: SelectQueryBuilder<Database, 'units', object>;
  componentIds: number[] | null;
}

export class TranslationVisibility {
  constructor(private readonly db: Db) {}

  projects(actor: Actor): SelectQueryBuilder<Database, 'translation_projects', object> {
    const s = this.db.kysely.selectFrom('translation_projects');
    return actor.isAdmin ? s : s.where(projectRule('translation_projects'));
  }

  /**
   * Within a project already found through projects() (`within`), only the component's own rule is left to
   * test; `'project-next'` is for a lookup that finds its project through projects() right after (a unit's:
   * two primary-key lookups rather than one with a subquery, which costs PostgreSQL more to plan).
   */
  components(actor: Actor, within?: TranslationProjectRow | 'project-next'): SelectQueryBuilder<Database, 'components', object> {
    let s = this.db.kysely.selectFrom('components');
    if (within && within !== 'project-next') s = s.where('components.project_id', '=', within.id);
    if (actor.isAdmin) return s;
    return s.where(within ? ownComponentRule('components') : componentRule('components'));
  }

  translations(actor: Actor): SelectQueryBuilder<Database, 'translations', object> {
    const s = this.db.kysely.selectFrom('translations');
    return actor.isAdmin ? s : s.where(sql<SqlBool>`translations.component_id in (${visibleComponentIds})`);
  }

  /**
   * Units are filtered by a literal list of the visible components, or not at all when no component is
   * hidden: on the large units table a literal list plans better than the subquery.
   */
  async units(actor: Actor): Promise<VisibleUnits> {
    const componentIds = await this.componentIds(actor);
    const s = this.db.kysely.selectFrom('units');
    return { units: componentIds ? s.where('units.component_id', 'in', componentIds.length ? componentIds : [0]) : s, componentIds };
  }

  /**
   * Changes of removed projects and components stay visible to administrators only. Within a project
   * already found (`within`), only their component is tested, and the project's index drives the query.
   */
  changes(actor: Actor, within?: TranslationProjectRow): SelectQueryBuilder<Database, 'translation_changes', object> {
    let s = this.db.kysely.selectFrom('translation_changes');
    if (within) s = s.where('translation_changes.project_id', '=', within.id);
    if (actor.isAdmin) return s;
    if (!within) s = s.where(sql<SqlBool>`translation_changes.project_id in (${visibleProjectIds})`);
    return s.where(sql<SqlBool>`(translation_changes.component_id is null or translation_changes.component_id in (${visibleComponentIds}))`);
  }

  /** Administrators see every language, others those with a visible translation (`have_translation()`). */
  languages(actor: Actor): SelectQueryBuilder<Database, 'languages', object> {
    const s = this.db.kysely.selectFrom('languages');
    if (actor.isAdmin) return s;
    return s.where(sql<SqlBool>`languages.id in (select vt.language_id from translations vt where vt.component_id in (${visibleComponentIds}))`);
  }

  /** The ids of the components the actor may see, or null when that is every component (administrators, or nothing hidden). */
  private async componentIds(actor: Actor): Promise<number[] | null> {
    if (actor.isAdmin) return null;
    const k = this.db.kysely;
    const hidden = await k
      .selectFrom('components')
      .select('components.id')
      .where(sql<SqlBool>`not (${componentRule('components')})`)
      .limit(1)
      .executeTakeFirst();
    if (!hidden) return null;
    return (await sql<{ id: number }>`${visibleComponentIds}`.execute(k)).rows.map((r) => r.id);
  }
}
