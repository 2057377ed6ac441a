// Project imports (GitLab lib/api/project_import.rb): POST /projects/import (multipart, the archive read
// as a stream and spooled), POST /projects/remote-import, POST /projects/remote-import-s3 and
// GET /projects/:id/import, each answering Entities::ProjectImportStatus.
// Registered in src/http/platform/import-export/index.ts.
import fs from 'node:fs';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Container } from '../../../container.ts';
import { HIDDEN_IMPORT_ERROR, type ImportState } from '../../../domain/import-export/import/import.service.ts';
import { overrideFromFields } from '../../../domain/import-export/import/override-params.ts';
import type { FailedRelation } from '../../../domain/import-export/archive/layout.ts';
import { Errors } from '../../../lib/errors.ts';
import { GRAPE_FALSE, GRAPE_TRUE, IdParams, NullableString } from '../schemas/common.ts';
import { readUpload, type SpooledUpload } from './upload.ts';
import { ProjectIdentitySchema, toProjectIdentity } from '../entities/job.entity.ts';

const TAGS = ['project_import'];

const FailedRelationSchema = Type.Object({
  id: Type.Integer(),
  created_at: Type.String(),
  exception_class: Type.String(),
  source: NullableString,
  exception_message: NullableString,
  relation_name: Type.String(),
  line_number: Type.Unsafe<number | null>({ type: ['integer', 'null'] }),
});

/** Entities::ProjectImportStatus (ProjectIdentity + the import state). */
export const ProjectImportSchema = Type.Object({
  ...ProjectIdentitySchema.properties,
  import_status: Type.String(),
  import_type: NullableString,
  correlation_id: NullableString,
  failed_relations: Type.Array(FailedRelationSchema),
  import_error: NullableString,
  stats: Type.Unsafe<Record<string, unknown> | null>({ type: ['object', 'null'] }),
});

/**
 * The import-result record. failed_relations as Entities::ProjectImportFailedRelation (exception_message
 * is never shown there); import_error: the reason to those who may read it (read_import_error), GitLab's
 * "Ask a maintainer …" to others, null while there is none.
 */
export function toProjectImport(st: ImportState) {
  const p = st.project;
  const failed = st.state ? (JSON.parse(st.state.failed_relations) as FailedRelation[]) : [];
  const error = st.state?.import_error ?? null;
  return {
    ...toProjectIdentity(p, st.namespace, st.namespaceFullName ?? st.namespace.name),
    import_status: st.state?.status ?? 'none',
    import_type: st.state?.import_type ?? null,
    correlation_id: st.state?.correlation_id ?? null,
    failed_relations: failed.map((f) => ({
      id: f.id,
      created_at: f.created_at,
      exception_class: f.exception_class,
      source: f.source ?? null,
      exception_message: null,
      relation_name: f.relation_name,
      line_number: f.line_number ?? null,
    })),
    import_error: error === null ? null : st.canReadError ? error : HIDDEN_IMPORT_ERROR,
    stats: null,
  };
}

const Namespace = Type.Optional(Type.Union([Type.Integer(), Type.String()]));

const RemoteBody = Type.Object({
  url: Type.String(),
  path: Type.String(),
  name: Type.Optional(Type.String()),
  namespace: Namespace,
  overwrite: Type.Optional(Type.Boolean({ default: false })),
  override_params: Type.Optional(Type.Unknown()),
});

const S3Body = Type.Object({
  region: Type.String(),
  bucket_name: Type.String(),
  file_key: Type.String(),
  access_key_id: Type.String(),
  secret_access_key: Type.String(),
  path: Type.String(),
  name: Type.Optional(Type.String()),
  namespace: Namespace,
  overwrite: Type.Optional(Type.Boolean({ default: false })),
  override_params: Type.Optional(Type.Unknown()),
});

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[v.length - 1] : v);
const mib = (v: unknown) => Math.max(0, Number(v) || 0) * 1024 * 1024;

/** override_params of a JSON body: a hash (Grape's Hash type), else "override_params is invalid". */
function jsonOverride(v: unknown): Record<string, unknown> | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw Errors.param('override_params is invalid');
  return v as Record<string, unknown>;
}

export function importRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const user = { api: 'platform' as const, auth: 'user' as const };
  const svc = () => c.importExport.imports;

  // POST /projects/import: the multipart body is read here as a stream (the archive spooled to a
  // temporary file with max_import_size enforced while reading), not by the general multipart parser.
  fastify.register(async (child) => {
    child.removeContentTypeParser('multipart/form-data');
    child.addContentTypeParser('multipart/form-data', (_req, _payload, done) => done(null, undefined));
    const capp = child.withTypeProvider<TypeBoxTypeProvider>();
    capp.post('/api/v4/projects/import', { config: user, schema: { tags: TAGS, response: { 201: ProjectImportSchema } } }, async (req, reply) => {
      // import/authorize (Workhorse asks before the upload): refused before a byte is read
      await svc().assertEnabled();
      const upload = await readBody(req, mib((await c.settings.get()).max_import_size));
      try {
        const f = upload.fields;
        const errors: string[] = [];
        const path = one(f.path);
        if (path === undefined) errors.push('path is missing');
        if (!upload.file) errors.push(f.file !== undefined ? 'file is invalid' : 'file is missing');
        const overwriteRaw = one(f.overwrite);
        let overwrite = false;
        if (overwriteRaw !== undefined && overwriteRaw !== '') {
          if (GRAPE_TRUE.has(overwriteRaw.toLowerCase())) overwrite = true;
          else if (!GRAPE_FALSE.has(overwriteRaw.toLowerCase())) errors.push('overwrite is invalid');
        }
        const override = overrideFromFields(f);
        if (typeof override === 'string') errors.push('override_params is invalid');
        if (errors.length) throw Errors.param(errors.join(', '));
        const state = await svc().importFile(
          req.actor,
          {
            path: path!,
            name: one(f.name),
            namespace: one(f.namespace),
            overwrite,
            override_params: (override as Record<string, unknown> | null) ?? undefined,
          },
          upload.file!,
        );
        return reply.code(201).send(toProjectImport(state));
      } finally {
        if (upload.file) fs.rmSync(upload.file.path, { force: true });
      }
    });

    /** The multipart body through readUpload; any other body (JSON, a form, nothing) as fields without a file. */
    async function readBody(req: FastifyRequest, maxBytes: number): Promise<SpooledUpload> {
      if (/^multipart\/form-data/i.test(String(req.headers['content-type'] ?? ''))) {
        return readUpload(req, { tmpDir: svc().tmpDir(), maxBytes, requireFile: false });
      }
      const fields: Record<string, string | string[]> = {};
      const body = req.body;
      if (body && typeof body === 'object' && !Buffer.isBuffer(body)) {
        for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
          if (k === 'override_params' && v && typeof v === 'object' && !Array.isArray(v)) {
            for (const [ok, ov] of Object.entries(v as Record<string, unknown>)) {
              if (Array.isArray(ov)) fields[`override_params[${ok}][]`] = ov.map(String);
              else if (ov !== null && ov !== undefined) fields[`override_params[${ok}]`] = String(ov);
            }
          } else if (v !== null && v !== undefined) fields[k] = Array.isArray(v) ? v.map(String) : String(v);
        }
      }
      return { fields, file: null };
    }
  });

  app.post(
    '/api/v4/projects/remote-import',
    { config: user, schema: { tags: TAGS, body: RemoteBody, response: { 201: ProjectImportSchema } } },
    async (req, reply) => {
      const b = req.body;
      const state = await svc().importRemote(req.actor, { url: b.url, ...jsonImportInput(b) });
      return reply.code(201).send(toProjectImport(state));
    },
  );

  app.post(
    '/api/v4/projects/remote-import-s3',
    { config: user, schema: { tags: TAGS, body: S3Body, response: { 201: ProjectImportSchema } } },
    async (req, reply) => {
      const b = req.body;
      const state = await svc().importS3(req.actor, {
        region: b.region,
        bucket_name: b.bucket_name,
        file_key: b.file_key,
        access_key_id: b.access_key_id,
        secret_access_key: b.secret_access_key,
        ...jsonImportInput(b),
      });
      return reply.code(201).send(toProjectImport(state));
    },
  );

  /** What the JSON imports share: the new project's place and the archive's overrides. */
  function jsonImportInput(b: { path: string; name?: string; namespace?: string | number; overwrite?: boolean; override_params?: unknown }) {
    return {
      path: b.path,
      name: b.name,
      namespace: b.namespace === undefined ? undefined : String(b.namespace),
      overwrite: b.overwrite ?? false,
      override_params: jsonOverride(b.override_params),
    };
  }

  app.get('/api/v4/projects/:id/import', { config: user, schema: { tags: TAGS, params: IdParams, response: { 200: ProjectImportSchema } } }, async (req) =>
    toProjectImport(await svc().status(req.actor, req.params.id)),
  );
}
