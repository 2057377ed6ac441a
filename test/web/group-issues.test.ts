// A group's issues and boards, and the viewer's issues on the dashboard: the group's list (the project list's tabs,
// counts and filters over every project of the group and its subgroups, each row with its project's reference), the
// Issues and Boards links of the group's navigation, `/dashboard/issues` (assigned to you, created by you), the group
// board (lists, a card moved by its form through the issue service) — and who sees what: a confidential issue never
// reaches a Guest, an outsider or the anonymous, a private project's issues only its members, a private group is the
// 404 page to outsiders.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/build-app.ts';
import { webGet, webPost, webSignIn } from '../helpers/web.ts';

async function setup(t: Parameters<typeof buildTestApp>[0]) {
  const ta = await buildTestApp(t);
  const { seed, app, c } = ta;
  const tag = Math.random().toString(36).slice(2, 7);
  const mae = await seed.user({ name: 'Mae Maintainer', username: `mae${tag}` });
  const rita = await seed.user({ name: 'Rita Reporter', username: `rita${tag}` });
  const gus = await seed.user({ name: 'Gus Guest', username: `gus${tag}` });
  const stan = await seed.user({ name: 'Stan Stranger', username: `stan${tag}` });
  const group = await seed.group({ visibility: 'public', path: `grp-${tag}`, name: 'Crew' });
  const sub = await seed.group({ visibility: 'public', path: 'sub', name: 'Sub', parent: group });
  const other = await seed.group({ visibility: 'public', path: `other-${tag}` });
  const app1 = await seed.project({ namespace: group, visibility: 'public', path: 'app' });
  const lib = await seed.project({ namespace: sub, visibility: 'public', path: 'lib' });
  const hidden = await seed.project({ namespace: group, visibility: 'private', path: 'vault' });
  const tool = await seed.project({ namespace: other, visibility: 'public', path: 'tool' });
  await seed.member({ group }, mae, 40);
  await seed.member({ group }, rita, 20);
  await seed.member({ group }, gus, 10);
  await seed.member({ project: tool }, mae, 40);
  const tokens = { mae: (await seed.token(mae)).headers, gus: (await seed.token(gus)).headers };
  const api = async (who: Record<string, string>, url: string, payload: Record<string, unknown>, method: 'POST' | 'PUT' = 'POST') => {
    const r = await app.inject({ method, url: `/api/v4${url}`, headers: who, payload });
    assert.ok(r.statusCode === 201 || r.statusCode === 200, r.body);
    return r.json() as Record<string, any>;
  };
  const bug = await api(tokens.mae, `/groups/${group.id}/labels`, { name: 'bug', color: '#d9534f' });
  const doing = await api(tokens.mae, `/groups/${group.id}/labels`, { name: 'Doing', color: '#1f883d' });
  const v1 = await api(tokens.mae, `/groups/${group.id}/milestones`, { title: 'v1' });
  const issue = (who: Record<string, string>, projectId: number, attrs: Record<string, unknown>) => api(who, `/projects/${projectId}/issues`, attrs);
  const a = await issue(tokens.mae, app1.id, { title: 'Crash on start', labels: 'bug', milestone_id: v1.id, assignee_ids: [rita.id] });
  const b = await issue(tokens.gus, app1.id, { title: 'Polish the widget', description: 'widget body' });
  const secret = await issue(tokens.mae, app1.id, { title: 'Secret plan', confidential: true });
  const old = await issue(tokens.mae, app1.id, { title: 'Old thing' });
  await api(tokens.mae, `/projects/${app1.id}/issues/${old.iid}`, { state_event: 'close' }, 'PUT');
  const e = await issue(tokens.mae, lib.id, { title: 'Library bug', labels: 'bug' });
  const f = await issue(tokens.mae, hidden.id, { title: 'Vault work' });
  const g = await issue(tokens.mae, tool.id, { title: 'Elsewhere', assignee_ids: [rita.id] });
  return {
    ...ta,
    c,
    tag,
    mae,
    rita,
    gus,
    stan,
    group,
    sub,
    app1,
    lib,
    hidden,
    tool,
    tokens,
    labels: { bug, doing },
    v1,
    issues: { a, b, secret, old, e, f, g },
  };
}

/** The ids of the issue rows of a list page, in their order. */
const listed = (html: string) => [...html.matchAll(/<li class="Box-row[^"]*" id="issue_(\d+)"/g)].map((m) => Number(m[1]));
/** The row of one issue. */
const rowOf = (html: string, id: number) => {
  const at = html.indexOf(`id="issue_${id}"`);
  return html.slice(at, html.indexOf('</li>', at));
};

test("a group's issues: every project's of the group and its subgroups, the project list's tabs, counts and filters, project references", async (t) => {
  const s = await setup(t);
  const { a, b, secret, old, e, f, g } = s.issues;
  const path = s.group.full_path;
  const base = `/groups/${path}/-/issues`;
  const rita = await webSignIn(s.app, s.rita.username);

  // the group page's navigation leads here
  const home = await webGet(s.app, `/groups/${path}`, rita);
  assert.equal(home.statusCode, 200);
  assert.match(
    home.body,
    new RegExp(
      `<nav class="UnderlineNav mb-3" aria-label="Group"><div class="UnderlineNav-body"><a class="UnderlineNav-item" href="/groups/${path}" aria-current="page">Overview</a><a class="UnderlineNav-item" href="${base}">Issues</a><a class="UnderlineNav-item" href="/groups/${path}/-/boards">Boards</a></div></nav>`,
    ),
  );

  const open = await webGet(s.app, base, rita);
  assert.equal(open.statusCode, 200, open.body.slice(0, 500));
  // a Reporter of the group: the confidential issue and the private project's too; never another group's
  assert.deepEqual(listed(open.body), [f.id, e.id, secret.id, b.id, a.id]);
  assert.doesNotMatch(open.body, new RegExp(`id="issue_${g.id}"`));
  assert.match(open.body, /<title>Issues · grp-[a-z0-9]+ · Hearth<\/title>/);
  assert.match(open.body, /<h1 class="h2 flex-auto">Issues<\/h1>/);
  assert.match(open.body, new RegExp(`<a class="UnderlineNav-item" href="${base}" aria-current="page">Issues</a>`));
  assert.match(open.body, new RegExp(`<li class="breadcrumb-item"><a href="/groups/${path}">Crew</a></li>`));
  assert.match(open.body, new RegExp(`href="${base}\\?state=opened" aria-current="page">Open<span class="Counter">5</span>`));
  assert.match(open.body, new RegExp(`href="${base}\\?state=closed">Closed<span class="Counter">1</span>`));
  assert.match(open.body, new RegExp(`href="${base}\\?state=all">All<span class="Counter">6</span>`));
  assert.match(open.body, new RegExp(`<form method="get" action="${base}" class="d-flex flex-wrap flex-items-end mb-3" aria-label="Filter issues"`));
  // no "New issue" here: an issue is opened in its project
  assert.doesNotMatch(open.body, />\s*New issue\s*</);
  // each row: its project's reference from the group (a subgroup's project by its full path), linked to its project's page
  const rowA = rowOf(open.body, a.id);
  assert.match(rowA, new RegExp(`<a class="Link--primary text-bold mr-1" href="/${path}/app/-/issues/${a.iid}">Crash on start</a>`));
  assert.match(rowA, /<span>app#1<\/span> · opened <time/);
  assert.match(rowA, new RegExp(`<a class="issue-label-link" href="${base}\\?state=opened&amp;labels=bug">`));
  assert.match(rowA, /Milestone: v1/);
  assert.match(rowA, /<span class="sr-only">Assigned to Rita Reporter<\/span>/);
  assert.match(rowOf(open.body, e.id), new RegExp(`<span>${path}/sub/lib#1</span> · opened`));
  assert.match(rowOf(open.body, f.id), /<span>vault#1<\/span> · opened/);

  // the filters of the project list
  const ids = async (query: string) => listed((await webGet(s.app, `${base}?${query}`, rita)).body);
  assert.deepEqual(await ids('state=closed'), [old.id]);
  assert.deepEqual(await ids('state=all'), [f.id, e.id, old.id, secret.id, b.id, a.id]);
  assert.deepEqual(await ids('labels=bug'), [e.id, a.id]);
  assert.deepEqual(await ids('labels=None'), [f.id, secret.id, b.id]);
  assert.deepEqual(await ids('milestone=v1'), [a.id]);
  assert.deepEqual(await ids(`assignee_username=${s.rita.username}`), [a.id]);
  assert.deepEqual(await ids(`author_username=${s.gus.username}`), [b.id]);
  assert.deepEqual(await ids('search=widget'), [b.id]);
  assert.deepEqual(await ids('confidential=yes'), [secret.id]);
  assert.deepEqual(await ids('sort=title_asc'), [a.id, e.id, b.id, secret.id, f.id]);
  assert.deepEqual(await ids('sort=created_asc'), [a.id, b.id, secret.id, e.id, f.id]);
  // the counts follow the filters, the tabs keep them, and Clear drops them
  const filtered = await webGet(s.app, `${base}?labels=bug`, rita);
  assert.match(filtered.body, /Open<span class="Counter">2<\/span>/);
  assert.match(filtered.body, /All<span class="Counter">2<\/span>/);
  assert.match(filtered.body, new RegExp(`href="${base}\\?state=closed&amp;labels=bug">Closed<span class="Counter">0</span>`));
  assert.match(filtered.body, new RegExp(`<a class="btn btn-sm btn-invisible ml-1" href="${base}\\?state=opened">\\s*Clear\\s*</a>`));
  assert.match(filtered.body, /<input class="form-control input-sm" type="text" id="issue-labels" name="labels" value="bug"/);
  // a subgroup's list holds its own projects' only
  assert.deepEqual(listed((await webGet(s.app, `/groups/${path}/sub/-/issues`, rita)).body), [e.id]);
  assert.equal((await webGet(s.app, `${base}?state=bogus&sort=nope&page=-3`, rita)).statusCode, 200);
});

test("a group's issues as others see them: no confidential issue for a Guest, an outsider or the anonymous; a private group is not found", async (t) => {
  const s = await setup(t);
  const { a, b, secret, e, f } = s.issues;
  const base = `/groups/${s.group.full_path}/-/issues`;
  const gus = await webSignIn(s.app, s.gus.username);
  const stan = await webSignIn(s.app, s.stan.username);

  // a Guest of the group: the private project's issues (Guests read issues), never the confidential one
  const guest = await webGet(s.app, base, gus);
  assert.equal(guest.statusCode, 200);
  assert.deepEqual(listed(guest.body), [f.id, e.id, b.id, a.id]);
  assert.match(guest.body, /Open<span class="Counter">4<\/span>/);
  assert.doesNotMatch(guest.body, /Secret plan/);
  assert.deepEqual(listed((await webGet(s.app, `${base}?confidential=yes`, gus)).body), []);
  assert.deepEqual(listed((await webGet(s.app, `${base}?search=secret`, gus)).body), []);

  // an outsider and the anonymous on the public group: the public projects' public issues
  for (const [who, sess] of [
    ['outsider', stan],
    ['anonymous', null],
  ] as const) {
    const page = await webGet(s.app, base, sess);
    assert.equal(page.statusCode, 200, who);
    assert.deepEqual(listed(page.body), [e.id, b.id, a.id], who);
    assert.match(page.body, /Open<span class="Counter">3<\/span>/, who);
    assert.match(page.body, /All<span class="Counter">4<\/span>/, who);
    assert.doesNotMatch(page.body, /Secret plan|Vault work/, who);
    assert.doesNotMatch(page.body, new RegExp(`id="issue_${secret.id}"`), who);
  }

  // a private group: 404 to outsiders and the anonymous (as the API), its members see its list
  const priv = await s.seed.group({ visibility: 'private', path: `priv-${s.tag}` });
  const inside = await s.seed.project({ namespace: priv, visibility: 'private', path: 'inside' });
  await s.seed.member({ group: priv }, s.gus, 10);
  const hush = await s.app.inject({
    method: 'POST',
    url: `/api/v4/projects/${inside.id}/issues`,
    headers: s.tokens.gus,
    payload: { title: 'Hush hush' },
  });
  assert.equal(hush.statusCode, 201, hush.body);
  for (const url of [`/groups/${priv.full_path}/-/issues`, `/groups/${priv.full_path}/-/boards`]) {
    for (const sess of [stan, null]) {
      const r = await webGet(s.app, url, sess);
      assert.equal(r.statusCode, 404, url);
      assert.doesNotMatch(r.body, /Hush hush/);
    }
  }
  assert.equal((await s.app.inject({ method: 'GET', url: `/api/v4/groups/${priv.id}/issues`, headers: (await s.seed.token(s.stan)).headers })).statusCode, 404);
  assert.deepEqual(listed((await webGet(s.app, `/groups/${priv.full_path}/-/issues`, gus)).body), [hush.json().id]);
});

test('/dashboard/issues: the issues assigned to you (the default) or created by you, across projects, from the header', async (t) => {
  const s = await setup(t);
  const { a, b, g, secret } = s.issues;
  const rita = await webSignIn(s.app, s.rita.username);
  const gus = await webSignIn(s.app, s.gus.username);

  const home = await webGet(s.app, '/dashboard/projects', rita);
  assert.match(home.body, /<a class="Header-link mr-3" href="\/dashboard\/issues">Issues<\/a>/);
  const page = await webGet(s.app, '/dashboard/issues', rita);
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /<title>Issues · Hearth<\/title>/);
  assert.match(page.body, /<a class="Header-link mr-3" href="\/dashboard\/issues" aria-current="page">Issues<\/a>/);
  assert.match(
    page.body,
    /<nav class="UnderlineNav mb-3" aria-label="Whose issues"><div class="UnderlineNav-body"><a class="UnderlineNav-item" href="\/dashboard\/issues" aria-current="page">Assigned to you<\/a><a class="UnderlineNav-item" href="\/dashboard\/issues\?scope=created_by_me">Created by you<\/a><\/div><\/nav>/,
  );
  // in two groups' projects, newest first, each by its full reference
  assert.deepEqual(listed(page.body), [g.id, a.id]);
  assert.match(rowOf(page.body, g.id), new RegExp(`<span>other-${s.tag}/tool#1</span> · opened`));
  assert.match(rowOf(page.body, a.id), new RegExp(`<span>${s.group.full_path}/app#1</span> · opened`));
  assert.match(page.body, /Open<span class="Counter">2<\/span>/);
  // the filters work here too, and keep the scope
  assert.deepEqual(listed((await webGet(s.app, '/dashboard/issues?labels=bug', rita)).body), [a.id]);
  const created = await webGet(s.app, '/dashboard/issues?scope=created_by_me', gus);
  assert.deepEqual(listed(created.body), [b.id]);
  assert.match(created.body, /<input type="hidden" name="scope" value="created_by_me">/);
  assert.match(created.body, /href="\/dashboard\/issues\?state=closed&amp;scope=created_by_me">Closed<span class="Counter">0<\/span>/);
  assert.deepEqual(listed((await webGet(s.app, '/dashboard/issues', gus)).body), []);
  assert.match((await webGet(s.app, '/dashboard/issues', gus)).body, /No open issues are assigned to you\./);
  // a confidential issue assigned to a Guest is theirs to read
  await s.app.inject({
    method: 'PUT',
    url: `/api/v4/projects/${s.app1.id}/issues/${secret.iid}`,
    headers: s.tokens.mae,
    payload: { assignee_ids: [s.gus.id] },
  });
  assert.deepEqual(listed((await webGet(s.app, '/dashboard/issues', gus)).body), [secret.id]);
  // the anonymous are sent to sign in
  const anon = await webGet(s.app, '/dashboard/issues');
  assert.equal(anon.statusCode, 302);
  assert.equal(anon.headers.location, '/users/sign_in?redirect_to=%2Fdashboard%2Fissues');
});

test("a group's board: the issues of the group's projects in its lists, a group label's list, a card moved by its form; who may do what", async (t) => {
  const s = await setup(t);
  const { a, b, secret, e, g } = s.issues;
  const path = s.group.full_path;
  const rita = await webSignIn(s.app, s.rita.username);
  const gus = await webSignIn(s.app, s.gus.username);
  const stan = await webSignIn(s.app, s.stan.username);

  // the first visit of someone signed in makes the group's board, as a project's
  assert.equal((await webGet(s.app, `/groups/${path}/-/boards`)).statusCode, 404);
  const go = await webGet(s.app, `/groups/${path}/-/boards`, rita);
  assert.equal(go.statusCode, 303);
  const boardUrl = String(go.headers.location);
  assert.match(boardUrl, new RegExp(`^/groups/${path}/-/boards/\\d+$`));
  const boardId = Number(boardUrl.split('/').pop());
  const board = await s.c.db.kysely.selectFrom('boards').selectAll().where('id', '=', boardId).executeTakeFirstOrThrow();
  assert.deepEqual([board.group_id, board.project_id, board.name], [s.group.id, null, 'Development']);

  let page = await webGet(s.app, boardUrl, rita);
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /<h1 class="h2 flex-auto">Development<\/h1>/);
  assert.match(page.body, new RegExp(`<a class="UnderlineNav-item" href="/groups/${path}/-/boards" aria-current="page">Boards</a>`));
  assert.match(page.body, new RegExp(`data-board data-move="/-/g/${s.group.id}/boards/${boardId}/move"`));
  // Reporters add lists of the group's labels
  assert.match(page.body, new RegExp(`<option value="${s.labels.doing.id}">Doing</option>`));
  const added = await webPost(s.app, `/-/g/${s.group.id}/boards/${boardId}/lists`, rita, { label_id: String(s.labels.doing.id) });
  assert.equal(added.statusCode, 303);
  assert.equal(added.headers.location, boardUrl);
  const lists = await s.c.db.kysely.selectFrom('board_lists').select(['id', 'list_type', 'label_id']).where('board_id', '=', boardId).orderBy('id').execute();
  assert.deepEqual(
    lists.map((l) => [l.list_type, l.label_id]),
    [
      ['backlog', null],
      ['closed', null],
      ['label', s.labels.doing.id],
    ],
  );
  const [backlog, , doingList] = lists;
  page = await webGet(s.app, boardUrl, rita);
  const column = (html: string, id: number) => html.split(`data-board-list="${id}"`)[1]!.split('</section>')[0]!;
  // the Open list: open issues of every project of the group and its subgroups, each card with its reference
  const open = column(page.body, backlog!.id);
  for (const title of ['Crash on start', 'Polish the widget', 'Secret plan', 'Library bug', 'Vault work']) assert.match(open, new RegExp(title));
  assert.doesNotMatch(page.body, /Elsewhere/);
  assert.match(open, new RegExp(`data-project="${s.app1.id}" data-iid="${b.iid}"`));
  assert.match(open, new RegExp(`<label class="sr-only" for="move-${b.id}">\\s*Move app#${b.iid} to\\s*</label>`));
  assert.match(open, new RegExp(`<input type="hidden" name="project_id" value="${s.lib.id}">`));
  assert.match(open, new RegExp(`href="/${path}/sub/lib/-/issues/${e.iid}">Library bug</a>`));

  // a Guest sees the board without the confidential card, and may not move another's issue
  const guestPage = await webGet(s.app, boardUrl, gus);
  assert.equal(guestPage.statusCode, 200);
  assert.doesNotMatch(guestPage.body, /Secret plan/);
  assert.doesNotMatch(guestPage.body, /Add a list of the label/);
  const move = (sess: typeof rita, projectId: number, iid: number, to = doingList!.id) =>
    webPost(s.app, `/-/g/${s.group.id}/boards/${boardId}/move`, sess, {
      project_id: String(projectId),
      iid: String(iid),
      from_list_id: String(backlog!.id),
      to_list_id: String(to),
    });
  assert.equal((await move(gus, s.app1.id, a.iid)).statusCode, 403);
  // an outsider neither (a public group's board is theirs to see); the anonymous: only the page, no forms
  assert.equal((await webGet(s.app, boardUrl, stan)).statusCode, 200);
  assert.equal((await move(stan, s.app1.id, a.iid)).statusCode, 403);
  const anon = await webGet(s.app, boardUrl);
  assert.equal(anon.statusCode, 200);
  assert.doesNotMatch(anon.body, /Secret plan|Vault work/);
  assert.doesNotMatch(anon.body, /class="d-flex flex-items-center mt-2 board-move"/);

  // Rita moves the subgroup project's card to Doing: the group label is on the issue
  const moved = await move(rita, s.lib.id, e.iid);
  assert.equal(moved.statusCode, 303);
  assert.equal(moved.headers.location, boardUrl);
  const labelsOf = async (id: number) =>
    (
      await s.c.db.kysely
        .selectFrom('issue_labels')
        .innerJoin('labels', 'labels.id', 'issue_labels.label_id')
        .select('labels.title')
        .where('issue_id', '=', id)
        .orderBy('labels.title')
        .execute()
    ).map((l) => l.title);
  assert.deepEqual(await labelsOf(e.id), ['Doing', 'bug']);
  const flash = await s.app.inject({
    method: 'GET',
    url: boardUrl,
    headers: { cookie: `${rita.cookie}; ${String(moved.headers['set-cookie']).split(';')[0]}` },
  });
  assert.match(flash.body, new RegExp(`${path}/sub/lib#${e.iid} moved to Doing\\.`));
  assert.match(column(flash.body, doingList!.id), /Library bug/);
  assert.doesNotMatch(column(flash.body, backlog!.id), /Library bug/);
  // an issue of another group's project is not on this board (Mae may update it: still refused)
  const mae = await webSignIn(s.app, s.mae.username);
  const elsewhere = await move(mae, s.tool.id, g.iid);
  assert.equal(elsewhere.statusCode, 404);
  assert.deepEqual(await labelsOf(g.id), []);
  // the confidential card moves for a Reporter; a private group's board is not found (above), a bad id neither
  assert.equal((await move(rita, s.app1.id, secret.iid)).statusCode, 303);
  assert.deepEqual(await labelsOf(secret.id), ['Doing']);
  assert.equal((await webGet(s.app, `/groups/${path}/-/boards/999999`, rita)).statusCode, 404);
  assert.equal((await webGet(s.app, `/groups/${path}/-/boards/abc`, rita)).statusCode, 404);
  // removing the list
  const removed = await webPost(s.app, `/-/g/${s.group.id}/boards/${boardId}/lists/${doingList!.id}/remove`, rita);
  assert.equal(removed.statusCode, 303);
  assert.equal((await s.c.db.kysely.selectFrom('board_lists').select('id').where('board_id', '=', boardId).execute()).length, 2);
});
