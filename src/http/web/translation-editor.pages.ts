// The translation editor (Weblate's /translate/<project>/<component>/<lang>/): one unit at a time, by
// `?checksum=` (the unit's web_url) or `?offset=N` in the set `?q=` filters (the API's units search),
// and its forms:
//   POST /-/translate/unit/:id/save      the same domain code as PATCH /api/units/:id/, then 303 to the
//                                        next unit of the filter (Weblate's behaviour)
//   POST /-/translate/unit/:id/suggest   as POST /api/units/:id/suggestions/
//   POST /-/translate/unit/:id/comment   as POST /api/units/:id/comments/
//   POST /-/translate/suggestion/:id/accept|delete   as the suggestions API
// A rejected save or suggestion re-renders the unit with the errors and what was typed (422); a
// permission the viewer lacks is the 403 page, an object they may not see the 404 page.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { ComponentRow, TranslationProjectRow, TranslationRow, UnitRow } from '../../db/schema.ts';
import { InvalidPattern, ReadsBusy, ReadTimeout } from '../../db/limited-reads.ts';
import { ACTION_NAMES } from '../../domain/translation/changes/actions.ts';
import { CHECK_NAMES } from '../../domain/translation/checks/index.ts';
import type { TranslationPerm } from '../../domain/translation/permissions.ts';
import { QueryParseError } from '../../domain/translation/search/query.ts';
import { EditorReads, type UnitFilter } from '../../domain/translation/units/editor.ts';
import { checksum } from '../../domain/translation/units/hash.ts';
import { DomainError } from '../../lib/errors.ts';
import { EditorEmpty, EditorPage, type EditorView, type PersonView } from '../../web/views/translation/editor/editor.tsx';
import { HIDDEN, PAGE, type Web, type WebCtx } from './web.ts';

const SEP = '\u001e';
const enc = encodeURIComponent;

type Path = { project: TranslationProjectRow; component: ComponentRow; translation: TranslationRow; languageCode: string };

/** Where the editor of a translation lives, with an optional filter and unit (checksum) or place (offset). */
export function editorUrl(p: { project: string; component: string; language: string }, opts: { q?: string; checksum?: string; offset?: number } = {}): string {
  const params: string[] = [];
  if (opts.q) params.push(`q=${enc(opts.q)}`);
  if (opts.checksum) params.push(`checksum=${opts.checksum}`);
  if (opts.offset !== undefined) params.push(`offset=${opts.offset}`);
  return `/translate/${enc(p.project)}/${enc(p.component)}/${enc(p.language)}/${params.length ? `?${params.join('&')}` : ''}`;
}

function pathNames(path: Path) {
  return { project: path.project.slug, component: path.component.slug, language: path.languageCode };
}

/** One string query parameter (the last when repeated); '' when absent. */
function param(v: unknown): string {
  if (Array.isArray(v)) return param(v[v.length - 1]);
  return typeof v === 'string' ? v : '';
}

/** The plural forms a form sent (`target` once, repeated, or as a list). */
function formTargets(v: unknown): string[] {
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'string' ? x : ''));
  return [typeof v === 'string' ? v : ''];
}

/** A rejected write's messages for the form (400 field errors of the domain); null for anything else. */
function editorErrors(e: unknown): string[] | null {
  if (!(e instanceof DomainError) || e.status !== 400) return null;
  const d = e.detail;
  if (typeof d === 'string') return [d];
  if (!d || typeof d !== 'object') return [e.message];
  const out: string[] = [];
  for (const [field, msgs] of Object.entries(d as Record<string, unknown>)) {
    const label = field === 'non_field_errors' ? '' : `${field.charAt(0).toUpperCase()}${field.slice(1).replace(/_/g, ' ')}: `;
    for (const m of Array.isArray(msgs) ? msgs : [msgs]) out.push(`${label}${String(m)}`);
  }
  // the same message for two fields ("Please provide both …") once
  return [...new Set(out)];
}

/** What a search that cannot run says (the API answers these 400/429 too). */
function searchError(e: unknown): string | null {
  if (e instanceof QueryParseError) return `Could not parse query string: ${e.message}`;
  if (e instanceof ReadTimeout) return 'The search took too long; try a simpler query.';
  if (e instanceof ReadsBusy) return 'Too many searches are running; try again in a moment.';
  if (e instanceof InvalidPattern) return `Invalid regular expression: ${e.message}`;
  return null;
}

export function translationEditorPages(app: FastifyInstance, c: Container, web: Web): void {
  const t = c.translation;
  const ed = new EditorReads(c.db, t.reads, c.config.searchTimeoutMs);

  const overviewUrls = (path: Path) => {
    const n = pathNames(path);
    return {
      project: `/projects/${enc(n.project)}/`,
      component: `/projects/${enc(n.project)}/${enc(n.component)}/`,
      translation: `/projects/${enc(n.project)}/${enc(n.component)}/${enc(n.language)}/`,
      editor: editorUrl(n),
    };
  };

  /** Renders the editor for `unit` (its place in the filter found here unless given). */
  async function renderUnit(
    req: FastifyRequest,
    reply: FastifyReply,
    ctx: WebCtx,
    path: Path,
    unit: UnitRow,
    q: string,
    place: { total: number; offset: number },
    typed?: { targets: string[]; fuzzy: boolean; approved: boolean; errors: string[] },
  ) {
    const { project, component, translation } = path;
    const n = pathNames(path);
    const filter: UnitFilter = { translation, q };
    const scope = { project, component, translation, unit };
    const perm = (p: TranslationPerm, s: typeof scope | { project: TranslationProjectRow; component: ComponentRow } = { project, component }) =>
      ctx.user ? t.writes.permissions.check(ctx.actor, p, s) : Promise.resolve('Sign in to translate.');
    const s = t.writes.suggestions;
    const [editDenied, review, suggest, accept, deleteAny, comment, next, suggestions, comments, history, others, plurals, sourcePlural] = await Promise.all([
      perm('unit.edit', scope),
      project.translation_review ? perm('unit.review', { project, component }) : Promise.resolve('off'),
      unit.state === 100 ? Promise.resolve('read-only') : perm('suggestion.add'),
      perm('suggestion.accept', scope),
      perm('suggestion.delete'),
      perm('comment.add'),
      ed.after(filter, unit),
      s.forUnit(unit.id),
      s.commentsFor(unit),
      ed.history(unit),
      ed.otherLanguages(unit),
      ed.plurals([translation.plural_id]),
      ed.defaultPlural(component.source_language_id),
    ]);
    const related = await t.related.load({
      users: [...suggestions.map((x) => x.user_id), ...comments.map((x) => x.user_id), ...history.map((x) => x.user_id ?? x.author_id)],
      languages: [translation.language_id, component.source_language_id],
    });
    const person = (id: number | null, fallback = 'Anonymous'): PersonView => {
      const u = id !== null ? related.users.get(id) : undefined;
      return u ? { name: u.name || u.username, href: `/${enc(u.username)}` } : { name: fallback, href: null };
    };
    const lang = related.languages.get(translation.language_id)?.language;
    const srcLang = related.languages.get(component.source_language_id)?.language;
    const sources = unit.source.split(SEP);
    const targets = typed?.targets ?? unit.target.split(SEP);
    const own = plurals.get(translation.plural_id) ?? null;
    const formCount = sources.length > 1 ? Math.max(1, own?.number ?? 2) : 1;
    while (targets.length < formCount) targets.push('');
    const nav = {
      offset: place.offset,
      total: place.total,
      first: place.offset > 1 ? editorUrl(n, { q, offset: 1 }) : null,
      prev: place.offset > 1 ? editorUrl(n, { q, offset: place.offset - 1 }) : null,
      next: next ? editorUrl(n, { q, checksum: checksum(BigInt(next.id_hash)) }) : null,
      last: place.offset < place.total ? editorUrl(n, { q, offset: place.total }) : null,
      skip: next ? editorUrl(n, { q, checksum: checksum(BigInt(next.id_hash)) }) : overviewUrls(path).translation,
    };
    const view: EditorView = {
      ctx,
      project: { slug: project.slug, name: project.name },
      component: { slug: component.slug, name: component.name },
      language: { code: path.languageCode, name: lang?.name ?? path.languageCode, rtl: lang?.direction === 'rtl' },
      sourceLanguage: { code: srcLang?.code ?? 'en', name: srcLang?.name ?? 'Source', rtl: srcLang?.direction === 'rtl' },
      urls: overviewUrls(path),
      q,
      nav,
      unit: {
        id: unit.id,
        sources,
        targets,
        context: unit.context,
        note: unit.note,
        explanation: unit.explanation,
        flags: [unit.flags, unit.extra_flags].filter(Boolean).join(', '),
        locations: unit.location
          .split(/,\s*|\n/)
          .map((l) => l.trim())
          .filter(Boolean),
        state: unit.state,
        fuzzy: typed ? typed.fuzzy : unit.state >= 10 && unit.state < 20,
        approved: typed ? typed.approved : unit.state === 30,
        checks: unit.failing_checks
          .split(',')
          .filter(Boolean)
          .map((id) => ({ id, name: CHECK_NAMES[id] ?? id })),
        pending: unit.pending === 1,
      },
      sourceLabels: sources.length > 1 ? ed.formLabels(sourcePlural, sources.length) : null,
      targetLabels: formCount > 1 ? ed.formLabels(own, formCount) : null,
      can: {
        edit: editDenied === null,
        review: review === null,
        suggest: suggest === null,
        accept: accept === null && editDenied === null,
        deleteAny: deleteAny === null,
        comment: comment === null,
      },
      editDenied: ctx.user ? editDenied : null,
      errors: typed?.errors ?? null,
      suggestions: suggestions.map((x) => ({
        id: x.id,
        target: x.target.split(SEP),
        author: person(x.user_id, x.author_name || 'Anonymous'),
        at: x.timestamp,
        own: ctx.user !== null && x.user_id === ctx.user.id,
      })),
      comments: comments.map((x) => ({ id: x.id, text: x.comment, scope: x.scope, author: person(x.user_id), at: x.timestamp })),
      history: history.map((h) => ({
        action: ACTION_NAMES.get(h.action) ?? `Change ${h.action}`,
        target: h.target.split(SEP).join(' | '),
        author: person(h.author_id ?? h.user_id),
        at: h.timestamp,
      })),
      others: others.map((o) => ({
        code: o.languageCode,
        name: o.languageName,
        target: o.target.split(SEP),
        state: o.state,
        rtl: o.rtl,
        href: editorUrl({ project: n.project, component: n.component, language: o.languageCode }, { checksum: checksum(BigInt(unit.id_hash)) }),
      })),
    };
    void req;
    return web.page(reply, EditorPage(view), typed ? 422 : 200);
  }

  /** The translation of a unit, as the viewer sees it (404 otherwise), and the unit. */
  async function unitPath(ctx: WebCtx, idRaw: string): Promise<Path & { unit: UnitRow }> {
    const id = /^\d{1,10}$/.test(idRaw) ? Number(idRaw) : Number.NaN;
    const { unit, project, component, languageCode } = await t.queries.unit(ctx.actor, id, { sourceUnit: false });
    const translation = await t.writes.suggestions.translationOf(unit);
    return { unit, project, component, translation, languageCode };
  }

  /** Back to a unit in the editor (after a comment, an accepted or deleted suggestion). */
  const backTo = (path: Path, unit: UnitRow, q: string) => editorUrl(pathNames(path), { q, checksum: checksum(BigInt(unit.id_hash)) });

  type EP = { Params: { project: string; component: string; lang: string }; Querystring: Record<string, unknown> };
  app.get<EP>('/translate/:project/:component/:lang/', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.context(req);
    const path = await t.queries.translation(ctx.actor, req.params.project, req.params.component, req.params.lang);
    const q = param(req.query.q).trim();
    const cs = param(req.query.checksum);
    const base = { ctx, project: path.project, component: path.component, urls: overviewUrls(path), q };
    const langName = (await t.related.load({ languages: [path.translation.language_id] })).languages.get(path.translation.language_id)?.language.name;
    const empty = (message: string, error = false) =>
      web.page(
        reply,
        EditorEmpty({ ...base, language: { code: path.languageCode, name: langName ?? path.languageCode, rtl: false }, message, error }),
        error ? 400 : 200,
      );
    try {
      if (cs) {
        const unit = await ed.byChecksum(path.translation, cs);
        if (!unit) return web.notFound(req, reply);
        const place = await ed.placeOf({ translation: path.translation, q }, unit);
        if (place.offset === null)
          return web.redirect(reply, editorUrl(pathNames(path), { checksum: cs }), {
            kind: 'notice',
            text: 'The string does not match the search: showing all strings.',
          });
        return await renderUnit(req, reply, ctx, path, unit, q, { total: place.total, offset: place.offset });
      }
      const rawOffset = param(req.query.offset) || '1';
      if (!/^\d{1,9}$/.test(rawOffset) || Number(rawOffset) < 1) return web.notFound(req, reply);
      const found = await ed.at({ translation: path.translation, q }, Number(rawOffset));
      if (!found.unit) return empty(q ? 'No strings match the search.' : 'This translation has no strings.');
      return await renderUnit(req, reply, ctx, path, found.unit, q, found);
    } catch (e) {
      const message = searchError(e);
      if (message) return empty(message, true);
      throw e;
    }
  });

  type UP = { Params: { id: string }; Body: Record<string, unknown> };
  const formBody = (req: FastifyRequest) => (req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {});

  /** A rejected save or suggestion: the unit again with the errors and what was typed, 422. */
  async function rejected(req: FastifyRequest, reply: FastifyReply, ctx: WebCtx, path: Path & { unit: UnitRow }, q: string, errors: string[]) {
    const b = formBody(req);
    const typed = { targets: formTargets(b.target), fuzzy: Boolean(param(b.fuzzy)), approved: Boolean(param(b.approved)), errors };
    let place: { total: number; offset: number | null };
    try {
      place = await ed.placeOf({ translation: path.translation, q }, path.unit);
    } catch {
      q = '';
      place = await ed.placeOf({ translation: path.translation, q }, path.unit);
    }
    return renderUnit(req, reply, ctx, path, path.unit, q, { total: place.total, offset: place.offset ?? 1 }, typed);
  }

  /** After a save: the next unit of the same filter, or the translation page at its end. */
  async function nextOf(path: Path, unit: UnitRow, q: string): Promise<string | null> {
    try {
      const next = await ed.after({ translation: path.translation, q }, unit);
      return next ? editorUrl(pathNames(path), { q, checksum: checksum(BigInt(next.id_hash)) }) : null;
    } catch (e) {
      if (searchError(e)) return null;
      throw e;
    }
  }

  app.post<UP>('/-/translate/unit/:id/save', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const path = await unitPath(ctx, req.params.id);
    const b = formBody(req);
    const q = param(b.q).trim();
    const targets = formTargets(b.target);
    const empty = targets.every((x) => x === '');
    const state = empty ? 0 : param(b.approved) ? 30 : param(b.fuzzy) ? 10 : 20;
    try {
      await t.writes.edits.update(ctx.actor, path.unit.id, { target: targets, state }, true);
    } catch (e) {
      const errors = editorErrors(e);
      if (!errors) throw e;
      return rejected(req, reply, ctx, path, q, errors);
    }
    const next = await nextOf(path, path.unit, q);
    if (next) return web.redirect(reply, next, { kind: 'notice', text: 'Translation saved.' });
    return web.redirect(reply, overviewUrls(path).translation, { kind: 'notice', text: 'Translation saved. The translation has come to an end.' });
  });

  app.post<UP>('/-/translate/unit/:id/suggest', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const path = await unitPath(ctx, req.params.id);
    const b = formBody(req);
    const q = param(b.q).trim();
    try {
      await t.writes.suggestions.suggest(ctx.actor, path.unit.id, formTargets(b.target));
    } catch (e) {
      const errors = editorErrors(e);
      if (!errors) throw e;
      return rejected(req, reply, ctx, path, q, errors);
    }
    const next = await nextOf(path, path.unit, q);
    return web.redirect(reply, next ?? backTo(path, path.unit, q), { kind: 'notice', text: 'Suggestion added.' });
  });

  app.post<UP>('/-/translate/unit/:id/comment', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const path = await unitPath(ctx, req.params.id);
    const b = formBody(req);
    const q = param(b.q).trim();
    try {
      await t.writes.suggestions.commentAs(ctx.actor, path.unit.id, { comment: param(b.comment), scope: param(b.scope) });
    } catch (e) {
      const errors = editorErrors(e);
      if (!errors) throw e;
      return web.redirect(reply, backTo(path, path.unit, q), { kind: 'alert', text: `The comment was not added: ${errors.join(' ')}` });
    }
    return web.redirect(reply, backTo(path, path.unit, q), { kind: 'notice', text: 'Comment added.' });
  });

  const suggestionAction = async (req: FastifyRequest<UP>, reply: FastifyReply, accept: boolean) => {
    const ctx = await web.requireUser(req);
    const id = /^\d{1,10}$/.test(req.params.id) ? Number(req.params.id) : Number.NaN;
    const { unit } = await t.writes.suggestions.find(ctx.actor, id);
    const path = await unitPath(ctx, String(unit.id));
    const q = param(formBody(req).q).trim();
    try {
      if (accept) await t.writes.suggestions.acceptAs(ctx.actor, id);
      else await t.writes.suggestions.deleteAs(ctx.actor, id);
    } catch (e) {
      const errors = editorErrors(e);
      if (!errors) throw e;
      return web.redirect(reply, backTo(path, unit, q), { kind: 'alert', text: errors.join(' ') });
    }
    return web.redirect(reply, backTo(path, unit, q), { kind: 'notice', text: accept ? 'Suggestion accepted.' : 'Suggestion deleted.' });
  };
  app.post<UP>('/-/translate/suggestion/:id/accept', { config: PAGE, schema: HIDDEN }, (req, reply) => suggestionAction(req, reply, true));
  app.post<UP>('/-/translate/suggestion/:id/delete', { config: PAGE, schema: HIDDEN }, (req, reply) => suggestionAction(req, reply, false));
}
