// Schemas shared by the platform routes: offset pagination parameters and nullable scalars.
import { Type, type TOptional, type TSchema } from 'typebox';

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

const CREDENTIAL_PARAMS = new Set(['private_token', 'access_token', 'job_token', 'sudo']);

/** The request's parameters for GitLab's Link URLs: everything but credentials, plus the route's own (`id`). */
export function linkParams(query: Record<string, unknown>, route: Record<string, unknown> = {}): Record<string, unknown> {
  const out: Record<string, unknown> = { ...route };
  for (const [k, v] of Object.entries(query)) if (v !== undefined && !CREDENTIAL_PARAMS.has(k)) out[k] = v;
  return out;
}
