// Weblate's request serializers at the translation API's edge: the raw fields of a request read into
// the typed input the domain takes, or DRF's field errors (every field's at once, as DRF lists them).
// The API's routes and the translation pages call the same validators. What needs the database or a
// permission (plural counts, read-only strings, who may approve or overwrite) stays in the services.
//
// DRF validates after the view found its object and checked its permissions, so a request that is both
// invalid and aimed at an invisible object is a 404: `validOrRefused` runs those checks first when, and
// only when, the validator refused (the happy path queries nothing more).
import { parseFlags } from '../../domain/translation/checks/index.ts';
import { UPLOAD_CONFLICTS, UPLOAD_FUZZY, UPLOAD_METHODS, type UploadRequest } from '../../domain/translation/files/files.service.ts';
import { type NewUnitRequest, SETTABLE_STATES, type UnitWrite } from '../../domain/translation/units/edits.ts';
import { PLURAL_SEPARATOR } from '../../domain/translation/units/hash.ts';
import { Errors, type FieldErrors } from '../../lib/errors.ts';

/** A validator's verdict: the typed value, or DRF's field errors. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; errors: FieldErrors };

/**
 * The value of `parsed`; when it holds field errors, `before` runs first (what Weblate answers before
 * its serializer: the object's 404, a permission's 403), then the errors are the 400.
 */
export async function validOrRefused<T>(parsed: Parsed<T>, before?: () => Promise<unknown>): Promise<T> {
  if (parsed.ok) return parsed.value;
  if (before) await before();
  throw Errors.invalid(parsed.errors);
}

// ---- fields ----------------------------------------------------------------------------------------

const STATE_CHOICES = new Set([0, 10, 11, 12, 20, 30, 100]);

/** DRF ChoiceField over StringState: the number, or an error. */
export function parseStateField(v: unknown): { value?: number; error?: string } {
  if (v === null) return { error: 'This field may not be null.' };
  const s = typeof v === 'boolean' ? (v ? 'True' : 'False') : String(v);
  const n = /^-?\d+$/.test(s.trim()) && typeof v !== 'boolean' ? Number(s.trim()) : Number.NaN;
  if (typeof v === 'object' || !STATE_CHOICES.has(n)) return { error: `"${s}" is not a valid choice.` };
  return { value: n };
}

/** A plural field (ListField of CharField, trim_whitespace off): a list of strings, or a string whose forms are joined by U+001E. */
export function parsePluralField(v: unknown, allowBlank: boolean): { value?: string[]; error?: string[] | Record<string, string[]> } {
  if (v === null) return { error: ['This field may not be null.'] };
  let list: unknown[];
  if (typeof v === 'string') list = v.split(PLURAL_SEPARATOR);
  else if (Array.isArray(v)) list = v;
  else
    return {
      error: [
        `Expected a list of items but got type "${typeof v === 'number' ? (Number.isInteger(v) ? 'int' : 'float') : typeof v === 'boolean' ? 'bool' : 'dict'}".`,
      ],
    };
  const errs: Record<string, string[]> = {};
  const out: string[] = [];
  list.forEach((item, i) => {
    if (item === null) errs[i] = ['This field may not be null.'];
    else if (typeof item !== 'string' && typeof item !== 'number') errs[i] = ['Not a valid string.'];
    else if (String(item) === '' && !allowBlank) errs[i] = ['This field may not be blank.'];
    else out.push(String(item));
  });
  return Object.keys(errs).length ? { error: errs } : { value: out };
}

/** DRF's error map of a nested list field, kept as DRF renders it (`{"0": ["…"]}` inside the field). */
type NestedErrors = FieldErrors[string] | Record<string, string[]>;
const fieldErrors = (errs: Record<string, NestedErrors>): FieldErrors => errs as FieldErrors;

// ---- PUT/PATCH /api/units/:id/ ------------------------------------------------------------------------

/** UnitWriteSerializer: `target`, `state`, `explanation`, `extra_flags`, `labels` (PUT requires `target`). */
export function unitWrite(input: Record<string, unknown>, partial: boolean): Parsed<UnitWrite> {
  const errs: Record<string, NestedErrors> = {};
  const write: UnitWrite = {};
  const stateRaw = input.state;
  if ('target' in input) {
    const allowBlank = stateRaw === 0 || stateRaw === '0';
    const r = parsePluralField(input.target, allowBlank);
    if (r.error) errs.target = r.error;
    else write.target = r.value;
  } else if (!partial) errs.target = ['This field is required.'];
  if ('state' in input) {
    const r = parseStateField(stateRaw);
    if (r.error) errs.state = [r.error];
    else if (r.value === 11 || r.value === 12) errs.state = ['This state cannot be set manually.'];
    else write.state = r.value;
  }
  if ('explanation' in input) {
    if (typeof input.explanation !== 'string') errs.explanation = [input.explanation === null ? 'This field may not be null.' : 'Not a valid string.'];
    else write.explanation = input.explanation;
  }
  if ('extra_flags' in input) {
    if (typeof input.extra_flags !== 'string') errs.extra_flags = [input.extra_flags === null ? 'This field may not be null.' : 'Not a valid string.'];
    else {
      try {
        parseFlags(input.extra_flags);
        write.extraFlags = input.extra_flags;
      } catch (e) {
        errs.extra_flags = [e instanceof Error ? e.message : String(e)];
      }
    }
  }
  if ('labels' in input) {
    const labels = input.labels;
    if (!Array.isArray(labels)) errs.labels = [`Expected a list of items but got type "${typeof labels === 'string' ? 'str' : typeof labels}".`];
    // no label exists: any id is unknown
    else if (labels.length) errs.labels = [`Invalid pk "${String(labels[0])}" - object does not exist.`];
    else write.labels = [];
  }
  return Object.keys(errs).length ? { ok: false, errors: fieldErrors(errs) } : { ok: true, value: write };
}

// ---- POST /api/translations/:p/:c/:lang/units/ ------------------------------------------------------

/**
 * MonolingualUnitSerializer (`key`, `value`) or BilingualUnitSerializer (`context`, `source`, `target`;
 * `target` optional on the source language), with `state`; which one reads the request is the
 * translation's to say, so the service calls this once it found the translation and checked who may add.
 */
export function newUnitRequest(input: Record<string, unknown>): NewUnitRequest {
  return ({ monolingual, isSource }) => {
    const errs: Record<string, NestedErrors> = {};
    const allowBlank = input.state === 0 || input.state === '0' || input.state === undefined;
    let context = '';
    let source: string[] = [];
    let target: string[] = [];
    let state: number | undefined;
    const plural = (field: string, required: boolean, blank: boolean) => {
      if (!(field in input)) {
        if (required) errs[field] = ['This field is required.'];
        return undefined;
      }
      const r = parsePluralField(input[field], blank);
      if (r.error) errs[field] = r.error;
      return r.value;
    };
    const str = (field: string, required: boolean) => {
      const v = input[field];
      if (v === undefined) {
        if (required) errs[field] = ['This field is required.'];
        return '';
      }
      const fail = (msg: string) => {
        errs[field] = [msg];
        return '';
      };
      if (v === null) return fail('This field may not be null.');
      if (typeof v !== 'string' && typeof v !== 'number') return fail('Not a valid string.');
      if (String(v) === '' && required) return fail('This field may not be blank.');
      return String(v);
    };
    if (monolingual) {
      context = str('key', true);
      target = plural('value', true, allowBlank) ?? [];
      source = target;
    } else {
      context = str('context', false);
      source = plural('source', true, false) ?? [];
      target = plural('target', !isSource, allowBlank || isSource) ?? [];
    }
    if ('state' in input) {
      const r = parseStateField(input.state);
      if (r.error) errs.state = [r.error];
      else if (!SETTABLE_STATES.includes(r.value!)) errs.state = [`"${String(input.state)}" is not a valid choice.`];
      else state = r.value;
    }
    if (Object.keys(errs).length) return { errors: fieldErrors(errs), ...(state !== undefined ? { state } : {}) };
    return { unit: { context, source, target, ...(state !== undefined ? { state } : {}) } };
  };
}

// ---- POST/PUT …/file/ ----------------------------------------------------------------------------------

const last = (v: unknown) => (Array.isArray(v) ? v[v.length - 1] : v);
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** DRF BooleanField's spellings */
const TRUE_VALUES = new Set(['true', 'yes', 'y', 't', 'on', '1']);
const FALSE_VALUES = new Set(['false', 'no', 'n', 'f', 'off', '0']);

/** UploadRequestSerializer: `file`, `method`, `fuzzy`, `conflicts` (or wlc's `overwrite`), `author_name`, `author_email`. */
export function uploadRequest(data: Record<string, unknown>): Parsed<UploadRequest> {
  const errors: Record<string, string[]> = {};
  const file = last(data.file);
  if (file === undefined || file === null || file === '') errors.file = ['No file was submitted.'];
  else if (!Buffer.isBuffer(file)) errors.file = ['The submitted data was not a file. Check the encoding type on the form.'];
  else if (file.length === 0) errors.file = ['The submitted file is empty.'];
  const choice = <T extends string>(name: string, choices: readonly T[], def: T): T => {
    const v = last(data[name]);
    if (v === undefined) return def;
    if (typeof v === 'string' && (choices as readonly string[]).includes(v)) return v as T;
    errors[name] = [`"${typeof v === 'string' ? v : String(v)}" is not a valid choice.`];
    return def;
  };
  const method = choice('method', UPLOAD_METHODS, 'translate');
  const fuzzy = choice('fuzzy', UPLOAD_FUZZY, '');
  let conflicts = choice('conflicts', UPLOAD_CONFLICTS, '');
  // wlc 1.13 sends `overwrite=yes` for --overwrite: Weblate's older boolean, read as replace-translated when
  // `conflicts` is not given
  const overwrite = last(data.overwrite);
  if (overwrite !== undefined && overwrite !== '') {
    const v = String(overwrite).toLowerCase();
    if (TRUE_VALUES.has(v)) {
      if (last(data.conflicts) === undefined) conflicts = 'replace-translated';
    } else if (!FALSE_VALUES.has(v)) errors.overwrite = ['Must be a valid boolean.'];
  }
  const text = (name: string, max: number): string => {
    const v = last(data[name]);
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string') {
      errors[name] = ['Not a valid string.'];
      return '';
    }
    if (v.length > max) errors[name] = [`Ensure this field has no more than ${max} characters.`];
    return v.trim();
  };
  const authorName = text('author_name', 200);
  const authorEmail = text('author_email', 254);
  if (authorEmail && !EMAIL.test(authorEmail)) errors.author_email = ['Enter a valid email address.'];
  if (Object.keys(errors).length) return { ok: false, errors };
  return {
    ok: true,
    value: {
      file: file as Buffer,
      method,
      fuzzy,
      conflicts: conflicts === 'ignore' ? '' : conflicts,
      ...(authorName && authorEmail ? { author: { name: authorName, email: authorEmail } } : {}),
    },
  };
}
