// The git budget (src/git/budget.ts): a process runs at most so many git processes at once, so many on one
// repository; a request's git waits a bounded time (then 503 with Retry-After and the API's body), background
// git as long as it takes; a stop closes the queue at once. And the reads it makes cheaper: last_commit_id
// kept per commit and path.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../helpers/build-app.ts';
import { workTree } from '../helpers/git.ts';
import { BUSY_MESSAGE, closeGitBudget, configureGitBudget, DEFAULT_GIT_BUDGET, GitBusy, gitLoad, gitSlot } from '../../src/git/budget.ts';
import { requestContext } from '../../src/lib/request-context.ts';
import { gitCommands } from '../../src/metrics/registry.ts';

const inRequest = <T>(fn: () => Promise<T>) => requestContext.run('req-1', fn);
const settled = async (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e) => (e instanceof GitBusy ? 'busy' : `failed: ${e}`),
  );

test('slots per process and per repository; a request waits its time or is refused when the queue is full; background work waits; a stop refuses every waiter and all that finds no room', async (t) => {
  t.after(() => configureGitBudget(DEFAULT_GIT_BUDGET));
  configureGitBudget({ concurrency: 2, perRepository: 1, queue: 1, waitMs: 150 });
  const a1 = await gitSlot('/repos/a');
  const b1 = await gitSlot('/repos/b');
  assert.deepEqual(gitLoad(), { running: 2, waiting: 0 });
  // a request's git on a busy repository waits, then is refused after waitMs
  const t0 = performance.now();
  const late = inRequest(() => gitSlot('/repos/a'));
  // the queue (1) is full: the next request is refused at once
  assert.equal(await settled(inRequest(() => gitSlot('/repos/c'))), 'busy');
  assert.equal(await settled(late), 'busy');
  assert.ok(performance.now() - t0 >= 140, 'waited its time');
  // background work waits however long it takes, and gets the slot when one is freed
  const background = gitSlot('/repos/a');
  const state = settled(background);
  a1();
  a1(); // freeing twice frees once
  const a2 = await background;
  assert.equal(await state, 'resolved');
  assert.deepEqual(gitLoad(), { running: 2, waiting: 0 });
  // a waiting request gets the slot a finished one frees
  const next = inRequest(() => gitSlot('/repos/b'));
  b1();
  (await next)();
  // a stop: waiters are refused at once, and so is later git that finds no free slot; with room, it runs
  const waiting = settled(gitSlot('/repos/a'));
  closeGitBudget();
  assert.equal(await waiting, 'busy');
  assert.equal(await settled(inRequest(() => gitSlot('/repos/a'))), 'busy');
  const room = await inRequest(() => gitSlot('/repos/z'));
  assert.equal(await settled(gitSlot('/repos/y')), 'busy');
  room();
  a2();
  assert.deepEqual(gitLoad(), { running: 0, waiting: 0 });
});

/** An app whose git budget is one slot and no queue (100 ms wait), and a private project of its owner with a work tree. */
async function oneSlotProject(t: TestContext) {
  const ta = await buildTestApp(t, { gitBudget: { concurrency: 1, perRepository: 1, queue: 0, waitMs: 100 } });
  t.after(() => configureGitBudget(DEFAULT_GIT_BUDGET));
  const owner = await ta.seed.user();
  const { headers } = await ta.seed.token(owner);
  const { project, dir } = await ta.seed.repoProject({ owner, visibility: 'private' });
  await ta.seed.member({ project }, owner, 50);
  return { ta, headers, project, dir, wt: workTree(t, dir) };
}

test('the API: a file read whose git cannot start in time answers 503 with Retry-After and GitLab’s body, routes without git do not wait; last_commit_id is read once per commit and path', async (t) => {
  const { ta, headers, project, dir, wt } = await oneSlotProject(t);
  const first = wt.write('README.md', '# Hello\n').commit('First');
  wt.write('other.txt', 'x\n').commit('Second');
  wt.push();
  const url = `/api/v4/projects/${project.id}/repository/files/README.md?ref=main`;
  const read = () => ta.app.inject({ method: 'GET', url, headers });
  const logs = async () => (await gitCommands.get()).values.find((v) => v.labels.command === 'log')?.value ?? 0;

  const hold = await gitSlot(dir);
  const refused = await read();
  assert.equal(refused.statusCode, 503);
  assert.deepEqual(refused.json(), { message: BUSY_MESSAGE });
  assert.equal(refused.headers['retry-after'], '5');
  const users = await ta.app.inject({ method: 'GET', url: '/api/v4/users?per_page=1', headers });
  assert.equal(users.statusCode, 200);
  hold();

  const before = await logs();
  const ok = await read();
  assert.equal(ok.statusCode, 200, ok.body);
  assert.equal(ok.json().last_commit_id, first);
  assert.equal(await logs(), before + 1);
  const again = await read();
  assert.equal(again.json().last_commit_id, first);
  assert.equal(await logs(), before + 1, 'the second read runs no git log');
});

test('a diff takes a slot of the budget as other git does: a commit’s diff whose git cannot start in time answers 503', async (t) => {
  const { ta, headers, project, dir, wt } = await oneSlotProject(t);
  wt.write('README.md', '# Hello\n').commit('First');
  const second = wt.write('other.txt', 'x\n').commit('Second');
  wt.push();
  const read = () => ta.app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/repository/commits/${second}/diff`, headers });

  const hold = await gitSlot(dir);
  const refused = await read();
  assert.equal(refused.statusCode, 503, refused.body);
  assert.deepEqual(refused.json(), { message: BUSY_MESSAGE });
  assert.deepEqual(gitLoad(), { running: 1, waiting: 0 });
  hold();
  const ok = await read();
  assert.equal(ok.statusCode, 200, ok.body);
  assert.deepEqual(
    ok.json().map((d: { new_path: string }) => d.new_path),
    ['other.txt'],
  );
  assert.deepEqual(gitLoad(), { running: 0, waiting: 0 });
});
