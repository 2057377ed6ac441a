// Resolves req.actor once per request from every credential kind, then applies the route's guard.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ANONYMOUS } from '../../domain/access/actor.ts';
import type { Credentials } from '../../domain/auth/authenticator.ts';
import { SESSION_COOKIE } from '../../domain/auth/sessions.service.ts';
import { routeScopes } from '../../domain/tokens/scopes.ts';
import type { Container } from '../../container.ts';
import { Errors } from '../../lib/errors.ts';
import { readVersions } from '../../db/versions.ts';

function first(v: unknown): string | undefined {
  if (Array.isArray(v)) v = v[0];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function param(q: Record<string, unknown>, b: Record<string, unknown>, k: string): string | undefined {
  return first(q[k]) ?? first(b[k]);
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The runner-facing protocol (GitLab's API::Ci::Runner): the route authenticates the runner or job
     * token itself (authenticate_runner! / authenticate_job!), so no API credential is resolved here —
     * a JOB-TOKEN of a job that has just finished must reach the route, which answers 403 with Job-Status.
     */
    runnerApi?: boolean;
  }
}

const NO_BODY: Record<string, unknown> = {};
const BEARER = /^bearer\s+/i;
/** DRF's TokenAuthentication keyword (the translation API's clients, such as wlc) */
const TOKEN = /^token\s+/i;

export function credentialsOf(req: FastifyRequest): Credentials {
  const q = (req.query ?? NO_BODY) as Record<string, unknown>;
  const b = (req.body && typeof req.body === 'object' && !Buffer.isBuffer(req.body) ? req.body : NO_BODY) as Record<string, unknown>;
  const h = req.headers;
  const authz = first(h.authorization);
  const bearer = authz && BEARER.test(authz) ? authz.replace(BEARER, '').trim() : undefined;
  const drfToken = authz && TOKEN.test(authz) ? authz.replace(TOKEN, '').trim() : undefined;
  return {
    privateToken: first(h['private-token']) ?? param(q, b, 'private_token') ?? (drfToken || undefined),
    bearer: bearer || undefined,
    accessToken: param(q, b, 'access_token'),
    jobToken: first(h['job-token']) ?? param(q, b, 'job_token'),
    sessionId: (req as any).cookies?.[SESSION_COOKIE] || undefined,
    csrfToken: first(h['x-csrf-token']) ?? param(q, b, 'authenticity_token'),
    sudo: first(h.sudo) ?? param(q, b, 'sudo'),
    method: req.method,
    path: req.url.split('?')[0],
  };
}

/** The scopes that grant a route's method: computed once per route config and method. */
const scopeMemo = new WeakMap<object, Map<string, readonly string[]>>();
function allowedScopes(cfg: { scopes?: string[]; onlyScopes?: string[] }, method: string): readonly string[] {
  if (cfg.onlyScopes) return cfg.onlyScopes;
  let byMethod = scopeMemo.get(cfg);
  if (!byMethod) scopeMemo.set(cfg, (byMethod = new Map()));
  let scopes = byMethod.get(method);
  if (!scopes) byMethod.set(method, (scopes = routeScopes(method, cfg.scopes)));
  return scopes;
}

export function authPlugin(app: FastifyInstance, c: Container): void {
  app.decorateRequest('actor', null as any);
  // One snapshot of the table versions per request, taken on first use; the request is the snapshot the
  // authenticator caches credentials against (no per-request closures).
  app.decorateRequest('versionsSnapshot', null);
  app.decorateRequest('versions', function (this: FastifyRequest) {
    return (this.versionsSnapshot ??= readVersions(c.db));
  });
  app.decorateRequest('forgetVersions', function (this: FastifyRequest) {
    this.versionsSnapshot = null;
  });
  app.addHook('preValidation', async (req) => {
    const cfg = req.routeOptions.config;
    if (!cfg || (cfg.api !== 'platform' && cfg.api !== 'translation') || cfg.runnerApi) {
      req.actor = ANONYMOUS;
      return;
    }
    const creds = credentialsOf(req);
    // GitLab looks for a job token only on its job-token endpoints; elsewhere it is no credential at all
    if (creds.jobToken && !cfg.jobToken) throw Errors.unauthorized();
    creds.snapshot = req;
    req.actor = await c.auth.authenticate(creds, allowedScopes(cfg, req.method));
    const rule = cfg.auth ?? 'optional';
    if (rule !== 'optional' && !req.actor.user) throw Errors.unauthorized();
    if (rule === 'admin' && !req.actor.isAdmin) throw Errors.forbidden();
  });
}
