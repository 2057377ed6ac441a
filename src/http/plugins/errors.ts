// One error handler that renders per API (route config.api, or the URL prefix for unknown routes),
// plus GitLab's catch-all 404 and Grape's 405 with Allow.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import FindMyWay from 'find-my-way';
import { DomainError, platformBody } from '../../lib/errors.ts';
import { MovedError } from '../../domain/access/resolve.ts';
import type { ApiKind } from '../types.ts';
import type { Web } from '../web/web.ts';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** DRF's TokenAuthentication on a 401: a token was presented (and not accepted) → its message; none → null. */
function drfTokenProblem(req: FastifyRequest): string | null {
  const authz = req.headers.authorization;
  const value = Array.isArray(authz) ? authz[0] : authz;
  if (value && /^(token|bearer)(\s|$)/i.test(value)) {
    const parts = value.trim().split(/\s+/);
    if (parts.length === 1) return 'Invalid token header. No credentials provided.';
    if (parts.length > 2) return 'Invalid token header. Token string should not contain spaces.';
    return 'Invalid token.';
  }
  return req.headers['private-token'] ? 'Invalid token.' : null;
}

function apiOf(req: FastifyRequest): ApiKind {
  const configured = (req.routeOptions?.config as any)?.api as ApiKind | undefined;
  if (configured) return configured;
  const url = req.url;
  if (url.startsWith('/api/v4') || url.startsWith('/api/v3')) return 'platform';
  if (url.startsWith('/api/')) return 'translation';
  return 'web';
}

/** Grape's name for a nested parameter: /not/author_id → not[author_id]. */
function paramName(instancePath: string, extra?: string): string {
  const parts = instancePath.split('/').filter(Boolean);
  if (extra) parts.push(extra);
  if (!parts.length) return '';
  return (
    parts[0] +
    parts
      .slice(1)
      .map((p) => `[${p}]`)
      .join('')
  );
}

/** Ajv errors → Grape's "<attr> <message>" list joined with ", ". */
export function grapeMessage(validation: any[]): string {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const e of validation) {
    let text: string;
    switch (e.keyword) {
      case 'required':
        text = `${paramName(e.instancePath, e.params.missingProperty)} is missing`;
        break;
      case 'enum':
      case 'const':
      case 'minimum':
      case 'maximum':
      case 'exclusiveMinimum':
      case 'maxLength':
      case 'minItems':
      case 'maxItems':
        text = `${paramName(e.instancePath)} does not have a valid value`;
        break;
      case 'minLength':
        text = `${paramName(e.instancePath)} is empty`;
        break;
      case 'not':
        text = `${paramName(e.instancePath)} has a value not allowed`;
        break;
      case 'type':
      case 'x-int32':
        // Grape coerces a list of scalars as a whole: `user_ids[]=abc` is "user_ids is invalid"
        text = `${paramName(e.instancePath.replace(/\/\d+$/, ''))} is invalid`;
        break;
      case 'anyOf':
      case 'oneOf':
        continue; // the branch errors say it better
      default:
        text = `${paramName(e.instancePath)} is invalid`;
    }
    if (!seen.has(text)) {
      seen.add(text);
      out.push(text);
    }
  }
  return out.join(', ') || 'parameters are invalid';
}

/** DRF: {"field": ["This field is required."]} */
function drfValidation(validation: any[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const e of validation) {
    const field = e.keyword === 'required' ? e.params.missingProperty : e.instancePath.split('/').filter(Boolean).join('.') || 'non_field_errors';
    const msg = e.keyword === 'required' ? 'This field is required.' : e.keyword === 'enum' ? 'Select a valid choice.' : 'Enter a valid value.';
    (out[field] ??= []).push(msg);
  }
  return out;
}

const DRF_DETAIL: Record<number, string> = {
  400: 'Bad request.',
  401: 'Authentication credentials were not provided.',
  403: 'You do not have permission to perform this action.',
  404: 'Not found.',
  405: 'Method not allowed.',
  409: 'Conflict.',
  413: 'Request entity too large.',
  429: 'Request was throttled.',
  503: 'Service unavailable.',
};

/** Weblate's body for a DomainError: DRF's serializer errors, its exception handler's shapes, or {"detail"}. */
function drfBody(err: DomainError): unknown {
  switch (err.kind) {
    case 'invalid':
    case 'raw':
      return err.detail;
    case 'rejected':
      return { error: err.detail };
    case 'locked':
      return { type: 'client_error', errors: [{ code: 'repository-locked', detail: err.detail, attr: null }] };
    default:
      return { detail: typeof err.detail === 'string' && err.kind !== 'not_found' ? err.detail : (DRF_DETAIL[err.status] ?? String(err.status)) };
  }
}

export function send(reply: FastifyReply, status: number, body: unknown, headers: Record<string, string> = {}): FastifyReply {
  reply.code(status);
  for (const [k, v] of Object.entries(headers)) reply.header(k, v);
  if (body === undefined || body === null) return reply.send();
  return reply.type('application/json').send(JSON.stringify(body));
}

/**
 * A renamed or moved project/group named by its old path: GET → 301 to the same URL with the new path
 * (clients repeat the request there); anything else → 405 (reference §2).
 */
function moved(err: MovedError, req: FastifyRequest, reply: FastifyReply, externalUrl: string): FastifyReply {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    const what = err.resource === 'Project' ? 'projects' : 'groups';
    return send(reply, 405, { message: `Non GET methods are not allowed for moved ${what}` });
  }
  const old = String((req.params as { id?: string })?.id ?? '');
  const [path, query] = req.url.split('?');
  const encodedOld = encodeURIComponent(old);
  const encodedNew = encodeURIComponent(err.fullPath);
  const i = path.indexOf(encodedOld) >= 0 ? path.indexOf(encodedOld) : path.indexOf(old);
  const len = path.indexOf(encodedOld) >= 0 ? encodedOld.length : old.length;
  const newPath = i >= 0 ? path.slice(0, i) + encodedNew + path.slice(i + len) : path;
  reply.header('location', `${externalUrl}${newPath}${query !== undefined ? '?' + query : ''}`);
  return send(reply, 301, { message: '301 Moved Permanently' });
}

type Router = ReturnType<typeof FindMyWay>;
/** Routers by the routes they hold: the apps one process builds (tests, benchmarks) share one. */
const routers = new Map<string, Router>();

/** The router of these routes: what tells a 405 (the path exists for other methods) from a 404. */
function routerOf(routes: string[]): Router {
  const key = routes.join('\n');
  let router = routers.get(key);
  if (router) return router;
  router = FindMyWay();
  for (const r of routes) {
    const i = r.indexOf(' ');
    try {
      router.on(r.slice(0, i) as any, r.slice(i + 1), () => {});
    } catch {
      /* duplicate registrations (HEAD for GET) are fine */
    }
  }
  routers.set(key, router);
  return router;
}

export function errorHandling(app: FastifyInstance, externalUrl: string, web?: Web): void {
  const routes: string[] = [];
  let built: Router | undefined;
  const router = () => (built ??= routerOf(routes)); // built on the first unknown route, once the app is sealed
  app.addHook('onRoute', (route: RouteOptions) => {
    // git's catch-all routes answer only git URLs; they must not make every path look routable
    if ((route.config as { api?: string } | undefined)?.api === 'git') return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const m of methods) routes.push(`${m} ${route.url}`);
  });

  app.setErrorHandler((err: FastifyError | DomainError, req, reply) => {
    const api = apiOf(req);
    if (api === 'web' && web) return web.error(err, req, reply);
    if (err instanceof MovedError) return moved(err, req, reply, externalUrl);
    if (err instanceof DomainError) {
      if (api === 'translation') {
        if (err.status === 401) {
          // DRF: the first authenticator (TokenAuthentication) names the scheme
          const detail = err.kind === 'invalid_token' ? 'Invalid token.' : (drfTokenProblem(req) ?? DRF_DETAIL[401]);
          return send(reply, 401, { detail }, { 'www-authenticate': 'Token' });
        }
        return send(reply, err.status, drfBody(err), err.headers);
      }
      const r = platformBody(err);
      return send(reply, r.status, r.body, r.headers);
    }
    const fe = err as FastifyError;
    if (fe.validation) {
      if (api === 'translation') return send(reply, 400, drfValidation(fe.validation));
      return send(reply, 400, { error: grapeMessage(fe.validation) });
    }
    const status = fe.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      // body parser errors, payload too large, unsupported media type …
      if (api === 'translation') return send(reply, status, { detail: fe.message });
      if (status === 413) return send(reply, 413, { message: '413 Request Entity Too Large' });
      if (status === 415) return send(reply, 415, { message: '415 Unsupported Media Type' });
      return send(reply, status, { error: fe.message });
    }
    req.log.error({ err }, 'unhandled error'); // the request logger carries reqId
    if (api === 'translation') return send(reply, 500, { detail: 'Internal Server Error' });
    return send(reply, 500, { message: '500 Internal Server Error' });
  });

  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0];
    if (path.startsWith('/api/v3/') || path === '/api/v3') {
      return send(reply, 410, { error: 'API V3 is no longer supported. Use API V4 instead.' });
    }
    const allow = METHODS.filter((m) => m !== req.method && router().find(m as any, path));
    const api = apiOf(req);
    if (allow.length && router().find(req.method as any, path) === null) {
      reply.header('allow', allow.join(', '));
      if (api === 'translation') return send(reply, 405, { detail: `Method "${req.method}" not allowed.` });
      return send(reply, 405, { error: '405 Not Allowed' });
    }
    if (api === 'translation') return send(reply, 404, { detail: 'Not found.' });
    if (api === 'platform') return send(reply, 404, { error: '404 Not Found' });
    // the web interface: namespace paths (users, groups, projects and their pages) or its 404 page
    if (web && !path.startsWith('/api/')) return req.method === 'GET' || req.method === 'HEAD' ? web.dispatch(req, reply) : web.notFound(req, reply);
    return reply.code(404).type('text/plain').send('Not Found');
  });
}
