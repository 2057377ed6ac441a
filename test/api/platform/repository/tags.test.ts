// Tags API (GitLab lib/api/tags.rb): list with order_by/sort/search/pagination, one tag, create
// (lightweight and annotated), delete; whole bodies, refs and tag objects in git, tag_push events.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, EXTERNAL_URL } from '../../../helpers/build-app.ts';
import { bareGit, workTree, commitJson, isoTime, pushEvents } from '../../../helpers/git.ts';

const T0 = 1_700_000_000;
const ZERO = '0'.repeat(40);
const _iso = isoTime;

const pick = (o: Record<string, unknown>, keys: string[]) => Object.fromEntries(keys.map((k) => [k, o[k]]));
const tagger = (time: number) => ({ GIT_COMMITTER_NAME: 'Tess Tagger', GIT_COMMITTER_EMAIL: 'tess@example.com', GIT_COMMITTER_DATE: `@${time} +0200` });

/**
 * main: c1 → c2 → c3. v1.0.0 annotated on c1 (tagged at T0+500), v1.2.0 lightweight on c2,
 * v1.10.0 annotated on c3 (tagged at T0+50), beta lightweight on c3.
 */
async function setup(t: Parameters<typeof buildTestApp>[0], visibility = 'private') {
  const ta = await buildTestApp(t);
  const { seed } = ta;
  const maintainer = await seed.user({ name: 'Mae Maintainer', email: 'mae@example.com' });
  const group = await seed.group({ visibility });
  const { project, dir } = await seed.repoProject({ namespace: group, visibility, path: 'tagged' });
  await seed.member({ project }, maintainer, 40);
  const mae = (await seed.token(maintainer)).headers;
  const wt = workTree(t, dir);
  const c1 = wt.write('a', '1').commit('Initial', { time: T0 });
  const c2 = wt.write('a', '2').commit('Second', { time: T0 + 100 });
  const c3 = wt.write('a', '3').commit('Third', { time: T0 + 200 });
  wt.git(['tag', '-a', 'v1.0.0', '-m', 'Release 1.0.0\n\nNotes', c1], tagger(T0 + 500));
  wt.git(['tag', 'v1.2.0', c2]);
  wt.git(['tag', '-a', 'v1.10.0', '-m', 'Ten', c3], tagger(T0 + 50));
  wt.git(['tag', 'beta', c3]);
  wt.push();
  const webUrl = `${EXTERNAL_URL}/${group.full_path}/tagged`;
  const base = `/api/v4/projects/${project.id}/repository`;
  const sha = (ref: string) => bareGit(dir, ['rev-parse', ref]).trim();
  return { ...ta, project, group, dir, wt, maintainer, mae, webUrl, base, sha, shas: { c1, c2, c3 } };
}

type Setup = Awaited<ReturnType<typeof setup>>;

function tagJson(s: Setup, name: string, commit: string, annotated: { message: string; time: number } | null) {
  return {
    name,
    message: annotated ? annotated.message : '',
    target: s.sha(`refs/tags/${name}`),
    commit: commitJson(s.dir, commit, s.webUrl),
    release: null,
    protected: false,
    created_at: annotated ? new Date(annotated.time * 1000).toISOString() : null,
  };
}

test('GET /tags: newest first by default, whole entities (annotated and lightweight), offset headers', async (t) => {
  const s = await setup(t);
  const { app } = s;
  const res = await app.inject({ method: 'GET', url: `${s.base}/tags`, headers: s.mae });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), [
    tagJson(s, 'v1.0.0', s.shas.c1, { message: 'Release 1.0.0\n\nNotes', time: T0 + 500 }),
    tagJson(s, 'beta', s.shas.c3, null),
    tagJson(s, 'v1.2.0', s.shas.c2, null),
    tagJson(s, 'v1.10.0', s.shas.c3, { message: 'Ten', time: T0 + 50 }),
  ]);
  // the annotated tag's target is the tag object, not the commit
  assert.notEqual(res.json()[0].target, s.shas.c1);
  assert.equal(bareGit(s.dir, ['cat-file', '-t', res.json()[0].target]).trim(), 'tag');
  assert.equal(res.json()[0].created_at, '2023-11-14T22:21:40.000Z');
  const link = (page: number, per = 20) => `<${EXTERNAL_URL}${s.base}/tags?id=${s.project.id}&order_by=updated&page=${page}&per_page=${per}&sort=desc>`;
  assert.equal(res.headers['x-total'], '4');
  assert.equal(res.headers['x-total-pages'], '1');
  assert.equal(res.headers['x-next-page'], '');
  assert.equal(res.headers.link, `${link(1)}; rel="first", ${link(1)}; rel="last"`);

  const p = await app.inject({ method: 'GET', url: `${s.base}/tags?per_page=1&page=2`, headers: s.mae });
  assert.deepEqual(p.json(), [tagJson(s, 'beta', s.shas.c3, null)]);
  assert.equal(p.headers['x-total-pages'], '4');
  assert.equal(p.headers.link, `${link(1, 1)}; rel="prev", ${link(3, 1)}; rel="next", ${link(1, 1)}; rel="first", ${link(4, 1)}; rel="last"`);
});

test('GET /tags: order_by name/updated/version, sort, search, keyset pages, bad values', async (t) => {
  const s = await setup(t);
  const { app } = s;
  const names = async (query: string) => {
    const res = await app.inject({ method: 'GET', url: `${s.base}/tags?${query}`, headers: s.mae });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().map((x: { name: string }) => x.name);
  };
  const gitOrder = (sort: string) =>
    bareGit(s.dir, ['for-each-ref', `--sort=${sort}`, '--format=%(refname:short)', 'refs/tags/'])
      .trim()
      .split('\n');
  assert.deepEqual(await names('order_by=name&sort=asc'), ['beta', 'v1.0.0', 'v1.10.0', 'v1.2.0']);
  assert.deepEqual(await names('order_by=name'), ['v1.2.0', 'v1.10.0', 'v1.0.0', 'beta']);
  assert.deepEqual(await names('order_by=version&sort=asc'), gitOrder('version:refname'));
  assert.deepEqual(
    (await names('order_by=version&sort=asc')).filter((n: string) => n !== 'beta'),
    ['v1.0.0', 'v1.2.0', 'v1.10.0'],
  );
  assert.deepEqual(await names('order_by=version&sort=desc'), gitOrder('-version:refname'));
  assert.deepEqual(await names('order_by=updated&sort=asc'), ['v1.10.0', 'v1.2.0', 'beta', 'v1.0.0']);
  assert.deepEqual(await names('sort=asc'), gitOrder('creatordate'));

  assert.deepEqual(await names('search=V1.1'), ['v1.10.0']);
  assert.deepEqual(await names('search=v1.2.0&order_by=name'), ['v1.2.0']);
  assert.deepEqual(await names('search=0&order_by=name&sort=asc'), ['v1.0.0', 'v1.10.0', 'v1.2.0']);
  assert.deepEqual(await names('search=v1.0.0&order_by=name&sort=asc'), ['v1.0.0']);
  assert.deepEqual(await names('search=%5Ev&order_by=name&sort=asc'), ['v1.0.0', 'v1.10.0', 'v1.2.0']);
  assert.deepEqual(await names('search=a%24'), ['beta']);
  assert.deepEqual(await names('search=%5Ev*0.0%24&order_by=name&sort=asc'), ['v1.0.0', 'v1.10.0']);
  assert.deepEqual(await names('search=nope'), []);

  let res = await app.inject({ method: 'GET', url: `${s.base}/tags?order_by=date`, headers: s.mae });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'order_by does not have a valid value' }]);
  res = await app.inject({ method: 'GET', url: `${s.base}/tags?sort=up`, headers: s.mae });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'sort does not have a valid value' }]);

  res = await app.inject({ method: 'GET', url: `${s.base}/tags?pagination=keyset&per_page=2&order_by=name&sort=asc`, headers: s.mae });
  assert.deepEqual(
    res.json().map((x: { name: string }) => x.name),
    ['beta', 'v1.0.0'],
  );
  assert.equal(
    res.headers.link,
    `<${EXTERNAL_URL}${s.base}/tags?id=${s.project.id}&order_by=name&page=1&page_token=v1.0.0&pagination=keyset&per_page=2&sort=asc>; rel="next"`,
  );
  res = await app.inject({ method: 'GET', url: `${s.base}/tags?pagination=keyset&per_page=2&order_by=name&sort=asc&page_token=v1.0.0`, headers: s.mae });
  assert.deepEqual(
    res.json().map((x: { name: string }) => x.name),
    ['v1.10.0', 'v1.2.0'],
  );
  assert.equal(res.headers.link, undefined);
  res = await app.inject({ method: 'GET', url: `${s.base}/tags?pagination=keyset&page_token=unknown`, headers: s.mae });
  assert.deepEqual([res.statusCode, res.json()], [422, { message: 'Invalid page token: refs/tags/unknown' }]);
});

test('GET /tags/:tag_name: one tag, dots, 404', async (t) => {
  const s = await setup(t);
  const { app } = s;
  let res = await app.inject({ method: 'GET', url: `${s.base}/tags/v1.10.0`, headers: s.mae });
  assert.deepEqual([res.statusCode, res.json()], [200, tagJson(s, 'v1.10.0', s.shas.c3, { message: 'Ten', time: T0 + 50 })]);
  res = await app.inject({ method: 'GET', url: `${s.base}/tags/beta`, headers: s.mae });
  assert.deepEqual(res.json(), tagJson(s, 'beta', s.shas.c3, null));
  for (const missing of ['unknown', 'v1', '-x', 'a..b']) {
    res = await app.inject({ method: 'GET', url: `${s.base}/tags/${missing}`, headers: s.mae });
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Tag Not Found' }], missing);
  }
});

test('POST /tags: lightweight and annotated tags by the caller, 201 entities, git state, tag_push events, refusals', async (t) => {
  const s = await setup(t);
  const { app, c } = s;
  const before = (await pushEvents(c)).length;

  let res = await app.inject({ method: 'POST', url: `${s.base}/tags`, headers: s.mae, payload: { tag_name: 'v2.0', ref: 'main' } });
  assert.equal(res.statusCode, 201);
  assert.deepEqual(res.json(), tagJson(s, 'v2.0', s.shas.c3, null));
  assert.equal(s.sha('refs/tags/v2.0'), s.shas.c3);
  assert.equal(bareGit(s.dir, ['cat-file', '-t', 'refs/tags/v2.0']).trim(), 'commit');

  const t0 = Math.floor(Date.now() / 1000);
  res = await app.inject({
    method: 'POST',
    url: `${s.base}/tags`,
    headers: s.mae,
    payload: { tag_name: 'release/2.1', ref: s.shas.c2, message: '  Release 2.1\n\n# not a comment  \n' },
  });
  assert.equal(res.statusCode, 201);
  const tagSha = s.sha('refs/tags/release/2.1');
  const raw = bareGit(s.dir, ['cat-file', 'tag', tagSha]);
  const m = /^object (\w+)\ntype commit\ntag release\/2\.1\ntagger Mae Maintainer <mae@example\.com> (\d+) \+0000\n\nRelease 2\.1\n\n# not a comment$/.exec(
    raw,
  );
  assert.ok(m, raw);
  assert.equal(m[1], s.shas.c2);
  const taggedAt = Number(m[2]);
  assert.ok(taggedAt >= t0 && taggedAt <= t0 + 5);
  assert.deepEqual(res.json(), tagJson(s, 'release/2.1', s.shas.c2, { message: 'Release 2.1\n\n# not a comment', time: taggedAt }));
  res = await app.inject({ method: 'GET', url: `${s.base}/tags/release%2F2.1`, headers: s.mae });
  assert.equal(res.json().target, tagSha);

  // a blank message makes a lightweight tag
  res = await app.inject({
    method: 'POST',
    url: `${s.base}/tags`,
    headers: { ...s.mae, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'tag_name=v2.3&ref=v1.2.0&message=%20%20',
  });
  assert.equal(res.statusCode, 201);
  assert.deepEqual(res.json(), tagJson(s, 'v2.3', s.shas.c2, null));
  // a tag name as ref: the new (lightweight) tag names the same tag object, as Gitaly resolves the revision unpeeled
  res = await app.inject({ method: 'POST', url: `${s.base}/tags`, headers: s.mae, payload: { tag_name: 'v2.2', ref: 'v1.0.0' } });
  assert.equal(res.statusCode, 201);
  assert.deepEqual(res.json(), tagJson(s, 'v2.2', s.shas.c1, { message: 'Release 1.0.0\n\nNotes', time: T0 + 500 }));

  const evs = (await pushEvents(c)).slice(before);
  assert.deepEqual(
    evs.map((e: { event_name: string }) => e.event_name),
    ['tag_push', 'repository_update', 'tag_push', 'repository_update', 'tag_push', 'repository_update', 'tag_push', 'repository_update'],
  );
  const keys = ['object_kind', 'before', 'after', 'ref', 'checkout_sha', 'user_username', 'project_id', 'total_commits_count'];
  assert.deepEqual(pick(evs[0], keys), {
    object_kind: 'tag_push',
    before: ZERO,
    after: s.shas.c3,
    ref: 'refs/tags/v2.0',
    checkout_sha: s.shas.c3,
    user_username: s.maintainer.username,
    project_id: s.project.id,
    total_commits_count: 1, // Git::TagHooksService: the tagged commit
  });
  assert.deepEqual(pick(evs[2], keys), {
    object_kind: 'tag_push',
    before: ZERO,
    after: tagSha,
    ref: 'refs/tags/release/2.1',
    checkout_sha: s.shas.c2,
    user_username: s.maintainer.username,
    project_id: s.project.id,
    total_commits_count: 1, // Git::TagHooksService: the tagged commit
  });
  assert.deepEqual(evs[3].changes, [{ before: ZERO, after: tagSha, ref: 'refs/tags/release/2.1' }]);
  const v22 = s.sha('refs/tags/v2.2');
  assert.equal(v22, s.sha('refs/tags/v1.0.0'));
  assert.deepEqual(evs[7].refs, ['refs/tags/v2.2']);
  assert.deepEqual(pick(evs[6], ['after', 'checkout_sha']), { after: v22, checkout_sha: s.shas.c1 });

  const refsNow = bareGit(s.dir, ['for-each-ref', '--format=%(refname) %(objectname)']);
  const eventsNow = (await pushEvents(c)).length;
  const refused = async (payload: unknown, status: number, body: unknown) => {
    const r = await app.inject({ method: 'POST', url: `${s.base}/tags`, headers: s.mae, payload: payload as object });
    assert.deepEqual([r.statusCode, r.json()], [status, body], JSON.stringify(payload));
  };
  await refused({ tag_name: 'v2.0', ref: 'main' }, 400, { message: 'Tag v2.0 already exists' });
  await refused({ tag_name: 'v2.0', ref: 'main', message: 'again' }, 400, { message: 'Tag v2.0 already exists' });
  await refused({ tag_name: 'v2.0', ref: 'foo' }, 400, { message: 'Target foo is invalid' });
  for (const bad of ['new design', '-x', '--force', 'a..b', 'HEAD', 'refs/heads/x', 'x.lock', 'x/', 'a~1', 'a^', 'a:b', 'a@{1}']) {
    await refused({ tag_name: bad, ref: 'main', message: 'm' }, 400, { message: 'Tag name invalid' });
  }
  for (const bad of ['foo', '-x', '--all', 'main~1', 'main:a', 'deadbeef']) {
    await refused({ tag_name: 'new_tag', ref: bad }, 400, { message: `Target ${bad} is invalid` });
  }
  await refused({ tag_name: 'new_tag', ref: '' }, 400, { message: 'Target is empty' });
  await refused({ tag_name: 'new design', ref: ' ' }, 400, { message: 'Target is empty' });
  await refused({ ref: 'main' }, 400, { error: 'tag_name is missing' });
  await refused({}, 400, { error: 'tag_name is missing, ref is missing' });
  assert.equal(bareGit(s.dir, ['for-each-ref', '--format=%(refname) %(objectname)']), refsNow);
  assert.equal((await pushEvents(c)).length, eventsNow);
});

test('DELETE /tags/:tag_name: 204, the ref is gone, tag_push event; 404, 412', async (t) => {
  const s = await setup(t);
  const { app, c } = s;
  const tagSha = s.sha('refs/tags/v1.0.0');
  let res = await app.inject({ method: 'DELETE', url: `${s.base}/tags/v1.0.0`, headers: s.mae });
  assert.equal(res.statusCode, 204);
  assert.equal(res.body, '');
  assert.equal(bareGit(s.dir, ['for-each-ref', 'refs/tags/v1.0.0']), '');
  const evs = await pushEvents(c);
  assert.deepEqual(
    evs.map((e: { event_name: string }) => e.event_name),
    ['tag_push', 'repository_update'],
  );
  assert.deepEqual(pick(evs[0], ['before', 'after', 'ref', 'checkout_sha']), { before: tagSha, after: ZERO, ref: 'refs/tags/v1.0.0', checkout_sha: null });
  assert.deepEqual(evs[1].changes, [{ before: tagSha, after: ZERO, ref: 'refs/tags/v1.0.0' }]);

  res = await app.inject({ method: 'DELETE', url: `${s.base}/tags/v1.0.0`, headers: s.mae });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Tag Not Found' }]);
  res = await app.inject({ method: 'DELETE', url: `${s.base}/tags/-x`, headers: s.mae });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Tag Not Found' }]);
  // beta's commit was authored at T0+200
  res = await app.inject({
    method: 'DELETE',
    url: `${s.base}/tags/beta`,
    headers: { ...s.mae, 'if-unmodified-since': new Date((T0 + 199) * 1000).toUTCString() },
  });
  assert.deepEqual([res.statusCode, res.json()], [412, { message: '412 Precondition Failed' }]);
  res = await app.inject({ method: 'DELETE', url: `${s.base}/tags/beta`, headers: { ...s.mae, 'if-unmodified-since': 'not a date' } });
  assert.equal(res.statusCode, 204);
  assert.equal(bareGit(s.dir, ['for-each-ref', '--format=%(refname:short)', 'refs/tags/']), 'v1.10.0\nv1.2.0\n');
});

test('permissions: reporters read only, anonymous callers, guests, disabled repository, public projects', async (t) => {
  const s = await setup(t);
  const { app, seed, c } = s;
  const reporter = await seed.user();
  await seed.member({ project: s.project }, reporter, 20);
  const rep = (await seed.token(reporter)).headers;
  const guest = await seed.user();
  await seed.member({ project: s.project }, guest, 10);
  const gst = (await seed.token(guest)).headers;
  const refs = bareGit(s.dir, ['for-each-ref']);

  let res = await app.inject({ method: 'GET', url: `${s.base}/tags/beta`, headers: rep });
  assert.deepEqual([res.statusCode, res.json()], [200, tagJson(s, 'beta', s.shas.c3, null)]);
  res = await app.inject({ method: 'POST', url: `${s.base}/tags`, headers: rep, payload: { tag_name: 'x', ref: 'main' } });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  res = await app.inject({ method: 'DELETE', url: `${s.base}/tags/beta`, headers: rep });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  // the tag is looked up first
  res = await app.inject({ method: 'DELETE', url: `${s.base}/tags/unknown`, headers: rep });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Tag Not Found' }]);
  res = await app.inject({ method: 'GET', url: `${s.base}/tags`, headers: gst });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  for (const r of [
    { method: 'GET', url: `${s.base}/tags` },
    { method: 'GET', url: `${s.base}/tags/beta` },
    { method: 'POST', url: `${s.base}/tags`, payload: { tag_name: 'x', ref: 'main' } },
    { method: 'DELETE', url: `${s.base}/tags/beta` },
  ] as const) {
    res = await app.inject(r);
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Project Not Found' }], `${r.method} ${r.url}`);
  }
  // the tags API says 403 for a disabled repository (the branches API 404)
  await c.db.kysely
    .updateTable('projects')
    .set({ settings: JSON.stringify({ repository_access_level: 'disabled' }) })
    .where('id', '=', s.project.id)
    .execute();
  res = await app.inject({ method: 'GET', url: `${s.base}/tags`, headers: s.mae });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);

  // public: anonymous reads, writes are 403
  await c.db.kysely.updateTable('projects').set({ settings: '{}', visibility: 'public' }).where('id', '=', s.project.id).execute();
  res = await app.inject({ method: 'GET', url: `${s.base}/tags?order_by=name&sort=asc` });
  assert.deepEqual(
    res.json().map((x: { name: string }) => x.name),
    ['beta', 'v1.0.0', 'v1.10.0', 'v1.2.0'],
  );
  res = await app.inject({ method: 'GET', url: `${s.base}/tags/v1.2.0` });
  assert.deepEqual(res.json(), tagJson(s, 'v1.2.0', s.shas.c2, null));
  res = await app.inject({ method: 'POST', url: `${s.base}/tags`, payload: { tag_name: 'x', ref: 'main' } });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  res = await app.inject({ method: 'DELETE', url: `${s.base}/tags/beta` });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  assert.equal(bareGit(s.dir, ['for-each-ref']), refs);
  assert.deepEqual(await pushEvents(c), []);

  // a developer tags
  const developer = await seed.user({ name: 'Dee Dev', email: 'dee@example.com' });
  await seed.member({ project: s.project }, developer, 30);
  res = await app.inject({
    method: 'POST',
    url: `${s.base}/tags`,
    headers: (await seed.token(developer)).headers,
    payload: { tag_name: 'dev-tag', ref: 'beta', message: 'By Dee' },
  });
  assert.equal(res.statusCode, 201);
  assert.match(bareGit(s.dir, ['cat-file', 'tag', 'refs/tags/dev-tag']), /^tagger Dee Dev <dee@example\.com> /m);
});

test('an empty repository has no tags; a project without a repository is 404', async (t) => {
  const { app, seed, root } = await buildTestApp(t);
  const { project } = await seed.repoProject();
  let res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/repository/tags`, headers: root });
  assert.deepEqual([res.statusCode, res.json()], [200, []]);
  assert.equal(res.headers['x-total'], '0');
  res = await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/repository/tags`, headers: root, payload: { tag_name: 'v1', ref: 'main' } });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: 'Target main is invalid' }]);
  const bare = await seed.project();
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${bare.id}/repository/tags`, headers: root });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Not Found' }]);
  void workTree;
});
