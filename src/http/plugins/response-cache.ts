// Whole-response cache for hot lists: an entry is keyed by route, viewer and parameters, and is valid
// only for the table versions it was computed from (any write, on any node, makes it miss) and at
// most a few seconds (values that depend on the clock).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { stamp } from '../../db/versions.ts';
import { VersionedCache } from '../../lib/versioned-cache.ts';
import { responseCacheRequests } from '../../metrics/registry.ts';

/** the response cache's bodies together (an entry of more than an eighth of it is not kept) */
const RESPONSE_CACHE_BYTES = 64 * 1024 * 1024;
const CACHED_HEADERS = ['x-per-page', 'x-page', 'x-next-page', 'x-prev-page', 'link', 'x-total', 'x-total-pages'];
const CREDENTIAL_PARAM = /^(private_token|access_token|job_token|sudo|authenticity_token)=/;

/** The raw query string without credentials (parameter order matters: a different order only misses). */
function cacheableQuery(url: string): string {
  const i = url.indexOf('?');
  if (i < 0) return '';
  const q = url.slice(i + 1);
  if (!/(?:^|&)(private_token|access_token|job_token|sudo|authenticity_token)=/.test(q)) return q;
  return q
    .split('&')
    .filter((p) => !CREDENTIAL_PARAM.test(p))
    .join('&');
}

export interface CacheOptions {
  /** tables whose rows the response is made of */
  tables: readonly string[];
  /** who sees this version of the response, e.g. 'admin', 'user:12' */
  viewer: string;
  /** how the value becomes the body (default: the route's serializer) */
  serialize?: (value: unknown) => string;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** serve `compute()` from the response cache when the tables have not changed */
    cachedResponse(req: FastifyRequest, reply: FastifyReply, opts: CacheOptions, compute: () => Promise<unknown>): Promise<FastifyReply>;
  }
}

type Entry = { body: Buffer; headers: [string, string][] };

export function responseCache(app: FastifyInstance): void {
  // Bodies are kept as Buffers: Node would otherwise encode the same string to UTF-8 on every response.
  // At most RESPONSE_CACHE_BYTES of them: requests with ever new query strings only evict older entries.
  const cache = new VersionedCache<Entry>(2000, 5000, { size: (e) => e.body.length, maxSize: RESPONSE_CACHE_BYTES });
  // Misses of the same key and versions while one is being computed wait for it rather than compute it
  // again: after a write, every connection reading the list would otherwise compute it at once, and
  // with writes every 100 ms a slow list (PostgreSQL) was never served from the cache at all.
  const computing = new Map<string, Promise<Entry>>();
  const send = (reply: FastifyReply, e: Entry) => {
    for (const [k, v] of e.headers) reply.header(k, v);
    return reply.type('application/json').send(e.body);
  };
  app.decorate('cachedResponse', async (req: FastifyRequest, reply: FastifyReply, opts: CacheOptions, compute: () => Promise<unknown>) => {
    // Sudo changes who the viewer is; the viewer string already says who it is.
    const key = `${req.routeOptions.url}|${opts.viewer}|${cacheableQuery(req.url)}`;
    const st = stamp(await req.versions(), opts.tables);
    const route = req.routeOptions.url ?? '';
    const hit = cache.get(key, st);
    if (hit) {
      responseCacheRequests.inc({ route, result: 'hit' });
      return send(reply, hit);
    }
    const flight = `${key}\0${st}`;
    const running = computing.get(flight);
    if (running) {
      const shared = await running.catch(() => null);
      if (shared) {
        responseCacheRequests.inc({ route, result: 'shared' });
        return send(reply, shared);
      }
    }
    responseCacheRequests.inc({ route, result: 'miss' });
    const entry = (async (): Promise<Entry> => {
      const value = await compute();
      const body = Buffer.from(opts.serialize ? opts.serialize(value) : String(reply.serialize(value)));
      const headers: [string, string][] = [];
      for (const h of CACHED_HEADERS) {
        const v = reply.getHeader(h);
        if (v !== undefined) headers.push([h, String(v)]);
      }
      cache.set(key, st, { body, headers });
      return { body, headers };
    })();
    if (!running) computing.set(flight, entry);
    try {
      return reply.type('application/json').send((await entry).body);
    } finally {
      if (computing.get(flight) === entry) computing.delete(flight);
    }
  });
}
