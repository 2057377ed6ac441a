// Whole-response cache for hot lists: an entry is keyed by route, viewer and parameters, and is valid
// only for the table versions it was computed from (any write, on any node, makes it miss) and at
// most a few seconds (values that depend on the clock).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { stamp } from '../../db/versions.ts';
import { toQuery } from '../../lib/pagination.ts';
import { VersionedCache } from '../../lib/versioned-cache.ts';

const CACHED_HEADERS = ['x-per-page', 'x-page', 'x-next-page', 'x-prev-page', 'link', 'x-total', 'x-total-pages'];
const CREDENTIAL_PARAMS = new Set(['private_token', 'access_token', 'job_token', 'sudo', 'authenticity_token']);

export interface CacheOptions {
  /** tables whose rows the response is made of */
  tables: readonly string[];
  /** who sees this version of the response, e.g. 'admin', 'user:12' */
  viewer: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** serve `compute()` from the response cache when the tables have not changed */
    cachedResponse(req: FastifyRequest, reply: FastifyReply, opts: CacheOptions, compute: () => Promise<unknown>): Promise<FastifyReply>;
  }
}

export function responseCache(app: FastifyInstance): void {
  const cache = new VersionedCache<{ body: string; headers: [string, string][] }>(2000, 5000);
  app.decorate('cachedResponse', async function (req: FastifyRequest, reply: FastifyReply, opts: CacheOptions, compute: () => Promise<unknown>) {
    // Sudo changes who the viewer is; the viewer string already says who it is.
    const params: Record<string, unknown> = {};
    for (const [k, v] of Object.entries((req.query ?? {}) as Record<string, unknown>)) if (!CREDENTIAL_PARAMS.has(k)) params[k] = v;
    const key = `${req.routeOptions.url}|${opts.viewer}|${toQuery(params)}`;
    const st = stamp(await req.versions(), opts.tables);
    const hit = cache.get(key, st);
    if (hit) {
      for (const [k, v] of hit.headers) reply.header(k, v);
      return reply.type('application/json').send(hit.body);
    }
    const value = await compute();
    const body = String(reply.serialize(value));
    const headers: [string, string][] = [];
    for (const h of CACHED_HEADERS) {
      const v = reply.getHeader(h);
      if (v !== undefined) headers.push([h, String(v)]);
    }
    cache.set(key, st, { body, headers });
    return reply.type('application/json').send(body);
  });
}
