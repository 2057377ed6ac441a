// Repository archives (GitLab lib/api/repositories.rb `archive`, served as Workhorse does): every format
// byte for byte against `git archive`, extracted and compared with the commit's files, GitLab's file
// names and headers, sub-paths and excluded paths, refusals (404 File Not Found), visibility, the
// hotlinking guard and the per-user rate limit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { buildTestApp, type TestApp } from '../../../helpers/build-app.ts';
import { bareGit, fixtureEnv, workTree } from '../../../helpers/git.ts';
import type { ProjectRow, UserRow } from '../../../../src/db/schema.ts';
import { inOneWindow } from '../../../helpers/rate-window.ts';

interface Fixture extends TestApp {
  owner: UserRow;
  ownerHeaders: Record<string, string>;
  project: ProjectRow;
  dir: string;
  base: string;
  main: string;
  feature: string;
  tmp: string;
}

/** main: files of every kind in nested directories; branch feature/x one commit ahead; tag v1.0 on main. */
async function fixture(t: any, opts: { visibility?: string; archiveRateLimit?: number } = {}): Promise<Fixture> {
  const ta = await buildTestApp(t, { archiveRateLimit: opts.archiveRateLimit ?? 0 });
  const owner = await ta.seed.user();
  const { headers: ownerHeaders } = await ta.seed.token(owner);
  const { project, dir } = await ta.seed.repoProject({ owner, visibility: opts.visibility ?? 'private', path: 'my.project' });
  await ta.seed.member({ project }, owner, 50);
  const wt = workTree(t, dir);
  wt.write('README.md', '# Hello\n')
    .write('run.sh', '#!/bin/sh\necho hi\n', 0o755)
    .write('données.txt', 'é\n')
    .write('src/main.ts', 'export {};\n')
    .write('src/lib/util.ts', 'export const x = 1;\n')
    .write('src/lib/deep/x.ts', 'deep\n')
    .write('-dash/c.txt', 'dash\n')
    .write('docs/a b.md', 'doc\n')
    .write('bin.dat', Buffer.from([0, 1, 2, 3, 255, 254, 0, 7]));
  fs.symlinkSync('README.md', path.join(wt.dir, 'link'));
  const main = wt.commit('First');
  wt.git(['tag', '-a', 'v1.0', '-m', 'Version 1.0']);
  wt.checkout('feature/x', true);
  const feature = wt.write('feature.txt', 'f\n').commit('Feature');
  wt.checkout('main');
  wt.push();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-archive-'));
  t.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  return { ...ta, owner, ownerHeaders, project, dir, base: `/api/v4/projects/${project.id}/repository`, main, feature, tmp };
}

const get = (ta: TestApp, url: string, headers: Record<string, string> = ta.root) => ta.app.inject({ method: 'GET', url, headers });

/** What `git archive` itself produces for the same request. */
function gitArchive(f: Fixture, format: string, prefix: string, commit: string, pathspecs: string[] = []): Buffer {
  const config = format === 'tar.bz2' ? ['-c', 'tar.tar.bz2.command=bzip2 -c'] : [];
  return execFileSync(
    'git',
    [...config, '--git-dir', f.dir, 'archive', `--format=${format}`, `--prefix=${prefix}/`, commit, ...(pathspecs.length ? ['--', ...pathspecs] : [])],
    {
      env: fixtureEnv(),
      maxBuffer: 64 * 1024 * 1024,
    },
  );
}

/** Names in the archive, as tar or unzip list them. */
function listing(f: Fixture, body: Buffer, ext: string): string[] {
  const file = path.join(f.tmp, `list.${ext}`);
  fs.writeFileSync(file, body);
  const out = ext === 'zip' ? execFileSync('unzip', ['-Z1', file]) : execFileSync('tar', ['-tf', file]);
  return out.toString('utf8').split('\n').filter(Boolean).sort();
}

/** Extracts the archive and compares every file with the commit's blob (content, executable bit, symlink). */
function assertContents(f: Fixture, body: Buffer, ext: string, prefix: string, commit: string, files: string[]): void {
  const dest = fs.mkdtempSync(path.join(f.tmp, 'x-'));
  const file = path.join(f.tmp, `extract.${ext}`);
  fs.writeFileSync(file, body);
  if (ext === 'zip') execFileSync('unzip', ['-q', file, '-d', dest]);
  else execFileSync('tar', ['-xf', file, '-C', dest]);
  const lines = bareGit(f.dir, ['ls-tree', '-r', '-z', commit]).split('\0').filter(Boolean);
  const modes = new Map(lines.map((l) => [l.slice(l.indexOf('\t') + 1), l.slice(0, 6)]));
  for (const name of files) {
    const onDisk = path.join(dest, prefix, name);
    const mode = modes.get(name);
    if (mode === '120000') {
      assert.equal(fs.readlinkSync(onDisk), bareGit(f.dir, ['cat-file', 'blob', `${commit}:${name}`]), name);
      continue;
    }
    assert.ok(fs.readFileSync(onDisk).equals(execFileSync('git', ['--git-dir', f.dir, 'cat-file', 'blob', `${commit}:${name}`])), name);
    assert.equal((fs.statSync(onDisk).mode & 0o111) !== 0, mode === '100755', name);
  }
}

/** The archive's expected entries: the files under `sub` (or all), their directories, under the prefix. */
function expectedNames(f: Fixture, commit: string, prefix: string, sub = '', exclude: string[] = []): string[] {
  const files = bareGit(f.dir, ['ls-tree', '-r', '-t', '-z', '--name-only', commit]).split('\0').filter(Boolean);
  const types = new Map(
    bareGit(f.dir, ['ls-tree', '-r', '-t', '-z', commit])
      .split('\0')
      .filter(Boolean)
      .map((l) => [l.slice(l.indexOf('\t') + 1), l.split(' ')[1]]),
  );
  const inside = (p: string, dir: string) => p === dir || p.startsWith(`${dir}/`);
  const names = files.filter((p) => (!sub || inside(p, sub) || inside(sub, p)) && !exclude.some((e) => inside(p, e)));
  return [`${prefix}/`, ...names.map((p) => `${prefix}/${p}${types.get(p) === 'tree' ? '/' : ''}`)].sort();
}

const MAGIC: Record<string, (b: Buffer) => boolean> = {
  'tar.gz': (b) => b[0] === 0x1f && b[1] === 0x8b,
  'tar.bz2': (b) => b.subarray(0, 3).toString('latin1') === 'BZh',
  zip: (b) => b.subarray(0, 4).equals(Buffer.from('PK\x03\x04', 'latin1')),
  tar: (b) => b.subarray(257, 262).toString('latin1') === 'ustar',
};

function assertArchiveHeaders(res: { headers: Record<string, unknown> }, filename: string, ext: string): void {
  assert.equal(res.headers['content-disposition'], `attachment; filename="${filename}"`);
  assert.equal(res.headers['content-type'], ext === 'zip' ? 'application/zip' : 'application/octet-stream');
  assert.equal(res.headers['content-transfer-encoding'], 'binary');
  assert.equal(res.headers['content-length'], undefined);
  assert.equal(res.headers['x-content-type-options'], 'nosniff');
}

test('archive: every format, byte for byte what git archive writes, with GitLab names and headers', async (t) => {
  const f = await fixture(t);
  const prefix = `my.project-main-${f.main}`;
  const all = expectedNames(f, f.main, prefix);
  const cases: [string, string][] = [
    ['/archive', 'tar.gz'],
    ['/archive.tar.gz', 'tar.gz'],
    ['/archive.tgz', 'tar.gz'],
    ['/archive.gz', 'tar.gz'],
    ['/archive?format=exe', 'tar.gz'],
    ['/archive.tar', 'tar'],
    ['/archive?format=tar', 'tar'],
    ['/archive.zip', 'zip'],
    ['/archive?format=zip', 'zip'],
    ['/archive.tar.bz2', 'tar.bz2'],
    ['/archive.tbz', 'tar.bz2'],
    ['/archive.tbz2', 'tar.bz2'],
    ['/archive.tb2', 'tar.bz2'],
    ['/archive.bz2', 'tar.bz2'],
  ];
  const reference = new Map<string, Buffer>();
  for (const [suffix, ext] of cases) {
    const res = await get(f, `${f.base}${suffix}`);
    assert.equal(res.statusCode, 200, suffix);
    assertArchiveHeaders(res, `${prefix}.${ext}`, ext);
    const body = res.rawPayload;
    assert.ok(MAGIC[ext](body), `${suffix}: magic bytes`);
    if (!reference.has(ext)) reference.set(ext, gitArchive(f, ext, prefix, f.main));
    assert.ok(body.equals(reference.get(ext)!), `${suffix}: same bytes as git archive`);
  }
  // the contents, checked independently of git archive
  for (const ext of ['tar.gz', 'tar', 'zip', 'tar.bz2']) {
    const body = reference.get(ext)!;
    assert.deepEqual(listing(f, body, ext), all, ext);
    assertContents(f, body, ext, prefix, f.main, ['README.md', 'run.sh', 'données.txt', 'src/lib/deep/x.ts', '-dash/c.txt', 'docs/a b.md', 'bin.dat', 'link']);
  }
});

test('archive: sha names a branch, a tag or a commit; the name carries the ref as given', async (t) => {
  const f = await fixture(t);
  for (const [sha, commit, name] of [
    ['feature/x', f.feature, `my.project-feature-x-${f.feature}`],
    ['feature%2Fx', f.feature, `my.project-feature-x-${f.feature}`],
    ['v1.0', f.main, `my.project-v1.0-${f.main}`],
    [f.feature, f.feature, `my.project-${f.feature}-${f.feature}`],
    [f.main.slice(0, 8), f.main, `my.project-${f.main.slice(0, 8)}-${f.main}`],
    ['refs/heads/feature/x', f.feature, `my.project-refs-heads-feature-x-${f.feature}`],
    ['main', f.main, `my.project-main-${f.main}`],
  ] as const) {
    const res = await get(f, `${f.base}/archive.tar?sha=${sha}`);
    assert.equal(res.statusCode, 200, sha);
    assertArchiveHeaders(res, `${name}.tar`, 'tar');
    assert.ok(res.rawPayload.equals(gitArchive(f, 'tar', name, commit)), sha);
    assert.deepEqual(listing(f, res.rawPayload, 'tar'), expectedNames(f, commit, name), sha);
  }
});

test('archive: path limits the archive to a sub-folder and is named after it; exclude_paths leave paths out', async (t) => {
  const f = await fixture(t);
  const src = `my.project-main-${f.main}-src-lib`;
  const res = await get(f, `${f.base}/archive.zip?path=src/lib`);
  assert.equal(res.statusCode, 200);
  assertArchiveHeaders(res, `${src}.zip`, 'zip');
  assert.deepEqual(listing(f, res.rawPayload, 'zip'), expectedNames(f, f.main, src, 'src/lib'));
  assert.deepEqual(
    listing(f, res.rawPayload, 'zip'),
    [`${src}/`, `${src}/src/`, `${src}/src/lib/`, `${src}/src/lib/deep/`, `${src}/src/lib/deep/x.ts`, `${src}/src/lib/util.ts`].sort(),
  );
  assert.ok(res.rawPayload.equals(gitArchive(f, 'zip', src, f.main, ['src/lib'])));
  assertContents(f, res.rawPayload, 'zip', src, f.main, ['src/lib/util.ts', 'src/lib/deep/x.ts']);

  // a leading dash is a directory name here, not an option
  const dash = await get(f, `${f.base}/archive.tar?path=-dash`);
  assert.equal(dash.statusCode, 200);
  assert.deepEqual(listing(f, dash.rawPayload, 'tar'), expectedNames(f, f.main, `my.project-main-${f.main}--dash`, '-dash'));
  // a single file
  const one = await get(f, `${f.base}/archive.tar?path=docs/a%20b.md`);
  assert.equal(one.statusCode, 200);
  assert.deepEqual(listing(f, one.rawPayload, 'tar'), expectedNames(f, f.main, `my.project-main-${f.main}-docs-a b.md`, 'docs/a b.md'));

  const full = `my.project-main-${f.main}`;
  for (const query of [
    'exclude_paths=src/lib,README.md',
    'exclude_paths[]=src/lib&exclude_paths[]=README.md',
    'exclude_paths=src/lib/&exclude_paths=%20README.md',
  ]) {
    const ex = await get(f, `${f.base}/archive.tar?${query}`);
    assert.equal(ex.statusCode, 200, query);
    assert.deepEqual(listing(f, ex.rawPayload, 'tar'), expectedNames(f, f.main, full, '', ['src/lib', 'README.md']), query);
  }
  const both = await get(f, `${f.base}/archive.tar?path=src&exclude_paths=src/lib/deep`);
  const name = `my.project-main-${f.main}-src`;
  assert.deepEqual(
    listing(f, both.rawPayload, 'tar'),
    [`${name}/`, `${name}/src/`, `${name}/src/lib/`, `${name}/src/lib/util.ts`, `${name}/src/main.ts`].sort(),
  );
  // an excluded path that does not exist changes nothing
  const none = await get(f, `${f.base}/archive.tar?exclude_paths=nope`);
  assert.ok(none.rawPayload.equals(gitArchive(f, 'tar', full, f.main)));
  // include_lfs_blobs is accepted (there is no LFS storage: blobs are archived as they are)
  const lfs = await get(f, `${f.base}/archive.tar?include_lfs_blobs=false`);
  assert.ok(lfs.rawPayload.equals(gitArchive(f, 'tar', full, f.main)));
});

test('archive: unknown refs, paths and unsafe values are 404 File Not Found, and nothing reaches git as an option', async (t) => {
  const f = await fixture(t);
  const marker = path.join(f.tmp, 'written-by-git');
  for (const query of [
    'sha=nope',
    'sha=xxx',
    `sha=${'0'.repeat(40)}`,
    `sha=${q(`--output=${marker}`)}`,
    'sha=-h',
    'sha=main~1',
    'sha=main%3AREADME.md',
    'sha=main..feature',
    'path=nope',
    'path=src/nope',
    'path=..',
    'path=../etc',
    'path=src/../docs',
    'path=./src',
    'path=%2Fetc',
    `path=${q(`--output=${marker}`)}`,
    'path=%3A(glob)*',
    'path=src%0AREADME.md',
    'exclude_paths=../x',
    'exclude_paths=%2Fetc',
    'exclude_paths=.',
  ]) {
    const res = await get(f, `${f.base}/archive.tar?${query}`);
    assert.equal(res.statusCode, 404, query);
    assert.deepEqual(res.json(), { message: '404 File Not Found' }, query);
    assert.equal(res.headers['content-disposition'], undefined, query);
  }
  assert.equal(fs.existsSync(marker), false);
  // pathspec magic in a path is taken literally: a file named like that would be archived, none is
  const glob = await get(f, `${f.base}/archive.tar?path=*.md`);
  assert.equal(glob.statusCode, 404);
  // a format suffix GitLab's route does not accept matches no route
  for (const suffix of ['exe', 'json', 'tar.xz', '7z']) {
    const res = await get(f, `${f.base}/archive.${suffix}`);
    assert.equal(res.statusCode, 404, suffix);
    assert.deepEqual(res.json(), { error: '404 Not Found' }, suffix);
  }
  const bad = await get(f, `${f.base}/archive?include_lfs_blobs=maybe`);
  assert.equal(bad.statusCode, 400);
  assert.deepEqual(bad.json(), { error: 'include_lfs_blobs is invalid' });
  // an empty repository has nothing to archive
  const empty = await f.seed.repoProject({ owner: f.owner, visibility: 'public' });
  const res = await get(f, `/api/v4/projects/${empty.project.id}/repository/archive`);
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 File Not Found' });
});

const q = (s: string) => encodeURIComponent(s);

test('archive: anonymous on a public project, 404 on a private one, 403 for a guest; HEAD sends headers only', async (t) => {
  const pub = await fixture(t, { visibility: 'public' });
  const anon = await pub.app.inject({ method: 'GET', url: `${pub.base}/archive.zip` });
  assert.equal(anon.statusCode, 200);
  assertArchiveHeaders(anon, `my.project-main-${pub.main}.zip`, 'zip');
  assert.ok(anon.rawPayload.equals(gitArchive(pub, 'zip', `my.project-main-${pub.main}`, pub.main)));
  const head = await pub.app.inject({ method: 'HEAD', url: `${pub.base}/archive.zip` });
  assert.equal(head.statusCode, 200);
  assertArchiveHeaders(head, `my.project-main-${pub.main}.zip`, 'zip');
  assert.equal(head.body, '');

  const priv = await fixture(t);
  const hidden = await priv.app.inject({ method: 'GET', url: `${priv.base}/archive` });
  assert.equal(hidden.statusCode, 404);
  assert.deepEqual(hidden.json(), { message: '404 Project Not Found' });
  const guest = await priv.seed.user();
  await priv.seed.member({ project: priv.project }, guest, 10);
  const gh = (await priv.seed.token(guest)).headers;
  const denied = await get(priv, `${priv.base}/archive`, gh);
  assert.equal(denied.statusCode, 403);
  assert.deepEqual(denied.json(), { message: '403 Forbidden' });
  const dev = await priv.seed.user();
  await priv.seed.member({ project: priv.project }, dev, 30);
  const dh = (await priv.seed.token(dev, { scopes: ['read_api'] })).headers;
  assert.equal((await get(priv, `${priv.base}/archive.tar`, dh)).statusCode, 200);
});

test('archive: requests that look like hotlinked media are refused with 406', async (t) => {
  const f = await fixture(t, { visibility: 'public' });
  for (const headers of [
    { 'sec-fetch-mode': 'no-cors' },
    { 'sec-fetch-mode': 'cors' },
    { 'sec-fetch-mode': 'websocket' },
    { accept: 'image/png' },
    { accept: 'image/*, */*;q=0.8' },
    { accept: 'text/css,*/*;q=0.1' },
    { accept: 'video/webm' },
    { accept: 'text/html;q=0.5, audio/*' },
    { accept: '*' },
  ]) {
    const res = await f.app.inject({ method: 'GET', url: `${f.base}/archive`, headers });
    assert.equal(res.statusCode, 406, JSON.stringify(headers));
    assert.deepEqual(res.json(), { message: '406 Not Acceptable' });
  }
  for (const headers of [
    {},
    { 'sec-fetch-mode': 'navigate' },
    { 'sec-fetch-mode': 'same-origin' },
    { accept: '*/*' },
    { accept: 'application/octet-stream' },
    { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8' },
    { accept: 'image/jpeg, application/x-ms-application, image/gif, */*' },
    { accept: 'application/json' },
  ]) {
    const res = await f.app.inject({ method: 'GET', url: `${f.base}/archive`, headers });
    assert.equal(res.statusCode, 200, JSON.stringify(headers));
  }
});

test('archive: rate limited per project and user (per address when anonymous), whatever the outcome', async (t) => {
  // the limit counts per minute, in windows aligned on the epoch
  await inOneWindow(60, async () => {
    const f = await fixture(t, { visibility: 'public', archiveRateLimit: 2 });
    const limited = { message: { error: 'This archive has been requested too many times. Try again later.' } };
    assert.equal((await get(f, `${f.base}/archive.tar`, f.ownerHeaders)).statusCode, 200);
    assert.equal((await get(f, `${f.base}/archive.tar?sha=nope`, f.ownerHeaders)).statusCode, 404); // counts too
    const third = await get(f, `${f.base}/archive.zip`, f.ownerHeaders);
    assert.equal(third.statusCode, 429);
    assert.deepEqual(third.json(), limited);
    assert.equal(third.headers['content-type'], 'application/json');
    assert.equal(third.headers['content-disposition'], undefined);
    const retry = Number(third.headers['retry-after']);
    assert.ok(retry >= 1 && retry <= 60, String(third.headers['retry-after']));

    // another user has a budget of their own, and so has the owner on another project
    const other = await f.seed.user();
    const oh = (await f.seed.token(other)).headers;
    assert.equal((await get(f, `${f.base}/archive.tar`, oh)).statusCode, 200);
    const second = await f.seed.repoProject({ owner: f.owner, visibility: 'public' });
    const wt = workTree(t, second.dir);
    wt.write('a.txt', 'a\n').commit('A');
    wt.push();
    assert.equal((await get(f, `/api/v4/projects/${second.project.id}/repository/archive.tar`, f.ownerHeaders)).statusCode, 200);

    // anonymous callers are counted by address
    const anon = (ip: string) => f.app.inject({ method: 'GET', url: `${f.base}/archive.tar`, remoteAddress: ip });
    assert.equal((await anon('10.0.0.1')).statusCode, 200);
    assert.equal((await anon('10.0.0.1')).statusCode, 200);
    const blocked = await anon('10.0.0.1');
    assert.equal(blocked.statusCode, 429);
    assert.deepEqual(blocked.json(), limited);
    assert.equal((await anon('10.0.0.2')).statusCode, 200);
    // the tree and blob reads are not limited
    for (let i = 0; i < 5; i++) assert.equal((await get(f, `${f.base}/tree`, f.ownerHeaders)).statusCode, 200);
  });
});

test('archive: a large archive is streamed, not buffered, and complete', async (t) => {
  const f = await fixture(t);
  const wt = workTree(t, f.dir);
  // 40 MB of incompressible data in 20 files
  for (let i = 0; i < 20; i++) wt.write(`big/${i}.bin`, crypto.randomBytes(2 * 1024 * 1024));
  const commit = wt.commit('Big files');
  wt.push();
  const address = new URL(await f.app.listen({ port: 0, host: '127.0.0.1' }));
  const request = (signal?: AbortSignal, suffix = 'tar') =>
    new Promise<http.IncomingMessage>((resolve, reject) => {
      http.get({ host: address.hostname, port: address.port, path: `${f.base}/archive.${suffix}`, headers: f.root, signal }, resolve).on('error', reject);
    });
  const res = await request();
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['transfer-encoding'], 'chunked');
  assert.equal(res.headers['content-length'], undefined);
  // it arrives in many chunks: the first long before the whole archive exists anywhere in memory
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  assert.ok(chunks.length > 10, `chunks: ${chunks.length}`);
  const body = Buffer.concat(chunks);
  assert.ok(body.equals(gitArchive(f, 'tar', `my.project-main-${commit}`, commit)));

  // Node's fetch says Sec-Fetch-Mode: cors unless told otherwise (GitLab refuses that too);
  // @gitbeaker/rest asks for archives with mode 'same-origin'
  const refused = await fetch(`${address.origin}${f.base}/archive.zip`, { headers: f.root });
  assert.equal(refused.status, 406);
  assert.deepEqual(await refused.json(), { message: '406 Not Acceptable' });
  const gitbeaker = await fetch(`${address.origin}${f.base}/archive.zip`, { headers: f.root, mode: 'same-origin' });
  assert.equal(gitbeaker.status, 200);
  assert.equal(gitbeaker.headers.get('content-type'), 'application/zip');
  assert.ok(Buffer.from(await gitbeaker.arrayBuffer()).equals(gitArchive(f, 'zip', `my.project-main-${commit}`, commit)));

  // a client that goes away mid-download leaves neither git nor its compressor running
  for (const suffix of ['tar', 'tar.bz2', 'zip']) {
    const aborted = new AbortController();
    const partial = await request(aborted.signal, suffix);
    assert.equal(partial.statusCode, 200);
    await new Promise((r) => partial.once('data', r));
    aborted.abort();
    partial.on('error', () => {});
    // git and the compressor end once the server saw the hang-up (the deadline bounds a hang, not the speed)
    const left = () => {
      const ps = execFileSync('ps', ['-eo', 'pid,ppid,args']).toString().split('\n');
      // an orphaned compressor would have been adopted by init
      return [ps.filter((l) => l.includes(f.dir) && l.includes(' archive ')), ps.filter((l) => /^\s*\d+\s+1\s+bzip2 -c$/.test(l))];
    };
    let running = left();
    for (const deadline = Date.now() + 30_000; running.some((l) => l.length) && Date.now() < deadline; running = left()) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.deepEqual(running, [[], []], suffix);
  }
});
