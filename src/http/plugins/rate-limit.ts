// Instance throttles from application settings, as GitLab's Rack::Attack applies them
// (lib/gitlab/rack_attack.rb, lib/gitlab/rack_attack/request.rb):
//   throttle_unauthenticated_api   API requests without a credential, per client IP
//   throttle_authenticated_api     API requests of a user (every token of the user shares the count)
//   throttle_unauthenticated_web   web requests (HTML pages, uploads) without a session, per client IP
//   throttle_authenticated_web     web requests of a signed-in user (session cookie or token)
// Windows are fixed and aligned on the epoch, as Rack::Attack's cache keys are (epoch / period).
// Over the limit: Rack::Attack's throttled response — 429, `Content-Type: text/plain`, the body
// `rate_limiting_response_text` or `Retry later`, plus a newline, and Retry-After / RateLimit-* headers.
// The translation API answers DRF's throttled body instead (its clients expect DRF).
// Counters live in each process: behind a load balancer every node counts on its own (README).
// Endpoint limiters (repository archive, job logs) are not here: they keep GitLab's JSON bodies.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import { type Settings, settingNamed } from '../../domain/core/settings-definitions.ts';
import { routeScopes } from '../../domain/tokens/scopes.ts';
import { DomainError } from '../../lib/errors.ts';
import { credentialsOf } from './auth.ts';

interface Window {
  start: number;
  end: number;
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
    const start = Math.floor(now / periodMs) * periodMs;
    let w = this.windows.get(key);
    if (!w || w.start !== start) {
      if (!w && this.windows.size >= this.maxKeys) this.sweep(now);
      w = { start, end: start + periodMs, count: 0 };
      this.windows.set(key, w);
    }
    w.count++;
    return { allowed: w.count <= limit, count: w.count, resetAt: start + periodMs };
  }

  /** Drops finished windows; when every window is live, starts over rather than grow without bound. */
  private sweep(now: number): void {
    for (const [k, w] of this.windows) if (w.end <= now) this.windows.delete(k);
    if (this.windows.size >= this.maxKeys) this.windows.clear();
  }
}

/**
 * Gitlab::RackAttack.throttled_response_headers: the limit rounded to a 60-second window, the count,
 * what is left, and when the window ends (Retry-After from the epoch-aligned period).
 */
export function throttledHeaders(name: string, limit: number, periodSec: number, observed: number, nowMs: number): Record<string, string> {
  const now = Math.floor(nowMs / 1000);
  const retryAfter = periodSec - (now % periodSec);
  const reset = now + retryAfter;
  return {
    'ratelimit-name': name,
    'ratelimit-limit': String(Math.ceil((limit * 60) / periodSec)),
    'ratelimit-observed': String(observed),
    'ratelimit-remaining': String(limit > observed ? limit - observed : 0),
    'ratelimit-reset': String(reset),
    'ratelimit-resettime': new Date(reset * 1000).toUTCString(),
    'retry-after': String(retryAfter),
  };
}

/** Gitlab::Throttle.rate_limiting_response_text */
export function throttledText(s: Settings): string {
  const custom = typeof s.rate_limiting_response_text === 'string' ? s.rate_limiting_response_text.trim() : '';
  return `${custom || 'Retry later'}\n`;
}

type Kind = 'api' | 'web' | null;

function kindOf(req: FastifyRequest): Kind {
  const api = (req.routeOptions.config as { api?: string } | undefined)?.api;
  if (api === 'platform' || api === 'translation') return 'api';
  if (api === 'web') return 'web';
  return null;
}

const hasCredentials = (req: FastifyRequest): boolean => {
  const cr = credentialsOf(req);
  return Boolean(cr.privateToken || cr.bearer || cr.accessToken || cr.jobToken || cr.sessionId);
};

interface Throttle {
  name: string;
  enabled: string;
  requests: string;
  period: string;
}

const THROTTLES = {
  unauthenticated_api: t('throttle_unauthenticated_api'),
  authenticated_api: t('throttle_authenticated_api'),
  unauthenticated_web: t('throttle_unauthenticated_web'),
  authenticated_web: t('throttle_authenticated_web'),
};

function t(name: string): Throttle {
  return { name, enabled: `${name}_enabled`, requests: `${name}_requests_per_period`, period: `${name}_period_in_seconds` };
}

const COUNTED = Symbol('rateLimitCounted');
type Counted = FastifyRequest & { [COUNTED]?: boolean };

class Throttled extends Error {
  constructor(
    readonly throttle: string,
    readonly headers: Record<string, string>,
    readonly text: string,
  ) {
    super('throttled');
  }
}

/** Rack::Attack's answer (platform and web); DRF's for the translation API. */
function answer(req: FastifyRequest, reply: FastifyReply, e: Throttled): void {
  const api = (req.routeOptions.config as { api?: string } | undefined)?.api;
  if (api === 'translation') throw new DomainError('rate_limited', 429, undefined, e.headers);
  reply.code(429).headers(e.headers).header('content-type', 'text/plain').send(e.text);
}

export function rateLimitPlugin(app: FastifyInstance, c: Container): void {
  const limiter = new FixedWindowLimiter();

  const count = (s: Settings, th: Throttle, who: string): void => {
    if (!settingNamed(s, th.enabled)) return;
    const limit = settingNamed(s, th.requests) as number;
    const period = settingNamed(s, th.period) as number;
    const now = Date.now();
    const hit = limiter.hit(`${th.name}:${who}`, limit, period, now);
    if (!hit.allowed) throw new Throttled(th.name, throttledHeaders(th.name, limit, period, hit.count, now), throttledText(s));
  };

  const byIp = async (req: Counted, kind: 'api' | 'web'): Promise<void> => {
    req[COUNTED] = true;
    const s = await c.settings.get();
    count(s, kind === 'api' ? THROTTLES.unauthenticated_api : THROTTLES.unauthenticated_web, req.ip);
  };

  const offFor = (s: Settings | null, kind: 'api' | 'web'): boolean =>
    s !== null &&
    (kind === 'api'
      ? !s.throttle_unauthenticated_api_enabled && !s.throttle_authenticated_api_enabled
      : !s.throttle_unauthenticated_web_enabled && !s.throttle_authenticated_web_enabled);

  const respond = (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => (err: unknown) => {
    if (err instanceof Throttled) {
      try {
        answer(req, reply, err);
      } catch (e) {
        return done(e as Error);
      }
      return; // answered: the request goes no further
    }
    done(err as Error);
  };

  // Requests without any credential are counted before authentication, so that anonymous calls to
  // routes that need a user are throttled too (Rack::Attack runs before the application).
  app.addHook('onRequest', (req: Counted, reply, done) => {
    const kind = kindOf(req);
    // Most requests: throttles off (known without waiting) or not a throttled route.
    if (!kind || offFor(c.settings.cached(), kind) || hasCredentials(req)) return done();
    byIp(req, kind).then(() => done(), respond(req, reply, done));
  });

  // After the auth plugin has resolved req.actor (it registers its preValidation hook first).
  app.addHook('preValidation', (req: Counted, reply, done) => {
    const kind = kindOf(req);
    if (!kind || offFor(c.settings.cached(), kind) || req[COUNTED]) return done();
    afterAuth(req, kind).then(() => done(), respond(req, reply, done));
  });

  const afterAuth = async (req: Counted, kind: 'api' | 'web'): Promise<void> => {
    const s = await c.settings.get();
    let user = req.actor?.user ?? null;
    if (kind === 'web' && !user && s.throttle_authenticated_web_enabled) {
      // web routes resolve their session themselves: the throttle resolves it only when it is on
      try {
        user = (await c.auth.authenticate(credentialsOf(req), routeScopes(req.method))).user ?? null;
      } catch {
        user = null;
      }
    }
    if (!user) return byIp(req, kind);
    count(s, kind === 'api' ? THROTTLES.authenticated_api : THROTTLES.authenticated_web, `user:${user.id}`);
  };
}
