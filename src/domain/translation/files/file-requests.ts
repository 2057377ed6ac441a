// A translation's file as the API's `file/` and the translation page serve it: the upload request
// (validated as Weblate's UploadRequestSerializer, then checked in Weblate's order — upload.perform,
// validation, conflicts, method — and performed) and the download (as stored, or converted by an
// exporter). Both callers go through here, so the page and the API refuse and answer alike.
import type { Exporter } from '../../../formats/exporters.ts';
import { Errors } from '../../../lib/errors.ts';
import type { Actor } from '../../access/actor.ts';
import type { TranslationPermissions, TranslationPerm } from '../permissions.ts';
import type { ComponentPath, TranslationPath } from '../queries.ts';
import {
  type TranslationFiles,
  UPLOAD_CONFLICTS,
  UPLOAD_FUZZY,
  UPLOAD_METHODS,
  type UploadMethod,
  type UploadRequest,
  type UploadResult,
} from './files.service.ts';

const last = (v: unknown) => (Array.isArray(v) ? v[v.length - 1] : v);
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** DRF BooleanField's spellings */
const TRUE_VALUES = new Set(['true', 'yes', 'y', 't', 'on', '1']);
const FALSE_VALUES = new Set(['false', 'no', 'n', 'f', 'off', '0']);

/** UploadRequestSerializer: every field's errors at once, as DRF lists them. */
export function validateUpload(data: Record<string, unknown>): UploadRequest & { author?: { name: string; email: string } } {
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
  if (Object.keys(errors).length) throw Errors.invalid(errors);
  return {
    file: file as Buffer,
    method,
    fuzzy,
    conflicts: conflicts === 'ignore' ? '' : conflicts,
    ...(authorName && authorEmail ? { author: { name: authorName, email: authorEmail } } : {}),
  };
}

/**
 * An upload to a translation found for `actor` (`path`), from the fields of the request: the checks in
 * Weblate's order, then the files service's upload. 400 {"field": reason} or 403 when refused.
 */
export async function uploadTranslationFile(
  files: TranslationFiles,
  perms: TranslationPermissions,
  actor: Actor,
  path: TranslationPath,
  fields: Record<string, unknown>,
): Promise<UploadResult> {
  const { project, component, translation } = path;
  const scope = { project, component, translation };
  await perms.require(actor, 'upload.perform', scope, 'Insufficient privileges for uploading.');
  const data = validateUpload(fields);
  if (data.conflicts && !(await perms.can(actor, 'upload.overwrite', scope))) {
    throw Errors.raw(400, { conflicts: 'You can not overwrite existing translations.' });
  }
  if (data.conflicts === 'replace-approved') {
    const denied = await perms.check(actor, 'unit.review', scope);
    if (denied !== null) throw Errors.raw(400, { conflicts: denied });
  }
  if (!(await uploadMethodAllowed(files, perms, actor, path, data.method))) {
    const hint =
      data.method === 'add' && !translation.is_source
        ? (files.addRefusal(component, translation) ?? 'Try adding to the source instead of the translation.')
        : 'Check your permissions or use different translation object.';
    throw Errors.raw(400, { method: `This method is not available here. ${hint}` });
  }
  if (!translation.filename && data.method !== 'source') throw Errors.raw(400, { method: 'No translation file, try using method=source.' });
  // the uploader may credit someone else (Weblate's upload.authorship: managers)
  const { author, ...request } = data;
  const credited = author && (await perms.can(actor, 'component.edit', scope)) ? { author } : {};
  return files.upload(actor, project, component, translation, { ...request, ...credited });
}

/** Weblate's check_upload_method_permissions: whether `method` is offered to `actor` on this translation. */
export async function uploadMethodAllowed(
  files: TranslationFiles,
  perms: TranslationPermissions,
  actor: Actor,
  { project, component, translation }: TranslationPath,
  method: UploadMethod,
): Promise<boolean> {
  const scope = { project, component, translation };
  const can = (perm: TranslationPerm) => perms.can(actor, perm, scope);
  switch (method) {
    case 'source':
      return translation.is_source === 1 && files.sourceAllowed(component) && (await can('upload.perform'));
    case 'add':
      return files.addRefusal(component, translation) === null && (await can('unit.add'));
    case 'translate':
    case 'fuzzy':
      return can('unit.edit');
    case 'suggest':
      return can('suggestion.add');
    case 'approve':
      return can('unit.review');
    case 'replace':
      return (
        Boolean(translation.filename) && ((await can('component.edit')) || ((await can('unit.add')) && (await can('unit.delete')) && (await can('unit.edit'))))
      );
  }
}

export interface TranslationDownload {
  /** when the file last changed (Last-Modified, If-Modified-Since) */
  modified: Date;
  /** the bytes, their content type and the attachment's Content-Disposition */
  produce(): Promise<{ contentType: string; disposition: string; bytes: Buffer }>;
}

/**
 * A translation's file as stored with pending edits written in, or converted by the exporter `format`
 * names (the units matching `q`): 400 {"format": …} for an unknown or unfit exporter, 404 when there is
 * no file to download. `produce` may throw the search errors of `q`.
 */
export async function translationDownload(
  files: TranslationFiles,
  path: TranslationPath,
  opts: { format?: string; q?: string } = {},
): Promise<TranslationDownload> {
  const { project, component, translation, languageCode } = path;
  const exporter: Exporter | undefined = opts.format ? files.exporterFor(component, opts.format) : undefined;
  if (!exporter && !translation.filename) throw Errors.notFound();
  const modified = await files.lastModified(component, [translation]);
  const base = `${project.slug}-${component.slug}-${languageCode}`;
  return {
    modified,
    async produce() {
      if (exporter) {
        return {
          contentType: `${exporter.contentType}; charset=utf-8`,
          disposition: `attachment; filename=${base}.${exporter.extension}`,
          bytes: await files.convert(project, component, translation, exporter, { q: opts.q ?? '' }),
        };
      }
      const bytes = await files.render(component, translation);
      const name = translation.filename.slice(translation.filename.lastIndexOf('/') + 1);
      const ext = name.includes('.') ? name.slice(name.lastIndexOf('.')) : `.${files.format(component).extension}`;
      return { contentType: files.format(component).mimetype, disposition: `attachment; filename=${base}${ext}`, bytes };
    },
  };
}

/**
 * Every translation file of a component in one zip (`format` `zip`, the default, or `zip:<exporter>`):
 * 400 {"format": …} for another format or an unfit exporter.
 */
export async function componentDownload(files: TranslationFiles, { project, component }: ComponentPath, format = 'zip'): Promise<TranslationDownload> {
  let exporter: Exporter | undefined;
  if (format.startsWith('zip:')) exporter = files.exporterFor(component, format.slice(4));
  else if (format !== 'zip') throw Errors.raw(400, { format: `Conversion to ${format} is not supported` });
  const translations = await files.translationsOf(component);
  const modified = await files.lastModified(component, translations);
  return {
    modified,
    async produce() {
      return {
        contentType: 'application/zip',
        disposition: `attachment; filename="${project.slug}-${component.slug}.zip"`,
        bytes: await files.zip(project, component, translations, exporter),
      };
    },
  };
}
