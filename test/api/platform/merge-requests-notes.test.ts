// Notes of merge requests (GitLab lib/api/notes.rb): create, list (order, sort, activity filter, pages),
// get, update, delete; user_notes_count on the merge request row; who may read and write; bad inputs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, EXTERNAL_URL } from '../../helpers/build-app.ts';
import type { NoteRow, UserRow } from '../../../src/db/schema.ts';
import { insertMergeRequest, mrRow, userBasic, world } from '../../helpers/merge-requests-notes.ts';

function noteBody(n: NoteRow, author: UserRow | null, iid: number) {
  return {
    id: n.id,
    type: null,
    body: n.body,
    attachment: null,
    author: author ? userBasic(author) : null,
    created_at: n.created_at,
    updated_at: n.updated_at,
    system: n.system === 1,
    noteable_id: n.noteable_id,
    noteable_type: 'MergeRequest',
    project_id: n.project_id,
    resolvable: false,
    confidential: n.internal === 1,
    internal: n.internal === 1,
    imported: false,
    imported_from: 'none',
    noteable_iid: iid,
    commands_changes: {},
  };
}

test('notes: create, get, list, update, delete with whole bodies and the count on the merge request', async (t) => {
  const ta = await buildTestApp(t);
  const { app, c } = ta;
  const w = await world(ta);
  const before = await mrRow(c, w.mr.id);

  const created = await app.inject({ method: 'POST', url: `${w.url}/notes`, headers: w.headers.developer, payload: { body: 'Looks good' } });
  assert.equal(created.statusCode, 201);
  const row = await c.db.kysely.selectFrom('notes').selectAll().where('id', '=', created.json().id).executeTakeFirstOrThrow();
  assert.deepEqual(created.json(), noteBody(row, w.users.developer, 1));
  assert.match(row.discussion_id, /^[0-9a-f]{40}$/);
  assert.equal(row.type, null);
  assert.equal(row.resolvable, 0);
  let after = await mrRow(c, w.mr.id);
  assert.equal(after.user_notes_count, 1);
  assert.ok(after.updated_at >= before.updated_at);

  const second = await app.inject({ method: 'POST', url: `${w.url}/notes`, headers: w.headers.reporter, payload: { body: 'Second' } });
  assert.equal(second.statusCode, 201);
  // a system note (written by other services) appears in the list but is not counted
  await c.db.kysely.transaction().execute((trx) => c.notes.addSystemNote(trx, 'MergeRequest', w.mr, w.users.maintainer.id, 'changed the description'));
  after = await mrRow(c, w.mr.id);
  assert.equal(after.user_notes_count, 2);

  const all = await c.db.kysely.selectFrom('notes').selectAll().orderBy('id').execute();
  const authors = [w.users.developer, w.users.reporter, w.users.maintainer];
  const bodies = all.map((n, i) => noteBody(n, authors[i], 1));

  // default: created_at desc
  const list = await app.inject({ method: 'GET', url: `${w.url}/notes`, headers: w.headers.reporter });
  assert.equal(list.statusCode, 200);
  assert.deepEqual(list.json(), [...bodies].reverse());
  assert.equal(list.headers['x-total'], '3');
  assert.equal(
    list.headers.link,
    `<${EXTERNAL_URL}${w.url}/notes?id=${w.project.id}&noteable_id=1&page=1&per_page=20>; rel="first", <${EXTERNAL_URL}${w.url}/notes?id=${w.project.id}&noteable_id=1&page=1&per_page=20>; rel="last"`,
  );
  const asc = await app.inject({ method: 'GET', url: `${w.url}/notes?sort=asc&order_by=updated_at`, headers: w.headers.reporter });
  assert.deepEqual(asc.json(), bodies);
  const comments = await app.inject({ method: 'GET', url: `${w.url}/notes?activity_filter=only_comments&sort=asc`, headers: w.headers.reporter });
  assert.deepEqual(
    comments.json().map((n: { id: number }) => n.id),
    [all[0].id, all[1].id],
  );
  const activity = await app.inject({ method: 'GET', url: `${w.url}/notes?activity_filter=only_activity`, headers: w.headers.reporter });
  assert.deepEqual(activity.json(), [bodies[2]]);
  assert.equal(activity.json()[0].system, true);
  const paged = await app.inject({ method: 'GET', url: `${w.url}/notes?per_page=2&page=2&sort=asc`, headers: w.headers.reporter });
  assert.deepEqual(paged.json(), [bodies[2]]);
  assert.equal(paged.headers['x-prev-page'], '1');
  assert.equal(paged.headers['x-total-pages'], '2');

  const one = await app.inject({ method: 'GET', url: `${w.url}/notes/${all[0].id}`, headers: w.headers.guest });
  assert.equal(one.statusCode, 404); // a guest of a private project does not see merge requests
  const got = await app.inject({ method: 'GET', url: `${w.url}/notes/${all[0].id}`, headers: w.headers.reporter });
  assert.deepEqual(got.json(), bodies[0]);

  // the author edits
  const edited = await app.inject({ method: 'PUT', url: `${w.url}/notes/${all[0].id}`, headers: w.headers.developer, payload: { body: 'Looks great' } });
  assert.equal(edited.statusCode, 200);
  const editedRow = await c.db.kysely.selectFrom('notes').selectAll().where('id', '=', all[0].id).executeTakeFirstOrThrow();
  assert.equal(editedRow.body, 'Looks great');
  assert.deepEqual(edited.json(), noteBody(editedRow, w.users.developer, 1));
  // a Maintainer edits anyone's note; a Reporter does not
  const byMaintainer = await app.inject({ method: 'PUT', url: `${w.url}/notes/${all[0].id}`, headers: w.headers.maintainer, payload: { body: 'Fixed typo' } });
  assert.equal(byMaintainer.statusCode, 200);
  assert.equal(byMaintainer.json().body, 'Fixed typo');
  const byReporter = await app.inject({ method: 'PUT', url: `${w.url}/notes/${all[0].id}`, headers: w.headers.reporter, payload: { body: 'Mine now' } });
  assert.equal(byReporter.statusCode, 403);
  assert.deepEqual(byReporter.json(), { message: '403 Forbidden' });
  // system notes are nobody's to edit or delete
  const sys = await app.inject({ method: 'PUT', url: `${w.url}/notes/${all[2].id}`, headers: w.headers.maintainer, payload: { body: 'x' } });
  assert.equal(sys.statusCode, 403);
  const sysDel = await app.inject({ method: 'DELETE', url: `${w.url}/notes/${all[2].id}`, headers: ta.root });
  assert.equal(sysDel.statusCode, 403);

  // delete: the author's own; the count goes down
  const otherDel = await app.inject({ method: 'DELETE', url: `${w.url}/notes/${all[0].id}`, headers: w.headers.reporter });
  assert.equal(otherDel.statusCode, 403);
  const del = await app.inject({ method: 'DELETE', url: `${w.url}/notes/${all[1].id}`, headers: w.headers.reporter });
  assert.equal(del.statusCode, 204);
  assert.equal(del.body, '');
  assert.equal((await mrRow(c, w.mr.id)).user_notes_count, 1);
  const gone = await app.inject({ method: 'GET', url: `${w.url}/notes/${all[1].id}`, headers: w.headers.reporter });
  assert.equal(gone.statusCode, 404);
  assert.deepEqual(gone.json(), { message: '404 Not found' });
});

test('notes: bad inputs and unknown ids', async (t) => {
  const ta = await buildTestApp(t);
  const { app, c } = ta;
  const w = await world(ta);
  const post = (payload: unknown, headers = w.headers.developer, url = `${w.url}/notes`) =>
    app.inject({ method: 'POST', url, headers, payload: payload as Record<string, unknown> });

  let res = await post({});
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'body is missing' });
  res = await post({ body: '' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: `400 Bad request - Note {:note=>["can't be blank"]}` });
  res = await post({ body: '   ' });
  assert.deepEqual(res.json(), { message: `400 Bad request - Note {:note=>["can't be blank"]}` });
  res = await post({ body: 'x'.repeat(1_000_001) });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: '400 Bad request - Note {:note=>["is too long (maximum is 1000000 characters)"]}' });
  res = await post({ body: 'x'.repeat(1_000_000) });
  assert.equal(res.statusCode, 201);
  res = await post({ body: 'hi' }, w.headers.developer, `/api/v4/projects/${w.project.id}/merge_requests/99/notes`);
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Not found' });
  res = await post({ body: 'hi' }, w.headers.developer, `/api/v4/projects/999999/merge_requests/1/notes`);
  assert.deepEqual(res.json(), { message: '404 Project Not Found' });
  res = await post({ body: 'hi' }, w.headers.developer, `/api/v4/projects/${w.project.id}/merge_requests/abc/notes`);
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'merge_request_iid is invalid' });
  res = await app.inject({ method: 'GET', url: `${w.url}/notes?sort=sideways`, headers: w.headers.developer });
  assert.deepEqual(res.json(), { error: 'sort does not have a valid value' });
  res = await app.inject({ method: 'GET', url: `${w.url}/notes/999999`, headers: w.headers.developer });
  assert.deepEqual(res.json(), { message: '404 Not found' });
  res = await app.inject({ method: 'PUT', url: `${w.url}/notes/999999`, headers: w.headers.developer, payload: { body: 'x' } });
  assert.equal(res.statusCode, 404);
  const mine = (await post({ body: 'mine' })).json();
  res = await app.inject({ method: 'PUT', url: `${w.url}/notes/${mine.id}`, headers: w.headers.developer, payload: { body: ' ' } });
  assert.deepEqual(res.json(), { error: 'body is empty' });
  res = await app.inject({ method: 'PUT', url: `${w.url}/notes/${mine.id}`, headers: w.headers.developer, payload: { body: 'y'.repeat(1_000_001) } });
  assert.deepEqual(res.json(), { message: '400 Bad request - Note {:note=>["is too long (maximum is 1000000 characters)"]}' });

  // who may: anonymous 401, outsider of a private project 404 (the project), guest 404 (no merge requests)
  res = await app.inject({ method: 'GET', url: `${w.url}/notes` });
  assert.equal(res.statusCode, 401);
  res = await post({ body: 'hi' }, w.headers.outsider);
  assert.deepEqual(res.json(), { message: '404 Project Not Found' });
  res = await post({ body: 'hi' }, w.headers.guest);
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Not found' });
  // a note of another merge request is not one of this one
  const other = await insertMergeRequest(c, w.project, w.users.author, { iid: 2 });
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${w.project.id}/merge_requests/${other.iid}/notes/${mine.id}`, headers: w.headers.developer });
  assert.deepEqual(res.json(), { message: '404 Not found' });
  // nothing was counted for the refused writes
  assert.equal((await mrRow(c, w.mr.id)).user_notes_count, 2);
});

test('notes: public projects, locked discussions, archived projects, internal notes, created_at', async (t) => {
  const ta = await buildTestApp(t);
  const { app, c, seed } = ta;
  const owner = await seed.user();
  const project = await seed.project({ owner, visibility: 'public' });
  const member = await seed.user();
  const stranger = await seed.user();
  await seed.member({ project }, member, 20);
  const mr = await insertMergeRequest(c, project, owner);
  const url = `/api/v4/projects/${project.id}/merge_requests/1/notes`;
  const strangerH = (await seed.token(stranger)).headers;
  const memberH = (await seed.token(member)).headers;

  // anyone signed in may comment on a public project
  let res = await app.inject({ method: 'POST', url, headers: strangerH, payload: { body: 'drive-by' } });
  assert.equal(res.statusCode, 201);
  // internal notes: only Reporter and above write and read them
  res = await app.inject({ method: 'POST', url, headers: strangerH, payload: { body: 'secret', internal: true } });
  assert.equal(res.statusCode, 403);
  res = await app.inject({ method: 'POST', url, headers: memberH, payload: { body: 'secret', internal: true } });
  assert.equal(res.statusCode, 201);
  assert.equal(res.json().internal, true);
  assert.equal(res.json().confidential, true);
  const internalId = res.json().id;
  res = await app.inject({ method: 'GET', url, headers: strangerH });
  assert.deepEqual(
    res.json().map((n: { body: string }) => n.body),
    ['drive-by'],
  );
  res = await app.inject({ method: 'GET', url: `${url}/${internalId}`, headers: strangerH });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Note Not Found' });
  res = await app.inject({ method: 'GET', url, headers: memberH });
  assert.equal(res.json().length, 2);

  // a locked discussion: members only
  await c.db.kysely.updateTable('merge_requests').set({ discussion_locked: 1 }).where('id', '=', mr.id).execute();
  res = await app.inject({ method: 'POST', url, headers: strangerH, payload: { body: 'again' } });
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: '403 Forbidden' });
  res = await app.inject({ method: 'POST', url, headers: memberH, payload: { body: 'members only' } });
  assert.equal(res.statusCode, 201);
  await c.db.kysely.updateTable('merge_requests').set({ discussion_locked: 0 }).where('id', '=', mr.id).execute();

  // created_at: administrators only (others get now)
  res = await app.inject({ method: 'POST', url, headers: ta.root, payload: { body: 'imported', created_at: '2020-01-02T03:04:05Z' } });
  assert.equal(res.json().created_at, '2020-01-02T03:04:05.000Z');
  assert.equal(res.json().updated_at, '2020-01-02T03:04:05.000Z');
  res = await app.inject({ method: 'POST', url, headers: memberH, payload: { body: 'not imported', created_at: '2020-01-02T03:04:05Z' } });
  assert.notEqual(res.json().created_at, '2020-01-02T03:04:05.000Z');

  // merge requests switched off: nobody reads them
  await c.db.kysely
    .updateTable('projects')
    .set({ settings: JSON.stringify({ merge_requests_access_level: 'disabled' }) })
    .where('id', '=', project.id)
    .execute();
  res = await app.inject({ method: 'GET', url, headers: memberH });
  assert.equal(res.statusCode, 404);

  // archived: read only
  await c.db.kysely.updateTable('projects').set({ settings: '{}', archived: 1 }).where('id', '=', project.id).execute();
  res = await app.inject({ method: 'GET', url, headers: memberH });
  assert.equal(res.statusCode, 200);
  res = await app.inject({ method: 'POST', url, headers: memberH, payload: { body: 'late' } });
  assert.equal(res.statusCode, 403);
  assert.equal((await mrRow(c, mr.id)).user_notes_count, 5);
});
