// The CI/CD job token scope: GET/PATCH /projects/:id/job_token_scope (Maintainers; on for new projects), the
// project and group allowlists with GitLab's errors, and what it does: a running job's token reaches another
// project's job-token endpoints only when that project's inbound scope is off or lets the job's project in
// (itself, a listed project, a project under a listed group).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EXTERNAL_URL } from '../../helpers/build-app.ts';
import { ciProject, seedPipeline, suiteApp } from '../../helpers/ci.ts';
import { finishJob, runJob } from '../../helpers/ci-artifacts.ts';

describe('ci-job-token-scope', () => {
  const json = (r: { body: string }) => JSON.parse(r.body);
  const ctx = suiteApp();
  let n = 0;

  /** A project of its own group (no repository) with a Maintainer and a Developer. */
  async function setup() {
    n++;
    const p = await ciProject(ctx, {
      group: { path: `jts${n}`, name: `Jts${n}` },
      project: { path: 'target', name: 'Target', repo: false },
      members: { maintainer: 40, developer: 30 },
      username: (role) => `j${role[0]}${n}`,
    });
    return { g: p.g, project: p.project, maintainer: p.as.maintainer, developer: p.as.developer, users: p.users, url: `${p.url}/job_token_scope` };
  }

  test('settings and allowlists: bodies, statuses, rows; GitLab errors', async () => {
    const t = await setup();
    const other = await ctx.seed.group({ path: `jtsother${n}` });
    const source = await ctx.seed.project({ namespace: other, path: 'src', name: 'Src' });
    await ctx.seed.member({ group: other }, t.users.maintainer, 10);
    await ctx.seed.member({ group: other }, t.users.developer, 10);

    // a new project restricts inbound job tokens; an old one (migrated) keeps its row at off
    assert.deepEqual(json(await ctx.app.inject({ method: 'GET', url: t.url, headers: t.maintainer })), { inbound_enabled: true, outbound_enabled: false });
    const off = await ctx.app.inject({ method: 'PATCH', url: t.url, headers: t.maintainer, payload: { enabled: false } });
    assert.equal(off.statusCode, 204);
    assert.deepEqual(json(await ctx.app.inject({ method: 'GET', url: t.url, headers: t.maintainer })), { inbound_enabled: false, outbound_enabled: false });
    const settings = await ctx.c.db.kysely.selectFrom('project_ci_cd_settings').selectAll().where('project_id', '=', t.project.id).execute();
    assert.deepEqual(settings, [{ project_id: t.project.id, inbound_job_token_scope_enabled: 0 }]);
    assert.equal((await ctx.app.inject({ method: 'PATCH', url: t.url, headers: t.maintainer, payload: { enabled: true } })).statusCode, 204);
    assert.deepEqual(json(await ctx.app.inject({ method: 'PATCH', url: t.url, headers: t.maintainer, payload: {} })), { error: 'enabled is missing' });
    assert.deepEqual(json(await ctx.app.inject({ method: 'PATCH', url: t.url, headers: t.maintainer, payload: { enabled: 'maybe' } })), {
      error: 'enabled is invalid',
    });
    // Developers 403, strangers 404, nobody 401
    assert.deepEqual(json(await ctx.app.inject({ method: 'GET', url: t.url, headers: t.developer })), { message: '403 Forbidden' });
    assert.equal((await ctx.app.inject({ method: 'PATCH', url: t.url, headers: t.developer, payload: { enabled: false } })).statusCode, 403);
    const stranger = (await ctx.seed.token(await ctx.seed.user())).headers;
    assert.deepEqual(json(await ctx.app.inject({ method: 'GET', url: t.url, headers: stranger })), { message: '404 Project Not Found' });
    assert.equal((await ctx.app.inject({ method: 'GET', url: t.url })).statusCode, 401);

    // the project allowlist
    const add = await ctx.app.inject({ method: 'POST', url: `${t.url}/allowlist`, headers: t.maintainer, payload: { target_project_id: source.id } });
    assert.equal(add.statusCode, 201, add.body);
    assert.deepEqual(json(add), { source_project_id: t.project.id, target_project_id: source.id });
    const errors: [Record<string, unknown>, number, unknown][] = [
      [{ target_project_id: source.id }, 400, { message: '400 Bad request - Target project is already in the job token scope' }],
      [{ target_project_id: t.project.id }, 400, { message: "400 Bad request - Validation failed: Target project can't be the same as the source project" }],
      [{ target_project_id: 999999 }, 404, { message: '404 target_project_id not found Not Found' }],
      [{}, 400, { error: 'target_project_id is missing' }],
    ];
    for (const [payload, status, body] of errors) {
      const r = await ctx.app.inject({ method: 'POST', url: `${t.url}/allowlist`, headers: t.maintainer, payload });
      assert.equal(r.statusCode, status, JSON.stringify(payload));
      assert.deepEqual(json(r), body);
    }
    // a project the caller may not see
    const hiddenGroup = await ctx.seed.group({ path: `jtshidden${n}` });
    const hidden = await ctx.seed.project({ namespace: hiddenGroup, path: 'h', name: 'H' });
    assert.deepEqual(
      json(await ctx.app.inject({ method: 'POST', url: `${t.url}/allowlist`, headers: t.maintainer, payload: { target_project_id: hidden.id } })),
      {
        message: "400 Bad request - The target_project that you are attempting to access does not exist or you don't have permission to perform this action",
      },
    );
    const listed = json(await ctx.app.inject({ method: 'GET', url: `${t.url}/allowlist`, headers: t.maintainer }));
    assert.deepEqual(
      listed.map((p: { id: number; path_with_namespace: string; web_url: string }) => [p.id, p.path_with_namespace, p.web_url]),
      [[source.id, `jtsother${n}/src`, `${EXTERNAL_URL}/jtsother${n}/src`]],
    );
    const links = await ctx.c.db.kysely.selectFrom('ci_job_token_project_scope_links').selectAll().where('source_project_id', '=', t.project.id).execute();
    assert.deepEqual(
      links.map((l) => [l.target_project_id, l.direction, l.added_by_id]),
      [[source.id, 'inbound', t.users.maintainer.id]],
    );
    assert.deepEqual(json(await ctx.app.inject({ method: 'DELETE', url: `${t.url}/allowlist/${source.id}`, headers: t.developer })), {
      message: '403 Forbidden - Insufficient permissions to modify the job token scope',
    });
    assert.equal((await ctx.app.inject({ method: 'DELETE', url: `${t.url}/allowlist/${source.id}`, headers: t.maintainer })).statusCode, 204);
    assert.deepEqual(json(await ctx.app.inject({ method: 'DELETE', url: `${t.url}/allowlist/${source.id}`, headers: t.maintainer })), {
      message: '400 Bad request - Target project is not in the job token scope',
    });
    assert.deepEqual(json(await ctx.app.inject({ method: 'DELETE', url: `${t.url}/allowlist/999999`, headers: t.maintainer })), {
      message: '404 Project Not Found',
    });

    // the group allowlist
    const gadd = await ctx.app.inject({ method: 'POST', url: `${t.url}/groups_allowlist`, headers: t.maintainer, payload: { target_group_id: other.id } });
    assert.equal(gadd.statusCode, 201, gadd.body);
    assert.deepEqual(json(gadd), { source_project_id: t.project.id, target_group_id: other.id });
    assert.deepEqual(
      json(await ctx.app.inject({ method: 'POST', url: `${t.url}/groups_allowlist`, headers: t.maintainer, payload: { target_group_id: other.id } })),
      {
        message: '400 Bad request - Target group is already in the job token scope',
      },
    );
    assert.deepEqual(
      json(await ctx.app.inject({ method: 'POST', url: `${t.url}/groups_allowlist`, headers: t.maintainer, payload: { target_group_id: 999999 } })),
      {
        message: '404 target_group_id not found Not Found',
      },
    );
    assert.deepEqual(json(await ctx.app.inject({ method: 'GET', url: `${t.url}/groups_allowlist`, headers: t.maintainer })), [
      { id: other.id, web_url: `${EXTERNAL_URL}/groups/${other.full_path}`, name: other.name },
    ]);
    assert.equal((await ctx.app.inject({ method: 'DELETE', url: `${t.url}/groups_allowlist/${other.id}`, headers: t.maintainer })).statusCode, 204);
    assert.deepEqual(json(await ctx.app.inject({ method: 'DELETE', url: `${t.url}/groups_allowlist/${other.id}`, headers: t.maintainer })), {
      message: '400 Bad request - Target group is not in the job token scope',
    });
    assert.deepEqual(
      await ctx.c.db.kysely.selectFrom('ci_job_token_group_scope_links').selectAll().where('source_project_id', '=', t.project.id).execute(),
      [],
    );
  });

  test("enforcement: another project's job token is refused unless the scope is off or lets its project in", async () => {
    const t = await setup();
    const og = await ctx.seed.group({ path: `jtsorigin${n}` });
    const sub = await ctx.seed.group({ path: 'sub', parent: og });
    const origin = await ctx.seed.project({ namespace: sub, path: 'origin', name: 'Origin' });
    // the job's user reads both projects
    await ctx.seed.member({ group: og }, t.users.developer, 30);
    // who edits the allowlist sees what it lists
    await ctx.seed.member({ group: og }, t.users.maintainer, 10);
    const { pipeline: own, jobs } = await seedPipeline(ctx.c, origin, { user_id: t.users.developer.id }, [{ name: 'job' }]);
    const { pipeline: theirs } = await seedPipeline(ctx.c, t.project, {}, [{ name: 'build' }]);
    const token = await runJob(ctx.c, jobs[0]!);
    // a pipeline's jobs: an endpoint that takes job tokens
    const list = (projectId: number) =>
      ctx.app.inject({
        method: 'GET',
        url: `/api/v4/projects/${projectId}/pipelines/${projectId === origin.id ? own.id : theirs.id}/jobs`,
        headers: { 'job-token': token },
      });
    // its own project: always
    const mine = await list(origin.id);
    assert.equal(mine.statusCode, 200, mine.body);
    // the target restricts inbound tokens (a new project): the project is not found for the job
    const refused = await list(t.project.id);
    assert.equal(refused.statusCode, 404);
    assert.deepEqual(json(refused), { message: '404 Project Not Found' });
    // the user's own token still works: the scope binds job tokens only
    assert.equal(
      (await ctx.app.inject({ method: 'GET', url: `/api/v4/projects/${t.project.id}/pipelines/${theirs.id}/jobs`, headers: t.developer })).statusCode,
      200,
    );
    // a listed project
    const added = await ctx.app.inject({ method: 'POST', url: `${t.url}/allowlist`, headers: t.maintainer, payload: { target_project_id: origin.id } });
    assert.equal(added.statusCode, 201, added.body);
    assert.equal((await list(t.project.id)).statusCode, 200);
    await ctx.app.inject({ method: 'DELETE', url: `${t.url}/allowlist/${origin.id}`, headers: t.maintainer });
    assert.equal((await list(t.project.id)).statusCode, 404);
    // a listed ancestor group of the job's project
    const g = await ctx.app.inject({ method: 'POST', url: `${t.url}/groups_allowlist`, headers: t.maintainer, payload: { target_group_id: og.id } });
    assert.equal(g.statusCode, 201, g.body);
    assert.equal((await list(t.project.id)).statusCode, 200);
    await ctx.app.inject({ method: 'DELETE', url: `${t.url}/groups_allowlist/${og.id}`, headers: t.maintainer });
    assert.equal((await list(t.project.id)).statusCode, 404);
    // the scope off: any job token of a user who may read the project
    await ctx.app.inject({ method: 'PATCH', url: t.url, headers: t.maintainer, payload: { enabled: false } });
    assert.equal((await list(t.project.id)).statusCode, 200);
    await finishJob(ctx.c, jobs[0]!);
    assert.equal((await list(t.project.id)).statusCode, 401);
  });
});
