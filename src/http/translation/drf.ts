// Django REST framework conventions of the translation API (reference §2, §3.1, §9): links absolute
// from the request's scheme and host, `?format=` kept on every API link, page-number pagination with
// DRF's envelope and its `next`/`previous`, and the headers every response carries.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Errors } from '../../lib/errors.ts';
import type { DrfActions, DrfView } from './metadata.ts';

export const PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;
/** Weblate's LargePagination (the 4.x sizes: 100, at most 10,000): unit lists and component statistics */
export const LARGE_PAGE = { size: 100, max: 10_000 };

/** "http://host:port" of the request (DRF build_absolute_uri). */
export function origin(req: FastifyRequest): string {
  return `${req.protocol}://${req.host}`;
}

function query(req: FastifyRequest): URLSearchParams {
  const i = req.url.indexOf('?');
  return new URLSearchParams(i < 0 ? '' : req.url.slice(i + 1));
}

/** An API link: absolute, and carrying the request's `format` (DRF preserve_builtin_query_params). */
export function apiUrl(req: FastifyRequest, path: string): string {
  const format = query(req).get('format');
  return `${origin(req)}${path}${format ? `?format=${encodeURIComponent(format)}` : ''}`;
}

/** Python's urlencode(doseq=True) of the query with `page` replaced (or removed), keys sorted. */
function withPage(req: FastifyRequest, page: number | null): string {
  const q = query(req);
  const keys = [...new Set([...q.keys()].filter((k) => k !== 'page').concat(page === null ? [] : ['page']))].sort();
  const quotePlus = (s: string) =>
    encodeURIComponent(s)
      .replace(/%20/g, '+')
      .replace(/[!'()*~]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  const parts: string[] = [];
  for (const k of keys) {
    const values = k === 'page' ? [String(page)] : q.getAll(k);
    for (const v of values) parts.push(`${quotePlus(k)}=${quotePlus(v)}`);
  }
  const path = req.url.split('?')[0];
  return `${origin(req)}${path}${parts.length ? '?' + parts.join('&') : ''}`;
}

export interface Page {
  page: number;
  size: number;
  offset: number;
}

/** The requested page (404 "Invalid page." when it is not one); `page_size` falls back to the default when invalid. */
export function pageOf(req: FastifyRequest, total: number, max = MAX_PAGE_SIZE, def = PAGE_SIZE): Page {
  const q = query(req);
  const rawSize = q.get('page_size');
  let size = def;
  if (rawSize !== null && /^\d+$/.test(rawSize) && Number(rawSize) > 0) size = Math.min(Number(rawSize), max);
  const pages = Math.max(1, Math.ceil(total / size));
  const rawPage = q.get('page') ?? '1';
  const page = rawPage === 'last' ? pages : /^\d+$/.test(rawPage) ? Number(rawPage) : NaN;
  if (!Number.isInteger(page) || page < 1 || page > pages) throw Errors.raw(404, { detail: 'Invalid page.' });
  return { page, size, offset: (page - 1) * size };
}

/** DRF's list envelope. */
export function envelope<T>(req: FastifyRequest, total: number, p: Page, results: T[]) {
  const last = Math.max(1, Math.ceil(total / p.size));
  return {
    count: total,
    next: p.page < last ? withPage(req, p.page + 1) : null,
    previous: p.page > 1 ? withPage(req, p.page === 2 ? null : p.page - 1) : null,
    results,
  };
}

/**
 * The headers of every response of an endpoint (also on its errors). `allow` is what the route file
 * expects; the Allow sent is the methods the path's routes really serve (metadata.ts drfOptions sets it
 * after this hook), so a method that is not there is never announced.
 */
export function drfHeaders(allow: string) {
  return (_req: FastifyRequest, reply: FastifyReply, done: () => void) => {
    reply.header('allow', allow);
    reply.header('vary', 'Accept');
    done();
  };
}

export const ALLOW_LIST_RO = 'GET, HEAD, OPTIONS';
export const ALLOW_LIST_RW = 'GET, POST, HEAD, OPTIONS';
export const ALLOW_DETAIL_RW = 'GET, PUT, PATCH, DELETE, HEAD, OPTIONS';

/**
 * What the browsable API and OPTIONS say about an endpoint (DRF get_view_name / get_view_description):
 * `config: { api: 'translation', view: drfView('Project List', 'Translation projects API.') }`.
 * `actions` are the SimpleMetadata field descriptions OPTIONS shows authenticated callers for POST/PUT.
 */
export function drfView(name: string, description?: string, actions?: DrfActions): DrfView {
  return { name, ...(description !== undefined ? { description } : {}), ...(actions ? { actions } : {}) };
}

/** DRF replace_query_param / remove_query_param on a request path: the query re-encoded sorted by key (quote_plus). */
export function replaceQueryParam(url: string, key: string, value: string | null): string {
  const i = url.indexOf('?');
  const path = i < 0 ? url : url.slice(0, i);
  const q = new URLSearchParams(i < 0 ? '' : url.slice(i + 1));
  const quotePlus = (s: string) =>
    encodeURIComponent(s)
      .replace(/%20/g, '+')
      .replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  const keys = [...new Set([...q.keys()].filter((k) => k !== key).concat(value === null ? [] : [key]))].sort();
  const parts: string[] = [];
  for (const k of keys) for (const v of k === key ? [value as string] : q.getAll(k)) parts.push(`${quotePlus(k)}=${quotePlus(v)}`);
  return `${path}${parts.length ? '?' + parts.join('&') : ''}`;
}
