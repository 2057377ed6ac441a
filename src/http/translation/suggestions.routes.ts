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
import type { CommentRow, SuggestionRow, UnitRow } from '../../db/schema.ts';
import { READONLY_MESSAGE } from '../../domain/translation/permissions.ts';
import { COMMENT_SCOPES, type CommentScope } from '../../domain/translation/units/suggestions.ts';
import { Errors } from '../../lib/errors.ts';
import { body, view, wireFor } from './common.ts';
import { ALLOW_LIST_RO, envelope, LARGE_PAGE, pageOf } from './drf.ts';
import { sendJson, drfTime, type Wire } from './serializers.ts';

const SEP = '\u001e';
const ALLOW_UNIT_ACTION = 'GET, POST, HEAD, OPTIONS';
const ALLOW_SUGGESTION = 'GET, DELETE, HEAD, OPTIONS';
const ALLOW_ACCEPT = 'POST, OPTIONS';
const COMMENT_MAX = 1000;

type P = { Params: { id: string } };
const idOf = (req: FastifyRequest<P>) => (/^\d+$/.test(req.params.id) ? Number(req.params.id) : NaN);

/** The plural forms of a `target`: a U+001E-joined string or a list of strings (form fields repeat). */
export function targetForms(raw: unknown): string[] {
  if (raw === undefined || raw === null) throw Errors.invalid({ target: ['This field is required.'] });
  const forms = typeof raw === 'string' ? raw.split(SEP) : Array.isArray(raw) ? raw : null;
  if (!forms) throw Errors.invalid({ target: [`Expected a list of items but got type "${typeof raw === 'object' ? 'dict' : typeof raw}".`] });
  if (!forms.length) throw Errors.invalid({ target: ['This list may not be empty.'] });
  if (forms.some((f) => typeof f !== 'string')) throw Errors.invalid({ target: ['Not a valid string.'] });
  if (forms.every((f) => f === '')) throw Errors.invalid({ target: ['This field may not be blank.'] });
  return forms as string[];
}

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

  /** the plural count the unit's translation takes (1 for a string without plurals) */
  const pluralCount = async (unit: UnitRow) => (unit.source.includes(SEP) ? s.pluralNumber(unit) : 1);

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
    if (!req.actor.user) throw Errors.unauthorized();
    const { unit, project, component } = await q.unit(req.actor, idOf(req));
    await writes.permissions.require(req.actor, 'suggestion.add', { project, component });
    if (unit.state === 100) throw Errors.forbidden(READONLY_MESSAGE);
    const forms = targetForms(body(req).target);
    if (forms.length !== (await pluralCount(unit))) throw Errors.invalid({ target: ['Number of plurals does not match'] });
    const row = await s.add(req.actor, unit, forms);
    if (!row) throw Errors.invalid({ target: ['This translation is already suggested or is the current translation.'] });
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
    if (!req.actor.user) throw Errors.unauthorized();
    const { unit, project, component } = await q.unit(req.actor, idOf(req));
    await writes.permissions.require(req.actor, 'comment.add', { project, component }, 'You do not have permission to perform this action.');
    const b = body(req);
    const errors: Record<string, string[]> = {};
    const text = b.comment;
    if (text === undefined || text === null) errors.comment = ['This field is required.'];
    else if (typeof text !== 'string') errors.comment = ['Not a valid string.'];
    else if (text.trim() === '') errors.comment = ['This field may not be blank.'];
    else if (text.length > COMMENT_MAX) errors.comment = [`Ensure this field has no more than ${COMMENT_MAX} characters.`];
    // "report" needs source reviews, which Hearth does not have: it is not a choice here (Weblate's CommentForm)
    const scope = b.scope === undefined || b.scope === null || b.scope === '' ? 'global' : b.scope;
    if (typeof scope !== 'string' || scope === 'report' || !(COMMENT_SCOPES as readonly string[]).includes(scope))
      errors.scope = [`"${String(scope)}" is not a valid choice.`];
    let timestamp: string | undefined;
    if (b.timestamp !== undefined && b.timestamp !== null && b.timestamp !== '') {
      const t = typeof b.timestamp === 'string' && /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(b.timestamp) ? Date.parse(b.timestamp.replace(' ', 'T')) : NaN;
      if (Number.isNaN(t)) errors.timestamp = ['Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].'];
      else timestamp = new Date(t).toISOString();
    }
    if (Object.keys(errors).length) throw Errors.invalid(errors);
    // importing comments with their own time is for those who manage the project (Weblate: project.edit)
    if (timestamp !== undefined)
      await writes.permissions.require(req.actor, 'project.edit', { project, component }, 'You do not have permission to perform this action.');
    const row = await s.comment(req.actor, unit, text as string, scope as CommentScope, { timestamp });
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
    if (!req.actor.user) throw Errors.unauthorized();
    const { suggestion, project, component } = await s.find(req.actor, idOf(req));
    // the author may take back their own suggestion; others need suggestion.delete (Weblate's check_suggestion_delete)
    if (suggestion.user_id !== req.actor.user.id)
      await writes.permissions.require(req.actor, 'suggestion.delete', { project, component }, 'Can not delete suggestion');
    await s.remove(req.actor, suggestion);
    return reply.code(204).send();
  });

  app.post<P>('/api/suggestions/:id/accept/', view(ALLOW_ACCEPT, 'Accept', 'Suggestions API.'), async (req, reply) => {
    if (!req.actor.user) throw Errors.unauthorized();
    const { suggestion, unit, project, component, languageCode } = await s.find(req.actor, idOf(req));
    await writes.permissions.require(req.actor, 'suggestion.accept', { project, component, unit });
    // accepting is an edit (Weblate's check_can_edit): locks, read-only and approved strings refuse it
    await writes.permissions.require(req.actor, 'unit.edit', { project, component, unit });
    const translation = await s.translationOf(unit);
    const now = await s.accept(req.actor, translation, unit, suggestion);
    return sendJson(reply, wireFor(c, req).unit(project, component, languageCode, now));
  });
}
