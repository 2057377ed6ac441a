// Translations (reference §1.2, §1.5, §1.6, §3.6): the list, one translation and its statistics,
// changes and units (with the `q` search); the file is files.routes.ts'.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';
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

  // `file/` (download and upload) is in files.routes.ts

  repositoryRoutesFor(app, c, 'translation');
}
