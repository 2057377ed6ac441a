// PUT /projects/:id, PUT /projects/:id/transfer, POST /projects/:id/archive|unarchive, DELETE /projects/:id.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container } from '../../../src/container.ts';
import type { ProjectRow } from '../../../src/db/schema.ts';
import { buildTestApp } from '../../helpers/build-app.ts';
import { expectedProject, groupNs } from '../../helpers/projects-expect.ts';

const put = (app: any, url: string, headers: Record<string, string>, payload?: unknown) => app.inject({ method: 'PUT', url, headers, payload });

async function projectRow(c: Container, id: number): Promise<ProjectRow | undefined> {
  return c.db.kysely.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
}

async function projectEvents(c: Container) {
  const rows = await c.db.kysely.selectFrom('jobs').select('payload').where('kind', '=', 'system_event').orderBy('id').execute();
  return rows.map((r) => JSON.parse(r.payload)).filter((p) => p.event_name.startsWith('project_'));
}

/** A group with a project and a user of each level in the group. */
async function setup(t: any, visibility = 'private') {
  const ctx = await buildTestApp(t);
  const { seed } = ctx;
  const g = await seed.group({ path: 'grp', name: 'Grp', visibility });
  const project = await seed.project({ namespace: g, path: 'proj', name: 'Proj', visibility });
  const as: Record<string, Record<string, string>> = {};
  for (const [name, level] of [
    ['guest', 10],
    ['reporter', 20],
    ['developer', 30],
    ['maintainer', 40],
    ['owner', 50],
  ] as const) {
    const u = await seed.user({ username: name, name: name.toUpperCase() });
    await seed.member({ group: g }, u, level);
    as[name] = (await seed.token(u)).headers;
  }
  as.stranger = (await seed.token(await seed.user())).headers;
  return { ...ctx, g, project, as };
}

const UPDATE_PARAMS = [
  'allow_merge_on_skipped_pipeline',
  'analytics_access_level',
  'autoclose_referenced_issues',
  'auto_devops_enabled',
  'auto_devops_deploy_strategy',
  'auto_cancel_pending_pipelines',
  'build_git_strategy',
  'build_timeout',
  'builds_access_level',
  'ci_config_path',
  'ci_default_git_depth',
  'ci_allow_fork_pipelines_to_run_in_parent_project',
  'ci_id_token_sub_claim_components',
  'ci_forward_deployment_enabled',
  'ci_forward_deployment_rollback_allowed',
  'ci_separated_caches',
  'container_registry_access_level',
  'container_expiration_policy_attributes',
  'default_branch',
  'description',
  'emails_disabled',
  'emails_enabled',
  'forking_access_level',
  'issues_access_level',
  'lfs_enabled',
  'merge_pipelines_enabled',
  'merge_requests_access_level',
  'merge_requests_template',
  'merge_trains_enabled',
  'merge_method',
  'merge_request_title_regex',
  'merge_request_title_regex_description',
  'name',
  'only_allow_merge_if_all_discussions_are_resolved',
  'only_allow_merge_if_pipeline_succeeds',
  'package_registry_access_level',
  'pages_access_level',
  'path',
  'printing_merge_request_link_enabled',
  'public_builds',
  'public_jobs',
  'remove_source_branch_after_merge',
  'repository_access_level',
  'request_access_enabled',
  'resolve_outdated_diff_discussions',
  'restrict_user_defined_variables',
  'show_diff_preview_in_email',
  'security_and_compliance_access_level',
  'squash_option',
  'shared_runners_enabled',
  'group_runners_enabled',
  'resource_group_default_process_mode',
  'snippets_access_level',
  'tag_list',
  'topics',
  'visibility',
  'wiki_access_level',
  'avatar',
  'suggestion_commit_message',
  'merge_commit_template',
  'squash_commit_template',
  'issue_branch_template',
  'repository_storage',
  'packages_enabled',
  'service_desk_enabled',
  'keep_latest_artifact',
  'mr_default_target_self',
  'enforce_auth_checks_on_uploads',
  'releases_access_level',
  'environments_access_level',
  'feature_flags_access_level',
  'infrastructure_access_level',
  'monitor_access_level',
  'model_experiments_access_level',
  'model_registry_access_level',
  'warn_about_potentially_unwanted_characters',
  'ci_pipeline_variables_minimum_override_role',
  'ci_push_repository_for_job_token_allowed',
  'ci_delete_pipelines_in_seconds',
  'max_artifacts_size',
  'issues_enabled',
  'jobs_enabled',
  'merge_requests_enabled',
  'wiki_enabled',
  'snippets_enabled',
  'container_registry_enabled',
];

test('PUT /projects/:id: a maintainer changes the description and settings; the whole entity comes back; project_update is recorded', async (t) => {
  const { app, c, g, project, as } = await setup(t);
  const res = await put(app, `/api/v4/projects/${project.id}`, as.maintainer, {
    description: 'New words',
    merge_method: 'rebase_merge',
    issues_access_level: 'private',
    topics: ['b', 'a'],
    only_allow_merge_if_pipeline_succeeds: true,
  });
  assert.equal(res.statusCode, 200, res.body);
  const row = (await projectRow(c, project.id))!;
  assert.equal(row.description, 'New words');
  assert.notEqual(row.updated_at, project.updated_at);
  assert.deepEqual(
    res.json(),
    expectedProject(row, {
      namespace: groupNs(g),
      namespaceFullName: 'Grp',
      shape: 'full',
      adminProject: true,
      level: 40,
      overrides: { merge_method: 'rebase_merge', issues_access_level: 'private', only_allow_merge_if_pipeline_succeeds: true },
    }),
  );
  assert.deepEqual(res.json().topics, ['a', 'b']);
  const events = await projectEvents(c);
  assert.equal(events.length, 1);
  assert.deepEqual(events[0], {
    created_at: row.created_at,
    updated_at: row.updated_at,
    event_name: 'project_update',
    name: 'Proj',
    owner_email: 'owner@example.com',
    owner_name: 'OWNER',
    owners: [{ name: 'OWNER', email: 'owner@example.com' }],
    path: 'proj',
    path_with_namespace: 'grp/proj',
    project_id: project.id,
    project_namespace_id: g.id,
    project_visibility: 'private',
  });
  // private issues are for members: a guest of the group has them
  const guest = (await app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}`, headers: as.guest })).json();
  assert.equal(guest.issues_enabled, true);
  assert.equal(guest.issues_access_level, 'private');
});

test('PUT /projects/:id: nothing to change is a 400 listing every parameter; authorization as GitLab decides it', async (t) => {
  const { app, project, as } = await setup(t);
  const url = `/api/v4/projects/${project.id}`;
  let res = await put(app, url, as.maintainer, {});
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: `${UPDATE_PARAMS.join(', ')} are missing, at least one parameter must be provided` });
  res = await put(app, url, as.maintainer, { archived: true });
  assert.equal(res.statusCode, 400, 'archived is not an update parameter');
  assert.equal((await put(app, url, {}, { description: 'x' })).statusCode, 401);
  for (const who of ['guest', 'reporter', 'developer']) {
    res = await put(app, url, as[who], { description: 'x' });
    assert.equal(res.statusCode, 403, who);
    assert.deepEqual(res.json(), { message: '403 Forbidden' });
  }
  res = await put(app, url, as.stranger, { description: 'x' });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Project Not Found' }]);
  // renaming and changing visibility are for Owners
  for (const payload of [{ name: 'Other' }, { visibility: 'private' }]) {
    assert.equal((await put(app, url, as.maintainer, payload)).statusCode, 403, JSON.stringify(payload));
    assert.equal((await put(app, url, as.owner, payload)).statusCode, 200, JSON.stringify(payload));
  }
  // a maintainer may still change the path
  assert.equal((await put(app, url, as.maintainer, { path: 'moved-by-maintainer' })).statusCode, 200);
});

test('PUT /projects/:id: a new path keeps the old one as a redirect and records project_rename', async (t) => {
  const { app, c, g, project, as } = await setup(t);
  const res = await put(app, `/api/v4/projects/${project.id}`, as.owner, { path: 'renamed', name: 'Renamed' });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.json().path_with_namespace, 'grp/renamed');
  assert.equal(res.json().name_with_namespace, 'Grp / Renamed');
  const routes = await c.db.kysely.selectFrom('redirect_routes').select(['source_type', 'source_id', 'path']).execute();
  assert.deepEqual(routes, [{ source_type: 'Project', source_id: project.id, path: 'grp/proj' }]);
  const [ev] = await projectEvents(c);
  assert.equal(ev.event_name, 'project_rename');
  assert.equal(ev.old_path_with_namespace, 'grp/proj');
  assert.equal(ev.path_with_namespace, 'grp/renamed');
  assert.equal(ev.project_namespace_id, g.id);
  // renaming back takes the path over again
  await put(app, `/api/v4/projects/${project.id}`, as.owner, { path: 'proj' });
  const after = await c.db.kysely.selectFrom('redirect_routes').select('path').orderBy('path').execute();
  assert.deepEqual(after, [{ path: 'grp/renamed' }]);
});

test('PUT /projects/:id: validations and visibility rules', async (t) => {
  const { app, c, seed, g, project, as } = await setup(t);
  await seed.project({ namespace: g, path: 'other', name: 'Other' });
  const url = `/api/v4/projects/${project.id}`;
  const cases: [Record<string, unknown>, unknown][] = [
    [{ path: 'other' }, { message: { path: ['has already been taken'] } }],
    [{ name: 'OTHER' }, { message: { 'project_namespace.name': ['has already been taken'], name: ['has already been taken'] } }],
    [
      { path: 'bad path' },
      { message: { path: ["can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'"] } },
    ],
    [{ visibility: 'public' }, { message: { visibility_level: ['public is not allowed in a private group.'] } }],
    [{ ci_default_git_depth: 1001 }, { message: { 'ci_cd_settings.default_git_depth': ['must be less than or equal to 1000'] } }],
    [{ squash_option: 'sometimes' }, { error: 'squash_option does not have a valid value' }],
  ];
  for (const [payload, body] of cases) {
    const res = await put(app, url, as.owner, payload);
    assert.equal(res.statusCode, 400, JSON.stringify(payload));
    assert.deepEqual(res.json(), body, JSON.stringify(payload));
  }
  assert.equal((await projectRow(c, project.id))!.updated_at, project.updated_at, 'nothing was written');
  // restricted levels bind everyone but administrators
  await c.db.kysely.updateTable('namespaces').set({ visibility: 'public' }).where('id', '=', g.id).execute();
  await c.settings.save({ restricted_visibility_levels: ['internal'] });
  let res = await put(app, url, as.owner, { visibility: 'internal' });
  assert.deepEqual(res.json(), { message: { visibility_level: ['internal has been restricted by your GitLab administrator'] } });
  res = await put(app, url, as.owner, { visibility: 'public' });
  assert.equal(res.json().visibility, 'public');
  // repository_storage is for administrators; others' value is ignored
  res = await put(app, url, as.owner, { repository_storage: 'other', description: 'd' });
  assert.equal((await projectRow(c, project.id))!.repository_storage, 'default');
  // the same name and path again are no conflict with itself
  res = await put(app, url, as.owner, { name: 'Proj', path: 'proj' });
  assert.equal(res.statusCode, 200);
});

test('POST /projects/:id/archive and /unarchive: Owners (or archive_project), 201 with the entity; writes stop', async (t) => {
  const { app, c, seed, g, project, as } = await setup(t);
  const url = `/api/v4/projects/${project.id}`;
  let res = await app.inject({ method: 'POST', url: `${url}/archive`, headers: as.maintainer });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  res = await app.inject({ method: 'POST', url: `${url}/archive`, headers: as.stranger });
  assert.equal(res.statusCode, 404);
  res = await app.inject({ method: 'POST', url: `${url}/archive`, headers: as.owner });
  assert.equal(res.statusCode, 201, res.body);
  const row = (await projectRow(c, project.id))!;
  assert.equal(row.archived, 1);
  assert.deepEqual(res.json(), expectedProject(row, { namespace: groupNs(g), namespaceFullName: 'Grp', shape: 'full', adminProject: true, level: 50 }));
  assert.equal(res.json().can_create_merge_request_in, false);
  const [ev] = await projectEvents(c);
  assert.equal(ev.event_name, 'project_update');
  // archiving again is harmless
  assert.equal((await app.inject({ method: 'POST', url: `${url}/archive`, headers: as.owner })).statusCode, 201);
  // a custom role with archive_project may unarchive
  const role = await seed.memberRole(10, ['archive_project']);
  const archivist = await seed.user();
  await seed.member({ project }, archivist, 10, { member_role: role });
  res = await app.inject({ method: 'POST', url: `${url}/unarchive`, headers: (await seed.token(archivist)).headers });
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(res.json().archived, false);
  assert.equal((await projectRow(c, project.id))!.archived, 0);
  assert.equal((await app.inject({ method: 'POST', url: `${url}/archive` })).statusCode, 401);
});

test('PUT /projects/:id/transfer: Owners move a project to a namespace they may create projects in', async (t) => {
  const { app, c, seed, g, project, as } = await setup(t, 'internal');
  const url = `/api/v4/projects/${project.id}/transfer`;
  const target = await seed.group({ path: 'target', name: 'Target', visibility: 'private' });
  const owner = await c.db.kysely.selectFrom('users').selectAll().where('username', '=', 'owner').executeTakeFirstOrThrow();
  const failure = (m: string) => ({ message: `Failed to transfer project {:new_namespace=>[${JSON.stringify(m)}]}` });

  let res = await put(app, url, as.owner, {});
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'namespace is missing' }]);
  res = await put(app, url, as.maintainer, { namespace: target.id });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  res = await put(app, url, as.owner, { namespace: target.id });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Namespace Not Found' }], 'an invisible group is not found');
  res = await put(app, url, as.owner, { namespace: 'nowhere' });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Namespace Not Found' }]);
  await seed.member({ group: target }, owner, 20);
  res = await put(app, url, as.owner, { namespace: 'target' });
  assert.deepEqual([res.statusCode, res.json()], [400, failure("You don't have permission to transfer projects into that namespace.")]);
  res = await put(app, url, as.owner, { namespace: g.id });
  assert.deepEqual([res.statusCode, res.json()], [400, failure('Project is already in this namespace.')]);
  await c.db.kysely.updateTable('members').set({ access_level: 40 }).where('user_id', '=', owner.id).where('source_id', '=', target.id).execute();
  const clash = await seed.project({ namespace: target, path: 'proj', name: 'elsewhere' });
  res = await put(app, url, as.owner, { namespace: 'target' });
  assert.deepEqual([res.statusCode, res.json()], [400, failure('Project with same name or path in target namespace already exists')]);
  await c.db.kysely.deleteFrom('projects').where('id', '=', clash.id).execute();

  res = await put(app, url, as.owner, { namespace: 'target' });
  assert.equal(res.statusCode, 200, res.body);
  const row = (await projectRow(c, project.id))!;
  assert.equal(row.namespace_id, target.id);
  assert.equal(row.visibility, 'private', 'no more visible than its new group');
  assert.deepEqual(res.json(), expectedProject(row, { namespace: groupNs(target), namespaceFullName: 'Target', shape: 'full', adminProject: true, level: 50 }));
  assert.deepEqual(await c.db.kysely.selectFrom('redirect_routes').select(['source_type', 'source_id', 'path']).execute(), [
    { source_type: 'Project', source_id: project.id, path: 'grp/proj' },
  ]);
  const [ev] = await projectEvents(c);
  assert.equal(ev.event_name, 'project_transfer');
  assert.equal(ev.old_path_with_namespace, 'grp/proj');
  assert.equal(ev.path_with_namespace, 'target/proj');
  assert.equal(ev.project_namespace_id, target.id);
  assert.equal(ev.project_visibility, 'private');
  // the old path redirects
  res = await app.inject({ method: 'GET', url: '/api/v4/projects/grp%2Fproj', headers: as.owner });
  assert.equal(res.statusCode, 301);
  // a Maintainer of the new group is no longer allowed to move it; an Owner moves it to their own namespace by path
  res = await put(app, url, as.owner, { namespace: 'owner' });
  assert.equal(res.statusCode, 403);
  await c.db.kysely.updateTable('members').set({ access_level: 50 }).where('user_id', '=', owner.id).where('source_id', '=', target.id).execute();
  res = await put(app, url, as.owner, { namespace: 'owner' });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.json().namespace.kind, 'user');
  assert.equal(res.json().owner.username, 'owner');
});

test('DELETE /projects/:id: Owners (or remove_project) delete it with its memberships and old paths, 202', async (t) => {
  const { app, c, seed, g, project, as } = await setup(t);
  const url = `/api/v4/projects/${project.id}`;
  const dev = await seed.user();
  await seed.member({ project }, dev, 30);
  await put(app, url, as.owner, { path: 'renamed' });
  let res = await app.inject({ method: 'DELETE', url, headers: as.maintainer });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden' }]);
  res = await app.inject({ method: 'DELETE', url, headers: as.stranger });
  assert.deepEqual([res.statusCode, res.json()], [404, { message: '404 Project Not Found' }]);
  assert.equal((await app.inject({ method: 'DELETE', url })).statusCode, 401);
  res = await app.inject({ method: 'DELETE', url, headers: { ...as.owner, 'if-unmodified-since': 'Thu, 01 Jan 2015 00:00:00 GMT' } });
  assert.deepEqual([res.statusCode, res.json()], [412, { message: '412 Precondition Failed' }]);
  const before = (await projectRow(c, project.id))!;
  res = await app.inject({ method: 'DELETE', url, headers: as.owner });
  assert.equal(res.statusCode, 202);
  assert.deepEqual(res.json(), { message: '202 Accepted' });
  assert.equal(await projectRow(c, project.id), undefined);
  assert.deepEqual(await c.db.kysely.selectFrom('members').select('id').where('source_type', '=', 'Project').execute(), []);
  assert.deepEqual(await c.db.kysely.selectFrom('redirect_routes').select('id').execute(), []);
  const events = await projectEvents(c);
  assert.deepEqual(events.at(-1), {
    created_at: before.created_at,
    updated_at: before.updated_at,
    event_name: 'project_destroy',
    name: 'Proj',
    owner_email: 'owner@example.com',
    owner_name: 'OWNER',
    owners: [{ name: 'OWNER', email: 'owner@example.com' }],
    path: 'renamed',
    path_with_namespace: 'grp/renamed',
    project_id: project.id,
    project_namespace_id: g.id,
    project_visibility: 'private',
  });
  assert.equal((await app.inject({ method: 'GET', url, headers: as.owner })).statusCode, 404);
  // a guest with a custom role that has remove_project
  const other = await seed.project({ namespace: g });
  const role = await seed.memberRole(10, ['remove_project']);
  const remover = await seed.user();
  await seed.member({ project: other }, remover, 10, { member_role: role });
  res = await app.inject({ method: 'DELETE', url: `/api/v4/projects/${other.id}`, headers: (await seed.token(remover)).headers });
  assert.equal(res.statusCode, 202);
});

test('PUT /projects/:id: an administrator moves the repository to another configured storage', async (t) => {
  const { app, c, project, root } = await setup(t);
  await c.settings.save({ repository_storages_weighted: { default: 100, fast: 0 } });
  let res = await put(app, `/api/v4/projects/${project.id}`, root, { repository_storage: 'nowhere' });
  assert.deepEqual([res.statusCode, res.json()], [400, { message: { repository_storage: ['is not included in the list'] } }]);
  res = await put(app, `/api/v4/projects/${project.id}`, root, { repository_storage: 'fast' });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().repository_storage, 'fast');
  assert.equal((await projectRow(c, project.id))!.repository_storage, 'fast');
});
