// Components (reference §1.2, §3.5): the list, one component (read, update, delete) and its
// translations, statistics (one entry per translation, paginated), changes, lock and repository.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { ComponentRow, TranslationProjectRow } from '../../db/schema.ts';
import { body, cached, changesList, view } from './common.ts';
import { ALLOW_DETAIL_RW, ALLOW_LIST_RO, envelope, pageOf } from './drf.ts';
import { repositoryRoutesFor } from './repository.ts';
import { sendJson, Wire } from './serializers.ts';

type P = { Params: { project: string; component: string } };
/** component statistics use Weblate's LargePagination (the 4.x sizes: 100, at most 10,000) */
export const LARGE_PAGE = { size: 100, max: 10_000 };

export function componentsRoutes(app: FastifyInstance, c: Container): void {
  const k = c.db.kysely;
  const q = c.translation.queries;

  const entity = async (req: FastifyRequest, project: TranslationProjectRow, row: ComponentRow) => {
    const wire = new Wire(req, c);
    await wire.loadLanguages([row.source_language_id, project.source_language_id]);
    return wire.component(project, row);
  };
  const one = async (req: FastifyRequest, reply: FastifyReply, project: TranslationProjectRow, row: ComponentRow) => sendJson(reply, await entity(req, project, row));

  app.get('/api/components/', view(ALLOW_LIST_RO, 'Component List', 'Translation components API.'), async (req, reply) =>
    cached(app, req, reply, async () => {
      const s = k.selectFrom('components').where(q.componentVisible(req.actor, 'components.id'));
      const { n } = await s.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const page = pageOf(req, Number(n));
      const rows = await s.selectAll().orderBy('id').limit(page.size).offset(page.offset).execute();
      const wire = new Wire(req, c);
      await wire.loadProjects(rows.map((r) => r.project_id));
      await wire.loadLanguages(rows.map((r) => r.source_language_id));
      return envelope(req, Number(n), page, rows.map((r) => wire.component(wire.projectRow(r.project_id), r)));
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

  app.get<P>('/api/components/:project/:component/translations/', view(ALLOW_LIST_RO, 'Translations', 'Translation components API.'), async (req, reply) =>
    cached(app, req, reply, async () => {
      const { project, component } = await q.component(req.actor, req.params.project, req.params.component);
      const s = k.selectFrom('translations').where('component_id', '=', component.id);
      const { n } = await s.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const page = pageOf(req, Number(n));
      const rows = await s.selectAll().orderBy('id').limit(page.size).offset(page.offset).execute();
      const wire = new Wire(req, c);
      await wire.loadLanguages([...rows.map((r) => r.language_id), component.source_language_id, project.source_language_id]);
      await wire.loadUsers(rows.map((r) => r.last_author_id));
      return envelope(req, Number(n), page, rows.map((t) => wire.translation(project, component, t, false)));
    }),
  );

  app.get<P>('/api/components/:project/:component/statistics/', view(ALLOW_LIST_RO, 'Statistics', 'Translation components API.'), async (req, reply) =>
    cached(app, req, reply, async () => {
      const { project, component } = await q.component(req.actor, req.params.project, req.params.component);
      const s = k.selectFrom('translations').where('component_id', '=', component.id);
      const { n } = await s.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const page = pageOf(req, Number(n), LARGE_PAGE.max, LARGE_PAGE.size);
      const rows = await s.selectAll().orderBy('id').limit(page.size).offset(page.offset).execute();
      const wire = new Wire(req, c);
      await wire.loadLanguages(rows.map((r) => r.language_id));
      await wire.loadUsers(rows.map((r) => r.last_author_id));
      return envelope(req, Number(n), page, rows.map((t) => wire.translationStatistics(project, component, t)));
    }),
  );

  app.get<P>('/api/components/:project/:component/changes/', view(ALLOW_LIST_RO, 'Changes', 'Translation components API.'), async (req, reply) => {
    const { component } = await q.component(req.actor, req.params.project, req.params.component);
    return changesList(c, req, reply, k.selectFrom('translation_changes').where('translation_changes.component_id', '=', component.id));
  });

  repositoryRoutesFor(app, c, 'component');
}
