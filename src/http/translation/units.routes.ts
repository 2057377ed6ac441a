// Units (reference §1.2, §3.7, §7.2): every unit the caller may see, searched with `q`, and one unit.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { Container } from '../../container.ts';
import { compileQuery, parseQuery, QueryParseError } from '../../domain/translation/search/query.ts';
import { Errors } from '../../lib/errors.ts';
import { cached, view } from './common.ts';
import { ALLOW_DETAIL_RW, ALLOW_LIST_RO, envelope, pageOf } from './drf.ts';
import { LARGE_PAGE } from './components.routes.ts';
import { sendJson, Wire } from './serializers.ts';

/** The `q` condition of a units request (null without `q`); 400 {"q": …} when it does not parse. */
export function unitsQuery(c: Container, req: FastifyRequest) {
  const raw = (req.query as Record<string, string | string[] | undefined>).q;
  const q = Array.isArray(raw) ? raw[raw.length - 1] : raw;
  if (q === undefined || q.trim() === '') return null;
  try {
    return compileQuery(parseQuery(q), c.db.dialect);
  } catch (e) {
    if (e instanceof QueryParseError) throw Errors.raw(400, { q: `Could not parse query string: ${e.message}` });
    throw e;
  }
}

export function unitsRoutes(app: FastifyInstance, c: Container): void {
  const k = c.db.kysely;
  const q = c.translation.queries;

  app.get('/api/units/', view(ALLOW_LIST_RO, 'Unit List', 'Units API.'), async (req, reply) =>
    cached(app, req, reply, async () => {
      const where = unitsQuery(c, req);
      const visible = await q.visibleComponentIds(req.actor);
      let s = k.selectFrom('units');
      if (visible) s = s.where('units.component_id', 'in', visible.length ? visible : [0]);
      if (where) s = s.where(where);
      // without a query the count is the sum of the translations' counters
      let totals = k.selectFrom('translations').select(sql<number>`coalesce(sum(total), 0)`.as('n'));
      if (visible) totals = totals.where('translations.component_id', 'in', visible.length ? visible : [0]);
      const { n } = where ? await s.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow() : await totals.executeTakeFirstOrThrow();
      const page = pageOf(req, Number(n), LARGE_PAGE.max, LARGE_PAGE.size);
      const rows = await s.selectAll().orderBy('id').limit(page.size).offset(page.offset).execute();
      const wire = new Wire(req, c);
      const paths = await unitPaths(c, rows.map((r) => ({ component_id: r.component_id, language_id: r.language_id })));
      return envelope(req, Number(n), page, rows.map((u) => {
        const p = paths.get(u.component_id)!;
        return wire.unit(p.project, p.component, p.languages.get(u.language_id)!, u);
      }));
    }),
  );

  app.get<{ Params: { id: string } }>('/api/units/:id/', view(ALLOW_DETAIL_RW, 'Unit Instance', 'Units API.'), async (req, reply) =>
    cached(app, req, reply, async () => {
      const { unit, project, component } = await q.unit(req.actor, /^\d+$/.test(req.params.id) ? Number(req.params.id) : NaN);
      const lang = await k.selectFrom('languages').select('code').where('id', '=', unit.language_id).executeTakeFirstOrThrow();
      return new Wire(req, c).unit(project, component, lang.code, unit);
    }),
  );
}

/** The component, project and language codes a page of units links to. */
async function unitPaths(c: Container, keys: { component_id: number; language_id: number }[]) {
  const k = c.db.kysely;
  const out = new Map<number, { project: import('../../db/schema.ts').TranslationProjectRow; component: import('../../db/schema.ts').ComponentRow; languages: Map<number, string> }>();
  if (!keys.length) return out;
  const components = await k.selectFrom('components').selectAll().where('id', 'in', [...new Set(keys.map((x) => x.component_id))]).execute();
  const projects = await k.selectFrom('translation_projects').selectAll().where('id', 'in', [...new Set(components.map((x) => x.project_id))]).execute();
  const languages = await k.selectFrom('languages').select(['id', 'code']).where('id', 'in', [...new Set(keys.map((x) => x.language_id))]).execute();
  const codes = new Map(languages.map((l) => [l.id, l.code]));
  for (const component of components) out.set(component.id, { component, project: projects.find((p) => p.id === component.project_id)!, languages: codes });
  return out;
}
