// The real gitbeaker client (@gitbeaker/rest, fetch against a listening server): gitbeaker's own end-to-end test of
// issues (packages/rest/test/e2e/nodejs/resources/Issues.ts: a project, 10 issues created at once, then
// `Issues.all` with order_by, search, sort, simple and pagination=keyset, expecting an array of 10), and the rest of
// the issues API a script reaches for through it: show (by iid and by global id), edit (labels, add/remove labels,
// close and reopen), project and group lists (following Link headers page by page), notes, links, participants,
// time tracking and delete, asserted on the objects gitbeaker hands back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GitbeakerRequestError, Gitlab, Issues, Projects } from '@gitbeaker/rest';
import { startTestServer } from '../helpers/server.ts';
import { ROOT_TOKEN } from '../helpers/build-app.ts';

// gitbeaker hands back GitLab's JSON as it came (snake_case keys): the tests read it as plain records
type Json = Record<string, any>;

test('gitbeaker: its Issues end-to-end test — 10 issues created at once, listed with keyset pagination', async (t) => {
  const { base } = await startTestServer(t, {}, { selfUrl: true });
  const CREDENTIALS = { host: base, token: ROOT_TOKEN };
  const TEST_ID = Date.now().toString();
  const issueAPI = new Issues(CREDENTIALS);
  const projectAPI = new Projects(CREDENTIALS);

  // beforeAll
  const project = await projectAPI.create({ name: `Issues All Integration Test - NodeJS ${TEST_ID}` });
  const newIssues: Promise<Json>[] = [];
  for (let i = 0; i < 10; i += 1) {
    newIssues.push(issueAPI.create(project.id, `Issue.all Test - NoteJS ${TEST_ID} ${i}`, { description: 'A test issue' }));
  }
  const created = await Promise.all(newIssues);
  assert.deepEqual(
    created.map((i) => i.iid).sort((a, b) => a - b),
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  );

  // it('should get 10 issues using keyset pagination')
  const issues = await issueAPI.all({ orderBy: 'created_at', search: TEST_ID, sort: 'asc', simple: true, pagination: 'keyset' });
  assert.ok(Array.isArray(issues));
  assert.equal(issues.length, 10);

  // the same list three to a page: gitbeaker follows each page's Link rel="next" and gathers the same 10, oldest first
  const paged = (await issueAPI.all({ orderBy: 'created_at', search: TEST_ID, sort: 'asc', simple: true, pagination: 'keyset', perPage: 3 })) as Json[];
  assert.deepEqual(
    paged.map((i) => i.id),
    issues.map((i: Json) => i.id),
  );
  assert.deepEqual(issues.map((i: Json) => i.title).sort(), created.map((i) => i.title).sort());
  for (let i = 1; i < issues.length; i++) assert.ok(issues[i - 1].created_at <= issues[i].created_at, 'oldest first');
  // the term narrows: nothing else matches it
  assert.deepEqual(await issueAPI.all({ search: `${TEST_ID}-nothing`, pagination: 'keyset' }), []);
});

test('gitbeaker: show, edit, close and reopen, lists, notes, links, participants, time tracking and delete', async (t) => {
  const { base } = await startTestServer(t, {}, { selfUrl: true });
  const api = new Gitlab({ host: base, token: ROOT_TOKEN });
  const root = { id: 1, username: 'root', name: 'Administrator', state: 'active', locked: false, avatar_url: null, web_url: `${base}/root` };
  const STAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
  /** The Issue entity GitLab answers, with the server's own timestamps (checked for their shape). */
  const issueEntity = (got: Json, project: Json, fields: Json, single = true): Json => {
    for (const k of ['created_at', 'updated_at']) assert.match(got[k], STAMP, k);
    const projectApi = `${base}/api/v4/projects/${project.id}`;
    const iid = fields.iid;
    const entity: Json = {
      id: fields.id,
      iid,
      project_id: project.id,
      title: fields.title,
      description: null,
      state: 'opened',
      created_at: got.created_at,
      updated_at: got.updated_at,
      closed_at: null,
      closed_by: null,
      labels: [],
      milestone: null,
      assignees: [],
      author: root,
      type: 'ISSUE',
      assignee: null,
      user_notes_count: 0,
      merge_requests_count: 0,
      upvotes: 0,
      downvotes: 0,
      due_date: null,
      confidential: false,
      discussion_locked: null,
      issue_type: 'issue',
      web_url: `${base}/${project.path_with_namespace}/-/issues/${iid}`,
      time_stats: { time_estimate: 0, total_time_spent: 0, human_time_estimate: null, human_total_time_spent: null },
      task_completion_status: { count: 0, completed_count: 0 },
      blocking_issues_count: 0,
      has_tasks: false,
      _links: {
        self: `${projectApi}/issues/${iid}`,
        notes: `${projectApi}/issues/${iid}/notes`,
        award_emoji: `${projectApi}/issues/${iid}/award_emoji`,
        project: projectApi,
        closed_as_duplicate_of: null,
      },
      references: { short: `#${iid}`, relative: `#${iid}`, full: `${project.path_with_namespace}#${iid}` },
      severity: 'UNKNOWN',
      moved_to_id: null,
      imported: false,
      imported_from: 'none',
      service_desk_reply_to: null,
      ...(single ? { subscribed: true } : {}),
    };
    const { id: _id, iid: _iid, title: _title, ...rest } = fields;
    return { ...entity, ...rest };
  };
  /** A list's entity is the single one without `subscribed`. */
  const inList = ({ subscribed: _s, ...rest }: Json) => rest;
  /** Entities::IssueBasic (the two sides of a link): the issue without what only Entities::Issue adds. */
  const ISSUE_ONLY = ['has_tasks', '_links', 'references', 'severity', 'subscribed', 'moved_to_id', 'imported', 'imported_from', 'service_desk_reply_to'];
  const basic = (issue: Json) => Object.fromEntries(Object.entries(issue).filter(([k]) => !ISSUE_ONLY.includes(k)));
  const refusal = async (p: Promise<unknown>) => {
    const e = await p.then(
      () => assert.fail('expected an error'),
      (err: unknown) => err,
    );
    assert.ok(e instanceof GitbeakerRequestError, String(e));
    const { description, response } = e.cause as { description: string; response: Response };
    return [response.status, description];
  };

  const group = (await api.Groups.create('Gitbeaker Issues', 'gb-issues')) as Json;
  const project = (await api.Projects.create({ name: 'tracker', namespaceId: group.id })) as Json;
  const other = (await api.Projects.create({ name: 'other', namespaceId: group.id })) as Json;
  assert.equal(project.path_with_namespace, 'gb-issues/tracker');

  // create: the labels are created in the project on the way
  const first = (await api.Issues.create(project.id, 'First', { description: 'The first issue', labels: 'bug,ui' })) as Json;
  assert.deepEqual(first, issueEntity(first, project, { id: first.id, iid: 1, title: 'First', description: 'The first issue', labels: ['bug', 'ui'] }));
  assert.deepEqual(
    ((await api.ProjectLabels.all(project.id)) as Json[]).map((l) => l.name),
    ['bug', 'ui'],
  );
  const second = (await api.Issues.create(project.id, 'Second')) as Json;
  const third = (await api.Issues.create(other.id, 'Third', { confidential: true })) as Json;
  assert.deepEqual([second.iid, third.iid, third.confidential], [2, 1, true]);

  // show: by iid in its project, and by its global id (an administrator's call)
  assert.deepEqual(await api.Issues.show(first.iid, { projectId: project.id }), first);
  assert.deepEqual(await api.Issues.show(first.id), first);
  assert.deepEqual(await refusal(api.Issues.show(999)), [404, '404 Not found']);
  assert.deepEqual(await refusal(api.Issues.show(77, { projectId: project.id })), [404, '404 Not found']);

  // edit: labels replaced (and listed by name), then added and removed, with the title
  const relabelled = (await api.Issues.edit(project.id, first.iid, { labels: 'bug,backend', title: 'First!' })) as Json;
  assert.deepEqual(
    relabelled,
    issueEntity(relabelled, project, { id: first.id, iid: 1, title: 'First!', description: 'The first issue', labels: ['backend', 'bug'] }),
  );
  const adjusted = (await api.Issues.edit(project.id, first.iid, { addLabels: 'ops', removeLabels: 'bug' })) as Json;
  assert.deepEqual(adjusted.labels, ['backend', 'ops']);
  assert.ok(adjusted.updated_at >= relabelled.updated_at);

  // close and reopen with state_event
  const closed = (await api.Issues.edit(project.id, second.iid, { stateEvent: 'close' })) as Json;
  assert.match(closed.closed_at, STAMP);
  assert.deepEqual(
    closed,
    issueEntity(closed, project, { id: second.id, iid: 2, title: 'Second', state: 'closed', closed_at: closed.closed_at, closed_by: root }),
  );
  assert.deepEqual(
    ((await api.Issues.all({ projectId: project.id, state: 'closed' })) as Json[]).map((i) => i.iid),
    [2],
  );
  assert.deepEqual(
    ((await api.Issues.all({ projectId: project.id, state: 'opened' })) as Json[]).map((i) => i.iid),
    [1],
  );
  const reopened = (await api.Issues.edit(project.id, second.iid, { stateEvent: 'reopen' })) as Json;
  assert.deepEqual(reopened, issueEntity(reopened, project, { id: second.id, iid: 2, title: 'Second' }));

  // the project's list: the whole entities, newest first; label filters; all pages gathered one issue a page
  const projectList = await api.Issues.all({ projectId: project.id });
  assert.deepEqual(projectList, [inList(await api.Issues.show(2, { projectId: project.id })), inList(await api.Issues.show(1, { projectId: project.id }))]);
  assert.deepEqual(await api.Issues.all({ projectId: project.id, perPage: 1 }), projectList);
  assert.deepEqual(
    ((await api.Issues.all({ projectId: project.id, labels: 'backend,ops' })) as Json[]).map((i) => i.iid),
    [1],
  );
  assert.deepEqual(
    ((await api.Issues.all({ projectId: project.id, labels: 'None' })) as Json[]).map((i) => i.iid),
    [2],
  );
  assert.deepEqual(
    ((await api.Issues.all({ projectId: project.id, search: 'Firs', orderBy: 'created_at', sort: 'asc' })) as Json[]).map((i) => i.title),
    ['First!'],
  );
  const expanded = await api.Issues.all({ projectId: project.id, perPage: 1, maxPages: 1, showExpanded: true });
  assert.deepEqual(expanded.paginationInfo, { total: 2, next: 2, current: 1, previous: null, perPage: 1, totalPages: 2 });

  // the group's list: both projects, newest first; the other project's issue refers to its project
  const groupList = (await api.Issues.all({ groupId: group.id })) as Json[];
  assert.deepEqual(
    groupList.map((i) => [i.project_id, i.iid, i.references.relative]),
    [
      [other.id, 1, 'other#1'],
      [project.id, 2, 'tracker#2'],
      [project.id, 1, 'tracker#1'],
    ],
  );
  assert.deepEqual(await api.Issues.all({ groupId: group.id, perPage: 2 }), groupList);
  assert.deepEqual(
    ((await api.Issues.all({ groupId: group.id, confidential: true })) as Json[]).map((i) => i.id),
    [third.id],
  );
  assert.deepEqual(await api.IssuesStatistics.all({ groupId: group.id }), { statistics: { counts: { all: 3, closed: 0, opened: 3 } } });

  // notes: a comment, a member's comment (through sudo), the list oldest first with the system notes of the edits
  const alice = (await api.Users.create({
    username: 'alice',
    name: 'Alice',
    email: 'alice@example.com',
    password: 'a-long-password-1',
    skipConfirmation: true,
  })) as Json;
  await api.ProjectMembers.add(project.id, 30, { userId: alice.id });
  const note = (await api.IssueNotes.create(project.id, first.iid, 'Looks like a race')) as Json;
  for (const k of ['created_at', 'updated_at']) assert.match(note[k], STAMP);
  assert.deepEqual(note, {
    id: note.id,
    type: null,
    body: 'Looks like a race',
    attachment: null,
    author: root,
    created_at: note.created_at,
    updated_at: note.updated_at,
    system: false,
    noteable_id: first.id,
    noteable_type: 'Issue',
    project_id: project.id,
    resolvable: false,
    confidential: false,
    internal: false,
    imported: false,
    imported_from: 'none',
    noteable_iid: first.iid,
    commands_changes: {},
  });
  const aliceNote = (await api.IssueNotes.create(project.id, first.iid, 'I can reproduce it', { sudo: 'alice' })) as Json;
  assert.equal(aliceNote.author.username, 'alice');
  assert.deepEqual(await api.IssueNotes.show(project.id, first.iid, note.id), note);
  const edited = (await api.IssueNotes.edit(project.id, first.iid, note.id, { body: 'Looks like a race in the cache' })) as Json;
  assert.equal(edited.body, 'Looks like a race in the cache');
  const notes = (await api.IssueNotes.all(project.id, first.iid, { sort: 'asc', orderBy: 'created_at' })) as Json[];
  const labels = new Map(((await api.ProjectLabels.all(project.id)) as Json[]).map((l) => [l.name, l.id]));
  assert.deepEqual(
    notes.map((n) => [n.system, n.author.username, n.body]),
    [
      [true, 'root', 'changed title from **First** to **First!**'],
      [true, 'root', `added ~${labels.get('backend')} label and removed ~${labels.get('ui')} label`],
      [true, 'root', `added ~${labels.get('ops')} label and removed ~${labels.get('bug')} label`],
      [false, 'root', 'Looks like a race in the cache'],
      [false, 'alice', 'I can reproduce it'],
    ],
  );
  assert.equal(((await api.Issues.show(first.iid, { projectId: project.id })) as Json).user_notes_count, 2);
  // the default order is newest first
  assert.deepEqual(
    ((await api.IssueNotes.all(project.id, first.iid)) as Json[]).map((n) => n.id),
    notes.map((n) => n.id).reverse(),
  );

  // participants: the author and whoever commented
  assert.deepEqual(await api.Issues.allParticipants(project.id, first.iid), [
    root,
    { id: alice.id, username: 'alice', name: 'Alice', state: 'active', locked: false, avatar_url: null, web_url: `${base}/alice` },
  ]);

  // links: to an issue of another project, listed from the source with the link's id, then removed
  const link = (await api.IssueLinks.create(project.id, first.iid, other.id, third.iid)) as Json;
  assert.deepEqual(link, {
    source_issue: basic(await api.Issues.show(first.iid, { projectId: project.id })),
    target_issue: basic(await api.Issues.show(third.iid, { projectId: other.id })),
    link_type: 'relates_to',
  });
  const links = (await api.IssueLinks.all(project.id, first.iid)) as Json[];
  assert.equal(links.length, 1);
  const { issue_link_id, link_type, link_created_at, link_updated_at, ...linked } = links[0];
  // the whole issue entity, its references relative to the listed issue's project
  const shownThird = inList(await api.Issues.show(third.iid, { projectId: other.id }));
  assert.deepEqual(linked, { ...shownThird, references: { ...shownThird.references, relative: 'other#1' } });
  assert.equal(link_type, 'relates_to');
  assert.match(link_created_at, STAMP);
  assert.equal(link_updated_at, link_created_at);
  const blocking = (await api.IssueLinks.create(project.id, second.iid, project.id, first.iid, { linkType: 'blocks' })) as Json;
  assert.deepEqual([blocking.source_issue.iid, blocking.target_issue.iid, blocking.link_type], [2, 1, 'blocks']);
  assert.deepEqual(
    ((await api.IssueLinks.all(project.id, first.iid)) as Json[]).map((l) => [l.project_id, l.iid, l.link_type]),
    [
      [other.id, 1, 'relates_to'],
      [project.id, 2, 'is_blocked_by'],
    ],
  );
  const removed = (await api.IssueLinks.remove(project.id, first.iid, issue_link_id)) as Json;
  assert.deepEqual([removed.source_issue.id, removed.target_issue.id, removed.link_type], [first.id, third.id, 'relates_to']);
  assert.deepEqual(
    ((await api.IssueLinks.all(project.id, first.iid)) as Json[]).map((l) => l.iid),
    [2],
  );

  // time tracking: spent time and the estimate in GitLab's duration syntax, the stats, a reset
  const none = { time_estimate: 0, total_time_spent: 0, human_time_estimate: null, human_total_time_spent: null };
  assert.deepEqual(await api.Issues.showTimeStats(project.id, first.iid), none);
  assert.deepEqual(await api.Issues.addSpentTime(project.id, first.iid, '1h30m'), { ...none, total_time_spent: 5400, human_total_time_spent: '1h 30m' });
  assert.deepEqual(await api.Issues.addSpentTime(project.id, first.iid, '2d', { summary: 'Bisecting' }), {
    ...none,
    total_time_spent: 5400 + 2 * 8 * 3600,
    human_total_time_spent: '2d 1h 30m',
  });
  assert.deepEqual(await api.Issues.addTimeEstimate(project.id, first.iid, '1w'), {
    time_estimate: 5 * 8 * 3600,
    total_time_spent: 63000,
    human_time_estimate: '1w',
    human_total_time_spent: '2d 1h 30m',
  });
  const stats = { time_estimate: 144000, total_time_spent: 63000, human_time_estimate: '1w', human_total_time_spent: '2d 1h 30m' };
  assert.deepEqual(await api.Issues.showTimeStats(project.id, first.iid), stats);
  assert.deepEqual(((await api.Issues.show(first.iid, { projectId: project.id })) as Json).time_stats, stats);
  assert.deepEqual(await api.Issues.resetSpentTime(project.id, first.iid), { ...stats, total_time_spent: 0, human_total_time_spent: null });

  // only an administrator shows an issue by its global id: a member is refused
  assert.deepEqual(await refusal(api.Issues.show(first.id, { sudo: 'alice' })), [403, '403 Forbidden']);

  // delete: gone from show and from the lists
  assert.equal(await api.Issues.remove(project.id, second.iid), null);
  assert.deepEqual(await refusal(api.Issues.show(second.iid, { projectId: project.id })), [404, '404 Not found']);
  assert.deepEqual(await refusal(api.Issues.show(second.id)), [404, '404 Not found']);
  assert.deepEqual(
    ((await api.Issues.all({ projectId: project.id })) as Json[]).map((i) => i.iid),
    [1],
  );
  assert.deepEqual(
    ((await api.IssueLinks.all(project.id, first.iid)) as Json[]).map((l) => l.iid),
    [],
  );
});
