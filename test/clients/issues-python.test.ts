// The real python-gitlab client through python-gitlab's own functional test of issues (tests/functional/api/
// test_issues.py: create, iids, state events, participants, closed_by, related_merge_requests, notes with award
// emoji, labels with None/Any, links, resource label and milestone events, a milestone's issues, discussions),
// plus move, todo, time tracking, subscriptions, boards and the issue statistics; and the issue tracker parts of its
// project and group tests with the search API as its docs show it (skipped without python-gitlab).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { ROOT_TOKEN } from '../helpers/build-app.ts';

const PYTHON = '/usr/bin/python3';
const available = spawnSync(PYTHON, ['-c', 'import gitlab'], { stdio: 'ignore' }).status === 0;

/** What both scripts start with: the client and an assertion that prints what it got. */
const PRELUDE = String.raw`
import sys, gitlab
base, token = sys.argv[1:3]
gl = gitlab.Gitlab(base, private_token=token)
def check(what, got, want):
    if got != want:
        print(f'{what}: got {got!r}, want {want!r}')
        sys.exit(1)
`;

const SCRIPT =
  PRELUDE +
  String.raw`
group = gl.groups.create({'name': 'issues-py', 'path': 'issues-py'})
project = gl.projects.create({'name': 'tracker', 'namespace_id': group.id})
other = gl.projects.create({'name': 'elsewhere', 'namespace_id': group.id})

# test_create_issue
issue = project.issues.create({'title': 'my issue 1'})
issue2 = project.issues.create({'title': 'my issue 2'})
issues = project.issues.list()
check('listed', {i.iid for i in issues} >= {issue.iid, issue2.iid}, True)
check('iids', {i.iid for i in project.issues.list(iids=[issue.iid, issue2.iid])}, {issue.iid, issue2.iid})
issue2.state_event = 'close'
issue2.save()
check('opened', [i.iid for i in project.issues.list(state='opened')], [issue.iid])
check('closed', [i.iid for i in project.issues.list(state='closed')], [issue2.iid])
check('participants', [u['username'] for u in issue.participants()], ['root'])
check('closed_by', type(issue.closed_by()), list)
check('related_merge_requests', type(issue.related_merge_requests()), list)

# test_issue_notes
note = issue.notes.create({'body': 'This is an issue note'})
check('note listed', note.id in [n.id for n in issue.notes.list()], True)
emoji = note.awardemojis.create({'name': 'tractor'})
check('emoji listed', emoji.id in [e.id for e in note.awardemojis.list()], True)
emoji.delete()
note.delete()

# test_issue_labels
project.labels.create({'name': 'label2', 'color': '#aabbcc'})
issue.labels = ['label2']
issue.save()
check('labels list', issue.iid in [i.iid for i in project.issues.list(labels=['label2'])], True)
check('labels str', issue.iid in [i.iid for i in project.issues.list(labels='label2')], True)
check('labels Any', issue.iid in [i.iid for i in project.issues.list(labels='Any')], True)
check('labels None', issue.iid in [i.iid for i in project.issues.list(labels='None')], False)

# test_issue_links
linked = project.issues.create({'title': 'Linked issue'})
source, target = issue.links.create({'target_project_id': project.id, 'target_issue_iid': linked.iid})
check('link source', source.iid, issue.iid)
check('link target', target.iid, linked.iid)
links = issue.links.list()
check('links', [l.iid for l in links], [linked.iid])
issue.links.delete(links[0].issue_link_id)
check('links gone', issue.links.list(), [])

# test_issue_label_events
events = issue.resourcelabelevents.list()
check('label events', [(e.action, e.label['name']) for e in events], [('add', 'label2')])
check('label event', issue.resourcelabelevents.get(events[0].id).id, events[0].id)

# test_issue_milestones
milestone = project.milestones.create({'title': 'milestone1'})
mi = project.issues.create({'title': 'my issue 1', 'milestone_id': milestone.id})
check('milestone issues', next(milestone.issues()).title, 'my issue 1')
mevents = mi.resourcemilestoneevents.list()
check('milestone event', mi.resourcemilestoneevents.get(mevents[0].id).milestone['title'], 'milestone1')
check('by milestone', [i.iid for i in project.issues.list(milestone=milestone.title)], [mi.iid])

# test_issue_discussions
discussion = issue.discussions.create({'body': 'Discussion body'})
check('discussion listed', discussion.id in [d.id for d in issue.discussions.list()], True)
d_note = discussion.notes.create({'body': 'first note'})
d_note_from_get = discussion.notes.get(d_note.id)
d_note_from_get.body = 'updated body'
d_note_from_get.save()
discussion = issue.discussions.get(discussion.id)
check('updated', discussion.attributes['notes'][-1]['body'], 'updated body')
d_note_from_get.delete()

# the rest of the docs' examples: time tracking, todo, subscriptions, move, statistics, boards, group and global lists
check('estimate', issue.time_estimate('3h30m')['human_time_estimate'], '3h 30m')
check('spent', issue.add_spent_time('1h')['total_time_spent'], 3600)
check('stats', project.issues.get(issue.iid).time_stats()['total_time_spent'], 3600)
issue.reset_spent_time()
issue.todo()
check('todos', [(t.action_name, t.target['iid']) for t in gl.todos.list()], [('marked', issue.iid)])
issue.unsubscribe()
issue.subscribe()
old_iid = issue.iid
issue.move(other.id)
check('moved', (issue.project_id, issue.title), (other.id, 'my issue 1'))
check('original closed', project.issues.get(old_iid).state, 'closed')
check('statistics', project.issues_statistics.get().statistics['counts'], {'all': 4, 'closed': 2, 'opened': 2})
check('group issues', len(group.issues.list(state='opened')) >= 3, True)
check('global', len(gl.issues.list(scope='all', state='all')) >= 5, True)
board = project.boards.list()[0]
blist = board.lists.create({'label_id': project.labels.list()[0].id})
check('board list', blist.label['name'], 'label2')
try:
    project.issues.create({'title': ''})
    print('no error'); sys.exit(1)
except gitlab.exceptions.GitlabCreateError as e:
    check('blank title', e.response_code, 400)
print('all ok')
`;

test('python-gitlab: its functional test of issues, and the rest of the issues API it wraps', { skip: skipWithout(available, 'python-gitlab') }, async (t) => {
  assertTool(available, 'python-gitlab');
  const { base } = await startTestServer(t, {}, { selfUrl: true });
  const out = await promisify(execFile)(PYTHON, ['-c', SCRIPT, base, ROOT_TOKEN]).catch((e) => e);
  assert.equal(out.stderr ?? '', '', out.stdout);
  assert.match(out.stdout, /all ok\n$/, out.stdout);
});

// python-gitlab's functional tests/functional/api/test_projects.py and test_groups.py, their issue tracker parts
// (milestones with their issues and merge requests, labels, label and milestone promotion, boards and board lists),
// and the search API as docs/gl_objects/search.rst shows it: gl.search, group.search and project.search for each
// scope, pages and iterator=True.
const TRACKER_SCRIPT =
  PRELUDE +
  String.raw`
from gitlab.const import SearchScope
group = gl.groups.create({'name': 'tracker-py', 'path': 'tracker-py'})
project = gl.projects.create({'name': 'tracker', 'namespace_id': group.id})

# test_projects.py: test_project_milestones
milestone = project.milestones.create({'title': 'milestone1'})
check('milestone listed', milestone in project.milestones.list(), True)
milestone.due_date = '2020-01-01T00:00:00Z'
milestone.save()
milestone.state_event = 'close'
milestone.save()
milestone = project.milestones.get(milestone.id)
check('milestone closed', milestone.state, 'closed')
check('milestone due date', milestone.due_date, '2020-01-01')
check('milestone issues', not milestone.issues(), True)
check('milestone merge requests', not milestone.merge_requests(), True)

# test_projects.py: test_project_labels
label = project.labels.create({'name': 'label', 'color': '#778899'})
labels = project.labels.list()
check('label listed', label in labels, True)
label = project.labels.get('label')
check('label got', label == labels[0], True)
label.new_name = 'Label:that requires:encoding'
label.save()
check('label renamed', label.name, 'Label:that requires:encoding')
label = project.labels.get('Label:that requires:encoding')
check('label by its encoded name', label.name, 'Label:that requires:encoding')
label.subscribe()
check('label subscribed', label.subscribed, True)
label.unsubscribe()
check('label unsubscribed', label.subscribed, False)
label.delete()
check('label deleted', project.labels.list(), [])

# test_projects.py: test_project_label_promotion, test_project_milestone_promotion
promoted_label = project.labels.create({'name': 'promoteme', 'color': '#112233'})
promoted_label.promote()
check('label promoted', any(l.name == 'promoteme' for l in group.labels.list()), True)
group.labels.delete('promoteme')
promoted_milestone = project.milestones.create({'title': 'promoteme'})
promoted_milestone.promote()
check('milestone promoted', any(m.title == 'promoteme' for m in group.milestones.list()), True)
check('project milestone gone', [m.title for m in project.milestones.list()], ['milestone1'])

# test_groups.py: test_group_milestones
gm = group.milestones.create({'title': 'groupmilestone1'})
check('group milestone listed', gm in group.milestones.list(), True)
gm.due_date = '2020-01-01T00:00:00Z'
gm.save()
gm.state_event = 'close'
gm.save()
gm = group.milestones.get(gm.id)
check('group milestone closed', gm.state, 'closed')
check('group milestone issues', not gm.issues(), True)
check('group milestone merge requests', not gm.merge_requests(), True)

# test_groups.py: test_group_labels
group.labels.create({'name': 'foo', 'description': 'bar', 'color': '#112233'})
glabel = group.labels.get('foo')
check('group label', glabel.description, 'bar')
glabel.description = 'baz'
glabel.save()
glabel = group.labels.get('foo')
check('group label saved', glabel.description, 'baz')
check('group label listed', glabel in group.labels.list(), True)
glabel.new_name = 'Label:that requires:encoding'
glabel.save()
check('group label renamed', glabel.name, 'Label:that requires:encoding')
glabel = group.labels.get('Label:that requires:encoding')
check('group label by its encoded name', glabel.name, 'Label:that requires:encoding')
glabel.delete()
check('group label deleted', glabel in group.labels.list(), False)

# test_projects.py: test_project_boards (the lists made first: a new board has none)
boards = project.boards.list()
check('boards', [b.name for b in boards], ['Development'])
board = boards[0]
check('no lists yet', board.lists.list(), [])
todo = project.labels.create({'name': 'To Do', 'color': '#ff0000'})
doing = project.labels.create({'name': 'Doing', 'color': '#00ff00'})
board.lists.create({'label_id': todo.id})
board.lists.create({'label_id': doing.id})
lists = board.lists.list()
check('lists', [(l.label['name'], l.position) for l in lists], [('To Do', 0), ('Doing', 1)])
last_list = lists[-1]
last_list.position = 0
last_list.save()
check('list moved', [(l.label['name'], l.position) for l in board.lists.list()], [('Doing', 0), ('To Do', 1)])
last_list.delete()
check('list deleted', [(l.label['name'], l.position) for l in board.lists.list()], [('To Do', 0)])

# the search world: a repository, issues, a merge request, milestones, comments, a member, another group's project
regina = gl.users.create({'email': 'regina@example.com', 'username': 'regina', 'name': 'Regina Regression', 'password': 'a-long-password-1'})
project.members.create({'user_id': regina.id, 'access_level': 30})
elsewhere = gl.groups.create({'name': 'elsewhere', 'path': 'elsewhere'})
lab = gl.projects.create({'name': 'regression-lab', 'namespace_id': elsewhere.id})
project.files.create({'file_path': 'docs/regression.md', 'branch': 'main', 'content': 'Notes on the regression in the parser\n', 'commit_message': 'Document the regression'})
project.branches.create({'branch': 'fix', 'ref': 'main'})
project.files.create({'file_path': 'src/parser.py', 'branch': 'fix', 'content': 'def parse():\n    return 1  # the regression fix\n', 'commit_message': 'Fix the regression in the parser'})
sprint = project.milestones.create({'title': 'Regression sprint'})
group_sprint = group.milestones.create({'title': 'Group regression sprint'})
issue = project.issues.create({'title': 'Parser regression', 'description': 'Since 2.0', 'milestone_id': sprint.id})
in_group_sprint = project.issues.create({'title': 'Lexer slowdown', 'milestone_id': group_sprint.id})
project.issues.create({'title': 'Unrelated'})
mr = project.mergerequests.create({'source_branch': 'fix', 'target_branch': 'main', 'title': 'Fix the regression', 'milestone_id': sprint.id})
# the mergeability check runs after the answer (merge_status 'checking'): wait for it, so that the searches and
# the lists below see the same merge request
import time
for _ in range(200):
    if project.mergerequests.get(mr.iid).merge_status != 'checking':
        break
    time.sleep(0.05)
issue_note = issue.notes.create({'body': 'Bisected the regression to 1a2b3c'})
mr_note = mr.notes.create({'body': 'The regression test passes now'})
lab_issue = lab.issues.create({'title': 'Another regression'})

# a milestone's issues and merge requests (project and group)
check('sprint issues', [i.title for i in sprint.issues()], ['Parser regression'])
check('sprint merge requests', [m.title for m in sprint.merge_requests()], ['Fix the regression'])
check('group sprint issues', [(i.project_id, i.iid) for i in group_sprint.issues()], [(project.id, in_group_sprint.iid)])

ISSUE_ONLY = {'has_tasks', 'task_status', '_links', 'references', 'severity', 'subscribed', 'moved_to_id', 'imported', 'imported_from', 'service_desk_reply_to'}
def basic(o):
    return {k: v for k, v in o.asdict().items() if k not in ISSUE_ONLY}
def refused(call):
    try:
        call()
    except gitlab.exceptions.GitlabSearchError as e:
        return (e.response_code, e.error_message)
    return 'no error'

# the instance: issues (IssueBasic, newest first), merge requests, milestones (of projects), users, projects
found = gl.search(SearchScope.ISSUES, 'regression')
check('global issues', [i['title'] for i in found], ['Another regression', 'Parser regression'])
check('global issue', found[1], basic(project.issues.get(issue.iid)))
check('global issue elsewhere', found[0], basic(lab.issues.get(lab_issue.iid)))
found = gl.search(SearchScope.MERGE_REQUESTS, 'regression')
check('global merge requests', found, [m.asdict() for m in project.mergerequests.list()])
check('global milestones', gl.search(SearchScope.MILESTONES, 'regression'), [project.milestones.get(sprint.id).asdict()])
check('global users', gl.search(SearchScope.USERS, 'regina'), [{'id': regina.id, 'username': 'regina', 'name': 'Regina Regression', 'state': 'active', 'locked': False, 'avatar_url': None, 'web_url': base + '/regina'}])
check('global projects', [p['path_with_namespace'] for p in gl.search(SearchScope.PROJECTS, 'regression')], ['elsewhere/regression-lab'])
# code and commits are a project's scopes in basic search (an instance or group search of them is Elasticsearch's)
check('global commits', refused(lambda: gl.search(SearchScope.COMMITS, 'regression')), (400, 'scope does not have a valid value'))
check('global blobs', refused(lambda: gl.search(SearchScope.BLOBS, 'regression')), (400, 'scope does not have a valid value'))
# pages, and the generator that makes the calls
check('page 2', [i['title'] for i in gl.search(SearchScope.ISSUES, 'regression', page=2, per_page=1)], ['Parser regression'])
lazy = gl.search(SearchScope.ISSUES, 'regression', iterator=True, per_page=1)
check('iterator', (type(lazy).__name__, lazy.total, [i['title'] for i in lazy]), ('GitlabList', None, ['Another regression', 'Parser regression']))

# a group: its projects' issues, merge requests and milestones, its members, its projects
check('group issues', [i['title'] for i in group.search(SearchScope.ISSUES, 'regression')], ['Parser regression'])
check('group issue by #iid', [i['id'] for i in group.search(SearchScope.ISSUES, '#' + str(issue.iid))], [issue.id])
check('group merge requests', [m['title'] for m in group.search(SearchScope.MERGE_REQUESTS, 'regression')], ['Fix the regression'])
check('group milestones', [m['title'] for m in group.search(SearchScope.MILESTONES, 'regression')], ['Regression sprint'])
check('group users (members)', [u['username'] for u in group.search(SearchScope.USERS, 'regina')], [])
check('group users', [u['username'] for u in group.search(SearchScope.USERS, 'Administrator')], ['root'])
check('group projects', [p['path_with_namespace'] for p in group.search(SearchScope.PROJECTS, 'tracker')], ['tracker-py/tracker'])
check('group projects elsewhere', group.search(SearchScope.PROJECTS, 'regression'), [])
check('group blobs', refused(lambda: group.search(SearchScope.BLOBS, 'regression')), (400, 'scope does not have a valid value'))

# a project: every scope, its comments (the issue's and the merge request's), code and commits at a ref
check('project issues', [i['title'] for i in project.search(SearchScope.ISSUES, 'regression')], ['Parser regression'])
check('project merge requests', [m['title'] for m in project.search(SearchScope.MERGE_REQUESTS, 'regression')], ['Fix the regression'])
check('project milestones', [m['title'] for m in project.search(SearchScope.MILESTONES, 'regression')], ['Regression sprint'])
check('project notes', project.search(SearchScope.PROJECT_NOTES, 'regression'), [
    project.mergerequests.get(mr.iid).notes.get(mr_note.id).asdict(),
    project.issues.get(issue.iid).notes.get(issue_note.id).asdict(),
])
check('project commits', [c['title'] for c in project.search(SearchScope.COMMITS, 'regression')], ['Document the regression'])
check('project commits at a ref', [c['title'] for c in project.search(SearchScope.COMMITS, 'regression', ref='fix')], ['Fix the regression in the parser', 'Document the regression'])
check('project blobs', [(b['path'], b['ref'], b['startline'], b['data']) for b in project.search(SearchScope.BLOBS, 'regression')], [
    ('docs/regression.md', 'main', 1, 'Notes on the regression in the parser\n'),
    ('docs/regression.md', 'main', 1, 'Notes on the regression in the parser\n'),
])
check('project blobs at a ref', [(b['path'], b['startline']) for b in project.search(SearchScope.BLOBS, 'parse', ref='fix')], [('src/parser.py', 1), ('docs/regression.md', 1), ('src/parser.py', 1)])
check('project users', [u['username'] for u in project.search(SearchScope.USERS, 'regina')], ['regina'])
print('all ok')
`;

test('python-gitlab: the issue parts of its project and group tests, and the search API as its docs show it', {
  skip: skipWithout(available, 'python-gitlab'),
}, async (t) => {
  assertTool(available, 'python-gitlab');
  const { base } = await startTestServer(t, {}, { selfUrl: true });
  const out = await promisify(execFile)(PYTHON, ['-c', TRACKER_SCRIPT, base, ROOT_TOKEN]).catch((e) => e);
  assert.equal(out.stderr ?? '', '', out.stdout);
  assert.match(out.stdout, /all ok\n$/, out.stdout);
});
