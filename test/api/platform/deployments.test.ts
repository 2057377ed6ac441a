// Environments and deployments: /projects/:id/environments and /projects/:id/deployments with real
// commits; a successful deployment links the merge requests merged into what it deployed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { buildTestApp, EXTERNAL_URL, type TestApp } from '../../helpers/build-app.ts';
import { workTree } from '../../helpers/git.ts';
import { environmentSlug, guessTier, linkMergeRequests } from '../../../src/domain/deployments/deployments.service.ts';
import { expectedProject, groupNs } from '../../helpers/projects-expect.ts';

const json = (r: { body: string }) => JSON.parse(r.body);
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** A private group project with main (c1 → c2 → c3), a branch `other`, a tag v1 on c2, and one user per level. */
async function setup(ctx: TestApp) {
  const { seed } = ctx;
  const g = await seed.group({ path: 'grp', name: 'Grp' });
  const { project, dir } = await seed.repoProject({ namespace: g, path: 'app', name: 'App' });
  const wt = workTree({ after: () => {} }, dir);
  const c1 = wt.write('a', '1').commit('c1');
  const c2 = wt.write('a', '2').commit('c2');
  wt.tag('v1');
  const c3 = wt.write('a', '3').commit('c3');
  wt.checkout('other', true);
  const o1 = wt.write('b', '1').commit('o1');
  wt.push();
  fs.rmSync(wt.dir, { recursive: true, force: true });
  const as: Record<string, Record<string, string>> = {};
  const users: Record<string, any> = {};
  for (const [name, level] of [
    ['guest', 10],
    ['reporter', 20],
    ['developer', 30],
    ['maintainer', 40],
  ] as const) {
    const u = await seed.user({ username: name, name: name.toUpperCase() });
    await seed.member({ group: g }, u, level);
    users[name] = u;
    as[name] = (await seed.token(u)).headers;
  }
  as.stranger = (await seed.token(await seed.user())).headers;
  return { g, project, dir, c1, c2, c3, o1, as, users };
}

const userRef = (u: any) => ({
  id: u.id,
  username: u.username,
  name: u.name,
  state: 'active',
  locked: false,
  avatar_url: null,
  web_url: `${EXTERNAL_URL}/${u.username}`,
});

test('environment slugs and tiers as GitLab makes them', () => {
  assert.equal(environmentSlug('production'), 'production');
  assert.equal(environmentSlug('review/feature-1'), 'review-feature-1-' + environmentSlug('review/feature-1').slice(-6));
  assert.match(environmentSlug('review/feature-1'), /^review-feature-1-[a-z0-9]{6}$/);
  assert.equal(environmentSlug('review/feature-1'), environmentSlug('review/feature-1'));
  assert.match(environmentSlug('1-prod'), /^env-1-prod-[a-z0-9]{6}$/);
  assert.match(environmentSlug('a-very-long-environment-name-indeed'), /^a-very-long-envir-[a-z0-9]{6}$/);
  assert.deepEqual(['production', 'prd', 'live', 'staging', 'pre-prod', 'test', 'qa', 'dev', 'review/x', 'other', 'canary'].map(guessTier), [
    'production',
    'production',
    'production',
    'staging',
    'staging',
    'testing',
    'testing',
    'development',
    'development',
    'other',
    'other',
  ]);
});

test('environments: create, list, get, update, stop, delete with GitLab bodies and errors', async (t) => {
  const ctx = await buildTestApp(t);
  const { app, c } = ctx;
  const s = await setup(ctx);
  const url = `/api/v4/projects/${s.project.id}/environments`;
  const post = (payload: unknown, h = s.as.developer) => app.inject({ method: 'POST', url, headers: h, payload: payload as object });

  const res = await post({ name: 'production', external_url: 'https://app.example.com' });
  assert.equal(res.statusCode, 201, res.body);
  const env = json(res);
  const row = await c.db.kysely.selectFrom('environments').selectAll().where('id', '=', env.id).executeTakeFirstOrThrow();
  const project = expectedProject(s.project, { namespace: groupNs(s.g), namespaceFullName: 'Grp', shape: 'basic' });
  assert.deepEqual(env, {
    id: row.id,
    name: 'production',
    slug: 'production',
    external_url: 'https://app.example.com',
    created_at: row.created_at,
    updated_at: row.updated_at,
    tier: 'production',
    project,
    state: 'available',
    auto_stop_at: null,
    description: null,
    auto_stop_setting: 'always',
  });
  assert.match(row.created_at, ISO);
  const review = json(await post({ name: 'review/feature-1', tier: 'staging' }));
  assert.deepEqual([review.slug, review.tier, review.external_url], [environmentSlug('review/feature-1'), 'staging', null]);

  // bad inputs
  const expect = async (r: any, status: number, body: unknown) => {
    const got = await r;
    assert.deepEqual([got.statusCode, json(got)], [status, body]);
  };
  await expect(post({ name: 'production' }), 400, { message: { name: ['has already been taken'] } });
  await expect(post({}), 400, { error: 'name is missing' });
  await expect(post({ name: 'x', tier: 'mars' }), 400, { error: 'tier does not have a valid value' });
  await expect(post({ name: 'x', slug: 'y' }), 400, { error: 'slug is automatically generated and cannot be changed' });
  await expect(post({ name: '/bad' }), 400, {
    message: { name: ["can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', and spaces, but it cannot start or end with '/'"] },
  });
  await expect(post({ name: 'ok', external_url: 'ftp://x' }), 400, { message: { external_url: ['is blocked: Only allowed schemes are http, https'] } });
  await expect(post({ name: 'x' }, s.as.reporter), 403, { message: '403 Forbidden' });
  await expect(post({ name: 'x' }, s.as.stranger), 404, { message: '404 Project Not Found' });
  await expect(app.inject({ method: 'POST', url, payload: { name: 'x' } }), 401, { message: '401 Unauthorized' });

  // list: reporters read; filters; pages
  const list = await app.inject({ url, headers: s.as.reporter });
  assert.equal(list.statusCode, 200);
  assert.deepEqual(
    json(list).map((e: any) => e.name),
    ['production', 'review/feature-1'],
  );
  assert.equal(list.headers['x-total'], '2');
  assert.deepEqual(
    json(await app.inject({ url: `${url}?name=production`, headers: s.as.reporter })).map((e: any) => e.id),
    [env.id],
  );
  assert.deepEqual(
    json(await app.inject({ url: `${url}?search=feat`, headers: s.as.reporter })).map((e: any) => e.id),
    [review.id],
  );
  await expect(app.inject({ url: `${url}?search=fe`, headers: s.as.reporter }), 400, { message: '400 Bad request - Search query is less than 3 characters' });
  await expect(app.inject({ url: `${url}?name=a&search=abc`, headers: s.as.reporter }), 400, { error: 'name, search cannot be used together' });
  await expect(app.inject({ url: `${url}?states=gone`, headers: s.as.reporter }), 400, { error: 'states does not have a valid value' });
  await expect(app.inject({ url, headers: s.as.guest }), 403, { message: '403 Forbidden' });

  // get: last_deployment instead of project
  const one = json(await app.inject({ url: `${url}/${env.id}`, headers: s.as.reporter }));
  const { project: _p, ...rest } = env;
  assert.deepEqual(one, { ...rest, last_deployment: null });
  await expect(app.inject({ url: `${url}/999999`, headers: s.as.reporter }), 404, { message: '404 Environment Not Found' });

  // update
  const put = (id: number, payload: unknown, h = s.as.developer) => app.inject({ method: 'PUT', url: `${url}/${id}`, headers: h, payload: payload as object });
  const upd = await put(review.id, { external_url: 'https://review.example.com', tier: 'development' });
  assert.equal(upd.statusCode, 200, upd.body);
  assert.deepEqual([json(upd).external_url, json(upd).tier, json(upd).slug], ['https://review.example.com', 'development', review.slug]);
  await expect(put(review.id, { name: 'production' }), 400, { message: { name: ['has already been taken'] } });
  await expect(put(review.id, { slug: 'x' }), 400, { error: 'slug is automatically generated and cannot be changed' });
  await expect(put(review.id, { tier: 'x' }), 400, { error: 'tier does not have a valid value' });
  await expect(put(review.id, { tier: 'other' }, s.as.reporter), 403, { message: '403 Forbidden' });

  // delete only once stopped; stop
  const del = (id: number, h = s.as.developer) => app.inject({ method: 'DELETE', url: `${url}/${id}`, headers: h });
  await expect(del(review.id), 403, { message: '403 Forbidden' });
  const stop = await app.inject({ method: 'POST', url: `${url}/${review.id}/stop`, headers: s.as.developer });
  assert.equal(stop.statusCode, 200, stop.body);
  assert.equal(json(stop).state, 'stopped');
  await expect(app.inject({ method: 'POST', url: `${url}/${review.id}/stop`, headers: s.as.reporter }), 403, { message: '403 Forbidden' });
  await expect(del(review.id, s.as.reporter), 403, { message: '403 Forbidden' });
  const gone = await del(review.id);
  assert.equal(gone.statusCode, 204);
  assert.equal(gone.body, '');
  await expect(del(review.id), 404, { message: '404 Environment Not Found' });
  assert.deepEqual(json(await app.inject({ url: `${url}?states=stopped`, headers: s.as.reporter })), []);
});

test('deployments: create with real commits, list with GitLab orders and filters, status moves, delete rules', async (t) => {
  const ctx = await buildTestApp(t);
  const { app, c } = ctx;
  const s = await setup(ctx);
  const url = `/api/v4/projects/${s.project.id}/deployments`;
  const post = (payload: Record<string, unknown>, h = s.as.developer) => app.inject({ method: 'POST', url, headers: h, payload });
  const expect = async (r: any, status: number, body: unknown) => {
    const got = await r;
    assert.deepEqual([got.statusCode, json(got)], [status, body]);
  };

  const res = await post({ environment: 'staging', sha: s.c2, ref: 'main', tag: false, status: 'running' });
  assert.equal(res.statusCode, 201, res.body);
  const d1 = json(res);
  const env = await c.db.kysely.selectFrom('environments').selectAll().where('name', '=', 'staging').executeTakeFirstOrThrow();
  const row1 = await c.db.kysely.selectFrom('deployments').selectAll().where('id', '=', d1.id).executeTakeFirstOrThrow();
  assert.deepEqual(d1, {
    id: row1.id,
    iid: 1,
    ref: 'main',
    sha: s.c2,
    created_at: row1.created_at,
    updated_at: row1.updated_at,
    user: userRef(s.users.developer),
    environment: { id: env.id, name: 'staging', slug: 'staging', external_url: null, created_at: env.created_at, updated_at: env.updated_at },
    deployable: null,
    status: 'running',
  });
  assert.equal(row1.finished_at, null);
  assert.equal(env.tier, 'staging');
  // a short SHA names the commit; a tag ref
  const d2 = json(await post({ environment: 'staging', sha: s.c2.slice(0, 8), ref: 'v1', tag: true, status: 'success' }));
  assert.deepEqual([d2.iid, d2.sha, d2.ref, d2.status], [2, s.c2, 'v1', 'success']);
  const d3 = json(await post({ environment: 'production', sha: s.o1, ref: 'other', tag: false, status: 'failed' }));
  assert.equal(d3.iid, 3);

  // bad inputs
  await expect(post({ environment: 'staging', sha: '0'.repeat(40), ref: 'nope', tag: false, status: 'success' }), 400, {
    message: { sha: ['The commit does not exist'], ref: ['The branch or tag does not exist'] },
  });
  await expect(post({ environment: 'staging', sha: s.c1, ref: 'main', tag: true, status: 'success' }), 400, {
    message: { ref: ['The branch or tag does not exist'] },
  });
  await expect(post({ environment: 'staging', sha: '--all', ref: 'main', tag: false, status: 'success' }), 400, {
    message: { sha: ['The commit does not exist'] },
  });
  await expect(post({ environment: 'staging', sha: s.c1, ref: 'main', tag: false, status: 'done' }), 400, { error: 'status does not have a valid value' });
  await expect(post({ environment: 'staging', sha: s.c1, ref: 'main', status: 'success' }), 400, { error: 'tag is missing' });
  await expect(post({ environment: '/x', sha: s.c1, ref: 'main', tag: false, status: 'success' }), 400, {
    message: { 'environment.name': ["can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', and spaces, but it cannot start or end with '/'"] },
  });
  await expect(post({ environment: 'staging', sha: s.c1, ref: 'main', tag: false, status: 'success' }, s.as.reporter), 403, { message: '403 Forbidden' });
  assert.equal((await c.db.kysely.selectFrom('deployments').selectAll().execute()).length, 3);

  // list
  const ids = async (q: string) => {
    const r = await app.inject({ url: `${url}${q}`, headers: s.as.reporter });
    assert.equal(r.statusCode, 200, r.body);
    return json(r).map((d: any) => d.iid);
  };
  assert.deepEqual(await ids(''), [1, 2, 3]);
  assert.deepEqual(await ids('?sort=desc'), [3, 2, 1]);
  assert.deepEqual(await ids('?order_by=ref&sort=asc'), [1, 3, 2]);
  assert.deepEqual(await ids('?environment=staging'), [1, 2]);
  assert.deepEqual(await ids('?status=failed'), [3]);
  assert.deepEqual(await ids('?environment=nope'), []);
  assert.deepEqual(await ids('?order_by=finished_at&status=success&finished_after=2000-01-01T00:00:00Z'), [2]);
  assert.deepEqual(await ids('?order_by=updated_at&updated_before=2000-01-01T00:00:00Z'), []);
  await expect(app.inject({ url: `${url}?updated_after=2020-01-01`, headers: s.as.reporter }), 400, {
    message: '400 Bad request - `updated_at` filter and `updated_at` sorting must be paired',
  });
  await expect(app.inject({ url: `${url}?order_by=finished_at&finished_after=2020-01-01`, headers: s.as.reporter }), 400, {
    message: '400 Bad request - `finished_at` filter must be combined with `success` status filter.',
  });
  await expect(app.inject({ url: `${url}?order_by=nope`, headers: s.as.reporter }), 400, { error: 'order_by does not have a valid value' });
  await expect(app.inject({ url: `${url}?order_by=updated_at&updated_after=yesterday`, headers: s.as.reporter }), 400, { error: 'updated_after is invalid' });
  await expect(app.inject({ url, headers: s.as.guest }), 403, { message: '403 Forbidden' });
  const paged = await app.inject({ url: `${url}?per_page=2&page=1`, headers: s.as.reporter });
  assert.equal(paged.headers['x-total'], '3');
  assert.equal(paged.headers['x-next-page'], '2');

  // get one
  assert.deepEqual(json(await app.inject({ url: `${url}/${d1.id}`, headers: s.as.reporter })), d1);
  await expect(app.inject({ url: `${url}/999999`, headers: s.as.reporter }), 404, { message: '404 Deployment Not Found' });

  // status moves
  const put = (id: number, status: unknown, h = s.as.developer) => app.inject({ method: 'PUT', url: `${url}/${id}`, headers: h, payload: { status } });
  await expect(put(d1.id, 'running'), 400, { message: { status: ['cannot transition via "run"'] } });
  await expect(put(d1.id, 'nope'), 400, { error: 'status does not have a valid value' });
  await expect(put(d1.id, 'success', s.as.reporter), 403, { message: '403 Forbidden' });
  const ok = await put(d1.id, 'success');
  assert.equal(ok.statusCode, 200, ok.body);
  assert.equal(json(ok).status, 'success');
  const finished = await c.db.kysely.selectFrom('deployments').select('finished_at').where('id', '=', d1.id).executeTakeFirstOrThrow();
  assert.match(finished.finished_at!, ISO);
  await expect(put(d1.id, 'success'), 400, { message: { status: ['cannot transition via "succeed"'] } });

  // the environment shows its last successful deployment (without its environment)
  const shown = json(await app.inject({ url: `/api/v4/projects/${s.project.id}/environments/${env.id}`, headers: s.as.reporter }));
  const { environment: _e, ...withoutEnv } = json(await app.inject({ url: `${url}/${d1.id}`, headers: s.as.reporter }));
  assert.deepEqual(shown.last_deployment, withoutEnv);

  // delete: maintainers; never the environment's current deployment or a running one
  const del = (id: number, h = s.as.maintainer) => app.inject({ method: 'DELETE', url: `${url}/${id}`, headers: h });
  await expect(del(d1.id, s.as.developer), 403, { message: '403 Forbidden' });
  await expect(del(d1.id), 400, { message: 'Deployment currently deployed to environment' });
  const running = json(await post({ environment: 'production', sha: s.c3, ref: 'main', tag: false, status: 'running' }));
  await expect(del(running.id), 400, { message: 'Cannot destroy running deployment' });
  const gone = await del(d2.id);
  assert.equal(gone.statusCode, 204);
  await expect(del(d2.id), 404, { message: '404 Deployment Not Found' });
  // a successful deployment starts a stopped environment again
  await app.inject({ method: 'POST', url: `/api/v4/projects/${s.project.id}/environments/${env.id}/stop`, headers: s.as.developer });
  assert.equal((await c.db.kysely.selectFrom('environments').select('state').where('id', '=', env.id).executeTakeFirstOrThrow()).state, 'stopped');
  const restarted = await post({ environment: 'staging', sha: s.c3, ref: 'main', tag: false, status: 'success' });
  assert.equal(restarted.statusCode, 201);
  assert.equal((await c.db.kysely.selectFrom('environments').select('state').where('id', '=', env.id).executeTakeFirstOrThrow()).state, 'available');
  // the next iid never reuses a number
  assert.equal(json(await post({ environment: 'production', sha: s.c3, ref: 'main', tag: false, status: 'created' })).iid, 6);
});

test('a successful deployment links the merged merge requests it shipped, once per environment', async (t) => {
  const ctx = await buildTestApp(t);
  const { app, c } = ctx;
  const s = await setup(ctx);
  const url = `/api/v4/projects/${s.project.id}/deployments`;
  const now = new Date().toISOString();
  const mr = async (iid: number, fields: Record<string, unknown>) =>
    (
      await c.db.kysely
        .insertInto('merge_requests')
        .values({
          iid,
          project_id: s.project.id,
          source_project_id: s.project.id,
          source_branch: `f${iid}`,
          target_branch: 'main',
          title: `MR ${iid}`,
          state: 'merged',
          created_at: now,
          updated_at: now,
          ...fields,
        })
        .returningAll()
        .executeTakeFirstOrThrow()
    ).id;
  const m1 = await mr(1, { merge_commit_sha: s.c1 });
  const m2 = await mr(2, { squash_commit_sha: s.c2 });
  const m3 = await mr(3, { merge_commit_sha: s.c3 });
  const fastForward = await mr(4, { sha: s.c2 });
  await mr(5, { merge_commit_sha: s.c1, state: 'opened' });
  await mr(6, { merge_commit_sha: s.o1, target_branch: 'other' });
  await mr(7, { merge_commit_sha: s.c1, target_branch: 'other' });

  const linked = async (deploymentId: number) =>
    (await c.db.kysely.selectFrom('deployment_merge_requests').selectAll().where('deployment_id', '=', deploymentId).orderBy('merge_request_id').execute()).map(
      (r) => r.merge_request_id,
    );
  const deploy = async (payload: Record<string, unknown>) => {
    const r = await app.inject({ method: 'POST', url, headers: s.as.developer, payload: { tag: false, ref: 'main', ...payload } });
    assert.equal(r.statusCode, 201, r.body);
    return json(r);
  };
  // running: nothing yet; success on update: c2 and its ancestors
  const d1 = await deploy({ environment: 'staging', sha: s.c2, status: 'running' });
  assert.deepEqual(await linked(d1.id), []);
  await app.inject({ method: 'PUT', url: `${url}/${d1.id}`, headers: s.as.developer, payload: { status: 'success' } });
  assert.deepEqual(await linked(d1.id), [m1, m2, fastForward]);
  // the next one in the same environment: only what is new
  const d2 = await deploy({ environment: 'staging', sha: s.c3, status: 'success' });
  assert.deepEqual(await linked(d2.id), [m3]);
  // another environment links them again; a failed deployment links nothing
  const failed = await deploy({ environment: 'production', sha: s.c3, status: 'failed' });
  assert.deepEqual(await linked(failed.id), []);
  const prod = await deploy({ environment: 'production', sha: s.c3, status: 'success' });
  assert.deepEqual(await linked(prod.id), [m1, m2, m3, fastForward]);
  const env = await c.db.kysely.selectFrom('environments').select('id').where('name', '=', 'production').executeTakeFirstOrThrow();
  assert.deepEqual(
    (await c.db.kysely.selectFrom('deployment_merge_requests').select('environment_id').where('deployment_id', '=', prod.id).execute()).map(
      (r) => r.environment_id,
    ),
    [env.id, env.id, env.id, env.id],
  );
  // the exported function: idempotent in the writer's transaction
  const prodRow = await c.db.kysely.selectFrom('deployments').selectAll().where('id', '=', prod.id).executeTakeFirstOrThrow();
  const again = await c.db.kysely.transaction().execute((trx) => linkMergeRequests(c.deployments.deps, trx, prodRow));
  assert.deepEqual(again, []);

  // GET …/deployments/:id/merge_requests: the merge requests it shipped, newest first
  const mrs = await app.inject({ url: `${url}/${d2.id}/merge_requests`, headers: s.as.reporter });
  assert.equal(mrs.statusCode, 200, mrs.body);
  assert.deepEqual(
    json(mrs).map((m: any) => [m.iid, m.state]),
    [[3, 'merged']],
  );
  const missing = await app.inject({ url: `${url}/999999/merge_requests`, headers: s.as.reporter });
  assert.deepEqual([missing.statusCode, json(missing)], [404, { message: '404 Deployment Not Found' }]);
});
