// Translation projects (reference §1.2, §3.4): the list, one project and its sub-paths —
// components (list, create), statistics, changes, languages (a plain list), repository.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { TranslationProjectRow } from '../../db/schema.ts';
import { statisticsBody } from '../../domain/translation/stats/stats.ts';
import { body, cached, changesList, COMPONENT_ACTIONS, PROJECT_ACTIONS, view, wireFor } from './common.ts';
import { ALLOW_DETAIL_RW, ALLOW_LIST_RO, ALLOW_LIST_RW, envelope, pageOf } from './drf.ts';
import { repositoryRoutesFor } from './repository.ts';
import { sendJson } from './serializers.ts';

type P = { Params: { project: string } };
const enc = encodeURIComponent;

export function translationProjectsRoutes(app: FastifyInstance, c: Container): void {
  const { queries: q, reads, related } = c.translation;

  const entity = async (req: FastifyRequest, row: TranslationProjectRow) =>
    wireFor(c, req, await related.load({ languages: [row.source_language_id] })).project(row);
  const one = async (req: FastifyRequest, reply: FastifyReply, row: TranslationProjectRow, status = 200) => sendJson(reply, await entity(req, row), status);

  app.get('/api/projects/', view(ALLOW_LIST_RW, 'Project List', 'Translation projects API.', PROJECT_ACTIONS), async (req, reply) =>
    cached(app, req, reply, async () => {
      const { total, page, rows, related } = await reads.projects(req.actor, (n) => pageOf(req, n));
      const wire = wireFor(c, req, related);
      return envelope(
        req,
        total,
        page,
        rows.map((r) => wire.project(r)),
      );
    }),
  );

  app.post('/api/projects/', view(ALLOW_LIST_RW, 'Project List', 'Translation projects API.', PROJECT_ACTIONS), async (req, reply) => {
    const row = await c.translation.projects.create(req.actor, body(req));
    reply.header('location', `${req.protocol}://${req.host}/api/projects/${enc(row.slug)}/`);
    return one(req, reply, row, 201);
  });

  const detail = view(ALLOW_DETAIL_RW, 'Project Instance', 'Translation projects API.');
  app.get<P>('/api/projects/:project/', detail, async (req, reply) =>
    cached(app, req, reply, async () => entity(req, await q.project(req.actor, req.params.project))),
  );
  for (const method of ['PUT', 'PATCH'] as const) {
    app.route<P>({
      method,
      url: '/api/projects/:project/',
      ...detail,
      handler: async (req, reply) => {
        const project = await q.project(req.actor, req.params.project);
        return one(req, reply, await c.translation.projects.update(req.actor, project, body(req), method === 'PATCH'));
      },
    });
  }
  app.delete<P>('/api/projects/:project/', detail, async (req, reply) => {
    await c.translation.projects.delete(req.actor, await q.project(req.actor, req.params.project));
    return reply.code(204).send();
  });

  // components of the project
  const components = view(ALLOW_LIST_RW, 'Components', 'Translation projects API.', COMPONENT_ACTIONS);
  app.get<P>('/api/projects/:project/components/', components, async (req, reply) =>
    cached(app, req, reply, async () => {
      const project = await q.project(req.actor, req.params.project);
      const { total, page, rows, related } = await reads.projectComponents(req.actor, project, (n) => pageOf(req, n));
      const wire = wireFor(c, req, related);
      return envelope(
        req,
        total,
        page,
        rows.map((r) => wire.component(project, r, false)),
      );
    }),
  );
  app.post<P>('/api/projects/:project/components/', components, async (req, reply) => {
    const project = await q.project(req.actor, req.params.project);
    const { component } = await c.translation.components.create(req.actor, project, body(req));
    const wire = wireFor(c, req, await related.load({ languages: [component.source_language_id, project.source_language_id] }));
    reply.header('location', `${req.protocol}://${req.host}/api/components/${enc(project.slug)}/${enc(component.slug)}/`);
    return sendJson(reply, wire.component(project, component), 201);
  });

  app.get<P>('/api/projects/:project/statistics/', view(ALLOW_LIST_RO, 'Statistics', 'Translation projects API.'), async (req, reply) =>
    cached(app, req, reply, async () => {
      const project = await q.project(req.actor, req.params.project);
      const counts = await reads.projectStatistics(req.actor, project);
      return { ...statisticsBody(counts), name: project.name, url: `${c.config.externalUrl}/projects/${enc(project.slug)}/` };
    }),
  );

  app.get<P>('/api/projects/:project/languages/', view(ALLOW_LIST_RO, 'Languages', 'Translation projects API.'), async (req, reply) =>
    cached(app, req, reply, async () => {
      const project = await q.project(req.actor, req.params.project);
      const rows = await reads.projectLanguages(req.actor, project);
      const site = c.config.externalUrl;
      return rows.map((r) => ({
        ...statisticsBody(r),
        code: r.code,
        name: r.name,
        url: `${site}/projects/${enc(project.slug)}/-/${enc(r.code)}/`,
        translate_url: `${site}/translate/${enc(project.slug)}/-/${enc(r.code)}/`,
      }));
    }),
  );

  app.get<P>('/api/projects/:project/changes/', view(ALLOW_LIST_RO, 'Changes', 'Translation projects API.'), async (req, reply) => {
    const project = await q.project(req.actor, req.params.project);
    return changesList(c, req, reply, { project });
  });

  repositoryRoutesFor(app, c, 'project');
}
