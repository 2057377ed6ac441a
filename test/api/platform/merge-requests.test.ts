// The life of one merge request (GitLab lib/api/merge_requests.rb): create, get, update, close,
// reopen, delete with whole bodies; the entity's every field and type; bad inputs; permissions; the
// rows afterwards; commits, changes, diffs, participants, reviewers, resource events, time stats.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, EXTERNAL_URL } from '../../helpers/build-app.ts';
import { bareGit, commitJson, workTree } from '../../helpers/git.ts';
import { nowIso } from '../../../src/lib/time.ts';
import { presentMergeRequests } from '../../../src/http/platform/merge-requests/present.ts';

const T0 = 1_700_000_000;

/** main: c1; feature: c1 → c2 (adds f.txt, changes README); other: c1 → c3. */
async function setup(t: Parameters<typeof buildTestApp>[0], visibility = 'private') {
  const ta = await buildTestApp(t);
  const { seed } = ta;
  const dev = await seed.user({ name: 'Dee Developer', username: `dee${Math.random().toString(36).slice(2, 6)}` });
  const reporter = await seed.user({ name: 'Rey Reporter' });
  const owner = await seed.user({ name: 'Oona Owner' });
  const stranger = await seed.user({ name: 'Stan Stranger' });
  const group = await seed.group({ visibility, path: `grp-${Math.random().toString(36).slice(2, 7)}` });
  const { project, dir } = await seed.repoProject({ namespace: group, visibility, path: 'app' });
  await seed.member({ project }, dev, 30);
  await seed.member({ project }, reporter, 20);
  await seed.member({ project }, owner, 50);
  const wt = workTree(t, dir);
  const c1 = wt.write('README.md', '# hi\n').commit('Initial', { time: T0 });
  wt.checkout('feature', true);
  const c2 = wt
    .write('f.txt', 'f\n')
    .write('README.md', '# hi there\n')
    .commit('Feature work\n\nWith a body', { time: T0 + 100 });
  wt.checkout('main');
  wt.checkout('other', true);
  const c3 = wt.write('o.txt', 'o\n').commit('Other work', { time: T0 + 200 });
  wt.checkout('main');
  wt.push();
  const tokens = {
    dev: (await seed.token(dev)).headers,
    reporter: (await seed.token(reporter)).headers,
    owner: (await seed.token(owner)).headers,
    stranger: (await seed.token(stranger)).headers,
  };
  const webUrl = `${EXTERNAL_URL}/${group.full_path}/app`;
  const base = `/api/v4/projects/${project.id}/merge_requests`;
  return { ...ta, project, group, dir, wt, dev, reporter, owner, stranger, tokens, webUrl, base, shas: { c1, c2, c3 } };
}

type Setup = Awaited<ReturnType<typeof setup>>;

const userRef = (u: { id: number; username: string; name: string }) => ({
  id: u.id,
  username: u.username,
  name: u.name,
  state: 'active',
  locked: false,
  avatar_url: null,
  web_url: `${EXTERNAL_URL}/${u.username}`,
});

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** The whole single-MR entity of a fresh merge request from feature into main. */
function expected(s: Setup, body: any, extra: Record<string, unknown> = {}) {
  return {
    id: body.id,
    iid: 1,
    project_id: s.project.id,
    title: 'Add feature',
    description: 'Does things\n\n- [x] one\n- [ ] two\n* [X] three',
    state: 'opened',
    created_at: body.created_at,
    updated_at: body.updated_at,
    merged_by: null,
    merge_user: null,
    merged_at: null,
    closed_by: null,
    closed_at: null,
    target_branch: 'main',
    source_branch: 'feature',
    user_notes_count: 0,
    upvotes: 0,
    downvotes: 0,
    author: userRef(s.dev),
    assignees: [],
    assignee: null,
    reviewers: [],
    source_project_id: s.project.id,
    target_project_id: s.project.id,
    labels: [],
    draft: false,
    imported: false,
    imported_from: 'none',
    work_in_progress: false,
    milestone: null,
    merge_when_pipeline_succeeds: false,
    merge_status: 'unchecked',
    detailed_merge_status: 'unchecked',
    merge_after: null,
    sha: s.shas.c2,
    merge_commit_sha: null,
    squash_commit_sha: null,
    discussion_locked: null,
    should_remove_source_branch: false,
    force_remove_source_branch: false,
    prepared_at: body.prepared_at,
    allow_collaboration: false,
    allow_maintainer_to_push: false,
    reference: '!1',
    references: { short: '!1', relative: '!1', full: `${s.group.full_path}/app!1` },
    web_url: `${s.webUrl}/-/merge_requests/1`,
    time_stats: { time_estimate: 0, total_time_spent: 0, human_time_estimate: null, human_total_time_spent: null },
    squash: false,
    squash_on_merge: false,
    task_completion_status: { count: 3, completed_count: 2 },
    has_conflicts: false,
    blocking_discussions_resolved: true,
    approvals_before_merge: null,
    subscribed: true,
    changes_count: '2',
    latest_build_started_at: null,
    latest_build_finished_at: null,
    first_deployed_to_production_at: null,
    pipeline: null,
    head_pipeline: null,
    diff_refs: { base_sha: s.shas.c1, head_sha: s.shas.c2, start_sha: s.shas.c1 },
    merge_error: null,
    user: { can_merge: false },
    ...extra,
  };
}

async function createMr(s: Setup, payload: Record<string, unknown> = {}, headers = s.tokens.dev) {
  return s.app.inject({
    method: 'POST',
    url: s.base,
    headers,
    payload: {
      title: 'Add feature',
      source_branch: 'feature',
      target_branch: 'main',
      description: 'Does things\n\n- [x] one\n- [ ] two\n* [X] three',
      ...payload,
    },
  });
}

async function events(s: Setup): Promise<any[]> {
  const rows = await s.c.db.kysely.selectFrom('jobs').select(['payload']).orderBy('id').execute();
  return rows.map((r: { payload: string }) => JSON.parse(r.payload)).filter((p: any) => p.object_kind === 'merge_request');
}

test('create: 201 with the whole entity, the rows, an open event; GET answers the same', async (t) => {
  const s = await setup(t);
  const res = await createMr(s);
  assert.equal(res.statusCode, 201, res.body);
  const body = res.json();
  assert.match(body.created_at, ISO);
  assert.equal(body.updated_at, body.created_at);
  assert.deepEqual(body, expected(s, body));

  const row = await s.c.db.kysely.selectFrom('merge_requests').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
  assert.equal(row.iid, 1);
  assert.equal(row.author_id, s.dev.id);
  assert.equal(row.sha, s.shas.c2);
  assert.equal(row.diff_base_sha, s.shas.c1);
  assert.equal(row.state, 'opened');

  // the first mergeability check runs in the background
  await s.c.merges.idle();
  const got = await s.app.inject({ method: 'GET', url: `${s.base}/1`, headers: s.tokens.dev });
  assert.equal(got.statusCode, 200);
  assert.deepEqual(got.json(), { ...body, merge_status: 'can_be_merged', detailed_merge_status: 'mergeable', updated_at: got.json().updated_at });
  const checked = await s.c.db.kysely.selectFrom('merge_requests').select(['merge_status']).where('id', '=', body.id).executeTakeFirstOrThrow();
  assert.equal(checked.merge_status, 'can_be_merged');

  // by path, with the other optional fields
  const byPath = await s.app.inject({
    method: 'GET',
    url: `/api/v4/projects/${encodeURIComponent(`${s.group.full_path}/app`)}/merge_requests/1?include_diverged_commits_count=true&include_rebase_in_progress=true&render_html=true`,
    headers: s.tokens.owner,
  });
  assert.equal(byPath.statusCode, 200);
  const b2 = byPath.json();
  assert.equal(b2.diverged_commits_count, 0);
  assert.equal(b2.rebase_in_progress, false);
  assert.equal(b2.title_html, 'Add feature');
  assert.equal(typeof b2.description_html, 'string');
  assert.equal(b2.subscribed, false);
  assert.deepEqual(b2.user, { can_merge: true });

  const ev = await events(s);
  assert.equal(ev.length, 1);
  const e = ev[0];
  assert.equal(e.event_type, 'merge_request');
  assert.deepEqual(e.user, { id: s.dev.id, name: s.dev.name, username: s.dev.username, avatar_url: null, email: '[REDACTED]' });
  assert.equal(e.object_attributes.action, 'open');
  assert.equal(e.object_attributes.iid, 1);
  assert.equal(e.object_attributes.state, 'opened');
  assert.equal(e.object_attributes.url, `${s.webUrl}/-/merge_requests/1`);
  assert.equal(e.object_attributes.last_commit.id, s.shas.c2);
  assert.deepEqual(e.changes, {});
});

test('create: a second merge request counts its iid up; view of another with labels, assignees, reviewers, milestone', async (t) => {
  const s = await setup(t);
  assert.equal((await createMr(s)).statusCode, 201);
  const now = nowIso();
  const milestone = await s.c.db.kysely
    .insertInto('milestones')
    .values({
      iid: 1,
      project_id: s.project.id,
      group_id: null,
      title: 'v1',
      description: null,
      state: 'active',
      due_date: null,
      start_date: null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const res = await createMr(s, {
    title: 'Draft: other',
    source_branch: 'other',
    labels: 'bug, Feature ,bug',
    assignee_ids: [s.dev.id, s.reporter.id, 999999],
    reviewer_ids: `${s.owner.id}`,
    milestone_id: milestone.id,
    remove_source_branch: true,
    squash: true,
  });
  assert.equal(res.statusCode, 201, res.body);
  const b = res.json();
  assert.equal(b.iid, 2);
  assert.equal(b.draft, true);
  assert.equal(b.work_in_progress, true);
  assert.equal(b.detailed_merge_status, 'unchecked');
  assert.deepEqual(b.labels, ['Feature', 'bug']);
  assert.deepEqual(b.assignees, [userRef(s.dev), userRef(s.reporter)]);
  assert.deepEqual(b.assignee, userRef(s.dev));
  assert.deepEqual(b.reviewers, [userRef(s.owner)]);
  assert.equal(b.force_remove_source_branch, true);
  assert.equal(b.squash, true);
  assert.deepEqual(b.milestone, {
    id: milestone.id,
    iid: 1,
    project_id: s.project.id,
    title: 'v1',
    description: null,
    state: 'active',
    created_at: now,
    updated_at: now,
    due_date: null,
    start_date: null,
    expired: false,
    web_url: `${s.webUrl}/-/milestones/1`,
  });
  // labels created in the project with GitLab's default colour
  const labels = await s.c.db.kysely.selectFrom('labels').select(['title', 'color', 'project_id']).orderBy('title').execute();
  assert.deepEqual(labels, [
    { title: 'Feature', color: '#6699cc', project_id: s.project.id },
    { title: 'bug', color: '#6699cc', project_id: s.project.id },
  ]);
  const labelEvents = await s.app.inject({ method: 'GET', url: `${s.base}/2/resource_label_events`, headers: s.tokens.dev });
  assert.equal(labelEvents.statusCode, 200);
  assert.deepEqual(
    labelEvents.json().map((e: any) => [e.action, e.label.name, e.resource_type, e.resource_id, e.user.id]),
    [
      ['add', 'bug', 'MergeRequest', b.id, s.dev.id],
      ['add', 'Feature', 'MergeRequest', b.id, s.dev.id],
    ],
  );
  const ms = await s.app.inject({ method: 'GET', url: `${s.base}/2/resource_milestone_events`, headers: s.tokens.dev });
  assert.deepEqual(
    ms.json().map((e: any) => [e.action, e.milestone.title, e.state]),
    [['add', 'v1', 'opened']],
  );
  const one = await s.app.inject({ method: 'GET', url: `${s.base}/2/resource_milestone_events/${ms.json()[0].id}`, headers: s.tokens.dev });
  assert.deepEqual(one.json(), ms.json()[0]);
  const none = await s.app.inject({ method: 'GET', url: `${s.base}/2/resource_milestone_events/99999`, headers: s.tokens.dev });
  assert.equal(none.statusCode, 404);
  assert.deepEqual(none.json(), { message: '404 Not found' });

  const details = await s.app.inject({ method: 'GET', url: `${s.base}/2?with_labels_details=true`, headers: s.tokens.dev });
  assert.deepEqual(details.json().labels, ['Feature', 'bug']);

  const reviewers = await s.app.inject({ method: 'GET', url: `${s.base}/2/reviewers`, headers: s.tokens.dev });
  assert.deepEqual(
    reviewers.json().map((r: any) => [r.user.id, r.state]),
    [[s.owner.id, 'unreviewed']],
  );
  const participants = await s.app.inject({ method: 'GET', url: `${s.base}/2/participants`, headers: s.tokens.dev });
  assert.deepEqual(participants.json(), [userRef(s.dev), userRef(s.reporter), userRef(s.owner)]);
});

test('create: bad inputs', async (t) => {
  const s = await setup(t);
  const post = (payload: Record<string, unknown>, headers = s.tokens.dev) => s.app.inject({ method: 'POST', url: s.base, headers, payload });

  let res = await post({});
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'title is missing, source_branch is missing, target_branch is missing' });

  res = await post({ title: 'x', source_branch: 'main', target_branch: 'main' });
  assert.equal(res.statusCode, 422);
  assert.deepEqual(res.json(), { message: ["You can't use same project/branch for source and target"] });

  res = await post({ title: 'x', source_branch: 'nope', target_branch: 'gone' });
  assert.equal(res.statusCode, 422);
  assert.deepEqual(res.json(), { message: ['Source branch "nope" does not exist', 'Target branch "gone" does not exist'] });

  res = await post({ title: 'x', source_branch: '-bad', target_branch: 'main' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: { source_branch: ['is invalid'] } });

  res = await post({ title: '   ', source_branch: 'feature', target_branch: 'main' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: { title: ["can't be blank"] } });

  res = await post({ title: 'x', source_branch: 'feature', target_branch: 'main', assignee_ids: 'a,b' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'assignee_ids is invalid' });

  res = await post({ title: 'x', source_branch: 'feature', target_branch: 'main', milestone_id: 'abc' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'milestone_id is invalid' });

  // an unknown milestone is dropped, as GitLab drops a milestone the project cannot use
  res = await post({ title: 'x', source_branch: 'feature', target_branch: 'main', milestone_id: 4242 });
  assert.equal(res.statusCode, 201);
  assert.equal(res.json().milestone, null);

  res = await post({ title: 'again', source_branch: 'feature', target_branch: 'main' });
  assert.equal(res.statusCode, 409);
  assert.deepEqual(res.json(), { message: ['Another open merge request already exists for this source branch: !1'] });

  // fork checks: a target outside the fork network
  const elsewhere = await s.seed.project({ namespace: s.group, visibility: 'private' });
  await s.seed.member({ project: elsewhere }, s.dev, 30);
  res = await post({ title: 'x', source_branch: 'other', target_branch: 'main', target_project_id: elsewhere.id });
  assert.equal(res.statusCode, 422);
  assert.deepEqual(res.json(), { message: ['Source project is not a fork of the target project'] });

  assert.equal(
    await s.c.db.kysely
      .selectFrom('merge_requests')
      .select('id')
      .execute()
      .then((r) => r.length),
    1,
  );
});

test('permissions: anonymous, strangers, reporters, developers, owners', async (t) => {
  const s = await setup(t);
  assert.equal((await createMr(s)).statusCode, 201);
  // anonymous: 401 on writes; a private project is invisible
  let res = await s.app.inject({ method: 'POST', url: s.base, payload: { title: 'x', source_branch: 'other', target_branch: 'main' } });
  assert.equal(res.statusCode, 401);
  res = await s.app.inject({ method: 'GET', url: `${s.base}/1` });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Project Not Found' });
  res = await s.app.inject({ method: 'GET', url: `${s.base}/1`, headers: s.tokens.stranger });
  assert.deepEqual(res.json(), { message: '404 Project Not Found' });
  // a missing iid
  res = await s.app.inject({ method: 'GET', url: `${s.base}/77`, headers: s.tokens.dev });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Not found' });
  res = await s.app.inject({ method: 'GET', url: `${s.base}/abc`, headers: s.tokens.dev });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'merge_request_iid is invalid' });
  // reporters read but may not create or update
  res = await s.app.inject({ method: 'GET', url: `${s.base}/1`, headers: s.tokens.reporter });
  assert.equal(res.statusCode, 200);
  res = await createMr(s, { source_branch: 'other' }, s.tokens.reporter);
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: '403 Forbidden' });
  res = await s.app.inject({ method: 'PUT', url: `${s.base}/1`, headers: s.tokens.reporter, payload: { title: 'nope' } });
  assert.equal(res.statusCode, 403);
  // developers may not delete; owners may
  res = await s.app.inject({ method: 'DELETE', url: `${s.base}/1`, headers: s.tokens.dev });
  assert.equal(res.statusCode, 403);
  // the merge request feature switched off: 403
  await s.c.db.kysely
    .updateTable('projects')
    .set({ settings: JSON.stringify({ merge_requests_access_level: 'disabled' }) })
    .where('id', '=', s.project.id)
    .execute();
  res = await s.app.inject({ method: 'GET', url: `${s.base}/1`, headers: s.tokens.dev });
  assert.equal(res.statusCode, 403);
  await s.c.db.kysely.updateTable('projects').set({ settings: '{}' }).where('id', '=', s.project.id).execute();
  res = await s.app.inject({ method: 'DELETE', url: `${s.base}/1`, headers: s.tokens.owner });
  assert.equal(res.statusCode, 204);
  assert.equal(res.body, '');
  assert.equal((await s.c.db.kysely.selectFrom('merge_requests').select('id').execute()).length, 0);
  res = await s.app.inject({ method: 'GET', url: `${s.base}/1`, headers: s.tokens.owner });
  assert.equal(res.statusCode, 404);
});

test('public project: anonymous reads, the relative reference from another project', async (t) => {
  const s = await setup(t, 'public');
  assert.equal((await createMr(s)).statusCode, 201);
  const res = await s.app.inject({ method: 'GET', url: `${s.base}/1` });
  assert.equal(res.statusCode, 200);
  const b = res.json();
  assert.equal(b.subscribed, false);
  assert.deepEqual(b.user, { can_merge: false });
  const list = await presentMergeRequests(s.c, await s.c.db.kysely.selectFrom('merge_requests').selectAll().execute(), {
    from: { group: { id: s.group.id + 1000 } },
  });
  assert.equal((list[0] as any).references.relative, `${s.group.full_path}/app!1`);
  const simple = await presentMergeRequests(s.c, await s.c.db.kysely.selectFrom('merge_requests').selectAll().execute(), { view: 'simple' });
  assert.deepEqual(simple, [
    {
      id: b.id,
      iid: 1,
      project_id: s.project.id,
      title: 'Add feature',
      description: b.description,
      state: 'opened',
      created_at: b.created_at,
      updated_at: b.updated_at,
      web_url: `${s.webUrl}/-/merge_requests/1`,
    },
  ]);
});

test('update: title, description, labels, assignees, milestone, target branch; at least one parameter; events', async (t) => {
  const s = await setup(t);
  assert.equal((await createMr(s, { labels: 'bug' })).statusCode, 201);
  const put = (payload: Record<string, unknown>, headers = s.tokens.dev) => s.app.inject({ method: 'PUT', url: `${s.base}/1`, headers, payload });

  let res = await put({});
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), {
    error:
      'assignee_id, assignee_ids, reviewer_ids, description, labels, add_labels, remove_labels, milestone_id, remove_source_branch, allow_collaboration, allow_maintainer_to_push, squash, target_branch, title, state_event, discussion_locked, merge_after are missing, at least one parameter must be provided',
  });
  res = await put({ state_event: 'merge' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'state_event does not have a valid value' });
  res = await put({ target_branch: 'feature' });
  assert.equal(res.statusCode, 422);
  assert.deepEqual(res.json(), { message: ["You can't use same project/branch for source and target"] });
  res = await put({ target_branch: 'missing' });
  assert.equal(res.statusCode, 422);
  assert.deepEqual(res.json(), { message: ['Target branch "missing" does not exist'] });

  const before = await s.c.db.kysely.selectFrom('merge_requests').selectAll().executeTakeFirstOrThrow();
  res = await put({ title: '[Draft] Better', description: 'new', add_labels: 'ui', remove_labels: 'BUG', assignee_id: s.reporter.id, discussion_locked: true });
  assert.equal(res.statusCode, 200, res.body);
  let b = res.json();
  assert.equal(b.title, '[Draft] Better');
  assert.equal(b.draft, true);
  assert.equal(b.description, 'new');
  assert.deepEqual(b.labels, ['ui']);
  assert.deepEqual(b.assignees, [userRef(s.reporter)]);
  assert.equal(b.discussion_locked, true);
  assert.deepEqual(b.task_completion_status, { count: 0, completed_count: 0 });
  assert.notEqual(b.updated_at, before.updated_at);

  const ev = (await events(s)).at(-1);
  assert.equal(ev.object_attributes.action, 'update');
  assert.deepEqual(Object.keys(ev.changes).sort(), ['assignees', 'description', 'draft', 'labels', 'title', 'updated_at']);
  assert.deepEqual(ev.changes.title, { previous: 'Add feature', current: '[Draft] Better' });
  assert.deepEqual(ev.changes.draft, { previous: false, current: true });
  assert.deepEqual(
    ev.changes.labels.previous.map((l: any) => l.title),
    ['bug'],
  );
  assert.deepEqual(
    ev.changes.labels.current.map((l: any) => l.title),
    ['ui'],
  );
  assert.deepEqual(ev.changes.assignees, {
    previous: [],
    current: [{ id: s.reporter.id, name: s.reporter.name, username: s.reporter.username, avatar_url: null, email: '[REDACTED]' }],
  });
  assert.deepEqual(
    ev.assignees.map((a: any) => a.id),
    [s.reporter.id],
  );

  // the target branch: merge status rechecked, diff recomputed
  await s.c.db.kysely.updateTable('merge_requests').set({ merge_status: 'can_be_merged' }).execute();
  res = await put({ target_branch: 'other', assignee_id: 0 });
  assert.equal(res.statusCode, 200);
  b = res.json();
  assert.equal(b.target_branch, 'other');
  assert.equal(b.merge_status, 'unchecked');
  assert.deepEqual(b.assignees, []);
  assert.deepEqual(b.diff_refs, { base_sha: s.shas.c1, head_sha: s.shas.c2, start_sha: s.shas.c3 });
  // the author may update, even without developer rights (as assignee or author)
  res = await put({ title: 'Better' }, s.tokens.reporter);
  assert.equal(res.statusCode, 403);
});

test('close and reopen: state, closed_by, state events, hook events', async (t) => {
  const s = await setup(t);
  assert.equal((await createMr(s)).statusCode, 201);
  let res = await s.app.inject({ method: 'PUT', url: `${s.base}/1`, headers: s.tokens.owner, payload: { state_event: 'close' } });
  assert.equal(res.statusCode, 200, res.body);
  let b = res.json();
  assert.equal(b.state, 'closed');
  assert.deepEqual(b.closed_by, userRef(s.owner));
  assert.match(b.closed_at, ISO);
  assert.equal(b.detailed_merge_status, 'not_open');
  // a second open merge request for the same branches is allowed while the first is closed
  assert.equal((await createMr(s)).statusCode, 201);
  res = await s.app.inject({ method: 'PUT', url: `${s.base}/1`, headers: s.tokens.owner, payload: { state_event: 'reopen' } });
  assert.equal(res.statusCode, 409);
  assert.deepEqual(res.json(), { message: ['Another open merge request already exists for this source branch: !2'] });
  res = await s.app.inject({ method: 'PUT', url: `${s.base}/2`, headers: s.tokens.owner, payload: { state_event: 'close' } });
  assert.equal(res.statusCode, 200);
  res = await s.app.inject({ method: 'PUT', url: `${s.base}/1`, headers: s.tokens.owner, payload: { state_event: 'reopen' } });
  assert.equal(res.statusCode, 200);
  b = res.json();
  assert.equal(b.state, 'opened');
  assert.equal(b.closed_by, null);
  assert.equal(b.closed_at, null);

  const states = await s.app.inject({ method: 'GET', url: `${s.base}/1/resource_state_events`, headers: s.tokens.dev });
  assert.deepEqual(
    states.json().map((e: any) => [e.state, e.user.id, e.resource_id]),
    [
      ['closed', s.owner.id, b.id],
      ['reopened', s.owner.id, b.id],
    ],
  );
  const ev = (await events(s)).filter((e) => e.object_attributes.iid === 1);
  assert.deepEqual(
    ev.map((e) => e.object_attributes.action),
    ['open', 'close', 'reopen'],
  );
  assert.deepEqual(ev[1].changes.state_id, { previous: 1, current: 2 });
  assert.deepEqual(ev[2].changes.state_id, { previous: 2, current: 1 });
});

test('commits, changes, diffs, pipelines, time stats', async (t) => {
  const s = await setup(t);
  assert.equal((await createMr(s)).statusCode, 201);
  const commits = await s.app.inject({ method: 'GET', url: `${s.base}/1/commits`, headers: s.tokens.dev });
  assert.equal(commits.statusCode, 200);
  assert.deepEqual(commits.json(), [commitJson(s.dir, s.shas.c2, s.webUrl)]);
  assert.equal(commits.headers['x-total'], '1');

  const changes = await s.app.inject({ method: 'GET', url: `${s.base}/1/changes`, headers: s.tokens.dev });
  assert.equal(changes.statusCode, 200);
  const cb = changes.json();
  assert.equal(cb.overflow, false);
  assert.equal(cb.changes_count, '2');
  assert.deepEqual(
    cb.changes.map((d: any) => [d.old_path, d.new_path, d.new_file]),
    [
      ['README.md', 'README.md', false],
      ['f.txt', 'f.txt', true],
    ],
  );
  assert.equal(cb.changes[1].diff, '@@ -0,0 +1 @@\n+f\n');

  const diffs = await s.app.inject({ method: 'GET', url: `${s.base}/1/diffs?per_page=1&page=2`, headers: s.tokens.dev });
  assert.equal(diffs.statusCode, 200);
  assert.deepEqual(diffs.json(), [
    {
      diff: '@@ -0,0 +1 @@\n+f\n',
      collapsed: false,
      too_large: false,
      new_path: 'f.txt',
      old_path: 'f.txt',
      a_mode: '0',
      b_mode: '100644',
      new_file: true,
      renamed_file: false,
      deleted_file: false,
      generated_file: null,
    },
  ]);
  assert.equal(diffs.headers['x-total'], '2');

  const pipelines = await s.app.inject({ method: 'GET', url: `${s.base}/1/pipelines`, headers: s.tokens.dev });
  assert.deepEqual(pipelines.json(), []);
  await s.c.db.kysely
    .updateTable('merge_requests')
    .set({ time_estimate: 3600 * 8 * 5 + 5400, total_time_spent: 90 })
    .execute();
  const ts = await s.app.inject({ method: 'GET', url: `${s.base}/1/time_stats`, headers: s.tokens.dev });
  assert.deepEqual(ts.json(), { time_estimate: 149400, total_time_spent: 90, human_time_estimate: '1w 1h 30m', human_total_time_spent: '1m 30s' });
  // git was not changed by reading
  assert.equal(bareGit(s.dir, ['rev-parse', 'main']).trim(), s.shas.c1);
});

test('from a fork: the fork is the source, the target its source project; commits and changes read through the fork', async (t) => {
  const s = await setup(t, 'public');
  const forker = s.stranger;
  const res0 = await s.app.inject({ method: 'POST', url: `/api/v4/projects/${s.project.id}/fork`, headers: s.tokens.stranger, payload: {} });
  assert.equal(res0.statusCode, 201, res0.body);
  const fork = res0.json();
  const forkRow = await s.c.db.kysely.selectFrom('projects').selectAll().where('id', '=', fork.id).executeTakeFirstOrThrow();
  const fwt = workTree(t, s.c.repos.pathOf(forkRow));
  fwt.git(['checkout', '-q', '-B', 'fix', `origin/main`]);
  const fix = fwt.write('fix.txt', 'fixed\n').commit('Fix it', { time: T0 + 500 });
  fwt.push('fix');

  // the target must be in the fork network, and visible
  let res = await s.app.inject({
    method: 'POST',
    url: `/api/v4/projects/${fork.id}/merge_requests`,
    headers: s.tokens.stranger,
    payload: { title: 'Fix', source_branch: 'fix', target_branch: 'main', target_project_id: 999999 },
  });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Not found' });

  res = await s.app.inject({
    method: 'POST',
    url: `/api/v4/projects/${fork.id}/merge_requests`,
    headers: s.tokens.stranger,
    payload: {
      title: 'Fix',
      source_branch: 'fix',
      target_branch: 'main',
      target_project_id: s.project.id,
      allow_collaboration: true,
      labels: 'ignored',
      assignee_ids: [s.dev.id],
    },
  });
  assert.equal(res.statusCode, 201, res.body);
  const b = res.json();
  assert.equal(b.iid, 1);
  assert.equal(b.project_id, s.project.id);
  assert.equal(b.source_project_id, fork.id);
  assert.equal(b.target_project_id, s.project.id);
  assert.equal(b.sha, fix);
  assert.equal(b.allow_collaboration, true);
  assert.equal(b.allow_maintainer_to_push, true);
  // a fork's author is not a member of the target: no labels nor assignees
  assert.deepEqual(b.labels, []);
  assert.deepEqual(b.assignees, []);
  assert.deepEqual(b.author, userRef(forker));
  assert.equal(b.web_url, `${s.webUrl}/-/merge_requests/1`);
  assert.deepEqual(b.diff_refs, { base_sha: s.shas.c1, head_sha: fix, start_sha: s.shas.c1 });
  assert.equal(b.changes_count, '1');

  const commits = await s.app.inject({ method: 'GET', url: `${s.base}/1/commits`, headers: s.tokens.dev });
  assert.deepEqual(
    commits.json().map((x: any) => x.id),
    [fix],
  );
  const changes = await s.app.inject({ method: 'GET', url: `${s.base}/1/changes`, headers: s.tokens.dev });
  assert.deepEqual(
    changes.json().changes.map((d: any) => d.new_path),
    ['fix.txt'],
  );
  // the merge request lives in the target project: the fork has none
  res = await s.app.inject({ method: 'GET', url: `/api/v4/projects/${fork.id}/merge_requests/1`, headers: s.tokens.stranger });
  assert.equal(res.statusCode, 404);
  // the same source branch again: 409
  res = await s.app.inject({
    method: 'POST',
    url: `/api/v4/projects/${fork.id}/merge_requests`,
    headers: s.tokens.stranger,
    payload: { title: 'Fix again', source_branch: 'fix', target_branch: 'main', target_project_id: s.project.id },
  });
  assert.equal(res.statusCode, 409);
  // a merge request within the fork (no target_project_id) is the fork's own
  res = await s.app.inject({
    method: 'POST',
    url: `/api/v4/projects/${fork.id}/merge_requests`,
    headers: s.tokens.stranger,
    payload: { title: 'Own', source_branch: 'fix', target_branch: 'main' },
  });
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(res.json().project_id, fork.id);
  assert.equal(res.json().iid, 1);
  assert.equal(res.json().allow_collaboration, false);
});

test('time tracking: estimate, spent time, resets, bad durations, permissions, update events', async (t) => {
  const s = await setup(t);
  assert.equal((await createMr(s)).statusCode, 201);
  const post = (what: string, payload?: Record<string, unknown>, headers = s.tokens.dev) =>
    s.app.inject({ method: 'POST', url: `${s.base}/1/${what}`, headers, ...(payload ? { payload } : {}) });
  let res = await post('time_estimate', { duration: '1w 2d 3h30m' });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json(), { time_estimate: 214200, total_time_spent: 0, human_time_estimate: '1w 2d 3h 30m', human_total_time_spent: null });
  res = await post('add_spent_time', { duration: '90m' });
  assert.equal(res.statusCode, 201);
  assert.deepEqual(res.json(), { time_estimate: 214200, total_time_spent: 5400, human_time_estimate: '1w 2d 3h 30m', human_total_time_spent: '1h 30m' });
  res = await post('add_spent_time', { duration: '-30m' });
  assert.equal(res.json().total_time_spent, 3600);
  res = await post('add_spent_time', { duration: '-2h' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: { time_spent: ['Time to subtract exceeds the total time spent'] } });
  res = await post('time_estimate', { duration: 'soon' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: { time_estimate: ['must have a valid format and be greater than or equal to zero.'] } });
  res = await post('time_estimate', {});
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'duration is missing' });
  res = await post('time_estimate', { duration: '2' });
  assert.equal(res.json().time_estimate, 7200);
  res = await post('time_estimate', { duration: '1h' }, s.tokens.reporter);
  assert.equal(res.statusCode, 403);
  res = await post('reset_spent_time');
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().total_time_spent, 0);
  res = await post('reset_time_estimate');
  assert.deepEqual(res.json(), { time_estimate: 0, total_time_spent: 0, human_time_estimate: null, human_total_time_spent: null });
  const ev = (await events(s)).filter((e) => e.object_attributes.action === 'update');
  assert.deepEqual(ev[0].changes.time_estimate, { previous: 0, current: 214200 });
  assert.deepEqual(ev[1].changes.total_time_spent, { previous: 0, current: 5400 });
  assert.deepEqual(ev[1].changes.time_change, { previous: 0, current: 5400 });
  const row = await s.c.db.kysely.selectFrom('merge_requests').select(['time_estimate', 'total_time_spent']).executeTakeFirstOrThrow();
  assert.deepEqual(row, { time_estimate: 0, total_time_spent: 0 });
});

test('diff versions: the current diff as the one version, with its commits and diffs', async (t) => {
  const s = await setup(t);
  const created = (await createMr(s)).json();
  const list = await s.app.inject({ method: 'GET', url: `${s.base}/1/versions`, headers: s.tokens.dev });
  assert.equal(list.statusCode, 200);
  const version = {
    id: created.id,
    head_commit_sha: s.shas.c2,
    base_commit_sha: s.shas.c1,
    start_commit_sha: s.shas.c1,
    created_at: list.json()[0].created_at,
    merge_request_id: created.id,
    state: 'collected',
    real_size: '2',
    patch_id_sha: null,
  };
  assert.deepEqual(list.json(), [version]);
  const one = await s.app.inject({ method: 'GET', url: `${s.base}/1/versions/${created.id}`, headers: s.tokens.dev });
  assert.equal(one.statusCode, 200);
  const b = one.json();
  assert.deepEqual({ ...b, commits: undefined, diffs: undefined }, { ...version, commits: undefined, diffs: undefined });
  assert.deepEqual(b.commits, [commitJson(s.dir, s.shas.c2, s.webUrl)]);
  assert.deepEqual(
    b.diffs.map((d: any) => d.new_path),
    ['README.md', 'f.txt'],
  );
  const missing = await s.app.inject({ method: 'GET', url: `${s.base}/1/versions/${created.id + 100}`, headers: s.tokens.dev });
  assert.equal(missing.statusCode, 404);
  assert.deepEqual(missing.json(), { message: '404 Not found' });
});

test('subscribe and unsubscribe: 201 with the merge request, 304 when nothing changes, subscribed afterwards', async (t) => {
  const s = await setup(t);
  assert.equal((await createMr(s)).statusCode, 201);
  const post = (what: string, headers: Record<string, string>) => s.app.inject({ method: 'POST', url: `${s.base}/1/${what}`, headers });
  // the author takes part: already subscribed
  let res = await post('subscribe', s.tokens.dev);
  assert.equal(res.statusCode, 304);
  assert.equal(res.body, '');
  res = await post('unsubscribe', s.tokens.dev);
  assert.equal(res.statusCode, 201);
  assert.equal(res.json().subscribed, false);
  assert.equal(res.json().iid, 1);
  res = await post('unsubscribe', s.tokens.dev);
  assert.equal(res.statusCode, 304);
  res = await post('subscribe', s.tokens.reporter);
  assert.equal(res.statusCode, 201);
  assert.equal(res.json().subscribed, true);
  res = await s.app.inject({ method: 'GET', url: `${s.base}/1`, headers: s.tokens.reporter });
  assert.equal(res.json().subscribed, true);
  res = await post('subscribe', s.tokens.stranger);
  assert.equal(res.statusCode, 404);
  res = await s.app.inject({ method: 'POST', url: `${s.base}/1/subscribe` });
  assert.equal(res.statusCode, 401);
  const rows = await s.c.db.kysely.selectFrom('subscriptions').select(['user_id', 'subscribable_type', 'project_id', 'subscribed']).orderBy('id').execute();
  assert.deepEqual(rows, [
    { user_id: s.dev.id, subscribable_type: 'MergeRequest', project_id: s.project.id, subscribed: 0 },
    { user_id: s.reporter.id, subscribable_type: 'MergeRequest', project_id: s.project.id, subscribed: 1 },
  ]);
  assert.equal((await s.app.inject({ method: 'DELETE', url: `${s.base}/1`, headers: s.tokens.owner })).statusCode, 204);
  assert.deepEqual(await s.c.db.kysely.selectFrom('subscriptions').selectAll().execute(), []);
});
