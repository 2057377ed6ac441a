// Offset pagination exactly as GitLab's (reference §1.1) and cursor keyset (§1.3).
import qs from 'qs';
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import { Errors } from './errors.ts';

export const MAX_PER_PAGE = 100;
export const DEFAULT_PER_PAGE = 20;
export const MAX_COUNT = 10_000;

export interface PageRequest {
  /** the request path, without query */
  path: string;
  /** every parameter of the request (query and route), for the Link header */
  params: Record<string, unknown>;
  page?: number;
  per_page?: number;
}

export interface PageResult<T> {
  items: T[];
  headers: Record<string, string>;
}

/** Rails `to_query`: keys sorted, arrays as key[]=v, CGI escaping. */
export function toQuery(params: Record<string, unknown>): string {
  return qs.stringify(params, { arrayFormat: 'brackets', sort: (a, b) => (a < b ? -1 : a > b ? 1 : 0), format: 'RFC1738', skipNulls: true });
}

export function pageParams(req: PageRequest): { page: number; perPage: number } {
  let page = req.page ?? 1;
  if (page <= 0) page = 1;
  let perPage = req.per_page ?? DEFAULT_PER_PAGE;
  if (perPage < 0) perPage = DEFAULT_PER_PAGE;
  if (perPage > MAX_PER_PAGE) perPage = MAX_PER_PAGE;
  return { page, perPage };
}

/**
 * Runs `query` (already ordered) with offset pagination and builds the headers.
 * `offsetLimit` enforces GitLab's 405 for types that must use keyset beyond that offset.
 */
export async function offsetPaginate<DB, TB extends keyof DB, O>(
  db: Kysely<any>,
  externalUrl: string,
  req: PageRequest,
  query: SelectQueryBuilder<DB, TB, O>,
  opts: { offsetLimit?: { limit: number; type: string } } = {},
): Promise<PageResult<O>> {
  const { result, headers } = await offsetPaginateWith(db, externalUrl, req, query, async (items) => items, opts);
  return { items: result, headers };
}

/**
 * offsetPaginate, with `present` turning the page's rows into what the response needs while the count
 * behind X-Total still runs (a page whose rows need more queries does not wait for the count first).
 */
export async function offsetPaginateWith<DB, TB extends keyof DB, O, R>(
  db: Kysely<any>,
  externalUrl: string,
  req: PageRequest,
  query: SelectQueryBuilder<DB, TB, O>,
  present: (items: O[]) => Promise<R>,
  opts: { offsetLimit?: { limit: number; type: string }; narrow?: boolean; byIds?: (ids: number[]) => Promise<O[]> } = {},
): Promise<{ result: R; headers: Record<string, string> }> {
  const { page, perPage } = pageParams(req);
  // GitLab multiplies the requested values (Grape defaults 1 and 20), before per_page is capped:
  // per_page=1000&page=51 is refused although it would read only rows 5,001-5,100.
  if (opts.offsetLimit && (req.page ?? 1) * (req.per_page ?? DEFAULT_PER_PAGE) > opts.offsetLimit.limit) {
    throw Errors.raw(405, {
      error: `Offset pagination has a maximum allowed offset of ${opts.offsetLimit.limit} for requests that return objects of type ${opts.offsetLimit.type}. Remaining records can be retrieved using keyset pagination.`,
    });
  }
  const pageOf = <Q extends SelectQueryBuilder<any, any, any>>(q: Q): Q => q.limit(perPage + 1).offset((page - 1) * perPage) as Q;
  const byIds = opts.byIds;
  if (opts.narrow) {
    // a query known to match few rows (or to read every row it matches to sort them): the page counts them too
    // (`count(*) over ()`, before the limit), where a separate count would read them again; a page past the end
    // counts apart. With `byIds`, the page's ids and the count, then the rows by key.
    const base = query as unknown as SelectQueryBuilder<any, any, any>;
    const counting = await pageOf(
      (byIds ? base.clearSelect().select(sql<number>`id`.as('id')) : base).select(sql<number | string>`count(*) over ()`.as('__total')),
    ).execute();
    const counted = counting.length ? Number(counting[0].__total) : page === 1 ? 0 : await countWithLimit(db, query);
    const rows = (byIds ? await byIds(counting.map((r) => Number(r.id))) : counting) as (O & { __total?: number | string })[];
    for (const row of rows) delete row.__total;
    const more = rows.length > perPage;
    const result = await present(more ? rows.slice(0, perPage) : rows);
    const total = counted === null || counted > MAX_COUNT ? null : counted;
    return { result, headers: offsetHeaders(externalUrl, req, page, perPage, total, more) };
  }
  let hasNext = false;
  // the page's ids first (the query's own table's `id`), then their rows by key
  const pageRows: Promise<O[]> = byIds
    ? pageOf((query as unknown as SelectQueryBuilder<any, any, any>).clearSelect().select(sql<number>`id`.as('id')))
        .execute()
        .then((rows: { id: number }[]) => byIds(rows.map((r) => r.id)))
    : (pageOf(query as unknown as SelectQueryBuilder<any, any, any>).execute() as Promise<O[]>);
  const [result, total] = await Promise.all([
    pageRows.then((rows) => {
      hasNext = rows.length > perPage;
      return present(hasNext ? rows.slice(0, perPage) : rows);
    }),
    countWithLimit(db, query),
  ]);
  return { result, headers: offsetHeaders(externalUrl, req, page, perPage, total, hasNext) };
}

/** count(*) of the query, stopping at MAX_COUNT + 1; null when above MAX_COUNT. */
async function countWithLimit<DB, TB extends keyof DB, O>(db: Kysely<any>, query: SelectQueryBuilder<DB, TB, O>): Promise<number | null> {
  const inner = (query as unknown as SelectQueryBuilder<any, any, any>)
    .clearSelect()
    .clearOrderBy()
    .select(sql.lit(1).as('one'))
    .limit(MAX_COUNT + 1);
  const row = await db
    .selectFrom(inner.as('limited'))
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const n = Number(row.n);
  return n > MAX_COUNT ? null : n;
}

export function offsetHeaders(
  externalUrl: string,
  req: PageRequest,
  page: number,
  perPage: number,
  total: number | null,
  hasNext: boolean,
): Record<string, string> {
  const totalPages = total === null ? null : Math.max(Math.ceil(total / perPage), 1);
  const outOfRange = totalPages !== null && page > totalPages;
  const next = hasNext ? page + 1 : null;
  const prev = page > 1 && !outOfRange ? page - 1 : null;
  const link = (p: number) => {
    const params = { ...req.params, page: p, per_page: req.per_page ?? DEFAULT_PER_PAGE };
    return `<${externalUrl}${req.path}?${toQuery(params)}>`;
  };
  const links: string[] = [];
  if (prev) links.push(`${link(prev)}; rel="prev"`);
  if (next) links.push(`${link(next)}; rel="next"`);
  links.push(`${link(1)}; rel="first"`);
  if (totalPages !== null) links.push(`${link(totalPages)}; rel="last"`);
  const h: Record<string, string> = {
    'x-per-page': String(perPage),
    'x-page': String(page),
    'x-next-page': next ? String(next) : '',
    'x-prev-page': prev ? String(prev) : '',
    link: links.join(', '),
  };
  if (total !== null) {
    h['x-total'] = String(total);
    h['x-total-pages'] = String(totalPages);
  }
  return h;
}

/** Offset pagination over an in-memory array (for small computed lists). */
export function paginateArray<T>(externalUrl: string, req: PageRequest, all: T[]): PageResult<T> {
  const { page, perPage } = pageParams(req);
  const start = (page - 1) * perPage;
  const items = all.slice(start, start + perPage);
  const total = all.length > MAX_COUNT ? null : all.length;
  return { items, headers: offsetHeaders(externalUrl, req, page, perPage, total, start + perPage < all.length) };
}

export function encodeCursor(values: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(values)).toString('base64');
}

export function decodeCursor(cursor: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64').toString('utf8'));
    return v && typeof v === 'object' && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

/** Link header for a keyset page: rel="next" only, when there is a next page. */
export function keysetHeaders(externalUrl: string, req: PageRequest, nextCursor: string | null): Record<string, string> {
  if (!nextCursor) return {};
  const params = { ...req.params, cursor: nextCursor, per_page: req.per_page ?? DEFAULT_PER_PAGE };
  return { link: `<${externalUrl}${req.path}?${toQuery(params)}>; rel="next"` };
}
