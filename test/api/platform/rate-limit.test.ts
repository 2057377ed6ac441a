import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { buildTestApp } from '../../helpers/build-app.ts';
import { FixedWindowLimiter } from '../../../src/http/plugins/rate-limit.ts';
import { inOneWindow } from '../../helpers/rate-window.ts';

const SETTINGS = '/api/v4/application/settings';

async function configure(app: FastifyInstance, root: Record<string, string>, payload: object): Promise<void> {
  const res = await app.inject({ method: 'PUT', url: SETTINGS, headers: root, payload });
  assert.equal(res.statusCode, 200, res.body);
}

/** Gitlab::RackAttack's throttled response: text/plain `Retry later`, Retry-After and RateLimit-* headers. */
function assertThrottled(
  res: Awaited<ReturnType<FastifyInstance['inject']>>,
  name: string,
  period: number,
  limitPerMinute: number,
  observed: number,
  text = 'Retry later\n',
): void {
  assert.equal(res.statusCode, 429);
  assert.equal(res.headers['content-type'], 'text/plain');
  assert.equal(res.body, text);
  const retry = Number(res.headers['retry-after']);
  assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= period, `retry-after ${res.headers['retry-after']}`);
  assert.equal(res.headers['ratelimit-name'], name);
  assert.equal(res.headers['ratelimit-limit'], String(limitPerMinute));
  assert.equal(res.headers['ratelimit-observed'], String(observed));
  assert.equal(res.headers['ratelimit-remaining'], '0');
  const reset = Number(res.headers['ratelimit-reset']);
  // windows are aligned on the epoch, as Rack::Attack's are: the reset is a multiple of the period
  assert.equal(reset % period, 0, `ratelimit-reset ${reset}`);
  assert.ok(Math.abs(reset - (Math.floor(Date.now() / 1000) + retry)) <= 2, `ratelimit-reset ${reset}`);
  assert.equal(res.headers['ratelimit-resettime'], new Date(reset * 1000).toUTCString());
}

test('no throttling by default', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const u = await seed.user();
  const tok = await seed.token(u);
  for (let i = 0; i < 20; i++) {
    assert.equal((await app.inject({ method: 'GET', url: '/api/v4/version', headers: tok.headers })).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: '/api/v4/version' })).statusCode, 401);
  }
});

test('authenticated API throttle: per user, the 4th request of 3 per 60 s is 429; other users are unaffected', async (t) => {
  await inOneWindow(60, async () => {
    const { app, seed, root } = await buildTestApp(t);
    await configure(app, root, {
      throttle_authenticated_api_enabled: true,
      throttle_authenticated_api_requests_per_period: 3,
      throttle_authenticated_api_period_in_seconds: 60,
    });
    const aliceUser = await seed.user();
    const alice = await seed.token(aliceUser);
    const bob = await seed.token(await seed.user());

    for (let i = 0; i < 3; i++) assert.equal((await app.inject({ method: 'GET', url: '/api/v4/version', headers: alice.headers })).statusCode, 200);
    const res = await app.inject({ method: 'GET', url: '/api/v4/version', headers: alice.headers });
    assertThrottled(res, 'throttle_authenticated_api', 60, 3, 4);
    // one window for every route of the API
    assertThrottled(await app.inject({ method: 'GET', url: '/api/v4/metadata', headers: alice.headers }), 'throttle_authenticated_api', 60, 3, 5);

    for (let i = 0; i < 3; i++) assert.equal((await app.inject({ method: 'GET', url: '/api/v4/version', headers: bob.headers })).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: '/api/v4/version', headers: bob.headers })).statusCode, 429);

    // a second token of the same user shares the user's window
    const alice2 = await seed.token(aliceUser);
    assert.equal((await app.inject({ method: 'GET', url: '/api/v4/version', headers: alice2.headers })).statusCode, 429);

    // anonymous callers are not under the authenticated throttle
    for (let i = 0; i < 5; i++) assert.equal((await app.inject({ method: 'GET', url: '/api/v4/version' })).statusCode, 401);
    // switching the throttle off applies at once
    await configure(app, root, { throttle_authenticated_api_enabled: false });
    assert.equal((await app.inject({ method: 'GET', url: '/api/v4/version', headers: alice.headers })).statusCode, 200);
  });
});

test('unauthenticated API throttle: per IP, counted before authentication; signed-in callers and other IPs unaffected', async (t) => {
  await inOneWindow(30, async () => {
    const { app, seed, root } = await buildTestApp(t);
    await configure(app, root, {
      throttle_unauthenticated_api_enabled: 'true',
      throttle_unauthenticated_api_requests_per_period: '2',
      throttle_unauthenticated_api_period_in_seconds: '30',
    });
    const ip = (remoteAddress: string) => ({ method: 'GET' as const, url: '/api/v4/version', remoteAddress });

    assert.equal((await app.inject(ip('198.51.100.7'))).statusCode, 401);
    assert.equal((await app.inject(ip('198.51.100.7'))).statusCode, 401);
    assertThrottled(await app.inject(ip('198.51.100.7')), 'throttle_unauthenticated_api', 30, 4, 3);
    // before authentication: an anonymous call to an administrators' route counts too
    assertThrottled(await app.inject({ ...ip('198.51.100.7'), url: SETTINGS }), 'throttle_unauthenticated_api', 30, 4, 4);

    assert.equal((await app.inject(ip('203.0.113.9'))).statusCode, 401);
    // behind a proxy the client address comes from X-Forwarded-For
    assert.equal((await app.inject({ ...ip('10.0.0.1'), headers: { 'x-forwarded-for': '198.51.100.7' } })).statusCode, 429);

    const tok = await seed.token(await seed.user());
    for (let i = 0; i < 5; i++) assert.equal((await app.inject({ ...ip('198.51.100.7'), headers: tok.headers })).statusCode, 200);
  });
});

test('fixed window: counts reset when the period is over', () => {
  const limiter = new FixedWindowLimiter();
  const t0 = 1_700_000_000_000;
  assert.deepEqual(limiter.hit('k', 2, 10, t0), { allowed: true, count: 1, resetAt: t0 + 10_000 });
  assert.equal(limiter.hit('k', 2, 10, t0 + 1_000).allowed, true);
  assert.deepEqual(limiter.hit('k', 2, 10, t0 + 9_999), { allowed: false, count: 3, resetAt: t0 + 10_000 });
  assert.equal(limiter.hit('other', 2, 10, t0 + 9_999).allowed, true);
  assert.deepEqual(limiter.hit('k', 2, 10, t0 + 10_000), { allowed: true, count: 1, resetAt: t0 + 20_000 });
});

test('fixed window: the key table stays bounded', () => {
  const limiter = new FixedWindowLimiter(3);
  const t0 = 1_700_000_000_000;
  for (const k of ['a', 'b', 'c']) limiter.hit(k, 1, 10, t0);
  // a finished window is swept to make room; live ones are kept
  limiter.hit('a', 1, 10, t0 + 20_000);
  assert.equal(limiter.hit('d', 1, 10, t0 + 20_000).allowed, true);
  assert.equal(limiter.hit('a', 1, 10, t0 + 20_001).allowed, false);
});

test('rate_limiting_response_text replaces "Retry later"; the translation API answers DRF; endpoint limiters keep JSON', async (t) => {
  await inOneWindow(60, async () => {
    const { app, root } = await buildTestApp(t);
    await configure(app, root, {
      throttle_unauthenticated_api_enabled: true,
      throttle_unauthenticated_api_requests_per_period: 1,
      throttle_unauthenticated_api_period_in_seconds: 60,
      rate_limiting_response_text: 'Slow down, please',
    });
    const req = { method: 'GET' as const, url: '/api/v4/version', remoteAddress: '192.0.2.50' };
    assert.equal((await app.inject(req)).statusCode, 401);
    assertThrottled(await app.inject(req), 'throttle_unauthenticated_api', 60, 1, 2, 'Slow down, please\n');
    // the translation API shares the window, with Django REST framework's body
    const drf = await app.inject({ ...req, url: '/api/' });
    assert.equal(drf.statusCode, 429);
    assert.equal(drf.headers['content-type'], 'application/json');
    assert.deepEqual(drf.json(), { detail: 'Request was throttled.' });
    assert.equal(drf.headers['ratelimit-name'], 'throttle_unauthenticated_api');
  });
});

test('web throttles: unauthenticated per IP on web routes (sign-in page), API unaffected; legacy names accepted', async (t) => {
  await inOneWindow(3600, async () => {
    const { app, root } = await buildTestApp(t);
    // throttle_unauthenticated_* are the legacy names of the unauthenticated web throttle
    await configure(app, root, {
      throttle_unauthenticated_enabled: true,
      throttle_unauthenticated_requests_per_period: 2,
      throttle_unauthenticated_period_in_seconds: 3600, // an hour: three requests never straddle a window's edge
    });
    const settings = await app.inject({ method: 'GET', url: SETTINGS, headers: root });
    assert.equal(settings.json().throttle_unauthenticated_web_enabled, true);
    assert.equal(settings.json().throttle_unauthenticated_enabled, true);
    assert.equal(settings.json().throttle_unauthenticated_web_requests_per_period, 2);
    assert.equal(settings.json().throttle_unauthenticated_period_in_seconds, 3600);
    const page = { method: 'GET' as const, url: '/users/sign_in', remoteAddress: '192.0.2.60' };
    assert.equal((await app.inject(page)).statusCode, 200);
    assert.equal((await app.inject(page)).statusCode, 200);
    assertThrottled(await app.inject(page), 'throttle_unauthenticated_web', 3600, 1, 3);
    // the API is not a web request
    assert.equal((await app.inject({ ...page, url: '/api/v4/version' })).statusCode, 401);
    assert.equal((await app.inject({ ...page, remoteAddress: '192.0.2.61' })).statusCode, 200);
  });
});

test('authenticated web throttle: per user on web paths (a token on an upload path), anonymous callers unaffected', async (t) => {
  await inOneWindow(60, async () => {
    const { app, seed, root } = await buildTestApp(t);
    await configure(app, root, {
      throttle_authenticated_web_enabled: true,
      throttle_authenticated_web_requests_per_period: 1,
      throttle_authenticated_web_period_in_seconds: 60,
    });
    const tok = await seed.token(await seed.user());
    const url = `/-/project/1/uploads/${'0'.repeat(32)}/a.png`;
    assert.equal((await app.inject({ method: 'GET', url, headers: tok.headers })).statusCode, 404);
    assertThrottled(await app.inject({ method: 'GET', url, headers: tok.headers }), 'throttle_authenticated_web', 60, 1, 2);
    assert.equal((await app.inject({ method: 'GET', url })).statusCode, 404);
    assert.equal((await app.inject({ method: 'GET', url: '/api/v4/version', headers: tok.headers })).statusCode, 200);
  });
});

test('fixed window: windows start on multiples of the period (Rack::Attack: epoch / period)', () => {
  const limiter = new FixedWindowLimiter();
  const t0 = 1_700_000_005_000; // 5 s into a 10 s window
  assert.deepEqual(limiter.hit('k', 1, 10, t0), { allowed: true, count: 1, resetAt: 1_700_000_010_000 });
  assert.equal(limiter.hit('k', 1, 10, t0 + 4_999).allowed, false);
  assert.equal(limiter.hit('k', 1, 10, t0 + 5_000).allowed, true);
});
