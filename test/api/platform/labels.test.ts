// Project and group labels (GitLab lib/api/labels.rb, group_labels.rb, helpers/label_helpers.rb):
// whole bodies, inheritance from groups, validation, conflicts, permissions, deletion with links,
// and the services merge requests use (find-or-create by titles, toLabelDetails).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, EXTERNAL_URL } from '../../helpers/build-app.ts';
import type { LabelRow } from '../../../src/db/schema.ts';
import { toLabelDetails } from '../../../src/http/platform/entities/label.entity.ts';
import { userActor } from '../../../src/domain/access/actor.ts';

const projectLabel = (row: LabelRow, extra: Record<string, unknown> = {}) => ({
  id: row.id,
  name: row.title,
  color: row.color,
  description: row.description,
  description_html: row.description ?? '',
  text_color: extra.text_color ?? '#FFFFFF',
  subscribed: false,
  priority: row.project_id !== null ? row.priority : null,
  is_project_label: row.project_id !== null,
  ...extra,
});

test('project labels: create, list, get by id and by title, whole bodies and rows', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const group = await seed.group({ path: 'grp' });
  const project = await seed.project({ namespace: group, path: 'app' });
  const dev = await seed.user();
  await seed.member({ project }, dev, 30);
  const { headers } = await seed.token(dev);

  const created = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/labels`,
    headers,
    payload: { name: 'bug', color: '#d9534f', description: 'Something <b>broke</b>', priority: 2 },
  });
  assert.equal(created.statusCode, 201);
  const row = await c.db.kysely.selectFrom('labels').selectAll().where('title', '=', 'bug').executeTakeFirstOrThrow();
  assert.equal(row.project_id, project.id);
  assert.equal(row.group_id, null);
  assert.equal(row.color, '#d9534f');
  assert.equal(row.priority, 2);
  assert.deepEqual(created.json(), {
    id: row.id,
    name: 'bug',
    color: '#d9534f',
    description: 'Something broke',
    description_html: 'Something broke',
    text_color: '#FFFFFF',
    subscribed: false,
    priority: 2,
    is_project_label: true,
  });

  // a CSS colour name is stored as GitLab's hex; a light colour gets dark text
  const named = await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/labels`, headers, payload: { name: 'Docs', color: 'Yellow' } });
  assert.equal(named.statusCode, 201);
  assert.equal(named.json().color, '#FFFF00');
  assert.equal(named.json().text_color, '#333333');
  assert.equal(named.json().description, null);
  assert.equal(named.json().description_html, '');
  assert.equal(named.json().priority, null);
  const short = await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/labels`, headers, payload: { name: 'short', color: '#fff' } });
  assert.deepEqual([short.statusCode, short.json().color, short.json().text_color], [201, '#fff', '#333333']);

  // a group label is inherited
  const groupRow = await c.db.kysely
    .insertInto('labels')
    .values({
      project_id: null,
      group_id: group.id,
      title: 'area/api',
      color: '#0000FF',
      description: null,
      priority: null,
      created_at: row.created_at,
      updated_at: row.updated_at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();

  const list = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/labels`, headers });
  assert.equal(list.statusCode, 200);
  const rows = await c.db.kysely.selectFrom('labels').selectAll().orderBy('title').execute();
  const byTitle = new Map(rows.map((r) => [r.title, r]));
  // ordered by title (binary): "Docs" < "area/api" < "bug" < "short"
  assert.deepEqual(list.json(), [
    projectLabel(byTitle.get('Docs')!, { text_color: '#333333' }),
    projectLabel(groupRow),
    projectLabel(row, { description_html: 'Something broke' }),
    projectLabel(byTitle.get('short')!, { text_color: '#333333' }),
  ]);
  assert.equal(list.headers['x-total'], '4');
  assert.equal(list.headers['x-total-pages'], '1');
  assert.equal(list.headers['x-per-page'], '20');
  assert.equal(
    list.headers.link,
    `<${EXTERNAL_URL}/api/v4/projects/${project.id}/labels?id=${project.id}&page=1&per_page=20>; rel="first", <${EXTERNAL_URL}/api/v4/projects/${project.id}/labels?id=${project.id}&page=1&per_page=20>; rel="last"`,
  );

  // without ancestor groups: still the project's own group (LabelsFinder keeps the direct group)
  const sub = await seed.group({ parent: group, path: 'sub' });
  const subProject = await seed.project({ namespace: sub, path: 'deep' });
  await seed.member({ project: subProject }, dev, 30);
  const own = await app.inject({ method: 'GET', url: `/api/v4/projects/${subProject.id}/labels?include_ancestor_groups=false`, headers });
  assert.deepEqual(own.json(), []);
  const inherited = await app.inject({ method: 'GET', url: `/api/v4/projects/${subProject.id}/labels`, headers });
  assert.deepEqual(
    inherited.json().map((l: { name: string }) => l.name),
    ['area/api'],
  );

  // pagination and search
  const page2 = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/labels?per_page=2&page=2`, headers });
  assert.deepEqual(
    page2.json().map((l: { name: string }) => l.name),
    ['bug', 'short'],
  );
  assert.equal(page2.headers['x-prev-page'], '1');
  assert.equal(page2.headers['x-next-page'], '');
  const search = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/labels?search=BROKE`, headers });
  assert.deepEqual(
    search.json().map((l: { name: string }) => l.name),
    ['bug'],
  );
  assert.equal(search.headers['x-total'], '1');

  // single label: by id, by URL-encoded title, inherited ones too
  const one = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/labels/${row.id}`, headers });
  assert.deepEqual([one.statusCode, one.json()], [200, projectLabel(row)]);
  const byName = await app.inject({ method: 'GET', url: `/api/v4/projects/grp%2Fapp/labels/area%2Fapi`, headers });
  assert.deepEqual([byName.statusCode, byName.json()], [200, projectLabel(groupRow)]);
  const missing = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/labels/nope`, headers });
  assert.deepEqual([missing.statusCode, missing.json()], [404, { message: '404 Label Not Found' }]);
  const huge = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/labels/99999999999`, headers });
  assert.deepEqual([huge.statusCode, huge.json()], [404, { message: '404 Label Not Found' }]);
});

test('project labels: bad input, duplicates, permissions, invisible projects', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const group = await seed.group();
  const project = await seed.project({ namespace: group });
  const dev = await seed.user();
  const guest = await seed.user();
  const stranger = await seed.user();
  await seed.member({ project }, dev, 30);
  await seed.member({ project }, guest, 10);
  const { headers } = await seed.token(dev);
  const url = `/api/v4/projects/${project.id}/labels`;
  const post = (payload: Record<string, unknown>, h = headers) => app.inject({ method: 'POST', url, headers: h, payload });

  let res = await post({});
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'name is missing, color is missing' }]);
  res = await post({ name: 'x' });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'color is missing' }]);
  res = await post({ name: 'x', color: 'notacolour' });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: { color: ['must be a valid color code'] } }]);
  res = await post({ name: 'x', color: '#12345' });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: { color: ['must be a valid color code'] } }]);
  res = await post({ name: 'a,b', color: '#123456' });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: { title: ['is invalid'] } }]);
  res = await post({ name: '', color: '' });
  assert.deepEqual(
    [res.statusCode, res.json()],
    [400, { message: { color: ["can't be blank", 'must be a valid color code'], title: ["can't be blank", 'is invalid'] } }],
  );
  res = await post({ name: 'x'.repeat(256), color: '#123456' });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: { title: ['is too long (maximum is 255 characters)'] } }]);
  res = await post({ name: 'x', color: '#123456', priority: 'high' });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'priority is invalid' }]);
  res = await post({ name: 'x', color: '#123456', priority: -1 });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: { priority: ['must be greater than or equal to 0'] } }]);
  res = await post({ name: 'x', color: '#123456', priority: 2 ** 31 });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'priority is invalid' }]);
  assert.equal((await c.db.kysely.selectFrom('labels').selectAll().execute()).length, 0);

  assert.equal((await post({ name: 'Bug', color: '#123456' })).statusCode, 201);
  res = await post({ name: 'bug', color: '#654321' });
  assert.deepEqual([res.statusCode, res.json()], [409, { message: 'Label already exists' }]);
  // a group label of the same title is inherited: the project may not repeat it
  await app.inject({
    method: 'POST',
    url: `/api/v4/groups/${group.id}/labels`,
    headers: (await seed.token(await ownerOf(seed, group))).headers,
    payload: { name: 'Feature', color: 'red' },
  });
  res = await post({ name: 'FEATURE', color: '#654321' });
  assert.deepEqual([res.statusCode, res.json()], [409, { message: 'Label already exists' }]);

  // permissions: a Guest may read but not write; a stranger does not see the private project
  const guestH = (await seed.token(guest)).headers;
  assert.equal((await app.inject({ method: 'GET', url, headers: guestH })).statusCode, 200);
  res = await post({ name: 'g', color: '#123456' }, guestH);
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  const strangerH = (await seed.token(stranger)).headers;
  res = await app.inject({ method: 'GET', url, headers: strangerH });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Project Not Found' }]);
  res = await post({ name: 'g', color: '#123456' }, strangerH);
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Project Not Found' }]);
  // authentication is required (before { authenticate! }), even for public projects
  const open = await seed.project({ visibility: 'public' });
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${open.id}/labels` });
  assert.deepEqual([res.statusCode, res.json()], [401, { message: '401 Unauthorized' }]);
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${open.id}/labels`, headers: strangerH });
  assert.equal(res.statusCode, 200);
  // an archived project's labels are read-only
  const archived = await seed.project({ namespace: group, archived: true });
  await seed.member({ project: archived }, dev, 40);
  res = await app.inject({ method: 'POST', url: `/api/v4/projects/${archived.id}/labels`, headers, payload: { name: 'x', color: '#123456' } });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
});

async function ownerOf(seed: Awaited<ReturnType<typeof buildTestApp>>['seed'], group: Parameters<typeof seed.member>[0]['group']) {
  const owner = await seed.user();
  await seed.member({ group }, owner, 50);
  return owner;
}

test('project labels: update, priority, delete removes links', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const group = await seed.group();
  const project = await seed.project({ namespace: group });
  const dev = await seed.user();
  const guest = await seed.user();
  await seed.member({ project }, dev, 30);
  await seed.member({ project }, guest, 10);
  const { headers } = await seed.token(dev);
  const url = `/api/v4/projects/${project.id}/labels`;
  const bug = (await app.inject({ method: 'POST', url, headers, payload: { name: 'bug', color: '#ff0000' } })).json();
  const other = (await app.inject({ method: 'POST', url, headers, payload: { name: 'other', color: '#00ff00' } })).json();

  let res = await app.inject({ method: 'PUT', url: `${url}/${bug.id}`, headers, payload: {} });
  assert.deepEqual(
    [res.statusCode, res.json()],
    [400, { error: 'new_name, color, description, priority are missing, at least one parameter must be provided' }],
  );
  res = await app.inject({ method: 'PUT', url: `${url}/bug`, headers, payload: { new_name: 'defect', color: 'white', description: 'A defect', priority: 5 } });
  assert.equal(res.statusCode, 200);
  const row = await c.db.kysely.selectFrom('labels').selectAll().where('id', '=', bug.id).executeTakeFirstOrThrow();
  assert.deepEqual([row.title, row.color, row.description, row.priority], ['defect', '#FFFFFF', 'A defect', 5]);
  assert.deepEqual(res.json(), projectLabel(row, { text_color: '#333333', description_html: 'A defect' }));
  // priority "" (allow_blank) and null take the priority away
  res = await app.inject({ method: 'PUT', url: `${url}/${bug.id}`, headers, payload: { priority: '' } });
  assert.deepEqual([res.statusCode, res.json().priority], [200, null]);
  res = await app.inject({ method: 'PUT', url: `${url}/${bug.id}`, headers, payload: { priority: 3 } });
  assert.equal(res.json().priority, 3);
  res = await app.inject({ method: 'PUT', url: `${url}/${bug.id}`, headers, payload: { priority: null } });
  assert.equal(res.json().priority, null);
  // renaming onto another label's title; a bad colour
  res = await app.inject({ method: 'PUT', url: `${url}/${bug.id}`, headers, payload: { new_name: 'OTHER' } });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: { title: ['has already been taken'] } }]);
  res = await app.inject({ method: 'PUT', url: `${url}/${bug.id}`, headers, payload: { color: 'blurple' } });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: { color: ['must be a valid color code'] } }]);
  res = await app.inject({ method: 'PUT', url: `${url}/nope`, headers, payload: { color: 'red' } });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Label Not Found' }]);
  const guestH = (await seed.token(guest)).headers;
  res = await app.inject({ method: 'PUT', url: `${url}/${bug.id}`, headers: guestH, payload: { color: 'red' } });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  // the deprecated form: the label named in the body
  res = await app.inject({ method: 'PUT', url, headers, payload: { name: 'other', description: 'via body' } });
  assert.deepEqual([res.statusCode, res.json().description], [200, 'via body']);
  res = await app.inject({ method: 'PUT', url, headers, payload: { description: 'x' } });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'label_id, name are missing, exactly one parameter must be provided' }]);

  // a group label cannot be changed through the project
  const groupLabel = await c.db.kysely
    .insertInto('labels')
    .values({
      project_id: null,
      group_id: group.id,
      title: 'inherited',
      color: '#000000',
      description: null,
      priority: null,
      created_at: row.created_at,
      updated_at: row.updated_at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  res = await app.inject({ method: 'PUT', url: `${url}/${groupLabel.id}`, headers, payload: { color: 'red' } });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Label Not Found' }]);
  // renaming is checked within the project only (Label's uniqueness scope): an inherited title may be taken
  res = await app.inject({ method: 'PUT', url: `${url}/${other.id}`, headers, payload: { new_name: 'INHERITED' } });
  assert.deepEqual([res.statusCode, res.json().name], [200, 'INHERITED']);
  res = await app.inject({ method: 'PUT', url: `${url}/INHERITED`, headers, payload: { new_name: 'other' } });
  assert.deepEqual([res.statusCode, res.json().name], [200, 'other']);

  // delete: the label and its merge request links go
  const now = row.created_at;
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
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await c.db.kysely
    .insertInto('merge_request_labels')
    .values([
      { merge_request_id: mr.id, label_id: bug.id, created_at: now },
      { merge_request_id: mr.id, label_id: other.id, created_at: now },
    ])
    .execute();
  // issues count by state: an open one with two labels, a closed one, a confidential one a Guest does not read
  const issuesUrl = `/api/v4/projects/${project.id}/issues`;
  res = await app.inject({ method: 'POST', url: issuesUrl, headers, payload: { title: 'open', labels: 'defect,other' } });
  assert.equal(res.statusCode, 201);
  res = await app.inject({ method: 'POST', url: issuesUrl, headers, payload: { title: 'closed', labels: 'defect' } });
  res = await app.inject({ method: 'PUT', url: `${issuesUrl}/${res.json().iid}`, headers, payload: { state_event: 'close' } });
  assert.equal(res.json().state, 'closed');
  res = await app.inject({ method: 'POST', url: issuesUrl, headers, payload: { title: 'secret', labels: 'other', confidential: true } });
  assert.equal(res.statusCode, 201);
  const countsOf = async (h: Record<string, string>) =>
    (await app.inject({ method: 'GET', url: `${url}?with_counts=true`, headers: h }))
      .json()
      .map((l: Record<string, unknown>) => [l.name, l.open_issues_count, l.closed_issues_count, l.open_merge_requests_count]);
  assert.deepEqual(await countsOf(headers), [
    ['defect', 1, 1, 1],
    ['inherited', 0, 0, 0],
    ['other', 2, 0, 1],
  ]);
  assert.deepEqual(await countsOf(guestH), [
    ['defect', 1, 1, 1],
    ['inherited', 0, 0, 0],
    ['other', 1, 0, 1],
  ]);
  res = await app.inject({ method: 'DELETE', url: `${url}/${bug.id}`, headers: guestH });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  res = await app.inject({ method: 'DELETE', url: `${url}/${bug.id}`, headers: { ...headers, 'if-unmodified-since': 'Thu, 01 Jan 2004 00:00:00 GMT' } });
  assert.deepEqual([res.statusCode, res.json()], [412, { message: '412 Precondition Failed' }]);
  res = await app.inject({ method: 'DELETE', url: `${url}/${bug.id}`, headers });
  assert.equal(res.statusCode, 204);
  assert.equal(res.body, '');
  assert.equal(await c.db.kysely.selectFrom('labels').select('id').where('id', '=', bug.id).executeTakeFirst(), undefined);
  assert.deepEqual(
    (await c.db.kysely.selectFrom('merge_request_labels').select('label_id').execute()).map((r) => r.label_id),
    [other.id],
  );
  res = await app.inject({ method: 'DELETE', url: `${url}/${bug.id}`, headers });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Label Not Found' }]);
  res = await app.inject({ method: 'DELETE', url, headers, payload: { name: 'other' } });
  assert.equal(res.statusCode, 204);
  assert.equal((await c.db.kysely.selectFrom('merge_request_labels').selectAll().execute()).length, 0);
});

test('group labels: inheritance, descendants, project labels, writes and permissions', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const top = await seed.group({ path: 'top' });
  const mid = await seed.group({ parent: top, path: 'mid' });
  const leaf = await seed.group({ parent: mid, path: 'leaf' });
  const project = await seed.project({ namespace: mid, path: 'p' });
  const owner = await seed.user();
  const reporter = await seed.user();
  const guest = await seed.user();
  await seed.member({ group: top }, owner, 50);
  await seed.member({ group: mid }, reporter, 20);
  await seed.member({ group: mid }, guest, 10);
  const { headers } = await seed.token(owner);
  const post = (g: { id: number }, payload: Record<string, unknown>, h = headers) =>
    app.inject({ method: 'POST', url: `/api/v4/groups/${g.id}/labels`, headers: h, payload });

  const topLabel = await post(top, { name: 'top-label', color: '#111111' });
  assert.equal(topLabel.statusCode, 201);
  const topRow = await c.db.kysely.selectFrom('labels').selectAll().where('id', '=', topLabel.json().id).executeTakeFirstOrThrow();
  assert.equal(topRow.group_id, top.id);
  assert.deepEqual(topLabel.json(), {
    id: topRow.id,
    name: 'top-label',
    color: '#111111',
    description: null,
    description_html: '',
    text_color: '#FFFFFF',
    subscribed: false,
  });
  // a Reporter of the group manages its labels
  const midLabel = await post(mid, { name: 'mid-label', color: '#222222' }, (await seed.token(reporter)).headers);
  assert.equal(midLabel.statusCode, 201);
  // a Guest may not
  const denied = await post(mid, { name: 'nope', color: '#222222' }, (await seed.token(guest)).headers);
  assert.deepEqual([denied.statusCode, denied.json()], [403, { message: '403 Forbidden' }]);
  // the ancestor's title is taken for the subgroup
  const dup = await post(mid, { name: 'TOP-LABEL', color: '#222222' });
  assert.deepEqual([dup.statusCode, dup.json()], [409, { message: 'Label already exists' }]);
  assert.equal((await post(leaf, { name: 'leaf-label', color: '#333333' })).statusCode, 201);
  assert.equal(
    (await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/labels`, headers, payload: { name: 'project-label', color: '#444444' } }))
      .statusCode,
    201,
  );

  const names = async (query: string) => {
    const res = await app.inject({ method: 'GET', url: `/api/v4/groups/${mid.id}/labels${query}`, headers });
    assert.equal(res.statusCode, 200);
    return res.json().map((l: { name: string }) => l.name);
  };
  assert.deepEqual(await names(''), ['mid-label', 'top-label']);
  assert.deepEqual(await names('?include_ancestor_groups=false'), ['mid-label']);
  assert.deepEqual(await names('?include_descendant_groups=true'), ['leaf-label', 'mid-label', 'top-label']);
  assert.deepEqual(await names('?only_group_labels=false&include_ancestor_groups=false'), ['mid-label', 'project-label']);
  assert.deepEqual(await names('?search=top'), ['top-label']);

  // single, update, delete through the group
  let res = await app.inject({ method: 'GET', url: `/api/v4/groups/mid-label/labels/x`, headers });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Group Not Found' }]);
  res = await app.inject({ method: 'GET', url: `/api/v4/groups/top%2Fmid/labels/top-label`, headers });
  assert.deepEqual([res.statusCode, res.json().id], [200, topRow.id]);
  res = await app.inject({ method: 'PUT', url: `/api/v4/groups/${mid.id}/labels/mid-label`, headers, payload: {} });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'new_name, color, description are missing, at least one parameter must be provided' }]);
  res = await app.inject({ method: 'PUT', url: `/api/v4/groups/${mid.id}/labels/mid-label`, headers, payload: { new_name: 'middle', color: '#abcdef' } });
  assert.deepEqual([res.statusCode, res.json().name, res.json().color, res.json().text_color], [200, 'middle', '#abcdef', '#333333']);
  // an inherited label is not the subgroup's to change
  res = await app.inject({ method: 'PUT', url: `/api/v4/groups/${mid.id}/labels/top-label`, headers, payload: { color: 'red' } });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Label Not Found' }]);
  res = await app.inject({ method: 'DELETE', url: `/api/v4/groups/${mid.id}/labels/middle`, headers });
  assert.equal(res.statusCode, 204);
  assert.deepEqual(await names(''), ['top-label']);

  // the group's projects see its labels; a private group is invisible to strangers
  const projectNames = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/labels`, headers });
  assert.deepEqual(
    projectNames.json().map((l: { name: string; is_project_label: boolean }) => [l.name, l.is_project_label]),
    [
      ['project-label', true],
      ['top-label', false],
    ],
  );
  const stranger = (await seed.token(await seed.user())).headers;
  res = await app.inject({ method: 'GET', url: `/api/v4/groups/${mid.id}/labels`, headers: stranger });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Group Not Found' }]);
});

test('promote: a project label becomes its group label; issues, merge requests, board lists and subscribers keep it', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const group = await seed.group();
  const project = await seed.project({ namespace: group });
  const sibling = await seed.project({ namespace: group });
  const owner = await seed.user();
  const dev = await seed.user();
  await seed.member({ group }, owner, 50);
  await seed.member({ project }, dev, 30);
  const { headers } = await seed.token(owner);
  const a = (await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/labels`, headers, payload: { name: 'shared', color: '#123456' } })).json();
  const b = (await app.inject({ method: 'POST', url: `/api/v4/projects/${sibling.id}/labels`, headers, payload: { name: 'Shared', color: '#654321' } })).json();
  const now = new Date().toISOString();
  const mr = await c.db.kysely
    .insertInto('merge_requests')
    .values({
      iid: 1,
      project_id: sibling.id,
      source_project_id: sibling.id,
      source_branch: 'f',
      target_branch: 'main',
      title: 'MR',
      state: 'opened',
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await c.db.kysely.insertInto('merge_request_labels').values({ merge_request_id: mr.id, label_id: b.id, created_at: now }).execute();
  // issues labelled with either, a board list of one, subscriptions to both (one user) and to one (another)
  const issueUrl = (p: { id: number }) => `/api/v4/projects/${p.id}/issues`;
  const issueA = (await app.inject({ method: 'POST', url: issueUrl(project), headers, payload: { title: 'A', labels: 'shared' } })).json();
  const issueB = (await app.inject({ method: 'POST', url: issueUrl(sibling), headers, payload: { title: 'B', labels: 'Shared' } })).json();
  const board = (await app.inject({ method: 'GET', url: `/api/v4/projects/${sibling.id}/boards`, headers })).json()[0];
  const list = await app.inject({ method: 'POST', url: `/api/v4/projects/${sibling.id}/boards/${board.id}/lists`, headers, payload: { label_id: b.id } });
  assert.equal(list.statusCode, 201, list.body);
  for (const [p, l, h] of [
    [project, a, headers],
    [sibling, b, headers],
    [project, a, (await seed.token(dev)).headers],
  ] as const) {
    const r = await app.inject({ method: 'POST', url: `/api/v4/projects/${p.id}/labels/${l.id}/subscribe`, headers: h });
    assert.equal(r.statusCode, 201, r.body);
  }
  const latestOfOwner = await c.db.kysely.selectFrom('subscriptions').select('id').where('subscribable_id', '=', b.id).executeTakeFirstOrThrow();

  const devTry = await app.inject({ method: 'PUT', url: `/api/v4/projects/${project.id}/labels/shared/promote`, headers: (await seed.token(dev)).headers });
  assert.deepEqual([devTry.statusCode, devTry.json()], [403, { message: '403 Forbidden' }]);
  const res = await app.inject({ method: 'PUT', url: `/api/v4/projects/${project.id}/labels/shared/promote`, headers });
  assert.equal(res.statusCode, 200);
  const rows = await c.db.kysely.selectFrom('labels').selectAll().execute();
  assert.equal(rows.length, 1);
  assert.deepEqual(res.json(), {
    id: rows[0].id,
    name: 'shared',
    color: '#123456',
    description: null,
    description_html: '',
    text_color: '#FFFFFF',
    subscribed: false,
  });
  assert.equal(rows[0].group_id, group.id);
  assert.ok(![a.id, b.id].includes(rows[0].id));
  assert.deepEqual(await c.db.kysely.selectFrom('merge_request_labels').select(['merge_request_id', 'label_id']).execute(), [
    { merge_request_id: mr.id, label_id: rows[0].id },
  ]);
  // the issues keep the label (now the group's), the board list shows it, each subscriber keeps one subscription
  for (const [p, issue] of [
    [project, issueA],
    [sibling, issueB],
  ] as const) {
    const shown = await app.inject({ method: 'GET', url: `${issueUrl(p)}/${issue.iid}`, headers });
    assert.deepEqual(shown.json().labels, ['shared']);
  }
  assert.deepEqual(
    (await app.inject({ method: 'GET', url: `${issueUrl(sibling)}?labels=shared`, headers })).json().map((i: { id: number }) => i.id),
    [issueB.id],
  );
  const lists = (await app.inject({ method: 'GET', url: `/api/v4/projects/${sibling.id}/boards/${board.id}/lists`, headers })).json();
  assert.deepEqual(
    lists.map((l: { id: number; label: { id: number; name: string } }) => [l.id, l.label.id, l.label.name]),
    [[list.json().id, rows[0].id, 'shared']],
  );
  const subscriptions = await c.db.kysely.selectFrom('subscriptions').select(['id', 'user_id', 'subscribable_id']).orderBy('user_id').execute();
  assert.deepEqual(subscriptions, [
    { id: latestOfOwner.id, user_id: owner.id, subscribable_id: rows[0].id },
    { id: subscriptions[1].id, user_id: dev.id, subscribable_id: rows[0].id },
  ]);
  // a project in a personal namespace has no group to promote to
  const user = await seed.user();
  const personal = await seed.project({ owner: user });
  const uh = (await seed.token(user)).headers;
  await app.inject({ method: 'POST', url: `/api/v4/projects/${personal.id}/labels`, headers: uh, payload: { name: 'mine', color: '#123456' } });
  const none = await app.inject({ method: 'PUT', url: `/api/v4/projects/${personal.id}/labels/mine/promote`, headers: uh });
  assert.deepEqual([none.statusCode, none.json()], [400, { message: 'Failed to promote project label to group label' }]);
});

test('services for merge requests: find-or-create by titles, available labels, label details', async (t) => {
  const { c, seed } = await buildTestApp(t);
  const group = await seed.group();
  const project = await seed.project({ namespace: group });
  const dev = await seed.user();
  const guest = await seed.user();
  await seed.member({ project }, dev, 30);
  await seed.member({ project }, guest, 10);
  const now = new Date().toISOString();
  const groupLabel = await c.db.kysely
    .insertInto('labels')
    .values({
      project_id: null,
      group_id: group.id,
      title: 'Backend',
      color: '#0000FF',
      description: 'API work',
      priority: null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();

  const found = await c.labels.findOrCreateByTitles(userActor(dev), project, ['backend', ' New one ', 'BACKEND', ''], {});
  assert.deepEqual(
    found.map((l) => [l.title, l.project_id, l.group_id, l.color]),
    [
      ['Backend', null, group.id, '#0000FF'],
      ['New one', project.id, null, '#6699cc'],
    ],
  );
  // comma-separated strings; a Guest cannot create labels (unknown ones are skipped); findOnly never creates
  assert.deepEqual(
    (await c.labels.findOrCreateByTitles(userActor(guest), project, 'new ONE,missing')).map((l) => l.title),
    ['New one'],
  );
  assert.deepEqual(await c.labels.findOrCreateByTitles(userActor(dev), project, ['other'], { findOnly: true }), []);
  assert.equal((await c.db.kysely.selectFrom('labels').selectAll().execute()).length, 2);

  const available = await c.labels.availableForProject(project);
  assert.deepEqual(
    available.map((l) => l.title),
    ['Backend', 'New one'],
  );
  assert.deepEqual(toLabelDetails(groupLabel), {
    id: groupLabel.id,
    name: 'Backend',
    color: '#0000FF',
    description: 'API work',
    description_html: 'API work',
    text_color: '#FFFFFF',
  });
});

test('label subscriptions: subscribe and unsubscribe, everywhere or within a project, 304 when unchanged', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const group = await seed.group();
  const project = await seed.project({ namespace: group });
  const dev = await seed.user();
  await seed.member({ group }, dev, 30);
  const { headers } = await seed.token(dev);
  const groupLabel = (await app.inject({ method: 'POST', url: `/api/v4/groups/${group.id}/labels`, headers, payload: { name: 'g', color: '#123456' } })).json();
  const purl = `/api/v4/projects/${project.id}/labels`;
  const gurl = `/api/v4/groups/${group.id}/labels`;

  // from the project: a subscription within the project
  let res = await app.inject({ method: 'POST', url: `${purl}/${groupLabel.id}/subscribe`, headers });
  assert.equal(res.statusCode, 201);
  assert.deepEqual(res.json(), { ...groupLabel, subscribed: true, priority: null, is_project_label: false });
  let rows = await c.db.kysely.selectFrom('subscriptions').selectAll().execute();
  assert.deepEqual(
    rows.map((r) => [r.user_id, r.subscribable_type, r.subscribable_id, r.project_id, r.subscribed]),
    [[dev.id, 'Label', groupLabel.id, project.id, 1]],
  );
  res = await app.inject({ method: 'POST', url: `${purl}/g/subscribe`, headers });
  assert.deepEqual([res.statusCode, res.body], [304, '']);
  assert.equal((await app.inject({ method: 'GET', url: `${purl}/g`, headers })).json().subscribed, true);
  assert.equal((await app.inject({ method: 'GET', url: purl, headers })).json()[0].subscribed, true);
  // the group does not see a project's subscription
  assert.equal((await app.inject({ method: 'GET', url: `${gurl}/g`, headers })).json().subscribed, false);
  // another user is not subscribed
  const other = await seed.user();
  await seed.member({ group }, other, 10);
  assert.equal((await app.inject({ method: 'GET', url: `${purl}/g`, headers: (await seed.token(other)).headers })).json().subscribed, false);

  // from the group: everywhere; the project-level subscription is turned off
  res = await app.inject({ method: 'POST', url: `${gurl}/g/subscribe`, headers });
  assert.deepEqual([res.statusCode, res.json().subscribed], [201, true]);
  rows = await c.db.kysely.selectFrom('subscriptions').selectAll().orderBy('id').execute();
  assert.deepEqual(
    rows.map((r) => [r.project_id, r.subscribed]),
    [
      [project.id, 0],
      [null, 1],
    ],
  );
  assert.equal((await app.inject({ method: 'GET', url: `${purl}/g`, headers })).json().subscribed, true);
  res = await app.inject({ method: 'POST', url: `${gurl}/g/unsubscribe`, headers });
  assert.deepEqual([res.statusCode, res.json().subscribed], [201, false]);
  res = await app.inject({ method: 'POST', url: `${gurl}/g/unsubscribe`, headers });
  assert.deepEqual([res.statusCode, res.body], [304, '']);
  res = await app.inject({ method: 'POST', url: `${purl}/missing/subscribe`, headers });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Label Not Found' }]);

  // deleting the label deletes its subscriptions
  await app.inject({ method: 'POST', url: `${gurl}/g/subscribe`, headers });
  assert.equal((await app.inject({ method: 'DELETE', url: `${gurl}/g`, headers })).statusCode, 204);
  assert.equal((await c.db.kysely.selectFrom('subscriptions').selectAll().execute()).length, 0);
});
