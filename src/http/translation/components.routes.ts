// Components (reference §1.2, §3.5): the list, one component (read, update, delete) and its
// translations, statistics (one entry per translation, paginated), changes, lock and repository.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { ComponentRow, TranslationProjectRow } from '../../db/schema.ts';
import { body, cached, changesList, view, wireFor } from './common.ts';
import { ALLOW_DETAIL_RW, ALLOW_LIST_RO, ALLOW_LIST_RW, envelope, LARGE_PAGE, pageOf } from './drf.ts';
import { repositoryRoutesFor } from './repository.ts';
import { sendJson } from './serializers.ts';

type P = { Params: { project: string; component: string } };

export function componentsRoutes(app: FastifyInstance, c: Container): void {
  const { queries: q, reads, related } = c.translation;

  const entity = async (req: FastifyRequest, project: TranslationProjectRow, row: ComponentRow) =>
    wireFor(c, req, await related.load({ languages: [row.source_language_id, project.source_language_id] })).component(project, row);
  const one = async (req: FastifyRequest, reply: FastifyReply, project: TranslationProjectRow, row: ComponentRow) =>
    sendJson(reply, await entity(req, project, row));

  app.get('/api/components/', view(ALLOW_LIST_RO, 'Component List', 'Translation components API.'), async (req, reply) =>
    cached(app, req, reply, async () => {
      const { total, page, rows, related } = await reads.components(req.actor, (n) => pageOf(req, n));
      const wire = wireFor(c, req, related);
      return envelope(
        req,
        total,
        page,
        rows.map((r) => wire.component(wire.projectRow(r.project_id), r)),
      );
    }),
  );

  const detail = view(ALLOW_DETAIL_RW, 'Component Instance', 'Translation components API.');
  app.get<P>('/api/components/:project/:component/', detail, async (req, reply) =>
    cached(app, req, reply, async () => {
      const { project, component } = await q.component(req.actor, req.params.project, req.params.component);
      return entity(req, project, component);
    }),
  );
  for (const method of ['PUT', 'PATCH'] as const) {
    app.route<P>({
      method,
      url: '/api/components/:project/:component/',
      ...detail,
      handler: async (req, reply) => {
        const { project, component } = await q.component(req.actor, req.params.project, req.params.component);
        return one(req, reply, project, await c.translation.components.update(req.actor, project, component, body(req), method === 'PATCH'));
      },
    });
  }
  app.delete<P>('/api/components/:project/:component/', detail, async (req, reply) => {
    const { project, component } = await q.component(req.actor, req.params.project, req.params.component);
    await c.translation.components.delete(req.actor, project, component);
    return reply.code(204).send();
  });

  app.get<P>('/api/components/:project/:component/translations/', view(ALLOW_LIST_RW, 'Translations', 'Translation components API.'), async (req, reply) =>
    cached(app, req, reply, async () => {
      const path = await q.component(req.actor, req.params.project, req.params.component);
      const { total, page, rows, related } = await reads.componentTranslations(path, (n) => pageOf(req, n));
      const wire = wireFor(c, req, related);
      return envelope(
        req,
        total,
        page,
        rows.map((t) => wire.translation(path.project, path.component, t, false)),
      );
    }),
  );

  app.get<P>('/api/components/:project/:component/statistics/', view(ALLOW_LIST_RO, 'Statistics', 'Translation components API.'), async (req, reply) =>
    cached(app, req, reply, async () => {
      const path = await q.component(req.actor, req.params.project, req.params.component);
      const { total, page, rows, related } = await reads.componentTranslations(path, (n) => pageOf(req, n, LARGE_PAGE.max, LARGE_PAGE.size));
      const wire = wireFor(c, req, related);
      return envelope(
        req,
        total,
        page,
        rows.map((t) => wire.translationStatistics(path.project, path.component, t)),
      );
    }),
  );

  app.get<P>('/api/components/:project/:component/changes/', view(ALLOW_LIST_RO, 'Changes', 'Translation components API.'), async (req, reply) => {
    const { component } = await q.component(req.actor, req.params.project, req.params.component);
    return changesList(c, req, reply, { component });
  });

  repositoryRoutesFor(app, c, 'component');
}
