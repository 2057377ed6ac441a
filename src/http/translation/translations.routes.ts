// Translations (reference §1.2, §1.5, §1.6, §3.6): the list, one translation and its statistics,
// changes, units (with the `q` search) and the file as stored in the repository.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';
import { getFormat } from '../../formats/registry.ts';
import { Errors } from '../../lib/errors.ts';
import { cached, changesList, searching, searchParam, view, wireFor } from './common.ts';
import { ALLOW_LIST_RO, envelope, pageOf } from './drf.ts';
import { repositoryRoutesFor } from './repository.ts';

type P = { Params: { project: string; component: string; language: string } };
const BASE = '/api/translations/:project/:component/:language/';

export function translationsRoutes(app: FastifyInstance, c: Container): void {
  const { queries: q, reads } = c.translation;

  app.get('/api/translations/', view(ALLOW_LIST_RO, 'Translation List', 'Translation components API.'), async (req, reply) =>
    cached(app, req, reply, async () => {
      const { total, page, rows, related } = await reads.translations(req.actor, (n) => pageOf(req, n));
      const wire = wireFor(c, req, related);
      return envelope(
        req,
        total,
        page,
        rows.map((t) => {
          const component = wire.componentRow(t.component_id);
          return wire.translation(wire.projectRow(component.project_id), component, t);
        }),
      );
    }),
  );

  app.get<P>(BASE, view('GET, DELETE, HEAD, OPTIONS', 'Translation Instance', 'Translation components API.'), async (req, reply) =>
    cached(app, req, reply, async () => {
      const path = await q.translation(req.actor, req.params.project, req.params.component, req.params.language);
      return wireFor(c, req, await reads.translationRelated(path)).translation(path.project, path.component, path.translation);
    }),
  );

  app.get<P>(`${BASE}statistics/`, view(ALLOW_LIST_RO, 'Statistics', 'Translation components API.'), async (req, reply) =>
    cached(app, req, reply, async () => {
      const path = await q.translation(req.actor, req.params.project, req.params.component, req.params.language);
      return wireFor(c, req, await reads.translationStatisticsRelated(path.translation)).translationStatistics(path.project, path.component, path.translation);
    }),
  );

  app.get<P>(`${BASE}changes/`, view(ALLOW_LIST_RO, 'Changes', 'Translation components API.'), async (req, reply) => {
    const { translation } = await q.translation(req.actor, req.params.project, req.params.component, req.params.language);
    return changesList(c, req, reply, { translation });
  });

  app.get<P>(`${BASE}units/`, view('GET, POST, HEAD, OPTIONS', 'Units', 'Translation components API.'), async (req, reply) =>
    cached(app, req, reply, async () => {
      const { project, component, translation, languageCode } = await q.translation(req.actor, req.params.project, req.params.component, req.params.language);
      const { total, page, rows } = await searching(c, () => reads.translationUnits(translation, searchParam(req), (n) => pageOf(req, n)));
      const wire = wireFor(c, req);
      return envelope(
        req,
        total,
        page,
        rows.map((u) => wire.unit(project, component, languageCode, u)),
      );
    }),
  );

  // a raw download: the browsable API leaves it alone and `format` names an exporter here
  const file = view('GET, POST, PUT, HEAD, OPTIONS', 'File', 'Translation components API.');
  app.get<P>(`${BASE}file/`, { ...file, config: { ...file.config, raw: true } }, async (req, reply) => {
    const { project, component, translation, languageCode } = await q.translation(req.actor, req.params.project, req.params.component, req.params.language);
    const query = req.query as Record<string, string | undefined>;
    const format = getFormat(component.file_format);
    if (query.format && query.format !== component.file_format) throw Errors.raw(400, { format: `Conversion to ${query.format} is not supported` });
    if (query.q !== undefined && !query.format) throw Errors.raw(400, { q: 'Query string is ignored without format' });
    if (!translation.filename || !translation.revision) throw Errors.notFound();
    const bytes = await c.translation.vcs.blob(c.translation.vcs.mirrorDir(component.id), translation.revision);
    const commit = component.head ? await c.translation.vcs.mirror(component.id).commit(component.head) : null;
    const modified = new Date((commit?.committer.time ?? Math.floor(Date.parse(translation.created_at) / 1000)) * 1000);
    const since = req.headers['if-modified-since'];
    if (since && !Number.isNaN(Date.parse(since)) && Math.floor(modified.getTime() / 1000) <= Math.floor(Date.parse(since) / 1000))
      return reply.code(304).send();
    const ext = translation.filename.includes('.') ? translation.filename.slice(translation.filename.lastIndexOf('.')) : '';
    return reply
      .header('content-type', format?.mimetype ?? 'application/octet-stream')
      .header('content-disposition', `attachment; filename=${project.slug}-${component.slug}-${languageCode}${ext}`)
      .header('last-modified', modified.toUTCString())
      .send(bytes);
  });

  repositoryRoutesFor(app, c, 'translation');
}
