// The real python-gitlab client against the runner API on a real port: registration
// (gl.runners.create with a registration token, gl.runners.verify), gl.runners.list(),
// gl.runners_all.list() with filters, gl.runners.get(id), runner.save(), project.runners.list() /
// create / delete, runner.jobs.list(), creation of a user-linked runner and runner.delete()
// (skipped without python-gitlab).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { ROOT_TOKEN } from '../helpers/build-app.ts';
import { seedPipeline, seedRunner } from '../helpers/ci.ts';

const PYTHON = '/usr/bin/python3';
const available = spawnSync(PYTHON, ['-c', 'import gitlab'], { stdio: 'ignore' }).status === 0;

const SCRIPT = String.raw`
import sys, gitlab
base, token, mtoken, pid, pid2, online_id, group_runner_id, job_id = sys.argv[1:9]
pid, pid2, online_id, group_runner_id, job_id = int(pid), int(pid2), int(online_id), int(group_runner_id), int(job_id)
gl = gitlab.Gitlab(base, private_token=token)
gm = gitlab.Gitlab(base, private_token=mtoken)
def check(what, got, want):
    if got != want:
        print(f'{what}: got {got!r}, want {want!r}')
        sys.exit(1)

# registration with the project's registration token, as gitlab-runner register does
reg = gm.http_post(f'/projects/{pid}/runners/reset_registration_token')
r = gl.runners.create({'token': reg['token'], 'description': 'registered', 'tag_list': ['py', 'linux'], 'run_untagged': False})
check('registered token', r.token.startswith('glrt-'), True)
gl.runners.verify(r.token)
try:
    gl.runners.verify('glrt-unknown')
    print('no error'); sys.exit(1)
except gitlab.exceptions.GitlabVerifyError as e:
    check('verify 403', e.response_code, 403)

# lists
check('owned', sorted(x.id for x in gm.runners.list()), sorted([r.id]))
everything = gl.runners_all.list(all=True)
check('all', len(everything), 4)
check('all online (verify was a contact)', [x.id for x in gl.runners_all.list(status='online')], [online_id, r.id])
check('all group', [x.id for x in gl.runners_all.list(type='group_type')], [group_runner_id])
check('all tags', [x.id for x in gl.runners_all.list(tag_list=['py', 'linux'])], [r.id])
check('all scope', sorted(x.id for x in gl.runners_all.list(scope='specific')), sorted([group_runner_id, r.id]))
try:
    gm.runners_all.list()
    print('no error'); sys.exit(1)
except gitlab.exceptions.GitlabListError as e:
    check('all 403', e.response_code, 403)
try:
    gl.runners_all.list(type='cloud')
    print('no error'); sys.exit(1)
except gitlab.exceptions.GitlabListError as e:
    check('bad type', (e.response_code, e.error_message), (400, 'type does not have a valid value'))

# one runner: details, save, project runners
runner = gm.runners.get(r.id)
check('detail', (runner.description, runner.tag_list, runner.run_untagged, runner.runner_type, runner.status, runner.ip_address), ('registered', ['py', 'linux'], False, 'project_type', 'online', ''))
check('projects', [p['id'] for p in runner.projects], [pid])
runner.description = 'renamed'
runner.tag_list = ['py']
runner.paused = True
runner.maintenance_note = 'from python'
runner.save()
runner = gm.runners.get(r.id)
check('saved', (runner.description, runner.tag_list, runner.paused, runner.active, runner.maintenance_note), ('renamed', ['py'], True, False, 'from python'))
runner.maintenance_note = 'x' * 1025
try:
    runner.save()
    print('no error'); sys.exit(1)
except gitlab.exceptions.GitlabUpdateError as e:
    check('note too long', (e.response_code, e.error_message), (400, {'maintenance_note': ['is too long (maximum is 1024 characters)']}))
try:
    gm.runners.get(999999)
    print('no error'); sys.exit(1)
except gitlab.exceptions.GitlabGetError as e:
    check('404', (e.response_code, e.error_message), (404, '404 Not found'))

p = gm.projects.get(pid)
check('project runners', sorted(x.id for x in p.runners.list(all=True)), sorted([online_id, group_runner_id, r.id] + [x.id for x in everything if x.runner_type == 'instance_type' and x.id != online_id]))
p2 = gm.projects.get(pid2)
p2.runners.create({'runner_id': r.id})
check('enabled', [x.id for x in p2.runners.list(type='project_type')], [r.id])
try:
    p2.runners.create({'runner_id': group_runner_id})
    print('no error'); sys.exit(1)
except gitlab.exceptions.GitlabCreateError as e:
    check('group runner', (e.response_code, e.error_message), (403, '403 Forbidden - Runner is a group runner'))
p2.runners.delete(r.id)
check('disabled', [x.id for x in p2.runners.list(type='project_type')], [])

# a runner's jobs
jobs = gl.runners.get(online_id).jobs.list()
check('jobs', [j.id for j in jobs], [job_id])
check('job project', jobs[0].project['id'], pid)

# a runner created by a user (POST /user/runners)
if hasattr(gitlab.v4.objects, 'CurrentUserRunnerManager'):
    gm.auth()
    created = gm.user.runners.create({'runner_type': 'project_type', 'project_id': pid, 'description': 'mine'})
    created_id, created_token = created.id, created.token
else:
    created = gm.http_post('/user/runners', post_data={'runner_type': 'project_type', 'project_id': pid, 'description': 'mine'})
    created_id, created_token = created['id'], created['token']
check('created token', created_token.startswith('glrt-'), True)
check('created by', gm.runners.get(created_id).created_by['username'], 'maintainer')

# delete
gm.runners.get(created_id).delete()
try:
    gm.runners.get(created_id)
    print('no error'); sys.exit(1)
except gitlab.exceptions.GitlabGetError as e:
    check('deleted', e.response_code, 404)
runner = gm.runners.get(r.id)
runner.delete()
check('after delete', len(gl.runners_all.list(all=True)), 3)
print('all ok')
`;

test('python-gitlab: registration, runner lists, details, save, project runners, jobs, delete', {
  skip: skipWithout(available, 'python-gitlab'),
}, async (t) => {
  assertTool(available, 'python-gitlab');
  const { c, seed, base } = await startTestServer(t, {}, { selfUrl: true });
  const group = await seed.group({ path: 'grp', name: 'Grp' });
  const project = await seed.project({ namespace: group, path: 'app', name: 'App' });
  const project2 = await seed.project({ namespace: group, path: 'lib', name: 'Lib' });
  const maintainer = await seed.user({ username: 'maintainer' });
  await seed.member({ group }, maintainer, 40);
  const mtoken = (await seed.token(maintainer)).token;
  const { runner: online } = await seedRunner(c, { description: 'online', contacted_at: new Date(Date.now() - 60_000).toISOString() });
  await seedRunner(c, { description: 'offline', contacted_at: new Date(Date.now() - 3 * 3600_000).toISOString() });
  const { runner: grp } = await seedRunner(c, { groups: [group.id] });
  const { jobs } = await seedPipeline(c, project, {}, [{ name: 'build', status: 'success', runner_id: online.id }]);
  const out = await promisify(execFile)(PYTHON, [
    '-c',
    SCRIPT,
    base,
    ROOT_TOKEN,
    mtoken,
    String(project.id),
    String(project2.id),
    String(online.id),
    String(grp.id),
    String(jobs[0].id),
  ]).catch((e) => e);
  assert.equal(out.stderr ?? '', '', out.stdout);
  assert.match(out.stdout, /all ok\n$/, out.stdout);
});
