// Project exports (GitLab lib/api/project_export.rb): POST /projects/:id/export queues an export,
// GET /projects/:id/export shows its status, GET /projects/:id/export/download sends the archive.
// Every route first checks what GitLab's `before` does — exports enabled (else 404 "404 Not Found"),
// the project, admin_project — and only then the parameters (Grape validates after `before`).
// Registered in src/http/platform/import-export/index.ts.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Container } from '../../../container.ts';
import type { ExportRequest } from '../../../domain/import-export/export/export.service.ts';
import { Errors } from '../../../lib/errors.ts';
import { ProjectExportStatusSchema, toProjectExportStatus } from '../entities/project-export.entity.ts';
import { IdParams } from '../schemas/common.ts';

const TAGS = ['project_export'];
const config = { api: 'platform' as const, auth: 'user' as const };

const isPlain = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Grape's checks of POST /projects/:id/export's parameters: `description` (String), `upload` (Hash) with
 * `upload[url]` required whenever `upload` is given and `upload[http_method]` ∈ PUT, POST (default PUT).
 * JSON bodies nest `upload`; form bodies arrive nested by qs (`upload[url]=…`); multipart fields keep
 * their bracketed names and are nested here.
 */
export function exportParams(raw: unknown): ExportRequest {
  const body: Record<string, unknown> = isPlain(raw) ? { ...raw } : {};
  for (const key of ['url', 'http_method']) {
    const flat = `upload[${key}]`;
    if (flat in body) {
      const upload = isPlain(body.upload) ? { ...body.upload } : {};
      upload[key] ??= body[flat];
      body.upload = upload;
      delete body[flat];
    }
  }
  const errors: string[] = [];
  const out: ExportRequest = {};
  const scalar = (v: unknown) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
  if (body.description !== undefined && body.description !== null) {
    if (scalar(body.description)) out.description = String(body.description);
    else errors.push('description is invalid');
  }
  if (body.upload !== undefined && body.upload !== null) {
    if (!isPlain(body.upload)) errors.push('upload is invalid');
    else {
      const { url, http_method } = body.upload;
      let method: string = 'PUT';
      if (url === undefined || url === null) errors.push('upload[url] is missing');
      else if (!scalar(url)) errors.push('upload[url] is invalid');
      if (http_method !== undefined && http_method !== null) {
        if (!scalar(http_method)) errors.push('upload[http_method] is invalid');
        else if (String(http_method) !== 'PUT' && String(http_method) !== 'POST') errors.push('upload[http_method] does not have a valid value');
        else method = String(http_method);
      }
      if (!errors.length) out.upload = { url: String(url), http_method: method as 'PUT' | 'POST' };
    }
  }
  if (errors.length) throw Errors.param(errors.join(', '));
  return out;
}

export function exportRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const svc = () => c.importExport.exports;

  app.get('/api/v4/projects/:id/export', { config, schema: { tags: TAGS, params: IdParams, response: { 200: ProjectExportStatusSchema } } }, async (req) => {
    const { project, namespace, status } = await svc().status(req.actor, req.params.id);
    return toProjectExportStatus(project, namespace, await svc().namespaceFullName(namespace), status, c.config.externalUrl);
  });

  app.get('/api/v4/projects/:id/export/download', { config, schema: { tags: TAGS, params: IdParams } }, async (req, reply) => {
    const d = await svc().download(req.actor, req.params.id);
    if (d.redirect) return reply.redirect(d.redirect, 302);
    return reply
      .header('content-type', 'application/gzip')
      .header('content-disposition', `attachment; filename="${d.fileName.replace(/["\\\r\n]/g, '_')}"`)
      .header('content-length', String(d.size))
      .send(d.stream);
  });

  app.post('/api/v4/projects/:id/export', { config, schema: { tags: TAGS, params: IdParams } }, async (req, reply) => {
    await svc().authorize(req.actor, req.params.id);
    await svc().request(req.actor, req.params.id, exportParams(req.body));
    return reply.code(202).send({ message: '202 Accepted' });
  });
}
