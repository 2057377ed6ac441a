// Branches API (GitLab lib/api/branches.rb): list with search/regex/sort/pagination, one branch,
// HEAD, create, delete, delete merged; whole bodies, refs in git afterwards and the push events.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, EXTERNAL_URL } from '../../../helpers/build-app.ts';
import { AUTHOR, bareGit, workTree, commitJson, isoTime, pushEvents } from '../../../helpers/git.ts';

const T0 = 1_700_000_000;
const _iso = isoTime;

const pick = (o: Record<string, unknown>, keys: string[]) => Object.fromEntries(keys.map((k) => [k, o[k]]));

/**
 * main: c1 → c2 → c3; merged and ends-with.json at c2 (contained in main), same at c3 (identical),
 * unmerged: c1 → c4, feature/x: c3 → c5.
 */
async function setup(t: Parameters<typeof buildTestApp>[0], visibility = 'private') {
  const ta = await buildTestApp(t);
  const { seed } = ta;
  const maintainer = await seed.user({ name: 'Mae Maintainer', email: 'mae@example.com' });
  const group = await seed.group({ visibility, path: `grp-${Math.random().toString(36).slice(2, 7)}` });
  const { project, dir } = await seed.repoProject({ namespace: group, visibility, path: 'my.project' });
  await seed.member({ project }, maintainer, 40);
  const mae = await seed.token(maintainer);
  const wt = workTree(t, dir);
  const c1 = wt.write('README.md', '# hi\n').commit('Initial', { time: T0 });
  wt.checkout('merged', true);
  const c2 = wt.write('m.txt', 'm\n').commit('Merged work\n\nWith a body', { time: T0 + 100 });
  wt.git(['branch', 'ends-with.json']);
  wt.checkout('main');
  wt.git(['merge', '-q', '--ff-only', 'merged']);
  const c3 = wt.write('b.txt', 'b\n').commit('Main work', { time: T0 + 300 });
  wt.git(['branch', 'same']);
  wt.checkout('unmerged', true);
  wt.git(['reset', '-q', '--hard', c1]);
  const c4 = wt.write('u.txt', 'u\n').commit('Unmerged work', { time: T0 + 200 });
  wt.checkout('main');
  wt.checkout('feature/x', true);
  const c5 = wt.write('f.txt', 'f\n').commit('Feature work', { time: T0 + 400 });
  wt.checkout('main');
  wt.push();
  const webUrl = `${EXTERNAL_URL}/${group.full_path}/my.project`;
  const base = `/api/v4/projects/${project.id}/repository`;
  return { ...ta, project, group, dir, wt, maintainer, mae: mae.headers, webUrl, base, shas: { c1, c2, c3, c4, c5 } };
}

type Setup = Awaited<ReturnType<typeof setup>>;

function branchJson(s: Setup, name: string, sha: string, extra: Partial<Record<string, unknown>> = {}) {
  const isDefault = name === 'main';
  return {
    name,
    commit: commitJson(s.dir, sha, s.webUrl),
    merged: false,
    protected: isDefault,
    developers_can_push: false,
    developers_can_merge: false,
    can_push: true,
    default: isDefault,
    web_url: `${s.webUrl}/-/tree/${name}`,
    ...extra,
  };
}

test('GET /branches: every branch by name with GitLab fields, merged into the default branch, offset headers', async (t) => {
  const s = await setup(t);
  const { app } = s;
  const { c1: _c1, c2, c3, c4, c5 } = s.shas;
  const res = await app.inject({ method: 'GET', url: `${s.base}/branches`, headers: s.mae });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.deepEqual(res.json(), [
    branchJson(s, 'ends-with.json', c2, { merged: true }),
    branchJson(s, 'feature/x', c5),
    branchJson(s, 'main', c3),
    branchJson(s, 'merged', c2, { merged: true }),
    branchJson(s, 'same', c3),
    branchJson(s, 'unmerged', c4),
  ]);
  assert.equal(res.json()[3].commit.message, 'Merged work\n\nWith a body\n');
  assert.equal(res.json()[3].commit.title, 'Merged work');
  const link = (page: number, per = 20) => `<${EXTERNAL_URL}${s.base}/branches?id=${s.project.id}&page=${page}&per_page=${per}>`;
  assert.equal(res.headers['x-total'], '6');
  assert.equal(res.headers['x-total-pages'], '1');
  assert.equal(res.headers['x-page'], '1');
  assert.equal(res.headers['x-per-page'], '20');
  assert.equal(res.headers['x-next-page'], '');
  assert.equal(res.headers['x-prev-page'], '');
  assert.equal(res.headers.link, `${link(1)}; rel="first", ${link(1)}; rel="last"`);

  // page 2 of 2-per-page
  const p2 = await app.inject({ method: 'GET', url: `${s.base}/branches?per_page=2&page=2`, headers: s.mae });
  assert.deepEqual(
    p2.json().map((b: { name: string }) => b.name),
    ['main', 'merged'],
  );
  assert.equal(p2.headers['x-total'], '6');
  assert.equal(p2.headers['x-total-pages'], '3');
  assert.equal(p2.headers['x-next-page'], '3');
  assert.equal(p2.headers['x-prev-page'], '1');
  assert.equal(p2.headers.link, `${link(1, 2)}; rel="prev", ${link(3, 2)}; rel="next", ${link(1, 2)}; rel="first", ${link(3, 2)}; rel="last"`);

  // the project's path works as its id too
  const byPath = await app.inject({
    method: 'GET',
    url: `/api/v4/projects/${encodeURIComponent(`${s.group.full_path}/my.project`)}/repository/branches?per_page=1`,
    headers: s.mae,
  });
  assert.deepEqual(byPath.json(), [branchJson(s, 'ends-with.json', c2, { merged: true })]);
});

test('GET /branches: sort by update time, search with ^ $ *, regex, keyset pages and bad values', async (t) => {
  const s = await setup(t);
  const { app } = s;
  const names = async (query: string) => {
    const res = await app.inject({ method: 'GET', url: `${s.base}/branches?${query}`, headers: s.mae });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().map((b: { name: string }) => b.name);
  };
  const gitOrder = (sort: string) =>
    bareGit(s.dir, ['for-each-ref', `--sort=${sort}`, '--format=%(refname:short)', 'refs/heads/'])
      .trim()
      .split('\n');
  assert.deepEqual(await names('sort=name_asc'), ['ends-with.json', 'feature/x', 'main', 'merged', 'same', 'unmerged']);
  assert.deepEqual(await names('sort=updated_asc'), ['ends-with.json', 'merged', 'unmerged', 'main', 'same', 'feature/x']);
  assert.deepEqual(await names('sort=updated_asc'), gitOrder('committerdate'));
  assert.deepEqual(await names('sort=updated_desc'), ['feature/x', 'main', 'same', 'unmerged', 'ends-with.json', 'merged']);
  assert.deepEqual(await names('sort=updated_desc'), gitOrder('-committerdate'));

  // search: substring in any case, the exact match first; ^, $ and * make it a pattern (order kept)
  assert.deepEqual(await names('search=MERGED'), ['merged', 'unmerged']);
  s.wt.git(['branch', 'a-merged', s.shas.c1]);
  s.wt.push('a-merged');
  assert.deepEqual(await names('search=merged'), ['merged', 'a-merged', 'unmerged']);
  assert.deepEqual(await names('search=%5Emerged'), ['merged']);
  assert.deepEqual(await names('search=merged%24'), ['a-merged', 'merged', 'unmerged']);
  assert.deepEqual(await names('search=%5Ee*json%24'), ['ends-with.json']);
  assert.deepEqual(await names('search=.'), ['ends-with.json']);
  assert.deepEqual(await names('search=nothing-like-this'), []);
  assert.deepEqual(await names('search=e&sort=updated_desc'), ['feature/x', 'same', 'unmerged', 'ends-with.json', 'merged', 'a-merged']);

  // regex: RE2 syntax, unanchored, case-sensitive
  assert.deepEqual(await names('regex=' + encodeURIComponent('^(main|same)$')), ['main', 'same']);
  assert.deepEqual(await names('regex=' + encodeURIComponent('/')), ['feature/x']);
  assert.deepEqual(await names('regex=MAIN'), []);
  assert.deepEqual(await names('regex=' + encodeURIComponent('(?i)MAIN')), ['main']);
  assert.deepEqual(await names('regex=merged&search=%5Ea'), ['a-merged']);
  for (const bad of ['(invalid', '(?=x)', '(a)\\1', '[z-a]']) {
    const res = await app.inject({ method: 'GET', url: `${s.base}/branches?regex=${encodeURIComponent(bad)}`, headers: s.mae });
    assert.equal(res.statusCode, 400, bad);
    assert.deepEqual(res.json(), { message: 'Regex is invalid' });
  }
  // a catastrophic pattern is stopped, not left running
  s.wt.git(['branch', 'a'.repeat(60) + 'b', s.shas.c1]);
  s.wt.push('a'.repeat(60) + 'b');
  const slow = await app.inject({ method: 'GET', url: `${s.base}/branches?regex=${encodeURIComponent('^(a+)+$')}`, headers: s.mae });
  assert.equal(slow.statusCode, 400);
  assert.deepEqual(slow.json(), { message: 'Regex is invalid' });

  // so is a search whose wildcards would backtrack for ever
  const wild = await app.inject({ method: 'GET', url: `${s.base}/branches?search=${encodeURIComponent('*a'.repeat(12) + '*c')}`, headers: s.mae });
  assert.deepEqual([wild.statusCode, wild.json()], [400, { message: 'Search is too complex' }]);

  let res = await app.inject({ method: 'GET', url: `${s.base}/branches?sort=unknown`, headers: s.mae });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'sort does not have a valid value' });
  res = await app.inject({ method: 'GET', url: `${s.base}/branches?per_page=0`, headers: s.mae });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'per_page has a value not allowed' }]);

  // keyset: pages after page_token, Link rel="next" only
  res = await app.inject({ method: 'GET', url: `${s.base}/branches?pagination=keyset&per_page=3`, headers: s.mae });
  assert.deepEqual(
    res.json().map((b: { name: string }) => b.name),
    ['a-merged', 'a'.repeat(60) + 'b', 'ends-with.json'],
  );
  assert.equal(res.headers['x-total'], undefined);
  assert.equal(
    res.headers.link,
    `<${EXTERNAL_URL}${s.base}/branches?id=${s.project.id}&page=1&page_token=ends-with.json&pagination=keyset&per_page=3>; rel="next"`,
  );
  res = await app.inject({ method: 'GET', url: `${s.base}/branches?pagination=keyset&per_page=3&page_token=ends-with.json`, headers: s.mae });
  assert.deepEqual(
    res.json().map((b: { name: string }) => b.name),
    ['feature/x', 'main', 'merged'],
  );
  res = await app.inject({ method: 'GET', url: `${s.base}/branches?pagination=keyset&per_page=3&page_token=merged`, headers: s.mae });
  assert.deepEqual(
    res.json().map((b: { name: string }) => b.name),
    ['same', 'unmerged'],
  );
  assert.equal(res.headers.link, undefined);
  res = await app.inject({ method: 'GET', url: `${s.base}/branches?pagination=keyset&page_token=nope`, headers: s.mae });
  assert.deepEqual([res.statusCode, res.json()], [422, { message: 'Invalid page token: refs/heads/nope' }]);
});

test('GET and HEAD /branches/:branch: one branch, encoded slashes, dots, invalid names, 404s', async (t) => {
  const s = await setup(t);
  const { app } = s;
  let res = await app.inject({ method: 'GET', url: `${s.base}/branches/main`, headers: s.mae });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), branchJson(s, 'main', s.shas.c3));
  res = await app.inject({ method: 'GET', url: `${s.base}/branches/feature%2Fx`, headers: s.mae });
  assert.deepEqual(res.json(), branchJson(s, 'feature/x', s.shas.c5));
  res = await app.inject({ method: 'GET', url: `${s.base}/branches/ends-with.json`, headers: s.mae });
  assert.deepEqual(res.json(), branchJson(s, 'ends-with.json', s.shas.c2, { merged: true }));
  res = await app.inject({ method: 'GET', url: `${s.base}/branches/same`, headers: s.mae });
  assert.equal(res.json().merged, false);
  res = await app.inject({ method: 'GET', url: `${s.base}/branches/unmerged`, headers: s.mae });
  assert.equal(res.json().merged, false);

  // an unencoded slash is another route
  res = await app.inject({ method: 'GET', url: `${s.base}/branches/feature/x`, headers: s.mae });
  assert.deepEqual([res.statusCode, res.json()], [404, { error: '404 Not Found' }]);
  res = await app.inject({ method: 'GET', url: `${s.base}/branches/unknown`, headers: s.mae });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Branch Not Found' }]);
  res = await app.inject({ method: 'GET', url: `${s.base}/branches/feature`, headers: s.mae });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Branch Not Found' }]);
  for (const bad of ['branch*', '-x', 'a..b', 'HEAD', 'refs%2Fheads%2Fmain', 'x.lock']) {
    res = await app.inject({ method: 'GET', url: `${s.base}/branches/${bad}`, headers: s.mae });
    assert.deepEqual([res.statusCode, res.json()], [400, { message: 'The branch refname is invalid' }], bad);
  }

  res = await app.inject({ method: 'HEAD', url: `${s.base}/branches/main`, headers: s.mae });
  assert.equal(res.statusCode, 204);
  assert.equal(res.body, '');
  res = await app.inject({ method: 'HEAD', url: `${s.base}/branches/feature%2Fx`, headers: s.mae });
  assert.equal(res.statusCode, 204);
  for (const missing of ['unknown', 'branch*']) {
    res = await app.inject({ method: 'HEAD', url: `${s.base}/branches/${missing}`, headers: s.mae });
    assert.equal(res.statusCode, 404);
    assert.equal(res.body, '');
  }
  res = await app.inject({ method: 'HEAD', url: `/api/v4/projects/99999/repository/branches/main`, headers: s.mae });
  assert.equal(res.statusCode, 404);
  assert.equal(res.body, '');
});

test('POST /branches: creates from a branch, tag or SHA; 201 entity, the ref in git, push events', async (t) => {
  const s = await setup(t);
  const { app, c } = s;
  const before = (await pushEvents(c)).length;
  let res = await app.inject({ method: 'POST', url: `${s.base}/branches`, headers: s.mae, payload: { branch: 'feature1', ref: 'unmerged' } });
  assert.equal(res.statusCode, 201);
  assert.deepEqual(res.json(), branchJson(s, 'feature1', s.shas.c4));
  assert.equal(bareGit(s.dir, ['rev-parse', 'refs/heads/feature1']).trim(), s.shas.c4);

  const evs = (await pushEvents(c)).slice(before);
  assert.deepEqual(
    evs.map((e: { event_name: string }) => e.event_name),
    ['push', 'repository_update'],
  );
  assert.deepEqual(
    pick(evs[0], ['object_kind', 'before', 'after', 'ref', 'ref_protected', 'checkout_sha', 'user_id', 'user_username', 'project_id', 'total_commits_count']),
    {
      object_kind: 'push',
      before: '0'.repeat(40),
      after: s.shas.c4,
      ref: 'refs/heads/feature1',
      ref_protected: false,
      checkout_sha: s.shas.c4,
      user_id: s.maintainer.id,
      user_username: s.maintainer.username,
      project_id: s.project.id,
      total_commits_count: 1,
    },
  );
  assert.deepEqual(evs[1].changes, [{ before: '0'.repeat(40), after: s.shas.c4, ref: 'refs/heads/feature1' }]);
  assert.deepEqual(evs[1].refs, ['refs/heads/feature1']);

  // from a full SHA, a short SHA, and a tag (form-encoded too); names with slashes and dots
  s.wt.tag('v1.0', 'Release');
  s.wt.push('--tags');
  for (const [branch, ref, sha] of [
    ['from-sha', s.shas.c2, s.shas.c2],
    ['from-short', s.shas.c5.slice(0, 8), s.shas.c5],
    ['release/1.x', 'v1.0', s.shas.c3],
  ]) {
    res = await app.inject({
      method: 'POST',
      url: `${s.base}/branches`,
      headers: { ...s.mae, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `branch=${encodeURIComponent(branch)}&ref=${encodeURIComponent(ref)}`,
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().name, branch);
    assert.equal(res.json().commit.id, sha);
    assert.equal(res.json().merged, branch === 'from-sha');
    assert.equal(bareGit(s.dir, ['rev-parse', `refs/heads/${branch}`]).trim(), sha);
  }
  res = await app.inject({ method: 'GET', url: `${s.base}/branches/release%2F1.x`, headers: s.mae });
  assert.equal(res.json().web_url, `${s.webUrl}/-/tree/release/1.x`);
  // web_url escapes what a URL path cannot hold
  res = await app.inject({ method: 'POST', url: `${s.base}/branches`, headers: s.mae, payload: { branch: 'fix#1/ünï', ref: 'main' } });
  assert.equal(res.statusCode, 201);
  assert.equal(res.json().name, 'fix#1/ünï');
  assert.equal(res.json().web_url, `${s.webUrl}/-/tree/fix%231/%C3%BCn%C3%AF`);
  assert.equal(bareGit(s.dir, ['rev-parse', 'refs/heads/fix#1/ünï']).trim(), s.shas.c3);
  res = await app.inject({ method: 'GET', url: `${s.base}/branches/${encodeURIComponent('fix#1/ünï')}`, headers: s.mae });
  assert.equal(res.json().name, 'fix#1/ünï');

  const refsNow = bareGit(s.dir, ['for-each-ref', '--format=%(refname) %(objectname)']);
  const refused = async (payload: unknown, status: number, body: unknown) => {
    const r = await app.inject({ method: 'POST', url: `${s.base}/branches`, headers: s.mae, payload: payload as object });
    assert.deepEqual([r.statusCode, r.json()], [status, body], JSON.stringify(payload));
  };
  await refused({ branch: 'feature1', ref: 'main' }, 400, { message: 'Branch already exists' });
  await refused({ branch: 'main', ref: 'unmerged' }, 400, { message: 'Branch already exists' });
  for (const bad of ['new design', '-x', '--force', 'a..b', 'HEAD', 'refs/heads/x', 'refs/remotes/x', 'x.lock', 'x/', '/x', 'a~1', 'a:b', 'a@{1}', '.hidden']) {
    await refused({ branch: bad, ref: 'main' }, 400, { message: 'Branch name is invalid' });
  }
  for (const bad of ['foo', '-x', '--all', 'main~1', 'main:README.md', 'HEAD^', 'deadbeef']) {
    await refused({ branch: 'new_design3', ref: bad }, 400, { message: `Failed to create branch 'new_design3': invalid reference name '${bad}'` });
  }
  await refused({ branch: 'feature1/sub', ref: 'main' }, 400, {
    message: "Failed to create branch 'feature1/sub': Branch name conflicts with existing branch hierarchy.",
  });
  await refused({ branch: 'feature', ref: 'main' }, 400, {
    message: "Failed to create branch 'feature': Branch name conflicts with existing branch hierarchy.",
  });
  await refused({ ref: 'main' }, 400, { error: 'branch is missing' });
  await refused({}, 400, { error: 'branch is missing, ref is missing' });
  await refused({ branch: '', ref: 'main' }, 400, { error: 'branch is empty' });
  await refused({ branch: 'x', ref: '' }, 400, { error: 'ref is empty' });
  // nothing changed by the refusals
  assert.equal(bareGit(s.dir, ['for-each-ref', '--format=%(refname) %(objectname)']), refsNow);
});

test('POST /branches on an empty repository first commits an empty README.md to the default branch', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const user = await seed.user({ name: 'Dev One', email: 'dev1@example.com' });
  const { project, dir } = await seed.repoProject({ owner: user });
  await seed.member({ project }, user, 30);
  const { headers } = await seed.token(user);
  const res = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/repository/branches`,
    headers,
    payload: { branch: 'topic', ref: 'main' },
  });
  assert.equal(res.statusCode, 201, res.body);
  const main = bareGit(dir, ['rev-parse', 'refs/heads/main']).trim();
  assert.equal(bareGit(dir, ['rev-parse', 'refs/heads/topic']).trim(), main);
  assert.equal(bareGit(dir, ['log', '--format=%an <%ae>|%s', 'main']), 'Dev One <dev1@example.com>|Add README.md\n');
  assert.equal(bareGit(dir, ['show', 'main:README.md']), '');
  assert.equal(res.json().commit.id, main);
  assert.equal(res.json().merged, false);
  const evs = await pushEvents(c);
  assert.deepEqual(
    evs.map((e: { event_name: string; ref?: string }) => [e.event_name, e.ref ?? null]),
    [
      ['push', 'refs/heads/main'],
      ['repository_update', null],
      ['push', 'refs/heads/topic'],
      ['repository_update', null],
    ],
  );
});

test('DELETE /branches/:branch: 204 and the ref is gone; default branch, unknown, invalid, If-Unmodified-Since', async (t) => {
  const s = await setup(t);
  const { app, c } = s;
  const before = (await pushEvents(c)).length;
  let res = await app.inject({ method: 'DELETE', url: `${s.base}/branches/feature%2Fx`, headers: s.mae });
  assert.equal(res.statusCode, 204);
  assert.equal(res.body, '');
  assert.equal(bareGit(s.dir, ['for-each-ref', '--format=%(refname)', 'refs/heads/feature/']), '');
  const evs = (await pushEvents(c)).slice(before);
  assert.deepEqual(
    evs.map((e: { event_name: string }) => e.event_name),
    ['push', 'repository_update'],
  );
  assert.deepEqual(pick(evs[0], ['before', 'after', 'ref', 'checkout_sha', 'total_commits_count']), {
    before: s.shas.c5,
    after: '0'.repeat(40),
    ref: 'refs/heads/feature/x',
    checkout_sha: null,
    total_commits_count: 0,
  });
  assert.deepEqual(evs[1].changes, [{ before: s.shas.c5, after: '0'.repeat(40), ref: 'refs/heads/feature/x' }]);

  res = await app.inject({ method: 'DELETE', url: `${s.base}/branches/ends-with.json`, headers: s.mae });
  assert.equal(res.statusCode, 204);
  res = await app.inject({ method: 'DELETE', url: `${s.base}/branches/main`, headers: s.mae });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: 'The default branch of a project cannot be deleted.' }]);
  // even an administrator
  res = await app.inject({ method: 'DELETE', url: `${s.base}/branches/main`, headers: s.root });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: 'The default branch of a project cannot be deleted.' }]);
  res = await app.inject({ method: 'DELETE', url: `${s.base}/branches/foobar`, headers: s.mae });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Branch Not Found' }]);
  res = await app.inject({ method: 'DELETE', url: `${s.base}/branches/branch*`, headers: s.mae });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: 'The branch refname is invalid' }]);
  res = await app.inject({ method: 'DELETE', url: `${s.base}/branches/-x`, headers: s.mae });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: 'The branch refname is invalid' }]);
  // the tip was authored at T0+200: an older If-Unmodified-Since refuses, a later one deletes
  res = await app.inject({
    method: 'DELETE',
    url: `${s.base}/branches/unmerged`,
    headers: { ...s.mae, 'if-unmodified-since': new Date((T0 + 100) * 1000).toUTCString() },
  });
  assert.deepEqual([res.statusCode, res.json()], [412, { message: '412 Precondition Failed' }]);
  assert.equal(bareGit(s.dir, ['rev-parse', 'refs/heads/unmerged']).trim(), s.shas.c4);
  res = await app.inject({
    method: 'DELETE',
    url: `${s.base}/branches/unmerged`,
    headers: { ...s.mae, 'if-unmodified-since': new Date((T0 + 200) * 1000).toUTCString() },
  });
  assert.equal(res.statusCode, 204);

  assert.equal(bareGit(s.dir, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/']), 'main\nmerged\nsame\n');
});

test('DELETE /merged_branches: 202, removes branches merged into the default branch (one push each), keeps the rest', async (t) => {
  const s = await setup(t);
  const { app, c } = s;
  const before = (await pushEvents(c)).length;
  const res = await app.inject({ method: 'DELETE', url: `${s.base}/merged_branches`, headers: s.mae });
  assert.deepEqual([res.statusCode, res.json()], [202, { message: '202 Accepted' }]);
  // merged and ends-with.json were merged; same is identical to main and stays, as main itself
  assert.equal(bareGit(s.dir, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/']), 'feature/x\nmain\nsame\nunmerged\n');
  const evs = (await pushEvents(c)).slice(before);
  assert.deepEqual(
    evs.map((e: { event_name: string; ref?: string; refs?: string[] }) => [e.event_name, e.ref ?? e.refs]),
    [
      ['push', 'refs/heads/ends-with.json'],
      ['repository_update', ['refs/heads/ends-with.json']],
      ['push', 'refs/heads/merged'],
      ['repository_update', ['refs/heads/merged']],
    ],
  );
  // nothing left to delete
  const again = await app.inject({ method: 'DELETE', url: `${s.base}/merged_branches`, headers: s.mae });
  assert.equal(again.statusCode, 202);
  assert.equal((await pushEvents(c)).length, before + 4);
});

test('permissions: reporters read but cannot write, anonymous callers, read_api tokens, archived projects, protected default branch', async (t) => {
  const s = await setup(t);
  const { app, seed, c } = s;
  const reporter = await seed.user();
  await seed.member({ project: s.project }, reporter, 20);
  const rep = (await seed.token(reporter)).headers;
  const developer = await seed.user();
  await seed.member({ project: s.project }, developer, 30);
  const dev = (await seed.token(developer)).headers;
  const guest = await seed.user();
  await seed.member({ project: s.project }, guest, 10);
  const gst = (await seed.token(guest)).headers;
  const refs = bareGit(s.dir, ['for-each-ref']);

  // a reporter reads; can_push is false everywhere
  let res = await app.inject({ method: 'GET', url: `${s.base}/branches/main`, headers: rep });
  assert.deepEqual(res.json(), branchJson(s, 'main', s.shas.c3, { can_push: false }));
  // a developer may not push to the protected default branch, but to the others
  res = await app.inject({ method: 'GET', url: `${s.base}/branches?per_page=3`, headers: dev });
  assert.deepEqual(
    res.json().map((b: { name: string; can_push: boolean }) => [b.name, b.can_push]),
    [
      ['ends-with.json', true],
      ['feature/x', true],
      ['main', false],
    ],
  );

  const writes = [
    { method: 'POST', url: `${s.base}/branches`, payload: { branch: 'x', ref: 'main' } },
    { method: 'DELETE', url: `${s.base}/branches/merged` },
    { method: 'DELETE', url: `${s.base}/merged_branches` },
  ] as const;
  for (const w of writes) {
    res = await app.inject({ ...w, headers: rep });
    assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }], `${w.method} ${w.url}`);
  }
  // guests of a private project do not read code
  res = await app.inject({ method: 'GET', url: `${s.base}/branches`, headers: gst });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  // anonymous: the private project does not exist
  for (const r of [{ method: 'GET', url: `${s.base}/branches` }, { method: 'GET', url: `${s.base}/branches/main` }, ...writes] as const) {
    res = await app.inject(r);
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Project Not Found' }], `${r.method} ${r.url}`);
  }
  // validation comes after the project lookup, as Grape's `before`
  res = await app.inject({ method: 'POST', url: `${s.base}/branches`, payload: {} });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Project Not Found' }]);
  // a read_api token reads but does not write
  const ro = (await seed.token(s.maintainer, { scopes: ['read_api'] })).headers;
  res = await app.inject({ method: 'GET', url: `${s.base}/branches/main`, headers: ro });
  assert.equal(res.statusCode, 200);
  res = await app.inject({ method: 'POST', url: `${s.base}/branches`, headers: ro, payload: { branch: 'x', ref: 'main' } });
  assert.equal(res.statusCode, 403);
  assert.equal(res.json().error, 'insufficient_scope');

  // a disabled repository feature: 404 for branches
  await c.db.kysely
    .updateTable('projects')
    .set({ settings: JSON.stringify({ repository_access_level: 'disabled' }) })
    .where('id', '=', s.project.id)
    .execute();
  res = await app.inject({ method: 'GET', url: `${s.base}/branches`, headers: s.mae });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Not Found' }]);
  await c.db.kysely.updateTable('projects').set({ settings: '{}', archived: 1 }).where('id', '=', s.project.id).execute();
  // archived: read-only for everyone
  res = await app.inject({ method: 'GET', url: `${s.base}/branches/merged`, headers: s.mae });
  assert.equal(res.json().can_push, false);
  res = await app.inject({ method: 'POST', url: `${s.base}/branches`, headers: s.mae, payload: { branch: 'x', ref: 'main' } });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  assert.equal(bareGit(s.dir, ['for-each-ref']), refs);
  assert.deepEqual(await pushEvents(c), []);
});

test('public project: anonymous callers read branches, writes are 403; a developer creates and deletes branches', async (t) => {
  const s = await setup(t, 'public');
  const { app, seed } = s;
  let res = await app.inject({ method: 'GET', url: `${s.base}/branches/main` });
  assert.deepEqual([res.statusCode, res.json()], [200, branchJson(s, 'main', s.shas.c3, { can_push: false })]);
  res = await app.inject({ method: 'HEAD', url: `${s.base}/branches/main` });
  assert.equal(res.statusCode, 204);
  res = await app.inject({ method: 'GET', url: `${s.base}/branches?search=merged` });
  assert.deepEqual(
    res.json().map((b: { name: string }) => b.name),
    ['merged', 'unmerged'],
  );
  for (const w of [
    { method: 'POST', url: `${s.base}/branches`, payload: { branch: 'x', ref: 'main' } },
    { method: 'DELETE', url: `${s.base}/branches/merged` },
    { method: 'DELETE', url: `${s.base}/merged_branches` },
  ] as const) {
    res = await app.inject(w);
    assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }], `${w.method} ${w.url}`);
  }
  const developer = await seed.user();
  await seed.member({ project: s.project }, developer, 30);
  const dev = (await seed.token(developer)).headers;
  res = await app.inject({ method: 'POST', url: `${s.base}/branches`, headers: dev, payload: { branch: 'dev-topic', ref: 'main' } });
  assert.equal(res.statusCode, 201);
  assert.deepEqual(res.json(), branchJson(s, 'dev-topic', s.shas.c3));
  res = await app.inject({ method: 'DELETE', url: `${s.base}/branches/dev-topic`, headers: dev });
  assert.equal(res.statusCode, 204);
  assert.equal(bareGit(s.dir, ['for-each-ref', 'refs/heads/dev-topic']), '');
});

test('a project without a repository on disk: 404 Not Found', async (t) => {
  const { app, seed, root } = await buildTestApp(t);
  const project = await seed.project();
  const res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/repository/branches`, headers: root });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Not Found' }]);
  void AUTHOR;
});
