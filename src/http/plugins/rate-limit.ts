// API throttles from application settings, like GitLab's Rack::Attack throttle_authenticated_api
// (per user) and throttle_unauthenticated_api (per IP): a fixed window per key and per node.
// Over the limit: 429 {"message":"429 Too Many Requests"} with Retry-After and RateLimit-* headers.
// rate_limiting_response_text is not used: our 429 body is always the JSON above (the spec's wording).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import { DomainError } from '../../lib/errors.ts';
import { credentialsOf } from './auth.ts';

interface Window {
  start: number;
  count: number;
}

export interface Hit {
  allowed: boolean;
  /** requests counted in the current window, this one included */
  count: number;
  /** when the window ends (ms since the epoch) */
  resetAt: number;
}

export class FixedWindowLimiter {
  private windows = new Map<string, Window>();

  constructor(private readonly maxKeys = 100_000) {}

  hit(key: string, limit: number, periodSec: number, now = Date.now()): Hit {
    const periodMs = periodSec * 1000;
    let w = this.windows.get(key);
    if (!w || now - w.start >= periodMs) {
      if (!w && this.windows.size >= this.maxKeys) this.sweep(now, periodMs);
      w = { start: now, count: 0 };
      this.windows.set(key, w);
    }
    w.count++;
    return { allowed: w.count <= limit, count: w.count, resetAt: w.start + periodMs };
  }

  /** Drops finished windows; when every window is live, starts over rather than grow without bound. */
  private sweep(now: number, periodMs: number): void {
    for (const [k, w] of this.windows) if (now - w.start >= periodMs) this.windows.delete(k);
    if (this.windows.size >= this.maxKeys) this.windows.clear();
  }
}

const COUNTED = Symbol('rateLimitCounted');
type Counted = FastifyRequest & { [COUNTED]?: boolean };

function throttled(name: string, limit: number, periodSec: number, hit: Hit, now: number): DomainError {
  const retryAfter = Math.max(1, Math.ceil((hit.resetAt - now) / 1000));
  return new DomainError('rate_limited', 429, undefined, {
    'ratelimit-name': name,
    'ratelimit-limit': String(Math.ceil((limit * 60) / periodSec)), // per minute, as Rack::Attack reports it
    'ratelimit-observed': String(hit.count),
    'ratelimit-remaining': '0',
    'ratelimit-reset': String(Math.ceil(hit.resetAt / 1000)),
    'ratelimit-resettime': new Date(hit.resetAt).toUTCString(),
    'retry-after': String(retryAfter),
  });
}

const isApi = (req: FastifyRequest): boolean => {
  const api = (req.routeOptions.config as { api?: string } | undefined)?.api;
  return api === 'platform' || api === 'translation';
};

const hasCredentials = (req: FastifyRequest): boolean => {
  const cr = credentialsOf(req);
  return Boolean(cr.privateToken || cr.bearer || cr.accessToken || cr.jobToken || cr.sessionId);
};

export function rateLimitPlugin(app: FastifyInstance, c: Container): void {
  const limiter = new FixedWindowLimiter();

  const byIp = async (req: Counted): Promise<void> => {
    req[COUNTED] = true;
    const s = await c.settings.get();
    if (!s.throttle_unauthenticated_api_enabled) return;
    const limit = s.throttle_unauthenticated_api_requests_per_period;
    const period = s.throttle_unauthenticated_api_period_in_seconds;
    const now = Date.now();
    const hit = limiter.hit(`ip:${req.ip}`, limit, period, now);
    if (!hit.allowed) throw throttled('throttle_unauthenticated_api', limit, period, hit, now);
  };

  // Requests without any credential are counted before authentication, so that anonymous calls to
  // routes that need a user are throttled too (Rack::Attack runs before the API).
  app.addHook('onRequest', (req: Counted, _reply, done) => {
    // Most requests: throttles off (known without waiting) or not an API route.
    if (!isApi(req) || c.settings.cached()?.throttle_unauthenticated_api_enabled === false || hasCredentials(req)) return done();
    byIp(req).then(() => done(), done);
  });

  // After the auth plugin has resolved req.actor (it registers its preValidation hook first).
  app.addHook('preValidation', (req: Counted, _reply, done) => {
    const s = c.settings.cached();
    if (!isApi(req) || (s && !s.throttle_authenticated_api_enabled && !s.throttle_unauthenticated_api_enabled)) return done();
    afterAuth(req).then(() => done(), done);
  });

  const afterAuth = async (req: Counted): Promise<void> => {
    const user = req.actor?.user;
    if (!user) {
      if (!req[COUNTED]) await byIp(req);
      return;
    }
    const s = await c.settings.get();
    if (!s.throttle_authenticated_api_enabled) return;
    const limit = s.throttle_authenticated_api_requests_per_period;
    const period = s.throttle_authenticated_api_period_in_seconds;
    const now = Date.now();
    const hit = limiter.hit(`user:${user.id}`, limit, period, now);
    if (!hit.allowed) throw throttled('throttle_authenticated_api', limit, period, hit, now);
  };
}
