// Units (reference §1.2, §3.7, §7.2): every unit the caller may see, searched with `q`, and one unit.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';
import { cached, searching, searchParam, view, wireFor } from './common.ts';
import { ALLOW_DETAIL_RW, ALLOW_LIST_RO, envelope, LARGE_PAGE, pageOf } from './drf.ts';

export function unitsRoutes(app: FastifyInstance, c: Container): void {
  const { queries: q, reads } = c.translation;

  app.get('/api/units/', view(ALLOW_LIST_RO, 'Unit List', 'Units API.'), async (req, reply) =>
    cached(app, req, reply, async () => {
      const { total, page, rows, links } = await searching(c, () =>
        reads.units(req.actor, searchParam(req), (n) => pageOf(req, n, LARGE_PAGE.max, LARGE_PAGE.size)),
      );
      const wire = wireFor(c, req);
      return envelope(
        req,
        total,
        page,
        rows.map((u) => {
          const p = links.components.get(u.component_id)!;
          return wire.unit(p.project, p.component, links.languageCodes.get(u.language_id)!, u);
        }),
      );
    }),
  );

  app.get<{ Params: { id: string } }>('/api/units/:id/', view(ALLOW_DETAIL_RW, 'Unit Instance', 'Units API.'), async (req, reply) =>
    cached(app, req, reply, async () => {
      const { unit, project, component, languageCode } = await q.unit(req.actor, /^\d+$/.test(req.params.id) ? Number(req.params.id) : NaN);
      return wireFor(c, req).unit(project, component, languageCode, unit);
    }),
  );
}
