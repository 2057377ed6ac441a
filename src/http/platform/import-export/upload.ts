// Multipart uploads of archives (POST /projects/import, /projects/import-relation): read as a stream,
// the file spooled to a temporary file (never held in memory), the size limit enforced while reading.
// The routes using it register in a child context where multipart bodies are not parsed ahead (see
// artifacts.routes.ts). Owner: the archive-safety part of issue 17.
import type { FastifyRequest } from 'fastify';

export interface SpooledUpload {
  /** text fields by name as sent (`override_params[name]` kept as is; several values → array) */
  fields: Record<string, string | string[]>;
  /** the `file` part, spooled; null when the body had none */
  file: { path: string; size: number; filename: string } | null;
}

/**
 * Reads the multipart body: fields, and the part named `fileField` (default `file`) into a new file under
 * `tmpDir`. Over `maxBytes` (0 = unlimited) → the rest of the body is dropped and the temporary file
 * removed, then ApiError 400 as GitLab words it; a body that is not multipart or does not parse → 400.
 * The caller removes `file.path` when it is done with it (and on error).
 */
export async function readUpload(_req: FastifyRequest, _opts: { tmpDir: string; maxBytes: number; fileField?: string }): Promise<SpooledUpload> {
  throw new Error('not implemented');
}
