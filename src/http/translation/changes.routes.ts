// Change records (reference §3.8, §7.1): every change the caller may see, newest first, and one change.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';
import { changesList, view, wireFor } from './common.ts';
import { ALLOW_LIST_RO } from './drf.ts';
import { sendJson } from './serializers.ts';

export function changesRoutes(app: FastifyInstance, c: Container): void {
  const { queries, reads } = c.translation;

  app.get('/api/changes/', view(ALLOW_LIST_RO, 'Change List', 'Changes API.'), async (req, reply) => changesList(c, req, reply, { all: true }));

  app.get<{ Params: { id: string } }>('/api/changes/:id/', view(ALLOW_LIST_RO, 'Change Instance', 'Changes API.'), async (req, reply) => {
    const row = await queries.change(req.actor, /^\d+$/.test(req.params.id) ? Number(req.params.id) : NaN);
    const { related, links } = await reads.changesRelated([row]);
    return sendJson(reply, wireFor(c, req, related).change(row, links));
  });
}
