// The start page, the dashboard (your projects, starred, groups, activity), explore, and the new
// project form: the lists show exactly what the API's queries give the viewer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertAccessible, chromiumAvailable, launchBrowser, newContext, screenshot, signInWithForm } from '../helpers/browser.ts';
import { buildTestApp } from '../helpers/build-app.ts';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { webGet, webPost, webSignIn } from '../helpers/web.ts';

/** The project links of a list page, in order ("ns/path"). */
function projectLinks(html: string): string[] {
  const list = /<ul class="Box list-style-none project-list"[^>]*>([\s\S]*?)<\/ul>/.exec(html)?.[1] ?? '';
  return [...list.matchAll(/<a class="text-bold f4" href="\/([^"]+)">/g)].map((m) => m[1]);
}

function groupLinks(html: string): string[] {
  const list = /<ul class="Box list-style-none group-list"[^>]*>([\s\S]*?)<\/ul>/.exec(html)?.[1] ?? '';
  return [...list.matchAll(/<a class="text-bold f4" href="\/groups\/([^"]+)">/g)].map((m) => m[1]);
}

test('/ is the sign-in page for the anonymous and the dashboard of your projects for the signed in', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const anon = await webGet(app, '/');
  assert.equal(anon.statusCode, 302);
  assert.equal(anon.headers.location, '/users/sign_in');
  const dash = await webGet(app, '/dashboard/projects');
  assert.equal(dash.statusCode, 302);
  assert.equal(dash.headers.location, '/users/sign_in?redirect_to=%2Fdashboard%2Fprojects');

  const alice = await seed.user({ username: 'alice' });
  const s = await webSignIn(app, 'alice');
  const home = await webGet(app, '/', s);
  assert.equal(home.statusCode, 200);
  assert.match(home.body, /<h1 class="Subhead-heading">Projects<\/h1>/);
  assert.equal((home.body.match(/<h1[ >]/g) ?? []).length, 1);
  assert.match(home.body, /You have no projects yet/);
  assert.match(home.body, /<a class="btn btn-primary btn-sm" href="\/projects\/new">New project<\/a>/);
  void alice;
});

test('the dashboard lists exactly the projects you are a member of; search, sort and pages', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const alice = await seed.user({ username: 'alice' });
  const bob = await seed.user({ username: 'bob' });
  const team = await seed.group({ path: 'team', visibility: 'private' });
  await seed.member({ group: team }, alice, 30);
  await seed.project({ owner: alice, path: 'mine', name: 'Mine', visibility: 'private' });
  await seed.project({ namespace: team, path: 'tool', name: 'Tool', visibility: 'private' });
  const shared = await seed.project({ owner: bob, path: 'shared', name: 'Shared', visibility: 'private' });
  await seed.member({ project: shared }, alice, 20);
  await seed.project({ owner: bob, path: 'public-other', name: 'Public other', visibility: 'public' });
  await seed.project({ owner: bob, path: 'secret', name: 'Secret', visibility: 'private' });

  const s = await webSignIn(app, 'alice');
  const page = await webGet(app, '/dashboard/projects?sort=name_asc', s);
  assert.equal(page.statusCode, 200);
  assert.deepEqual(projectLinks(page.body), ['alice/mine', 'bob/shared', 'team/tool']);
  assert.doesNotMatch(page.body, /secret|public-other/);
  // the sort select keeps the choice; an unknown sort is the default, not an error
  assert.match(page.body, /<option value="name_asc" selected>Name<\/option>/);
  assert.equal((await webGet(app, '/dashboard/projects?sort=%3Cbad%3E&page=abc', s)).statusCode, 200);

  const search = await webGet(app, '/dashboard/projects?search=tool', s);
  assert.deepEqual(projectLinks(search.body), ['team/tool']);
  assert.match(search.body, /<input id="list-search" class="form-control" type="search" name="search" value="tool"/);
  const none = await webGet(app, '/dashboard/projects?search=%3Cscript%3E', s);
  assert.match(none.body, /No projects match your search/);
  assert.match(none.body, /value="&lt;script&gt;"/);

  // pages of 20
  for (let i = 0; i < 21; i++) {
    const n = String(i).padStart(2, '0');
    await seed.project({ owner: alice, path: `p${n}`, name: `P${n}`, visibility: 'private' });
  }
  const first = await webGet(app, '/dashboard/projects?sort=name_asc', s);
  assert.equal(projectLinks(first.body).length, 20);
  assert.match(first.body, /<a class="next_page" rel="next" href="\/dashboard\/projects\?sort=name_asc&amp;page=2">Next<\/a>/);
  const second = await webGet(app, '/dashboard/projects?sort=name_asc&page=2', s);
  assert.deepEqual(projectLinks(second.body), ['alice/p19', 'alice/p20', 'bob/shared', 'team/tool']);

  // starred: nothing yet
  const starred = await webGet(app, '/dashboard/projects/starred', s);
  assert.equal(starred.statusCode, 200);
  assert.match(starred.body, /You have not starred any projects yet/);
  assert.match(starred.body, /aria-current="page">Starred projects</);
});

test('dashboard groups: the groups you belong to; activity: the events of your projects', async (t) => {
  const { app, seed, root } = await buildTestApp(t);
  const alice = await seed.user({ username: 'alice' });
  const team = await seed.group({ path: 'team', name: 'Team', visibility: 'private' });
  await seed.group({ path: 'other', name: 'Other', visibility: 'public' });
  await seed.member({ group: team }, alice, 30);
  const s = await webSignIn(app, 'alice');
  const groups = await webGet(app, '/dashboard/groups', s);
  assert.equal(groups.statusCode, 200);
  assert.deepEqual(groupLinks(groups.body), ['team']);

  // a project made through the API makes a "created" event
  const made = await app.inject({ method: 'POST', url: '/api/v4/projects', headers: root, payload: { name: 'Made', namespace_id: team.id } });
  assert.equal(made.statusCode, 201);
  const activity = await webGet(app, '/dashboard/activity', s);
  assert.equal(activity.statusCode, 200);
  assert.match(activity.body, /<span>created<\/span> <a href="\/team\/Made">Team \/ Made<\/a>/);
  const own = await webGet(app, '/dashboard/activity?filter=own', s);
  assert.match(own.body, /No activity yet/);
});

test('explore shows public projects and groups to the anonymous, internal ones to the signed in, never private ones', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const bob = await seed.user({ username: 'bob' });
  await seed.user({ username: 'alice' });
  await seed.project({ owner: bob, path: 'open', visibility: 'public' });
  await seed.project({ owner: bob, path: 'inside', visibility: 'internal' });
  await seed.project({ owner: bob, path: 'closed', visibility: 'private' });
  await seed.group({ path: 'pubg', visibility: 'public' });
  await seed.group({ path: 'intg', visibility: 'internal' });
  await seed.group({ path: 'privg', visibility: 'private' });

  const redirect = await webGet(app, '/explore');
  assert.equal(redirect.statusCode, 302);
  assert.equal(redirect.headers.location, '/explore/projects');
  const anon = await webGet(app, '/explore/projects');
  assert.equal(anon.statusCode, 200);
  assert.deepEqual(projectLinks(anon.body), ['bob/open']);
  assert.deepEqual(groupLinks((await webGet(app, '/explore/groups')).body), ['pubg']);

  const s = await webSignIn(app, 'alice');
  const signed = await webGet(app, '/explore/projects?sort=name_asc', s);
  assert.deepEqual(projectLinks(signed.body), ['bob/inside', 'bob/open']);
  assert.deepEqual(groupLinks((await webGet(app, '/explore/groups', s)).body), ['intg', 'pubg']);
  // the owner does not see their private project on explore either (it is on their dashboard)
  const b = await webSignIn(app, 'bob');
  assert.doesNotMatch((await webGet(app, '/explore/projects', b)).body, /bob\/closed/);
  assert.deepEqual(projectLinks((await webGet(app, '/explore/projects?search=open', s)).body), ['bob/open']);
});

test('new project form: labels, creates the project through the service, redirects to it', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const alice = await seed.user({ username: 'alice' });
  const team = await seed.group({ path: 'team', visibility: 'internal' });
  const guests = await seed.group({ path: 'guests', visibility: 'public' });
  await seed.member({ group: team }, alice, 30);
  await seed.member({ group: guests }, alice, 10);
  const s = await webSignIn(app, 'alice');

  const anon = await webGet(app, '/projects/new');
  assert.equal(anon.statusCode, 302);
  const form = await webGet(app, '/projects/new', s);
  assert.equal(form.statusCode, 200);
  for (const [id, text] of [
    ['project_name', 'Project name'],
    ['project_path', 'Project slug'],
    ['project_namespace_id', 'Project namespace'],
    ['project_initialize_with_readme', 'Initialize repository with a README'],
  ])
    assert.match(form.body, new RegExp(`<label[^>]* for="${id}">[\\s\\S]*?${text}`), text);
  assert.match(form.body, /<legend class="FormControl-label mb-2">Visibility level<\/legend>/);
  for (const v of ['Private', 'Internal', 'Public']) assert.match(form.body, new RegExp(`value="${v.toLowerCase()}"[^>]*>${v}</label>`));
  assert.match(form.body, /<button type="submit" class="btn btn-primary">Create project<\/button>/);
  // the namespaces where alice may create: her own and team (a Guest of guests may not)
  const options = [...form.body.matchAll(/<option value="(\d+)"[^>]*>([^<]+)<\/option>/g)].map((m) => m[2]);
  assert.deepEqual(options, ['alice', 'team']);

  const res = await webPost(app, '/projects', s, {
    name: 'My App',
    path: '',
    namespace_id: String(team.id),
    visibility: 'internal',
    initialize_with_readme: '1',
  });
  assert.equal(res.statusCode, 303);
  assert.equal(res.headers.location, '/team/my-app');
  const row = await c.db.kysely.selectFrom('projects').selectAll().where('path', '=', 'my-app').executeTakeFirstOrThrow();
  assert.equal(row.name, 'My App');
  assert.equal(row.namespace_id, team.id);
  assert.equal(row.visibility, 'internal');
  assert.ok(await c.repos.repository(row).branch('main'), 'the README made the main branch');
  // the flash is shown on the next page
  const next = await app.inject({
    method: 'GET',
    url: '/dashboard/projects',
    headers: { cookie: `${s.cookie}; ${String(res.headers['set-cookie']).split(';')[0]}` },
  });
  assert.match(next.body, /Project &#39;My App&#39; was successfully created\./);
  assert.deepEqual(projectLinks(next.body), ['team/my-app']);
});

test('new project form: bad input re-renders with errors (422) and creates nothing; no CSRF token → 422 page', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const alice = await seed.user({ username: 'alice' });
  const other = await seed.group({ path: 'other', visibility: 'public' });
  const own = await seed.namespaceOf(alice);
  await seed.project({ owner: alice, path: 'taken', name: 'Taken' });
  const s = await webSignIn(app, 'alice');
  const count = async () =>
    Number(
      (
        await c.db.kysely
          .selectFrom('projects')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const before = await count();

  const cases: [Record<string, string>, RegExp][] = [
    [{ name: '', namespace_id: String(own.id), visibility: 'private' }, /Project name can&#39;t be blank/],
    [{ name: 'Taken', path: 'taken', namespace_id: String(own.id), visibility: 'private' }, /has already been taken/],
    [{ name: 'X', path: '-bad', namespace_id: String(own.id), visibility: 'private' }, /Path can contain only letters/],
    [{ name: 'Y', namespace_id: String(other.id), visibility: 'private' }, /Namespace is not valid/],
    [{ name: 'Z', namespace_id: '99999999', visibility: 'private' }, /Namespace is not valid/],
    [{ name: 'W', namespace_id: 'abc', visibility: 'secret' }, /Visibility level must be Private, Internal or Public/],
  ];
  for (const [fields, message] of cases) {
    const res = await webPost(app, '/projects', s, fields);
    assert.equal(res.statusCode, 422, JSON.stringify(fields));
    assert.match(res.body, message);
    assert.match(res.body, /<div class="flash flash-error mb-3" role="alert">/);
    // what was typed is kept
    assert.match(res.body, new RegExp(`id="project_name" name="name" value="${fields.name}"`));
  }
  assert.equal(await count(), before);

  const noToken = await app.inject({
    method: 'POST',
    url: '/projects',
    headers: { cookie: s.cookie },
    payload: { name: 'Sneaky', namespace_id: String(own.id), visibility: 'private' },
  });
  assert.equal(noToken.statusCode, 422);
  assert.match(noToken.body, /authenticity token/);
  const anon = await app.inject({ method: 'POST', url: '/projects', payload: { name: 'Anon' } });
  assert.equal(anon.statusCode, 303);
  assert.equal(anon.headers.location, '/users/sign_in');
  assert.equal(await count(), before);
});

test('new project form: the project limit is refused with its message (422) and creates nothing', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const alice = await seed.user({ username: 'alice' });
  const own = await seed.namespaceOf(alice);
  const s = await webSignIn(app, 'alice');
  await c.db.kysely.updateTable('users').set({ projects_limit: 0 }).where('id', '=', alice.id).execute();
  const none = await webPost(app, '/projects', s, { name: 'First', namespace_id: String(own.id), visibility: 'private' });
  assert.equal(none.statusCode, 422);
  assert.match(none.body, /<div class="flash flash-error mb-3" role="alert">/);
  assert.match(none.body, /Personal project creation is not allowed\. Please contact your administrator with questions/);

  await seed.project({ owner: alice, path: 'one', name: 'One' });
  await c.db.kysely.updateTable('users').set({ projects_limit: 1 }).where('id', '=', alice.id).execute();
  const full = await webPost(app, '/projects', s, { name: 'Second', namespace_id: String(own.id), visibility: 'private' });
  assert.equal(full.statusCode, 422);
  assert.match(full.body, /Your project limit is 1 projects! Please contact your administrator to increase it/);
  const paths = await c.db.kysely.selectFrom('projects').select('path').execute();
  assert.deepEqual(
    paths.map((p) => p.path),
    ['one'],
  );
});

test('in a browser: dashboard → new project through its form (the slug follows the name) → the pages are accessible', {
  skip: skipWithout(chromiumAvailable, 'chromium'),
}, async (t) => {
  assertTool(chromiumAvailable, 'chromium');
  const { base, seed } = await startTestServer(t);
  const user = await seed.user({ username: 'walker', name: 'Walker', password: 'walker-password-1' });
  const team = await seed.group({ path: 'team', name: 'Team', visibility: 'public' });
  await seed.member({ group: team }, user, 50);
  const browser = await launchBrowser(t);
  const page = await (await newContext(browser, base)).newPage();
  await signInWithForm(page, user.username, 'walker-password-1');
  await page.goto('/');
  assert.equal(await page.locator('h1').innerText(), 'Projects');
  await screenshot(page, 'dashboard-empty');
  await assertAccessible(page, 'the empty dashboard');

  await page.getByRole('link', { name: 'New project' }).click();
  await page.getByLabel('Project name', { exact: true }).fill('Walk Way');
  assert.equal(await page.getByLabel('Project slug', { exact: true }).inputValue(), 'walk-way');
  await page.getByLabel('Project namespace', { exact: true }).selectOption({ label: 'team' });
  await page.getByLabel('Public', { exact: true }).check();
  await screenshot(page, 'new-project');
  await assertAccessible(page, 'the new project form');
  await page.getByRole('button', { name: 'Create project' }).click();
  await page.waitForURL(/\/team\/walk-way$/);

  for (const [url, name] of [
    ['/dashboard/projects', 'dashboard'],
    ['/dashboard/groups', 'dashboard-groups'],
    ['/dashboard/activity', 'activity'],
    ['/explore/projects', 'explore'],
    ['/groups/team', 'group'],
    ['/walker', 'user'],
  ]) {
    const res = await page.goto(url);
    assert.equal(res?.status(), 200, url);
    await screenshot(page, name);
    await assertAccessible(page, url);
  }
  await page.goto('/dashboard/projects');
  assert.equal(await page.getByRole('link', { name: 'Team / Walk Way' }).count(), 1);
});
