// The commits API against real repositories: history (refs, ranges, paths, dates, authors, all refs,
// first parent, topological order, pagination), one commit with its stats, the refs containing a
// commit, and commits of file actions (new branches, force, empty repositories, every refusal), with
// the state of git and the outbox afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, EXTERNAL_URL } from '../../../helpers/build-app.ts';
import { eventsAfter, lastJobId } from '../../../helpers/outbox.ts';
import { bareGit, workTree, AUTHOR } from '../../../helpers/git.ts';
import { ZERO_SHA } from '../../../../src/git/refs.ts';

const BOB = { name: 'Bob Builder', email: 'bob@example.com' };
const T0 = 1_600_000_000;

/** GitLab's rendering of git's strict ISO date (%aI): milliseconds added. */
const gitlabDate = (iso: string) => iso.replace(/([+-]\d{2}:\d{2}|Z)$/, '.000$1');

/** The Commit entity computed from git's own answers. */
function expected(dir: string, web: string, sha: string, opts: { trailers?: boolean } = {}) {
  const [id, parents, an, ae, ad, cn, ce, cd] = bareGit(dir, ['show', '-s', '--format=%H%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI', sha])
    .trim()
    .split('\0');
  const raw = bareGit(dir, ['cat-file', 'commit', sha]);
  const message = raw.slice(raw.indexOf('\n\n') + 2);
  const trailers: Record<string, string> = {};
  const extended: Record<string, string[]> = {};
  if (opts.trailers) {
    for (const line of bareGit(dir, ['show', '-s', '--format=%(trailers:unfold,only)', sha]).split('\n').filter(Boolean)) {
      const [k, ...v] = line.split(': ');
      trailers[k] = v.join(': ');
      (extended[k] ??= []).push(v.join(': '));
    }
  }
  return {
    id,
    short_id: id.slice(0, 8),
    created_at: gitlabDate(cd),
    parent_ids: parents ? parents.split(' ') : [],
    title: message.split('\n')[0],
    message,
    author_name: an,
    author_email: ae,
    authored_date: gitlabDate(ad),
    committer_name: cn,
    committer_email: ce,
    committed_date: gitlabDate(cd),
    trailers,
    extended_trailers: extended,
    web_url: `${web}/-/commit/${id}`,
  };
}

/** `git diff --numstat parent commit` summed, as Gitaly's CommitStats. */
function gitStats(dir: string, sha: string) {
  const parent = bareGit(dir, ['rev-list', '--parents', '-n', '1', sha]).trim().split(' ')[1] ?? '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
  let additions = 0;
  let deletions = 0;
  for (const line of bareGit(dir, ['diff', '--numstat', parent, sha]).split('\n').filter(Boolean)) {
    const [a, d] = line.split('\t');
    additions += a === '-' ? 0 : Number(a);
    deletions += d === '-' ? 0 : Number(d);
  }
  return { additions, deletions, total: additions + deletions };
}

const log = (dir: string, args: string[]) =>
  bareGit(dir, ['log', '--format=%H', ...args])
    .split('\n')
    .filter(Boolean);

/**
 * main: c1 (README, +0200) → c2 (docs, Bob) → c4 (README again, trailers) → c5 merge of feature/x
 * feature/x: c2 → c3 (f.txt, executable)   tags: v0 (lightweight, c1), v1.0 (annotated, c2)
 */
async function fixture(t: Parameters<typeof buildTestApp>[0], visibility = 'private') {
  const app = await buildTestApp(t);
  const owner = await app.seed.user({ name: 'Owner Person', email: 'owner@example.com' });
  const group = await app.seed.group({ path: 'acme', name: 'Acme' });
  const { project, dir } = await app.seed.repoProject({ namespace: group, visibility, path: 'tools' });
  await app.seed.member({ project }, owner, 40);
  const { headers } = await app.seed.token(owner);
  const wt = workTree(t, dir);
  const c1 = wt.write('README.md', '# Tools\n').commit('Initial commit', { time: T0, tz: '+0200' });
  wt.tag('v0');
  const c2 = wt
    .write('docs/a.md', 'one\ntwo\n')
    .write('docs/b.md', 'b\n')
    .commit('Add docs\n\nLonger description.\n', { time: T0 + 100, author: BOB });
  wt.tag('v1.0', 'Version one');
  wt.checkout('feature/x', true);
  const c3 = wt.write('f.txt', 'feature\n', 0o755).commit('Feature work', { time: T0 + 200 });
  wt.checkout('main');
  const c4 = wt
    .write('README.md', '# Tools\n\nBetter.\n')
    .write('docs/a.md', 'one\n')
    .commit('Update README\n\nMore words.\n\nChangelog: added\nSigned-off-by: Ada <ada@example.com>\n', { time: T0 + 300, tz: '-0500' });
  const env = {
    GIT_AUTHOR_NAME: AUTHOR.name,
    GIT_AUTHOR_EMAIL: AUTHOR.email,
    GIT_AUTHOR_DATE: `@${T0 + 400} +0000`,
    GIT_COMMITTER_NAME: AUTHOR.name,
    GIT_COMMITTER_EMAIL: AUTHOR.email,
    GIT_COMMITTER_DATE: `@${T0 + 400} +0000`,
  };
  wt.git(['merge', '-q', '--no-ff', '-m', "Merge branch 'feature/x'", 'feature/x'], env);
  const c5 = wt.git(['rev-parse', 'HEAD']);
  wt.push();
  const web = `${EXTERNAL_URL}/acme/tools`;
  return { ...app, owner, group, project, dir, headers, wt, web, c1, c2, c3, c4, c5, base: `/api/v4/projects/${project.id}/repository` };
}

test('GET /commits: the default branch page by page, with GitLab’s limited pagination headers', async (t) => {
  const f = await fixture(t);
  const all = log(f.dir, ['main']);
  assert.deepEqual(all, [f.c5, f.c4, f.c3, f.c2, f.c1]);

  let res = await f.app.inject({ method: 'GET', url: `${f.base}/commits`, headers: f.headers });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(
    res.json(),
    all.map((sha) => expected(f.dir, f.web, sha)),
  );
  // trailers only on request
  assert.deepEqual(res.json()[1].trailers, {});
  assert.equal(res.headers['x-total'], undefined);
  assert.equal(res.headers['x-total-pages'], undefined);
  assert.equal(res.headers['x-page'], '1');
  assert.equal(res.headers['x-per-page'], '20');
  assert.equal(res.headers['x-next-page'], '');
  assert.equal(res.headers['x-prev-page'], '');
  const link = (page: number, per = 20) => `<${EXTERNAL_URL}${f.base}/commits?id=${f.project.id}&order=default&page=${page}&per_page=${per}&trailers=false>`;
  assert.equal(res.headers.link, `${link(1)}; rel="first"`);

  // two per page: next while there are more, prev after the first, no last (no count)
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits?per_page=2`, headers: f.headers });
  assert.deepEqual(
    res.json().map((x: any) => x.id),
    all.slice(0, 2),
  );
  assert.equal(res.headers['x-next-page'], '2');
  assert.equal(res.headers.link, `${link(2, 2)}; rel="next", ${link(1, 2)}; rel="first"`);
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits?per_page=2&page=3`, headers: f.headers });
  assert.deepEqual(
    res.json().map((x: any) => x.id),
    all.slice(4),
  );
  assert.equal(res.headers['x-next-page'], '');
  assert.equal(res.headers['x-prev-page'], '2');
  assert.equal(res.headers.link, `${link(2, 2)}; rel="prev", ${link(1, 2)}; rel="first"`);
  // exactly a full last page: no next page (one more commit is read to know)
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits?per_page=5`, headers: f.headers });
  assert.equal(res.json().length, 5);
  assert.equal(res.headers['x-next-page'], '');
  // past the end
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits?per_page=2&page=9`, headers: f.headers });
  assert.deepEqual(res.json(), []);
  assert.equal(res.headers['x-prev-page'], '8');
  // per_page above 100 is capped, the link keeps the requested value
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits?per_page=500`, headers: f.headers });
  assert.equal(res.headers['x-per-page'], '100');
  assert.equal(res.headers.link, `${link(1, 500)}; rel="first"`);

  // trailers=true parses them
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits?trailers=true`, headers: f.headers });
  assert.deepEqual(
    res.json(),
    all.map((sha) => expected(f.dir, f.web, sha, { trailers: true })),
  );
  assert.deepEqual(res.json()[1].trailers, { Changelog: 'added', 'Signed-off-by': 'Ada <ada@example.com>' });
});

test('GET /commits: refs, ranges, paths, dates, authors, all, first_parent, order and with_stats agree with git log', async (t) => {
  const f = await fixture(t);
  const ids = async (query: string) => {
    const res = await f.app.inject({ method: 'GET', url: `${f.base}/commits?${query}`, headers: f.headers });
    assert.equal(res.statusCode, 200, `${query}: ${res.body}`);
    return res.json().map((x: any) => x.id);
  };
  assert.deepEqual(await ids('ref_name=feature/x'), log(f.dir, ['feature/x']));
  assert.deepEqual(await ids('ref_name=feature%2Fx'), [f.c3, f.c2, f.c1]);
  assert.deepEqual(await ids('ref_name=v1.0'), [f.c2, f.c1]);
  assert.deepEqual(await ids('ref_name=v0'), [f.c1]);
  assert.deepEqual(await ids(`ref_name=${f.c4.slice(0, 10)}`), log(f.dir, [f.c4]));
  assert.deepEqual(await ids('ref_name=HEAD'), log(f.dir, ['HEAD']));
  assert.deepEqual(await ids('ref_name=main~1'), log(f.dir, ['main~1']));
  assert.deepEqual(await ids('ref_name='), log(f.dir, ['main']));
  assert.deepEqual(await ids('ref_name=v1.0..main'), log(f.dir, ['v1.0..main']));
  assert.deepEqual(await ids('ref_name=feature/x...main~1'), log(f.dir, ['feature/x...main~1']));
  // an unknown ref lists nothing
  assert.deepEqual(await ids('ref_name=does-not-exist'), []);
  assert.deepEqual(await ids('ref_name=v1.0..nope'), []);

  assert.deepEqual(await ids('path=docs/a.md'), log(f.dir, ['main', '--', 'docs/a.md']));
  assert.deepEqual(await ids('path=docs/a.md'), [f.c4, f.c2]);
  assert.deepEqual(await ids('path=docs/'), [f.c4, f.c2]);
  assert.deepEqual(await ids('path=f.txt&ref_name=feature/x'), [f.c3]);
  assert.deepEqual(await ids('path=nothing-here'), []);
  // pathspec magic is taken literally
  assert.deepEqual(await ids('path=*.md'), []);

  // since / until are inclusive; a time without zone is UTC; offsets are honoured
  const iso = (s: number) => new Date(s * 1000).toISOString();
  assert.deepEqual(await ids(`since=${iso(T0 + 200)}`), [f.c5, f.c4, f.c3]);
  assert.deepEqual(await ids(`until=${iso(T0 + 100)}`), [f.c2, f.c1]);
  assert.deepEqual(
    await ids(`since=${iso(T0 + 100)}&until=${iso(T0 + 300)}`),
    log(f.dir, ['main', `--since=@${T0 + 100} +0000`, `--until=@${T0 + 300} +0000`]),
  );
  assert.deepEqual(await ids(`since=${iso(T0 + 300).replace('Z', '')}`), [f.c5, f.c4]);
  assert.deepEqual(await ids(`since=${encodeURIComponent(new Date((T0 + 300 + 3600) * 1000).toISOString().slice(0, 19) + '+01:00')}`), [f.c5, f.c4]);
  assert.deepEqual(await ids('since=2099-01-01'), []);

  assert.deepEqual(await ids('author=Bob'), [f.c2]);
  assert.deepEqual(await ids('author=bob@example'), [f.c2]);
  assert.deepEqual(await ids('author='), log(f.dir, ['main']));
  assert.deepEqual(await ids('author=nobody'), []);

  // all: every ref, the page oldest first (Gitaly's --all --reverse)
  assert.deepEqual(await ids('all=true'), log(f.dir, ['--all']).reverse());
  assert.deepEqual(await ids('all=true&per_page=2'), log(f.dir, ['--all', '-n', '2']).reverse());
  assert.deepEqual(await ids('all=true&ref_name=v0'), log(f.dir, ['--all']).reverse());

  assert.deepEqual(await ids('first_parent=true'), log(f.dir, ['--first-parent', 'main']));
  assert.deepEqual(await ids('first_parent=true'), [f.c5, f.c4, f.c2, f.c1]);
  assert.deepEqual(await ids('order=topo'), log(f.dir, ['--topo-order', 'main']));

  const res = await f.app.inject({ method: 'GET', url: `${f.base}/commits?with_stats=true&ref_name=main`, headers: f.headers });
  assert.deepEqual(
    res.json(),
    log(f.dir, ['main']).map((sha) => ({ ...expected(f.dir, f.web, sha), stats: gitStats(f.dir, sha) })),
  );
  assert.deepEqual(res.json().find((x: any) => x.id === f.c1).stats, { additions: 1, deletions: 0, total: 1 });
  assert.deepEqual(res.json().find((x: any) => x.id === f.c4).stats, { additions: 2, deletions: 1, total: 3 });
  // a merge commit counts against its first parent
  assert.deepEqual(res.json().find((x: any) => x.id === f.c5).stats, { additions: 1, deletions: 0, total: 1 });
});

test('GET /commits: bad inputs answer GitLab’s errors, never reach git as options; access rules', async (t) => {
  const f = await fixture(t);
  const get = (query: string, headers: Record<string, string> = f.headers) => f.app.inject({ method: 'GET', url: `${f.base}/commits?${query}`, headers });
  for (const bad of ['-main', '--all', '--output=/tmp/x', 'main branch', 'main:README.md', 'a..-b', '..', 'main@{1}', 'main\n--all']) {
    const res = await get(`ref_name=${encodeURIComponent(bad)}`);
    assert.equal(res.statusCode, 400, bad);
    assert.deepEqual(res.json(), { message: 'ref_name is invalid' }, bad);
  }
  // a NUL byte anywhere is refused before any route runs (plugins/malformed.ts)
  assert.deepEqual(await get('ref_name=%00').then((r) => [r.statusCode, r.json()]), [400, { error: 'ref_name is invalid' }]);
  let res = await get('since=invalid-date');
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'since is invalid' }]);
  res = await get('since=2021-13-01&until=yesterday');
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'since is invalid, until is invalid' }]);
  for (const bad of ['../etc/passwd', 'docs/../README.md', '/etc/passwd', '-p', '.git/config']) {
    res = await get(`path=${encodeURIComponent(bad)}`);
    assert.deepEqual([res.statusCode, res.json()], [400, { error: 'path is invalid' }], bad);
  }
  res = await get('order=random');
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'order does not have a valid value' }]);
  res = await get('per_page=0');
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'per_page has a value not allowed' }]);
  res = await get('all=maybe');
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'all is invalid' }]);
  // an author that looks like an option is a pattern, not an option
  res = await get('author=--all');
  assert.deepEqual([res.statusCode, res.json()], [200, []]);
  // an author git cannot compile as a regular expression is the caller's error, not the server's
  for (const bad of ['[', 'Bob\\(', 'a\\{1', '[[:nope:]]']) {
    res = await get(`author=${encodeURIComponent(bad)}`);
    assert.deepEqual([res.statusCode, res.json()], [400, { error: 'author is invalid' }], bad);
  }
  res = await get(`author=${encodeURIComponent('B.b')}`);
  assert.deepEqual([res.statusCode, res.json().map((x: any) => x.id)], [200, [f.c2]]);

  // private project: anonymous and non-members do not see it
  res = await get('', {});
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Project Not Found' }]);
  const stranger = await f.seed.user();
  res = await get('', (await f.seed.token(stranger)).headers);
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Project Not Found' }]);
  // a guest may not read code
  const guest = await f.seed.user();
  await f.seed.member({ project: f.project }, guest, 10);
  res = await get('', (await f.seed.token(guest)).headers);
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);

  // public project: anonymous reads
  await f.c.db.kysely.updateTable('projects').set({ visibility: 'public' }).where('id', '=', f.project.id).execute();
  res = await get('per_page=1', {});
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), [expected(f.dir, f.web, f.c5)]);
});

test('GET /commits: an empty repository lists nothing; a project without repository is 404', async (t) => {
  const { app, seed, root } = await buildTestApp(t);
  const { project } = await seed.repoProject({ visibility: 'public' });
  let res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/repository/commits`, headers: root });
  assert.deepEqual([res.statusCode, res.json()], [200, []]);
  assert.equal(res.headers['x-next-page'], '');
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/repository/commits/main`, headers: root });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Commit Not Found' }]);

  const bare = await seed.project({ visibility: 'public' });
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${bare.id}/repository/commits`, headers: root });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Repository Not Found' }]);
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${bare.id}/repository/commits/main`, headers: root });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Commit Not Found' }]);
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${bare.id}/repository/commits/main/refs`, headers: root });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Commit Not Found' }]);
});

test('GET /commits/:sha: the commit detail with stats, by SHA, branch (with a slash) or tag', async (t) => {
  const f = await fixture(t, 'public');
  // trailers are not parsed for one commit (Gitaly's FindCommit), only in lists with trailers=true
  const detail = (sha: string, stats = true) => ({
    ...expected(f.dir, f.web, sha),
    ...(stats ? { stats: gitStats(f.dir, sha) } : {}),
    status: null,
    project_id: f.project.id,
    last_pipeline: null,
  });
  let res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${f.c4}`, headers: f.headers });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), detail(f.c4));
  assert.deepEqual(res.json().stats, { additions: 2, deletions: 1, total: 3 });
  assert.equal(res.json().created_at, '2020-09-13T07:31:40.000-05:00');
  assert.deepEqual(Object.keys(res.json()).slice(-5), ['web_url', 'stats', 'status', 'project_id', 'last_pipeline']);

  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${f.c4}?stats=false`, headers: f.headers });
  assert.deepEqual(res.json(), detail(f.c4, false));
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/feature%2Fx`, headers: f.headers });
  assert.deepEqual(res.json(), detail(f.c3));
  assert.deepEqual(res.json().stats, { additions: 1, deletions: 0, total: 1 });
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/v1.0`, headers: f.headers });
  assert.deepEqual(res.json(), detail(f.c2));
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/main`, headers: f.headers });
  assert.deepEqual(res.json(), detail(f.c5));
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${f.c1.slice(0, 8)}`, headers: {} });
  assert.deepEqual(res.json(), detail(f.c1));
  assert.equal(res.json().created_at, '2020-09-13T14:26:40.000+02:00');
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/main~2`, headers: f.headers });
  assert.deepEqual(res.json().id, f.c2);

  for (const bad of ['nope', '0000000000000000000000000000000000000000', '--all', '-p', 'main:README.md', 'main..v0', '\nmain']) {
    res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${encodeURIComponent(bad)}`, headers: f.headers });
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Commit Not Found' }], bad);
  }
  // a NUL byte anywhere is refused before any route runs (plugins/malformed.ts)
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/main%00`, headers: f.headers });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'sha is invalid' }]);
  // the tree of a commit is not a commit
  const tree = bareGit(f.dir, ['rev-parse', `${f.c1}^{tree}`]).trim();
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${tree}`, headers: f.headers });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Commit Not Found' }]);
});

test('GET /commits/:sha/refs: branches then tags containing the commit, with full pagination headers', async (t) => {
  const f = await fixture(t);
  f.wt.checkout('main').git(['branch', 'zzz', f.c1]);
  f.wt.push('zzz');
  const contains = (sha: string, kind: 'heads' | 'tags') =>
    bareGit(f.dir, ['for-each-ref', `--contains=${sha}`, '--format=%(refname:lstrip=2)', `refs/${kind}/`])
      .split('\n')
      .filter(Boolean);
  let res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${f.c2}/refs`, headers: f.headers });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), [
    { type: 'branch', name: 'feature/x' },
    { type: 'branch', name: 'main' },
    { type: 'tag', name: 'v1.0' },
  ]);
  assert.deepEqual(res.json(), [
    ...contains(f.c2, 'heads').map((name) => ({ type: 'branch', name })),
    ...contains(f.c2, 'tags').map((name) => ({ type: 'tag', name })),
  ]);
  assert.equal(res.headers['x-total'], '3');
  assert.equal(res.headers['x-total-pages'], '1');
  const link = (page: number, per: number, type = 'all') =>
    `<${EXTERNAL_URL}${f.base}/commits/${f.c2}/refs?id=${f.project.id}&page=${page}&per_page=${per}&sha=${f.c2}&type=${type}>`;
  assert.equal(res.headers.link, `${link(1, 20)}; rel="first", ${link(1, 20)}; rel="last"`);

  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${f.c1}/refs?type=branch&per_page=2`, headers: f.headers });
  assert.deepEqual(res.json(), [
    { type: 'branch', name: 'feature/x' },
    { type: 'branch', name: 'main' },
  ]);
  assert.equal(res.headers['x-total'], '3');
  assert.equal(res.headers['x-next-page'], '2');
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${f.c1}/refs?type=branch&per_page=2&page=2`, headers: f.headers });
  assert.deepEqual(res.json(), [{ type: 'branch', name: 'zzz' }]);
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/v0/refs?type=tag`, headers: f.headers });
  assert.deepEqual(res.json(), [
    { type: 'tag', name: 'v0' },
    { type: 'tag', name: 'v1.0' },
  ]);
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${f.c3}/refs`, headers: f.headers });
  assert.deepEqual(res.json(), [
    { type: 'branch', name: 'feature/x' },
    { type: 'branch', name: 'main' },
  ]);

  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${f.c2}/refs?type=heads`, headers: f.headers });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'type does not have a valid value' }]);
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/--all/refs`, headers: f.headers });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Commit Not Found' }]);
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${f.c2}/refs`, headers: {} });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Project Not Found' }]);
});

test('POST /commits: every action in one commit on the default branch; the detail, git and the outbox agree', async (t) => {
  const f = await fixture(t);
  const jobs = await lastJobId(f.c);
  const res = await f.app.inject({
    method: 'POST',
    url: `${f.base}/commits`,
    headers: f.headers,
    payload: {
      branch: 'main',
      commit_message: 'Many changes\n\nWith a body.',
      actions: [
        { action: 'create', file_path: 'new/dir/file.txt', content: 'hello\nworld\n' },
        { action: 'create', file_path: 'bin/run', content: Buffer.from('#!/bin/sh\necho hi\n').toString('base64'), encoding: 'base64', execute_filemode: true },
        { action: 'update', file_path: 'README.md', content: '# Tools v2\n' },
        { action: 'delete', file_path: 'docs/b.md' },
        { action: 'move', file_path: 'docs/renamed.md', previous_path: 'docs/a.md' },
        { action: 'chmod', file_path: 'f.txt', execute_filemode: false },
      ],
    },
  });
  assert.equal(res.statusCode, 201, res.body);
  const sha = bareGit(f.dir, ['rev-parse', 'refs/heads/main']).trim();
  assert.deepEqual(res.json(), {
    ...expected(f.dir, f.web, sha),
    stats: gitStats(f.dir, sha),
    status: null,
    project_id: f.project.id,
    last_pipeline: null,
  });
  assert.deepEqual(res.json().parent_ids, [f.c5]);
  assert.equal(res.json().author_name, 'Owner Person');
  assert.equal(res.json().author_email, 'owner@example.com');
  assert.equal(res.json().committer_email, 'owner@example.com');
  assert.equal(res.json().message, 'Many changes\n\nWith a body.\n');
  assert.deepEqual(res.json().stats, { additions: 5, deletions: 4, total: 9 });

  assert.equal(bareGit(f.dir, ['show', 'main:new/dir/file.txt']), 'hello\nworld\n');
  assert.equal(bareGit(f.dir, ['show', 'main:bin/run']), '#!/bin/sh\necho hi\n');
  assert.equal(bareGit(f.dir, ['show', 'main:README.md']), '# Tools v2\n');
  assert.equal(bareGit(f.dir, ['show', 'main:docs/renamed.md']), 'one\n');
  assert.equal(
    bareGit(f.dir, ['ls-tree', '-r', '--format=%(objectmode) %(path)', 'main']),
    ['100755 bin/run', '100644 docs/renamed.md', '100644 f.txt', '100644 new/dir/file.txt', '100644 README.md']
      .sort((a, b) => (a.split(' ')[1] < b.split(' ')[1] ? -1 : 1))
      .join('\n') + '\n',
  );

  const events = await eventsAfter(f.c, jobs);
  assert.deepEqual(
    events.map((e) => [e.event_name, e.before ?? null, e.after ?? null, e.ref ?? null]),
    [
      ['push', f.c5, sha, 'refs/heads/main'],
      ['repository_update', null, null, null],
    ],
  );
  assert.equal(events[0].user_username, f.owner.username);
  assert.equal(events[0].total_commits_count, 1);
  assert.deepEqual(events[1].changes, [{ before: f.c5, after: sha, ref: 'refs/heads/main' }]);

  // the list shows it first
  const list = await f.app.inject({ method: 'GET', url: `${f.base}/commits?per_page=1`, headers: f.headers });
  assert.deepEqual(
    list.json().map((x: any) => x.id),
    [sha],
  );
});

test('POST /commits: new branches from start_branch / start_sha, authors, stats=false, force, form bodies', async (t) => {
  const f = await fixture(t);
  const post = (payload: object, headers = f.headers) => f.app.inject({ method: 'POST', url: `${f.base}/commits`, headers, payload });

  let res = await post({
    branch: 'topic',
    start_branch: 'feature/x',
    commit_message: 'On topic',
    author_name: 'Guest Writer',
    author_email: 'guest@example.com',
    stats: false,
    actions: [{ action: 'update', file_path: 'f.txt', content: 'changed\n' }],
  });
  assert.equal(res.statusCode, 201, res.body);
  const topic = bareGit(f.dir, ['rev-parse', 'refs/heads/topic']).trim();
  assert.deepEqual(res.json(), { ...expected(f.dir, f.web, topic), status: null, project_id: f.project.id, last_pipeline: null });
  assert.deepEqual(res.json().parent_ids, [f.c3]);
  assert.equal(bareGit(f.dir, ['show', '-s', '--format=%an <%ae>|%cn <%ce>', topic]), 'Guest Writer <guest@example.com>|Owner Person <owner@example.com>\n');
  // update keeps the executable bit
  assert.equal(bareGit(f.dir, ['ls-tree', '--format=%(objectmode)', 'topic', 'f.txt']), '100755\n');

  res = await post({ branch: 'from-sha', start_sha: f.c1, commit_message: 'From c1', actions: [{ action: 'create', file_path: 'x.txt' }] });
  assert.equal(res.statusCode, 201, res.body);
  assert.deepEqual(res.json().parent_ids, [f.c1]);
  assert.equal(bareGit(f.dir, ['show', 'from-sha:x.txt']), '');
  assert.deepEqual(res.json().stats, { additions: 0, deletions: 0, total: 0 });

  // a move with content replaces it; an empty action list is an empty commit
  res = await post({ branch: 'from-sha', commit_message: 'Move', actions: [{ action: 'move', previous_path: 'x.txt', file_path: 'y.txt', content: 'new\n' }] });
  assert.equal(bareGit(f.dir, ['show', 'from-sha:y.txt']), 'new\n');
  res = await post({ branch: 'from-sha', commit_message: 'Nothing', actions: [] });
  assert.equal(res.statusCode, 201);
  assert.equal(bareGit(f.dir, ['rev-parse', 'from-sha^{tree}']), bareGit(f.dir, ['rev-parse', 'from-sha~1^{tree}']));

  // the branch exists: refused without force, overwritten with it (a force push, allowed on a normal branch)
  const before = bareGit(f.dir, ['rev-parse', 'refs/heads/topic']).trim();
  res = await post({ branch: 'topic', start_branch: 'main', commit_message: 'Again', actions: [{ action: 'create', file_path: 'z.txt' }] });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: "A branch called 'topic' already exists. Switch to that branch in order to make changes" }]);
  assert.equal(bareGit(f.dir, ['rev-parse', 'refs/heads/topic']).trim(), before);
  const jobs = await lastJobId(f.c);
  res = await post({ branch: 'topic', start_branch: 'main', force: true, commit_message: 'Forced', actions: [{ action: 'create', file_path: 'z.txt' }] });
  assert.equal(res.statusCode, 201, res.body);
  assert.deepEqual(res.json().parent_ids, [f.c5]);
  const forced = bareGit(f.dir, ['rev-parse', 'refs/heads/topic']).trim();
  assert.equal(res.json().id, forced);
  assert.deepEqual(
    (await eventsAfter(f.c, jobs)).map((e) => [e.event_name, e.before ?? null, e.after ?? null]),
    [
      ['push', before, forced],
      ['repository_update', null, null],
    ],
  );

  // form-encoded bodies (python-gitlab sends JSON, curl users send forms)
  res = await f.app.inject({
    method: 'POST',
    url: `${f.base}/commits`,
    headers: { ...f.headers, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'branch=formed&start_branch=main&commit_message=Form&actions[][action]=create&actions[][file_path]=form.txt&actions[][content]=from+a+form',
  });
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(bareGit(f.dir, ['show', 'formed:form.txt']), 'from a form');
});

test('POST /commits: refusals leave refs and the outbox untouched', async (t) => {
  const f = await fixture(t);
  const post = (payload: object, headers = f.headers) => f.app.inject({ method: 'POST', url: `${f.base}/commits`, headers, payload });
  const refsBefore = bareGit(f.dir, ['for-each-ref']);
  const jobs = await lastJobId(f.c);
  const create = (file_path: string) => ({ action: 'create', file_path, content: 'x' });
  const cases: [object, number, unknown][] = [
    [{}, 400, { error: 'branch is missing, commit_message is missing, actions is missing' }],
    [{ branch: '', commit_message: 'm', actions: [] }, 400, { error: 'branch is empty' }],
    [{ branch: 'main', commit_message: 'm', actions: [{ action: 'create' }] }, 400, { error: 'actions[0][file_path] is missing' }],
    [
      {
        branch: 'main',
        commit_message: 'm',
        actions: [
          { action: 'rename', file_path: 'a' },
          { action: '', file_path: 'b' },
        ],
      },
      400,
      { error: 'actions[0][action] does not have a valid value, actions[1][action] is empty' },
    ],
    [{ branch: 'main', commit_message: 'm', actions: [{ action: 'update', file_path: 'README.md' }] }, 400, { error: 'actions[0][content] is missing' }],
    [{ branch: 'main', commit_message: 'm', actions: [{ action: 'move', file_path: 'README2.md' }] }, 400, { error: 'actions[0][previous_path] is missing' }],
    [{ branch: 'main', commit_message: 'm', actions: [{ action: 'chmod', file_path: 'f.txt' }] }, 400, { error: 'actions[0][execute_filemode] is missing' }],
    [
      { branch: 'main', commit_message: 'm', actions: [{ ...create('a'), encoding: 'hex' }] },
      400,
      { error: 'actions[0][encoding] does not have a valid value' },
    ],
    [
      { branch: 'x', start_branch: 'main', start_sha: f.c1, commit_message: 'm', actions: [] },
      400,
      { error: 'start_branch, start_sha are mutually exclusive' },
    ],
    [{ branch: 'main', commit_message: 'm', actions: [create('README.md')] }, 400, { message: 'A file with this name already exists' }],
    [{ branch: 'main', commit_message: 'm', actions: [create('docs')] }, 400, { message: 'A directory with this name already exists' }],
    [{ branch: 'main', commit_message: 'm', actions: [create('README.md/inner')] }, 400, { message: 'A file with this name already exists' }],
    [{ branch: 'main', commit_message: 'm', actions: [create('n.txt'), create('n.txt/deeper')] }, 400, { message: 'A file with this name already exists' }],
    [
      { branch: 'main', commit_message: 'm', actions: [{ action: 'update', file_path: 'missing.txt', content: 'x' }] },
      400,
      { message: "A file with this name doesn't exist" },
    ],
    [{ branch: 'main', commit_message: 'm', actions: [{ action: 'delete', file_path: 'docs' }] }, 400, { message: "A file with this name doesn't exist" }],
    [
      { branch: 'main', commit_message: 'm', actions: [{ action: 'move', previous_path: 'nope', file_path: 'b' }] },
      400,
      { message: "A file with this name doesn't exist" },
    ],
    [
      { branch: 'main', commit_message: 'm', actions: [{ action: 'move', previous_path: 'f.txt', file_path: 'README.md' }] },
      400,
      { message: 'A file with this name already exists' },
    ],
    [{ branch: 'main', commit_message: 'm', actions: [create('ok.txt'), create('../escape')] }, 400, { message: 'Path cannot include directory traversal' }],
    [{ branch: 'main', commit_message: 'm', actions: [create('docs/../../x')] }, 400, { message: 'Path cannot include directory traversal' }],
    [
      { branch: 'main', commit_message: 'm', actions: [{ action: 'move', previous_path: '../../etc/passwd', file_path: 'p' }] },
      400,
      { message: 'Path cannot include directory traversal' },
    ],
    [{ branch: 'main', commit_message: 'm', actions: [create('')] }, 400, { message: 'You must provide a file path' }],
    [{ branch: 'main', commit_message: 'm', actions: [create('.git/config')] }, 400, { message: "invalid path: '.git/config'" }],
    [{ branch: 'main', commit_message: 'm', actions: [create('-rf')] }, 400, { message: "invalid path: '-rf'" }],
    [{ branch: 'main', commit_message: 'm', actions: [create('a//b')] }, 400, { message: "invalid path: 'a//b'" }],
    [{ branch: 'main', commit_message: 'm', actions: [create('/abs')] }, 400, { message: "invalid path: '/abs'" }],
    [{ branch: 'main', commit_message: 'm', actions: [create('line\nbreak')] }, 400, { message: "invalid path: 'line\nbreak'" }],
    [
      { branch: 'main', commit_message: 'm', actions: [{ action: 'update', file_path: 'README.md', content: 'x', last_commit_id: f.c1 }] },
      400,
      { message: 'The file has changed since you started editing it: README.md' },
    ],
    [
      { branch: 'main', commit_message: 'm', actions: [{ action: 'move', file_path: 'q.md', previous_path: 'docs/a.md', last_commit_id: f.c2 }] },
      400,
      { message: 'The file has changed since you started editing it: docs/a.md' },
    ],
    [{ branch: 'nope', commit_message: 'm', actions: [create('a')] }, 400, { message: 'You can only create or edit files when you are on a branch' }],
    [
      { branch: 'new', start_branch: 'nope', commit_message: 'm', actions: [create('a')] },
      400,
      { message: 'You can only create or edit files when you are on a branch' },
    ],
    [
      { branch: 'new', start_branch: '--all', commit_message: 'm', actions: [create('a')] },
      400,
      { message: 'You can only create or edit files when you are on a branch' },
    ],
    [
      { branch: 'feature/x', start_branch: 'main', commit_message: 'm', actions: [create('a')] },
      400,
      { message: "A branch called 'feature/x' already exists. Switch to that branch in order to make changes" },
    ],
    [
      { branch: 'bad..name', start_branch: 'main', commit_message: 'm', actions: [create('a')] },
      400,
      { message: "Something went wrong when we tried to create 'bad..name' for you: Branch name is invalid" },
    ],
    [
      { branch: '-x', start_branch: 'main', commit_message: 'm', actions: [create('a')] },
      400,
      { message: "Something went wrong when we tried to create '-x' for you: Branch name is invalid" },
    ],
    [{ branch: 'new', start_sha: 'main', commit_message: 'm', actions: [create('a')] }, 400, { message: "Invalid start_sha 'main'" }],
    [{ branch: 'new', start_sha: '--all', commit_message: 'm', actions: [create('a')] }, 400, { message: "Invalid start_sha '--all'" }],
    [{ branch: 'new', start_sha: 'a'.repeat(40), commit_message: 'm', actions: [create('a')] }, 400, { message: `Cannot find start_sha '${'a'.repeat(40)}'` }],
    [{ branch: 'main', commit_message: '', actions: [create('a')] }, 400, { message: 'empty CommitMessage' }],
    [{ branch: 'main', commit_message: 'm', author_name: 'a\u0000b', actions: [create('a')] }, 400, { error: 'author_name is invalid' }],
    [{ branch: 'main', commit_message: 'm', start_project: 999999, actions: [create('a')] }, 404, { message: '404 Project Not Found' }],
  ];
  for (const [payload, status, body] of cases) {
    const res = await post(payload);
    assert.deepEqual([res.statusCode, res.json()], [status, body], JSON.stringify(payload));
  }
  // no commit object reached a ref, no event was written
  assert.equal(bareGit(f.dir, ['for-each-ref']), refsBefore);
  assert.deepEqual(await eventsAfter(f.c, jobs), []);

  // the right last_commit_id passes
  const ok = await post({ branch: 'main', commit_message: 'm', actions: [{ action: 'update', file_path: 'README.md', content: 'x', last_commit_id: f.c4 }] });
  assert.equal(ok.statusCode, 201, ok.body);
  // start_project naming this project itself is accepted
  const self = await post({ branch: 'main', commit_message: 'm', start_project: f.project.id, actions: [create('self.txt')] });
  assert.equal(self.statusCode, 201, self.body);
});

test('POST /commits: who may commit where (anonymous, strangers, reporters, developers on protected and other branches)', async (t) => {
  const f = await fixture(t, 'public');
  const post = (payload: object, headers: Record<string, string>) => f.app.inject({ method: 'POST', url: `${f.base}/commits`, headers, payload });
  const body = (branch: string, start?: string) => ({
    branch,
    ...(start ? { start_branch: start } : {}),
    commit_message: 'm',
    actions: [{ action: 'create', file_path: `${branch}.txt` }],
  });
  const refsBefore = bareGit(f.dir, ['for-each-ref']);

  let res = await post(body('main'), {});
  assert.deepEqual([res.statusCode, res.json()], [401, { message: '401 Unauthorized' }]);
  const stranger = await f.seed.user();
  res = await post(body('main'), (await f.seed.token(stranger)).headers);
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden - You are not allowed to push into this branch' }]);
  const reporter = await f.seed.user();
  await f.seed.member({ project: f.project }, reporter, 20);
  res = await post(body('topic', 'main'), (await f.seed.token(reporter)).headers);
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden - You are not allowed to push into this branch' }]);
  const readOnly = await f.seed.token(f.owner, { scopes: ['read_api'] });
  res = await post(body('topic', 'main'), readOnly.headers);
  assert.equal(res.statusCode, 403);
  assert.equal(res.json().error, 'insufficient_scope');

  // developers: not on the protected default branch, yes on another branch
  const dev = await f.seed.user();
  await f.seed.member({ project: f.project }, dev, 30);
  const devHeaders = (await f.seed.token(dev)).headers;
  res = await post(body('main'), devHeaders);
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden - You are not allowed to push into this branch' }]);
  assert.equal(bareGit(f.dir, ['for-each-ref']), refsBefore);
  res = await post(body('dev-topic', 'main'), devHeaders);
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(res.json().author_email, dev.email);

  // force on the protected default branch by a maintainer: not without allow_force_push
  const mainBefore = bareGit(f.dir, ['rev-parse', 'main']).trim();
  res = await post({ ...body('main', 'feature/x'), force: true }, f.headers);
  assert.deepEqual([res.statusCode, res.json()], [400, { message: 'You are not allowed to force push code to a protected branch on this project.' }]);
  assert.equal(bareGit(f.dir, ['rev-parse', 'main']).trim(), mainBefore);
  // a fast-forward with force is no force push
  res = await post({ ...body('main', 'main'), force: true }, f.headers);
  assert.equal(res.statusCode, 201, res.body);
  assert.deepEqual(res.json().parent_ids, [mainBefore]);

  // archived: nobody pushes, not even an administrator
  await f.c.db.kysely.updateTable('projects').set({ archived: 1 }).where('id', '=', f.project.id).execute();
  res = await post(body('archived', 'main'), f.root);
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden - You are not allowed to push into this branch' }]);
  await f.c.db.kysely.updateTable('projects').set({ archived: 0 }).where('id', '=', f.project.id).execute();

  // private project: strangers do not see it
  await f.c.db.kysely.updateTable('projects').set({ visibility: 'private' }).where('id', '=', f.project.id).execute();
  res = await post(body('main'), (await f.seed.token(stranger)).headers);
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Project Not Found' }]);
});

test('POST /commits: the first commit of an empty repository, on the default branch or another one', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const owner = await seed.user();
  const { headers } = await seed.token(owner);
  const ns = await seed.namespaceOf(owner);
  const { project, dir } = await seed.repoProject({ namespace: ns, owner });
  await seed.member({ project }, owner, 50);
  const url = `/api/v4/projects/${project.id}/repository/commits`;
  const jobs = await lastJobId(c);

  // only create actions make sense, and start_sha finds nothing
  let res = await app.inject({
    method: 'POST',
    url,
    headers,
    payload: { branch: 'main', commit_message: 'm', actions: [{ action: 'update', file_path: 'a', content: 'x' }] },
  });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: "A file with this name doesn't exist" }]);
  res = await app.inject({ method: 'POST', url, headers, payload: { branch: 'main', start_sha: 'b'.repeat(40), commit_message: 'm', actions: [] } });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: `Cannot find start_sha '${'b'.repeat(40)}'` }]);
  assert.equal(bareGit(dir, ['for-each-ref']), '');

  // another branch than the default one becomes the default branch
  res = await app.inject({
    method: 'POST',
    url,
    headers,
    payload: { branch: 'trunk', start_branch: 'whatever', commit_message: 'First', actions: [{ action: 'create', file_path: 'README.md', content: '# hi\n' }] },
  });
  assert.equal(res.statusCode, 201, res.body);
  const sha = bareGit(dir, ['rev-parse', 'refs/heads/trunk']).trim();
  assert.deepEqual(res.json().parent_ids, []);
  assert.deepEqual(res.json().stats, { additions: 1, deletions: 0, total: 1 });
  assert.equal(bareGit(dir, ['symbolic-ref', 'HEAD']), 'refs/heads/trunk\n');
  const row = await c.db.kysely.selectFrom('projects').select('default_branch').where('id', '=', project.id).executeTakeFirstOrThrow();
  assert.equal(row.default_branch, 'trunk');
  const events = await eventsAfter(c, jobs);
  assert.deepEqual(
    events.map((e) => [e.event_name, e.before ?? null, e.after ?? null, e.ref ?? null]),
    [
      ['push', ZERO_SHA, sha, 'refs/heads/trunk'],
      ['repository_update', null, null, null],
    ],
  );
  res = await app.inject({ method: 'GET', url, headers });
  assert.deepEqual(
    res.json().map((x: any) => x.id),
    [sha],
  );
});

test('POST /commits: concurrent commits to one branch never lose a commit (compare-and-swap of the ref)', async (t) => {
  const f = await fixture(t);
  const results = await Promise.all(
    [0, 1, 2, 3, 4].map((i) =>
      f.app.inject({
        method: 'POST',
        url: `${f.base}/commits`,
        headers: f.headers,
        payload: { branch: 'main', commit_message: `c${i}`, actions: [{ action: 'create', file_path: `c${i}.txt`, content: `${i}` }] },
      }),
    ),
  );
  const ok = results.filter((r) => r.statusCode === 201).map((r) => r.json().id);
  for (const r of results.filter((x) => x.statusCode !== 201)) {
    assert.deepEqual([r.statusCode, r.json()], [400, { message: 'Could not update refs/heads/main. Please refresh and try again.' }]);
  }
  assert.ok(ok.length >= 1);
  // every accepted commit is in the history, one after the other
  assert.deepEqual(log(f.dir, ['main', `^${f.c5}`]).sort(), [...ok].sort());
  assert.deepEqual(log(f.dir, ['--first-parent', 'main', `^${f.c5}`]).length, ok.length);
});
