// PUT and DELETE /groups/:id: updates with GitLab's validation, renames (descendant paths, redirects,
// 301/405 on old paths, events) and deletion of a whole subtree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, EXTERNAL_URL, type TestApp } from '../../helpers/build-app.ts';
import { eventsAfter, lastJobId } from '../../helpers/outbox.ts';
import type { NamespaceRow } from '../../../src/db/schema.ts';
import { userActor } from '../../../src/domain/access/actor.ts';
import { MovedError } from '../../../src/domain/access/resolve.ts';

async function row(c: TestApp['c'], id: number): Promise<NamespaceRow | undefined> {
  return c.db.kysely.selectFrom('namespaces').selectAll().where('id', '=', id).executeTakeFirst();
}

test('PUT /groups/:id: the owner changes attributes and gets the detail entity back', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const owner = await seed.user();
  const { headers } = await seed.token(owner);
  const group = await seed.group({ path: 'acme', name: 'Acme', visibility: 'private' });
  await seed.member({ group }, owner, 50);
  const jobs = await lastJobId(c);

  const res = await app.inject({
    method: 'PUT',
    url: `/api/v4/groups/${group.id}`,
    headers,
    payload: {
      name: 'Acme Inc',
      description: 'We make things',
      visibility: 'internal',
      request_access_enabled: false,
      share_with_group_lock: true,
      project_creation_level: 'noone',
      subgroup_creation_level: 'owner',
      lfs_enabled: false,
      emails_disabled: true,
      default_branch: 'trunk',
      two_factor_grace_period: 12,
      require_two_factor_authentication: true,
      auto_devops_enabled: false,
      mentions_disabled: true,
      max_artifacts_size: 100,
      shared_runners_setting: 'disabled_and_overridable',
      enabled_git_access_protocol: 'http',
      prevent_sharing_groups_outside_hierarchy: true,
      math_rendering_limits_enabled: false,
      lock_math_rendering_limits_enabled: true,
      default_branch_protection: 0,
      default_branch_protection_defaults: {
        allowed_to_push: [{ access_level: 30 }],
        allow_force_push: true,
        allowed_to_merge: [{ access_level: 30 }],
        developer_can_initial_push: true,
      },
    },
  });
  assert.equal(res.statusCode, 200);
  const g = (await row(c, group.id))!;
  assert.deepEqual(res.json(), {
    id: group.id,
    web_url: `${EXTERNAL_URL}/groups/acme`,
    name: 'Acme Inc',
    path: 'acme',
    description: 'We make things',
    visibility: 'internal',
    share_with_group_lock: true,
    require_two_factor_authentication: true,
    two_factor_grace_period: 12,
    project_creation_level: 'noone',
    auto_devops_enabled: false,
    subgroup_creation_level: 'owner',
    emails_disabled: true,
    emails_enabled: false,
    mentions_disabled: true,
    lfs_enabled: false,
    math_rendering_limits_enabled: false,
    lock_math_rendering_limits_enabled: true,
    default_branch: 'trunk',
    default_branch_protection: 0,
    default_branch_protection_defaults: {
      allowed_to_push: [{ access_level: 30 }],
      allow_force_push: true,
      allowed_to_merge: [{ access_level: 30 }],
      developer_can_initial_push: true,
    },
    avatar_url: null,
    request_access_enabled: false,
    full_name: 'Acme Inc',
    full_path: 'acme',
    created_at: group.created_at,
    parent_id: null,
    organization_id: 1,
    shared_runners_setting: 'disabled_and_overridable',
    max_artifacts_size: 100,
    shared_with_groups: [],
    enabled_git_access_protocol: 'http',
    prevent_sharing_groups_outside_hierarchy: true,
    projects: [],
    shared_projects: [],
  });
  assert.equal(g.name, 'Acme Inc');
  assert.equal(g.request_access_enabled, 0);
  assert.ok(g.updated_at > group.updated_at);
  // no rename, no event
  assert.deepEqual(await eventsAfter(c, jobs), []);

  // owners set the default branch protection only when the instance lets them
  await c.settings.save({ group_owners_can_manage_default_branch_protection: false });
  const ignored = await app.inject({
    method: 'PUT',
    url: `/api/v4/groups/${group.id}`,
    headers,
    payload: { default_branch_protection: 4, description: 'Still' },
  });
  assert.equal(ignored.statusCode, 200);
  assert.equal(ignored.json().default_branch_protection, 0);
  assert.equal(ignored.json().description, 'Still');

  // nothing given: nothing changes (GitLab has no at_least_one_of here)
  const same = await app.inject({ method: 'PUT', url: `/api/v4/groups/${group.id}`, headers, payload: {} });
  assert.equal(same.statusCode, 200);
  assert.equal(same.json().name, 'Acme Inc');
});

test('PUT /groups/:id: a rename moves the subtree, keeps old paths redirecting and records group_rename', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const owner = await seed.user();
  const { headers } = await seed.token(owner);
  const top = await seed.group({ path: 'acme', visibility: 'private' });
  const web = await seed.group({ path: 'web', parent: top, visibility: 'private' });
  const deep = await seed.group({ path: 'deep', parent: web, visibility: 'private' });
  const tool = await seed.project({ namespace: top, path: 'tool' });
  const site = await seed.project({ namespace: web, path: 'site' });
  const other = await seed.group({ path: 'acme-other', visibility: 'private' });
  await seed.member({ group: top }, owner, 50);
  // an old redirect where the new path is going to be
  await c.db.kysely
    .insertInto('redirect_routes')
    .values({ source_type: 'Namespace', source_id: other.id, path: 'Acme2', created_at: top.created_at })
    .execute();
  const jobs = await lastJobId(c);

  const res = await app.inject({ method: 'PUT', url: '/api/v4/groups/acme', headers, payload: { path: 'acme2' } });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().full_path, 'acme2');
  assert.equal(res.json().web_url, `${EXTERNAL_URL}/groups/acme2`);
  assert.equal((await row(c, web.id))!.full_path, 'acme2/web');
  assert.equal((await row(c, deep.id))!.full_path, 'acme2/web/deep');
  assert.equal((await row(c, other.id))!.full_path, 'acme-other');

  const redirects = await c.db.kysely.selectFrom('redirect_routes').select(['source_type', 'source_id', 'path']).orderBy('path').execute();
  assert.deepEqual(redirects, [
    { source_type: 'Namespace', source_id: top.id, path: 'acme' },
    { source_type: 'Project', source_id: tool.id, path: 'acme/tool' },
    { source_type: 'Namespace', source_id: web.id, path: 'acme/web' },
    { source_type: 'Namespace', source_id: deep.id, path: 'acme/web/deep' },
    { source_type: 'Project', source_id: site.id, path: 'acme/web/site' },
  ]);
  const updated = (await row(c, top.id))!;
  assert.deepEqual(await eventsAfter(c, jobs), [
    {
      created_at: top.created_at,
      updated_at: updated.updated_at,
      event_name: 'group_rename',
      name: 'acme',
      owner_email: null,
      owner_name: null,
      path: 'acme2',
      full_path: 'acme2',
      group_id: top.id,
      old_path: 'acme',
      old_full_path: 'acme',
    },
  ]);

  // old paths: GET → 301 to the same URL with the new path; other methods → 405
  const moved = await app.inject({ method: 'GET', url: '/api/v4/groups/acme?with_projects=false', headers });
  assert.equal(moved.statusCode, 301);
  assert.equal(moved.headers.location, `${EXTERNAL_URL}/api/v4/groups/acme2?with_projects=false`);
  const movedSub = await app.inject({ method: 'GET', url: '/api/v4/groups/acme%2Fweb/subgroups', headers });
  assert.equal(movedSub.statusCode, 301);
  assert.equal(movedSub.headers.location, `${EXTERNAL_URL}/api/v4/groups/acme2%2Fweb/subgroups`);
  const put = await app.inject({ method: 'PUT', url: '/api/v4/groups/acme', headers, payload: { description: 'x' } });
  assert.equal(put.statusCode, 405);
  assert.deepEqual(put.json(), { message: 'Non GET methods are not allowed for moved groups' });
  // nobody learns that an invisible group moved
  const stranger = (await seed.token(await seed.user())).headers;
  assert.equal((await app.inject({ method: 'GET', url: '/api/v4/groups/acme', headers: stranger })).statusCode, 404);
  // the projects inside follow too
  await assert.rejects(c.resolve.project(userActor(owner), 'acme/web/site'), (e: unknown) => e instanceof MovedError && e.fullPath === 'acme2/web/site');

  // a subgroup rename touches only its own subtree
  const sub = await app.inject({ method: 'PUT', url: '/api/v4/groups/acme2%2Fweb', headers, payload: { path: 'www', name: 'WWW' } });
  assert.equal(sub.statusCode, 200);
  assert.equal(sub.json().full_path, 'acme2/www');
  assert.equal(sub.json().full_name, 'acme / WWW');
  assert.equal((await row(c, deep.id))!.full_path, 'acme2/www/deep');
  assert.equal((await row(c, top.id))!.full_path, 'acme2');
  // the redirect of the old subgroup path now points at the renamed group itself
  assert.equal((await app.inject({ method: 'GET', url: '/api/v4/groups/acme%2Fweb', headers })).headers.location, `${EXTERNAL_URL}/api/v4/groups/acme2%2Fwww`);

  // a new group takes over an old path: its redirects (and those below it) go
  const reuse = await app.inject({ method: 'POST', url: '/api/v4/groups', headers, payload: { name: 'acme', path: 'acme' } });
  assert.equal(reuse.statusCode, 201);
  const left = await c.db.kysely.selectFrom('redirect_routes').select('path').orderBy('path').execute();
  assert.deepEqual(
    left.map((r) => r.path),
    ['acme2/web', 'acme2/web/deep', 'acme2/web/site'],
  );
  assert.equal((await app.inject({ method: 'GET', url: '/api/v4/groups/acme', headers })).json().id, reuse.json().id);
});

test('PUT /groups/:id: validation and permissions', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const owner = await seed.user({ username: 'owner1' });
  const { headers } = await seed.token(owner);
  const top = await seed.group({ path: 'top', visibility: 'internal' });
  const sub = await seed.group({ path: 'sub', parent: top, visibility: 'internal' });
  await seed.group({ path: 'taken', visibility: 'private' });
  await seed.member({ group: top }, owner, 50);
  const put = (url: string, payload: Record<string, unknown>, h = headers) => app.inject({ method: 'PUT', url, headers: h, payload });

  let res = await put(`/api/v4/groups/${top.id}`, { path: 'taken' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: { path: ['has already been taken'] } });
  res = await put(`/api/v4/groups/${top.id}`, { path: 'owner1' });
  assert.deepEqual(res.json(), { message: { path: ['has already been taken'] } });
  res = await put(`/api/v4/groups/${top.id}`, { path: 'bad path' });
  assert.deepEqual(res.json(), {
    message: { path: ["can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'."] },
  });
  res = await put(`/api/v4/groups/${sub.id}`, { path: 'tree' });
  assert.deepEqual(res.json(), { message: { path: ['tree is a reserved name'] } });
  res = await put(`/api/v4/groups/${top.id}`, { name: '' });
  assert.deepEqual(res.json(), {
    message: {
      name: ["can't be blank", "can contain only letters, digits, emoji, '_', '.', dash, space, parenthesis. It must start with letter, digit, emoji or '_'."],
    },
  });
  res = await put(`/api/v4/groups/${top.id}`, { visibility: 'hidden' });
  assert.deepEqual(res.json(), { error: 'visibility does not have a valid value' });

  // visibility: not more open than the parent, not less open than subgroups and projects
  res = await put(`/api/v4/groups/${sub.id}`, { visibility: 'public' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: { visibility_level: ['public is not allowed since the parent group has a internal visibility.'] } });
  res = await put(`/api/v4/groups/${top.id}`, { visibility: 'private' });
  assert.deepEqual(res.json(), { message: { visibility_level: ['private is not allowed since there are sub-groups with higher visibility.'] } });
  await seed.project({ namespace: sub, visibility: 'internal' });
  res = await put(`/api/v4/groups/${sub.id}`, { visibility: 'private' });
  assert.deepEqual(res.json(), { message: { visibility_level: ['private is not allowed since this group contains projects with higher visibility.'] } });
  await c.settings.save({ restricted_visibility_levels: ['public'] });
  res = await put(`/api/v4/groups/${top.id}`, { visibility: 'public' });
  assert.deepEqual(res.json(), { message: { visibility_level: ['public has been restricted by your GitLab administrator'] } });
  // unchanged visibility is never refused
  assert.equal((await put(`/api/v4/groups/${top.id}`, { visibility: 'internal' })).statusCode, 200);
  assert.equal((await put(`/api/v4/groups/${top.id}`, { visibility: 'public' }, root)).statusCode, 200);
  assert.equal((await row(c, top.id))!.visibility, 'public');

  // who may update: owners (and administrators); maintainers 403; invisible 404; anonymous 401
  const maint = await seed.user();
  await seed.member({ group: top }, maint, 40);
  res = await put(`/api/v4/groups/${top.id}`, { description: 'x' }, (await seed.token(maint)).headers);
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), { message: '403 Forbidden' });
  const hidden = await seed.group({ path: 'hidden', visibility: 'private' });
  res = await put(`/api/v4/groups/${hidden.id}`, { description: 'x' });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Group Not Found' });
  res = await app.inject({ method: 'PUT', url: `/api/v4/groups/${top.id}`, payload: { description: 'x' } });
  assert.equal(res.statusCode, 401);
  assert.equal((await row(c, top.id))!.description, '');
});

test('DELETE /groups/:id: removes the subtree with its projects, members, roles and redirects; events for each', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const owner = await seed.user({ username: 'owner', name: 'Owner' });
  const { headers } = await seed.token(owner);
  const keep = await seed.group({ path: 'keep', visibility: 'private' });
  const top = await seed.group({ path: 'doomed', visibility: 'private' });
  const sub = await seed.group({ path: 'sub', parent: top, visibility: 'private' });
  const p1 = await seed.project({ namespace: top, path: 'p1' });
  const p2 = await seed.project({ namespace: sub, path: 'p2' });
  const kept = await seed.project({ namespace: keep, path: 'kept' });
  await seed.member({ group: top }, owner, 50);
  await seed.member({ group: keep }, owner, 50);
  const dev = await seed.user();
  await seed.member({ group: sub }, dev, 30);
  await seed.member({ project: p2 }, dev, 40);
  await seed.member({ project: kept }, dev, 40);
  const role = await seed.memberRole(10, ['read_code'], { group: top });
  await c.db.kysely
    .insertInto('redirect_routes')
    .values({ source_type: 'Namespace', source_id: sub.id, path: 'doomed/old-sub', created_at: top.created_at })
    .execute();
  await c.db.kysely
    .insertInto('redirect_routes')
    .values({ source_type: 'Project', source_id: p1.id, path: 'doomed/old-p1', created_at: top.created_at })
    .execute();

  // not allowed: maintainers, anonymous callers
  const maint = await seed.user();
  await seed.member({ group: top }, maint, 40);
  let res = await app.inject({ method: 'DELETE', url: `/api/v4/groups/${top.id}`, headers: (await seed.token(maint)).headers });
  assert.equal(res.statusCode, 403);
  res = await app.inject({ method: 'DELETE', url: `/api/v4/groups/${top.id}` });
  assert.equal(res.statusCode, 401);
  res = await app.inject({ method: 'DELETE', url: '/api/v4/groups/nope', headers });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { message: '404 Group Not Found' });

  const jobs = await lastJobId(c);
  res = await app.inject({ method: 'DELETE', url: '/api/v4/groups/doomed', headers });
  assert.equal(res.statusCode, 202);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.deepEqual(res.json(), { message: '202 Accepted' });

  assert.equal(await row(c, top.id), undefined);
  assert.equal(await row(c, sub.id), undefined);
  assert.ok(await row(c, keep.id));
  const projects = await c.db.kysely.selectFrom('projects').select('id').execute();
  assert.deepEqual(
    projects.map((p) => p.id),
    [kept.id],
  );
  const members = await c.db.kysely.selectFrom('members').select(['source_type', 'source_id', 'user_id']).orderBy('id').execute();
  assert.deepEqual(members, [
    { source_type: 'Namespace', source_id: keep.id, user_id: owner.id },
    { source_type: 'Project', source_id: kept.id, user_id: dev.id },
  ]);
  assert.equal(await c.db.kysely.selectFrom('member_roles').select('id').where('id', '=', role.id).executeTakeFirst(), undefined);
  assert.deepEqual(await c.db.kysely.selectFrom('redirect_routes').select('id').execute(), []);

  const events = await eventsAfter(c, jobs);
  assert.deepEqual(
    events.map((e) => [e.event_name, e.project_id ?? e.group_id]),
    [
      ['project_destroy', p1.id],
      ['project_destroy', p2.id],
      ['group_destroy', sub.id],
      ['group_destroy', top.id],
    ],
  );
  assert.deepEqual(events[0], {
    created_at: p1.created_at,
    updated_at: p1.updated_at,
    event_name: 'project_destroy',
    name: 'p1',
    owner_email: owner.email,
    owner_name: 'Owner',
    owners: [{ name: 'Owner', email: owner.email }],
    path: 'p1',
    path_with_namespace: 'doomed/p1',
    project_id: p1.id,
    project_namespace_id: top.id,
    project_visibility: 'private',
  });
  assert.deepEqual(events[3], {
    created_at: top.created_at,
    updated_at: top.updated_at,
    event_name: 'group_destroy',
    name: 'doomed',
    owner_email: null,
    owner_name: null,
    path: 'doomed',
    full_path: 'doomed',
    group_id: top.id,
  });
  assert.equal((await app.inject({ method: 'GET', url: `/api/v4/groups/${top.id}`, headers })).statusCode, 404);
});

test('DELETE /groups/:id of a subgroup leaves the parent; administrators may delete any group', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const top = await seed.group({ path: 'top', visibility: 'public' });
  const sub = await seed.group({ path: 'sub', parent: top, visibility: 'public' });
  const res = await app.inject({ method: 'DELETE', url: '/api/v4/groups/top%2Fsub', headers: root });
  assert.equal(res.statusCode, 202);
  assert.equal(await row(c, sub.id), undefined);
  assert.ok(await row(c, top.id));
  // a public group is visible to everybody, but only its owners remove it
  const res2 = await app.inject({ method: 'DELETE', url: `/api/v4/groups/${top.id}`, headers: (await seed.token(await seed.user())).headers });
  assert.equal(res2.statusCode, 403);
});
