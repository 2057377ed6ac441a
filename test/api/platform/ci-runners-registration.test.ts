// Runner registration and tokens: registration-token resets (instance, project, group), POST /runners
// with each kind of registration token, verify, reset of the authentication token (by the runner and
// by a user), unregistering, POST /user/runners, and the contacts authenticate() records.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import { ciDigest, seedRunner } from '../../helpers/ci.ts';

// one suite: the shared fixture of `before` lives from this file's first test to its last, also in a shard
describe('ci-runners-registration', () => {
  const json = (r: { body: string }) => JSON.parse(r.body);
  const FORBIDDEN = { message: '403 Forbidden' };

  let ctx: TestApp;
  let s: Awaited<ReturnType<typeof setup>>;

  async function setup({ seed }: TestApp) {
    const parent = await seed.group({ path: 'parent', name: 'Parent' });
    const g = await seed.group({ path: 'sub', name: 'Sub', parent });
    const project = await seed.project({ namespace: g, path: 'app', name: 'App' });
    const as: Record<string, Record<string, string>> = {};
    const users: Record<string, any> = {};
    for (const [name, level] of [
      ['developer', 30],
      ['maintainer', 40],
      ['owner', 50],
    ] as const) {
      const u = await seed.user({ username: name });
      await seed.member({ group: g }, u, level);
      users[name] = u;
      as[name] = (await seed.token(u)).headers;
    }
    as.parentOwner = (
      await seed.token(
        await (async () => {
          const u = await seed.user({ username: 'parent-owner' });
          await seed.member({ group: parent }, u, 50);
          return u;
        })(),
      )
    ).headers;
    as.createRunner = (await seed.token(users.owner, { scopes: ['create_runner'] })).headers;
    as.readApi = (await seed.token(users.owner, { scopes: ['read_api'] })).headers;
    return { parent, g, project, as, users };
  }

  const cleanups: (() => unknown)[] = [];
  before(async () => {
    ctx = await buildTestApp({ after: (fn: () => unknown) => void cleanups.push(fn) });
    s = await setup(ctx);
  });
  after(async () => {
    for (const fn of cleanups.reverse()) await fn();
  });

  async function resetRegistration(url: string, headers: Record<string, string>) {
    const r = await ctx.app.inject({ method: 'POST', url, headers });
    return { status: r.statusCode, body: json(r) };
  }

  test('registration tokens: reset by administrators, project Maintainers and group Owners; stored as digests', async () => {
    const { c, root } = ctx;
    const inst = await resetRegistration('/api/v4/runners/reset_registration_token', root);
    assert.equal(inst.status, 201);
    assert.deepEqual(Object.keys(inst.body), ['token', 'token_expires_at']);
    assert.match(inst.body.token, /^GR1348941[\w-]+$/);
    assert.equal(inst.body.token_expires_at, null);
    const row = await c.db.kysely.selectFrom('ci_registration_tokens').selectAll().where('scope', '=', 'instance').executeTakeFirstOrThrow();
    assert.equal(row.token_digest, await ciDigest(c, inst.body.token));
    assert.equal(row.scope_id, 0);

    assert.deepEqual(await resetRegistration('/api/v4/runners/reset_registration_token', s.as.owner), { status: 403, body: FORBIDDEN });
    assert.equal((await ctx.app.inject({ method: 'POST', url: '/api/v4/runners/reset_registration_token' })).statusCode, 401);

    // project: Maintainer and up; a Developer is refused; an invisible project is 404
    assert.deepEqual(await resetRegistration(`/api/v4/projects/${s.project.id}/runners/reset_registration_token`, s.as.developer), {
      status: 403,
      body: FORBIDDEN,
    });
    const p = await resetRegistration(`/api/v4/projects/${s.project.id}/runners/reset_registration_token`, s.as.maintainer);
    assert.equal(p.status, 201);
    const stranger = (await ctx.seed.token(await ctx.seed.user())).headers;
    assert.deepEqual(await resetRegistration(`/api/v4/projects/${s.project.id}/runners/reset_registration_token`, stranger), {
      status: 404,
      body: { message: '404 Project Not Found' },
    });
    // a second reset replaces the first
    const p2 = await resetRegistration(`/api/v4/projects/parent%2Fsub%2Fapp/runners/reset_registration_token`, s.as.owner);
    assert.equal(p2.status, 201);
    assert.notEqual(p2.body.token, p.body.token);
    const rows = await c.db.kysely.selectFrom('ci_registration_tokens').selectAll().where('scope', '=', 'project').execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0].token_digest, await ciDigest(c, p2.body.token));

    // group: Owner only (inherited ownership counts)
    assert.deepEqual(await resetRegistration(`/api/v4/groups/${s.g.id}/runners/reset_registration_token`, s.as.maintainer), { status: 403, body: FORBIDDEN });
    assert.equal((await resetRegistration(`/api/v4/groups/${s.g.id}/runners/reset_registration_token`, s.as.parentOwner)).status, 201);
    assert.deepEqual(await resetRegistration(`/api/v4/groups/999999/runners/reset_registration_token`, root), {
      status: 404,
      body: { message: '404 Group Not Found' },
    });
  });

  test('POST /runners registers instance, group and project runners with the registration token of each', async () => {
    const { app, c, root } = ctx;
    const inst = (await resetRegistration('/api/v4/runners/reset_registration_token', root)).body.token;
    const grp = (await resetRegistration(`/api/v4/groups/${s.g.id}/runners/reset_registration_token`, s.as.owner)).body.token;
    const prj = (await resetRegistration(`/api/v4/projects/${s.project.id}/runners/reset_registration_token`, s.as.maintainer)).body.token;

    const r1 = await app.inject({
      method: 'POST',
      url: '/api/v4/runners',
      payload: {
        token: inst,
        description: 'shell runner',
        info: { name: 'gitlab-runner', version: '17.5.0', revision: 'abc123', platform: 'linux', architecture: 'amd64', executor: 'shell' },
        paused: true,
        locked: true,
        run_untagged: false,
        tag_list: 'docker, linux',
        access_level: 'ref_protected',
        maximum_timeout: 3600,
        maintainer_note: 'old note',
      },
    });
    assert.equal(r1.statusCode, 201);
    const b1 = json(r1);
    assert.deepEqual(Object.keys(b1), ['id', 'token', 'token_expires_at']);
    assert.match(b1.token, /^glrt-/);
    assert.equal(b1.token_expires_at, null);
    const row = await c.db.kysely.selectFrom('ci_runners').selectAll().where('id', '=', b1.id).executeTakeFirstOrThrow();
    assert.equal(row.token_digest, await ciDigest(c, b1.token));
    assert.deepEqual(
      {
        runner_type: row.runner_type,
        description: row.description,
        active: row.active,
        locked: row.locked,
        run_untagged: row.run_untagged,
        tag_list: JSON.parse(row.tag_list),
        access_level: row.access_level,
        maximum_timeout: row.maximum_timeout,
        maintenance_note: row.maintenance_note,
        name: row.name,
        version: row.version,
        revision: row.revision,
        platform: row.platform,
        architecture: row.architecture,
        executor_type: row.executor_type,
        creation_method: row.creation_method,
        contacted_at: row.contacted_at,
      },
      {
        runner_type: 'instance_type',
        description: 'shell runner',
        active: 0,
        locked: 1,
        run_untagged: 0,
        tag_list: ['docker', 'linux'],
        access_level: 'ref_protected',
        maximum_timeout: 3600,
        maintenance_note: 'old note',
        name: 'gitlab-runner',
        version: '17.5.0',
        revision: 'abc123',
        platform: 'linux',
        architecture: 'amd64',
        executor_type: 'shell',
        creation_method: 'registration_token',
        contacted_at: null,
      },
    );

    const r2 = json(await app.inject({ method: 'POST', url: '/api/v4/runners', payload: { token: grp } }));
    const r3 = json(await app.inject({ method: 'POST', url: '/api/v4/runners', payload: { token: prj, description: 'p' } }));
    const g = await c.db.kysely.selectFrom('ci_runners').selectAll().where('id', '=', r2.id).executeTakeFirstOrThrow();
    assert.equal(g.runner_type, 'group_type');
    assert.equal(g.active, 1);
    assert.equal(g.run_untagged, 1);
    assert.deepEqual(await c.db.kysely.selectFrom('ci_runner_namespaces').selectAll().where('runner_id', '=', r2.id).execute(), [
      { runner_id: r2.id, namespace_id: s.g.id },
    ]);
    const p = await c.db.kysely.selectFrom('ci_runners').selectAll().where('id', '=', r3.id).executeTakeFirstOrThrow();
    assert.equal(p.runner_type, 'project_type');
    const links = await c.db.kysely.selectFrom('ci_runner_projects').select(['runner_id', 'project_id']).where('runner_id', '=', r3.id).execute();
    assert.deepEqual(links, [{ runner_id: r3.id, project_id: s.project.id }]);

    // unknown registration token → 403; missing → 400; bad values → Grape errors; invalid record → 400 validation body
    for (const [payload, status, body] of [
      [{ token: 'nope' }, 403, FORBIDDEN],
      [{}, 400, { error: 'token is missing' }],
      [{ token: inst, access_level: 'all' }, 400, { error: 'access_level does not have a valid value' }],
      [{ token: inst, active: true, paused: true }, 400, { error: 'active, paused are mutually exclusive' }],
      [{ token: inst, maximum_timeout: 'x' }, 400, { error: 'maximum_timeout is invalid' }],
      [{ token: inst, maximum_timeout: 60 }, 400, { message: { maximum_timeout: ['needs to be at least 10 minutes'] } }],
      [{ token: inst, run_untagged: false }, 400, { message: { tags_list: ['can not be empty when runner is not allowed to pick untagged jobs'] } }],
      [{ token: inst, maintenance_note: 'x'.repeat(1025) }, 400, { message: { maintenance_note: ['is too long (maximum is 1024 characters)'] } }],
    ] as const) {
      const r = await app.inject({ method: 'POST', url: '/api/v4/runners', payload });
      assert.deepEqual({ status: r.statusCode, body: json(r) }, { status, body }, JSON.stringify(payload).slice(0, 80));
    }
    // what gitlab-runner register sends: info with features and config, tag_list as one string, paused
    const real = await app.inject({
      method: 'POST',
      url: '/api/v4/runners',
      payload: {
        description: 'box',
        info: {
          name: 'gitlab-runner',
          version: '17.5.0',
          revision: 'abc',
          platform: 'linux',
          architecture: 'amd64',
          executor: 'shell',
          shell: 'bash',
          features: { variables: true, artifacts: true, cache: true, multi_build_steps: true, trace_reset: true },
          config: { gpus: '' },
        },
        token: prj,
        locked: true,
        maintenance_note: '',
        paused: false,
        run_untagged: true,
        tag_list: 'shell,linux',
        access_level: 'not_protected',
        maximum_timeout: 0,
      },
    });
    assert.deepEqual([real.statusCode, json(real).message], [400, { maximum_timeout: ['needs to be at least 10 minutes'] }]);
    const real2 = await app.inject({
      method: 'POST',
      url: '/api/v4/runners',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `token=${encodeURIComponent(prj)}&description=form&tag_list=a,b&paused=true&info[version]=16.0.0`,
    });
    assert.equal(real2.statusCode, 201);
    const formRow = await c.db.kysely.selectFrom('ci_runners').selectAll().where('id', '=', json(real2).id).executeTakeFirstOrThrow();
    assert.deepEqual([formRow.description, formRow.tag_list, formRow.active, formRow.version], ['form', '["a","b"]', 0, '16.0.0']);
    await c.db.kysely.deleteFrom('ci_runner_projects').where('runner_id', '=', formRow.id).execute();
    await c.db.kysely.deleteFrom('ci_runners').where('id', '=', formRow.id).execute();
    // a registration token of another kind (an authentication token) is not a registration token
    assert.equal((await app.inject({ method: 'POST', url: '/api/v4/runners', payload: { token: b1.token } })).statusCode, 403);
    // the runner count did not move with the refusals
    const n = await c.db.kysely
      .selectFrom('ci_runners')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(n.n), 3);
  });

  test('verify, reset_authentication_token and DELETE /runners with the authentication token', async () => {
    const { app, c } = ctx;
    const { runner, token } = await seedRunner(c, { description: 'v' });

    const v = await app.inject({ method: 'POST', url: '/api/v4/runners/verify', payload: { token, system_id: 's_0123456789ab' } });
    assert.equal(v.statusCode, 200);
    assert.deepEqual(json(v), { id: runner.id, token, token_expires_at: null });
    // verify is a contact: contacted_at is set (it was null)
    const after1 = await c.db.kysely.selectFrom('ci_runners').select('contacted_at').where('id', '=', runner.id).executeTakeFirstOrThrow();
    assert.ok(after1.contacted_at);
    for (const payload of [{ token: 'glrt-unknown' }, { token: '' }]) {
      const r = await app.inject({ method: 'POST', url: '/api/v4/runners/verify', payload });
      assert.deepEqual({ status: r.statusCode, body: json(r) }, { status: 403, body: FORBIDDEN });
    }
    assert.deepEqual(json(await app.inject({ method: 'POST', url: '/api/v4/runners/verify', payload: {} })), { error: 'token is missing' });

    const reset = await app.inject({ method: 'POST', url: '/api/v4/runners/reset_authentication_token', payload: { token } });
    assert.equal(reset.statusCode, 201);
    const rb = json(reset);
    assert.deepEqual(Object.keys(rb), ['token', 'token_expires_at']);
    assert.match(rb.token, /^glrt-/);
    assert.notEqual(rb.token, token);
    assert.equal((await app.inject({ method: 'POST', url: '/api/v4/runners/verify', payload: { token } })).statusCode, 403);
    assert.equal((await app.inject({ method: 'POST', url: '/api/v4/runners/verify', payload: { token: rb.token } })).statusCode, 200);

    // expired tokens are refused everywhere
    await c.db.kysely
      .updateTable('ci_runners')
      .set({ token_expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', runner.id)
      .execute();
    assert.equal((await app.inject({ method: 'POST', url: '/api/v4/runners/verify', payload: { token: rb.token } })).statusCode, 403);
    assert.equal(await c.ci.runners.authenticate(rb.token), null);
    await c.db.kysely.updateTable('ci_runners').set({ token_expires_at: null }).where('id', '=', runner.id).execute();

    assert.deepEqual(json(await app.inject({ method: 'DELETE', url: '/api/v4/runners', payload: { token: 'glrt-x' } })), FORBIDDEN);
    const del = await app.inject({ method: 'DELETE', url: '/api/v4/runners', payload: { token: rb.token } });
    assert.equal(del.statusCode, 204);
    assert.equal(del.body, '');
    assert.equal(await c.db.kysely.selectFrom('ci_runners').select('id').where('id', '=', runner.id).executeTakeFirst(), undefined);
  });

  test('authenticate(): every contact updates contacted_at (written at most once a minute), runner info whenever it changes', async () => {
    const { c } = ctx;
    const recent = new Date(Date.now() - 10 * 60_000).toISOString();
    const { runner, token } = await seedRunner(c, { contacted_at: recent });
    const info = { version: '17.0.0', revision: 'r1', platform: 'linux', architecture: 'arm64', executor: 'docker' };
    const got = await c.ci.runners.authenticate(token, { info, ip: '10.0.0.7' });
    assert.equal(got?.id, runner.id);
    let row = await c.db.kysely.selectFrom('ci_runners').selectAll().where('id', '=', runner.id).executeTakeFirstOrThrow();
    // the info changed: one write with everything, contacted_at included
    assert.deepEqual(
      [row.version, row.revision, row.platform, row.architecture, row.executor_type, row.ip_address],
      ['17.0.0', 'r1', 'linux', 'arm64', 'docker', '10.0.0.7'],
    );
    assert.notEqual(row.contacted_at, recent);
    const stamp = row.contacted_at;
    // same info within the minute: no write
    await c.ci.runners.authenticate(token, { info, ip: '10.0.0.7' });
    row = await c.db.kysely.selectFrom('ci_runners').selectAll().where('id', '=', runner.id).executeTakeFirstOrThrow();
    assert.equal(row.contacted_at, stamp);
    // a contact more than a minute after the last: written
    const old = new Date(Date.now() - 61_000).toISOString();
    await c.db.kysely.updateTable('ci_runners').set({ contacted_at: old }).where('id', '=', runner.id).execute();
    await c.ci.runners.authenticate(token, { info });
    row = await c.db.kysely.selectFrom('ci_runners').selectAll().where('id', '=', runner.id).executeTakeFirstOrThrow();
    assert.ok(Date.parse(row.contacted_at!) > Date.now() - 60_000);
    // no contact given: nothing written
    await c.db.kysely.updateTable('ci_runners').set({ contacted_at: old }).where('id', '=', runner.id).execute();
    await c.ci.runners.authenticate(token);
    row = await c.db.kysely.selectFrom('ci_runners').selectAll().where('id', '=', runner.id).executeTakeFirstOrThrow();
    assert.equal(row.contacted_at, old);
    assert.equal(await c.ci.runners.authenticate('glrt-nope', { info }), null);
  });

  test('POST /user/runners: instance (administrators), group (Owners), project (Maintainers); scopes create_runner or api', async () => {
    const { app, c, root } = ctx;
    const post = async (headers: Record<string, string>, payload: Record<string, unknown>) => {
      const r = await app.inject({ method: 'POST', url: '/api/v4/user/runners', headers, payload });
      return { status: r.statusCode, body: json(r) };
    };
    const inst = await post(root, { runner_type: 'instance_type', description: 'mine', paused: true, tag_list: ['a', 'b'] });
    assert.equal(inst.status, 201);
    assert.deepEqual(Object.keys(inst.body), ['id', 'token', 'token_expires_at']);
    assert.match(inst.body.token, /^glrt-/);
    const row = await c.db.kysely.selectFrom('ci_runners').selectAll().where('id', '=', inst.body.id).executeTakeFirstOrThrow();
    assert.deepEqual(
      [row.runner_type, row.description, row.active, row.tag_list, row.creation_method],
      ['instance_type', 'mine', 0, '["a","b"]', 'authenticated_user'],
    );
    assert.equal(row.token_digest, await ciDigest(c, inst.body.token));

    assert.deepEqual(await post(s.as.owner, { runner_type: 'instance_type' }), { status: 403, body: { message: '403 Forbidden - Insufficient permissions' } });
    const grp = await post(s.as.createRunner, { runner_type: 'group_type', group_id: s.g.id });
    assert.equal(grp.status, 201);
    assert.deepEqual(await c.db.kysely.selectFrom('ci_runner_namespaces').selectAll().where('runner_id', '=', grp.body.id).execute(), [
      { runner_id: grp.body.id, namespace_id: s.g.id },
    ]);
    const creator = await c.db.kysely.selectFrom('ci_runners').select('creator_id').where('id', '=', grp.body.id).executeTakeFirstOrThrow();
    assert.equal(creator.creator_id, s.users.owner.id);
    assert.deepEqual(await post(s.as.maintainer, { runner_type: 'group_type', group_id: s.g.id }), {
      status: 403,
      body: { message: '403 Forbidden - Insufficient permissions' },
    });
    const prj = await post(s.as.maintainer, { runner_type: 'project_type', project_id: s.project.id, locked: true });
    assert.equal(prj.status, 201);
    assert.deepEqual(await c.db.kysely.selectFrom('ci_runner_projects').select(['runner_id', 'project_id']).where('runner_id', '=', prj.body.id).execute(), [
      { runner_id: prj.body.id, project_id: s.project.id },
    ]);
    assert.deepEqual(await post(s.as.developer, { runner_type: 'project_type', project_id: s.project.id }), {
      status: 403,
      body: { message: '403 Forbidden - Insufficient permissions' },
    });

    for (const [payload, body] of [
      [{}, { error: 'runner_type is missing' }],
      [{ runner_type: 'cloud' }, { error: 'runner_type does not have a valid value' }],
      [{ runner_type: 'group_type' }, { error: 'group_id is missing' }],
      [{ runner_type: 'project_type' }, { error: 'project_id is missing' }],
      [{ runner_type: 'project_type', project_id: 999999 }, { message: '400 Bad request - Missing/invalid project' }],
      [{ runner_type: 'group_type', group_id: 999999 }, { message: '400 Bad request - Missing/invalid group' }],
      [{ runner_type: 'instance_type', maintenance_note: 'x'.repeat(1025) }, { message: { maintenance_note: ['is too long (maximum is 1024 characters)'] } }],
    ] as const) {
      assert.deepEqual(await post(root, payload), { status: 400, body }, JSON.stringify(payload));
    }
    // read_api is not enough to create
    const ro = await post(s.as.readApi, { runner_type: 'group_type', group_id: s.g.id });
    assert.equal(ro.status, 403);
    assert.equal(ro.body.error, 'insufficient_scope');
  });

  test('POST /runners/:id/reset_authentication_token (user side): who may update the runner', async () => {
    const { app, c, root } = ctx;
    const { runner, token } = await seedRunner(c, { projects: [s.project] });
    const r = await app.inject({ method: 'POST', url: `/api/v4/runners/${runner.id}/reset_authentication_token`, headers: s.as.developer });
    assert.deepEqual({ status: r.statusCode, body: json(r) }, { status: 403, body: { message: '403 Forbidden - No access granted' } });
    const ok = await app.inject({ method: 'POST', url: `/api/v4/runners/${runner.id}/reset_authentication_token`, headers: s.as.maintainer });
    assert.equal(ok.statusCode, 201);
    const b = json(ok);
    assert.deepEqual(Object.keys(b), ['token', 'token_expires_at']);
    assert.equal(await c.ci.runners.authenticate(token), null);
    assert.equal((await c.ci.runners.authenticate(b.token))?.id, runner.id);
    const missing = await app.inject({ method: 'POST', url: '/api/v4/runners/999999/reset_authentication_token', headers: root });
    assert.deepEqual({ status: missing.statusCode, body: json(missing) }, { status: 404, body: { message: '404 Not found' } });
  });
});
