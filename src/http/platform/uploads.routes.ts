// Project uploads (GitLab lib/api/markdown_uploads.rb) and their web paths:
//   POST   /api/v4/projects/:id/uploads                      multipart `file` → 201 ProjectUpload
//   GET    /api/v4/projects/:id/uploads                      Maintainers: MarkdownUploadAdmin list
//   GET    /api/v4/projects/:id/uploads/:upload_id           Maintainers: the file
//   GET    /api/v4/projects/:id/uploads/:secret/:filename    whoever sees the project: the file
//   DELETE /api/v4/projects/:id/uploads/:upload_id           Maintainers
//   DELETE /api/v4/projects/:id/uploads/:secret/:filename    Maintainers
//   GET    /-/project/:id/uploads/:secret/:filename          web (session cookie or token), with the
//   GET    /<namespace>/<project>/uploads/:secret/:filename  project's visibility: otherwise 404
// The size limit is max_attachment_size (MiB); the body is spooled to a temporary file (readUpload), then
// stored in the blob store. Files are served inline only when they are raster images, video or audio.
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import type { UploadRow } from '../../db/schema.ts';
import { isInt32 } from '../../db/sql.ts';
import { MovedError } from '../../domain/access/resolve.ts';
import { routeScopes } from '../../domain/tokens/scopes.ts';
import { markdownLink, markdownName, servedAs, uploadUrl, type UploadsService } from '../../domain/uploads/uploads.service.ts';
import { DomainError, Errors } from '../../lib/errors.ts';
import { offsetPaginate } from '../../lib/pagination.ts';
import { credentialsOf } from '../plugins/auth.ts';
import { multipartPassThrough, readUpload, removeUpload } from './import-export/upload.ts';
import { IdParams, PaginationProps } from './schemas/common.ts';

const TAGS = ['projects'];

export const ProjectUploadSchema = Type.Object({
  id: Type.Integer(),
  alt: Type.String(),
  url: Type.String(),
  full_path: Type.String(),
  markdown: Type.String(),
});

const UserSafeSchema = Type.Object({ id: Type.Integer(), username: Type.String(), name: Type.String() });

export const MarkdownUploadAdminSchema = Type.Object({
  id: Type.Integer(),
  size: Type.Integer(),
  filename: Type.String(),
  created_at: Type.String(),
  uploaded_by: Type.Unsafe<{ id: number; username: string; name: string } | null>({ ...UserSafeSchema, type: ['object', 'null'] }),
});

const UploadIdParams = Type.Object({ id: Type.String(), upload_id: Type.Integer() });
const SecretParams = Type.Object({ id: Type.String(), secret: Type.String(), filename: Type.String() });

export function toProjectUpload(row: UploadRow): Record<string, unknown> {
  return {
    id: row.id,
    alt: markdownName(row.filename),
    url: uploadUrl(row),
    full_path: `/-/project/${row.project_id}/uploads/${row.secret}/${row.filename}`,
    markdown: markdownLink(row),
  };
}

/** Filename for Content-Disposition: ASCII fallback plus RFC 5987 for the rest. */
function disposition(kind: 'inline' | 'attachment', filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/**
 * Sends a stored upload. The API (present_carrierwave_file!) always answers an attachment; the web path
 * shows safe media inline. Never rendered as a document of our origin: nosniff and a sandboxing CSP.
 */
async function sendUpload(svc: UploadsService, reply: FastifyReply, row: UploadRow, web: boolean, head: boolean): Promise<FastifyReply> {
  const served = servedAs(row.filename);
  const inline = web && served.inline;
  reply
    .header('content-type', inline ? served.contentType : 'application/octet-stream')
    .header('content-disposition', disposition(inline ? 'inline' : 'attachment', row.filename))
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', "default-src 'none'; sandbox")
    .header('cache-control', 'max-age=0, private, must-revalidate')
    .header('content-length', String(row.size));
  if (head) return reply.send();
  const body = await svc.open(row);
  if (!body) {
    reply.removeHeader('content-length').removeHeader('content-disposition');
    throw Errors.notFound();
  }
  return reply.send(body);
}

export function uploadsRoutes(app: FastifyInstance, c: Container): void {
  const svc = c.uploads;
  const api = { api: 'platform' as const };
  const user = { api: 'platform' as const, auth: 'user' as const };
  const knownUploadId = (req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
    const id = (req.params as { upload_id?: number }).upload_id;
    done(id !== undefined && !isInt32(id) ? Errors.recordNotFound() : undefined);
  };

  // The multipart body is read by readUpload (spooled, the limit enforced while reading).
  app.register(async (child) => {
    child.removeContentTypeParser('multipart/form-data');
    child.addContentTypeParser('multipart/form-data', multipartPassThrough);
    child.post(
      '/api/v4/projects/:id/uploads',
      { config: user, schema: { tags: TAGS, params: IdParams, response: { 201: ProjectUploadSchema } } },
      async (req, reply) => {
        const p = await svc.project(req.actor, (req.params as { id: string }).id);
        const tmpDir = path.join(c.config.dataDir, 'tmp');
        const up = await readUpload(req, { tmpDir, maxBytes: await svc.maxBytes() });
        try {
          const view = await svc.create(req.actor, p, up.file!);
          return reply.code(201).send(toProjectUpload(view.row));
        } finally {
          await removeUpload(up);
        }
      },
    );
  });

  app.get(
    '/api/v4/projects/:id/uploads',
    {
      config: user,
      schema: { tags: TAGS, params: IdParams, querystring: Type.Object(PaginationProps), response: { 200: Type.Array(MarkdownUploadAdminSchema) } },
    },
    async (req, reply) => {
      const { id } = req.params as { id: string };
      const q = req.query as { page?: number; per_page?: number };
      const query = await svc.listQuery(req.actor, id);
      const result = await offsetPaginate(
        c.db.kysely,
        c.config.externalUrl,
        {
          path: `/api/v4/projects/${encodeURIComponent(id)}/uploads`,
          params: { id, ...(q.page !== undefined ? { page: q.page } : {}), ...(q.per_page !== undefined ? { per_page: q.per_page } : {}) },
          page: q.page,
          per_page: q.per_page,
        },
        query,
      );
      reply.headers(result.headers);
      return result.items.map((r) => ({
        id: r.id,
        size: r.size,
        filename: r.filename,
        created_at: r.created_at,
        uploaded_by:
          r.uploaded_by_user_id !== null && r.user_username !== null ? { id: r.uploaded_by_user_id, username: r.user_username, name: r.user_name ?? '' } : null,
      }));
    },
  );

  app.get(
    '/api/v4/projects/:id/uploads/:upload_id',
    { config: user, preHandler: knownUploadId, schema: { tags: TAGS, params: UploadIdParams } },
    async (req, reply) => {
      const { id, upload_id } = req.params as { id: string; upload_id: number };
      return sendUpload(svc, reply, await svc.byId(req.actor, id, upload_id), false, req.method === 'HEAD');
    },
  );

  app.get('/api/v4/projects/:id/uploads/:secret/:filename', { config: api, schema: { tags: TAGS, params: SecretParams } }, async (req, reply) => {
    const { id, secret, filename } = req.params as { id: string; secret: string; filename: string };
    const p = await c.resolve.project(req.actor, id);
    const row = await svc.bySecret(p.project, secret, filename);
    if (!row) throw Errors.notFound();
    return sendUpload(svc, reply, row, false, req.method === 'HEAD');
  });

  app.delete(
    '/api/v4/projects/:id/uploads/:upload_id',
    { config: user, preHandler: knownUploadId, schema: { tags: TAGS, params: UploadIdParams } },
    async (req, reply) => {
      const { id, upload_id } = req.params as { id: string; upload_id: number };
      await svc.deleteById(req.actor, id, upload_id);
      return reply.code(204).send();
    },
  );

  app.delete('/api/v4/projects/:id/uploads/:secret/:filename', { config: user, schema: { tags: TAGS, params: SecretParams } }, async (req, reply) => {
    const { id, secret, filename } = req.params as { id: string; secret: string; filename: string };
    await svc.deleteBySecret(req.actor, id, secret, filename);
    return reply.code(204).send();
  });

  // ---- the web paths -------------------------------------------------------------------------------

  const web = { api: 'web' as const };
  const notFound = (reply: FastifyReply) => reply.code(404).type('text/plain').send('Not Found');

  const serveWeb = async (req: FastifyRequest, reply: FastifyReply, project: string, secret: string, filename: string) => {
    let actor = req.actor;
    // a job token opens only GitLab's job-token endpoints and git over HTTP: here it is no credential
    const { jobToken: _ignored, ...creds } = credentialsOf(req);
    try {
      actor = await c.auth.authenticate(creds, routeScopes('GET'));
    } catch {
      return notFound(reply); // a bad credential finds nothing, as for anyone without access
    }
    try {
      const p = await c.resolve.project(actor, project);
      const row = await svc.bySecret(p.project, secret, filename);
      if (!row) return notFound(reply);
      return await sendUpload(svc, reply, row, true, req.method === 'HEAD');
    } catch (e) {
      if (e instanceof MovedError || (e instanceof DomainError && e.status === 404)) return notFound(reply);
      throw e;
    }
  };

  app.get('/-/project/:id/uploads/:secret/:filename', { config: web }, async (req, reply) => {
    const { id, secret, filename } = req.params as { id: string; secret: string; filename: string };
    if (!/^\d+$/.test(id)) return notFound(reply);
    return serveWeb(req, reply, id, secret, filename);
  });

  // /<namespace>[/<subgroup>…]/<project>/uploads/<secret>/<filename>, up to 8 levels of groups
  for (let depth = 2; depth <= 9; depth++) {
    const segs = Array.from({ length: depth }, (_, i) => `:p${i}`);
    app.get(`/${segs.join('/')}/uploads/:secret/:filename`, { config: web }, async (req, reply) => {
      const params = req.params as Record<string, string>;
      const parts = segs.map((_, i) => params[`p${i}`]);
      if (parts[0] === '-' || parts[0] === 'api' || parts.some((s) => !s || s.startsWith('.'))) return notFound(reply);
      return serveWeb(req, reply, parts.join('/'), params.secret, params.filename);
    });
  }
}
