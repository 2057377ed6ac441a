// Project exports (lib/api/project_export.rb): the request and its parameters, permissions, the status
// record through none → queued → started → finished (and regeneration_in_progress, failed), the
// download and the archive's contents, max_export_size, the upload to upload[url] (a real local HTTP
// server), expiry, and the job's lease (a job whose process died is taken again).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import * as tar from 'tar';
import { buildTestApp, EXTERNAL_URL, type TestApp } from '../../helpers/build-app.ts';
import type { NamespaceRow, ProjectRow, UserRow } from '../../../src/db/schema.ts';
import { EXPORT_JOB } from '../../../src/domain/import-export/export/export.service.ts';
import { buildArchive, ExportTooLargeError } from '../../../src/domain/import-export/export/archive-builder.ts';
import { queuedJob } from '../../../src/jobs/job-row.ts';

interface World {
  ta: TestApp;
  group: NamespaceRow;
  project: ProjectRow;
  maintainer: UserRow;
  headers: Record<string, string>;
}

const url = (p: ProjectRow | number, rest = '') => `/api/v4/projects/${typeof p === 'number' ? p : p.id}/export${rest}`;

async function world(t: TestContext, opts: { commit?: boolean } = {}): Promise<World> {
  const ta = await buildTestApp(t);
  const group = await ta.seed.group({ path: 'exp-group', name: 'Export Group', visibility: 'private' });
  const { project } = await ta.seed.repoProject({ namespace: group, path: 'exp-project', name: 'Export Project', visibility: 'private' });
  const maintainer = await ta.seed.user({ username: 'mae' });
  await ta.seed.member({ project }, maintainer, 40);
  const headers = (await ta.seed.token(maintainer)).headers;
  if (opts.commit !== false) {
    const r = await ta.app.inject({
      method: 'POST',
      url: `/api/v4/projects/${project.id}/repository/files/README.md`,
      headers: ta.root,
      payload: { branch: 'main', content: 'hello\n', commit_message: 'first' },
    });
    assert.equal(r.statusCode, 201, r.body);
  }
  return { ta, group, project, maintainer, headers };
}

async function setting(ta: TestApp, values: Record<string, unknown>) {
  const r = await ta.app.inject({ method: 'PUT', url: '/api/v4/application/settings', headers: ta.root, payload: values });
  assert.equal(r.statusCode, 200, r.body);
}

async function status(w: World, headers = w.headers) {
  const r = await w.ta.app.inject({ method: 'GET', url: url(w.project), headers });
  assert.equal(r.statusCode, 200, r.body);
  return r.json();
}

async function post(w: World, payload?: unknown, headers = w.headers) {
  return w.ta.app.inject({ method: 'POST', url: url(w.project), headers, payload: payload as any });
}

const row = (w: World) => w.ta.c.db.kysely.selectFrom('project_exports').selectAll().where('project_id', '=', w.project.id).executeTakeFirst();

/** Kicks do nothing until `release()`: the request's row and job can be seen as they were queued. */
function holdJobs(w: World): { release(): Promise<void> } {
  const svc = w.ta.c.importExport.exports;
  const original = svc.runQueued;
  svc.runQueued = async () => 0;
  return {
    async release() {
      svc.runQueued = original;
      while ((await svc.runQueued()) > 0);
      await svc.idle();
    },
  };
}

function identity(w: World) {
  return {
    id: w.project.id,
    description: null,
    name: 'Export Project',
    name_with_namespace: 'Export Group / Export Project',
    path: 'exp-project',
    path_with_namespace: 'exp-group/exp-project',
    created_at: w.project.created_at,
  };
}

const links = (w: World) => ({
  api_url: `${EXTERNAL_URL}/api/v4/projects/${w.project.id}/export/download`,
  web_url: `${EXTERNAL_URL}/exp-group/exp-project/download_export`,
});

async function entriesOf(buf: Buffer): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  await new Promise<void>((resolve, reject) => {
    const parser = new tar.Parser({
      onReadEntry: (e) => {
        const chunks: Buffer[] = [];
        e.on('data', (c: Buffer) => chunks.push(c));
        e.on('end', () => out.set(e.path, Buffer.concat(chunks).toString('latin1')));
      },
    });
    parser.on('end', resolve);
    parser.on('error', reject);
    Readable.from([buf]).pipe(parser as unknown as NodeJS.WritableStream);
  });
  return out;
}

/** A local HTTP server that records what it is sent; `answer` decides the status (and may wait). */
async function receiver(t: TestContext, answer: (req: http.IncomingMessage) => Promise<number> | number = () => 200) {
  const got: { method: string; url: string; headers: http.IncomingHttpHeaders; body: Buffer }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      got.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks) });
      res.statusCode = await answer(req);
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  return { got, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

test('none → queued → finished: 202, the status record with _links only when finished, the download with its archive', async (t) => {
  const w = await world(t);
  assert.deepEqual(await status(w), { ...identity(w), export_status: 'none' });

  const hold = holdJobs(w);
  const r = await post(w, { description: 'Overridden' });
  assert.equal(r.statusCode, 202);
  assert.deepEqual(r.json(), { message: '202 Accepted' });
  assert.deepEqual(await status(w), { ...identity(w), export_status: 'queued' });
  const jobs = await w.ta.c.db.kysely.selectFrom('jobs').selectAll().where('kind', '=', EXPORT_JOB).execute();
  assert.equal(jobs.length, 1);
  assert.equal(jobs[0]!.state, 'queued');
  const queued = await row(w);
  assert.equal(queued!.status, 'queued');
  assert.equal(queued!.user_id, w.maintainer.id);
  assert.equal(queued!.description, 'Overridden');

  // download before it finished: 404
  const early = await w.ta.app.inject({ method: 'GET', url: url(w.project, '/download'), headers: w.headers });
  assert.deepEqual([early.statusCode, early.json()], [404, { message: '404 Not found or has expired' }]);

  await hold.release();
  assert.deepEqual(await status(w), { ...identity(w), export_status: 'finished', _links: links(w) });
  const done = (await row(w))!;
  assert.equal(done.status, 'finished');
  assert.match(done.store_key!, new RegExp(`^exports/${w.project.id}/[0-9a-f]{32}\\.tar\\.gz$`));
  assert.match(done.file_name!, /^\d{4}-\d\d-\d\d_\d\d-\d\d-\d{3}_exp-group_exp-project_export\.tar\.gz$/);
  const hours = (Date.parse(done.expires_at!) - Date.now()) / 3_600_000;
  assert.ok(hours > 23.9 && hours <= 24, String(hours));
  assert.equal(done.error, null);
  assert.equal((await w.ta.c.db.kysely.selectFrom('jobs').select('state').where('kind', '=', EXPORT_JOB).executeTakeFirst())!.state, 'done');
  // the temporary directory is gone
  const tmp = path.join(w.ta.dataDir, 'tmp');
  assert.deepEqual(fs.existsSync(tmp) ? fs.readdirSync(tmp).filter((f) => f.startsWith('export-')) : [], []);

  const dl = await w.ta.app.inject({ method: 'GET', url: url(w.project, '/download'), headers: w.headers });
  assert.equal(dl.statusCode, 200);
  assert.equal(dl.headers['content-type'], 'application/gzip');
  assert.equal(dl.headers['content-disposition'], `attachment; filename="${done.file_name}"`);
  assert.equal(dl.headers['content-length'], String(done.size));
  assert.equal(dl.rawPayload.length, done.size);
  assert.equal(dl.rawPayload[0], 0x1f);
  assert.equal(dl.rawPayload[1], 0x8b);
  const entries = await entriesOf(dl.rawPayload);
  assert.equal(entries.get('VERSION'), '0.2.4');
  assert.equal(entries.get('GITLAB_VERSION'), '17.0.0');
  assert.equal(entries.get('GITLAB_REVISION'), w.ta.config.revision);
  assert.ok(entries.has('project.bundle'));
  assert.ok(entries.get('project.bundle')!.startsWith('# v2 git bundle') || entries.get('project.bundle')!.startsWith('# v3 git bundle'));
  const projectJson = JSON.parse(entries.get('tree/project.json')!);
  assert.equal(projectJson.description, 'Overridden');
  assert.ok(
    [...entries.keys()].some((k) => /^tree\/project\/[a-z_]+\.ndjson$/.test(k)),
    [...entries.keys()].join(' '),
  );
  for (const k of entries.keys()) assert.ok(!k.startsWith('/') && !k.includes('..'), k);
});

test('regeneration_in_progress while a new run is queued and started; the old archive stays downloadable, then is replaced and queued for deletion', async (t) => {
  const w = await world(t);
  await setting(w.ta, { allow_local_requests_from_web_hooks_and_services: true });
  assert.equal((await post(w)).statusCode, 202);
  await w.ta.c.importExport.exports.idle();
  const first = (await row(w))!;
  assert.equal(first.status, 'finished');

  // queued again: regeneration_in_progress
  const hold = holdJobs(w);
  assert.equal((await post(w)).statusCode, 202);
  assert.deepEqual(await status(w), { ...identity(w), export_status: 'regeneration_in_progress' });
  const old = await w.ta.app.inject({ method: 'GET', url: url(w.project, '/download'), headers: w.headers });
  assert.equal(old.statusCode, 200);
  assert.equal(old.headers['content-disposition'], `attachment; filename="${first.file_name}"`);
  await hold.release();
  const second = (await row(w))!;
  assert.notEqual(second.store_key, first.store_key);
  const deletions = await w.ta.c.db.kysely.selectFrom('jobs').select('payload').where('kind', '=', 'blob_delete').execute();
  assert.ok(deletions.some((d) => (JSON.parse(d.payload).keys as string[]).includes(first.store_key!)));
  await w.ta.c.worker.drain();
  assert.equal(await w.ta.c.store.stat(first.store_key!), null);
  assert.ok(await w.ta.c.store.stat(second.store_key!));

  // started (the upload waits): regeneration_in_progress too; then finished
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let arrived!: () => void;
  const arrival = new Promise<void>((r) => (arrived = r));
  const rx = await receiver(t, async () => {
    arrived();
    await gate;
    return 200;
  });
  assert.equal((await post(w, { upload: { url: `${rx.base}/up` } })).statusCode, 202);
  await arrival;
  assert.equal((await row(w))!.status, 'started');
  assert.deepEqual(await status(w), { ...identity(w), export_status: 'regeneration_in_progress' });
  release();
  await w.ta.c.importExport.exports.idle();
  assert.deepEqual(await status(w), { ...identity(w), export_status: 'finished', _links: links(w) });
});

test('started while the upload is sent: Content-Type application/gzip and the archive bytes, PUT by default, POST on request; the URL is sealed and cleared', async (t) => {
  const w = await world(t);
  await setting(w.ta, { allow_local_requests_from_web_hooks_and_services: true });
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let arrived!: () => void;
  const arrival = new Promise<void>((r) => (arrived = r));
  const rx = await receiver(t, async () => {
    arrived();
    await gate;
    return 200;
  });
  const secretUrl = `${rx.base}/bucket/archive.tar.gz?X-Amz-Signature=secret123`;
  assert.equal((await post(w, { upload: { url: secretUrl } })).statusCode, 202);
  await arrival;
  const during = (await row(w))!;
  assert.equal(during.status, 'started');
  assert.ok(during.upload_url && !during.upload_url.includes('secret123') && !during.upload_url.includes('127.0.0.1'));
  assert.equal(during.upload_method, 'PUT');
  assert.deepEqual(await status(w), { ...identity(w), export_status: 'started' });
  release();
  await w.ta.c.importExport.exports.idle();

  const done = (await row(w))!;
  assert.equal(done.status, 'finished');
  assert.equal(done.upload_url, null);
  assert.equal(rx.got.length, 1);
  assert.equal(rx.got[0]!.method, 'PUT');
  assert.equal(rx.got[0]!.url, '/bucket/archive.tar.gz?X-Amz-Signature=secret123');
  assert.equal(rx.got[0]!.headers['content-type'], 'application/gzip');
  assert.equal(rx.got[0]!.headers['content-length'], String(done.size));
  const dl = await w.ta.app.inject({ method: 'GET', url: url(w.project, '/download'), headers: w.headers });
  assert.ok(rx.got[0]!.body.equals(dl.rawPayload));
  assert.ok((await entriesOf(rx.got[0]!.body)).has('VERSION'));

  // POST, as a form body (qs nesting), as python-gitlab and curl send it
  const form = await w.ta.app.inject({
    method: 'POST',
    url: url(w.project),
    headers: { ...w.headers, 'content-type': 'application/x-www-form-urlencoded' },
    payload: `description=Form&upload%5Burl%5D=${encodeURIComponent(`${rx.base}/post`)}&upload%5Bhttp_method%5D=POST`,
  });
  assert.equal(form.statusCode, 202, form.body);
  await w.ta.c.importExport.exports.idle();
  assert.equal(rx.got.length, 2);
  assert.deepEqual([rx.got[1]!.method, rx.got[1]!.url, rx.got[1]!.headers['content-type']], ['POST', '/post', 'application/gzip']);
  assert.equal((await row(w))!.description, 'Form');
});

test('an upload answered 500 or refused fails the export with the reason (no query string), and keeps no archive', async (t) => {
  const w = await world(t);
  await setting(w.ta, { allow_local_requests_from_web_hooks_and_services: true });
  const rx = await receiver(t, () => 500);
  assert.equal((await post(w, { upload: { url: `${rx.base}/x?token=abc`, http_method: 'POST' } })).statusCode, 202);
  await w.ta.c.importExport.exports.idle();
  assert.equal(rx.got.length, 1);
  let r = (await row(w))!;
  assert.deepEqual([r.status, r.error, r.store_key, r.upload_url], ['failed', 'Error uploading the project. Code 500: Internal Server Error', null, null]);
  assert.deepEqual(await status(w), { ...identity(w), export_status: 'failed' });
  const dl = await w.ta.app.inject({ method: 'GET', url: url(w.project, '/download'), headers: w.headers });
  assert.deepEqual([dl.statusCode, dl.json()], [404, { message: '404 Not found or has expired' }]);

  // connection refused: a port nobody listens on
  const closed = http.createServer();
  await new Promise<void>((res) => closed.listen(0, '127.0.0.1', res));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((res) => closed.close(() => res()));
  assert.equal((await post(w, { upload: { url: `http://127.0.0.1:${port}/x?sig=topsecret` } })).statusCode, 202);
  await w.ta.c.importExport.exports.idle();
  r = (await row(w))!;
  assert.equal(r.status, 'failed');
  assert.match(r.error!, /^Error uploading the project: .*ECONNREFUSED/);
  assert.ok(!r.error!.includes('topsecret'));
  assert.deepEqual(await status(w), { ...identity(w), export_status: 'failed' });
  const tmp = path.join(w.ta.dataDir, 'tmp');
  assert.deepEqual(
    fs.readdirSync(tmp).filter((f) => f.startsWith('export-')),
    [],
  );

  // a new request clears the failure: queued again, then finished
  assert.equal((await post(w)).statusCode, 202);
  await w.ta.c.importExport.exports.idle();
  r = (await row(w))!;
  assert.deepEqual([r.status, r.error], ['finished', null]);
});

test('max_export_size: an archive over the limit fails the export with a clear error; 0 is unlimited', async (t) => {
  const w = await world(t);
  // a file that does not compress: 1.5 MiB of random bytes
  const big = Buffer.from(Array.from({ length: 1536 * 1024 }, () => Math.floor(Math.random() * 256)));
  const put = await w.ta.app.inject({
    method: 'POST',
    url: `/api/v4/projects/${w.project.id}/repository/files/big.bin`,
    headers: w.ta.root,
    payload: { branch: 'main', content: big.toString('base64'), encoding: 'base64', commit_message: 'big' },
  });
  assert.equal(put.statusCode, 201, put.body);
  await setting(w.ta, { max_export_size: 1 });
  assert.equal((await post(w)).statusCode, 202);
  await w.ta.c.importExport.exports.idle();
  const r = (await row(w))!;
  assert.deepEqual([r.status, r.error, r.store_key], ['failed', 'The project size exceeds the export limit.', null]);
  assert.deepEqual(await status(w), { ...identity(w), export_status: 'failed' });
  assert.deepEqual(
    fs.readdirSync(path.join(w.ta.dataDir, 'tmp')).filter((f) => f.startsWith('export-')),
    [],
  );

  await setting(w.ta, { max_export_size: 2 });
  assert.equal((await post(w)).statusCode, 202);
  await w.ta.c.importExport.exports.idle();
  assert.equal((await row(w))!.status, 'finished');
  await setting(w.ta, { max_export_size: 0 });
  assert.equal((await post(w)).statusCode, 202);
  await w.ta.c.importExport.exports.idle();
  assert.equal((await row(w))!.status, 'finished');
});

test('permissions: Guest, Reporter, Developer 403; an outsider of a private project 404; anonymous 401; Maintainer, Owner and admin allowed; the status is per user', async (t) => {
  const w = await world(t, { commit: false });
  const routes = [
    { method: 'GET' as const, path: url(w.project) },
    { method: 'POST' as const, path: url(w.project) },
    { method: 'GET' as const, path: url(w.project, '/download') },
  ];
  for (const level of [10, 20, 30]) {
    const u = await w.ta.seed.user();
    await w.ta.seed.member({ project: w.project }, u, level);
    const h = (await w.ta.seed.token(u)).headers;
    for (const r of routes) {
      const res = await w.ta.app.inject({ method: r.method, url: r.path, headers: h });
      assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }], `${level} ${r.method} ${r.path}`);
    }
  }
  const outsider = (await w.ta.seed.token(await w.ta.seed.user())).headers;
  for (const r of routes) {
    const res = await w.ta.app.inject({ method: r.method, url: r.path, headers: outsider });
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Project Not Found' }]);
    const anon = await w.ta.app.inject({ method: r.method, url: r.path });
    assert.equal(anon.statusCode, 401);
  }
  assert.equal(await w.ta.c.db.kysely.selectFrom('project_exports').select('id').executeTakeFirst(), undefined);

  // an owner through the group, and the admin: each has an export of their own
  const owner = await w.ta.seed.user();
  await w.ta.seed.member({ group: w.group }, owner, 50);
  const ownerHeaders = (await w.ta.seed.token(owner)).headers;
  assert.equal((await post(w, undefined, ownerHeaders)).statusCode, 202);
  await w.ta.c.importExport.exports.idle();
  assert.equal((await status(w, ownerHeaders)).export_status, 'finished');
  assert.equal((await status(w)).export_status, 'none');
  assert.equal((await status(w, w.ta.root)).export_status, 'none');
  const dl = await w.ta.app.inject({ method: 'GET', url: url(w.project, '/download'), headers: w.headers });
  assert.equal(dl.statusCode, 404);
  assert.equal((await post(w, {}, w.ta.root)).statusCode, 202);
  assert.equal((await post(w, {})).statusCode, 202);
  await w.ta.c.importExport.exports.idle();
  assert.equal((await status(w, w.ta.root)).export_status, 'finished');
  assert.equal((await status(w)).export_status, 'finished');
  // an empty repository: no project.bundle
  const d2 = await w.ta.app.inject({ method: 'GET', url: url(w.project, '/download'), headers: w.headers });
  const entries = await entriesOf(d2.rawPayload);
  assert.ok(entries.has('VERSION') && entries.has('tree/project.json'));
  assert.ok(!entries.has('project.bundle'));
  // by full path
  const byPath = await w.ta.app.inject({ method: 'GET', url: `/api/v4/projects/${encodeURIComponent('exp-group/exp-project')}/export`, headers: w.headers });
  assert.equal(byPath.json().export_status, 'finished');
});

test('project_export_enabled off: 404 "404 Not Found" on every route, before anything else', async (t) => {
  const w = await world(t, { commit: false });
  await setting(w.ta, { project_export_enabled: false });
  for (const [method, p] of [
    ['GET', url(w.project)],
    ['POST', url(w.project)],
    ['GET', url(w.project, '/download')],
    ['POST', url(999_999)],
  ] as const) {
    const res = await w.ta.app.inject({ method, url: p, headers: w.headers, payload: method === 'POST' ? { upload: { http_method: 'GET' } } : undefined });
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Not Found' }]);
  }
  assert.equal(await w.ta.c.db.kysely.selectFrom('jobs').select('id').where('kind', '=', EXPORT_JOB).executeTakeFirst(), undefined);
});

test('bad parameters: 400 with Grape messages or the URL validation error; nothing queued', async (t) => {
  const w = await world(t, { commit: false });
  const cases: [unknown, number, unknown][] = [
    [{ upload: {} }, 400, { error: 'upload[url] is missing' }],
    [{ upload: { http_method: 'PUT' } }, 400, { error: 'upload[url] is missing' }],
    [{ upload: { url: 'http://example.com/x', http_method: 'GET' } }, 400, { error: 'upload[http_method] does not have a valid value' }],
    [{ upload: { url: 'http://example.com/x', http_method: 'put' } }, 400, { error: 'upload[http_method] does not have a valid value' }],
    [{ upload: { http_method: 'PATCH' } }, 400, { error: 'upload[url] is missing, upload[http_method] does not have a valid value' }],
    [{ upload: 'http://example.com' }, 400, { error: 'upload is invalid' }],
    [{ upload: { url: { a: 1 } } }, 400, { error: 'upload[url] is invalid' }],
    [{ description: { a: 1 } }, 400, { error: 'description is invalid' }],
    [{ upload: { url: 'whatever' } }, 400, { message: { url: ['is blocked: URI is invalid'] } }],
    [{ upload: { url: 'ftp://example.com/x' } }, 400, { message: { url: ['is blocked: Only allowed schemes are http, https'] } }],
    [{ upload: { url: 'http://127.0.0.1:9/x' } }, 400, { message: { url: ['is blocked: Requests to localhost are not allowed'] } }],
    [{ upload: { url: 'http://10.0.0.1/x' } }, 400, { message: { url: ['is blocked: Requests to the local network are not allowed'] } }],
  ];
  for (const [payload, code, body] of cases) {
    const r = await post(w, payload);
    assert.deepEqual([r.statusCode, r.json()], [code, body], JSON.stringify(payload));
  }
  // form bodies: the same messages
  const form = await w.ta.app.inject({
    method: 'POST',
    url: url(w.project),
    headers: { ...w.headers, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'upload%5Bhttp_method%5D=POST',
  });
  assert.deepEqual([form.statusCode, form.json()], [400, { error: 'upload[url] is missing' }]);
  // multipart fields keep their bracketed names: nested the same way
  const boundary = 'xYzBoundary';
  const multipart = await w.ta.app.inject({
    method: 'POST',
    url: url(w.project),
    headers: { ...w.headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload: `--${boundary}\r\nContent-Disposition: form-data; name="upload[http_method]"\r\n\r\nDELETE\r\n--${boundary}--\r\n`,
  });
  assert.deepEqual([multipart.statusCode, multipart.json()], [400, { error: 'upload[url] is missing, upload[http_method] does not have a valid value' }]);
  assert.equal(await w.ta.c.db.kysely.selectFrom('project_exports').select('id').executeTakeFirst(), undefined);
  assert.equal(await w.ta.c.db.kysely.selectFrom('jobs').select('id').where('kind', '=', EXPORT_JOB).executeTakeFirst(), undefined);

  // an empty upload[url] is no upload (GitLab: url.present?); no body at all is fine
  const hold = holdJobs(w);
  assert.equal((await post(w, { upload: { url: '' } })).statusCode, 202);
  assert.equal((await row(w))!.upload_url, null);
  assert.equal((await w.ta.app.inject({ method: 'POST', url: url(w.project), headers: w.headers })).statusCode, 202);
  // a second request while one waits: one job, the newer parameters
  assert.equal((await post(w, { description: 'newer' })).statusCode, 202);
  assert.equal((await w.ta.c.db.kysely.selectFrom('jobs').select('id').where('kind', '=', EXPORT_JOB).execute()).length, 1);
  await hold.release();
  const r = (await row(w))!;
  assert.deepEqual([r.status, r.description], ['finished', 'newer']);
});

test('ids beyond int4 and unknown projects are 404, never 500', async (t) => {
  const w = await world(t, { commit: false });
  for (const id of ['2147483648', '99999999999999999999', '0']) {
    for (const [method, rest] of [
      ['GET', ''],
      ['POST', ''],
      ['GET', '/download'],
    ] as const) {
      const r = await w.ta.app.inject({ method, url: `/api/v4/projects/${id}/export${rest}`, headers: w.ta.root });
      assert.deepEqual([r.statusCode, r.json()], [404, { message: '404 Project Not Found' }], `${method} ${id}${rest}`);
    }
  }
});

test('expiry: removeExpired queues the archive for deletion and resets the row; the download is 404; status none', async (t) => {
  const w = await world(t);
  assert.equal((await post(w)).statusCode, 202);
  await w.ta.c.importExport.exports.idle();
  const done = (await row(w))!;
  assert.equal(await w.ta.c.importExport.exports.removeExpired(), 0);
  await w.ta.c.db.kysely
    .updateTable('project_exports')
    .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
    .where('id', '=', done.id)
    .execute();
  // expired but not yet swept: already gone for the API
  assert.deepEqual(await status(w), { ...identity(w), export_status: 'none' });
  const before = await w.ta.app.inject({ method: 'GET', url: url(w.project, '/download'), headers: w.headers });
  assert.deepEqual([before.statusCode, before.json()], [404, { message: '404 Not found or has expired' }]);
  assert.equal(await w.ta.c.importExport.exports.removeExpired(), 1);
  assert.equal(await w.ta.c.importExport.exports.removeExpired(), 0);
  const r = (await row(w))!;
  assert.deepEqual([r.status, r.store_key, r.file_name, r.size, r.expires_at], ['none', null, null, null, null]);
  await w.ta.c.worker.drain();
  assert.equal(await w.ta.c.store.stat(done.store_key!), null);
  assert.deepEqual(await status(w), { ...identity(w), export_status: 'none' });
  const dl = await w.ta.app.inject({ method: 'GET', url: url(w.project, '/download'), headers: w.headers });
  assert.deepEqual([dl.statusCode, dl.json()], [404, { message: '404 Not found or has expired' }]);
});

test('the worker round: a queued job left by another process runs; a job whose lease ran out is taken again; a superseded job gives way', async (t) => {
  const w = await world(t);
  const k = w.ta.c.db.kysely;
  const hold = holdJobs(w);
  assert.equal((await post(w)).statusCode, 202);
  const exportRow = (await row(w))!;
  // another process claimed it, started the run and died: the row says started, the lease ran out
  const past = new Date(Date.now() - 60_000).toISOString();
  await k.updateTable('jobs').set({ state: 'running', locked_by: 'dead:1', locked_until: past, attempts: 1 }).where('kind', '=', EXPORT_JOB).execute();
  await k.updateTable('project_exports').set({ status: 'started', started_at: past }).where('id', '=', exportRow.id).execute();
  assert.deepEqual(await status(w), { ...identity(w), export_status: 'started' });
  await hold.release();
  assert.equal((await row(w))!.status, 'finished');
  const job = await k.selectFrom('jobs').selectAll().where('kind', '=', EXPORT_JOB).executeTakeFirstOrThrow();
  assert.deepEqual([job.state, job.attempts, job.locked_by], ['done', 2, null]);

  // a live lease is left alone
  const h2 = holdJobs(w);
  assert.equal((await post(w)).statusCode, 202);
  await k
    .updateTable('jobs')
    .set({ state: 'running', locked_by: 'alive:1', locked_until: new Date(Date.now() + 60_000).toISOString() })
    .where('kind', '=', EXPORT_JOB)
    .where('state', '=', 'queued')
    .execute();
  await h2.release();
  assert.equal((await row(w))!.status, 'queued');
  assert.equal(await w.ta.c.importExport.exports.runQueued(), 0);

  // an old job of an export with a newer job does nothing; the newer one runs
  await k
    .insertInto('jobs')
    .values(queuedJob(EXPORT_JOB, { export_id: exportRow.id }))
    .execute();
  await k.updateTable('jobs').set({ state: 'queued', locked_by: null, locked_until: null }).where('locked_by', '=', 'alive:1').execute();
  assert.equal(await w.ta.c.importExport.exports.runQueued(), 2);
  const states = await k.selectFrom('jobs').select(['state']).where('kind', '=', EXPORT_JOB).orderBy('id').execute();
  assert.deepEqual(
    states.map((s) => s.state),
    ['done', 'done', 'done'],
  );
  assert.equal((await row(w))!.status, 'finished');

  // a job whose lease ran out after being taken too many times fails the export
  const h3 = holdJobs(w);
  assert.equal((await post(w)).statusCode, 202);
  await k
    .updateTable('jobs')
    .set({ state: 'running', locked_by: 'dead:1', locked_until: past, attempts: 3 })
    .where('kind', '=', EXPORT_JOB)
    .where('state', '=', 'queued')
    .execute();
  await k.updateTable('project_exports').set({ status: 'started', started_at: past }).where('id', '=', exportRow.id).execute();
  await h3.release();
  const failed = (await row(w))!;
  assert.deepEqual([failed.status, failed.error], ['failed', 'The export was interrupted too many times.']);
  // the previous archive is still there: GitLab shows finished
  assert.equal((await status(w)).export_status, 'finished');

  // a deleted project: its export row goes with it, the job finds nothing
  const h4 = holdJobs(w);
  assert.equal((await post(w)).statusCode, 202);
  const del = await w.ta.app.inject({ method: 'DELETE', url: `/api/v4/projects/${w.project.id}`, headers: w.ta.root });
  assert.equal(del.statusCode, 202);
  await h4.release();
  assert.equal(await row(w), undefined);
});

test('buildArchive: the limit holds on the compressed stream too (no bundle: an empty repository), the partial file removed', async (t) => {
  const w = await world(t, { commit: false });
  const work = fs.mkdtempSync(path.join(w.ta.dataDir, 'build-'));
  const file = path.join(work, 'out.tar.gz');
  const deps = w.ta.c.importExport.exports.deps;
  await assert.rejects(buildArchive(deps, w.project, path.join(work, 'a'), file, { maxBytes: 200 }), (e: unknown) => {
    assert.ok(e instanceof ExportTooLargeError);
    assert.equal(e.message, 'The project size exceeds the export limit.');
    return true;
  });
  assert.equal(fs.existsSync(file), false);
  const size = await buildArchive(deps, w.project, path.join(work, 'b'), file, { maxBytes: 0 });
  assert.equal(fs.statSync(file).size, size);
  assert.ok(size > 200);
});

test('the expiry sweep also removes temporary export directories a dead process left (older than a day), not fresh ones', async (t) => {
  const w = await world(t, { commit: false });
  const tmp = path.join(w.ta.dataDir, 'tmp');
  fs.mkdirSync(path.join(tmp, 'export-old', 'archive'), { recursive: true });
  fs.writeFileSync(path.join(tmp, 'export-old', 'archive', 'VERSION'), '0.2.4');
  fs.mkdirSync(path.join(tmp, 'export-fresh'), { recursive: true });
  fs.mkdirSync(path.join(tmp, 'other-old'), { recursive: true });
  const old = new Date(Date.now() - 25 * 3_600_000);
  fs.utimesSync(path.join(tmp, 'export-old'), old, old);
  fs.utimesSync(path.join(tmp, 'other-old'), old, old);
  assert.equal(await w.ta.c.importExport.exports.removeExpired(), 0);
  assert.deepEqual(fs.readdirSync(tmp).sort(), ['export-fresh', 'other-old']);
});
