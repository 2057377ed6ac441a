// Issue pages: the list (tabs with counts, filters, rows, pages, the New issue button by role), the new issue
// form (metadata only for those who may set it, errors re-rendered with what was typed, the CSRF check), the
// issue page (description, discussion, sidebar, Close / Reopen by role, comments, linked issues) and the
// confidential issue that a guest, a stranger and an anonymous visitor never see — in the list, on its page,
// in the search or through a form. Each checked against the rows afterwards.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp } from '../helpers/build-app.ts';
import { webGet, webPost, webSignIn, type WebSession } from '../helpers/web.ts';

async function setup(t: Parameters<typeof buildTestApp>[0]) {
  const ta = await buildTestApp(t);
  const { seed, c, app } = ta;
  const tag = Math.random().toString(36).slice(2, 7);
  const mae = await seed.user({ name: 'Mae Maintainer', username: `mae${tag}` });
  const rita = await seed.user({ name: 'Rita Reporter', username: `rita${tag}` });
  const gus = await seed.user({ name: 'Gus Guest', username: `gus${tag}` });
  const stan = await seed.user({ name: 'Stan Stranger', username: `stan${tag}` });
  const group = await seed.group({ visibility: 'public', path: `grp-${tag}` });
  const { project } = await seed.repoProject({ namespace: group, visibility: 'public', path: 'app' });
  await seed.member({ project }, mae, 40);
  await seed.member({ project }, rita, 20);
  await seed.member({ project }, gus, 10);
  const full = `${group.full_path}/app`;
  const tokens = { mae: (await seed.token(mae)).headers, gus: (await seed.token(gus)).headers };
  const api = async (who: Record<string, string>, method: 'POST' | 'PUT', url: string, payload: Record<string, unknown>) => {
    const r = await app.inject({ method, url: `/api/v4/projects/${project.id}${url}`, headers: who, payload });
    assert.ok(r.statusCode === 201 || r.statusCode === 200, r.body);
    return r.json() as Record<string, any>;
  };
  const bug = await api(tokens.mae, 'POST', '/labels', { name: 'bug', color: '#d9534f' });
  const ui = await api(tokens.mae, 'POST', '/labels', { name: 'ui', color: '#f0f0f0' });
  const v1 = await api(tokens.mae, 'POST', '/milestones', { title: 'v1' });
  const issue = (who: Record<string, string>, attrs: Record<string, unknown>) => api(who, 'POST', '/issues', attrs);
  const issueRow = (iid: number) =>
    c.db.kysely.selectFrom('issues').selectAll().where('project_id', '=', project.id).where('iid', '=', iid).executeTakeFirstOrThrow();
  const count = async () =>
    Number(
      (
        await c.db.kysely
          .selectFrom('issues')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('project_id', '=', project.id)
          .executeTakeFirstOrThrow()
      ).n,
    );
  return { ...ta, mae, rita, gus, stan, group, project, full, tokens, api, issue, issueRow, count, labels: { bug, ui }, v1 };
}

/** The ids of the issue rows of a list page, in their order. */
const listed = (html: string) => [...html.matchAll(/<li class="Box-row[^"]*" id="issue_(\d+)"/g)].map((m) => Number(m[1]));
/** The page with the flash a redirect left. */
const followFlash = (s: { app: Parameters<typeof webGet>[0] }, res: LightMyRequestResponse, sess: WebSession) =>
  s.app.inject({
    method: 'GET',
    url: String(res.headers.location),
    headers: { cookie: `${sess.cookie}; ${String(res.headers['set-cookie']).split(';')[0]}` },
  });

test('the list: Open / Closed / All with counts, the filters, the rows, and confidential issues only for those who may read them', async (t) => {
  const s = await setup(t);
  const a = await s.issue(s.tokens.mae, {
    title: 'Crash on start',
    labels: 'bug,ui',
    milestone_id: s.v1.id,
    assignee_ids: [s.rita.id],
    due_date: '2030-01-02',
  });
  const b = await s.issue(s.tokens.gus, { title: 'Polish the widget', description: 'widget body' });
  const secret = await s.issue(s.tokens.mae, { title: 'Secret plan', confidential: true });
  const old = await s.issue(s.tokens.mae, { title: 'Old thing' });
  await s.api(s.tokens.mae, 'PUT', `/issues/${old.iid}`, { state_event: 'close' });
  await s.app.inject({ method: 'POST', url: `/api/v4/projects/${s.project.id}/issues/${a.iid}/notes`, headers: s.tokens.mae, payload: { body: 'first' } });
  const base = `/${s.full}/-/issues`;
  const rita = await webSignIn(s.app, s.rita.username);
  const gus = await webSignIn(s.app, s.gus.username);

  const open = await webGet(s.app, base, rita);
  assert.equal(open.statusCode, 200, open.body.slice(0, 500));
  assert.deepEqual(listed(open.body), [secret.id, b.id, a.id]);
  assert.match(open.body, /<h1 class="h2 flex-auto">Issues<\/h1>/);
  assert.match(open.body, /Open<span class="Counter">3<\/span>/);
  assert.match(open.body, /Closed<span class="Counter">1<\/span>/);
  assert.match(open.body, /All<span class="Counter">4<\/span>/);
  assert.match(open.body, new RegExp(`<a class="btn btn-primary" href="${base}/new">\\s*New issue\\s*</a>`));
  // the tab bar: Issues is the current tab, with the open issues the viewer reads
  assert.match(open.body, new RegExp(`<a class="UnderlineNav-item" href="${base}" aria-current="page">Issues<span class="Counter">3</span></a>`));
  // a row: title link, #iid, labels in their colours (readable text), milestone, due date, assignee, comments
  const row = open.body.slice(open.body.indexOf(`id="issue_${a.id}"`), open.body.indexOf('</li>', open.body.indexOf(`id="issue_${a.id}"`)));
  assert.match(row, new RegExp(`<a class="Link--primary text-bold mr-1" href="${base}/${a.iid}">Crash on start</a>`));
  assert.match(row, /<span>#1<\/span> · opened <time/);
  assert.match(row, /style="background-color:#d9534f;color:#000000;border-color:transparent"[^>]*>bug<\/span>/);
  assert.match(row, /style="background-color:#f0f0f0;color:#000000;border-color:transparent"[^>]*>ui<\/span>/);
  assert.match(row, /Milestone: v1/);
  assert.match(row, /Due 2030-01-02/);
  assert.match(row, /<span class="sr-only">Assigned to Rita Reporter<\/span>/);
  assert.match(row, /aria-label="1 comment"/);
  assert.match(open.body, /<span class="Label Label--attention mr-1"[^>]*>\s*Confidential\s*<\/span>\s*<a[^>]*>Secret plan<\/a>/);

  assert.deepEqual(listed((await webGet(s.app, `${base}?state=closed`, rita)).body), [old.id]);
  assert.deepEqual(listed((await webGet(s.app, `${base}?state=all`, rita)).body), [old.id, secret.id, b.id, a.id]);
  assert.deepEqual(listed((await webGet(s.app, `${base}?labels=bug`, rita)).body), [a.id]);
  assert.deepEqual(listed((await webGet(s.app, `${base}?labels=bug,ui`, rita)).body), [a.id]);
  assert.deepEqual(listed((await webGet(s.app, `${base}?labels=None`, rita)).body), [secret.id, b.id]);
  assert.deepEqual(listed((await webGet(s.app, `${base}?author_username=${s.gus.username}`, rita)).body), [b.id]);
  assert.deepEqual(listed((await webGet(s.app, `${base}?assignee_username=${s.rita.username}`, rita)).body), [a.id]);
  assert.deepEqual(listed((await webGet(s.app, `${base}?milestone=v1`, rita)).body), [a.id]);
  assert.deepEqual(listed((await webGet(s.app, `${base}?search=widget`, rita)).body), [b.id]);
  assert.deepEqual(listed((await webGet(s.app, `${base}?confidential=yes`, rita)).body), [secret.id]);
  assert.deepEqual(listed((await webGet(s.app, `${base}?confidential=no`, rita)).body), [b.id, a.id]);
  assert.deepEqual(listed((await webGet(s.app, `${base}?sort=title_asc&state=all`, rita)).body), [a.id, old.id, b.id, secret.id]);
  assert.deepEqual(listed((await webGet(s.app, `${base}?author_username=nobody-at-all`, rita)).body), []);
  // the counts follow the filters; the tab bar's count does not
  const filtered = await webGet(s.app, `${base}?labels=bug`, rita);
  assert.match(filtered.body, /Open<span class="Counter">1<\/span>/);
  assert.match(filtered.body, /aria-current="page">Issues<span class="Counter">3<\/span>/);
  assert.match(filtered.body, /<a class="btn btn-sm btn-invisible ml-1" href="[^"]*issues\?state=opened">\s*Clear\s*<\/a>/);
  // the filters keep their values, and the state tabs keep the filters
  assert.match(filtered.body, /<input class="form-control input-sm" type="text" id="issue-labels" name="labels" value="bug"/);
  assert.match(filtered.body, new RegExp(`href="${base}\\?state=closed&amp;labels=bug">Closed<span class="Counter">0</span>`));
  // nonsense parameters are not errors
  assert.equal((await webGet(s.app, `${base}?state=bogus&sort=nope&page=-4&confidential=maybe`, rita)).statusCode, 200);

  // a guest, a stranger and an anonymous visitor: the confidential issue is not in the list, its title nowhere
  const stan = await webSignIn(s.app, s.stan.username);
  for (const [who, sess] of [
    ['guest', gus],
    ['stranger', stan],
    ['anonymous', null],
  ] as const) {
    const page = await webGet(s.app, base, sess);
    assert.equal(page.statusCode, 200, who);
    assert.deepEqual(listed(page.body), [b.id, a.id], who);
    assert.match(page.body, /Open<span class="Counter">2<\/span>/, who);
    assert.match(page.body, /All<span class="Counter">3<\/span>/, who);
    assert.doesNotMatch(page.body, /Secret plan/, who);
    assert.deepEqual(listed((await webGet(s.app, `${base}?confidential=yes`, sess)).body), [], who);
    assert.deepEqual(listed((await webGet(s.app, `${base}?search=secret`, sess)).body), [], who);
  }
  // who may create issues (the domain says: anyone signed in on a public project), never the anonymous
  assert.match((await webGet(s.app, base, gus)).body, />\s*New issue\s*</);
  assert.match((await webGet(s.app, base, stan)).body, />\s*New issue\s*</);
  assert.doesNotMatch((await webGet(s.app, base)).body, />\s*New issue\s*</);
});

test("the project's tab bar has Issues with the open count the viewer reads; a project whose issues are off has none and answers 403", async (t) => {
  const s = await setup(t);
  await s.issue(s.tokens.mae, { title: 'Visible' });
  await s.issue(s.tokens.mae, { title: 'Hidden', confidential: true });
  const rita = await webSignIn(s.app, s.rita.username);
  const tab = (n: number) => new RegExp(`<a class="UnderlineNav-item" href="/${s.full}/-/issues">Issues<span class="Counter">${n}</span></a>`);
  assert.match((await webGet(s.app, `/${s.full}`, rita)).body, tab(2));
  assert.match((await webGet(s.app, `/${s.full}`)).body, tab(1));
  assert.match((await webGet(s.app, `/${s.full}/-/branches`)).body, tab(1));

  const row = await s.c.db.kysely.selectFrom('projects').select('settings').where('id', '=', s.project.id).executeTakeFirstOrThrow();
  await s.c.db.kysely
    .updateTable('projects')
    .set({ settings: JSON.stringify({ ...JSON.parse(row.settings || '{}'), issues_access_level: 'disabled' }) })
    .where('id', '=', s.project.id)
    .execute();
  const home = await webGet(s.app, `/${s.full}`, rita);
  assert.equal(home.statusCode, 200);
  assert.doesNotMatch(home.body, />Issues<span/);
  assert.equal((await webGet(s.app, `/${s.full}/-/issues`, rita)).statusCode, 403);
  assert.equal((await webGet(s.app, `/${s.full}/-/issues/1`, rita)).statusCode, 404);
  assert.equal((await webGet(s.app, `/${s.full}/-/issues/new`, rita)).statusCode, 403);
});

test('pages of the list: twenty issues a page, Next and Previous', async (t) => {
  const s = await setup(t);
  const ids: number[] = [];
  for (let i = 1; i <= 22; i++) ids.push((await s.issue(s.tokens.mae, { title: `Issue number ${i}` })).id);
  const base = `/${s.full}/-/issues`;
  const first = await webGet(s.app, base);
  assert.deepEqual(listed(first.body), ids.slice(2).reverse());
  assert.match(first.body, new RegExp(`<a class="next_page" rel="next" href="${base}\\?page=2">`));
  const second = await webGet(s.app, `${base}?page=2`);
  assert.deepEqual(listed(second.body), ids.slice(0, 2).reverse());
  assert.match(second.body, /<span class="next_page" aria-disabled="true">/);
  assert.match(second.body, /Open<span class="Counter">22<\/span>/);
});

test('the new issue form: metadata for Reporters, a created issue with a flash; errors re-rendered with what was typed; CSRF refused', async (t) => {
  const s = await setup(t);
  const rita = await webSignIn(s.app, s.rita.username);
  const form = await webGet(s.app, `/${s.full}/-/issues/new`, rita);
  assert.equal(form.statusCode, 200, form.body.slice(0, 300));
  assert.match(form.body, /<h1 class="h2 mb-3">New issue<\/h1>/);
  assert.match(form.body, new RegExp(`<form method="post" action="/-/p/${s.project.id}/issues" id="new_issue"`));
  assert.match(form.body, /<label class="FormControl-label" for="issue_title">\s*Title\s*<\/label>/);
  assert.match(form.body, /<label class="FormControl-label" for="issue_description">\s*Description\s*<\/label>/);
  assert.match(form.body, />\s*Preview\s*<\/button>/);
  assert.match(form.body, /<input type="checkbox" id="issue_confidential" name="confidential" value="1">/);
  assert.match(form.body, /<input type="checkbox" id="issue_label_0" name="labels" value="bug">/);
  assert.match(form.body, /<input type="checkbox" id="issue_label_1" name="labels" value="ui">/);
  assert.match(form.body, new RegExp(`<option value="${s.v1.id}">v1</option>`));
  assert.match(form.body, new RegExp(`name="assignee_ids" value="${s.mae.id}">`));
  assert.match(form.body, /<input class="form-control FormControl-input" type="date" id="issue_due_date" name="due_date" value="">/);

  const action = `/-/p/${s.project.id}/issues`;
  const created = await webPost(s.app, action, rita, {
    title: 'Login button is <b>grey</b>',
    description: 'Steps:\n\n1. *open*',
    labels: ['bug', 'ui'],
    milestone_id: String(s.v1.id),
    assignee_ids: [String(s.mae.id)],
    due_date: '2031-05-06',
    confidential: '1',
  });
  assert.equal(created.statusCode, 303, created.body.slice(0, 500));
  assert.equal(created.headers.location, `/${s.full}/-/issues/1`);
  const row = await s.issueRow(1);
  assert.equal(row.title, 'Login button is <b>grey</b>');
  assert.equal(row.description, 'Steps:\n\n1. *open*');
  assert.equal(row.author_id, s.rita.id);
  assert.equal(row.milestone_id, s.v1.id);
  assert.equal(row.due_date, '2031-05-06');
  assert.equal(row.confidential, 1);
  const labels = await s.c.db.kysely
    .selectFrom('issue_labels')
    .innerJoin('labels', 'labels.id', 'issue_labels.label_id')
    .select('labels.title')
    .where('issue_id', '=', row.id)
    .orderBy('labels.title')
    .execute();
  assert.deepEqual(
    labels.map((l) => l.title),
    ['bug', 'ui'],
  );
  const assignees = await s.c.db.kysely.selectFrom('issue_assignees').select('user_id').where('issue_id', '=', row.id).execute();
  assert.deepEqual(
    assignees.map((a) => a.user_id),
    [s.mae.id],
  );
  const shown = await followFlash(s, created, rita);
  assert.equal(shown.statusCode, 200);
  assert.match(shown.body, /The issue was created\./);
  assert.match(shown.body, /Login button is &lt;b&gt;grey&lt;\/b&gt;/);

  // a blank title: 422, nothing created, everything typed kept
  const before = await s.count();
  const blank = await webPost(s.app, action, rita, {
    title: '  ',
    description: 'kept <text>',
    labels: ['ui'],
    milestone_id: String(s.v1.id),
    due_date: '2031-01-01',
    confidential: '1',
  });
  assert.equal(blank.statusCode, 422);
  assert.match(blank.body, /The form contains 1 error:/);
  assert.match(blank.body, /<li>Title can&#39;t be blank<\/li>/);
  assert.match(blank.body, /kept &lt;text&gt;<\/textarea>/);
  assert.match(blank.body, /<input type="checkbox" id="issue_label_1" name="labels" value="ui" checked>/);
  assert.match(blank.body, /<input type="checkbox" id="issue_label_0" name="labels" value="bug">/);
  assert.match(blank.body, new RegExp(`<option value="${s.v1.id}" selected>v1</option>`));
  assert.match(blank.body, /name="due_date" value="2031-01-01"/);
  assert.match(blank.body, /id="issue_confidential" name="confidential" value="1" checked>/);
  assert.equal(await s.count(), before);
  // a date that is none
  const badDate = await webPost(s.app, action, rita, { title: 'Dated', due_date: '2031-02-30' });
  assert.equal(badDate.statusCode, 422);
  assert.match(badDate.body, /<li>Due date is not a date \(YYYY-MM-DD\)<\/li>/);
  assert.match(badDate.body, /id="issue_title" name="title" value="Dated"/);
  assert.equal(await s.count(), before);

  // no CSRF token: the 422 page, nothing created
  const forged = await s.app.inject({ method: 'POST', url: action, headers: { cookie: rita.cookie }, payload: { title: 'Forged' } });
  assert.equal(forged.statusCode, 422);
  assert.match(forged.body, /authenticity token/);
  const wrong = await s.app.inject({ method: 'POST', url: action, headers: { cookie: rita.cookie }, payload: { title: 'Forged', authenticity_token: 'x' } });
  assert.equal(wrong.statusCode, 422);
  assert.equal(await s.count(), before);

  // anonymous: off to sign in
  const anon = await webGet(s.app, `/${s.full}/-/issues/new`);
  assert.equal(anon.statusCode, 302);
  assert.match(String(anon.headers.location), /^\/users\/sign_in\?redirect_to=/);
});

test("a guest's new issue form asks no metadata, and metadata they send anyway is not kept", async (t) => {
  const s = await setup(t);
  const gus = await webSignIn(s.app, s.gus.username);
  const form = await webGet(s.app, `/${s.full}/-/issues/new`, gus);
  assert.equal(form.statusCode, 200);
  assert.match(form.body, /id="issue_title"/);
  assert.match(form.body, /id="issue_confidential"/);
  assert.doesNotMatch(form.body, /name="labels"|name="milestone_id"|name="assignee_ids"|name="due_date"/);
  const res = await webPost(s.app, `/-/p/${s.project.id}/issues`, gus, {
    title: 'From a guest',
    labels: ['bug'],
    milestone_id: String(s.v1.id),
    assignee_ids: [String(s.gus.id)],
    due_date: '2031-01-01',
  });
  assert.equal(res.statusCode, 303);
  const row = await s.issueRow(1);
  assert.equal(row.title, 'From a guest');
  assert.equal(row.milestone_id, null);
  assert.equal(row.due_date, null);
  assert.deepEqual(await s.c.db.kysely.selectFrom('issue_labels').selectAll().where('issue_id', '=', row.id).execute(), []);
  assert.deepEqual(await s.c.db.kysely.selectFrom('issue_assignees').selectAll().where('issue_id', '=', row.id).execute(), []);
});

test('the issue page: description, sidebar, discussion in order; comment, close and reopen by role, with flashes', async (t) => {
  const s = await setup(t);
  const other = await s.issue(s.tokens.mae, { title: 'Another one' });
  const a = await s.issue(s.tokens.mae, {
    title: 'Crash on start',
    description: 'It **crashes** <script>alert(1)</script>',
    labels: 'bug',
    milestone_id: s.v1.id,
    assignee_ids: [s.rita.id],
    due_date: '2030-01-02',
  });
  await s.api(s.tokens.mae, 'POST', `/issues/${a.iid}/time_estimate`, { duration: '1d2h' });
  await s.api(s.tokens.mae, 'POST', `/issues/${a.iid}/add_spent_time`, { duration: '3h' });
  const path = `/${s.full}/-/issues/${a.iid}`;
  const one = `/-/p/${s.project.id}/issues/${a.iid}`;
  const gus = await webSignIn(s.app, s.gus.username);
  const rita = await webSignIn(s.app, s.rita.username);

  const page = await webGet(s.app, path, rita);
  assert.equal(page.statusCode, 200, page.body.slice(0, 500));
  assert.match(page.body, /<title>Crash on start \(#2\) · Issues · /);
  assert.match(page.body, /<h1 class="h2 issue-title">\s*Crash on start <span class="color-fg-muted text-normal">#2<\/span>\s*<\/h1>/);
  assert.match(page.body, /<span class="Label Label--success Label--large mr-2">Open<\/span>/);
  assert.match(page.body, /It <strong>crashes<\/strong>/);
  assert.doesNotMatch(page.body, /<script>alert\(1\)/);
  // the sidebar
  const sidebar = page.body.slice(page.body.indexOf('<aside class="issue-sidebar"'), page.body.indexOf('</aside>'));
  assert.match(
    sidebar,
    /id="sidebar-assignees">Assignees<\/h2><ul class="list-style-none"><li class="mb-1"><a class="Link--primary" href="\/rita[^"]*">.*Rita Reporter<\/a>/,
  );
  assert.match(sidebar, /background-color:#d9534f[^>]*>bug<\/span>/);
  assert.match(sidebar, new RegExp(`<a href="/${s.full}/-/milestones/\\d+" class="f6">\\s*v1\\s*</a>`));
  assert.match(sidebar, /<p class="f6 mb-0">2030-01-02<\/p>/);
  assert.match(sidebar, /<dt>Estimate<\/dt><dd>1d 2h<\/dd><dt>Spent<\/dt><dd>3h<\/dd>/);
  assert.match(sidebar, /Not confidential: everyone who can see the project can see this issue\./);
  assert.match(sidebar, /id="sidebar-participants">2 participants<\/h2>/);
  assert.match(sidebar, /No linked issues/);
  assert.match(page.body, /Related merge requests[\s\S]*No merge request mentions or closes this issue yet\./);
  // a Reporter may close it; a guest who is neither its author nor an assignee may not
  assert.match(page.body, new RegExp(`<form method="post" action="${one}/close"[^>]*>.*<button type="submit" class="btn">\\s*Close issue\\s*</button>`, 's'));
  const guestPage = await webGet(s.app, path, gus);
  assert.equal(guestPage.statusCode, 200);
  assert.doesNotMatch(guestPage.body, /Close issue/);
  assert.match(guestPage.body, new RegExp(`action="${one}/notes"`));
  const anonPage = await webGet(s.app, path);
  assert.equal(anonPage.statusCode, 200);
  assert.doesNotMatch(anonPage.body, /Close issue|action="[^"]*\/notes"/);
  assert.match(anonPage.body, /Sign in<\/a> to comment\./);
  // a guest's forged close: the 403 page, still open
  assert.equal((await webPost(s.app, `${one}/close`, gus)).statusCode, 403);
  assert.equal((await s.issueRow(a.iid)).state, 'opened');

  // comments
  const comment = await webPost(s.app, `${one}/notes`, gus, { body: 'Same *here* <img src=x onerror=alert(1)>' });
  assert.equal(comment.statusCode, 303);
  const note = await s.c.db.kysely
    .selectFrom('notes')
    .selectAll()
    .where('noteable_type', '=', 'Issue')
    .where('noteable_id', '=', a.id)
    .where('system', '=', 0)
    .executeTakeFirstOrThrow();
  assert.equal(note.author_id, s.gus.id);
  assert.equal(comment.headers.location, `${path}#note_${note.id}`);
  const withFlash = await followFlash(s, comment, gus);
  assert.match(withFlash.body, /Your comment was added\./);
  assert.match(withFlash.body, new RegExp(`<li id="note_${note.id}" class="note Box mb-2">`));
  assert.match(withFlash.body, /Same <em>here<\/em>/);
  assert.doesNotMatch(withFlash.body, /<img src=x onerror/);
  const blank = await webPost(s.app, `${one}/notes`, gus, { body: '   ' });
  assert.equal(blank.statusCode, 422);
  assert.match(blank.body, /<div class="flash flash-error mb-2" role="alert">\s*Comment can&#39;t be blank\s*<\/div>/);
  assert.match(blank.body, /<h1 class="h2 issue-title">/);

  // close, then reopen, as the Reporter; the discussion shows both, oldest first
  const close = await webPost(s.app, `${one}/close`, rita);
  assert.equal(close.statusCode, 303);
  assert.equal(close.headers.location, path);
  assert.equal((await s.issueRow(a.iid)).state, 'closed');
  const closed = await followFlash(s, close, rita);
  assert.match(closed.body, /The issue was closed\./);
  assert.match(closed.body, /<span class="Label Label--danger Label--large mr-2">Closed<\/span>/);
  assert.match(closed.body, /closed by <a class="Link--primary" href="\/rita[^"]*">Rita Reporter<\/a>/);
  assert.match(closed.body, />\s*Reopen issue\s*<\/button>/);
  const reopen = await webPost(s.app, `${one}/reopen`, rita);
  assert.equal(reopen.statusCode, 303);
  assert.match((await followFlash(s, reopen, rita)).body, /The issue was reopened\./);
  assert.equal((await s.issueRow(a.iid)).state, 'opened');
  const final = (await webGet(s.app, path, rita)).body;
  const order = [...final.matchAll(/<li id="note_(\d+)" class="note (note-system|Box)/g)].map((m) => m[2]);
  assert.deepEqual(order, ['Box', 'note-system', 'note-system']);
  const systemTexts = [
    ...final.matchAll(/<li id="note_\d+" class="note note-system[^>]*><span class="text-bold">([^<]+)<\/span> <div class="markdown-body"><p>([^<]+)<\/p>/g),
  ].map((m) => `${m[1]} ${m[2]}`);
  assert.deepEqual(systemTexts, ['Rita Reporter closed', 'Rita Reporter reopened']);
  assert.match(final, /id="sidebar-participants">3 participants<\/h2>/);
  // the author may close their own issue, as a guest
  const own = await s.issue(s.tokens.gus, { title: 'Mine' });
  assert.match((await webGet(s.app, `/${s.full}/-/issues/${own.iid}`, gus)).body, /Close issue/);
  // an issue that does not exist, a nonsense iid
  assert.equal((await webGet(s.app, `/${s.full}/-/issues/999`, rita)).statusCode, 404);
  assert.equal((await webGet(s.app, `/${s.full}/-/issues/x1`, rita)).statusCode, 404);
  assert.ok(other);
});

test('a confidential issue is the 404 page for a guest, a stranger and the anonymous, on its page and through its forms', async (t) => {
  const s = await setup(t);
  const secret = await s.issue(s.tokens.mae, { title: 'Secret plan', description: 'the secret', confidential: true });
  const mine = await s.issue(s.tokens.gus, { title: 'My own secret', confidential: true });
  const path = `/${s.full}/-/issues/${secret.iid}`;
  const one = `/-/p/${s.project.id}/issues/${secret.iid}`;
  const gus = await webSignIn(s.app, s.gus.username);
  const stan = await webSignIn(s.app, s.stan.username);
  const rita = await webSignIn(s.app, s.rita.username);

  const seen = await webGet(s.app, path, rita);
  assert.equal(seen.statusCode, 200);
  assert.match(seen.body, /<span class="Label Label--attention mr-1"[^>]*>\s*Confidential\s*<\/span>/);
  assert.match(seen.body, /Confidential: only project members with at least the Reporter role, the author and assignees can see this issue\./);
  for (const [who, sess] of [
    ['guest', gus],
    ['stranger', stan],
    ['anonymous', null],
  ] as const) {
    const page = await webGet(s.app, path, sess);
    assert.equal(page.statusCode, 404, who);
    assert.doesNotMatch(page.body, /Secret plan|the secret/, who);
  }
  for (const sess of [gus, stan]) {
    assert.equal((await webPost(s.app, `${one}/notes`, sess, { body: 'peek' })).statusCode, 404);
    assert.equal((await webPost(s.app, `${one}/close`, sess)).statusCode, 404);
    assert.equal((await webPost(s.app, `${one}/links`, sess, { issue: `#${mine.iid}` })).statusCode, 404);
  }
  assert.equal((await s.issueRow(secret.iid)).state, 'opened');
  assert.equal((await s.issueRow(secret.iid)).user_notes_count, 0);
  // its author (a guest) reads their own
  const own = await webGet(s.app, `/${s.full}/-/issues/${mine.iid}`, gus);
  assert.equal(own.statusCode, 200);
  assert.match(own.body, /My own secret/);
  // the search: the confidential issue for the Reporter only
  const search = (sess: WebSession | null) => webGet(s.app, `/search?search=secret&project_id=${s.project.id}&scope=issues`, sess);
  const forRita = await search(rita);
  assert.match(forRita.body, new RegExp(`<a class="text-bold" href="${path}">\\s*Secret plan\\s*</a>`));
  assert.match(forRita.body, /#1 · open · confidential/);
  for (const sess of [stan, null]) assert.doesNotMatch((await search(sess)).body, /Secret plan/);
  // the instance's search names the issue's project
  const everywhere = await webGet(s.app, '/search?search=secret&scope=issues', rita);
  assert.match(everywhere.body, /<a class="UnderlineNav-item" href="[^"]*scope=issues" aria-current="page">Issues<\/a>/);
  assert.match(everywhere.body, new RegExp(`${s.full}#1 · open · confidential`));
  assert.doesNotMatch((await webGet(s.app, '/search?search=secret&scope=issues', gus)).body, /Secret plan/);
});

test('linked issues: link by #iid, by group/project#iid and by URL, refusals as flashes, and remove', async (t) => {
  const s = await setup(t);
  const a = await s.issue(s.tokens.mae, { title: 'Source' });
  const b = await s.issue(s.tokens.mae, { title: 'Blocked one' });
  const { project: otherProject } = await s.seed.repoProject({ namespace: s.group, visibility: 'public', path: 'lib' });
  await s.seed.member({ project: otherProject }, s.rita, 20);
  const otherIssue = await s.app.inject({
    method: 'POST',
    url: `/api/v4/projects/${otherProject.id}/issues`,
    headers: (await s.seed.token(s.rita)).headers,
    payload: { title: 'In the library' },
  });
  assert.equal(otherIssue.statusCode, 201);
  const path = `/${s.full}/-/issues/${a.iid}`;
  const one = `/-/p/${s.project.id}/issues/${a.iid}`;
  const rita = await webSignIn(s.app, s.rita.username);
  const links = () => s.c.db.kysely.selectFrom('issue_links').selectAll().orderBy('id').execute();

  const page = await webGet(s.app, path, rita);
  assert.match(page.body, new RegExp(`<form method="post" action="${one}/links" class="mt-2" id="link-issue"`));
  const linked = await webPost(s.app, `${one}/links`, rita, { issue: `#${b.iid}`, link_type: 'blocks' });
  assert.equal(linked.statusCode, 303);
  assert.equal(linked.headers.location, `${path}#linked-issues`);
  assert.match((await followFlash(s, linked, rita)).body, /The issue was linked\./);
  const cross = await webPost(s.app, `${one}/links`, rita, { issue: 'lib#1' });
  assert.equal(cross.statusCode, 303);
  assert.match((await followFlash(s, cross, rita)).body, /The issue was linked\./);
  assert.equal((await links()).length, 2);
  // the same issue by its full reference: already linked
  const full = await webPost(s.app, `${one}/links`, rita, { issue: `${s.group.full_path}/lib#1` });
  assert.match((await followFlash(s, full, rita)).body, /Issue\(s\) already assigned/);
  const shown = (await webGet(s.app, path, rita)).body;
  assert.match(shown, /<h3 class="f6 text-normal color-fg-muted mb-1">Blocks<\/h3>/);
  assert.match(shown, new RegExp(`<a href="/${s.full}/-/issues/${b.iid}">Blocked one</a> <span class="color-fg-muted">#${b.iid}</span>`));
  assert.match(
    shown,
    new RegExp(`<a href="/${s.group.full_path}/lib/-/issues/1">In the library</a> <span class="color-fg-muted">${s.group.full_path}/lib#1</span>`),
  );
  // the other side sees the link from its side
  assert.match((await webGet(s.app, `/${s.full}/-/issues/${b.iid}`, rita)).body, /<h3 class="f6 text-normal color-fg-muted mb-1">Is blocked by<\/h3>/);

  // refusals: the same pair again, an unknown issue, nonsense, itself
  const again = await webPost(s.app, `${one}/links`, rita, { issue: `http://hearth.test/${s.full}/-/issues/${b.iid}` });
  assert.equal(again.statusCode, 303);
  assert.match(String(again.headers['set-cookie']), /alert/);
  assert.match((await followFlash(s, again, rita)).body, /Issue\(s\) already assigned/);
  const unknown = await webPost(s.app, `${one}/links`, rita, { issue: '#999' });
  assert.match((await followFlash(s, unknown, rita)).body, /No matching issue found\. Make sure that you are adding a valid issue URL\./);
  const nonsense = await webPost(s.app, `${one}/links`, rita, { issue: 'not an issue' });
  assert.match((await followFlash(s, nonsense, rita)).body, /Name the issue to link as #12, group\/project#12 or its URL\./);
  const self = await webPost(s.app, `${one}/links`, rita, { issue: `#${a.iid}` });
  assert.match((await followFlash(s, self, rita)).body, /Source cannot be related to itself/);
  assert.equal((await links()).length, 2);

  // remove
  const [first] = await links();
  const removed = await webPost(s.app, `${one}/links/${first!.id}/remove`, rita);
  assert.equal(removed.statusCode, 303);
  assert.match((await followFlash(s, removed, rita)).body, /The link was removed\./);
  assert.equal((await links()).length, 1);
  // the anonymous see the links but no form
  const anon = (await webGet(s.app, path)).body;
  assert.match(anon, /In the library/);
  assert.doesNotMatch(anon, /id="link-issue"|\/remove"/);
});

test('editing an issue: the form holds what the issue has; saving changes it with system notes; errors kept; only for those who may update it', async (t) => {
  const s = await setup(t);
  const a = await s.issue(s.tokens.mae, {
    title: 'Crash on start',
    description: 'old text',
    labels: 'bug',
    milestone_id: s.v1.id,
    assignee_ids: [s.rita.id],
    due_date: '2030-01-02',
  });
  const edit = `/${s.full}/-/issues/${a.iid}/edit`;
  const one = `/-/p/${s.project.id}/issues/${a.iid}`;
  const rita = await webSignIn(s.app, s.rita.username);
  const gus = await webSignIn(s.app, s.gus.username);

  assert.match((await webGet(s.app, `/${s.full}/-/issues/${a.iid}`, rita)).body, new RegExp(`<a class="btn mr-2" href="${edit}">\\s*Edit\\s*</a>`));
  const form = await webGet(s.app, edit, rita);
  assert.equal(form.statusCode, 200, form.body.slice(0, 300));
  assert.match(form.body, /<h1 class="h2 mb-3">Edit issue #1<\/h1>/);
  assert.match(form.body, new RegExp(`<form method="post" action="${one}" id="edit_issue"`));
  assert.match(form.body, /id="issue_title" name="title" value="Crash on start"/);
  assert.match(form.body, /old text<\/textarea>/);
  assert.match(form.body, /name="labels" value="bug" checked>/);
  assert.match(form.body, /name="labels" value="ui">/);
  assert.match(form.body, new RegExp(`<option value="${s.v1.id}" selected>v1</option>`));
  assert.match(form.body, new RegExp(`name="assignee_ids" value="${s.rita.id}" checked>`));
  assert.match(form.body, /name="due_date" value="2030-01-02"/);
  assert.match(form.body, />\s*Save changes\s*</);

  const blank = await webPost(s.app, one, rita, { title: '', description: 'new text', labels: ['ui'] });
  assert.equal(blank.statusCode, 422);
  assert.match(blank.body, /<li>Title can&#39;t be blank<\/li>/);
  assert.match(blank.body, /new text<\/textarea>/);
  assert.match(blank.body, /name="labels" value="ui" checked>/);
  assert.equal((await s.issueRow(a.iid)).title, 'Crash on start');

  const saved = await webPost(s.app, one, rita, {
    title: 'Crash when starting',
    description: 'new text',
    labels: ['ui'],
    milestone_id: '',
    due_date: '',
    confidential: '1',
  });
  assert.equal(saved.statusCode, 303);
  assert.equal(saved.headers.location, `/${s.full}/-/issues/${a.iid}`);
  const page = await followFlash(s, saved, rita);
  assert.match(page.body, /The issue was updated\./);
  const row = await s.issueRow(a.iid);
  assert.equal(row.title, 'Crash when starting');
  assert.equal(row.description, 'new text');
  assert.equal(row.milestone_id, null);
  assert.equal(row.due_date, null);
  assert.equal(row.confidential, 1);
  const labels = await s.c.db.kysely
    .selectFrom('issue_labels')
    .innerJoin('labels', 'labels.id', 'issue_labels.label_id')
    .select('labels.title')
    .where('issue_id', '=', row.id)
    .execute();
  assert.deepEqual(
    labels.map((l) => l.title),
    ['ui'],
  );
  // no assignee was checked: unassigned
  assert.deepEqual(await s.c.db.kysely.selectFrom('issue_assignees').selectAll().where('issue_id', '=', row.id).execute(), []);
  const system = await s.c.db.kysely
    .selectFrom('notes')
    .select('body')
    .where('noteable_type', '=', 'Issue')
    .where('noteable_id', '=', row.id)
    .where('system', '=', 1)
    .orderBy('id')
    .execute();
  const bodies = system.map((n) => n.body);
  for (const want of [
    /^changed title from \*\*Crash on start\*\* to \*\*Crash when starting\*\*$/,
    /^changed the description$/,
    /^made the issue confidential$/,
    /^removed due date$/,
    /^removed milestone$/,
    /^unassigned @rita/,
  ])
    assert.ok(
      bodies.some((b) => want.test(b)),
      `${want} in ${JSON.stringify(bodies)}`,
    );

  // a guest who is neither author nor assignee: no Edit button, the 403 page, nothing changed; the anonymous sign in
  assert.doesNotMatch((await webGet(s.app, `/${s.full}/-/issues/${a.iid}`, gus)).body, />\s*Edit\s*</);
  assert.equal((await webGet(s.app, edit, gus)).statusCode, 404, 'confidential now: not even found');
  const open = await s.issue(s.tokens.mae, { title: 'Open to all' });
  assert.equal((await webGet(s.app, `/${s.full}/-/issues/${open.iid}/edit`, gus)).statusCode, 403);
  assert.equal((await webPost(s.app, `/-/p/${s.project.id}/issues/${open.iid}`, gus, { title: 'Taken over' })).statusCode, 403);
  assert.equal((await s.issueRow(open.iid)).title, 'Open to all');
  assert.equal((await webGet(s.app, `/${s.full}/-/issues/${open.iid}/edit`)).statusCode, 302);
  // a guest edits their own issue: title and description, no metadata asked
  const own = await s.issue(s.tokens.gus, { title: 'Mine' });
  const ownForm = await webGet(s.app, `/${s.full}/-/issues/${own.iid}/edit`, gus);
  assert.equal(ownForm.statusCode, 200);
  assert.doesNotMatch(ownForm.body, /name="labels"|name="milestone_id"/);
  assert.equal((await webPost(s.app, `/-/p/${s.project.id}/issues/${own.iid}`, gus, { title: 'Mine, renamed' })).statusCode, 303);
  assert.equal((await s.issueRow(own.iid)).title, 'Mine, renamed');
});

test('notifications: an assignee is subscribed and may unsubscribe, then subscribe again; the anonymous get no such block', async (t) => {
  const s = await setup(t);
  const a = await s.issue(s.tokens.mae, { title: 'Watched', assignee_ids: [s.rita.id] });
  const path = `/${s.full}/-/issues/${a.iid}`;
  const one = `/-/p/${s.project.id}/issues/${a.iid}`;
  const rita = await webSignIn(s.app, s.rita.username);
  const subscription = () =>
    s.c.db.kysely.selectFrom('subscriptions').select('subscribed').where('subscribable_type', '=', 'Issue').where('user_id', '=', s.rita.id).executeTakeFirst();

  const page = await webGet(s.app, path, rita);
  assert.match(
    page.body,
    new RegExp(`<form method="post" action="${one}/subscription"[^>]*>.*<input type="hidden" name="subscribed" value="0">.*>\\s*Unsubscribe\\s*</button>`, 's'),
  );
  const off = await webPost(s.app, `${one}/subscription`, rita, { subscribed: '0' });
  assert.equal(off.statusCode, 303);
  assert.match((await followFlash(s, off, rita)).body, /You unsubscribed from the notifications of this issue\./);
  assert.deepEqual(await subscription(), { subscribed: 0 });
  assert.match((await webGet(s.app, path, rita)).body, />\s*Subscribe\s*<\/button>/);
  assert.equal((await webPost(s.app, `${one}/subscription`, rita, { subscribed: '1' })).statusCode, 303);
  assert.deepEqual(await subscription(), { subscribed: 1 });
  assert.doesNotMatch((await webGet(s.app, path)).body, /Notifications|\/subscription"/);
});
