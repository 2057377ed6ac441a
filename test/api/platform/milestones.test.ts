// Project and group milestones (GitLab lib/api/milestones.rb, group_milestones.rb, milestone_responses.rb):
// whole bodies, iids per scope, filters and order, state events, validation, permissions, deletion,
// and the services merge requests use (findForProject, toMilestoneBasic).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, EXTERNAL_URL } from '../../helpers/build-app.ts';
import type { MilestoneRow } from '../../../src/db/schema.ts';
import { toMilestoneBasic } from '../../../src/http/platform/entities/milestone.entity.ts';

const today = () => new Date().toISOString().slice(0, 10);

function body(row: MilestoneRow, webUrl: string) {
  const out: Record<string, unknown> = { id: row.id, iid: row.iid };
  if (row.project_id !== null) out.project_id = row.project_id;
  if (row.group_id !== null) out.group_id = row.group_id;
  return {
    ...out,
    title: row.title,
    description: row.description,
    state: row.state,
    created_at: row.created_at,
    updated_at: row.updated_at,
    due_date: row.due_date,
    start_date: row.start_date,
    expired: row.due_date !== null && row.due_date < today(),
    web_url: webUrl,
  };
}

test('project milestones: create, get, list with whole bodies and headers', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const group = await seed.group({ path: 'grp' });
  const project = await seed.project({ namespace: group, path: 'app' });
  const reporter = await seed.user();
  await seed.member({ project }, reporter, 20);
  const { headers } = await seed.token(reporter);
  const url = `/api/v4/projects/${project.id}/milestones`;

  const res = await app.inject({
    method: 'POST',
    url,
    headers,
    payload: { title: 'v1.0', description: 'First', start_date: '2020-01-01', due_date: '2020-02-01' },
  });
  assert.equal(res.statusCode, 201);
  const row = await c.db.kysely.selectFrom('milestones').selectAll().where('title', '=', 'v1.0').executeTakeFirstOrThrow();
  assert.deepEqual([row.iid, row.project_id, row.group_id, row.state], [1, project.id, null, 'active']);
  assert.deepEqual(res.json(), {
    id: row.id,
    iid: 1,
    project_id: project.id,
    title: 'v1.0',
    description: 'First',
    state: 'active',
    created_at: row.created_at,
    updated_at: row.updated_at,
    due_date: '2020-02-01',
    start_date: '2020-01-01',
    expired: true,
    web_url: `${EXTERNAL_URL}/grp/app/-/milestones/1`,
  });
  const second = await app.inject({ method: 'POST', url, headers, payload: { title: 'v2.0', due_date: '2999-01-01' } });
  assert.deepEqual(
    [second.statusCode, second.json().iid, second.json().expired, second.json().description, second.json().start_date],
    [201, 2, false, null, null],
  );
  const third = await app.inject({ method: 'POST', url, headers, payload: { title: 'Backlog' } });
  assert.deepEqual([third.statusCode, third.json().iid, third.json().expired, third.json().due_date], [201, 3, false, null]);
  // iids count per project: another project starts at 1
  const other = await seed.project({ namespace: group, path: 'other' });
  await seed.member({ project: other }, reporter, 20);
  const otherRes = await app.inject({ method: 'POST', url: `/api/v4/projects/${other.id}/milestones`, headers, payload: { title: 'v1.0' } });
  assert.deepEqual([otherRes.statusCode, otherRes.json().iid], [201, 1]);

  const one = await app.inject({ method: 'GET', url: `${url}/${row.id}`, headers });
  assert.deepEqual([one.statusCode, one.json()], [200, body(row, `${EXTERNAL_URL}/grp/app/-/milestones/1`)]);
  // another project's milestone is not found here (ActiveRecord's find: "404 Not found")
  const foreign = await app.inject({ method: 'GET', url: `${url}/${otherRes.json().id}`, headers });
  assert.deepEqual([foreign.statusCode, foreign.json()], [404, { message: '404 Not found' }]);
  const bad = await app.inject({ method: 'GET', url: `${url}/abc`, headers });
  assert.deepEqual([bad.statusCode, bad.json()], [400, { error: 'milestone_id is invalid' }]);

  // order: due date ascending, undated last (newest first among equals)
  const list = await app.inject({ method: 'GET', url, headers });
  assert.equal(list.statusCode, 200);
  const rows = await c.db.kysely.selectFrom('milestones').selectAll().where('project_id', '=', project.id).orderBy('iid').execute();
  assert.deepEqual(list.json(), [
    body(rows[0], `${EXTERNAL_URL}/grp/app/-/milestones/1`),
    body(rows[1], `${EXTERNAL_URL}/grp/app/-/milestones/2`),
    body(rows[2], `${EXTERNAL_URL}/grp/app/-/milestones/3`),
  ]);
  assert.equal(list.headers['x-total'], '3');
  assert.equal(list.headers['x-page'], '1');
  assert.equal(
    list.headers.link,
    `<${EXTERNAL_URL}${url}?id=${project.id}&page=1&per_page=20>; rel="first", <${EXTERNAL_URL}${url}?id=${project.id}&page=1&per_page=20>; rel="last"`,
  );
  const paged = await app.inject({ method: 'GET', url: `${url}?per_page=1&page=2&state=active`, headers });
  assert.deepEqual(
    paged.json().map((m: { title: string }) => m.title),
    ['v2.0'],
  );
  assert.equal(
    paged.headers.link,
    `<${EXTERNAL_URL}${url}?id=${project.id}&page=1&per_page=1&state=active>; rel="prev", <${EXTERNAL_URL}${url}?id=${project.id}&page=3&per_page=1&state=active>; rel="next", <${EXTERNAL_URL}${url}?id=${project.id}&page=1&per_page=1&state=active>; rel="first", <${EXTERNAL_URL}${url}?id=${project.id}&page=3&per_page=1&state=active>; rel="last"`,
  );
});

test('project milestones: filters, state events, updates', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const group = await seed.group();
  const project = await seed.project({ namespace: group });
  const dev = await seed.user();
  await seed.member({ project }, dev, 30);
  const { headers } = await seed.token(dev);
  const url = `/api/v4/projects/${project.id}/milestones`;
  const make = async (payload: Record<string, unknown>) => (await app.inject({ method: 'POST', url, headers, payload })).json();
  const a = await make({ title: 'Alpha release', description: 'the first' });
  const b = await make({ title: 'Beta', description: 'alpha feedback' });
  await make({ title: 'Gamma' });
  const titles = async (query: string) => {
    const res = await app.inject({ method: 'GET', url: `${url}${query}`, headers });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().map((m: { title: string }) => m.title);
  };
  assert.deepEqual(await titles('?search=ALPHA'), ['Beta', 'Alpha release']);
  assert.deepEqual(await titles('?search_title=alpha'), ['Alpha release']);
  assert.deepEqual(await titles('?title=Beta'), ['Beta']);
  assert.deepEqual(await titles('?title=beta'), []);
  assert.deepEqual(await titles('?iids[]=1&iids[]=3'), ['Gamma', 'Alpha release']);
  assert.deepEqual(await titles('?iids=2'), ['Beta']);

  // close and activate
  let res = await app.inject({ method: 'PUT', url: `${url}/${a.id}`, headers, payload: { state_event: 'close' } });
  assert.deepEqual([res.statusCode, res.json().state], [200, 'closed']);
  assert.equal((await c.db.kysely.selectFrom('milestones').select('state').where('id', '=', a.id).executeTakeFirstOrThrow()).state, 'closed');
  assert.deepEqual(await titles('?state=closed'), ['Alpha release']);
  assert.deepEqual(await titles('?state=active'), ['Gamma', 'Beta']);
  assert.deepEqual(await titles('?state=all'), ['Gamma', 'Beta', 'Alpha release']);
  res = await app.inject({
    method: 'PUT',
    url: `${url}/${a.id}`,
    headers,
    payload: { state_event: 'activate', title: 'Alpha', due_date: '2999-12-31', description: null },
  });
  assert.equal(res.statusCode, 200);
  const row = await c.db.kysely.selectFrom('milestones').selectAll().where('id', '=', a.id).executeTakeFirstOrThrow();
  assert.deepEqual([row.state, row.title, row.due_date, row.description], ['active', 'Alpha', '2999-12-31', null]);
  assert.ok(row.updated_at > a.updated_at);
  assert.deepEqual(res.json(), body(row, a.web_url));
  // a blank date clears it
  res = await app.inject({ method: 'PUT', url: `${url}/${a.id}`, headers, payload: { due_date: '' } });
  assert.equal(res.json().due_date, null);

  // updated_before / updated_after are inclusive
  const stamp = (await c.db.kysely.selectFrom('milestones').select('updated_at').where('id', '=', b.id).executeTakeFirstOrThrow()).updated_at;
  assert.ok((await titles(`?updated_before=${encodeURIComponent(stamp)}`)).includes('Beta'));
  assert.ok((await titles(`?updated_after=${encodeURIComponent(stamp)}`)).includes('Beta'));
  assert.deepEqual(await titles('?updated_after=2999-01-01T00:00:00Z'), []);

  // bad parameters
  const bad = async (query: string, error: string) => {
    const r = await app.inject({ method: 'GET', url: `${url}${query}`, headers });
    assert.deepEqual([r.statusCode, r.json()], [400, { error }]);
  };
  await bad('?state=open', 'state does not have a valid value');
  await bad('?iids=a', 'iids is invalid');
  await bad('?updated_before=yesterday', 'updated_before is invalid');
  await bad('?include_ancestors=true&include_parent_milestones=true', 'include_ancestors, include_parent_milestones are mutually exclusive');
  res = await app.inject({ method: 'PUT', url: `${url}/${a.id}`, headers, payload: {} });
  assert.deepEqual(
    [res.statusCode, res.json()],
    [400, { error: 'title, description, start_date, due_date, state_event are missing, at least one parameter must be provided' }],
  );
  res = await app.inject({ method: 'PUT', url: `${url}/${a.id}`, headers, payload: { state_event: 'reopen' } });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'state_event does not have a valid value' }]);
  res = await app.inject({ method: 'PUT', url: `${url}/${a.id}`, headers, payload: { title: 'Beta' } });
  assert.deepEqual(
    [res.statusCode, res.json()],
    [400, { message: 'Failed to update milestone {:title=>["already being used for another group or project milestone."]}' }],
  );
  res = await app.inject({ method: 'PUT', url: `${url}/${a.id}`, headers, payload: { start_date: '2030-01-02', due_date: '2030-01-01' } });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: 'Failed to update milestone {:due_date=>["must be greater than start date"]}' }]);
  res = await app.inject({ method: 'PUT', url: `${url}/999999`, headers, payload: { title: 'x' } });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Not found' }]);
});

test('milestones: a date given as a date-time keeps its date as written (python-gitlab sends "2020-01-01T00:00:00Z")', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const group = await seed.group();
  const project = await seed.project({ namespace: group });
  const dev = await seed.user();
  await seed.member({ project }, dev, 30);
  const { headers } = await seed.token(dev);
  for (const [url, kind] of [
    [`/api/v4/projects/${project.id}/milestones`, 'project'],
    [`/api/v4/groups/${group.id}/milestones`, 'group'],
  ]) {
    if (kind === 'group') await seed.member({ group }, dev, 50);
    const created = await app.inject({
      method: 'POST',
      url,
      headers,
      payload: { title: `dated ${kind}`, start_date: '2019-12-31T23:30:00-05:00', due_date: '2020-01-01T00:00:00Z' },
    });
    assert.deepEqual([created.statusCode, created.json().start_date, created.json().due_date], [201, '2019-12-31', '2020-01-01'], kind);
    let res = await app.inject({ method: 'PUT', url: `${url}/${created.json().id}`, headers, payload: { due_date: '2020-02-29T12:00:00.000Z' } });
    assert.deepEqual([res.statusCode, res.json().due_date], [200, '2020-02-29'], kind);
    res = await app.inject({ method: 'PUT', url: `${url}/${created.json().id}`, headers, payload: { due_date: '2020-02-30T00:00:00Z' } });
    assert.deepEqual([res.statusCode, res.json()], [400, { error: 'due_date is invalid' }], kind);
    res = await app.inject({ method: 'PUT', url: `${url}/${created.json().id}`, headers, payload: { due_date: '' } });
    assert.deepEqual([res.statusCode, res.json().due_date], [200, null], kind);
  }
});

test('project milestones: create validation, permissions, delete', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const group = await seed.group();
  const project = await seed.project({ namespace: group });
  const dev = await seed.user();
  const guest = await seed.user();
  await seed.member({ project }, dev, 30);
  await seed.member({ project }, guest, 10);
  const { headers } = await seed.token(dev);
  const url = `/api/v4/projects/${project.id}/milestones`;
  const post = (payload: Record<string, unknown>, h = headers) => app.inject({ method: 'POST', url, headers: h, payload });

  let res = await post({});
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'title is missing' }]);
  res = await post({ title: '' });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: `Failed to create milestone {:title=>["can't be blank"]}` }]);
  res = await post({ title: 'x', due_date: '2020-13-45' });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'due_date is invalid' }]);
  res = await post({ title: 'x', start_date: 'soon', due_date: 'later' });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'due_date is invalid, start_date is invalid' }]);
  res = await post({ title: 'x', start_date: '2020-02-01', due_date: '2020-01-01' });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: 'Failed to create milestone {:due_date=>["must be greater than start date"]}' }]);
  assert.equal((await c.db.kysely.selectFrom('milestones').selectAll().execute()).length, 0);

  const v1 = await post({ title: 'v1' });
  assert.equal(v1.statusCode, 201);
  res = await post({ title: 'v1' });
  assert.deepEqual(
    [res.statusCode, res.json()],
    [400, { message: 'Failed to create milestone {:title=>["already being used for another group or project milestone."]}' }],
  );
  // the group's milestone titles are taken for its projects too
  const owner = await seed.user();
  await seed.member({ group }, owner, 50);
  const ownerH = (await seed.token(owner)).headers;
  assert.equal((await app.inject({ method: 'POST', url: `/api/v4/groups/${group.id}/milestones`, headers: ownerH, payload: { title: 'Q1' } })).statusCode, 201);
  res = await post({ title: 'Q1' });
  assert.deepEqual(
    [res.statusCode, res.json()],
    [400, { message: 'Failed to create milestone {:title=>["already being used for another group or project milestone."]}' }],
  );
  // ... and a group milestone may not repeat one of its projects'
  res = await app.inject({ method: 'POST', url: `/api/v4/groups/${group.id}/milestones`, headers: ownerH, payload: { title: 'v1' } });
  assert.deepEqual(
    [res.statusCode, res.json()],
    [400, { message: 'Failed to create milestone {:title=>["already being used for another group or project milestone."]}' }],
  );
  // a failed create gives its iid back: the next one is 2
  assert.equal((await post({ title: 'v2' })).json().iid, 2);

  // permissions
  const guestH = (await seed.token(guest)).headers;
  assert.equal((await app.inject({ method: 'GET', url, headers: guestH })).statusCode, 200);
  res = await post({ title: 'g' }, guestH);
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  res = await app.inject({ method: 'PUT', url: `${url}/${v1.json().id}`, headers: guestH, payload: { title: 'g' } });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  res = await app.inject({ method: 'DELETE', url: `${url}/${v1.json().id}`, headers: guestH });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  const strangerH = (await seed.token(await seed.user())).headers;
  res = await app.inject({ method: 'GET', url, headers: strangerH });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Project Not Found' }]);
  res = await app.inject({ method: 'GET', url });
  assert.deepEqual([res.statusCode, res.json()], [401, { message: '401 Unauthorized' }]);

  // delete: merge requests lose the milestone (a 'remove' event each), the row goes
  const now = new Date().toISOString();
  const mr = await c.db.kysely
    .insertInto('merge_requests')
    .values({
      iid: 1,
      project_id: project.id,
      source_project_id: project.id,
      source_branch: 'f',
      target_branch: 'main',
      title: 'MR',
      state: 'opened',
      milestone_id: v1.json().id,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  res = await app.inject({ method: 'DELETE', url: `${url}/${v1.json().id}`, headers });
  assert.equal(res.statusCode, 204);
  assert.equal(res.body, '');
  assert.equal(await c.db.kysely.selectFrom('milestones').select('id').where('id', '=', v1.json().id).executeTakeFirst(), undefined);
  const after = await c.db.kysely.selectFrom('merge_requests').selectAll().where('id', '=', mr.id).executeTakeFirstOrThrow();
  assert.equal(after.milestone_id, null);
  assert.ok(after.updated_at > now);
  const events = await c.db.kysely.selectFrom('resource_milestone_events').selectAll().execute();
  assert.deepEqual(
    events.map((e) => [e.merge_request_id, e.milestone_id, e.user_id, e.action, e.state]),
    [[mr.id, null, dev.id, 'remove', 'opened']],
  );
  // ... and its merge_request hook event (update, the milestone's change), written in the same transaction
  const hookEvents = (await c.db.kysely.selectFrom('jobs').select('payload').execute())
    .map((j) => JSON.parse(j.payload))
    .filter((p) => p.object_kind === 'merge_request');
  assert.deepEqual(
    hookEvents.map((p) => [p.object_attributes.action, p.object_attributes.iid, p.changes.milestone_id]),
    [['update', 1, { previous: v1.json().id, current: null }]],
  );
  res = await app.inject({ method: 'DELETE', url: `${url}/${v1.json().id}`, headers });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Not found' }]);

  // a milestone's issues: none are kept here
  res = await app.inject({ method: 'GET', url: `${url}/${(await post({ title: 'v3' })).json().id}/issues`, headers });
  assert.deepEqual([res.statusCode, res.json(), res.headers['x-total']], [200, [], '0']);
});

test('group milestones and inheritance into projects', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const top = await seed.group({ path: 'top' });
  const sub = await seed.group({ parent: top, path: 'sub' });
  const project = await seed.project({ namespace: sub, path: 'p' });
  const owner = await seed.user();
  await seed.member({ group: top }, owner, 50);
  const { headers } = await seed.token(owner);

  const topM = await app.inject({ method: 'POST', url: `/api/v4/groups/${top.id}/milestones`, headers, payload: { title: 'Top', due_date: '2999-01-01' } });
  assert.equal(topM.statusCode, 201);
  const row = await c.db.kysely.selectFrom('milestones').selectAll().where('id', '=', topM.json().id).executeTakeFirstOrThrow();
  assert.deepEqual([row.group_id, row.project_id, row.iid], [top.id, null, 1]);
  assert.deepEqual(topM.json(), body(row, `${EXTERNAL_URL}/groups/top/-/milestones/1`));
  const subM = (await app.inject({ method: 'POST', url: `/api/v4/groups/top%2Fsub/milestones`, headers, payload: { title: 'Sub' } })).json();
  assert.deepEqual([subM.iid, subM.group_id, subM.web_url], [1, sub.id, `${EXTERNAL_URL}/groups/top/sub/-/milestones/1`]);
  const projM = (await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/milestones`, headers, payload: { title: 'Proj' } })).json();

  const titles = async (u: string) => {
    const res = await app.inject({ method: 'GET', url: u, headers });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().map((m: { title: string }) => m.title);
  };
  assert.deepEqual(await titles(`/api/v4/groups/${sub.id}/milestones`), ['Sub']);
  assert.deepEqual(await titles(`/api/v4/groups/${sub.id}/milestones?include_ancestors=true`), ['Top', 'Sub']);
  assert.deepEqual(await titles(`/api/v4/groups/${top.id}/milestones?include_descendants=true`), ['Top', 'Proj', 'Sub']);
  assert.deepEqual(await titles(`/api/v4/projects/${project.id}/milestones`), ['Proj']);
  assert.deepEqual(await titles(`/api/v4/projects/${project.id}/milestones?include_ancestors=true`), ['Top', 'Proj', 'Sub']);
  assert.deepEqual(await titles(`/api/v4/projects/${project.id}/milestones?include_parent_milestones=true`), ['Top', 'Proj', 'Sub']);

  // group writes: update, close, delete; a subgroup's milestone is not the parent's
  let res = await app.inject({ method: 'PUT', url: `/api/v4/groups/${top.id}/milestones/${subM.id}`, headers, payload: { state_event: 'close' } });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Not found' }]);
  res = await app.inject({ method: 'PUT', url: `/api/v4/groups/${sub.id}/milestones/${subM.id}`, headers, payload: { state_event: 'close' } });
  assert.deepEqual([res.statusCode, res.json().state], [200, 'closed']);
  res = await app.inject({ method: 'DELETE', url: `/api/v4/groups/${sub.id}/milestones/${subM.id}`, headers });
  assert.equal(res.statusCode, 204);
  const stranger = (await seed.token(await seed.user())).headers;
  res = await app.inject({ method: 'GET', url: `/api/v4/groups/${top.id}/milestones`, headers: stranger });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Group Not Found' }]);

  // the services merge requests use: the project's own milestone or an ancestor group's
  const found = await c.milestones.findForProject(project, row.id);
  assert.ok(found);
  assert.deepEqual(toMilestoneBasic(found), body(row, `${EXTERNAL_URL}/groups/top/-/milestones/1`));
  assert.equal((await c.milestones.findForProject(project, projM.id))?.web_url, `${EXTERNAL_URL}/top/sub/p/-/milestones/1`);
  const elsewhere = await seed.project();
  assert.equal(await c.milestones.findForProject(elsewhere, row.id), undefined);
  assert.equal(await c.milestones.findForProject(project, 99999999999), undefined);
  const byIds = await c.milestones.byIds([row.id, projM.id, 424242]);
  assert.deepEqual([...byIds.keys()].sort(), [row.id, projM.id].sort());
});

test('a milestone merge requests: those with the milestone the caller may read, by label priority', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const group = await seed.group({ path: 'g' });
  const project = await seed.project({ namespace: group, path: 'p' });
  const dev = await seed.user();
  await seed.member({ project }, dev, 30);
  const { headers } = await seed.token(dev);
  const url = `/api/v4/projects/${project.id}/milestones`;
  const m = (await app.inject({ method: 'POST', url, headers, payload: { title: 'v1' } })).json();
  const other = (await app.inject({ method: 'POST', url, headers, payload: { title: 'v2' } })).json();
  const urgent = (
    await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/labels`, headers, payload: { name: 'urgent', color: 'red', priority: 1 } })
  ).json();
  const now = new Date().toISOString();
  const insert = (iid: number, milestone: number) =>
    c.db.kysely
      .insertInto('merge_requests')
      .values({
        iid,
        project_id: project.id,
        source_project_id: project.id,
        source_branch: `f${iid}`,
        target_branch: 'main',
        title: `MR ${iid}`,
        state: 'opened',
        author_id: dev.id,
        milestone_id: milestone,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  const first = await insert(1, m.id);
  const second = await insert(2, m.id);
  await insert(3, other.id);
  await c.db.kysely.insertInto('merge_request_labels').values({ merge_request_id: first.id, label_id: urgent.id, created_at: now }).execute();

  const res = await app.inject({ method: 'GET', url: `${url}/${m.id}/merge_requests`, headers });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(
    res.json().map((mr: { iid: number; milestone: { id: number }; labels: string[] }) => [mr.iid, mr.milestone.id, mr.labels]),
    [
      [1, m.id, ['urgent']],
      [2, m.id, []],
    ],
  );
  assert.equal(res.json()[0].milestone.web_url, `${EXTERNAL_URL}/g/p/-/milestones/1`);
  assert.equal(res.headers['x-total'], '2');
  assert.ok(second);
  const missing = await app.inject({ method: 'GET', url: `${url}/999999/merge_requests`, headers });
  assert.deepEqual([missing.statusCode, missing.json()], [404, { message: '404 Not found' }]);
});

test('promote: a project milestone becomes its group milestone; issues, merge requests, events and board lists of that title in the group follow', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const group = await seed.group({ path: 'grp' });
  const app1 = await seed.project({ namespace: group, path: 'app' });
  const lib = await seed.project({ namespace: group, path: 'lib' });
  const owner = await seed.user();
  const reporter = await seed.user();
  await seed.member({ group }, owner, 50);
  await seed.member({ project: app1 }, reporter, 20);
  const { headers } = await seed.token(owner);
  const reporterH = (await seed.token(reporter)).headers;
  const post = async (url: string, payload: Record<string, unknown>) => {
    const r = await app.inject({ method: 'POST', url, headers, payload });
    assert.equal(r.statusCode, 201, r.body);
    return r.json();
  };
  const v1 = await post(`/api/v4/projects/${app1.id}/milestones`, { title: 'v1', description: 'First', start_date: '2030-01-01', due_date: '2030-02-01' });
  const libV1 = await post(`/api/v4/projects/${lib.id}/milestones`, { title: 'v1' });
  const other = await post(`/api/v4/projects/${app1.id}/milestones`, { title: 'v2' });
  const issue = await post(`/api/v4/projects/${app1.id}/issues`, { title: 'In v1', milestone_id: v1.id });
  const libIssue = await post(`/api/v4/projects/${lib.id}/issues`, { title: 'Also in v1', milestone_id: libV1.id });
  const board = (await app.inject({ method: 'GET', url: `/api/v4/projects/${app1.id}/boards`, headers })).json()[0];
  const list = await post(`/api/v4/projects/${app1.id}/boards/${board.id}/lists`, { milestone_id: v1.id });
  const now = new Date().toISOString();
  const mr = await c.db.kysely
    .insertInto('merge_requests')
    .values({
      iid: 1,
      project_id: lib.id,
      source_project_id: lib.id,
      source_branch: 'f',
      target_branch: 'main',
      title: 'MR',
      state: 'opened',
      milestone_id: libV1.id,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const url = `/api/v4/projects/${app1.id}/milestones/${v1.id}/promote`;

  // who may: the project's and the group's milestone managers; a milestone of the project only
  const refused = await app.inject({ method: 'POST', url, headers: reporterH });
  assert.deepEqual([refused.statusCode, refused.json()], [403, { message: '403 Forbidden' }]);
  const missing = await app.inject({ method: 'POST', url: `/api/v4/projects/${app1.id}/milestones/${libV1.id}/promote`, headers });
  assert.deepEqual([missing.statusCode, missing.json()], [404, { message: '404 Not found' }]);

  const res = await app.inject({ method: 'POST', url, headers });
  assert.deepEqual([res.statusCode, res.body, res.headers['content-type']], [200, '200', 'application/json']);
  const rows = await c.db.kysely.selectFrom('milestones').selectAll().orderBy('id').execute();
  const promoted = rows.find((r) => r.group_id === group.id)!;
  assert.deepEqual(
    rows.map((r) => [r.id, r.title, r.project_id, r.group_id]),
    [
      [other.id, 'v2', app1.id, null],
      [promoted.id, 'v1', null, group.id],
    ],
  );
  assert.deepEqual(
    [promoted.iid, promoted.description, promoted.start_date, promoted.due_date, promoted.state],
    [1, 'First', '2030-01-01', '2030-02-01', 'active'],
  );
  // what carried a v1 of the group's projects carries the group's v1
  for (const [p, i] of [
    [app1, issue],
    [lib, libIssue],
  ] as const) {
    const shown = (await app.inject({ method: 'GET', url: `/api/v4/projects/${p.id}/issues/${i.iid}`, headers })).json();
    assert.deepEqual([shown.milestone.id, shown.milestone.group_id], [promoted.id, group.id]);
  }
  const groupIssues = (await app.inject({ method: 'GET', url: `/api/v4/groups/${group.id}/milestones/${promoted.id}/issues`, headers })).json();
  assert.deepEqual(
    groupIssues.map((i: { id: number }) => i.id),
    [libIssue.id, issue.id],
  );
  assert.equal(
    (await c.db.kysely.selectFrom('merge_requests').select('milestone_id').where('id', '=', mr.id).executeTakeFirstOrThrow()).milestone_id,
    promoted.id,
  );
  const events = await c.db.kysely.selectFrom('resource_milestone_events').select(['issue_id', 'milestone_id', 'action']).orderBy('id').execute();
  assert.deepEqual(events, [
    { issue_id: issue.id, milestone_id: promoted.id, action: 'add' },
    { issue_id: libIssue.id, milestone_id: promoted.id, action: 'add' },
  ]);
  const lists = (await app.inject({ method: 'GET', url: `/api/v4/projects/${app1.id}/boards/${board.id}/lists`, headers })).json();
  assert.deepEqual(
    lists.map((l: { id: number; milestone: { id: number } }) => [l.id, l.milestone.id]),
    [[list.id, promoted.id]],
  );

  // a title the group's milestones already hold is refused and nothing changes
  await c.db.kysely
    .insertInto('milestones')
    .values({
      iid: 2,
      project_id: null,
      group_id: group.id,
      title: 'v2',
      description: null,
      start_date: null,
      due_date: null,
      state: 'active',
      created_at: now,
      updated_at: now,
    })
    .execute();
  const taken = await app.inject({ method: 'POST', url: `/api/v4/projects/${app1.id}/milestones/${other.id}/promote`, headers });
  assert.deepEqual([taken.statusCode, taken.json()], [400, { message: 'Promotion failed - Title already being used for another group or project milestone.' }]);
  assert.equal((await c.db.kysely.selectFrom('milestones').selectAll().execute()).length, 3);

  // a project outside any group has no group to promote to
  const user = await seed.user();
  const personal = await seed.project({ owner: user });
  const uh = (await seed.token(user)).headers;
  const mine = (await app.inject({ method: 'POST', url: `/api/v4/projects/${personal.id}/milestones`, headers: uh, payload: { title: 'mine' } })).json();
  const none = await app.inject({ method: 'POST', url: `/api/v4/projects/${personal.id}/milestones/${mine.id}/promote`, headers: uh });
  assert.deepEqual([none.statusCode, none.json()], [403, { message: '403 Forbidden' }]);
});
