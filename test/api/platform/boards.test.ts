// Issue boards (lib/api/boards.rb, group_boards.rb): a project's first board made when listed, boards and lists
// CRUD, list positions, who may change them, bad input; moving an issue across a board changes its labels and
// state as GitLab's Boards::Issues::MoveService does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-app.ts';
import { userActor } from '../../../src/domain/access/actor.ts';

test('boards: the first board appears when listed; lists by label, milestone and assignee; positions; refusals', async (t) => {
  const ta = await buildTestApp(t);
  const { app, c, seed } = ta;
  const group = await seed.group({ path: 'grp' });
  const project = await seed.project({ namespace: group, path: 'app', visibility: 'private' });
  const rep = await seed.user({ username: 'rep' });
  const guest = await seed.user({ username: 'guest' });
  await seed.member({ project }, rep, 20);
  await seed.member({ project }, guest, 10);
  const H = { rep: (await seed.token(rep)).headers, guest: (await seed.token(guest)).headers };
  const base = `/api/v4/projects/${project.id}/boards`;
  const label = async (name: string) =>
    (await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/labels`, headers: H.rep, payload: { name, color: '#00aa00' } })).json();
  const doing = await label('Doing');
  const review = await label('Review');

  const listed = await app.inject({ method: 'GET', url: base, headers: H.guest });
  assert.equal(listed.statusCode, 200, listed.body);
  const [board] = listed.json();
  assert.deepEqual(
    { ...board, project: { id: board.project.id, path_with_namespace: board.project.path_with_namespace } },
    {
      id: board.id,
      name: 'Development',
      hide_backlog_list: false,
      hide_closed_list: false,
      project: { id: project.id, path_with_namespace: 'grp/app' },
      group: null,
      milestone: null,
      assignee: null,
      labels: [],
      weight: null,
      lists: [],
    },
  );
  const rows = await c.db.kysely.selectFrom('board_lists').select(['list_type', 'position']).where('board_id', '=', board.id).orderBy('id').execute();
  assert.deepEqual(rows, [
    { list_type: 'backlog', position: null },
    { list_type: 'closed', position: null },
  ]);
  // a second listing makes no second board
  assert.equal((await app.inject({ method: 'GET', url: base, headers: H.rep })).json().length, 1);

  const lists = `${base}/${board.id}/lists`;
  const guestList = await app.inject({ method: 'POST', url: lists, headers: H.guest, payload: { label_id: doing.id } });
  assert.deepEqual([guestList.statusCode, guestList.json()], [403, { message: '403 Forbidden' }]);
  const l1 = await app.inject({ method: 'POST', url: lists, headers: H.rep, payload: { label_id: doing.id } });
  assert.equal(l1.statusCode, 201, l1.body);
  assert.deepEqual([l1.json().label.name, l1.json().position, l1.json().list_type], ['Doing', 0, 'label']);
  const l2 = (await app.inject({ method: 'POST', url: lists, headers: H.rep, payload: { label_id: review.id } })).json();
  const l3 = await app.inject({ method: 'POST', url: lists, headers: H.rep, payload: { assignee_id: rep.id } });
  assert.deepEqual([l3.statusCode, l3.json().assignee.username, l3.json().position], [201, 'rep', 2]);
  const dup = await app.inject({ method: 'POST', url: lists, headers: H.rep, payload: { label_id: doing.id } });
  assert.deepEqual([dup.statusCode, dup.json()], [400, { message: { error: ['Label has already been taken'] } }]);
  const unknown = await app.inject({ method: 'POST', url: lists, headers: H.rep, payload: { label_id: 999999 } });
  assert.deepEqual([unknown.statusCode, unknown.json()], [400, { message: { error: 'Label not found' } }]);
  const none = await app.inject({ method: 'POST', url: lists, headers: H.rep, payload: {} });
  assert.equal(none.statusCode, 400);
  const two = await app.inject({ method: 'POST', url: lists, headers: H.rep, payload: { label_id: doing.id, assignee_id: rep.id } });
  assert.deepEqual([two.statusCode, two.json()], [400, { error: 'label_id, assignee_id are mutually exclusive' }]);

  // moving a list to the front shifts the others
  const moved = await app.inject({ method: 'PUT', url: `${lists}/${l2.id}`, headers: H.rep, payload: { position: 0 } });
  assert.deepEqual([moved.statusCode, moved.json().position], [200, 0]);
  const order = (await app.inject({ method: 'GET', url: lists, headers: H.guest })).json();
  assert.deepEqual(
    order.map((l: { label: { name: string } | null; position: number }) => [l.label?.name ?? 'rep', l.position]),
    [
      ['Review', 0],
      ['Doing', 1],
      ['rep', 2],
    ],
  );
  const badPos = await app.inject({ method: 'PUT', url: `${lists}/${l2.id}`, headers: H.rep, payload: { position: 9 } });
  assert.equal(badPos.statusCode, 400);
  const gone = await app.inject({ method: 'DELETE', url: `${lists}/${l1.json().id}`, headers: H.rep });
  assert.equal(gone.statusCode, 204);
  const missing = await app.inject({ method: 'GET', url: `${lists}/${l1.json().id}`, headers: H.rep });
  assert.deepEqual([missing.statusCode, missing.json()], [404, { message: '404 List Not Found' }]);

  // boards CRUD
  const made = await app.inject({ method: 'POST', url: base, headers: H.rep, payload: { name: 'Release' } });
  assert.equal(made.statusCode, 201);
  const renamed = await app.inject({ method: 'PUT', url: `${base}/${made.json().id}`, headers: H.rep, payload: { name: 'Release 2', hide_closed_list: true } });
  assert.deepEqual([renamed.json().name, renamed.json().hide_closed_list], ['Release 2', true]);
  const blank = await app.inject({ method: 'PUT', url: `${base}/${made.json().id}`, headers: H.rep, payload: { name: ' ' } });
  assert.deepEqual([blank.statusCode, blank.json()], [400, { message: { name: ["can't be blank"] } }]);
  assert.equal((await app.inject({ method: 'DELETE', url: `${base}/${made.json().id}`, headers: H.rep })).statusCode, 204);
  const noBoard = await app.inject({ method: 'GET', url: `${base}/${made.json().id}`, headers: H.rep });
  assert.deepEqual([noBoard.statusCode, noBoard.json()], [404, { message: '404 Board Not Found' }]);
  // anonymous sees nothing of a private project
  const anon = await app.inject({ method: 'GET', url: base });
  assert.deepEqual([anon.statusCode, anon.json()], [404, { message: '404 Project Not Found' }]);
});

test('boards: moving an issue across lists swaps labels, the closed list closes and leaving it reopens; the backlog holds the rest', async (t) => {
  const ta = await buildTestApp(t);
  const { app, c, seed } = ta;
  const project = await seed.project({ path: 'app', visibility: 'public' });
  const dev = await seed.user({ username: 'dev' });
  await seed.member({ project }, dev, 30);
  const H = (await seed.token(dev)).headers;
  const doing = (
    await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/labels`, headers: H, payload: { name: 'Doing', color: '#00aa00' } })
  ).json();
  const board = (await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/boards`, headers: H })).json()[0];
  await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/boards/${board.id}/lists`, headers: H, payload: { label_id: doing.id } });
  const issue = (await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/issues`, headers: H, payload: { title: 'Card' } })).json();
  const other = (
    await app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/issues`, headers: H, payload: { title: 'Other', labels: 'Doing' } })
  ).json();

  const actor = userActor(dev);
  const parent = await c.boards.projectParent(actor, project.id);
  const view = await c.boards.get(parent, board.id);
  const [backlog, doingList, closed] = view.lists;
  assert.deepEqual(
    view.lists.map((l) => l.row.list_type),
    ['backlog', 'label', 'closed'],
  );
  const iidsOf = async (listId: number) => (await (await c.boards.listIssues(actor, parent, view, listId)).execute()).map((i) => i.iid);
  assert.deepEqual(await iidsOf(backlog.row.id), [issue.iid]);
  assert.deepEqual(await iidsOf(doingList.row.id), [other.iid]);

  let found = await c.issues.find(actor, project.id, issue.iid);
  found = await c.boards.moveIssue(actor, parent, board.id, found, backlog.row.id, doingList.row.id);
  assert.deepEqual(
    await iidsOf(doingList.row.id),
    [issue.iid, other.iid].sort((a, b) => a - b),
  );
  found = await c.boards.moveIssue(actor, parent, board.id, found, doingList.row.id, closed.row.id);
  assert.equal(found.issue.state, 'closed');
  const labels = await c.db.kysely.selectFrom('issue_labels').select('label_id').where('issue_id', '=', issue.id).execute();
  assert.deepEqual(labels, []);
  assert.deepEqual(await iidsOf(closed.row.id), [issue.iid]);
  found = await c.boards.moveIssue(actor, parent, board.id, found, closed.row.id, doingList.row.id);
  assert.equal(found.issue.state, 'opened');
  const notes = await c.db.kysely
    .selectFrom('notes')
    .select('body')
    .where('noteable_id', '=', issue.id)
    .where('noteable_type', '=', 'Issue')
    .orderBy('id')
    .execute();
  assert.deepEqual(
    notes.map((n) => n.body),
    [`added ~${doing.id} label`, `removed ~${doing.id} label`, 'closed', `added ~${doing.id} label`, 'reopened'],
  );
});
