// Avatars: a multipart `avatar` on user, group and project create/update, PUT
// /user/avatar, served back at GitLab's /uploads/-/system/<model>/avatar/<id>/<file> paths.
import test from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, EXTERNAL_URL } from '../../helpers/build-app.ts';

/** A 1×1 PNG. */
export const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

function multipart(fields: Record<string, string>, file?: { name: string; filename: string; data: Buffer; type?: string }) {
  const boundary = '----hearth-avatar-test';
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  if (file) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${file.name}"; filename="${file.filename}"\r\nContent-Type: ${file.type ?? 'image/png'}\r\n\r\n`,
      ),
      file.data,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

const path = (url: string) => url.slice(EXTERNAL_URL.length);

test('user avatar: create with a file, served publicly with its type and cache headers; replaced by update', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const body = multipart(
    { email: 'a@example.com', username: 'ava', name: 'Ava', password: 'password-123' },
    { name: 'avatar', filename: 'avatar.png', data: PNG },
  );
  let res = await app.inject({ method: 'POST', url: '/api/v4/users', headers: { ...root, ...body.headers }, payload: body.payload });
  assert.equal(res.statusCode, 201);
  const user = res.json();
  assert.equal(user.avatar_url, `${EXTERNAL_URL}/uploads/-/system/user/avatar/${user.id}/avatar.png`);
  assert.equal((await c.users.byId(user.id))!.avatar_url, user.avatar_url);

  res = await app.inject({ method: 'GET', url: path(user.avatar_url) });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'image/png');
  assert.equal(res.headers['cache-control'], 'max-age=300, public');
  assert.equal(res.headers['content-disposition'], `inline; filename="avatar.png"; filename*=UTF-8''avatar.png`);
  assert.deepEqual(res.rawPayload, PNG);
  // in lists and the namespace too
  res = await app.inject({ method: 'GET', url: `/api/v4/users/${user.id}`, headers: root });
  assert.equal(res.json().avatar_url, user.avatar_url);

  // update replaces it; the old file is gone
  const upd = multipart(
    {},
    { name: 'avatar', filename: 'me pic.jpg', data: Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(16)]), type: 'image/jpeg' },
  );
  res = await app.inject({ method: 'PUT', url: `/api/v4/users/${user.id}`, headers: { ...root, ...upd.headers }, payload: upd.payload });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().avatar_url, `${EXTERNAL_URL}/uploads/-/system/user/avatar/${user.id}/me_pic.jpg`);
  res = await app.inject({ method: 'GET', url: `/uploads/-/system/user/avatar/${user.id}/me_pic.jpg` });
  assert.equal(res.headers['content-type'], 'image/jpeg');
  res = await app.inject({ method: 'GET', url: `/uploads/-/system/user/avatar/${user.id}/avatar.png` });
  assert.equal(res.statusCode, 404);
  assert.equal(await c.store.stat(`avatars/user/${user.id}/avatar.png`), null);
});

test('avatar refusals: size, type, not a file, unknown paths', async (t) => {
  const { app, c, root, seed } = await buildTestApp(t);
  const big = multipart(
    { email: 'b@example.com', username: 'big', name: 'Big', password: 'password-123' },
    { name: 'avatar', filename: 'big.png', data: Buffer.concat([PNG, Buffer.alloc(200 * 1024)]) },
  );
  let res = await app.inject({ method: 'POST', url: '/api/v4/users', headers: { ...root, ...big.headers }, payload: big.payload });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: { avatar: ['is too big (should be at most 200 KiB)'] } });
  assert.equal(await c.users.byUsername('big'), undefined);

  const unsupported = 'file format is not supported. Please try one of the following supported formats: png, jpg, jpeg, gif, bmp, tiff, ico, webp';
  for (const file of [
    { filename: 'evil.svg', data: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>') },
    { filename: 'fake.png', data: Buffer.from('<html>not a png</html>') },
  ]) {
    const body = multipart({}, { name: 'avatar', ...file });
    res = await app.inject({ method: 'PUT', url: '/api/v4/user/avatar', headers: { ...root, ...body.headers }, payload: body.payload });
    assert.equal(res.statusCode, 400, file.filename);
    assert.deepEqual(res.json(), { message: { avatar: [unsupported] } });
  }
  res = await app.inject({ method: 'PUT', url: '/api/v4/user/avatar', headers: root, payload: { avatar: 'x' } });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'avatar is invalid' });
  res = await app.inject({ method: 'PUT', url: '/api/v4/user/avatar', headers: root, payload: {} });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'avatar is missing' });
  res = await app.inject({ method: 'PUT', url: '/api/v4/user/avatar' });
  assert.equal(res.statusCode, 401);

  const u = await seed.user();
  for (const url of [
    `/uploads/-/system/user/avatar/${u.id}/avatar.png`,
    '/uploads/-/system/snippet/avatar/1/avatar.png',
    '/uploads/-/system/user/avatar/99999999999/avatar.png',
    '/uploads/-/system/user/avatar/abc/avatar.png',
  ]) {
    res = await app.inject({ method: 'GET', url, headers: root });
    assert.equal(res.statusCode, 404, url);
  }
});

test('PUT /user/avatar sets the caller’s own avatar', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const u = await seed.user();
  const tok = await seed.token(u);
  const body = multipart({}, { name: 'avatar', filename: 'face.gif', data: Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1'), type: 'image/gif' });
  let res = await app.inject({ method: 'PUT', url: '/api/v4/user/avatar', headers: { ...tok.headers, ...body.headers }, payload: body.payload });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { avatar_url: `${EXTERNAL_URL}/uploads/-/system/user/avatar/${u.id}/face.gif` });
  res = await app.inject({ method: 'GET', url: '/api/v4/user', headers: tok.headers });
  assert.equal(res.json().avatar_url, `${EXTERNAL_URL}/uploads/-/system/user/avatar/${u.id}/face.gif`);
  res = await app.inject({ method: 'GET', url: `/uploads/-/system/user/avatar/${u.id}/face.gif` });
  assert.equal(res.headers['content-type'], 'image/gif');
});

test('group and project avatars: set on create and update, private ones honour visibility', async (t) => {
  const { app, root, seed } = await buildTestApp(t);
  const owner = await seed.user({ username: 'owner' });
  const tok = await seed.token(owner);
  const file = { name: 'avatar', filename: 'logo.png', data: PNG };

  let body = multipart({ name: 'Secret', path: 'secret', visibility: 'private' }, file);
  let res = await app.inject({ method: 'POST', url: '/api/v4/groups', headers: { ...tok.headers, ...body.headers }, payload: body.payload });
  assert.equal(res.statusCode, 201);
  const group = res.json();
  assert.equal(group.avatar_url, `${EXTERNAL_URL}/uploads/-/system/group/avatar/${group.id}/logo.png`);

  body = multipart({ name: 'App', namespace_id: String(group.id) }, file);
  res = await app.inject({ method: 'POST', url: '/api/v4/projects', headers: { ...tok.headers, ...body.headers }, payload: body.payload });
  assert.equal(res.statusCode, 201);
  const project = res.json();
  assert.equal(project.avatar_url, `${EXTERNAL_URL}/uploads/-/system/project/avatar/${project.id}/logo.png`);
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}`, headers: tok.headers });
  assert.equal(res.json().avatar_url, project.avatar_url);
  assert.equal(res.json().namespace.avatar_url, group.avatar_url);

  for (const url of [path(group.avatar_url), path(project.avatar_url)]) {
    res = await app.inject({ method: 'GET', url, headers: tok.headers });
    assert.equal(res.statusCode, 200, url);
    assert.equal(res.headers['cache-control'], 'max-age=300, private, must-revalidate');
    assert.deepEqual(res.rawPayload, PNG);
    // a signed-in stranger: 404; anonymous: sent to sign in
    const stranger = await seed.token(await seed.user());
    res = await app.inject({ method: 'GET', url, headers: stranger.headers });
    assert.equal(res.statusCode, 404, url);
    res = await app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 302, url);
    assert.equal(res.headers.location, `${EXTERNAL_URL}/users/sign_in`);
    res = await app.inject({ method: 'GET', url, headers: root });
    assert.equal(res.statusCode, 200);
  }

  // update
  body = multipart({}, { name: 'avatar', filename: 'new.png', data: PNG });
  res = await app.inject({ method: 'PUT', url: `/api/v4/groups/${group.id}`, headers: { ...tok.headers, ...body.headers }, payload: body.payload });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().avatar_url, `${EXTERNAL_URL}/uploads/-/system/group/avatar/${group.id}/new.png`);
  res = await app.inject({ method: 'PUT', url: `/api/v4/projects/${project.id}`, headers: { ...tok.headers, ...body.headers }, payload: body.payload });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().avatar_url, `${EXTERNAL_URL}/uploads/-/system/project/avatar/${project.id}/new.png`);

  // refusals in each API's own form
  body = multipart({ name: 'Bad', path: 'bad' }, { name: 'avatar', filename: 'x.txt', data: Buffer.from('text') });
  res = await app.inject({ method: 'POST', url: '/api/v4/groups', headers: { ...tok.headers, ...body.headers }, payload: body.payload });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), {
    message:
      'Failed to save group {:avatar=>["file format is not supported. Please try one of the following supported formats: png, jpg, jpeg, gif, bmp, tiff, ico, webp"]}',
  });
  body = multipart({}, { name: 'avatar', filename: 'x.txt', data: Buffer.from('text') });
  res = await app.inject({ method: 'PUT', url: `/api/v4/projects/${project.id}`, headers: { ...tok.headers, ...body.headers }, payload: body.payload });
  assert.equal(res.statusCode, 400);
  assert.equal(Object.keys(res.json().message)[0], 'avatar');
  // a Developer may not change the project (403 before the avatar is stored)
  const dev = await seed.user();
  await seed.member({ group: { id: group.id, traversal_ids: `/${group.id}/` } as never }, dev, 30);
  const devTok = await seed.token(dev);
  body = multipart({}, file);
  res = await app.inject({ method: 'PUT', url: `/api/v4/projects/${project.id}`, headers: { ...devTok.headers, ...body.headers }, payload: body.payload });
  assert.equal(res.statusCode, 403);
});
