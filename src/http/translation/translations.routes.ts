// Translations (reference §1.2, §1.5, §1.6, §3.6): the list, one translation and its statistics,
// changes, units (with the `q` search) and the file as stored in the repository.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';
import { getFormat } from '../../formats/registry.ts';
import { Errors } from '../../lib/errors.ts';
import { cached, changesList, view } from './common.ts';
import { ALLOW_LIST_RO, envelope, pageOf } from './drf.ts';
import { repositoryRoutesFor } from './repository.ts';
import { sendJson, Wire } from './serializers.ts';
import { searchReads, unitsQuery } from './units.routes.ts';

type P = { Params: { project: string; component: string; language: string } };
const BASE = '/api/translations/:project/:component/:language/';

export function translationsRoutes(app: FastifyInstance, c: Container): void {
  const k = c.db.kysely;
  const q = c.translation.queries;

  app.get('/api/translations/', view(ALLOW_LIST_RO, 'Translation List', 'Translation components API.'), async (req, reply) =>
    cached(app, req, reply, async () => {
      const s = k.selectFrom('translations').where(q.componentVisible(req.actor, 'translations.component_id'));
      const { n } = await s.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const page = pageOf(req, Number(n));
      const rows = await s.selectAll().orderBy('id').limit(page.size).offset(page.offset).execute();
      const components = rows.length ? await k.selectFrom('components').selectAll().where('id', 'in', [...new Set(rows.map((r) => r.component_id))]).execute() : [];
      const wire = new Wire(req, c);
      await wire.loadProjects(components.map((r) => r.project_id));
      await wire.loadLanguages([...rows.map((r) => r.language_id), ...components.map((r) => r.source_language_id)]);
      await wire.loadUsers(rows.map((r) => r.last_author_id));
      const byId = new Map(components.map((r) => [r.id, r]));
      return envelope(req, Number(n), page, rows.map((t) => {
        const component = byId.get(t.component_id)!;
        return wire.translation(wire.projectRow(component.project_id), component, t);
      }));
    }),
  );

  app.get<P>(BASE, view('GET, DELETE, HEAD, OPTIONS', 'Translation Instance', 'Translation components API.'), async (req, reply) =>
    cached(app, req, reply, async () => {
      const { project, component, translation } = await q.translation(req.actor, req.params.project, req.params.component, req.params.language);
      const wire = new Wire(req, c);
      await wire.loadLanguages([translation.language_id, component.source_language_id, project.source_language_id]);
      await wire.loadUsers([translation.last_author_id]);
      return wire.translation(project, component, translation);
    }),
  );

  app.get<P>(`${BASE}statistics/`, view(ALLOW_LIST_RO, 'Statistics', 'Translation components API.'), async (req, reply) =>
    cached(app, req, reply, async () => {
      const { project, component, translation } = await q.translation(req.actor, req.params.project, req.params.component, req.params.language);
      const wire = new Wire(req, c);
      await wire.loadLanguages([translation.language_id]);
      await wire.loadUsers([translation.last_author_id]);
      return wire.translationStatistics(project, component, translation);
    }),
  );

  app.get<P>(`${BASE}changes/`, view(ALLOW_LIST_RO, 'Changes', 'Translation components API.'), async (req, reply) => {
    const { translation } = await q.translation(req.actor, req.params.project, req.params.component, req.params.language);
    return changesList(c, req, reply, k.selectFrom('translation_changes').where('translation_changes.translation_id', '=', translation.id));
  });

  app.get<P>(`${BASE}units/`, view('GET, POST, HEAD, OPTIONS', 'Units', 'Translation components API.'), async (req, reply) =>
    cached(app, req, reply, async () => {
      const { project, component, translation, languageCode } = await q.translation(req.actor, req.params.project, req.params.component, req.params.language);
      const search = unitsQuery(c, req);
      let s = k.selectFrom('units').where('translation_id', '=', translation.id);
      if (search) s = s.where(search.where);
      const { total, page, rows } = await searchReads(c, search, async (read) => {
        const total = search ? Number((await read(s.select((eb) => eb.fn.countAll<number>().as('n'))))[0].n) : translation.total;
        const page = pageOf(req, total);
        return { total, page, rows: await read(s.selectAll().orderBy(search ? 'id' : 'position').limit(page.size).offset(page.offset)) };
      });
      const wire = new Wire(req, c);
      return envelope(req, total, page, rows.map((u) => wire.unit(project, component, languageCode, u)));
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
    if (since && !Number.isNaN(Date.parse(since)) && Math.floor(modified.getTime() / 1000) <= Math.floor(Date.parse(since) / 1000)) return reply.code(304).send();
    const ext = translation.filename.includes('.') ? translation.filename.slice(translation.filename.lastIndexOf('.')) : '';
    return reply
      .header('content-type', format?.mimetype ?? 'application/octet-stream')
      .header('content-disposition', `attachment; filename=${project.slug}-${component.slug}-${languageCode}${ext}`)
      .header('last-modified', modified.toUTCString())
      .send(bytes);
  });

  repositoryRoutesFor(app, c, 'translation');
}
