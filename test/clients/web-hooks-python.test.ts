// The real python-gitlab client against project and group webhooks on a real port: project.hooks
// create / list / get / save / delete, the test endpoint (hook.test when python-gitlab has it), the hook
// logs, a refused URL, and group.hooks (skipped without python-gitlab).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { ROOT_TOKEN } from '../helpers/build-app.ts';
import { workTree } from '../helpers/git.ts';
import { startSink } from '../helpers/sink.ts';

const PYTHON = '/usr/bin/python3';
const available = spawnSync(PYTHON, ['-c', 'import gitlab'], { stdio: 'ignore' }).status === 0;

const SCRIPT = String.raw`
import sys, gitlab
base, token, pid, gid, sink = sys.argv[1:6]
gl = gitlab.Gitlab(base, private_token=token)
def check(what, got, want):
    if got != want:
        print(f'{what}: got {got!r}, want {want!r}')
        sys.exit(1)

p = gl.projects.get(int(pid))
h = p.hooks.create({'url': sink + '/project', 'push_events': True, 'merge_requests_events': True, 'token': 'py-secret'})
check('created', (h.url, h.push_events, h.merge_requests_events, h.note_events, h.project_id, h.alert_status), (sink + '/project', True, True, False, int(pid), 'executable'))
check('no token', 'token' in h.attributes, False)
check('list', [x.id for x in p.hooks.list()], [h.id])
h = p.hooks.get(h.id)
h.note_events = True
h.push_events_branch_filter = 'main'
h.save()
h = p.hooks.get(h.id)
check('saved', (h.note_events, h.push_events_branch_filter, h.branch_filter_strategy), (True, 'main', 'wildcard'))
if hasattr(h, 'test'):
    h.test('push_events')
else:
    check('test', gl.http_post(f'/projects/{pid}/hooks/{h.id}/test/push_events'), {'message': '201 Created'})
events = gl.http_list(f'/projects/{pid}/hooks/{h.id}/events', get_all=True)
check('events', [(e['trigger'], e['response_status'], e['request_headers']['x-service-token']) for e in events], [('push_hooks', '200', '[REDACTED]')])
try:
    p.hooks.create({'url': 'not a url'})
    print('no error'); sys.exit(1)
except gitlab.exceptions.GitlabCreateError as e:
    check('bad url', (e.response_code, e.error_message), (422, 'Invalid url given'))
try:
    p.hooks.get(999999)
    print('no error'); sys.exit(1)
except gitlab.exceptions.GitlabGetError as e:
    check('404', (e.response_code, e.error_message), (404, '404 Not found'))
h.delete()
check('deleted', p.hooks.list(), [])

g = gl.groups.get(int(gid))
gh = g.hooks.create({'url': sink + '/group', 'subgroup_events': True, 'tag_push_events': True})
check('group created', (gh.group_id, gh.subgroup_events, gh.tag_push_events, gh.push_events), (int(gid), True, True, True))
check('group list', [x.id for x in g.hooks.list()], [gh.id])
gh = g.hooks.get(gh.id)
gh.push_events = False
gh.save()
check('group saved', g.hooks.get(gh.id).push_events, False)
gh.delete()
check('group deleted', g.hooks.list(), [])
print('all ok')
`;

test('python-gitlab: project.hooks and group.hooks', { skip: skipWithout(available, 'python-gitlab') }, async (t) => {
  assertTool(available, 'python-gitlab');
  const { c, seed, base } = await startTestServer(t, {}, { selfUrl: true });
  await c.settings.update({ allow_local_requests_from_web_hooks_and_services: true });
  const sink = await startSink(t);
  const group = await seed.group({ path: 'hooked', name: 'Hooked' });
  const { project, dir } = await seed.repoProject({ namespace: group, path: 'app' });
  const w = workTree(t, dir);
  w.write('README.md', '# app\n').commit('Initial');
  w.push('main');
  const out = await promisify(execFile)(PYTHON, ['-c', SCRIPT, base, ROOT_TOKEN, String(project.id), String(group.id), sink.url]).catch((e) => e);
  assert.equal(out.stderr ?? '', '', out.stdout);
  assert.match(out.stdout, /all ok\n$/, out.stdout);
  // the test push reached the receiver with the hook's headers
  assert.equal(sink.received.length, 1);
  assert.equal(sink.received[0].url, '/project');
  assert.equal(sink.received[0].headers['x-service-event'], 'Push Hook');
  assert.equal(sink.received[0].headers['x-service-token'], 'py-secret');
  assert.deepEqual(
    sink.received[0].json.commits.map((x: { title: string }) => x.title),
    ['Initial'],
  );
});
