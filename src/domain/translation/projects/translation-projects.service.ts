// Translation projects (Weblate's Project): create, update, delete, with DRF's field errors and the
// change records Weblate writes (50 Created project, 41 Renamed project, 39 Removed project).
import type { Db } from '../../../db/connect.ts';
import type { TranslationProjectRow } from '../../../db/schema.ts';
import { isUniqueViolation } from '../../../db/sql.ts';
import { Errors } from '../../../lib/errors.ts';
import { nowIso } from '../../../lib/time.ts';
import type { Actor } from '../../access/actor.ts';
import { ACCESS_CONTROL_VALUES, requireAdmin } from '../access.ts';
import { ACTION } from '../changes/actions.ts';
import { recordChange } from '../changes/record.ts';
import type { ComponentsService } from '../components/components.service.ts';
import { boolField, FieldErrors, languageField, stringField, urlField } from '../fields.ts';

export interface ProjectInput {
  name?: unknown;
  slug?: unknown;
  web?: unknown;
  source_language?: unknown;
  access_control?: unknown;
  /** Weblate's "Enable reviews" (migration 017): approving strings needs the unit.review permission */
  translation_review?: unknown;
}

export const SLUG = /^[-a-zA-Z0-9_]+$/;

export class TranslationProjectsService {
  constructor(
    private readonly db: Db,
    private readonly components: ComponentsService,
  ) {}

  private async validate(input: ProjectInput, partial: boolean) {
    const e = new FieldErrors();
    const out: { name?: string; slug?: string; web?: string; source_language_id?: number; access_control?: number; translation_review?: number } = {};
    out.name = stringField(e, input, 'name', { required: !partial, max: 60 });
    out.slug = stringField(e, input, 'slug', { required: !partial, max: 60 });
    if (out.slug !== undefined && !SLUG.test(out.slug)) e.add('slug', 'Enter a valid “slug” consisting of letters, numbers, underscores or hyphens.');
    out.web = urlField(e, input, 'web', { required: !partial });
    if (input.source_language !== undefined) out.source_language_id = await languageField(this.db, e, input.source_language, 'source_language');
    if (input.access_control !== undefined) {
      const v = Number(input.access_control);
      if (!ACCESS_CONTROL_VALUES.includes(v) || String(input.access_control).trim() === '')
        e.add('access_control', `"${String(input.access_control)}" is not a valid choice.`);
      else out.access_control = v;
    }
    const review = boolField(e, input, 'translation_review');
    if (review !== undefined) out.translation_review = review ? 1 : 0;
    e.throwIfAny();
    return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)) as typeof out;
  }

  private uniqueError(err: unknown): never {
    if (!isUniqueViolation(err)) throw err;
    const msg = String((err as Error).message);
    if (msg.includes('slug')) throw Errors.invalid({ slug: ['Project with this URL slug already exists.'] });
    throw Errors.invalid({ name: ['Project with this Project name already exists.'] });
  }

  private async checkUnique(values: { name?: string; slug?: string }, except?: number) {
    const k = this.db.kysely;
    const errs: Record<string, string[]> = {};
    for (const [field, msg] of [
      ['name', 'Project with this Project name already exists.'],
      ['slug', 'Project with this URL slug already exists.'],
    ] as const) {
      const v = values[field];
      if (v === undefined) continue;
      let q = k
        .selectFrom('translation_projects')
        .select('id')
        .where((eb) => eb(eb.fn('lower', [field]), '=', v.toLowerCase()));
      if (except) q = q.where('id', '!=', except);
      if (await q.executeTakeFirst()) errs[field] = [msg];
    }
    if (Object.keys(errs).length) throw Errors.invalid(errs);
  }

  async create(actor: Actor, input: ProjectInput): Promise<TranslationProjectRow> {
    requireAdmin(actor, 'Can not create projects');
    const v = await this.validate(input, false);
    await this.checkUnique(v);
    const en = await this.db.kysely.selectFrom('languages').select('id').where('code', '=', 'en').executeTakeFirst();
    try {
      return await this.db.kysely.transaction().execute(async (trx) => {
        const row = await trx
          .insertInto('translation_projects')
          .values({
            name: v.name!,
            slug: v.slug!,
            web: v.web ?? '',
            source_language_id: v.source_language_id ?? en?.id ?? 1,
            access_control: v.access_control ?? 0,
            translation_review: v.translation_review ?? 0,
            created_at: nowIso(),
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        await recordChange(trx, { projectId: row.id, userId: actor.user!.id, authorId: actor.user!.id, action: ACTION.CREATE_PROJECT, target: row.name });
        return row;
      });
    } catch (e) {
      this.uniqueError(e);
    }
  }

  async update(actor: Actor, project: TranslationProjectRow, input: ProjectInput, partial: boolean): Promise<TranslationProjectRow> {
    requireAdmin(actor, 'Can not edit project');
    const v = await this.validate(input, partial);
    await this.checkUnique(v, project.id);
    try {
      return await this.db.kysely.transaction().execute(async (trx) => {
        const row = Object.keys(v).length
          ? await trx.updateTable('translation_projects').set(v).where('id', '=', project.id).returningAll().executeTakeFirstOrThrow()
          : project;
        if (v.slug !== undefined && v.slug !== project.slug) {
          await recordChange(trx, {
            projectId: row.id,
            userId: actor.user!.id,
            authorId: actor.user!.id,
            action: ACTION.RENAME_PROJECT,
            target: row.slug,
            old: project.slug,
          });
        }
        return row;
      });
    } catch (e) {
      this.uniqueError(e);
    }
  }

  /** Removes the project with its components (and their mirrors), translations, units and changes. */
  async delete(actor: Actor, project: TranslationProjectRow): Promise<void> {
    requireAdmin(actor, 'Can not delete project');
    const components = await this.db.kysely.selectFrom('components').select('id').where('project_id', '=', project.id).execute();
    await this.db.kysely.transaction().execute(async (trx) => {
      for (const c of components) await this.components.deleteRows(trx, c.id);
      await trx.deleteFrom('translation_changes').where('project_id', '=', project.id).execute();
      await trx.deleteFrom('translation_project_members').where('project_id', '=', project.id).execute();
      await trx.deleteFrom('translation_projects').where('id', '=', project.id).execute();
      await recordChange(trx, { userId: actor.user!.id, authorId: actor.user!.id, action: ACTION.REMOVE_PROJECT, target: project.slug });
    });
    for (const c of components) this.components.removeMirror(c.id);
  }
}
