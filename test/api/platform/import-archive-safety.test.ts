// Untrusted uploads and archives through the routes: readUpload (max_import_size while reading, missing
// file, not multipart, broken multipart) and unsafe archives handed to an import (POST
// /projects/import-relation): refused without a byte outside the import's own temporary directory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { Header } from 'tar';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import { multipart } from '../../helpers/files.ts';
import { startTestServer } from '../../helpers/server.ts';
import { SIZE_MESSAGE } from '../../../src/domain/import-export/archive/extract.ts';
import { nestFields } from '../../../src/http/platform/import-export/upload.ts';

const URL = '/api/v4/projects/import-relation';

async function setup(t: Parameters<typeof buildTestApp>[0], ta?: TestApp) {
  const app = ta ?? (await buildTestApp(t));
  const owner = await app.seed.user();
  const group = await app.seed.group({ visibility: 'private' });
  const project = await app.seed.project({ namespace: group, path: 'target' });
  await app.seed.member({ project }, owner, 50);
  const headers = (await app.seed.token(owner)).headers;
  return { ta: app, project, headers, fullPath: `${group.path}/target` };
}

async function settings(ta: TestApp, body: Record<string, unknown>) {
  const r = await ta.app.inject({ method: 'PUT', url: '/api/v4/application/settings', headers: ta.root, payload: body });
  assert.equal(r.statusCode, 200, r.body);
}

const tmpFiles = (ta: TestApp): string[] => {
  const dir = path.join(ta.dataDir, 'tmp');
  return fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true }).map(String) : [];
};
const rows = (ta: TestApp) => ta.c.db.kysely.selectFrom('relation_imports').selectAll().orderBy('id').execute();

function post(ta: TestApp, headers: Record<string, string>, fields: Record<string, string | Buffer>, filename = 'export.tar.gz') {
  const body = multipart(fields, filename);
  return ta.app.inject({ method: 'POST', url: URL, headers: { ...headers, ...body.headers }, payload: body.payload });
}

/** A raw tar (entries written header by header: nothing normalised), gzipped. */
function rawArchive(entries: Array<{ path: string; type?: string; body?: string; linkpath?: string }>): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const body = Buffer.from(e.body ?? '');
    const type = e.type ?? 'File';
    const h = Buffer.alloc(512);
    new Header({ path: e.path, type, size: type === 'File' ? body.length : 0, mode: 0o644, linkpath: e.linkpath, mtime: new Date(0) } as any).encode(h);
    parts.push(h);
    if (type === 'File') parts.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(parts));
}

test('readUpload: over max_import_size → 413, the rest of the body dropped, nothing spooled or stored', async (t) => {
  const { ta, headers, fullPath } = await setup(t);
  await settings(ta, { max_import_size: 1 });
  // over the limit by little: found while reading (busboy's file size limit)
  let r = await post(ta, headers, { path: fullPath, relation: 'issues', file: Buffer.alloc(1024 * 1024 + 1, 1) });
  assert.equal(r.statusCode, 413, r.body);
  assert.deepEqual(r.json(), { message: '413 Request Entity Too Large' });
  // far over: refused on the declared length before a byte is read
  r = await post(ta, headers, { path: fullPath, relation: 'issues', file: Buffer.alloc(3 * 1024 * 1024, 1) });
  assert.equal(r.statusCode, 413, r.body);
  assert.deepEqual(r.json(), { message: '413 Request Entity Too Large' });
  // exactly at the limit: taken (then failed as an archive, it is not one)
  r = await post(ta, headers, { path: fullPath, relation: 'issues', file: Buffer.alloc(1024 * 1024, 1) });
  assert.equal(r.statusCode, 201, r.body);
  await ta.c.importExport.relationImports.idle();
  assert.equal((await rows(ta)).length, 1);
  assert.deepEqual(tmpFiles(ta), []);
});

test('readUpload over a real socket: a chunked body over the limit gets its 413 while the client is still writing', async (t) => {
  const srv = await startTestServer(t);
  const { headers, fullPath } = await setup(t, srv);
  await settings(srv, { max_import_size: 1 });
  const boundary = 'xxBOUNDARYxx';
  const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request(`${srv.base}${URL}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' },
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="path"\r\n\r\n${fullPath}\r\n`);
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="relation"\r\n\r\nissues\r\n`);
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="export.tar.gz"\r\n\r\n`);
    const chunk = Buffer.alloc(64 * 1024, 7);
    let sent = 0;
    const more = () => {
      while (sent < 4 * 1024 * 1024) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', more);
      }
      req.end(`\r\n--${boundary}--\r\n`);
    };
    more();
  });
  assert.equal(res.status, 413);
  assert.deepEqual(JSON.parse(res.body), { message: '413 Request Entity Too Large' });
  assert.deepEqual(await rows(srv), []);
  assert.deepEqual(tmpFiles(srv), []);
});

test('readUpload: no file part, not multipart, broken multipart → 400', async (t) => {
  const { ta, headers, fullPath } = await setup(t);
  let r = await post(ta, headers, { path: fullPath, relation: 'issues' });
  assert.equal(r.statusCode, 400);
  assert.deepEqual(r.json(), { error: 'file is missing' });
  // a JSON body: Grape sees no file
  r = await ta.app.inject({ method: 'POST', url: URL, headers, payload: { path: fullPath, relation: 'issues' } });
  assert.equal(r.statusCode, 400);
  assert.deepEqual(r.json(), { error: 'file is missing' });
  r = await ta.app.inject({ method: 'POST', url: URL, headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'path=a%2Fb' });
  assert.equal(r.statusCode, 400);
  assert.deepEqual(r.json(), { error: 'file is missing, relation is missing' });
  r = await ta.app.inject({ method: 'POST', url: URL, headers });
  assert.equal(r.statusCode, 400);
  assert.deepEqual(r.json(), { error: 'path is missing, file is missing, relation is missing' });
  // multipart without a boundary
  r = await ta.app.inject({ method: 'POST', url: URL, headers: { ...headers, 'content-type': 'multipart/form-data' }, payload: 'x' });
  assert.equal(r.statusCode, 400);
  assert.match(r.json().error, /^Multipart form parse error - /);
  // a body cut in the middle of the file part
  const body = multipart({ path: fullPath, relation: 'issues', file: Buffer.alloc(5000, 1) }, 'export.tar.gz');
  r = await ta.app.inject({ method: 'POST', url: URL, headers: { ...headers, ...body.headers }, payload: body.payload.subarray(0, body.payload.length - 200) });
  assert.equal(r.statusCode, 400, r.body);
  assert.match(r.json().error, /^Multipart form parse error - /);
  assert.deepEqual(await rows(ta), []);
  assert.deepEqual(tmpFiles(ta), []);
});

test('unsafe archives through an import: failed, nothing written outside, nothing left behind', async (t) => {
  const { ta, headers, fullPath } = await setup(t);
  const outside = path.join(ta.dataDir, 'outside');
  fs.mkdirSync(outside);
  const version = { path: 'VERSION', body: '0.2.4' };
  const issues = { path: 'tree/project/issues.ndjson', body: '' };
  const cases: Array<[Buffer, string | RegExp]> = [
    [rawArchive([version, { path: 'tree', type: 'SymbolicLink', linkpath: outside }, issues]), 'Invalid file: "tree" is a symbolic link'],
    [
      rawArchive([version, { path: 'tree/project/issues.ndjson', type: 'Link', linkpath: '/etc/passwd' }]),
      'Invalid file: "tree/project/issues.ndjson" is a hard link',
    ],
    [rawArchive([version, { path: '../../../outside/pwned', body: 'x' }, issues]), 'Invalid file: "../../../outside/pwned" leaves the archive'],
    [rawArchive([version, { path: `${outside}/pwned`, body: 'x' }, issues]), `Invalid file: ${JSON.stringify(`${outside}/pwned`)} is an absolute path`],
    [rawArchive([version, { path: 'dev', type: 'CharacterDevice' }, issues]), 'Invalid file: "dev" is a character device'],
    [rawArchive([version, { path: 'fifo', type: 'FIFO' }, issues]), 'Invalid file: "fifo" is a FIFO'],
  ];
  for (const [archive, message] of cases) {
    const r = await post(ta, headers, { path: fullPath, relation: 'issues', file: archive });
    assert.equal(r.statusCode, 201, r.body);
    await ta.c.importExport.relationImports.idle();
    const row = (await rows(ta)).at(-1)!;
    assert.equal(row.status, 'failed');
    if (typeof message === 'string') assert.equal(row.error, message);
    else assert.match(row.error!, message);
    assert.deepEqual(tmpFiles(ta), []);
  }
  assert.deepEqual(fs.readdirSync(outside), []);
});

test('a gzip bomb through an import: max_decompressed_archive_size stops it at once', async (t) => {
  const { ta, headers, fullPath } = await setup(t);
  await settings(ta, { max_decompressed_archive_size: 10 });
  // 200 MiB of zeros in one entry, ~200 KiB compressed
  const size = 200 * 1024 * 1024;
  const h = Buffer.alloc(512);
  new Header({ path: 'tree/project/issues.ndjson', type: 'File', size, mode: 0o644, mtime: new Date(0) } as any).encode(h);
  const { createGzip } = await import('node:zlib');
  const gz = createGzip();
  const out: Buffer[] = [];
  gz.on('data', (c: Buffer) => out.push(c));
  const done = new Promise((r) => gz.on('end', r));
  gz.write(h);
  const zeros = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < 200; i++) gz.write(zeros);
  gz.end(Buffer.alloc(1024));
  await done;
  const bomb = Buffer.concat(out);
  assert.ok(bomb.length < 1024 * 1024);

  const r = await post(ta, headers, { path: fullPath, relation: 'issues', file: bomb });
  assert.equal(r.statusCode, 201, r.body);
  await ta.c.importExport.relationImports.idle();
  const row = (await rows(ta)).at(-1)!;
  assert.equal(row.status, 'failed');
  assert.equal(row.error, SIZE_MESSAGE);
  assert.deepEqual(tmpFiles(ta), []);
});

test('nestFields: a[b] names as objects (as Rack parses them)', () => {
  assert.deepEqual(nestFields({ path: 'p', 'override_params[description]': 'd', 'override_params[topics][]': ['a', 'b'], 'x[y][z]': '1' }), {
    path: 'p',
    override_params: { description: 'd', topics: ['a', 'b'] },
    x: { y: { z: '1' } },
  });
});
