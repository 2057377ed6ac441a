// Pipeline schedules: create (next_run_at from the cron line in its time zone), list with scopes, details with
// last_pipeline and variables, update, take ownership, play, delete, variables; who may do what; GitLab's bodies
// for bad cron lines, time zones and missing fields (nothing written); the schedule round, called with a clock
// moved forward: one pipeline per due schedule (source schedule, its variables, its owner), next_run_at moved
// on, nothing twice when two rounds race, nothing for an owner who may no longer run pipelines on the ref.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EXTERNAL_URL } from '../../helpers/build-app.ts';
import { ciProject, ONE_JOB_CI, suiteApp } from '../../helpers/ci.ts';

describe('ci-pipeline-schedules', () => {
  const json = (r: { body: string }) => JSON.parse(r.body);
  const ctx = suiteApp();
  let n = 0;

  /** A private project with a committed .service-ci.yml, a branch Developers may push to, and one user per level. */
  async function setup() {
    n++;
    const p = await ciProject(ctx, {
      group: { path: `sch${n}`, name: `Sch${n}` },
      members: { reporter: 20, developer: 30, developer2: 30, maintainer: 40 },
      username: (role) => `s${role}${n}`,
      ci: { file: '.service-ci.yml', content: ONE_JOB_CI, by: 'maintainer' },
      branches: [{ branch: 'dev', ref: 'main', by: 'maintainer' }],
    });
    return { ...p, url: `${p.url}/pipeline_schedules`, projectUrl: p.url };
  }

  async function userBasic(headers: Record<string, string>, userId: number) {
    const u = json(await ctx.app.inject({ method: 'GET', url: `/api/v4/users/${userId}`, headers }));
    return { id: u.id, username: u.username, name: u.name, state: 'active', locked: false, avatar_url: u.avatar_url, web_url: `${EXTERNAL_URL}/${u.username}` };
  }
  const rows = (projectId: number) =>
    ctx.c.db.kysely.selectFrom('ci_pipeline_schedules').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
  const schedulePipelines = (projectId: number) =>
    ctx.c.db.kysely.selectFrom('ci_pipelines').selectAll().where('project_id', '=', projectId).where('source', '=', 'schedule').orderBy('id').execute();

  test('create, read, list with scopes, update, take ownership, delete: whole bodies and rows', async () => {
    const { project, as, users, url } = await setup();
    const created = await ctx.app.inject({
      method: 'POST',
      url,
      headers: as.developer,
      payload: { description: 'nightly', ref: 'dev', cron: '0 1 * * *', cron_timezone: 'Europe/Berlin' },
    });
    assert.equal(created.statusCode, 201, created.body);
    const [row] = await rows(project.id);
    // 01:00 in Berlin is midnight or 23:00 UTC
    assert.match(row.next_run_at!, /T(00|23):00:00\.000Z$/);
    assert.ok(Date.parse(row.next_run_at!) > Date.now());
    const owner = await userBasic(as.developer, users.developer.id);
    const base = {
      id: row.id,
      description: 'nightly',
      ref: 'dev',
      cron: '0 1 * * *',
      cron_timezone: 'Europe/Berlin',
      next_run_at: row.next_run_at,
      active: true,
      created_at: row.created_at,
      updated_at: row.updated_at,
      owner,
    };
    assert.deepEqual(json(created), { ...base, last_pipeline: null, variables: [] });
    assert.deepEqual(json(await ctx.app.inject({ method: 'GET', url: `${url}/${row.id}`, headers: as.reporter })), {
      ...base,
      last_pipeline: null,
      variables: [],
    });
    // a second, inactive one; the scopes
    const second = await ctx.app.inject({
      method: 'POST',
      url,
      headers: as.maintainer,
      payload: { description: 'off', ref: 'main', cron: '*/5 * * * *', active: false },
    });
    assert.equal(second.statusCode, 201, second.body);
    assert.equal(json(second).cron_timezone, 'UTC');
    const list = async (q = '') => json(await ctx.app.inject({ method: 'GET', url: `${url}${q}`, headers: as.reporter })).map((s: { id: number }) => s.id);
    assert.deepEqual(await list(), [row.id, json(second).id]);
    assert.deepEqual(await list('?scope=active'), [row.id]);
    assert.deepEqual(await list('?scope=inactive'), [json(second).id]);
    assert.deepEqual(json(await ctx.app.inject({ method: 'GET', url: `${url}?scope=all`, headers: as.reporter })), {
      error: 'scope does not have a valid value',
    });
    assert.deepEqual(json(await ctx.app.inject({ method: 'GET', url: `${url}?per_page=1`, headers: as.reporter }))[0], base);

    // update: another Developer may not; the owner may; a Maintainer may
    const denied = await ctx.app.inject({ method: 'PUT', url: `${url}/${row.id}`, headers: as.developer2, payload: { description: 'x' } });
    assert.equal(denied.statusCode, 403);
    assert.deepEqual(json(denied), { message: '403 Forbidden' });
    const upd = await ctx.app.inject({ method: 'PUT', url: `${url}/${row.id}`, headers: as.developer, payload: { cron: '30 6 * * 1', cron_timezone: 'UTC' } });
    assert.equal(upd.statusCode, 200, upd.body);
    const [after1] = await rows(project.id);
    assert.equal(after1.cron, '30 6 * * 1');
    assert.match(after1.next_run_at!, /T06:30:00\.000Z$/);
    assert.equal(new Date(after1.next_run_at!).getUTCDay(), 1);
    assert.equal((await ctx.app.inject({ method: 'PUT', url: `${url}/${row.id}`, headers: as.maintainer, payload: { active: false } })).statusCode, 200);
    assert.equal((await rows(project.id))[0].active, 0);

    // take ownership: a Developer who does not own it may not; a Maintainer takes it (201), then again (200)
    assert.equal((await ctx.app.inject({ method: 'POST', url: `${url}/${row.id}/take_ownership`, headers: as.developer2 })).statusCode, 403);
    const took = await ctx.app.inject({ method: 'POST', url: `${url}/${row.id}/take_ownership`, headers: as.maintainer });
    assert.equal(took.statusCode, 201);
    assert.deepEqual(json(took).owner, await userBasic(as.maintainer, users.maintainer.id));
    assert.equal((await rows(project.id))[0].owner_id, users.maintainer.id);
    assert.equal((await ctx.app.inject({ method: 'POST', url: `${url}/${row.id}/take_ownership`, headers: as.maintainer })).statusCode, 200);

    // who may not see it; delete
    assert.equal((await ctx.app.inject({ method: 'GET', url })).statusCode, 401);
    const stranger = (await ctx.seed.token(await ctx.seed.user())).headers;
    assert.deepEqual(json(await ctx.app.inject({ method: 'GET', url, headers: stranger })), { message: '404 Project Not Found' });
    const guest = await ctx.seed.user();
    await ctx.seed.member({ group: (await ctx.c.resolve.namespaceById(project.namespace_id))! }, guest, 10);
    assert.equal((await ctx.app.inject({ method: 'GET', url, headers: (await ctx.seed.token(guest)).headers })).statusCode, 403);
    assert.equal(
      (await ctx.app.inject({ method: 'POST', url, headers: as.reporter, payload: { description: 'r', ref: 'main', cron: '* * * * *' } })).statusCode,
      403,
    );
    const nf = await ctx.app.inject({ method: 'GET', url: `${url}/999999`, headers: as.reporter });
    assert.deepEqual(json(nf), { message: '404 Pipeline Schedule Not Found' });
    assert.equal((await ctx.app.inject({ method: 'DELETE', url: `${url}/${row.id}`, headers: as.developer })).statusCode, 403);
    assert.equal((await ctx.app.inject({ method: 'DELETE', url: `${url}/${row.id}`, headers: as.maintainer })).statusCode, 204);
    assert.deepEqual(
      (await rows(project.id)).map((r) => r.id),
      [json(second).id],
    );
  });

  test('bad input: cron, time zone, missing and empty fields, a protected ref; nothing written', async () => {
    const { project, as, url } = await setup();
    const cases: [Record<string, unknown>, unknown][] = [
      [{ description: 'd', ref: 'main', cron: 'not a cron' }, { message: { cron: ['syntax is invalid'] } }],
      [{ description: 'd', ref: 'main', cron: '61 * * * *' }, { message: { cron: ['syntax is invalid'] } }],
      [{ description: 'd', ref: 'main', cron: '* * * *' }, { message: { cron: ['syntax is invalid'] } }],
      [{ description: 'd', ref: 'main', cron: '0 1 * * *', cron_timezone: 'Mars/Olympus' }, { message: { cron_timezone: ['syntax is invalid'] } }],
      [{ description: '', ref: 'main', cron: '0 1 * * *' }, { message: { description: ["can't be blank"] } }],
      [{ ref: 'main', cron: '0 1 * * *' }, { error: 'description is missing' }],
      [{ description: 'd', cron: '0 1 * * *' }, { error: 'ref is missing' }],
      [{ description: 'd', ref: 'main' }, { error: 'cron is missing' }],
    ];
    for (const [payload, body] of cases) {
      const r = await ctx.app.inject({ method: 'POST', url, headers: as.maintainer, payload });
      assert.equal(r.statusCode, 400, `${JSON.stringify(payload)}: ${r.body}`);
      assert.deepEqual(json(r), body, JSON.stringify(payload));
    }
    // a Developer may not schedule the protected default branch
    const prot = await ctx.app.inject({ method: 'POST', url, headers: as.developer, payload: { description: 'd', ref: 'main', cron: '0 1 * * *' } });
    assert.equal(prot.statusCode, 400);
    assert.deepEqual(json(prot), { message: { base: ['The current user is not authorized to create the pipeline schedule'] } });
    assert.deepEqual(await rows(project.id), []);
    // an update that fails leaves the row as it was
    const ok = json(await ctx.app.inject({ method: 'POST', url, headers: as.maintainer, payload: { description: 'd', ref: 'main', cron: '0 1 * * *' } }));
    const before1 = await rows(project.id);
    const bad = await ctx.app.inject({ method: 'PUT', url: `${url}/${ok.id}`, headers: as.maintainer, payload: { cron: '0 1 * *', description: 'changed' } });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(json(bad), { message: { cron: ['syntax is invalid'] } });
    assert.deepEqual(await rows(project.id), before1);
  });

  test('variables: create, update, delete (202), duplicates and bad keys, who may set them', async () => {
    const { as, url } = await setup();
    const s = json(await ctx.app.inject({ method: 'POST', url, headers: as.developer, payload: { description: 'v', ref: 'dev', cron: '0 1 * * *' } }));
    const vars = `${url}/${s.id}/variables`;
    const c1 = await ctx.app.inject({ method: 'POST', url: vars, headers: as.developer, payload: { key: 'COLOR', value: 'blue' } });
    assert.equal(c1.statusCode, 201, c1.body);
    assert.deepEqual(json(c1), { variable_type: 'env_var', key: 'COLOR', value: 'blue', raw: false });
    const dup = await ctx.app.inject({ method: 'POST', url: vars, headers: as.developer, payload: { key: 'COLOR', value: 'red' } });
    assert.equal(dup.statusCode, 400);
    assert.deepEqual(json(dup), { message: { key: ['(COLOR) has already been taken'] } });
    const badKey = await ctx.app.inject({ method: 'POST', url: vars, headers: as.developer, payload: { key: 'a-b', value: 'x' } });
    assert.deepEqual(json(badKey), { message: { key: ["can contain only letters, digits and '_'."] } });
    assert.deepEqual(json(await ctx.app.inject({ method: 'POST', url: vars, headers: as.developer, payload: { key: 'K' } })), { error: 'value is missing' });
    assert.deepEqual(json(await ctx.app.inject({ method: 'POST', url: vars, headers: as.developer, payload: { key: 'K', value: 'v', variable_type: 'x' } })), {
      error: 'variable_type does not have a valid value',
    });
    assert.equal((await ctx.app.inject({ method: 'POST', url: vars, headers: as.developer2, payload: { key: 'K', value: 'v' } })).statusCode, 403);
    const upd = await ctx.app.inject({ method: 'PUT', url: `${vars}/COLOR`, headers: as.developer, payload: { value: 'green', variable_type: 'file' } });
    assert.deepEqual(json(upd), { variable_type: 'file', key: 'COLOR', value: 'green', raw: false });
    assert.deepEqual(json(await ctx.app.inject({ method: 'PUT', url: `${vars}/NOPE`, headers: as.developer, payload: { value: 'x' } })), {
      message: '404 Pipeline Schedule Variable Not Found',
    });
    assert.deepEqual(json(await ctx.app.inject({ method: 'GET', url: `${url}/${s.id}`, headers: as.developer })).variables, [json(upd)]);
    const del = await ctx.app.inject({ method: 'DELETE', url: `${vars}/COLOR`, headers: as.developer });
    assert.equal(del.statusCode, 202);
    assert.deepEqual(json(del), json(upd));
    assert.equal(
      (await ctx.c.db.kysely.selectFrom('ci_pipeline_schedule_variables').select('id').where('pipeline_schedule_id', '=', s.id).execute()).length,
      0,
    );
  });

  test('the round: due schedules run once as their owner with their variables; next_run_at moves on; play runs now', async () => {
    const { project, as, users, url } = await setup();
    const s = json(await ctx.app.inject({ method: 'POST', url, headers: as.developer, payload: { description: 'r', ref: 'dev', cron: '0 * * * *' } }));
    await ctx.app.inject({ method: 'POST', url: `${url}/${s.id}/variables`, headers: as.developer, payload: { key: 'NIGHTLY', value: '1' } });
    const inactive = json(
      await ctx.app.inject({ method: 'POST', url, headers: as.developer, payload: { description: 'i', ref: 'dev', cron: '0 * * * *', active: false } }),
    );
    const [row] = await rows(project.id);
    // the round is instance-wide: the earlier tests' schedules (e.g. `0 1 * * *` UTC) fall due within the hours this
    // test moves the clock on, depending on the time of day it runs, so they leave the table first
    await ctx.c.db.kysely.deleteFrom('ci_pipeline_schedules').where('project_id', '!=', project.id).execute();
    // not due yet: nothing
    assert.equal(await ctx.c.ci.schedules.runDue(new Date()), 0);
    assert.deepEqual(await schedulePipelines(project.id), []);
    // the clock moved past next_run_at: two rounds racing claim it once
    const later = new Date(Date.parse(row.next_run_at!) + 60_000);
    const claims = await Promise.all([ctx.c.ci.schedules.runDue(later), ctx.c.ci.schedules.runDue(later)]);
    assert.equal(claims[0] + claims[1], 1);
    const ps = await schedulePipelines(project.id);
    assert.equal(ps.length, 1);
    assert.equal(ps[0].user_id, users.developer.id);
    assert.equal(ps[0].ref, 'dev');
    assert.equal(ps[0].pipeline_schedule_id, s.id);
    assert.deepEqual(JSON.parse(ps[0].variables), [{ key: 'NIGHTLY', value: '1', variable_type: 'env_var' }]);
    const [moved] = await rows(project.id);
    assert.equal(moved.next_run_at, new Date(Date.parse(row.next_run_at!) + 3_600_000).toISOString());
    assert.equal((await rows(project.id)).find((r) => r.id === inactive.id)!.next_run_at !== null, true);
    assert.equal(await ctx.c.ci.schedules.runDue(later), 0);
    // the details show it as last_pipeline; the schedule's pipelines list it
    const details = json(await ctx.app.inject({ method: 'GET', url: `${url}/${s.id}`, headers: as.developer }));
    assert.equal(details.last_pipeline.id, ps[0].id);
    assert.equal(details.last_pipeline.source, 'schedule');
    const listed = json(await ctx.app.inject({ method: 'GET', url: `${url}/${s.id}/pipelines`, headers: as.developer }));
    assert.deepEqual(
      listed.map((p: { id: number }) => p.id),
      [ps[0].id],
    );

    // play: 201 with GitLab's body, a run queued for the player; next_run_at untouched
    const play = await ctx.app.inject({ method: 'POST', url: `${url}/${s.id}/play`, headers: as.developer2 });
    assert.equal(play.statusCode, 201);
    assert.deepEqual(json(play), { message: '201 Created' });
    // the run is drained in the background of the process that queued it
    await ctx.c.ci.schedules.idle();
    const afterPlay = await schedulePipelines(project.id);
    assert.equal(afterPlay.length, 2);
    assert.equal(afterPlay[1].user_id, users.developer2.id);
    assert.equal((await rows(project.id))[0].next_run_at, moved.next_run_at);
    assert.equal((await ctx.app.inject({ method: 'POST', url: `${url}/${s.id}/play`, headers: as.reporter })).statusCode, 403);

    // the owner lost the right to run pipelines on the ref (no longer a member): the round creates none
    await ctx.c.db.kysely.deleteFrom('members').where('user_id', '=', users.developer.id).execute();
    const next = new Date(Date.parse(moved.next_run_at!) + 60_000);
    assert.equal(await ctx.c.ci.schedules.runDue(next), 1);
    assert.equal((await schedulePipelines(project.id)).length, 2);
    assert.ok(Date.parse((await rows(project.id))[0].next_run_at!) > next.getTime());
  });
});
