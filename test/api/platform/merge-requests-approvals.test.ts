// Approvals of merge requests (GitLab lib/api/merge_request_approvals.rb): approve, unapprove, the
// approvals body; the author rule, the sha check, GitLab's 401/403/404/409 answers; the system note, the
// reviewer state and the merge_request event written with the approval.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-app.ts';
import { startSink } from '../../helpers/sink.ts';
import type { MergeRequestRow, UserRow } from '../../../src/db/schema.ts';
import { insertMergeRequest, userBasic, world } from '../../helpers/merge-requests-notes.ts';

function approvalsBody(mr: MergeRequestRow, approvedBy: { user: UserRow; at: string }[], viewer: { has: boolean; can: boolean }) {
  return {
    id: mr.id,
    iid: mr.iid,
    project_id: mr.project_id,
    title: mr.title,
    description: mr.description,
    state: mr.state,
    created_at: mr.created_at,
    updated_at: mr.updated_at,
    merge_status: 'unchecked',
    approved: approvedBy.length > 0,
    approvals_required: 0,
    approvals_left: 0,
    require_password_to_approve: false,
    approved_by: approvedBy.map((a) => ({ user: userBasic(a.user), approved_at: a.at })),
    suggested_approvers: [],
    approvers: [],
    approver_groups: [],
    user_has_approved: viewer.has,
    user_can_approve: viewer.can,
    approval_rules_left: [],
    has_approval_rules: false,
    merge_request_approvers_available: false,
    multiple_approval_rules_available: false,
    invalid_approvers_rules: [],
  };
}

test('approvals: approve, the body, twice, the author, unapprove, notes, reviewer state and events', async (t) => {
  const ta = await buildTestApp(t);
  const { app, c } = ta;
  const w = await world(ta);
  const mr = w.mr;
  await c.db.kysely
    .insertInto('merge_request_reviewers')
    .values({ merge_request_id: mr.id, user_id: w.users.developer.id, created_at: mr.created_at })
    .execute();
  const approvals = () => c.db.kysely.selectFrom('approvals').selectAll().orderBy('created_at').execute();
  const events = async () =>
    (await c.db.kysely.selectFrom('jobs').select('payload').orderBy('id').execute())
      .map((j) => JSON.parse(j.payload))
      .filter((p) => p.object_kind === 'merge_request')
      .map((p) => ({ action: p.object_attributes.action, user: p.user.username }));

  let res = await app.inject({ method: 'GET', url: `${w.url}/approvals`, headers: w.headers.developer });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), approvalsBody(mr, [], { has: false, can: true }));

  res = await app.inject({ method: 'POST', url: `${w.url}/approve`, headers: w.headers.developer });
  assert.equal(res.statusCode, 201);
  let rows = await approvals();
  assert.deepEqual(
    rows.map((r) => r.user_id),
    [w.users.developer.id],
  );
  assert.deepEqual(res.json(), approvalsBody(mr, [{ user: w.users.developer, at: rows[0].created_at }], { has: true, can: false }));
  const reviewer = await c.db.kysely
    .selectFrom('merge_request_reviewers')
    .select('state')
    .where('user_id', '=', w.users.developer.id)
    .executeTakeFirstOrThrow();
  assert.equal(reviewer.state, 'approved');
  const sys = await c.db.kysely.selectFrom('notes').selectAll().where('system', '=', 1).execute();
  assert.deepEqual(
    sys.map((n) => [n.body, n.author_id]),
    [['approved this merge request', w.users.developer.id]],
  );
  assert.deepEqual(await events(), [{ action: 'approved', user: w.users.developer.username }]);

  // twice: 401 as GitLab
  res = await app.inject({ method: 'POST', url: `${w.url}/approve`, headers: w.headers.developer });
  assert.equal(res.statusCode, 401);
  assert.deepEqual(res.json(), { message: '401 Unauthorized' });
  // the author may not approve their own merge request (merge_requests_author_approval is off)
  res = await app.inject({ method: 'POST', url: `${w.url}/approve`, headers: w.headers.author });
  assert.equal(res.statusCode, 401);
  res = await app.inject({ method: 'GET', url: `${w.url}/approvals`, headers: w.headers.author });
  assert.equal(res.json().user_can_approve, false);
  // a Reporter may read but not approve
  res = await app.inject({ method: 'POST', url: `${w.url}/approve`, headers: w.headers.reporter });
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: '403 Forbidden' });
  res = await app.inject({ method: 'GET', url: `${w.url}/approvals`, headers: w.headers.reporter });
  assert.equal(res.json().user_can_approve, false);
  assert.equal(res.json().approved, true);
  // sha: the source branch head or 409
  res = await app.inject({ method: 'POST', url: `${w.url}/approve`, headers: w.headers.maintainer, payload: { sha: 'b'.repeat(40) } });
  assert.equal(res.statusCode, 409);
  assert.deepEqual(res.json(), { message: `SHA does not match HEAD of source branch: ${'a'.repeat(40)}` });
  res = await app.inject({ method: 'POST', url: `${w.url}/approve`, headers: w.headers.maintainer, payload: { sha: 'a'.repeat(40) } });
  assert.equal(res.statusCode, 201);
  rows = await approvals();
  assert.equal(res.json().approved_by.length, 2);
  assert.deepEqual(res.json().approved_by[1], { user: userBasic(w.users.maintainer), approved_at: rows[1].created_at });

  // unapprove
  res = await app.inject({ method: 'POST', url: `${w.url}/unapprove`, headers: w.headers.developer });
  assert.equal(res.statusCode, 201);
  rows = await approvals();
  assert.deepEqual(res.json(), approvalsBody(mr, [{ user: w.users.maintainer, at: rows[0].created_at }], { has: false, can: true }));
  assert.equal(
    (await c.db.kysely.selectFrom('merge_request_reviewers').select('state').where('user_id', '=', w.users.developer.id).executeTakeFirstOrThrow()).state,
    'unapproved',
  );
  res = await app.inject({ method: 'POST', url: `${w.url}/unapprove`, headers: w.headers.developer });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Not Found' });
  assert.deepEqual(await events(), [
    { action: 'approved', user: w.users.developer.username },
    { action: 'approved', user: w.users.maintainer.username },
    { action: 'unapproved', user: w.users.developer.username },
  ]);
  const notes = await c.db.kysely.selectFrom('notes').select(['body', 'system']).orderBy('id').execute();
  assert.deepEqual(
    notes.map((n) => n.body),
    ['approved this merge request', 'approved this merge request', 'unapproved this merge request'],
  );
  const row = await c.db.kysely.selectFrom('merge_requests').select('user_notes_count').where('id', '=', mr.id).executeTakeFirstOrThrow();
  assert.equal(row.user_notes_count, 0);

  // approval_state: no rules here
  res = await app.inject({ method: 'GET', url: `${w.url}/approval_state`, headers: w.headers.reporter });
  assert.deepEqual(res.json(), { approval_rules_overwritten: false, rules: [] });
});

test('approvals: who may, unknown merge requests, anonymous reads on public projects', async (t) => {
  const ta = await buildTestApp(t);
  const { app, c, seed } = ta;
  const w = await world(ta);

  let res = await app.inject({ method: 'POST', url: `${w.url}/approve`, headers: w.headers.guest });
  assert.equal(res.statusCode, 403);
  res = await app.inject({ method: 'POST', url: `${w.url}/approve`, headers: w.headers.outsider });
  assert.deepEqual(res.json(), { message: '404 Project Not Found' });
  res = await app.inject({ method: 'POST', url: `${w.url}/approve` });
  assert.equal(res.statusCode, 401);
  res = await app.inject({ method: 'GET', url: `${w.url}/approvals` });
  assert.deepEqual(res.json(), { message: '404 Project Not Found' });
  res = await app.inject({ method: 'POST', url: `/api/v4/projects/${w.project.id}/merge_requests/42/approve`, headers: w.headers.developer });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Not found' });
  res = await app.inject({ method: 'POST', url: `${w.url}/unapprove`, headers: w.headers.reporter });
  assert.equal(res.statusCode, 403);
  assert.equal((await c.db.kysely.selectFrom('approvals').selectAll().execute()).length, 0);

  const owner = await seed.user();
  const pub = await seed.project({ owner, visibility: 'public' });
  const mr = await insertMergeRequest(c, pub, owner);
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${pub.id}/merge_requests/1/approvals` });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), approvalsBody(mr, [], { has: false, can: false }));
  // a signed-in stranger reads but may not approve (Developer and above)
  const stranger = (await seed.token(await seed.user())).headers;
  res = await app.inject({ method: 'POST', url: `/api/v4/projects/${pub.id}/merge_requests/1/approve`, headers: stranger });
  assert.equal(res.statusCode, 403);
});

test('approvals: a system hook receives the approved and unapproved merge_request events', async (t) => {
  const ta = await buildTestApp(t);
  const { app, c } = ta;
  const w = await world(ta);
  const sink = await startSink(t);
  const hook = await app.inject({ method: 'POST', url: '/api/v4/hooks', headers: ta.root, payload: { url: sink.url, merge_requests_events: true } });
  assert.equal(hook.statusCode, 201);

  assert.equal((await app.inject({ method: 'POST', url: `${w.url}/approve`, headers: w.headers.developer })).statusCode, 201);
  assert.equal((await app.inject({ method: 'POST', url: `${w.url}/unapprove`, headers: w.headers.developer })).statusCode, 201);
  await c.worker.drain();
  // the users the world created are system events too (dispatched to the hooks that exist then)
  const received = (await sink.waitFor(9)).filter((r) => r.json.object_kind === 'merge_request');
  const events = received.map((r) => ({
    kind: r.json.object_kind,
    event: r.json.event_type,
    action: r.json.object_attributes.action,
    iid: r.json.object_attributes.iid,
    user: r.json.user.username,
    project: r.json.project.id,
  }));
  events.sort((a, b) => a.action.localeCompare(b.action));
  assert.deepEqual(events, [
    { kind: 'merge_request', event: 'merge_request', action: 'approved', iid: 1, user: 'dev', project: w.project.id },
    { kind: 'merge_request', event: 'merge_request', action: 'unapproved', iid: 1, user: 'dev', project: w.project.id },
  ]);
});
