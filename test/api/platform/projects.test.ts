// POST /projects and GET /projects/:id: GitLab's defaults, validations, namespaces and limits, the
// shapes each viewer gets, and moved paths.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container } from '../../../src/container.ts';
import type { ProjectRow } from '../../../src/db/schema.ts';
import { buildTestApp, EXTERNAL_URL } from '../../helpers/build-app.ts';
import { expectedProject, groupNs, userNs } from '../../helpers/projects-expect.ts';

const post = (app: any, headers: Record<string, string>, payload: unknown) => app.inject({ method: 'POST', url: '/api/v4/projects', headers, payload });
const get = (app: any, url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers });

async function projectRow(c: Container, id: number): Promise<ProjectRow> {
  return c.db.kysely.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

async function events(c: Container) {
  const rows = await c.db.kysely.selectFrom('jobs').select(['kind', 'payload', 'state']).where('kind', '=', 'system_event').orderBy('id').execute();
  return rows.map((r) => ({ ...r, payload: JSON.parse(r.payload) })).filter((r) => r.payload.event_name.startsWith('project_'));
}

test('an administrator creates a project in a subgroup from its name: 201, GitLab defaults, the row, the event', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const g = await seed.group({ path: 'grp', name: 'Group' });
  const sub = await seed.group({ path: 'sub', name: 'Sub Group', parent: g });
  const res = await post(app, root, { name: 'My Project', namespace_id: sub.id, description: 'About it' });
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(res.headers['content-type'], 'application/json');
  const p = await projectRow(c, res.json().id);
  assert.equal(p.path, 'my-project');
  assert.equal(p.namespace_id, sub.id);
  assert.equal(p.creator_id, 1);
  assert.equal(p.visibility, 'private');
  assert.equal(p.default_branch, 'main');
  assert.equal(p.last_activity_at, p.created_at);
  assert.deepEqual(
    res.json(),
    expectedProject(p, { namespace: groupNs(sub), namespaceFullName: 'Group / Sub Group', shape: 'full', admin: true, adminProject: true }),
  );
  // group projects get no member row: the group's members have access through it
  assert.deepEqual(await c.db.kysely.selectFrom('members').selectAll().where('source_type', '=', 'Project').execute(), []);
  assert.deepEqual(await events(c), [
    {
      kind: 'system_event',
      state: 'queued',
      payload: {
        created_at: p.created_at,
        updated_at: p.updated_at,
        event_name: 'project_create',
        name: 'My Project',
        owner_email: null,
        owner_name: null,
        owners: [],
        path: 'my-project',
        path_with_namespace: 'grp/sub/my-project',
        project_id: p.id,
        project_namespace_id: sub.id,
        project_visibility: 'private',
      },
    },
  ]);
});

test('a user creates a personal project from its path: the name is the path, the user is its Owner member, defaults from the settings', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user({ username: 'alice', name: 'Alice A' });
  const { headers } = await seed.token(u);
  await c.settings.save({ default_project_visibility: 'internal' });
  const res = await post(app, headers, { path: 'tool.kit' });
  assert.equal(res.statusCode, 201, res.body);
  const p = await projectRow(c, res.json().id);
  assert.equal(p.name, 'tool.kit');
  assert.equal(p.visibility, 'internal');
  const ns = await seed.namespaceOf(u);
  assert.deepEqual(
    res.json(),
    expectedProject(p, { namespace: userNs(ns, u), namespaceFullName: 'Alice A', shape: 'full', level: 50, adminProject: true, owner: u }),
  );
  const members = await c.db.kysely.selectFrom('members').select(['source_type', 'source_id', 'user_id', 'access_level', 'created_by_id']).execute();
  assert.deepEqual(members, [{ source_type: 'Project', source_id: p.id, user_id: u.id, access_level: 50, created_by_id: u.id }]);
  const [ev] = await events(c);
  assert.equal(ev.payload.event_name, 'project_create');
  assert.deepEqual(ev.payload.owners, [{ name: 'Alice A', email: u.email }]);
  assert.equal(ev.payload.owner_name, 'Alice A');
  assert.equal(ev.payload.owner_email, u.email);
  assert.equal(ev.payload.path_with_namespace, 'alice/tool.kit');
});

test('create: both name and path, topics, settings and feature flags are kept', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const res = await post(app, root, {
    name: 'Readable Name',
    path: 'code-path',
    topics: 'beta, alpha,beta',
    issues_enabled: false,
    merge_method: 'ff',
    emails_disabled: true,
    wiki_access_level: 'private',
    initialize_with_readme: true,
    default_branch: 'trunk',
    visibility: 'public',
    build_timeout: 7200,
  });
  assert.equal(res.statusCode, 201, res.body);
  const b = res.json();
  assert.equal(b.name, 'Readable Name');
  assert.equal(b.path, 'code-path');
  assert.deepEqual(b.topics, ['alpha', 'beta']);
  assert.deepEqual(b.tag_list, ['alpha', 'beta']);
  assert.equal(b.default_branch, 'trunk');
  assert.equal(b.visibility, 'public');
  assert.equal(b.issues_enabled, false);
  assert.equal(b.issues_access_level, 'disabled');
  assert.equal(b.open_issues_count, undefined, 'no open_issues_count without issues');
  assert.equal(b._links.issues, undefined);
  assert.equal(b.merge_method, 'ff');
  assert.equal(b.emails_enabled, false);
  assert.equal(b.emails_disabled, true);
  assert.equal(b.wiki_access_level, 'private');
  assert.equal(b.wiki_enabled, true, 'the administrator may use a private feature');
  assert.equal(b.pages_access_level, 'enabled', 'public projects publish pages to everyone');
  assert.equal(b.build_timeout, 7200);
  const p = await projectRow(c, b.id);
  const settings = JSON.parse(p.settings);
  assert.equal(settings.initialize_with_readme, true, 'the README intent is kept for the repository');
  assert.equal(settings.issues_access_level, 'disabled');
  assert.deepEqual(JSON.parse(p.topics), ['beta', 'alpha']);
  // tag_list is the older name of topics
  const older = await post(app, root, { name: 'older', tag_list: ['x', 'y'] });
  assert.deepEqual(older.json().topics, ['x', 'y']);
});

test('create: bad parameters are refused as Grape refuses them', async (t) => {
  const { app, root } = await buildTestApp(t);
  const cases: [unknown, unknown][] = [
    [{}, { error: 'name, path are missing, at least one parameter must be provided' }],
    [{ description: 'x' }, { error: 'name, path are missing, at least one parameter must be provided' }],
    [{ name: 'x', visibility: 'secret' }, { error: 'visibility does not have a valid value' }],
    [{ name: 'x', namespace_id: 'abc' }, { error: 'namespace_id is invalid' }],
    [{ name: 'x', merge_method: 'squash' }, { error: 'merge_method does not have a valid value' }],
    [{ name: 'x', issues_access_level: 'public' }, { error: 'issues_access_level does not have a valid value' }],
    [{ name: 'x', build_timeout: 'long' }, { error: 'build_timeout is invalid' }],
  ];
  for (const [payload, body] of cases) {
    const res = await post(app, root, payload);
    assert.equal(res.statusCode, 400, JSON.stringify(payload));
    assert.deepEqual(res.json(), body, JSON.stringify(payload));
  }
});

test("create: the model's validations, with GitLab's messages", async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const nameMsg = "can contain only letters, digits, emoji, '_', '.', '+', dashes, or spaces. It must start with a letter, digit, emoji, or '_'.";
  const pathMsg = "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'";
  const cases: [Record<string, unknown>, Record<string, string[]>][] = [
    [{ name: '-dash', path: 'ok' }, { name: [nameMsg] }],
    [{ name: 'ok', path: '-dash' }, { path: [pathMsg] }],
    [{ name: 'ok', path: 'repo.git' }, { path: [pathMsg] }],
    [{ name: 'ok', path: 'feed.atom' }, { path: [pathMsg] }],
    [{ name: 'ok', path: 'has space' }, { path: [pathMsg] }],
    [{ name: 'badges' }, { path: ['badges is a reserved name'] }],
    [{ name: 'Fine', path: 'Tree' }, { path: ['Tree is a reserved name'] }],
    [
      { name: '', path: '' },
      { name: ["can't be blank", nameMsg], path: ["can't be blank", pathMsg] },
    ],
    [{ name: 'n'.repeat(256), path: 'ok' }, { name: ['is too long (maximum is 255 characters)'] }],
    [{ name: 'ok', description: 'd'.repeat(2001) }, { description: ['is too long (maximum is 2000 characters)'] }],
    [{ name: 'ok', ci_config_path: '../secret.yml' }, { ci_config_path: ['cannot include leading slash or directory traversal.'] }],
    [{ name: 'ok', build_timeout: 60 }, { build_timeout: ['needs to be between 10 minutes and 1 month'] }],
  ];
  for (const [payload, message] of cases) {
    const res = await post(app, root, payload);
    assert.equal(res.statusCode, 400, `${JSON.stringify(payload).slice(0, 80)} → ${res.body}`);
    assert.deepEqual(res.json(), { message }, JSON.stringify(payload).slice(0, 80));
  }
  // names with emoji, '+' and spaces are fine; an unusable name gives a path from parameterize
  const ok = await post(app, root, { name: 'Café + Bar 🚀' });
  assert.equal(ok.statusCode, 201, ok.body);
  assert.equal(ok.json().path, 'cafe-bar');
  const created = await c.db.kysely.selectFrom('jobs').select('payload').where('payload', 'like', '%project_create%').execute();
  assert.equal(created.length, 1, 'refused creations record no event');
  // a blank name takes the path
  const blank = await post(app, root, { name: ' ', path: 'from-path' });
  assert.equal(blank.json().name, 'from-path');
});

test('create: names and paths are unique in a namespace (any case), and a path may not be a subgroup', async (t) => {
  const { app, seed, root } = await buildTestApp(t);
  const g = await seed.group({ path: 'grp' });
  await seed.group({ path: 'child', parent: g });
  assert.equal((await post(app, root, { name: 'Tool', path: 'tool', namespace_id: g.id })).statusCode, 201);
  let res = await post(app, root, { name: 'tool', namespace_id: g.id });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), {
    message: { 'project_namespace.name': ['has already been taken'], name: ['has already been taken'], path: ['has already been taken'] },
  });
  res = await post(app, root, { name: 'Other', path: 'TOOL', namespace_id: g.id });
  assert.deepEqual(res.json(), { message: { path: ['has already been taken'] } });
  res = await post(app, root, { name: 'Child', path: 'child', namespace_id: g.id });
  assert.deepEqual(res.json(), { message: { path: ['has already been taken'] } });
  // the same path elsewhere is fine
  assert.equal((await post(app, root, { name: 'Tool', path: 'tool' })).statusCode, 201);
});

test('create: the namespace must be one the caller may create projects in', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user();
  const other = await seed.user();
  const { headers } = await seed.token(u);
  const reporterOf = await seed.group({ visibility: 'public' });
  await seed.member({ group: reporterOf }, u, 20);
  const developerOf = await seed.group();
  await seed.member({ group: developerOf }, u, 30);
  const hidden = await seed.group();
  const invalid = { message: { namespace: ['is not valid'] } };
  for (const namespace_id of [(await seed.namespaceOf(other)).id, reporterOf.id, hidden.id, 99999]) {
    const res = await post(app, headers, { name: 'p', namespace_id });
    assert.equal(res.statusCode, 400, String(namespace_id));
    assert.deepEqual(res.json(), invalid);
  }
  // project_creation_level decides: developers by default, maintainers when the group says so
  assert.equal((await post(app, headers, { name: 'p', namespace_id: developerOf.id })).statusCode, 201);
  await c.db.kysely.updateTable('namespaces').set({ project_creation_level: 'maintainer' }).where('id', '=', developerOf.id).execute();
  assert.deepEqual((await post(app, headers, { name: 'q', namespace_id: developerOf.id })).json(), invalid);
  // into one's own namespace by id
  assert.equal((await post(app, headers, { name: 'mine', namespace_id: (await seed.namespaceOf(u)).id })).statusCode, 201);
});

test('create: visibility is bounded by the group and by restricted_visibility_levels (administrators excepted)', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const u = await seed.user();
  const { headers } = await seed.token(u);
  const g = await seed.group({ visibility: 'internal' });
  await seed.member({ group: g }, u, 40);
  let res = await post(app, headers, { name: 'p', namespace_id: g.id, visibility: 'public' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: { visibility_level: ['public is not allowed in a internal group.'] } }, 'refused, not lowered');
  await c.settings.save({ restricted_visibility_levels: ['public'] });
  res = await post(app, headers, { name: 'q', visibility: 'public' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: { visibility_level: ['public has been restricted by your GitLab administrator'] } });
  res = await post(app, root, { name: 'q', visibility: 'public' });
  assert.equal(res.statusCode, 201);
  assert.equal(res.json().visibility, 'public');
});

test('create: personal projects count against projects_limit (group projects do not)', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const u = await seed.user();
  const { headers } = await seed.token(u);
  const g = await seed.group();
  await seed.member({ group: g }, u, 50);
  await c.db.kysely.updateTable('users').set({ projects_limit: 0 }).where('id', '=', u.id).execute();
  let res = await post(app, headers, { name: 'p' });
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { error: ['Personal project creation is not allowed. Please contact your administrator with questions'] });
  assert.equal((await post(app, headers, { name: 'p', namespace_id: g.id })).statusCode, 201);
  await c.db.kysely.updateTable('users').set({ projects_limit: 1 }).where('id', '=', u.id).execute();
  assert.equal((await post(app, headers, { name: 'first' })).statusCode, 201);
  res = await post(app, headers, { name: 'second' });
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { error: ['Your project limit is 1 projects! Please contact your administrator to increase it'] });
});

test('create: authentication and scopes', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const u = await seed.user();
  let res = await post(app, {}, { name: 'p' });
  assert.equal(res.statusCode, 401);
  assert.deepEqual(res.json(), { message: '401 Unauthorized' });
  const readOnly = await seed.token(u, { scopes: ['read_api'] });
  res = await post(app, readOnly.headers, { name: 'p' });
  assert.equal(res.statusCode, 403);
  assert.equal(res.json().error, 'insufficient_scope');
});

test('GET /projects/:id by id or URL-encoded full path (any case); 404 for missing and invisible projects', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const g = await seed.group({ path: 'grp', name: 'Grp' });
  const sub = await seed.group({ path: 'sub', name: 'Sub', parent: g });
  const created = (await post(app, root, { name: 'proj', namespace_id: sub.id })).json();
  const p = await projectRow(c, created.id);
  const want = expectedProject(p, { namespace: groupNs(sub), namespaceFullName: 'Grp / Sub', shape: 'with_access', admin: true, adminProject: true });
  for (const url of [`/api/v4/projects/${p.id}`, '/api/v4/projects/grp%2Fsub%2Fproj', '/api/v4/projects/GRP%2Fsub%2FProj']) {
    const res = await get(app, url, root);
    assert.equal(res.statusCode, 200, url);
    assert.deepEqual(res.json(), want, url);
  }
  const notFound = { message: '404 Project Not Found' };
  for (const url of ['/api/v4/projects/999', '/api/v4/projects/grp%2Fnope', '/api/v4/projects/nope']) {
    const res = await get(app, url, root);
    assert.equal(res.statusCode, 404, url);
    assert.deepEqual(res.json(), notFound);
  }
  const stranger = await seed.token(await seed.user());
  assert.deepEqual((await get(app, `/api/v4/projects/${p.id}`, stranger.headers)).json(), notFound);
  assert.deepEqual((await get(app, '/api/v4/projects/grp%2Fsub%2Fproj')).json(), notFound);
  // an unencoded path is not a project route at all
  const raw = await get(app, '/api/v4/projects/grp/sub/proj', root);
  assert.equal(raw.statusCode, 404);
  assert.deepEqual(raw.json(), { error: '404 Not Found' });
});

test('GET /projects/:id: anonymous callers get ProjectDetails; members get their permissions and the fields their role may see', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const owner = await seed.user({ username: 'owner', name: 'Owner O' });
  const ownerTok = await seed.token(owner);
  const pub = (await post(app, ownerTok.headers, { name: 'pub', visibility: 'public', description: 'Hello <b>world</b>' })).json();
  const ns = await seed.namespaceOf(owner);

  // anonymous: the basic fields only
  let res = await get(app, `/api/v4/projects/${pub.id}`);
  assert.equal(res.statusCode, 200);
  const row = { ...pub, topics: '[]', archived: 0, settings: '{}' } as unknown as ProjectRow;
  assert.deepEqual(res.json(), expectedProject(row, { namespace: userNs(ns, owner), namespaceFullName: 'Owner O', shape: 'details' }));
  res = await get(app, `/api/v4/projects/${pub.id}?license=true`);
  assert.equal(res.json().license_url, null);
  assert.equal(res.json().license, null);
  assert.ok('license' in res.json());

  // the owner: permissions.project_access from their member row; no group_access in a personal namespace
  res = await get(app, `/api/v4/projects/${pub.id}`, ownerTok.headers);
  assert.deepEqual(res.json().permissions, { project_access: { access_level: 50, notification_level: 3 }, group_access: null });
  assert.equal(res.json().description_html, '<p dir="auto">Hello &#60;b&#62;world&#60;/b&#62;</p>');

  // a guest of the group of a private project: no code, no merge requests, no CI settings
  const g = await seed.group({ path: 'team', name: 'Team' });
  const priv = await seed.project({ namespace: g, path: 'secret' });
  const guest = await seed.user();
  await seed.member({ group: g }, guest, 10);
  res = await get(app, `/api/v4/projects/${priv.id}`, (await seed.token(guest)).headers);
  assert.equal(res.statusCode, 200);
  assert.deepEqual(
    res.json(),
    expectedProject(priv, {
      namespace: groupNs(g),
      namespaceFullName: 'Team',
      shape: 'with_access',
      readCode: false,
      level: 10,
      permissions: { project_access: null, group_access: 10 },
    }),
  );
  // a maintainer directly on the project and a reporter of the group: both levels are shown
  const m = await seed.user();
  await seed.member({ project: priv }, m, 40);
  await seed.member({ group: g }, m, 20);
  res = await get(app, `/api/v4/projects/${priv.id}`, (await seed.token(m)).headers);
  assert.deepEqual(
    res.json(),
    expectedProject(priv, {
      namespace: groupNs(g),
      namespaceFullName: 'Team',
      shape: 'with_access',
      adminProject: true,
      level: 40,
      permissions: { project_access: 40, group_access: 20 },
    }),
  );
  // inherited from a parent group
  const sub = await seed.group({ path: 'inner', name: 'Inner', parent: g });
  const deep = await seed.project({ namespace: sub, path: 'deep' });
  res = await get(app, `/api/v4/projects/team%2Finner%2Fdeep`, (await seed.token(guest)).headers);
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json().permissions, { project_access: null, group_access: { access_level: 10, notification_level: 3 } });
  assert.equal(res.json().name_with_namespace, `Team / Inner / ${deep.name}`);
});

test('a renamed project: GET on the old path answers 301 to the new one, other methods 405, strangers 404', async (t) => {
  const { app, seed, root } = await buildTestApp(t);
  const g = await seed.group({ path: 'grp' });
  const p = (await post(app, root, { name: 'old-name', path: 'old', namespace_id: g.id })).json();
  const renamed = await app.inject({ method: 'PUT', url: `/api/v4/projects/${p.id}`, headers: root, payload: { path: 'renamed' } });
  assert.equal(renamed.statusCode, 200, renamed.body);
  let res = await get(app, '/api/v4/projects/grp%2Fold?statistics=true', root);
  assert.equal(res.statusCode, 301);
  assert.equal(res.headers.location, `${EXTERNAL_URL}/api/v4/projects/grp%2Frenamed?statistics=true`);
  res = await get(app, '/api/v4/projects/grp%2Fold/members', root);
  assert.ok([301, 404].includes(res.statusCode));
  for (const method of ['PUT', 'DELETE', 'POST']) {
    const url = method === 'POST' ? '/api/v4/projects/grp%2Fold/archive' : '/api/v4/projects/grp%2Fold';
    res = await app.inject({ method, url, headers: root, payload: method === 'PUT' ? { description: 'x' } : undefined });
    assert.equal(res.statusCode, 405, method);
    assert.deepEqual(res.json(), { message: 'Non GET methods are not allowed for moved projects' });
  }
  const stranger = await seed.token(await seed.user());
  res = await get(app, '/api/v4/projects/grp%2Fold', stranger.headers);
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Project Not Found' });
  // the old path is free again: a new project there stops the redirect
  assert.equal((await post(app, root, { name: 'reborn', path: 'old', namespace_id: g.id })).statusCode, 201);
  res = await get(app, '/api/v4/projects/grp%2Fold', root);
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().name, 'reborn');
});

test('POST /projects/user/:user_id: an administrator creates a project as the user would', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const u = await seed.user({ username: 'bob', name: 'Bob' });
  let res = await app.inject({ method: 'POST', url: `/api/v4/projects/user/${u.id}`, headers: root, payload: { name: 'Bobs Tool' } });
  assert.equal(res.statusCode, 201, res.body);
  const p = await projectRow(c, res.json().id);
  assert.equal(p.creator_id, u.id);
  assert.equal(p.path, 'bobs-tool');
  assert.deepEqual(
    res.json(),
    expectedProject(p, { namespace: userNs(await seed.namespaceOf(u), u), namespaceFullName: 'Bob', shape: 'full', admin: true, adminProject: true, owner: u }),
  );
  const member = await c.db.kysely.selectFrom('members').select(['user_id', 'access_level']).where('source_id', '=', p.id).execute();
  assert.deepEqual(member, [{ user_id: u.id, access_level: 50 }]);
  // the user's own limits apply
  await c.db.kysely.updateTable('users').set({ projects_limit: 1 }).where('id', '=', u.id).execute();
  res = await app.inject({ method: 'POST', url: `/api/v4/projects/user/${u.id}`, headers: root, payload: { name: 'second' } });
  assert.equal(res.statusCode, 403);
  res = await app.inject({ method: 'POST', url: `/api/v4/projects/user/${u.id}`, headers: root, payload: { path: 'x' } });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'name is missing' }]);
  res = await app.inject({ method: 'POST', url: '/api/v4/projects/user/9999', headers: root, payload: { name: 'x' } });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 User Not Found' }]);
  res = await app.inject({ method: 'POST', url: `/api/v4/projects/user/${u.id}`, headers: (await seed.token(u)).headers, payload: { name: 'x' } });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
});
