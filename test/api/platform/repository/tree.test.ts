// The repository tree and blob API (GitLab lib/api/repositories.rb: tree, blobs/:sha, blobs/:sha/raw)
// against real git fixtures: every listing is compared with `git ls-tree`, every blob with
// `git cat-file`, pagination headers in full (offset and keyset, walking every page), and each
// refusal with GitLab's body.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { buildTestApp, EXTERNAL_URL, type TestApp } from '../../../helpers/build-app.ts';
import { bareGit, workTree, type WorkTree } from '../../../helpers/git.ts';
import type { ProjectRow, UserRow } from '../../../../src/db/schema.ts';

interface Entry {
  id: string;
  name: string;
  type: string;
  path: string;
  mode: string;
}

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cf00000301010018dd8db00000000049454e44ae426082',
  'hex',
);
const SVG = '<?xml version="1.0"?>\n<!-- drawn by hand -->\n<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"></svg>\n';

interface Fixture extends TestApp {
  owner: UserRow;
  ownerHeaders: Record<string, string>;
  project: ProjectRow;
  dir: string;
  wt: WorkTree;
  base: string;
  first: string;
  head: string;
}

/**
 * main: First (files of every kind, directories, a symlink, a `-dash` directory, 45 files in many/),
 * then a submodule; branch feature/x at First with a change; annotated tag v1.0 at First.
 */
async function fixture(t: any, opts: { visibility?: string; overrides?: Parameters<typeof buildTestApp>[1] } = {}): Promise<Fixture> {
  const ta = await buildTestApp(t, opts.overrides);
  const owner = await ta.seed.user();
  const { headers: ownerHeaders } = await ta.seed.token(owner);
  const { project, dir } = await ta.seed.repoProject({ owner, visibility: opts.visibility ?? 'private' });
  await ta.seed.member({ project }, owner, 50);
  const wt = workTree(t, dir);
  wt.write('README.md', '# Hello\n')
    .write('b.txt', 'bee\n')
    .write('run.sh', '#!/bin/sh\necho hi\n', 0o755)
    .write('données.txt', 'é\n')
    .write('sp ace.txt', 'space\n')
    .write('src/main.ts', 'export {};\n')
    .write('src/lib/util.ts', 'export const x = 1;\n')
    .write('src/lib/deep/x.ts', 'deep\n')
    .write('-dash/c.txt', 'dash\n')
    .write('docs/a.md', 'doc\n')
    .write('img.png', PNG)
    .write('pic.svg', SVG)
    .write('page.html', '<html><body>hi</body></html>\n')
    .write('bin.dat', Buffer.from([0, 1, 2, 3, 255, 254, 0, 7]));
  for (let i = 0; i < 45; i++) wt.write(`many/f${String(i).padStart(2, '0')}.txt`, `file ${i}\n`);
  fs.symlinkSync('README.md', path.join(wt.dir, 'link'));
  const first = wt.commit('First');
  wt.git(['tag', '-a', 'v1.0', '-m', 'Version 1.0']);
  wt.checkout('feature/x', true).write('feature.txt', 'f\n').commit('Feature');
  wt.checkout('main');
  // a submodule entry (gitlink) pointing at the first commit
  wt.git(['update-index', '--add', '--cacheinfo', `160000,${first},vendor/sub`]);
  wt.git(['commit', '-q', '-m', 'Add submodule']);
  const head = wt.git(['rev-parse', 'HEAD']);
  wt.push();
  return { ...ta, owner, ownerHeaders, project, dir, wt, base: `/api/v4/projects/${project.id}/repository`, first, head };
}

/** What GitLab lists, computed by git: `git ls-tree [-r -t] <rev>[:<path>]`, trees, then blobs, then submodules. */
function lsTree(dir: string, rev: string, treePath = '', recursive = false): Entry[] {
  const out = bareGit(dir, ['ls-tree', '-z', ...(recursive ? ['-r', '-t'] : []), treePath ? `${rev}:${treePath}` : rev]);
  const entries = out
    .split('\0')
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf('\t');
      const [mode, type, id] = line.slice(0, tab).split(' ');
      const rel = line.slice(tab + 1);
      return { id, name: rel.split('/').pop()!, type, path: treePath ? `${treePath}/${rel}` : rel, mode };
    });
  return [...entries.filter((e) => e.type === 'tree'), ...entries.filter((e) => e.type === 'blob'), ...entries.filter((e) => e.type === 'commit')];
}

const get = (ta: TestApp, url: string, headers: Record<string, string> = ta.root) => ta.app.inject({ method: 'GET', url, headers });

/** The relative URL of a Link rel (what a client follows). */
function linkTo(header: unknown, rel: string): string | null {
  for (const part of String(header ?? '').split(', ')) {
    const m = /^<([^>]+)>; rel="([^"]+)"$/.exec(part);
    if (m && m[2] === rel) {
      assert.ok(m[1].startsWith(EXTERNAL_URL), m[1]);
      return m[1].slice(EXTERNAL_URL.length);
    }
  }
  return null;
}

const PAGINATION_HEADERS = ['x-per-page', 'x-page', 'x-next-page', 'x-prev-page', 'x-total', 'x-total-pages', 'link'];
const paginationHeaders = (h: Record<string, unknown>) => Object.fromEntries(PAGINATION_HEADERS.filter((k) => k in h).map((k) => [k, h[k]]));
const token = (p: string) => Buffer.from(JSON.stringify({ file_name: p })).toString('base64');
const q = (s: string) => encodeURIComponent(s);

test('tree: the root of the default branch, as git lists it, trees first, with offset headers', async (t) => {
  const f = await fixture(t);
  const res = await get(f, `${f.base}/tree`);
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/json');
  const expected = lsTree(f.dir, 'main');
  assert.deepEqual(res.json(), expected.slice(0, 20));
  // the kinds are all there, with GitLab's zero-padded modes
  const byName = Object.fromEntries(lsTree(f.dir, 'main').map((e) => [e.name, e]));
  assert.deepEqual(byName.src, { id: bareGit(f.dir, ['rev-parse', 'main:src']).trim(), name: 'src', type: 'tree', path: 'src', mode: '040000' });
  assert.equal(byName['run.sh'].mode, '100755');
  assert.equal(byName.link.mode, '120000');
  assert.deepEqual(
    res.json().map((e: Entry) => e.type),
    expected.slice(0, 20).map((e) => e.type),
  );
  assert.deepEqual(
    res
      .json()
      .slice(0, 5)
      .map((e: Entry) => e.name),
    ['-dash', 'docs', 'many', 'src', 'vendor'],
  );
  const self = `${EXTERNAL_URL}${f.base}/tree`;
  assert.equal(expected.length, 15);
  assert.deepEqual(paginationHeaders(res.headers), {
    'x-per-page': '20',
    'x-page': '1',
    'x-next-page': '',
    'x-prev-page': '',
    'x-total': '15',
    'x-total-pages': '1',
    link: `<${self}?id=${f.project.id}&page=1&pagination=legacy&per_page=20&recursive=false>; rel="first", <${self}?id=${f.project.id}&page=1&pagination=legacy&per_page=20&recursive=false>; rel="last"`,
  });
});

test('tree: paths, refs (branch with a slash, tag, SHA, short SHA) and a submodule entry', async (t) => {
  const f = await fixture(t);
  for (const [query, rev, p] of [
    ['path=src', 'main', 'src'],
    ['path=src/', 'main', 'src'],
    ['path=src/lib/deep', 'main', 'src/lib/deep'],
    ['path=-dash', 'main', '-dash'],
    ['path=vendor', 'main', 'vendor'],
    ['ref=feature/x', 'feature/x', ''],
    ['ref=feature%2Fx&path=src', 'feature/x', 'src'],
    ['ref=v1.0', 'v1.0', ''],
    [`ref=${f.first}`, f.first, ''],
    [`ref=${f.first.slice(0, 8)}&path=many&per_page=100`, f.first, 'many'],
    ['ref=HEAD', 'HEAD', ''],
    ['ref=refs/heads/feature/x', 'feature/x', ''],
    ['path=.', 'main', ''],
  ] as const) {
    const res = await get(f, `${f.base}/tree?${query}`);
    assert.equal(res.statusCode, 200, query);
    assert.deepEqual(res.json(), lsTree(f.dir, rev, p).slice(0, query.includes('per_page=100') ? 100 : 20), query);
  }
  const vendor = await get(f, `${f.base}/tree?path=vendor`);
  assert.deepEqual(vendor.json(), [{ id: f.first, name: 'sub', type: 'commit', path: 'vendor/sub', mode: '160000' }]);
  // the feature branch differs from main
  const feature = (await get(f, `${f.base}/tree?ref=feature/x&per_page=100`)).json().map((e: Entry) => e.name);
  assert.ok(feature.includes('feature.txt'));
  assert.ok(!feature.includes('vendor'));
});

test('tree: recursive listings equal git ls-tree -r -t, sorted trees, blobs, submodules', async (t) => {
  const f = await fixture(t);
  const all = lsTree(f.dir, 'main', '', true);
  assert.equal(all.length, 15 + 45 + 8); // the root, many/*, src/lib, src/lib/deep, src/main.ts, src/lib/util.ts, src/lib/deep/x.ts, -dash/c.txt, docs/a.md, vendor/sub
  const none = await get(f, `${f.base}/tree?recursive=true&pagination=none`);
  assert.equal(none.statusCode, 200);
  assert.deepEqual(none.json(), all);
  // no pagination headers at all
  assert.deepEqual(paginationHeaders(none.headers), {});
  // trees come first, the submodule last
  assert.deepEqual(
    none
      .json()
      .slice(0, 8)
      .map((e: Entry) => e.path),
    ['-dash', 'docs', 'many', 'src', 'src/lib', 'src/lib/deep', 'vendor', '-dash/c.txt'],
  );
  assert.equal(none.json().at(-1).path, 'vendor/sub');

  const sub = await get(f, `${f.base}/tree?recursive=1&path=src&pagination=none`);
  assert.deepEqual(sub.json(), lsTree(f.dir, 'main', 'src', true));
  assert.deepEqual(
    sub.json().map((e: Entry) => e.path),
    ['src/lib', 'src/lib/deep', 'src/lib/deep/x.ts', 'src/lib/util.ts', 'src/main.ts'],
  );

  // "True" as python-gitlab sends it, paginated the legacy way
  const paged = await get(f, `${f.base}/tree?recursive=True&per_page=50&page=2`);
  assert.equal(paged.statusCode, 200);
  assert.deepEqual(paged.json(), all.slice(50));
  const self = `${EXTERNAL_URL}${f.base}/tree`;
  const link = (p: number) => `<${self}?id=${f.project.id}&page=${p}&pagination=legacy&per_page=50&recursive=true>`;
  assert.deepEqual(paginationHeaders(paged.headers), {
    'x-per-page': '50',
    'x-page': '2',
    'x-next-page': '',
    'x-prev-page': '1',
    'x-total': String(all.length),
    'x-total-pages': '2',
    link: `${link(1)}; rel="prev", ${link(1)}; rel="first", ${link(2)}; rel="last"`,
  });
});

test('tree: offset pagination walks every page through Link rel="next", X-Next-Page agrees', async (t) => {
  const f = await fixture(t);
  const expected = lsTree(f.dir, 'main', 'many');
  assert.equal(expected.length, 45);
  let url: string | null = `${f.base}/tree?path=many`;
  const seen: Entry[] = [];
  const pages: string[] = [];
  while (url) {
    const res = await get(f, url);
    assert.equal(res.statusCode, 200);
    seen.push(...res.json());
    pages.push(`${res.headers['x-page']}/${res.headers['x-next-page'] || '-'}/${res.headers['x-total-pages']}`);
    url = linkTo(res.headers.link, 'next');
  }
  assert.deepEqual(seen, expected);
  assert.deepEqual(pages, ['1/2/3', '2/3/3', '3/-/3']);

  const second = await get(f, `${f.base}/tree?path=many&page=2&per_page=20`);
  const self = `${EXTERNAL_URL}${f.base}/tree`;
  const link = (p: number) => `<${self}?id=${f.project.id}&page=${p}&pagination=legacy&path=many&per_page=20&recursive=false>`;
  assert.deepEqual(paginationHeaders(second.headers), {
    'x-per-page': '20',
    'x-page': '2',
    'x-next-page': '3',
    'x-prev-page': '1',
    'x-total': '45',
    'x-total-pages': '3',
    link: `${link(1)}; rel="prev", ${link(3)}; rel="next", ${link(1)}; rel="first", ${link(3)}; rel="last"`,
  });
  // past the end: empty, no prev/next; per_page above 100 is capped, echoed as asked
  const past = await get(f, `${f.base}/tree?path=many&page=9`);
  assert.deepEqual(past.json(), []);
  assert.equal(past.headers['x-next-page'], '');
  assert.equal(past.headers['x-prev-page'], '');
  const big = await get(f, `${f.base}/tree?path=many&per_page=500`);
  assert.equal(big.headers['x-per-page'], '100');
  assert.equal(big.json().length, 45);
  assert.match(String(big.headers.link), /per_page=500/);
  // page_token is only read in keyset mode; otherwise it is ignored but echoed, as Grape's params are
  const ignored = await get(f, `${f.base}/tree?path=many&page_token=${q(token('many/f10.txt'))}`);
  assert.deepEqual(ignored.json(), expected.slice(0, 20));
  assert.match(String(ignored.headers.link), new RegExp(`page_token=${q(token('many/f10.txt'))}`));
});

test('tree: keyset pagination, Link rel="next" with a base64 JSON token, walking every page', async (t) => {
  const f = await fixture(t);
  const expected = lsTree(f.dir, 'main', '', true);
  const first = await get(f, `${f.base}/tree?recursive=true&pagination=keyset&per_page=20`);
  assert.equal(first.statusCode, 200);
  assert.deepEqual(first.json(), expected.slice(0, 20));
  // only the Link header, no X-* headers
  const self = `${EXTERNAL_URL}${f.base}/tree`;
  assert.deepEqual(paginationHeaders(first.headers), {
    link: `<${self}?id=${f.project.id}&page=1&page_token=${q(token(expected[19].path))}&pagination=keyset&per_page=20&recursive=true>; rel="next"`,
  });
  assert.equal(JSON.parse(Buffer.from(token(expected[19].path), 'base64').toString()).file_name, expected[19].path);

  for (const perPage of [7, 20, 67, 100]) {
    let url: string | null = `${f.base}/tree?recursive=true&pagination=keyset&per_page=${perPage}`;
    const seen: Entry[] = [];
    let requests = 0;
    while (url) {
      const res = await get(f, url);
      assert.equal(res.statusCode, 200);
      const page: Entry[] = res.json();
      assert.ok(page.length <= perPage);
      // rel="next" exactly when the page is full
      assert.equal(linkTo(res.headers.link, 'next') !== null, page.length === perPage, `${perPage}: ${url}`);
      seen.push(...page);
      url = linkTo(res.headers.link, 'next');
      requests++;
    }
    assert.deepEqual(seen, expected, String(perPage));
    assert.equal(requests, Math.floor(expected.length / perPage) + 1, String(perPage));
  }

  // non-recursive keyset: tokens are full paths there too
  const many = await get(f, `${f.base}/tree?path=many&pagination=keyset&per_page=40`);
  assert.equal(many.json().length, 40);
  const next = linkTo(many.headers.link, 'next')!;
  assert.match(next, new RegExp(`page_token=${q(token('many/f39.txt'))}`));
  const rest = await get(f, next);
  assert.deepEqual(rest.json(), lsTree(f.dir, 'main', 'many').slice(40));
  assert.equal(rest.headers.link, undefined);

  // an object id as page_token (the old style GitLab's own spec uses) starts after that entry
  const byId = await get(f, `${f.base}/tree?pagination=keyset&page_token=${lsTree(f.dir, 'main')[2].id}`);
  assert.deepEqual(byId.json(), lsTree(f.dir, 'main').slice(3));
  // a token naming no entry
  const missing = await get(f, `${f.base}/tree?pagination=keyset&page_token=${q(token('nope'))}`);
  assert.equal(missing.statusCode, 400);
  assert.deepEqual(missing.json(), { message: '400 Bad request - could not find starting OID: nope' });
  const missingId = await get(f, `${f.base}/tree?pagination=keyset&page_token=${'0'.repeat(40)}`);
  assert.equal(missingId.statusCode, 400);
  assert.deepEqual(missingId.json(), { message: `400 Bad request - could not find starting OID: ${'0'.repeat(40)}` });
});

test('tree: a path naming a file lists nothing; unknown refs and paths are 404 with GitLab bodies', async (t) => {
  const f = await fixture(t);
  // a submodule lists nothing either (its commit lives in another repository)
  const sub = await get(f, `${f.base}/tree?path=vendor/sub`);
  assert.equal(sub.statusCode, 200);
  assert.deepEqual(sub.json(), []);
  const file = await get(f, `${f.base}/tree?path=README.md`);
  assert.equal(file.statusCode, 200);
  assert.deepEqual(file.json(), []);
  assert.equal(file.headers['x-total'], '0');
  assert.equal(file.headers['x-total-pages'], '1');
  assert.deepEqual((await get(f, `${f.base}/tree?path=README.md&recursive=true&pagination=none`)).json(), []);

  const treeNotFound = { message: '404 Tree Not Found' };
  const pathNotFound = { message: '404 invalid revision or path Not Found' };
  for (const [query, body] of [
    ['ref=nope', treeNotFound],
    ['ref=nope&recursive=true', treeNotFound],
    ['ref=--output%3D%2Ftmp%2Fx', treeNotFound],
    ['ref=-n', treeNotFound],
    ['ref=main~1', treeNotFound],
    ['ref=main%3AREADME.md', treeNotFound],
    [`ref=${'0'.repeat(40)}`, treeNotFound],
    ['ref=v1.0%5E%7Btree%7D', treeNotFound],
    ['path=nope', pathNotFound],
    ['path=vendor/nope', pathNotFound],
    ['path=README.md/x', pathNotFound],
    ['path=nope&recursive=true', pathNotFound],
    ['path=..', pathNotFound],
    ['path=../etc', pathNotFound],
    ['path=src/../docs', pathNotFound],
    ['path=./src', pathNotFound],
    ['path=%2Fetc', pathNotFound],
    ['path=src%2F%2Flib', pathNotFound],
    ['path=src%0Amain', pathNotFound],
    ['path=--output', pathNotFound],
  ] as const) {
    const res = await get(f, `${f.base}/tree?${query}`);
    assert.equal(res.statusCode, 404, query);
    assert.deepEqual(res.json(), body, query);
  }
  // a NUL byte anywhere is refused before any route runs (plugins/malformed.ts)
  const nul = await get(f, `${f.base}/tree?path=src%00`);
  assert.deepEqual([nul.statusCode, nul.json()], [400, { error: 'path is invalid' }]);
  // the shared cat-file processes still answer correctly afterwards
  assert.deepEqual((await get(f, `${f.base}/tree?path=src`)).json(), lsTree(f.dir, 'main', 'src'));
});

test('tree: parameter errors are Grape-style 400s', async (t) => {
  const f = await fixture(t);
  for (const [query, error] of [
    ['pagination=none', 'pagination cannot be "none" unless "recursive" is true'],
    ['pagination=none&recursive=false', 'pagination cannot be "none" unless "recursive" is true'],
    ['pagination=offset', 'pagination does not have a valid value'],
    ['recursive=maybe', 'recursive is invalid'],
    ['per_page=0', 'per_page has a value not allowed'],
    ['page=abc', 'page is invalid'],
  ] as const) {
    const res = await get(f, `${f.base}/tree?${query}`);
    assert.equal(res.statusCode, 400, query);
    assert.deepEqual(res.json(), { error }, query);
  }
});

test('tree: empty repositories and projects without a repository have no tree', async (t) => {
  const ta = await buildTestApp(t);
  const { project } = await ta.seed.repoProject({ visibility: 'public' });
  const res = await get(ta, `/api/v4/projects/${project.id}/repository/tree`);
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Tree Not Found' });
  const bare = await ta.seed.project({ visibility: 'public' });
  const none = await get(ta, `/api/v4/projects/${bare.id}/repository/tree`);
  assert.equal(none.statusCode, 404);
  assert.deepEqual(none.json(), { message: '404 Tree Not Found' });
  const blob = await get(ta, `/api/v4/projects/${bare.id}/repository/blobs/${'a'.repeat(40)}`);
  assert.equal(blob.statusCode, 404);
  assert.deepEqual(blob.json(), { message: '404 Blob Not Found' });
});

test('tree and blobs: anonymous on public, 404 on private, 403 for a guest, by path too', async (t) => {
  const pub = await fixture(t, { visibility: 'public' });
  const anon = await pub.app.inject({ method: 'GET', url: `${pub.base}/tree?path=src` });
  assert.equal(anon.statusCode, 200);
  assert.deepEqual(anon.json(), lsTree(pub.dir, 'main', 'src'));
  const readme = bareGit(pub.dir, ['rev-parse', 'main:README.md']).trim();
  assert.equal((await pub.app.inject({ method: 'GET', url: `${pub.base}/blobs/${readme}` })).statusCode, 200);
  assert.equal((await pub.app.inject({ method: 'GET', url: `${pub.base}/blobs/${readme}/raw` })).body, '# Hello\n');

  const priv = await fixture(t);
  const privReadme = bareGit(priv.dir, ['rev-parse', 'main:README.md']).trim();
  for (const url of [`${priv.base}/tree`, `${priv.base}/blobs/${privReadme}`, `${priv.base}/blobs/${privReadme}/raw`]) {
    const res = await priv.app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 404, url);
    assert.deepEqual(res.json(), { message: '404 Project Not Found' });
  }
  const guest = await priv.seed.user();
  await priv.seed.member({ project: priv.project }, guest, 10);
  const { headers } = await priv.seed.token(guest);
  for (const url of [`${priv.base}/tree`, `${priv.base}/blobs/${privReadme}`, `${priv.base}/blobs/${privReadme}/raw`]) {
    const res = await get(priv, url, headers);
    assert.equal(res.statusCode, 403, url);
    assert.deepEqual(res.json(), { message: '403 Forbidden' });
  }
  const reporter = await priv.seed.user();
  await priv.seed.member({ project: priv.project }, reporter, 20);
  const rh = (await priv.seed.token(reporter, { scopes: ['read_api'] })).headers;
  assert.equal((await get(priv, `${priv.base}/tree`, rh)).statusCode, 200);
  // by URL-encoded full path
  const ns = await priv.c.db.kysely.selectFrom('namespaces').select('full_path').where('id', '=', priv.project.namespace_id).executeTakeFirstOrThrow();
  const byPath = await get(priv, `/api/v4/projects/${q(`${ns.full_path}/${priv.project.path}`)}/repository/tree?path=docs`);
  assert.equal(byPath.statusCode, 200);
  assert.deepEqual(byPath.json(), lsTree(priv.dir, 'main', 'docs'));
});

test('tree: listings follow pushes (a new commit on the branch is seen at once)', async (t) => {
  const f = await fixture(t);
  assert.deepEqual((await get(f, `${f.base}/tree?path=docs`)).json(), lsTree(f.dir, 'main', 'docs'));
  f.wt.write('docs/b.md', 'b\n').commit('More docs');
  f.wt.push();
  const after = await get(f, `${f.base}/tree?path=docs`);
  assert.deepEqual(
    after.json().map((e: Entry) => e.name),
    ['a.md', 'b.md'],
  );
  assert.deepEqual(after.json(), lsTree(f.dir, 'main', 'docs'));
});

// ---- blobs ---------------------------------------------------------------------------------------

const blobId = (f: Fixture, p: string, rev = 'main') => bareGit(f.dir, ['rev-parse', `${rev}:${p}`]).trim();
const catBlob = (f: Fixture, sha: string) => execFileSync('git', ['--git-dir', f.dir, 'cat-file', 'blob', sha], { maxBuffer: 64 * 1024 * 1024 });

test('blobs/:sha: size, base64 content and the full SHA, for text and binary blobs', async (t) => {
  const f = await fixture(t);
  for (const p of ['README.md', 'bin.dat', 'img.png', 'données.txt']) {
    const sha = blobId(f, p);
    const content = catBlob(f, sha);
    const res = await get(f, `${f.base}/blobs/${sha}`);
    assert.equal(res.statusCode, 200, p);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.deepEqual(res.json(), { size: content.length, encoding: 'base64', content: content.toString('base64'), sha }, p);
  }
  // an abbreviated SHA answers with the full one; upper case hex too
  const sha = blobId(f, 'b.txt');
  assert.deepEqual((await get(f, `${f.base}/blobs/${sha.slice(0, 10)}`)).json(), {
    size: 4,
    encoding: 'base64',
    content: Buffer.from('bee\n').toString('base64'),
    sha,
  });
  assert.equal((await get(f, `${f.base}/blobs/${sha.toUpperCase()}`)).json().sha, sha);
});

test('blobs/:sha: anything but a blob is 404 Blob Not Found', async (t) => {
  const f = await fixture(t);
  for (const sha of [
    'abcd9876',
    '0'.repeat(40),
    blobId(f, 'src'), // a tree
    f.head, // a commit
    'main',
    q('main:README.md'),
    'HEAD',
    q('--output=x'),
    'abc', // too short to be a SHA
    q(`${blobId(f, 'README.md')}\nHEAD`),
  ]) {
    for (const suffix of ['', '/raw']) {
      const res = await get(f, `${f.base}/blobs/${sha}${suffix}`);
      assert.equal(res.statusCode, 404, `${sha}${suffix}`);
      assert.deepEqual(res.json(), { message: '404 Blob Not Found' }, `${sha}${suffix}`);
    }
  }
  // the pool still answers afterwards
  assert.equal((await get(f, `${f.base}/blobs/${blobId(f, 'README.md')}/raw`)).body, '# Hello\n');
});

test('blobs/:sha/raw: exact bytes with the content type and disposition Workhorse would send', async (t) => {
  const f = await fixture(t);
  const cases: [string, string, string][] = [
    ['README.md', 'text/plain; charset=utf-8', 'inline'],
    ['page.html', 'text/plain; charset=utf-8', 'inline'],
    ['run.sh', 'text/plain; charset=utf-8', 'inline'],
    ['données.txt', 'text/plain; charset=utf-8', 'inline'],
    ['img.png', 'image/png', 'inline'],
    ['pic.svg', 'image/svg+xml', 'attachment'],
    ['bin.dat', 'application/octet-stream', 'attachment'],
  ];
  for (const [p, type, disposition] of cases) {
    const sha = blobId(f, p);
    const content = catBlob(f, sha);
    const res = await get(f, `${f.base}/blobs/${sha}/raw`);
    assert.equal(res.statusCode, 200, p);
    assert.ok(res.rawPayload.equals(content), p);
    assert.equal(res.headers['content-type'], type, p);
    assert.equal(res.headers['content-disposition'], disposition, p);
    assert.equal(res.headers['content-length'], String(content.length), p);
    assert.equal(res.headers['cache-control'], 'max-age=0, private, must-revalidate, no-store, no-cache', p);
    assert.equal(res.headers.expires, 'Fri, 01 Jan 1990 00:00:00 GMT', p);
    assert.equal(res.headers['x-content-type-options'], 'nosniff', p);
  }
  // HEAD: the same headers, no body
  const sha = blobId(f, 'img.png');
  const head = await f.app.inject({ method: 'HEAD', url: `${f.base}/blobs/${sha}/raw`, headers: f.root });
  assert.equal(head.statusCode, 200);
  assert.equal(head.headers['content-type'], 'image/png');
  assert.equal(head.body, '');
});

test('blobs: a blob above the pooled size streams from its own git process, byte for byte', async (t) => {
  const f = await fixture(t);
  const big = crypto.randomBytes(9 * 1024 * 1024);
  f.wt.write('big.bin', big).commit('Big');
  f.wt.push();
  const sha = blobId(f, 'big.bin');
  const raw = await get(f, `${f.base}/blobs/${sha}/raw`);
  assert.equal(raw.statusCode, 200);
  assert.equal(raw.headers['content-length'], String(big.length));
  assert.equal(raw.headers['content-type'], 'application/octet-stream');
  assert.equal(raw.headers['content-disposition'], 'attachment');
  assert.ok(raw.rawPayload.equals(big));
  const json = await get(f, `${f.base}/blobs/${sha}`);
  assert.equal(json.statusCode, 200);
  const body = json.json();
  assert.equal(body.size, big.length);
  assert.equal(body.sha, sha);
  assert.ok(Buffer.from(body.content, 'base64').equals(big));
  // a big text blob is still text/plain inline
  const text = Buffer.from('line of text\n'.repeat(800_000));
  f.wt.write('big.txt', text).commit('Big text');
  f.wt.push();
  const textRes = await get(f, `${f.base}/blobs/${blobId(f, 'big.txt')}/raw`);
  assert.equal(textRes.headers['content-type'], 'text/plain; charset=utf-8');
  assert.equal(textRes.headers['content-disposition'], 'inline');
  assert.ok(textRes.rawPayload.equals(text));
});
