// Merge requests that mention issues (GitLab's cross references): a merge request's title or description, or
// a note on it, that references an issue (`#1`, `project#1`, `group/project#1`, a link to the issue) writes
// the system note "mentioned in merge request !1" on the issue once, and the issue's related_merge_requests
// lists the merge request (closed_by only those that close it), in GitLab's order, as Entities::MergeRequest
// without `subscribed`. Who may not read the merge request sees neither it nor its note; who may not read an
// issue cannot mention it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NamespaceRow, UserRow } from '../../../src/db/schema.ts';
import { naturalCompare } from '../../../src/domain/issues/mentions.service.ts';
import { buildTestApp, EXTERNAL_URL, type TestApp } from '../../helpers/build-app.ts';
import { workTree } from '../../helpers/git.ts';
import { webGet, webSignIn } from '../../helpers/web.ts';

type T = Parameters<typeof buildTestApp>[0];
type Json = Record<string, any>;

/** A project whose repository has `main` and the branches `branches` (one commit each). */
async function repoWithBranches(t: T, ta: TestApp, namespace: NamespaceRow, path: string, visibility: string, branches: string[]) {
  const { project, dir } = await ta.seed.repoProject({ namespace, path, visibility });
  const wt = workTree(t, dir);
  wt.write('a.txt', 'a\n').commit('Initial');
  for (const b of branches) {
    wt.checkout(b, true);
    wt.write(`${b}.txt`, `${b}\n`).commit(b);
    wt.checkout('main');
  }
  wt.push();
  return project;
}

function helpers(ta: TestApp) {
  const { app, c } = ta;
  const call = async (
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    headers: Record<string, string>,
    payload?: Json,
    status = method === 'POST' ? 201 : 200,
  ) => {
    const r = await app.inject({ method, url: `/api/v4${url}`, headers, payload });
    assert.equal(r.statusCode, status, `${method} ${url}: ${r.body}`);
    return r;
  };
  const issue = async (projectId: number, payload: Json) => (await call('POST', `/projects/${projectId}/issues`, ta.root, payload)).json() as Json;
  const mergeRequest = async (projectId: number, headers: Record<string, string>, payload: Json) =>
    (await call('POST', `/projects/${projectId}/merge_requests`, headers, { target_branch: 'main', ...payload })).json() as Json;
  /** GET …/related_merge_requests as `headers`: status, body and X-Total */
  const related = async (projectId: number, iid: number, headers: Record<string, string>) => {
    const r = await app.inject({ method: 'GET', url: `/api/v4/projects/${projectId}/issues/${iid}/related_merge_requests`, headers });
    return { status: r.statusCode, body: r.json(), total: r.headers['x-total'] };
  };
  /** Entities::MergeRequest of one merge request as `headers` sees it, without `subscribed`, its reference relative to the issue's project */
  const entity = async (mr: Json, headers: Record<string, string>, relative: string) => {
    const { subscribed: _, ...rest } = (await call('GET', `/projects/${mr.project_id}/merge_requests/${mr.iid}`, headers)).json() as Json;
    return { ...rest, reference: relative, references: { ...rest.references, relative } };
  };
  const issueNotes = (issueId: number) =>
    c.db.kysely
      .selectFrom('notes')
      .select(['id', 'body', 'author_id', 'system', 'internal', 'project_id'])
      .where('noteable_type', '=', 'Issue')
      .where('noteable_id', '=', issueId)
      .orderBy('id')
      .execute();
  const mentionRows = () =>
    c.db.kysely
      .selectFrom('merge_requests_mentioning_issues')
      .select(['issue_id', 'merge_request_id', 'note_id'])
      .orderBy('issue_id')
      .orderBy('merge_request_id')
      .execute();
  const headersOf = async (u: UserRow) => (await ta.seed.token(u)).headers;
  /** the background mergeability checks of these merge requests done (their merge_status no longer moves) */
  const settle = async (...mrs: Json[]) => {
    for (const mr of mrs) await call('GET', `/projects/${mr.project_id}/merge_requests/${mr.iid}`, ta.root);
    await c.merges.idle();
  };
  return { call, issue, mergeRequest, related, entity, issueNotes, mentionRows, headersOf, settle };
}

test('a merge request mentioning an issue is related to it, with the system note "mentioned in merge request !1" written once', async (t) => {
  const ta = await buildTestApp(t);
  const { seed } = ta;
  const h = helpers(ta);
  const group = await seed.group({ path: 'grp' });
  const project = await repoWithBranches(t, ta, group, 'app', 'public', ['feature', 'fix']);
  const dev = await seed.user({ username: 'dev' });
  const rev = await seed.user({ username: 'rev' });
  await seed.member({ project }, dev, 30);
  await seed.member({ project }, rev, 20);
  const H = await h.headersOf(dev);
  const R = await h.headersOf(rev);
  const one = await h.issue(project.id, { title: 'One' });
  const two = await h.issue(project.id, { title: 'Two' });
  const three = await h.issue(project.id, { title: 'Three' });
  const four = await h.issue(project.id, { title: 'Four' });

  // `#2` in code and `\#3` escaped are no references; #99 names no issue
  const mr = await h.mergeRequest(project.id, H, {
    source_branch: 'feature',
    title: 'Feature',
    description: `Related to #${one.iid}; not \`#${two.iid}\`, not \\#${three.iid}, not #99.`,
  });
  const notesOfOne = await h.issueNotes(one.id);
  assert.deepEqual(
    notesOfOne.map(({ id: _, ...n }) => n),
    [{ body: `mentioned in merge request !${mr.iid}`, author_id: dev.id, system: 1, internal: 0, project_id: project.id }],
  );
  assert.deepEqual(await h.issueNotes(two.id), []);
  assert.deepEqual(await h.issueNotes(three.id), []);
  assert.deepEqual(await h.mentionRows(), [{ issue_id: one.id, merge_request_id: mr.id, note_id: notesOfOne[0].id }]);

  // related, not closing
  await h.settle(mr);
  assert.deepEqual((await h.call('GET', `/projects/${project.id}/issues/${one.iid}/closed_by`, H)).json(), []);
  assert.deepEqual(await h.related(project.id, one.iid, H), { status: 200, body: [await h.entity(mr, H, `!${mr.iid}`)], total: '1' });
  assert.deepEqual(await h.related(project.id, two.iid, H), { status: 200, body: [], total: '0' });
  // anonymous visitors of the public project too
  assert.deepEqual(await h.related(project.id, one.iid, {}), { status: 200, body: [await h.entity(mr, {}, `!${mr.iid}`)], total: '1' });

  // the issue's notes show it as a system note
  const listed = (await h.call('GET', `/projects/${project.id}/issues/${one.iid}/notes`, R)).json() as Json[];
  assert.deepEqual(
    listed.map((n) => [n.id, n.body, n.system, n.author.username, n.noteable_type, n.noteable_iid]),
    [[notesOfOne[0].id, `mentioned in merge request !${mr.iid}`, true, 'dev', 'Issue', one.iid]],
  );

  // edited again (the title and the description still name #1): no second note; a new mention is noted
  await h.call('PUT', `/projects/${project.id}/merge_requests/${mr.iid}`, H, {
    title: `Feature for #${one.iid}`,
    description: `Still #${one.iid}, now also ${EXTERNAL_URL}/grp/app/-/issues/${four.iid}`,
  });
  await h.call('PUT', `/projects/${project.id}/merge_requests/${mr.iid}`, H, { description: 'Nothing referenced any more' });
  assert.deepEqual(
    (await h.issueNotes(one.id)).map((n) => n.body),
    [`mentioned in merge request !${mr.iid}`],
  );
  const notesOfFour = await h.issueNotes(four.id);
  assert.deepEqual(
    notesOfFour.map((n) => [n.body, n.author_id]),
    [[`mentioned in merge request !${mr.iid}`, dev.id]],
  );
  // the mention stays when the text no longer names the issue (as GitLab's note does)
  assert.deepEqual(
    (await h.related(project.id, one.iid, H)).body.map((m: Json) => m.iid),
    [mr.iid],
  );

  // a note on the merge request mentions as its author; a reply and an edit too; each pair once
  const note = (await h.call('POST', `/projects/${project.id}/merge_requests/${mr.iid}/notes`, R, { body: `See #${two.iid} and #${one.iid}` })).json() as Json;
  await h.call('PUT', `/projects/${project.id}/merge_requests/${mr.iid}/notes/${note.id}`, R, { body: `See #${two.iid} and #${three.iid}` });
  const thread = (await h.call('POST', `/projects/${project.id}/merge_requests/${mr.iid}/discussions`, H, { body: 'A thread' })).json() as Json;
  await h.call('POST', `/projects/${project.id}/merge_requests/${mr.iid}/discussions/${thread.id}/notes`, H, { body: `Again #${two.iid}` });
  const byNote = async (id: number) => (await h.issueNotes(id)).map((n) => [n.body, n.author_id]);
  assert.deepEqual(await byNote(two.id), [[`mentioned in merge request !${mr.iid}`, rev.id]]);
  assert.deepEqual(await byNote(three.id), [[`mentioned in merge request !${mr.iid}`, rev.id]]);
  assert.deepEqual(await byNote(one.id), [[`mentioned in merge request !${mr.iid}`, dev.id]]);
  assert.deepEqual(
    (await h.mentionRows()).map((r) => [r.issue_id, r.merge_request_id]),
    [
      [one.id, mr.id],
      [two.id, mr.id],
      [three.id, mr.id],
      [four.id, mr.id],
    ],
  );

  // a second merge request that closes #1: closed_by lists it alone, related both (by iid)
  const closing = await h.mergeRequest(project.id, H, { source_branch: 'fix', title: 'Fix', description: `Closes #${one.iid}` });
  await h.settle(closing);
  assert.deepEqual(
    (await h.call('GET', `/projects/${project.id}/issues/${one.iid}/closed_by`, H)).json().map((m: Json) => m.iid),
    [closing.iid],
  );
  assert.deepEqual(await h.related(project.id, one.iid, H), {
    status: 200,
    body: [await h.entity(mr, H, `!${mr.iid}`), await h.entity(closing, H, `!${closing.iid}`)],
    total: '2',
  });
  // paginated as GitLab's list
  const page2 = await ta.app.inject({
    method: 'GET',
    url: `/api/v4/projects/${project.id}/issues/${one.iid}/related_merge_requests?per_page=1&page=2`,
    headers: H,
  });
  assert.equal(page2.statusCode, 200);
  assert.deepEqual(
    page2.json().map((m: Json) => m.iid),
    [closing.iid],
  );
  assert.equal(page2.headers['x-total'], '2');
  assert.equal(page2.headers['x-page'], '2');
  assert.deepEqual(
    (await h.issueNotes(one.id)).map((n) => n.body),
    [`mentioned in merge request !${mr.iid}`, `mentioned in merge request !${closing.iid}`],
  );

  // bad input stays as it was
  const missing = await ta.app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/issues/999/related_merge_requests`, headers: H });
  assert.deepEqual([missing.statusCode, missing.json()], [404, { message: '404 Not found' }]);
  const badIid = await ta.app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/issues/abc/related_merge_requests`, headers: H });
  assert.deepEqual([badIid.statusCode, badIid.json()], [400, { error: 'issue_iid is invalid' }]);

  // the merge request deleted: its note stays, hidden from everyone (its reference names nothing any more)
  await h.call('DELETE', `/projects/${project.id}/merge_requests/${closing.iid}`, ta.root, undefined, 204);
  assert.deepEqual(
    (await h.issueNotes(one.id)).map((n) => n.body),
    [`mentioned in merge request !${mr.iid}`, `mentioned in merge request !${closing.iid}`],
  );
  assert.deepEqual(
    (await h.call('GET', `/projects/${project.id}/issues/${one.iid}/notes?sort=asc`, ta.root)).json().map((n: Json) => n.body),
    [`mentioned in merge request !${mr.iid}`],
  );
  assert.deepEqual(
    (await h.related(project.id, one.iid, H)).body.map((m: Json) => m.iid),
    [mr.iid],
  );
});

test('a mention from another project names the merge request from the issue’s project; the related list orders as GitLab', async (t) => {
  const ta = await buildTestApp(t);
  const { seed } = ta;
  const h = helpers(ta);
  const grp = await seed.group({ path: 'grp' });
  const grp2 = await seed.group({ path: 'grp2' });
  const app = await repoWithBranches(t, ta, grp, 'app', 'public', ['a', 'b']);
  const other = await repoWithBranches(t, ta, grp, 'other', 'public', ['a']);
  const lib = await repoWithBranches(t, ta, grp2, 'lib', 'public', ['a']);
  const one = await h.issue(app.id, { title: 'One' });

  // created in the reverse of the list's order
  const fromLib = await h.mergeRequest(lib.id, ta.root, {
    source_branch: 'a',
    title: 'Lib',
    description: `Needed by ${EXTERNAL_URL}/grp/app/-/issues/${one.iid}`,
  });
  const fromOther = await h.mergeRequest(other.id, ta.root, { source_branch: 'a', title: `Other for grp/app#${one.iid}` });
  const mine = await h.mergeRequest(app.id, ta.root, { source_branch: 'b', title: 'Mine', description: `app#${one.iid}` });
  const mine2 = await h.mergeRequest(app.id, ta.root, { source_branch: 'a', title: 'Mine too', description: `grp/app#${one.iid}` });
  assert.deepEqual(
    (await h.issueNotes(one.id)).map((n) => n.body),
    [
      `mentioned in merge request grp2/lib!${fromLib.iid}`,
      `mentioned in merge request other!${fromOther.iid}`,
      `mentioned in merge request !${mine.iid}`,
      `mentioned in merge request !${mine2.iid}`,
    ],
  );
  await h.settle(fromLib, fromOther, mine, mine2);
  assert.deepEqual(await h.related(app.id, one.iid, ta.root), {
    status: 200,
    body: [
      await h.entity(mine, ta.root, `!${mine.iid}`),
      await h.entity(mine2, ta.root, `!${mine2.iid}`),
      await h.entity(fromOther, ta.root, `other!${fromOther.iid}`),
      await h.entity(fromLib, ta.root, `grp2/lib!${fromLib.iid}`),
    ],
    total: '4',
  });
  // the reference's natural order: !2 before !10
  assert.deepEqual(['!10', 'other!1', '!2', 'app!9'].sort(naturalCompare), ['!2', '!10', 'app!9', 'other!1']);
});

test('who may not read the merge request sees neither it nor its note; an author who may not read an issue mentions nothing', async (t) => {
  const ta = await buildTestApp(t);
  const { seed, app } = ta;
  const h = helpers(ta);
  const grp = await seed.group({ path: 'grp', visibility: 'public' });
  const priv = await seed.group({ path: 'priv', visibility: 'private' });
  const project = await repoWithBranches(t, ta, grp, 'app', 'public', []);
  const closed = await seed.project({ namespace: priv, path: 'closed', visibility: 'private' });
  const secret = await repoWithBranches(t, ta, priv, 'secret', 'private', ['a', 'b']);
  const dev = await seed.user({ username: 'dev' });
  const maint = await seed.user({ username: 'maint' });
  const stranger = await seed.user({ username: 'stranger' });
  await seed.member({ project: secret }, dev, 30);
  await seed.member({ project }, maint, 40);
  const D = await h.headersOf(dev);
  const M = await h.headersOf(maint);
  const S = await h.headersOf(stranger);
  const open = await h.issue(project.id, { title: 'Open' });
  const confidential = await h.issue(project.id, { title: 'Confidential', confidential: true });
  const hidden = await h.issue(closed.id, { title: 'Hidden' });

  // dev reads the public issue but neither the confidential one nor the private project's
  const mr = await h.mergeRequest(secret.id, D, {
    source_branch: 'a',
    title: 'Secret work',
    description: `grp/app#${open.iid}, grp/app#${confidential.iid} and priv/closed#${hidden.iid}`,
  });
  const notes = await h.issueNotes(open.id);
  assert.deepEqual(
    notes.map((n) => [n.body, n.author_id]),
    [[`mentioned in merge request priv/secret!${mr.iid}`, dev.id]],
  );
  assert.deepEqual(await h.issueNotes(confidential.id), []);
  assert.deepEqual(await h.issueNotes(hidden.id), []);
  assert.deepEqual(await h.mentionRows(), [{ issue_id: open.id, merge_request_id: mr.id, note_id: notes[0].id }]);

  // the author and administrators see the merge request and the note
  await h.settle(mr);
  assert.deepEqual(await h.related(project.id, open.iid, D), { status: 200, body: [await h.entity(mr, D, `priv/secret!${mr.iid}`)], total: '1' });
  assert.deepEqual(
    (await h.call('GET', `/projects/${project.id}/issues/${open.iid}/notes`, D)).json().map((n: Json) => n.body),
    [`mentioned in merge request priv/secret!${mr.iid}`],
  );
  // a Maintainer of the issue's project, a stranger and an anonymous visitor see neither
  assert.deepEqual(await h.related(project.id, open.iid, {}), { status: 200, body: [], total: '0' });
  for (const who of [M, S]) {
    assert.deepEqual(await h.related(project.id, open.iid, who), { status: 200, body: [], total: '0' });
    assert.deepEqual((await h.call('GET', `/projects/${project.id}/issues/${open.iid}/notes`, who)).json(), []);
    assert.deepEqual((await h.call('GET', `/projects/${project.id}/issues/${open.iid}/discussions`, who)).json(), []);
    const one = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/issues/${open.iid}/notes/${notes[0].id}`, headers: who });
    assert.deepEqual([one.statusCode, one.json()], [404, { message: '404 Note Not Found' }]);
  }

  // who reads the confidential issue mentions it: the note is on the confidential issue, which only its readers see
  await seed.member({ project: secret }, maint, 30);
  const second = await h.mergeRequest(secret.id, M, { source_branch: 'b', title: 'More', description: `grp/app#${confidential.iid}` });
  assert.deepEqual(
    (await h.issueNotes(confidential.id)).map((n) => [n.body, n.author_id]),
    [[`mentioned in merge request priv/secret!${second.iid}`, maint.id]],
  );
  assert.deepEqual(
    (await h.related(project.id, confidential.iid, M)).body.map((m: Json) => m.id),
    [second.id],
  );
  // dev reads the merge request but not the issue
  const denied = await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/issues/${confidential.iid}/related_merge_requests`, headers: D });
  assert.deepEqual([denied.statusCode, denied.json()], [404, { message: '404 Not found' }]);

  // moved to another project, the copy keeps its mentions: the copied note, hidden from the same viewers
  const elsewhere = await seed.project({ namespace: grp, path: 'elsewhere', visibility: 'public' });
  const moved = (await h.call('POST', `/projects/${project.id}/issues/${open.iid}/move`, ta.root, { to_project_id: elsewhere.id }, 201)).json() as Json;
  const movedNote = (await h.issueNotes(moved.id)).find((n) => n.body === `mentioned in merge request priv/secret!${mr.iid}`);
  assert.ok(movedNote);
  assert.deepEqual(
    (await h.mentionRows()).filter((r) => r.issue_id === moved.id),
    [{ issue_id: moved.id, merge_request_id: mr.id, note_id: movedNote.id }],
  );
  assert.deepEqual(
    (await h.related(elsewhere.id, moved.iid, D)).body.map((m: Json) => m.id),
    [mr.id],
  );
  assert.deepEqual(await h.related(elsewhere.id, moved.iid, S), { status: 200, body: [], total: '0' });
  assert.ok(!(await h.call('GET', `/projects/${elsewhere.id}/issues/${moved.iid}/notes`, S)).json().some((n: Json) => n.id === movedNote.id));
  assert.ok((await h.call('GET', `/projects/${elsewhere.id}/issues/${moved.iid}/notes`, D)).json().some((n: Json) => n.id === movedNote.id));

  // the issue page lists what the viewer may read
  const devPage = await webGet(app, `/grp/app/-/issues/${open.iid}`, await webSignIn(app, 'dev'));
  assert.equal(devPage.statusCode, 200);
  const section = (body: string) =>
    body.slice(body.indexOf('id="related-merge-requests"'), body.indexOf('</section>', body.indexOf('id="related-merge-requests"')));
  assert.match(
    section(devPage.body),
    new RegExp(
      `<span class="Counter ml-1">1</span>[\\s\\S]*<li class="Box-row py-2 d-flex flex-items-center related-merge-request"><span class="Label Label--success mr-2">Open</span><a class="Link--primary flex-auto min-width-0" href="/priv/secret/-/merge_requests/${mr.iid}">Secret work</a><span class="f6 color-fg-muted ml-2 text-mono">priv/secret!${mr.iid}</span></li>`,
    ),
  );
  assert.match(devPage.body, new RegExp(`mentioned in merge request <a [^>]*href="${EXTERNAL_URL}/priv/secret/-/merge_requests/${mr.iid}"`));
  const strangerPage = await webGet(app, `/grp/app/-/issues/${open.iid}`, await webSignIn(app, 'stranger'));
  assert.equal(strangerPage.statusCode, 200);
  assert.match(section(strangerPage.body), /No merge request mentions or closes this issue yet\./);
  assert.doesNotMatch(strangerPage.body, /mentioned in merge request/);
});
