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
import type { CommentRow, ComponentRow, SuggestionRow, TranslationChangeRow, TranslationProjectRow, TranslationRow, UnitRow } from '../../db/schema.ts';
import { stamp } from '../../db/versions.ts';
import type { LanguagePlural, Related } from '../../domain/translation/related.ts';
import { VersionedCache } from '../../lib/versioned-cache.ts';
import { InvalidPattern, ReadsBusy, ReadTimeout } from '../../db/limited-reads.ts';
import { ACTION_NAMES } from '../../domain/translation/changes/actions.ts';
import { CHECK_NAMES } from '../../domain/translation/checks/index.ts';
import { QueryParseError } from '../../domain/translation/search/query.ts';
import { EditorReads, type OtherTranslation } from '../../domain/translation/units/editor.ts';
import { checksum } from '../../domain/translation/units/hash.ts';
import { DomainError } from '../../lib/errors.ts';
import { EditorEmpty, EditorPage, type EditorView, type PersonView } from '../../web/views/translation/editor/editor.tsx';
import { unitWrite, validOrRefused } from '../translation/validators.ts';
import { HIDDEN, PAGE, type Web, type WebCtx } from './web.ts';

const SEP = '\u001e';
const enc = encodeURIComponent;

type Path = { project: TranslationProjectRow; component: ComponentRow; translation: TranslationRow; languageCode: string };

/** What the editor shows of a unit, whoever looks (read once per version of the tables below). */
interface UnitData {
  path: Path;
  unit: UnitRow;
  q: string;
  place: { total: number; offset: number };
  next: UnitRow | null;
  suggestions: SuggestionRow[];
  comments: CommentRow[];
  history: TranslationChangeRow[];
  others: OtherTranslation[];
  related: Related;
  own: LanguagePlural | null;
  sourcePlural: LanguagePlural | null;
}

/**
 * The editor's data is cached per URL (and administrator or not) for the versions of these tables, at
 * most a few seconds: every unit edit writes its translation's row (stats), and so do suggestions and
 * comments (suggestions.ts), so a write anywhere in translations makes the entry miss. Who may do what
 * is not cached: it is checked on every request.
 */
const CACHE_TABLES = ['translation_projects', 'components', 'translations', 'languages', 'language_plurals', 'users'] as const;

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
  const cache = new VersionedCache<UnitData>(2000, 5000);

  const overviewUrls = (path: Path) => {
    const n = pathNames(path);
    return {
      project: `/projects/${enc(n.project)}/`,
      component: `/projects/${enc(n.project)}/${enc(n.component)}/`,
      translation: `/projects/${enc(n.project)}/${enc(n.component)}/${enc(n.language)}/`,
      editor: editorUrl(n),
    };
  };

  /** Everything the editor shows about a unit that does not depend on who is looking (beyond being an administrator). */
  async function loadUnit(path: Path, unit: UnitRow, q: string, place: { total: number; offset: number }): Promise<UnitData> {
    const { component, translation } = path;
    const s = t.writes.suggestions;
    const [next, suggestions, comments, history, others] = await Promise.all([
      ed.after({ translation, q }, unit),
      s.forUnit(unit.id),
      s.commentsFor(unit),
      ed.history(unit),
      ed.otherLanguages(unit),
    ]);
    const related = await t.related.load({
      users: [...suggestions.map((x) => x.user_id), ...comments.map((x) => x.user_id), ...history.map((x) => x.author_id ?? x.user_id)],
      languages: [translation.language_id, component.source_language_id],
    });
    // the languages' default plurals came with them; a translation with another plural of its language reads its own
    const langView = related.languages.get(translation.language_id);
    const own =
      langView?.plural?.id === translation.plural_id ? langView.plural : ((await ed.plurals([translation.plural_id])).get(translation.plural_id) ?? null);
    const sourcePlural = related.languages.get(component.source_language_id)?.plural ?? null;
    return { path, unit, q, place, next, suggestions, comments, history, others, related, own, sourcePlural };
  }

  /** Renders the editor for a unit: the viewer's permissions decide the forms and buttons. */
  async function renderUnit(
    reply: FastifyReply,
    ctx: WebCtx,
    data: UnitData,
    typed?: { targets: string[]; fuzzy: boolean; approved: boolean; errors: string[] },
  ) {
    const { path, unit, q, place, next, suggestions, comments, history, others, related, own, sourcePlural } = data;
    const { project, component, translation } = path;
    const n = pathNames(path);
    const perms = await t.writes.permissions.checkMany(
      ctx.actor,
      ['unit.edit', 'unit.review', 'suggestion.add', 'suggestion.accept', 'suggestion.delete', 'comment.add'] as const,
      { project, component, translation, unit },
    );
    const langView = related.languages.get(translation.language_id);
    const editDenied = ctx.user ? perms['unit.edit'] : 'Sign in to translate.';
    const allowed = (p: keyof typeof perms) => ctx.user !== null && perms[p] === null;
    const person = (id: number | null, fallback = 'Anonymous'): PersonView => {
      const u = id !== null ? related.users.get(id) : undefined;
      return u ? { name: u.name || u.username, href: `/${enc(u.username)}` } : { name: fallback, href: null };
    };
    const lang = langView?.language;
    const srcLang = related.languages.get(component.source_language_id)?.language;
    const sources = unit.source.split(SEP);
    const targets = typed?.targets ?? unit.target.split(SEP);
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
        edit: allowed('unit.edit'),
        review: project.translation_review === 1 && allowed('unit.review'),
        suggest: unit.state !== 100 && allowed('suggestion.add'),
        // accepting is an edit too (the API checks both)
        accept: allowed('suggestion.accept') && allowed('unit.edit'),
        deleteAny: allowed('suggestion.delete'),
        comment: allowed('comment.add'),
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
    const q = param(req.query.q).trim();
    const cs = param(req.query.checksum);
    const rawOffset = cs ? '' : param(req.query.offset) || '1';
    if (!cs && (!/^\d{1,9}$/.test(rawOffset) || Number(rawOffset) < 1)) return web.notFound(req, reply);
    // what a viewer may see of translations depends only on being an administrator (visibility.ts)
    const { project: p, component: c2, lang } = req.params;
    const key = `${ctx.actor.isAdmin ? 'admin' : 'all'}|${p}|${c2}|${lang}|${cs}|${rawOffset}|${q}`;
    const version = stamp(await req.versions(), CACHE_TABLES);
    const hit = cache.get(key, version);
    if (hit) return renderUnit(reply, ctx, hit);

    const path = await t.queries.translation(ctx.actor, p, c2, lang);
    const empty = async (message: string, error = false) => {
      const l = (await t.related.load({ languages: [path.translation.language_id] })).languages.get(path.translation.language_id)?.language;
      const language = { code: path.languageCode, name: l?.name ?? path.languageCode, rtl: l?.direction === 'rtl' };
      const base = { ctx, project: path.project, component: path.component, urls: overviewUrls(path), q };
      return web.page(reply, EditorEmpty({ ...base, language, message, error }), error ? 400 : 200);
    };
    let data: UnitData;
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
        data = await loadUnit(path, unit, q, { total: place.total, offset: place.offset });
      } else {
        const found = await ed.at({ translation: path.translation, q }, Number(rawOffset));
        if (!found.unit) return empty(q ? 'No strings match the search.' : 'This translation has no strings.');
        data = await loadUnit(path, found.unit, q, found);
      }
    } catch (e) {
      const message = searchError(e);
      if (message) return empty(message, true);
      throw e;
    }
    cache.set(key, version, data);
    return renderUnit(reply, ctx, data);
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
    return renderUnit(reply, ctx, await loadUnit(path, path.unit, q, { total: place.total, offset: place.offset ?? 1 }), typed);
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
      // the unit was found above (unitPath): field errors need no other check first
      await t.writes.edits.update(ctx.actor, path.unit.id, await validOrRefused(unitWrite({ target: targets, state }, true)));
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
