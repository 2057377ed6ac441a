// POST /users/:id/ban and /unban, DELETE /users/:id/identities/:provider.
import test from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-app.ts';

test('ban and unban: state banned, credentials refused while banned, GitLab refusals', async (t) => {
  const { app, c, root, seed } = await buildTestApp(t);
  const u = await seed.user({ username: 'target' });
  const tok = await seed.token(u);
  const post = (url: string, headers = root) => app.inject({ method: 'POST', url, headers });

  let res = await post(`/api/v4/users/${u.id}/ban`);
  assert.equal(res.statusCode, 201);
  assert.equal(res.body, 'true');
  assert.equal((await c.users.byId(u.id))!.state, 'banned');
  // a banned user is blocked
  res = await app.inject({ method: 'GET', url: '/api/v4/user', headers: tok.headers });
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: '403 Forbidden - Your account has been blocked.' });
  res = await app.inject({ method: 'GET', url: `/api/v4/users/${u.id}`, headers: root });
  assert.equal(res.json().state, 'banned');
  // non-administrators do not list banned users
  const other = await seed.token(await seed.user());
  res = await app.inject({ method: 'GET', url: '/api/v4/users?username=target', headers: other.headers });
  assert.deepEqual(res.json(), []);

  res = await post(`/api/v4/users/${u.id}/ban`);
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: 'You cannot ban banned users.' });
  res = await post(`/api/v4/users/${u.id}/unban`);
  assert.equal(res.statusCode, 201);
  assert.equal(res.body, 'true');
  assert.equal((await c.users.byId(u.id))!.state, 'active');
  res = await app.inject({ method: 'GET', url: '/api/v4/user', headers: tok.headers });
  assert.equal(res.statusCode, 200);
  res = await post(`/api/v4/users/${u.id}/unban`);
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: 'You cannot unban active users.' });

  const blocked = await seed.user({ state: 'blocked' });
  res = await post(`/api/v4/users/${blocked.id}/ban`);
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: 'You cannot ban blocked users.' });

  for (const action of ['ban', 'unban']) {
    res = await post(`/api/v4/users/999999/${action}`);
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { message: '404 User Not Found' });
    res = await post(`/api/v4/users/99999999999/${action}`);
    assert.equal(res.statusCode, 404);
    res = await post(`/api/v4/users/${u.id}/${action}`, other.headers);
    assert.equal(res.statusCode, 403);
    res = await app.inject({ method: 'POST', url: `/api/v4/users/${u.id}/${action}` });
    assert.equal(res.statusCode, 401);
  }
  assert.equal((await c.users.byId(u.id))!.state, 'active');
});

test('identities: set on create and update, removed by provider', async (t) => {
  const { app, c, root, seed } = await buildTestApp(t);
  let res = await app.inject({
    method: 'POST',
    url: '/api/v4/users',
    headers: root,
    payload: { email: 'i@example.com', username: 'ident', name: 'Ident', password: 'password-123', provider: 'github', extern_uid: 'gh-1' },
  });
  assert.equal(res.statusCode, 201);
  const id = res.json().id;
  assert.deepEqual(res.json().identities, [{ provider: 'github', extern_uid: 'gh-1', saml_provider_id: null }]);
  res = await app.inject({ method: 'PUT', url: `/api/v4/users/${id}`, headers: root, payload: { provider: 'ldapmain', extern_uid: 'uid=ident' } });
  assert.deepEqual(res.json().identities, [
    { provider: 'github', extern_uid: 'gh-1', saml_provider_id: null },
    { provider: 'ldapmain', extern_uid: 'uid=ident', saml_provider_id: null },
  ]);

  res = await app.inject({ method: 'DELETE', url: `/api/v4/users/${id}/identities/github`, headers: root });
  assert.equal(res.statusCode, 204);
  assert.equal(res.body, '');
  const rows = await c.db.kysely.selectFrom('identities').select(['provider', 'extern_uid']).where('user_id', '=', id).execute();
  assert.deepEqual(rows, [{ provider: 'ldapmain', extern_uid: 'uid=ident' }]);
  res = await app.inject({ method: 'DELETE', url: `/api/v4/users/${id}/identities/github`, headers: root });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Identity Not Found' });
  res = await app.inject({ method: 'DELETE', url: '/api/v4/users/999999/identities/github', headers: root });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 User Not Found' });
  const tok = await seed.token(await seed.user());
  res = await app.inject({ method: 'DELETE', url: `/api/v4/users/${id}/identities/ldapmain`, headers: tok.headers });
  assert.equal(res.statusCode, 403);
  res = await app.inject({ method: 'DELETE', url: `/api/v4/users/${id}/identities/ldapmain` });
  assert.equal(res.statusCode, 401);
  assert.equal((await c.db.kysely.selectFrom('identities').selectAll().where('user_id', '=', id).execute()).length, 1);
});
