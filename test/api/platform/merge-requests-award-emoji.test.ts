// Award emoji on merge requests and their notes (GitLab lib/api/award_emoji.rb): award, list, get, delete;
// upvotes/downvotes on the merge request row; names from the emoji list; GitLab's 404/401 answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, EXTERNAL_URL } from '../../helpers/build-app.ts';
import type { AwardEmojiRow, UserRow } from '../../../src/db/schema.ts';
import { mrRow, userBasic, world } from '../../helpers/merge-requests-notes.ts';

const awardBody = (a: AwardEmojiRow, u: UserRow) => ({
  id: a.id,
  name: a.name,
  user: userBasic(u),
  created_at: a.created_at,
  updated_at: a.updated_at,
  awardable_id: a.awardable_id,
  awardable_type: a.awardable_type,
  url: null,
});

test('award emoji on a merge request: whole bodies, upvotes and downvotes, duplicates, bad names, deleting', async (t) => {
  const ta = await buildTestApp(t);
  const { app, c } = ta;
  const w = await world(ta);
  const url = `${w.url}/award_emoji`;
  const rows = () => c.db.kysely.selectFrom('award_emoji').selectAll().orderBy('id').execute();

  let res = await app.inject({ method: 'POST', url, headers: w.headers.developer, payload: { name: 'thumbsup' } });
  assert.equal(res.statusCode, 201);
  let all = await rows();
  assert.deepEqual(res.json(), awardBody(all[0], w.users.developer));
  assert.equal(all[0].awardable_type, 'MergeRequest');
  assert.equal(all[0].awardable_id, w.mr.id);
  let mr = await mrRow(c, w.mr.id);
  assert.equal(mr.upvotes, 1);
  assert.equal(mr.downvotes, 0);

  // the alias +1 is thumbsup: already taken by this user
  res = await app.inject({ method: 'POST', url, headers: w.headers.developer, payload: { name: '+1' } });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Award Emoji Name has already been taken Not Found' });
  res = await app.inject({ method: 'POST', url, headers: w.headers.reporter, payload: { name: '+1' } });
  assert.equal(res.statusCode, 201);
  assert.equal(res.json().name, 'thumbsup');
  res = await app.inject({ method: 'POST', url, headers: w.headers.author, payload: { name: 'thumbsdown' } });
  assert.equal(res.statusCode, 201);
  res = await app.inject({ method: 'POST', url, headers: w.headers.author, payload: { name: 'tada' } });
  assert.equal(res.statusCode, 201);
  mr = await mrRow(c, w.mr.id);
  assert.equal(mr.upvotes, 2);
  assert.equal(mr.downvotes, 1);

  res = await app.inject({ method: 'POST', url, headers: w.headers.developer, payload: { name: 'not_an_emoji' } });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Award Emoji Name is not a valid emoji name Not Found' });
  res = await app.inject({ method: 'POST', url, headers: w.headers.developer, payload: { name: '' } });
  assert.equal(res.statusCode, 404);
  res = await app.inject({ method: 'POST', url, headers: w.headers.developer, payload: {} });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'name is missing' });

  all = await rows();
  const users = [w.users.developer, w.users.reporter, w.users.author, w.users.author];
  const bodies = all.map((a, i) => awardBody(a, users[i]));
  res = await app.inject({ method: 'GET', url, headers: w.headers.reporter });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), bodies);
  assert.equal(res.headers['x-total'], '4');
  assert.equal(
    res.headers.link,
    `<${EXTERNAL_URL}${url}?id=${w.project.id}&merge_request_iid=1&page=1&per_page=20>; rel="first", <${EXTERNAL_URL}${url}?id=${w.project.id}&merge_request_iid=1&page=1&per_page=20>; rel="last"`,
  );
  res = await app.inject({ method: 'GET', url: `${url}/${all[2].id}`, headers: w.headers.reporter });
  assert.deepEqual(res.json(), bodies[2]);
  res = await app.inject({ method: 'GET', url: `${url}/999999`, headers: w.headers.reporter });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Not found' });

  // deleting: one's own (or an administrator), else 401
  res = await app.inject({ method: 'DELETE', url: `${url}/${all[0].id}`, headers: w.headers.maintainer });
  assert.equal(res.statusCode, 401);
  assert.deepEqual(res.json(), { message: '401 Unauthorized' });
  res = await app.inject({ method: 'DELETE', url: `${url}/${all[0].id}`, headers: w.headers.developer });
  assert.equal(res.statusCode, 204);
  res = await app.inject({ method: 'DELETE', url: `${url}/${all[2].id}`, headers: ta.root });
  assert.equal(res.statusCode, 204);
  mr = await mrRow(c, w.mr.id);
  assert.equal(mr.upvotes, 1);
  assert.equal(mr.downvotes, 0);
  assert.equal((await rows()).length, 2);
  // awarding again after taking it back
  res = await app.inject({ method: 'POST', url, headers: w.headers.developer, payload: { name: 'thumbsup' } });
  assert.equal(res.statusCode, 201);
  assert.equal((await mrRow(c, w.mr.id)).upvotes, 2);

  // who may: a guest sees no merge request, an outsider no project, anonymous 401
  res = await app.inject({ method: 'POST', url, headers: w.headers.guest, payload: { name: 'heart' } });
  assert.deepEqual(res.json(), { message: '404 Not found' });
  res = await app.inject({ method: 'GET', url, headers: w.headers.outsider });
  assert.deepEqual(res.json(), { message: '404 Project Not Found' });
  res = await app.inject({ method: 'GET', url });
  assert.equal(res.statusCode, 401);
  res = await app.inject({ method: 'GET', url: `/api/v4/projects/${w.project.id}/merge_requests/7/award_emoji`, headers: w.headers.developer });
  assert.deepEqual(res.json(), { message: '404 Not found' });

  // an archived project takes no awards
  await c.db.kysely.updateTable('projects').set({ archived: 1 }).where('id', '=', w.project.id).execute();
  res = await app.inject({ method: 'POST', url, headers: w.headers.maintainer, payload: { name: 'heart' } });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Award Emoji Not Found' });
});

test('award emoji on notes: counted nowhere, gone with the note', async (t) => {
  const ta = await buildTestApp(t);
  const { app, c } = ta;
  const w = await world(ta);
  const note = (await app.inject({ method: 'POST', url: `${w.url}/notes`, headers: w.headers.author, payload: { body: 'Ready' } })).json();
  const url = `${w.url}/notes/${note.id}/award_emoji`;

  let res = await app.inject({ method: 'POST', url, headers: w.headers.developer, payload: { name: 'thumbsup' } });
  assert.equal(res.statusCode, 201);
  const row = await c.db.kysely.selectFrom('award_emoji').selectAll().executeTakeFirstOrThrow();
  assert.deepEqual(res.json(), awardBody(row, w.users.developer));
  assert.equal(row.awardable_type, 'Note');
  assert.equal(row.awardable_id, note.id);
  assert.equal((await mrRow(c, w.mr.id)).upvotes, 0);

  res = await app.inject({ method: 'GET', url, headers: w.headers.reporter });
  assert.deepEqual(res.json(), [awardBody(row, w.users.developer)]);
  assert.equal(
    res.headers.link,
    `<${EXTERNAL_URL}${url}?id=${w.project.id}&merge_request_iid=1&note_id=${note.id}&page=1&per_page=20>; rel="first", <${EXTERNAL_URL}${url}?id=${w.project.id}&merge_request_iid=1&note_id=${note.id}&page=1&per_page=20>; rel="last"`,
  );
  res = await app.inject({ method: 'GET', url: `${url}/${row.id}`, headers: w.headers.reporter });
  assert.equal(res.statusCode, 200);
  // the merge request's own awards are another list
  res = await app.inject({ method: 'GET', url: `${w.url}/award_emoji/${row.id}`, headers: w.headers.reporter });
  assert.equal(res.statusCode, 404);
  res = await app.inject({ method: 'POST', url: `${w.url}/notes/999999/award_emoji`, headers: w.headers.developer, payload: { name: 'heart' } });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Not found' });

  res = await app.inject({ method: 'DELETE', url: `${w.url}/notes/${note.id}`, headers: w.headers.author });
  assert.equal(res.statusCode, 204);
  assert.equal((await c.db.kysely.selectFrom('award_emoji').selectAll().execute()).length, 0);
});
