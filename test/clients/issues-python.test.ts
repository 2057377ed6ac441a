// The real python-gitlab client through python-gitlab's own functional test of issues (tests/functional/api/
// test_issues.py: create, iids, state events, participants, closed_by, related_merge_requests, notes with award
// emoji, labels with None/Any, links, resource label and milestone events, a milestone's issues, discussions),
// plus move, todo, time tracking, subscriptions, boards and the issue statistics (skipped without python-gitlab).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { ROOT_TOKEN } from '../helpers/build-app.ts';

const PYTHON = '/usr/bin/python3';
const available = spawnSync(PYTHON, ['-c', 'import gitlab'], { stdio: 'ignore' }).status === 0;

const SCRIPT = String.raw`
import sys, gitlab
base, token = sys.argv[1:3]
gl = gitlab.Gitlab(base, private_token=token)
def check(what, got, want):
    if got != want:
        print(f'{what}: got {got!r}, want {want!r}')
        sys.exit(1)
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
