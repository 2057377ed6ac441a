// Job artifacts (GitLab lib/api/ci/job_artifacts.rb and the artifacts endpoints of lib/api/ci/runner.rb):
// the runner's upload and dependency download, and the project's downloads (whole archive, one file
// by random access), keep and delete. Bytes are streamed from and to the blob store, never buffered.
// Registered in src/http/platform/ci/index.ts.
import type { IncomingMessage } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Busboy, type BusboyInstance } from '@fastify/busboy';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { Type } from 'typebox';
import type { Container } from '../../../container.ts';
import type { Actor } from '../../../domain/access/actor.ts';
import { FILE_FORMATS, FILE_TYPES, type UploadParams } from '../../../domain/ci/artifacts/artifacts.service.ts';
import { entryContentType, entryStream, eachEntry, openZipBlob } from '../../../domain/ci/artifacts/zip.ts';
import type { CiJobArtifactRow } from '../../../db/schema.ts';
import { Errors } from '../../../lib/errors.ts';
import { attachmentDisposition } from '../../../storage/s3-store.ts';
import { JobSchema, toJobViews, toJob } from '../entities/job.entity.ts';
import { IdParams, IntegerIdParams } from '../schemas/common.ts';

const TAGS = ['job_artifacts'];
const PROJECT = '/api/v4/projects/:id';

const ProjectJobParams = Type.Object({ id: Type.String(), job_id: Type.Integer() });
const UploadQuery = Type.Object({
  token: Type.Optional(Type.String()),
  expire_in: Type.Optional(Type.String()),
  artifact_type: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: [...FILE_TYPES], default: 'archive' })),
  artifact_format: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: [...FILE_FORMATS], default: 'zip' })),
});
const DownloadQuery = Type.Object({ token: Type.Optional(Type.String()), direct_download: Type.Optional(Type.Boolean({ default: false })) });
const JobNameQuery = Type.Object({ job: Type.Optional(Type.String()) }, { additionalProperties: true });

function first(v: unknown): string | undefined {
  if (Array.isArray(v)) v = v[0];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The path after `marker` in the request's own URL, each segment percent-decoded (null: undecodable). */
function rawRest(req: FastifyRequest, marker: RegExp): string[] | null {
  const pathPart = req.url.split('?')[0]!;
  const m = marker.exec(pathPart);
  if (!m) return null;
  try {
    return pathPart
      .slice(m.index + m[0].length)
      .split('/')
      .map((s) => decodeURIComponent(s));
  } catch {
    return null;
  }
}

/**
 * Gitlab::Ci::Build::Artifacts::Path#valid? (no NUL, valid UTF-8) and, stricter, no leading `/`, no
 * `.`/`..` segment, no backslash: anything else is 400 "Bad request".
 */
function artifactPath(segments: string[] | null): string {
  if (segments === null) throw Errors.badRequest();
  const p = segments.join('/');
  if (p === '') throw Errors.param('artifact_path is missing');
  if (p.includes('\0') || p.includes('\uFFFD') || p.includes('\\') || p.startsWith('/')) throw Errors.badRequest();
  if (p.split('/').some((s) => s === '..' || s === '.')) throw Errors.badRequest();
  return p;
}

/**
 * Workhorse's `attachment; filename="<base name>"` (quotes escaped); a name beyond printable ASCII
 * (which a header cannot carry as is) gets an ASCII stand-in and its UTF-8 form in filename*.
 */
function entryDisposition(kind: string, base: string): string {
  if (/^[\x20-\x7e]*$/.test(base)) return `${kind}; filename="${base.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  return attachmentDisposition(base).replace(/^attachment/, kind);
}

/** A NUL byte anywhere in the path: 400 "Bad request" before the NUL guard of other routes answers. */
async function nulGuard(req: FastifyRequest): Promise<void> {
  if (/%00/i.test(req.url.split('?')[0]!)) throw Errors.badRequest();
}

export function artifactsRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const svc = () => c.ci.artifacts;
  const platform = { api: 'platform' as const, auth: 'optional' as const };
  const download = { ...platform, jobToken: true };

  /** present_artifacts_file!: 302 to the store, or the archive streamed with GitLab's headers. */
  async function sendArchive(reply: FastifyReply, job: Parameters<ReturnType<typeof svc>['download']>[0], direct = true) {
    const d = await svc().download(job, direct);
    if (d.redirect) return reply.redirect(d.redirect, 302);
    return sendBlob(reply, d.artifact);
  }

  /** Whatever an artifact holds is never sniffed, run or rendered as a page of this origin. */
  const inert = (reply: FastifyReply) => reply.header('x-content-type-options', 'nosniff').header('content-security-policy', "default-src 'none'; sandbox");

  async function sendBlob(reply: FastifyReply, a: CiJobArtifactRow) {
    const stream = await svc().open(a);
    return inert(reply)
      .header('content-disposition', attachmentDisposition(a.file_name))
      .header('content-type', 'application/octet-stream')
      .header('content-transfer-encoding', 'binary')
      .header('content-length', String(a.size))
      .send(stream);
  }

  /** One file out of the archive, read by random access from the store (Workhorse's artifacts entry). */
  async function sendEntry(reply: FastifyReply, a: CiJobArtifactRow | undefined, entryPath: string, raw: boolean) {
    if (!a) throw Errors.notFound();
    const zip = await openZipBlob(c.store, a.store_key, a.size).catch(() => {
      throw Errors.notFound();
    });
    let found: Readable | null = null;
    let size = 0;
    try {
      await eachEntry(zip, async (e) => {
        if (e.fileName !== entryPath || e.fileName.endsWith('/')) return false;
        found = await entryStream(zip, e);
        size = e.uncompressedSize;
        return true;
      });
    } catch {
      zip.close();
      throw Errors.notFound();
    }
    if (!found) {
      zip.close();
      throw Errors.notFound();
    }
    const stream = found as Readable;
    stream.on('close', () => zip.close());
    const base = entryPath.split('/').pop()!;
    const disposition = (kind: string) => entryDisposition(kind, base);
    inert(reply).header('content-length', String(size));
    if (raw) {
      // send_artifacts_entry with detect_content_type: text is shown inline as plain text
      reply.header('content-type', 'text/plain; charset=utf-8').header('content-disposition', disposition('inline'));
    } else {
      reply.header('content-type', entryContentType(base)).header('content-disposition', disposition('attachment'));
    }
    return reply.send(stream);
  }

  function viewer(actor: Actor) {
    return { id: actor.user?.id ?? null, isAdmin: actor.isAdmin };
  }

  // ---- the runner's side (authenticate_job!: the route checks the job token itself) -----------

  fastify.register(async (child) => {
    // the upload's multipart body is read here as a stream, not by the general multipart parser
    child.removeContentTypeParser('multipart/form-data');
    child.addContentTypeParser('multipart/form-data', (_req, _payload, done) => done(null, undefined));
    const capp = child.withTypeProvider<TypeBoxTypeProvider>();
    const runner = { ...platform, runnerApi: true, jobToken: true };

    capp.post(
      '/api/v4/jobs/:id/artifacts',
      { config: runner, schema: { tags: TAGS, params: IntegerIdParams, querystring: UploadQuery } },
      async (req, reply) => {
        const q = req.query;
        const token = first(q.token) ?? first(req.headers['job-token']);
        const job = await svc().authenticateJob(req.params.id, token);
        const params: UploadParams = { artifact_type: q.artifact_type ?? 'archive', artifact_format: q.artifact_format ?? 'zip', expire_in: q.expire_in };
        const ctype = String(req.headers['content-type'] ?? '');
        if (!/^multipart\/form-data/i.test(ctype)) throw Errors.param('file is missing');
        const maxBytes = Number((await c.settings.get()).max_artifacts_size) * 1024 * 1024;
        const declared = Number(req.headers['content-length']);
        // far over the limit: refused before a byte is stored (the multipart framing is small). The rest of
        // the body is read and dropped, not cut off: a client still writing would see a reset, not the 413.
        if (Number.isFinite(declared) && declared > maxBytes + 1024 * 1024) {
          dropBody(req.raw);
          throw Errors.tooLarge();
        }
        const result = await new Promise<'created' | Error>((resolve) => {
          let bb: BusboyInstance;
          try {
            bb = new Busboy({ headers: req.headers as any, limits: { fieldSize: 64 * 1024, fields: 20, files: 4 } });
          } catch (err) {
            resolve(Errors.param(`Multipart form parse error - ${(err as Error).message}`));
            return;
          }
          let upload: Promise<unknown> | null = null;
          let settled = false;
          const done = (r: 'created' | Error) => {
            if (settled) return;
            settled = true;
            if (r !== 'created') {
              // the rest of the body is dropped (read, not cut off), so the client gets this answer
              req.raw.unpipe(bb);
              dropBody(req.raw);
            }
            resolve(r);
          };
          bb.on('field', (name, value) => {
            if (name === 'expire_in' && params.expire_in === undefined) params.expire_in = value;
            if (name === 'artifact_type' && q.artifact_type === undefined) params.artifact_type = value;
            if (name === 'artifact_format' && q.artifact_format === undefined) params.artifact_format = value;
          });
          bb.on('file', (name, stream, filename) => {
            if (name !== 'file' || upload) {
              stream.resume();
              return;
            }
            if (!(FILE_TYPES as readonly string[]).includes(params.artifact_type)) {
              stream.resume();
              return done(Errors.param('artifact_type does not have a valid value'));
            }
            if (!(FILE_FORMATS as readonly string[]).includes(params.artifact_format)) {
              stream.resume();
              return done(Errors.param('artifact_format does not have a valid value'));
            }
            upload = svc()
              .upload(job, { stream, filename }, params)
              .then(
                () => done('created'),
                (err: Error) => done(err),
              );
          });
          bb.on('error', (err: unknown) => done(Errors.param(`Multipart form parse error - ${(err as Error).message}`)));
          bb.on('finish', () => {
            if (!upload) done(Errors.param('file is missing'));
          });
          req.raw.on('error', (err) => done(err));
          req.raw.pipe(bb);
        });
        if (result instanceof Error) throw result;
        // Grape's `body "201"`, rendered as JSON
        return reply.code(201).type('application/json').send('"201"');
      },
    );

    capp.get(
      '/api/v4/jobs/:id/artifacts',
      { config: runner, schema: { tags: TAGS, params: IntegerIdParams, querystring: DownloadQuery } },
      async (req, reply) => {
        const token = first(req.query.token) ?? first(req.headers['job-token']);
        const job = await svc().authenticateDownload(req.params.id, token);
        return sendArchive(reply, job, req.query.direct_download === true);
      },
    );
  });

  // ---- the project's side ------------------------------------------------------------------

  app.get(`${PROJECT}/jobs/:job_id/artifacts`, { config: download, schema: { tags: TAGS, params: ProjectJobParams } }, async (req, reply) => {
    const r = await svc().project(req.actor, req.params.id);
    const job = await svc().findBuild(r.project, req.params.job_id);
    return sendArchive(reply, job);
  });

  app.get(
    `${PROJECT}/jobs/:job_id/artifacts/*`,
    { config: download, onRequest: nulGuard, schema: { tags: TAGS, params: Type.Object({ id: Type.String(), job_id: Type.Integer(), '*': Type.String() }) } },
    async (req, reply) => {
      const r = await svc().project(req.actor, req.params.id);
      const job = await svc().findBuild(r.project, req.params.job_id);
      const archive = job.erased_at ? undefined : await svc().archiveOf(job.id);
      // not_found! unless build.available_artifacts? comes before the path check
      if (!archive || (archive.expire_at !== null && archive.expire_at <= new Date().toISOString())) throw Errors.notFound();
      const p = artifactPath(rawRest(req, /\/jobs\/\d+\/artifacts\//));
      return sendEntry(reply, archive, p, false);
    },
  );

  // `ref_name` may hold slashes (GitLab's requirement /.+/): one route reads `<ref>/download` and
  // `<ref>/raw/<path>` from the URL itself.
  app.get(
    `${PROJECT}/jobs/artifacts/*`,
    {
      config: download,
      onRequest: nulGuard,
      schema: { tags: TAGS, params: Type.Object({ id: Type.String(), '*': Type.String() }), querystring: JobNameQuery },
    },
    async (req, reply) => {
      const segments = rawRest(req, /\/jobs\/artifacts\//);
      if (segments === null) throw Errors.badRequest();
      let ref: string;
      let entry: string | null = null;
      const rawAt = segments.indexOf('raw');
      if (segments.length >= 2 && segments[segments.length - 1] === 'download') {
        ref = segments.slice(0, -1).join('/');
      } else if (rawAt > 0) {
        ref = segments.slice(0, rawAt).join('/');
        entry = artifactPath(segments.slice(rawAt + 1));
      } else {
        throw Errors.notFound(); // Grape: no such route
      }
      const name = first(req.query.job);
      if (name === undefined) throw Errors.param('job is missing');
      const r = await svc().project(req.actor, req.params.id);
      if (!ref) throw Errors.recordNotFound();
      const job = await svc().latestSuccessfulBuildForRef(r.project, name, ref);
      if (entry === null) return sendArchive(reply, job);
      return sendEntry(reply, await svc().archiveOf(job.id), entry, true);
    },
  );

  app.post(
    `${PROJECT}/jobs/:job_id/artifacts/keep`,
    { config: platform, schema: { tags: TAGS, params: ProjectJobParams, response: { 200: JobSchema } } },
    async (req, reply) => {
      if (!req.actor.user) throw Errors.unauthorized();
      const r = await svc().project(req.actor, req.params.id);
      // update_build: Developer and up
      if (!req.actor.isAdmin && r.access.level < 30) throw Errors.forbidden();
      const job = await svc().findBuild(r.project, req.params.job_id);
      const kept = await svc().keep(job);
      const views = toJobViews(await c.ci.jobs.related([kept]), c.config.externalUrl, viewer(req.actor));
      return reply.code(200).send(toJob(kept, views));
    },
  );

  app.delete(`${PROJECT}/jobs/:job_id/artifacts`, { config: platform, schema: { tags: TAGS, params: ProjectJobParams } }, async (req, reply) => {
    if (!req.actor.user) throw Errors.unauthorized();
    const r = await svc().project(req.actor, req.params.id);
    if (!r.access.abilities.has('admin_job_artifacts')) throw Errors.forbidden();
    const job = await svc().findBuild(r.project, req.params.job_id);
    await svc().deleteForJob(job);
    return reply.code(204).send();
  });

  app.delete(`${PROJECT}/artifacts`, { config: platform, schema: { tags: TAGS, params: IdParams } }, async (req, reply) => {
    if (!req.actor.user) throw Errors.unauthorized();
    const r = await svc().project(req.actor, req.params.id);
    if (!r.access.abilities.has('admin_job_artifacts')) throw Errors.forbidden();
    await svc().expireProject(r.project);
    return reply.code(202).send({ message: '202 Accepted' });
  });
}

/**
 * The rest of a refused upload is read and dropped, so a client still writing gets the answer instead of
 * a reset; a client that stopped writing once it had the answer leaves the request unfinished, and its
 * connection is closed after a few seconds (it would otherwise hold the server's shutdown).
 */
function dropBody(req: IncomingMessage): void {
  req.resume();
  const done = () => req.complete || req.readableEnded;
  if (done()) return;
  const timer = setTimeout(() => {
    // an injected request (tests) has no real socket to close
    if (!done()) req.socket?.destroy?.();
  }, 3000);
  timer.unref();
  req.once('end', () => clearTimeout(timer));
}
