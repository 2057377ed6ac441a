// Translation files (reference §1.5): a translation's `file/` — download as it would be committed
// (pending edits written in), converted with `?format=` (and filtered with `?q=`), and upload — and a
// component's `file/`, a zip of every translation file. The files service does the work.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import { UPLOAD_CONFLICTS, UPLOAD_FUZZY, UPLOAD_METHODS, type UploadMethod, type UploadRequest } from '../../domain/translation/files/files.service.ts';
import type { TranslationPerm } from '../../domain/translation/permissions.ts';
import { parseQuery } from '../../domain/translation/search/query.ts';
import { Errors } from '../../lib/errors.ts';
import { body, searching, view } from './common.ts';
import { sendJson } from './serializers.ts';

type P = { Params: { project: string; component: string; language: string } };
type C = { Params: { project: string; component: string } };
const TRANSLATION_FILE = '/api/translations/:project/:component/:language/file/';
const COMPONENT_FILE = '/api/components/:project/:component/file/';

type Query = Record<string, string | string[] | undefined>;
const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[v.length - 1] : v);

/** If-Modified-Since at or after `modified` (whole seconds, as HTTP dates are) → true. */
function notModified(req: FastifyRequest, modified: Date): boolean {
  const since = req.headers['if-modified-since'];
  if (!since) return false;
  const t = Date.parse(since);
  return !Number.isNaN(t) && Math.floor(modified.getTime() / 1000) <= Math.floor(t / 1000);
}

function attachment(reply: FastifyReply, contentType: string, disposition: string, modified: Date, bytes: Buffer): FastifyReply {
  return reply.header('content-type', contentType).header('content-disposition', disposition).header('last-modified', modified.toUTCString()).send(bytes);
}

export function filesRoutes(app: FastifyInstance, c: Container): void {
  const q = c.translation.queries;
  const files = c.translation.writes.files;

  // a raw download: the browsable API leaves it alone and `format` names an exporter here
  const fileView = view('GET, POST, PUT, HEAD, OPTIONS', 'File', 'Translation components API.');
  app.get<P>(TRANSLATION_FILE, { ...fileView, config: { ...fileView.config, raw: true } }, async (req, reply) => {
    const { project, component, translation, languageCode } = await q.translation(req.actor, req.params.project, req.params.component, req.params.language);
    const query = req.query as Query;
    const format = one(query.format) || undefined;
    const search = one(query.q) ?? '';
    if (search && !format) throw Errors.raw(400, { q: 'Query string is ignored without format' });
    if (search) await searching(c, async () => parseQuery(search));
    const exporter = format ? files.exporterFor(component, format) : undefined;
    if (!exporter && !translation.filename) throw Errors.notFound();
    const modified = await files.lastModified(component, [translation]);
    if (notModified(req, modified)) return reply.code(304).send();
    if (exporter) {
      const bytes = await searching(c, () => files.convert(project, component, translation, exporter, { q: search }));
      return attachment(
        reply,
        `${exporter.contentType}; charset=utf-8`,
        `attachment; filename=${project.slug}-${component.slug}-${languageCode}.${exporter.extension}`,
        modified,
        bytes,
      );
    }
    const bytes = await files.render(component, translation);
    const name = translation.filename.slice(translation.filename.lastIndexOf('/') + 1);
    const ext = name.includes('.') ? name.slice(name.lastIndexOf('.')) : `.${files.format(component).extension}`;
    return attachment(reply, files.format(component).mimetype, `attachment; filename=${project.slug}-${component.slug}-${languageCode}${ext}`, modified, bytes);
  });

  // upload (multipart or form): checks in Weblate's order — upload.perform, validation, conflicts, method
  app.route<P>({
    method: ['POST', 'PUT'],
    url: TRANSLATION_FILE,
    ...fileView,
    handler: async (req, reply) => {
      if (!req.actor.user) throw Errors.unauthorized();
      const { project, component, translation } = await q.translation(req.actor, req.params.project, req.params.component, req.params.language);
      const perms = c.translation.writes.permissions;
      const scope = { project, component, translation };
      await perms.require(req.actor, 'upload.perform', scope, 'Insufficient privileges for uploading.');
      const data = validateUpload(body(req));
      if (data.conflicts && !(await perms.can(req.actor, 'upload.overwrite', scope))) {
        throw Errors.raw(400, { conflicts: 'You can not overwrite existing translations.' });
      }
      if (data.conflicts === 'replace-approved') {
        const denied = await perms.check(req.actor, 'unit.review', scope);
        if (denied !== null) throw Errors.raw(400, { conflicts: denied });
      }
      if (!(await methodAllowed(data.method))) {
        const hint =
          data.method === 'add' && !translation.is_source
            ? (files.addRefusal(component, translation) ?? 'Try adding to the source instead of the translation.')
            : 'Check your permissions or use different translation object.';
        throw Errors.raw(400, { method: `This method is not available here. ${hint}` });
      }
      if (!translation.filename && data.method !== 'source') throw Errors.raw(400, { method: 'No translation file, try using method=source.' });
      // the uploader may credit someone else (Weblate's upload.authorship: managers)
      const { author, ...request } = data;
      const credited = author && (await perms.can(req.actor, 'component.edit', scope)) ? { author } : {};
      const result = await files.upload(req.actor, project, component, translation, { ...request, ...credited });
      return sendJson(reply, result);

      /** Weblate's check_upload_method_permissions */
      async function methodAllowed(method: UploadMethod): Promise<boolean> {
        const can = (perm: TranslationPerm) => perms.can(req.actor, perm, scope);
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
              Boolean(translation.filename) &&
              ((await can('component.edit')) || ((await can('unit.add')) && (await can('unit.delete')) && (await can('unit.edit'))))
            );
        }
      }
    },
  });

  // every translation file of a component, zipped (`?format=zip`, the default, or `zip:<exporter>`)
  const zipView = view('GET, HEAD, OPTIONS', 'File', 'Translation components API.');
  app.get<C>(COMPONENT_FILE, { ...zipView, config: { ...zipView.config, raw: true } }, async (req, reply) => {
    const { project, component } = await q.component(req.actor, req.params.project, req.params.component);
    const format = one((req.query as Query).format) || 'zip';
    let exporter;
    if (format.startsWith('zip:')) exporter = files.exporterFor(component, format.slice(4));
    else if (format !== 'zip') throw Errors.raw(400, { format: `Conversion to ${format} is not supported` });
    const translations = await files.translationsOf(component);
    const modified = await files.lastModified(component, translations);
    if (notModified(req, modified)) return reply.code(304).send();
    const bytes = await files.zip(project, component, translations, exporter);
    return attachment(reply, 'application/zip', `attachment; filename="${project.slug}-${component.slug}.zip"`, modified, bytes);
  });
}

const last = (v: unknown) => (Array.isArray(v) ? v[v.length - 1] : v);
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** DRF BooleanField's spellings */
const TRUE_VALUES = new Set(['true', 'yes', 'y', 't', 'on', '1']);
const FALSE_VALUES = new Set(['false', 'no', 'n', 'f', 'off', '0']);

/** UploadRequestSerializer: every field's errors at once, as DRF lists them. */
function validateUpload(data: Record<string, unknown>): UploadRequest & { author?: { name: string; email: string } } {
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
