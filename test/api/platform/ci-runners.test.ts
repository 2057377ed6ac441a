// Runner lists: GET /runners (owned), /runners/all (administrators), /projects/:id/runners and
// /groups/:id/runners; status computed from created_at/contacted_at (stale > never_contacted > online
// > offline), every filter (scope, type, status, paused, tag_list, version_prefix) and its bad values.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, EXTERNAL_URL, type TestApp } from '../../helpers/build-app.ts';
import { seedRunner } from '../../helpers/ci.ts';
import { runnerStatus } from '../../../src/http/platform/entities/runner.entity.ts';

// one suite: the shared fixture of `before` lives from this file's first test to its last, also in a shard
describe('ci-runners', () => {
  const json = (r: { body: string }) => JSON.parse(r.body);
  const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
  const H = 3600_000;
  const D = 24 * H;

  let ctx: TestApp;
  let s: Awaited<ReturnType<typeof setup>>;
  const cleanups: (() => unknown)[] = [];

  async function setup({ c, seed }: TestApp) {
    const parent = await seed.group({ path: 'parent', name: 'Parent' });
    const g = await seed.group({ path: 'sub', name: 'Sub', parent });
    const other = await seed.group({ path: 'other', name: 'Other' });
    const project = await seed.project({ namespace: g, path: 'app', name: 'App' });
    const project2 = await seed.project({ namespace: other, path: 'lib', name: 'Lib' });
    const as: Record<string, Record<string, string>> = {};
    const users: Record<string, any> = {};
    const mk = async (name: string, src: { project?: any; group?: any }, level: number) => {
      const u = await seed.user({ username: name });
      await seed.member(src, u, level);
      users[name] = u;
      as[name] = (await seed.token(u)).headers;
    };
    await mk('developer', { project }, 30);
    await mk('maintainer', { project }, 40);
    await mk('owner', { group: g }, 50);
    await mk('parentOwner', { group: parent }, 50);
    await mk('groupMaintainer', { group: g }, 40);
    as.stranger = (await seed.token(await seed.user({ username: 'stranger' }))).headers;

    const r = async (attrs: Parameters<typeof seedRunner>[1]) => (await seedRunner(c, attrs)).runner;
    const runners = {
      // instance runners
      online: await r({ description: 'online', contacted_at: ago(H), created_at: ago(2 * D), tag_list: ['docker', 'linux'] }),
      offline: await r({ description: 'offline', contacted_at: ago(3 * H), created_at: ago(2 * D), active: false }),
      staleContacted: await r({ description: 'stale contacted', contacted_at: ago(8 * D), created_at: ago(30 * D) }),
      never: await r({ description: 'never', contacted_at: null }),
      staleNever: await r({ description: 'stale never', contacted_at: null, created_at: ago(8 * D) }),
      oldButOnline: await r({ description: 'old but online', contacted_at: ago(H), created_at: ago(100 * D), tag_list: ['docker'] }),
      // group runners
      parentGroup: await r({ description: 'parent group', groups: [parent.id], contacted_at: ago(H) }),
      subGroup: await r({ description: 'sub group', groups: [g.id], tag_list: ['docker', 'linux', 'gpu'] }),
      otherGroup: await r({ description: 'other group', groups: [other.id] }),
      // project runners
      projectOnly: await r({ description: 'project', projects: [project], contacted_at: ago(10 * 60_000) }),
      shared: await r({ description: 'two projects', projects: [project2, project], locked: true }),
      elsewhere: await r({ description: 'elsewhere', projects: [project2] }),
    };
    await c.db.kysely.updateTable('ci_runners').set({ version: '17.5.1' }).where('id', '=', runners.online.id).execute();
    await c.db.kysely.updateTable('ci_runners').set({ version: '16.11.0' }).where('id', '=', runners.offline.id).execute();
    await c.db.kysely.updateTable('ci_runners').set({ version: '17.50.0' }).where('id', '=', runners.never.id).execute();
    return { parent, g, other, project, project2, as, users, runners };
  }

  before(async () => {
    ctx = await buildTestApp({ after: (fn: () => unknown) => void cleanups.push(fn) });
    s = await setup(ctx);
  });
  after(async () => {
    for (const fn of cleanups.reverse()) await fn();
  });

  async function get(url: string, headers: Record<string, string> = ctx.root) {
    const r = await ctx.app.inject({ method: 'GET', url, headers });
    return { status: r.statusCode, body: json(r), headers: r.headers };
  }
  async function ids(url: string, headers: Record<string, string> = ctx.root): Promise<number[]> {
    const r = await get(url, headers);
    assert.equal(r.status, 200, `${url}: ${JSON.stringify(r.body)}`);
    return r.body.map((x: { id: number }) => x.id);
  }
  const idsOf = (...names: (keyof typeof s.runners)[]) => names.map((n) => s.runners[n].id).sort((a, b) => a - b);

  test('runnerStatus: stale wins over never_contacted, then online within 2 hours, else offline', () => {
    const now = Date.parse('2026-01-10T00:00:00.000Z');
    const at = (ms: number) => new Date(now - ms).toISOString();
    assert.equal(runnerStatus({ created_at: at(8 * D), contacted_at: null }, now), 'stale');
    assert.equal(runnerStatus({ created_at: at(7 * D), contacted_at: null }, now), 'stale');
    assert.equal(runnerStatus({ created_at: at(7 * D - 1), contacted_at: null }, now), 'never_contacted');
    assert.equal(runnerStatus({ created_at: at(30 * D), contacted_at: at(7 * D) }, now), 'stale');
    assert.equal(runnerStatus({ created_at: at(30 * D), contacted_at: at(7 * D - 1) }, now), 'offline');
    assert.equal(runnerStatus({ created_at: at(30 * D), contacted_at: at(2 * H) }, now), 'offline');
    assert.equal(runnerStatus({ created_at: at(30 * D), contacted_at: at(2 * H - 1) }, now), 'online');
    assert.equal(runnerStatus({ created_at: at(1000), contacted_at: at(500) }, now), 'online');
  });

  test('GET /runners/all: administrators only; whole list view; ordered by id; paginated 20 per page', async () => {
    const r = await get('/api/v4/runners/all');
    assert.equal(r.status, 200);
    assert.equal(r.body.length, 12);
    assert.equal(r.headers['x-total'], '12');
    assert.equal(r.headers['x-per-page'], '20');
    assert.deepEqual(
      r.body.map((x: any) => x.id),
      Object.values(s.runners)
        .map((x) => x.id)
        .sort((a, b) => a - b),
    );
    const online = r.body.find((x: any) => x.id === s.runners.online.id);
    assert.deepEqual(online, {
      id: s.runners.online.id,
      description: 'online',
      ip_address: '',
      active: true,
      paused: false,
      is_shared: true,
      runner_type: 'instance_type',
      name: null,
      online: true,
      created_at: s.runners.online.created_at,
      status: 'online',
    });
    const byId = new Map(r.body.map((x: any) => [x.id, x]));
    const st = (n: keyof typeof s.runners) => {
      const x = byId.get(s.runners[n].id) as any;
      return [x.status, x.online, x.active, x.paused, x.is_shared, x.runner_type];
    };
    assert.deepEqual(st('offline'), ['offline', false, false, true, true, 'instance_type']);
    assert.deepEqual(st('staleContacted'), ['stale', false, true, false, true, 'instance_type']);
    assert.deepEqual(st('never'), ['never_contacted', false, true, false, true, 'instance_type']);
    assert.deepEqual(st('staleNever'), ['stale', false, true, false, true, 'instance_type']);
    assert.deepEqual(st('oldButOnline'), ['online', true, true, false, true, 'instance_type']);
    assert.deepEqual(st('subGroup'), ['never_contacted', false, true, false, false, 'group_type']);
    assert.deepEqual(st('projectOnly'), ['online', true, true, false, false, 'project_type']);

    const p2 = await get('/api/v4/runners/all?per_page=5&page=2');
    assert.equal(p2.body.length, 5);
    assert.equal(p2.headers['x-page'], '2');
    assert.equal(p2.headers['x-next-page'], '3');
    assert.equal(p2.headers['x-total-pages'], '3');
    assert.match(String(p2.headers.link), /<http:\/\/hearth\.test\/api\/v4\/runners\/all\?page=3&per_page=5>; rel="next"/);

    for (const who of ['owner', 'maintainer', 'stranger']) {
      assert.deepEqual(await get('/api/v4/runners/all', s.as[who]).then((x) => [x.status, x.body]), [403, { message: '403 Forbidden' }]);
    }
    assert.deepEqual(await get('/api/v4/runners/all', {}).then((x) => [x.status, x.body]), [401, { message: '401 Unauthorized' }]);
  });

  test('GET /runners/all: status, type, scope, paused, tag_list and version_prefix filters', async () => {
    const u = '/api/v4/runners/all';
    assert.deepEqual(await ids(`${u}?status=online`), idsOf('online', 'oldButOnline', 'parentGroup', 'projectOnly'));
    // stale runners that were contacted also match offline; never-contacted ones do not
    assert.deepEqual(await ids(`${u}?status=offline`), idsOf('offline', 'staleContacted'));
    assert.deepEqual(await ids(`${u}?status=stale`), idsOf('staleContacted', 'staleNever'));
    assert.deepEqual(await ids(`${u}?status=never_contacted`), idsOf('never', 'staleNever', 'subGroup', 'otherGroup', 'shared', 'elsewhere'));
    assert.deepEqual(await ids(`${u}?status=paused`), idsOf('offline'));
    assert.equal((await ids(`${u}?status=active`)).length, 11);
    assert.deepEqual(await ids(`${u}?paused=true`), idsOf('offline'));
    assert.equal((await ids(`${u}?paused=false`)).length, 11);
    assert.deepEqual(await ids(`${u}?type=group_type`), idsOf('parentGroup', 'subGroup', 'otherGroup'));
    assert.deepEqual(await ids(`${u}?type=project_type&status=online`), idsOf('projectOnly'));
    assert.deepEqual(await ids(`${u}?scope=shared&status=offline`), idsOf('offline', 'staleContacted'));
    assert.deepEqual(await ids(`${u}?scope=specific`), idsOf('parentGroup', 'subGroup', 'otherGroup', 'projectOnly', 'shared', 'elsewhere'));
    assert.deepEqual(await ids(`${u}?scope=online&type=instance_type`), idsOf('online', 'oldButOnline'));
    assert.deepEqual(await ids(`${u}?scope=paused`), idsOf('offline'));
    assert.deepEqual(await ids(`${u}?tag_list=docker`), idsOf('online', 'oldButOnline', 'subGroup'));
    assert.deepEqual(await ids(`${u}?tag_list=docker,linux`), idsOf('online', 'subGroup'));
    assert.deepEqual(await ids(`${u}?tag_list[]=linux&tag_list[]=gpu`), idsOf('subGroup'));
    assert.deepEqual(await ids(`${u}?tag_list=nothing`), []);
    assert.deepEqual(await ids(`${u}?version_prefix=17.5`), idsOf('online', 'never'));
    assert.deepEqual(await ids(`${u}?version_prefix=17.5.`), idsOf('online'));
    assert.deepEqual(await ids(`${u}?version_prefix=16.`), idsOf('offline'));
    assert.deepEqual(await ids(`${u}?status=online&per_page=2`), idsOf('online', 'oldButOnline'));
  });

  test('runner list filters: bad values answer with GitLab bodies', async () => {
    for (const [url, body] of [
      ['/api/v4/runners/all?type=cloud', { error: 'type does not have a valid value' }],
      ['/api/v4/runners/all?status=sleeping', { error: 'status does not have a valid value' }],
      ['/api/v4/runners/all?scope=everything', { error: 'scope does not have a valid value' }],
      ['/api/v4/runners/all?paused=maybe', { error: 'paused is invalid' }],
      ['/api/v4/runners/all?version_prefix=abc', { error: 'version_prefix is invalid' }],
      ['/api/v4/runners/all?per_page=0', { error: 'per_page has a value not allowed' }],
      ['/api/v4/runners?type=cloud', { error: 'type does not have a valid value' }],
      // scope is a valid value (specific) but not one /runners allows
      ['/api/v4/runners?scope=specific', { message: 'Scope contains invalid value' }],
      ['/api/v4/runners?scope=shared', { message: 'Scope contains invalid value' }],
      ['/api/v4/runners?scope=project_type', { message: 'Scope contains invalid value' }],
      [`/api/v4/projects/${s.project.id}/runners?status=asleep`, { error: 'status does not have a valid value' }],
      [`/api/v4/groups/${s.g.id}/runners?type=cloud`, { error: 'type does not have a valid value' }],
    ] as const) {
      const r = await get(url, url.includes('/runners?') ? s.as.owner : ctx.root);
      assert.deepEqual([r.status, r.body], [400, body], url);
    }
  });

  test('GET /runners: the runners the caller owns (project Maintainer+, group Owner incl. subgroups)', async () => {
    assert.deepEqual(await ids('/api/v4/runners', s.as.maintainer), idsOf('projectOnly', 'shared'));
    assert.deepEqual(await ids('/api/v4/runners', s.as.developer), []);
    // Owner of g: its group runner and the runners of its projects
    assert.deepEqual(await ids('/api/v4/runners', s.as.owner), idsOf('subGroup', 'projectOnly', 'shared'));
    // Owner of the parent: its own group runner and the subgroup's too
    assert.deepEqual(await ids('/api/v4/runners', s.as.parentOwner), idsOf('parentGroup', 'subGroup', 'projectOnly', 'shared'));
    assert.deepEqual(await ids('/api/v4/runners', s.as.groupMaintainer), idsOf('projectOnly', 'shared'));
    assert.deepEqual(await ids('/api/v4/runners', s.as.stranger), []);
    // instance runners are never "owned", not even by administrators
    assert.deepEqual(await ids('/api/v4/runners'), []);
    assert.deepEqual(await ids('/api/v4/runners?scope=online', s.as.owner), idsOf('projectOnly'));
    assert.deepEqual(await ids('/api/v4/runners?status=never_contacted&type=group_type', s.as.parentOwner), idsOf('subGroup'));
    assert.deepEqual(await ids('/api/v4/runners?tag_list=gpu', s.as.owner), idsOf('subGroup'));
    const r = await get('/api/v4/runners', {});
    assert.deepEqual([r.status, r.body], [401, { message: '401 Unauthorized' }]);
  });

  test('GET /projects/:id/runners and /groups/:id/runners: own, ancestors’ and instance runners; Maintainer+', async () => {
    const instance = idsOf('online', 'offline', 'staleContacted', 'never', 'staleNever', 'oldButOnline');
    assert.deepEqual(
      await ids(`/api/v4/projects/${s.project.id}/runners`, s.as.maintainer),
      [...instance, ...idsOf('parentGroup', 'subGroup', 'projectOnly', 'shared')].sort((a, b) => a - b),
    );
    assert.deepEqual(await ids(`/api/v4/projects/${s.project.id}/runners?type=project_type`, s.as.maintainer), idsOf('projectOnly', 'shared'));
    assert.deepEqual(await ids(`/api/v4/projects/${s.project.id}/runners?scope=specific&status=online`, s.as.maintainer), idsOf('parentGroup', 'projectOnly'));
    assert.deepEqual(await ids(`/api/v4/projects/parent%2Fsub%2Fapp/runners?paused=true`, s.as.owner), idsOf('offline'));
    const dev = await get(`/api/v4/projects/${s.project.id}/runners`, s.as.developer);
    assert.deepEqual([dev.status, dev.body], [403, { message: '403 Forbidden' }]);
    const hidden = await get(`/api/v4/projects/${s.project2.id}/runners`, s.as.maintainer);
    assert.deepEqual([hidden.status, hidden.body], [404, { message: '404 Project Not Found' }]);
    // shared runners disabled for the project: no instance runners
    const before = s.project.settings;
    const settings = JSON.parse(before || '{}');
    await ctx.c.db.kysely
      .updateTable('projects')
      .set({ settings: JSON.stringify({ ...settings, shared_runners_enabled: false }) })
      .where('id', '=', s.project.id)
      .execute();
    assert.deepEqual(await ids(`/api/v4/projects/${s.project.id}/runners`, s.as.maintainer), idsOf('parentGroup', 'subGroup', 'projectOnly', 'shared'));
    await ctx.c.db.kysely.updateTable('projects').set({ settings: before }).where('id', '=', s.project.id).execute();

    assert.deepEqual(
      await ids(`/api/v4/groups/${s.g.id}/runners`, s.as.groupMaintainer),
      [...instance, ...idsOf('parentGroup', 'subGroup')].sort((a, b) => a - b),
    );
    assert.deepEqual(await ids(`/api/v4/groups/${s.parent.id}/runners?type=group_type`, s.as.parentOwner), idsOf('parentGroup'));
    assert.deepEqual(await ids(`/api/v4/groups/parent%2Fsub/runners?type=group_type&status=online`, s.as.owner), idsOf('parentGroup'));
    const gdev = await get(`/api/v4/groups/${s.g.id}/runners`, s.as.developer);
    assert.deepEqual([gdev.status, gdev.body], [403, { message: '403 Forbidden' }]);
    const ghidden = await get(`/api/v4/groups/${s.other.id}/runners`, s.as.owner);
    assert.deepEqual([ghidden.status, ghidden.body], [404, { message: '404 Group Not Found' }]);
    const link = (await get(`/api/v4/groups/${s.g.id}/runners?per_page=2&type=group_type`, s.as.owner)).headers.link;
    assert.equal(
      link,
      `<${EXTERNAL_URL}/api/v4/groups/${s.g.id}/runners?id=${s.g.id}&page=1&per_page=2&type=group_type>; rel="first", <${EXTERNAL_URL}/api/v4/groups/${s.g.id}/runners?id=${s.g.id}&page=1&per_page=2&type=group_type>; rel="last"`,
    );
  });

  test('runner status in lists follows the clock: a runner that stops contacting goes offline', async () => {
    const { runner } = await seedRunner(ctx.c, { description: 'clock', contacted_at: ago(2 * H - 60_000), created_at: ago(D) });
    assert.ok((await ids('/api/v4/runners/all?status=online&per_page=100')).includes(runner.id));
    await ctx.c.db.kysely
      .updateTable('ci_runners')
      .set({ contacted_at: ago(2 * H + 1000) })
      .where('id', '=', runner.id)
      .execute();
    assert.ok(!(await ids('/api/v4/runners/all?status=online&per_page=100')).includes(runner.id));
    assert.ok((await ids('/api/v4/runners/all?status=offline&per_page=100')).includes(runner.id));
    await ctx.c.db.kysely.deleteFrom('ci_runners').where('id', '=', runner.id).execute();
  });
});
