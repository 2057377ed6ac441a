// Pipeline triggers: the tokens (Maintainers; the full token for its owner and the project's Owners, the
// first characters for other Maintainers), and POST /projects/:id/trigger/pipeline with a trigger token
// (source trigger, the variables as pipeline variables and TRIGGER_PAYLOAD) or a running job's token
// (source pipeline, within the target's job token scope); bad input answered as GitLab does, nothing written.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EXTERNAL_URL } from '../../helpers/build-app.ts';
import { ciProject, ONE_JOB_CI, seedPipeline, suiteApp } from '../../helpers/ci.ts';
import { runJob } from '../../helpers/ci-artifacts.ts';

describe('ci-triggers', () => {
  const json = (r: { body: string }) => JSON.parse(r.body);
  const ctx = suiteApp();
  let n = 0;

  /** A private project with a committed .service-ci.yml and one user per level. */
  function setup() {
    n++;
    return ciProject(ctx, {
      group: { path: `trg${n}`, name: `Trg${n}` },
      members: { developer: 30, maintainer: 40, maintainer2: 40, owner: 50 },
      username: (role) => `t${role}${n}`,
      ci: { file: '.service-ci.yml', content: ONE_JOB_CI, by: 'maintainer' },
    });
  }

  /** Entities::UserBasic of a user, as the API shows it. */
  async function userBasic(headers: Record<string, string>, userId: number) {
    const u = json(await ctx.app.inject({ method: 'GET', url: `/api/v4/users/${userId}`, headers }));
    return { id: u.id, username: u.username, name: u.name, state: 'active', locked: false, avatar_url: u.avatar_url, web_url: `${EXTERNAL_URL}/${u.username}` };
  }

  test('trigger tokens: Maintainers manage them; the token in full for its owner and Owners, its first characters for others', async () => {
    const { project, as, users, url } = await setup();
    const created = await ctx.app.inject({ method: 'POST', url: `${url}/triggers`, headers: as.maintainer, payload: { description: 'deploy' } });
    assert.equal(created.statusCode, 201, created.body);
    const body = json(created);
    assert.match(body.token, /^glptt-[0-9a-f]{40}$/);
    const row = await ctx.c.db.kysely.selectFrom('ci_triggers').selectAll().where('project_id', '=', project.id).executeTakeFirstOrThrow();
    // stored sealed and as a digest, never in clear
    assert.notEqual(row.token_sealed, body.token);
    assert.ok(!row.token_sealed.includes(body.token.slice(6)));
    const full = {
      id: row.id,
      token: body.token,
      description: 'deploy',
      created_at: row.created_at,
      updated_at: row.updated_at,
      last_used: null,
      expires_at: null,
      owner: await userBasic(as.maintainer, users.maintainer.id),
    };
    assert.deepEqual(body, full);
    // its owner and the project's Owner read it in full; another Maintainer sees four characters
    for (const who of ['maintainer', 'owner'] as const) {
      const r = await ctx.app.inject({ method: 'GET', url: `${url}/triggers`, headers: as[who] });
      assert.equal(r.statusCode, 200);
      assert.deepEqual(json(r), [full], who);
    }
    const other = await ctx.app.inject({ method: 'GET', url: `${url}/triggers/${row.id}`, headers: as.maintainer2 });
    assert.deepEqual(json(other), { ...full, token: body.token.slice(6, 10) });
    // Developers: 403; strangers: the project is not found; nobody signed in: 401
    assert.deepEqual(json(await ctx.app.inject({ method: 'GET', url: `${url}/triggers`, headers: as.developer })), { message: '403 Forbidden' });
    const create403 = await ctx.app.inject({ method: 'POST', url: `${url}/triggers`, headers: as.developer, payload: { description: 'x' } });
    assert.equal(create403.statusCode, 403);
    const stranger = (await ctx.seed.token(await ctx.seed.user())).headers;
    const nf = await ctx.app.inject({ method: 'POST', url: `${url}/triggers`, headers: stranger, payload: { description: 'x' } });
    assert.equal(nf.statusCode, 404);
    assert.deepEqual(json(nf), { message: '404 Project Not Found' });
    assert.equal((await ctx.app.inject({ method: 'GET', url: `${url}/triggers` })).statusCode, 401);
    // bad input
    const missing = await ctx.app.inject({ method: 'POST', url: `${url}/triggers`, headers: as.maintainer, payload: {} });
    assert.equal(missing.statusCode, 400);
    assert.deepEqual(json(missing), { error: 'description is missing' });
    const unknown = await ctx.app.inject({ method: 'GET', url: `${url}/triggers/999999`, headers: as.maintainer });
    assert.equal(unknown.statusCode, 404);
    assert.deepEqual(json(unknown), { message: '404 Not found' });
    // update: only who may administer the trigger (403 with GitLab's message), the owner may
    const denied = await ctx.app.inject({ method: 'PUT', url: `${url}/triggers/${row.id}`, headers: as.maintainer2, payload: { description: 'mine' } });
    assert.equal(denied.statusCode, 403);
    assert.deepEqual(json(denied), { message: '403 Forbidden - The current user is not authorized to manage the pipeline trigger token' });
    const updated = await ctx.app.inject({ method: 'PUT', url: `${url}/triggers/${row.id}`, headers: as.maintainer, payload: { description: 'release' } });
    assert.equal(updated.statusCode, 200);
    assert.equal(json(updated).description, 'release');
    assert.equal(json(updated).token, body.token);
    // delete: 204, the row is gone; only 4 triggers rows remained untouched elsewhere
    assert.equal((await ctx.app.inject({ method: 'DELETE', url: `${url}/triggers/${row.id}`, headers: as.developer })).statusCode, 403);
    const del = await ctx.app.inject({ method: 'DELETE', url: `${url}/triggers/${row.id}`, headers: as.maintainer2 });
    assert.equal(del.statusCode, 204);
    assert.equal((await ctx.c.db.kysely.selectFrom('ci_triggers').select('id').where('project_id', '=', project.id).execute()).length, 0);
  });

  test('a trigger token creates a trigger pipeline as its owner, with the variables (JSON, form, the legacy path)', async () => {
    const { project, as, users, url } = await setup();
    const token = json(await ctx.app.inject({ method: 'POST', url: `${url}/triggers`, headers: as.maintainer, payload: { description: 'ci' } })).token;
    const r = await ctx.app.inject({
      method: 'POST',
      url: `${url}/trigger/pipeline`,
      payload: { token, ref: 'main', variables: { DEPLOY: 'yes', TARGET: 'prod' } },
    });
    assert.equal(r.statusCode, 201, r.body);
    const created = json(r);
    const shown = json(await ctx.app.inject({ method: 'GET', url: `${url}/pipelines/${created.id}`, headers: as.maintainer }));
    const { name: _name, ...withoutName } = shown;
    assert.deepEqual(created, withoutName);
    assert.equal(created.source, 'trigger');
    assert.equal(created.user.id, users.maintainer.id);
    const row = await ctx.c.db.kysely.selectFrom('ci_pipelines').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    const trigger = await ctx.c.db.kysely.selectFrom('ci_triggers').selectAll().where('project_id', '=', project.id).executeTakeFirstOrThrow();
    assert.equal(row.trigger_id, trigger.id);
    assert.equal(trigger.last_used, row.created_at);
    assert.deepEqual(JSON.parse(row.variables), [
      { key: 'DEPLOY', value: 'yes', variable_type: 'env_var' },
      { key: 'TARGET', value: 'prod', variable_type: 'env_var' },
      {
        key: 'TRIGGER_PAYLOAD',
        value: JSON.stringify({ ref: 'main', variables: { DEPLOY: 'yes', TARGET: 'prod' }, id: String(project.id) }),
        variable_type: 'file',
      },
    ]);
    const vars = json(await ctx.app.inject({ method: 'GET', url: `${url}/pipelines/${created.id}/variables`, headers: as.maintainer }));
    assert.deepEqual(
      vars.map((v: { key: string; variable_type: string }) => [v.key, v.variable_type]),
      [
        ['DEPLOY', 'env_var'],
        ['TARGET', 'env_var'],
        ['TRIGGER_PAYLOAD', 'file'],
      ],
    );

    // form encoded, variables[KEY]=value
    const form = await ctx.app.inject({
      method: 'POST',
      url: `${url}/trigger/pipeline`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `token=${token}&ref=main&variables[COLOR]=blue`,
    });
    assert.equal(form.statusCode, 201, form.body);
    const formRow = await ctx.c.db.kysely.selectFrom('ci_pipelines').selectAll().where('id', '=', json(form).id).executeTakeFirstOrThrow();
    assert.deepEqual(JSON.parse(formRow.variables)[0], { key: 'COLOR', value: 'blue', variable_type: 'env_var' });

    // the webhook form: the ref in the path, the token in the query
    const legacy = await ctx.app.inject({ method: 'POST', url: `${url}/ref/main/trigger/pipeline?token=${token}` });
    assert.equal(legacy.statusCode, 201, legacy.body);
    assert.equal(json(legacy).ref, 'main');
    assert.equal(json(legacy).source, 'trigger');
  });

  test('bad input: GitLab bodies, no pipeline written', async () => {
    const { project, as, url } = await setup();
    const other = await setup();
    const token = json(await ctx.app.inject({ method: 'POST', url: `${url}/triggers`, headers: as.maintainer, payload: { description: 'ci' } })).token;
    const otherToken = json(
      await ctx.app.inject({ method: 'POST', url: `${other.url}/triggers`, headers: other.as.maintainer, payload: { description: 'ci' } }),
    ).token;
    const count = async () =>
      (await ctx.c.db.kysely.selectFrom('ci_pipelines').select('id').where('project_id', '=', project.id).where('source', '!=', 'push').execute()).length;
    const post = (payload: unknown, headers: Record<string, string> = {}, at = url) =>
      ctx.app.inject({ method: 'POST', url: `${at}/trigger/pipeline`, headers, payload: payload as object });
    const cases: [unknown, number, unknown, Record<string, string>?, string?][] = [
      [{ ref: 'main' }, 400, { error: 'token is missing' }],
      [{}, 400, { error: 'ref is missing, token is missing' }],
      [{ token, ref: '' }, 400, { error: 'ref is empty' }],
      [{ token: 'glptt-nope', ref: 'main' }, 404, { message: '404 Not Found' }],
      // another project's token: not found, nothing said about either project
      [{ token: otherToken, ref: 'main' }, 404, { message: '404 Not Found' }],
      [{ token, ref: 'no-such-branch' }, 400, { message: { base: ['Reference not found'] } }],
      [{ token, ref: 'main', variables: { N: 1 } }, 400, { message: 'variables needs to be a map of key-valued strings' }],
      [{ token, ref: 'main', variables: ['x'] }, 400, { error: 'variables is invalid' }],
      [{ token, ref: 'main' }, 403, { message: '403 Forbidden' }, { 'x-gitlab-event': 'Pipeline Hook' }],
      [{ token, ref: 'main' }, 404, { message: '404 Not Found' }, {}, '/api/v4/projects/999999'],
    ];
    for (const [payload, status, body, headers, at] of cases) {
      const r = await post(payload, headers, at);
      assert.equal(r.statusCode, status, `${JSON.stringify(payload)}: ${r.body}`);
      assert.deepEqual(json(r), body, JSON.stringify(payload));
    }
    assert.equal(await count(), 0);
    assert.equal(
      (await ctx.c.db.kysely.selectFrom('ci_triggers').select('last_used').where('project_id', '=', project.id).executeTakeFirstOrThrow()).last_used,
      null,
    );
  });

  test("a running job's token creates a multi-project pipeline (source pipeline) only within the target's job token scope", async () => {
    const a = await setup();
    const b = await setup();
    // the job's user may run pipelines on main of both projects (a protected branch: Maintainers)
    await ctx.seed.member({ group: b.g }, a.users.maintainer, 40);
    // who edits b's allowlist must see a
    await ctx.seed.member({ group: a.g }, b.users.maintainer, 10);
    const { jobs } = await seedPipeline(ctx.c, a.project, { user_id: a.users.maintainer.id }, [{ name: 'deploy' }]);
    const jobToken = await runJob(ctx.c, jobs[0]!);
    const trigger = () => ctx.app.inject({ method: 'POST', url: `${b.url}/trigger/pipeline`, payload: { token: jobToken, ref: 'main' } });
    // b is new, so its inbound scope is on and a is not on its allowlist
    const refused = await trigger();
    assert.equal(refused.statusCode, 404);
    assert.deepEqual(json(refused), { message: '404 Not Found' });
    const allow = await ctx.app.inject({
      method: 'POST',
      url: `${b.url}/job_token_scope/allowlist`,
      headers: b.as.maintainer,
      payload: { target_project_id: a.project.id },
    });
    assert.equal(allow.statusCode, 201, allow.body);
    const ok = await trigger();
    assert.equal(ok.statusCode, 201, ok.body);
    assert.equal(json(ok).source, 'pipeline');
    assert.equal(json(ok).user.id, a.users.maintainer.id);
    const row = await ctx.c.db.kysely.selectFrom('ci_pipelines').selectAll().where('id', '=', json(ok).id).executeTakeFirstOrThrow();
    assert.equal(row.project_id, b.project.id);
    assert.equal(row.trigger_id, null);
  });
});
