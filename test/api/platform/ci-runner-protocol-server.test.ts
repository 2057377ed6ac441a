// The runner protocol on a real port: git clone over HTTP with the job token (the job's own project and
// those whose job token scope lets it in, while the job runs), and long polls that end when the runner goes away or the server closes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer } from '../../helpers/server.ts';
import { runGit, tmpDir, workTree } from '../../helpers/git.ts';
import { seedPipeline, seedRunner } from '../../helpers/ci.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('git clone with gitlab-ci-token:<job token>: the job project while the job runs; another project within its job token scope only, no push, nothing once finished', async (t) => {
  const s = await startTestServer(t, { jobRequestTimeoutMs: 0 });
  const { seed, c } = s;
  const user = await seed.user({ username: 'ci-user' });
  const g = await seed.group({ path: 'team' });
  await seed.member({ group: g }, user, 30);
  const { project, dir } = await seed.repoProject({ namespace: g, path: 'svc', name: 'Svc' });
  const other = await seed.repoProject({ namespace: g, path: 'other', name: 'Other' });
  const wt = workTree(t, dir);
  const sha = wt.write('README.md', 'hello\n').commit('first');
  wt.push();
  const wt2 = workTree(t, other.dir);
  wt2.write('x', 'y').commit('other first');
  wt2.push();
  const runner = await seedRunner(c);
  const { jobs } = await seedPipeline(c, project, { sha, user_id: user.id }, [{ name: 'clone-me' }]);
  const r = await fetch(`${s.base}/api/v4/jobs/request`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: runner.token, info: {} }),
  });
  assert.equal(r.status, 201);
  const payload = (await r.json()) as { token: string; git_info: { repo_url: string } };
  assert.equal(payload.git_info.repo_url, `http://gitlab-ci-token:${payload.token}@hearth.test/team/svc.git`);
  // the payload's URL, pointed at the listening port
  const url = payload.git_info.repo_url.replace('hearth.test', s.base.replace('http://', ''));
  const work = tmpDir(t);
  await runGit(work, ['clone', '-q', url, 'svc']);
  assert.equal(fs.readFileSync(path.join(work, 'svc', 'README.md'), 'utf8'), 'hello\n');
  assert.equal((await runGit(path.join(work, 'svc'), ['rev-parse', 'HEAD'])).stdout.trim(), sha);
  // another project of the same group, which the job's user may read: outside its job token scope (a new
  // project's inbound scope is on), so not found, as Gitlab::GitAccess says it
  const otherUrl = url.replace('/team/svc.git', '/team/other.git');
  await assert.rejects(runGit(work, ['clone', '-q', otherUrl, 'other']), /The project you were looking for could not be found/);
  // once the other project lets the job's project in, the job clones it
  await c.db.kysely
    .insertInto('ci_job_token_project_scope_links')
    .values({ source_project_id: other.project.id, target_project_id: project.id, created_at: new Date().toISOString() })
    .execute();
  await runGit(work, ['clone', '-q', otherUrl, 'other']);
  assert.equal(fs.readFileSync(path.join(work, 'other', 'x'), 'utf8'), 'y');
  // a push with the job token: refused
  const clone = path.join(work, 'svc');
  fs.writeFileSync(path.join(clone, 'new.txt'), 'x');
  await runGit(clone, ['add', '.']);
  await runGit(clone, ['commit', '-q', '-m', 'from the job']);
  await assert.rejects(runGit(clone, ['push', '-q', 'origin', 'HEAD:main']), /You are not allowed to push code to this project/);
  // the job finishes: the token opens nothing any more
  const put = await fetch(`${s.base}/api/v4/jobs/${jobs[0].id}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: payload.token, state: 'success' }),
  });
  assert.equal(put.status, 200);
  await assert.rejects(runGit(work, ['clone', '-q', url, 'again']), /Authentication failed|Access denied|401/);
});

test('long poll: a runner that goes away stops waiting; closing the server answers every waiting runner 204 and leaves no timer', async (t) => {
  // a wait of five minutes: an answer within one is the close (or the hang-up), never the end of the wait
  const s = await startTestServer(t, { jobRequestTimeoutMs: 300_000 });
  const { token } = await seedRunner(s.c);
  /** until `n` runners wait (they authenticate first: on a busy machine that takes a while) */
  const waitersReach = async (n: number) => {
    for (const deadline = Date.now() + 60_000; s.c.ci.jobs.waiters.size !== n && Date.now() < deadline; ) await sleep(10);
    assert.equal(s.c.ci.jobs.waiters.size, n);
  };
  const ask = (signal?: AbortSignal) =>
    fetch(`${s.base}/api/v4/jobs/request`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token, info: {} }),
      signal,
    });
  // the runner hangs up
  const abort = new AbortController();
  const gone = ask(abort.signal).catch((e: Error) => e);
  await waitersReach(1);
  abort.abort();
  assert.ok((await gone) instanceof Error);
  await waitersReach(0);
  // three runners waiting when the server closes
  const waiting = [ask(), ask(), ask()];
  await waitersReach(3);
  const t0 = performance.now();
  await s.app.close();
  const answers = await Promise.all(waiting);
  assert.ok(performance.now() - t0 < 60_000);
  assert.deepEqual(
    answers.map((a) => a.status),
    [204, 204, 204],
  );
  assert.equal(s.c.ci.jobs.waiters.size, 0);
});
