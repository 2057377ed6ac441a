// Discussions of merge requests (GitLab lib/api/discussions.rb): threads, replies, individual notes as
// discussions, diff threads with a position, resolve/unresolve of a thread and of a note, the unresolved
// thread counts the merge status reads; bad inputs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-app.ts';
import type { NoteRow, UserRow } from '../../../src/db/schema.ts';
import { mrRow, userBasic, world } from '../../helpers/merge-requests-notes.ts';

function noteBody(n: NoteRow, author: UserRow, resolvedBy: UserRow | null = null) {
  const out: Record<string, unknown> = {
    id: n.id,
    type: n.type,
    body: n.body,
    attachment: null,
    author: userBasic(author),
    created_at: n.created_at,
    updated_at: n.updated_at,
    system: n.system === 1,
    noteable_id: n.noteable_id,
    noteable_type: 'MergeRequest',
    project_id: n.project_id,
  };
  if (n.type === 'DiffNote') {
    out.commit_id = null;
    out.position = JSON.parse(n.position!);
  }
  out.resolvable = n.type !== null && n.system === 0;
  if (out.resolvable) {
    out.resolved = n.resolved_at !== null;
    out.resolved_by = resolvedBy ? userBasic(resolvedBy) : null;
    out.resolved_at = n.resolved_at;
  }
  Object.assign(out, { confidential: false, internal: false, imported: false, imported_from: 'none', noteable_iid: 1, commands_changes: {} });
  return out;
}

test('discussions: threads, replies, individual notes, resolve and unresolve, counts', async (t) => {
  const ta = await buildTestApp(t);
  const { app, c } = ta;
  const w = await world(ta);
  const notes = async () => c.db.kysely.selectFrom('notes').selectAll().orderBy('id').execute();

  // an individual note first, then a thread
  const individual = await app.inject({ method: 'POST', url: `${w.url}/notes`, headers: w.headers.reporter, payload: { body: 'FYI' } });
  assert.equal(individual.statusCode, 201);
  const created = await app.inject({ method: 'POST', url: `${w.url}/discussions`, headers: w.headers.developer, payload: { body: 'Why this?' } });
  assert.equal(created.statusCode, 201);
  let rows = await notes();
  const thread = rows[1];
  assert.equal(thread.type, 'DiscussionNote');
  assert.deepEqual(created.json(), { id: thread.discussion_id, individual_note: false, notes: [noteBody(thread, w.users.developer)] });
  assert.equal(created.json().notes[0].resolved, false);

  const reply = await app.inject({
    method: 'POST',
    url: `${w.url}/discussions/${thread.discussion_id}/notes`,
    headers: w.headers.author,
    payload: { body: 'Because.' },
  });
  assert.equal(reply.statusCode, 201);
  rows = await notes();
  assert.deepEqual(reply.json(), noteBody(rows[2], w.users.author));
  assert.equal(rows[2].discussion_id, thread.discussion_id);
  assert.equal((await mrRow(c, w.mr.id)).user_notes_count, 3);
  assert.deepEqual(await c.notes.unresolvedDiscussionCounts([w.mr.id, 999]), new Map([[w.mr.id, 1]]));

  const list = await app.inject({ method: 'GET', url: `${w.url}/discussions`, headers: w.headers.reporter });
  assert.equal(list.statusCode, 200);
  assert.equal(list.headers['x-total'], '2');
  assert.deepEqual(list.json(), [
    { id: rows[0].discussion_id, individual_note: true, notes: [noteBody(rows[0], w.users.reporter)] },
    { id: thread.discussion_id, individual_note: false, notes: [noteBody(rows[1], w.users.developer), noteBody(rows[2], w.users.author)] },
  ]);
  const paged = await app.inject({ method: 'GET', url: `${w.url}/discussions?per_page=1&page=2`, headers: w.headers.reporter });
  assert.deepEqual(
    paged.json().map((d: { id: string }) => d.id),
    [thread.discussion_id],
  );
  assert.equal(paged.headers['x-total-pages'], '2');

  const one = await app.inject({ method: 'GET', url: `${w.url}/discussions/${thread.discussion_id}`, headers: w.headers.reporter });
  assert.deepEqual(one.json(), list.json()[1]);
  const threadNotes = await app.inject({ method: 'GET', url: `${w.url}/discussions/${thread.discussion_id}/notes`, headers: w.headers.reporter });
  assert.deepEqual(threadNotes.json(), list.json()[1].notes);
  const oneNote = await app.inject({ method: 'GET', url: `${w.url}/discussions/${thread.discussion_id}/notes/${rows[2].id}`, headers: w.headers.reporter });
  assert.deepEqual(oneNote.json(), list.json()[1].notes[1]);

  // resolving the thread: a Reporter who is not the author may not; a Developer may
  let res = await app.inject({ method: 'PUT', url: `${w.url}/discussions/${thread.discussion_id}?resolved=true`, headers: w.headers.reporter });
  assert.equal(res.statusCode, 403);
  res = await app.inject({ method: 'PUT', url: `${w.url}/discussions/${thread.discussion_id}?resolved=true`, headers: w.headers.maintainer });
  assert.equal(res.statusCode, 200);
  rows = await notes();
  assert.ok(rows[1].resolved_at && rows[2].resolved_at);
  assert.equal(rows[1].resolved_by_id, w.users.maintainer.id);
  assert.deepEqual(res.json(), {
    id: thread.discussion_id,
    individual_note: false,
    notes: [noteBody(rows[1], w.users.developer, w.users.maintainer), noteBody(rows[2], w.users.author, w.users.maintainer)],
  });
  assert.equal(res.json().notes[0].resolved, true);
  assert.deepEqual(await c.notes.unresolvedDiscussionCounts([w.mr.id]), new Map());
  // the merge request's author may unresolve (body parameter this time)
  res = await app.inject({ method: 'PUT', url: `${w.url}/discussions/${thread.discussion_id}`, headers: w.headers.author, payload: { resolved: false } });
  assert.equal(res.statusCode, 200);
  rows = await notes();
  assert.equal(rows[1].resolved_at, null);
  assert.equal(rows[2].resolved_by_id, null);
  assert.equal(res.json().notes[1].resolved, false);
  assert.deepEqual(await c.notes.unresolvedDiscussionCounts([w.mr.id]), new Map([[w.mr.id, 1]]));

  // one note of the thread
  res = await app.inject({
    method: 'PUT',
    url: `${w.url}/discussions/${thread.discussion_id}/notes/${rows[1].id}`,
    headers: w.headers.developer,
    payload: { resolved: true },
  });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().resolved, true);
  assert.deepEqual(res.json().resolved_by, userBasic(w.users.developer));
  // still unresolved: the reply is not
  assert.deepEqual(await c.notes.unresolvedDiscussionCounts([w.mr.id]), new Map([[w.mr.id, 1]]));
  // an individual note is not resolvable
  res = await app.inject({ method: 'PUT', url: `${w.url}/discussions/${rows[0].discussion_id}?resolved=true`, headers: w.headers.maintainer });
  assert.equal(res.statusCode, 403);
  res = await app.inject({
    method: 'PUT',
    url: `${w.url}/discussions/${rows[0].discussion_id}/notes/${rows[0].id}`,
    headers: w.headers.maintainer,
    payload: { resolved: true },
  });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: '400 Bad request - Note is not resolvable' });

  // editing a note of a thread
  res = await app.inject({
    method: 'PUT',
    url: `${w.url}/discussions/${thread.discussion_id}/notes/${rows[2].id}`,
    headers: w.headers.author,
    payload: { body: 'Because it is faster.' },
  });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().body, 'Because it is faster.');

  // replying to an individual note turns it into a thread
  res = await app.inject({
    method: 'POST',
    url: `${w.url}/discussions/${rows[0].discussion_id}/notes`,
    headers: w.headers.developer,
    payload: { body: 'Thanks' },
  });
  assert.equal(res.statusCode, 201);
  rows = await notes();
  assert.equal(rows[0].type, 'DiscussionNote');
  assert.equal(rows[0].resolvable, 1);
  assert.equal(rows[3].discussion_id, rows[0].discussion_id);
  res = await app.inject({ method: 'GET', url: `${w.url}/discussions/${rows[0].discussion_id}`, headers: w.headers.reporter });
  assert.equal(res.json().individual_note, false);
  assert.equal(res.json().notes.length, 2);
  assert.deepEqual(await c.notes.unresolvedDiscussionCounts([w.mr.id]), new Map([[w.mr.id, 2]]));

  // deleting a reply of a thread
  res = await app.inject({ method: 'DELETE', url: `${w.url}/discussions/${rows[0].discussion_id}/notes/${rows[3].id}`, headers: w.headers.developer });
  assert.equal(res.statusCode, 204);
  assert.equal((await mrRow(c, w.mr.id)).user_notes_count, 3);
});

test('discussions: diff threads, system notes, bad inputs', async (t) => {
  const ta = await buildTestApp(t);
  const { app, c } = ta;
  const w = await world(ta);
  const sha = (ch: string) => ch.repeat(40);
  const position = {
    base_sha: sha('b'),
    start_sha: sha('c'),
    head_sha: sha('d'),
    position_type: 'text',
    new_path: 'README.md',
    old_path: 'README.md',
    new_line: 3,
  };

  let res = await app.inject({ method: 'POST', url: `${w.url}/discussions`, headers: w.headers.developer, payload: { body: 'On this line', position } });
  assert.equal(res.statusCode, 201);
  const diff = await c.db.kysely.selectFrom('notes').selectAll().executeTakeFirstOrThrow();
  assert.equal(diff.type, 'DiffNote');
  assert.deepEqual(res.json().notes[0].position, {
    base_sha: sha('b'),
    start_sha: sha('c'),
    head_sha: sha('d'),
    old_path: 'README.md',
    new_path: 'README.md',
    position_type: 'text',
    old_line: null,
    new_line: 3,
    line_range: null,
  });
  assert.equal(res.json().notes[0].commit_id, null);
  assert.equal(res.json().notes[0].resolvable, true);
  res = await app.inject({ method: 'POST', url: `${w.url}/discussions/${diff.discussion_id}/notes`, headers: w.headers.author, payload: { body: 'Fixed' } });
  assert.equal(res.json().type, 'DiffNote');
  assert.deepEqual(res.json().position, JSON.parse(JSON.stringify(res.json().position)));

  // position shape
  res = await app.inject({
    method: 'POST',
    url: `${w.url}/discussions`,
    headers: w.headers.developer,
    payload: { body: 'x', position: { start_sha: sha('c') } },
  });
  assert.equal(res.statusCode, 400);
  assert.match(res.json().error, /position\[base_sha\] is missing/);
  res = await app.inject({
    method: 'POST',
    url: `${w.url}/discussions`,
    headers: w.headers.developer,
    payload: { body: 'x', position: { ...position, position_type: 'video' } },
  });
  assert.deepEqual(res.json(), { error: 'position[position_type] does not have a valid value' });
  res = await app.inject({
    method: 'POST',
    url: `${w.url}/discussions`,
    headers: w.headers.developer,
    payload: { body: 'x', position: { ...position, new_line: 'ten' } },
  });
  assert.deepEqual(res.json(), { error: 'position[new_line] is invalid' });
  res = await app.inject({ method: 'POST', url: `${w.url}/discussions`, headers: w.headers.developer, payload: {} });
  assert.deepEqual(res.json(), { error: 'body is missing' });
  res = await app.inject({ method: 'POST', url: `${w.url}/discussions`, headers: w.headers.developer, payload: { body: '' } });
  assert.deepEqual(res.json(), { message: `400 Bad request - Note {:note=>["can't be blank"]}` });

  // unknown threads and notes
  const unknown = 'f'.repeat(40);
  res = await app.inject({ method: 'GET', url: `${w.url}/discussions/${unknown}`, headers: w.headers.developer });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Discussion Not Found' });
  res = await app.inject({ method: 'GET', url: `${w.url}/discussions/${unknown}/notes`, headers: w.headers.developer });
  assert.deepEqual(res.json(), { message: '404 Notes Not Found' });
  res = await app.inject({ method: 'POST', url: `${w.url}/discussions/${unknown}/notes`, headers: w.headers.developer, payload: { body: 'x' } });
  assert.deepEqual(res.json(), { message: '404 Discussion Not Found' });
  res = await app.inject({ method: 'PUT', url: `${w.url}/discussions/${unknown}?resolved=true`, headers: w.headers.developer });
  assert.deepEqual(res.json(), { message: '404 Discussion Not Found' });
  res = await app.inject({ method: 'PUT', url: `${w.url}/discussions/${diff.discussion_id}`, headers: w.headers.developer, payload: {} });
  assert.deepEqual(res.json(), { error: 'resolved is missing' });
  res = await app.inject({ method: 'PUT', url: `${w.url}/discussions/${diff.discussion_id}`, headers: w.headers.developer, payload: { resolved: 'maybe' } });
  assert.deepEqual(res.json(), { error: 'resolved is invalid' });
  const noteUrl = `${w.url}/discussions/${diff.discussion_id}/notes/${diff.id}`;
  res = await app.inject({ method: 'PUT', url: noteUrl, headers: w.headers.developer, payload: {} });
  assert.deepEqual(res.json(), { error: 'body, resolved are missing, exactly one parameter must be provided' });
  res = await app.inject({ method: 'PUT', url: noteUrl, headers: w.headers.developer, payload: { body: 'x', resolved: true } });
  assert.deepEqual(res.json(), { error: 'body, resolved are mutually exclusive' });

  // a system note is a discussion of its own that cannot be replied to
  const sys = await c.db.kysely
    .transaction()
    .execute((trx) => c.notes.addSystemNote(trx, 'MergeRequest', w.mr, w.users.maintainer.id, 'marked this merge request as draft'));
  res = await app.inject({ method: 'GET', url: `${w.url}/discussions/${sys.discussion_id}`, headers: w.headers.developer });
  assert.equal(res.json().individual_note, true);
  assert.equal(res.json().notes[0].system, true);
  assert.equal(res.json().notes[0].resolvable, false);
  res = await app.inject({ method: 'POST', url: `${w.url}/discussions/${sys.discussion_id}/notes`, headers: w.headers.developer, payload: { body: 'x' } });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: '400 Bad request - Discussion can not be replied to.' });

  // who may: a guest of the private project sees no merge request; an outsider no project
  res = await app.inject({ method: 'GET', url: `${w.url}/discussions`, headers: w.headers.guest });
  assert.deepEqual(res.json(), { message: '404 Not found' });
  res = await app.inject({ method: 'GET', url: `${w.url}/discussions`, headers: w.headers.outsider });
  assert.deepEqual(res.json(), { message: '404 Project Not Found' });
  assert.equal((await mrRow(c, w.mr.id)).user_notes_count, 2);
});
