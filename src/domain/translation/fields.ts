// DRF's field validation for translation writes: every field's messages collected, then one 400
// `{"field": ["message", …]}` (reference §3.5, plain DRF bodies as the spec's release writes them).
import type { Db } from '../../db/connect.ts';
import { Errors } from '../../lib/errors.ts';

export class FieldErrors {
  readonly errors: Record<string, string[]> = {};
  add(field: string, message: string): void {
    (this.errors[field] ??= []).push(message);
  }
  has(field: string): boolean {
    return field in this.errors;
  }
  throwIfAny(): void {
    if (Object.keys(this.errors).length) throw Errors.invalid(this.errors);
  }
}

type Input = Record<string, unknown>;

/** A CharField: trimmed; `required` (on create), `blank` allowed or not, `max` length. */
export function stringField(
  e: FieldErrors,
  input: object,
  field: string,
  opts: { required?: boolean; blank?: boolean; max?: number } = {},
): string | undefined {
  const v = (input as Input)[field];
  if (v === undefined) {
    if (opts.required) e.add(field, 'This field is required.');
    return undefined;
  }
  if (v === null) return void e.add(field, 'This field may not be null.');
  if (typeof v !== 'string' && typeof v !== 'number') return void e.add(field, 'Not a valid string.');
  const s = String(v).trim();
  if (!s && !opts.blank) return void e.add(field, 'This field may not be blank.');
  if (opts.max && s.length > opts.max) return void e.add(field, `Ensure this field has no more than ${opts.max} characters.`);
  return s;
}

/** A URLField (http, https). */
export function urlField(e: FieldErrors, input: object, field: string, opts: { required?: boolean; blank?: boolean } = {}): string | undefined {
  const s = stringField(e, input, field, { ...opts, max: 200 });
  if (!s) return s;
  try {
    const u = new URL(s);
    if ((u.protocol === 'http:' || u.protocol === 'https:') && u.hostname) return s;
  } catch {
    /* below */
  }
  e.add(field, 'Enter a valid URL.');
  return undefined;
}

/** DRF BooleanField: true/false, 1/0, "true"/"false", "yes"/"no", "on"/"off" … */
export function boolField(e: FieldErrors, input: object, field: string): boolean | undefined {
  const v = (input as Input)[field];
  if (v === undefined) return undefined;
  const s = String(v).toLowerCase();
  if (['true', '1', 'yes', 'on', 't', 'y'].includes(s)) return true;
  if (['false', '0', 'no', 'off', 'f', 'n', ''].includes(s) && v !== null) return false;
  e.add(field, 'Must be a valid boolean.');
  return undefined;
}

export function intField(e: FieldErrors, input: object, field: string, opts: { min?: number; max?: number } = {}): number | undefined {
  const v = (input as Input)[field];
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v === null || String(v).trim() === '' || !Number.isInteger(n)) return void e.add(field, 'A valid integer is required.');
  if (opts.min !== undefined && n < opts.min) return void e.add(field, `Ensure this value is greater than or equal to ${opts.min}.`);
  if (opts.max !== undefined && n > opts.max) return void e.add(field, `Ensure this value is less than or equal to ${opts.max}.`);
  return n;
}

export function choiceField(e: FieldErrors, input: object, field: string, choices: readonly string[]): string | undefined {
  const v = (input as Input)[field];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !choices.includes(v)) return void e.add(field, `"${String(v)}" is not a valid choice.`);
  return v;
}

/** A language given as its code or as `{"code": …}` (Weblate's source_language). */
export async function languageField(db: Db, e: FieldErrors, v: unknown, field: string): Promise<number | undefined> {
  const code = typeof v === 'string' ? v : v && typeof v === 'object' ? (v as { code?: unknown }).code : undefined;
  if (typeof code !== 'string' || !code) {
    e.add(field, 'This field is required.');
    return undefined;
  }
  const row = await db.kysely.selectFrom('languages').select('id').where('code', '=', code).executeTakeFirst();
  if (!row) {
    e.add(`${field}`, 'Language with this language code was not found.');
    return undefined;
  }
  return row.id;
}
