// Language writes (reference §6): administrators only ("Can not manage languages"), DRF field errors,
// the default plural created and updated with the language, its type computed from the formula.
import type { Db } from '../../../db/connect.ts';
import type { LanguageRow } from '../../../db/schema.ts';
import { isUniqueViolation } from '../../../db/sql.ts';
import { Errors } from '../../../lib/errors.ts';
import { nowIso } from '../../../lib/time.ts';
import type { Actor } from '../../access/actor.ts';
import { pluralFormulaError, pluralType } from './plural.ts';

const CODE = /^[A-Za-z0-9]+(?:[-_@][A-Za-z0-9]+)*$/;
const DIRECTIONS = ['ltr', 'rtl'];

export interface LanguageInput {
  code?: unknown;
  name?: unknown;
  direction?: unknown;
  population?: unknown;
  plural?: unknown;
}

type Errs = Record<string, unknown>;

export class LanguagesService {
  constructor(private readonly db: Db) {}

  private requireAdmin(actor: Actor): void {
    if (!actor.user) throw Errors.unauthorized();
    if (!actor.isAdmin) throw Errors.forbidden('Can not manage languages');
  }

  /** DRF's field validation: the values to write, or 400 with every field's messages. */
  private validate(
    input: LanguageInput,
    partial: boolean,
  ): { code?: string; name?: string; direction?: string; population?: number; plural?: { number?: number; formula?: string } } {
    const errs: Errs = {};
    const out: ReturnType<LanguagesService['validate']> = {};
    const str = (k: 'code' | 'name') => {
      const v = input[k];
      if (v === undefined) {
        if (!partial) errs[k] = ['This field is required.'];
        return undefined;
      }
      if (typeof v !== 'string' && typeof v !== 'number') return void (errs[k] = ['Not a valid string.']);
      const s = String(v).trim();
      if (!s) return void (errs[k] = ['This field may not be blank.']);
      return s;
    };
    const code = str('code');
    if (code !== undefined) {
      if (!CODE.test(code)) errs.code = ['Enter a valid language code.'];
      else if (code.length > 50) errs.code = ['Ensure this field has no more than 50 characters.'];
      else out.code = code;
    }
    const name = str('name');
    if (name !== undefined) {
      if (name.length > 100) errs.name = ['Ensure this field has no more than 100 characters.'];
      else out.name = name;
    }
    if (input.direction !== undefined) {
      if (typeof input.direction !== 'string' || !DIRECTIONS.includes(input.direction))
        errs.direction = [`"${String(input.direction)}" is not a valid choice.`];
      else out.direction = input.direction;
    }
    if (input.population !== undefined) {
      const n = Number(input.population);
      if (input.population === '' || !Number.isInteger(n)) errs.population = ['A valid integer is required.'];
      else if (n < 0) errs.population = ['Ensure this value is greater than or equal to 0.'];
      else out.population = n;
    }
    if (input.plural !== undefined && input.plural !== null) {
      const p = input.plural as Record<string, unknown>;
      const perr: Errs = {};
      if (typeof p !== 'object' || Array.isArray(p)) errs.plural = { non_field_errors: ['Invalid data. Expected a dictionary, but got str.'] };
      else {
        const plural: { number?: number; formula?: string } = {};
        if (p.number !== undefined) {
          const n = Number(p.number);
          if (!Number.isInteger(n)) perr.number = ['A valid integer is required.'];
          else if (n < 1) perr.number = ['Ensure this value is greater than or equal to 1.'];
          else if (n > 10) perr.number = ['Ensure this value is less than or equal to 10.'];
          else plural.number = n;
        } else if (!partial) perr.number = ['This field is required.'];
        if (p.formula !== undefined) {
          if (typeof p.formula !== 'string' || !p.formula.trim()) perr.formula = ['This field may not be blank.'];
          else plural.formula = p.formula.trim();
        } else if (!partial) perr.formula = ['This field is required.'];
        if (plural.number !== undefined && plural.formula !== undefined) {
          const problem = pluralFormulaError(plural.formula, plural.number);
          if (problem) perr.formula = [problem];
        }
        if (Object.keys(perr).length) errs.plural = perr;
        else out.plural = plural;
      }
    }
    if (Object.keys(errs).length) throw Errors.invalid(errs as Record<string, string[]>);
    return out;
  }

  async create(actor: Actor, input: LanguageInput): Promise<LanguageRow> {
    this.requireAdmin(actor);
    const v = this.validate(input, false);
    if (!v.plural?.formula || !v.plural.number) throw Errors.invalid(['No valid plural data was provided.'] as any);
    const taken = await this.db.kysely.selectFrom('languages').select('id').where('code', '=', v.code!).executeTakeFirst();
    if (taken) throw Errors.invalid(['Language with this Language code already exists.'] as any);
    try {
      return await this.db.kysely.transaction().execute(async (trx) => {
        const row = await trx
          .insertInto('languages')
          .values({ code: v.code!, name: v.name!, direction: v.direction ?? 'ltr', population: v.population ?? 0, created_at: nowIso() })
          .returningAll()
          .executeTakeFirstOrThrow();
        const { number, formula } = v.plural as { number: number; formula: string };
        await trx
          .insertInto('language_plurals')
          .values({ language_id: row.id, source: 0, number, formula, type: pluralType(formula, number, row.code) })
          .execute();
        return row;
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw Errors.invalid(['Language with this Language code already exists.'] as any);
      throw e;
    }
  }

  async update(actor: Actor, row: LanguageRow, input: LanguageInput, partial: boolean): Promise<LanguageRow> {
    this.requireAdmin(actor);
    const v = this.validate(input, partial);
    if (v.code && v.code !== row.code) {
      const taken = await this.db.kysely.selectFrom('languages').select('id').where('code', '=', v.code).executeTakeFirst();
      if (taken) throw Errors.invalid({ code: ['Language with this Language code already exists.'] });
    }
    return this.db.kysely.transaction().execute(async (trx) => {
      const { plural, ...fields } = v;
      const updated = Object.keys(fields).length
        ? await trx.updateTable('languages').set(fields).where('id', '=', row.id).returningAll().executeTakeFirstOrThrow()
        : row;
      if (plural && (plural.number !== undefined || plural.formula !== undefined)) {
        const current = await trx.selectFrom('language_plurals').selectAll().where('language_id', '=', row.id).where('source', '=', 0).executeTakeFirst();
        const number = plural.number ?? current?.number ?? 2;
        const formula = plural.formula ?? current?.formula ?? 'n != 1';
        const problem = pluralFormulaError(formula, number);
        if (problem) throw Errors.invalid({ plural: { formula: [problem] } } as any);
        const type = pluralType(formula, number, updated.code);
        if (current) await trx.updateTable('language_plurals').set({ number, formula, type }).where('id', '=', current.id).execute();
        else await trx.insertInto('language_plurals').values({ language_id: row.id, source: 0, number, formula, type }).execute();
      }
      return updated;
    });
  }

  async delete(actor: Actor, row: LanguageRow): Promise<void> {
    this.requireAdmin(actor);
    await this.db.kysely.transaction().execute(async (trx) => {
      await trx.deleteFrom('language_plurals').where('language_id', '=', row.id).execute();
      await trx.deleteFrom('languages').where('id', '=', row.id).execute();
    });
  }
}
