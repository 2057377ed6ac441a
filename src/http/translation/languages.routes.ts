// Languages (reference §3.2, §3.3, §6): the list and one language; administrators see every language,
// others those that have a translation (Language.objects.have_translation()).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { LanguageRow } from '../../db/schema.ts';
import type { LanguageInput } from '../../domain/translation/languages/languages.service.ts';
import { statisticsBody } from '../../domain/translation/stats/stats.ts';
import { Errors } from '../../lib/errors.ts';
import { cached, wireFor } from './common.ts';
import { ALLOW_DETAIL_RW, ALLOW_LIST_RO, ALLOW_LIST_RW, drfHeaders, drfView, envelope, pageOf } from './drf.ts';

const CONFIG = { api: 'translation' as const, auth: 'optional' as const };

export function languagesRoutes(app: FastifyInstance, c: Container): void {
  const { languages, queries, reads } = c.translation;

  const entity = async (req: FastifyRequest, row: LanguageRow) => {
    const related = await reads.languageRelated(row);
    return wireFor(c, req, related).languageEntity(related.languages.get(row.id)!);
  };

  app.get('/api/languages/', { config: CONFIG, onRequest: drfHeaders(ALLOW_LIST_RW) }, async (req) => {
    const { total, page, rows, related } = await reads.languages(req.actor, (n) => pageOf(req, n));
    const wire = wireFor(c, req, related);
    return envelope(
      req,
      total,
      page,
      rows.map((r) => wire.languageEntity(related.languages.get(r.id)!)),
    );
  });

  const find = (req: FastifyRequest<{ Params: { code: string } }>) => queries.language(req.actor, req.params.code);
  const body = (req: FastifyRequest) => (req.body && typeof req.body === 'object' ? (req.body as LanguageInput) : {});

  app.get<{ Params: { code: string } }>('/api/languages/:code/', { config: CONFIG, onRequest: drfHeaders(ALLOW_DETAIL_RW) }, async (req) =>
    entity(req, await find(req)),
  );

  app.get<{ Params: { code: string } }>(
    '/api/languages/:code/statistics/',
    { config: { ...CONFIG, view: drfView('Statistics') }, onRequest: drfHeaders(ALLOW_LIST_RO) },
    async (req, reply) =>
      cached(app, req, reply, async () => {
        const language = await find(req);
        const counts = await reads.languageStatistics(req.actor, language);
        return { ...statisticsBody(counts), name: language.name, url: `${c.config.externalUrl}/languages/${encodeURIComponent(language.code)}/` };
      }),
  );

  app.post('/api/languages/', { config: CONFIG, onRequest: drfHeaders(ALLOW_LIST_RW) }, async (req, reply) => {
    const row = await languages.create(req.actor, body(req));
    const created = await entity(req, row);
    return reply.code(201).header('location', created.url).send(created);
  });

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route<{ Params: { code: string } }>({
      method,
      url: '/api/languages/:code/',
      config: CONFIG,
      onRequest: drfHeaders(ALLOW_DETAIL_RW),
      handler: async (req) => {
        if (!req.actor.user) throw Errors.unauthorized(); // IsAuthenticatedOrReadOnly comes before the lookup
        return entity(req, await languages.update(req.actor, await find(req), body(req), method === 'PATCH'));
      },
    });
  }

  app.delete<{ Params: { code: string } }>('/api/languages/:code/', { config: CONFIG, onRequest: drfHeaders(ALLOW_DETAIL_RW) }, async (req, reply) => {
    if (!req.actor.user) throw Errors.unauthorized();
    await languages.delete(req.actor, await find(req));
    return reply.code(204).send();
  });
}
