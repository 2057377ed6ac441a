// Groups API: create (with its validation, permissions, owner membership and events) and single
// groups by id or URL-encoded full path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, EXTERNAL_URL, type TestApp } from '../../helpers/build-app.ts';
import type { NamespaceRow } from '../../../src/db/schema.ts';

const DEFAULT_PROTECTION = {
  allowed_to_push: [{ access_level: 40 }],
  allow_force_push: false,
  allowed_to_merge: [{ access_level: 40 }],
  developer_can_initial_push: false,
};

/** Entities::Group for a group with GitLab's defaults. */
function groupEntity(g: NamespaceRow, fullName: string, over: Record<string, unknown> = {}) {
  return {
    id: g.id,
    web_url: `${EXTERNAL_URL}/groups/${g.full_path}`,
    name: g.name,
    path: g.path,
    description: g.description,
    visibility: g.visibility,
    share_with_group_lock: false,
    require_two_factor_authentication: false,
    two_factor_grace_period: 48,
    project_creation_level: g.project_creation_level,
    auto_devops_enabled: null,
    subgroup_creation_level: g.subgroup_creation_level,
    emails_disabled: false,
    emails_enabled: true,
    mentions_disabled: null,
    lfs_enabled: true,
    math_rendering_limits_enabled: true,
    lock_math_rendering_limits_enabled: false,
    default_branch: null,
    default_branch_protection: 2,
    default_branch_protection_defaults: DEFAULT_PROTECTION,
    avatar_url: null,
    request_access_enabled: g.request_access_enabled === 1,
    full_name: fullName,
    full_path: g.full_path,
    created_at: g.created_at,
    parent_id: g.parent_id,
    organization_id: 1,
    shared_runners_setting: 'enabled',
    max_artifacts_size: null,
    ...over,
  };
}

async function groupRow(c: TestApp['c'], id: number): Promise<NamespaceRow> {
  return c.db.kysely.selectFrom('namespaces').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

async function events(c: TestApp['c']): Promise<Record<string, unknown>[]> {
  const rows = await c.db.kysely.selectFrom('jobs').select(['kind', 'payload']).where('kind', '=', 'system_event').orderBy('id').execute();
  return rows.map((r) => JSON.parse(r.payload));
}

test('POST /groups: a user creates a top-level group, becomes its Owner, and the events are recorded', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const alice = await seed.user({ username: 'alice', name: 'Alice' });
  const { headers } = await seed.token(alice);
  const before = (await events(c)).length;

  const res = await app.inject({
    method: 'POST',
    url: '/api/v4/groups',
    headers,
    payload: {
      name: 'My Group',
      path: 'my-group',
      description: 'Things',
      visibility: 'internal',
      request_access_enabled: false,
      project_creation_level: 'maintainer',
      subgroup_creation_level: 'owner',
    },
  });
  assert.equal(res.statusCode, 201);
  assert.equal(res.headers['content-type'], 'application/json');
  const g = await groupRow(c, res.json().id);
  assert.deepEqual(res.json(), {
    ...groupEntity(g, 'My Group', {
      description: 'Things',
      visibility: 'internal',
      request_access_enabled: false,
      project_creation_level: 'maintainer',
      subgroup_creation_level: 'owner',
    }),
    shared_with_groups: [],
    prevent_sharing_groups_outside_hierarchy: false,
  });
  assert.equal(g.type, 'Group');
  assert.equal(g.full_path, 'my-group');
  assert.equal(g.traversal_ids, `/${g.id}/`);
  assert.equal(g.created_by_id, alice.id);

  const members = await c.db.kysely.selectFrom('members').selectAll().where('source_type', '=', 'Namespace').where('source_id', '=', g.id).execute();
  assert.deepEqual(
    members.map((m) => [m.user_id, m.access_level, m.expires_at]),
    [[alice.id, 50, null]],
  );

  const recorded = (await events(c)).slice(before);
  assert.deepEqual(recorded, [
    {
      created_at: g.created_at,
      updated_at: g.updated_at,
      event_name: 'group_create',
      name: 'My Group',
      owner_email: null,
      owner_name: null,
      path: 'my-group',
      full_path: 'my-group',
      group_id: g.id,
    },
    {
      created_at: members[0].created_at,
      updated_at: members[0].updated_at,
      event_name: 'user_add_to_group',
      group_access: 'Owner',
      expires_at: null,
      group_id: g.id,
      group_name: 'My Group',
      group_path: 'my-group',
      full_path: 'my-group',
      user_email: alice.email,
      user_name: 'Alice',
      user_username: 'alice',
      user_id: alice.id,
    },
  ]);

  // The owner reads it back with the detail entity (projects, admin-only protocol of a root group).
  const show = await app.inject({ method: 'GET', url: `/api/v4/groups/${g.id}`, headers });
  assert.equal(show.statusCode, 200);
  assert.deepEqual(show.json(), {
    ...groupEntity(g, 'My Group', {
      description: 'Things',
      visibility: 'internal',
      request_access_enabled: false,
      project_creation_level: 'maintainer',
      subgroup_creation_level: 'owner',
    }),
    shared_with_groups: [],
    enabled_git_access_protocol: 'all',
    prevent_sharing_groups_outside_hierarchy: false,
    projects: [],
    shared_projects: [],
  });
});

test('POST /groups: defaults come from the application settings; a subgroup under a parent the user may create in', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  await c.settings.save({ default_group_visibility: 'internal' });
  const bob = await seed.user({ username: 'bob' });
  const { headers } = await seed.token(bob);

  const top = await app.inject({ method: 'POST', url: '/api/v4/groups', headers, payload: { name: 'Top', path: 'top' } });
  assert.equal(top.statusCode, 201);
  assert.equal(top.json().visibility, 'internal');
  assert.equal(top.json().project_creation_level, 'developer');
  assert.equal(top.json().subgroup_creation_level, 'maintainer');
  assert.equal(top.json().request_access_enabled, true);

  // form-encoded, as curl users send it
  const sub = await app.inject({
    method: 'POST',
    url: '/api/v4/groups',
    headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
    payload: `name=Sub&path=sub&parent_id=${top.json().id}&visibility=private`,
  });
  assert.equal(sub.statusCode, 201);
  const s = await groupRow(c, sub.json().id);
  assert.deepEqual(sub.json(), { ...groupEntity(s, 'Top / Sub'), shared_with_groups: [] });
  assert.equal(s.full_path, 'top/sub');
  assert.equal(s.parent_id, top.json().id);
  assert.equal(s.traversal_ids, `/${top.json().id}/${s.id}/`);

  // by URL-encoded full path, as the administrator (who sees every group)
  const byPath = await app.inject({ method: 'GET', url: '/api/v4/groups/top%2Fsub', headers: root });
  assert.equal(byPath.statusCode, 200);
  assert.deepEqual(byPath.json(), { ...groupEntity(s, 'Top / Sub'), shared_with_groups: [], projects: [], shared_projects: [] });
  const caseInsensitive = await app.inject({ method: 'GET', url: '/api/v4/groups/TOP%2FSub', headers: root });
  assert.equal(caseInsensitive.json().id, s.id);

  // with_projects=false leaves the projects out
  const noProjects = await app.inject({ method: 'GET', url: `/api/v4/groups/${top.json().id}?with_projects=false`, headers });
  assert.equal(noProjects.statusCode, 200);
  assert.equal('projects' in noProjects.json(), false);
  assert.equal('shared_projects' in noProjects.json(), false);
  assert.equal(noProjects.json().enabled_git_access_protocol, 'all');

  // a maintainer of the parent may create subgroups (subgroup_creation_level maintainer); the
  // instance default (internal) is more open than the private parent, so it must be given
  const maint = await seed.user();
  await seed.member({ group: s }, maint, 40);
  const maintH = (await seed.token(maint)).headers;
  const refused = await app.inject({ method: 'POST', url: '/api/v4/groups', headers: maintH, payload: { name: 'Deep', path: 'deep', parent_id: s.id } });
  assert.deepEqual(refused.json(), {
    message: 'Failed to save group {:visibility_level=>["internal is not allowed since the parent group has a private visibility."]}',
  });
  const m = await app.inject({
    method: 'POST',
    url: '/api/v4/groups',
    headers: maintH,
    payload: { name: 'Deep', path: 'deep', parent_id: s.id, visibility: 'private' },
  });
  assert.equal(m.statusCode, 201);
  assert.equal(m.json().full_path, 'top/sub/deep');
  assert.equal(m.json().full_name, 'Top / Sub / Deep');
  assert.equal(m.json().visibility, 'private');
});

test('POST /groups: missing and invalid parameters', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const { headers } = await seed.token(await seed.user());
  const post = (payload: Record<string, unknown>) => app.inject({ method: 'POST', url: '/api/v4/groups', headers, payload });

  let res = await post({});
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'name is missing, path is missing' });
  res = await post({ name: 'x' });
  assert.deepEqual(res.json(), { error: 'path is missing' });
  res = await post({ name: 'x', path: 'xx', visibility: 'secret' });
  assert.deepEqual(res.json(), { error: 'visibility does not have a valid value' });
  res = await post({ name: 'x', path: 'xx', project_creation_level: 'everyone' });
  assert.deepEqual(res.json(), { error: 'project_creation_level does not have a valid value' });
  res = await post({ name: 'x', path: 'xx', subgroup_creation_level: 'developer' });
  assert.deepEqual(res.json(), { error: 'subgroup_creation_level does not have a valid value' });
  res = await post({ name: 'x', path: 'xx', parent_id: 'abc' });
  assert.deepEqual(res.json(), { error: 'parent_id is invalid' });
  res = await post({ name: 'x', path: 'xx', default_branch_protection: 7 });
  assert.deepEqual(res.json(), { error: 'default_branch_protection does not have a valid value' });
  res = await post({ name: 'x', path: 'xx', default_branch_protection: 'full' });
  assert.deepEqual(res.json(), { error: 'default_branch_protection is invalid' });
  res = await post({ name: 'x', path: 'xx', shared_runners_setting: 'on' });
  assert.deepEqual(res.json(), { error: 'shared_runners_setting does not have a valid value' });

  const format = "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'.";
  res = await post({ name: 'Bad', path: '-bad' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: `Failed to save group {:path=>["${format}"]}` });
  res = await post({ name: 'Bad', path: 'bad.git' });
  assert.deepEqual(res.json(), { message: `Failed to save group {:path=>["${format}"]}` });
  res = await post({ name: 'Bad', path: 'a b' });
  assert.deepEqual(res.json(), { message: `Failed to save group {:path=>["${format}"]}` });
  res = await post({ name: 'Bad', path: 'x' });
  assert.deepEqual(res.json(), { message: 'Failed to save group {:path=>["is too short (minimum is 2 characters)"]}' });
  res = await post({ name: 'API', path: 'api' });
  assert.deepEqual(res.json(), { message: 'Failed to save group {:path=>["api is a reserved name"]}' });
  // this server's own top-level route: translation exports at /git/<project>/<component>/
  res = await post({ name: 'Git', path: 'Git' });
  assert.deepEqual(res.json(), { message: 'Failed to save group {:path=>["Git is a reserved name"]}' });
  res = await post({ name: '', path: '' });
  assert.deepEqual(res.json(), {
    message:
      "Failed to save group {:name=>[\"can't be blank\", \"can contain only letters, digits, emoji, '_', '.', dash, space, parenthesis. It must start with letter, digit, emoji or '_'.\"], " +
      `:path=>["can't be blank", "${format}", "is too short (minimum is 2 characters)"]}`,
  });
  res = await post({ name: 'Ok', path: 'ok', description: 'd'.repeat(256) });
  assert.deepEqual(res.json(), { message: 'Failed to save group {:description=>["is too long (maximum is 255 characters)"]}' });
});

test('POST /groups: taken paths (groups, usernames, projects in the parent) and sibling names', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const user = await seed.user({ username: 'carol' });
  const { headers } = await seed.token(user);
  const post = (payload: Record<string, unknown>) => app.inject({ method: 'POST', url: '/api/v4/groups', headers, payload });
  const taken = { message: 'Failed to save group {:path=>["has already been taken"]}' };

  const first = await post({ name: 'Team', path: 'team' });
  assert.equal(first.statusCode, 201);
  let res = await post({ name: 'Team 2', path: 'TEAM' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), taken);
  res = await post({ name: 'Carol', path: 'carol' });
  assert.deepEqual(res.json(), taken);

  const parentId = first.json().id;
  await seed.project({ namespace: { id: parentId } as NamespaceRow, path: 'app' });
  res = await post({ name: 'App', path: 'app', parent_id: parentId });
  assert.deepEqual(res.json(), taken);
  assert.equal((await post({ name: 'Web', path: 'web', parent_id: parentId })).statusCode, 201);
  res = await post({ name: 'Web', path: 'web2', parent_id: parentId });
  assert.deepEqual(res.json(), { message: 'Failed to save group {:name=>["has already been taken"]}' });
  // the same path under another parent, and the same name at the top level, are fine
  assert.equal((await post({ name: 'Web', path: 'web' })).statusCode, 201);
  assert.equal((await post({ name: 'Team', path: 'team-2' })).statusCode, 201);
});

test('POST /groups: who may create groups and subgroups', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const post = (headers: Record<string, string>, payload: Record<string, unknown>) => app.inject({ method: 'POST', url: '/api/v4/groups', headers, payload });

  const anon = await post({}, { name: 'A', path: 'aa' });
  assert.equal(anon.statusCode, 401);
  assert.deepEqual(anon.json(), { message: '401 Unauthorized' });

  const noGroups = await seed.user();
  await c.db.kysely.updateTable('users').set({ can_create_group: 0 }).where('id', '=', noGroups.id).execute();
  let res = await post((await seed.token(noGroups)).headers, { name: 'A', path: 'aa' });
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: '403 Forbidden' });

  const user = await seed.user();
  const headers = (await seed.token(user)).headers;
  const readOnly = (await seed.token(user, { scopes: ['read_api'] })).headers;
  res = await post(readOnly, { name: 'A', path: 'aa' });
  assert.equal(res.statusCode, 403);
  assert.equal(res.json().error, 'insufficient_scope');

  await c.settings.save({ can_create_group: false });
  res = await post(headers, { name: 'A', path: 'aa' });
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: '403 Forbidden' });
  // administrators still can
  res = await post(root, { name: 'A', path: 'aa' });
  assert.equal(res.statusCode, 201);
  await c.settings.save({ can_create_group: true });

  // subgroups: the parent must be visible (404) and allow the user to create in it (403)
  const hidden = await seed.group({ path: 'hidden', visibility: 'private' });
  res = await post(headers, { name: 'S', path: 'ss', parent_id: hidden.id });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Group Not Found' });
  res = await post(headers, { name: 'S', path: 'ss', parent_id: 999999 });
  assert.equal(res.statusCode, 404);
  const open = await seed.group({ path: 'open', visibility: 'public' });
  res = await post(headers, { name: 'S', path: 'ss', parent_id: open.id });
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: '403 Forbidden' });
  await seed.member({ group: open }, user, 30);
  res = await post(headers, { name: 'S', path: 'ss', parent_id: open.id });
  assert.equal(res.statusCode, 403);
  // owners only, when the parent says so
  const strict = await seed.group({ path: 'strict', visibility: 'private' });
  await c.db.kysely.updateTable('namespaces').set({ subgroup_creation_level: 'owner' }).where('id', '=', strict.id).execute();
  await seed.member({ group: strict }, user, 40);
  res = await post(headers, { name: 'S', path: 'ss', parent_id: strict.id });
  assert.equal(res.statusCode, 403);
  // nothing was created by the refused requests
  const count = await c.db.kysely
    .selectFrom('namespaces')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('path', '=', 'ss')
    .executeTakeFirstOrThrow();
  assert.equal(Number(count.n), 0);
});

test('POST /groups: visibility restricted by the administrator, and limited by the parent', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const user = await seed.user();
  const { headers } = await seed.token(user);
  await c.settings.save({ restricted_visibility_levels: ['public'] });

  let res = await app.inject({ method: 'POST', url: '/api/v4/groups', headers, payload: { name: 'P', path: 'pub', visibility: 'public' } });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: 'Failed to save group {:visibility_level=>["public has been restricted by your GitLab administrator"]}' });
  // the default visibility is restricted too
  await c.settings.save({ restricted_visibility_levels: ['private'] });
  res = await app.inject({ method: 'POST', url: '/api/v4/groups', headers, payload: { name: 'P', path: 'pub' } });
  assert.deepEqual(res.json(), { message: 'Failed to save group {:visibility_level=>["private has been restricted by your GitLab administrator"]}' });
  // administrators are not restricted
  res = await app.inject({ method: 'POST', url: '/api/v4/groups', headers: root, payload: { name: 'P', path: 'pub', visibility: 'private' } });
  assert.equal(res.statusCode, 201);
  await c.settings.save({ restricted_visibility_levels: [] });

  const parent = await seed.group({ path: 'internal-parent', visibility: 'internal' });
  await seed.member({ group: parent }, user, 50);
  res = await app.inject({ method: 'POST', url: '/api/v4/groups', headers, payload: { name: 'S', path: 'sub', parent_id: parent.id, visibility: 'public' } });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), {
    message: 'Failed to save group {:visibility_level=>["public is not allowed since the parent group has a internal visibility."]}',
  });
  res = await app.inject({ method: 'POST', url: '/api/v4/groups', headers, payload: { name: 'S', path: 'sub', parent_id: parent.id, visibility: 'internal' } });
  assert.equal(res.statusCode, 201);
});

test('GET /groups/:id: 404 for invisible groups, visible through membership of a subgroup', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const top = await seed.group({ path: 'secret', visibility: 'private' });
  const sub = await seed.group({ path: 'inner', parent: top, visibility: 'private' });
  const pub = await seed.group({ path: 'open', visibility: 'public' });
  const internal = await seed.group({ path: 'corp', visibility: 'internal' });
  const stranger = await seed.token(await seed.user());
  const member = await seed.user();
  await seed.member({ group: sub }, member, 10);
  const memberH = (await seed.token(member)).headers;

  for (const url of [`/api/v4/groups/${top.id}`, '/api/v4/groups/secret', '/api/v4/groups/secret%2Finner', '/api/v4/groups/nope', '/api/v4/groups/999999']) {
    const res = await app.inject({ method: 'GET', url, headers: stranger.headers });
    assert.equal(res.statusCode, 404, url);
    assert.deepEqual(res.json(), { message: '404 Group Not Found' });
  }
  assert.equal((await app.inject({ method: 'GET', url: `/api/v4/groups/${pub.id}` })).statusCode, 200);
  assert.equal((await app.inject({ method: 'GET', url: `/api/v4/groups/${internal.id}` })).statusCode, 404);
  assert.equal((await app.inject({ method: 'GET', url: `/api/v4/groups/${internal.id}`, headers: stranger.headers })).statusCode, 200);

  const res = await app.inject({ method: 'GET', url: '/api/v4/groups/secret', headers: memberH });
  assert.equal(res.statusCode, 200);
  // a reader without admin_group does not see the Git access protocol
  assert.equal('enabled_git_access_protocol' in res.json(), false);
  assert.equal(res.json().prevent_sharing_groups_outside_hierarchy, false);
  const inner = await app.inject({ method: 'GET', url: '/api/v4/groups/secret%2Finner', headers: memberH });
  assert.equal(inner.json().full_name, `secret / inner`);
  assert.equal('prevent_sharing_groups_outside_hierarchy' in inner.json(), false);
});

test('users: administrators see the personal namespace id (namespace_id) in single users and lists', async (t) => {
  const { app, seed, root } = await buildTestApp(t);
  const dave = await seed.user({ username: 'dave' });
  const erin = await seed.user({ username: 'erin' });
  const ns = { dave: (await seed.namespaceOf(dave)).id, erin: (await seed.namespaceOf(erin)).id, root: (await seed.namespaceOf({ id: 1 } as never)).id };

  const one = await app.inject({ method: 'GET', url: `/api/v4/users/${dave.id}`, headers: root });
  assert.equal(one.json().namespace_id, ns.dave);
  const list = await app.inject({ method: 'GET', url: '/api/v4/users?order_by=id&sort=asc', headers: root });
  assert.deepEqual(
    (list.json() as { id: number; namespace_id: number }[]).map((u) => [u.id, u.namespace_id]),
    [
      [1, ns.root],
      [dave.id, ns.dave],
      [erin.id, ns.erin],
    ],
  );
  const me = await app.inject({ method: 'GET', url: '/api/v4/user', headers: root });
  assert.equal(me.json().namespace_id, ns.root);
  // others never see it
  const other = await app.inject({ method: 'GET', url: `/api/v4/users/${dave.id}`, headers: (await seed.token(erin)).headers });
  assert.equal('namespace_id' in other.json(), false);
});
