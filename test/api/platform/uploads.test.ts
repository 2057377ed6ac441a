// Project uploads: POST /projects/:id/uploads, the Maintainer list, downloads by id and by
// secret, deletion, the web paths with the project's visibility, size limit and safe serving.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import { multipart } from '../../helpers/files.ts';
import { seedPipeline } from '../../helpers/ci.ts';
import { runJob } from '../../helpers/ci-artifacts.ts';

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

async function upload(app: TestApp['app'], headers: Record<string, string>, projectId: number | string, file: Buffer, filename: string) {
  const body = multipart({ file }, filename);
  return app.inject({ method: 'POST', url: `/api/v4/projects/${projectId}/uploads`, headers: { ...headers, ...body.headers }, payload: body.payload });
}

test('upload: 201 with GitLab ProjectUpload; the row and the blob are stored; served back on every path', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const owner = await seed.user();
  const tok = await seed.token(owner);
  const project = await seed.project({ owner, visibility: 'private' });
  const ns = await c.db.kysely.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).executeTakeFirstOrThrow();

  const res = await upload(app, tok.headers, project.id, PNG, 'my screen shot.png');
  assert.equal(res.statusCode, 201, res.body);
  const b = res.json();
  assert.deepEqual(Object.keys(b), ['id', 'alt', 'url', 'full_path', 'markdown']);
  assert.match(b.url, /^\/uploads\/[0-9a-f]{32}\/my_screen_shot\.png$/);
  const secret = b.url.split('/')[2];
  assert.deepEqual(b, {
    id: b.id,
    alt: 'my_screen_shot',
    url: `/uploads/${secret}/my_screen_shot.png`,
    full_path: `/-/project/${project.id}/uploads/${secret}/my_screen_shot.png`,
    markdown: `![my_screen_shot](/uploads/${secret}/my_screen_shot.png)`,
  });
  const row = await c.db.kysely.selectFrom('uploads').selectAll().where('id', '=', b.id).executeTakeFirstOrThrow();
  assert.deepEqual(
    [row.project_id, row.secret, row.filename, row.size, row.uploaded_by_user_id],
    [project.id, secret, 'my_screen_shot.png', PNG.length, owner.id],
  );
  assert.ok(await c.store.stat(row.store_key));

  // a document: linked, not embedded
  const doc = await upload(app, tok.headers, project.id, Buffer.from('hello'), 'notes [v2].txt');
  assert.equal(doc.statusCode, 201);
  assert.equal(doc.json().alt, 'notes__v2_.txt');
  assert.equal(doc.json().markdown, `[notes__v2_.txt](${doc.json().url})`);

  // API by secret: an attachment, octet-stream
  const api = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/uploads/${secret}/my_screen_shot.png`, headers: tok.headers });
  assert.equal(api.statusCode, 200);
  assert.deepEqual(api.rawPayload, PNG);
  assert.equal(api.headers['content-type'], 'application/octet-stream');
  assert.equal(api.headers['content-disposition'], `attachment; filename="my_screen_shot.png"; filename*=UTF-8''my_screen_shot.png`);
  assert.equal(api.headers['x-content-type-options'], 'nosniff');

  // web paths: an image inline with its type, for the owner (token or session)
  for (const url of [
    `/-/project/${project.id}/uploads/${secret}/my_screen_shot.png`,
    `/${ns.full_path}/${project.path}/uploads/${secret}/my_screen_shot.png`,
  ]) {
    const web = await app.inject({ method: 'GET', url, headers: tok.headers });
    assert.equal(web.statusCode, 200, url);
    assert.deepEqual(web.rawPayload, PNG);
    assert.equal(web.headers['content-type'], 'image/png');
    assert.match(String(web.headers['content-disposition']), /^inline; filename="my_screen_shot.png"/);
    assert.equal(web.headers['content-security-policy'], "default-src 'none'; sandbox");
    // a private project: outsiders and anonymous callers find nothing
    const anon = await app.inject({ method: 'GET', url });
    assert.equal(anon.statusCode, 404);
    assert.equal(anon.body, 'Not Found');
    const other = await seed.token(await seed.user());
    assert.equal((await app.inject({ method: 'GET', url, headers: other.headers })).statusCode, 404);
  }
  // the text file is never shown inline on the web path
  const docSecret = doc.json().url.split('/')[2];
  const docWeb = await app.inject({ method: 'GET', url: `/-/project/${project.id}/uploads/${docSecret}/notes__v2_.txt`, headers: tok.headers });
  assert.equal(docWeb.headers['content-type'], 'application/octet-stream');
  assert.match(String(docWeb.headers['content-disposition']), /^attachment;/);
});

test('HTML and SVG are served as attachments; a public project serves anyone; unknown secrets and names are 404', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const owner = await seed.user();
  const tok = await seed.token(owner);
  const project = await seed.project({ owner, visibility: 'public' });
  const ns = await c.db.kysely.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
  for (const [name, markdown] of [
    ['page.html', '[page.html]'],
    ['logo.svg', '![logo]'],
  ]) {
    const res = await upload(app, tok.headers, project.id, Buffer.from('<script>alert(1)</script>'), name);
    assert.equal(res.statusCode, 201);
    assert.ok(res.json().markdown.startsWith(markdown), res.json().markdown);
    const web = await app.inject({ method: 'GET', url: `/${ns.full_path}/${project.path}${res.json().url}` });
    assert.equal(web.statusCode, 200);
    assert.equal(web.headers['content-type'], 'application/octet-stream');
    assert.match(String(web.headers['content-disposition']), /^attachment;/);
  }
  const zero = '0'.repeat(32);
  for (const url of [
    `/-/project/${project.id}/uploads/${zero}/page.html`,
    `/-/project/${project.id}/uploads/not-a-secret/page.html`,
    `/-/project/999999/uploads/${zero}/x.png`,
    `/-/project/abc/uploads/${zero}/x.png`,
    `/${ns.full_path}/nope/uploads/${zero}/x.png`,
  ]) {
    const res = await app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 404, url);
  }
  const apiMissing = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/uploads/${zero}/page.html` });
  assert.equal(apiMissing.statusCode, 404);
  assert.deepEqual(apiMissing.json(), { message: '404 Not Found' });
  // the git catch-all still answers its own URLs
  const dumb = await app.inject({ method: 'GET', url: `/${ns.full_path}/${project.path}.git/info/refs` });
  assert.equal(dumb.statusCode, 403);
});

test('bad uploads: no file, a field instead of a file, over max_attachment_size, anonymous, invisible project', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const owner = await seed.user();
  const tok = await seed.token(owner);
  const project = await seed.project({ owner });
  const url = `/api/v4/projects/${project.id}/uploads`;

  const json = await app.inject({ method: 'POST', url, headers: tok.headers, payload: { file: 'x' } });
  assert.equal(json.statusCode, 400);
  assert.deepEqual(json.json(), { error: 'file is missing' });
  const field = multipart({ file: 'just text' });
  const asField = await app.inject({ method: 'POST', url, headers: { ...tok.headers, ...field.headers }, payload: field.payload });
  assert.equal(asField.statusCode, 400);
  assert.deepEqual(asField.json(), { error: 'file is missing' });
  const dots = await upload(app, tok.headers, project.id, Buffer.from('x'), '..');
  assert.equal(dots.statusCode, 400);
  assert.deepEqual(dots.json(), { error: 'file is invalid' });

  const set = await app.inject({ method: 'PUT', url: '/api/v4/application/settings', headers: root, payload: { max_attachment_size: 1 } });
  assert.equal(set.statusCode, 200);
  const big = await upload(app, tok.headers, project.id, Buffer.alloc(1024 * 1024 + 1, 1), 'big.bin');
  assert.equal(big.statusCode, 413);
  assert.deepEqual(big.json(), { message: '413 Request Entity Too Large' });
  const fits = await upload(app, tok.headers, project.id, Buffer.alloc(1024 * 1024, 1), 'fits.bin');
  assert.equal(fits.statusCode, 201);

  const anon = await upload(app, {}, project.id, PNG, 'a.png');
  assert.equal(anon.statusCode, 401);
  const stranger = await seed.token(await seed.user());
  const invisible = await upload(app, stranger.headers, project.id, PNG, 'a.png');
  assert.equal(invisible.statusCode, 404);
  assert.deepEqual(invisible.json(), { message: '404 Project Not Found' });
  const rows = await c.db.kysely.selectFrom('uploads').select('filename').execute();
  assert.deepEqual(
    rows.map((r) => r.filename),
    ['fits.bin'],
  );
});

test('list, get by id and delete: Maintainers only; GitLab bodies for missing uploads; blobs queued for deletion', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const owner = await seed.user({ username: 'owner1', name: 'Owner One' });
  const tok = await seed.token(owner);
  const project = await seed.project({ owner, visibility: 'public' });
  const dev = await seed.user();
  await seed.member({ project }, dev, 30);
  const devTok = await seed.token(dev);

  const a = (await upload(app, devTok.headers, project.id, PNG, 'a.png')).json();
  const b = (await upload(app, tok.headers, project.id, Buffer.from('b'), 'b.txt')).json();

  const list = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/uploads`, headers: tok.headers });
  assert.equal(list.statusCode, 200);
  const rows = await c.db.kysely.selectFrom('uploads').selectAll().orderBy('id', 'desc').execute();
  assert.deepEqual(list.json(), [
    { id: b.id, size: 1, filename: 'b.txt', created_at: rows[0].created_at, uploaded_by: { id: owner.id, username: 'owner1', name: 'Owner One' } },
    { id: a.id, size: PNG.length, filename: 'a.png', created_at: rows[1].created_at, uploaded_by: { id: dev.id, username: dev.username, name: dev.name } },
  ]);
  assert.equal(list.headers['x-total'], '2');
  const page = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/uploads?per_page=1&page=2`, headers: tok.headers });
  assert.deepEqual(
    page.json().map((u: { id: number }) => u.id),
    [a.id],
  );

  // Developers and anonymous callers may not list, fetch by id or delete
  for (const [method, url] of [
    ['GET', `/api/v4/projects/${project.id}/uploads`],
    ['GET', `/api/v4/projects/${project.id}/uploads/${a.id}`],
    ['DELETE', `/api/v4/projects/${project.id}/uploads/${a.id}`],
    ['DELETE', `/api/v4/projects/${project.id}/uploads${a.url.slice('/uploads'.length)}`],
  ] as const) {
    const res = await app.inject({ method, url, headers: devTok.headers });
    assert.equal(res.statusCode, 403, `${method} ${url}`);
    assert.deepEqual(res.json(), { message: '403 Forbidden' });
    assert.equal((await app.inject({ method, url })).statusCode, 401, `${method} ${url}`);
  }
  // but a Developer reads by secret
  assert.equal((await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}${a.url}`, headers: devTok.headers })).statusCode, 200);

  const byId = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/uploads/${a.id}`, headers: tok.headers });
  assert.equal(byId.statusCode, 200);
  assert.deepEqual(byId.rawPayload, PNG);
  for (const id of ['999999', '99999999999']) {
    const missing = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/uploads/${id}`, headers: tok.headers });
    assert.equal(missing.statusCode, 404, id);
    assert.deepEqual(missing.json(), { message: '404 Not found' });
  }
  const notInt = await app.inject({ method: 'DELETE', url: `/api/v4/projects/${project.id}/uploads/abc`, headers: tok.headers });
  assert.equal(notInt.statusCode, 400);
  assert.deepEqual(notInt.json(), { error: 'upload_id is invalid' });

  const delMissing = await app.inject({ method: 'DELETE', url: `/api/v4/projects/${project.id}/uploads/${'1'.repeat(32)}/a.png`, headers: tok.headers });
  assert.equal(delMissing.statusCode, 400);
  assert.deepEqual(delMissing.json(), {
    message: "400 Bad request - The resource that you are attempting to access does not exist or you don't have permission to perform this action.",
  });

  const del = await app.inject({ method: 'DELETE', url: `/api/v4/projects/${project.id}/uploads/${a.id}`, headers: tok.headers });
  assert.equal(del.statusCode, 204);
  const del2 = await app.inject({ method: 'DELETE', url: `/api/v4/projects/${project.id}${b.url}`, headers: tok.headers });
  assert.equal(del2.statusCode, 204);
  assert.equal((await c.db.kysely.selectFrom('uploads').select('id').execute()).length, 0);
  const jobs = await c.db.kysely.selectFrom('jobs').select(['kind', 'payload']).where('kind', '=', 'blob_delete').execute();
  assert.deepEqual(jobs.flatMap((j) => JSON.parse(j.payload).keys).sort(), rows.map((r) => r.store_key).sort());
  assert.equal((await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}${a.url}` })).statusCode, 404);
});

test("a job token opens no upload path: the web paths take it for no credential (404 on a private project), the API's upload routes answer 401", async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const owner = await seed.user();
  const tok = await seed.token(owner);
  const project = await seed.project({ owner, visibility: 'private' });
  const ns = await c.db.kysely.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
  const up = await upload(app, tok.headers, project.id, PNG, 'shot.png');
  assert.equal(up.statusCode, 201);
  const { id, url } = up.json() as { id: number; url: string };
  const secret = url.split('/')[2];
  // a running job of this project, started by its owner
  const { jobs } = await seedPipeline(c, project, { user_id: owner.id }, [{ name: 'build' }]);
  const jobToken = await runJob(c, jobs[0]!);
  const job = await app.inject({ method: 'GET', url: '/api/v4/job', headers: { 'job-token': jobToken } });
  assert.equal(job.statusCode, 200); // the token is good where GitLab takes it

  const webPaths = [`/-/project/${project.id}/uploads/${secret}/shot.png`, `/${ns.full_path}/${project.path}/uploads/${secret}/shot.png`];
  for (const path of webPaths) {
    for (const [target, headers] of [
      [path, { 'job-token': jobToken }],
      [`${path}?job_token=${jobToken}`, {}],
    ] as const) {
      const res = await app.inject({ method: 'GET', url: target, headers });
      assert.deepEqual([res.statusCode, res.body, res.headers['content-type']], [404, 'Not Found', 'text/plain'], target);
    }
    // the owner's own token still opens it
    assert.equal((await app.inject({ method: 'GET', url: path, headers: tok.headers })).statusCode, 200);
  }
  const unauthorized = { message: '401 Unauthorized' };
  const api = `/api/v4/projects/${project.id}/uploads`;
  for (const [method, target] of [
    ['GET', `${api}/${secret}/shot.png`],
    ['GET', api],
    ['GET', `${api}/${id}`],
    ['DELETE', `${api}/${id}`],
  ] as const) {
    const res = await app.inject({ method, url: target, headers: { 'job-token': jobToken } });
    assert.deepEqual([res.statusCode, res.json()], [401, unauthorized], `${method} ${target}`);
  }
  const post = await upload(app, { 'job-token': jobToken }, project.id, PNG, 'more.png');
  assert.deepEqual([post.statusCode, post.json()], [401, unauthorized]);
  // nothing changed
  assert.deepEqual(
    (await c.db.kysely.selectFrom('uploads').select('filename').where('project_id', '=', project.id).execute()).map((r) => r.filename),
    ['shot.png'],
  );
});
