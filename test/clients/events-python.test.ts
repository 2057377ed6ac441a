// The real python-gitlab client against events and stars on a real port: project.events.list(),
// gl.events.list() (scope, action, sort), user.events.list(), project.star() / unstar() (304 as an error),
// project.starrers.list(), gl.projects.list(starred=True) (skipped without python-gitlab).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';

const PYTHON = '/usr/bin/python3';
const available = spawnSync(PYTHON, ['-c', 'import gitlab'], { stdio: 'ignore' }).status === 0;

const SCRIPT = String.raw`
import sys, gitlab
base, alice_token, bob_token = sys.argv[1:4]
gl = gitlab.Gitlab(base, private_token=alice_token)
gb = gitlab.Gitlab(base, private_token=bob_token)
gl.auth(); gb.auth()
alice, bob = gl.user, gb.user
def check(what, got, want):
    if got != want:
        print(f'{what}: got {got!r}, want {want!r}')
        sys.exit(1)

p = gl.projects.create({'name': 'Events Demo', 'visibility': 'public'})
p.files.create({'file_path': 'README.md', 'branch': 'main', 'content': 'hi', 'commit_message': 'Initial commit'})
p.files.create({'file_path': 'b.txt', 'branch': 'main', 'content': 'b', 'commit_message': 'Add b'})
p.members.create({'user_id': bob.id, 'access_level': 30})

evs = p.events.list(sort='asc', get_all=True)
check('project events', [e.action_name for e in evs], ['created', 'pushed new', 'pushed to', 'joined'])
check('push data', (evs[2].push_data['ref'], evs[2].push_data['action'], evs[2].push_data['commit_count'], evs[2].push_data['ref_type']), ('main', 'pushed', 1, 'branch'))
check('author', (evs[3].author_id, evs[3].author_username, evs[3].author['username']), (bob.id, bob.username, bob.username))
check('mine', [e.action_name for e in gl.events.list(get_all=True)], ['pushed to', 'pushed new', 'created'])
check('mine, pushed', [e.push_data['action'] for e in gl.events.list(action='pushed', get_all=True)], ['pushed', 'created'])
check('bob all', [e.action_name for e in gb.events.list(scope='all', get_all=True)], ['joined', 'pushed to', 'pushed new', 'created'])
check('user events', [e.action_name for e in gb.users.get(alice.id).events.list(get_all=True)], ['pushed to', 'pushed new', 'created'])
check('user events after', gb.users.get(alice.id).events.list(after='2999-01-01'), [])
try:
    p.events.list(before='not-a-date')
    print('no error'); sys.exit(1)
except gitlab.exceptions.GitlabListError as e:
    check('bad date', (e.response_code, e.error_message), (400, 'before is invalid'))

pb = gb.projects.get(p.id)
pb.star()
check('star_count', pb.star_count, 1)
try:
    pb.star()
    print('no error'); sys.exit(1)
except gitlab.exceptions.GitlabCreateError as e:
    check('already starred', e.response_code, 304)
def starrers():
    # project.starrers exists in newer python-gitlab releases
    if hasattr(p, 'starrers'):
        return [(s.user['username'], bool(s.starred_since)) for s in p.starrers.list()]
    return [(s['user']['username'], bool(s['starred_since'])) for s in gl.http_list(f'/projects/{p.id}/starrers')]
check('starrers', starrers(), [(bob.username, True)])
check('starred list', [x.id for x in gb.projects.list(starred=True)], [p.id])
pb.unstar()
check('unstarred', pb.star_count, 0)
check('no starrers', starrers(), [])
print('all ok')
`;

test('python-gitlab: project, user and own events with filters; star, unstar, starrers', { skip: skipWithout(available, 'python-gitlab') }, async (t) => {
  assertTool(available, 'python-gitlab');
  const { seed, base } = await startTestServer(t, {}, { selfUrl: true });
  const alice = await seed.user({ username: 'alice', name: 'Alice' });
  const bob = await seed.user({ username: 'bob', name: 'Bob' });
  const out = await promisify(execFile)(PYTHON, ['-c', SCRIPT, base, (await seed.token(alice)).token, (await seed.token(bob)).token]).catch((e) => e);
  assert.equal(out.stderr ?? '', '', out.stdout);
  assert.match(out.stdout, /all ok\n$/, out.stdout);
});
