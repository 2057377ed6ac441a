// /projects/:id/protected_tags (GitLab lib/api/protected_tags.rb, Entities::ProtectedTag,
// ProtectedTags::CreateService): whole bodies and rows, wildcards, 409/400/403/404, and the tags API
// refusing tags the rules protect (GitLab's messages).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-app.ts';
import { bareGit, pushEvents, workTree } from '../../helpers/git.ts';

async function setup(t: any) {
  const ta = await buildTestApp(t);
  const group = await ta.seed.group();
  const { project, dir } = await ta.seed.repoProject({ namespace: group });
  const wt = workTree(t, dir);
  wt.write('README.md', '# x\n').commit('first');
  wt.push();
  const maintainer = await ta.seed.user();
  const developer = await ta.seed.user();
  const stranger = await ta.seed.user();
  await ta.seed.member({ project }, maintainer, 40);
  await ta.seed.member({ project }, developer, 30);
  const tokens = {
    maintainer: (await ta.seed.token(maintainer)).headers,
    developer: (await ta.seed.token(developer)).headers,
    stranger: (await ta.seed.token(stranger)).headers,
  };
  const base = `/api/v4/projects/${project.id}/protected_tags`;
  const req = (method: string, url: string, headers: Record<string, string>, payload?: object) =>
    ta.app.inject({ method: method as any, url, headers, ...(payload ? { payload } : {}) });
  return { ...ta, project, dir, developer, tokens, base, req };
}

test('protected tags: create, list, get by URL-encoded wildcard, delete; whole bodies and rows', async (t) => {
  const s = await setup(t);
  assert.deepEqual((await s.req('GET', s.base, s.tokens.maintainer)).json(), []);
  const created = await s.req('POST', s.base, s.tokens.maintainer, { name: 'v*', create_access_level: 30 });
  assert.equal(created.statusCode, 201, created.body);
  const row = await s.c.db.kysely.selectFrom('protected_tags').selectAll().executeTakeFirstOrThrow();
  assert.deepEqual([row.project_id, row.name], [s.project.id, 'v*']);
  const access = await s.c.db.kysely.selectFrom('protected_ref_access_levels').selectAll().execute();
  assert.deepEqual(
    access.filter((a) => a.protected_tag_id !== null).map((a) => [a.protected_tag_id, a.action, a.access_level]),
    [[row.id, 'create', 30]],
  );
  const accessId = access.find((a) => a.protected_tag_id === row.id)!.id;
  const body = {
    name: 'v*',
    create_access_levels: [{ id: accessId, access_level: 30, access_level_description: 'Developers + Maintainers', user_id: null, group_id: null }],
  };
  assert.deepEqual(created.json(), body);
  // default: Maintainers
  const release = await s.req('POST', s.base, s.tokens.maintainer, { name: 'release-*' });
  assert.equal(release.statusCode, 201);
  assert.deepEqual(
    release.json().create_access_levels.map((a: any) => [a.access_level, a.access_level_description]),
    [[40, 'Maintainers']],
  );

  const again = await s.req('POST', s.base, s.tokens.maintainer, { name: 'v*' });
  assert.deepEqual([again.statusCode, again.json()], [409, { message: "Protected tag 'v*' already exists" }]);

  const one = await s.req('GET', `${s.base}/${encodeURIComponent('v*')}`, s.tokens.maintainer);
  assert.deepEqual([one.statusCode, one.json()], [200, body]);
  const list = await s.req('GET', `${s.base}?per_page=1`, s.tokens.maintainer);
  assert.deepEqual(list.json(), [body]);
  assert.equal(list.headers['x-total'], '2');
  const missing = await s.req('GET', `${s.base}/v1`, s.tokens.maintainer);
  assert.deepEqual([missing.statusCode, missing.json()], [404, { message: '404 Not found' }]);

  const del = await s.req('DELETE', `${s.base}/${encodeURIComponent('v*')}`, s.tokens.maintainer);
  assert.equal(del.statusCode, 204);
  assert.deepEqual(
    (await s.c.db.kysely.selectFrom('protected_tags').select('name').execute()).map((r) => r.name),
    ['release-*'],
  );
  assert.equal((await s.c.db.kysely.selectFrom('protected_ref_access_levels').select('id').where('protected_tag_id', '=', row.id).execute()).length, 0);
});

test('protected tags: bad inputs and permissions', async (t) => {
  const s = await setup(t);
  const cases: [object, number, unknown][] = [
    [{}, 400, { error: 'name is missing' }],
    [{ name: 'v*', create_access_level: 35 }, 400, { error: 'create_access_level does not have a valid value' }],
    [{ name: 'v*', allowed_to_create: [{ user_id: 'me' }] }, 400, { error: 'allowed_to_create[0][user_id] is invalid' }],
    [{ name: 'v*', allowed_to_create: [{ group_id: 424242 }] }, 422, { message: ['Create access levels group does not have access to the project'] }],
  ];
  for (const [payload, status, body] of cases) {
    const r = await s.req('POST', s.base, s.tokens.maintainer, payload);
    assert.deepEqual([r.statusCode, r.json()], [status, body], JSON.stringify(payload));
  }
  assert.deepEqual(await s.c.db.kysely.selectFrom('protected_tags').selectAll().execute(), []);
  for (const [method, url, payload] of [
    ['GET', s.base],
    ['POST', s.base, { name: 'v*' }],
    ['DELETE', `${s.base}/v1`],
  ] as [string, string, object?][]) {
    const dev = await s.req(method, url, s.tokens.developer, payload);
    assert.deepEqual([dev.statusCode, dev.json()], [403, { message: '403 Forbidden' }], `${method} ${url}`);
    const stranger = await s.req(method, url, s.tokens.stranger, payload);
    assert.deepEqual([stranger.statusCode, stranger.json()], [404, { message: '404 Project Not Found' }]);
  }
  const big = await s.req('GET', '/api/v4/projects/2147483648/protected_tags', s.tokens.maintainer);
  assert.deepEqual([big.statusCode, big.json()], [404, { message: '404 Project Not Found' }]);
});

test('the tags API: a protected tag is created only by those allowed, deleted only by Maintainers; tag pushes say ref_protected', async (t) => {
  const s = await setup(t);
  assert.equal((await s.req('POST', s.base, s.tokens.maintainer, { name: 'v*', create_access_level: 40 })).statusCode, 201);
  const tags = `/api/v4/projects/${s.project.id}/repository/tags`;
  const denied = await s.req('POST', tags, s.tokens.developer, { tag_name: 'v1', ref: 'main' });
  assert.deepEqual([denied.statusCode, denied.json()], [400, { message: 'You are not allowed to create this tag as it is protected.' }]);
  assert.equal(bareGit(s.dir, ['tag']), '');
  // an unprotected tag: Developers create it
  assert.equal((await s.req('POST', tags, s.tokens.developer, { tag_name: 'rc1', ref: 'main' })).statusCode, 201);
  const ok = await s.req('POST', tags, s.tokens.maintainer, { tag_name: 'v1', ref: 'main' });
  assert.equal(ok.statusCode, 201, ok.body);
  const events = (await pushEvents(s.c)).filter((e: any) => e.event_name === 'tag_push');
  assert.deepEqual(
    events.map((e: any) => [e.ref, e.ref_protected]),
    [
      ['refs/tags/rc1', false],
      ['refs/tags/v1', true],
    ],
  );
  const del = await s.req('DELETE', `${tags}/v1`, s.tokens.developer);
  assert.deepEqual(
    [del.statusCode, del.json()],
    [400, { message: 'You are not allowed to delete protected tags from this project. Only a project maintainer or owner can delete a protected tag.' }],
  );
  assert.equal((await s.req('DELETE', `${tags}/v1`, s.tokens.maintainer)).statusCode, 204);
  // no one may create: not even a Maintainer
  assert.equal((await s.req('POST', s.base, s.tokens.maintainer, { name: 'final', create_access_level: 0 })).statusCode, 201);
  const none = await s.req('POST', tags, s.tokens.maintainer, { tag_name: 'final', ref: 'main' });
  assert.deepEqual([none.statusCode, none.json()], [400, { message: 'You are not allowed to create this tag as it is protected.' }]);
  assert.equal(bareGit(s.dir, ['tag']).trim(), 'rc1');
});
