// User activity events: GET /events, /users/:id/events, /projects/:id/events (GitLab lib/api/events.rb,
// project_events.rb, EventsFinder, Event#visible_to_user?), written beside the system events of project
// creation, pushes (files and branches APIs), memberships, merge requests and notes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../../src/db/schema.ts';
import { recordSystemEvent } from '../../../src/domain/core/system-events.ts';
import { buildTestApp, EXTERNAL_URL, type TestApp } from '../../helpers/build-app.ts';

const ZERO = '0000000000000000000000000000000000000000';

const userBasic = (u: UserRow) => ({
  id: u.id,
  username: u.username,
  name: u.name,
  state: 'active',
  locked: false,
  avatar_url: u.avatar_url,
  web_url: `${EXTERNAL_URL}/${u.username}`,
});

/** the Event entity of a row, as GitLab shows it */
function expectedEvent(
  row: { id: number; created_at: string },
  o: {
    project_id: number;
    action_name: string;
    author: UserRow;
    target_id?: number | null;
    target_iid?: number | null;
    target_type?: string | null;
    target_title?: string | null;
    note?: unknown;
    push_data?: unknown;
  },
) {
  return {
    id: row.id,
    project_id: o.project_id,
    action_name: o.action_name,
    target_id: o.target_id ?? null,
    target_iid: o.target_iid ?? null,
    target_type: o.target_type ?? null,
    author_id: o.author.id,
    target_title: o.target_title ?? null,
    created_at: row.created_at,
    ...(o.note ? { note: o.note } : {}),
    author: userBasic(o.author),
    imported: false,
    imported_from: 'none',
    ...(o.push_data ? { push_data: o.push_data } : {}),
    author_username: o.author.username,
  };
}

async function eventRows(ctx: TestApp) {
  return ctx.c.db.kysely.selectFrom('events').selectAll().orderBy('id').execute();
}

/** alice creates a public project through the API; bob and carol exist. */
async function setup(t: Parameters<typeof buildTestApp>[0], visibility = 'public') {
  const ctx = await buildTestApp(t);
  const { seed, app } = ctx;
  const alice = await seed.user({ username: `alice${Math.random().toString(36).slice(2, 6)}`, name: 'Alice' });
  const bob = await seed.user({ name: 'Bob' });
  const carol = await seed.user({ name: 'Carol' });
  const as = { alice: (await seed.token(alice)).headers, bob: (await seed.token(bob)).headers, carol: (await seed.token(carol)).headers };
  const res = await app.inject({ method: 'POST', url: '/api/v4/projects', headers: as.alice, payload: { name: 'Demo', visibility } });
  assert.equal(res.statusCode, 201, res.body);
  const project = await ctx.c.db.kysely.selectFrom('projects').selectAll().where('id', '=', res.json().id).executeTakeFirstOrThrow();
  return { ...ctx, alice, bob, carol, as, project };
}

const commitFile = (s: Awaited<ReturnType<typeof setup>>, file: string, branch = 'main', headers = s.as.alice, start?: string) =>
  s.app.inject({
    method: 'POST',
    url: `/api/v4/projects/${s.project.id}/repository/files/${file}`,
    headers,
    payload: { branch, content: `${file}\n`, commit_message: `Add ${file}\n\nbody`, ...(start ? { start_branch: start } : {}) },
  });

/** the last push system event of the outbox (its `commits` say whether commit_title can be known) */
async function lastPushPayload(ctx: TestApp): Promise<Record<string, any>> {
  const jobs = await ctx.c.db.kysely.selectFrom('jobs').select('payload').where('kind', '=', 'system_event').orderBy('id', 'desc').execute();
  return jobs.map((j) => JSON.parse(j.payload)).find((p) => p.event_name === 'push');
}

test('project creation, pushes, branch creation and deletion, memberships and merge requests become events with GitLab entities', async (t) => {
  const s = await setup(t);
  const { app, c, alice, bob, project, as } = s;

  let res = await commitFile(s, 'README.md');
  assert.equal(res.statusCode, 201, res.body);
  const first = res.json().id ?? (await c.repos.repository(project).branch('main'))?.sha;
  const push1 = await lastPushPayload(s);
  res = await commitFile(s, 'b.txt');
  assert.equal(res.statusCode, 201);
  const push2 = await lastPushPayload(s);
  res = await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/repository/branches?branch=feature&ref=main`, headers: as.alice });
  assert.equal(res.statusCode, 201, res.body);
  res = await app.inject({ method: 'DELETE', url: `/api/v4/projects/${project.id}/repository/branches/feature`, headers: as.alice });
  assert.equal(res.statusCode, 204, res.body);
  res = await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/members`, headers: as.alice, payload: { user_id: bob.id, access_level: 30 } });
  assert.equal(res.statusCode, 201, res.body);
  res = await app.inject({ method: 'DELETE', url: `/api/v4/projects/${project.id}/members/${bob.id}`, headers: as.alice });
  assert.equal(res.statusCode, 204, res.body);
  res = await commitFile(s, 'topic.txt', 'topic', as.alice, 'main');
  assert.equal(res.statusCode, 201);
  res = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/merge_requests`,
    headers: as.alice,
    payload: { source_branch: 'topic', target_branch: 'main', title: 'Topic work' },
  });
  assert.equal(res.statusCode, 201, res.body);
  const mr = res.json();
  for (const state_event of ['close', 'reopen']) {
    res = await app.inject({ method: 'PUT', url: `/api/v4/projects/${project.id}/merge_requests/${mr.iid}`, headers: as.alice, payload: { state_event } });
    assert.equal(res.statusCode, 200, res.body);
  }

  const rows = await eventRows(s);
  const main1 = push1.after;
  const main2 = push2.after;
  assert.equal(first !== undefined, true);
  const title2 = push2.commits.length ? 'Add b.txt' : null;
  const title1 = push1.commits.length ? 'Add README.md' : null;
  // the rows: [action, author, target_type]
  assert.deepEqual(
    rows.map((r) => [r.action, r.author_id, r.project_id, r.target_type]),
    [
      [1, alice.id, project.id, null], // created
      [5, alice.id, project.id, null], // pushed new main
      [5, alice.id, project.id, null], // pushed to main
      [5, alice.id, project.id, null], // pushed new feature
      [5, alice.id, project.id, null], // deleted feature
      [8, bob.id, project.id, null], // joined
      [9, bob.id, project.id, null], // left
      [5, alice.id, project.id, null], // pushed new topic
      [1, alice.id, project.id, 'MergeRequest'], // opened
      [3, alice.id, project.id, 'MergeRequest'], // closed
      [4, alice.id, project.id, 'MergeRequest'], // reopened
    ],
  );
  const payloads = await c.db.kysely.selectFrom('push_event_payloads').selectAll().orderBy('event_id').execute();
  assert.deepEqual(
    payloads.map(({ event_id: _e, commit_from: _f, commit_to: _t, commit_title: _ti, ...p }) => p),
    [
      { commit_count: 1, action: 'created', ref_type: 'branch', ref: 'main', ref_count: null },
      { commit_count: 1, action: 'pushed', ref_type: 'branch', ref: 'main', ref_count: null },
      { commit_count: 0, action: 'created', ref_type: 'branch', ref: 'feature', ref_count: null },
      { commit_count: 0, action: 'removed', ref_type: 'branch', ref: 'feature', ref_count: null },
      { commit_count: 1, action: 'created', ref_type: 'branch', ref: 'topic', ref_count: null },
    ],
  );

  // the user's events, newest first, whole bodies
  res = await app.inject({ method: 'GET', url: `/api/v4/users/${alice.username}/events?per_page=100`, headers: as.carol });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['x-total'], '9');
  const body = res.json();
  const byId = new Map(rows.map((r) => [r.id, r]));
  const mrRow = { id: mr.id, iid: mr.iid, title: 'Topic work' };
  const mrEvent = (r: (typeof rows)[number], action_name: string) =>
    expectedEvent(r, {
      project_id: project.id,
      action_name,
      author: alice,
      target_id: mrRow.id,
      target_iid: mrRow.iid,
      target_type: 'MergeRequest',
      target_title: mrRow.title,
    });
  assert.deepEqual(body, [
    mrEvent(rows[10], 'opened'),
    mrEvent(rows[9], 'closed'),
    mrEvent(rows[8], 'opened'),
    expectedEvent(rows[7], {
      project_id: project.id,
      action_name: 'pushed new',
      author: alice,
      push_data: { ...pushData(payloads[4]) },
    }),
    expectedEvent(rows[4], { project_id: project.id, action_name: 'deleted', author: alice, push_data: pushData(payloads[3]) }),
    expectedEvent(rows[3], { project_id: project.id, action_name: 'pushed new', author: alice, push_data: pushData(payloads[2]) }),
    expectedEvent(rows[2], {
      project_id: project.id,
      action_name: 'pushed to',
      author: alice,
      push_data: {
        commit_count: 1,
        action: 'pushed',
        ref_type: 'branch',
        commit_from: main1,
        commit_to: main2,
        ref: 'main',
        commit_title: title2,
        ref_count: null,
      },
    }),
    expectedEvent(rows[1], {
      project_id: project.id,
      action_name: 'pushed new',
      author: alice,
      push_data: {
        commit_count: 1,
        action: 'created',
        ref_type: 'branch',
        commit_from: null,
        commit_to: main1,
        ref: 'main',
        commit_title: title1,
        ref_count: null,
      },
    }),
    expectedEvent(rows[0], { project_id: project.id, action_name: 'created', author: alice }),
  ]);
  assert.equal(byId.size, rows.length);
  assert.deepEqual([payloads[3].commit_from, payloads[3].commit_to], [main2, null]);

  // bob's events: joined and left, authored by the member
  res = await app.inject({ method: 'GET', url: `/api/v4/users/${bob.id}/events`, headers: as.carol });
  assert.deepEqual(res.json(), [
    expectedEvent(rows[6], { project_id: project.id, action_name: 'left', author: bob }),
    expectedEvent(rows[5], { project_id: project.id, action_name: 'joined', author: bob }),
  ]);

  // the project's events: everyone's; GET /events: the caller's own
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/events?sort=asc&per_page=3`, headers: as.carol });
  assert.deepEqual(
    res.json().map((e: any) => [e.id, e.action_name]),
    [
      [rows[0].id, 'created'],
      [rows[1].id, 'pushed new'],
      [rows[2].id, 'pushed to'],
    ],
  );
  assert.equal(res.headers['x-total'], '11');
  assert.equal(res.headers['x-next-page'], '2');
  assert.match(
    String(res.headers.link),
    new RegExp(`<${EXTERNAL_URL}/api/v4/projects/${project.id}/events\\?id=${project.id}&page=2&per_page=3&sort=asc>; rel="next"`),
  );
  res = await app.inject({ method: 'GET', url: '/api/v4/events', headers: as.bob });
  assert.deepEqual(
    res.json().map((e: any) => e.id),
    [rows[6].id, rows[5].id],
  );
});

function pushData(p: {
  commit_count: number;
  action: string;
  ref_type: string;
  commit_from: string | null;
  commit_to: string | null;
  ref: string | null;
  commit_title: string | null;
  ref_count: number | null;
}) {
  return {
    commit_count: p.commit_count,
    action: p.action,
    ref_type: p.ref_type,
    commit_from: p.commit_from,
    commit_to: p.commit_to,
    ref: p.ref,
    commit_title: p.commit_title,
    ref_count: p.ref_count,
  };
}

test('filters: action, target_type, before/after (exclusive days), sort; bad values answer Grape 400s', async (t) => {
  const s = await setup(t);
  const { app, c, alice, project, as } = s;
  await commitFile(s, 'README.md');
  await commitFile(s, 'topic.txt', 'topic', as.alice, 'main');
  const res0 = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/merge_requests`,
    headers: as.alice,
    payload: { source_branch: 'topic', target_branch: 'main', title: 'T' },
  });
  assert.equal(res0.statusCode, 201);
  const rows = await eventRows(s);
  assert.equal(rows.length, 4); // created, pushed new main, pushed new topic, opened
  // spread over three days
  const days = ['2024-03-01T10:00:00.000Z', '2024-03-02T00:00:00.000Z', '2024-03-02T23:59:59.999Z', '2024-03-03T00:00:00.000Z'];
  for (const [i, r] of rows.entries()) await c.db.kysely.updateTable('events').set({ created_at: days[i] }).where('id', '=', r.id).execute();
  const ids = async (q: string, headers = as.alice) => {
    const res = await app.inject({ method: 'GET', url: `/api/v4/users/${alice.id}/events?${q}`, headers });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().map((e: any) => e.id);
  };
  const [e0, e1, e2, e3] = rows.map((r) => r.id);
  assert.deepEqual(await ids(''), [e3, e2, e1, e0]);
  assert.deepEqual(await ids('sort=asc'), [e0, e1, e2, e3]);
  assert.deepEqual(await ids('action=pushed'), [e2, e1]);
  assert.deepEqual(await ids('action=created'), [e3, e0]);
  assert.deepEqual(await ids('action=merged'), []);
  assert.deepEqual(await ids('target_type=merge_request'), [e3]);
  assert.deepEqual(await ids('target_type=note'), []);
  assert.deepEqual(await ids('before=2024-03-02'), [e0]);
  assert.deepEqual(await ids('after=2024-03-02'), [e3]);
  assert.deepEqual(await ids('after=2024-03-01&before=2024-03-03'), [e2, e1]);
  assert.deepEqual(await ids('after=2024-03-01T15:00:00Z&sort=asc'), [e1, e2, e3]);
  assert.deepEqual(await ids('before=20240302'), [e0]);

  const bad = async (q: string, error: string) => {
    const res = await app.inject({ method: 'GET', url: `/api/v4/users/${alice.id}/events?${q}`, headers: as.alice });
    assert.deepEqual([res.statusCode, res.json()], [400, { error }], q);
  };
  await bad('action=foo', 'action does not have a valid value');
  await bad('target_type=issues', 'target_type does not have a valid value');
  await bad('sort=up', 'sort does not have a valid value');
  await bad('before=yesterday', 'before is invalid');
  await bad('after=2024-02-30', 'after is invalid');
  await bad('page=abc', 'page is invalid');
  await bad('per_page=0', 'per_page has a value not allowed');
  const res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/events?before=nope`, headers: as.alice });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'before is invalid' }]);
});

test('who sees what: private projects, guests and pushes, private profiles, scope=all, anonymous callers, scopes, unknown users and projects', async (t) => {
  const s = await setup(t, 'private');
  const { app, c, seed, alice, bob, carol, project, as, root } = s;
  await commitFile(s, 'README.md');
  // bob: a Guest of the private project (sees joined events, not pushes); carol: a stranger
  let res = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/members`,
    headers: as.alice,
    payload: { user_id: bob.id, access_level: 10 },
  });
  assert.equal(res.statusCode, 201);
  const pub = await app.inject({ method: 'POST', url: '/api/v4/projects', headers: as.alice, payload: { name: 'Open', visibility: 'public' } });
  const rows = await eventRows(s);
  const [created, pushed, joined, createdPublic] = rows;
  assert.deepEqual(
    rows.map((r) => r.action),
    [1, 5, 8, 1],
  );
  const ids = async (url: string, headers?: Record<string, string>) => {
    const r = await app.inject({ method: 'GET', url, headers });
    assert.equal(r.statusCode, 200, `${url} ${r.body}`);
    return r.json().map((e: any) => e.id);
  };
  assert.deepEqual(await ids(`/api/v4/users/${alice.id}/events`, as.alice), [createdPublic.id, pushed.id, created.id]);
  assert.deepEqual(await ids(`/api/v4/users/${alice.id}/events`, root), [createdPublic.id, pushed.id, created.id]);
  assert.deepEqual(await ids(`/api/v4/users/${alice.id}/events`, as.carol), [createdPublic.id]);
  assert.deepEqual(await ids(`/api/v4/users/${alice.id}/events`), [createdPublic.id]);
  // the guest: the project is visible, its pushes are not (download_code); the count is the SQL's, as GitLab's
  res = await app.inject({ method: 'GET', url: `/api/v4/users/${alice.id}/events`, headers: as.bob });
  assert.deepEqual(
    res.json().map((e: any) => e.id),
    [createdPublic.id, created.id],
  );
  assert.equal(res.headers['x-total'], '3');
  assert.deepEqual(await ids(`/api/v4/projects/${project.id}/events`, as.bob), [joined.id, created.id]);
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/events`, headers: as.carol });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Project Not Found' }]);
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/events` });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Project Not Found' }]);
  assert.deepEqual(await ids(`/api/v4/projects/${pub.json().id}/events`), [createdPublic.id]);

  // scope=all: every event of the projects one is a member of
  assert.deepEqual(
    await ids('/api/v4/events?scope=all', as.bob),
    [joined.id, pushed.id, created.id].filter((id) => id !== pushed.id),
  );
  assert.deepEqual(await ids('/api/v4/events', as.bob), [joined.id]);
  assert.deepEqual(await ids('/api/v4/events?scope=all', as.alice), [createdPublic.id, joined.id, pushed.id, created.id]);
  res = await app.inject({ method: 'GET', url: '/api/v4/events' });
  assert.deepEqual([res.statusCode, res.json()], [401, { message: '401 Unauthorized' }]);

  // a private profile: nothing for others, everything for oneself and administrators
  await c.db.kysely.updateTable('users').set({ private_profile: 1 }).where('id', '=', alice.id).execute();
  assert.deepEqual(await ids(`/api/v4/users/${alice.id}/events`, as.carol), []);
  assert.deepEqual(await ids(`/api/v4/users/${alice.id}/events`), []);
  assert.deepEqual(await ids(`/api/v4/users/${alice.id}/events`, as.alice), [createdPublic.id, pushed.id, created.id]);
  assert.deepEqual(await ids(`/api/v4/users/${alice.id}/events`, root), [createdPublic.id, pushed.id, created.id]);

  // scopes: read_user reads /events and /users/:id/events, not a project's events
  const readUser = (await seed.token(alice, { scopes: ['read_user'] })).headers;
  assert.deepEqual(await ids('/api/v4/events', readUser), [createdPublic.id, pushed.id, created.id]);
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/events`, headers: readUser });
  assert.equal(res.statusCode, 403);
  const readApi = (await seed.token(alice, { scopes: ['read_api'] })).headers;
  assert.deepEqual(await ids(`/api/v4/projects/${project.id}/events`, readApi), [joined.id, pushed.id, created.id]);

  // unknown users and projects
  for (const id of ['999999', '99999999999', 'nobody-here']) {
    res = await app.inject({ method: 'GET', url: `/api/v4/users/${id}/events`, headers: as.alice });
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 User Not Found' }], id);
  }
  for (const id of ['999999', '99999999999']) {
    res = await app.inject({ method: 'GET', url: `/api/v4/projects/${id}/events`, headers: as.alice });
    assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Project Not Found' }], id);
  }
  void carol;
});

test('comments: a note payload becomes a "commented on" event with the note; internal notes need Reporter', async (t) => {
  const s = await setup(t);
  const { app, c, alice, bob, project, as } = s;
  await commitFile(s, 'README.md');
  await commitFile(s, 'topic.txt', 'topic', as.alice, 'main');
  let res = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/merge_requests`,
    headers: as.alice,
    payload: { source_branch: 'topic', target_branch: 'main', title: 'Review me' },
  });
  const mr = res.json();
  res = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/merge_requests/${mr.iid}/notes`,
    headers: as.alice,
    payload: { body: 'Looks good' },
  });
  assert.equal(res.statusCode, 201, res.body);
  const noteEntity = res.json();
  const note = await c.db.kysely.selectFrom('notes').selectAll().where('id', '=', noteEntity.id).executeTakeFirstOrThrow();
  // The note hook payload (the notes service emits it); written here as GitLab's Gitlab::DataBuilder::Note.
  const already = await c.db.kysely.selectFrom('events').select('id').where('target_id', '=', note.id).where('action', '=', 6).executeTakeFirst();
  if (!already) {
    await c.db.kysely.transaction().execute(async (trx) => {
      await recordSystemEvent(trx, {
        object_kind: 'note',
        event_type: 'note',
        user: { id: alice.id, name: alice.name, username: alice.username },
        project_id: project.id,
        object_attributes: {
          id: note.id,
          note: note.body,
          noteable_type: 'MergeRequest',
          author_id: alice.id,
          project_id: project.id,
          system: false,
          type: null,
          action: 'create',
        },
      });
    });
  }
  const ev = await c.db.kysely.selectFrom('events').selectAll().where('action', '=', 6).executeTakeFirstOrThrow();
  assert.deepEqual([ev.target_type, ev.target_id, ev.author_id], ['Note', note.id, alice.id]);
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/events?action=commented`, headers: as.bob });
  assert.equal(res.statusCode, 200);
  const [body] = res.json();
  assert.deepEqual(
    body,
    expectedEvent(ev, {
      project_id: project.id,
      action_name: 'commented on',
      author: alice,
      target_id: note.id,
      target_iid: note.id,
      target_type: 'Note',
      target_title: 'Review me',
      note: { ...noteEntity, noteable_iid: mr.iid },
    }),
  );
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/events?target_type=note`, headers: as.bob });
  assert.equal(res.json().length, 1);
  // an internal note: hidden from a non-member
  await c.db.kysely.updateTable('notes').set({ internal: 1 }).where('id', '=', note.id).execute();
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/events?action=commented`, headers: as.bob });
  assert.deepEqual(res.json(), []);
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/events?action=commented`, headers: as.alice });
  assert.equal(res.json().length, 1);
  void bob;
});

test('a comment on a commit is a "commented on" event whose note is the commit note (its own table, ids apart from notes)', async (t) => {
  const s = await setup(t);
  const { app, c, alice, project, as } = s;
  const res0 = await commitFile(s, 'README.md');
  assert.equal(res0.statusCode, 201, res0.body);
  const sha = (await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/repository/branches/main`, headers: as.alice })).json().commit.id;
  let res = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/repository/commits/${sha}/comments`,
    headers: as.alice,
    payload: { note: 'Nice commit' },
  });
  assert.equal(res.statusCode, 201, res.body);
  const row = await c.db.kysely.selectFrom('commit_notes').selectAll().executeTakeFirstOrThrow();
  const ev = await c.db.kysely.selectFrom('events').selectAll().where('action', '=', 6).executeTakeFirstOrThrow();
  assert.deepEqual([ev.target_type, ev.target_id, ev.author_id], ['CommitNote', row.id, alice.id]);
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/events?target_type=note`, headers: as.bob });
  assert.equal(res.statusCode, 200);
  const [body] = res.json();
  assert.equal(res.json().length, 1);
  assert.deepEqual(
    { action_name: body.action_name, target_id: body.target_id, target_type: body.target_type, target_title: body.target_title },
    { action_name: 'commented on', target_id: row.id, target_type: 'Note', target_title: null },
  );
  assert.deepEqual(
    { id: body.note.id, body: body.note.body, noteable_type: body.note.noteable_type, noteable_id: body.note.noteable_id, author: body.note.author.id },
    { id: row.id, body: 'Nice commit', noteable_type: 'Commit', noteable_id: null, author: alice.id },
  );
  // the repository closed to non-members: the comment is hidden with it
  await c.db.kysely.updateTable('projects').set({ visibility: 'private' }).where('id', '=', project.id).execute();
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/events?target_type=note`, headers: as.alice });
  assert.equal(res.json().length, 1);
});

test('a project created with a README: "created" then "pushed new" of its default branch, as GitLab commits the README through a push', async (t) => {
  const ctx = await buildTestApp(t);
  const alice = await ctx.seed.user({ name: 'Alice' });
  const headers = (await ctx.seed.token(alice)).headers;
  const res = await ctx.app.inject({ method: 'POST', url: '/api/v4/projects', headers, payload: { name: 'Readme', initialize_with_readme: true } });
  assert.equal(res.statusCode, 201, res.body);
  const list = await ctx.app.inject({ method: 'GET', url: `/api/v4/projects/${res.json().id}/events?sort=asc`, headers });
  assert.deepEqual(
    list.json().map((e: any) => [e.action_name, e.push_data?.ref ?? null, e.push_data?.commit_count ?? null, e.push_data?.commit_title ?? null]),
    [
      ['created', null, null, null],
      ['pushed new', 'main', 1, 'Initial commit'],
    ],
  );
  const kinds = (await ctx.c.db.kysely.selectFrom('jobs').select('payload').where('kind', '=', 'system_event').orderBy('id').execute()).map(
    (j) => JSON.parse(j.payload).event_name,
  );
  assert.deepEqual(kinds.slice(-3), ['project_create', 'push', 'repository_update']);
});

test('a push of more than three new branches is one bulk event; deleting a project or a user deletes their events', async (t) => {
  const s = await setup(t);
  const { app, c, alice, bob, project, as, root } = s;
  await commitFile(s, 'README.md');
  const tip = (await c.repos.repository(project).branch('main'))!.sha;
  await c.db.kysely.transaction().execute(async (trx) => {
    await recordSystemEvent(trx, {
      event_name: 'repository_update',
      user_id: alice.id,
      project_id: project.id,
      changes: ['a', 'b', 'c', 'd'].map((b) => ({ before: ZERO, after: tip, ref: `refs/heads/${b}` })),
      refs: [],
    });
  });
  const bulk = (await eventRows(s)).at(-1)!;
  const payload = await c.db.kysely.selectFrom('push_event_payloads').selectAll().where('event_id', '=', bulk.id).executeTakeFirstOrThrow();
  assert.deepEqual(payload, {
    event_id: bulk.id,
    commit_count: 0,
    action: 'created',
    ref_type: 'branch',
    commit_from: null,
    commit_to: null,
    ref: null,
    commit_title: null,
    ref_count: 4,
  });
  let res = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/events?per_page=1`, headers: as.alice });
  assert.equal(res.json()[0].action_name, 'pushed new');

  // bob joins, then alice's project goes: its events and payloads with it
  res = await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/members`, headers: as.alice, payload: { user_id: bob.id, access_level: 30 } });
  assert.equal(res.statusCode, 201);
  const other = await app.inject({ method: 'POST', url: '/api/v4/projects', headers: as.bob, payload: { name: 'Bobs', visibility: 'public' } });
  res = await app.inject({ method: 'DELETE', url: `/api/v4/projects/${project.id}`, headers: as.alice });
  assert.equal(res.statusCode, 202, res.body);
  const left = await eventRows(s);
  assert.deepEqual(
    left.map((r) => [r.project_id, r.author_id, r.action]),
    [[other.json().id, bob.id, 1]],
  );
  assert.deepEqual(await c.db.kysely.selectFrom('push_event_payloads').selectAll().execute(), []);
  // deleting bob deletes his events (events.author_id cascades, as GitLab's foreign key)
  res = await app.inject({ method: 'DELETE', url: `/api/v4/users/${bob.id}`, headers: root });
  assert.equal(res.statusCode, 204, res.body);
  assert.deepEqual(await eventRows(s), []);
});
