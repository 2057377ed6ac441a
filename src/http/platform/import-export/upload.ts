// Multipart uploads of archives (POST /projects/import, /projects/import-relation): read as a stream,
// the file spooled to a temporary file (never held in memory), the size limit enforced while reading.
//
// How a route opts in: register it in a child context where multipart bodies are not parsed ahead, so
// the body is still unread when the handler calls readUpload (as artifacts.routes.ts does):
//
//   app.register(async (child) => {
//     child.removeContentTypeParser('multipart/form-data');
//     child.addContentTypeParser('multipart/form-data', multipartPassThrough);
//     child.post('/api/v4/projects/import', opts, async (req, reply) => {
//       const up = await readUpload(req, { tmpDir, maxBytes, requireFile: true });
//       try { … use up.fields / up.file.path … } finally { await removeUpload(up) }
//     });
//   });
//
// Other content types keep their parsers in that context (a JSON body is parsed as usual): readUpload
// then answers 400 "file is missing", as Grape does when the file parameter is absent.
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Busboy, type BusboyInstance } from '@fastify/busboy';
import type { FastifyRequest } from 'fastify';
import qs from 'qs';
import { Errors } from '../../../lib/errors.ts';
import { invalidBoundary } from '../../plugins/malformed.ts';

export interface SpooledUpload {
  /** text fields by name as sent (`override_params[name]` kept as is; several values → array) */
  fields: Record<string, string | string[]>;
  /** the `file` part, spooled; null when the body had none */
  file: { path: string; size: number; filename: string } | null;
}

/** The content-type parser of the opted-in context: the body is left unread for readUpload. */
export function multipartPassThrough(_req: unknown, _payload: unknown, done: (err: Error | null, body?: unknown) => void): void {
  done(null, undefined);
}

/** the multipart framing and text fields allowed on top of the file (a larger declared body is refused at once) */
const SLACK = 1024 * 1024;

/**
 * Reads the multipart body: fields, and the part named `fileField` (default `file`) into a new file under
 * `tmpDir`. Over `maxBytes` (0 = unlimited) → the rest of the body is dropped (read, not cut off) and the
 * temporary file removed, then 413 `{"message":"413 Request Entity Too Large"}` (GitLab: Workhorse refuses
 * an upload over max_import_size with 413); a body that is not multipart or has no file part → 400
 * `{"error":"file is missing"}` (unless `requireFile` is false: file null); a body that does not parse → 400.
 * The caller removes `file.path` when it is done with it (and on error): `removeUpload`.
 */
export async function readUpload(
  req: FastifyRequest,
  opts: { tmpDir: string; maxBytes: number; fileField?: string; requireFile?: boolean },
): Promise<SpooledUpload> {
  const fileField = opts.fileField ?? 'file';
  const requireFile = opts.requireFile ?? true;
  const ctype = String(req.headers['content-type'] ?? '');
  if (!/^multipart\/form-data/i.test(ctype)) {
    if (requireFile) throw Errors.param(`${fileField} is missing`);
    return { fields: plainFields(req.body), file: null };
  }
  const badBoundary = invalidBoundary(ctype);
  if (badBoundary) {
    dropBody(req.raw);
    throw Errors.param(`Multipart form parse error - ${badBoundary}`);
  }
  const maxBytes = Math.max(opts.maxBytes, 0);
  const declared = Number(req.headers['content-length']);
  if (maxBytes > 0 && Number.isFinite(declared) && declared > maxBytes + SLACK) {
    dropBody(req.raw);
    throw Errors.tooLarge();
  }
  await mkdir(opts.tmpDir, { recursive: true, mode: 0o700 });
  const fields: Record<string, string | string[]> = {};
  let file: SpooledUpload['file'] = null;
  let spooled: string | null = null;

  const result = await new Promise<Error | null>((resolve) => {
    let bb: BusboyInstance;
    try {
      bb = new Busboy({
        headers: req.headers as any,
        limits: { fieldSize: 64 * 1024, fields: 200, files: 4, ...(maxBytes > 0 ? { fileSize: maxBytes } : {}) },
      });
    } catch (err) {
      resolve(Errors.param(`Multipart form parse error - ${(err as Error).message}`));
      return;
    }
    let writing: Promise<void> | null = null;
    let settled = false;
    const done = (r: Error | null) => {
      if (settled) return;
      settled = true;
      if (r) {
        // the rest of the body is dropped (read, not cut off), so the client gets this answer
        req.raw.unpipe(bb);
        dropBody(req.raw);
      }
      resolve(r);
    };
    bb.on('field', (name, value) => {
      const prev = fields[name];
      fields[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
    });
    bb.on('file', (name, stream, filename) => {
      if (name !== fileField || writing || settled) {
        stream.resume();
        return;
      }
      const path = join(opts.tmpDir, `${randomUUID()}.upload`);
      spooled = path;
      let size = 0;
      let tooLarge = false;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
      });
      stream.on('limit', () => {
        tooLarge = true;
      });
      writing = pipeline(stream, createWriteStream(path, { flags: 'wx', mode: 0o600 })).then(
        () => {
          if (tooLarge) return done(Errors.tooLarge());
          file = { path, size, filename: filename ?? '' };
        },
        (err: Error) => done(err),
      );
    });
    bb.on('error', (err: unknown) => done(Errors.param(`Multipart form parse error - ${(err as Error).message}`)));
    bb.on('finish', () => {
      if (!writing) return done(null);
      writing.then(() => done(null));
    });
    req.raw.on('error', (err) => done(err));
    req.raw.pipe(bb);
  });
  if (result || (!file && requireFile)) {
    if (spooled) await rm(spooled, { force: true });
    if (result) throw result;
    throw Errors.param(`${fileField} is missing`);
  }
  return { fields, file };
}

/** Removes the spooled file (idempotent). */
export async function removeUpload(up: SpooledUpload | null | undefined): Promise<void> {
  if (up?.file) await rm(up.file.path, { force: true });
}

/**
 * `a[b]`-style field names as nested objects (qs, as Rack parses them): `override_params[description]`
 * → `{override_params: {description: …}}`. Values stay strings.
 */
export function nestFields(fields: Record<string, string | string[]>): Record<string, unknown> {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) params.append(k, one);
  return qs.parse(params.toString(), { depth: 5, arrayLimit: 100, parameterLimit: 1000 }) as Record<string, unknown>;
}

/** A body already parsed by another content-type parser (JSON, urlencoded): its string fields. */
function plainFields(body: unknown): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (!body || typeof body !== 'object' || Array.isArray(body)) return out;
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    if (typeof v === 'string') out[k] = v;
    else if (typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
  }
  return out;
}

/**
 * The rest of a refused upload is read and dropped, so a client still writing gets the answer instead of
 * a reset; a client that stopped writing once it had the answer leaves the request unfinished, and its
 * connection is closed after a few seconds (it would otherwise hold the server's shutdown).
 */
export function dropBody(req: IncomingMessage): void {
  req.resume();
  const finished = () => req.complete || req.readableEnded;
  if (finished()) return;
  const timer = setTimeout(() => {
    // an injected request (tests) has no real socket to close
    if (!finished()) req.socket?.destroy?.();
  }, 3000);
  timer.unref();
  req.once('end', () => clearTimeout(timer));
}
