// Compare, commit diffs, contributors and merge base against real repositories, checked against
// git's own answers: branches that diverge and merge, a rename, a deletion, a mode change, a binary
// file, a symlink that becomes a file, a non-ASCII path, an orphan branch; GitLab's diff limits.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildTestApp, type TestApp } from '../../../helpers/build-app.ts';
import { bareGit, workTree } from '../../../helpers/git.ts';
import { commitBasic } from '../../../../src/http/platform/repository/context.ts';
import { parseCommit } from '../../../../src/git/objects.ts';
import { DiffParser, diffArgs, diffLimits, parseDiff } from '../../../../src/git/diff.ts';
import { gitCommands } from '../../../../src/metrics/registry.ts';

const ADA_OLD = { name: 'A. Lovelace', email: 'ada@example.com' };
const ADA = { name: 'Ada Lovelace', email: 'ada@example.com' };
const GRACE = { name: 'Grace Hopper', email: 'grace@example.com' };
const BOB = { name: 'bob', email: 'Bob@Example.com' };
const T0 = 1_700_000_000;

const lines = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}\n`).join('');

interface Fixture extends TestApp {
  project: { id: number };
  dir: string;
  webUrl: string;
  api: string;
  c1: string;
  f1: string;
  f2: string;
  b1: string;
  f3: string;
  m1: string;
  merge: string;
  orphan: string;
}

/**
 * main:    c1 ─────────────── m1
 *            \                   \
 * feature:    f1 ─ f2 ─ b1 ─ f3 ─ merge (main into feature)
 * orphan:  o1 (no common history)
 */
async function fixture(t: TestContext, visibility = 'public'): Promise<Fixture> {
  const ctx = await buildTestApp(t);
  const { project, dir } = await ctx.seed.repoProject({ visibility });
  const wt = workTree(t, dir);
  wt.write('README.md', 'hello\n')
    .write('a.txt', 'one\ntwo\nthree\n')
    .write('big.txt', lines(1, 50))
    .write('script.sh', '#!/bin/sh\necho hi\n', 0o644)
    .write('bin.dat', Buffer.from([0, 1, 2, 0, 3]))
    .write('gone.txt', 'bye\n');
  fs.symlinkSync('a.txt', path.join(wt.dir, 'link'));
  const c1 = wt.commit('Initial commit', { author: ADA_OLD, time: T0, tz: '+0200' });
  wt.tag('v1.0');

  wt.checkout('feature', true);
  wt.git(['mv', 'big.txt', 'moved.txt']);
  fs.appendFileSync(path.join(wt.dir, 'moved.txt'), 'line 51\n');
  wt.rm('gone.txt');
  fs.chmodSync(path.join(wt.dir, 'script.sh'), 0o755);
  wt.write('bin.dat', Buffer.from([0, 1, 2, 0, 4]));
  fs.unlinkSync(path.join(wt.dir, 'link'));
  wt.write('link', 'now a file\n');
  wt.write('docs/ü new.txt', 'new doc\n');
  const f1 = wt.commit('Feature work\n\nLonger description.\n\nChangelog: added\n', { author: GRACE, time: T0 + 60 });
  wt.write('a.txt', 'one\ntwo\nthree\nfour\n');
  const f2 = wt.commit('Add four', { author: GRACE, time: T0 + 120 });
  wt.write('bob.txt', 'bob\n');
  const b1 = wt.commit('Bob was here', { author: BOB, time: T0 + 150 });
  wt.write('docs/ü new.txt', 'new doc\nmore\n');
  const f3 = wt.commit('More docs', { author: GRACE, time: T0 + 170 });

  wt.checkout('main');
  wt.write('a.txt', 'zero\none\ntwo\nthree\n').write('README.md', 'hello\nworld\n');
  const m1 = wt.commit('Main work', { author: ADA, time: T0 + 180 });

  wt.checkout('feature');
  const at = `@${T0 + 240} +0000`;
  wt.git(['merge', '-q', '--no-ff', '-m', 'Merge branch main into feature', 'main'], {
    GIT_AUTHOR_NAME: ADA.name,
    GIT_AUTHOR_EMAIL: ADA.email,
    GIT_AUTHOR_DATE: at,
    GIT_COMMITTER_NAME: ADA.name,
    GIT_COMMITTER_EMAIL: ADA.email,
    GIT_COMMITTER_DATE: at,
  });
  const merge = wt.git(['rev-parse', 'HEAD']);

  wt.git(['checkout', '-q', '--orphan', 'orphan']);
  wt.git(['rm', '-q', '-rf', '.']);
  wt.write('other.txt', 'unrelated\n');
  const orphan = wt.commit('Orphan root', { author: ADA, time: T0 + 300 });
  wt.push();

  const row = await ctx.c.db.kysely
    .selectFrom('namespaces')
    .select('full_path')
    .where('id', '=', (project as any).namespace_id)
    .executeTakeFirstOrThrow();
  const webUrl = `http://hearth.test/${row.full_path}/${(project as any).path}`;
  return { ...ctx, project, dir, webUrl, api: `/api/v4/projects/${project.id}/repository`, c1, f1, f2, b1, f3, m1, merge, orphan };
}

/** The Commit entity of a SHA, from git's own object. */
function commitEntity(f: Fixture, sha: string) {
  return commitBasic(parseCommit(sha, Buffer.from(bareGit(f.dir, ['cat-file', 'commit', sha]))), f.webUrl);
}

/** git's own per-file patches of `git diff -M30% from to`: each section from its first hunk or binary notice. */
function gitPatches(dir: string, from: string, to: string): string[] {
  const out = bareGit(dir, ['diff', '--find-renames=30%', from, to]);
  if (!out) return [];
  return out.split(/^(?=diff --git )/m).map((section) => {
    const m = /^(@@|Binary files )/m.exec(section);
    return m ? section.slice(m.index) : '';
  });
}

const get = (f: TestApp, url: string, headers: Record<string, string> = f.root) => f.app.inject({ method: 'GET', url, headers });

const diffOf = (d: Partial<Record<string, unknown>>) => ({
  diff: '',
  collapsed: false,
  too_large: false,
  new_path: '',
  old_path: '',
  a_mode: '100644',
  b_mode: '100644',
  new_file: false,
  renamed_file: false,
  deleted_file: false,
  generated_file: null,
  ...d,
});

/** The diffs of c1 → f2 (main's merge base with f2), in git's order. */
function featureDiffs() {
  return [
    diffOf({ diff: '@@ -1,3 +1,4 @@\n one\n two\n three\n+four\n', new_path: 'a.txt', old_path: 'a.txt' }),
    diffOf({ diff: 'Binary files a/bin.dat and b/bin.dat differ\n', new_path: 'bin.dat', old_path: 'bin.dat' }),
    diffOf({ diff: '@@ -0,0 +1 @@\n+new doc\n', new_path: 'docs/ü new.txt', old_path: 'docs/ü new.txt', a_mode: '0', new_file: true }),
    diffOf({ diff: '@@ -1 +0,0 @@\n-bye\n', new_path: 'gone.txt', old_path: 'gone.txt', b_mode: '0', deleted_file: true }),
    diffOf({
      diff: '@@ -1 +0,0 @@\n-a.txt\n\\ No newline at end of file\n',
      new_path: 'link',
      old_path: 'link',
      a_mode: '120000',
      b_mode: '0',
      deleted_file: true,
    }),
    diffOf({ diff: '@@ -0,0 +1 @@\n+now a file\n', new_path: 'link', old_path: 'link', a_mode: '0', new_file: true }),
    diffOf({ diff: '@@ -48,3 +48,4 @@ line 47\n line 48\n line 49\n line 50\n+line 51\n', new_path: 'moved.txt', old_path: 'big.txt', renamed_file: true }),
    diffOf({ diff: '', new_path: 'script.sh', old_path: 'script.sh', b_mode: '100755' }),
  ];
}

test('compare: merge-base comparison of diverged branches, whole body, checked against git', async (t) => {
  const f = await fixture(t);
  const res = await get(f, `${f.api}/compare?from=main&to=${f.f2}`);
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/json');
  const body = res.json();
  assert.equal(bareGit(f.dir, ['merge-base', 'main', f.f2]).trim(), f.c1);
  const commits = [commitEntity(f, f.f1), commitEntity(f, f.f2)];
  assert.deepEqual(body, {
    commit: commits[1],
    commits,
    diffs: featureDiffs(),
    compare_timeout: false,
    compare_same_ref: false,
    web_url: `${f.webUrl}/-/compare/${f.c1}...${f.f2}`,
  });
  // the commit entity, literally
  assert.deepEqual(body.commits[0], {
    id: f.f1,
    short_id: f.f1.slice(0, 8),
    created_at: '2023-11-14T22:14:20.000+00:00',
    parent_ids: [f.c1],
    title: 'Feature work',
    message: 'Feature work\n\nLonger description.\n\nChangelog: added\n',
    author_name: 'Grace Hopper',
    author_email: 'grace@example.com',
    authored_date: '2023-11-14T22:14:20.000+00:00',
    committer_name: 'Grace Hopper',
    committer_email: 'grace@example.com',
    committed_date: '2023-11-14T22:14:20.000+00:00',
    trailers: { Changelog: 'added' },
    extended_trailers: { Changelog: ['added'] },
    web_url: `${f.webUrl}/-/commit/${f.f1}`,
  });
  // every patch is git's own, file by file, and the paths and modes are those of `git diff --raw`
  assert.deepEqual(
    body.diffs.map((d: any) => d.diff),
    gitPatches(f.dir, f.c1, f.f2),
  );
  const raw = bareGit(f.dir, ['diff', '--raw', '-z', '--no-abbrev', '--find-renames=30%', f.c1, f.f2]).split('\0');
  const metas: string[] = [];
  for (let i = 0; i < raw.length - 1; ) {
    const [, , , , status] = raw[i].split(' ');
    metas.push(status[0] === 'R' ? `${raw[i + 1]}→${raw[i + 2]}` : raw[i + 1]);
    i += status[0] === 'R' ? 3 : 2;
  }
  assert.deepEqual(metas, ['a.txt', 'bin.dat', 'docs/ü new.txt', 'gone.txt', 'link', 'big.txt→moved.txt', 'script.sh']);
  // commits are git's `log --reverse from..to`
  assert.deepEqual(
    body.commits.map((x: any) => x.id),
    bareGit(f.dir, ['log', '--reverse', '--format=%H', `main..${f.f2}`])
      .trim()
      .split('\n'),
  );
  // the same two commits again: the same body, and no git process (kept per commit ids)
  const started = async () => (await gitCommands.get()).values.reduce((n, v) => n + v.value, 0);
  const before = await started();
  const again = await get(f, `${f.api}/compare?from=main&to=${f.f2}`);
  assert.deepEqual(again.json(), body);
  assert.equal(await started(), before);
});

test('compare: straight=true diffs from..to directly; false uses the merge base; commits are from..to either way', async (t) => {
  const f = await fixture(t);
  const straight = (await get(f, `${f.api}/compare?from=main&to=${f.f2}&straight=true`)).json();
  const mergeBase = (await get(f, `${f.api}/compare?from=main&to=${f.f2}&straight=false`)).json();
  assert.deepEqual(mergeBase.diffs, featureDiffs());
  // straight: main's own changes (README, "zero") show up reversed
  assert.deepEqual(
    straight.diffs.map((d: any) => d.diff),
    gitPatches(f.dir, f.m1, f.f2),
  );
  assert.deepEqual(straight.diffs.slice(0, 2), [
    diffOf({ diff: '@@ -1,2 +1 @@\n hello\n-world\n', new_path: 'README.md', old_path: 'README.md' }),
    diffOf({ diff: '@@ -1,4 +1,4 @@\n-zero\n one\n two\n three\n+four\n', new_path: 'a.txt', old_path: 'a.txt' }),
  ]);
  assert.deepEqual(straight.commits, mergeBase.commits);
  assert.equal(straight.web_url, `${f.webUrl}/-/compare/${f.m1}...${f.f2}`);
  assert.equal(mergeBase.web_url, `${f.webUrl}/-/compare/${f.c1}...${f.f2}`);

  // a merged branch: the merge base is main itself, the merge commit is the newest commit
  const merged = (await get(f, `${f.api}/compare?from=main&to=feature`)).json();
  assert.deepEqual(
    merged.commits.map((x: any) => x.id),
    bareGit(f.dir, ['log', '--reverse', '--format=%H', 'main..feature']).trim().split('\n'),
  );
  assert.equal(merged.commit.id, f.merge);
  assert.deepEqual(
    merged.diffs.map((d: any) => d.diff),
    gitPatches(f.dir, f.m1, f.merge),
  );
  assert.equal(merged.web_url, `${f.webUrl}/-/compare/${f.m1}...${f.merge}`);

  // tags and abbreviated SHAs name commits too; `from` is stripped
  const tagged = (await get(f, `${f.api}/compare?from=%20v1.0%20&to=${f.f2.slice(0, 10)}`)).json();
  assert.deepEqual(tagged.diffs, featureDiffs());
});

test('compare: unidiff adds the ---/+++ lines (not to binary notices or empty patches)', async (t) => {
  const f = await fixture(t);
  const body = (await get(f, `${f.api}/compare?from=main&to=${f.f2}&unidiff=true`)).json();
  assert.deepEqual(
    body.diffs.map((d: any) => d.diff),
    [
      '--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,4 @@\n one\n two\n three\n+four\n',
      'Binary files a/bin.dat and b/bin.dat differ\n',
      '--- /dev/null\n+++ b/docs/ü new.txt\n@@ -0,0 +1 @@\n+new doc\n',
      '--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n',
      '--- a/link\n+++ /dev/null\n@@ -1 +0,0 @@\n-a.txt\n\\ No newline at end of file\n',
      '--- /dev/null\n+++ b/link\n@@ -0,0 +1 @@\n+now a file\n',
      '--- a/big.txt\n+++ b/moved.txt\n@@ -48,3 +48,4 @@ line 47\n line 48\n line 49\n line 50\n+line 51\n',
      '',
    ],
  );
});

test('compare: same commit, reversed order, unrelated histories', async (t) => {
  const f = await fixture(t);
  // both sides the same commit under different names
  let res = await get(f, `${f.api}/compare?from=main&to=${f.m1}`);
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), {
    commit: null,
    commits: [],
    diffs: [],
    compare_timeout: false,
    compare_same_ref: true,
    web_url: `${f.webUrl}/-/compare/${f.m1}...${f.m1}`,
  });
  // child → parent: nothing new on `to`, and the merge base is `to`
  res = await get(f, `${f.api}/compare?from=${f.f2}&to=${f.f1}`);
  assert.deepEqual(res.json(), {
    commit: null,
    commits: [],
    diffs: [],
    compare_timeout: false,
    compare_same_ref: false,
    web_url: `${f.webUrl}/-/compare/${f.f1}...${f.f1}`,
  });
  // … while straight shows the way back
  res = await get(f, `${f.api}/compare?from=${f.f2}&to=${f.f1}&straight=true`);
  assert.deepEqual(res.json().diffs, [diffOf({ diff: '@@ -1,4 +1,3 @@\n one\n two\n three\n-four\n', new_path: 'a.txt', old_path: 'a.txt' })]);
  assert.deepEqual(res.json().commits, []);
  // no merge base: everything on `to` is new
  res = await get(f, `${f.api}/compare?from=main&to=orphan`);
  assert.deepEqual(res.json(), {
    commit: commitEntity(f, f.orphan),
    commits: [commitEntity(f, f.orphan)],
    diffs: [diffOf({ diff: '@@ -0,0 +1 @@\n+unrelated\n', new_path: 'other.txt', old_path: 'other.txt', a_mode: '0', new_file: true })],
    compare_timeout: false,
    compare_same_ref: false,
    web_url: `${f.webUrl}/-/compare/${f.m1}...${f.orphan}`,
  });
});

test('compare: error bodies; refs that look like options never reach git', async (t) => {
  const f = await fixture(t);
  // where git would write if `--output=…` reached it: a path no one else uses
  const sentinel = path.join(os.tmpdir(), `hearth-compare-${process.pid}-${Date.now()}`);
  const cases: [string, number, unknown][] = [
    ['', 400, { error: 'from is missing, to is missing' }],
    ['?from=main', 400, { error: 'to is missing' }],
    ['?to=main', 400, { error: 'from is missing' }],
    ['?from=nope&to=main', 404, { message: '404 Ref Not Found' }],
    ['?from=main&to=nope', 404, { message: '404 Ref Not Found' }],
    ['?from=main&to=', 404, { message: '404 Ref Not Found' }],
    [`?from=--output=${sentinel}&to=main`, 404, { message: '404 Ref Not Found' }],
    ['?from=main&to=-p', 404, { message: '404 Ref Not Found' }],
    ['?from=main~1&to=main', 404, { message: '404 Ref Not Found' }],
    ['?from=main..feature&to=main', 404, { message: '404 Ref Not Found' }],
    [
      `?from=main&to=feature&from_project_id=${f.project.id + 1000}`,
      400,
      { message: `Target project id:${f.project.id + 1000} is not a fork of project id:${f.project.id}` },
    ],
    ['?from=main&to=feature&from_project_id=abc', 400, { error: 'from_project_id is invalid' }],
    ['?from=main&to=feature&straight=maybe', 400, { error: 'straight is invalid' }],
  ];
  for (const [q, status, body] of cases) {
    const res = await get(f, `${f.api}/compare${q}`);
    assert.equal(res.statusCode, status, q);
    assert.deepEqual(res.json(), body, q);
  }
  assert.equal(fs.existsSync(sentinel), false);
  // the project itself is a valid from_project_id; a path id appears as given in the message
  let res = await get(f, `${f.api}/compare?from=main&to=${f.f2}&from_project_id=${f.project.id}`);
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json().diffs, featureDiffs());
  const fullPath = f.webUrl.slice('http://hearth.test/'.length);
  res = await get(f, `/api/v4/projects/${encodeURIComponent(fullPath)}/repository/compare?from=main&to=feature&from_project_id=999999`);
  assert.deepEqual(res.json(), { message: `Target project id:999999 is not a fork of project id:${fullPath}` });
  // nothing was written
  assert.equal(bareGit(f.dir, ['for-each-ref', '--format=%(refname)']), 'refs/heads/feature\nrefs/heads/main\nrefs/heads/orphan\nrefs/tags/v1.0\n');
});

test('compare and the other endpoints: anonymous on a public project, 404 on a private one, 403 for a guest', async (t) => {
  const pub = await fixture(t, 'public');
  const urls = (f: Fixture) => [
    `${f.api}/compare?from=main&to=feature`,
    `${f.api}/commits/${f.f1}/diff`,
    `${f.api}/contributors`,
    `${f.api}/merge_base?refs[]=main&refs[]=feature`,
  ];
  for (const url of urls(pub)) assert.equal((await get(pub, url, {})).statusCode, 200, url);
  const priv = await fixture(t, 'private');
  const guest = await priv.seed.user();
  await priv.seed.member({ project: priv.project as any }, guest, 10);
  const guestHeaders = (await priv.seed.token(guest)).headers;
  const reporter = await priv.seed.user();
  await priv.seed.member({ project: priv.project as any }, reporter, 20);
  const reporterHeaders = (await priv.seed.token(reporter)).headers;
  for (const url of [...urls(priv), `${priv.api}/compare`, `${priv.api}/merge_base`]) {
    let res = await get(priv, url, {});
    assert.equal(res.statusCode, 404, url);
    assert.deepEqual(res.json(), { message: '404 Project Not Found' }, url);
    res = await get(priv, url, guestHeaders);
    assert.equal(res.statusCode, 403, url);
    assert.deepEqual(res.json(), { message: '403 Forbidden' }, url);
  }
  for (const url of urls(priv)) assert.equal((await get(priv, url, reporterHeaders)).statusCode, 200, url);
});

test('compare: diff limits — soft collapse, too_large, safe limits, and overflow into compare_timeout', async (t) => {
  const f = await buildTestApp(t);
  const { project, dir } = await f.seed.repoProject({ visibility: 'public' });
  const api = `/api/v4/projects/${project.id}/repository`;
  const wt = workTree(t, dir);
  wt.write('keep.txt', 'k\n');
  const base = wt.commit('base');
  wt.checkout('sizes', true);
  wt.write('a.txt', 'small\n');
  wt.write('b-soft.txt', `${'s'.repeat(99)}\n`.repeat(300)); // patch ≈ 30 KB: over a tenth of diff_max_patch_bytes
  wt.write('c-large.txt', `${'l'.repeat(99)}\n`.repeat(2100)); // patch ≈ 210 KB: over diff_max_patch_bytes
  const sizes = wt.commit('sizes');
  wt.checkout('main');
  wt.checkout('many', true);
  for (let i = 0; i < 1001; i++) wt.write(`many/f${String(i).padStart(4, '0')}.txt`, `${i}\n`);
  const many = wt.commit('1001 files');
  wt.checkout('main');
  wt.checkout('lines', true);
  wt.write('a.txt', 'first\n');
  wt.write('z-huge.txt', 'x\n'.repeat(50_000));
  const linesSha = wt.commit('50,000 lines');
  wt.push();

  let body = (await get(f, `${api}/compare?from=${base}&to=${sizes}`)).json();
  assert.equal(body.compare_timeout, false);
  assert.deepEqual(body.diffs, [
    diffOf({ diff: '@@ -0,0 +1 @@\n+small\n', new_path: 'a.txt', old_path: 'a.txt', a_mode: '0', new_file: true }),
    diffOf({ diff: '', collapsed: true, new_path: 'b-soft.txt', old_path: 'b-soft.txt', a_mode: '0', new_file: true }),
    diffOf({ diff: '', too_large: true, new_path: 'c-large.txt', old_path: 'c-large.txt', a_mode: '0', new_file: true }),
  ]);
  // unidiff of a pruned patch stays empty
  body = (await get(f, `${api}/compare?from=${base}&to=${sizes}&unidiff=true`)).json();
  assert.deepEqual(
    body.diffs.map((d: any) => d.diff),
    ['--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+small\n', '', ''],
  );
  // the commit diff is expanded: only diff_max_patch_bytes applies
  let res = await get(f, `${api}/commits/${sizes}/diff`);
  assert.deepEqual(
    res.json().map((d: any) => [d.new_path, d.diff.length, d.collapsed, d.too_large]),
    [
      ['a.txt', 21, false, false],
      ['b-soft.txt', 30_318, false, false],
      ['c-large.txt', 0, false, true],
    ],
  );
  assert.equal(res.json()[1].diff, gitPatches(dir, base, sizes)[1]);

  // 1001 files: past 100 files the patches are collapsed, past 1000 the collection overflows
  body = (await get(f, `${api}/compare?from=${base}&to=${many}`)).json();
  assert.equal(body.compare_timeout, true);
  assert.equal(body.diffs.length, 1000);
  assert.deepEqual(body.diffs[0], diffOf({ diff: '@@ -0,0 +1 @@\n+0\n', new_path: 'many/f0000.txt', old_path: 'many/f0000.txt', a_mode: '0', new_file: true }));
  assert.deepEqual(
    body.diffs.slice(0, 100).map((d: any) => d.collapsed),
    Array(100).fill(false),
  );
  assert.deepEqual(body.diffs[100], diffOf({ diff: '', collapsed: true, new_path: 'many/f0100.txt', old_path: 'many/f0100.txt', a_mode: '0', new_file: true }));
  assert.equal(body.diffs[999].new_path, 'many/f0999.txt');
  assert.deepEqual(
    body.commits.map((x: any) => x.id),
    [many],
  );

  // 50,000 lines in one file: the commit diff stops before it
  res = await get(f, `${api}/commits/${linesSha}/diff`);
  assert.deepEqual(res.json(), [diffOf({ diff: '@@ -0,0 +1 @@\n+first\n', new_path: 'a.txt', old_path: 'a.txt', a_mode: '0', new_file: true })]);
  assert.equal(res.headers['x-total'], '1');
  // the compare collapses it instead (past the safe limits), so nothing overflows
  body = (await get(f, `${api}/compare?from=${base}&to=${linesSha}`)).json();
  assert.equal(body.compare_timeout, false);
  assert.deepEqual(
    body.diffs.map((d: any) => [d.new_path, d.diff === '', d.collapsed, d.too_large]),
    [
      ['a.txt', false, false, false],
      ['z-huge.txt', true, true, false],
    ],
  );
});

test('commit diff: against the first parent (the empty tree for a root commit), paginated, unidiff, 404s', async (t) => {
  const f = await fixture(t);
  let res = await get(f, `${f.api}/commits/${f.c1}/diff`);
  assert.equal(res.statusCode, 200);
  const root = res.json();
  assert.deepEqual(
    root.map((d: any) => [d.new_path, d.a_mode, d.b_mode, d.new_file]),
    [
      ['README.md', '0', '100644', true],
      ['a.txt', '0', '100644', true],
      ['big.txt', '0', '100644', true],
      ['bin.dat', '0', '100644', true],
      ['gone.txt', '0', '100644', true],
      ['link', '0', '120000', true],
      ['script.sh', '0', '100644', true],
    ],
  );
  assert.deepEqual(
    root.map((d: any) => d.diff),
    gitPatches(f.dir, '4b825dc642cb6eb9a060e54bf8d69288fbee4904', f.c1),
  );
  assert.equal(root[3].diff, 'Binary files /dev/null and b/bin.dat differ\n');
  assert.equal(res.headers['x-total'], '7');
  assert.equal(res.headers['x-total-pages'], '1');

  // a branch name works as well; the diff is the tip commit's
  res = await get(f, `${f.api}/commits/${f.f1}/diff`);
  assert.deepEqual(
    res.json().map((d: any) => d.new_path),
    ['bin.dat', 'docs/ü new.txt', 'gone.txt', 'link', 'link', 'moved.txt', 'script.sh'],
  );
  res = await get(f, `${f.api}/commits/main/diff`);
  assert.deepEqual(res.json(), [
    diffOf({ diff: '@@ -1 +1,2 @@\n hello\n+world\n', new_path: 'README.md', old_path: 'README.md' }),
    diffOf({ diff: '@@ -1,3 +1,4 @@\n+zero\n one\n two\n three\n', new_path: 'a.txt', old_path: 'a.txt' }),
  ]);
  // a merge commit: against its first parent
  res = await get(f, `${f.api}/commits/${f.merge}/diff?unidiff=true`);
  assert.deepEqual(
    res.json().map((d: any) => d.diff),
    ['--- a/README.md\n+++ b/README.md\n@@ -1 +1,2 @@\n hello\n+world\n', '--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,4 @@\n+zero\n one\n two\n three\n'],
  );
  assert.equal(bareGit(f.dir, ['rev-parse', `${f.merge}^1`]).trim(), f.f3);

  // pages
  res = await get(f, `${f.api}/commits/${f.c1}/diff?per_page=3&page=2`);
  assert.deepEqual(res.json(), root.slice(3, 6));
  assert.equal(res.headers['x-total'], '7');
  assert.equal(res.headers['x-total-pages'], '3');
  assert.equal(res.headers['x-page'], '2');
  assert.equal(res.headers['x-next-page'], '3');
  assert.equal(res.headers['x-prev-page'], '1');
  const link = (p: number) => `<http://hearth.test${f.api}/commits/${f.c1}/diff?id=${f.project.id}&page=${p}&per_page=3&sha=${f.c1}&unidiff=false>`;
  assert.equal(res.headers.link, `${link(1)}; rel="prev", ${link(3)}; rel="next", ${link(1)}; rel="first", ${link(3)}; rel="last"`);

  for (const sha of ['nope', '0000000000000000000000000000000000000000', '-p', '--output=x', 'main~1', encodeURIComponent('main:a.txt')]) {
    res = await get(f, `${f.api}/commits/${sha}/diff`);
    assert.equal(res.statusCode, 404, sha);
    assert.deepEqual(res.json(), { message: '404 Commit Not Found' }, sha);
  }
  // a tree is not a commit
  const tree = bareGit(f.dir, ['rev-parse', `${f.c1}^{tree}`]).trim();
  res = await get(f, `${f.api}/commits/${tree}/diff`);
  assert.equal(res.statusCode, 404);
});

/** `git log --no-merges --numstat` sums per author email, newest first. */
function gitContributors(dir: string, ref: string) {
  const out = bareGit(dir, ['log', '--no-merges', '--max-count=2000', '--numstat', '--format=%x01%an%x00%ae', ref]);
  const by = new Map<string, { name: string; email: string; commits: number; additions: number; deletions: number }>();
  let cur: any = null;
  for (const line of out.split('\n')) {
    if (line.startsWith('\x01')) {
      const [name, email] = line.slice(1).split('\0');
      cur = by.get(email) ?? { name, email, commits: 0, additions: 0, deletions: 0 };
      by.set(email, cur);
      cur.commits++;
    } else if (cur && /^[\d-]+\t[\d-]+\t/.test(line)) {
      const [a, d] = line.split('\t');
      cur.additions += a === '-' ? 0 : Number(a);
      cur.deletions += d === '-' ? 0 : Number(d);
    }
  }
  return [...by.values()];
}

test('contributors: non-merge commits grouped by email with real additions and deletions; ordering; ref', async (t) => {
  const f = await fixture(t);
  // default branch: Ada's two commits (the newest name wins), with git's own counts
  let res = await get(f, `${f.api}/contributors`);
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), [{ name: 'Ada Lovelace', email: 'ada@example.com', commits: 2, additions: 58 + 2, deletions: 0 }]);
  assert.deepEqual(res.json(), gitContributors(f.dir, 'main'));
  const link = `<http://hearth.test${f.api}/contributors?id=${f.project.id}&order_by=commits&page=1&per_page=20&sort=asc>`;
  assert.equal(res.headers.link, `${link}; rel="first", ${link}; rel="last"`);
  assert.equal(res.headers['x-total'], '1');

  // feature: the merge commit is not counted
  const ada = { name: 'Ada Lovelace', email: 'ada@example.com', commits: 2, additions: 60, deletions: 0 };
  const grace = { name: 'Grace Hopper', email: 'grace@example.com', commits: 3, additions: 5, deletions: 2 };
  const bob = { name: 'bob', email: 'Bob@Example.com', commits: 1, additions: 1, deletions: 0 };
  const expected = gitContributors(f.dir, 'feature');
  assert.deepEqual(new Set(expected.map((x) => JSON.stringify(x))), new Set([ada, grace, bob].map((x) => JSON.stringify(x))));
  const order = async (q: string) => (await get(f, `${f.api}/contributors?ref=feature${q}`)).json().map((x: any) => x.name);
  assert.deepEqual((await get(f, `${f.api}/contributors?ref=feature`)).json(), [bob, ada, grace]);
  assert.deepEqual(await order('&sort=desc'), ['Grace Hopper', 'Ada Lovelace', 'bob']);
  // names and emails compare case-insensitively
  assert.deepEqual(await order('&order_by=name'), ['Ada Lovelace', 'bob', 'Grace Hopper']);
  assert.deepEqual(await order('&order_by=name&sort=desc'), ['Grace Hopper', 'bob', 'Ada Lovelace']);
  assert.deepEqual(await order('&order_by=email'), ['Ada Lovelace', 'bob', 'Grace Hopper']);
  // a tag or SHA works as a ref; pagination
  assert.deepEqual((await get(f, `${f.api}/contributors?ref=v1.0`)).json(), [
    { name: 'A. Lovelace', email: 'ada@example.com', commits: 1, additions: 58, deletions: 0 },
  ]);
  res = await get(f, `${f.api}/contributors?ref=${f.merge}&per_page=1&page=2`);
  assert.deepEqual(res.json(), [ada]);
  assert.equal(res.headers['x-total'], '3');
  assert.equal(res.headers['x-next-page'], '3');

  for (const [q, status, body] of [
    ['?ref=nope', 404, { message: '404 Not Found' }],
    ['?ref=-n1', 404, { message: '404 Not Found' }],
    ['?ref=--all', 404, { message: '404 Not Found' }],
    ['?order_by=date', 400, { error: 'order_by does not have a valid value' }],
    ['?sort=up', 400, { error: 'sort does not have a valid value' }],
  ] as const) {
    res = await get(f, `${f.api}/contributors${q}`);
    assert.equal(res.statusCode, status, q);
    assert.deepEqual(res.json(), body, q);
  }

  // an empty repository has no contributors
  const { project } = await f.seed.repoProject({ visibility: 'public' });
  res = await get(f, `/api/v4/projects/${project.id}/repository/contributors`);
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), []);
  assert.equal(res.headers['x-total'], '0');
  res = await get(f, `/api/v4/projects/${project.id}/repository/contributors?ref=main`);
  assert.deepEqual(res.json(), { message: '404 Not Found' });
});

test('merge_base: the common ancestor as a Commit entity; refs[] or comma-separated; every error', async (t) => {
  const f = await fixture(t);
  let res = await get(f, `${f.api}/merge_base?refs[]=main&refs[]=${f.f2}`);
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), commitEntity(f, f.c1));
  assert.deepEqual(res.json(), {
    id: f.c1,
    short_id: f.c1.slice(0, 8),
    created_at: '2023-11-15T00:13:20.000+02:00',
    parent_ids: [],
    title: 'Initial commit',
    message: 'Initial commit\n',
    author_name: 'A. Lovelace',
    author_email: 'ada@example.com',
    authored_date: '2023-11-15T00:13:20.000+02:00',
    committer_name: 'A. Lovelace',
    committer_email: 'ada@example.com',
    committed_date: '2023-11-15T00:13:20.000+02:00',
    trailers: {},
    extended_trailers: {},
    web_url: `${f.webUrl}/-/commit/${f.c1}`,
  });
  assert.equal(bareGit(f.dir, ['merge-base', 'main', f.f2]).trim(), f.c1);
  res = await get(f, `${f.api}/merge_base?refs=main,feature`);
  assert.deepEqual(res.json().id, f.m1);
  res = await get(f, `${f.api}/merge_base?refs%5B%5D=feature&refs%5B%5D=v1.0,${f.f3.slice(0, 12)}`);
  assert.deepEqual(res.json().id, bareGit(f.dir, ['merge-base', 'feature', 'v1.0', f.f3]).trim());

  const cases: [string, number, unknown][] = [
    ['', 400, { error: 'refs is missing' }],
    ['?refs[]=main', 400, { message: 'Provide at least 2 refs' }],
    ['?refs=main', 400, { message: 'Provide at least 2 refs' }],
    ['?refs=', 400, { message: 'Provide at least 2 refs' }],
    // without brackets only the last value counts, as in Rack
    ['?refs=main&refs=feature', 400, { message: 'Provide at least 2 refs' }],
    ['?refs[]=main&refs[]=nope', 400, { message: 'Could not find ref: nope' }],
    ['?refs[]=nope&refs[]=main&refs[]=gone&refs[]=nope', 400, { message: 'Could not find refs: nope, gone' }],
    ['?refs[]=main&refs[]=--all', 400, { message: 'Could not find ref: --all' }],
    ['?refs=-x,main', 400, { message: 'Could not find ref: -x' }],
    ['?refs[]=main&refs[]=main~1', 400, { message: 'Could not find ref: main~1' }],
    ['?refs[a]=main&refs[b]=feature', 400, { error: 'refs is invalid' }],
    ['?refs[]=main&refs[]=orphan', 404, { message: '404 Merge Base Not Found' }],
  ];
  for (const [q, status, body] of cases) {
    res = await get(f, `${f.api}/merge_base${q}`);
    assert.equal(res.statusCode, status, q);
    assert.deepEqual(res.json(), body, q);
  }
});

test('diff parser: streaming in tiny chunks gives the same collection as one buffer', async (t) => {
  const f = await fixture(t);
  const { execFileSync } = await import('node:child_process');
  const { fixtureEnv } = await import('../../../helpers/git.ts');
  const out = execFileSync('git', ['--git-dir', f.dir, ...diffArgs(f.c1, f.merge)], { env: fixtureEnv() });
  for (const expanded of [true, false]) {
    const limits = diffLimits({}, expanded);
    const whole = parseDiff(out, limits);
    assert.equal(whole.files.length, 10);
    for (const size of [1, 2, 3, 7, 64]) {
      const p = new DiffParser(limits);
      for (let i = 0; i < out.length; i += size) p.push(out.subarray(i, i + size));
      const r = p.end();
      p.applySoftLimit();
      assert.deepEqual(r, whole, `chunks of ${size}`);
    }
  }
  // tiny limits: files past max_files are dropped and the collection overflows
  const small = { ...diffLimits({}, true), maxFiles: 3 };
  const cut = parseDiff(out, small);
  assert.equal(cut.overflow, true);
  assert.deepEqual(
    cut.files.map((x) => x.newPath),
    ['README.md', 'a.txt', 'bin.dat'],
  );
  // an empty diff
  assert.deepEqual(parseDiff(Buffer.alloc(0), small), { files: [], overflow: false });
});
