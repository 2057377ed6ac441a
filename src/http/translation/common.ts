// What the translation routes share: route config, request bodies, the response cache, the serializer
// for a request, the changes filters (reference §7.1) and the answers of a units search.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import { InvalidPattern, ReadsBusy, ReadTimeout } from '../../db/limited-reads.ts';
import { canViewVcs } from '../../domain/translation/access.ts';
import { ACTION_NAMES } from '../../domain/translation/changes/actions.ts';
import { fileFormatChoices } from '../../domain/translation/file-formats.ts';
import type { ChangesFilter, ChangesScope } from '../../domain/translation/reads.ts';
import type { Related } from '../../domain/translation/related.ts';
import { QueryParseError } from '../../domain/translation/search/query.ts';
import { Errors } from '../../lib/errors.ts';
import { drfHeaders, drfView, envelope, pageOf } from './drf.ts';
import type { DrfActions, DrfField } from './metadata.ts';
import { drfJson, sendJson, Wire } from './serializers.ts';

/**
 * Tables a translation read is made of. Units and changes are not tracked, but every write to units
 * also rewrites its translation's counters, so a cached page of units misses after any unit change.
 */
const READ_TABLES = ['translation_projects', 'components', 'translations', 'languages', 'language_plurals', 'users'] as const;

/**
 * A GET answered from the response cache while those tables are unchanged. What a caller sees depends
 * only on being an administrator, a user (VCS fields) or anonymous, and on the request's origin (links).
 */
export function cached(app: FastifyInstance, req: FastifyRequest, reply: FastifyReply, compute: () => Promise<unknown>): Promise<FastifyReply> {
  const who = req.actor.isAdmin ? 'admin' : req.actor.user ? 'user' : 'anonymous';
  // the key holds the route pattern and the query: the path (its parameters) goes into the viewer part
  const path = req.url.split('?')[0];
  return app.cachedResponse(req, reply, { tables: READ_TABLES, viewer: `${who}|${req.protocol}://${req.host}${path}`, serialize: drfJson }, compute);
}

/** Route options of a translation endpoint: its Allow header and its DRF view name. */
export function view(allow: string, name: string, description?: string, actions?: DrfActions) {
  return { config: { api: 'translation' as const, auth: 'optional' as const, view: drfView(name, description, actions) }, onRequest: drfHeaders(allow) };
}

const field = (type: string, label: string, required = false, extra: Partial<DrfField> = {}): DrfField => ({
  type,
  required,
  read_only: false,
  label,
  ...extra,
});
/** What OPTIONS shows authenticated callers about creating a project (DRF SimpleMetadata). */
export const PROJECT_ACTIONS: DrfActions = {
  POST: {
    name: field('string', 'Project name', true, { help_text: 'Display name', max_length: 60 }),
    slug: field('slug', 'URL slug', true, { help_text: 'Name used in URLs and filenames.', max_length: 60 }),
    web: field('url', 'Project website', true, { help_text: 'Main website of translated project.', max_length: 200 }),
    source_language: field('field', 'Source language'),
    access_control: field('choice', 'Access control', false, {
      choices: [
        { value: 0, display_name: 'Public' },
        { value: 1, display_name: 'Protected' },
        { value: 100, display_name: 'Private' },
      ],
    }),
  },
};
/** … and a component. */
export const COMPONENT_ACTIONS: DrfActions = {
  POST: {
    name: field('string', 'Component name', true, { max_length: 100 }),
    slug: field('slug', 'URL slug', true, { max_length: 100 }),
    repo: field('string', 'Source code repository', true, { max_length: 300 }),
    branch: field('string', 'Repository branch', false, { max_length: 200 }),
    filemask: field('string', 'File mask', true, { max_length: 400 }),
    template: field('string', 'Monolingual base language file', false, { max_length: 400 }),
    new_base: field('string', 'Template for new translations', false, { max_length: 400 }),
    file_format: field('choice', 'File format', true, { choices: fileFormatChoices().map(({ id, name }) => ({ value: id, display_name: name })) }),
    edit_template: field('boolean', 'Edit base file'),
    license: field('string', 'Translation license', false, { max_length: 150 }),
    license_url: field('url', 'License URL', false, { max_length: 200 }),
    new_lang: field('choice', 'Adding new translation', false, { choices: ['contact', 'url', 'add', 'none'].map((v) => ({ value: v, display_name: v })) }),
    check_flags: field('string', 'Translation flags', false, { max_length: 1000 }),
    enforced_checks: field('field', 'Enforced checks'),
    restricted: field('boolean', 'Restricted component'),
    push: field('string', 'Repository push URL', false, { max_length: 300 }),
    source_language: field('field', 'Source language'),
  },
};

export function body(req: FastifyRequest): Record<string, unknown> {
  return req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {};
}

type Query = Record<string, string | string[] | undefined>;
const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[v.length - 1] : v);
const all = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** django-filter's IsoDateTimeField: ISO 8601, naive values in UTC. */
function isoDate(s: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/.test(s.trim())) return null;
  let v = s.trim().replace(' ', 'T');
  if (!/T/.test(v)) v += 'T00:00:00';
  if (!/(Z|[+-]\d{2}:?\d{2})$/.test(v)) v += 'Z';
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

/** The serializer of a request, over the rows the domain loaded for it. */
export function wireFor(c: Container, req: FastifyRequest, related?: Related): Wire {
  return new Wire(req, c.config.externalUrl, related, canViewVcs(req.actor));
}

/** The filters of a changes list: user, action (repeatable, OR), timestamp_after/before (inclusive). */
export function changesFilter(req: FastifyRequest): ChangesFilter {
  const query = req.query as Query;
  const errs: Record<string, string[]> = {};
  const actions = all(query.action).filter((a) => a !== '');
  for (const a of actions) {
    if (!/^\d+$/.test(a) || !ACTION_NAMES.has(Number(a))) {
      errs.action = [`Select a valid choice. ${a} is not one of the available choices.`];
      break;
    }
  }
  const after = one(query.timestamp_after);
  const before = one(query.timestamp_before);
  const afterIso = after ? isoDate(after) : null;
  const beforeIso = before ? isoDate(before) : null;
  if ((after && !afterIso) || (before && !beforeIso)) errs.timestamp = ['Enter a valid date/time.'];
  if (Object.keys(errs).length) throw Errors.invalid(errs);
  const user = one(query.user);
  return { actions: actions.map(Number), ...(user ? { user } : {}), ...(afterIso ? { after: afterIso } : {}), ...(beforeIso ? { before: beforeIso } : {}) };
}

/** A page of change records, newest first, as Weblate lists them. */
export async function changesList(c: Container, req: FastifyRequest, reply: FastifyReply, scope: ChangesScope): Promise<FastifyReply> {
  const { total, page, rows, related, links } = await c.translation.reads.changes(req.actor, scope, changesFilter(req), (n) => pageOf(req, n));
  const wire = wireFor(c, req, related);
  return sendJson(
    reply,
    envelope(
      req,
      total,
      page,
      rows.map((r) => wire.change(r, links)),
    ),
  );
}

/** The `q` of a units request (the last one when repeated). */
export function searchParam(req: FastifyRequest): string | undefined {
  const raw = (req.query as Query).q;
  return Array.isArray(raw) ? raw[raw.length - 1] : raw;
}

/**
 * The answers of a units search that fails: 400 {"q": …} when `q` does not parse; with a user's regular
 * expression (run under HEARTH_SEARCH_TIMEOUT_MS, db/limited-reads.ts), past the limit 400 {"q": "Search
 * took too long…"}, when too many such searches are running 503 {"detail": …} with Retry-After, and for a
 * pattern PostgreSQL refuses 400 {"q": "Could not parse query string: Invalid regular expression: …"}.
 */
export async function searching<T>(c: Container, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof QueryParseError) throw Errors.raw(400, { q: `Could not parse query string: ${e.message}` });
    const ms = c.config.searchTimeoutMs;
    if (e instanceof ReadTimeout) {
      throw Errors.raw(400, { q: `Search took longer than ${ms / 1000} s and was stopped; use a simpler regular expression or narrow the search.` });
    }
    if (e instanceof ReadsBusy) {
      throw Errors.raw(
        503,
        { detail: 'Too many searches with regular expressions are running, try again later.' },
        { 'retry-after': String(Math.ceil(ms / 1000)) },
      );
    }
    if (e instanceof InvalidPattern)
      throw Errors.raw(400, { q: `Could not parse query string: Invalid regular expression: ${e.message.replace(/^invalid regular expression: /, '')}` });
    throw e;
  }
}
