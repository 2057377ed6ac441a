// Finding translation objects as an actor sees them: what is invisible is not found (404).
import { sql, type SqlBool } from 'kysely';
import type { Db } from '../../db/connect.ts';
import { isInt32 } from '../../db/sql.ts';
import type { ComponentRow, TranslationProjectRow, TranslationRow, UnitRow } from '../../db/schema.ts';
import { Errors } from '../../lib/errors.ts';
import type { Actor } from '../access/actor.ts';
import { ACCESS_PRIVATE, canSeeComponent, canSeeProject } from './access.ts';

export interface ComponentPath {
  project: TranslationProjectRow;
  component: ComponentRow;
}
export interface TranslationPath extends ComponentPath {
  translation: TranslationRow;
  languageCode: string;
}

export class TranslationQueries {
  constructor(private readonly db: Db) {}

  async project(actor: Actor, slug: string): Promise<TranslationProjectRow> {
    const row = await this.db.kysely.selectFrom('translation_projects').selectAll().where('slug', '=', slug).executeTakeFirst();
    if (!row || !canSeeProject(actor, row)) throw Errors.notFound();
    return row;
  }

  async component(actor: Actor, projectSlug: string, slug: string): Promise<ComponentPath> {
    const project = await this.project(actor, projectSlug);
    const component = await this.db.kysely.selectFrom('components').selectAll().where('project_id', '=', project.id).where('slug', '=', slug).executeTakeFirst();
    if (!component || !canSeeComponent(actor, project, component)) throw Errors.notFound();
    return { project, component };
  }

  async translation(actor: Actor, projectSlug: string, componentSlug: string, languageCode: string): Promise<TranslationPath> {
    const path = await this.component(actor, projectSlug, componentSlug);
    const translation = await this.db.kysely
      .selectFrom('translations')
      .innerJoin('languages', 'languages.id', 'translations.language_id')
      .selectAll('translations')
      .where('translations.component_id', '=', path.component.id)
      .where('languages.code', '=', languageCode)
      .executeTakeFirst();
    if (!translation) throw Errors.notFound();
    return { ...path, translation, languageCode };
  }

  async unit(actor: Actor, id: number): Promise<{ unit: UnitRow } & ComponentPath> {
    if (!isInt32(id) || id < 1) throw Errors.notFound();
    const unit = await this.db.kysely.selectFrom('units').selectAll().where('id', '=', id).executeTakeFirst();
    if (!unit) throw Errors.notFound();
    const component = await this.db.kysely.selectFrom('components').selectAll().where('id', '=', unit.component_id).executeTakeFirstOrThrow();
    const project = await this.db.kysely.selectFrom('translation_projects').selectAll().where('id', '=', component.project_id).executeTakeFirstOrThrow();
    if (!canSeeComponent(actor, project, component)) throw Errors.notFound();
    return { unit, project, component };
  }

  /** SQL condition: the component with this id column is visible to the actor. */
  componentVisible(actor: Actor, column: string) {
    if (actor.isAdmin) return sql<SqlBool>`1 = 1`;
    return sql<SqlBool>`${sql.ref(column)} in (select c.id from components c join translation_projects p on p.id = c.project_id where p.access_control < ${ACCESS_PRIVATE} and c.restricted = 0)`;
  }

  /**
   * The ids of the components the actor may see, or null when that is every component (administrators,
   * or nothing hidden): a literal list plans better than the subquery on the large units table.
   */
  async visibleComponentIds(actor: Actor): Promise<number[] | null> {
    if (actor.isAdmin) return null;
    const k = this.db.kysely;
    const hidden = await k
      .selectFrom('components')
      .innerJoin('translation_projects', 'translation_projects.id', 'components.project_id')
      .select('components.id')
      .where((eb) => eb.or([eb('components.restricted', '!=', 0), eb('translation_projects.access_control', '>=', ACCESS_PRIVATE)]))
      .limit(1)
      .executeTakeFirst();
    if (!hidden) return null;
    const rows = await k
      .selectFrom('components')
      .innerJoin('translation_projects', 'translation_projects.id', 'components.project_id')
      .select('components.id')
      .where('components.restricted', '=', 0)
      .where('translation_projects.access_control', '<', ACCESS_PRIVATE)
      .execute();
    return rows.map((r) => r.id);
  }

  /** SQL condition: the project with this id column is visible to the actor. */
  projectVisible(actor: Actor, column: string) {
    if (actor.isAdmin) return sql<SqlBool>`1 = 1`;
    return sql<SqlBool>`${sql.ref(column)} in (select p.id from translation_projects p where p.access_control < ${ACCESS_PRIVATE})`;
  }
}
