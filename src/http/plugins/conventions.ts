// Wire conventions shared by every response: exact JSON content type, security headers,
// X-Request-Id, and Grape-like coercion of query/form values.
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';

const TRUE = new Set(['1', 'true', 't', 'yes', 'y', 'on']);
const FALSE = new Set(['0', 'false', 'f', 'no', 'n', 'off']);

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
    if (TRUE.has(l)) obj[k] = true;
    else if (FALSE.has(l)) obj[k] = false;
  }
}

export function conventions(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const qKeys = booleanKeys((route.schema as any)?.querystring);
    const bKeys = booleanKeys((route.schema as any)?.body);
    if (!qKeys.length && !bKeys.length) return;
    const hook = (req: any, _reply: unknown, done: () => void) => {
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
