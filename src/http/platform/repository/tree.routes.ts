// Repository trees, blobs and archives (GitLab lib/api/repositories.rb): GET tree, blobs/:sha,
// blobs/:sha/raw and archive[.format]. What they read, and how, is the repository service's
// (domain/repository/tree.ts, blobs.ts, archive.ts); here are the parameters, the pages of a listing
// (serialised pages cached by tree id and URL), the archive rate limit and hotlinking, and the headers.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import type { Container } from '../../../container.ts';
import { keysetStart, pageToken, type TreeObject } from '../../../domain/repository/tree.ts';
import { BoundedMap } from '../../../lib/bounded-map.ts';
import { Errors } from '../../../lib/errors.ts';
import { DEFAULT_PER_PAGE, MAX_PER_PAGE, paginateArray, toQuery } from '../../../lib/pagination.ts';
import { FixedWindowLimiter } from '../../plugins/rate-limit.ts';
import { IdParams, linkParams, PaginationProps, ShaParams } from '../schemas/common.ts';

const TAGS = ['repositories'];

const TreeObjectSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  type: Type.String(),
  path: Type.String(),
  mode: Type.String(),
});

/**
 * Serialised pages by (listing, request URL): the URL holds every parameter the page and its Link
 * headers depend on, the listing key everything else, so an entry never goes stale.
 */
const pages = new BoundedMap<{ body: Buffer; headers: Record<string, string> }>(2_000);
const PAGE_CACHE_MAX_BYTES = 256 * 1024;

// Gitlab::NoCacheHeaders
const NO_CACHE = { 'cache-control': 'max-age=0, private, must-revalidate, no-store, no-cache', expires: 'Fri, 01 Jan 1990 00:00:00 GMT' };

// ---- archives ------------------------------------------------------------------------------------

/** Gitlab::PathRegex.archive_formats_regex: the suffixes the archive route accepts. */
const PATH_FORMATS = new Set(['zip', 'tar', 'tar.gz', 'tgz', 'gz', 'tar.bz2', 'tbz', 'tbz2', 'tb2', 'bz2']);

const HOTLINK_IMAGE = ['image/jpeg', 'image/apng', 'image/png', 'image/webp', 'image/svg+xml', 'image/*'];
const HOTLINK_MEDIA = ['video/webm', 'video/ogg', 'video/*', 'application/ogg', 'audio/webm', 'audio/ogg', 'audio/wav', 'audio/*'];
const HOTLINK_FORMATS = new Set([...HOTLINK_IMAGE, ...HOTLINK_MEDIA, 'text/css']);
const MIME = /^(?:\*\/\*|[\w.+!#$&^-]+\/(?:\*|[\w.+!#$&^-]+))$/;

/**
 * Gitlab::HotlinkingDetector: an archive fetched the way a page embeds a script, image, video or
 * style from another site gets 406 (Sec-Fetch-Mode cors, no-cors or websocket — Node's own fetch
 * sends cors unless told otherwise, as against GitLab — or a media type first in Accept, or an
 * Accept header that does not parse).
 */
function hotlinking(req: FastifyRequest): boolean {
  const mode = req.headers['sec-fetch-mode'];
  if (typeof mode === 'string' && ['cors', 'no-cors', 'websocket'].includes(mode)) return true;
  const header = String(req.headers.accept ?? '').trim();
  if (!header) return false;
  const accepts: { type: string; q: number; i: number }[] = [];
  for (const [i, part] of header.split(',').entries()) {
    const [type, ...params] = part.split(';').map((x) => x.trim().toLowerCase());
    if (!type) continue;
    if (!MIME.test(type)) return true; // Mime::Type::InvalidMimeType
    const qp = params.find((p) => p.startsWith('q='));
    accepts.push({ type, q: qp ? Number(qp.slice(2)) || 0 : 1, i });
  }
  accepts.sort((a, b) => b.q - a.q || a.i - b.i);
  if (!accepts.length) return false;
  const types = accepts.map((a) => a.type);
  if (HOTLINK_IMAGE.includes(types[0]) && types.includes('application/x-ms-application')) return false;
  return HOTLINK_FORMATS.has(types[0]);
}

// ---- schemas -------------------------------------------------------------------------------------

const ArchiveParams = Type.Object({ id: Type.String(), format: Type.String() });

// Grape's declaration order: ref, path, recursive, page, per_page, pagination, page_token.
const TreeQuery = Type.Object({
  ref: Type.Optional(Type.String()),
  path: Type.Optional(Type.String()),
  recursive: Type.Optional(Type.Boolean({ default: false })),
  ...PaginationProps,
  pagination: Type.Optional(Type.Enum(['legacy', 'keyset', 'none'], { default: 'legacy' })),
  page_token: Type.Optional(Type.String()),
});

const ArchiveQuery = Type.Object({
  sha: Type.Optional(Type.String()),
  format: Type.Optional(Type.String()),
  path: Type.Optional(Type.String()),
  include_lfs_blobs: Type.Optional(Type.Boolean({ default: true })),
  exclude_paths: Type.Optional(Type.Array(Type.String())),
});

const BlobSchema = Type.Object({ size: Type.Integer(), encoding: Type.String(), content: Type.String(), sha: Type.String() });

// ---- routes --------------------------------------------------------------------------------------

export function treeRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const config = { api: 'platform' as const, auth: 'optional' as const };
  const archiveLimiter = new FixedWindowLimiter();

  app.get(
    '/api/v4/projects/:id/repository/tree',
    { config, schema: { tags: TAGS, params: IdParams, querystring: TreeQuery, response: { 200: Type.Array(TreeObjectSchema) } } },
    async (req, reply) => {
      const ctx = await c.repository.context(req.actor, req.params.id);
      const q = req.query;
      const recursive = q.recursive === true;
      const mode = q.pagination ?? 'legacy';
      if (mode === 'none' && !recursive) throw Errors.param('pagination cannot be "none" unless "recursive" is true');

      const { path, object: tree } = await c.repository.treeAt(ctx, q.ref, q.path);

      const pageKey = `${tree.sha}\0${path}\0${recursive ? 1 : 0}\0${req.url}`;
      // a serialised body (Buffer) is sent as it is
      const raw = reply as FastifyReply;
      const cached = pages.get(pageKey);
      if (cached) return raw.headers(cached.headers).type('application/json').send(cached.body);
      const keep = (items: TreeObject[], headers: Record<string, string> = {}) => {
        const body = Buffer.from(reply.serialize(items) as string);
        if (body.length <= PAGE_CACHE_MAX_BYTES) pages.set(pageKey, { body, headers });
        return raw.headers(headers).type('application/json').send(body);
      };

      const l = await c.repository.treeEntries(ctx, tree, path, recursive);

      if (mode === 'none') return keep(l.entries);

      const self = `/api/v4/projects/${encodeURIComponent(req.params.id)}/repository/tree`;
      const params = linkParams(q as Record<string, unknown>, { id: req.params.id });
      if (mode === 'keyset') {
        let perPage = q.per_page ?? DEFAULT_PER_PAGE;
        if (perPage < 0) perPage = DEFAULT_PER_PAGE;
        if (perPage > MAX_PER_PAGE) perPage = MAX_PER_PAGE;
        const { index: start, start: name } = q.page_token ? keysetStart(l, q.page_token) : { index: 0, start: '' };
        // Gitaly's error; GitLab lets it through as a 500, a bad token is the client's mistake
        if (start < 0) throw Errors.badRequest(`could not find starting OID: ${name}`);
        const items = l.entries.slice(start, start + perPage);
        if (items.length < perPage) return keep(items);
        const next = { ...params, page: q.page ?? 1, per_page: q.per_page ?? DEFAULT_PER_PAGE, page_token: pageToken(items[items.length - 1]) };
        return keep(items, { link: `<${c.config.externalUrl}${self}?${toQuery(next)}>; rel="next"` });
      }
      const page = paginateArray(c.config.externalUrl, { path: self, params, page: q.page, per_page: q.per_page }, l.entries);
      return keep(page.items, page.headers);
    },
  );

  app.get('/api/v4/projects/:id/repository/blobs/:sha', { config, schema: { tags: TAGS, params: ShaParams, response: { 200: BlobSchema } } }, async (req) => {
    const ctx = await c.repository.context(req.actor, req.params.id);
    const info = await c.repository.blob(ctx, req.params.sha);
    const content = await c.repository.blobContent(ctx, info);
    return { size: info.size, encoding: 'base64', content: content.toString('base64'), sha: info.sha };
  });

  app.get('/api/v4/projects/:id/repository/blobs/:sha/raw', { config, schema: { tags: TAGS, params: ShaParams } }, async (req, reply) => {
    const ctx = await c.repository.context(req.actor, req.params.id);
    const info = await c.repository.blob(ctx, req.params.sha);
    reply.headers(NO_CACHE);
    const raw = await c.repository.rawBlob(ctx, info, req.method === 'HEAD');
    reply.type(raw.type).header('content-disposition', raw.disposition);
    if (raw.length !== undefined) reply.header('content-length', String(raw.length));
    return reply.send(raw.body ?? undefined);
  });

  const archive = async (req: FastifyRequest<{ Params: { id: string; format?: string }; Querystring: Static<typeof ArchiveQuery> }>, reply: FastifyReply) => {
    const ctx = await c.repository.context(req.actor, req.params.id);
    // check_archive_rate_limit!: per project and user (per project and address when anonymous)
    const limit = c.config.archiveRateLimit;
    if (limit > 0) {
      const who = req.actor.user ? `user:${req.actor.user.id}` : `ip:${req.ip}`;
      const now = Date.now();
      const hit = archiveLimiter.hit(`${ctx.project.id}:${who}`, limit, 60, now);
      if (!hit.allowed) {
        throw Errors.raw(
          429,
          { message: { error: 'This archive has been requested too many times. Try again later.' } },
          { 'retry-after': String(Math.max(1, Math.ceil((hit.resetAt - now) / 1000))) },
        );
      }
    }
    if (hotlinking(req)) throw Errors.raw(406, { message: '406 Not Acceptable' });

    const q = req.query;
    const { headers, body } = await c.repository.archive(
      ctx,
      { format: req.params.format ?? q.format, sha: q.sha, path: q.path, excludePaths: q.exclude_paths },
      req.method === 'HEAD',
    );
    return reply.headers(headers).send(body);
  };

  app.get('/api/v4/projects/:id/repository/archive', { config, schema: { tags: TAGS, params: IdParams, querystring: ArchiveQuery } }, archive);
  app.get(
    '/api/v4/projects/:id/repository/archive.:format',
    {
      config,
      schema: { tags: TAGS, params: ArchiveParams, querystring: ArchiveQuery },
      // a suffix outside Gitlab::PathRegex.archive_formats_regex matches no route in GitLab
      preValidation: async (req) => {
        if (!PATH_FORMATS.has((req.params as { format: string }).format)) throw Errors.raw(404, { error: '404 Not Found' });
      },
    },
    archive,
  );
}
