// The real python-gitlab client through the life of a merge request: project.mergerequests.create/get,
// mr.save() (title, labels, state events), mr.commits(), mr.changes(), mr.participants(), mr.diffs
// (versions), time tracking, resource events, errors, delete (skipped without python-gitlab).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestServer } from '../../helpers/server.ts';
import { assertTool, skipWithout } from '../../helpers/tools.ts';
import { workTree } from '../../helpers/git.ts';
import { ROOT_TOKEN } from '../../helpers/build-app.ts';

const PYTHON = '/usr/bin/python3';
const available = spawnSync(PYTHON, ['-c', 'import gitlab'], { stdio: 'ignore' }).status === 0;

const SCRIPT = String.raw`
import sys, gitlab
base, token, pid, c1, c2 = sys.argv[1:6]
gl = gitlab.Gitlab(base, private_token=token)
p = gl.projects.get(int(pid))
def check(what, got, want):
    if got != want:
        print(f'{what}: got {got!r}, want {want!r}')
        sys.exit(1)
mr = p.mergerequests.create({'source_branch': 'feature', 'target_branch': 'main', 'title': 'Add f', 'labels': ['one', 'two'], 'description': '- [x] done'})
check('iid', mr.iid, 1)
check('labels', mr.labels, ['one', 'two'])
check('references', mr.references['full'], p.path_with_namespace + '!1')
check('tasks', mr.task_completion_status, {'count': 1, 'completed_count': 1})
mr = p.mergerequests.get(1)
check('sha', mr.sha, c2)
check('diff_refs', mr.diff_refs['base_sha'], c1)
mr.title = 'Draft: Add f'
mr.labels = ['three']
mr.save()
mr = p.mergerequests.get(1)
check('draft', (mr.draft, mr.work_in_progress, mr.labels), (True, True, ['three']))
check('commits', [c.id for c in mr.commits()], [c2])
ch = mr.changes()
check('changes', ([d['new_path'] for d in ch['changes']], ch['overflow']), (['f.txt'], False))
check('participants', [u['username'] for u in mr.participants()], ['root'])
versions = mr.diffs.list()
check('versions', len(versions), 1)
check('version diffs', [d['new_path'] for d in mr.diffs.get(versions[0].id).diffs], ['f.txt'])
check('estimate', mr.time_estimate('1h30m')['human_time_estimate'], '1h 30m')
check('spent', mr.add_spent_time('1d')['total_time_spent'], 8 * 3600)
mr.state_event = 'close'
mr.save()
check('closed', p.mergerequests.get(1).state, 'closed')
check('state events', [e.state for e in mr.resourcestateevents.list()], ['closed'])
check('label events', sorted((e.action, e.label['name']) for e in mr.resourcelabelevents.list()), [('add', 'one'), ('add', 'three'), ('add', 'two'), ('remove', 'one'), ('remove', 'two')])
try:
    p.mergerequests.create({'source_branch': 'nope', 'target_branch': 'main', 'title': 'bad'})
    print('no error'); sys.exit(1)
except gitlab.exceptions.GitlabCreateError as e:
    check('422', (e.response_code, e.error_message), (422, ['Source branch "nope" does not exist']))
mr2 = p.mergerequests.create({'source_branch': 'feature', 'target_branch': 'main', 'title': 'again'})
try:
    p.mergerequests.create({'source_branch': 'feature', 'target_branch': 'main', 'title': 'dup'})
    print('no error'); sys.exit(1)
except gitlab.exceptions.GitlabCreateError as e:
    check('409', e.response_code, 409)
mr2.delete()
try:
    p.mergerequests.get(mr2.iid)
    print('no error'); sys.exit(1)
except gitlab.exceptions.GitlabGetError as e:
    check('404', e.response_code, 404)
print('all ok')
`;

test('python-gitlab: the life of a merge request', { skip: skipWithout(available, 'python-gitlab') }, async (t) => {
  assertTool(available, 'python-gitlab');
  const { seed, base } = await startTestServer(t, {}, { selfUrl: true });
  const group = await seed.group();
  const { project, dir } = await seed.repoProject({ namespace: group, visibility: 'private' });
  const wt = workTree(t, dir);
  const c1 = wt.write('README.md', '# Readme\n').commit('Initial');
  wt.checkout('feature', true);
  const c2 = wt.write('f.txt', 'f\n').commit('Feature');
  wt.checkout('main');
  wt.push();
  const out = await promisify(execFile)(PYTHON, ['-c', SCRIPT, base, ROOT_TOKEN, String(project.id), c1, c2]).catch((e) => e);
  assert.equal(out.stderr ?? '', '', out.stdout);
  assert.match(out.stdout, /all ok\n$/, out.stdout);
});
