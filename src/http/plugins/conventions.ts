// Wire conventions shared by every response: exact JSON content type, security headers,
// X-Request-Id, and Grape-like coercion of query/form values (booleans, 32-bit integers, one value
// per one-value parameter).
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { Errors } from '../../lib/errors.ts';
import { GRAPE_FALSE, GRAPE_TRUE } from '../platform/schemas/common.ts';

/** Boolean-typed top-level properties of a schema (also inside anyOf/allOf wrappers). */
function booleanKeys(schema: any): string[] {
  if (!schema || typeof schema !== 'object') return [];
  const props = schema.properties ?? {};
  return Object.keys(props).filter((k) => {
    const p = props[k];
    return p?.type === 'boolean' || (Array.isArray(p?.anyOf) && p.anyOf.some((x: any) => x?.type === 'boolean'));
  });
}

function coerceBooleans(obj: any, keys: string[]): void {
  if (!obj || typeof obj !== 'object') return;
  for (const k of keys) {
    const v = obj[k];
    if (typeof v !== 'string') continue;
    const l = v.toLowerCase();
    if (GRAPE_TRUE.has(l)) obj[k] = true;
    else if (GRAPE_FALSE.has(l)) obj[k] = false;
  }
}

/**
 * Every integer of a query or body schema holds what an integer column holds (the `x-int32` keyword,
 * defined in app.ts): `page=99999999999999999999`, `page=1e999` or `id_after=2147483648` is
 * "<param> is invalid", not a database error. A schema that says `'x-int32': false` leaves the range to
 * the domain (its own validation message). Path ids are not marked: one beyond the column names nothing,
 * a 404 with the resource's name, which the lookups answer.
 */
function int32Integers(schema: any, depth = 0): void {
  if (!schema || typeof schema !== 'object' || depth > 32) return;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('integer') && schema['x-int32'] === undefined) schema['x-int32'] = true;
  for (const key of ['properties', 'patternProperties'] as const) {
    if (schema[key] && typeof schema[key] === 'object') for (const v of Object.values(schema[key])) int32Integers(v, depth + 1);
  }
  for (const v of Array.isArray(schema.items) ? schema.items : [schema.items]) int32Integers(v, depth + 1);
  int32Integers(schema.additionalProperties, depth + 1);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) if (Array.isArray(schema[key])) for (const v of schema[key]) int32Integers(v, depth + 1);
}

const SCALAR_TYPES = new Set(['string', 'integer', 'number', 'boolean', 'null']);

/** A schema that takes one value: scalar types, constants and enums of scalars, unions of those. */
function isScalar(p: any): boolean {
  if (!p || typeof p !== 'object') return false;
  for (const key of ['anyOf', 'oneOf'] as const) if (Array.isArray(p[key])) return p[key].every(isScalar);
  if (p.type !== undefined) return (Array.isArray(p.type) ? p.type : [p.type]).every((t: string) => SCALAR_TYPES.has(t));
  if ('const' in p) return p.const === null || typeof p.const !== 'object';
  if (Array.isArray(p.enum)) return p.enum.every((v: unknown) => v === null || typeof v !== 'object');
  return false;
}

/** Top-level properties of a schema that take one value. */
function scalarKeys(schema: any): string[] {
  const props = schema?.properties ?? {};
  return Object.keys(props).filter((k) => isScalar(props[k]));
}

/** Names among `keys` given a list or a hash (`author[]=`, `author[a]=1`, `{"author": ["x"]}`). */
function listedScalars(obj: any, keys: string[], out: Set<string>): void {
  if (!obj || typeof obj !== 'object' || Buffer.isBuffer(obj)) return;
  for (const k of keys) {
    const v = obj[k];
    if (v !== null && typeof v === 'object' && !Buffer.isBuffer(v)) out.add(k);
  }
}

export function conventions(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const schema = route.schema as any;
    for (const part of ['querystring', 'body'] as const) int32Integers(schema?.[part]);
    const qKeys = booleanKeys(schema?.querystring);
    const bKeys = booleanKeys(schema?.body);
    // Grape coerces a list or a hash given for a one-value parameter to "<param> is invalid"; Ajv's
    // `coerceTypes: 'array'` would take the first item of a one-item list instead.
    const platform = (route.config as { api?: string } | undefined)?.api === 'platform';
    const qScalars = platform ? scalarKeys(schema?.querystring) : [];
    const bScalars = platform ? scalarKeys(schema?.body) : [];
    if (!qKeys.length && !bKeys.length && !qScalars.length && !bScalars.length) return;
    const hook = (req: any, _reply: unknown, done: (err?: Error) => void) => {
      if (qScalars.length || bScalars.length) {
        const listed = new Set<string>();
        listedScalars(req.query, qScalars, listed);
        listedScalars(req.body, bScalars, listed);
        if (listed.size) return done(Errors.param([...listed].map((k) => `${k} is invalid`).join(', ')));
      }
      coerceBooleans(req.query, qKeys);
      coerceBooleans(req.body, bKeys);
      done();
    };
    const existing = route.preValidation;
    route.preValidation = existing ? [...(Array.isArray(existing) ? existing : [existing]), hook] : [hook];
  });

  // GitLab accepts an empty JSON body, and Grape merges query parameters into the body's.
  const jsonParser = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (typeof body === 'string' && body.trim() === '') return done(null, {});
    jsonParser(req, body as string, done);
  });
  app.addHook('preValidation', (req, _reply, done) => {
    mergeQueryIntoBody(req);
    done();
  });
  function mergeQueryIntoBody(req: FastifyRequest): void {
    const cfg = req.routeOptions.config as { api?: string } | undefined;
    if (cfg?.api !== 'platform' || req.method === 'GET' || req.method === 'HEAD') return;
    if (req.body === undefined || req.body === null) req.body = {};
    const body = req.body as Record<string, unknown>;
    if (typeof body !== 'object' || Array.isArray(body) || Buffer.isBuffer(body)) return;
    for (const [k, v] of Object.entries((req.query ?? {}) as Record<string, unknown>)) if (!(k in body)) body[k] = v;
  }

  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    reply.header('x-frame-options', 'SAMEORIGIN');
    reply.header('x-content-type-options', 'nosniff');
    done();
  });

  // python-gitlab compares the content type literally: no "; charset=utf-8".
  app.addHook('onSend', (_req, reply, payload, done) => {
    const ct = reply.getHeader('content-type');
    if (typeof ct === 'string' && ct.startsWith('application/json;')) reply.header('content-type', 'application/json');
    done(null, payload);
  });
}
