// Requests the server cannot read are the client's mistake, answered 400 before any route runs:
// multipart bodies that do not parse, and NUL bytes in the path, the query or the body (PostgreSQL text
// cannot hold one; GitLab refuses them in Gitlab::Middleware::HandleMalformedStrings).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import { Errors } from '../../lib/errors.ts';

export const MULTIPART_LIMITS = { fileSize: 10 * 1024 * 1024 };

/** Depth of nested parameters searched for NUL bytes (qs nests at most 5 levels; JSON bodies deeper are rare). */
const MAX_DEPTH = 8;

/**
 * A body that does not parse, rendered like the body parsers' errors: platform `{"error": message}`,
 * translation `{"detail": message}` (DRF's ParseError: "Multipart form parse error - …").
 */
class MultipartParseError extends Error {
  readonly statusCode = 400;
  readonly code = 'HEARTH_MULTIPART_PARSE_ERROR';
  constructor(reason: string) {
    super(`Multipart form parse error - ${reason}`);
  }
}

/** The `boundary` parameter of a multipart content type: undefined when absent. */
export function boundaryOf(contentType: string): string | undefined {
  const m = /;\s*boundary=(?:"([^"]*)"|([^;]*))/i.exec(contentType);
  return m ? (m[1] ?? m[2] ?? '').trim() : undefined;
}

/** Why a multipart content type's boundary is unusable (Django's MultiPartParser words it so, with Python's str() of a missing value), or null. */
export function invalidBoundary(contentType: string): string | null {
  const boundary = boundaryOf(contentType);
  return boundary ? null : `Invalid boundary in multipart: ${boundary ?? 'None'}`;
}

/**
 * The fields of a multipart body as @fastify/multipart's `keyValues` gives them: a field's value, a file's
 * bytes, several values of one name as an array. The plugin's own limits and checks (413, prototype names)
 * keep their status; whatever else busboy refuses is a MultipartParseError.
 */
async function multipartFields(req: FastifyRequest): Promise<Record<string, unknown>> {
  const invalid = invalidBoundary(String(req.headers['content-type'] ?? ''));
  if (invalid) throw new MultipartParseError(invalid);
  const body: Record<string, unknown> = {};
  const add = (name: string, value: unknown) => {
    if (!Object.hasOwn(body, name)) body[name] = value;
    else if (Array.isArray(body[name])) (body[name] as unknown[]).push(value);
    else body[name] = [body[name], value];
  };
  try {
    for await (const part of req.parts()) {
      if (part.type === 'file') {
        const data = await part.toBuffer();
        uploadedFileNames.set(data, part.filename);
        add(part.fieldname, data);
      } else add(part.fieldname, part.value);
    }
  } catch (err) {
    if (typeof (err as { statusCode?: unknown }).statusCode === 'number') throw err;
    throw new MultipartParseError((err as Error).message);
  }
  return body;
}

/** The file name each multipart file part was sent with, by the Buffer it became in the body (avatars keep it). */
export const uploadedFileNames = new WeakMap<Buffer, string>();

/** The name of the first parameter holding a NUL byte (Rack style when nested: `a[b]`), or null. */
function nulIn(value: unknown, name: string, depth = 0): string | null {
  if (typeof value === 'string') return value.includes('\0') ? name : null;
  if (depth >= MAX_DEPTH || value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return null;
  for (const [k, v] of Object.entries(value)) {
    const found = nulIn(v, name === '' ? k : `${name}[${k}]`, depth + 1);
    if (found !== null) return found;
  }
  return null;
}

export async function requestBodies(app: FastifyInstance): Promise<void> {
  await app.register(multipart, { limits: MULTIPART_LIMITS });

  app.addHook('preValidation', async (req) => {
    if (req.isMultipart()) req.body = await multipartFields(req);
  });

  // before authentication, which looks `sudo` and the credential parameters up
  app.addHook('preValidation', async (req) => {
    const api = (req.routeOptions.config as { api?: string } | undefined)?.api;
    if (api === 'translation') {
      // a slug cannot hold a NUL: Django finds nothing; DRF's CharField refuses one in a value
      if (nulIn(req.params, '') !== null) throw Errors.notFound();
      const field = nulIn(req.query, '') ?? nulIn(req.body, '');
      if (field !== null) throw Errors.raw(400, { [field]: ['Null characters are not allowed.'] });
    } else if (api === 'platform' || api === 'web') {
      // Grape's coercion answer, as the commits filters give it for a NUL in `author` or `path`
      const param = nulIn(req.params, '') ?? nulIn(req.query, '') ?? nulIn(req.body, '');
      if (param !== null) throw Errors.param(`${param} is invalid`);
    }
  });
}
