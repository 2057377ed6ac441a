// The request-parameter atoms of the platform routes, declared once: path parameters, enums, Grape's
// boolean words and date coercions, pagination parameters, nullable scalars and the Link URLs' parameters.
import { Type, type TOptional, type TSchema } from 'typebox';
import { Errors } from '../../../lib/errors.ts';
import { isDate, parseDateTime } from '../../../lib/time.ts';

/**
 * Grape's `use :pagination` (reference §1.1): page and per_page are integers (`abc` → "page is invalid"),
 * per_page=0 → "per_page has a value not allowed". Negative and too-large values are corrected by
 * lib/pagination.ts, not refused. No defaults here: the helpers apply them.
 */
export const PaginationProps = {
  page: Type.Optional(Type.Integer()),
  per_page: Type.Optional(Type.Integer({ not: { const: 0 } })),
};

export const PaginationQuery = Type.Object(PaginationProps);

/*
 * `type: [x, 'null']` rather than a union: fast-json-stringify serialises a type list inline, while
 * an anyOf is checked branch by branch at run time (slow on long lists).
 */
export const NullableString = Type.Unsafe<string | null>({ type: ['string', 'null'] });
export const NullableInteger = Type.Unsafe<number | null>({ type: ['integer', 'null'] });
export const NullableBoolean = Type.Unsafe<boolean | null>({ type: ['boolean', 'null'] });

/** Optional for every property of a properties map (responses whose fields depend on the viewer). */
export function optionalAll<P extends Record<string, TSchema>>(props: P): { [K in keyof P]: TOptional<P[K]> } {
  const out: Record<string, TSchema> = {};
  for (const [k, v] of Object.entries(props)) out[k] = Type.Optional(v);
  return out as { [K in keyof P]: TOptional<P[K]> };
}

/**
 * The query parameters that carry credentials, never echoed into Link URLs. Most lists also leave
 * `sudo` out; the users and projects lists keep it (`TOKEN_PARAMS`), as GitLab, which rebuilds its Link
 * URLs from every parameter, keeps all of them.
 */
export const CREDENTIAL_PARAMS: ReadonlySet<string> = new Set(['private_token', 'access_token', 'job_token', 'sudo']);
export const TOKEN_PARAMS: ReadonlySet<string> = new Set(['private_token', 'access_token', 'job_token']);

/** The request's parameters for GitLab's Link URLs: everything but `dropped` (credentials), plus the route's own (`id`). */
export function linkParams(
  query: Record<string, unknown>,
  route: Record<string, unknown> = {},
  dropped: ReadonlySet<string> = CREDENTIAL_PARAMS,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...route };
  for (const [k, v] of Object.entries(query)) if (v !== undefined && !dropped.has(k)) out[k] = v;
  return out;
}

/** A list route's page request: its path, the request's parameters (query and route) for the Link URLs, page and per_page. */
export function pageRequestOf(req: { url: string; query: unknown; params: unknown }): {
  path: string;
  params: Record<string, unknown>;
  page?: number;
  per_page?: number;
} {
  const q = (req.query ?? {}) as Record<string, unknown> & { page?: number; per_page?: number };
  return { path: req.url.split('?')[0]!, params: linkParams(q, req.params as Record<string, unknown>), page: q.page, per_page: q.per_page };
}

// ---- path parameters: one declaration per shape, named after what the route addresses ----

/** A project or group (its id or its URL-encoded full path), or a resource whose route reads the string `id` itself. */
export const IdParams = Type.Object({ id: Type.String() });
/** A user, runner or job: a number, anything else is "id is invalid". */
export const IntegerIdParams = Type.Object({ id: Type.Integer() });
/** API::USER_REQUIREMENTS: a user by id or username (no slash). */
export const UserIdParams = Type.Object({ user_id: Type.String() });
/** A user by id only: anything else is "user_id is invalid". */
export const IntegerUserIdParams = Type.Object({ user_id: Type.Integer() });
/** A commit of a project. */
export const ShaParams = Type.Object({ id: Type.String(), sha: Type.String() });
/** A merge request of a project. */
export const MergeRequestParams = Type.Object({ id: Type.String(), merge_request_iid: Type.Integer() });

// ---- query and body values ----

/** An optional String parameter with Grape `values:` (and its default, when it has one). */
export const Enum = <T extends string>(values: readonly T[], def?: T) =>
  Type.Optional(Type.Unsafe<T>(def === undefined ? { type: 'string', enum: [...values] } : { type: 'string', enum: [...values], default: def }));

/** The words Grape's Boolean coercion reads as true and as false (compared in lower case). */
export const GRAPE_TRUE: ReadonlySet<string> = new Set(['1', 'true', 't', 'yes', 'y', 'on']);
export const GRAPE_FALSE: ReadonlySet<string> = new Set(['0', 'false', 'f', 'no', 'n', 'off']);

/** Grape's DateTime coercion: ISO 8601 or a date, else "<name> is invalid". */
export function dateTimeParam(value: string | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  const iso = parseDateTime(value);
  if (!iso) throw Errors.param(`${name} is invalid`);
  return iso;
}

/**
 * The calendar date of a date text as Ruby reads one (Grape's Date coercion, ActiveRecord's cast of a String into a
 * date column): YYYY-MM-DD, possibly followed by a time, whose date is taken as written; null when it is none.
 */
export function dateOf(value: string): string | null {
  const m = /^(\d{4})-?(\d{2})-?(\d{2})(?:[T ][0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/.exec(value.trim());
  const date = m ? `${m[1]}-${m[2]}-${m[3]}` : '';
  return m && isDate(date) ? date : null;
}

/** Grape's Date coercion (Date.parse): a calendar date, possibly followed by a time; else "<name> is invalid". */
export function dateParam(value: string | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  const date = dateOf(value);
  if (date === null) throw Errors.param(`${name} is invalid`);
  return date;
}
