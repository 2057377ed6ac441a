// Tokens created without expires_at get GitLab's default (the maximum allowed lifetime: 365 days,
// or max_personal_access_token_lifetime when less); a date that is not in the future is refused with 400.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-app.ts';
import { addDays, todayDate } from '../../../src/lib/time.ts';

test('personal and impersonation tokens without expires_at: today + 365 days, or the configured lifetime', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const u = await seed.user();
  const pat = await app.inject({ method: 'POST', url: `/api/v4/users/${u.id}/personal_access_tokens`, headers: root, payload: { name: 'a', scopes: ['api'] } });
  assert.equal(pat.statusCode, 201, pat.body);
  assert.equal(pat.json().expires_at, addDays(todayDate(), 365));
  const imp = await app.inject({ method: 'POST', url: `/api/v4/users/${u.id}/impersonation_tokens`, headers: root, payload: { name: 'b', scopes: ['api'] } });
  assert.equal(imp.statusCode, 201, imp.body);
  assert.equal(imp.json().expires_at, addDays(todayDate(), 365));
  assert.equal(imp.json().impersonation, true);
  const row = await c.db.kysely.selectFrom('personal_access_tokens').selectAll().where('id', '=', imp.json().id).executeTakeFirstOrThrow();
  assert.equal(row.expires_at, addDays(todayDate(), 365));

  const set = await app.inject({ method: 'PUT', url: '/api/v4/application/settings', headers: root, payload: { max_personal_access_token_lifetime: 30 } });
  assert.equal(set.statusCode, 200, set.body);
  assert.equal(set.json().max_personal_access_token_lifetime, 30);
  const short = await app.inject({
    method: 'POST',
    url: `/api/v4/users/${u.id}/personal_access_tokens`,
    headers: root,
    payload: { name: 'c', scopes: ['api'] },
  });
  assert.equal(short.json().expires_at, addDays(todayDate(), 30));
  const shortImp = await app.inject({
    method: 'POST',
    url: `/api/v4/users/${u.id}/impersonation_tokens`,
    headers: root,
    payload: { name: 'd', scopes: ['api'] },
  });
  assert.equal(shortImp.json().expires_at, addDays(todayDate(), 30));
  // beyond the configured lifetime: GitLab's model message
  const far = await app.inject({
    method: 'POST',
    url: `/api/v4/users/${u.id}/personal_access_tokens`,
    headers: root,
    payload: { name: 'e', scopes: ['api'], expires_at: addDays(todayDate(), 31) },
  });
  assert.equal(far.statusCode, 422);
  assert.deepEqual(far.json(), { message: `Expires at must be before ${addDays(todayDate(), 30)}` });
  const farImp = await app.inject({
    method: 'POST',
    url: `/api/v4/users/${u.id}/impersonation_tokens`,
    headers: root,
    payload: { name: 'e', scopes: ['api'], expires_at: addDays(todayDate(), 31) },
  });
  assert.equal(farImp.statusCode, 400);
  assert.deepEqual(farImp.json(), { message: { expires_at: [`must be before ${addDays(todayDate(), 30)}`] } });

  // a bad lifetime is the setting's own error
  for (const [value, msg] of [
    [0, 'must be greater than 0'],
    [366, 'must be less than or equal to 365'],
  ] as const) {
    const bad = await app.inject({ method: 'PUT', url: '/api/v4/application/settings', headers: root, payload: { max_personal_access_token_lifetime: value } });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), { message: { max_personal_access_token_lifetime: [msg] } });
  }
});

test('expires_at today or in the past: 400 on every creation path and on rotation; nothing stored', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const u = await seed.user();
  const tok = await seed.token(u, { scopes: ['api'] });
  const before = await c.db.kysely.selectFrom('personal_access_tokens').select('id').execute();
  for (const date of [todayDate(), addDays(todayDate(), -1), '2001-02-03']) {
    for (const url of [`/api/v4/users/${u.id}/personal_access_tokens`, `/api/v4/users/${u.id}/impersonation_tokens`]) {
      const res = await app.inject({ method: 'POST', url, headers: root, payload: { name: 'x', scopes: ['api'], expires_at: date } });
      assert.equal(res.statusCode, 400, `${url} ${date}`);
      assert.deepEqual(res.json(), { message: { expires_at: ['must be in the future'] } });
    }
    const self = await app.inject({
      method: 'POST',
      url: '/api/v4/user/personal_access_tokens',
      headers: tok.headers,
      payload: { name: 'x', scopes: ['k8s_proxy'], expires_at: date },
    });
    assert.equal(self.statusCode, 400);
    assert.deepEqual(self.json(), { message: { expires_at: ['must be in the future'] } });
    const rot = await app.inject({ method: 'POST', url: '/api/v4/personal_access_tokens/self/rotate', headers: tok.headers, payload: { expires_at: date } });
    assert.equal(rot.statusCode, 400);
    assert.deepEqual(rot.json(), { message: '400 Bad request - Expires at must be in the future' });
  }
  const after = await c.db.kysely.selectFrom('personal_access_tokens').select(['id', 'revoked']).execute();
  assert.equal(after.length, before.length);
  assert.ok(after.every((r) => r.revoked === 0));
  // tomorrow is fine
  const ok = await app.inject({
    method: 'POST',
    url: `/api/v4/users/${u.id}/impersonation_tokens`,
    headers: root,
    payload: { name: 'x', scopes: ['api'], expires_at: addDays(todayDate(), 1) },
  });
  assert.equal(ok.statusCode, 201);
});

test('rotation without expires_at keeps GitLab RotateService default (a week)', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const u = await seed.user();
  const tok = await seed.token(u, { scopes: ['api'] });
  const rot = await app.inject({ method: 'POST', url: '/api/v4/personal_access_tokens/self/rotate', headers: tok.headers });
  assert.equal(rot.statusCode, 200, rot.body);
  assert.equal(rot.json().expires_at, addDays(todayDate(), 7));
});
