// Units (reference §1.2, §3.7, §7.2): every unit the caller may see, searched with `q`, and one unit.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sql, type CompiledQuery, type Expression, type SqlBool } from 'kysely';
import type { Container } from '../../container.ts';
import { compileQuery, parseQuery, QueryParseError, usesRegex } from '../../domain/translation/search/query.ts';
import { InvalidPattern, ReadsBusy, ReadTimeout } from '../../db/limited-reads.ts';
import { Errors } from '../../lib/errors.ts';
import { cached, view } from './common.ts';
import { ALLOW_DETAIL_RW, ALLOW_LIST_RO, envelope, pageOf } from './drf.ts';
import { LARGE_PAGE } from './components.routes.ts';
import { sendJson, Wire } from './serializers.ts';

export interface UnitsSearch {
  where: Expression<SqlBool>;
  /** it runs a user's regular expression: its queries go through searchReads */
  regex: boolean;
}

/** The `q` condition of a units request (null without `q`); 400 {"q": …} when it does not parse. */
export function unitsQuery(c: Container, req: FastifyRequest): UnitsSearch | null {
  const raw = (req.query as Record<string, string | string[] | undefined>).q;
  const q = Array.isArray(raw) ? raw[raw.length - 1] : raw;
  if (q === undefined || q.trim() === '') return null;
  try {
    const node = parseQuery(q);
    return { where: compileQuery(node, c.db.dialect), regex: usesRegex(node) };
  } catch (e) {
    if (e instanceof QueryParseError) throw Errors.raw(400, { q: `Could not parse query string: ${e.message}` });
    throw e;
  }
}

/** Runs a query: `read(k.selectFrom(…)…)` gives its rows. */
export type UnitsRead = <R>(query: { compile(): CompiledQuery<R>; execute(): Promise<R[]> }) => Promise<R[]>;

/**
 * Runs the queries of a units search. With a user's regular expression they run under the time limit
 * (HEARTH_SEARCH_TIMEOUT_MS, db/limited-reads.ts): past it 400 {"q": "Search took too long…"}; when
 * too many such searches are running 503 {"detail": …} with Retry-After; a pattern PostgreSQL refuses
 * 400 {"q": "Could not parse query string: Invalid regular expression: …"}.
 */
export async function searchReads<T>(c: Container, search: UnitsSearch | null, work: (read: UnitsRead) => Promise<T>): Promise<T> {
  if (!search?.regex) return work((query) => query.execute());
  const ms = c.config.searchTimeoutMs;
  try {
    return await c.db.limited.run(ms, (read) => work((query) => read(query.compile())));
  } catch (e) {
    if (e instanceof ReadTimeout) {
      throw Errors.raw(400, { q: `Search took longer than ${ms / 1000} s and was stopped; use a simpler regular expression or narrow the search.` });
    }
    if (e instanceof ReadsBusy) {
      throw Errors.raw(503, { detail: 'Too many searches with regular expressions are running, try again later.' }, { 'retry-after': String(Math.ceil(ms / 1000)) });
    }
    if (e instanceof InvalidPattern) throw Errors.raw(400, { q: `Could not parse query string: Invalid regular expression: ${e.message.replace(/^invalid regular expression: /, '')}` });
    throw e;
  }
}

export function unitsRoutes(app: FastifyInstance, c: Container): void {
  const k = c.db.kysely;
  const q = c.translation.queries;

  app.get('/api/units/', view(ALLOW_LIST_RO, 'Unit List', 'Units API.'), async (req, reply) =>
    cached(app, req, reply, async () => {
      const search = unitsQuery(c, req);
      const visible = await q.visibleComponentIds(req.actor);
      let s = k.selectFrom('units');
      if (visible) s = s.where('units.component_id', 'in', visible.length ? visible : [0]);
      if (search) s = s.where(search.where);
      // without a query the count is the sum of the translations' counters
      let totals = k.selectFrom('translations').select(sql<number>`coalesce(sum(total), 0)`.as('n'));
      if (visible) totals = totals.where('translations.component_id', 'in', visible.length ? visible : [0]);
      const { n, page, rows } = await searchReads(c, search, async (read) => {
        const [{ n }] = search ? await read(s.select((eb) => eb.fn.countAll<number>().as('n'))) : await read(totals);
        const page = pageOf(req, Number(n), LARGE_PAGE.max, LARGE_PAGE.size);
        return { n, page, rows: await read(s.selectAll().orderBy('id').limit(page.size).offset(page.offset)) };
      });
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
