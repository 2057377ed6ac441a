// Suggestions and comments (reference §1.2: `/api/units/{id}/suggestions/`, `…/comments/`, `/api/suggestions/…`):
// - GET/POST /api/units/:id/suggestions/ — the unit's suggestions (a plain list, oldest first); POST
//   {"target": "…" | ["…", …]} → 201 with the suggestion (perm suggestion.add);
// - GET/POST /api/units/:id/comments/ — the comments the unit shows (its own and its source string's);
//   POST {"comment", "scope": global (default) | translation, "timestamp"} → 201 with the comment (perm
//   comment.add; `timestamp` needs project.edit, as in Weblate);
// - GET /api/suggestions/ — every suggestion the caller may see (LargePagination, oldest first);
// - GET/DELETE /api/suggestions/:id/ (DELETE: the suggestion's author, or suggestion.delete) and
//   POST /api/suggestions/:id/accept/ (suggestion.accept) → 200 with the unit.
// Unsafe methods check authentication before looking anything up (DRF's IsAuthenticatedOrReadOnly).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { CommentRow, SuggestionRow } from '../../db/schema.ts';
import { targetForms } from '../../domain/translation/units/suggestions.ts';
import { body, view, wireFor } from './common.ts';
import { ALLOW_LIST_RO, envelope, LARGE_PAGE, pageOf } from './drf.ts';
import { sendJson, drfTime, type Wire } from './serializers.ts';

const ALLOW_UNIT_ACTION = 'GET, POST, HEAD, OPTIONS';
const ALLOW_SUGGESTION = 'GET, DELETE, HEAD, OPTIONS';
const ALLOW_ACCEPT = 'POST, OPTIONS';

type P = { Params: { id: string } };
const idOf = (req: FastifyRequest<P>) => (/^\d+$/.test(req.params.id) ? Number(req.params.id) : NaN);

/** The plural forms of a `target` (moved to the domain: the editor's Suggest uses it too). */
export { targetForms };

export function suggestionsRoutes(app: FastifyInstance, c: Container): void {
  const { queries: q, related, writes } = c.translation;
  const s = writes.suggestions;

  const wireWith = async (req: FastifyRequest, users: (number | null)[]) => wireFor(c, req, await related.load({ users }));

  const suggestionEntity = (wire: Wire, r: SuggestionRow) => ({
    id: r.id,
    unit: wire.api(`/api/units/${r.unit_id}/`),
    target: r.target,
    user: wire.userUrl(r.user_id),
    timestamp: drfTime(r.timestamp),
    url: wire.api(`/api/suggestions/${r.id}/`),
  });
  const commentEntity = (wire: Wire, r: CommentRow) => ({
    id: r.id,
    unit: wire.api(`/api/units/${r.unit_id}/`),
    comment: r.comment,
    scope: r.scope,
    resolved: Boolean(r.resolved),
    user: wire.userUrl(r.user_id),
    timestamp: drfTime(r.timestamp),
  });

  // ---- a unit's suggestions ---------------------------------------------------------------------

  const unitAction = view(ALLOW_UNIT_ACTION, 'Suggestions', 'Units API.');
  app.get<P>('/api/units/:id/suggestions/', unitAction, async (req, reply) => {
    const { unit } = await q.unit(req.actor, idOf(req));
    const rows = await s.forUnit(unit.id);
    const wire = await wireWith(
      req,
      rows.map((r) => r.user_id),
    );
    return sendJson(
      reply,
      rows.map((r) => suggestionEntity(wire, r)),
    );
  });

  app.post<P>('/api/units/:id/suggestions/', unitAction, async (req, reply) => {
    const row = await s.suggest(req.actor, idOf(req), body(req).target);
    return sendJson(reply, suggestionEntity(await wireWith(req, [row.user_id]), row), 201);
  });

  // ---- a unit's comments ------------------------------------------------------------------------

  const comments = view(ALLOW_UNIT_ACTION, 'Comments', 'Units API.');
  app.get<P>('/api/units/:id/comments/', comments, async (req, reply) => {
    const { unit } = await q.unit(req.actor, idOf(req));
    const rows = await s.commentsFor(unit);
    const wire = await wireWith(
      req,
      rows.map((r) => r.user_id),
    );
    return sendJson(
      reply,
      rows.map((r) => commentEntity(wire, r)),
    );
  });

  app.post<P>('/api/units/:id/comments/', comments, async (req, reply) => {
    const row = await s.commentAs(req.actor, idOf(req), body(req));
    return sendJson(reply, commentEntity(await wireWith(req, [row.user_id]), row), 201);
  });

  // ---- every suggestion ---------------------------------------------------------------------------

  app.get('/api/suggestions/', view(ALLOW_LIST_RO, 'Suggestion List', 'Suggestions API.'), async (req, reply) => {
    const { total, page, rows } = await s.list(req.actor, (n) => pageOf(req, n, LARGE_PAGE.max, LARGE_PAGE.size));
    const wire = await wireWith(
      req,
      rows.map((r) => r.user_id),
    );
    return sendJson(
      reply,
      envelope(
        req,
        total,
        page,
        rows.map((r) => suggestionEntity(wire, r)),
      ),
    );
  });

  // ---- one suggestion ---------------------------------------------------------------------------

  const one = view(ALLOW_SUGGESTION, 'Suggestion Instance', 'Suggestions API.');
  app.get<P>('/api/suggestions/:id/', one, async (req, reply) => {
    const { suggestion } = await s.find(req.actor, idOf(req));
    return sendJson(reply, suggestionEntity(await wireWith(req, [suggestion.user_id]), suggestion));
  });

  app.delete<P>('/api/suggestions/:id/', one, async (req, reply) => {
    await s.deleteAs(req.actor, idOf(req));
    return reply.code(204).send();
  });

  app.post<P>('/api/suggestions/:id/accept/', view(ALLOW_ACCEPT, 'Accept', 'Suggestions API.'), async (req, reply) => {
    const { unit, project, component, languageCode } = await s.acceptAs(req.actor, idOf(req));
    return sendJson(reply, wireFor(c, req).unit(project, component, languageCode, unit));
  });
}
