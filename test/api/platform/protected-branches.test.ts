// /projects/:id/protected_branches (GitLab lib/api/protected_branches.rb, Entities::ProtectedBranch,
// ProtectedBranches::*Service): whole bodies and rows, wildcards, 409/422/400/403/404, and the rules
// enforced by the branches, files and commits APIs and merges (GitLab's messages).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-app.ts';
import { bareGit, workTree } from '../../helpers/git.ts';
import { migrate } from '../../../src/db/migrate.ts';

const role = (id: number, level: number) => ({
  id,
  access_level: level,
  access_level_description: ({ 0: 'No one', 30: 'Developers + Maintainers', 40: 'Maintainers', 60: 'Instance admins' } as Record<number, string>)[level],
  user_id: null,
  group_id: null,
});

async function setup(t: any) {
  const ta = await buildTestApp(t);
  const group = await ta.seed.group({ path: 'grp' });
  const { project, dir } = await ta.seed.repoProject({ namespace: group, path: 'app' });
  const wt = workTree(t, dir);
  wt.write('README.md', '# x\n').commit('first');
  wt.checkout('1-stable', true).write('a', '1').commit('stable one');
  wt.checkout('feature', true).write('f', 'f\n').commit('feature');
  wt.checkout('main');
  wt.push();
  const maintainer = await ta.seed.user({ name: 'Mia Maintainer' });
  const developer = await ta.seed.user({ name: 'Dev Eloper' });
  const reporter = await ta.seed.user();
  const stranger = await ta.seed.user();
  await ta.seed.member({ project }, maintainer, 40);
  await ta.seed.member({ project }, developer, 30);
  await ta.seed.member({ project }, reporter, 20);
  const tokens = {
    maintainer: (await ta.seed.token(maintainer)).headers,
    developer: (await ta.seed.token(developer)).headers,
    reporter: (await ta.seed.token(reporter)).headers,
    stranger: (await ta.seed.token(stranger)).headers,
  };
  const base = `/api/v4/projects/${project.id}/protected_branches`;
  const req = (method: string, url: string, headers: Record<string, string>, payload?: object) =>
    ta.app.inject({ method: method as any, url, headers, ...(payload ? { payload } : {}) });
  const accessRows = async () =>
    (await ta.c.db.kysely.selectFrom('protected_ref_access_levels').selectAll().orderBy('id').execute()).map((r) => [
      r.action,
      r.access_level,
      r.user_id,
      r.group_id,
    ]);
  return { ...ta, group, project, dir, wt, maintainer, developer, reporter, stranger, tokens, base, req, accessRows };
}

test('create, list, get (wildcards URL-encoded), update and delete: whole bodies and rows', async (t) => {
  const s = await setup(t);
  // the default branch is protected as the defaults say (ProtectDefaultBranchService)
  const list0 = await s.req('GET', s.base, s.tokens.maintainer);
  assert.equal(list0.statusCode, 200);
  const mainRow = await s.c.db.kysely.selectFrom('protected_branches').selectAll().where('name', '=', 'main').executeTakeFirstOrThrow();
  const [mainPush, mainMerge] = await s.c.db.kysely.selectFrom('protected_ref_access_levels').select('id').orderBy('id').execute();
  assert.deepEqual(list0.json(), [
    {
      id: mainRow.id,
      name: 'main',
      push_access_levels: [role(mainPush.id, 40)],
      merge_access_levels: [role(mainMerge.id, 40)],
      allow_force_push: false,
      unprotect_access_levels: [],
      code_owner_approval_required: false,
    },
  ]);
  assert.equal(list0.headers['x-total'], '1');

  const created = await s.req('POST', s.base, s.tokens.maintainer, {
    name: '*-stable',
    push_access_level: 30,
    merge_access_level: 40,
    allow_force_push: true,
    allowed_to_merge: [{ user_id: s.developer.id }, { group_id: s.group.id }],
  });
  assert.equal(created.statusCode, 201, created.body);
  const row = await s.c.db.kysely.selectFrom('protected_branches').selectAll().where('name', '=', '*-stable').executeTakeFirstOrThrow();
  assert.deepEqual([row.project_id, row.allow_force_push, row.code_owner_approval_required], [s.project.id, 1, 0]);
  const ids = (
    await s.c.db.kysely.selectFrom('protected_ref_access_levels').select('id').where('protected_branch_id', '=', row.id).orderBy('id').execute()
  ).map((r) => r.id);
  const expected = {
    id: row.id,
    name: '*-stable',
    push_access_levels: [role(ids[0], 30)],
    merge_access_levels: [
      role(ids[1], 40),
      { id: ids[2], access_level: null, access_level_description: 'Dev Eloper', user_id: s.developer.id, group_id: null },
      { id: ids[3], access_level: null, access_level_description: s.group.name, user_id: null, group_id: s.group.id },
    ],
    allow_force_push: true,
    unprotect_access_levels: [role(ids[4], 40)],
    code_owner_approval_required: false,
  };
  assert.deepEqual(created.json(), expected);

  // the same name again: 409
  const again = await s.req('POST', s.base, s.tokens.maintainer, { name: '*-stable' });
  assert.equal(again.statusCode, 409);
  assert.deepEqual(again.json(), { message: "Protected branch '*-stable' already exists" });

  // get by its URL-encoded name; 404 for a name that is not a rule (even one a rule matches)
  const one = await s.req('GET', `${s.base}/${encodeURIComponent('*-stable')}`, s.tokens.maintainer);
  assert.deepEqual([one.statusCode, one.json()], [200, expected]);
  const missing = await s.req('GET', `${s.base}/1-stable`, s.tokens.maintainer);
  assert.deepEqual([missing.statusCode, missing.json()], [404, { message: '404 Not found' }]);

  // search: part of the name, any case; pagination
  const found = await s.req('GET', `${s.base}?search=STAB`, s.tokens.maintainer);
  assert.deepEqual(
    found.json().map((b: any) => b.name),
    ['*-stable'],
  );
  const paged = await s.req('GET', `${s.base}?per_page=1&page=2`, s.tokens.maintainer);
  assert.deepEqual(
    paged.json().map((b: any) => b.name),
    ['*-stable'],
  );
  assert.equal(paged.headers['x-total'], '2');

  // PATCH: flags; access levels added, removed ({id, _destroy}) and changed ({id, access_level})
  const patched = await s.req('PATCH', `${s.base}/${encodeURIComponent('*-stable')}`, s.tokens.maintainer, {
    allow_force_push: false,
    code_owner_approval_required: true,
    allowed_to_push: [{ access_level: 40 }, { id: ids[0], _destroy: true }],
    allowed_to_merge: [{ id: ids[1], access_level: 30 }],
  });
  assert.equal(patched.statusCode, 200, patched.body);
  const pushId = (
    await s.c.db.kysely
      .selectFrom('protected_ref_access_levels')
      .select('id')
      .where('protected_branch_id', '=', row.id)
      .where('action', '=', 'push')
      .executeTakeFirstOrThrow()
  ).id;
  assert.deepEqual(patched.json(), {
    ...expected,
    push_access_levels: [role(pushId, 40)],
    merge_access_levels: [role(ids[1], 30), ...expected.merge_access_levels.slice(1)],
    allow_force_push: false,
    code_owner_approval_required: true,
  });
  // a level the rule has already: 422
  const dup = await s.req('PATCH', `${s.base}/${encodeURIComponent('*-stable')}`, s.tokens.maintainer, { allowed_to_push: [{ access_level: 40 }] });
  assert.deepEqual([dup.statusCode, dup.json()], [422, { message: ['Push access levels access level has already been taken'] }]);

  // DELETE: 204, the rule and its access levels are gone
  const del = await s.req('DELETE', `${s.base}/${encodeURIComponent('*-stable')}`, s.tokens.maintainer);
  assert.equal(del.statusCode, 204);
  assert.equal(del.body, '');
  assert.deepEqual(
    (await s.c.db.kysely.selectFrom('protected_branches').select('name').execute()).map((r) => r.name),
    ['main'],
  );
  assert.deepEqual(await s.accessRows(), [
    ['push', 40, null, null],
    ['merge', 40, null, null],
  ]);
  assert.equal((await s.req('DELETE', `${s.base}/${encodeURIComponent('*-stable')}`, s.tokens.maintainer)).statusCode, 404);

  // the project's deletion removes its rules (FK cascade)
  await s.c.db.kysely.deleteFrom('projects').where('id', '=', s.project.id).execute();
  assert.deepEqual(await s.c.db.kysely.selectFrom('protected_branches').selectAll().execute(), []);
  assert.deepEqual(await s.accessRows(), []);
});

test('bad inputs: 400 for missing and invalid parameters, 422 for users and groups without access, 404 for unknown projects', async (t) => {
  const s = await setup(t);
  const post = (payload: object) => s.req('POST', s.base, s.tokens.maintainer, payload);
  const cases: [object, number, unknown][] = [
    [{}, 400, { error: 'name is missing' }],
    [{ name: 'x', push_access_level: 25 }, 400, { error: 'push_access_level does not have a valid value' }],
    [{ name: 'x', merge_access_level: 'lots' }, 400, { error: 'merge_access_level is invalid, merge_access_level does not have a valid value' }],
    [{ name: 'x', allow_force_push: 'perhaps' }, 400, { error: 'allow_force_push is invalid' }],
    [{ name: 'x', allowed_to_push: [{ access_level: 7 }] }, 400, { error: 'allowed_to_push[0][access_level] does not have a valid value' }],
    [{ name: 'x', allowed_to_push: [{ user_id: s.stranger.id }] }, 422, { message: ['Push access levels user is not a member of the project'] }],
    [{ name: 'x', allowed_to_merge: [{ group_id: 999999 }] }, 422, { message: ['Merge access levels group does not have access to the project'] }],
    [{ name: 'x', unprotect_access_level: 0 }, 422, { message: ['Unprotect access levels access level is not included in the list'] }],
    [{ name: '' }, 422, { message: ["Name can't be blank"] }],
  ];
  for (const [payload, status, body] of cases) {
    const r = await post(payload);
    assert.deepEqual([r.statusCode, r.json()], [status, body], JSON.stringify(payload));
  }
  assert.equal(await s.c.db.kysely.selectFrom('protected_branches').select('id').where('name', '=', 'x').executeTakeFirst(), undefined);
  for (const id of ['99999', '4294967296']) {
    const r = await s.req('GET', `/api/v4/projects/${id}/protected_branches`, s.tokens.maintainer);
    assert.deepEqual([r.statusCode, r.json()], [404, { message: '404 Project Not Found' }]);
  }
  const unknown = await s.req('PATCH', `${s.base}/nope`, s.tokens.maintainer, { allow_force_push: true });
  assert.deepEqual([unknown.statusCode, unknown.json()], [404, { message: '404 Not found' }]);
});

test('permissions: Maintainers only (403 for Developers and Reporters, 404 for strangers of a private project, 401 never); unprotect access levels', async (t) => {
  const s = await setup(t);
  for (const who of [s.tokens.developer, s.tokens.reporter]) {
    for (const [method, url, payload] of [
      ['GET', s.base],
      ['GET', `${s.base}/main`],
      ['POST', s.base, { name: 'x' }],
      ['PATCH', `${s.base}/main`, { allow_force_push: true }],
      ['DELETE', `${s.base}/main`],
    ] as [string, string, object?][]) {
      const r = await s.req(method, url, who, payload);
      assert.deepEqual([r.statusCode, r.json()], [403, { message: '403 Forbidden' }], `${method} ${url}`);
    }
  }
  const stranger = await s.req('GET', s.base, s.tokens.stranger);
  assert.deepEqual([stranger.statusCode, stranger.json()], [404, { message: '404 Project Not Found' }]);
  const anonymous = await s.req('GET', s.base, {});
  assert.deepEqual([anonymous.statusCode, anonymous.json()], [404, { message: '404 Project Not Found' }]);
  // an administrator may
  assert.equal((await s.req('GET', s.base, s.root)).statusCode, 200);

  // a rule only the owner may unprotect: the Maintainer may not update or delete it
  const owner = await s.seed.user();
  await s.seed.member({ project: s.project }, owner, 50);
  const ownerHeaders = (await s.seed.token(owner)).headers;
  const r = await s.req('POST', s.base, ownerHeaders, { name: 'release', allowed_to_unprotect: [{ user_id: owner.id }] });
  assert.equal(r.statusCode, 201, r.body);
  assert.deepEqual(
    r.json().unprotect_access_levels.map((a: any) => [a.access_level, a.user_id]),
    [[null, owner.id]],
  );
  for (const [method, payload] of [['PATCH', { allow_force_push: true }], ['DELETE']] as [string, object?][]) {
    const denied = await s.req(method, `${s.base}/release`, s.tokens.maintainer, payload);
    assert.deepEqual([denied.statusCode, denied.json()], [403, { message: '403 Forbidden' }]);
  }
  assert.equal((await s.req('DELETE', `${s.base}/release`, ownerHeaders)).statusCode, 204);
});

test('enforcement: the files, commits and branches APIs, the branch entity and merges follow the rules (GitLab messages)', async (t) => {
  const s = await setup(t);
  const stable = bareGit(s.dir, ['rev-parse', '1-stable']).trim();
  const created = await s.req('POST', s.base, s.tokens.maintainer, { name: '*-stable', push_access_level: 40, merge_access_level: 40 });
  assert.equal(created.statusCode, 201);
  const repo = `/api/v4/projects/${s.project.id}/repository`;

  // files and commits APIs: a Developer may not write to 1-stable
  const file = await s.req('POST', `${repo}/files/new.txt`, s.tokens.developer, { branch: '1-stable', content: 'x', commit_message: 'm' });
  assert.deepEqual([file.statusCode, file.json()], [400, { message: 'You are not allowed to push into this branch' }]);
  const commit = await s.req('POST', `${repo}/commits`, s.tokens.developer, {
    branch: '1-stable',
    commit_message: 'm',
    actions: [{ action: 'create', file_path: 'y', content: 'y' }],
  });
  assert.deepEqual([commit.statusCode, commit.json()], [403, { message: '403 Forbidden - You are not allowed to push into this branch' }]);
  assert.equal(bareGit(s.dir, ['rev-parse', '1-stable']).trim(), stable);
  // nor create a branch the wildcard protects, nor delete one
  const branch = await s.req('POST', `${repo}/branches`, s.tokens.developer, { branch: '2-stable', ref: 'main' });
  assert.deepEqual([branch.statusCode, branch.json()], [400, { message: 'You are not allowed to create protected branches on this project.' }]);
  const del = await s.req('DELETE', `${repo}/branches/1-stable`, s.tokens.developer);
  assert.deepEqual(
    [del.statusCode, del.json()],
    [400, { message: 'You are not allowed to delete protected branches from this project. Only a project maintainer or owner can delete a protected branch.' }],
  );
  // force: a Maintainer may not replace a protected branch without allow_force_push
  const force = await s.req('POST', `${repo}/commits`, s.tokens.maintainer, {
    branch: '1-stable',
    start_branch: 'main',
    force: true,
    commit_message: 'm',
    actions: [{ action: 'create', file_path: 'z', content: 'z' }],
  });
  assert.deepEqual([force.statusCode, force.json()], [400, { message: 'You are not allowed to force push code to a protected branch on this project.' }]);
  // Maintainers write
  const ok = await s.req('POST', `${repo}/files/new.txt`, s.tokens.maintainer, { branch: '1-stable', content: 'x', commit_message: 'm' });
  assert.equal(ok.statusCode, 201, ok.body);

  // the branch entity: protected, developers_can_push / developers_can_merge, can_push
  const flags = async (name: string, headers: Record<string, string>) => {
    const r = await s.req('GET', `${repo}/branches/${name}`, headers);
    const b = r.json();
    return [b.protected, b.developers_can_push, b.developers_can_merge, b.can_push];
  };
  assert.deepEqual(await flags('1-stable', s.tokens.developer), [true, false, false, false]);
  assert.deepEqual(await flags('feature', s.tokens.developer), [false, false, false, true]);
  assert.equal(
    (await s.req('PATCH', `${s.base}/${encodeURIComponent('*-stable')}`, s.tokens.maintainer, { allowed_to_push: [{ access_level: 30 }] })).statusCode,
    200,
  );
  assert.deepEqual(await flags('1-stable', s.tokens.developer), [true, true, false, true]);
  const listed = await s.req('GET', `${repo}/branches`, s.tokens.developer);
  assert.deepEqual(
    listed.json().map((b: any) => [b.name, b.protected, b.developers_can_push]),
    [
      ['1-stable', true, true],
      ['feature', false, false],
      ['main', true, false],
    ],
  );

  // merges: a Developer may not merge into 1-stable until the rule lets Developers merge
  const mrs = `/api/v4/projects/${s.project.id}/merge_requests`;
  const mr = await s.req('POST', mrs, s.tokens.developer, { source_branch: 'feature', target_branch: '1-stable', title: 'Into stable' });
  assert.equal(mr.statusCode, 201, mr.body);
  const iid = mr.json().iid;
  const refused = await s.req('PUT', `${mrs}/${iid}/merge`, s.tokens.developer);
  // the Developer may push 1-stable now (push access 30): GitLab's can_be_merged_by? accepts push or merge rights
  assert.equal(refused.statusCode, 200, refused.body);
  assert.equal(refused.json().state, 'merged');

  // with push for Maintainers only and merge for Developers, a Developer merges; with neither, 401
  const other = await s.req('POST', s.base, s.tokens.maintainer, { name: 'feature', push_access_level: 40, merge_access_level: 40 });
  assert.equal(other.statusCode, 201);
  s.wt.checkout('fix', true).write('g', 'g\n').commit('fix');
  s.wt.push('fix');
  const mr2 = await s.req('POST', mrs, s.tokens.developer, { source_branch: 'fix', target_branch: 'feature', title: 'Into feature' });
  assert.equal(mr2.statusCode, 201, mr2.body);
  const denied = await s.req('PUT', `${mrs}/${mr2.json().iid}/merge`, s.tokens.developer);
  assert.deepEqual([denied.statusCode, denied.json()], [401, { message: '401 Unauthorized' }]);
  assert.equal((await s.req('PATCH', `${s.base}/feature`, s.tokens.maintainer, { allowed_to_merge: [{ user_id: s.developer.id }] })).statusCode, 200);
  const merged = await s.req('PUT', `${mrs}/${mr2.json().iid}/merge`, s.tokens.developer);
  assert.equal(merged.statusCode, 200, merged.body);
  assert.equal(merged.json().state, 'merged');
});

test('the default branch of a new project is protected when it is first created (README, first push), not before', async (t) => {
  const s = await setup(t);
  const create = await s.req('POST', '/api/v4/projects', s.tokens.maintainer, { name: 'withreadme', initialize_with_readme: true });
  assert.equal(create.statusCode, 201, create.body);
  const withReadme = await s.req('GET', `/api/v4/projects/${create.json().id}/protected_branches`, s.tokens.maintainer);
  assert.deepEqual(
    withReadme.json().map((b: any) => [b.name, b.push_access_levels.map((a: any) => a.access_level), b.merge_access_levels.map((a: any) => a.access_level)]),
    [['main', [40], [40]]],
  );
  // an empty project has no rule until its first commit; the group's defaults decide it
  await s.c.db.kysely
    .updateTable('namespaces')
    .set({
      settings: JSON.stringify({ default_branch_protection_defaults: { allowed_to_push: [{ access_level: 30 }], allowed_to_merge: [{ access_level: 40 }] } }),
    })
    .where('id', '=', s.group.id)
    .execute();
  const empty = await s.req('POST', '/api/v4/projects', s.root, { name: 'empty', namespace_id: s.group.id });
  assert.equal(empty.statusCode, 201, empty.body);
  const url = `/api/v4/projects/${empty.json().id}/protected_branches`;
  assert.deepEqual((await s.req('GET', url, s.root)).json(), []);
  const first = await s.req('POST', `/api/v4/projects/${empty.json().id}/repository/files/a.txt`, s.root, {
    branch: 'main',
    content: 'a',
    commit_message: 'a',
  });
  assert.equal(first.statusCode, 201, first.body);
  assert.deepEqual(
    (await s.req('GET', url, s.root)).json().map((b: any) => [b.name, b.push_access_levels.map((a: any) => a.access_level), b.allow_force_push]),
    [['main', [30], false]],
  );
});

test('migration 024: every existing project gets its default branch rule from its group’s or the instance’s defaults', async (t) => {
  const { c, seed } = await buildTestApp(t);
  const settings = (d: object) => JSON.stringify({ default_branch_protection_defaults: d });
  const devs = await seed.group();
  const open = await seed.group();
  const plain = await seed.group();
  const k = c.db.kysely;
  await k
    .updateTable('namespaces')
    .set({ settings: settings({ allowed_to_push: [{ access_level: 30 }], allowed_to_merge: [{ access_level: 30 }, { access_level: 40 }] }) })
    .where('id', '=', devs.id)
    .execute();
  await k
    .updateTable('namespaces')
    .set({ settings: settings({ allowed_to_push: [{ access_level: 30 }], allow_force_push: true }) })
    .where('id', '=', open.id)
    .execute();
  const p1 = await seed.project({ namespace: devs });
  await k.updateTable('projects').set({ default_branch: 'develop' }).where('id', '=', p1.id).execute();
  const p2 = await seed.project({ namespace: open });
  const p3 = await seed.project({ namespace: plain });
  // the state before the migration: no tables, the migration not applied
  for (const table of ['protected_ref_access_levels', 'protected_tags', 'protected_branches']) await k.schema.dropTable(table).execute();
  await (k as any).deleteFrom('schema_migrations').where('name', '=', '024-protected-refs').execute();
  assert.deepEqual(await migrate(c.db), ['024-protected-refs']);

  const rules = await k
    .selectFrom('protected_branches as b')
    .leftJoin('protected_ref_access_levels as a', 'a.protected_branch_id', 'b.id')
    .select(['b.project_id', 'b.name', 'b.allow_force_push', 'a.action', 'a.access_level'])
    .orderBy('b.project_id')
    .orderBy('a.id')
    .execute();
  assert.deepEqual(
    rules.map((r) => [r.project_id, r.name, r.allow_force_push, r.action, r.access_level]),
    [
      [p1.id, 'develop', 0, 'push', 30],
      [p1.id, 'develop', 0, 'merge', 30],
      [p1.id, 'develop', 0, 'merge', 40],
      [p3.id, 'main', 0, 'push', 40],
      [p3.id, 'main', 0, 'merge', 40],
    ],
  );
  assert.equal(
    rules.some((r) => r.project_id === p2.id),
    false,
  );
});
