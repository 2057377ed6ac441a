// External commit statuses: POST /projects/:id/statuses/:sha and GET
// /projects/:id/repository/commits/:sha/statuses on a real repository, with GitLab's transitions,
// bodies and errors; each status is a generic job in a pipeline of source external.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { buildTestApp, EXTERNAL_URL, type TestApp } from '../../helpers/build-app.ts';
import { workTree } from '../../helpers/git.ts';

// one suite: the shared fixture of `before` lives from this file's first test to its last, also in a shard
describe('ci-statuses', () => {
  const json = (r: { body: string }) => JSON.parse(r.body);
  const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

  let ctx: TestApp;
  let s: Awaited<ReturnType<typeof setup>>;
  const hooks: (() => unknown)[] = [];

  /** A private group project: main (c1 → c2), a branch `other` (o1), a commit only a tag names (t1); one user per level. */
  async function setup(x: TestApp) {
    const { seed } = x;
    const g = await seed.group({ path: 'sgrp', name: 'SGrp' });
    const { project, dir } = await seed.repoProject({ namespace: g, path: 'app', name: 'App' });
    const wt = workTree({ after: () => {} }, dir);
    const c1 = wt.write('a', '1').commit('c1');
    const c2 = wt.write('a', '2').commit('c2');
    wt.checkout('other', true);
    const o1 = wt.write('b', '1').commit('o1');
    wt.push();
    wt.checkout('lonely', true);
    const t1 = wt.write('c', '1').commit('t1');
    wt.tag('only-tag');
    wt.push('refs/tags/only-tag');
    fs.rmSync(wt.dir, { recursive: true, force: true });
    const as: Record<string, Record<string, string>> = {};
    const users: Record<string, any> = {};
    for (const [name, level] of [
      ['guest', 10],
      ['reporter', 20],
      ['developer', 30],
    ] as const) {
      const u = await seed.user({ username: `s${name}`, name: name.toUpperCase() });
      await seed.member({ group: g }, u, level);
      users[name] = u;
      as[name] = (await seed.token(u)).headers;
    }
    as.stranger = (await seed.token(await seed.user())).headers;
    return { g, project, c1, c2, o1, t1, as, users };
  }

  before(async () => {
    ctx = await buildTestApp({ after: (fn: () => unknown) => void hooks.push(fn) });
    s = await setup(ctx);
  });
  after(async () => {
    for (const fn of hooks.reverse()) await fn();
  });

  const userRef = (u: any) => ({
    id: u.id,
    username: u.username,
    name: u.name,
    state: 'active',
    locked: false,
    avatar_url: null,
    web_url: `${EXTERNAL_URL}/${u.username}`,
  });

  function post(sha: string, body: Record<string, unknown>, headers = s.as.developer) {
    return ctx.app.inject({ method: 'POST', url: `/api/v4/projects/${s.project.id}/statuses/${sha}`, headers, payload: body });
  }
  function list(sha: string, query = '', headers = s.as.developer) {
    return ctx.app.inject({ method: 'GET', url: `/api/v4/projects/${s.project.id}/repository/commits/${sha}/statuses${query}`, headers });
  }

  test('a status goes pending → running → success on one generic job of an external pipeline; the pipeline follows', async () => {
    const { c } = ctx;
    let r = await post(s.c1, { state: 'pending', ref: 'main', name: 'lint', target_url: 'https://ci.example.com/1', description: 'queued' });
    assert.equal(r.statusCode, 201, r.body);
    const first = json(r);
    const pipeline = await c.db.kysely.selectFrom('ci_pipelines').selectAll().where('id', '=', first.pipeline_id).executeTakeFirstOrThrow();
    assert.deepEqual(
      { source: pipeline.source, ref: pipeline.ref, sha: pipeline.sha, tag: pipeline.tag, user_id: pipeline.user_id, project_id: pipeline.project_id },
      { source: 'external', ref: 'main', sha: s.c1, tag: 0, user_id: s.users.developer.id, project_id: s.project.id },
    );
    assert.match(first.created_at, ISO);
    assert.deepEqual(first, {
      id: first.id,
      sha: s.c1,
      ref: 'main',
      status: 'pending',
      name: 'lint',
      target_url: 'https://ci.example.com/1',
      description: 'queued',
      created_at: first.created_at,
      started_at: null,
      finished_at: null,
      allow_failure: false,
      coverage: null,
      pipeline_id: pipeline.id,
      author: userRef(s.users.developer),
    });
    const row = await c.db.kysely.selectFrom('ci_builds').selectAll().where('id', '=', first.id).executeTakeFirstOrThrow();
    assert.deepEqual(
      { type: row.type, stage: row.stage, stage_idx: row.stage_idx, retried: row.retried },
      { type: 'generic', stage: 'external', stage_idx: 1_000_000, retried: 0 },
    );
    assert.match(row.queued_at!, ISO);

    // the same name again updates that status
    r = await post(s.c1, { state: 'running', ref: 'main', name: 'lint', coverage: 12.5 });
    assert.equal(r.statusCode, 201, r.body);
    const running = json(r);
    assert.equal(running.id, first.id);
    assert.equal(running.status, 'running');
    assert.equal(running.coverage, 12.5);
    assert.equal(running.description, 'queued', 'attributes not given are kept');
    assert.match(running.started_at, ISO);

    // running again: the transition refused, with state_machines' message, and nothing changed
    r = await post(s.c1, { state: 'running', ref: 'main', name: 'lint', description: 'changed?' });
    assert.equal(r.statusCode, 400);
    assert.deepEqual(json(r), { message: 'Cannot transition status via :run from :running (Reason(s): Status cannot transition via "run")' });
    r = await post(s.c1, { state: 'pending', ref: 'main', name: 'lint' });
    assert.deepEqual(
      [r.statusCode, json(r)],
      [400, { message: 'Cannot transition status via :enqueue from :running (Reason(s): Status cannot transition via "enqueue")' }],
    );
    r = await post(s.c1, { state: 'skipped', ref: 'main', name: 'lint' });
    assert.deepEqual(
      [r.statusCode, json(r)],
      [400, { message: 'Cannot transition status via :skip from :running (Reason(s): Status cannot transition via "skip")' }],
    );
    const still = await c.db.kysely.selectFrom('ci_builds').selectAll().where('id', '=', first.id).executeTakeFirstOrThrow();
    assert.deepEqual([still.status, still.description], ['running', 'queued']);

    r = await post(s.c1, { state: 'success', ref: 'main', context: 'lint' });
    assert.equal(r.statusCode, 201, r.body);
    const done = json(r);
    assert.deepEqual([done.id, done.status, done.name], [first.id, 'success', 'lint']);
    assert.match(done.finished_at, ISO);

    // a finished status is not reopened: a new one, the old one no longer the latest
    r = await post(s.c1, { state: 'failed', ref: 'main', name: 'lint' });
    assert.equal(r.statusCode, 201, r.body);
    const again = json(r);
    assert.notEqual(again.id, first.id);
    assert.equal(again.pipeline_id, pipeline.id, 'the pipeline of that sha and ref is reused');
    assert.equal(again.status, 'failed');
    const failedRow = await c.db.kysely.selectFrom('ci_builds').selectAll().where('id', '=', again.id).executeTakeFirstOrThrow();
    assert.equal(failedRow.failure_reason, 'api_failure');
    const old = await c.db.kysely.selectFrom('ci_builds').select('retried').where('id', '=', first.id).executeTakeFirstOrThrow();
    assert.equal(old.retried, 1);

    r = await list(s.c1);
    assert.equal(r.statusCode, 200);
    assert.deepEqual(
      json(r).map((x: any) => [x.id, x.status]),
      [[again.id, 'failed']],
    );
    r = await list(s.c1, '?all=true');
    assert.deepEqual(
      json(r).map((x: any) => [x.id, x.status]),
      [
        [first.id, 'success'],
        [again.id, 'failed'],
      ],
    );
    assert.equal(r.headers['x-total'], '2');

    // the pipeline's status follows its jobs (processing by the pipelines service)
    const p2 = await c.db.kysely.selectFrom('ci_pipelines').select('status').where('id', '=', pipeline.id).executeTakeFirstOrThrow();
    assert.equal(p2.status, 'failed');
  });

  test('every state from a new status, context and default names, ref and pipeline choice', async () => {
    const { c } = ctx;
    const expect = { pending: 'pending', running: 'running', success: 'success', failed: 'failed', canceled: 'canceled', skipped: 'skipped' };
    for (const [state, status] of Object.entries(expect)) {
      const r = await post(s.o1, { state, name: `n-${state}` });
      assert.equal(r.statusCode, 201, r.body);
      const b = json(r);
      assert.equal(b.status, status);
      assert.equal(b.ref, 'other', 'without ref: the first branch containing the commit');
    }
    let r = await post(s.o1, { state: 'pending' });
    assert.equal(json(r).name, 'default');
    r = await post(s.o1, { state: 'pending', context: 'ctx', name: 'wins' });
    assert.equal(json(r).name, 'wins');
    const pipelines = await c.db.kysely.selectFrom('ci_pipelines').selectAll().where('sha', '=', s.o1).execute();
    assert.equal(pipelines.length, 1);

    // a ref of its own: another pipeline; pipeline_id picks one
    r = await post(s.o1, { state: 'pending', ref: 'feature-x', name: 'x' });
    const onFeature = json(r);
    assert.notEqual(onFeature.pipeline_id, pipelines[0]!.id);
    r = await post(s.o1, { state: 'success', name: 'y', pipeline_id: pipelines[0]!.id });
    assert.deepEqual([json(r).pipeline_id, json(r).ref], [pipelines[0]!.id, 'other']);
    r = await post(s.o1, { state: 'success', name: 'y', pipeline_id: 999999 });
    assert.deepEqual([r.statusCode, json(r)], [404, { message: '404 Pipeline for pipeline_id, sha and ref Not Found' }]);
    r = await post(s.o1, { state: 'success', name: 'y', pipeline_id: pipelines[0]!.id, ref: 'feature-x' });
    assert.deepEqual([r.statusCode, json(r)], [404, { message: '404 Pipeline for pipeline_id, sha and ref Not Found' }]);

    // a commit only a tag names has no branch: a ref is needed
    r = await post(s.t1, { state: 'success' });
    assert.deepEqual([r.statusCode, json(r)], [404, { message: '404 References for commit Not Found' }]);
    r = await post(s.t1, { state: 'success', ref: 'only-tag' });
    assert.equal(r.statusCode, 201, r.body);
    const tagPipeline = await c.db.kysely.selectFrom('ci_pipelines').selectAll().where('id', '=', json(r).pipeline_id).executeTakeFirstOrThrow();
    assert.equal(tagPipeline.tag, 1);

    // a branch name is a revision too: the commit it names
    r = await post('main', { state: 'pending', ref: 'main', name: 'by-branch' });
    assert.equal(r.statusCode, 201, r.body);
    assert.equal(json(r).sha, s.c2);
  });

  test('bad input: GitLab bodies, nothing written', async () => {
    const { c } = ctx;
    const before = await c.db.kysely.selectFrom('ci_builds').select(c.db.kysely.fn.countAll().as('n')).executeTakeFirstOrThrow();
    const cases: [Record<string, unknown>, string, number, unknown][] = [
      [{}, s.c2, 400, { error: 'state is missing' }],
      [{ state: 'error' }, s.c2, 400, { error: 'state does not have a valid value' }],
      [{ state: 'success', coverage: 'lots' }, s.c2, 400, { error: 'coverage is invalid' }],
      [{ state: 'success' }, 'f'.repeat(40), 404, { message: '404 Commit Not Found' }],
      [{ state: 'success' }, 'no-such-branch', 404, { message: '404 Commit Not Found' }],
      [{ state: 'success', target_url: 'ftp://x.example.com/' }, s.c2, 400, { message: { target_url: ['is blocked: Only allowed schemes are http, https'] } }],
      [{ state: 'success', target_url: 'not a url' }, s.c2, 400, { message: { target_url: ['must be a valid URL'] } }],
      [{ state: 'success', description: 'd'.repeat(256) }, s.c2, 400, { message: { description: ['is too long (maximum is 255 characters)'] } }],
    ];
    for (const [body, sha, status, expected] of cases) {
      const r = await post(sha, body);
      assert.deepEqual([r.statusCode, json(r)], [status, expected], JSON.stringify(body));
    }
    const afterCount = await c.db.kysely.selectFrom('ci_builds').select(c.db.kysely.fn.countAll().as('n')).executeTakeFirstOrThrow();
    assert.equal(Number(afterCount.n), Number(before.n));
    let r = await list(s.c2, '?order_by=name');
    assert.deepEqual([r.statusCode, json(r)], [400, { error: 'order_by does not have a valid value' }]);
    r = await list('f'.repeat(40));
    assert.deepEqual([r.statusCode, json(r)], [404, { message: '404 Commit Not Found' }]);
  });

  test('who may: Developer to post, Reporter to read, strangers see no project, anonymous 401', async () => {
    let r = await post(s.c2, { state: 'success', name: 'perm' }, s.as.reporter);
    assert.deepEqual([r.statusCode, json(r)], [403, { message: '403 Forbidden' }]);
    r = await post(s.c2, { state: 'success', name: 'perm' }, s.as.stranger);
    assert.deepEqual([r.statusCode, json(r)], [404, { message: '404 Project Not Found' }]);
    r = await ctx.app.inject({ method: 'POST', url: `/api/v4/projects/${s.project.id}/statuses/${s.c2}`, payload: { state: 'success' } });
    assert.deepEqual([r.statusCode, json(r)], [401, { message: '401 Unauthorized' }]);
    r = await post(s.c2, { state: 'success', name: 'perm' }, ctx.root);
    assert.equal(r.statusCode, 201);
    r = await list(s.c2, '', s.as.reporter);
    assert.equal(r.statusCode, 200);
    assert.ok(json(r).some((x: any) => x.name === 'perm'));
    r = await list(s.c2, '', s.as.guest);
    assert.deepEqual([r.statusCode, json(r)], [403, { message: '403 Forbidden' }]);
    r = await list(s.c2, '', s.as.stranger);
    assert.deepEqual([r.statusCode, json(r)], [404, { message: '404 Project Not Found' }]);
    r = await ctx.app.inject({ method: 'GET', url: `/api/v4/projects/${s.project.id}/repository/commits/${s.c2}/statuses` });
    assert.equal(r.statusCode, 401);
  });

  test('list filters, order and pagination; every job type of the commit is listed', async () => {
    const { c } = ctx;
    // c2 already has statuses from the other tests (by-branch, perm); add a pipeline job on another ref
    const a = json(await post(s.c2, { state: 'pending', ref: 'main', name: 'alpha' }));
    const b = json(await post(s.c2, { state: 'pending', ref: 'rel', name: 'beta' }));
    await c.db.kysely
      .insertInto('ci_builds')
      .values({
        project_id: s.project.id,
        pipeline_id: a.pipeline_id,
        type: 'build',
        name: 'compile',
        stage: 'build',
        status: 'success',
        ref: 'main',
        sha: s.c2,
        created_at: a.created_at,
        updated_at: a.created_at,
      })
      .execute();
    let r = await list(s.c2, '?name=alpha');
    assert.deepEqual(
      json(r).map((x: any) => x.id),
      [a.id],
    );
    r = await list(s.c2, '?ref=rel');
    assert.deepEqual(
      json(r).map((x: any) => x.id),
      [b.id],
    );
    r = await list(s.c2, '?stage=build');
    assert.deepEqual(
      json(r).map((x: any) => [x.name, x.status, x.target_url, x.author]),
      [['compile', 'success', null, null]],
    );
    r = await list(s.c2, `?pipeline_id=${b.pipeline_id}`);
    assert.deepEqual(
      json(r).map((x: any) => x.id),
      [b.id],
    );
    r = await list(s.c2, '?order_by=pipeline_id&sort=desc');
    const rows = json(r);
    assert.equal(rows[0].pipeline_id, b.pipeline_id);
    assert.ok(rows.every((x: any, i: number) => i === 0 || rows[i - 1].pipeline_id >= x.pipeline_id));
    r = await list(s.c2, '?sort=desc&per_page=2&page=1');
    assert.equal(json(r).length, 2);
    assert.equal(r.headers['x-per-page'], '2');
    assert.equal(r.headers['x-total'], String(rows.length));
    assert.ok(json(r)[0].id > json(r)[1].id);
    assert.match(String(r.headers.link), /rel="next"/);
  });
});
