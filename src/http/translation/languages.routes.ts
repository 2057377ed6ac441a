// Languages (reference §3.2, §3.3, §6): the list and one language; administrators see every language,
// others those that have a translation (Language.objects.have_translation()).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { LanguageRow } from '../../db/schema.ts';
import type { Actor } from '../../domain/access/actor.ts';
import { LanguagesService, type LanguageInput } from '../../domain/translation/languages/languages.service.ts';
import { Errors } from '../../lib/errors.ts';
import { ALLOW_DETAIL_RW, ALLOW_LIST_RO, ALLOW_LIST_RW, apiUrl, drfHeaders, drfView, envelope, pageOf } from './drf.ts';
import { statisticsBody, sumCounts, sumSelect } from '../../domain/translation/stats/stats.ts';
import { cached } from './common.ts';

const CONFIG = { api: 'translation' as const, auth: 'optional' as const };

export function languagesRoutes(app: FastifyInstance, c: Container): void {
  const k = c.db.kysely;
  const languages = new LanguagesService(c.db);
  const visible = (actor: Actor) => {
    let q = k.selectFrom('languages');
    if (!actor.isAdmin) {
      q = q.where('languages.id', 'in', (eb) =>
        eb.selectFrom('translations').select('translations.language_id').where(c.translation.queries.componentVisible(actor, 'translations.component_id')),
      );
    }
    return q;
  };

  async function entities(req: FastifyRequest, rows: LanguageRow[]) {
    if (!rows.length) return [];
    const ids = rows.map((r) => r.id);
    const plurals = await k.selectFrom('language_plurals').selectAll().where('language_id', 'in', ids).where('source', '=', 0).execute();
    const aliases = await k.selectFrom('language_aliases').selectAll().where('code', 'in', rows.map((r) => r.code)).orderBy('alias').execute();
    return rows.map((l) => {
      const p = plurals.find((x) => x.language_id === l.id);
      return {
        id: l.id,
        code: l.code,
        name: l.name,
        plural: p ? { id: p.id, source: p.source, number: p.number, formula: p.formula, type: p.type } : null,
        aliases: aliases.filter((a) => a.code === l.code).map((a) => a.alias),
        direction: l.direction,
        population: l.population,
        web_url: `${c.config.externalUrl}/languages/${encodeURIComponent(l.code)}/`,
        url: apiUrl(req, `/api/languages/${encodeURIComponent(l.code)}/`),
        statistics_url: apiUrl(req, `/api/languages/${encodeURIComponent(l.code)}/statistics/`),
      };
    });
  }

  app.get('/api/languages/', { config: CONFIG, onRequest: drfHeaders(ALLOW_LIST_RW) }, async (req) => {
    const { n } = await visible(req.actor).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const total = Number(n);
    const page = pageOf(req, total);
    const rows = await visible(req.actor).selectAll().orderBy('id').limit(page.size).offset(page.offset).execute();
    return envelope(req, total, page, await entities(req, rows));
  });

  const find = async (req: FastifyRequest<{ Params: { code: string } }>) => {
    const row = await visible(req.actor).selectAll().where('code', '=', req.params.code).executeTakeFirst();
    if (!row) throw Errors.notFound();
    return row;
  };
  const body = (req: FastifyRequest) => (req.body && typeof req.body === 'object' ? (req.body as LanguageInput) : {});

  app.get<{ Params: { code: string } }>('/api/languages/:code/', { config: CONFIG, onRequest: drfHeaders(ALLOW_DETAIL_RW) }, async (req) =>
    (await entities(req, [await find(req)]))[0],
  );

  app.get<{ Params: { code: string } }>('/api/languages/:code/statistics/', { config: { ...CONFIG, view: drfView('Statistics') }, onRequest: drfHeaders(ALLOW_LIST_RO) }, async (req, reply) =>
    cached(app, req, reply, async () => {
      const language = await find(req);
      const row = await k
        .selectFrom('translations')
        .select(sumSelect())
        .where('translations.language_id', '=', language.id)
        .where(c.translation.queries.componentVisible(req.actor, 'translations.component_id'))
        .executeTakeFirstOrThrow();
      return { ...statisticsBody(sumCounts([row])), name: language.name, url: `${c.config.externalUrl}/languages/${encodeURIComponent(language.code)}/` };
    }),
  );

  app.post('/api/languages/', { config: CONFIG, onRequest: drfHeaders(ALLOW_LIST_RW) }, async (req, reply) => {
    const row = await languages.create(req.actor, body(req));
    const [entity] = await entities(req, [row]);
    return reply.code(201).header('location', entity.url).send(entity);
  });

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route<{ Params: { code: string } }>({
      method,
      url: '/api/languages/:code/',
      config: CONFIG,
      onRequest: drfHeaders(ALLOW_DETAIL_RW),
      handler: async (req) => {
        if (!req.actor.user) throw Errors.unauthorized(); // IsAuthenticatedOrReadOnly comes before the lookup
        const row = await languages.update(req.actor, await find(req), body(req), method === 'PATCH');
        return (await entities(req, [row]))[0];
      },
    });
  }

  app.delete<{ Params: { code: string } }>('/api/languages/:code/', { config: CONFIG, onRequest: drfHeaders(ALLOW_DETAIL_RW) }, async (req, reply) => {
    if (!req.actor.user) throw Errors.unauthorized();
    await languages.delete(req.actor, await find(req));
    return reply.code(204).send();
  });
}
