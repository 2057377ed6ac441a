// POST /projects/remote-import (rule 3 at request time with a HEAD through the guarded client, the job's
// download) and POST /projects/remote-import-s3 (against a real s3rver started here).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import { startS3, type S3Server } from '../../helpers/blob-store-s3rver.ts';
import { HEX32, importStatus, makeArchive, setSettings } from '../../helpers/project-import.ts';

// one suite: the shared fixture of `before` lives from this file's first test to its last, also in a shard
describe('project-import-remote', () => {
  interface Route {
    /** HEAD's headers (default: the GET's) */
    head?: Record<string, string>;
    status?: number;
    headers?: Record<string, string>;
    body?: Buffer;
    /** the GET waits for this before answering */
    hold?: Promise<void>;
  }

  let server: http.Server;
  let base: string;
  const routes = new Map<string, Route>();

  before(async () => {
    server = http.createServer((req, res) => {
      const r = routes.get(req.url ?? '');
      if (!r) {
        res.writeHead(404, { 'content-type': 'text/html', 'content-length': '9' });
        res.end(req.method === 'HEAD' ? undefined : 'not found');
        return;
      }
      const body = r.body ?? Buffer.alloc(0);
      if (req.method === 'HEAD') {
        res.writeHead(r.status ?? 200, r.head ?? r.headers ?? { 'content-type': 'application/gzip', 'content-length': String(body.length) });
        res.end();
        return;
      }
      void (async () => {
        await r.hold;
        res.writeHead(r.status ?? 200, { 'content-type': 'application/gzip', 'content-length': String(body.length) });
        res.end(body);
      })();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function app(t: Parameters<typeof buildTestApp>[0], overrides: Parameters<typeof buildTestApp>[1] = {}): Promise<TestApp> {
    const ta = await buildTestApp(t, overrides);
    await setSettings(ta, { allow_local_requests_from_web_hooks_and_services: true });
    return ta;
  }

  const remote = (ta: TestApp, payload: Record<string, unknown>, headers = ta.root) =>
    ta.app.inject({ method: 'POST', url: '/api/v4/projects/remote-import', headers, payload });

  test('remote import: 201 scheduled, started while the download runs, then finished with the archive’s repository and attributes', async (t) => {
    const ta = await app(t);
    const { dir } = await ta.seed.repoProject({ path: 'remote-src' });
    const { workTree } = await import('../../helpers/git.ts');
    const wt = workTree(t, dir);
    wt.write('x.txt', 'x\n').commit('one');
    wt.push('main');
    const archive = await makeArchive(ta, { bundleFrom: dir, projectJson: { description: 'remote one', visibility_level: 0 } });
    let release!: () => void;
    routes.set('/held.tar.gz', { body: archive, hold: new Promise<void>((r) => (release = r)) });

    const res = await remote(ta, { url: `${base}/held.tar.gz`, path: 'from-url', override_params: { squash_option: 'always' } });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().import_status, 'scheduled');
    assert.match(res.json().correlation_id, HEX32);
    assert.equal(res.json().import_error, null);
    // the job has started and waits for the download
    let seen = '';
    for (const deadline = Date.now() + 60_000; seen !== 'started' && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 30));
      seen = (await ta.app.inject({ method: 'GET', url: `/api/v4/projects/${res.json().id}/import`, headers: ta.root })).json().import_status;
    }
    assert.equal(seen, 'started');
    // the URL is kept sealed while the import runs
    const running = await ta.c.db.kysely.selectFrom('project_imports').selectAll().where('project_id', '=', res.json().id).executeTakeFirstOrThrow();
    assert.equal(running.source, 'url');
    assert.ok(running.source_params && !running.source_params.includes('127.0.0.1'));
    release();
    const done = await importStatus(ta, res.json().id);
    assert.deepEqual([done.body.import_status, done.body.import_error, done.body.description], ['finished', null, 'remote one']);
    const project = await ta.c.db.kysely.selectFrom('projects').selectAll().where('id', '=', res.json().id).executeTakeFirstOrThrow();
    const { refsOf } = await import('../../helpers/project-import.ts');
    assert.equal(refsOf(ta.c.repos.pathOf(project)), refsOf(dir));
    assert.equal(JSON.parse(project.settings).squash_option, 'always');
    const row = await ta.c.db.kysely.selectFrom('project_imports').selectAll().where('project_id', '=', project.id).executeTakeFirstOrThrow();
    assert.equal(row.source_params, null);
  });

  test('remote import: rule 3 at request time (Content-Length, Content-Type, size), blocked URLs, GitLab messages, nothing created', async (t) => {
    const ta = await app(t);
    const body = Buffer.alloc(100, 1);
    routes.set('/nolength', { head: { 'content-type': 'application/gzip' }, body });
    routes.set('/badlength', { head: { 'content-type': 'application/gzip', 'content-length': '0' }, body });
    routes.set('/html', { head: { 'content-type': 'text/html; charset=utf-8', 'content-length': '100' }, body });
    routes.set('/notype', { head: { 'content-length': '100' }, body });
    routes.set('/big', { head: { 'content-type': 'application/gzip', 'content-length': String(2 * 1024 * 1024) }, body });
    routes.set('/huge', { head: { 'content-type': 'application/x-gzip', 'content-length': String(11 * 1024 ** 3) }, body });
    const allowed = 'application/gzip, application/x-tar, application/x-gzip';
    const cases: [string, Record<string, unknown>, number, unknown][] = [
      ['no url', { path: 'x' }, 400, { error: 'url is missing' }],
      ['no path', { url: `${base}/x` }, 400, { error: 'path is missing' }],
      ['no Content-Length', { url: `${base}/nolength`, path: 'x' }, 400, { message: 'Content length is too small (should be at least 1 Byte)' }],
      ['a zero Content-Length', { url: `${base}/badlength`, path: 'x' }, 400, { message: 'Content length is too small (should be at least 1 Byte)' }],
      [
        'the wrong Content-Type',
        { url: `${base}/html`, path: 'x' },
        400,
        { message: `Content type 'text/html; charset=utf-8' not allowed. (Allowed: ${allowed})` },
      ],
      ['no Content-Type', { url: `${base}/notype`, path: 'x' }, 400, { message: `Content type '' not allowed. (Allowed: ${allowed})` }],
      ['404 from the remote', { url: `${base}/missing`, path: 'x' }, 400, { message: `Content type 'text/html' not allowed. (Allowed: ${allowed})` }],
      ['over 10 GB', { url: `${base}/huge`, path: 'x' }, 400, { message: 'Content length is too big (should be at most 10 GB)' }],
      ['not a URL', { url: 'not a url', path: 'x' }, 400, { message: 'File url is blocked: URI is invalid' }],
      ['unreachable', { url: 'http://127.0.0.1:1/x', path: 'x' }, 400, null],
      [
        'bad override_params',
        { url: `${base}/big`, path: 'x', override_params: { visibility: 'nope' } },
        400,
        { error: 'override_params[visibility] does not have a valid value' },
      ],
      ['override_params not a hash', { url: `${base}/big`, path: 'x', override_params: 'x' }, 400, { error: 'override_params is invalid' }],
    ];
    for (const [what, payload, status, expected] of cases) {
      const res = await remote(ta, payload);
      assert.equal(res.statusCode, status, `${what}: ${res.body}`);
      if (expected) assert.deepEqual(res.json(), expected, what);
      else assert.match(res.json().message, /^Failed to retrive headers: /, what);
    }
    // max_import_remote_file_size (MiB) lowers the limit
    await setSettings(ta, { max_import_remote_file_size: 1 });
    const big = await remote(ta, { url: `${base}/big`, path: 'x' });
    assert.deepEqual([big.statusCode, big.json()], [400, { message: 'Content length is too big (should be at most 1 MB)' }]);
    // local addresses refused when the setting is off
    await setSettings(ta, { allow_local_requests_from_web_hooks_and_services: false });
    const blocked = await remote(ta, { url: `${base}/html`, path: 'x' });
    assert.deepEqual([blocked.statusCode, blocked.json()], [400, { message: 'File url is blocked: Requests to localhost are not allowed' }]);
    const localhost = await remote(ta, { url: `http://localhost:${new URL(base).port}/html`, path: 'x' });
    assert.deepEqual([localhost.statusCode, localhost.json()], [400, { message: 'File url is blocked: Requests to localhost are not allowed' }]);
    assert.deepEqual(await ta.c.db.kysely.selectFrom('project_imports').select('project_id').execute(), []);
    // import_sources without gitlab_project
    await setSettings(ta, { import_sources: ['git'] });
    const off = await remote(ta, { url: `${base}/big`, path: 'x' });
    assert.deepEqual([off.statusCode, off.json()], [403, { message: '403 Forbidden' }]);
    const anon = await remote(ta, { url: `${base}/big`, path: 'x' }, {});
    assert.equal(anon.statusCode, 401);
  });

  test('remote import: the download fails (404, larger than announced) → failed with import_error, an empty project', async (t) => {
    const ta = await app(t);
    const archive = await makeArchive(ta);
    routes.set('/vanishes', { head: { 'content-type': 'application/gzip', 'content-length': String(archive.length) }, status: 404, body: archive });
    const res = await remote(ta, { url: `${base}/vanishes`, path: 'vanished' });
    assert.equal(res.statusCode, 201, res.body);
    const failed = await importStatus(ta, res.json().id);
    assert.deepEqual([failed.body.import_status, failed.body.import_error], ['failed', 'Unsupported response downloading fragment 404']);

    await setSettings(ta, { max_import_remote_file_size: 1 });
    const big = Buffer.concat([archive, Buffer.alloc(2 * 1024 * 1024, 7)]);
    routes.set('/liar', { head: { 'content-type': 'application/gzip', 'content-length': '100' }, body: big });
    const liar = await remote(ta, { url: `${base}/liar`, path: 'liar' });
    assert.equal(liar.statusCode, 201, liar.body);
    const tooBig = await importStatus(ta, liar.json().id);
    assert.deepEqual([tooBig.body.import_status, tooBig.body.import_error], ['failed', 'Content length is too big (should be at most 1 MB)']);
    const { readdirSync, existsSync } = await import('node:fs');
    const tmp = `${ta.dataDir}/tmp`;
    assert.deepEqual(existsSync(tmp) ? readdirSync(tmp) : [], []);
  });

  // ---- S3 ----------------------------------------------------------------------------------------

  let s3: S3Server;
  before(async () => {
    s3 = await startS3('imports');
  });
  after(async () => {
    await s3.stop();
  });

  async function putObject(key: string, body: Buffer, contentType: string): Promise<void> {
    const client = new S3Client({
      region: 'us-east-1',
      endpoint: s3.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    await client.send(new PutObjectCommand({ Bucket: 'imports', Key: key, Body: body, ContentType: contentType }));
    client.destroy();
  }

  const s3Params = (over: Record<string, unknown> = {}) => ({
    region: 'us-east-1',
    bucket_name: 'imports',
    file_key: 'exports/project.tar.gz',
    access_key_id: 'S3RVER',
    secret_access_key: 'S3RVER',
    path: 'from-s3',
    ...over,
  });

  test('S3 import: 201 scheduled, then finished; the credentials sealed while it runs and cleared after', async (t) => {
    const ta = await app(t, { importS3: { endpoint: s3.endpoint, forcePathStyle: true } });
    const { dir } = await ta.seed.repoProject({ path: 's3-src' });
    const { workTree } = await import('../../helpers/git.ts');
    const wt = workTree(t, dir);
    wt.write('y.txt', 'y\n').commit('one');
    wt.push('main');
    await putObject('exports/project.tar.gz', await makeArchive(ta, { bundleFrom: dir, projectJson: { description: 'from s3' } }), 'application/gzip');
    const res = await ta.app.inject({ method: 'POST', url: '/api/v4/projects/remote-import-s3', headers: ta.root, payload: s3Params({ name: 'From S3' }) });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(
      [res.json().import_status, res.json().name, res.json().path, res.json().import_type],
      ['scheduled', 'From S3', 'from-s3', 'gitlab_project'],
    );
    const done = await importStatus(ta, res.json().id);
    assert.deepEqual([done.body.import_status, done.body.import_error, done.body.description], ['finished', null, 'from s3']);
    const project = await ta.c.db.kysely.selectFrom('projects').selectAll().where('id', '=', res.json().id).executeTakeFirstOrThrow();
    const { refsOf } = await import('../../helpers/project-import.ts');
    assert.equal(refsOf(ta.c.repos.pathOf(project)), refsOf(dir));
    const row = await ta.c.db.kysely.selectFrom('project_imports').selectAll().where('project_id', '=', project.id).executeTakeFirstOrThrow();
    assert.deepEqual([row.source, row.source_params], ['s3', null]);
  });

  test('S3 import: missing parameters, bad credentials, unknown bucket or key, wrong content type → 400; an object that is no archive → failed', async (t) => {
    const ta = await app(t, { importS3: { endpoint: s3.endpoint, forcePathStyle: true } });
    await putObject('text.txt', Buffer.from('hello'), 'text/plain');
    await putObject('junk.tar.gz', Buffer.from('not an archive at all'), 'application/gzip');
    const post = (payload: Record<string, unknown>) => ta.app.inject({ method: 'POST', url: '/api/v4/projects/remote-import-s3', headers: ta.root, payload });
    const missing = await post({ path: 'x' });
    assert.deepEqual(
      [missing.statusCode, missing.json()],
      [400, { error: 'region is missing, bucket_name is missing, file_key is missing, access_key_id is missing, secret_access_key is missing' }],
    );
    for (const k of ['region', 'bucket_name', 'file_key', 'access_key_id', 'secret_access_key', 'path']) {
      const rest: Record<string, unknown> = s3Params();
      delete rest[k];
      const r = await post(rest);
      assert.deepEqual([r.statusCode, r.json()], [400, { error: `${k} is missing` }], k);
    }
    const blank = await post(s3Params({ region: '' }));
    assert.deepEqual([blank.statusCode, blank.json()], [400, { message: "Region can't be blank" }]);
    const badKey = await post(s3Params({ access_key_id: 'WRONG' }));
    assert.equal(badKey.statusCode, 400);
    assert.match(badKey.json().message, /^Failed to open 'exports\/project\.tar\.gz' in 'imports': /);
    assert.ok(!badKey.body.includes('S3RVER'), 'no secret in the answer');
    const noBucket = await post(s3Params({ bucket_name: 'nope' }));
    assert.deepEqual([noBucket.statusCode, noBucket.json()], [400, { message: "File not found 'exports/project.tar.gz' in 'nope'" }]);
    const noKey = await post(s3Params({ file_key: 'nothing-here' }));
    assert.deepEqual([noKey.statusCode, noKey.json()], [400, { message: "File not found 'nothing-here' in 'imports'" }]);
    const text = await post(s3Params({ file_key: 'text.txt' }));
    assert.deepEqual(
      [text.statusCode, text.json()],
      [400, { message: "Content type 'text/plain' not allowed. (Allowed: application/gzip, application/x-tar, application/x-gzip)" }],
    );
    assert.deepEqual(await ta.c.db.kysely.selectFrom('project_imports').select('project_id').execute(), []);

    const junk = await post(s3Params({ file_key: 'junk.tar.gz', path: 'junk' }));
    assert.equal(junk.statusCode, 201, junk.body);
    const failed = await importStatus(ta, junk.json().id);
    assert.equal(failed.body.import_status, 'failed');
    assert.ok(failed.body.import_error);
    const row = await ta.c.db.kysely.selectFrom('project_imports').selectAll().where('project_id', '=', junk.json().id).executeTakeFirstOrThrow();
    assert.equal(row.source_params, null);
  });
});
