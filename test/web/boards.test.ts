// Issue board pages: the project's first board reached from the Boards tab, its lists side by side with their
// cards, "Add list" and "Remove" for Reporters and up only, a card moved with its "Move to" form (labels swap, the
// closed list closes), the CSRF check, and a private project's board hidden from strangers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/build-app.ts';
import { webGet, webPost, webSignIn } from '../helpers/web.ts';

test('board pages: the Boards tab, lists and cards, adding a list, moving a card by form, who may do what', async (t) => {
  const ta = await buildTestApp(t);
  const { app, c, seed } = ta;
  const rita = await seed.user({ username: 'rita' });
  const gus = await seed.user({ username: 'gus' });
  const stan = await seed.user({ username: 'stan' });
  const group = await seed.group({ path: 'grp', visibility: 'private' });
  const project = await seed.project({ namespace: group, path: 'app', visibility: 'private' });
  await seed.member({ project }, rita, 20);
  await seed.member({ project }, gus, 10);
  const H = (await seed.token(rita)).headers;
  const api = async (method: 'POST' | 'GET', url: string, payload?: Record<string, unknown>) =>
    (await app.inject({ method, url: `/api/v4/projects/${project.id}${url}`, headers: H, ...(payload ? { payload } : {}) })).json();
  const doing = await api('POST', '/labels', { name: 'Doing', color: '#1f883d' });
  await api('POST', '/labels', { name: 'Review', color: '#8250df' });
  const card = await api('POST', '/issues', { title: 'Card on the board' });
  await api('POST', '/issues', { title: 'Already doing', labels: 'Doing' });

  const r = await webSignIn(app, 'rita');
  const project_page = await webGet(app, '/grp/app/-/issues', r);
  assert.match(project_page.body, /<a [^>]*href="\/grp\/app\/-\/boards"[^>]*>Boards/);
  const go = await webGet(app, '/grp/app/-/boards', r);
  assert.equal(go.statusCode, 303);
  const boardUrl = String(go.headers.location);
  assert.match(boardUrl, /^\/grp\/app\/-\/boards\/\d+$/);
  const boardId = Number(boardUrl.split('/').pop());
  let page = await webGet(app, boardUrl, r);
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /<h1 class="h2 flex-auto">Development<\/h1>/);
  assert.match(page.body, /aria-label="Open"/);
  assert.match(page.body, /aria-label="Closed"/);
  assert.match(page.body, /Add a list of the label/);

  // add the Doing list: the open issue with the label leaves the Open list
  const added = await webPost(app, `/-/p/${project.id}/boards/${boardId}/lists`, r, { label_id: String(doing.id) });
  assert.equal(added.statusCode, 303);
  const lists = await c.db.kysely.selectFrom('board_lists').select(['id', 'list_type', 'label_id']).where('board_id', '=', boardId).orderBy('id').execute();
  assert.deepEqual(
    lists.map((l) => [l.list_type, l.label_id]),
    [
      ['backlog', null],
      ['closed', null],
      ['label', doing.id],
    ],
  );
  const [backlog, closed, doingList] = lists;
  page = await webGet(app, boardUrl, r);
  const column = (id: number) => page.body.split(`data-board-list="${id}"`)[1]!.split('</section>')[0]!;
  assert.match(column(backlog!.id), /Card on the board/);
  assert.doesNotMatch(column(backlog!.id), /Already doing/);
  assert.match(column(doingList!.id), /Already doing/);

  // a guest sees the board but no "Add list" form, and may not move a card (update_issue)
  const g = await webSignIn(app, 'gus');
  const guestPage = await webGet(app, boardUrl, g);
  assert.equal(guestPage.statusCode, 200);
  assert.doesNotMatch(guestPage.body, /Add a list of the label/);
  const guestAdd = await webPost(app, `/-/p/${project.id}/boards/${boardId}/lists`, g, { label_id: String(doing.id) });
  assert.equal(guestAdd.statusCode, 403);
  const guestMove = await webPost(app, `/-/p/${project.id}/boards/${boardId}/move`, g, {
    iid: String(card.iid),
    from_list_id: String(backlog!.id),
    to_list_id: String(doingList!.id),
  });
  assert.equal(guestMove.statusCode, 403);

  // move the card to Doing, then to Closed
  const moved = await webPost(app, `/-/p/${project.id}/boards/${boardId}/move`, r, {
    iid: String(card.iid),
    from_list_id: String(backlog!.id),
    to_list_id: String(doingList!.id),
  });
  assert.equal(moved.statusCode, 303);
  let row = await c.db.kysely.selectFrom('issue_labels').select('label_id').where('issue_id', '=', card.id).execute();
  assert.deepEqual(row, [{ label_id: doing.id }]);
  await webPost(app, `/-/p/${project.id}/boards/${boardId}/move`, r, {
    iid: String(card.iid),
    from_list_id: String(doingList!.id),
    to_list_id: String(closed!.id),
  });
  const issue = await c.db.kysely.selectFrom('issues').select(['state']).where('id', '=', card.id).executeTakeFirstOrThrow();
  assert.equal(issue.state, 'closed');
  row = await c.db.kysely.selectFrom('issue_labels').select('label_id').where('issue_id', '=', card.id).execute();
  assert.deepEqual(row, []);

  // without the CSRF token: refused; a stranger: the project is not found
  const noCsrf = await app.inject({
    method: 'POST',
    url: `/-/p/${project.id}/boards/${boardId}/move`,
    headers: { cookie: r.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: `iid=${card.iid}&from_list_id=${closed!.id}&to_list_id=${backlog!.id}`,
  });
  assert.equal(noCsrf.statusCode, 422);
  const s = await webSignIn(app, 'stan');
  assert.equal((await webGet(app, boardUrl, s)).statusCode, 404);
  assert.equal((await webGet(app, boardUrl)).statusCode, 404); // anonymous: as a stranger

  // removing the list
  const removed = await webPost(app, `/-/p/${project.id}/boards/${boardId}/lists/${doingList!.id}/remove`, r);
  assert.equal(removed.statusCode, 303);
  assert.equal((await c.db.kysely.selectFrom('board_lists').select('id').where('board_id', '=', boardId).execute()).length, 2);
});
