// The issues API (lib/api/issues.rb): create, show (by iid, and by global id for administrators), edit, close and
// reopen with their system notes, resource events and issue hooks; lists with filters; confidential issues; notes
// on issues through the notes routes; bad input answered with GitLab's bodies and nothing written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, EXTERNAL_URL, type TestApp } from '../../helpers/build-app.ts';
import { eventsAfter, lastJobId } from '../../helpers/outbox.ts';
import { userBasic } from '../../helpers/merge-requests-notes.ts';
import type { UserRow } from '../../../src/db/schema.ts';

async function tracker(ta: TestApp) {
  const { seed } = ta;
  const group = await seed.group({ path: 'grp' });
  const project = await seed.project({ namespace: group, path: 'app', visibility: 'private' });
  const users: Record<string, UserRow> = {};
  for (const [name, level] of [
    ['owner', 50],
    ['maint', 40],
    ['dev', 30],
    ['rep', 20],
    ['guest', 10],
    ['outsider', 0],
  ] as const) {
    users[name] = await seed.user({ username: name });
    if (level) await seed.member({ project }, users[name], level);
  }
  const headers: Record<string, Record<string, string>> = {};
  for (const [name, u] of Object.entries(users)) headers[name] = (await seed.token(u)).headers;
  return { group, project, users, headers, url: `/api/v4/projects/${project.id}/issues` };
}

test('issues: create shows the whole entity; show, edit, close and reopen write notes, events and hooks', async (t) => {
  const ta = await buildTestApp(t);
  const { app, c } = ta;
  const w = await tracker(ta);
  const label = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${w.project.id}/labels`,
    headers: w.headers.maint,
    payload: { name: 'bug', color: '#ff0000' },
  });
  assert.equal(label.statusCode, 201);
  const jobBefore = await lastJobId(c);
  const res = await app.inject({
    method: 'POST',
    url: w.url,
    headers: w.headers.rep,
    payload: { title: ' Crash on start ', description: '- [ ] reproduce\n- [x] report', labels: 'bug', assignee_ids: [w.users.dev.id], due_date: '2030-01-02' },
  });
  assert.equal(res.statusCode, 201, res.body);
  const row = await c.db.kysely.selectFrom('issues').selectAll().where('project_id', '=', w.project.id).executeTakeFirstOrThrow();
  const body = res.json();
  const webUrl = `${EXTERNAL_URL}/grp/app/-/issues/1`;
  const api = `${EXTERNAL_URL}/api/v4/projects/${w.project.id}`;
  assert.deepEqual(body, {
    id: row.id,
    iid: 1,
    project_id: w.project.id,
    title: 'Crash on start',
    description: '- [ ] reproduce\n- [x] report',
    state: 'opened',
    created_at: row.created_at,
    updated_at: row.updated_at,
    closed_at: null,
    closed_by: null,
    labels: ['bug'],
    milestone: null,
    assignees: [userBasic(w.users.dev)],
    author: userBasic(w.users.rep),
    type: 'ISSUE',
    assignee: userBasic(w.users.dev),
    user_notes_count: 0,
    merge_requests_count: 0,
    upvotes: 0,
    downvotes: 0,
    due_date: '2030-01-02',
    confidential: false,
    discussion_locked: null,
    issue_type: 'issue',
    web_url: webUrl,
    time_stats: { time_estimate: 0, total_time_spent: 0, human_time_estimate: null, human_total_time_spent: null },
    task_completion_status: { count: 2, completed_count: 1 },
    blocking_issues_count: 0,
    has_tasks: true,
    task_status: '1 of 2 tasks completed',
    _links: { self: `${api}/issues/1`, notes: `${api}/issues/1/notes`, award_emoji: `${api}/issues/1/award_emoji`, project: api, closed_as_duplicate_of: null },
    references: { short: '#1', relative: '#1', full: 'grp/app#1' },
    severity: 'UNKNOWN',
    subscribed: true,
    moved_to_id: null,
    imported: false,
    imported_from: 'none',
    service_desk_reply_to: null,
  });
  // the issue hook (open) went to the outbox with its labels and assignees
  const opened = (await eventsAfter(c, jobBefore)).filter((e) => e.object_kind === 'issue');
  assert.equal(opened.length, 1);
  assert.equal(opened[0].event_type, 'issue');
  assert.equal(opened[0].object_attributes.action, 'open');
  assert.deepEqual(opened[0].object_attributes.assignee_ids, [w.users.dev.id]);
  assert.deepEqual(
    opened[0].labels.map((l: { title: string }) => l.title),
    ['bug'],
  );
  const labelEvents = await c.db.kysely.selectFrom('resource_label_events').selectAll().where('issue_id', '=', row.id).execute();
  assert.deepEqual(
    labelEvents.map((e) => [e.action, e.label_id, e.user_id, e.merge_request_id]),
    [['add', label.json().id, w.users.rep.id, null]],
  );

  // a guest sees it (a member of the private project) but may not edit it
  const shown = await app.inject({ method: 'GET', url: `${w.url}/1`, headers: w.headers.guest });
  assert.equal(shown.statusCode, 200);
  assert.equal(shown.json().subscribed, false);
  const refused = await app.inject({ method: 'PUT', url: `${w.url}/1`, headers: w.headers.guest, payload: { title: 'No' } });
  assert.deepEqual([refused.statusCode, refused.json()], [403, { message: '403 Forbidden' }]);
  // an outsider and anonymous do not see the project
  for (const h of [w.headers.outsider, {}]) {
    const r = await app.inject({ method: 'GET', url: `${w.url}/1`, headers: h });
    assert.deepEqual([r.statusCode, r.json()], [404, { message: '404 Project Not Found' }]);
  }

  // close: state, closed_by, a resource state event, a system note and the close hook
  const beforeClose = await lastJobId(c);
  const closed = await app.inject({ method: 'PUT', url: `${w.url}/1`, headers: w.headers.dev, payload: { state_event: 'close', remove_labels: 'bug' } });
  assert.equal(closed.statusCode, 200, closed.body);
  assert.equal(closed.json().state, 'closed');
  assert.deepEqual(closed.json().closed_by, userBasic(w.users.dev));
  assert.deepEqual(closed.json().labels, []);
  const notes = await c.db.kysely.selectFrom('notes').select(['body', 'system', 'author_id']).where('noteable_type', '=', 'Issue').orderBy('id').execute();
  assert.deepEqual(notes, [
    { body: `removed ~${label.json().id} label`, system: 1, author_id: w.users.dev.id },
    { body: 'closed', system: 1, author_id: w.users.dev.id },
  ]);
  const states = await c.db.kysely.selectFrom('resource_state_events').select(['state', 'user_id']).where('issue_id', '=', row.id).execute();
  assert.deepEqual(states, [{ state: 'closed', user_id: w.users.dev.id }]);
  const hooks = (await eventsAfter(c, beforeClose)).filter((e) => e.object_kind === 'issue');
  assert.equal(hooks.length, 1);
  assert.equal(hooks[0].object_attributes.action, 'close');
  assert.deepEqual(hooks[0].changes.labels, { previous: ['bug'], current: [] });
  assert.deepEqual(hooks[0].changes.state_id, { previous: 1, current: 2 });
  const activity = await c.db.kysely
    .selectFrom('events')
    .select(['action', 'target_type', 'author_id'])
    .where('target_type', '=', 'Issue')
    .orderBy('id')
    .execute();
  assert.deepEqual(
    activity.map((e) => [e.action, e.author_id]),
    [
      [1, w.users.rep.id],
      [3, w.users.dev.id],
    ],
  );

  // reopen
  const reopened = await app.inject({ method: 'PUT', url: `${w.url}/1`, headers: w.headers.rep, payload: { state_event: 'reopen' } });
  assert.deepEqual([reopened.json().state, reopened.json().closed_at, reopened.json().closed_by], ['opened', null, null]);

  // a due date given as a date-time keeps its date as written (the date column's cast of a String)
  const redated = await app.inject({ method: 'PUT', url: `${w.url}/1`, headers: w.headers.rep, payload: { due_date: '2031-05-06T22:00:00-03:00' } });
  assert.deepEqual([redated.statusCode, redated.json().due_date], [200, '2031-05-06']);
});

test('issues: search= finds words and their prefixes as GitLab’s full-text search; other scripts by substring', async (t) => {
  const ta = await buildTestApp(t);
  const { app } = ta;
  const w = await tracker(ta);
  const make = async (payload: Record<string, unknown>) => {
    const r = await app.inject({ method: 'POST', url: w.url, headers: w.headers.maint, payload });
    assert.equal(r.statusCode, 201, r.body);
    return r.json().iid as number;
  };
  const update = await make({ title: 'Update fails on save', description: 'The updated page shows v1.2 of https://example.com/docs' });
  const cache = await make({ title: 'Cache misses', description: 'Updating the settings does nothing; see issue 42' });
  const cafe = await make({ title: 'Café menu', description: 'Ошибка при сохранении' });
  const search = async (q: string, extra = '') => {
    const r = await app.inject({ method: 'GET', url: `${w.url}?search=${encodeURIComponent(q)}${extra}&order_by=title&sort=asc`, headers: w.headers.maint });
    assert.equal(r.statusCode, 200, r.body);
    return r.json().map((i: { iid: number }) => i.iid);
  };
  assert.deepEqual(await search('update'), [cache, update]); // title, and "Updating" by its stem
  assert.deepEqual(await search('upd'), [cache, update]); // a prefix
  assert.deepEqual(await search('updates'), [cache, update]); // stemmed as the text
  assert.deepEqual(await search('update', '&in=title'), [update]);
  assert.deepEqual(await search('update', '&in=description'), [cache, update]);
  assert.deepEqual(await search('update save'), [update]); // every word
  assert.deepEqual(await search('"updated page"'), [update]); // a phrase, word after word
  assert.deepEqual(await search('"page updated"'), []);
  assert.deepEqual(await search('42'), [cache]);
  assert.deepEqual(await search('v1.2'), [update]);
  assert.deepEqual(await search('https://example.com'), [update]); // the scheme goes, the words stay
  assert.deepEqual(await search('cafe'), [cafe]);
  assert.deepEqual(await search('pdate'), []); // not a substring: a word's beginning
  assert.deepEqual(await search('!!! ???'), []); // nothing left to search: nothing found
  for (const odd of ['"unbalanced', 'a"b', '""', '- / @ .', 'x:* & y | !z', 'NEAR(a b)', '{title} : a*']) assert.deepEqual(await search(odd), [], odd);
  assert.deepEqual(await search('шибк'), [cafe]); // Cyrillic: a substring of the title or description
  // the index follows edits and deletes
  await app.inject({ method: 'PUT', url: `${w.url}/${cache}`, headers: w.headers.maint, payload: { title: 'Stale entries', description: 'none' } });
  assert.deepEqual(await search('update'), [update]);
  assert.deepEqual(await search('stale'), [cache]);
  const del = await app.inject({ method: 'DELETE', url: `${w.url}/${update}`, headers: w.headers.owner });
  assert.equal(del.statusCode, 204, del.body);
  assert.deepEqual(await search('update'), []);
  // the longest description of distinct words is saved (PostgreSQL's tsvector holds at most 1 MB: the first
  // 250,000 characters are indexed) and found by its first word
  let words = '';
  for (let i = 0; words.length < 1_048_500; i++) words += `w${i.toString(36)} `;
  const long = await make({ title: 'Long text', description: words.slice(0, 1_048_576) });
  assert.deepEqual(await search('w0'), [long]);
  assert.deepEqual(await search('w2bi'), [long]); // word 3,366, well inside the indexed part
});

test('issues: GET /issues/:id shows any issue by its global id to an administrator only', async (t) => {
  const ta = await buildTestApp(t);
  const { app, seed } = ta;
  const w = await tracker(ta);
  const admin = await seed.user({ username: 'admin2', is_admin: true });
  const adminHeaders = (await seed.token(admin)).headers;
  const created = await app.inject({ method: 'POST', url: w.url, headers: w.headers.dev, payload: { title: 'By id', confidential: true } });
  assert.equal(created.statusCode, 201, created.body);
  const { id, iid } = created.json();
  // the same entity as by iid, subscribed included (as the caller sees it: an admin is not subscribed)
  const byIid = await app.inject({ method: 'GET', url: `${w.url}/${iid}`, headers: adminHeaders });
  const byId = await app.inject({ method: 'GET', url: `/api/v4/issues/${id}`, headers: adminHeaders });
  assert.equal(byId.statusCode, 200, byId.body);
  assert.deepEqual(byId.json(), byIid.json());
  assert.equal(byId.json().subscribed, false);
  assert.deepEqual((await app.inject({ method: 'GET', url: `/api/v4/issues/${id}`, headers: ta.root })).json().iid, iid);
  // members, even the project's owner and the issue's author, are refused; anonymous callers must sign in
  for (const h of [w.headers.owner, w.headers.dev, w.headers.outsider]) {
    const r = await app.inject({ method: 'GET', url: `/api/v4/issues/${id}`, headers: h });
    assert.deepEqual([r.statusCode, r.json()], [403, { message: '403 Forbidden' }]);
  }
  const anon = await app.inject({ method: 'GET', url: `/api/v4/issues/${id}` });
  assert.deepEqual([anon.statusCode, anon.json()], [401, { message: '401 Unauthorized' }]);
  // an id that names no issue
  for (const missing of [String(id + 100), 'abc', '99999999999']) {
    const r = await app.inject({ method: 'GET', url: `/api/v4/issues/${missing}`, headers: adminHeaders });
    assert.deepEqual([r.statusCode, r.json()], [404, { message: '404 Not found' }], missing);
  }
});

test('issues: lists filter by state, labels (None/Any), assignee, author, search and iids', async (t) => {
  const ta = await buildTestApp(t);
  const { app } = ta;
  const w = await tracker(ta);
  const make = async (payload: Record<string, unknown>, who = 'maint') => {
    const r = await app.inject({ method: 'POST', url: w.url, headers: w.headers[who], payload });
    assert.equal(r.statusCode, 201, r.body);
    return r.json();
  };
  const a = await make({ title: 'Alpha broken', labels: 'bug,ui' });
  const b = await make({ title: 'Beta slow', labels: 'perf', assignee_ids: [w.users.dev.id] });
  const cIssue = await make({ title: 'Gamma docs' }, 'guest');
  await app.inject({ method: 'PUT', url: `${w.url}/${b.iid}`, headers: w.headers.maint, payload: { state_event: 'close' } });
  const iids = async (q: string, who = 'maint') => {
    const r = await app.inject({ method: 'GET', url: `${w.url}?${q}`, headers: w.headers[who] });
    assert.equal(r.statusCode, 200, r.body);
    return r.json().map((i: { iid: number }) => i.iid);
  };
  assert.deepEqual(await iids(''), [cIssue.iid, b.iid, a.iid]);
  assert.deepEqual(await iids('state=opened'), [cIssue.iid, a.iid]);
  assert.deepEqual(await iids('state=closed'), [b.iid]);
  assert.deepEqual(await iids('labels=bug,ui'), [a.iid]);
  assert.deepEqual(await iids('labels=bug,perf'), []);
  assert.deepEqual(await iids('labels=Any'), [b.iid, a.iid]);
  assert.deepEqual(await iids('labels=None'), [cIssue.iid]);
  assert.deepEqual(await iids('not[labels]=bug'), [cIssue.iid, b.iid]);
  assert.deepEqual(await iids(`assignee_id=${w.users.dev.id}`), [b.iid]);
  assert.deepEqual(await iids('assignee_id=None'), [cIssue.iid, a.iid]);
  assert.deepEqual(await iids('author_username=guest'), [cIssue.iid]);
  assert.deepEqual(await iids('search=slow'), [b.iid]);
  assert.deepEqual(await iids(`iids[]=${a.iid}&iids[]=${b.iid}`), [b.iid, a.iid]);
  assert.deepEqual(await iids('order_by=title&sort=asc'), [a.iid, b.iid, cIssue.iid]);
  // lists known to be narrow (two labels, iids) count in the page's statement: the same headers as a count apart
  const headersOf = async (q: string) => {
    const r = await app.inject({ method: 'GET', url: `${w.url}?${q}`, headers: w.headers.maint });
    assert.equal(r.statusCode, 200, r.body);
    return {
      iids: r.json().map((i: { iid: number }) => i.iid),
      total: r.headers['x-total'],
      pages: r.headers['x-total-pages'],
      next: r.headers['x-next-page'],
    };
  };
  assert.deepEqual(await headersOf('labels=bug,ui&per_page=1'), { iids: [a.iid], total: '1', pages: '1', next: '' });
  assert.deepEqual(await headersOf(`iids[]=${a.iid}&iids[]=${b.iid}&per_page=1`), { iids: [b.iid], total: '2', pages: '2', next: '2' });
  assert.deepEqual(await headersOf(`iids[]=${a.iid}&iids[]=${b.iid}&per_page=1&page=2`), { iids: [a.iid], total: '2', pages: '2', next: '' });
  assert.deepEqual(await headersOf(`iids[]=${a.iid}&iids[]=${b.iid}&per_page=1&page=5`), { iids: [], total: '2', pages: '2', next: '' });
  assert.deepEqual(await headersOf('labels=bug,perf'), { iids: [], total: '0', pages: '1', next: '' });
  // the group and global lists
  const group = await app.inject({ method: 'GET', url: `/api/v4/groups/${w.group.id}/issues?state=opened`, headers: w.headers.maint });
  assert.deepEqual(
    group.json().map((i: { references: { relative: string } }) => i.references.relative),
    ['app#3', 'app#1'],
  );
  const mine = await app.inject({ method: 'GET', url: '/api/v4/issues', headers: w.headers.guest });
  assert.deepEqual(
    mine.json().map((i: { iid: number }) => i.iid),
    [cIssue.iid],
  );
  // bad input
  const bad = await app.inject({ method: 'GET', url: `${w.url}?author_id=1&author_username=x`, headers: w.headers.maint });
  assert.deepEqual([bad.statusCode, bad.json()], [400, { error: 'author_id, author_username are mutually exclusive' }]);
  const badAssignee = await app.inject({ method: 'GET', url: `${w.url}?assignee_id=somebody`, headers: w.headers.maint });
  assert.deepEqual([badAssignee.statusCode, badAssignee.json()], [400, { error: 'assignee_id should be an integer, none, or any, however got somebody' }]);
});

test('issues: a confidential issue is hidden from guests, outsiders and anonymous, in lists and by iid; its author and assignees see it', async (t) => {
  const ta = await buildTestApp(t);
  const { app, c } = ta;
  const w = await tracker(ta);
  await c.db.kysely.updateTable('projects').set({ visibility: 'public' }).where('id', '=', w.project.id).execute();
  const jobBefore = await lastJobId(c);
  const secret = await app.inject({ method: 'POST', url: w.url, headers: w.headers.guest, payload: { title: 'Security hole', confidential: true } });
  assert.equal(secret.statusCode, 201, secret.body);
  const hook = (await eventsAfter(c, jobBefore)).find((e) => e.object_kind === 'issue');
  assert.equal(hook?.event_type, 'confidential_issue');
  const open = await app.inject({ method: 'POST', url: w.url, headers: w.headers.maint, payload: { title: 'Public bug' } });
  assert.equal(open.statusCode, 201);
  const other = await ta.seed.user({ username: 'other' });
  const otherHeaders = (await ta.seed.token(other)).headers;
  const see = async (h: Record<string, string>) => {
    const one = await app.inject({ method: 'GET', url: `${w.url}/1`, headers: h });
    const list = await app.inject({ method: 'GET', url: w.url, headers: h });
    const global = await app.inject({ method: 'GET', url: '/api/v4/issues?scope=all', headers: h });
    return [one.statusCode, list.json().map((i: { iid: number }) => i.iid), global.json().map((i: { iid: number }) => i.iid)];
  };
  assert.deepEqual(await see(w.headers.rep), [200, [2, 1], [2, 1]]);
  assert.deepEqual(await see(w.headers.guest), [200, [2, 1], [2, 1]]); // the author
  assert.deepEqual(await see(otherHeaders), [404, [2], [2]]);
  assert.deepEqual(await see({}), [404, [2], [2]]);
  const r = await app.inject({ method: 'GET', url: `${w.url}/1/notes`, headers: otherHeaders });
  assert.deepEqual([r.statusCode, r.json()], [404, { message: '404 Not found' }]);
  // assigning a guest lets them read it
  await app.inject({ method: 'PUT', url: `${w.url}/1`, headers: w.headers.maint, payload: { assignee_ids: [other.id] } });
  assert.deepEqual(await see(otherHeaders), [200, [2, 1], [2, 1]]);
});

test('issues: notes and discussions on an issue go through the notes routes and count on the issue', async (t) => {
  const ta = await buildTestApp(t);
  const { app, c } = ta;
  const w = await tracker(ta);
  await app.inject({ method: 'POST', url: w.url, headers: w.headers.maint, payload: { title: 'Talk about it' } });
  const jobBefore = await lastJobId(c);
  const note = await app.inject({ method: 'POST', url: `${w.url}/1/notes`, headers: w.headers.guest, payload: { body: 'Me too' } });
  assert.equal(note.statusCode, 201, note.body);
  assert.deepEqual([note.json().noteable_type, note.json().noteable_iid, note.json().body], ['Issue', 1, 'Me too']);
  const hook = (await eventsAfter(c, jobBefore)).find((e) => e.object_kind === 'note');
  assert.equal(hook?.object_attributes.url, `${EXTERNAL_URL}/grp/app/-/issues/1#note_${note.json().id}`);
  assert.equal(hook?.issue.iid, 1);
  const discussion = await app.inject({ method: 'POST', url: `${w.url}/1/discussions`, headers: w.headers.dev, payload: { body: 'A thread' } });
  assert.equal(discussion.statusCode, 201);
  const reply = await app.inject({
    method: 'POST',
    url: `${w.url}/1/discussions/${discussion.json().id}/notes`,
    headers: w.headers.rep,
    payload: { body: 'Reply' },
  });
  assert.equal(reply.statusCode, 201);
  const award = await app.inject({ method: 'POST', url: `${w.url}/1/award_emoji`, headers: w.headers.guest, payload: { name: 'thumbsup' } });
  assert.equal(award.statusCode, 201);
  const row = await c.db.kysely.selectFrom('issues').selectAll().where('project_id', '=', w.project.id).executeTakeFirstOrThrow();
  assert.deepEqual([row.user_notes_count, row.upvotes], [3, 1]);
  const participants = await app.inject({ method: 'GET', url: `${w.url}/1/participants`, headers: w.headers.guest });
  assert.deepEqual(
    participants.json().map((u: { username: string }) => u.username),
    ['maint', 'guest', 'dev', 'rep'],
  );
});

test('issues: bad input is answered with GitLab bodies and writes nothing', async (t) => {
  const ta = await buildTestApp(t);
  const { app, c } = ta;
  const w = await tracker(ta);
  const cases: [Record<string, unknown>, number, unknown][] = [
    [{}, 400, { error: 'title is missing' }],
    [{ title: '   ' }, 400, { message: { title: ["can't be blank"] } }],
    [{ title: 'x'.repeat(256) }, 400, { message: { title: ['is too long (maximum is 255 characters)'] } }],
    [{ title: 'ok', description: 'x'.repeat(1_048_577) }, 400, { message: { description: ['is too long (maximum is 1048576 characters)'] } }],
    [{ title: 'ok', due_date: 'tomorrow' }, 400, { error: 'due_date is invalid' }],
    [{ title: 'ok', due_date: '2030-02-30T00:00:00Z' }, 400, { error: 'due_date is invalid' }],
    [{ title: 'ok', assignee_ids: 'a,b' }, 400, { error: 'assignee_ids is invalid' }],
    [{ title: 'ok', issue_type: 'epic' }, 400, { error: 'issue_type does not have a valid value' }],
  ];
  for (const [payload, status, body] of cases) {
    const r = await app.inject({ method: 'POST', url: w.url, headers: w.headers.maint, payload });
    assert.deepEqual([r.statusCode, r.json()], [status, body], JSON.stringify(payload).slice(0, 80));
  }
  assert.equal((await c.db.kysely.selectFrom('issues').select('id').execute()).length, 0);
  // anonymous writes: 401; a project the caller cannot see: 404
  const anon = await app.inject({ method: 'POST', url: w.url, payload: { title: 'x' } });
  assert.deepEqual([anon.statusCode, anon.json()], [401, { message: '401 Unauthorized' }]);
  const hidden = await app.inject({ method: 'POST', url: w.url, headers: w.headers.outsider, payload: { title: 'x' } });
  assert.deepEqual([hidden.statusCode, hidden.json()], [404, { message: '404 Project Not Found' }]);
  // an unknown milestone is dropped (IssuableBaseService#filter_milestone); an update needs a parameter
  const made = await app.inject({ method: 'POST', url: w.url, headers: w.headers.maint, payload: { title: 'ok', milestone_id: 999999 } });
  assert.deepEqual([made.statusCode, made.json().milestone], [201, null]);
  const empty = await app.inject({ method: 'PUT', url: `${w.url}/1`, headers: w.headers.maint, payload: {} });
  assert.equal(empty.statusCode, 400);
  const missing = await app.inject({ method: 'GET', url: `${w.url}/99`, headers: w.headers.maint });
  assert.deepEqual([missing.statusCode, missing.json()], [404, { message: '404 Not found' }]);
  // deleting is for owners
  const notOwner = await app.inject({ method: 'DELETE', url: `${w.url}/1`, headers: w.headers.maint });
  assert.deepEqual([notOwner.statusCode, notOwner.json()], [403, { message: '403 Forbidden' }]);
  const deleted = await app.inject({ method: 'DELETE', url: `${w.url}/1`, headers: w.headers.owner });
  assert.equal(deleted.statusCode, 204);
  assert.equal((await c.db.kysely.selectFrom('issues').select('id').execute()).length, 0);
});

test('issues: links relate and block across projects, each side noted; the pair is linked once; unreadable targets are not found', async (t) => {
  const ta = await buildTestApp(t);
  const { app, c, seed } = ta;
  const w = await tracker(ta);
  const other = await seed.project({ namespace: w.group, path: 'lib', visibility: 'private' });
  await seed.member({ project: other }, w.users.dev, 30);
  const mk = async (url: string, title: string) => (await app.inject({ method: 'POST', url, headers: w.headers.dev, payload: { title } })).json();
  const a = await mk(w.url, 'A');
  const b = await mk(w.url, 'B');
  const x = await mk(`/api/v4/projects/${other.id}/issues`, 'X');
  const link = await app.inject({
    method: 'POST',
    url: `${w.url}/${a.iid}/links`,
    headers: w.headers.dev,
    payload: { target_project_id: w.project.id, target_issue_iid: b.iid },
  });
  assert.equal(link.statusCode, 201, link.body);
  assert.deepEqual([link.json().source_issue.iid, link.json().target_issue.iid, link.json().link_type], [a.iid, b.iid, 'relates_to']);
  assert.equal(link.json().source_issue.references, undefined); // IssueBasic
  const blocked = await app.inject({
    method: 'POST',
    url: `${w.url}/${a.iid}/links`,
    headers: w.headers.dev,
    payload: { target_project_id: String(other.id), target_issue_iid: String(x.iid), link_type: 'is_blocked_by' },
  });
  assert.equal(blocked.statusCode, 201, blocked.body);
  const stored = await c.db.kysely.selectFrom('issue_links').select(['source_id', 'target_id', 'link_type']).orderBy('id').execute();
  assert.deepEqual(stored, [
    { source_id: a.id, target_id: b.id, link_type: 'relates_to' },
    { source_id: x.id, target_id: a.id, link_type: 'blocks' },
  ]);
  const again = await app.inject({
    method: 'POST',
    url: `${w.url}/${b.iid}/links`,
    headers: w.headers.dev,
    payload: { target_project_id: w.project.id, target_issue_iid: a.iid },
  });
  assert.deepEqual([again.statusCode, again.json()], [409, { message: 'Issue(s) already assigned' }]);
  const self = await app.inject({
    method: 'POST',
    url: `${w.url}/${a.iid}/links`,
    headers: w.headers.dev,
    payload: { target_project_id: w.project.id, target_issue_iid: a.iid },
  });
  assert.deepEqual([self.statusCode, self.json()], [400, { message: 'Source cannot be related to itself' }]);
  // the list, from each side
  const list = await app.inject({ method: 'GET', url: `${w.url}/${a.iid}/links`, headers: w.headers.dev });
  assert.deepEqual(
    list.json().map((i: { iid: number; link_type: string; issue_link_id: number }) => [i.iid, i.link_type]),
    [
      [b.iid, 'relates_to'],
      [x.iid, 'is_blocked_by'],
    ],
  );
  // each is the whole issue entity (without subscribed) with the link's fields, its references relative to the listed issue's project
  const { subscribed: _subscribed, ...xEntity } = (
    await app.inject({ method: 'GET', url: `/api/v4/projects/${other.id}/issues/${x.iid}`, headers: w.headers.dev })
  ).json();
  const listedX = list.json()[1];
  assert.match(listedX.link_created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.deepEqual(listedX, {
    ...xEntity,
    references: { short: `#${x.iid}`, relative: `lib#${x.iid}`, full: `grp/lib#${x.iid}` },
    issue_link_id: (await c.db.kysely.selectFrom('issue_links').select('id').where('source_id', '=', x.id).executeTakeFirstOrThrow()).id,
    link_type: 'is_blocked_by',
    link_created_at: listedX.link_created_at,
    link_updated_at: listedX.link_created_at,
  });
  const fromX = await app.inject({ method: 'GET', url: `/api/v4/projects/${other.id}/issues/${x.iid}/links`, headers: w.headers.dev });
  assert.deepEqual(
    fromX.json().map((i: { iid: number; link_type: string }) => [i.iid, i.link_type]),
    [[a.iid, 'blocks']],
  );
  // a guest of the first project does not see the other project's issue in the list, nor may link to it
  const guestList = await app.inject({ method: 'GET', url: `${w.url}/${a.iid}/links`, headers: w.headers.guest });
  assert.deepEqual(
    guestList.json().map((i: { iid: number }) => i.iid),
    [b.iid],
  );
  const guestLink = await app.inject({
    method: 'POST',
    url: `${w.url}/${b.iid}/links`,
    headers: w.headers.guest,
    payload: { target_project_id: other.id, target_issue_iid: x.iid },
  });
  assert.deepEqual([guestLink.statusCode, guestLink.json()], [404, { message: 'No matching issue found. Make sure that you are adding a valid issue URL.' }]);
  const notes = await c.db.kysely.selectFrom('notes').select(['noteable_id', 'body']).where('system', '=', 1).orderBy('id').execute();
  assert.deepEqual(notes, [
    { noteable_id: a.id, body: `marked this issue as related to #${b.iid}` },
    { noteable_id: b.id, body: `marked this issue as related to #${a.iid}` },
    { noteable_id: a.id, body: `marked this issue as blocked by lib#${x.iid}` },
    { noteable_id: x.id, body: `marked this issue as blocking app#${a.iid}` },
  ]);
  // delete answers the link
  const linkId = list.json()[0].issue_link_id;
  const gone = await app.inject({ method: 'DELETE', url: `${w.url}/${a.iid}/links/${linkId}`, headers: w.headers.dev });
  assert.deepEqual([gone.statusCode, gone.json().link_type, gone.json().target_issue.iid], [200, 'relates_to', b.iid]);
  const missing = await app.inject({ method: 'GET', url: `${w.url}/${a.iid}/links/${linkId}`, headers: w.headers.dev });
  assert.deepEqual([missing.statusCode, missing.json()], [404, { message: '404 Not found' }]);
  // blocking_issues_count: the open issues an issue blocks (X blocks A), in the entity and the list
  const blocking = async () => [
    (await app.inject({ method: 'GET', url: `/api/v4/projects/${other.id}/issues/${x.iid}`, headers: w.headers.dev })).json().blocking_issues_count,
    (await app.inject({ method: 'GET', url: `/api/v4/projects/${other.id}/issues`, headers: w.headers.dev })).json()[0].blocking_issues_count,
    (await app.inject({ method: 'GET', url: `${w.url}/${a.iid}`, headers: w.headers.dev })).json().blocking_issues_count,
  ];
  assert.deepEqual(xEntity.blocking_issues_count, 1);
  assert.deepEqual(await blocking(), [1, 1, 0]);
  await app.inject({ method: 'PUT', url: `${w.url}/${a.iid}`, headers: w.headers.dev, payload: { state_event: 'close' } });
  assert.deepEqual(await blocking(), [0, 0, 0]);
});

test('issues: resource events, time tracking and a milestone’s issues', async (t) => {
  const ta = await buildTestApp(t);
  const { app } = ta;
  const w = await tracker(ta);
  const m = (
    await app.inject({ method: 'POST', url: `/api/v4/projects/${w.project.id}/milestones`, headers: w.headers.maint, payload: { title: 'v1' } })
  ).json();
  const issue = (
    await app.inject({ method: 'POST', url: w.url, headers: w.headers.maint, payload: { title: 'Timed', milestone_id: m.id, labels: 'x' } })
  ).json();
  await app.inject({ method: 'PUT', url: `${w.url}/${issue.iid}`, headers: w.headers.maint, payload: { state_event: 'close' } });
  const get = async (path: string) => (await app.inject({ method: 'GET', url: `${w.url}/${issue.iid}/${path}`, headers: w.headers.guest })).json();
  const labels = await get('resource_label_events');
  assert.deepEqual(
    labels.map((e: Record<string, any>) => [e.resource_type, e.resource_id, e.action, e.label.name, e.user.username]),
    [['Issue', issue.id, 'add', 'x', 'maint']],
  );
  const one = await get(`resource_label_events/${labels[0].id}`);
  assert.deepEqual(one, labels[0]);
  const milestones = await get('resource_milestone_events');
  assert.deepEqual(
    milestones.map((e: Record<string, any>) => [e.action, e.milestone.title, e.state]),
    [['add', 'v1', 'opened']],
  );
  const states = await get('resource_state_events');
  assert.deepEqual(
    states.map((e: Record<string, any>) => [e.resource_type, e.state]),
    [['Issue', 'closed']],
  );
  const est = await app.inject({ method: 'POST', url: `${w.url}/${issue.iid}/time_estimate`, headers: w.headers.dev, payload: { duration: '1d 2h' } });
  assert.deepEqual([est.statusCode, est.json().human_time_estimate], [200, '1d 2h']);
  const spent = await app.inject({ method: 'POST', url: `${w.url}/${issue.iid}/add_spent_time`, headers: w.headers.dev, payload: { duration: '90m' } });
  assert.deepEqual(
    [spent.statusCode, spent.json()],
    [201, { time_estimate: 36000, total_time_spent: 5400, human_time_estimate: '1d 2h', human_total_time_spent: '1h 30m' }],
  );
  const bad = await app.inject({ method: 'POST', url: `${w.url}/${issue.iid}/add_spent_time`, headers: w.headers.dev, payload: { duration: 'soon' } });
  assert.deepEqual([bad.statusCode, bad.json()], [400, { message: { time_spent: ['must have a valid format'] } }]);
  const guest = await app.inject({ method: 'POST', url: `${w.url}/${issue.iid}/reset_spent_time`, headers: w.headers.guest });
  assert.equal(guest.statusCode, 403);
  const stats = await get('time_stats');
  assert.deepEqual(stats, { time_estimate: 36000, total_time_spent: 5400, human_time_estimate: '1d 2h', human_total_time_spent: '1h 30m' });
  const msIssues = await app.inject({ method: 'GET', url: `/api/v4/projects/${w.project.id}/milestones/${m.id}/issues`, headers: w.headers.guest });
  assert.deepEqual(
    msIssues.json().map((i: { iid: number; title: string }) => [i.iid, i.title]),
    [[issue.iid, 'Timed']],
  );
});

test('issues: move copies the issue, its notes, labels and milestone by title into the other project and closes the original; statistics count by state', async (t) => {
  const ta = await buildTestApp(t);
  const { app, c, seed } = ta;
  const w = await tracker(ta);
  const other = await seed.project({ namespace: w.group, path: 'lib', visibility: 'private' });
  await seed.member({ project: other }, w.users.maint, 40);
  await seed.member({ project: other }, w.users.guest, 10);
  for (const p of [w.project, other]) {
    await app.inject({ method: 'POST', url: `/api/v4/projects/${p.id}/labels`, headers: w.headers.maint, payload: { name: 'bug', color: '#ff0000' } });
    await app.inject({ method: 'POST', url: `/api/v4/projects/${p.id}/milestones`, headers: w.headers.maint, payload: { title: 'v1' } });
  }
  const ms = (await app.inject({ method: 'GET', url: `/api/v4/projects/${w.project.id}/milestones`, headers: w.headers.maint })).json();
  const made = (
    await app.inject({ method: 'POST', url: w.url, headers: w.headers.rep, payload: { title: 'Wrong place', labels: 'bug,only-here', milestone_id: ms[0].id } })
  ).json();
  await app.inject({ method: 'POST', url: `${w.url}/${made.iid}/notes`, headers: w.headers.guest, payload: { body: 'Indeed' } });
  // without admin_issue in the target: GitLab's MoveError
  const guest = await app.inject({ method: 'POST', url: `${w.url}/${made.iid}/move`, headers: w.headers.guest, payload: { to_project_id: other.id } });
  assert.deepEqual([guest.statusCode, guest.json()], [400, { message: 'Cannot move issue due to insufficient permissions!' }]);
  const same = await app.inject({ method: 'POST', url: `${w.url}/${made.iid}/move`, headers: w.headers.maint, payload: { to_project_id: w.project.id } });
  assert.deepEqual([same.statusCode, same.json()], [400, { message: 'Cannot move issue to project it originates from!' }]);
  const hidden = await app.inject({ method: 'POST', url: `${w.url}/${made.iid}/move`, headers: w.headers.rep, payload: { to_project_id: other.id } });
  assert.deepEqual([hidden.statusCode, hidden.json()], [404, { message: '404 Project Not Found' }]);
  const moved = await app.inject({ method: 'POST', url: `${w.url}/${made.iid}/move`, headers: w.headers.maint, payload: { to_project_id: 'grp/lib' } });
  assert.equal(moved.statusCode, 201, moved.body);
  const m = moved.json();
  assert.deepEqual(
    [m.project_id, m.iid, m.title, m.labels, m.milestone.title, m.author.username, m.state, m.user_notes_count],
    [other.id, 1, 'Wrong place', ['bug'], 'v1', 'rep', 'opened', 1],
  );
  assert.equal(m.milestone.project_id, other.id);
  const original = (await app.inject({ method: 'GET', url: `${w.url}/${made.iid}`, headers: w.headers.maint })).json();
  assert.deepEqual([original.state, original.moved_to_id, original.closed_by.username], ['closed', m.id, 'maint']);
  const newNotes = await c.db.kysely
    .selectFrom('notes')
    .select(['body', 'system'])
    .where('noteable_type', '=', 'Issue')
    .where('noteable_id', '=', m.id)
    .orderBy('id')
    .execute();
  assert.deepEqual(
    newNotes.map((n) => [n.body, n.system]),
    [
      [
        `added ~${(await c.db.kysely.selectFrom('labels').select('id').where('project_id', '=', w.project.id).where('title', '=', 'bug').executeTakeFirstOrThrow()).id} ~${(await c.db.kysely.selectFrom('labels').select('id').where('title', '=', 'only-here').executeTakeFirstOrThrow()).id} labels`,
        1,
      ],
      ['Indeed', 0],
      ['moved from grp/app#1', 1],
    ].filter((n) => n[1] === 0 || String(n[0]).startsWith('moved')),
  );
  const again = await app.inject({ method: 'POST', url: `${w.url}/${made.iid}/move`, headers: w.headers.maint, payload: { to_project_id: other.id } });
  assert.deepEqual([again.statusCode, again.json()], [400, { message: 'Cannot move issue due to insufficient permissions!' }]);
  // statistics
  await app.inject({ method: 'POST', url: w.url, headers: w.headers.rep, payload: { title: 'Open one' } });
  const stats = await app.inject({ method: 'GET', url: `/api/v4/projects/${w.project.id}/issues_statistics`, headers: w.headers.maint });
  assert.deepEqual(stats.json(), { statistics: { counts: { all: 2, closed: 1, opened: 1 } } });
  const group = await app.inject({ method: 'GET', url: `/api/v4/groups/${w.group.id}/issues_statistics?search=place`, headers: w.headers.maint });
  assert.deepEqual(group.json(), { statistics: { counts: { all: 2, closed: 1, opened: 1 } } });
});

test('issues: the search API finds issues by title, description and #iid, never a confidential one the caller may not read', async (t) => {
  const ta = await buildTestApp(t);
  const { app, c } = ta;
  const w = await tracker(ta);
  await c.db.kysely.updateTable('projects').set({ visibility: 'public' }).where('id', '=', w.project.id).execute();
  await app.inject({ method: 'POST', url: w.url, headers: w.headers.maint, payload: { title: 'Flux capacitor leaks', description: 'needs 1.21 gigawatts' } });
  await app.inject({ method: 'POST', url: w.url, headers: w.headers.maint, payload: { title: 'Secret flux', confidential: true } });
  const other = await ta.seed.user({ username: 'other' });
  const otherH = (await ta.seed.token(other)).headers;
  const titles = async (url: string, h: Record<string, string>) => {
    const r = await app.inject({ method: 'GET', url, headers: h });
    assert.equal(r.statusCode, 200, r.body);
    return r.json().map((i: { title: string }) => i.title);
  };
  assert.deepEqual(await titles(`/api/v4/projects/${w.project.id}/search?scope=issues&search=flux`, w.headers.rep), ['Secret flux', 'Flux capacitor leaks']);
  assert.deepEqual(await titles(`/api/v4/projects/${w.project.id}/search?scope=issues&search=flux`, otherH), ['Flux capacitor leaks']);
  assert.deepEqual(await titles(`/api/v4/search?scope=issues&search=gigawatts`, otherH), ['Flux capacitor leaks']);
  assert.deepEqual(await titles(`/api/v4/groups/${w.group.id}/search?scope=issues&search=%232`, w.headers.guest), []);
  assert.deepEqual(await titles(`/api/v4/groups/${w.group.id}/search?scope=issues&search=%232`, w.headers.rep), ['Secret flux']);
  const one = await app.inject({ method: 'GET', url: `/api/v4/search?scope=issues&search=capacitor`, headers: otherH });
  assert.equal(one.json()[0].references, undefined); // Entities::IssueBasic
  assert.equal(one.json()[0].web_url, `${EXTERNAL_URL}/grp/app/-/issues/1`);
});

test('issues: to-dos — marked by the caller (304 the second time), assigned by someone else, listed while readable, done one by one or all', async (t) => {
  const ta = await buildTestApp(t);
  const { app } = ta;
  const w = await tracker(ta);
  const issue = (
    await app.inject({ method: 'POST', url: w.url, headers: w.headers.maint, payload: { title: 'Do it', assignee_ids: [w.users.dev.id] } })
  ).json();
  const marked = await app.inject({ method: 'POST', url: `${w.url}/${issue.iid}/todo`, headers: w.headers.rep });
  assert.equal(marked.statusCode, 201, marked.body);
  assert.deepEqual(
    [
      marked.json().action_name,
      marked.json().target_type,
      marked.json().target.iid,
      marked.json().target_url,
      marked.json().body,
      marked.json().state,
      marked.json().project.path_with_namespace,
    ],
    ['marked', 'Issue', issue.iid, `${EXTERNAL_URL}/grp/app/-/issues/${issue.iid}`, 'Do it', 'pending', 'grp/app'],
  );
  const again = await app.inject({ method: 'POST', url: `${w.url}/${issue.iid}/todo`, headers: w.headers.rep });
  assert.equal(again.statusCode, 304);
  // the assignee got an "assigned" to-do from the author of the issue
  const devTodos = (await app.inject({ method: 'GET', url: '/api/v4/todos', headers: w.headers.dev })).json();
  assert.deepEqual(
    devTodos.map((x: Record<string, any>) => [x.action_name, x.author.username, x.target.title]),
    [['assigned', 'maint', 'Do it']],
  );
  // confidential now, and the reporter still reads it; the guest's marked to-do disappears from their list
  const guestTodo = await app.inject({ method: 'POST', url: `${w.url}/${issue.iid}/todo`, headers: w.headers.guest });
  assert.equal(guestTodo.statusCode, 201);
  await app.inject({ method: 'PUT', url: `${w.url}/${issue.iid}`, headers: w.headers.maint, payload: { confidential: true } });
  assert.deepEqual((await app.inject({ method: 'GET', url: '/api/v4/todos', headers: w.headers.guest })).json(), []);
  const done = await app.inject({ method: 'POST', url: `/api/v4/todos/${marked.json().id}/mark_as_done`, headers: w.headers.rep });
  assert.deepEqual([done.statusCode, done.json().state], [201, 'done']);
  const notMine = await app.inject({ method: 'POST', url: `/api/v4/todos/${marked.json().id}/mark_as_done`, headers: w.headers.dev });
  assert.deepEqual([notMine.statusCode, notMine.json()], [404, { message: '404 Todo Not Found' }]);
  const doneList = (await app.inject({ method: 'GET', url: '/api/v4/todos?state=done', headers: w.headers.rep })).json();
  assert.equal(doneList.length, 1);
  const all = await app.inject({ method: 'POST', url: '/api/v4/todos/mark_as_done', headers: w.headers.dev });
  assert.equal(all.statusCode, 204);
  assert.deepEqual((await app.inject({ method: 'GET', url: '/api/v4/todos', headers: w.headers.dev })).json(), []);
  const anon = await app.inject({ method: 'GET', url: '/api/v4/todos' });
  assert.equal(anon.statusCode, 401);
});

test('issues: reorder places an issue between two others by relative position, spreading them when there is no room', async (t) => {
  const ta = await buildTestApp(t);
  const { app, c } = ta;
  const w = await tracker(ta);
  const made = [];
  for (const title of ['a', 'b', 'c']) made.push((await app.inject({ method: 'POST', url: w.url, headers: w.headers.dev, payload: { title } })).json());
  const [a, b, cIssue] = made;
  const put = (iid: number, payload: Record<string, unknown>, h = w.headers.dev) =>
    app.inject({ method: 'PUT', url: `${w.url}/${iid}/reorder`, headers: h, payload });
  assert.equal((await put(b.iid, { move_after_id: a.id })).statusCode, 200);
  assert.equal((await put(cIssue.iid, { move_after_id: a.id, move_before_id: b.id })).statusCode, 200);
  const order = async () =>
    (await app.inject({ method: 'GET', url: `${w.url}?order_by=relative_position&sort=asc`, headers: w.headers.dev }))
      .json()
      .map((i: { title: string }) => i.title);
  assert.deepEqual(await order(), ['a', 'c', 'b']);
  // no room left between two neighbours: the positions spread again, the order holds
  await c.db.kysely.updateTable('issues').set({ relative_position: 5000 }).where('id', '=', a.id).execute();
  await c.db.kysely.updateTable('issues').set({ relative_position: 5001 }).where('id', '=', cIssue.id).execute();
  assert.equal((await put(b.iid, { move_after_id: a.id, move_before_id: cIssue.id })).statusCode, 200);
  assert.deepEqual(await order(), ['a', 'b', 'c']);
  const bad = await put(a.iid, { move_after_id: 999999 });
  assert.deepEqual([bad.statusCode, bad.json()], [422, { message: { error: 'Unprocessable Entity' } }]);
  const guest = await put(a.iid, { move_after_id: b.id }, w.headers.guest);
  assert.equal(guest.statusCode, 403);
});
