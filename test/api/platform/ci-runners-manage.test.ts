// One runner: GET /runners/:id (detail view, who may see it), PUT (every field, validation, who may
// update, manage_runner scope), DELETE, GET /runners/:id/jobs (filters, Reporter+ projects only), and
// enabling / disabling a project runner for a project.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, EXTERNAL_URL, type TestApp } from '../../helpers/build-app.ts';
import { seedPipeline, seedRunner } from '../../helpers/ci.ts';

// one suite: the shared fixture of `before` lives from this file's first test to its last, also in a shard
describe('ci-runners-manage', () => {
  const json = (r: { body: string }) => JSON.parse(r.body);
  const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
  const NO_ACCESS = { message: '403 Forbidden - No access granted' };

  let ctx: TestApp;
  let s: Awaited<ReturnType<typeof setup>>;
  const cleanups: (() => unknown)[] = [];

  async function setup({ seed }: TestApp) {
    const g = await seed.group({ path: 'grp', name: 'Grp' });
    const project = await seed.project({ namespace: g, path: 'app', name: 'App' });
    const project2 = await seed.project({ namespace: g, path: 'lib', name: 'Lib' });
    const outside = await seed.project({ path: 'outside', name: 'Outside', namespace: await seed.group({ path: 'out', name: 'Out' }) });
    const as: Record<string, Record<string, string>> = {};
    const users: Record<string, any> = {};
    const mk = async (name: string, src: { project?: any; group?: any }, level: number) => {
      const u = await seed.user({ username: name, name: name.toUpperCase() });
      await seed.member(src, u, level);
      users[name] = u;
      as[name] = (await seed.token(u)).headers;
    };
    await mk('reporter', { project }, 20);
    await mk('developer', { project }, 30);
    await mk('maintainer', { project }, 40);
    await mk('groupMaintainer', { group: g }, 40);
    await mk('owner', { group: g }, 50);
    users.stranger = await seed.user({ username: 'stranger' });
    as.stranger = (await seed.token(users.stranger)).headers;
    as.manageRunner = (await seed.token(users.maintainer, { scopes: ['manage_runner'] })).headers;
    as.readApi = (await seed.token(users.maintainer, { scopes: ['read_api'] })).headers;
    return { g, project, project2, outside, as, users };
  }

  before(async () => {
    ctx = await buildTestApp({ after: (fn: () => unknown) => void cleanups.push(fn) });
    s = await setup(ctx);
  });
  after(async () => {
    for (const fn of cleanups.reverse()) await fn();
  });

  async function call(method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, headers: Record<string, string>, payload?: Record<string, unknown>) {
    const r = await ctx.app.inject({ method, url, headers, payload });
    return { status: r.statusCode, body: r.body ? json(r) : null };
  }

  test('GET /runners/:id: the detail view; instance runners for every signed-in user; others Developer+', async () => {
    const { c, root } = ctx;
    const { runner } = await seedRunner(c, {
      projects: [s.project],
      description: 'detail',
      tag_list: ['docker', 'linux'],
      run_untagged: false,
      locked: true,
      access_level: 'ref_protected',
      maximum_timeout: 3600,
      contacted_at: ago(60_000),
    });
    await c.db.kysely
      .updateTable('ci_runners')
      .set({
        maintenance_note: 'check disk',
        version: '17.5.0',
        revision: 'abc',
        platform: 'linux',
        architecture: 'amd64',
        ip_address: '10.1.1.1',
        name: 'box',
      })
      .where('id', '=', runner.id)
      .execute();
    const row = await c.db.kysely.selectFrom('ci_runners').selectAll().where('id', '=', runner.id).executeTakeFirstOrThrow();
    const expected = {
      id: runner.id,
      description: 'detail',
      ip_address: '',
      active: true,
      paused: false,
      is_shared: false,
      runner_type: 'project_type',
      name: 'box',
      online: true,
      created_at: row.created_at,
      status: 'online',
      tag_list: ['docker', 'linux'],
      run_untagged: false,
      locked: true,
      maximum_timeout: 3600,
      access_level: 'ref_protected',
      version: '17.5.0',
      revision: 'abc',
      platform: 'linux',
      architecture: 'amd64',
      contacted_at: row.contacted_at,
      maintenance_note: 'check disk',
      projects: [{ id: s.project.id, name: 'App', name_with_namespace: 'Grp / App', path: 'app', path_with_namespace: 'grp/app' }],
      groups: [],
    };
    assert.deepEqual(await call('GET', `/api/v4/runners/${runner.id}`, s.as.maintainer), { status: 200, body: expected });
    assert.deepEqual(await call('GET', `/api/v4/runners/${runner.id}`, root), { status: 200, body: expected });
    assert.deepEqual(await call('GET', `/api/v4/runners/${runner.id}`, s.as.manageRunner), { status: 200, body: expected });
    // a Developer sees it, without the maintenance note (shown to those who may update)
    assert.deepEqual(await call('GET', `/api/v4/runners/${runner.id}`, s.as.developer), { status: 200, body: { ...expected, maintenance_note: null } });
    assert.deepEqual(await call('GET', `/api/v4/runners/${runner.id}`, s.as.reporter), { status: 403, body: NO_ACCESS });
    assert.deepEqual(await call('GET', `/api/v4/runners/${runner.id}`, s.as.stranger), { status: 403, body: NO_ACCESS });
    assert.deepEqual(await call('GET', '/api/v4/runners/999999', root), { status: 404, body: { message: '404 Not found' } });
    assert.deepEqual(await call('GET', '/api/v4/runners/abc', root), { status: 400, body: { error: 'id is invalid' } });
    assert.deepEqual(await call('GET', `/api/v4/runners/${runner.id}`, {}), { status: 401, body: { message: '401 Unauthorized' } });

    // instance runner: any signed-in user; group runner: Developer+ in the group, with the group listed
    const { runner: inst } = await seedRunner(c, { description: 'inst' });
    const i = await call('GET', `/api/v4/runners/${inst.id}`, s.as.stranger);
    assert.equal(i.status, 200);
    assert.deepEqual([i.body.is_shared, i.body.status, i.body.maintenance_note, i.body.projects, i.body.groups], [true, 'never_contacted', null, [], []]);
    const { runner: grp } = await seedRunner(c, { groups: [s.g.id] });
    const gr = await call('GET', `/api/v4/runners/${grp.id}`, s.as.owner);
    assert.equal(gr.status, 200);
    assert.deepEqual(gr.body.groups, [{ id: s.g.id, web_url: `${EXTERNAL_URL}/groups/grp`, name: 'Grp' }]);
    assert.equal((await call('GET', `/api/v4/runners/${grp.id}`, s.as.developer)).status, 403);
    assert.deepEqual(await call('GET', `/api/v4/runners/${grp.id}`, s.as.stranger), { status: 403, body: NO_ACCESS });

    // a creator shows as created_by
    const created = await call('POST', '/api/v4/user/runners', s.as.maintainer, { runner_type: 'project_type', project_id: s.project.id });
    const withCreator = await call('GET', `/api/v4/runners/${created.body.id}`, s.as.maintainer);
    assert.deepEqual(withCreator.body.created_by, {
      id: s.users.maintainer.id,
      username: 'maintainer',
      name: 'MAINTAINER',
      state: 'active',
      locked: false,
      avatar_url: null,
      web_url: `${EXTERNAL_URL}/maintainer`,
    });
  });

  test('PUT /runners/:id: every field, paused/active, validation, at least one field', async () => {
    const { c, root } = ctx;
    const { runner } = await seedRunner(c, { projects: [s.project], tag_list: ['a'] });
    const url = `/api/v4/runners/${runner.id}`;
    const r = await call('PUT', url, s.as.maintainer, {
      description: 'renamed',
      paused: true,
      tag_list: 'x, y',
      run_untagged: false,
      locked: true,
      access_level: 'ref_protected',
      maximum_timeout: 7200,
      maintenance_note: 'note',
    });
    assert.equal(r.status, 200);
    assert.deepEqual(
      [
        r.body.description,
        r.body.paused,
        r.body.active,
        r.body.tag_list,
        r.body.run_untagged,
        r.body.locked,
        r.body.access_level,
        r.body.maximum_timeout,
        r.body.maintenance_note,
      ],
      ['renamed', true, false, ['x', 'y'], false, true, 'ref_protected', 7200, 'note'],
    );
    const row = await c.db.kysely.selectFrom('ci_runners').selectAll().where('id', '=', runner.id).executeTakeFirstOrThrow();
    assert.deepEqual(
      [row.description, row.active, row.tag_list, row.run_untagged, row.locked, row.access_level, row.maximum_timeout, row.maintenance_note],
      ['renamed', 0, '["x","y"]', 0, 1, 'ref_protected', 7200, 'note'],
    );
    // python-gitlab and forms: active=true is the deprecated way to unpause
    assert.equal((await call('PUT', url, s.as.maintainer, { active: true })).body.paused, false);
    assert.equal((await call('PUT', url, s.as.maintainer, { paused: 'true' })).body.active, false);

    for (const [payload, body] of [
      [
        {},
        {
          error:
            'description, active, paused, tag_list, run_untagged, locked, access_level, maximum_timeout, maintenance_note are missing, at least one parameter must be provided',
        },
      ],
      [{ active: true, paused: false }, { error: 'active, paused are mutually exclusive' }],
      [{ access_level: 'public' }, { error: 'access_level does not have a valid value' }],
      [{ maximum_timeout: 'soon' }, { error: 'maximum_timeout is invalid' }],
      [{ paused: 'perhaps' }, { error: 'paused is invalid' }],
      [{ maintenance_note: 'n'.repeat(1025) }, { message: { maintenance_note: ['is too long (maximum is 1024 characters)'] } }],
      [{ maximum_timeout: 599 }, { message: { maximum_timeout: ['needs to be at least 10 minutes'] } }],
      [{ tag_list: '' }, { message: { tags_list: ['can not be empty when runner is not allowed to pick untagged jobs'] } }],
    ] as const) {
      assert.deepEqual(await call('PUT', url, s.as.maintainer, payload), { status: 400, body }, JSON.stringify(payload).slice(0, 60));
    }
    // nothing was half-written by the refusals
    const same = await c.db.kysely.selectFrom('ci_runners').selectAll().where('id', '=', runner.id).executeTakeFirstOrThrow();
    assert.deepEqual([same.maintenance_note, same.maximum_timeout, same.tag_list], ['note', 7200, '["x","y"]']);
    // exactly 1024 characters is fine; null-able note cleared with ""
    assert.equal((await call('PUT', url, s.as.maintainer, { maintenance_note: 'é'.repeat(1024) })).status, 200);
    assert.deepEqual(await call('PUT', '/api/v4/runners/999999', root, { description: 'x' }), { status: 404, body: { message: '404 Not found' } });
  });

  test('PUT /runners/:id permissions: instance → administrator, group → Owner, project → Maintainer; manage_runner scope', async () => {
    const { c, root } = ctx;
    const { runner: inst } = await seedRunner(c, {});
    const { runner: grp } = await seedRunner(c, { groups: [s.g.id] });
    const { runner: prj } = await seedRunner(c, { projects: [s.project] });
    const put = (id: number, who: Record<string, string>) => call('PUT', `/api/v4/runners/${id}`, who, { description: 'by someone' }).then((r) => r.status);
    assert.equal(await put(inst.id, s.as.owner), 403);
    assert.equal(await put(inst.id, root), 200);
    assert.equal(await put(grp.id, s.as.groupMaintainer), 403);
    assert.equal(await put(grp.id, s.as.owner), 200);
    assert.equal(await put(prj.id, s.as.developer), 403);
    assert.equal(await put(prj.id, s.as.maintainer), 200);
    assert.equal(await put(prj.id, s.as.groupMaintainer), 200);
    assert.equal(await put(prj.id, s.as.stranger), 403);
    assert.deepEqual(await call('PUT', `/api/v4/runners/${prj.id}`, s.as.developer, { description: 'x' }), { status: 403, body: NO_ACCESS });
    // a token with only manage_runner works on /runners/:id; read_api does not write
    assert.equal(await put(prj.id, s.as.manageRunner), 200);
    const ro = await call('PUT', `/api/v4/runners/${prj.id}`, s.as.readApi, { description: 'x' });
    assert.deepEqual(ro, {
      status: 403,
      body: {
        error: 'insufficient_scope',
        error_description: 'The request requires higher privileges than provided by the access token.',
        scope: 'api manage_runner',
      },
    });
    // manage_runner is not enough for the lists
    assert.equal((await call('GET', '/api/v4/runners', s.as.manageRunner)).status, 403);
  });

  test('DELETE /runners/:id: 204; a runner of several projects only by administrators; owner scope needed', async () => {
    const { c, root } = ctx;
    const { runner: one } = await seedRunner(c, { projects: [s.project] });
    const { runner: two } = await seedRunner(c, { projects: [s.project, s.project2] });
    const { runner: grp } = await seedRunner(c, { groups: [s.g.id] });
    const { runner: inst } = await seedRunner(c, {});
    assert.deepEqual(await call('DELETE', `/api/v4/runners/${one.id}`, s.as.developer), { status: 403, body: NO_ACCESS });
    assert.deepEqual(await call('DELETE', `/api/v4/runners/${two.id}`, s.as.maintainer), {
      status: 403,
      body: { message: '403 Forbidden - Runner associated with more than one project' },
    });
    assert.deepEqual(await call('DELETE', `/api/v4/runners/${grp.id}`, s.as.groupMaintainer), { status: 403, body: NO_ACCESS });
    assert.deepEqual(await call('DELETE', `/api/v4/runners/${inst.id}`, s.as.owner), { status: 403, body: NO_ACCESS });
    assert.deepEqual(await call('DELETE', `/api/v4/runners/${one.id}`, s.as.maintainer), { status: 204, body: null });
    assert.deepEqual(await call('DELETE', `/api/v4/runners/${grp.id}`, s.as.owner), { status: 204, body: null });
    assert.deepEqual(await call('DELETE', `/api/v4/runners/${two.id}`, root), { status: 204, body: null });
    assert.deepEqual(await call('DELETE', `/api/v4/runners/${inst.id}`, root), { status: 204, body: null });
    for (const id of [one.id, two.id, grp.id, inst.id]) {
      assert.equal(await c.db.kysely.selectFrom('ci_runners').select('id').where('id', '=', id).executeTakeFirst(), undefined);
    }
    assert.deepEqual(await c.db.kysely.selectFrom('ci_runner_projects').selectAll().where('runner_id', 'in', [one.id, two.id]).execute(), []);
    assert.deepEqual(await call('DELETE', `/api/v4/runners/${one.id}`, root), { status: 404, body: { message: '404 Not found' } });
    // If-Unmodified-Since older than the runner's last change → 412
    const { runner: fresh } = await seedRunner(c, {});
    const r = await ctx.app.inject({
      method: 'DELETE',
      url: `/api/v4/runners/${fresh.id}`,
      headers: { ...root, 'if-unmodified-since': 'Mon, 01 Jan 2024 00:00:00 GMT' },
    });
    assert.deepEqual([r.statusCode, json(r)], [412, { message: '412 Precondition Failed' }]);
  });

  test('GET /runners/:id/jobs: the runner’s jobs in projects where the caller is Reporter+, filters, sort', async () => {
    const { c, root } = ctx;
    const { runner } = await seedRunner(c, { projects: [s.project, s.outside] });
    const p1 = await seedPipeline(c, s.project, { ref: 'main' }, [
      { name: 'build', status: 'success', runner_id: runner.id },
      { name: 'test', status: 'failed', runner_id: runner.id },
      { name: 'deploy', status: 'running', runner_id: runner.id },
      { name: 'other-runner', status: 'success' },
    ]);
    const p2 = await seedPipeline(c, s.outside, { ref: 'main' }, [{ name: 'outside', status: 'success', runner_id: runner.id }]);
    await c.db.kysely.updateTable('ci_builds').set({ runner_system_id: 's_aaaaaaaaaaaa' }).where('id', '=', p1.jobs[0].id).execute();
    const ids = async (url: string, who = root) => {
      const r = await call('GET', url, who);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.map((j: any) => j.id);
    };
    const u = `/api/v4/runners/${runner.id}/jobs`;
    const [build, testJob, deploy] = p1.jobs;
    assert.deepEqual(await ids(u), [p2.jobs[0].id, deploy.id, testJob.id, build.id]);
    assert.deepEqual(await ids(`${u}?sort=asc&order_by=id`), [build.id, testJob.id, deploy.id, p2.jobs[0].id]);
    assert.deepEqual(await ids(`${u}?status=failed`), [testJob.id]);
    assert.deepEqual(await ids(`${u}?system_id=s_aaaaaaaaaaaa`), [build.id]);
    // the maintainer of one of the projects sees only that project's jobs
    assert.deepEqual(await ids(u, s.as.maintainer), [deploy.id, testJob.id, build.id]);
    const page = await ctx.app.inject({ method: 'GET', url: `${u}?per_page=2`, headers: root });
    assert.equal(page.headers['x-total'], '4');
    assert.equal(page.headers['x-next-page'], '2');
    const one = (await call('GET', `${u}?status=failed`, root)).body[0];
    assert.equal(one.name, 'test');
    assert.equal(one.status, 'failed');
    assert.deepEqual(one.project, {
      id: s.project.id,
      description: s.project.description ?? null,
      name: 'App',
      name_with_namespace: 'Grp / App',
      path: 'app',
      path_with_namespace: 'grp/app',
      created_at: s.project.created_at,
    });
    for (const [url, body] of [
      [`${u}?status=done`, { error: 'status does not have a valid value' }],
      [`${u}?sort=up`, { error: 'sort does not have a valid value' }],
      [`${u}?order_by=name`, { error: 'order_by does not have a valid value' }],
    ] as const) {
      assert.deepEqual(await call('GET', url, root), { status: 400, body });
    }
    // read_builds: Maintainers of an associated project; a Developer is refused
    assert.deepEqual(await call('GET', u, s.as.developer), { status: 403, body: NO_ACCESS });
    assert.deepEqual(await call('GET', u, s.as.stranger), { status: 403, body: NO_ACCESS });
    assert.deepEqual(await call('GET', '/api/v4/runners/999999/jobs', root), { status: 404, body: { message: '404 Not found' } });
    // another runner's list is its own (the response cache keys on the runner), and a caller who loses
    // the membership loses the cached list with it
    const { runner: idle } = await seedRunner(c, { projects: [s.project] });
    assert.deepEqual(await ids(`/api/v4/runners/${idle.id}/jobs`), []);
    const { runner: mine } = await seedRunner(c, { projects: [s.project2] });
    await seedPipeline(c, s.project2, {}, [{ name: 'x', status: 'success', runner_id: mine.id }]);
    const lost = await ctx.seed.user({ username: 'leaving' });
    await ctx.seed.member({ project: s.project2 }, lost, 40);
    const lostHeaders = (await ctx.seed.token(lost)).headers;
    assert.equal((await ids(`/api/v4/runners/${mine.id}/jobs`, lostHeaders)).length, 1);
    await c.db.kysely.deleteFrom('members').where('user_id', '=', lost.id).execute();
    assert.deepEqual(await call('GET', `/api/v4/runners/${mine.id}/jobs`, lostHeaders), { status: 403, body: NO_ACCESS });
  });

  test('POST /projects/:id/runners enables a project runner; DELETE …/runners/:runner_id disables it', async () => {
    const { c, root } = ctx;
    const { runner } = await seedRunner(c, { projects: [s.project], description: 'movable' });
    const { runner: locked } = await seedRunner(c, { projects: [s.project], locked: true });
    const { runner: grp } = await seedRunner(c, { groups: [s.g.id] });
    const enable = (pid: number, who: Record<string, string>, runner_id: unknown) => call('POST', `/api/v4/projects/${pid}/runners`, who, { runner_id });

    assert.deepEqual(await enable(s.project2.id, s.as.maintainer, runner.id), { status: 404, body: { message: '404 Project Not Found' } });
    const ok = await enable(s.project2.id, s.as.groupMaintainer, runner.id);
    assert.equal(ok.status, 201);
    assert.deepEqual(ok.body, {
      id: runner.id,
      description: 'movable',
      ip_address: '',
      active: true,
      paused: false,
      is_shared: false,
      runner_type: 'project_type',
      name: null,
      online: false,
      created_at: runner.created_at,
      status: 'never_contacted',
    });
    const links = await c.db.kysely.selectFrom('ci_runner_projects').select('project_id').where('runner_id', '=', runner.id).orderBy('project_id').execute();
    assert.deepEqual(
      links.map((l) => l.project_id),
      [s.project.id, s.project2.id].sort((a, b) => a - b),
    );
    assert.deepEqual(await enable(s.project2.id, s.as.groupMaintainer, runner.id), {
      status: 400,
      body: { message: ['Assign to Validation failed: Runner has already been taken'] },
    });
    assert.deepEqual(await enable(s.project2.id, s.as.groupMaintainer, grp.id), { status: 403, body: { message: '403 Forbidden - Runner is a group runner' } });
    assert.deepEqual(await enable(s.project2.id, s.as.groupMaintainer, locked.id), { status: 403, body: { message: '403 Forbidden - Runner is locked' } });
    assert.deepEqual(await enable(s.project.id, s.as.developer, runner.id), { status: 403, body: { message: '403 Forbidden' } });
    assert.deepEqual(await enable(s.project2.id, s.as.groupMaintainer, 999999), { status: 404, body: { message: '404 Not found' } });
    assert.deepEqual(await enable(s.project2.id, s.as.groupMaintainer, undefined), { status: 400, body: { error: 'runner_id is missing' } });
    // an administrator may enable a locked runner
    assert.equal((await enable(s.project2.id, root, locked.id)).status, 201);
    // a runner whose projects the caller does not maintain
    const { runner: foreign } = await seedRunner(c, { projects: [s.outside] });
    assert.deepEqual(await enable(s.project.id, s.as.maintainer, foreign.id), { status: 403, body: NO_ACCESS });

    // disabling
    const disable = (pid: number, rid: number, who: Record<string, string>) => call('DELETE', `/api/v4/projects/${pid}/runners/${rid}`, who);
    assert.deepEqual(await disable(s.project2.id, runner.id, s.as.groupMaintainer), { status: 204, body: null });
    assert.deepEqual(await disable(s.project2.id, runner.id, s.as.groupMaintainer), { status: 404, body: { message: '404 Runner Not Found' } });
    assert.deepEqual(await disable(s.project.id, runner.id, s.as.maintainer), {
      status: 403,
      body: { message: '403 Forbidden - Only one project associated with the runner. Please remove the runner instead' },
    });
    assert.deepEqual(await disable(s.project.id, runner.id, s.as.developer), { status: 403, body: { message: '403 Forbidden' } });
    // a locked runner is disabled only by administrators
    assert.deepEqual(await disable(s.project2.id, locked.id, s.as.groupMaintainer), {
      status: 403,
      body: { message: '403 Forbidden - User not allowed to assign runner' },
    });
    assert.deepEqual(await disable(s.project2.id, locked.id, root), { status: 204, body: null });
    const left = await c.db.kysely.selectFrom('ci_runner_projects').select('project_id').where('runner_id', 'in', [runner.id, locked.id]).execute();
    assert.deepEqual(
      left.map((l) => l.project_id),
      [s.project.id, s.project.id],
    );
  });
});
