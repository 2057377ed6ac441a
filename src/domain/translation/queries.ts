// Finding one translation object as an actor sees it, through the visibility of its table
// (visibility.ts): what is invisible is not found (404).
import type { Db } from '../../db/connect.ts';
import { isInt32 } from '../../db/sql.ts';
import type { ComponentRow, LanguageRow, TranslationChangeRow, TranslationProjectRow, TranslationRow, UserRow } from '../../db/schema.ts';
import { Errors } from '../../lib/errors.ts';
import type { Actor } from '../access/actor.ts';
import { withSourceUnits, type UnitView } from './related.ts';
import type { TranslationVisibility } from './visibility.ts';

export interface ComponentPath {
  project: TranslationProjectRow;
  component: ComponentRow;
}
export interface TranslationPath extends ComponentPath {
  translation: TranslationRow;
  languageCode: string;
}

export class TranslationQueries {
  constructor(
    private readonly db: Db,
    private readonly visible: TranslationVisibility,
  ) {}

  async project(actor: Actor, slug: string): Promise<TranslationProjectRow> {
    const row = await this.visible.projects(actor).selectAll().where('translation_projects.slug', '=', slug).executeTakeFirst();
    if (!row) throw Errors.notFound();
    return row;
  }

  async component(actor: Actor, projectSlug: string, slug: string): Promise<ComponentPath> {
    const project = await this.project(actor, projectSlug);
    const component = await this.visible.components(actor, project).selectAll().where('components.slug', '=', slug).executeTakeFirst();
    if (!component) throw Errors.notFound();
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

  /** A unit with its component, project and language code. */
  /** `sourceUnit: false`: without the source unit's id (`source_unit`, what reads show; writes need no extra query) */
  async unit(actor: Actor, id: number, opts: { sourceUnit?: boolean } = {}): Promise<{ unit: UnitView; languageCode: string } & ComponentPath> {
    if (!isInt32(id) || id < 1) throw Errors.notFound();
    const k = this.db.kysely;
    const unit = await k.selectFrom('units').selectAll().where('id', '=', id).executeTakeFirst();
    if (!unit) throw Errors.notFound();
    const component = await this.visible.components(actor, 'project-next').selectAll().where('components.id', '=', unit.component_id).executeTakeFirst();
    if (!component) throw Errors.notFound();
    const project = await this.visible.projects(actor).selectAll().where('translation_projects.id', '=', component.project_id).executeTakeFirst();
    if (!project) throw Errors.notFound();
    const language = await k.selectFrom('languages').select('code').where('id', '=', unit.language_id).executeTakeFirstOrThrow();
    if (opts.sourceUnit === false) return { unit, project, component, languageCode: language.code };
    const [withSource] = await withSourceUnits(k, [unit]);
    return { unit: withSource, project, component, languageCode: language.code };
  }

  async change(actor: Actor, id: number): Promise<TranslationChangeRow> {
    if (!isInt32(id)) throw Errors.notFound();
    const row = await this.visible.changes(actor).selectAll().where('translation_changes.id', '=', id).executeTakeFirst();
    if (!row) throw Errors.notFound();
    return row;
  }

  async language(actor: Actor, code: string): Promise<LanguageRow> {
    const row = await this.visible.languages(actor).selectAll().where('languages.code', '=', code).executeTakeFirst();
    if (!row) throw Errors.notFound();
    return row;
  }

  /** The target of change records' user links: active users, and any user for administrators. */
  async user(actor: Actor, username: string): Promise<UserRow> {
    const user = await this.db.kysely.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
    if (!user || (user.state !== 'active' && !actor.isAdmin)) throw Errors.notFound();
    return user;
  }
}
