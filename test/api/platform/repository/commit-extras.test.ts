// Commit comments, a commit's merge requests and signatures, repository housekeeping and storage,
// against real repositories: bodies, the rows and events afterwards, the repository on disk.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildTestApp, EXTERNAL_URL } from '../../../helpers/build-app.ts';
import { bareGit, workTree } from '../../../helpers/git.ts';
import { LEASE_TAKEN } from '../../../../src/domain/repository/housekeeping.ts';

const BOB = { name: 'Bob Builder', email: 'bob@example.com' };
const T0 = 1_600_000_000;

/** main: c1 (f.txt 1..5) → c2 (line 2 "two", Bob); feature: c1 → cf (h.txt) */
async function fixture(t: Parameters<typeof buildTestApp>[0], visibility = 'private') {
  const app = await buildTestApp(t);
  const owner = await app.seed.user({ name: 'Owner Person', email: 'owner@example.com' });
  const group = await app.seed.group({ path: 'acme', name: 'Acme' });
  const { project, dir } = await app.seed.repoProject({ namespace: group, visibility, path: 'tools' });
  await app.seed.member({ project }, owner, 40);
  const { headers } = await app.seed.token(owner);
  const wt = workTree(t, dir);
  const c1 = wt.write('f.txt', '1\n2\n3\n4\n5\n').commit('Initial commit', { time: T0 });
  wt.checkout('feature', true);
  const cf = wt.write('h.txt', 'h\n').commit('Add h', { time: T0 + 50, author: BOB });
  wt.checkout('main');
  const c2 = wt.write('f.txt', '1\ntwo\n3\n4\n5\n').commit('Spell two', { time: T0 + 100, author: BOB });
  wt.push();
  const web = `${EXTERNAL_URL}/acme/tools`;
  return { ...app, owner, group, project, dir, headers, wt, web, c1, c2, cf, base: `/api/v4/projects/${project.id}/repository` };
}

const userBasic = (u: { id: number; username: string; name: string }) => ({
  id: u.id,
  username: u.username,
  name: u.name,
  state: 'active',
  locked: false,
  avatar_url: null,
  web_url: `${EXTERNAL_URL}/${u.username}`,
});

// ---- comments ---------------------------------------------------------------------------------

test('POST/GET /commits/:sha/comments: plain notes and notes on a diff line, oldest first, the note event', async (t) => {
  const f = await fixture(t);
  const post = (payload: object, sha = f.c2, headers = f.headers) =>
    f.app.inject({ method: 'POST', url: `${f.base}/commits/${sha}/comments`, headers, payload });
  let res = await post({ note: 'Nice' });
  assert.equal(res.statusCode, 201);
  const first = res.json();
  assert.match(first.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.deepEqual(first, { note: 'Nice', path: null, line: null, line_type: null, author: userBasic(f.owner), created_at: first.created_at });

  // the added line 2 of f.txt; the removed line 2; a line the diff does not have
  res = await post({ note: 'On two', path: 'f.txt', line: 2, line_type: 'new' });
  assert.deepEqual([res.statusCode, res.json().path, res.json().line, res.json().line_type], [201, 'f.txt', 2, 'new']);
  res = await post({ note: 'Old two', path: 'f.txt', line: 2, line_type: 'old' });
  assert.deepEqual([res.json().path, res.json().line, res.json().line_type], ['f.txt', 2, 'old']);
  res = await post({ note: 'Default type', path: 'f.txt', line: 2 });
  assert.deepEqual([res.json().path, res.json().line, res.json().line_type], ['f.txt', 2, 'new']);
  res = await post({ note: 'Nowhere', path: 'f.txt', line: 4 });
  assert.deepEqual([res.statusCode, res.json().path, res.json().line, res.json().line_type], [201, null, null, null]);
  res = await post({ note: 'Other file', path: 'g.txt', line: 1 });
  assert.deepEqual([res.json().path, res.json().line], [null, null]);

  const rows = await f.c.db.kysely.selectFrom('commit_notes').selectAll().orderBy('id').execute();
  assert.equal(rows.length, 6);
  const sha1 = crypto.createHash('sha1').update('f.txt').digest('hex');
  assert.deepEqual(
    rows.map((r) => [r.commit_id, r.line_code]),
    [
      [f.c2, null],
      // GitLab's diff_line_code(path, new_pos, old_pos): "+two" follows "-2", at old position 3
      [f.c2, `${sha1}_3_2`],
      [f.c2, `${sha1}_2_2`],
      [f.c2, `${sha1}_3_2`],
      [f.c2, null],
      [f.c2, null],
    ],
  );

  // the list, by SHA or by branch name, paginated
  const list = await f.app.inject({ method: 'GET', url: `${f.base}/commits/main/comments?per_page=2`, headers: f.headers });
  assert.equal(list.statusCode, 200);
  assert.deepEqual(
    list.json().map((n: { note: string }) => n.note),
    ['Nice', 'On two'],
  );
  assert.deepEqual(list.json()[0], first);
  assert.equal(list.headers['x-total'], '6');
  assert.equal(list.headers['x-next-page'], '2');
  const other = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${f.c1}/comments`, headers: f.headers });
  assert.deepEqual([other.statusCode, other.json()], [200, []]);

  // GitLab's note hook payload for a commit, in the outbox
  const jobs = await f.c.db.kysely.selectFrom('jobs').select('payload').where('kind', '=', 'system_event').orderBy('id').execute();
  const notes = jobs.map((j) => JSON.parse(j.payload)).filter((p) => p.object_kind === 'note');
  assert.equal(notes.length, 6);
  const e = notes[1];
  assert.deepEqual(Object.keys(e), ['object_kind', 'event_type', 'user', 'project_id', 'project', 'object_attributes', 'repository', 'commit']);
  assert.equal(e.event_type, 'note');
  assert.equal(e.project_id, f.project.id);
  assert.equal(e.user.username, f.owner.username);
  assert.deepEqual(
    [e.object_attributes.id, e.object_attributes.note, e.object_attributes.noteable_type, e.object_attributes.commit_id, e.object_attributes.type],
    [rows[1].id, 'On two', 'Commit', f.c2, 'LegacyDiffNote'],
  );
  assert.equal(e.object_attributes.line_code, `${sha1}_3_2`);
  assert.equal(e.object_attributes.url, `${f.web}/-/commit/${f.c2}#note_${rows[1].id}`);
  assert.deepEqual(e.commit, {
    id: f.c2,
    message: 'Spell two\n',
    title: 'Spell two',
    timestamp: new Date((T0 + 100) * 1000).toISOString().replace('.000Z', '+00:00'),
    url: `${f.web}/-/commit/${f.c2}`,
    author: { name: BOB.name, email: BOB.email },
  });
  assert.equal(e.repository.name, 'tools');
});

test('/commits/:sha/comments: bad parameters, unknown commits, permissions', async (t) => {
  const f = await fixture(t);
  const guest = await f.seed.user();
  const stranger = await f.seed.user();
  await f.seed.member({ project: f.project }, guest, 10);
  const cases: [string, string, Record<string, string>, object | undefined, number, unknown][] = [
    ['POST', f.c2, f.headers, {}, 400, { error: 'note is missing' }],
    ['POST', f.c2, f.headers, { note: 'x', path: 'f.txt' }, 400, { error: 'line is missing' }],
    ['POST', f.c2, f.headers, { note: 'x', path: 'f.txt', line: 'two' }, 400, { error: 'line is invalid' }],
    ['POST', f.c2, f.headers, { note: 'x', path: 'f.txt', line: 1, line_type: 'side' }, 400, { error: 'line_type does not have a valid value' }],
    ['POST', f.c2, f.headers, { note: ' ' }, 400, { message: { note: ["can't be blank"] } }],
    ['POST', '1234567890123456789012345678901234567890', f.headers, { note: 'x' }, 404, { message: '404 Commit Not Found' }],
    ['GET', 'nobranch', f.headers, undefined, 404, { message: '404 Commit Not Found' }],
    ['POST', f.c2, {}, { note: 'x' }, 401, { message: '401 Unauthorized' }],
    ['GET', f.c2, {}, undefined, 404, { message: '404 Project Not Found' }],
    ['GET', f.c2, (await f.seed.token(stranger)).headers, undefined, 404, { message: '404 Project Not Found' }],
    ['POST', f.c2, (await f.seed.token(guest)).headers, { note: 'x' }, 403, { message: '403 Forbidden' }],
  ];
  for (const [method, sha, headers, payload, status, body] of cases) {
    const res = await f.app.inject({ method: method as 'GET', url: `${f.base}/commits/${sha}/comments`, headers, payload });
    assert.deepEqual([res.statusCode, res.json()], [status, body], `${method} ${sha} ${JSON.stringify(payload)}`);
  }
  assert.equal((await f.c.db.kysely.selectFrom('commit_notes').selectAll().execute()).length, 0);

  // a public project: anyone signed in may comment, anyone may read
  await f.c.db.kysely.updateTable('projects').set({ visibility: 'public' }).where('id', '=', f.project.id).execute();
  const res = await f.app.inject({
    method: 'POST',
    url: `${f.base}/commits/${f.c2}/comments`,
    headers: (await f.seed.token(stranger)).headers,
    payload: { note: 'Hi' },
  });
  assert.equal(res.statusCode, 201);
  const anon = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${f.c2}/comments` });
  assert.deepEqual(
    anon.json().map((n: { note: string; author: { id: number } }) => [n.note, n.author.id]),
    [['Hi', stranger.id]],
  );
  // an archived project takes no comments
  await f.c.db.kysely.updateTable('projects').set({ archived: 1 }).where('id', '=', f.project.id).execute();
  const archived = await f.app.inject({ method: 'POST', url: `${f.base}/commits/${f.c2}/comments`, headers: f.headers, payload: { note: 'x' } });
  assert.deepEqual([archived.statusCode, archived.json()], [403, { message: '403 Forbidden' }]);
});

// ---- merge requests of a commit ---------------------------------------------------------------

test('GET /commits/:sha/merge_requests: merge requests containing the commit, or merged by it; state filter; permissions', async (t) => {
  const f = await fixture(t);
  const mrs = `/api/v4/projects/${f.project.id}/merge_requests`;
  const created = await f.app.inject({
    method: 'POST',
    url: mrs,
    headers: f.headers,
    payload: { source_branch: 'feature', target_branch: 'main', title: 'Add h' },
  });
  assert.equal(created.statusCode, 201, created.body);
  const iid = created.json().iid;
  // found before the mergeability check in the background has written refs/merge-requests/<iid>/head, and after
  const early = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${f.cf}/merge_requests`, headers: f.headers });
  assert.deepEqual(
    early.json().map((m: { iid: number }) => m.iid),
    [iid],
  );
  await f.c.merges.idle();
  const listed = async () => (await f.app.inject({ method: 'GET', url: `${mrs}?state=all`, headers: f.headers })).json();

  let res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${f.cf}/merge_requests`, headers: f.headers });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), await listed());
  assert.equal(res.headers['x-total'], '1');
  // commits of the target only are not the merge request's
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${f.c1}/merge_requests`, headers: f.headers });
  assert.deepEqual(res.json(), []);
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${f.c2}/merge_requests`, headers: f.headers });
  assert.deepEqual(res.json(), []);

  const merged = await f.app.inject({ method: 'PUT', url: `${mrs}/${iid}/merge`, headers: f.headers });
  assert.equal(merged.statusCode, 200, merged.body);
  const mergeSha = merged.json().merge_commit_sha;
  for (const sha of [f.cf, mergeSha, 'main']) {
    res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${sha}/merge_requests`, headers: f.headers });
    assert.deepEqual(res.json(), await listed(), sha);
    assert.equal(res.json()[0].state, 'merged');
  }
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${mergeSha}/merge_requests?state=opened`, headers: f.headers });
  assert.deepEqual(res.json(), []);

  // a revert of the merge commit names the merge request (Commit#revert_description)
  const rev = await f.app.inject({ method: 'POST', url: `${f.base}/commits/${mergeSha}/revert`, headers: f.headers, payload: { branch: 'main' } });
  assert.equal(rev.statusCode, 201);
  assert.equal(rev.json().message, `Revert "Merge branch 'feature' into 'main'"\n\nThis reverts merge request !${iid}\n`);

  const reporter = await f.seed.user();
  const guest = await f.seed.user();
  await f.seed.member({ project: f.project }, reporter, 20);
  await f.seed.member({ project: f.project }, guest, 10);
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${f.cf}/merge_requests`, headers: (await f.seed.token(reporter)).headers });
  assert.equal(res.json().length, 1);
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${f.cf}/merge_requests`, headers: (await f.seed.token(guest)).headers });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/nobranch/merge_requests`, headers: f.headers });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Commit Not Found' }]);
});

// ---- signatures -------------------------------------------------------------------------------

const has = (cmd: string) => {
  try {
    execFileSync(cmd, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const hasSshKeygen = (() => {
  try {
    execFileSync('ssh-keygen', ['-?'], { stdio: 'ignore' });
    return true;
  } catch (e) {
    return (e as { status?: number }).status !== undefined && (e as { code?: string }).code !== 'ENOENT';
  }
})();

test('GET /commits/:sha/signature: an unsigned commit is 404 Signature Not Found; unknown commits 404', async (t) => {
  const f = await fixture(t);
  let res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${f.c2}/signature`, headers: f.headers });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Signature Not Found' }]);
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/nobranch/signature`, headers: f.headers });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Commit Not Found' }]);
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${f.c2}/signature` });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Project Not Found' }]);
});

test('GET /commits/:sha/signature: an SSH-signed commit (key unknown to the instance), a tampered one', {
  skip: hasSshKeygen ? false : 'ssh-keygen is not installed',
}, async (t) => {
  const f = await fixture(t);
  const keyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-sshkey-'));
  t.after(() => fs.rmSync(keyDir, { recursive: true, force: true }));
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'ada@example.com', '-f', path.join(keyDir, 'key')]);
  f.wt.write('s.txt', 's\n').git(['add', '-A']);
  f.wt.git(['-c', 'gpg.format=ssh', '-c', `user.signingkey=${path.join(keyDir, 'key.pub')}`, 'commit', '-q', '-S', '-m', 'Signed by SSH']);
  const signed = f.wt.git(['rev-parse', 'HEAD']);
  // the same commit with another message: the signature no longer matches
  const raw = f.wt.git(['cat-file', 'commit', signed]).replace('Signed by SSH', 'Tampered');
  const tampered = f.wt.git(['hash-object', '-t', 'commit', '-w', '--stdin'], {}, `${raw}\n`);
  f.wt.git(['branch', 'tampered', tampered]);
  f.wt.push();
  let res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${signed}/signature`, headers: f.headers });
  assert.deepEqual([res.statusCode, res.json()], [200, { signature_type: 'SSH', verification_status: 'unknown_key', key: null, commit_source: 'gitaly' }]);
  res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/tampered/signature`, headers: f.headers });
  assert.deepEqual([res.statusCode, res.json()], [200, { signature_type: 'SSH', verification_status: 'unverified', key: null, commit_source: 'gitaly' }]);
});

test('GET /commits/:sha/signature: a GPG-signed commit (key unknown to the instance)', { skip: has('gpg') ? false : 'gpg is not installed' }, async (t) => {
  const f = await fixture(t);
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-gpg-'));
  t.after(() => {
    try {
      execFileSync('gpgconf', ['--kill', 'all'], { env: { ...process.env, GNUPGHOME: home }, stdio: 'ignore' });
    } catch {}
    fs.rmSync(home, { recursive: true, force: true });
  });
  const env = { ...process.env, GNUPGHOME: home };
  execFileSync('gpg', ['--batch', '--quiet', '--passphrase', '', '--quick-gen-key', 'Ada <ada@example.com>', 'ed25519', 'sign', 'never'], {
    env,
    stdio: 'ignore',
  });
  const fpr = execFileSync('gpg', ['--list-keys', '--with-colons'], { env })
    .toString()
    .split('\n')
    .find((l) => l.startsWith('fpr:'))!
    .split(':')[9];
  f.wt.write('p.txt', 'p\n').git(['add', '-A']);
  f.wt.git(['-c', 'gpg.program=gpg', '-c', `user.signingkey=${fpr}`, 'commit', '-q', '-S', '-m', 'Signed by GPG'], { GNUPGHOME: home });
  const signed = f.wt.git(['rev-parse', 'HEAD']);
  f.wt.push();
  const res = await f.app.inject({ method: 'GET', url: `${f.base}/commits/${signed}/signature`, headers: f.headers });
  assert.deepEqual(
    [res.statusCode, res.json()],
    [
      200,
      {
        signature_type: 'PGP',
        verification_status: 'unknown_key',
        gpg_key_id: null,
        gpg_key_primary_keyid: fpr.slice(-16),
        gpg_key_user_name: null,
        gpg_key_user_email: null,
        gpg_key_subkey_id: null,
        commit_source: 'gitaly',
      },
    ],
  );
});

// ---- housekeeping and storage -----------------------------------------------------------------

test('POST /projects/:id/housekeeping: eager repacks and packs refs as a job; prune drops old unreachable objects', async (t) => {
  const f = await fixture(t);
  const url = `/api/v4/projects/${f.project.id}/housekeeping`;
  // an unreachable loose object, written an hour ago
  const blob = execFileSync('git', ['--git-dir', f.dir, 'hash-object', '-w', '--stdin'], { input: 'orphan\n' }).toString().trim();
  const loose = path.join(f.dir, 'objects', blob.slice(0, 2), blob.slice(2));
  const hourAgo = new Date(Date.now() - 3_600_000);
  fs.utimesSync(loose, hourAgo, hourAgo);

  let res = await f.app.inject({ method: 'POST', url, headers: f.headers });
  assert.equal(res.statusCode, 201);
  assert.match(res.json(), /^[0-9a-f]{24}$/);
  assert.match(res.headers['content-type'] as string, /^application\/json/);
  await f.c.housekeeping.idle();
  const jobs = await f.c.db.kysely.selectFrom('jobs').selectAll().where('kind', '=', 'repository_housekeeping').execute();
  assert.deepEqual(
    jobs.map((j) => [j.state, JSON.parse(j.payload).task, JSON.parse(j.payload).project_id, JSON.parse(j.payload).jid]),
    [['done', 'eager', f.project.id, res.json()]],
  );
  const packs = fs.readdirSync(path.join(f.dir, 'objects', 'pack')).filter((n) => n.endsWith('.pack'));
  assert.equal(packs.length, 1);
  assert.ok(fs.existsSync(path.join(f.dir, 'packed-refs')));
  assert.equal(bareGit(f.dir, ['rev-parse', 'refs/heads/main']).trim(), f.c2);
  // younger than two weeks: eager keeps it
  assert.ok(fs.existsSync(loose));

  res = await f.app.inject({ method: 'POST', url, headers: f.headers, payload: { task: 'prune' } });
  assert.equal(res.statusCode, 201);
  await f.c.housekeeping.idle();
  assert.ok(!fs.existsSync(loose));
  assert.equal(bareGit(f.dir, ['cat-file', '-t', f.cf]).trim(), 'commit');

  // the API still reads the repository
  const tree = await f.app.inject({ method: 'GET', url: `${f.base}/files/f.txt/blame?ref=main`, headers: f.headers });
  assert.equal(tree.statusCode, 200);
});

test('POST /projects/:id/housekeeping: 409 while one is queued or running; task values; permissions', async (t) => {
  const f = await fixture(t);
  const url = `/api/v4/projects/${f.project.id}/housekeeping`;
  const developer = await f.seed.user();
  const stranger = await f.seed.user();
  await f.seed.member({ project: f.project }, developer, 30);
  const cases: [Record<string, string>, object | undefined, number, unknown][] = [
    [f.headers, { task: 'gc' }, 400, { error: 'task does not have a valid value' }],
    [(await f.seed.token(developer)).headers, undefined, 403, { message: '403 Forbidden' }],
    [(await f.seed.token(stranger)).headers, undefined, 404, { message: '404 Project Not Found' }],
    [{}, undefined, 401, { message: '401 Unauthorized' }],
  ];
  for (const [headers, payload, status, body] of cases) {
    const res = await f.app.inject({ method: 'POST', url, headers, payload });
    assert.deepEqual([res.statusCode, res.json()], [status, body], JSON.stringify(payload));
  }
  const missing = await f.app.inject({ method: 'POST', url: '/api/v4/projects/999999/housekeeping', headers: f.headers });
  assert.deepEqual([missing.statusCode, missing.json()], [404, { message: '404 Project Not Found' }]);

  // a housekeeping of this project waiting elsewhere (another node's queue): GitLab's lease is taken
  const now = new Date().toISOString();
  await f.c.db.kysely
    .insertInto('jobs')
    .values({
      kind: 'repository_housekeeping',
      payload: JSON.stringify({ project_id: f.project.id, task: 'eager', jid: 'x' }),
      state: 'running',
      attempts: 1,
      run_at: now,
      locked_by: 'elsewhere',
      locked_until: new Date(Date.now() + 3_600_000).toISOString(),
      last_error: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  const res = await f.app.inject({ method: 'POST', url, headers: f.headers, payload: { task: 'prune' } });
  assert.deepEqual([res.statusCode, res.json()], [409, { message: LEASE_TAKEN }]);
  // another project is not concerned
  const other = await f.seed.repoProject({ namespace: f.group });
  const ok = await f.app.inject({ method: 'POST', url: `/api/v4/projects/${other.project.id}/housekeeping`, headers: f.root });
  assert.equal(ok.statusCode, 201);
  await f.c.housekeeping.idle();
});

test('GET /projects/:id/storage: administrators only', async (t) => {
  const f = await fixture(t);
  const url = `/api/v4/projects/${f.project.id}/storage`;
  const res = await f.app.inject({ method: 'GET', url, headers: f.root });
  const h = crypto.createHash('sha256').update(String(f.project.id)).digest('hex');
  assert.deepEqual(
    [res.statusCode, res.json()],
    [
      200,
      {
        disk_path: `@hashed/${h.slice(0, 2)}/${h.slice(2, 4)}/${h}`,
        project_id: f.project.id,
        repository_storage: 'default',
        created_at: f.project.created_at,
      },
    ],
  );
  assert.ok(f.dir.endsWith(`${res.json().disk_path}.git`));
  const cases: [Record<string, string>, number, unknown][] = [
    [f.headers, 403, { message: '403 Forbidden' }],
    [{}, 401, { message: '401 Unauthorized' }],
  ];
  for (const [headers, status, body] of cases) {
    const r = await f.app.inject({ method: 'GET', url, headers });
    assert.deepEqual([r.statusCode, r.json()], [status, body]);
  }
  for (const id of ['999999', '3000000000']) {
    const missing = await f.app.inject({ method: 'GET', url: `/api/v4/projects/${id}/storage`, headers: f.root });
    assert.deepEqual([missing.statusCode, missing.json()], [404, { message: '404 Project Not Found' }]);
    const hk = await f.app.inject({ method: 'POST', url: `/api/v4/projects/${id}/housekeeping`, headers: f.root });
    assert.deepEqual([hk.statusCode, hk.json()], [404, { message: '404 Project Not Found' }]);
    const blame = await f.app.inject({ method: 'GET', url: `/api/v4/projects/${id}/repository/files/f.txt/blame?ref=main`, headers: f.root });
    assert.deepEqual([blame.statusCode, blame.json()], [404, { message: '404 Project Not Found' }]);
    const rev = await f.app.inject({
      method: 'POST',
      url: `/api/v4/projects/${id}/repository/commits/main/revert`,
      headers: f.root,
      payload: { branch: 'main' },
    });
    assert.deepEqual([rev.statusCode, rev.json()], [404, { message: '404 Project Not Found' }]);
  }
});
