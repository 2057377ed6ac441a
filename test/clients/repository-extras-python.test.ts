// python-gitlab against a running server: project.files.blame(), commit.revert(), commit.cherry_pick(),
// commit.signature() (404 message), commit comments, commit.merge_requests(), project.housekeeping(),
// project.storage.get() — checked against git on the same repository (skipped where python-gitlab is
// not installed, unless CI=true).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { bareGit, workTree } from '../helpers/git.ts';
import { ROOT_TOKEN } from '../helpers/build-app.ts';

const PYTHON = '/usr/bin/python3';
const available = spawnSync(PYTHON, ['-c', 'import gitlab'], { stdio: 'ignore' }).status === 0;

const SCRIPT = `
import json, sys
import gitlab
base, token, pid, c1, c2, cf = sys.argv[1:7]
gl = gitlab.Gitlab(base, private_token=token)
project = gl.projects.get(int(pid))
out = {}

blame = project.files.blame('f.txt', 'main')
out['blame'] = [[g['commit']['id'], g['lines']] for g in blame]
out['blame_range'] = [[g['commit']['id'], g['lines']] for g in project.files.blame('f.txt', 'main', query_parameters={'range[start]': 2, 'range[end]': 3})]

commit = project.commits.get(c2)
try:
    commit.signature()
    out['signature'] = 'signed?'
except gitlab.exceptions.GitlabGetError as e:
    out['signature'] = [e.response_code, e.error_message]

commit.comments.create({'note': 'Looks right'})
commit.comments.create({'note': 'On two', 'path': 'f.txt', 'line': 2, 'line_type': 'new'})
out['comments'] = [[n.note, n.path, n.line, n.line_type, n.author['username']] for n in commit.comments.list()]

picked = project.commits.get(cf)
picked.cherry_pick('main')
out['main_after_pick'] = project.branches.get('main').commit['id']
try:
    picked.cherry_pick('main')
    out['pick_again'] = 'picked?'
except gitlab.exceptions.GitlabCherryPickError as e:
    out['pick_again'] = [e.response_code, e.error_message]

reverted = commit.revert('main')
out['revert'] = [reverted['title'], reverted['message'], reverted['parent_ids']]

out['merge_requests'] = [m['iid'] for m in project.commits.get(cf).merge_requests()]

project.housekeeping()

storage = project.storage.get()
out['storage'] = [storage.project_id, storage.repository_storage, storage.disk_path.startswith('@hashed/')]
print(json.dumps(out))
`;

const AGAIN = `
import json, sys
import gitlab
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
try:
    gl.projects.get(int(sys.argv[3]), lazy=True).housekeeping()
    print(json.dumps('ok'))
except gitlab.exceptions.GitlabHousekeepingError as e:
    print(json.dumps([e.response_code, e.error_message]))
`;

test('python-gitlab: blame, revert, cherry-pick, signature, comments, merge requests, housekeeping, storage', {
  skip: skipWithout(available, 'python-gitlab'),
}, async (t) => {
  assertTool(available, 'python-gitlab');
  const { seed, base, c, app } = await startTestServer(t, {}, { selfUrl: true });
  const owner = await seed.user();
  const group = await seed.group();
  const { project, dir } = await seed.repoProject({ namespace: group, visibility: 'private' });
  await seed.member({ project }, owner, 40);
  const wt = workTree(t, dir);
  const c1 = wt.write('f.txt', '1\n2\n3\n').commit('Initial');
  wt.checkout('feature', true);
  const cf = wt.write('h.txt', 'h\n').commit('Add h', { author: { name: 'Bob', email: 'bob@example.com' } });
  wt.checkout('main');
  const c2 = wt.write('f.txt', '1\ntwo\n3\n').commit('Spell two');
  wt.push();
  // a merge request from feature, checked (its head ref written)
  const mr = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/merge_requests`,
    headers: (await seed.token(owner)).headers,
    payload: { source_branch: 'feature', target_branch: 'main', title: 'Add h' },
  });
  assert.equal(mr.statusCode, 201, mr.body);
  await c.merges.idle();
  const out = await promisify(execFile)(PYTHON, ['-c', SCRIPT, base, ROOT_TOKEN, String(project.id), c1, c2, cf]).catch((e) => e);
  assert.equal(out.stderr ?? '', '', out.stdout);
  const r = JSON.parse(out.stdout);
  assert.deepEqual(r.blame, [
    [c1, ['1']],
    [c2, ['two']],
    [c1, ['3']],
  ]);
  assert.deepEqual(r.blame_range, [
    [c2, ['two']],
    [c1, ['3']],
  ]);
  assert.deepEqual(r.signature, [404, '404 Signature Not Found']);
  assert.deepEqual(r.comments, [
    ['Looks right', null, null, null, 'root'],
    ['On two', 'f.txt', 2, 'new', 'root'],
  ]);
  const afterRevert = bareGit(dir, ['rev-parse', 'refs/heads/main']).trim();
  assert.notEqual(r.main_after_pick, c2);
  assert.equal(bareGit(dir, ['show', '-s', '--format=%P|%an|%B', r.main_after_pick]).trim(), `${c2}|Bob|Add h\n\n(cherry picked from commit ${cf})`);
  assert.deepEqual(r.pick_again, [
    400,
    'Sorry, we cannot cherry-pick this commit automatically. This commit may already have been cherry-picked, or a more recent commit may have updated some of its content.',
  ]);
  assert.deepEqual(r.revert, ['Revert "Spell two"', `Revert "Spell two"\n\nThis reverts commit ${c2}\n`, [r.main_after_pick]]);
  assert.equal(bareGit(dir, ['show', `${afterRevert}:f.txt`]), '1\n2\n3\n');
  assert.deepEqual(r.merge_requests, [1]);
  assert.deepEqual(r.storage, [project.id, 'default', true]);
  await c.housekeeping.idle();
  const jobs = await c.db.kysely.selectFrom('jobs').select(['state', 'payload']).where('kind', '=', 'repository_housekeeping').execute();
  assert.deepEqual(
    jobs.map((j) => [j.state, JSON.parse(j.payload).task]),
    [['done', 'eager']],
  );

  // a housekeeping of the project running elsewhere: the next request is GitLab's 409
  const now = new Date().toISOString();
  await c.db.kysely
    .insertInto('jobs')
    .values({
      kind: 'repository_housekeeping',
      payload: JSON.stringify({ project_id: project.id, task: 'prune', jid: 'x' }),
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
  const again = await promisify(execFile)(PYTHON, ['-c', AGAIN, base, ROOT_TOKEN, String(project.id)]).catch((e) => e);
  assert.equal(again.stderr ?? '', '', again.stdout);
  assert.deepEqual(JSON.parse(again.stdout), [409, 'Somebody already triggered housekeeping for this resource in the past 1440 minutes']);
});
