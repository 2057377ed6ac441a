// Single-relation imports (GitLab lib/api/project_import.rb `import-relation` and `:id/relation-imports`,
// Entities::RelationImportTracker). Registered in
// src/http/platform/import-export/index.ts.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Container } from '../../../container.ts';
import { isImportableRelation } from '../../../domain/import-export/import/relation-import.service.ts';
import type { RelationImportRow } from '../../../db/schema.ts';
import { Errors } from '../../../lib/errors.ts';
import { dropBody, multipartPassThrough, readUpload, removeUpload, type SpooledUpload } from './upload.ts';
import { IdParams } from '../schemas/common.ts';

const TAGS = ['project_import'];

/** Entities::RelationImportTracker as POST answers it (the spec: created_at/updated_at only in the list) */
const RelationImportSchema = Type.Object({
  id: Type.Integer(),
  project_path: Type.String(),
  relation: Type.String(),
  status: Type.String(),
});
const RelationImportStatusSchema = Type.Object({
  id: Type.Integer(),
  project_path: Type.String(),
  relation: Type.String(),
  status: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
});

const toEntity = (row: RelationImportRow, projectPath: string) => ({ id: row.id, project_path: projectPath, relation: row.relation, status: row.status });

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[v.length - 1] : v);
const mib = (v: unknown) => Math.max(0, Number(v) || 0) * 1024 * 1024;
/** ImportExportUploader::EXTENSION_WHITELIST */
const ARCHIVE_NAME = /\.(tar\.gz|gz)$/i;

export function relationImportsRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const user = { api: 'platform' as const, auth: 'user' as const };
  const svc = () => c.importExport.relationImports;

  // the multipart body is read here as a stream (readUpload), not by the general multipart parser
  fastify.register(async (child) => {
    child.removeContentTypeParser('multipart/form-data');
    child.addContentTypeParser('multipart/form-data', multipartPassThrough);
    const capp = child.withTypeProvider<TypeBoxTypeProvider>();

    capp.post('/api/v4/projects/import-relation', { config: user, schema: { tags: TAGS, response: { 201: RelationImportSchema } } }, async (req, reply) => {
      let upload: SpooledUpload | null = null;
      try {
        const s = await c.settings.get();
        // import-relation/authorize (Workhorse asks before the upload): refused before a byte is stored
        if (!(s.import_sources ?? []).includes('gitlab_project')) {
          dropBody(req.raw);
          throw Errors.forbidden();
        }
        upload = await readUpload(req, { tmpDir: svc().tmpDir(), maxBytes: mib(s.max_import_size), requireFile: false });
        // Grape's params: path, file, relation required (in that order), relation one of the four
        const f = upload.fields;
        const errors: string[] = [];
        const path = one(f.path);
        const relation = one(f.relation);
        if (path === undefined) errors.push('path is missing');
        if (!upload.file) errors.push(f.file !== undefined ? 'file is invalid' : 'file is missing');
        if (relation === undefined) errors.push('relation is missing');
        else if (!isImportableRelation(relation)) errors.push('relation does not have a valid value');
        if (errors.length) throw Errors.param(errors.join(', '));
        // validate_file!
        if (!ARCHIVE_NAME.test(upload.file!.filename)) {
          throw Errors.raw(422, { error: 'You need to upload a GitLab project export archive (ending in .gz).' });
        }
        const { row, projectPath } = await svc().request(req.actor, { path: path!, relation: relation as never }, upload.file!);
        return reply.code(201).send(toEntity(row, projectPath));
      } finally {
        await removeUpload(upload);
      }
    });
  });

  app.get(
    '/api/v4/projects/:id/relation-imports',
    { config: user, schema: { tags: TAGS, params: IdParams, response: { 200: Type.Array(RelationImportStatusSchema) } } },
    async (req) => {
      const { rows, projectPath } = await svc().list(req.actor, req.params.id);
      return rows.map((r) => ({ ...toEntity(r, projectPath), created_at: r.created_at, updated_at: r.updated_at }));
    },
  );
}
