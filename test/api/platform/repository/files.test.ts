// The repository files API (GitLab lib/api/files.rb) against real git fixtures: reads (JSON, HEAD,
// raw), writes (create, update, delete) with the state of the bare repository and the outbox
// afterwards, and every refusal with GitLab's body.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { buildTestApp, type TestApp } from '../../../helpers/build-app.ts';
import { bareGit, workTree } from '../../../helpers/git.ts';
import { ZERO_SHA } from '../../../../src/git/refs.ts';
import type { ProjectRow, UserRow } from '../../../../src/db/schema.ts';

const sha256 = (b: Buffer | string) => crypto.createHash('sha256').update(b).digest('hex');
const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const NOT_FOUND = (what: string) => ({ message: `404 ${what} Not Found` });

interface Fixture extends TestApp {
  owner: UserRow;
  ownerHeaders: Record<string, string>;
  project: ProjectRow;
  dir: string;
  base: string;
  first: string;
  second: string;
  third: string;
}

/**
 * main: First (README.md, lib/a.rb, bin/run +x, data.json, docs/ü.txt, img.bin), Second (lib/a.rb changed),
 * Third (docs/x.txt); tag v1.0.0 on First; branch feature at Second.
 */
async function fixture(t: any, visibility = 'private'): Promise<Fixture> {
  const ta = await buildTestApp(t);
  const owner = await ta.seed.user({ name: 'Olivia Owner', email: 'olivia@example.com' });
  const { headers: ownerHeaders } = await ta.seed.token(owner);
  const { project, dir } = await ta.seed.repoProject({ owner, visibility });
  await ta.seed.member({ project }, owner, 50);
  const wt = workTree(t, dir);
  wt.write('README.md', '# Hello\n')
    .write('lib/a.rb', 'puts 1\n')
    .write('bin/run', '#!/bin/sh\necho hi\n', 0o755)
    .write('data.json', '{"a":1}\n')
    .write('docs/ü.txt', 'umlaut\n')
    .write('img.bin', Buffer.from([0, 1, 2, 255, 254, 10, 13, 0]));
  const first = wt.commit('First');
  wt.tag('v1.0.0');
  const second = wt.write('lib/a.rb', 'puts 2\n').commit('Second');
  wt.checkout('feature', true).checkout('main');
  const third = wt.write('docs/x.txt', 'x\n').commit('Third');
  wt.push();
  return { ...ta, owner, ownerHeaders, project, dir, base: `/api/v4/projects/${project.id}/repository/files`, first, second, third };
}

function rev(dir: string, r: string): string {
  return bareGit(dir, ['rev-parse', r]).trim();
}

async function pushEvents(c: TestApp['c']) {
  const rows = await c.db.kysely.selectFrom('jobs').select(['payload']).orderBy('id').execute();
  return rows
    .map((r: { payload: string }) => JSON.parse(r.payload))
    .filter((p: { event_name: string }) => ['push', 'tag_push', 'repository_update'].includes(p.event_name));
}

function gitlabHeaders(res: { headers: Record<string, unknown> }) {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (k.startsWith('x-gitlab-')) out[k] = Buffer.from(String(v), 'latin1').toString('utf8');
  return out;
}

// ---- reads --------------------------------------------------------------------------------------

test('GET a file: GitLab fields with Base64 content, the same values as X-Gitlab-* headers, any ref kind', async (t) => {
  const f = await fixture(t);
  const { app, root, dir, base } = f;
  const res = await app.inject({ method: 'GET', url: `${base}/lib%2Fa.rb?ref=main`, headers: root });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/json');
  const expected = {
    file_name: 'a.rb',
    file_path: 'lib/a.rb',
    size: 7,
    encoding: 'base64',
    content_sha256: sha256('puts 2\n'),
    ref: 'main',
    blob_id: rev(dir, 'main:lib/a.rb'),
    commit_id: f.third,
    last_commit_id: f.second,
    execute_filemode: false,
    content: b64('puts 2\n'),
  };
  assert.deepEqual(res.json(), expected);
  assert.deepEqual(Object.keys(res.json()), Object.keys(expected));
  assert.deepEqual(gitlabHeaders(res), {
    'x-gitlab-file-name': 'a.rb',
    'x-gitlab-file-path': 'lib/a.rb',
    'x-gitlab-size': '7',
    'x-gitlab-encoding': 'base64',
    'x-gitlab-content-sha256': sha256('puts 2\n'),
    'x-gitlab-ref': 'main',
    'x-gitlab-blob-id': rev(dir, 'main:lib/a.rb'),
    'x-gitlab-commit-id': f.third,
    'x-gitlab-last-commit-id': f.second,
    'x-gitlab-execute-filemode': 'false',
  });
  // the last commit is git's own answer
  assert.equal(bareGit(dir, ['log', '-1', '--format=%H', 'main', '--', 'lib/a.rb']).trim(), f.second);

  // a tag, a full SHA and an abbreviated one; the old content there
  for (const ref of ['v1.0.0', f.first, f.first.slice(0, 8)]) {
    const r = await app.inject({ method: 'GET', url: `${base}/lib%2Fa.rb?ref=${ref}`, headers: root });
    assert.equal(r.statusCode, 200, ref);
    assert.deepEqual(r.json(), {
      ...expected,
      size: 7,
      content_sha256: sha256('puts 1\n'),
      ref,
      blob_id: rev(dir, `${f.first}:lib/a.rb`),
      commit_id: f.first,
      last_commit_id: f.first,
      content: b64('puts 1\n'),
    });
  }

  // executable, a ".json" name (part of the path, not a format), a non-ASCII name, binary content
  let r = await app.inject({ method: 'GET', url: `${base}/bin%2Frun?ref=feature`, headers: root });
  assert.equal(r.json().execute_filemode, true);
  assert.equal(r.json().commit_id, f.second);
  assert.equal(r.json().last_commit_id, f.first);
  r = await app.inject({ method: 'GET', url: `${base}/data.json?ref=main`, headers: root });
  assert.equal(r.statusCode, 200);
  assert.equal(r.json().file_name, 'data.json');
  assert.equal(Buffer.from(r.json().content, 'base64').toString(), '{"a":1}\n');
  r = await app.inject({ method: 'GET', url: `${base}/${encodeURIComponent('docs/ü.txt')}?ref=main`, headers: root });
  assert.equal(r.statusCode, 200);
  assert.equal(r.json().file_name, 'ü.txt');
  assert.equal(gitlabHeaders(r)['x-gitlab-file-path'], 'docs/ü.txt');
  r = await app.inject({ method: 'GET', url: `${base}/img.bin?ref=main`, headers: root });
  assert.deepEqual(Buffer.from(r.json().content, 'base64'), Buffer.from([0, 1, 2, 255, 254, 10, 13, 0]));
  assert.equal(r.json().size, 8);
});

test('HEAD a file: the X-Gitlab-* headers and no body', async (t) => {
  const f = await fixture(t);
  const get = await f.app.inject({ method: 'GET', url: `${f.base}/lib%2Fa.rb?ref=main`, headers: f.root });
  const res = await f.app.inject({ method: 'HEAD', url: `${f.base}/lib%2Fa.rb?ref=main`, headers: f.root });
  assert.equal(res.statusCode, 200);
  assert.equal(res.body, '');
  assert.deepEqual(gitlabHeaders(res), gitlabHeaders(get));
  assert.equal(Object.keys(gitlabHeaders(res)).length, 10);
  const missing = await f.app.inject({ method: 'HEAD', url: `${f.base}/nope.rb?ref=main`, headers: f.root });
  assert.equal(missing.statusCode, 404);
  assert.equal(missing.body, '');
  assert.deepEqual(gitlabHeaders(missing), {});
  const noRef = await f.app.inject({ method: 'HEAD', url: `${f.base}/lib%2Fa.rb`, headers: f.root });
  assert.equal(noRef.statusCode, 400);
});

test('raw file: the exact bytes, text/plain, inline disposition, no-cache and X-Gitlab-* headers; ref defaults to the default branch', async (t) => {
  const f = await fixture(t);
  const { app, root, dir, base } = f;
  let res = await app.inject({ method: 'GET', url: `${base}/img.bin/raw?ref=main&lfs=true`, headers: root });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.rawPayload, Buffer.from([0, 1, 2, 255, 254, 10, 13, 0]));
  assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
  assert.equal(res.headers['content-disposition'], `inline; filename="img.bin"; filename*=UTF-8''img.bin`);
  assert.equal(res.headers['cache-control'], 'max-age=0, private, must-revalidate, no-store, no-cache');
  assert.equal(res.headers.expires, 'Fri, 01 Jan 1990 00:00:00 GMT');
  assert.equal(res.headers['content-length'], '8');
  assert.deepEqual(gitlabHeaders(res), {
    'x-gitlab-file-name': 'img.bin',
    'x-gitlab-file-path': 'img.bin',
    'x-gitlab-size': '8',
    'x-gitlab-encoding': 'base64',
    'x-gitlab-content-sha256': sha256(Buffer.from([0, 1, 2, 255, 254, 10, 13, 0])),
    'x-gitlab-ref': 'main',
    'x-gitlab-blob-id': rev(dir, 'main:img.bin'),
    'x-gitlab-commit-id': f.third,
    'x-gitlab-last-commit-id': f.first,
    'x-gitlab-execute-filemode': 'false',
  });

  // no ref: the default branch, and an empty X-Gitlab-Ref (nil.to_s)
  res = await app.inject({ method: 'GET', url: `${base}/lib%2Fa.rb/raw`, headers: root });
  assert.equal(res.statusCode, 200);
  assert.equal(res.body, 'puts 2\n');
  assert.equal(res.headers['x-gitlab-ref'], '');
  assert.equal(res.headers['x-gitlab-commit-id'], f.third);
  res = await app.inject({ method: 'GET', url: `${base}/lib%2Fa.rb/raw?ref=v1.0.0`, headers: root });
  assert.equal(res.body, 'puts 1\n');
  // an encoded leading "/" is allowed on raw (allow_initial_path_separator) and dropped
  res = await app.inject({ method: 'GET', url: `${base}/%2Flib%2Fa.rb/raw`, headers: root });
  assert.equal(res.statusCode, 200);
  assert.equal(res.body, 'puts 2\n');
  assert.equal(res.headers['x-gitlab-file-path'], 'lib/a.rb');
  // a non-ASCII name: transliterated ASCII name and the RFC 5987 form
  res = await app.inject({ method: 'GET', url: `${base}/docs%2F%C3%BC.txt/raw`, headers: root });
  assert.equal(res.headers['content-disposition'], `inline; filename="u.txt"; filename*=UTF-8''%C3%BC.txt`);
  // HEAD of raw: headers without the body
  res = await app.inject({ method: 'HEAD', url: `${base}/lib%2Fa.rb/raw`, headers: root });
  assert.equal(res.statusCode, 200);
  assert.equal(res.body, '');
  assert.equal(res.headers['x-gitlab-blob-id'], rev(dir, 'main:lib/a.rb'));
  // errors are JSON
  res = await app.inject({ method: 'GET', url: `${base}/nope/raw`, headers: root });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), NOT_FOUND('File'));
  res = await app.inject({ method: 'GET', url: `${base}/lib%2Fa.rb/raw?ref=nope`, headers: root });
  assert.deepEqual(res.json(), NOT_FOUND('Commit'));
  res = await app.inject({ method: 'GET', url: `${base}/..%2F..%2Fetc%2Fpasswd/raw`, headers: root });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'file_path should be a valid file path' });
  res = await app.inject({ method: 'GET', url: `${base}/lib%2Fa.rb/raw?ref=`, headers: root });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'ref is empty' }]);
});

test('raw .xhtml files lose the extension in Content-Disposition; a submodule reads as an empty file', async (t) => {
  const f = await fixture(t);
  const wt = workTree(t, f.dir);
  wt.write('page.v1.xhtml', '<html/>').git(['add', '-A']);
  // a gitlink without a checkout (commit() would stage its absence)
  wt.git(['update-index', '--add', '--cacheinfo', `160000,${f.first},vendor/sub`]);
  wt.git(['commit', '-q', '-m', 'xhtml and a submodule']);
  const tip = wt.git(['rev-parse', 'HEAD']);
  wt.push();
  let res = await f.app.inject({ method: 'GET', url: `${f.base}/page.v1.xhtml/raw`, headers: f.root });
  assert.equal(res.headers['content-disposition'], `inline; filename="page"; filename*=UTF-8''page`);
  assert.equal(res.body, '<html/>');
  // Gitlab::Git::Blob.find: a submodule entry is a blob of size 0 whose id is the commit it points at
  res = await f.app.inject({ method: 'GET', url: `${f.base}/vendor%2Fsub?ref=main`, headers: f.root });
  assert.deepEqual(res.json(), {
    file_name: 'sub',
    file_path: 'vendor/sub',
    size: 0,
    encoding: 'base64',
    content_sha256: sha256(''),
    ref: 'main',
    blob_id: f.first,
    commit_id: tip,
    last_commit_id: tip,
    execute_filemode: false,
    content: '',
  });
  res = await f.app.inject({ method: 'GET', url: `${f.base}/vendor%2Fsub/raw`, headers: f.root });
  assert.deepEqual([res.statusCode, res.body], [200, '']);
});

test('read errors: missing or empty ref, unknown ref or file, directories, unsafe paths', async (t) => {
  const f = await fixture(t);
  const { app, root, base } = f;
  const cases: [string, number, unknown][] = [
    [`${base}/lib%2Fa.rb`, 400, { error: 'ref is missing' }],
    [`${base}/lib%2Fa.rb?ref=`, 400, { error: 'ref is empty' }],
    [`${base}/lib%2Fa.rb?ref=%20`, 400, { error: 'ref is empty' }],
    [`${base}/lib%2Fa.rb?ref=nope`, 404, NOT_FOUND('Commit')],
    [`${base}/lib%2Fa.rb?ref=main..feature`, 404, NOT_FOUND('Commit')],
    [`${base}/lib%2Fa.rb?ref=${'0'.repeat(40)}`, 404, NOT_FOUND('Commit')],
    [`${base}/lib%2Fnope.rb?ref=main`, 404, NOT_FOUND('File')],
    [`${base}/docs%2Fx.txt?ref=v1.0.0`, 404, NOT_FOUND('File')],
    [`${base}/lib?ref=main`, 404, NOT_FOUND('File')],
    [`${base}/lib%2Fa.rb%2Fb?ref=main`, 404, NOT_FOUND('File')],
    [`${base}/..%2F..%2Fetc%2Fpasswd?ref=main`, 400, { error: 'file_path should be a valid file path' }],
    [`${base}/lib%2F..%2F..%2Fa?ref=main`, 400, { error: 'file_path should be a valid file path' }],
    [`${base}/%252e%252e%252fetc?ref=main`, 400, { error: 'file_path should be a valid file path' }],
    [`${base}/%2Fetc%2Fpasswd?ref=main`, 400, { error: 'file_path should be a valid file path' }],
    [`${base}/-rf?ref=main`, 400, { error: 'file_path should be a valid file path' }],
    [`${base}/.git%2Fconfig?ref=main`, 400, { error: 'file_path should be a valid file path' }],
    [`${base}/a%0Ab?ref=main`, 400, { error: 'file_path should be a valid file path' }],
    [`${base}/..%2Fx`, 400, { error: 'file_path should be a valid file path, ref is missing' }],
  ];
  for (const [url, status, body] of cases) {
    const res = await app.inject({ method: 'GET', url, headers: root });
    assert.deepEqual([res.statusCode, res.json()], [status, body], url);
  }
});

test('read access: anonymous on private → 404 Project, on public → the file; a guest of a private repository → 403', async (t) => {
  const f = await fixture(t);
  let res = await f.app.inject({ method: 'GET', url: `${f.base}/README.md?ref=main` });
  assert.deepEqual([res.statusCode, res.json()], [404, NOT_FOUND('Project')]);
  res = await f.app.inject({ method: 'GET', url: `${f.base}/README.md/raw` });
  assert.deepEqual([res.statusCode, res.json()], [404, NOT_FOUND('Project')]);
  const guest = await f.seed.user();
  await f.seed.member({ project: f.project }, guest, 10);
  res = await f.app.inject({ method: 'GET', url: `${f.base}/README.md?ref=main`, headers: (await f.seed.token(guest)).headers });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  const reporter = await f.seed.user();
  await f.seed.member({ project: f.project }, reporter, 20);
  const { headers: repHeaders } = await f.seed.token(reporter, { scopes: ['read_repository'] });
  res = await f.app.inject({ method: 'GET', url: `${f.base}/README.md?ref=main`, headers: repHeaders });
  assert.equal(res.statusCode, 200);
  assert.equal(Buffer.from(res.json().content, 'base64').toString(), '# Hello\n');

  const p = await fixture(t, 'public');
  res = await p.app.inject({ method: 'GET', url: `${p.base}/README.md?ref=main` });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().content, b64('# Hello\n'));
  res = await p.app.inject({ method: 'GET', url: `${p.base}/README.md/raw` });
  assert.equal(res.body, '# Hello\n');
});

// ---- writes -------------------------------------------------------------------------------------

test('POST creates a file in one commit on the branch, by the user, and records push events', async (t) => {
  const f = await fixture(t);
  const { app, c, dir, base, owner, ownerHeaders } = f;
  const res = await app.inject({
    method: 'POST',
    url: `${base}/app%2Fnew%20file.rb`,
    headers: ownerHeaders,
    payload: { branch: 'main', content: 'puts "new"\n', commit_message: 'Add new file' },
  });
  assert.equal(res.statusCode, 201);
  assert.deepEqual(res.json(), { file_path: 'app/new file.rb', branch: 'main' });
  const tip = rev(dir, 'refs/heads/main');
  assert.equal(bareGit(dir, ['rev-parse', `${tip}^`]).trim(), f.third);
  assert.equal(bareGit(dir, ['show', 'main:app/new file.rb']), 'puts "new"\n');
  assert.equal(
    bareGit(dir, ['log', '-1', '--format=%an <%ae>|%cn <%ce>|%B', 'main']),
    `Olivia Owner <olivia@example.com>|Olivia Owner <olivia@example.com>|Add new file\n\n`,
  );
  assert.equal(bareGit(dir, ['diff-tree', '--no-commit-id', '-r', '--name-status', 'main']), 'A\tapp/new file.rb\n');
  assert.equal(bareGit(dir, ['ls-tree', 'main', 'app/new file.rb']).split(' ')[0], '100644');
  // the API reads the new state
  const read = await app.inject({ method: 'GET', url: `${base}/app%2Fnew%20file.rb?ref=main`, headers: ownerHeaders });
  assert.equal(read.json().last_commit_id, tip);

  const evs = await pushEvents(c);
  assert.deepEqual(
    evs.map((e: any) => e.event_name),
    ['push', 'repository_update'],
  );
  assert.equal(evs[0].before, f.third);
  assert.equal(evs[0].after, tip);
  assert.equal(evs[0].ref, 'refs/heads/main');
  assert.equal(evs[0].checkout_sha, tip);
  assert.equal(evs[0].ref_protected, true);
  assert.equal(evs[0].user_id, owner.id);
  assert.equal(evs[0].user_username, owner.username);
  assert.equal(evs[0].total_commits_count, 1);
  assert.deepEqual(evs[1].changes, [{ before: f.third, after: tip, ref: 'refs/heads/main' }]);
  assert.deepEqual(evs[1].refs, ['refs/heads/main']);
});

test('POST options: base64 content, executable mode, author, a new branch from start_branch', async (t) => {
  const f = await fixture(t);
  const { app, c, dir, base, ownerHeaders } = f;
  const bytes = Buffer.from([0, 255, 1, 2, 10]);
  let res = await app.inject({
    method: 'POST',
    url: `${base}/tools%2Fbuild.sh`,
    headers: ownerHeaders,
    payload: {
      branch: 'topic/new',
      start_branch: 'feature',
      content: bytes.toString('base64'),
      encoding: 'base64',
      execute_filemode: true,
      commit_message: 'Build script\n\nWith a body',
      author_name: 'Grace Hopper',
      author_email: 'grace@example.com',
    },
  });
  assert.equal(res.statusCode, 201);
  assert.deepEqual(res.json(), { file_path: 'tools/build.sh', branch: 'topic/new' });
  const tip = rev(dir, 'refs/heads/topic/new');
  assert.equal(rev(dir, `${tip}^`), f.second); // from feature, not main
  assert.equal(rev(dir, 'refs/heads/feature'), f.second); // start branch unchanged
  assert.equal(rev(dir, 'refs/heads/main'), f.third);
  const raw = await app.inject({ method: 'GET', url: `${base}/tools%2Fbuild.sh/raw?ref=topic/new`, headers: ownerHeaders });
  assert.deepEqual(raw.rawPayload, bytes);
  assert.equal(bareGit(dir, ['ls-tree', 'topic/new', 'tools/build.sh']).split(' ')[0], '100755');
  assert.equal(
    bareGit(dir, ['log', '-1', '--format=%an <%ae>|%cn <%ce>|%B', 'topic/new']),
    'Grace Hopper <grace@example.com>|Olivia Owner <olivia@example.com>|Build script\n\nWith a body\n\n',
  );
  const evs = await pushEvents(c);
  assert.deepEqual(
    evs.map((e: any) => [e.event_name, e.before ?? null, e.after ?? null, e.ref ?? null]),
    [
      ['push', ZERO_SHA, tip, 'refs/heads/topic/new'],
      ['repository_update', null, null, null],
    ],
  );
  assert.equal(evs[0].ref_protected, false);

  // form-encoded bodies work too (execute_filemode as a string)
  res = await app.inject({
    method: 'POST',
    url: `${base}/form.txt`,
    headers: { ...ownerHeaders, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'branch=main&content=form+body&commit_message=Form&execute_filemode=false',
  });
  assert.equal(res.statusCode, 201);
  assert.equal(bareGit(dir, ['show', 'main:form.txt']), 'form body');
});

test('POST refusals: existing file, directory, missing start branch, existing target branch, invalid names and parameters', async (t) => {
  const f = await fixture(t);
  const { app, c, dir, base, ownerHeaders } = f;
  const post = (path: string, payload: unknown) => app.inject({ method: 'POST', url: `${base}/${path}`, headers: ownerHeaders, payload: payload as any });
  const ok = { branch: 'main', content: 'x', commit_message: 'm' };
  const cases: [string, unknown, number, unknown][] = [
    ['lib%2Fa.rb', ok, 400, { message: 'A file with this name already exists' }],
    ['lib', ok, 400, { message: 'A directory with this name already exists' }],
    ['README.md%2Finside', ok, 400, { message: 'A file with this name already exists' }],
    ['n.txt', { ...ok, branch: 'nope' }, 400, { message: 'You can only create or edit files when you are on a branch' }],
    ['n.txt', { ...ok, branch: 'x', start_branch: 'nope' }, 400, { message: 'You can only create or edit files when you are on a branch' }],
    [
      'n.txt',
      { ...ok, branch: 'feature', start_branch: 'main' },
      400,
      { message: "A branch called 'feature' already exists. Switch to that branch in order to make changes" },
    ],
    [
      'n.txt',
      { ...ok, branch: 'a..b', start_branch: 'main' },
      400,
      { message: "Something went wrong when we tried to create 'a..b' for you: Branch name is invalid" },
    ],
    [
      'n.txt',
      { ...ok, branch: '-x', start_branch: 'main' },
      400,
      { message: "Something went wrong when we tried to create '-x' for you: Branch name is invalid" },
    ],
    ['n.txt', {}, 400, { error: 'branch is missing, commit_message is missing, content is missing' }],
    ['n.txt', { ...ok, branch: '' }, 400, { error: 'branch is empty' }],
    ['n.txt', { ...ok, commit_message: '  ' }, 400, { error: 'commit_message is empty' }],
    ['n.txt', { ...ok, encoding: 'utf-8' }, 400, { error: 'encoding does not have a valid value' }],
    ['n.txt', { ...ok, execute_filemode: 'maybe' }, 400, { error: 'execute_filemode is invalid' }],
    ['..%2F..%2Fetc%2Fpasswd', ok, 400, { error: 'file_path should be a valid file path' }],
    ['-rf', ok, 400, { error: 'file_path should be a valid file path' }],
    ['.git%2Fhooks%2Fpre-receive', ok, 400, { error: 'file_path should be a valid file path' }],
    ['a%2F.git%2Fconfig', ok, 400, { error: 'file_path should be a valid file path' }],
    ['a%2F%2Fb', ok, 400, { error: 'file_path should be a valid file path' }],
    ['..%2Fx', { content: 'x' }, 400, { error: 'file_path should be a valid file path, branch is missing, commit_message is missing' }],
  ];
  const refsBefore = bareGit(dir, ['for-each-ref']);
  for (const [path, payload, status, body] of cases) {
    const res = await post(path, payload);
    assert.deepEqual([res.statusCode, res.json()], [status, body], `${path} ${JSON.stringify(payload)}`);
  }
  assert.equal(bareGit(dir, ['for-each-ref']), refsBefore);
  assert.deepEqual(await pushEvents(c), []);
  // nothing half-written: no temporary index left in the repository
  assert.deepEqual(
    fs.readdirSync(dir).filter((n) => n.startsWith('hearth-index')),
    [],
  );
});

test('PUT updates a file; last_commit_id guards against a stale edit; execute_filemode toggles the mode', async (t) => {
  const f = await fixture(t);
  const { app, c, dir, base, ownerHeaders } = f;
  const put = (path: string, payload: unknown) => app.inject({ method: 'PUT', url: `${base}/${path}`, headers: ownerHeaders, payload: payload as any });

  // stale: lib/a.rb changed in Second after First
  let res = await put('lib%2Fa.rb', { branch: 'main', content: 'puts 3\n', commit_message: 'Three', last_commit_id: f.first });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: 'You are attempting to update a file that has changed since you started editing it.' }]);
  assert.equal(rev(dir, 'refs/heads/main'), f.third);

  // current: Third (the file's last commit there is Second, as on the branch), then the new tip
  res = await put('lib%2Fa.rb', { branch: 'main', content: 'puts 3\n', commit_message: 'Three', last_commit_id: f.third });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { file_path: 'lib/a.rb', branch: 'main' });
  assert.equal(bareGit(dir, ['show', 'main:lib/a.rb']), 'puts 3\n');
  const three = rev(dir, 'refs/heads/main');
  assert.equal(rev(dir, `${three}^`), f.third);
  // now Second is stale
  res = await put('lib%2Fa.rb', { branch: 'main', content: 'puts x\n', commit_message: 'X', last_commit_id: f.second });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: 'You are attempting to update a file that has changed since you started editing it.' }]);
  res = await put('lib%2Fa.rb', { branch: 'main', content: 'puts 3b\n', commit_message: 'Three b', last_commit_id: three });
  assert.equal(res.statusCode, 200);
  assert.equal(bareGit(dir, ['show', 'main:lib/a.rb']), 'puts 3b\n');
  const afterTwo = rev(dir, 'refs/heads/main');
  assert.equal(bareGit(dir, ['rev-list', '--count', `${f.third}..main`]).trim(), '2');
  // an unknown last_commit_id carries no information (GitLab: allowed)
  res = await put('lib%2Fa.rb', { branch: 'main', content: 'puts 4\n', commit_message: 'Four', last_commit_id: 'f'.repeat(40) });
  assert.equal(res.statusCode, 200);
  const four = rev(dir, 'refs/heads/main');
  assert.equal(rev(dir, `${four}^`), afterTwo);

  // mode: kept without execute_filemode, set with it
  res = await put('bin%2Frun', { branch: 'main', content: '#!/bin/sh\necho bye\n', commit_message: 'Bye' });
  assert.equal(res.statusCode, 200);
  assert.equal(bareGit(dir, ['ls-tree', 'main', 'bin/run']).split(' ')[0], '100755');
  res = await put('bin%2Frun', { branch: 'main', content: '#!/bin/sh\necho bye\n', commit_message: 'Not executable', execute_filemode: false });
  assert.equal(bareGit(dir, ['ls-tree', 'main', 'bin/run']).split(' ')[0], '100644');
  res = await put('README.md', { branch: 'main', content: b64('# Hi\n'), encoding: 'base64', commit_message: 'Exec', execute_filemode: true });
  assert.equal(bareGit(dir, ['ls-tree', 'main', 'README.md']).split(' ')[0], '100755');
  assert.equal(bareGit(dir, ['show', 'main:README.md']), '# Hi\n');

  // a missing file, and a new branch for the update
  const tip = rev(dir, 'refs/heads/main');
  res = await put('nope.txt', { branch: 'main', content: 'x', commit_message: 'm' });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: "A file with this name doesn't exist" }]);
  res = await put('lib', { branch: 'main', content: 'x', commit_message: 'm' });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: "A file with this name doesn't exist" }]);
  res = await put('README.md', { content: 'x' });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'branch is missing, commit_message is missing' }]);
  assert.equal(rev(dir, 'refs/heads/main'), tip);
  res = await put('README.md', { branch: 'fix', start_branch: 'feature', content: 'fixed\n', commit_message: 'Fix' });
  assert.equal(res.statusCode, 200);
  assert.equal(rev(dir, 'refs/heads/fix^'), f.second);
  assert.equal(bareGit(dir, ['show', 'fix:README.md']), 'fixed\n');

  // seven successful writes → seven push events and seven repository updates
  const evs = await pushEvents(c);
  assert.equal(evs.filter((e: any) => e.event_name === 'push').length, 7);
  assert.equal(evs.filter((e: any) => e.event_name === 'repository_update').length, 7);
  assert.deepEqual(evs.at(-2).ref, 'refs/heads/fix');
  assert.deepEqual(evs.at(-2).before, ZERO_SHA);
});

test('DELETE removes a file in a commit (204); a stale last_commit_id or a missing file is refused', async (t) => {
  const f = await fixture(t);
  const { app, c, dir, base, ownerHeaders } = f;
  const del = (path: string, query: string) => app.inject({ method: 'DELETE', url: `${base}/${path}?${query}`, headers: ownerHeaders });

  let res = await del('lib%2Fa.rb', `branch=main&commit_message=Drop&last_commit_id=${f.first}`);
  assert.deepEqual([res.statusCode, res.json()], [400, { message: 'You are attempting to delete a file that has been previously updated.' }]);
  res = await del('nope.rb', 'branch=main&commit_message=Drop');
  assert.deepEqual([res.statusCode, res.json()], [400, { message: "A file with this name doesn't exist" }]);
  res = await del('lib%2Fa.rb', 'branch=main');
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'commit_message is missing' }]);
  res = await del('..%2Fa', 'branch=main&commit_message=x');
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'file_path should be a valid file path' }]);
  assert.equal(rev(dir, 'refs/heads/main'), f.third);
  assert.deepEqual(await pushEvents(c), []);

  res = await del('lib%2Fa.rb', `branch=main&commit_message=Drop+a&last_commit_id=${f.second}`);
  assert.equal(res.statusCode, 204);
  assert.equal(res.body, '');
  const tip = rev(dir, 'refs/heads/main');
  assert.equal(rev(dir, `${tip}^`), f.third);
  assert.equal(bareGit(dir, ['diff-tree', '--no-commit-id', '-r', '--name-status', 'main']), 'D\tlib/a.rb\n');
  assert.equal(bareGit(dir, ['log', '-1', '--format=%s', 'main']), 'Drop a\n');
  res = await app.inject({ method: 'GET', url: `${base}/lib%2Fa.rb?ref=main`, headers: ownerHeaders });
  assert.deepEqual([res.statusCode, res.json()], [404, NOT_FOUND('File')]);
  // JSON body works as well
  res = await app.inject({ method: 'DELETE', url: `${base}/README.md`, headers: ownerHeaders, payload: { branch: 'main', commit_message: 'Drop readme' } });
  assert.equal(res.statusCode, 204);
  assert.equal(bareGit(dir, ['ls-tree', '--name-only', 'main']), 'bin\ndata.json\ndocs\nimg.bin\n');
  const evs = await pushEvents(c);
  assert.deepEqual(
    evs.map((e: any) => [e.event_name, e.ref ?? null]),
    [
      ['push', 'refs/heads/main'],
      ['repository_update', null],
      ['push', 'refs/heads/main'],
      ['repository_update', null],
    ],
  );
  assert.equal(evs[0].before, f.third);
  assert.equal(evs[0].after, tip);
});

test('write permissions: anonymous 401, reporter and non-member of a public project 403, invisible 404, protected default branch 400, read-only token 403, archived 403', async (t) => {
  const f = await fixture(t);
  const { app, c, dir, seed, project, base } = f;
  const payload = { branch: 'main', content: 'x', commit_message: 'm' };
  const tryPost = (headers: Record<string, string> | undefined, body: unknown = payload, url = `${base}/new.txt`) =>
    app.inject({ method: 'POST', url, headers, payload: body as any });

  let res = await tryPost(undefined);
  assert.deepEqual([res.statusCode, res.json()], [401, { message: '401 Unauthorized' }]);
  const outsider = await seed.user();
  res = await tryPost((await seed.token(outsider)).headers);
  assert.deepEqual([res.statusCode, res.json()], [404, NOT_FOUND('Project')]);
  const reporter = await seed.user();
  await seed.member({ project }, reporter, 20);
  const repHeaders = (await seed.token(reporter)).headers;
  res = await tryPost(repHeaders);
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  res = await app.inject({ method: 'DELETE', url: `${base}/README.md?branch=main&commit_message=x`, headers: repHeaders });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);

  // a developer: not into the protected default branch, but into a new branch
  const dev = await seed.user();
  await seed.member({ project }, dev, 30);
  const devHeaders = (await seed.token(dev)).headers;
  res = await tryPost(devHeaders);
  assert.deepEqual([res.statusCode, res.json()], [400, { message: 'You are not allowed to push into this branch' }]);
  res = await app.inject({ method: 'PUT', url: `${base}/README.md`, headers: devHeaders, payload });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: 'You are not allowed to push into this branch' }]);
  assert.equal(rev(dir, 'refs/heads/main'), f.third);
  res = await tryPost(devHeaders, { ...payload, branch: 'dev-work', start_branch: 'main' });
  assert.equal(res.statusCode, 201);
  assert.equal(bareGit(dir, ['show', 'dev-work:new.txt']), 'x');
  assert.equal(bareGit(dir, ['log', '-1', '--format=%an <%ae>', 'dev-work']).trim(), `${dev.name} <${dev.email}>`);

  // a maintainer may write the default branch; a read_api token may not write
  const maintainer = await seed.user();
  await seed.member({ project }, maintainer, 40);
  res = await tryPost((await seed.token(maintainer, { scopes: ['read_api'] })).headers);
  assert.equal(res.statusCode, 403);
  assert.equal(res.json().error, 'insufficient_scope');
  res = await tryPost((await seed.token(maintainer)).headers);
  assert.equal(res.statusCode, 201);
  assert.equal(bareGit(dir, ['show', 'main:new.txt']), 'x');

  // a public project: a signed-in non-member reads but may not write
  const pub = await seed.repoProject({ visibility: 'public', owner: f.owner });
  res = await tryPost((await seed.token(outsider)).headers, payload, `/api/v4/projects/${pub.project.id}/repository/files/a.txt`);
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);

  // archived: no writes, even for the owner
  await c.db.kysely.updateTable('projects').set({ archived: 1 }).where('id', '=', project.id).execute();
  res = await tryPost(f.ownerHeaders, { ...payload, branch: 'other', start_branch: 'main' });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  res = await app.inject({ method: 'GET', url: `${base}/new.txt?ref=main`, headers: f.ownerHeaders });
  assert.equal(res.statusCode, 200);
});

test('an empty repository: the first commit creates the branch without a parent; another branch becomes the default branch', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const owner = await seed.user({ name: 'Eve Empty', email: 'eve@example.com' });
  const { headers } = await seed.token(owner);
  const { project, dir } = await seed.repoProject({ owner });
  await seed.member({ project }, owner, 50);
  const base = `/api/v4/projects/${project.id}/repository/files`;

  let res = await app.inject({ method: 'GET', url: `${base}/README.md?ref=main`, headers });
  assert.deepEqual([res.statusCode, res.json()], [404, NOT_FOUND('Commit')]);
  res = await app.inject({ method: 'PUT', url: `${base}/README.md`, headers, payload: { branch: 'main', content: 'x', commit_message: 'm' } });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: "A file with this name doesn't exist" }]);
  assert.equal(bareGit(dir, ['for-each-ref']), '');

  res = await app.inject({ method: 'POST', url: `${base}/README.md`, headers, payload: { branch: 'main', content: '# First\n', commit_message: 'Initial' } });
  assert.equal(res.statusCode, 201);
  const tip = rev(dir, 'refs/heads/main');
  assert.equal(bareGit(dir, ['rev-list', '--parents', 'main']).trim(), tip);
  assert.equal(bareGit(dir, ['show', 'main:README.md']), '# First\n');
  let evs = await pushEvents(c);
  assert.deepEqual([evs[0].event_name, evs[0].before, evs[0].after, evs[0].total_commits_count], ['push', ZERO_SHA, tip, 1]);

  // another empty project, first commit on "develop": HEAD and default_branch follow
  const other = await seed.repoProject({ owner });
  await seed.member({ project: other.project }, owner, 50);
  res = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${other.project.id}/repository/files/a.txt`,
    headers,
    payload: { branch: 'develop', content: 'a', commit_message: 'A' },
  });
  assert.equal(res.statusCode, 201);
  assert.equal(bareGit(other.dir, ['symbolic-ref', 'HEAD']), 'refs/heads/develop\n');
  const row = await c.db.kysely.selectFrom('projects').select('default_branch').where('id', '=', other.project.id).executeTakeFirstOrThrow();
  assert.equal(row.default_branch, 'develop');
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${other.project.id}/repository/files/a.txt/raw`, headers });
  assert.equal(res.body, 'a');
  evs = (await pushEvents(c)).filter((e: any) => e.project_id === other.project.id);
  assert.equal(evs[0].project.default_branch, 'develop');
  assert.equal(evs[0].ref_protected, true);
});

test('concurrent writes to one branch all land, one after the other', async (t) => {
  const f = await fixture(t);
  const results = await Promise.all(
    Array.from({ length: 5 }, (_, i) =>
      f.app.inject({
        method: 'POST',
        url: `${f.base}/c${i}.txt`,
        headers: f.ownerHeaders,
        payload: { branch: 'main', content: String(i), commit_message: `c${i}` },
      }),
    ),
  );
  assert.deepEqual(
    results.map((r) => r.statusCode),
    [201, 201, 201, 201, 201],
  );
  assert.equal(bareGit(f.dir, ['rev-list', '--count', `${f.third}..main`]).trim(), '5');
  for (let i = 0; i < 5; i++) assert.equal(bareGit(f.dir, ['show', `main:c${i}.txt`]), String(i));
});

// ---- the one write path -------------------------------------------------------------------------

test("an unset default_branch_protection_defaults is GitLab's full protection, for the files and commits APIs alike", async (t) => {
  const f = await fixture(t);
  const { app, c, seed, project, base, dir } = f;
  await c.settings.save({ default_branch_protection_defaults: null });
  const dev = await seed.user();
  await seed.member({ project }, dev, 30);
  const devHeaders = (await seed.token(dev)).headers;
  const maintainer = await seed.user();
  await seed.member({ project }, maintainer, 40);
  const maintainerHeaders = (await seed.token(maintainer)).headers;
  const payload = { branch: 'main', content: 'x', commit_message: 'm' };
  const commit = (headers: Record<string, string>, branch: string) =>
    app.inject({
      method: 'POST',
      url: `/api/v4/projects/${project.id}/repository/commits`,
      headers,
      payload: { branch, commit_message: 'm', actions: [{ action: 'create', file_path: `${branch}.txt`, content: 'c' }] },
    });

  // Developers push to neither API's default branch, only to other branches
  let res = await app.inject({ method: 'POST', url: `${base}/new.txt`, headers: devHeaders, payload });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: 'You are not allowed to push into this branch' }]);
  res = await commit(devHeaders, 'main');
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden - You are not allowed to push into this branch' }]);
  assert.equal(rev(dir, 'refs/heads/main'), f.third);
  res = await app.inject({ method: 'POST', url: `${base}/new.txt`, headers: devHeaders, payload: { ...payload, branch: 'dev-work', start_branch: 'main' } });
  assert.equal(res.statusCode, 201, res.body);
  // Maintainers push to it; the events say it is protected
  res = await app.inject({ method: 'POST', url: `${base}/new.txt`, headers: maintainerHeaders, payload });
  assert.equal(res.statusCode, 201, res.body);
  res = await commit(maintainerHeaders, 'main');
  assert.equal(res.statusCode, 201, res.body);
  const evs = (await pushEvents(c)).filter((e: any) => e.event_name === 'push');
  assert.deepEqual(
    evs.map((e: any) => [e.ref, e.ref_protected]),
    [
      ['refs/heads/dev-work', false],
      ['refs/heads/main', true],
      ['refs/heads/main', true],
    ],
  );
});

test('a write to a repository whose default branch does not exist makes the written branch the default branch, as a push does', async (t) => {
  const f = await fixture(t);
  const { app, c, project, base, dir, ownerHeaders } = f;
  await c.db.kysely.updateTable('projects').set({ default_branch: 'trunk' }).where('id', '=', project.id).execute();
  const res = await app.inject({
    method: 'POST',
    url: `${base}/new.txt`,
    headers: ownerHeaders,
    payload: { branch: 'feature', content: 'x', commit_message: 'm' },
  });
  assert.equal(res.statusCode, 201, res.body);
  const row = await c.db.kysely.selectFrom('projects').select('default_branch').where('id', '=', project.id).executeTakeFirstOrThrow();
  assert.equal(row.default_branch, 'feature');
  assert.equal(bareGit(dir, ['symbolic-ref', 'HEAD']), 'refs/heads/feature\n');
  const evs = (await pushEvents(c)).filter((e: any) => e.event_name === 'push');
  assert.deepEqual(
    evs.map((e: any) => [e.ref, e.project.default_branch]),
    [['refs/heads/feature', 'feature']],
  );
});
