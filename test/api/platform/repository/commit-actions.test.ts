// Blame, revert and cherry-pick against real repositories: the bodies, the refs and trees afterwards,
// the push events, conflicts, empty changes, dry runs, protected branches and permissions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, EXTERNAL_URL } from '../../../helpers/build-app.ts';
import { eventsAfter, lastJobId } from '../../../helpers/outbox.ts';
import { AUTHOR, bareGit, commitJson, workTree } from '../../../helpers/git.ts';

const BOB = { name: 'Bob Builder', email: 'bob@example.com' };
const T0 = 1_600_000_000;

/** GitLab's rendering of a commit time (ISO with milliseconds and the zone). */
const gitlabTime = (t: number, tz = '+00:00') => {
  const [h, m] = tz.slice(1).split(':').map(Number);
  const offset = (tz.startsWith('-') ? -1 : 1) * (h * 60 + m);
  return new Date((t + offset * 60) * 1000).toISOString().slice(0, 23) + tz;
};

/**
 * main: c1 (f.txt 1..5, README) → c2 (f.txt line 2 "two", Bob, +0200) → c3 (g.txt)
 * feature: c1 → cf (h.txt, Bob)
 */
async function fixture(t: Parameters<typeof buildTestApp>[0], visibility = 'private') {
  const app = await buildTestApp(t);
  const owner = await app.seed.user({ name: 'Owner Person', email: 'owner@example.com' });
  const group = await app.seed.group({ path: 'acme', name: 'Acme' });
  const { project, dir } = await app.seed.repoProject({ namespace: group, visibility, path: 'tools' });
  await app.seed.member({ project }, owner, 40);
  const { headers } = await app.seed.token(owner);
  const wt = workTree(t, dir);
  const c1 = wt.write('f.txt', '1\n2\n3\n4\n5\n').write('README.md', '# Tools\n').commit('Initial commit', { time: T0 });
  wt.checkout('feature', true);
  const cf = wt.write('h.txt', 'h\n').commit('Add h\n\nWith a body.\n', { time: T0 + 50, author: BOB });
  wt.checkout('main');
  const c2 = wt.write('f.txt', '1\ntwo\n3\n4\n5\n').commit('Spell two', { time: T0 + 100, author: BOB, tz: '+0200' });
  const c3 = wt.write('g.txt', 'g\n').commit('Add g', { time: T0 + 200 });
  wt.push();
  const web = `${EXTERNAL_URL}/acme/tools`;
  return { ...app, owner, group, project, dir, headers, wt, web, c1, c2, c3, cf, base: `/api/v4/projects/${project.id}/repository` };
}

const head = (dir: string, branch: string) => bareGit(dir, ['rev-parse', `refs/heads/${branch}`]).trim();
const files = (dir: string, rev: string) => bareGit(dir, ['ls-tree', '-r', '--name-only', rev]).split('\n').filter(Boolean);

// ---- blame ------------------------------------------------------------------------------------

test('GET /files/:path/blame: runs of lines by commit, GitLab’s commit fields, the file headers; HEAD too', async (t) => {
  const f = await fixture(t);
  const blameCommit = (sha: string) => {
    const j = commitJson(f.dir, sha, f.web);
    return {
      id: sha,
      parent_ids: j.parent_ids,
      message: j.message,
      authored_date: j.authored_date,
      author_name: j.author_name,
      author_email: j.author_email,
      committed_date: j.committed_date,
      committer_name: j.committer_name,
      committer_email: j.committer_email,
    };
  };
  const res = await f.app.inject({ method: 'GET', url: `${f.base}/files/f.txt/blame?ref=main`, headers: f.headers });
  assert.equal(res.statusCode, 200);
  const c2 = blameCommit(f.c2);
  // Bob's commit in +0200: the dates keep their zone
  c2.authored_date = gitlabTime(T0 + 100, '+02:00');
  c2.committed_date = gitlabTime(T0 + 100, '+02:00');
  const c1 = { ...blameCommit(f.c1), authored_date: gitlabTime(T0), committed_date: gitlabTime(T0) };
  assert.deepEqual(res.json(), [
    { commit: c1, lines: ['1'] },
    { commit: c2, lines: ['two'] },
    { commit: c1, lines: ['3', '4', '5'] },
  ]);
  assert.equal(res.headers['x-gitlab-file-path'], 'f.txt');
  assert.equal(res.headers['x-gitlab-file-name'], 'f.txt');
  assert.equal(res.headers['x-gitlab-ref'], 'main');
  assert.equal(res.headers['x-gitlab-last-commit-id'], f.c2);
  assert.equal(res.headers['x-gitlab-blob-id'], bareGit(f.dir, ['rev-parse', 'main:f.txt']).trim());

  // a range: lines 2..3; a range past the end stops at the last line; one after it is empty
  let r = await f.app.inject({ method: 'GET', url: `${f.base}/files/f.txt/blame?ref=main&range[start]=2&range[end]=3`, headers: f.headers });
  assert.equal(r.statusCode, 200);
  assert.deepEqual(r.json(), [
    { commit: c2, lines: ['two'] },
    { commit: c1, lines: ['3'] },
  ]);
  r = await f.app.inject({ method: 'GET', url: `${f.base}/files/f.txt/blame?ref=main&range[start]=4&range[end]=99`, headers: f.headers });
  assert.deepEqual(r.json(), [{ commit: c1, lines: ['4', '5'] }]);
  r = await f.app.inject({ method: 'GET', url: `${f.base}/files/f.txt/blame?ref=main&range[start]=9&range[end]=12`, headers: f.headers });
  assert.deepEqual([r.statusCode, r.json()], [200, []]);

  // an older ref, by SHA: all lines of c1
  r = await f.app.inject({ method: 'GET', url: `${f.base}/files/f.txt/blame?ref=${f.c1}`, headers: f.headers });
  assert.deepEqual(r.json(), [{ commit: c1, lines: ['1', '2', '3', '4', '5'] }]);

  const h = await f.app.inject({ method: 'HEAD', url: `${f.base}/files/f.txt/blame?ref=main`, headers: f.headers });
  assert.equal(h.statusCode, 200);
  assert.equal(h.body, '');
  assert.equal(h.headers['x-gitlab-file-path'], 'f.txt');
});

test('GET /files/:path/blame: bad parameters, missing file and commit, permissions', async (t) => {
  const f = await fixture(t);
  const reporter = await f.seed.user();
  const guest = await f.seed.user();
  await f.seed.member({ project: f.project }, reporter, 20);
  await f.seed.member({ project: f.project }, guest, 10);
  const cases: [string, Record<string, string> | null, number, unknown][] = [
    ['f.txt/blame', f.headers, 400, { error: 'ref is missing' }],
    ['f.txt/blame?ref=', f.headers, 400, { error: 'ref is empty' }],
    ['f.txt/blame?ref=main&range[start]=1', f.headers, 400, { error: 'range[end] is missing' }],
    ['f.txt/blame?ref=main&range[start]=x&range[end]=2', f.headers, 400, { error: 'range[start] is invalid' }],
    [
      'f.txt/blame?ref=main&range[start]=0&range[end]=-1',
      f.headers,
      400,
      { error: 'range[start] does not have a valid value, range[end] does not have a valid value' },
    ],
    ['f.txt/blame?ref=main&range[start]=3&range[end]=2', f.headers, 400, { error: 'range[end] must be greater than or equal to range[start]' }],
    ['..%2Ff.txt/blame?ref=main', f.headers, 400, { error: 'file_path should be a valid file path' }],
    ['nope.txt/blame?ref=main', f.headers, 404, { message: '404 File Not Found' }],
    ['f.txt/blame?ref=1111111111111111111111111111111111111111', f.headers, 404, { message: '404 Commit Not Found' }],
    ['f.txt/blame?ref=nobranch', f.headers, 404, { message: '404 Commit Not Found' }],
    ['f.txt/blame?ref=main', null, 404, { message: '404 Project Not Found' }],
    ['f.txt/blame?ref=main', (await f.seed.token(guest)).headers, 403, { message: '403 Forbidden' }],
  ];
  for (const [path, headers, status, body] of cases) {
    const res = await f.app.inject({ method: 'GET', url: `${f.base}/files/${path}`, headers: headers ?? {} });
    assert.deepEqual([res.statusCode, res.json()], [status, body], path);
  }
  const ok = await f.app.inject({ method: 'GET', url: `${f.base}/files/f.txt/blame?ref=main`, headers: (await f.seed.token(reporter)).headers });
  assert.equal(ok.statusCode, 200);
  // a directory is not a file
  f.wt.write('d/x.txt', 'x\n').commit('Add d');
  f.wt.push();
  const dir = await f.app.inject({ method: 'GET', url: `${f.base}/files/d/blame?ref=main`, headers: f.headers });
  assert.deepEqual([dir.statusCode, dir.json()], [404, { message: '404 File Not Found' }]);
});

test('GET /files/:path/blame in a public project: anonymous readers see it', async (t) => {
  const f = await fixture(t, 'public');
  const res = await f.app.inject({ method: 'GET', url: `${f.base}/files/README.md/blame?ref=main` });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(
    res.json().map((g: { commit: { id: string }; lines: string[] }) => [g.commit.id, g.lines]),
    [[f.c1, ['# Tools']]],
  );
});

// ---- revert -----------------------------------------------------------------------------------

test('POST /commits/:sha/revert: a new commit by the caller on the branch, GitLab’s message, push events', async (t) => {
  const f = await fixture(t);
  const before = await lastJobId(f.c);
  const res = await f.app.inject({ method: 'POST', url: `${f.base}/commits/${f.c3}/revert`, headers: f.headers, payload: { branch: 'main' } });
  assert.equal(res.statusCode, 201);
  const sha = head(f.dir, 'main');
  assert.notEqual(sha, f.c3);
  const body = res.json();
  assert.deepEqual(body, commitJson(f.dir, sha, f.web));
  assert.equal(body.message, `Revert "Add g"\n\nThis reverts commit ${f.c3}\n`);
  assert.deepEqual(body.parent_ids, [f.c3]);
  assert.deepEqual(
    [body.author_name, body.author_email, body.committer_name, body.committer_email],
    ['Owner Person', 'owner@example.com', 'Owner Person', 'owner@example.com'],
  );
  // the tree: g.txt is gone, nothing else changed
  assert.deepEqual(files(f.dir, sha), ['README.md', 'f.txt']);
  assert.equal(bareGit(f.dir, ['rev-parse', `${sha}^{tree}`]), bareGit(f.dir, ['rev-parse', `${f.c2}^{tree}`]));
  const events = await eventsAfter(f.c, before);
  assert.deepEqual(
    events.map((e) => [e.event_name, e.ref ?? e.refs, e.before ?? null, e.after ?? null]),
    [
      ['push', 'refs/heads/main', f.c3, sha],
      ['repository_update', ['refs/heads/main'], null, null],
    ],
  );
  assert.equal(events[0].user_username, f.owner.username);

  // reverting it again changes nothing: GitLab's "empty"
  const again = await f.app.inject({ method: 'POST', url: `${f.base}/commits/${f.c3}/revert`, headers: f.headers, payload: { branch: 'main' } });
  assert.deepEqual(
    [again.statusCode, again.json()],
    [
      400,
      {
        message:
          'Sorry, we cannot revert this commit automatically. This commit may already have been reverted, or a more recent commit may have updated some of its content.',
        error_code: 'empty',
      },
    ],
  );
  assert.equal(head(f.dir, 'main'), sha);
});

test('POST /commits/:sha/revert: conflicts, dry runs, a merge commit (first parent)', async (t) => {
  const f = await fixture(t);
  // line 2 changed again: reverting c2 ("2" → "two") no longer applies
  const c4 = f.wt.write('f.txt', '1\nTWO\n3\n4\n5\n').commit('Shout two');
  f.wt.push();
  const conflict = {
    message:
      'Sorry, we cannot revert this commit automatically. This commit may already have been reverted, or a more recent commit may have updated some of its content.',
    error_code: 'conflict',
  };
  let res = await f.app.inject({ method: 'POST', url: `${f.base}/commits/${f.c2}/revert`, headers: f.headers, payload: { branch: 'main' } });
  assert.deepEqual([res.statusCode, res.json()], [400, conflict]);
  res = await f.app.inject({ method: 'POST', url: `${f.base}/commits/${f.c2}/revert`, headers: f.headers, payload: { branch: 'main', dry_run: true } });
  assert.deepEqual([res.statusCode, res.json()], [400, { ...conflict, dry_run: 'error' }]);
  assert.equal(head(f.dir, 'main'), c4);

  // a dry run that would succeed: nothing moves
  res = await f.app.inject({ method: 'POST', url: `${f.base}/commits/${f.c3}/revert`, headers: f.headers, payload: { branch: 'main', dry_run: true } });
  assert.deepEqual([res.statusCode, res.json()], [200, { dry_run: 'success' }]);
  assert.equal(head(f.dir, 'main'), c4);
  const empty = await f.app.inject({ method: 'POST', url: `${f.base}/commits/${f.cf}/revert`, headers: f.headers, payload: { branch: 'main', dry_run: true } });
  assert.deepEqual([empty.statusCode, empty.json().error_code, empty.json().dry_run], [400, 'empty', 'error']);

  // a merge commit is reverted against its first parent
  const env = { GIT_COMMITTER_NAME: AUTHOR.name, GIT_COMMITTER_EMAIL: AUTHOR.email, GIT_AUTHOR_NAME: AUTHOR.name, GIT_AUTHOR_EMAIL: AUTHOR.email };
  f.wt.git(['merge', '-q', '--no-ff', '-m', 'Merge feature', 'feature'], env);
  const merge = f.wt.git(['rev-parse', 'HEAD']);
  f.wt.push();
  res = await f.app.inject({ method: 'POST', url: `${f.base}/commits/${merge}/revert`, headers: f.headers, payload: { branch: 'main' } });
  assert.equal(res.statusCode, 201);
  assert.deepEqual(files(f.dir, 'main'), ['README.md', 'f.txt', 'g.txt']);
  assert.deepEqual(res.json().parent_ids, [merge]);
});

test('POST /commits/:sha/revert and /cherry_pick: parameters, missing commit and branch, protection, permissions', async (t) => {
  const f = await fixture(t);
  const developer = await f.seed.user();
  const reporter = await f.seed.user();
  const stranger = await f.seed.user();
  await f.seed.member({ project: f.project }, developer, 30);
  await f.seed.member({ project: f.project }, reporter, 20);
  const dev = (await f.seed.token(developer)).headers;
  const rep = (await f.seed.token(reporter)).headers;
  const str = (await f.seed.token(stranger)).headers;
  const refused = { message: '403 Forbidden - You are not allowed to push into this branch' };
  const cases: [string, Record<string, string>, unknown, number, unknown][] = [
    [`${f.c3}/revert`, f.headers, {}, 400, { error: 'branch is missing' }],
    [`${f.c3}/revert`, f.headers, { branch: '' }, 400, { error: 'branch is empty' }],
    [`${f.c3}/revert`, f.headers, { branch: '  ' }, 400, { error: 'branch is empty' }],
    [`${f.c3}/revert`, f.headers, { branch: 'main', dry_run: 'maybe' }, 400, { error: 'dry_run is invalid' }],
    [`${f.c3}/cherry_pick`, f.headers, {}, 400, { error: 'branch is missing' }],
    ['1234567890123456789012345678901234567890/revert', f.headers, { branch: 'main' }, 404, { message: '404 Commit Not Found' }],
    ['nobranch/cherry_pick', f.headers, { branch: 'main' }, 404, { message: '404 Commit Not Found' }],
    [`${f.c3}/revert`, f.headers, { branch: 'nope' }, 404, { message: '404 Branch Not Found' }],
    [`${f.cf}/cherry_pick`, f.headers, { branch: 'a..b' }, 400, { message: 'The branch refname is invalid' }],
    // the default branch is protected: Developers may not push to it
    [`${f.c3}/revert`, dev, { branch: 'main' }, 403, refused],
    [`${f.cf}/cherry_pick`, dev, { branch: 'main', dry_run: true }, 403, refused],
    [`${f.c3}/revert`, rep, { branch: 'main' }, 403, refused],
    [`${f.c3}/revert`, str, { branch: 'main' }, 404, { message: '404 Project Not Found' }],
    [`${f.c3}/revert`, {}, { branch: 'main' }, 401, { message: '401 Unauthorized' }],
  ];
  for (const [path, headers, payload, status, body] of cases) {
    const res = await f.app.inject({ method: 'POST', url: `${f.base}/commits/${path}`, headers, payload: payload as object });
    assert.deepEqual([res.statusCode, res.json()], [status, body], `${path} ${JSON.stringify(payload)}`);
  }
  assert.equal(head(f.dir, 'main'), f.c3);
  // a Developer may revert on an unprotected branch
  const res = await f.app.inject({ method: 'POST', url: `${f.base}/commits/${f.cf}/revert`, headers: dev, payload: { branch: 'feature' } });
  assert.equal(res.statusCode, 201);
  assert.deepEqual(files(f.dir, 'feature'), ['README.md', 'f.txt']);
  assert.equal(res.json().author_name, developer.name);

  // an archived project takes no writes, not even from its owner
  await f.c.db.kysely.updateTable('projects').set({ archived: 1 }).where('id', '=', f.project.id).execute();
  const archived = await f.app.inject({ method: 'POST', url: `${f.base}/commits/${f.c3}/revert`, headers: f.headers, payload: { branch: 'main' } });
  assert.deepEqual([archived.statusCode, archived.json()], [403, refused]);
});

// ---- cherry-pick ------------------------------------------------------------------------------

test('POST /commits/:sha/cherry_pick: the original author, the caller as committer, GitLab’s message or a custom one', async (t) => {
  const f = await fixture(t);
  // main's head (c3, adding g.txt) onto feature, named by its branch, with a message of one's own
  let res = await f.app.inject({
    method: 'POST',
    url: `${f.base}/commits/main/cherry_pick`,
    headers: f.headers,
    payload: { branch: 'feature', message: 'Picked' },
  });
  assert.equal(res.statusCode, 201);
  assert.equal(res.json().message, 'Picked\n');
  assert.deepEqual(res.json().parent_ids, [f.cf]);
  assert.deepEqual(files(f.dir, 'feature'), ['README.md', 'f.txt', 'g.txt', 'h.txt']);

  const before = await lastJobId(f.c);
  res = await f.app.inject({ method: 'POST', url: `${f.base}/commits/${f.cf}/cherry_pick`, headers: f.headers, payload: { branch: 'main' } });
  assert.equal(res.statusCode, 201);
  const sha = head(f.dir, 'main');
  const body = res.json();
  assert.deepEqual(body, commitJson(f.dir, sha, f.web));
  assert.equal(body.message, `Add h\n\nWith a body.\n\n(cherry picked from commit ${f.cf})\n`);
  assert.deepEqual(body.parent_ids, [f.c3]);
  assert.deepEqual([body.author_name, body.author_email, body.authored_date], [BOB.name, BOB.email, gitlabTime(T0 + 50)]);
  assert.deepEqual([body.committer_name, body.committer_email], ['Owner Person', 'owner@example.com']);
  assert.deepEqual(files(f.dir, sha), ['README.md', 'f.txt', 'g.txt', 'h.txt']);
  const events = await eventsAfter(f.c, before);
  assert.deepEqual(
    events.map((e) => e.event_name),
    ['push', 'repository_update'],
  );
  assert.deepEqual([events[0].before, events[0].after], [f.c3, sha]);

  // picked again: nothing to change
  res = await f.app.inject({ method: 'POST', url: `${f.base}/commits/${f.cf}/cherry_pick`, headers: f.headers, payload: { branch: 'main' } });
  assert.deepEqual(
    [res.statusCode, res.json()],
    [
      400,
      {
        message:
          'Sorry, we cannot cherry-pick this commit automatically. This commit may already have been cherry-picked, or a more recent commit may have updated some of its content.',
        error_code: 'empty',
      },
    ],
  );

  assert.equal(head(f.dir, 'main'), sha);
});

test('POST /commits/:sha/cherry_pick: conflicts and dry runs', async (t) => {
  const f = await fixture(t);
  // feature changes line 2 differently from main's c2
  f.wt.checkout('feature');
  const cx = f.wt.write('f.txt', '1\nzwei\n3\n4\n5\n').commit('German two');
  f.wt.push();
  const conflict = {
    message:
      'Sorry, we cannot cherry-pick this commit automatically. This commit may already have been cherry-picked, or a more recent commit may have updated some of its content.',
    error_code: 'conflict',
  };
  let res = await f.app.inject({ method: 'POST', url: `${f.base}/commits/${cx}/cherry_pick`, headers: f.headers, payload: { branch: 'main' } });
  assert.deepEqual([res.statusCode, res.json()], [400, conflict]);
  res = await f.app.inject({ method: 'POST', url: `${f.base}/commits/${cx}/cherry_pick`, headers: f.headers, payload: { branch: 'main', dry_run: true } });
  assert.deepEqual([res.statusCode, res.json()], [400, { ...conflict, dry_run: 'error' }]);
  res = await f.app.inject({ method: 'POST', url: `${f.base}/commits/${f.cf}/cherry_pick`, headers: f.headers, payload: { branch: 'main', dry_run: true } });
  assert.deepEqual([res.statusCode, res.json()], [200, { dry_run: 'success' }]);
  assert.equal(head(f.dir, 'main'), f.c3);
  // a root commit is picked against the empty tree: its files are already there
  res = await f.app.inject({ method: 'POST', url: `${f.base}/commits/${f.c1}/cherry_pick`, headers: f.headers, payload: { branch: 'main' } });
  assert.equal(res.statusCode, 400);
  assert.equal(res.json().error_code, 'conflict');
});

test('POST /commits/:sha/cherry_pick and /revert: a wildcard protected branch that no one may push to refuses them', async (t) => {
  const f = await fixture(t);
  const protect = await f.app.inject({
    method: 'POST',
    url: `/api/v4/projects/${f.project.id}/protected_branches`,
    headers: f.headers,
    payload: { name: 'feat*', push_access_level: 0, merge_access_level: 40 },
  });
  assert.equal(protect.statusCode, 201, protect.body);
  const refused = { message: '403 Forbidden - You are not allowed to push into this branch' };
  for (const [path, payload] of [
    [`${f.c3}/cherry_pick`, { branch: 'feature' }],
    [`${f.cf}/revert`, { branch: 'feature', dry_run: true }],
  ] as const) {
    const res = await f.app.inject({ method: 'POST', url: `${f.base}/commits/${path}`, headers: f.headers, payload });
    assert.deepEqual([res.statusCode, res.json()], [403, refused], path);
  }
  assert.equal(head(f.dir, 'feature'), f.cf);
  // unprotected again: the pick goes through
  const del = await f.app.inject({ method: 'DELETE', url: `/api/v4/projects/${f.project.id}/protected_branches/feat*`, headers: f.headers });
  assert.equal(del.statusCode, 204);
  const res = await f.app.inject({ method: 'POST', url: `${f.base}/commits/${f.c3}/cherry_pick`, headers: f.headers, payload: { branch: 'feature' } });
  assert.equal(res.statusCode, 201);
  assert.deepEqual(files(f.dir, 'feature'), ['README.md', 'f.txt', 'g.txt', 'h.txt']);
});
