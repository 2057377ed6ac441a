// What the translation routes share: route config, request bodies, the changes filters (reference §7.1).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql, type SelectQueryBuilder } from 'kysely';
import type { Container } from '../../container.ts';
import type { Database, TranslationChangeRow } from '../../db/schema.ts';
import { ACTION_NAMES } from '../../domain/translation/changes/actions.ts';
import { Errors } from '../../lib/errors.ts';
import { drfHeaders, drfView, envelope, pageOf } from './drf.ts';
import { changePaths, sendJson, Wire } from './serializers.ts';

/** Route options of a translation endpoint: its Allow header and its DRF view name. */
export function view(allow: string, name: string, description?: string) {
  return { config: { api: 'translation' as const, auth: 'optional' as const, view: drfView(name, description) }, onRequest: drfHeaders(allow) };
}

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

/** The filters of a changes list: user, action (repeatable, OR), timestamp_after/before (inclusive). */
export function changesFilter<O>(req: FastifyRequest, q: SelectQueryBuilder<Database, 'translation_changes', O>) {
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
  if (actions.length) q = q.where('translation_changes.action', 'in', actions.map(Number));
  const user = one(query.user);
  if (user) q = q.where('translation_changes.user_id', '=', sql<number>`(select id from users where username = ${user})`);
  if (afterIso) q = q.where('translation_changes.timestamp', '>=', afterIso);
  if (beforeIso) q = q.where('translation_changes.timestamp', '<=', beforeIso);
  return q;
}

/** A page of change records, newest first, as Weblate lists them. */
export async function changesList(
  c: Container,
  req: FastifyRequest,
  reply: FastifyReply,
  base: SelectQueryBuilder<Database, 'translation_changes', object>,
): Promise<FastifyReply> {
  const filtered = changesFilter(req, base);
  const { n } = await filtered.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const page = pageOf(req, Number(n));
  const rows = (await filtered.selectAll('translation_changes').orderBy('translation_changes.timestamp', 'desc').orderBy('translation_changes.id', 'desc').limit(page.size).offset(page.offset).execute()) as TranslationChangeRow[];
  const wire = new Wire(req, c);
  await wire.loadUsers(rows.flatMap((r) => [r.user_id, r.author_id]));
  const paths = await changePaths(c, rows);
  return sendJson(reply, envelope(req, Number(n), page, rows.map((r) => wire.change(r, paths))));
}
