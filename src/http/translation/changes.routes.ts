// Change records (reference §3.8, §7.1): every change the caller may see, newest first, and one change.
import type { FastifyInstance } from 'fastify';
import { sql, type SqlBool } from 'kysely';
import type { Container } from '../../container.ts';
import { isInt32 } from '../../db/sql.ts';
import { Errors } from '../../lib/errors.ts';
import { changesList, view } from './common.ts';
import { ALLOW_LIST_RO } from './drf.ts';
import { changePaths, sendJson, Wire } from './serializers.ts';

export function changesRoutes(app: FastifyInstance, c: Container): void {
  const k = c.db.kysely;
  const q = c.translation.queries;
  const visible = (actor: Parameters<typeof q.projectVisible>[0]) =>
    k
      .selectFrom('translation_changes')
      .where((eb) =>
        eb.and([
          // changes of removed projects and components stay visible to administrators only
          actor.isAdmin ? sql<SqlBool>`1 = 1` : eb('translation_changes.project_id', 'is not', null),
          eb.or([eb('translation_changes.project_id', 'is', null), q.projectVisible(actor, 'translation_changes.project_id')]),
          eb.or([eb('translation_changes.component_id', 'is', null), q.componentVisible(actor, 'translation_changes.component_id')]),
        ]),
      );

  app.get('/api/changes/', view(ALLOW_LIST_RO, 'Change List', 'Changes API.'), async (req, reply) => changesList(c, req, reply, visible(req.actor)));

  app.get<{ Params: { id: string } }>('/api/changes/:id/', view(ALLOW_LIST_RO, 'Change Instance', 'Changes API.'), async (req, reply) => {
    const id = /^\d+$/.test(req.params.id) ? Number(req.params.id) : NaN;
    if (!isInt32(id)) throw Errors.notFound();
    const row = await visible(req.actor).selectAll().where('translation_changes.id', '=', id).executeTakeFirst();
    if (!row) throw Errors.notFound();
    const wire = new Wire(req, c);
    await wire.loadUsers([row.user_id, row.author_id]);
    return sendJson(reply, wire.change(row, await changePaths(c, [row])));
  });
}
