// The runner protocol for jobs, as gitlab-runner speaks it: POST /jobs/request (job payload, matching
// rules, atomic claim, long poll), PUT /jobs/:id, PATCH /jobs/:id/trace, GET /job, and job tokens.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { buildTestApp, EXTERNAL_URL, type TestApp } from '../../helpers/build-app.ts';
import { workTree } from '../../helpers/git.ts';
import { ciDigest, seedPipeline, seedRunner } from '../../helpers/ci.ts';
import type { ProjectRow, UserRow } from '../../../src/db/schema.ts';

const json = (r: { body: string }) => JSON.parse(r.body);
const later: (() => unknown)[] = [];
const hooks = { after: (fn: () => unknown) => later.push(fn) };

let ctx: TestApp;
let user: UserRow;
let userHeaders: Record<string, string>;
let project: ProjectRow;
let sha: string;
let message: string;

before(async () => {
  ctx = await buildTestApp(hooks, { jobRequestTimeoutMs: 0 });
  const { seed } = ctx;
  user = await seed.user({ username: 'dev', name: 'Dev Eloper', email: 'dev@example.com' });
  userHeaders = (await seed.token(user)).headers;
  const g = await seed.group({ path: 'grp', name: 'Grp' });
  await seed.member({ group: g }, user, 30);
  const repo = await seed.repoProject({ namespace: g, path: 'app', name: 'App' });
  project = repo.project;
  const wt = workTree(hooks, repo.dir);
  message = 'Add the app\n\nWith a body line.\n';
  sha = wt.write('a.txt', 'a').commit(message.trimEnd());
  wt.checkout('feature', true).write('b.txt', 'b').commit('feature work');
  wt.push();
  fs.rmSync(wt.dir, { recursive: true, force: true });
});

after(async () => {
  for (const fn of later.reverse()) await fn();
});

/** No pending job is left for the next test (the queue is shared by every test of this file). */
async function clearQueue() {
  await ctx.c.db.kysely.updateTable('ci_builds').set({ status: 'canceled' }).where('status', 'in', ['pending', 'running']).execute();
}

function request(token: string, extra: Record<string, unknown> = {}) {
  return ctx.app.inject({
    method: 'POST',
    url: '/api/v4/jobs/request',
    payload: {
      token,
      info: { name: 'r1', version: '17.5.0', revision: 'abc', platform: 'linux', architecture: 'amd64', executor: 'shell' },
      system_id: 's_0123456789ab',
      ...extra,
    },
  });
}

test('POST /jobs/request: token missing 400, unknown 403, paused 204, nothing pending 204 with X-GitLab-Last-Update', async () => {
  await clearQueue();
  let r = await ctx.app.inject({ method: 'POST', url: '/api/v4/jobs/request', payload: {} });
  assert.equal(r.statusCode, 400);
  assert.deepEqual(json(r), { error: 'token is missing' });
  r = await request('glrt-unknown');
  assert.equal(r.statusCode, 403);
  assert.deepEqual(json(r), { message: '403 Forbidden' });
  const paused = await seedRunner(ctx.c, { active: false });
  await seedPipeline(ctx.c, project, { sha }, [{ name: 'waiting' }]);
  r = await request(paused.token);
  assert.equal(r.statusCode, 204);
  assert.equal(r.body, '');
  assert.match(String(r.headers['x-gitlab-last-update']), /^\d+$/);
  await clearQueue();
  const idle = await seedRunner(ctx.c);
  r = await request(idle.token);
  assert.equal(r.statusCode, 204);
  assert.match(String(r.headers['x-gitlab-last-update']), /^\d+$/);
  // the runner's contact was recorded
  const row = await ctx.c.db.kysely.selectFrom('ci_runners').selectAll().where('id', '=', idle.runner.id).executeTakeFirstOrThrow();
  assert.ok(row.contacted_at);
  assert.equal(row.version, '17.5.0');
});
