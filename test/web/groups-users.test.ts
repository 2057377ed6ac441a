// Group pages (/groups/<path>, the /<path> shortcut, the new group form) and user profiles (/<username>):
// visibility as the API answers it, and the web_url of groups and users resolving to these pages.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/build-app.ts';
import { webGet, webPost, webSignIn } from '../helpers/web.ts';

test('group page: name, markdown description, projects and subgroups, members count; 404 for a private group outside', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const alice = await seed.user({ username: 'alice' });
  await seed.user({ username: 'eve' });
  const made = await app.inject({
    method: 'POST',
    url: '/api/v4/groups',
    headers: root,
    payload: { name: 'Team', path: 'team', visibility: 'private', description: 'We **build** <script>x</script>' },
  });
  assert.equal(made.statusCode, 201);
  const team = await c.db.kysely.selectFrom('namespaces').selectAll().where('path', '=', 'team').executeTakeFirstOrThrow();
  await seed.member({ group: team }, alice, 40);
  const sub = await seed.group({ path: 'sub', name: 'Sub', visibility: 'private', parent: team });
  await seed.project({ namespace: team, path: 'tool', name: 'Tool', visibility: 'private' });
  await seed.project({ namespace: sub, path: 'deep', name: 'Deep', visibility: 'private' });

  const s = await webSignIn(app, 'alice');
  // the API's web_url is the page
  const webUrl = (await app.inject({ method: 'GET', url: `/api/v4/groups/${team.id}`, headers: root })).json().web_url as string;
  assert.equal(webUrl, `${c.config.externalUrl}/groups/team`);
  const page = await webGet(app, '/groups/team', s);
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /<h1 class="h2 d-flex flex-items-center">Team<span class="Label Label--secondary ml-1">Private<\/span><\/h1>/);
  assert.match(page.body, /<strong>build<\/strong>/);
  assert.doesNotMatch(page.body, /<script>x<\/script>/);
  assert.match(page.body, /2 members/); // root (creator, Owner) and alice
  assert.match(page.body, /<a class="text-bold f4" href="\/team\/tool">/);
  assert.doesNotMatch(page.body, /team\/sub\/deep/); // the subgroup's projects are on its own page
  // a Maintainer may create projects and subgroups here
  assert.match(page.body, /href="\/projects\/new\?namespace_id=\d+">New project<\/a>/);
  assert.match(page.body, /href="\/groups\/new\?parent_id=\d+">New subgroup<\/a>/);
  const subgroups = await webGet(app, '/groups/team?tab=subgroups', s);
  assert.match(subgroups.body, /<a class="text-bold f4" href="\/groups\/team\/sub">Team \/ Sub<\/a>/);
  const subPage = await webGet(app, '/groups/team/sub', s);
  assert.equal(subPage.statusCode, 200);
  assert.match(subPage.body, /<a href="\/groups\/team">Team<\/a>/); // breadcrumbs
  assert.match(subPage.body, /href="\/team\/sub\/deep"/);

  // the shortcut /<group path> goes to the group page
  const short = await webGet(app, '/team/sub', s);
  assert.equal(short.statusCode, 302);
  assert.equal(short.headers.location, '/groups/team/sub');

  // outsiders and the anonymous: 404, exactly like a group that does not exist
  const eve = await webSignIn(app, 'eve');
  for (const url of ['/groups/team', '/groups/team/sub', '/team', '/groups/nothing-here']) {
    assert.equal((await webGet(app, url, eve)).statusCode, 404, url);
    assert.equal((await webGet(app, url)).statusCode, 404, url);
  }
  assert.equal((await webGet(app, '/groups/team/-/settings', s)).statusCode, 404); // group sub-pages are not here
  assert.equal((await webGet(app, '/groups', s)).headers.location, '/dashboard/groups');
  assert.equal((await webGet(app, '/groups')).headers.location, '/explore/groups');
});

test('public group for the anonymous: no members count or create buttons; a renamed group redirects', async (t) => {
  const { app, seed, root } = await buildTestApp(t);
  const pub = await seed.group({ path: 'pub', name: 'Pub', visibility: 'public' });
  await seed.project({ namespace: pub, path: 'open', visibility: 'public' });
  await seed.project({ namespace: pub, path: 'hidden', visibility: 'private' });
  const page = await webGet(app, '/groups/pub');
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /href="\/pub\/open"/);
  assert.doesNotMatch(page.body, /pub\/hidden/);
  assert.doesNotMatch(page.body, /members|New project|New subgroup/);

  const renamed = await app.inject({ method: 'PUT', url: `/api/v4/groups/${pub.id}`, headers: root, payload: { path: 'pub2' } });
  assert.equal(renamed.statusCode, 200);
  const old = await webGet(app, '/groups/pub?tab=subgroups');
  assert.equal(old.statusCode, 301);
  assert.equal(old.headers.location, '/groups/pub2?tab=subgroups');
});

test('new group form: creates the group with the user as Owner, re-renders bad input with 422', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const alice = await seed.user({ username: 'alice' });
  const s = await webSignIn(app, 'alice');
  const form = await webGet(app, '/groups/new', s);
  assert.equal(form.statusCode, 200);
  assert.match(form.body, /<label class="FormControl-label" for="group_name">Group name<\/label>/);
  assert.match(form.body, /<label class="FormControl-label" for="group_path">Group URL<\/label>/);
  assert.match(form.body, /<legend class="FormControl-label mb-2">Visibility level<\/legend>/);
  assert.match(form.body, /<button type="submit" class="btn btn-primary">Create group<\/button>/);

  const res = await webPost(app, '/groups', s, { name: 'My Team', path: '', visibility: 'internal' });
  assert.equal(res.statusCode, 303);
  assert.equal(res.headers.location, '/groups/my-team');
  const g = await c.db.kysely.selectFrom('namespaces').selectAll().where('path', '=', 'my-team').executeTakeFirstOrThrow();
  assert.equal(g.name, 'My Team');
  assert.equal(g.visibility, 'internal');
  const owner = await c.db.kysely
    .selectFrom('members')
    .selectAll()
    .where('source_id', '=', g.id)
    .where('source_type', '=', 'Namespace')
    .executeTakeFirstOrThrow();
  assert.equal(owner.user_id, alice.id);
  assert.equal(owner.access_level, 50);
  assert.equal((await webGet(app, '/groups/my-team', s)).statusCode, 200);

  // a subgroup through the same form
  const subForm = await webGet(app, `/groups/new?parent_id=${g.id}`, s);
  assert.match(subForm.body, /<h1 class="Subhead-heading">Create subgroup<\/h1>/);
  assert.match(subForm.body, /<input type="hidden" name="parent_id" value="\d+">/);
  assert.match(subForm.body, /\/my-team\/<\/span>/);
  const subRes = await webPost(app, '/groups', s, { name: 'Child', path: 'child', visibility: 'private', parent_id: String(g.id) });
  assert.equal(subRes.statusCode, 303);
  assert.equal(subRes.headers.location, '/groups/my-team/child');

  const count = async () => (await c.db.kysely.selectFrom('namespaces').select('id').where('type', '=', 'Group').execute()).length;
  const before = await count();
  const cases: [Record<string, string>, RegExp][] = [
    [{ name: 'Again', path: 'my-team', visibility: 'private' }, /Path has already been taken/],
    [{ name: '', path: 'x', visibility: 'private' }, /Name can&#39;t be blank/],
    [{ name: 'Bad', path: 'bad', visibility: 'secret' }, /Visibility level must be Private, Internal or Public/],
    [{ name: 'Sub', path: 'sub', visibility: 'public', parent_id: String(g.id) }, /Visibility level public is not allowed/],
    [{ name: 'Lost', path: 'lost', visibility: 'private', parent_id: '999999' }, /Parent group is not valid/],
  ];
  for (const [fields, message] of cases) {
    const r = await webPost(app, '/groups', s, fields);
    assert.equal(r.statusCode, 422, JSON.stringify(fields));
    assert.match(r.body, message);
    assert.match(r.body, new RegExp(`id="group_name" name="name" value="${fields.name}"`));
  }
  const noToken = await app.inject({
    method: 'POST',
    url: '/groups',
    headers: { cookie: s.cookie },
    payload: { name: 'Sneaky', path: 'sneaky', visibility: 'private' },
  });
  assert.equal(noToken.statusCode, 422);
  assert.equal(await count(), before);
});

test('user profile: name, bio, personal projects the viewer may see, activity; private and blocked profiles', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const bob = await seed.user({ username: 'bob', name: 'Bob Builder' });
  await c.db.kysely.updateTable('users').set({ bio: 'I <b>build</b> things' }).where('id', '=', bob.id).execute();
  await seed.user({ username: 'alice' });
  await seed.user({ username: 'quiet', private_profile: true });
  await seed.user({ username: 'gone', state: 'blocked' });
  await seed.project({ owner: bob, path: 'open', name: 'Open', visibility: 'public' });
  await seed.project({ owner: bob, path: 'secret', name: 'Secret', visibility: 'private' });
  const bobToken = await seed.token(bob);
  const made = await app.inject({ method: 'POST', url: '/api/v4/projects', headers: bobToken.headers, payload: { name: 'Fresh', visibility: 'public' } });
  assert.equal(made.statusCode, 201);

  // the API's web_url is the page
  const apiUser = (await app.inject({ method: 'GET', url: `/api/v4/users/${bob.id}`, headers: root })).json();
  assert.equal(apiUser.web_url, `${c.config.externalUrl}/bob`);

  const s = await webSignIn(app, 'alice');
  const page = await webGet(app, '/bob', s);
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /<h1 class="h2">Bob Builder<\/h1>/);
  assert.match(page.body, /I &lt;b&gt;build&lt;\/b&gt; things/);
  assert.match(page.body, /href="\/bob\/open"/);
  assert.match(page.body, /href="\/bob\/Fresh"/);
  assert.doesNotMatch(page.body, /bob\/secret/);
  assert.match(page.body, /<span>created<\/span> <a href="\/bob\/Fresh">Bob Builder \/ Fresh<\/a>/);
  // the owner sees their private project too
  const own = await webGet(app, '/bob', await webSignIn(app, 'bob'));
  assert.match(own.body, /href="\/bob\/secret"/);
  // usernames are case-insensitive, like the API's lookup
  assert.equal((await webGet(app, '/BOB', s)).statusCode, 200);

  const quiet = await webGet(app, '/quiet', s);
  assert.equal(quiet.statusCode, 200);
  assert.match(quiet.body, /This user has a private profile/);
  assert.doesNotMatch(quiet.body, /Personal projects/);
  const blocked = await webGet(app, '/gone', s);
  assert.equal(blocked.statusCode, 200);
  assert.match(blocked.body, /This user is blocked/);

  // GET /users/:id refuses the anonymous: the page sends them to sign in; an unknown name is 404
  const anon = await webGet(app, '/bob');
  assert.equal(anon.statusCode, 302);
  assert.equal(anon.headers.location, '/users/sign_in?redirect_to=%2Fbob');
  assert.equal((await webGet(app, '/nobody-here', s)).statusCode, 404);
  assert.equal((await webGet(app, '/nobody-here')).statusCode, 404);
});
