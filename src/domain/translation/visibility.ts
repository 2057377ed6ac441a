// Weblate's `filter_access(user)`, once per table: the rows of each translation table an actor may see,
// as a query to narrow further. Every list of the translation API whose rows could belong to an object
// the actor may not see, and every lookup of one object, starts here (TranslationQueries, TranslationReads),
// so what is invisible is never counted and is a plain 404. The rules are those of access.ts: a private
// project (access_control 100) and a restricted component are for administrators only.
import { sql, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../db/connect.ts';
import type { Database } from '../../db/schema.ts';
import type { Actor } from '../access/actor.ts';
import { ACCESS_PRIVATE } from './access.ts';

/** The visible units, and the components they may belong to (null: every component). */
export interface VisibleUnits {
  units: SelectQueryBuilder<Database, 'units', object>;
  componentIds: number[] | null;
}

export class TranslationVisibility {
  constructor(private readonly db: Db) {}

  projects(actor: Actor): SelectQueryBuilder<Database, 'translation_projects', object> {
    const s = this.db.kysely.selectFrom('translation_projects');
    return actor.isAdmin ? s : s.where('translation_projects.access_control', '<', ACCESS_PRIVATE);
  }

  /** Not restricted, in a visible project (tested per row, so a lookup probes one project). */
  components(actor: Actor): SelectQueryBuilder<Database, 'components', object> {
    const s = this.db.kysely.selectFrom('components');
    if (actor.isAdmin) return s;
    return s
      .where('components.restricted', '=', 0)
      .where((eb) => eb.exists(this.projects(actor).select(sql<number>`1`.as('one')).where(sql<SqlBool>`translation_projects.id = components.project_id`)));
  }

  translations(actor: Actor): SelectQueryBuilder<Database, 'translations', object> {
    const s = this.db.kysely.selectFrom('translations');
    return actor.isAdmin ? s : s.where('translations.component_id', 'in', this.components(actor).select('components.id'));
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

  /** Changes of removed projects and components stay visible to administrators only. */
  changes(actor: Actor): SelectQueryBuilder<Database, 'translation_changes', object> {
    const s = this.db.kysely.selectFrom('translation_changes');
    if (actor.isAdmin) return s;
    return s
      .where('translation_changes.project_id', 'in', this.projects(actor).select('translation_projects.id'))
      .where((eb) => eb.or([eb('translation_changes.component_id', 'is', null), eb('translation_changes.component_id', 'in', this.components(actor).select('components.id'))]));
  }

  /** Administrators see every language, others those with a visible translation (`have_translation()`). */
  languages(actor: Actor): SelectQueryBuilder<Database, 'languages', object> {
    const s = this.db.kysely.selectFrom('languages');
    if (actor.isAdmin) return s;
    return s.where('languages.id', 'in', this.translations(actor).select('translations.language_id'));
  }

  /** The ids of the components the actor may see, or null when that is every component (administrators, or nothing hidden). */
  private async componentIds(actor: Actor): Promise<number[] | null> {
    if (actor.isAdmin) return null;
    const k = this.db.kysely;
    const visible = this.components(actor).select('components.id');
    const hidden = await k.selectFrom('components').select('components.id').where('components.id', 'not in', visible).limit(1).executeTakeFirst();
    if (!hidden) return null;
    return (await visible.execute()).map((r) => r.id);
  }
}
