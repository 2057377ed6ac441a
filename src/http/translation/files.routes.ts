// Translation files (reference §1.5): a translation's `file/` — download as it would be committed
// (pending edits written in), converted with `?format=` (and filtered with `?q=`), and upload — and a
// component's `file/`, a zip of every translation file. The files service does the work.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import { componentDownload, requireUploadPermission, translationDownload, uploadTranslationFile } from '../../domain/translation/files/file-requests.ts';
import { parseQuery } from '../../domain/translation/search/query.ts';
import { Errors } from '../../lib/errors.ts';
import { body, searching, view } from './common.ts';
import { sendJson } from './serializers.ts';
import { uploadRequest, validOrRefused } from './validators.ts';

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
    const path = await q.translation(req.actor, req.params.project, req.params.component, req.params.language);
    const query = req.query as Query;
    const format = one(query.format) || undefined;
    const search = one(query.q) ?? '';
    if (search && !format) throw Errors.raw(400, { q: 'Query string is ignored without format' });
    if (search) await searching(c, async () => parseQuery(search));
    const download = await translationDownload(files, path, { format, q: search });
    if (notModified(req, download.modified)) return reply.code(304).send();
    const { contentType, disposition, bytes } = await searching(c, () => download.produce());
    return attachment(reply, contentType, disposition, download.modified, bytes);
  });

  // upload (multipart or form): checks in Weblate's order — upload.perform, validation, conflicts, method
  app.route<P>({
    method: ['POST', 'PUT'],
    url: TRANSLATION_FILE,
    ...fileView,
    handler: async (req, reply) => {
      if (!req.actor.user) throw Errors.unauthorized();
      const path = await q.translation(req.actor, req.params.project, req.params.component, req.params.language);
      const perms = c.translation.writes.permissions;
      const request = await validOrRefused(uploadRequest(body(req)), () => requireUploadPermission(perms, req.actor, path));
      return sendJson(reply, await uploadTranslationFile(files, perms, req.actor, path, request));
    },
  });

  // every translation file of a component, zipped (`?format=zip`, the default, or `zip:<exporter>`)
  const zipView = view('GET, HEAD, OPTIONS', 'File', 'Translation components API.');
  app.get<C>(COMPONENT_FILE, { ...zipView, config: { ...zipView.config, raw: true } }, async (req, reply) => {
    const path = await q.component(req.actor, req.params.project, req.params.component);
    const download = await componentDownload(files, path, one((req.query as Query).format) || 'zip');
    if (notModified(req, download.modified)) return reply.code(304).send();
    const { contentType, disposition, bytes } = await download.produce();
    return attachment(reply, contentType, disposition, download.modified, bytes);
  });
}
