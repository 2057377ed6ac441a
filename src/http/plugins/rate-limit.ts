// User and IP throttles from application settings (throttle_*_api_*): a fixed window per node,
// 429 {"message":"429 Too Many Requests"} with Retry-After.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';
import { Errors } from '../../lib/errors.ts';

export class FixedWindowLimiter {
  private windows = new Map<string, { start: number; count: number }>();
  /** Returns 0 when allowed, else the seconds until the window resets. */
  hit(key: string, limit: number, periodSec: number, now = Date.now()): number {
    const w = this.windows.get(key);
    if (!w || now - w.start >= periodSec * 1000) {
      if (this.windows.size > 100_000) this.windows.clear();
      this.windows.set(key, { start: now, count: 1 });
      return 0;
    }
    w.count++;
    if (w.count <= limit) return 0;
    return Math.max(1, Math.ceil((w.start + periodSec * 1000 - now) / 1000));
  }
}

export function rateLimitPlugin(app: FastifyInstance, c: Container): void {
  const limiter = new FixedWindowLimiter();
  app.addHook('preHandler', async (req) => {
    const cfg = req.routeOptions.config as any;
    if (!cfg || (cfg.api !== 'platform' && cfg.api !== 'translation')) return;
    const s = await c.settings.get();
    const user = req.actor?.user;
    let retry = 0;
    if (user && s.throttle_authenticated_api_enabled) {
      retry = limiter.hit(`u:${user.id}`, s.throttle_authenticated_api_requests_per_period, s.throttle_authenticated_api_period_in_seconds);
    } else if (!user && s.throttle_unauthenticated_api_enabled) {
      retry = limiter.hit(`ip:${req.ip}`, s.throttle_unauthenticated_api_requests_per_period, s.throttle_unauthenticated_api_period_in_seconds);
    }
    if (retry) throw Errors.rateLimited(retry, s.rate_limiting_response_text || '429 Too Many Requests');
  });
}
