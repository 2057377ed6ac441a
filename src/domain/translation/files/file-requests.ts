// A translation's file as the API's `file/` and the translation page serve it: the upload request
// (read by the edge as Weblate's UploadRequestSerializer, after upload.perform; then checked in Weblate's
// order — conflicts, method — and performed) and the download (as stored, or converted by an
// exporter). Both callers go through here, so the page and the API refuse and answer alike.
import type { Exporter } from '../../../formats/exporters.ts';
import { Errors } from '../../../lib/errors.ts';
import type { Actor } from '../../access/actor.ts';
import type { TranslationPermissions, TranslationPerm } from '../permissions.ts';
import type { ComponentPath, TranslationPath } from '../queries.ts';
import type { TranslationFiles, UploadMethod, UploadRequest, UploadResult } from './files.service.ts';

/** Weblate's upload.perform, the first check of an upload (before its fields are read): 403 when refused. */
export function requireUploadPermission(perms: TranslationPermissions, actor: Actor, { project, component, translation }: TranslationPath): Promise<void> {
  return perms.require(actor, 'upload.perform', { project, component, translation }, 'Insufficient privileges for uploading.');
}

/**
 * An upload to a translation found for `actor` (`path`), its request read by the API's edge
 * (UploadRequestSerializer): the checks in Weblate's order, then the files service's upload.
 * 400 {"field": reason} or 403 when refused.
 */
export async function uploadTranslationFile(
  files: TranslationFiles,
  perms: TranslationPermissions,
  actor: Actor,
  path: TranslationPath,
  data: UploadRequest,
): Promise<UploadResult> {
  const { project, component, translation } = path;
  const scope = { project, component, translation };
  await requireUploadPermission(perms, actor, path);
  if (data.conflicts && !(await perms.can(actor, 'upload.overwrite', scope))) {
    throw Errors.invalid({ conflicts: 'You can not overwrite existing translations.' });
  }
  if (data.conflicts === 'replace-approved') {
    const denied = await perms.check(actor, 'unit.review', scope);
    if (denied !== null) throw Errors.invalid({ conflicts: denied });
  }
  if (!(await uploadMethodAllowed(files, perms, actor, path, data.method))) {
    const hint =
      data.method === 'add' && !translation.is_source
        ? (files.addRefusal(component, translation) ?? 'Try adding to the source instead of the translation.')
        : 'Check your permissions or use different translation object.';
    throw Errors.invalid({ method: `This method is not available here. ${hint}` });
  }
  if (!translation.filename && data.method !== 'source') throw Errors.invalid({ method: 'No translation file, try using method=source.' });
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
  else if (format !== 'zip') throw Errors.invalid({ format: `Conversion to ${format} is not supported` });
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
